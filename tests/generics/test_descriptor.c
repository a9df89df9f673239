/* Runtime instantiations and portable type-argument descriptors
 * (doc/names.md): names of instantiated TypeDefs and MethodDefs with arguments
 * from other modules and __Canon, and the text form in both directions. */
#include "gtest.h"

#define EV_MVID "fe9721ae846a4bae8601a052e4c43e45" /* data/README.md */

struct world {
    const mdt_image *imgs[4];
    unsigned n;
};

static int lookup(void *payload, const mdt_image **img, const uint8_t mvid[16])
{
    struct world *w = payload;
    for (unsigned i = 0; i < w->n; i++) {
        uint8_t g[16];
        if (mdt_image_mvid(g, w->imgs[i]) == 0 && !memcmp(g, mvid, 16)) {
            *img = w->imgs[i];
            return 0;
        }
    }
    return MDT_ENOTFOUND;
}

static mdt_desc prim(uint8_t et)
{
    mdt_desc d = {.kind = MDT_DESC_PRIM, .prim = et};
    return d;
}

static char *inst(void *ctx, const mdt_image *img, uint32_t token, uint32_t nt,
                  const mdt_desc *const *t, uint32_t nm, const mdt_desc *const *m, int style)
{
    mdt_name_opts o = {style, 0, MDT_NAME_OPTS_VERSION, NULL, NULL};
    char *s, msg[512];
    ck_assert_msg(mdt_inst_name(ctx, &s, img, token, nt, t, nm, m, &o) == 0, "%s",
                  mdt_error_message(msg, sizeof msg));
    return s;
}

START_TEST(instantiated_names)
{
    void *ctx = talloc_new(NULL);
    mdt_image *ev = open_rel(ctx, "data/Everything.dll");
    mdt_image *corlib = open_path(ctx, MONO_45_DIR "/mscorlib.dll");
    mdt_desc i4 = prim(MDT_ELEMENT_TYPE_I4), str = prim(MDT_ELEMENT_TYPE_STRING),
             r4 = prim(MDT_ELEMENT_TYPE_R4), canon = {.kind = MDT_DESC_CANON};
    const mdt_desc *i4_str[] = {&i4, &str}, *r4s[] = {&r4}, *canons[] = {&canon, &canon};
    /* Pair`2 (TypeDef 30) and its Select`1 (MethodDef 0x06000036). */
    ck_assert_str_eq(inst(ctx, ev, 0x0200001E, 2, i4_str, 0, NULL, MDT_STYLE_FULL),
                     "Everything.Pair<System.Int32,System.String>");
    ck_assert_str_eq(inst(ctx, ev, 0x06000036, 2, i4_str, 1, r4s, MDT_STYLE_FULL),
                     "Everything.Pair<System.Int32,System.String>::Select<System.Single>");
    ck_assert_str_eq(inst(ctx, ev, 0x06000036, 2, i4_str, 1, r4s, MDT_STYLE_REFLECTION),
                     "Everything.Pair`2[System.Int32,System.String]::Select[System.Single]");
    ck_assert_str_eq(inst(ctx, ev, 0x06000036, 2, i4_str, 1, r4s, MDT_STYLE_IL),
                     "class Everything.Pair`2<int32, string>::Select<float32>");
    /* Shared code: __Canon stays visible. */
    ck_assert_str_eq(inst(ctx, ev, 0x06000036, 2, canons, 1, canons, MDT_STYLE_FULL),
                     "Everything.Pair<System.__Canon,System.__Canon>::Select<System.__Canon>");
    /* Arguments from another module: List`1<Everything.Point> in mscorlib. */
    uint32_t list;
    ck_assert_int_eq(mdt_typedef_by_name(&list, corlib, "System.Collections.Generic.List`1", 33),
                     0);
    mdt_desc point = {.kind = MDT_DESC_TYPEDEF, .img = ev, .token = 0x0200000D};
    const mdt_desc *points[] = {&point};
    ck_assert_str_eq(inst(ctx, corlib, list, 1, points, 0, NULL, MDT_STYLE_FULL),
                     "System.Collections.Generic.List<Everything.Point>");
    ck_assert_str_eq(inst(ctx, corlib, list, 1, points, 0, NULL, MDT_STYLE_IL),
                     "class System.Collections.Generic.List`1<valuetype "
                     "[Everything]Everything.Point>");
    /* Arrays, pointers, byrefs, nested generics, non-generic methods. */
    mdt_desc vec = {.kind = MDT_DESC_SZARRAY, .elem = &i4},
             md3 = {.kind = MDT_DESC_ARRAY, .rank = 3, .elem = &i4},
             md1 = {.kind = MDT_DESC_ARRAY, .rank = 1, .elem = &str},
             ptr = {.kind = MDT_DESC_PTR, .elem = &i4},
             ref = {.kind = MDT_DESC_BYREF, .elem = &ptr};
    const mdt_desc *arrs[] = {&vec, &md3}, *more[] = {&md1, &ref};
    ck_assert_str_eq(inst(ctx, ev, 0x0200001C, 2, arrs, 0, NULL, MDT_STYLE_FULL),
                     "Everything.Outer+Generic+Leaf<System.Int32[],System.Int32[,,]>");
    ck_assert_str_eq(inst(ctx, ev, 0x0200001C, 2, more, 0, NULL, MDT_STYLE_FULL),
                     "Everything.Outer+Generic+Leaf<System.String[*],System.Int32*&>");
    ck_assert_str_eq(inst(ctx, ev, 0x06000053, 0, NULL, 0, NULL, MDT_STYLE_FULL),
                     "Everything.Calls::Many");
    ck_assert_str_eq(inst(ctx, ev, 0x0600000D, 1, r4s, 0, NULL, MDT_STYLE_FULL),
                     "Everything.IScalable<System.Single>::Scale");
    talloc_free(ctx);
}
END_TEST

START_TEST(instantiation_errors)
{
    void *ctx = talloc_new(NULL);
    mdt_image *ev = open_rel(ctx, "data/Everything.dll");
    mdt_desc i4 = prim(MDT_ELEMENT_TYPE_I4), bad = prim(0x42);
    mdt_desc not_td = {.kind = MDT_DESC_TYPEDEF, .img = ev, .token = 0x01000001};
    mdt_desc pair1 = {.kind = MDT_DESC_TYPEDEF, .img = ev, .token = 0x0200001E, .nargs = 0};
    const mdt_desc *one[] = {&i4}, *bads[] = {&bad, &i4}, *nottd[] = {&not_td, &i4},
                   *p1[] = {&pair1, &i4};
    char *s, msg[512];
    ck_assert_int_eq(mdt_inst_name(ctx, &s, ev, 0x0200001E, 1, one, 0, NULL, NULL), MDT_EINVAL);
    ck_assert_ptr_nonnull(
        strstr(mdt_error_message(msg, sizeof msg), "2 generic parameters, 1 arguments"));
    ck_assert_int_eq(mdt_inst_name(ctx, &s, ev, 0x06000036, 0, NULL, 1, one, NULL), MDT_EINVAL);
    ck_assert_int_eq(mdt_inst_name(ctx, &s, ev, 0x06000036, 2, bads, 1, one, NULL), MDT_EINVAL);
    ck_assert_int_eq(mdt_inst_name(ctx, &s, ev, 0x06000036, 2, nottd, 1, one, NULL), MDT_EINVAL);
    ck_assert_int_eq(mdt_inst_name(ctx, &s, ev, 0x06000036, 2, p1, 1, one, NULL), MDT_EINVAL);
    ck_assert_int_eq(mdt_inst_name(ctx, &s, ev, 0x06000053, 0, NULL, 1, one, NULL), MDT_EINVAL);
    ck_assert_int_eq(mdt_inst_name(ctx, &s, ev, 0x0A000001, 0, NULL, 0, NULL, NULL), MDT_EINVAL);
    ck_assert_int_eq(mdt_inst_name(ctx, &s, ev, 0x0200000D, 0, NULL, 1, one, NULL), MDT_EINVAL);
    /* A cycle built by a caller is stopped by the depth cap. */
    mdt_desc loop = {.kind = MDT_DESC_SZARRAY};
    loop.elem = &loop;
    const mdt_desc *loops[] = {&loop, &i4};
    ck_assert_int_eq(mdt_inst_name(ctx, &s, ev, 0x0200001E, 2, loops, 0, NULL, NULL), MDT_EINVAL);
    ck_assert_ptr_nonnull(strstr(mdt_error_message(msg, sizeof msg), "nested deeper"));
    ck_assert_int_eq(mdt_desc_format(ctx, &s, &loop), MDT_EINVAL);
    talloc_free(ctx);
}
END_TEST

START_TEST(type_trees_from_descriptors)
{
    void *ctx = talloc_new(NULL);
    mdt_image *ev = open_rel(ctx, "data/Everything.dll");
    mdt_image *corlib = open_path(ctx, MONO_45_DIR "/mscorlib.dll");
    uint32_t list;
    ck_assert_int_eq(mdt_typedef_by_name(&list, corlib, "System.Collections.Generic.List`1", 33),
                     0);
    mdt_desc point = {.kind = MDT_DESC_TYPEDEF, .img = ev, .token = 0x0200000D};
    const mdt_desc *points[] = {&point};
    mdt_desc l = {
        .kind = MDT_DESC_TYPEDEF, .img = corlib, .token = list, .nargs = 1, .args = points};
    const mdt_type *t;
    ck_assert_int_eq(mdt_desc_to_type(ctx, &t, &l), 0);
    ck_assert_uint_eq(t->kind, MDT_ELEMENT_TYPE_GENERICINST);
    ck_assert_uint_eq(t->elem->kind, MDT_ELEMENT_TYPE_CLASS);
    ck_assert_ptr_eq(t->elem->img, corlib);
    ck_assert_uint_eq(t->args[0]->kind, MDT_ELEMENT_TYPE_VALUETYPE);
    ck_assert_ptr_eq(t->args[0]->img, ev);
    /* Enums are value types too; System.Enum itself is not. */
    mdt_desc color = {.kind = MDT_DESC_TYPEDEF, .img = ev, .token = 0x02000002};
    ck_assert_int_eq(mdt_desc_to_type(ctx, &t, &color), 0);
    ck_assert_uint_eq(t->kind, MDT_ELEMENT_TYPE_VALUETYPE);
    uint32_t en;
    ck_assert_int_eq(mdt_typedef_by_name(&en, corlib, "System.Enum", 11), 0);
    mdt_desc e = {.kind = MDT_DESC_TYPEDEF, .img = corlib, .token = en};
    ck_assert_int_eq(mdt_desc_to_type(ctx, &t, &e), 0);
    ck_assert_uint_eq(t->kind, MDT_ELEMENT_TYPE_CLASS);
    mdt_desc canon = {.kind = MDT_DESC_CANON};
    ck_assert_int_eq(mdt_desc_to_type(ctx, &t, &canon), 0);
    ck_assert_uint_eq(t->kind, MDT_ELEMENT_TYPE_CANON);
    char *s;
    mdt_name_opts fr = {MDT_STYLE_FULL, MDT_NAME_FRIENDLY, MDT_NAME_OPTS_VERSION, NULL, NULL};
    ck_assert_int_eq(mdt_type_name(ctx, &s, t, &fr), 0);
    ck_assert_str_eq(s, "__Canon");
    talloc_free(ctx);
}
END_TEST

START_TEST(text_round_trips)
{
    void *ctx = talloc_new(NULL);
    mdt_image *ev = open_rel(ctx, "data/Everything.dll");
    mdt_image *corlib = open_path(ctx, MONO_45_DIR "/mscorlib.dll");
    struct world w = {{ev, corlib}, 2};
    uint8_t g[16];
    char cm[33], list_text[64], dict_text[64], buf[1024];
    uint32_t list, dict;
    ck_assert_int_eq(mdt_image_mvid(g, corlib), 0);
    snprintf(cm, sizeof cm, "%02x%02x%02x%02x%02x%02x%02x%02x%02x%02x%02x%02x%02x%02x%02x%02x",
             g[3], g[2], g[1], g[0], g[5], g[4], g[7], g[6], g[8], g[9], g[10], g[11], g[12], g[13],
             g[14], g[15]);
    ck_assert_int_eq(mdt_typedef_by_name(&list, corlib, "System.Collections.Generic.List`1", 33),
                     0);
    ck_assert_int_eq(
        mdt_typedef_by_name(&dict, corlib, "System.Collections.Generic.Dictionary`2", 39), 0);
    snprintf(list_text, sizeof list_text, "%s:0x%08x", cm, list);
    snprintf(dict_text, sizeof dict_text, "%s:0x%08x", cm, dict);
    static const char *const simple[][2] = {
        {"I4", "System.Int32"},
        {"STRING[]", "System.String[]"},
        {"__Canon", "System.__Canon"},
        {"I4[3]", "System.Int32[,,]"},
        {"OBJECT[1]", "System.Object[*]"},
        {"R8*&", "System.Double*&"},
        {"TYPEDBYREF", "System.TypedReference"},
        {"VOID*", "System.Void*"},
        {"U[][]", "System.UIntPtr[][]"},
        {EV_MVID ":0x0200000d", "Everything.Point"},
        {EV_MVID ":0x0200001e<I4,STRING>", "Everything.Pair<System.Int32,System.String>"},
        {EV_MVID ":0x0200001e<" EV_MVID ":0x0200000d[],__Canon>*",
         "Everything.Pair<Everything.Point[],System.__Canon>*"},
    };
    for (size_t i = 0; i < sizeof simple / sizeof simple[0]; i++) {
        mdt_desc *d;
        char *back, *name, msg[512];
        const mdt_type *t;
        size_t len = strlen(simple[i][0]);
        ck_assert_msg(mdt_desc_parse(ctx, &d, simple[i][0], len, lookup, &w) == 0, "%s: %s",
                      simple[i][0], mdt_error_message(msg, sizeof msg));
        ck_assert_int_eq(mdt_desc_format(ctx, &back, d), 0);
        ck_assert_str_eq(back, simple[i][0]);
        ck_assert_int_eq(mdt_desc_to_type(ctx, &t, d), 0);
        ck_assert_int_eq(mdt_type_name(ctx, &name, t, NULL), 0);
        ck_assert_str_eq(name, simple[i][1]);
    }
    /* doc/names.md's example: List<Dictionary<string,int>>, across modules. */
    snprintf(buf, sizeof buf, "%s<%s<STRING,I4>>", list_text, dict_text);
    mdt_desc *d;
    char *back, *name;
    const mdt_type *t;
    ck_assert_int_eq(mdt_desc_parse(ctx, &d, buf, strlen(buf), lookup, &w), 0);
    ck_assert_int_eq(mdt_desc_format(ctx, &back, d), 0);
    ck_assert_str_eq(back, buf);
    ck_assert_int_eq(mdt_desc_to_type(ctx, &t, d), 0);
    ck_assert_int_eq(mdt_type_name(ctx, &name, t, NULL), 0);
    ck_assert_str_eq(name, "System.Collections.Generic.List<System.Collections.Generic."
                           "Dictionary<System.String,System.Int32>>");
    snprintf(buf, sizeof buf, "%s<%s<" EV_MVID ":0x0200001e<I4[],%s<__Canon>>,I8&>[2]>", list_text,
             dict_text, list_text);
    ck_assert_int_eq(mdt_desc_parse(ctx, &d, buf, strlen(buf), lookup, &w), 0);
    ck_assert_int_eq(mdt_desc_format(ctx, &back, d), 0);
    ck_assert_str_eq(back, buf);
    /* Upper-case hex is read; printing is lower case. */
    const char *upper = "FE9721AE846A4BAE8601A052E4C43E45:0x0200000D";
    ck_assert_int_eq(mdt_desc_parse(ctx, &d, upper, strlen(upper), lookup, &w), 0);
    ck_assert_int_eq(mdt_desc_format(ctx, &back, d), 0);
    ck_assert_str_eq(back, EV_MVID ":0x0200000d");
    /* Parsed instantiation arguments drive mdt_inst_name. */
    const char *args = EV_MVID ":0x0200001e<__Canon,I4>";
    ck_assert_int_eq(mdt_desc_parse(ctx, &d, args, strlen(args), lookup, &w), 0);
    ck_assert_str_eq(inst(ctx, ev, 0x06000036, d->nargs, d->args, 1, d->args, MDT_STYLE_FULL),
                     "Everything.Pair<System.__Canon,System.Int32>::Select<System.__Canon>");
    talloc_free(ctx);
}
END_TEST

START_TEST(malformed_text_names_the_column)
{
    void *ctx = talloc_new(NULL);
    mdt_image *ev = open_rel(ctx, "data/Everything.dll");
    struct world w = {{ev}, 1};
    static const struct {
        const char *text;
        int code;
        uint64_t offset;
        const char *msg;
    } cases[] = {
        {"", MDT_EINVAL, 0, "expected a type descriptor"},
        {"I5", MDT_EINVAL, 0, "unknown primitive"},
        {"i4", MDT_EINVAL, 0, "unknown primitive"},
        {"I4 ", MDT_EINVAL, 2, "unexpected text"},
        {"I4[", MDT_EINVAL, 3, "array rank"},
        {"I4[0]", MDT_EINVAL, 3, "array rank"},
        {"I4[33]", MDT_EINVAL, 3, "array rank"},
        {"I4[2", MDT_EINVAL, 4, "expected ']'"},
        {"I4]", MDT_EINVAL, 2, "unexpected text"},
        {EV_MVID ":0x0200001e<I4", MDT_EINVAL, 46, "expected ',' or '>'"},
        {EV_MVID ":0x0200001e<I4,>", MDT_EINVAL, 47, "expected a type descriptor"},
        {EV_MVID ":0x0200001e<>", MDT_EINVAL, 44, "expected a type descriptor"},
        {EV_MVID ":0x0600001e", MDT_EINVAL, 33, "not a TypeDef"},
        {EV_MVID ":0x020000", MDT_EINVAL, 33, "expected a token"},
        {EV_MVID ":0x0200000g", MDT_EINVAL, 42, "hex digit"},
        {EV_MVID ":0x020000010", MDT_EINVAL, 43, "longer than 8"},
        {EV_MVID ":0x02000099", MDT_ENOTFOUND, 33, "beyond"},
        {EV_MVID ":02000001", MDT_EINVAL, 33, "expected a token"},
        {"fe9721ae846a4bae8601a052e4c43e4g:0x02000001", MDT_EINVAL, 31, "hex digit in the MVID"},
        {"00000000000000000000000000000000:0x02000001", MDT_ENOTFOUND, 0, "unknown MVID"},
        {"fe9721ae-846a-4bae-8601-a052e4c43e45:0x02000001", MDT_EINVAL, 0, "unknown primitive"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mdt_desc *d;
        char msg[512];
        int e = mdt_desc_parse(ctx, &d, cases[i].text, strlen(cases[i].text), lookup, &w);
        mdt_error_message(msg, sizeof msg);
        ck_assert_msg(e == cases[i].code, "case %zu: got %d want %d (%s)", i, e, cases[i].code,
                      msg);
        ck_assert_msg(mdt_error_last()->offset == cases[i].offset, "case %zu: offset %llu (%s)", i,
                      (unsigned long long)mdt_error_last()->offset, msg);
        ck_assert_msg(strstr(msg, cases[i].msg) != NULL, "case %zu: '%s' lacks '%s'", i, msg,
                      cases[i].msg);
        ck_assert_ptr_null(d);
    }
    /* Nesting is capped, through arguments and through suffixes. */
    char deep[4096];
    size_t n = 0;
    for (int i = 0; i < 70; i++)
        n += (size_t)snprintf(deep + n, sizeof deep - n, "%s", EV_MVID ":0x0200001e<");
    ck_assert_uint_lt(n, sizeof deep - 10);
    mdt_desc *d;
    ck_assert_int_eq(mdt_desc_parse(ctx, &d, deep, n, lookup, &w), MDT_EINVAL);
    n = (size_t)snprintf(deep, sizeof deep, "I4");
    for (int i = 0; i < 100; i++)
        n += (size_t)snprintf(deep + n, sizeof deep - n, "[]");
    ck_assert_int_eq(mdt_desc_parse(ctx, &d, deep, n, lookup, &w), MDT_EINVAL);
    ck_assert_ptr_nonnull(strstr(mdt_error_last()->what, "nested too deeply"));
    /* Without a lookup every MVID is unknown. */
    const char *t = EV_MVID ":0x0200000d";
    ck_assert_int_eq(mdt_desc_parse(ctx, &d, t, strlen(t), NULL, NULL), MDT_ENOTFOUND);
    talloc_free(ctx);
}
END_TEST

MDT_TESTS_NEED_MONO

Suite *suite(void);
Suite *suite(void)
{
    Suite *s = suite_create("descriptor");
    TCase *tc = tcase_create("descriptor");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, instantiated_names);
    tcase_add_test(tc, instantiation_errors);
    tcase_add_test(tc, type_trees_from_descriptors);
    tcase_add_test(tc, text_round_trips);
    tcase_add_test(tc, malformed_text_names_the_column);
    suite_add_tcase(s, tc);
    return s;
}
