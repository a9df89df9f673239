/* Signature decoding and names (doc/names.md full style) on Mono's mscorlib
 * and the corpus, including hostile blobs and nesting cycles. */
#include <check.h>
#include <string.h>
#include <talloc.h>

#include <mdtools/mdtools.h>

#include "paths.h"

static mdt_image *open_path(void *ctx, const char *path)
{
    mdt_image *img = NULL;
    char msg[512];
    ck_assert_msg(mdt_image_open_file(ctx, &img, path, 0) == 0, "%s",
                  mdt_error_message(msg, sizeof msg));
    return img;
}

static mdt_image *open_rel(void *ctx, const char *rel)
{
    char p[1024];
    return open_path(ctx, src_path(p, sizeof p, rel));
}

static char *name_of(void *ctx, const mdt_image *img, uint32_t token, int style)
{
    mdt_name_opts o = {.style = style};
    char *s = NULL, msg[512];
    int e = mdt_token_name(ctx, &s, img, token, &o);
    ck_assert_msg(e == 0, "token 0x%08x: %s", token, mdt_error_message(msg, sizeof msg));
    return s;
}

static char *sig_of(void *ctx, const mdt_image *img, uint32_t token, int style)
{
    mdt_name_opts o = {.style = style};
    mdt_sig sig;
    char *s = NULL, msg[512];
    ck_assert_msg(mdt_sig_of_token(ctx, &sig, img, token) == 0, "%s",
                  mdt_error_message(msg, sizeof msg));
    ck_assert_msg(mdt_sig_name(ctx, &s, &sig, &o) == 0, "%s", mdt_error_message(msg, sizeof msg));
    return s;
}

/* The TypeDef token of a type by namespace and name. */
static uint32_t find_typedef(const mdt_image *img, const char *ns, const char *name)
{
    for (uint32_t i = 1; i <= mdt_table_rows(img, MDT_TABLE_TypeDef); i++) {
        mdt_row r;
        const char *n, *s;
        mdt_row_get(&r, img, MDT_TABLE_TypeDef, i);
        mdt_row_string(&n, NULL, &r, MDT_COL_TypeDef_TypeName);
        mdt_row_string(&s, NULL, &r, MDT_COL_TypeDef_TypeNamespace);
        if (!strcmp(n, name) && !strcmp(s, ns))
            return MDT_TOKEN(MDT_TABLE_TypeDef, i);
    }
    return 0;
}

START_TEST(nested_generic_typedef_names)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_path(ctx, MONO_45_DIR "/mscorlib.dll");
    uint32_t dict = find_typedef(img, "System.Collections.Generic", "Dictionary`2");
    ck_assert_uint_ne(dict, 0);
    ck_assert_str_eq(name_of(ctx, img, dict, MDT_STYLE_FULL),
                     "System.Collections.Generic.Dictionary<TKey,TValue>");
    ck_assert_str_eq(name_of(ctx, img, dict, MDT_STYLE_REFLECTION),
                     "System.Collections.Generic.Dictionary`2");
    /* A nested type: Enumerator of Dictionary. */
    uint32_t found = 0;
    for (uint32_t i = 1; i <= mdt_table_rows(img, MDT_TABLE_TypeDef) && !found; i++) {
        uint32_t enc;
        ck_assert_int_eq(mdt_typedef_enclosing(&enc, img, MDT_TOKEN(MDT_TABLE_TypeDef, i)), 0);
        if (enc == dict && !strcmp(strrchr(name_of(ctx, img, MDT_TOKEN(2, i), 0), '+'),
                                   "+Enumerator<TKey,TValue>"))
            found = MDT_TOKEN(MDT_TABLE_TypeDef, i);
    }
    ck_assert_uint_ne(found, 0);
    ck_assert_str_eq(name_of(ctx, img, found, MDT_STYLE_FULL),
                     "System.Collections.Generic.Dictionary+Enumerator<TKey,TValue>");
    ck_assert_str_eq(name_of(ctx, img, found, MDT_STYLE_IL),
                     "System.Collections.Generic.Dictionary`2/Enumerator");
    /* Only TypeDef tokens have an enclosing type: the same row as a
     * MethodDef, a TypeRef or a nil token is not that nested TypeDef, and a
     * row past the table is not any. */
    uint32_t enc = 1;
    ck_assert_int_eq(
        mdt_typedef_enclosing(&enc, img, MDT_TOKEN(MDT_TABLE_MethodDef, MDT_TOKEN_RID(found))),
        MDT_EINVAL);
    ck_assert_uint_eq(enc, 0);
    ck_assert_int_eq(
        mdt_typedef_enclosing(&enc, img, MDT_TOKEN(MDT_TABLE_TypeRef, MDT_TOKEN_RID(found))),
        MDT_EINVAL);
    ck_assert_int_eq(mdt_typedef_enclosing(&enc, img, MDT_TOKEN(MDT_TABLE_TypeDef, 0)), MDT_EINVAL);
    ck_assert_int_eq(mdt_typedef_enclosing(&enc, img, MDT_TOKEN(MDT_TABLE_TypeDef, 0xFFFFFF)),
                     MDT_ENOTFOUND);
    talloc_free(ctx);
}
END_TEST

START_TEST(every_signature_of_mscorlib_decodes)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_path(ctx, MONO_45_DIR "/mscorlib.dll");
    unsigned tables[] = {MDT_TABLE_MethodDef, MDT_TABLE_MemberRef,     MDT_TABLE_Field,
                         MDT_TABLE_Property,  MDT_TABLE_StandAloneSig, MDT_TABLE_TypeSpec,
                         MDT_TABLE_MethodSpec};
    uint64_t n = 0;
    for (unsigned k = 0; k < sizeof tables / sizeof tables[0]; k++)
        for (uint32_t rid = 1; rid <= mdt_table_rows(img, tables[k]); rid++) {
            void *tmp = talloc_new(ctx);
            sig_of(tmp, img, MDT_TOKEN(tables[k], rid), MDT_STYLE_FULL);
            sig_of(tmp, img, MDT_TOKEN(tables[k], rid), MDT_STYLE_IL);
            sig_of(tmp, img, MDT_TOKEN(tables[k], rid), MDT_STYLE_REFLECTION);
            talloc_free(tmp);
            n++;
        }
    ck_assert(n > 40000);
    talloc_free(ctx);
}
END_TEST

START_TEST(typespec_and_memberref_on_generic_instance)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_rel(ctx, "data/corpus/asmresolver/HelloWorld_Forwarder.exe");
    ck_assert_str_eq(name_of(ctx, img, 0x1b000001, MDT_STYLE_FULL),
                     "SomeNamespace.SomeType<System.String>");
    ck_assert_str_eq(name_of(ctx, img, 0x1b000001, MDT_STYLE_REFLECTION),
                     "SomeNamespace.SomeType`1[System.String]");
    ck_assert_str_eq(name_of(ctx, img, 0x1b000001, MDT_STYLE_IL),
                     "class [Assembly1_Forwarder]SomeNamespace.SomeType`1<string>");
    ck_assert_str_eq(name_of(ctx, img, 0x0a000001, MDT_STYLE_FULL),
                     "SomeNamespace.SomeType<System.String>::SomeMethod");
    talloc_free(ctx);
}
END_TEST

START_TEST(self_referencing_typespec_is_a_cycle)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_rel(ctx, "data/corpus/asmresolver/HelloWorld.MaliciousTypeSpecLoop.exe");
    mdt_sig sig;
    char *s, msg[512];
    /* Decoding the blob itself is fine: SZARRAY of CLASS TypeSpec 1. */
    ck_assert_int_eq(mdt_sig_of_token(ctx, &sig, img, 0x1b000001), 0);
    ck_assert_int_eq(sig.type->kind, MDT_ELEMENT_TYPE_SZARRAY);
    ck_assert_uint_eq(sig.type->elem->token, 0x1b000001);
    /* Printing it must stop at the cycle with a located error. */
    ck_assert_int_eq(mdt_token_name(ctx, &s, img, 0x1b000001, NULL), MDT_EBADIMAGE);
    ck_assert_ptr_nonnull(
        strstr(mdt_error_message(msg, sizeof msg), "TypeSpec 1 refers to itself"));
    /* The rest of the module still reads. */
    ck_assert_str_eq(name_of(ctx, img, 0x0a00000b, MDT_STYLE_FULL), "System.Console::WriteLine");
    talloc_free(ctx);
}
END_TEST

START_TEST(nested_class_cycle_is_reported)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img =
        open_rel(ctx, "data/corpus/asmresolver/HelloWorld.MaliciousNestedClassLoop.exe");
    char *s, msg[512];
    ck_assert_int_eq(mdt_token_name(ctx, &s, img, 0x02000003, NULL), MDT_EBADIMAGE);
    ck_assert_ptr_nonnull(strstr(mdt_error_message(msg, sizeof msg), "nesting cycle"));
    ck_assert_str_eq(name_of(ctx, img, 0x02000002, MDT_STYLE_FULL), "HelloWorld.Program");
    talloc_free(ctx);
}
END_TEST

START_TEST(duplicate_nested_class_row_first_wins)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img =
        open_rel(ctx, "data/corpus/asmresolver/HelloWorld.MaliciousNestedClassLoop2.exe");
    /* TypeDef 4 is nested in 3, and 3 (first NestedClass row) in 5. */
    char *s = name_of(ctx, img, 0x02000004, MDT_STYLE_FULL);
    ck_assert_ptr_nonnull(strstr(s, "MaliciousEnclosingClass+MaliciousClass1+MaliciousClass2"));
    talloc_free(ctx);
}
END_TEST

START_TEST(vararg_memberref_on_methoddef)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_rel(ctx, "data/corpus/asmresolver/ArgListTest.exe");
    mdt_sig sig;
    ck_assert_int_eq(mdt_sig_of_token(ctx, &sig, img, 0x0a00000b), 0);
    ck_assert_uint_eq(sig.method->callconv & MDT_CC_MASK, MDT_CC_VARARG);
    ck_assert_uint_eq(sig.method->sentinel, 0);
    ck_assert_uint_eq(sig.method->nparams, 1);
    ck_assert_str_eq(sig_of(ctx, img, 0x0a00000b, MDT_STYLE_FULL),
                     "vararg System.Void(...,System.String)");
    ck_assert_str_eq(name_of(ctx, img, 0x0a00000b, MDT_STYLE_FULL), "Program::DrawArgList");
    talloc_free(ctx);
}
END_TEST

START_TEST(unusual_typeref_order_nested_name)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img =
        open_rel(ctx, "data/corpus/asmresolver/HelloWorld.UnusualNestedTypeRefOrder.exe");
    ck_assert_str_eq(name_of(ctx, img, 0x01000003, MDT_STYLE_FULL),
                     "System.Diagnostics.DebuggableAttribute+DebuggingModes");
    talloc_free(ctx);
}
END_TEST

/* Hand-made blobs: each malformed one fails with a located message. */
START_TEST(malformed_blobs_fail_with_offsets)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_path(ctx, MONO_45_DIR "/mscorlib.dll");
    static const struct {
        int kind;
        uint8_t blob[12];
        uint32_t len;
        int code;
        const char *msg;
    } cases[] = {
        {MDT_SIG_TYPESPEC, {0x1d}, 1, MDT_ETRUNC, "#Blob[0x0]+0x1"},
        {MDT_SIG_TYPESPEC, {0x99}, 1, MDT_EBADIMAGE, "unknown element type 0x99"},
        {MDT_SIG_TYPESPEC, {0x12, 0x03}, 2, MDT_EBADIMAGE, "tag 3 is not valid"},
        {MDT_SIG_TYPESPEC, {0x12, 0xE0}, 2, MDT_EBADIMAGE, "prefix 111"},
        {MDT_SIG_TYPESPEC, {0x15, 0x08}, 2, MDT_EBADIMAGE, "must be followed by CLASS"},
        {MDT_SIG_TYPESPEC,
         {0x15, 0x12, 0x08, 0x7f, 0x08},
         5,
         MDT_EBADIMAGE,
         "generic argument count 127 exceeds"},
        {MDT_SIG_TYPESPEC, {0x14, 0x08, 0x00}, 3, MDT_EBADIMAGE, "ARRAY with rank 0"},
        {MDT_SIG_TYPESPEC,
         {0x14, 0x08, 0x01, 0x40},
         4,
         MDT_EBADIMAGE,
         "array size count 64 exceeds"},
        {MDT_SIG_METHOD,
         {0x00, 0x02, 0x01, 0x41, 0x08, 0x41, 0x08},
         7,
         MDT_EBADIMAGE,
         "second SENTINEL"},
        {MDT_SIG_METHOD, {0x00, 0x05, 0x01}, 3, MDT_EBADIMAGE, "parameter count 5 exceeds"},
        {MDT_SIG_FIELD, {0x05, 0x08}, 2, MDT_EBADIMAGE, "not 0x06"},
        {MDT_SIG_LOCALS, {0x07, 0x01, 0x45}, 3, MDT_ETRUNC, "#Blob[0x0]+0x3"},
        {MDT_SIG_TYPESPEC, {0x41, 0x08}, 2, MDT_EBADIMAGE, "SENTINEL outside"},
        {MDT_SIG_METHODSPEC, {0x0a, 0x00}, 2, MDT_EBADIMAGE, "no type arguments"},
        {MDT_SIG_TYPESPEC, {0x12, 0xDF, 0xFF, 0xFF, 0xFC}, 5, MDT_EBADIMAGE, "does not exist"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mdt_sig s;
        char msg[512];
        int e = mdt_sig_decode(ctx, &s, img, cases[i].kind, cases[i].blob, cases[i].len, 0);
        ck_assert_msg(e == cases[i].code, "case %zu: got %d want %d (%s)", i, e, cases[i].code,
                      mdt_error_message(msg, sizeof msg));
        ck_assert_msg(strstr(mdt_error_message(msg, sizeof msg), cases[i].msg) != NULL,
                      "case %zu: message '%s' lacks '%s'", i, msg, cases[i].msg);
    }
    talloc_free(ctx);
}
END_TEST

START_TEST(deep_nesting_is_capped)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_path(ctx, MONO_45_DIR "/mscorlib.dll");
    uint8_t blob[200];
    mdt_sig s;
    char msg[512];
    memset(blob, 0x1d, sizeof blob); /* SZARRAY of SZARRAY of ... */
    blob[sizeof blob - 1] = 0x08;
    ck_assert_int_eq(mdt_sig_decode(ctx, &s, img, MDT_SIG_TYPESPEC, blob, sizeof blob, 0),
                     MDT_EBADIMAGE);
    ck_assert_ptr_nonnull(strstr(mdt_error_message(msg, sizeof msg), "nested deeper than 64"));
    /* 63 levels decode and print. */
    ck_assert_int_eq(mdt_sig_decode(ctx, &s, img, MDT_SIG_TYPESPEC, blob + sizeof blob - 64, 64, 0),
                     0);
    talloc_free(ctx);
}
END_TEST

START_TEST(array_shapes_and_modifiers_print_per_names_md)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_path(ctx, MONO_45_DIR "/mscorlib.dll");
    static const struct {
        uint8_t blob[16];
        uint32_t len;
        const char *full, *refl;
    } cases[] = {
        /* int32[-5...5] : ARRAY I4 rank 1, 1 size 11, 1 lobound -5 */
        {{0x14, 0x08, 0x01, 0x01, 0x0b, 0x01, 0x77}, 7, "System.Int32[-5...5]", "System.Int32[*]"},
        {{0x14, 0x08, 0x01, 0x00, 0x00}, 5, "System.Int32[*]", "System.Int32[*]"},
        {{0x14, 0x08, 0x02, 0x00, 0x00}, 5, "System.Int32[,]", "System.Int32[,]"},
        {{0x14, 0x08, 0x02, 0x01, 0x03, 0x00}, 6, "System.Int32[3,]", "System.Int32[,]"},
        {{0x14, 0x08, 0x01, 0x01, 0x00, 0x01, 0x00}, 7, "System.Int32[0...-1]", "System.Int32[*]"},
        {{0x14, 0x08, 0x01, 0x00, 0x01, 0x02}, 6, "System.Int32[1...]", "System.Int32[*]"},
        {{0x14, 0x08, 0x01, 0x02, 0x02, 0x03, 0x00},
         7,
         "System.Int32[2]{sizes=2,3;lo=}",
         "System.Int32[*]"},
        {{0x0f, 0x01}, 2, "System.Void*", "System.Void*"},
        {{0x1b, 0x01, 0x01, 0x08, 0x0e},
         5,
         "delegate* unmanaged[Cdecl]<System.String,System.Int32>",
         "System.IntPtr"},
        {{0x1b, 0x25, 0x00, 0x01}, 4, "delegate* instance vararg<System.Void>", "System.IntPtr"},
        {{0x13, 0x00}, 2, "!0", "!0"},
        {{0x1e, 0x03}, 2, "!!3", "!!3"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mdt_sig s;
        char *out, msg[512];
        mdt_name_opts refl = {.style = MDT_STYLE_REFLECTION};
        ck_assert_msg(
            mdt_sig_decode(ctx, &s, img, MDT_SIG_TYPESPEC, cases[i].blob, cases[i].len, 0) == 0,
            "case %zu: %s", i, mdt_error_message(msg, sizeof msg));
        ck_assert_int_eq(mdt_type_name(ctx, &out, s.type, NULL), 0);
        ck_assert_str_eq(out, cases[i].full);
        ck_assert_int_eq(mdt_type_name(ctx, &out, s.type, &refl), 0);
        ck_assert_str_eq(out, cases[i].refl);
    }
    talloc_free(ctx);
}
END_TEST

START_TEST(generic_context_substitutes_and_names_params)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_path(ctx, MONO_45_DIR "/mscorlib.dll");
    uint32_t list = find_typedef(img, "System.Collections.Generic", "List`1");
    mdt_sig s;
    char *out;
    static const uint8_t var0[] = {0x13, 0x00};
    static const uint8_t i4[] = {0x08};
    ck_assert_int_eq(mdt_sig_decode(ctx, &s, img, MDT_SIG_TYPESPEC, var0, 2, 0), 0);
    mdt_sig arg;
    ck_assert_int_eq(mdt_sig_decode(ctx, &arg, img, MDT_SIG_TYPESPEC, i4, 1, 0), 0);
    mdt_generic_context g = {1, &arg.type, 0, NULL, img, list, 0};
    mdt_name_opts o = {.style = MDT_STYLE_FULL, .gctx = &g};
    ck_assert_int_eq(mdt_type_name(ctx, &out, s.type, &o), 0);
    ck_assert_str_eq(out, "System.Int32");
    g.ntype_args = 0;
    o.flags = MDT_NAME_PARAM_NAMES;
    ck_assert_int_eq(mdt_type_name(ctx, &out, s.type, &o), 0);
    ck_assert_str_eq(out, "T");
    o.flags = MDT_NAME_FRIENDLY;
    g.ntype_args = 1;
    static const uint8_t str[] = {0x0e};
    ck_assert_int_eq(mdt_sig_decode(ctx, &arg, img, MDT_SIG_TYPESPEC, str, 1, 0), 0);
    ck_assert_int_eq(mdt_type_name(ctx, &out, s.type, &o), 0);
    ck_assert_str_eq(out, "string");
    talloc_free(ctx);
}
END_TEST

MDT_TESTS_NEED_MONO

Suite *suite(void);
Suite *suite(void)
{
    Suite *s = suite_create("sig");
    TCase *tc = tcase_create("sig");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, nested_generic_typedef_names);
    tcase_add_test(tc, every_signature_of_mscorlib_decodes);
    tcase_add_test(tc, typespec_and_memberref_on_generic_instance);
    tcase_add_test(tc, self_referencing_typespec_is_a_cycle);
    tcase_add_test(tc, nested_class_cycle_is_reported);
    tcase_add_test(tc, duplicate_nested_class_row_first_wins);
    tcase_add_test(tc, vararg_memberref_on_methoddef);
    tcase_add_test(tc, unusual_typeref_order_nested_name);
    tcase_add_test(tc, malformed_blobs_fail_with_offsets);
    tcase_add_test(tc, deep_nesting_is_capped);
    tcase_add_test(tc, array_shapes_and_modifiers_print_per_names_md);
    tcase_add_test(tc, generic_context_substitutes_and_names_params);
    suite_add_tcase(s, tc);
    return s;
}
