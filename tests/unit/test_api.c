/* The option structs' versions (<mdtools/names.h>, <mdtools/typeref.h>):
 * MDT_NAME_OPTS_INIT and MDT_RESOLVE_OPTS_INIT give the defaults; a struct
 * of libmdtools 1:0:0's layout (no version member: its 32-bit flags had
 * that place, always zero there) is read as before, members at the same
 * offsets, so programs built then keep working; a version later than the
 * library's is refused by every function that takes the struct, with
 * MDT_EINVAL located at the struct's version member. */
#include <check.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <talloc.h>

#include <mdtools/mdtools.h>

#include "paths.h"

/* The structs as libmdtools 1:0:0 declared them. */
struct old_name_opts {
    int style;
    unsigned flags;
    const mdt_generic_context *gctx;
    mdt_name_cache *cache;
};
struct old_resolve_opts {
    unsigned flags;
    unsigned max_hops;
};

static mdt_image *open_fixture(void *ctx, const char *rel)
{
    char p[1024], msg[512];
    mdt_image *img = NULL;
    ck_assert_msg(mdt_image_open_file(ctx, &img, src_path(p, sizeof p, rel), 0) == 0, "%s: %s", rel,
                  mdt_error_message(msg, sizeof msg));
    return img;
}

/* The error record says the version of `type` was refused, by `fn`. */
static void refused(int e, const char *type, const char *fn)
{
    const mdt_errinfo *ei = mdt_error_last();
    ck_assert_int_eq(e, MDT_EINVAL);
    ck_assert_int_eq(ei->code, MDT_EINVAL);
    ck_assert_str_eq(ei->region, type);
    ck_assert_str_eq(ei->column, "version");
    ck_assert_msg(strstr(ei->what, fn) && strstr(ei->what, "version 2"), "%s", ei->what);
}

START_TEST(old_layouts_have_the_same_offsets)
{
    ck_assert_uint_eq(sizeof(mdt_name_opts), sizeof(struct old_name_opts));
    ck_assert_uint_eq(offsetof(mdt_name_opts, style), offsetof(struct old_name_opts, style));
    ck_assert_uint_eq(offsetof(mdt_name_opts, flags), offsetof(struct old_name_opts, flags));
    ck_assert_uint_eq(offsetof(mdt_name_opts, gctx), offsetof(struct old_name_opts, gctx));
    ck_assert_uint_eq(offsetof(mdt_name_opts, cache), offsetof(struct old_name_opts, cache));
    /* the version is the upper half of the old flags (little-endian) */
    ck_assert_uint_eq(offsetof(mdt_name_opts, version), offsetof(struct old_name_opts, flags) + 2);
    ck_assert_uint_eq(sizeof(mdt_resolve_opts), sizeof(struct old_resolve_opts));
    ck_assert_uint_eq(offsetof(mdt_resolve_opts, max_hops),
                      offsetof(struct old_resolve_opts, max_hops));
    ck_assert_uint_eq(offsetof(mdt_resolve_opts, version),
                      offsetof(struct old_resolve_opts, flags) + 2);
}
END_TEST

START_TEST(init_is_the_default)
{
    mdt_name_opts n = MDT_NAME_OPTS_INIT;
    mdt_resolve_opts r = MDT_RESOLVE_OPTS_INIT;
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_fixture(ctx, "data/Everything.dll");
    char *a, *b;
    ck_assert_int_eq(n.version, MDT_NAME_OPTS_VERSION);
    ck_assert_int_eq(n.style, MDT_STYLE_FULL);
    ck_assert_int_eq(r.version, MDT_RESOLVE_OPTS_VERSION);
    ck_assert_int_eq(r.flags, 0);
    ck_assert_int_eq(r.max_hops, 0);
    for (uint32_t rid = 1; rid <= mdt_table_rows(img, MDT_TABLE_TypeDef); rid++) {
        uint32_t tok = MDT_TOKEN(MDT_TABLE_TypeDef, rid);
        ck_assert_int_eq(mdt_token_name(ctx, &a, img, tok, NULL), 0);
        ck_assert_int_eq(mdt_token_name(ctx, &b, img, tok, &n), 0);
        ck_assert_str_eq(a, b);
    }
    talloc_free(ctx);
}
END_TEST

/* A program built against 1:0:0 passes its struct; one built now that
 * zeroes the struct and sets members has version 0 too. Both name as a
 * struct made from MDT_NAME_OPTS_INIT does. */
START_TEST(old_name_opts_read_as_before)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_fixture(ctx, "data/Everything.dll");
    static const int styles[] = {MDT_STYLE_FULL, MDT_STYLE_REFLECTION, MDT_STYLE_IL};
    unsigned checked = 0;
    for (size_t s = 0; s < 3; s++) {
        for (unsigned flags = 0; flags < 16; flags += 3) {
            struct old_name_opts old = {styles[s], flags, NULL, NULL};
            mdt_name_opts now = MDT_NAME_OPTS_INIT, zeroed;
            memset(&zeroed, 0, sizeof zeroed);
            zeroed.style = now.style = styles[s];
            zeroed.flags = now.flags = (uint16_t)flags;
            for (uint32_t rid = 1; rid <= mdt_table_rows(img, MDT_TABLE_MethodDef); rid++) {
                uint32_t tok = MDT_TOKEN(MDT_TABLE_MethodDef, rid);
                char *a, *b, *c, buf[1024];
                ck_assert_int_eq(mdt_token_name(ctx, &a, img, tok, &now), 0);
                ck_assert_int_eq(mdt_token_name(ctx, &b, img, tok, (const mdt_name_opts *)&old), 0);
                ck_assert_int_eq(mdt_token_name(ctx, &c, img, tok, &zeroed), 0);
                ck_assert_str_eq(a, b);
                ck_assert_str_eq(a, c);
                ck_assert_int_eq(mdt_token_name_buf(buf, sizeof buf, NULL, img, tok,
                                                    (const mdt_name_opts *)&old),
                                 0);
                ck_assert_str_eq(a, buf);
                checked++;
            }
        }
    }
    ck_assert_uint_gt(checked, 100);
    talloc_free(ctx);
}
END_TEST

START_TEST(later_name_opts_version_refused)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_fixture(ctx, "data/Everything.dll");
    mdt_name_opts o = MDT_NAME_OPTS_INIT;
    mdt_sig sig;
    mdt_type t = {0};
    mdt_value v = {0};
    mdt_value_type vt = {.kind = MDT_VALUE_I4};
    char *out = NULL, *where = NULL, buf[64];
    uint32_t tok = MDT_TOKEN(MDT_TABLE_TypeDef, 2);
    o.version = MDT_NAME_OPTS_VERSION + 1;
    t.kind = MDT_ELEMENT_TYPE_I4;
    v.type = &vt;
    refused(mdt_token_name(ctx, &out, img, tok, &o), "mdt_name_opts", "mdt_token_name");
    refused(mdt_token_name_buf(buf, sizeof buf, NULL, img, tok, &o), "mdt_name_opts",
            "mdt_token_name_buf");
    ck_assert_str_eq(buf, "");
    refused(mdt_type_name(ctx, &out, &t, &o), "mdt_name_opts", "mdt_type_name");
    refused(mdt_type_name_buf(buf, sizeof buf, NULL, &t, &o), "mdt_name_opts", "mdt_type_name_buf");
    ck_assert_int_eq(mdt_sig_of_token(ctx, &sig, img, MDT_TOKEN(MDT_TABLE_MethodDef, 1)), 0);
    refused(mdt_sig_name(ctx, &out, &sig, &o), "mdt_name_opts", "mdt_sig_name");
    refused(mdt_sig_name_buf(buf, sizeof buf, NULL, &sig, &o), "mdt_name_opts", "mdt_sig_name_buf");
    refused(mdt_sig_name_of_token(ctx, &out, img, MDT_TOKEN(MDT_TABLE_MethodDef, 1), &o),
            "mdt_name_opts", "mdt_sig_name_of_token");
    refused(mdt_generic_decl(ctx, &out, &where, img, tok, &o), "mdt_name_opts", "mdt_generic_decl");
    refused(mdt_value_format(ctx, &out, &v, &o), "mdt_name_opts", "mdt_value_format");
    refused(mdt_inst_name(ctx, &out, img, tok, 0, NULL, 0, NULL, &o), "mdt_name_opts",
            "mdt_inst_name");
    /* the version it knows is taken */
    o.version = MDT_NAME_OPTS_VERSION;
    ck_assert_int_eq(mdt_token_name(ctx, &out, img, tok, &o), 0);
    ck_assert_int_eq(mdt_value_format(ctx, &out, &v, &o), 0);
    talloc_free(ctx);
}
END_TEST

struct rfx {
    mdt_modset *set;
    mdt_modview *v;
    uint32_t typeref, memberref;
};

static void rfx_open(void *ctx, struct rfx *f)
{
    char p[1024];
    mdt_image *img = open_fixture(ctx, "data/Everything.dll");
    mdt_module_desc d = {
        .id = 1, .image = img, .path = src_path(p, sizeof p, "data/Everything.dll")};
    ck_assert_int_eq(mdt_modset_new(ctx, &f->set), 0);
    ck_assert_int_eq(mdt_modset_add(f->set, &d, 0), 0);
    f->v = mdt_modset_acquire(f->set);
    ck_assert_uint_gt(mdt_table_rows(img, MDT_TABLE_TypeRef), 0);
    ck_assert_uint_gt(mdt_table_rows(img, MDT_TABLE_MemberRef), 0);
    f->typeref = MDT_TOKEN(MDT_TABLE_TypeRef, 1);
    f->memberref = MDT_TOKEN(MDT_TABLE_MemberRef, 1);
}

START_TEST(old_resolve_opts_read_as_before)
{
    void *ctx = talloc_new(NULL);
    struct rfx f;
    rfx_open(ctx, &f);
    for (unsigned flags = 0; flags < 4; flags++) {
        for (unsigned hops = 0; hops < 3; hops++) {
            struct old_resolve_opts old = {flags, hops};
            mdt_resolve_opts now = MDT_RESOLVE_OPTS_INIT;
            mdt_resolution a, b;
            now.flags = (uint16_t)flags;
            now.max_hops = hops;
            ck_assert_int_eq(mdt_token_resolve(ctx, &a, NULL, f.v, 1, f.typeref, &now), 0);
            ck_assert_int_eq(
                mdt_token_resolve(ctx, &b, NULL, f.v, 1, f.typeref, (const mdt_resolve_opts *)&old),
                0);
            ck_assert_int_eq(a.resolved, b.resolved);
            ck_assert_int_eq(a.reason, b.reason);
            ck_assert_uint_eq(a.where_token, b.where_token);
        }
    }
    mdt_modview_release(f.v);
    talloc_free(ctx);
}
END_TEST

START_TEST(later_resolve_opts_version_refused)
{
    void *ctx = talloc_new(NULL);
    struct rfx f;
    mdt_resolve_opts o = MDT_RESOLVE_OPTS_INIT;
    mdt_resolution r;
    mdt_trace *t = (mdt_trace *)&r;
    rfx_open(ctx, &f);
    o.version = MDT_RESOLVE_OPTS_VERSION + 1;
    refused(mdt_typeref_resolve(ctx, &r, NULL, f.v, 1, f.typeref, &o), "mdt_resolve_opts",
            "resolve");
    ck_assert(!r.resolved);
    refused(mdt_typeref_resolve(ctx, &r, &t, f.v, 1, f.typeref, &o), "mdt_resolve_opts", "resolve");
    ck_assert_ptr_null(t);
    refused(mdt_memberref_resolve(ctx, &r, NULL, f.v, 1, f.memberref, &o), "mdt_resolve_opts",
            "resolve");
    refused(mdt_token_resolve(ctx, &r, NULL, f.v, 1, f.typeref, &o), "mdt_resolve_opts", "resolve");
    /* the same call, once the cache holds the answer, is still refused */
    ck_assert_int_eq(mdt_typeref_resolve(ctx, &r, NULL, f.v, 1, f.typeref, NULL), 0);
    refused(mdt_typeref_resolve(ctx, &r, NULL, f.v, 1, f.typeref, &o), "mdt_resolve_opts",
            "resolve");
    o.version = MDT_RESOLVE_OPTS_VERSION;
    ck_assert_int_eq(mdt_typeref_resolve(ctx, &r, NULL, f.v, 1, f.typeref, &o), 0);
    mdt_modview_release(f.v);
    talloc_free(ctx);
}
END_TEST

Suite *suite(void);
Suite *suite(void)
{
    Suite *s = suite_create("api");
    TCase *tc = tcase_create("opts");
    tcase_add_test(tc, old_layouts_have_the_same_offsets);
    tcase_add_test(tc, init_is_the_default);
    tcase_add_test(tc, old_name_opts_read_as_before);
    tcase_add_test(tc, later_name_opts_version_refused);
    tcase_add_test(tc, old_resolve_opts_read_as_before);
    tcase_add_test(tc, later_resolve_opts_version_refused);
    suite_add_tcase(s, tc);
    return s;
}
