/* api-rename: off (this file calls the old names on purpose)
 *
 * A program written for libmdtools 1:0:0: it calls every function renamed
 * in 1:1:0 (tools/api-rename.py's table) by its old name, and the same
 * function by its new name on the same inputs, and fails unless both
 * answer alike. Built with the deprecation warnings off
 * (tests/old_names.sh checks that a compiler gives them, naming the new
 * function); linked against libmdtools.so, it shows the old names are
 * still exported and still work. Walks every row of the tables each
 * function reads in data/Everything.dll and data/resolve fixtures. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <talloc.h>

#include <mdtools/mdtools.h>

#include "paths.h"

static int failures, checks;

#define SAME(cond, ...)                                                                            \
    do {                                                                                           \
        checks++;                                                                                  \
        if (!(cond)) {                                                                             \
            failures++;                                                                            \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                   \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

static void errors(void)
{
    char a[512], b[512];
    mdt_image *img;
    for (int code = 0; code >= -12; code--)
        SAME(!strcmp(mdt_strerror(code), mdt_error_string(code)), "strerror %d", code);
    /* a failure to read the record of */
    mdt_image_open_buffer(NULL, &img, "junk.bin", "junk", 4, 0);
    SAME(mdt_last_error() == mdt_error_last(), "the same record");
    SAME(!strcmp(mdt_errmsg(a, sizeof a), mdt_error_message(b, sizeof b)), "errmsg: %s / %s", a, b);
    SAME(mdt_last_error()->code == MDT_ENOTDOTNET, "the failure is there");
    mdt_clear_error();
    SAME(mdt_error_last()->code == 0, "mdt_clear_error clears");
    mdt_image_open_buffer(NULL, &img, "junk.bin", "junk", 4, 0);
    mdt_error_clear();
    SAME(mdt_last_error()->code == 0, "mdt_error_clear clears");
}

static void heaps(void *ctx, const mdt_image *img)
{
    static const uint8_t enc[][4] = {
        {0x03}, {0x7f}, {0x80, 0x80}, {0xbf, 0xff}, {0xc0, 0, 0x40, 0}, {0xdf, 0xff, 0xff, 0xff},
        {0xe0}, {0xc0}};
    for (size_t i = 0; i < sizeof enc / sizeof enc[0]; i++)
        for (size_t len = 0; len <= 4; len++) {
            uint32_t v1 = 0, v2 = 0;
            unsigned u1 = 0, u2 = 0;
            int e1 = mdt_decode_compressed_u32(&v1, &u1, enc[i], len);
            int e2 = mdt_heap_decode_compressed_u32(&v2, &u2, enc[i], len);
            SAME(e1 == e2 && v1 == v2 && u1 == u2, "compressed %zu/%zu", i, len);
        }
    for (uint32_t g = 1; g <= mdt_heap_size(img, MDT_HEAP_GUID) / 16; g++) {
        const uint8_t *guid;
        char a[37], b[37];
        if (mdt_heap_guid(&guid, img, g))
            continue;
        SAME(!strcmp(mdt_guid_format(a, guid), mdt_heap_guid_format(b, guid)), "guid %u", g);
    }
    for (uint32_t i = 1, next; i < mdt_heap_size(img, MDT_HEAP_US); i = next) {
        const uint8_t *u;
        uint32_t n;
        int flag, r1 = 0, r2 = 0;
        char *a = NULL, *b = NULL;
        size_t la = 0, lb = 0;
        if (mdt_heap_next(&next, img, MDT_HEAP_US, i) || next <= i)
            break;
        if (mdt_heap_us(&u, &n, &flag, img, i))
            continue;
        SAME(mdt_utf16_to_utf8(ctx, &a, &la, &r1, u, n) ==
                     mdt_heap_utf16_to_utf8(ctx, &b, &lb, &r2, u, n) &&
                 la == lb && r1 == r2 && !memcmp(a, b, la),
             "#US 0x%x", i);
    }
}

static void assembly(const mdt_image *img)
{
    mdt_identity id;
    uint8_t a[8], b[8];
    if (mdt_assembly_identity(&id, img) || !id.public_key)
        return;
    SAME(mdt_public_key_token(a, id.public_key, id.public_key_len) ==
                 mdt_assembly_public_key_token(b, id.public_key, id.public_key_len) &&
             !memcmp(a, b, 8),
         "public key token");
}

static void values(void *ctx, const mdt_image *img)
{
    static const double d[] = {0, -0.0, 1.5, 0.1, 1e300, -2.5e-300, 1.0 / 0.0, 0.0 / 0.0};
    for (size_t i = 0; i < sizeof d / sizeof d[0]; i++) {
        char a[32], b[32];
        SAME(!strcmp(mdt_r8_format(a, d[i]), mdt_value_r8_format(b, d[i])), "r8 %zu", i);
        SAME(!strcmp(mdt_r4_format(a, (float)d[i]), mdt_value_r4_format(b, (float)d[i])), "r4 %zu",
             i);
    }
    for (int k = 0; k < 4; k++) {
        uint8_t le[16];
        char *a, *b;
        memset(le, k * 0x55, sizeof le);
        le[0] = (uint8_t)k;
        SAME(mdt_int128_format(ctx, &a, le, k & 1) == mdt_value_int128_format(ctx, &b, le, k & 1) &&
                 !strcmp(a, b),
             "int128 %d", k);
    }
    static const unsigned tables[] = {MDT_TABLE_Field, MDT_TABLE_Param, MDT_TABLE_Property};
    for (size_t t = 0; t < 3; t++)
        for (uint32_t rid = 1; rid <= mdt_table_rows(img, tables[t]); rid++) {
            mdt_value a, b;
            char *sa = NULL, *sb = NULL;
            uint32_t tok = MDT_TOKEN(tables[t], rid);
            int e1 = mdt_default_value(ctx, &a, img, tok),
                e2 = mdt_value_default(ctx, &b, img, tok);
            SAME(e1 == e2, "default value 0x%08x: %d / %d", tok, e1, e2);
            if (!e1 && !e2) {
                mdt_value_format(ctx, &sa, &a, NULL);
                mdt_value_format(ctx, &sb, &b, NULL);
                SAME(sa && sb && !strcmp(sa, sb), "default value 0x%08x", tok);
            }
        }
    for (uint32_t rid = 1; rid <= mdt_table_rows(img, MDT_TABLE_TypeDef); rid++) {
        uint8_t a = 0, b = 0;
        uint32_t tok = MDT_TOKEN(MDT_TABLE_TypeDef, rid);
        int e1 = mdt_enum_underlying(&a, img, tok), e2 = mdt_typedef_enum_underlying(&b, img, tok);
        SAME(e1 == e2 && a == b, "enum underlying 0x%08x", tok);
    }
}

static void resolution(void *ctx, mdt_image *img)
{
    mdt_modset *set;
    mdt_modview *v;
    mdt_module_desc d = {.id = 1, .image = img, .path = "Everything.dll"};
    static const unsigned tables[] = {MDT_TABLE_TypeRef, MDT_TABLE_MemberRef,
                                      MDT_TABLE_ExportedType};
    if (mdt_modset_new(ctx, &set) || mdt_modset_add(set, &d, 0)) {
        SAME(false, "module set");
        return;
    }
    v = mdt_modset_acquire(set);
    for (size_t t = 0; t < 3; t++)
        for (uint32_t rid = 1; rid <= mdt_table_rows(img, tables[t]); rid++) {
            uint32_t tok = MDT_TOKEN(tables[t], rid), s1 = 0, s2 = 0;
            mdt_resolution a, b;
            int e1 = mdt_resolve_token(ctx, &a, NULL, v, 1, tok, NULL);
            int e2 = mdt_token_resolve(ctx, &b, NULL, v, 1, tok, NULL);
            SAME(e1 == e2 && a.resolved == b.resolved && a.reason == b.reason && a.token == b.token,
                 "resolve 0x%08x", tok);
            SAME(!strcmp(mdt_res_reason_name(a.reason), mdt_resolution_reason_name(b.reason)),
                 "reason of 0x%08x", tok);
            if (tables[t] == MDT_TABLE_ExportedType) {
                e1 = mdt_exported_resolve(ctx, &a, NULL, v, 1, tok, NULL);
                e2 = mdt_exportedtype_resolve(ctx, &b, NULL, v, 1, tok, NULL);
                SAME(e1 == e2 && a.resolved == b.resolved && a.reason == b.reason,
                     "exported 0x%08x", tok);
            }
            e1 = mdt_ref_scope(&s1, img, tok);
            e2 = mdt_token_scope(&s2, img, tok);
            SAME(e1 == e2 && s1 == s2, "scope of 0x%08x", tok);
        }
    for (int r = 0; r < 12; r++)
        SAME(!strcmp(mdt_res_reason_name(r), mdt_resolution_reason_name(r)), "reason %d", r);
    mdt_modview_release(v);
}

static void strongname_resources(void)
{
    for (int s = 0; s < 10; s++)
        SAME(!strcmp(mdt_sn_status_name(s), mdt_strongname_status_name(s)), "status %d", s);
    for (uint32_t c = 0; c < 0x60; c++) {
        const char *a = mdt_restype_name(c), *b = mdt_resources_type_name(c);
        SAME(a == b || (a && b && !strcmp(a, b)), "resource type %u", c);
    }
}

int main(void)
{
    void *ctx = talloc_new(NULL);
    static const char *const fixtures[] = {"data/Everything.dll", "data/resources/Res.dll",
                                           "data/Sigs.dll"};
    errors();
    strongname_resources();
    for (size_t i = 0; i < sizeof fixtures / sizeof fixtures[0]; i++) {
        char p[1024], msg[512];
        mdt_image *img;
        if (mdt_image_open_file(ctx, &img, src_path(p, sizeof p, fixtures[i]), 0)) {
            fprintf(stderr, "%s: %s\n", fixtures[i], mdt_error_message(msg, sizeof msg));
            return 1;
        }
        heaps(ctx, img);
        assembly(img);
        values(ctx, img);
        resolution(ctx, img);
    }
    talloc_free(ctx);
    printf("%d checks of the old names against the new, %d failed\n", checks, failures);
    return failures ? 1 : 0;
}
