/* Custom attribute values (II.23.3): every CustomAttribute of
 * Everything.dll (data/README.md, data/src/Everything.cs), enums through
 * the resolver hook, and hostile blobs. */
#include "gtest.h"

static const char *const everything_attrs[47] = {
    "[Everything.InfoAttribute(2, \"module\", Everything.Color.Green, typeof(System.Void), "
    "new System.Int32[0], \"boxed string\")]",
    "[System.Security.UnverifiableCodeAttribute]",
    "[System.Reflection.AssemblyFileVersionAttribute(\"1.2.3.4\")]",
    "[System.Reflection.AssemblyTitleAttribute(\"Everything\")]",
    "[System.Runtime.CompilerServices.InternalsVisibleToAttribute(\"Friend, PublicKey="
    "002400000480000094000000060200000024000052534131000400000100010077749e3d9d6408e76acb602229e0"
    "49068f000cdecb35dc3720c6b4ec98ad05e25358966e29c3887b8d02253eedefa0fb64475a8dd5c8c5ae65b365cb"
    "14910ec6af2596019f1e3ceee6a99a2551985bf1331b812beb8607b49d9dee88755925f68ccfc578a6262cc1de3e"
    "491bbe5c2a2c543d696fb3d208981449696f16598fb0\")]",
    "[Everything.InfoAttribute(1, \"assembly\", Everything.Color.Red, typeof(System.Int32), null, "
    "null)]",
    "[System.Runtime.CompilerServices.RuntimeCompatibilityAttribute(WrapNonExceptionThrows = "
    "true)]",
    "[System.Runtime.CompilerServices.CompilerGeneratedAttribute]",
    "[System.FlagsAttribute]",
    "[System.Runtime.CompilerServices.CompilerGeneratedAttribute]",
    "[System.AttributeUsageAttribute(System.AttributeTargets.All, AllowMultiple = true)]",
    "[Everything.InfoAttribute(42, \"hello\", Everything.Color.Green, "
    "typeof(System.Collections.Generic.List<System.Int32>), new System.Int32[] { 1, 2, 3 }, "
    "(System.Int64)7, Number = -1, Text = \"named\", Kind = typeof(System.String[]), "
    "Boxed = Everything.Color.Blue, Colors = new Everything.Color[] { Everything.Color.Red, "
    "Everything.Color.Blue })]",
    "[Everything.InfoAttribute(Boxed = typeof(System.Collections.Generic.Dictionary<,>))]",
    "[System.Runtime.CompilerServices.CompilerGeneratedAttribute]",
    "[System.Diagnostics.DebuggerBrowsableAttribute(System.Diagnostics.DebuggerBrowsableState."
    "Never)]",
    "[System.Runtime.CompilerServices.CompilerGeneratedAttribute]",
    "[System.Diagnostics.DebuggerBrowsableAttribute(System.Diagnostics.DebuggerBrowsableState."
    "Never)]",
    "[System.Runtime.CompilerServices.CompilerGeneratedAttribute]",
    "[System.Diagnostics.DebuggerBrowsableAttribute(System.Diagnostics.DebuggerBrowsableState."
    "Never)]",
    "[System.Runtime.CompilerServices.FixedBufferAttribute(typeof(System.Byte), 16)]",
    "[System.Reflection.DefaultMemberAttribute(\"Item\")]",
    "[System.Runtime.CompilerServices.CompilerGeneratedAttribute]",
    "[System.Reflection.DefaultMemberAttribute(\"Slot\")]",
    "[System.Runtime.CompilerServices.CompilerGeneratedAttribute]",
    "[System.Runtime.CompilerServices.UnsafeValueTypeAttribute]",
    "[System.Runtime.CompilerServices.CompilerGeneratedAttribute]",
    "[System.Runtime.CompilerServices.CompilerGeneratedAttribute]",
    "[System.ParamArrayAttribute]",
    "[System.Runtime.CompilerServices.CompilerGeneratedAttribute]",
    "[System.ThreadStaticAttribute]",
    "[System.Runtime.CompilerServices.CompilerGeneratedAttribute]",
    "[System.Runtime.CompilerServices.DecimalConstantAttribute(1, 0, 0, 0, 15)]",
    "[System.Runtime.CompilerServices.CompilerGeneratedAttribute]",
    "[System.Runtime.CompilerServices.CompilerGeneratedAttribute]",
    "[System.Runtime.CompilerServices.CompilerGeneratedAttribute]",
    "[System.Runtime.CompilerServices.CompilerGeneratedAttribute]",
    "[System.Runtime.CompilerServices.DecimalConstantAttribute(2, 0, 0, 0, 1234)]",
    "[System.ObsoleteAttribute(\"do not use\", true)]",
    "[System.ComponentModel.EditorBrowsableAttribute(System.ComponentModel.EditorBrowsableState."
    "Never)]",
    "[System.Runtime.CompilerServices.CompilerGeneratedAttribute]",
    "[System.Runtime.CompilerServices.CompilerGeneratedAttribute]",
    "[System.Runtime.CompilerServices.CompilerGeneratedAttribute]",
    "[System.Diagnostics.DebuggerBrowsableAttribute(System.Diagnostics.DebuggerBrowsableState."
    "Never)]",
    "[System.Runtime.CompilerServices.CompilerGeneratedAttribute]",
    "[System.Diagnostics.DebuggerBrowsableAttribute(System.Diagnostics.DebuggerBrowsableState."
    "Never)]",
    "[System.Runtime.CompilerServices.CompilerGeneratedAttribute]",
    "[System.Diagnostics.DebuggerBrowsableAttribute(System.Diagnostics.DebuggerBrowsableState."
    "Never)]",
};

START_TEST(every_custom_attribute_of_everything)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_rel(ctx, "data/Everything.dll");
    fw_resolver fw = {.ctx = ctx};
    ck_assert_uint_eq(mdt_table_rows(img, MDT_TABLE_CustomAttribute), 47);
    for (uint32_t i = 0; i < 47; i++) {
        mdt_attr a;
        char *s, msg[512];
        ck_assert_msg(mdt_attr_of_row(ctx, &a, img, i + 1, fw_resolve, &fw) == 0, "row %u: %s",
                      i + 1, mdt_error_message(msg, sizeof msg));
        ck_assert_int_eq(mdt_attr_format(ctx, &s, &a, NULL), 0);
        ck_assert_msg(!strcmp(s, everything_attrs[i]), "row %u:\n got %s\nwant %s", i + 1, s,
                      everything_attrs[i]);
    }
    /* Only TypeRef'd enums of mscorlib and System went to the resolver. */
    ck_assert_uint_eq(fw.n, 2);
    talloc_free(ctx);
}
END_TEST

START_TEST(info_attribute_value_tree)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_rel(ctx, "data/Everything.dll");
    mdt_attr a;
    ck_assert_int_eq(mdt_attr_of_row(ctx, &a, img, 12, NULL, NULL), 0);
    ck_assert_uint_eq(a.ctor, 0x06000002);
    ck_assert_uint_eq(a.type, 0x02000004);
    ck_assert_uint_eq(a.nfixed, 6);
    ck_assert_int_eq(a.fixed[0].i, 42);
    ck_assert_str_eq(a.fixed[1].str, "hello");
    ck_assert_uint_eq(a.fixed[2].type->kind, MDT_VALUE_ENUM);
    ck_assert_uint_eq(a.fixed[2].type->underlying, MDT_VALUE_U1);
    ck_assert_uint_eq(a.fixed[2].type->enum_typedef, 0x02000002);
    ck_assert_int_eq(a.fixed[2].u, 2);
    ck_assert_uint_eq(a.fixed[3].type->kind, MDT_VALUE_TYPE);
    ck_assert(strncmp(a.fixed[3].str, "System.Collections.Generic.List`1[[System.Int32, mscorlib",
                      57) == 0);
    ck_assert_uint_eq(a.fixed[4].count, 3);
    ck_assert_int_eq(a.fixed[4].elems[2].i, 3);
    ck_assert_uint_eq(a.fixed[5].type->kind, MDT_VALUE_BOXED);
    ck_assert_uint_eq(a.fixed[5].boxed->type->kind, MDT_VALUE_I8);
    ck_assert_int_eq(a.fixed[5].boxed->i, 7);
    ck_assert_uint_eq(a.nnamed, 5);
    ck_assert(!a.named[0].property);
    ck_assert_str_eq(a.named[0].name, "Number");
    ck_assert_int_eq(a.named[0].value.i, -1);
    ck_assert(a.named[1].property);
    ck_assert_str_eq(a.named[1].name, "Text");
    /* Boxed enum named in the blob: "Everything.Color", found in this image. */
    ck_assert_uint_eq(a.named[3].value.boxed->type->kind, MDT_VALUE_ENUM);
    ck_assert_str_eq(a.named[3].value.boxed->type->enum_name, "Everything.Color");
    ck_assert_uint_eq(a.named[4].value.type->elem->underlying, MDT_VALUE_U1);
    /* Row 6: a null array and a null boxed object. */
    ck_assert_int_eq(mdt_attr_of_row(ctx, &a, img, 6, NULL, NULL), 0);
    ck_assert(a.fixed[4].null);
    ck_assert(a.fixed[5].boxed->null);
    /* Friendly: short names, keywords, no Attribute suffix. */
    mdt_name_opts fr = {MDT_STYLE_FULL, MDT_NAME_FRIENDLY, MDT_NAME_OPTS_VERSION, NULL, NULL};
    char *s;
    ck_assert_int_eq(mdt_attr_of_row(ctx, &a, img, 1, NULL, NULL), 0);
    ck_assert_int_eq(mdt_attr_format(ctx, &s, &a, &fr), 0);
    ck_assert_str_eq(s, "[Info(2, \"module\", Color.Green, typeof(void), new int[0], "
                        "\"boxed string\")]");
    talloc_free(ctx);
}
END_TEST

START_TEST(unknown_enum_size_without_a_resolver)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_rel(ctx, "data/Everything.dll");
    mdt_attr a;
    char msg[512];
    /* AttributeUsage(AttributeTargets.All): the enum is a TypeRef to mscorlib. */
    ck_assert_int_eq(mdt_attr_of_row(ctx, &a, img, 11, NULL, NULL), MDT_EUNRESOLVED);
    mdt_error_message(msg, sizeof msg);
    ck_assert_msg(strstr(msg, "unknown enum size for System.AttributeTargets") &&
                      strstr(msg, "+0x2"),
                  "%s", msg);
    /* With a resolver that knows System.dll's EditorBrowsableState. */
    fw_resolver fw = {.ctx = ctx};
    ck_assert_int_eq(mdt_attr_of_row(ctx, &a, img, 39, fw_resolve, &fw), 0);
    ck_assert_uint_eq(a.fixed[0].type->underlying, MDT_VALUE_I4);
    ck_assert(a.fixed[0].type->enum_img != img);
    talloc_free(ctx);
}
END_TEST

/* A resolver that only knows sizes (no metadata for the enum). */
static int size_only(void *payload, mdt_enum_info *out, const mdt_image *img, uint32_t token,
                     const char *name)
{
    (void)payload;
    (void)img;
    (void)token;
    if (strstr(name, "DebuggableAttribute+DebuggingModes")) {
        out->underlying = MDT_ELEMENT_TYPE_I4;
        return 0;
    }
    return MDT_ENOTFOUND;
}

START_TEST(resolver_may_give_only_the_size)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_rel(ctx, "data/corpus/asmresolver/ConstantZeroValueColumn.exe");
    mdt_attr a;
    char *s;
    ck_assert_int_eq(mdt_attr_of_row(ctx, &a, img, 3, size_only, NULL), 0);
    ck_assert_int_eq(mdt_attr_format(ctx, &s, &a, NULL), 0);
    ck_assert_str_eq(s, "[System.Diagnostics.DebuggableAttribute("
                        "(System.Diagnostics.DebuggableAttribute+DebuggingModes)263)]");
    /* For an enum it does not know, the decode stops as without it. */
    mdt_image *ev = open_rel(ctx, "data/Everything.dll");
    ck_assert_int_eq(mdt_attr_of_row(ctx, &a, ev, 11, size_only, NULL), MDT_EUNRESOLVED);
    talloc_free(ctx);
}
END_TEST

/* An enum value whose type says an underlying kind outside its contract
 * (BOOLEAN, CHAR, I1..U8) is printed as a cast number: no member is
 * matched on a size that kind does not have. */
START_TEST(enum_of_a_bad_underlying_kind_names_no_member)
{
    void *ctx = talloc_new(NULL);
    mdt_attr a;
    /* InfoAttribute(2, "module", Color.Green, ...): its third argument */
    ck_assert_int_eq(mdt_attr_of_row(ctx, &a, open_rel(ctx, "data/Everything.dll"), 1, NULL, NULL),
                     0);
    mdt_value v = a.fixed[2];
    mdt_value_type t = *v.type;
    char *s;
    ck_assert_uint_eq(v.type->kind, MDT_VALUE_ENUM);
    ck_assert_int_eq(mdt_value_format(ctx, &s, &v, NULL), 0);
    ck_assert_str_eq(s, "Everything.Color.Green");
    t.underlying = MDT_VALUE_STRING;
    v.type = &t;
    v.u = 0; /* matched on 0 bytes, any literal would do */
    v.i = 0;
    ck_assert_int_eq(mdt_value_format(ctx, &s, &v, NULL), 0);
    ck_assert_str_eq(s, "(Everything.Color)0");
    talloc_free(ctx);
}
END_TEST

/* Hand-made blobs against real constructors of Everything.dll:
 * 0x06000002 InfoAttribute(int, string, Color, Type, int[], object),
 * 0x06000001 InfoAttribute(), 0x0A000011 FixedBuffer(Type, int). */
START_TEST(malformed_attribute_blobs_fail_with_offsets)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_rel(ctx, "data/Everything.dll");
    static const struct {
        uint32_t ctor;
        uint8_t blob[24];
        uint32_t len;
        int code;
        const char *msg;
    } cases[] = {
        {0x06000001, {0x00, 0x01, 0x00, 0x00}, 4, MDT_EBADIMAGE, "prolog is 0x0100"},
        {0x06000001, {0x01}, 1, MDT_ETRUNC, "+0x0"},
        {0x06000001, {0x01, 0x00, 0x01}, 3, MDT_ETRUNC, "named argument count"},
        {0x06000001, {0x01, 0x00, 0x10, 0x00, 0x53}, 5, MDT_EBADIMAGE, "named argument count 16"},
        {0x06000001,
         {0x01, 0x00, 0x01, 0x00, 0x52, 0x08, 0x01, 'X', 1, 0, 0, 0},
         12,
         MDT_EBADIMAGE,
         "0x52 is neither"},
        {0x06000001,
         {0x01, 0x00, 0x01, 0x00, 0x53, 0x01, 0x01, 'X', 1, 0, 0, 0},
         12,
         MDT_EBADIMAGE,
         "0x01 is not a FieldOrPropType"},
        {0x06000001,
         {0x01, 0x00, 0x01, 0x00, 0x53, 0x08, 0xFF, 1, 0, 0, 0},
         11,
         MDT_EBADIMAGE,
         "name is null"},
        {0x06000001,
         {0x01, 0x00, 0x01, 0x00, 0x53, 0x51, 0x01, 'X', 0x51, 0x08, 1, 0, 0, 0},
         14,
         MDT_EBADIMAGE,
         "boxed object inside a boxed object"},
        {0x06000001,
         {0x01, 0x00, 0x01, 0x00, 0x53, 0x55, 0x00, 0x01, 'X', 0},
         10,
         MDT_EBADIMAGE,
         "enum type name is empty"},
        {0x06000001,
         {0x01, 0x00, 0x01, 0x00, 0x53, 0x55, 0x03, 'F', 'o', 'o', 0x01, 'X', 0},
         13,
         MDT_EUNRESOLVED,
         "unknown enum size for Foo"},
        {0x06000001,
         {0x01, 0x00, 0x01, 0x00, 0x53, 0x1D, 0x08, 0x01, 'X', 0x40, 0, 0, 0, 1},
         14,
         MDT_EBADIMAGE,
         "array length 64 exceeds the 1 bytes left"},
        {0x06000001,
         {0x01, 0x00, 0x01, 0x00, 0x53, 0x0E, 0x01, 'X', 0x05, 'a', 'b'},
         11,
         MDT_ETRUNC,
         "string of 5 bytes, only 2 left"},
        {0x06000002,
         {0x01, 0x00, 0x01, 0x00, 0x00, 0x00, 0xFF, 0x02},
         8,
         MDT_ETRUNC,
         "#Blob[0x0]+0x8"},
        {0x0A000011, {0x01, 0x00, 0x80}, 3, MDT_ETRUNC, "type name"},
        {0x0A00000D, {0x01, 0x00, 0x00, 0x00}, 4, MDT_EBADIMAGE, "no method signature"},
        {0x02000002, {0x01, 0x00, 0x00, 0x00}, 4, MDT_EINVAL, "not a MethodDef or MemberRef"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mdt_attr a;
        char msg[512];
        int e = mdt_attr_decode(ctx, &a, img, cases[i].ctor, cases[i].blob, cases[i].len, 0, NULL,
                                NULL);
        mdt_error_message(msg, sizeof msg);
        ck_assert_msg(e == cases[i].code, "case %zu: got %d want %d (%s)", i, e, cases[i].code,
                      msg);
        ck_assert_msg(strstr(msg, cases[i].msg) != NULL, "case %zu: message '%s' lacks '%s'", i,
                      msg, cases[i].msg);
        ck_assert_ptr_null(a.fixed);
    }
    talloc_free(ctx);
}
END_TEST

START_TEST(nested_arrays_of_objects_are_capped)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_rel(ctx, "data/Everything.dll");
    /* Named FIELD of type object, holding object[] { object[] { ... } }. */
    uint8_t blob[4 + 4 + 100 * 6 + 8];
    uint32_t n = 0;
    blob[n++] = 0x01, blob[n++] = 0x00, blob[n++] = 0x01, blob[n++] = 0x00;
    blob[n++] = 0x53, blob[n++] = 0x51, blob[n++] = 0x01, blob[n++] = 'X';
    for (int i = 0; i < 100; i++) {
        blob[n++] = 0x1D, blob[n++] = 0x51; /* boxed: SZARRAY of object */
        blob[n++] = 1, blob[n++] = 0, blob[n++] = 0, blob[n++] = 0;
    }
    blob[n++] = 0x08, blob[n++] = 1, blob[n++] = 0, blob[n++] = 0, blob[n++] = 0;
    mdt_attr a;
    char msg[512];
    ck_assert_int_eq(mdt_attr_decode(ctx, &a, img, 0x06000001, blob, n, 0, NULL, NULL),
                     MDT_EBADIMAGE);
    ck_assert_ptr_nonnull(strstr(mdt_error_message(msg, sizeof msg), "nested deeper than 64"));
    /* Ten levels decode and print. */
    n = 8;
    for (int i = 0; i < 10; i++) {
        blob[n++] = 0x1D, blob[n++] = 0x51;
        blob[n++] = 1, blob[n++] = 0, blob[n++] = 0, blob[n++] = 0;
    }
    blob[n++] = 0x08, blob[n++] = 5, blob[n++] = 0, blob[n++] = 0, blob[n++] = 0;
    ck_assert_int_eq(mdt_attr_decode(ctx, &a, img, 0x06000001, blob, n, 0, NULL, NULL), 0);
    char *s;
    ck_assert_int_eq(mdt_attr_format(ctx, &s, &a, NULL), 0);
    ck_assert_ptr_nonnull(strstr(s, "X = new System.Object[] { new System.Object[] { "));
    ck_assert_ptr_nonnull(strstr(s, "(System.Int32)5 } } } }"));
    talloc_free(ctx);
}
END_TEST

START_TEST(every_attribute_of_the_framework_decodes)
{
    /* mscorlib, System and System.Core: every attribute decodes with the
     * framework resolver, and prints. */
    static const char *const files[] = {"mscorlib.dll", "System.dll", "System.Core.dll",
                                        "System.Xml.dll"};
    void *ctx = talloc_new(NULL);
    fw_resolver fw = {.ctx = ctx};
    uint64_t n = 0;
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", MONO_45_DIR, files[f]);
        mdt_image *img = open_path(ctx, path);
        for (uint32_t rid = 1; rid <= mdt_table_rows(img, MDT_TABLE_CustomAttribute); rid++) {
            void *tmp = talloc_new(ctx);
            mdt_attr a;
            char *s, msg[512];
            int e = mdt_attr_of_row(tmp, &a, img, rid, fw_resolve, &fw);
            ck_assert_msg(e == 0, "%s row %u: %s", files[f], rid,
                          mdt_error_message(msg, sizeof msg));
            ck_assert_int_eq(mdt_attr_format(tmp, &s, &a, NULL), 0);
            talloc_free(tmp);
            n++;
        }
    }
    ck_assert(n > 5000);
    talloc_free(ctx);
}
END_TEST

MDT_TESTS_NEED_MONO

Suite *suite(void);
Suite *suite(void)
{
    Suite *s = suite_create("attr");
    TCase *tc = tcase_create("attr");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, every_custom_attribute_of_everything);
    tcase_add_test(tc, info_attribute_value_tree);
    tcase_add_test(tc, unknown_enum_size_without_a_resolver);
    tcase_add_test(tc, resolver_may_give_only_the_size);
    tcase_add_test(tc, enum_of_a_bad_underlying_kind_names_no_member);
    tcase_add_test(tc, malformed_attribute_blobs_fail_with_offsets);
    tcase_add_test(tc, nested_arrays_of_objects_are_capped);
    tcase_add_test(tc, every_attribute_of_the_framework_decodes);
    suite_add_tcase(s, tc);
    return s;
}
