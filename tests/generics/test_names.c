/* Every element type, calling convention and modifier of the fixtures
 * (data/README.md: Sigs.dll, Everything.dll) prints as doc/names.md says, in
 * the full style; a selection in the IL and reflection styles too. */
#include <unistd.h>

#include "gtest.h"

struct expect {
    uint32_t token;
    const char *name; /* mdt_token_name, or NULL to skip */
    const char *sig;  /* mdt_sig_name */
};

static void check_all(const char *rel, const struct expect *x, size_t n, int style)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_rel(ctx, rel);
    for (size_t i = 0; i < n; i++) {
        if (x[i].name) {
            char *s = name_of(ctx, img, x[i].token, style);
            ck_assert_msg(!strcmp(s, x[i].name), "0x%08x name:\n got %s\nwant %s", x[i].token, s,
                          x[i].name);
        }
        char *s = sig_of(ctx, img, x[i].token, style);
        ck_assert_msg(!strcmp(s, x[i].sig), "0x%08x sig:\n got %s\nwant %s", x[i].token, s,
                      x[i].sig);
    }
    talloc_free(ctx);
}

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define CS "System.Runtime.CompilerServices."

static const struct expect sigs_full[] = {
    /* Function pointers, every calling convention (II.23.2.3). */
    {0x04000004, "Sigs.FnPtrs::Default", "delegate*<System.Int32,System.Void>"},
    {0x04000005, "Sigs.FnPtrs::VarArg", "delegate* vararg<System.Int32,...,System.Void>"},
    {0x04000006, "Sigs.FnPtrs::Cdecl", "delegate* unmanaged[Cdecl]<System.SByte*,System.Int32>"},
    {0x04000007, "Sigs.FnPtrs::StdCall",
     "delegate* unmanaged[Stdcall]<System.Int32,System.Int32,System.Int32>"},
    {0x04000008, "Sigs.FnPtrs::ThisCall",
     "delegate* unmanaged[Thiscall]<System.IntPtr,System.Void>"},
    {0x04000009, "Sigs.FnPtrs::FastCall",
     "delegate* unmanaged[Fastcall]<System.Int32,System.Int64,System.Int64>"},
    {0x0400000A, "Sigs.FnPtrs::Instance", "delegate* instance<System.Int32,System.Void>"},
    {0x0400000B, "Sigs.FnPtrs::InstanceExplicit",
     "delegate* instance explicit<System.Object,System.Int32,System.Void>"},
    {0x0400000C, "Sigs.FnPtrs::Nested",
     "delegate*<delegate* unmanaged[Cdecl]<System.Int32,System.Void>,System.Int32>"},
    {0x0400000D, "Sigs.FnPtrs::ArrayOfFnPtr", "delegate*<System.Int32,System.Void>[]"},
    /* Custom modifiers, after the type they precede, in blob order. */
    {0x0400000E, "Sigs.Mods::ConstInt", "System.Int32 modopt(" CS "IsConst)"},
    {0x0400000F, "Sigs.Mods::VolatileInt", "System.Int32 modreq(" CS "IsVolatile)"},
    {0x04000010, "Sigs.Mods::Chain",
     "System.Int32 modreq(" CS "IsVolatile) modopt(" CS "IsConst) modopt(" CS "IsLong)"},
    {0x04000011, "Sigs.Mods::PtrToMod", "System.SByte modopt(" CS "IsSignUnspecifiedByte)*"},
    {0x04000012, "Sigs.Mods::ArrayOfMod", "System.String modopt(" CS "IsConst)[]"},
    /* Arrays: vectors, general arrays with sizes and (negative) bounds. */
    {0x04000013, "Sigs.Arrays::Vector", "System.Int32[]"},
    {0x04000014, "Sigs.Arrays::LowerBoundZero", "System.Int32[0...]"},
    {0x04000015, "Sigs.Arrays::NegativeLower", "System.Int32[-5...5]"},
    {0x04000016, "Sigs.Arrays::Rank2", "System.Int32[,]"},
    {0x04000017, "Sigs.Arrays::Rank2Bounds", "System.Int32[0...3,0...]"},
    {0x04000018, "Sigs.Arrays::Rank3", "System.Int32[1...2,3...4,5...6]"},
    {0x04000019, "Sigs.Arrays::Rank1NoBounds", "System.String[*]"},
    {0x0400001A, "Sigs.Arrays::JaggedOfMd", "System.Int32[][,]"},
    {0x0400001B, "Sigs.Arrays::VectorOfMd", "Sigs.Blob8[-1...1][]"},
    /* Globals, VAR, methods. */
    {0x04000001, "<Module>::GlobalCounter", "System.Int32"},
    {0x04000003, "Sigs.Box<T>::Value", "!0"},
    {0x06000001, "<Module>::GlobalHelper", "System.Void()"},
    {0x06000004, "Sigs.IVariant<TIn,TOut>::Map", "instance !1(!0)"},
    {0x06000005, "Sigs.FnPtrs::Pass",
     "delegate* unmanaged[Stdcall]<System.Int32,System.Int32>"
     "(delegate* unmanaged[Cdecl]<System.String,System.Void>)"},
    {0x06000006, "Sigs.Mods::Modded",
     "System.Int32 modopt(" CS "IsLong)(System.Int32 modopt(" CS "IsImplicitlyDereferenced) "
     "modreq(" CS "IsConst)&,System.Char modopt(" CS "IsConst)*)"},
    {0x06000007, "Sigs.Arrays::Touch", "System.Int32(System.Int32[-5...5])"},
    {0x06000008, "Sigs.Calls::VarSum", "vararg System.Int32(System.Int32)"},
    {0x0600000A, "Sigs.Calls::ByTypedRef", "System.Int32(System.TypedReference)"},
    {0x0600000D, "Sigs.Calls::Id", "generic<1> !!0(!!0)"},
    {0x0600000E, "Sigs.Calls::Pair", "generic<2> !!1(!!0,!!1[])"},
    /* Call sites: vararg with SENTINEL, a method of a bounded array type. */
    {0x0A000003, "System.Int32[-5...5]::Get", "instance System.Int32(System.Int32)"},
    {0x0A000008, "Sigs.Calls::VarSum",
     "vararg System.Int32(System.Int32,...,System.Int32,System.String,System.Double)"},
    {0x0A000009, "Sigs.Calls::VarSum", "vararg System.Int32(System.Int32,...,System.Int64)"},
    {0x0A000002, "Sigs.Box<!0>::Value", "!0"},
    /* Locals: TYPEDBYREF, BYREF, (no PINNED: ilasm drops it). */
    {0x11000001, NULL, "(System.Int32 modopt(" CS "IsConst))"},
    {0x11000002, NULL, "(System.Int32,System.TypedReference)"},
    {0x11000003, NULL, "(System.Int32&,System.String,System.Char*,System.Object&)"},
    /* TypeSpecs and MethodSpecs. */
    {0x1B000001, "!0", "!0"},
    {0x1B000004, "System.Int32[-5...5]", "System.Int32[-5...5]"},
    {0x1B000005, "System.Int32", "System.Int32"},
    {0x1B000006, "!!0", "!!0"},
    {0x1B00000A, "Sigs.Box<System.Int32>", "Sigs.Box<System.Int32>"},
    {0x1B00000B, "Sigs.Box<System.Int32[-5...5]>", "Sigs.Box<System.Int32[-5...5]>"},
    {0x1B00000C, "System.Collections.Generic.Dictionary<System.String,Sigs.Box<System.Int32[]>>",
     "System.Collections.Generic.Dictionary<System.String,Sigs.Box<System.Int32[]>>"},
    {0x2B000001, "Sigs.Calls::Id<System.Int32>", "<System.Int32>"},
    {0x2B000002, "Sigs.Calls::Pair<System.String,Sigs.Box<System.Double>>",
     "<System.String,Sigs.Box<System.Double>>"},
    {0x2B000003, "Sigs.Calls::Pair<System.Int32,System.Int32>", "<System.Int32,System.Int32>"},
};

static const struct expect sigs_il[] = {
    {0x04000006, "Sigs.FnPtrs::Cdecl", "method unmanaged cdecl int32 *(int8*)"},
    /* ILAsm's order, the reverse of the blob's (as Sigs.il writes it). */
    {0x04000010, "Sigs.Mods::Chain",
     "int32 modopt([mscorlib]" CS "IsLong) modopt([mscorlib]" CS "IsConst) "
     "modreq([mscorlib]" CS "IsVolatile)"},
    {0x04000014, "Sigs.Arrays::LowerBoundZero", "int32[0...]"},
    {0x04000019, "Sigs.Arrays::Rank1NoBounds", "string[...]"},
    {0x04000015, "Sigs.Arrays::NegativeLower", "int32[-5...5]"},
    {0x0A000008, "Sigs.Calls::VarSum", "vararg int32(int32, ..., int32, string, float64)"},
    /* ILAsm's genArity, not generic<1> (II.15.4.1). */
    {0x0600000D, "Sigs.Calls::Id", "!!0 <[1]>(!!0)"},
    {0x1B00000C,
     "class [mscorlib]System.Collections.Generic.Dictionary`2<string, class Sigs.Box`1<int32[]>>",
     "class [mscorlib]System.Collections.Generic.Dictionary`2<string, class Sigs.Box`1<int32[]>>"},
    {0x2B000002, "Sigs.Calls::Pair<string, class Sigs.Box`1<float64>>",
     "<string, class Sigs.Box`1<float64>>"},
};

static const struct expect sigs_reflection[] = {
    {0x04000005, "Sigs.FnPtrs::VarArg", "System.IntPtr"},
    {0x04000010, "Sigs.Mods::Chain", "System.Int32"},
    {0x04000015, "Sigs.Arrays::NegativeLower", "System.Int32[*]"},
    {0x04000017, "Sigs.Arrays::Rank2Bounds", "System.Int32[,]"},
    {0x04000019, "Sigs.Arrays::Rank1NoBounds", "System.String[*]"},
    {0x1B00000C,
     "System.Collections.Generic.Dictionary`2[System.String,Sigs.Box`1[System.Int32[]]]",
     "System.Collections.Generic.Dictionary`2[System.String,Sigs.Box`1[System.Int32[]]]"},
};

static const struct expect everything_full[] = {
    {0x04000001, "Everything.Color::value__", "System.Byte"},
    {0x04000021, "Everything.FixedBuffer::Cursor", "System.Int32*"},
    {0x04000022, "Everything.Primitives::Bool", "System.Boolean"},
    {0x04000023, "Everything.Primitives::Char", "System.Char"},
    {0x04000024, "Everything.Primitives::I1", "System.SByte"},
    {0x04000025, "Everything.Primitives::U1", "System.Byte"},
    {0x04000026, "Everything.Primitives::I2", "System.Int16"},
    {0x04000027, "Everything.Primitives::U2", "System.UInt16"},
    {0x04000028, "Everything.Primitives::I4", "System.Int32"},
    {0x04000029, "Everything.Primitives::U4", "System.UInt32"},
    {0x0400002A, "Everything.Primitives::I8", "System.Int64"},
    {0x0400002B, "Everything.Primitives::U8", "System.UInt64"},
    {0x0400002C, "Everything.Primitives::R4", "System.Single"},
    {0x0400002D, "Everything.Primitives::R8", "System.Double"},
    {0x0400002E, "Everything.Primitives::I", "System.IntPtr"},
    {0x0400002F, "Everything.Primitives::U", "System.UIntPtr"},
    {0x04000030, "Everything.Primitives::Str", "System.String"},
    {0x04000031, "Everything.Primitives::Obj", "System.Object"},
    {0x04000032, "Everything.Primitives::Dec", "System.Decimal"},
    {0x04000035, "Everything.Primitives::Matrix", "System.Int32[0...,0...]"},
    {0x04000036, "Everything.Primitives::Jagged", "System.Int32[][]"},
    {0x04000037, "Everything.Primitives::Nullable", "System.Nullable<System.Int32>"},
    {0x04000038, "Everything.Primitives::Nested",
     "System.Collections.Generic.List<System.Collections.Generic.KeyValuePair<System.String,"
     "System.Int32[]>>"},
    {0x04000039, "Everything.Primitives::Folder", "System.Environment+SpecialFolder"},
    {0x0400003A, "Everything.Primitives::Volatile", "System.Int32 modreq(" CS "IsVolatile)"},
    {0x0400003D, "Everything.Primitives+ThreadStaticHolder::PerThread", "System.Int32"},
    {0x06000031, "Everything.Outer+Generic+Leaf<T,U>::.ctor", "instance System.Void()"},
    {0x06000035, "Everything.Pair<TKey,TValue>::Produce",
     "instance System.Collections.Generic.KeyValuePair<!0,!1>()"},
    {0x06000036, "Everything.Pair<TKey,TValue>::Select",
     "instance generic<1> !!0(System.Func<!0,!1,!!0>)"},
    {0x06000038, "Everything.GenericMethods::Swap", "generic<1> System.Void(!!0&,!!0&)"},
    {0x06000053, "Everything.Calls::Many",
     "System.Int32(System.Int32&,System.String&,System.Object[])"},
    {0x06000056, "Everything.Calls::VarArgs", "vararg System.Int32(System.Int32)"},
    {0x06000058, "Everything.Calls::Pointers",
     "System.Int32*(System.Int32*,System.Void*,System.Byte**,System.Int32&)"},
    {0x0A000034, "Everything.Calls::VarArgs",
     "vararg System.Int32(System.Int32,...,System.Int32,System.String)"},
    {0x0A00000A, "Everything.IScalable<System.Double>::Scale", "instance System.Void(!0)"},
    {0x0A00001D, "System.Collections.Generic.List<!!0>::GetEnumerator",
     "instance System.Collections.Generic.List+Enumerator<!0>()"},
    {0x0A00001E, "System.Collections.Generic.List+Enumerator<!!0>::get_Current", "instance !0()"},
    {0x0A000029, "Everything.Pair<System.String,Everything.Circle>::Select",
     "instance generic<1> !!0(System.Func<!0,!1,!!0>)"},
    {0x1100000A, NULL, "(System.Int32& pinned)"},
    {0x1100000B, NULL, "(System.Char*,System.String pinned)"},
    {0x1B000001, "System.EventHandler<System.EventArgs>", "System.EventHandler<System.EventArgs>"},
    {0x1B000002, "Everything.IScalable<System.Double>", "Everything.IScalable<System.Double>"},
    {0x1B000003, "System.IComparable<!3>", "System.IComparable<!3>"},
    {0x1B000006, "System.Collections.Generic.KeyValuePair<!0,!1>",
     "System.Collections.Generic.KeyValuePair<!0,!1>"},
    {0x1B000007, "System.Func<!0,!1,!!0>", "System.Func<!0,!1,!!0>"},
    {0x1B00000E, "System.Collections.Generic.List+Enumerator<!!0>",
     "System.Collections.Generic.List+Enumerator<!!0>"},
    {0x1B000017, "Everything.IProducer<System.Collections.Generic.KeyValuePair<!0,!1>>",
     "Everything.IProducer<System.Collections.Generic.KeyValuePair<!0,!1>>"},
    {0x2B000001,
     "System.Threading.Interlocked::CompareExchange<System.EventHandler<System."
     "EventArgs>>",
     "<System.EventHandler<System.EventArgs>>"},
    {0x2B000002, "System.Activator::CreateInstance<!2>", "<!2>"},
    {0x2B000004, "Everything.GenericMethods::Make<Everything.Point>", "<Everything.Point>"},
    {0x2B000006, "Everything.GenericMethods::Upcast<System.String,System.Object>",
     "<System.String,System.Object>"},
    {0x2B000008, "Everything.Pair<System.String,Everything.Circle>::Select<System.Int32>",
     "<System.Int32>"},
};

static const struct expect everything_il[] = {
    {0x04000035, "Everything.Primitives::Matrix", "int32[0...,0...]"},
    {0x04000039, "Everything.Primitives::Folder",
     "valuetype [mscorlib]System.Environment/SpecialFolder"},
    {0x1100000A, NULL, "(int32& pinned)"},
    {0x1B000006, "valuetype [mscorlib]System.Collections.Generic.KeyValuePair`2<!0, !1>",
     "valuetype [mscorlib]System.Collections.Generic.KeyValuePair`2<!0, !1>"},
    {0x2B000004, "Everything.GenericMethods::Make<valuetype Everything.Point>",
     "<valuetype Everything.Point>"},
    {0x2B000006, "Everything.GenericMethods::Upcast<string, object>", "<string, object>"},
};

static const struct expect everything_reflection[] = {
    {0x04000035, "Everything.Primitives::Matrix", "System.Int32[,]"},
    {0x04000037, "Everything.Primitives::Nullable", "System.Nullable`1[System.Int32]"},
    {0x04000039, "Everything.Primitives::Folder", "System.Environment+SpecialFolder"},
    {0x1100000A, NULL, "(System.Int32&)"},
    {0x1B00000E, "System.Collections.Generic.List`1+Enumerator[!!0]",
     "System.Collections.Generic.List`1+Enumerator[!!0]"},
};

START_TEST(sigs_dll_full_style)
{
    check_all("data/Sigs.dll", sigs_full, N(sigs_full), MDT_STYLE_FULL);
}
END_TEST

START_TEST(sigs_dll_il_style)
{
    check_all("data/Sigs.dll", sigs_il, N(sigs_il), MDT_STYLE_IL);
}
END_TEST

START_TEST(sigs_dll_reflection_style)
{
    check_all("data/Sigs.dll", sigs_reflection, N(sigs_reflection), MDT_STYLE_REFLECTION);
}
END_TEST

START_TEST(everything_dll_full_style)
{
    check_all("data/Everything.dll", everything_full, N(everything_full), MDT_STYLE_FULL);
}
END_TEST

START_TEST(everything_dll_il_style)
{
    check_all("data/Everything.dll", everything_il, N(everything_il), MDT_STYLE_IL);
}
END_TEST

START_TEST(everything_dll_reflection_style)
{
    check_all("data/Everything.dll", everything_reflection, N(everything_reflection),
              MDT_STYLE_REFLECTION);
}
END_TEST

START_TEST(decoded_trees_match_the_blobs)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_rel(ctx, "data/Sigs.dll");
    mdt_sig s;
    /* FnPtrs::VarArg: trailing SENTINEL, no vararg parameter. */
    ck_assert_int_eq(mdt_sig_of_token(ctx, &s, img, 0x04000005), 0);
    ck_assert_uint_eq(s.type->kind, MDT_ELEMENT_TYPE_FNPTR);
    ck_assert_uint_eq(s.type->method->callconv, MDT_CC_VARARG);
    ck_assert_uint_eq(s.type->method->nparams, 1);
    ck_assert_uint_eq(s.type->method->sentinel, 1);
    /* FnPtrs::InstanceExplicit: 0x60. */
    ck_assert_int_eq(mdt_sig_of_token(ctx, &s, img, 0x0400000B), 0);
    ck_assert_uint_eq(s.type->method->callconv, MDT_CC_HASTHIS | MDT_CC_EXPLICITTHIS);
    /* Mods::Chain: three modifiers, blob order, TypeRefs 5, 4, 6. */
    ck_assert_int_eq(mdt_sig_of_token(ctx, &s, img, 0x04000010), 0);
    ck_assert_uint_eq(s.type->nmods, 3);
    ck_assert(s.type->mods[0].required && !s.type->mods[1].required);
    ck_assert_uint_eq(s.type->mods[0].token, 0x01000005);
    ck_assert_uint_eq(s.type->mods[2].token, 0x01000006);
    /* Arrays::Rank3: sizes and bounds. */
    ck_assert_int_eq(mdt_sig_of_token(ctx, &s, img, 0x04000018), 0);
    ck_assert_uint_eq(s.type->shape->rank, 3);
    ck_assert_int_eq(s.type->shape->lobounds[2], 5);
    ck_assert_uint_eq(s.type->shape->sizes[1], 2);
    /* Arrays::NegativeLower: compressed signed -5. */
    ck_assert_int_eq(mdt_sig_of_token(ctx, &s, img, 0x04000015), 0);
    ck_assert_int_eq(s.type->shape->lobounds[0], -5);
    /* MemberRef 8: SENTINEL before the 2nd parameter. */
    ck_assert_int_eq(mdt_sig_of_token(ctx, &s, img, 0x0A000008), 0);
    ck_assert_uint_eq(s.method->sentinel, 1);
    ck_assert_uint_eq(s.method->nparams, 4);
    /* Everything: pinned locals. */
    mdt_image *ev = open_rel(ctx, "data/Everything.dll");
    ck_assert_int_eq(mdt_sig_of_token(ctx, &s, ev, 0x1100000B), 0);
    ck_assert_uint_eq(s.locals->count, 2);
    ck_assert(!s.locals->locals[0].pinned && s.locals->locals[1].pinned);
    ck_assert_uint_eq(s.locals->locals[1].type->kind, MDT_ELEMENT_TYPE_STRING);
    talloc_free(ctx);
}
END_TEST

START_TEST(generic_parameter_names_and_friendly_names)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_rel(ctx, "data/Everything.dll");
    mdt_sig s;
    char *out;
    /* Pair`2::Select<TResult>(Func<TKey,TValue,TResult>) with names. */
    ck_assert_int_eq(mdt_sig_of_token(ctx, &s, img, 0x06000036), 0);
    mdt_generic_context g = {0, NULL, 0, NULL, img, 0x0200001E, 0x06000036};
    mdt_name_opts o = {MDT_STYLE_FULL, MDT_NAME_PARAM_NAMES, MDT_NAME_OPTS_VERSION, &g, NULL};
    ck_assert_int_eq(mdt_sig_name(ctx, &out, &s, &o), 0);
    ck_assert_str_eq(out, "instance generic<1> TResult(System.Func<TKey,TValue,TResult>)");
    o.flags |= MDT_NAME_FRIENDLY;
    ck_assert_int_eq(mdt_sig_of_token(ctx, &s, img, 0x06000053), 0);
    ck_assert_int_eq(mdt_sig_name(ctx, &out, &s, &o), 0);
    ck_assert_str_eq(out, "int(int&,string&,object[])");
    /* Leaf`1 repeats the outer parameter: First is !0 (T), Second !1 (U). */
    g.type_owner = 0x0200001C;
    g.method_owner = 0;
    o.flags = MDT_NAME_PARAM_NAMES;
    ck_assert_int_eq(mdt_sig_of_token(ctx, &s, img, 0x04000056), 0);
    ck_assert_int_eq(mdt_sig_name(ctx, &out, &s, &o), 0);
    ck_assert_str_eq(out, "T");
    ck_assert_int_eq(mdt_sig_of_token(ctx, &s, img, 0x04000057), 0);
    ck_assert_int_eq(mdt_sig_name(ctx, &out, &s, &o), 0);
    ck_assert_str_eq(out, "U");
    talloc_free(ctx);
}
END_TEST

/* Found by fuzz_sig: a four-byte blob asked for 151 million dimensions,
 * which the printers then looped over. */
START_TEST(array_rank_is_capped)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_rel(ctx, "data/Everything.dll");
    static const uint8_t huge[] = {0x14, 0x0f, 0x06, 0xc9, 0x0f, 0x06, 0x0e, 0x01, 0x03};
    uint8_t r32[] = {0x14, 0x08, 0x20, 0x00, 0x00}, r33[] = {0x14, 0x08, 0x21, 0x00, 0x00};
    mdt_sig s;
    char *out, msg[512];
    ck_assert_int_eq(mdt_sig_decode(ctx, &s, img, MDT_SIG_TYPESPEC, huge, sizeof huge, 0),
                     MDT_EUNSUPPORTED);
    ck_assert_ptr_nonnull(
        strstr(mdt_error_message(msg, sizeof msg), "rank 151979534 (more than 32)"));
    ck_assert_int_eq(mdt_sig_decode(ctx, &s, img, MDT_SIG_TYPESPEC, r33, sizeof r33, 0),
                     MDT_EUNSUPPORTED);
    ck_assert_int_eq(mdt_sig_decode(ctx, &s, img, MDT_SIG_TYPESPEC, r32, sizeof r32, 0), 0);
    ck_assert_int_eq(mdt_type_name(ctx, &out, s.type, NULL), 0);
    ck_assert_str_eq(out, "System.Int32[,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,]");
    talloc_free(ctx);
}
END_TEST

/* The allocation-free variants: arena and buffer of the caller. */
START_TEST(buffer_variants_match_and_report_overflow)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_rel(ctx, "data/Everything.dll");
    uint64_t arena[256];
    char buf[256], *heap;
    size_t len;
    mdt_sig s;
    /* Calls::Many, a method signature. */
    ck_assert_int_eq(mdt_sig_of_token_buf(arena, sizeof arena, &s, img, 0x06000053), 0);
    ck_assert_int_eq(mdt_sig_name_buf(buf, sizeof buf, &len, &s, NULL), 0);
    ck_assert_str_eq(buf, "System.Int32(System.Int32&,System.String&,System.Object[])");
    ck_assert_uint_eq(len, strlen(buf));
    ck_assert_int_eq(mdt_sig_name(ctx, &heap, &s, NULL), 0);
    ck_assert_str_eq(heap, buf);
    /* Too small a buffer: a truncated, terminated prefix and MDT_ETRUNC. */
    ck_assert_int_eq(mdt_sig_name_buf(buf, 10, &len, &s, NULL), MDT_ETRUNC);
    ck_assert_str_eq(buf, "System.In");
    ck_assert_uint_eq(len, 9);
    /* Too small an arena: MDT_ENOMEM, no allocation. */
    ck_assert_int_eq(mdt_sig_of_token_buf(arena, 16, &s, img, 0x06000053), MDT_ENOMEM);
    ck_assert_int_eq(mdt_sig_of_token_buf(NULL, 16, &s, img, 0x06000053), MDT_EINVAL);
    /* Tokens and types the same way. */
    ck_assert_int_eq(mdt_token_name_buf(buf, sizeof buf, NULL, img, 0x2B000008, NULL), 0);
    ck_assert_str_eq(buf, "Everything.Pair<System.String,Everything.Circle>::Select<System.Int32>");
    ck_assert_int_eq(mdt_sig_of_token_buf(arena, sizeof arena, &s, img, 0x1B000017), 0);
    ck_assert_int_eq(mdt_type_name_buf(buf, sizeof buf, &len, s.type, NULL), 0);
    ck_assert_str_eq(buf, "Everything.IProducer<System.Collections.Generic.KeyValuePair<!0,!1>>");
    /* A name longer than the first stack block still comes out whole. */
    static uint8_t deep[200];
    memset(deep, 0x1d, sizeof deep);
    deep[63] = 0x0e;
    ck_assert_int_eq(mdt_sig_decode(ctx, &s, img, MDT_SIG_TYPESPEC, deep, 64, 0), 0);
    ck_assert_int_eq(mdt_type_name(ctx, &heap, s.type, NULL), 0);
    ck_assert_uint_eq(strlen(heap), 13 + 63 * 2);
    /* With no talloc parent (NULL: talloc's top level) a long name comes
     * out whole as under any context: it used to be cut at the 512-byte
     * stack block and fail as out of memory. */
    static uint8_t spec[2 + 60];
    spec[0] = 0x0a;
    spec[1] = 60;
    memset(spec + 2, 0x0e, 60);
    ck_assert_int_eq(mdt_sig_decode(ctx, &s, img, MDT_SIG_METHODSPEC, spec, sizeof spec, 0), 0);
    ck_assert_int_eq(mdt_sig_name(NULL, &heap, &s, NULL), 0);
    ck_assert_uint_eq(strlen(heap), 2 + 60 * 13 + 59);
    ck_assert_ptr_eq(talloc_parent(heap), NULL);
    talloc_free(heap);
    talloc_free(ctx);
}
END_TEST

/* mdt_sig_name_of_token: its errors, and on Mono's mscorlib (when
 * installed) the same names as the two calls for every signature, the 15
 * whose trees outgrow its 4 KiB stack arena among them (decoded under a
 * context of their own, the arena's failure left out of the record). */
START_TEST(one_call_signature_names)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_rel(ctx, "data/Everything.dll");
    char *out = (char *)"x", msg[512];
    ck_assert_int_eq(mdt_sig_name_of_token(ctx, NULL, img, 0x06000053, NULL), MDT_EINVAL);
    ck_assert_int_eq(mdt_sig_name_of_token(ctx, &out, img, 0x02000002, NULL), MDT_EINVAL);
    ck_assert_ptr_null(out);
    ck_assert_int_eq(mdt_sig_name_of_token(ctx, &out, img, 0x0600FFFF, NULL), MDT_ENOTFOUND);
    ck_assert_int_eq(mdt_sig_name_of_token(ctx, &out, img, 0x06000053, NULL), 0);
    ck_assert_str_eq(out, "System.Int32(System.Int32&,System.String&,System.Object[])");
    ck_assert_ptr_eq(talloc_parent(out), ctx);
    const char *corlib = "/usr/lib/mono/4.5/mscorlib.dll";
    if (access(corlib, R_OK)) {
        fprintf(stderr, "one_call_signature_names: %s absent, its part skipped\n", corlib);
        talloc_free(ctx);
        return;
    }
    mdt_image *ml = open_path(ctx, corlib);
    mdt_name_opts o = {MDT_STYLE_FULL, 0, MDT_NAME_OPTS_VERSION, NULL, NULL};
    static const unsigned tables[] = {MDT_TABLE_MethodDef, MDT_TABLE_MemberRef, MDT_TABLE_TypeSpec,
                                      MDT_TABLE_MethodSpec};
    unsigned big = 0;
    mdt_error_clear();
    for (size_t k = 0; k < N(tables); k++)
        for (uint32_t r = 1; r <= mdt_table_rows(ml, tables[k]); r++) {
            uint32_t tok = MDT_TOKEN(tables[k], r);
            void *tmp = talloc_new(ctx);
            uint64_t arena[512];
            mdt_sig s;
            if (mdt_sig_of_token_buf(arena, sizeof arena, &s, ml, tok) == MDT_ENOMEM)
                big++;
            mdt_error_clear();
            char *two = sig_of(tmp, ml, tok, MDT_STYLE_FULL), *one;
            ck_assert_msg(mdt_sig_name_of_token(tmp, &one, ml, tok, &o) == 0, "0x%08x: %s", tok,
                          mdt_error_message(msg, sizeof msg));
            ck_assert_str_eq(one, two);
            ck_assert_int_eq(mdt_error_last()->code, 0);
            talloc_free(tmp);
        }
    ck_assert_uint_eq(big, 15);
    talloc_free(ctx);
}
END_TEST

/* mdt_sig_name_of_token_arena: its errors, and on Mono's mscorlib (when
 * installed) the same names as mdt_sig_name_of_token for every signature,
 * in an arena of 256-byte chunks: names that fill a chunk go to the next,
 * names longer than a chunk to blocks of their own; every name of the
 * arena stays as printed until the reset. */
START_TEST(arena_signature_names)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_rel(ctx, "data/Everything.dll");
    mdt_name_arena *a = (mdt_name_arena *)ctx, *small;
    const char *out = "x";
    size_t len = 0;
    char msg[512];
    ck_assert_int_eq(mdt_name_arena_new(ctx, NULL, 0), MDT_EINVAL);
    ck_assert_int_eq(mdt_name_arena_new(ctx, &a, 255), MDT_EINVAL);
    ck_assert_ptr_null(a);
    ck_assert_int_eq(mdt_name_arena_new(ctx, &a, ((size_t)1 << 30) + 1), MDT_EINVAL);
    ck_assert_int_eq(mdt_name_arena_new(ctx, &a, 0), 0);
    ck_assert_ptr_eq(talloc_parent(a), ctx);
    ck_assert_int_eq(mdt_sig_name_of_token_arena(NULL, &out, NULL, img, 0x06000053, NULL),
                     MDT_EINVAL);
    ck_assert_int_eq(mdt_sig_name_of_token_arena(a, NULL, NULL, img, 0x06000053, NULL), MDT_EINVAL);
    ck_assert_int_eq(mdt_sig_name_of_token_arena(a, &out, NULL, img, 0x02000002, NULL), MDT_EINVAL);
    ck_assert_ptr_null(out);
    ck_assert_int_eq(mdt_sig_name_of_token_arena(a, &out, NULL, img, 0x0600FFFF, NULL),
                     MDT_ENOTFOUND);
    ck_assert_int_eq(mdt_sig_name_of_token_arena(a, &out, &len, img, 0x06000053, NULL), 0);
    ck_assert_str_eq(out, "System.Int32(System.Int32&,System.String&,System.Object[])");
    ck_assert_uint_eq(len, strlen(out));
    mdt_name_arena_reset(a);
    mdt_name_arena_reset(NULL);
    const char *corlib = "/usr/lib/mono/4.5/mscorlib.dll";
    if (access(corlib, R_OK)) {
        fprintf(stderr, "arena_signature_names: %s absent, its part skipped\n", corlib);
        talloc_free(ctx);
        return;
    }
    mdt_image *ml = open_path(ctx, corlib);
    mdt_name_opts o = {MDT_STYLE_FULL, 0, MDT_NAME_OPTS_VERSION, NULL, NULL};
    static const unsigned tables[] = {MDT_TABLE_MethodDef, MDT_TABLE_MemberRef, MDT_TABLE_TypeSpec,
                                      MDT_TABLE_MethodSpec};
    enum { KEEP = 300 };
    const char *kept[KEEP];
    char *want[KEEP];
    unsigned n = 0, longer = 0;
    void *tmp = talloc_new(ctx);
    ck_assert_int_eq(mdt_name_arena_new(ctx, &small, 256), 0);
    mdt_error_clear();
    for (size_t k = 0; k < N(tables); k++)
        for (uint32_t r = 1; r <= mdt_table_rows(ml, tables[k]); r++) {
            uint32_t tok = MDT_TOKEN(tables[k], r);
            ck_assert_msg(mdt_sig_name_of_token(tmp, &want[n], ml, tok, &o) == 0, "0x%08x: %s", tok,
                          mdt_error_message(msg, sizeof msg));
            ck_assert_msg(mdt_sig_name_of_token_arena(small, &kept[n], &len, ml, tok, &o) == 0,
                          "0x%08x: %s", tok, mdt_error_message(msg, sizeof msg));
            ck_assert_str_eq(kept[n], want[n]);
            ck_assert_uint_eq(len, strlen(want[n]));
            ck_assert_int_eq(mdt_error_last()->code, 0);
            longer += len >= 256;
            if (++n == KEEP) { /* the whole batch still there, then dropped */
                for (unsigned i = 0; i < n; i++)
                    ck_assert_str_eq(kept[i], want[i]);
                mdt_name_arena_reset(small);
                talloc_free_children(tmp);
                n = 0;
            }
        }
    ck_assert_uint_gt(longer, 0);
    talloc_free(ctx);
}
END_TEST

/* A name cache gives the same names, only faster; a cache for another
 * image or style is ignored. */
START_TEST(name_cache_gives_the_same_names)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_rel(ctx, "data/Everything.dll");
    mdt_image *sigs = open_rel(ctx, "data/Sigs.dll");
    mdt_name_cache *full, *refl, *other;
    ck_assert_int_eq(mdt_name_cache_new(ctx, &full, img, MDT_STYLE_FULL, 0), 0);
    ck_assert_int_eq(mdt_name_cache_new(ctx, &refl, img, MDT_STYLE_REFLECTION, 0), 0);
    ck_assert_int_eq(mdt_name_cache_new(ctx, &other, sigs, MDT_STYLE_FULL, 0), 0);
    static const unsigned tables[] = {MDT_TABLE_MethodDef, MDT_TABLE_MemberRef,  MDT_TABLE_Field,
                                      MDT_TABLE_TypeSpec,  MDT_TABLE_MethodSpec, MDT_TABLE_TypeDef,
                                      MDT_TABLE_TypeRef};
    for (int pass = 0; pass < 2; pass++) /* fill, then hit */
        for (size_t k = 0; k < sizeof tables / sizeof tables[0]; k++)
            for (uint32_t rid = 1; rid <= mdt_table_rows(img, tables[k]); rid++) {
                uint32_t tok = MDT_TOKEN(tables[k], rid);
                static const int styles[] = {MDT_STYLE_FULL, MDT_STYLE_REFLECTION, MDT_STYLE_IL};
                for (int st = 0; st < 3; st++) {
                    mdt_name_opts plain = {styles[st], 0, MDT_NAME_OPTS_VERSION, NULL, NULL};
                    mdt_name_cache *caches[] = {full, refl, other};
                    char *want = name_of(ctx, img, tok, styles[st]), *got;
                    for (int c = 0; c < 3; c++) {
                        mdt_name_opts o = plain;
                        o.cache = caches[c];
                        ck_assert_int_eq(mdt_token_name(ctx, &got, img, tok, &o), 0);
                        ck_assert_str_eq(got, want);
                    }
                    if (tables[k] == MDT_TABLE_TypeDef || tables[k] == MDT_TABLE_TypeRef)
                        continue;
                    mdt_sig s;
                    char *w2, *g2;
                    ck_assert_int_eq(mdt_sig_of_token(ctx, &s, img, tok), 0);
                    ck_assert_int_eq(mdt_sig_name(ctx, &w2, &s, &plain), 0);
                    plain.cache = styles[st] == MDT_STYLE_REFLECTION ? refl : full;
                    ck_assert_int_eq(mdt_sig_name(ctx, &g2, &s, &plain), 0);
                    ck_assert_str_eq(g2, w2);
                }
            }
    talloc_free(ctx);
}
END_TEST

/* MDT_NAME_SIGNATURE: methods end with their parameter types, the
 * generic parameters substituted where an instantiation says what they
 * are (a MethodSpec's own arguments, the TypeSpec a MemberRef's class
 * names), else by name with MDT_NAME_PARAM_NAMES, else !0 / !!0; fields
 * and types unchanged; a name cache made with or without the flag gives
 * the same names. */
START_TEST(methods_named_with_their_signature)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_rel(ctx, "data/Everything.dll");
    static const struct {
        uint32_t token;
        unsigned flags;
        const char *want;
    } x[] = {
        {0x06000036, MDT_NAME_SIGNATURE,
         "Everything.Pair<TKey,TValue>::Select(System.Func<!0,!1,!!0>)"},
        {0x06000036, MDT_NAME_SIGNATURE | MDT_NAME_PARAM_NAMES,
         "Everything.Pair<TKey,TValue>::Select(System.Func<TKey,TValue,TResult>)"},
        {0x06000036, MDT_NAME_SIGNATURE | MDT_NAME_FRIENDLY | MDT_NAME_PARAM_NAMES,
         "Pair<TKey,TValue>::Select(Func<TKey,TValue,TResult>)"},
        {0x2B000008, MDT_NAME_SIGNATURE,
         "Everything.Pair<System.String,Everything.Circle>::Select<System.Int32>"
         "(System.Func<System.String,Everything.Circle,System.Int32>)"},
        {0x0A00000A, MDT_NAME_SIGNATURE,
         "Everything.IScalable<System.Double>::Scale(System.Double)"},
        {0x04000001, MDT_NAME_SIGNATURE, "Everything.Color::value__"},
        {0x0200001E, MDT_NAME_SIGNATURE, "Everything.Pair<TKey,TValue>"},
    };
    mdt_name_cache *c;
    ck_assert_int_eq(mdt_name_cache_new(ctx, &c, img, MDT_STYLE_FULL, 0), 0);
    for (size_t i = 0; i < N(x); i++)
        for (int cached = 0; cached < 2; cached++) {
            mdt_name_opts o = {MDT_STYLE_FULL, x[i].flags, MDT_NAME_OPTS_VERSION, NULL,
                               cached && !(x[i].flags & ~(unsigned)MDT_NAME_SIGNATURE) ? c : NULL};
            char *got, buf[512];
            ck_assert_int_eq(mdt_token_name(ctx, &got, img, x[i].token, &o), 0);
            ck_assert_msg(!strcmp(got, x[i].want), "0x%08x flags %u:\n got %s\nwant %s", x[i].token,
                          x[i].flags, got, x[i].want);
            ck_assert_int_eq(mdt_token_name_buf(buf, sizeof buf, NULL, img, x[i].token, &o), 0);
            ck_assert_str_eq(buf, x[i].want);
        }
    talloc_free(ctx);
}
END_TEST

/* doc/names.md: a generic type named without an instantiation shows its
 * parameters, by name from the GenericParam table of a TypeDef, from the
 * arity suffixes of a TypeRef; instantiations stay as they are, and the
 * metadata form keeps the names as stored. A cache filled by one use of a
 * name serves the other. */
START_TEST(generic_types_named_on_their_own)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_rel(ctx, "data/Everything.dll");
    static const struct {
        uint32_t token;
        const char *full, *metadata, *friendly;
    } x[] = {
        {0x0200001E, "Everything.Pair<TKey,TValue>", "Everything.Pair`2", "Pair<TKey,TValue>"},
        {0x0200001C, "Everything.Outer+Generic+Leaf<T,U>", "Everything.Outer+Generic`1+Leaf`1",
         "Outer+Generic+Leaf<T,U>"},
        {0x0200000A, "Everything.Circle", "Everything.Circle", "Circle"},
        {0x01000009, "System.Collections.Generic.KeyValuePair<,>",
         "System.Collections.Generic.KeyValuePair`2", "KeyValuePair<,>"},
        {0x01000028, "System.Func<,,>", "System.Func`3", "Func<,,>"},
        {0x01000029, "System.Collections.Generic.List+Enumerator<>",
         "System.Collections.Generic.List`1+Enumerator", "List+Enumerator<>"},
        {0x1B000005, "Everything.Pair<!0,!1>", "Everything.Pair`2<!0,!1>", "Pair<!0,!1>"},
        {0x1B00000E, "System.Collections.Generic.List+Enumerator<!!0>",
         "System.Collections.Generic.List`1+Enumerator<!!0>", "List+Enumerator<!!0>"},
        {0x06000036, "Everything.Pair<TKey,TValue>::Select", "Everything.Pair`2::Select",
         "Pair<TKey,TValue>::Select"},
        {0x2B000008, "Everything.Pair<System.String,Everything.Circle>::Select<System.Int32>",
         "Everything.Pair`2<System.String,Everything.Circle>::Select<System.Int32>",
         "Pair<string,Circle>::Select<int>"},
    };
    for (int pass = 0; pass < 3; pass++) {
        /* 0: no cache; 1: caches filled in table order; 2: in reverse. */
        mdt_name_cache *c[3] = {NULL, NULL, NULL};
        static const unsigned flags[3] = {0, MDT_NAME_METADATA, MDT_NAME_FRIENDLY};
        for (int k = 0; pass && k < 3; k++)
            ck_assert_int_eq(mdt_name_cache_new(ctx, &c[k], img, MDT_STYLE_FULL, flags[k]), 0);
        for (size_t j = 0; j < N(x); j++) {
            size_t i = pass == 2 ? N(x) - 1 - j : j;
            const char *want[3] = {x[i].full, x[i].metadata, x[i].friendly};
            for (int k = 0; k < 3; k++) {
                mdt_name_opts o = {MDT_STYLE_FULL, flags[k], MDT_NAME_OPTS_VERSION, NULL, c[k]};
                char *got;
                ck_assert_int_eq(mdt_token_name(ctx, &got, img, x[i].token, &o), 0);
                ck_assert_msg(!strcmp(got, want[k]), "pass %d 0x%08x flags %u:\n got %s\nwant %s",
                              pass, x[i].token, flags[k], got, want[k]);
            }
        }
    }
    /* Reflection and IL keep the arity suffix and add nothing. */
    ck_assert_str_eq(name_of(ctx, img, 0x0200001E, MDT_STYLE_REFLECTION), "Everything.Pair`2");
    ck_assert_str_eq(name_of(ctx, img, 0x01000028, MDT_STYLE_IL), "[mscorlib]System.Func`3");
    talloc_free(ctx);
}
END_TEST

/* A portable PDB Document's name is its name blob decoded: a separator
 * and parts (#Blob indexes of UTF-8 strings) joined by it. Damage to the
 * blob is an error naming the blob, never a wrong name. */
START_TEST(portable_pdb_document_names)
{
    void *ctx = talloc_new(NULL);
    char path[1024], *out, msg[512];
    FILE *fp = fopen(src_path(path, sizeof path, "data/corpus/asmresolver/TheAnswer.pdb"), "rb");
    ck_assert_ptr_nonnull(fp);
    uint8_t *bytes = talloc_array(ctx, uint8_t, 1 << 16);
    size_t n = fread(bytes, 1, 1 << 16, fp);
    fclose(fp);
    mdt_image *img;
    ck_assert_int_eq(mdt_image_open_buffer(ctx, &img, "TheAnswer.pdb", bytes, n, 0), 0);
    ck_assert_str_eq(name_of(ctx, img, 0x30000001, MDT_STYLE_FULL),
                     "C:\\Users\\Admin\\Desktop\\AsmResolver\\test\\TestBinaries\\DotNet\\"
                     "TheAnswer\\Program.cs");
    /* Where row 1's name blob lies in the buffer. */
    mdt_row r;
    const uint8_t *blob;
    uint32_t len;
    ck_assert_int_eq(mdt_row_get(&r, img, MDT_TABLE_Document, 1), 0);
    ck_assert_int_eq(mdt_row_blob(&blob, &len, &r, MDT_COL_Document_Name), 0);
    size_t at = (size_t)(blob - bytes);
    ck_assert_uint_eq(bytes[at], '\\');
    /* No separator (byte 0): the parts run together. */
    bytes[at] = 0;
    ck_assert_int_eq(mdt_token_name(ctx, &out, img, 0x30000001, NULL), 0);
    ck_assert_str_eq(out,
                     "C:UsersAdminDesktopAsmResolvertestTestBinariesDotNetTheAnswerProgram.cs");
    /* A separator that is no UTF-8 character. */
    bytes[at] = 0xFF;
    ck_assert_int_eq(mdt_token_name(ctx, &out, img, 0x30000001, NULL), MDT_EBADIMAGE);
    ck_assert_ptr_nonnull(
        strstr(mdt_error_message(msg, sizeof msg), "separator 0xff is not UTF-8"));
    /* A part beyond the #Blob heap (one-byte index 0x7f... made 2 bytes). */
    bytes[at] = '/';
    bytes[at + 1] = 0xBF;
    bytes[at + 2] = 0xFF;
    ck_assert_int_eq(mdt_token_name(ctx, &out, img, 0x30000001, NULL), MDT_EBADIMAGE);
    /* Only a separator (the blob's length prefix made 1): no part at all. */
    ck_assert_uint_eq(bytes[at - 1], len);
    bytes[at - 1] = 1;
    ck_assert_int_eq(mdt_token_name(ctx, &out, img, 0x30000001, NULL), MDT_EBADIMAGE);
    ck_assert_ptr_nonnull(
        strstr(mdt_error_message(msg, sizeof msg), "document name without a part"));
    talloc_free(ctx);
}
END_TEST

/* mdt_generic_decl on data/decl/Decl.dll (Roslyn): every special
 * constraint, variance, constraints naming the parameters, per style. */
START_TEST(generic_declarations)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_rel(ctx, "data/decl/Decl.dll");
    mdt_name_opts il = {MDT_STYLE_IL, 0, MDT_NAME_OPTS_VERSION, NULL, NULL};
    mdt_name_opts refl = {MDT_STYLE_REFLECTION, 0, MDT_NAME_OPTS_VERSION, NULL, NULL};
    mdt_name_opts friendly = {MDT_STYLE_FULL, MDT_NAME_FRIENDLY, MDT_NAME_OPTS_VERSION, NULL, NULL};
    char *p, *w;
    /* Holder`6 (0x02000005), full style. */
    ck_assert_int_eq(mdt_generic_decl(ctx, &p, &w, img, 0x02000005, NULL), 0);
    ck_assert_str_eq(p, "<TClass,TStruct,TNew,TRef,TUnmanaged,TShape>");
    ck_assert_str_eq(w, "where TClass : class where TStruct : struct where TNew : new() "
                        "where TRef : allows ref struct where TUnmanaged : unmanaged "
                        "where TShape : class, Decl.IShape, System.IComparable<TShape>, new()");
    /* The same in IL, as ILDasm writes it. */
    ck_assert_int_eq(mdt_generic_decl(ctx, &p, &w, img, 0x02000005, &il), 0);
    ck_assert_str_eq(p, "<class TClass,valuetype .ctor ([System.Runtime]System.ValueType) TStruct,"
                        ".ctor TNew,byreflike TRef,valuetype .ctor (class [System.Runtime]"
                        "System.ValueType modreq([System.Runtime]System.Runtime.InteropServices."
                        "UnmanagedType)) TUnmanaged,class .ctor (Decl.IShape, class "
                        "[System.Runtime]System.IComparable`1<!TShape>) TShape>");
    ck_assert_str_eq(w, "");
    /* Map<TOut,TKey> (0x06000005): method parameters, !!T in IL. */
    ck_assert_int_eq(mdt_generic_decl(ctx, &p, &w, img, 0x06000005, &friendly), 0);
    ck_assert_str_eq(p, "<TOut,TKey>");
    ck_assert_str_eq(w, "where TOut : struct, IEquatable<TOut> where TKey : IOrdered<TKey>");
    ck_assert_int_eq(mdt_generic_decl(ctx, &p, &w, img, 0x06000005, &il), 0);
    ck_assert_str_eq(p, "<valuetype .ctor (class [System.Runtime]System.IEquatable`1<!!TOut>, "
                        "[System.Runtime]System.ValueType) TOut,(class Decl.IOrdered`1<!!TKey>) "
                        "TKey>");
    /* Variance: IConverter<in TIn, out TOut> (0x02000002). */
    ck_assert_int_eq(mdt_generic_decl(ctx, &p, &w, img, 0x02000002, &refl), 0);
    ck_assert_str_eq(p, "[in TIn,out TOut]");
    ck_assert_str_eq(w, "");
    ck_assert_int_eq(mdt_generic_decl(ctx, &p, &w, img, 0x02000002, &il), 0);
    ck_assert_str_eq(p, "<- TIn,+ TOut>");
    /* Not generic: both empty. Not a TypeDef or MethodDef: EINVAL. */
    ck_assert_int_eq(mdt_generic_decl(ctx, &p, &w, img, 0x02000007, NULL), 0);
    ck_assert_str_eq(p, "");
    ck_assert_str_eq(w, "");
    ck_assert_int_eq(mdt_generic_decl(ctx, &p, &w, img, 0x04000001, NULL), MDT_EINVAL);
    ck_assert_int_eq(mdt_generic_decl(ctx, &p, NULL, img, 0x02000005, NULL), MDT_EINVAL);
    talloc_free(ctx);
}
END_TEST

Suite *suite(void);
Suite *suite(void)
{
    Suite *s = suite_create("names");
    TCase *tc = tcase_create("names");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, sigs_dll_full_style);
    tcase_add_test(tc, sigs_dll_il_style);
    tcase_add_test(tc, sigs_dll_reflection_style);
    tcase_add_test(tc, everything_dll_full_style);
    tcase_add_test(tc, everything_dll_il_style);
    tcase_add_test(tc, everything_dll_reflection_style);
    tcase_add_test(tc, decoded_trees_match_the_blobs);
    tcase_add_test(tc, generic_parameter_names_and_friendly_names);
    tcase_add_test(tc, array_rank_is_capped);
    tcase_add_test(tc, buffer_variants_match_and_report_overflow);
    tcase_add_test(tc, one_call_signature_names);
    tcase_add_test(tc, arena_signature_names);
    tcase_add_test(tc, name_cache_gives_the_same_names);
    tcase_add_test(tc, generic_types_named_on_their_own);
    tcase_add_test(tc, methods_named_with_their_signature);
    tcase_add_test(tc, portable_pdb_document_names);
    tcase_add_test(tc, generic_declarations);
    suite_add_tcase(s, tc);
    return s;
}
