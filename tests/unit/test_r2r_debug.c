/* The IL-to-native maps of ReadyToRun code (<mdtools/pe.h>:
 * mdt_r2r_debug_open, mdt_r2r_function_at, mdt_r2r_bounds) over the .NET
 * shared framework's own images: every method of System.Private.CoreLib
 * decodes, from the file and from a copy laid out as the loader lays it
 * out (tests/common/layout.h), to the same lists; the raw lists run by
 * native offset; the runtime's form merges, ends and drops what the
 * runtime does; every runtime function is found by its first byte; a
 * small buffer gets the count and a prefix; damaged debug info fails
 * with a located MDT_EBADIMAGE; every other ReadyToRun image of the
 * framework decodes whole. (That the lists are the runtime's own is shown
 * against the runtime itself by tests/profiler/ilmaps.sh.) The framework
 * is found as test_mapped_r2r finds it; without one the test exits 77. */
#define _GNU_SOURCE /* strverscmp */
#include <check.h>
#include <dirent.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <talloc.h>
#include <unistd.h>

#include <mdtools/mdtools.h>
#include <mdtools/pe.h>

#include "framework.h"
#include "layout.h"

static char framework[PATH_MAX];

static const char *msg(void)
{
    static char m[512];
    return mdt_error_message(m, sizeof m);
}

#define CAP 70000
static mdt_r2r_bound a[CAP], b[CAP];

/* The RVA each runtime function begins at. */
static uint32_t begin_rva(const mdt_image *img, uint32_t i)
{
    mdt_r2r_header h;
    mdt_r2r_section s;
    ck_assert_int_eq(mdt_r2r_header_read(&h, img), 0);
    for (uint32_t k = 0; k < h.nsections; k++) {
        ck_assert_int_eq(mdt_r2r_section_read(&s, img, k), 0);
        if (s.type == 102) {
            uint8_t v[4];
            ck_assert_int_eq(mdt_image_read_rva(v, 4, img, s.rva + i * 12), 0);
            return (uint32_t)v[0] | (uint32_t)v[1] << 8 | (uint32_t)v[2] << 16 |
                   (uint32_t)v[3] << 24;
        }
    }
    ck_abort_msg("no RuntimeFunctions");
    return 0;
}

/* Checks one runtime-form list against its raw list. */
static void check_runtime_form(const mdt_r2r_bound *raw, size_t nraw, const mdt_r2r_bound *rt,
                               size_t nrt)
{
    size_t unknown = 0;
    ck_assert_uint_le(nrt, nraw);
    for (size_t k = 0; k < nrt; k++) {
        ck_assert(!(rt[k].source & MDT_R2R_SOURCE_CALL_INSTRUCTION));
        if (rt[k].source & MDT_R2R_SOURCE_END_UNKNOWN) {
            unknown++;
            ck_assert_uint_eq(rt[k].native_end, 0);
        } else {
            ck_assert_uint_ge(rt[k].native_end, rt[k].native_start);
        }
        if (k)
            ck_assert_uint_ge(rt[k].native_start, rt[k - 1].native_start);
    }
    ck_assert_uint_le(unknown, 1);
}

START_TEST(corelib_every_method)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/System.Private.CoreLib.dll", framework);
    void *ctx = talloc_new(NULL);
    mdt_image *flat, *mapped;
    mdt_r2r_debug *df, *dm;
    size_t len;
    uint8_t *bytes = layout_read_file(path, &len);
    loader_layout l;
    ck_assert_ptr_nonnull(bytes);
    ck_assert_int_eq(layout_make(&l, bytes, len), 0);
    ck_assert_msg(mdt_image_open_file(ctx, &flat, path, 0) == 0, "%s", msg());
    ck_assert_msg(
        mdt_image_open_mapped_ranges(ctx, &mapped, "mapped", l.base, l.ranges, l.nranges, 0) == 0,
        "%s", msg());
    ck_assert_msg(mdt_r2r_debug_open(&df, ctx, flat) == 0, "%s", msg());
    ck_assert_msg(mdt_r2r_debug_open(&dm, ctx, mapped) == 0, "%s", msg());
    uint32_t nf = mdt_r2r_debug_functions(df);
    ck_assert_uint_eq(nf, mdt_r2r_debug_functions(dm));
    ck_assert_uint_ge(nf, 20000);
    size_t with = 0, without = 0, entries = 0, merged = 0;
    for (uint32_t i = 0; i < nf; i++) {
        size_t na = 0, nb = 0, nr = 0;
        int ea = mdt_r2r_bounds(a, CAP, &na, df, i, 0);
        int eb = mdt_r2r_bounds(b, CAP, &nb, dm, i, 0);
        ck_assert_int_eq(ea, eb);
        if (ea == MDT_ENOTFOUND) { /* funclets, and methods compiled without */
            mdt_error_clear();
            without++;
            continue;
        }
        ck_assert_msg(ea == 0, "method %u: %s", i, msg());
        ck_assert_uint_eq(na, nb);
        ck_assert_uint_ge(na, 1);
        ck_assert(memcmp(a, b, na * sizeof a[0]) == 0);
        for (size_t k = 0; k < na; k++) {
            ck_assert_uint_eq(a[k].native_end, 0);
            if (k)
                ck_assert_uint_ge(a[k].native_start, a[k - 1].native_start);
        }
        ck_assert_int_eq(mdt_r2r_bounds(b, CAP, &nr, dm, i, MDT_R2R_BOUNDS_RUNTIME), 0);
        check_runtime_form(a, na, b, nr);
        with++;
        entries += na;
        merged += na - nr;
        /* found again by its first byte */
        uint32_t at = 0;
        ck_assert_int_eq(mdt_r2r_function_at(&at, dm, begin_rva(mapped, i)), 0);
        ck_assert_uint_eq(at, i);
    }
    printf("CoreLib: %u runtime functions, %zu with debug info (%zu entries, %zu merged or "
           "call instructions), %zu without\n",
           nf, with, entries, merged, without);
    ck_assert_uint_ge(with, nf / 2);
    ck_assert_uint_ge(entries, with * 3);
    layout_free(&l);
    free(bytes);
    talloc_free(ctx);
}
END_TEST

START_TEST(small_buffer_and_bad_arguments)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/System.Private.CoreLib.dll", framework);
    void *ctx = talloc_new(NULL);
    mdt_image *img;
    mdt_r2r_debug *d;
    ck_assert_int_eq(mdt_image_open_file(ctx, &img, path, 0), 0);
    ck_assert_int_eq(mdt_r2r_debug_open(&d, ctx, img), 0);
    uint32_t nf = mdt_r2r_debug_functions(d), big = UINT32_MAX;
    size_t n = 0, most = 0;
    for (uint32_t i = 0; i < nf; i++)
        if (mdt_r2r_bounds(a, CAP, &n, d, i, 0) == 0 && n > most) {
            most = n;
            big = i;
        }
    mdt_error_clear();
    ck_assert_uint_ge(most, 8);
    ck_assert_int_eq(mdt_r2r_bounds(a, CAP, &n, d, big, 0), 0);
    size_t m = 0;
    memset(b, 0xee, sizeof b[0] * 8);
    ck_assert_int_eq(mdt_r2r_bounds(b, 3, &m, d, big, 0), 0);
    ck_assert_uint_eq(m, most); /* the count, with the first 3 written */
    ck_assert(memcmp(a, b, 3 * sizeof a[0]) == 0);
    ck_assert_uint_eq(b[3].il, 0xeeeeeeeeu);
    ck_assert_int_eq(mdt_r2r_bounds(NULL, 0, &m, d, big, MDT_R2R_BOUNDS_RUNTIME), 0);
    ck_assert_uint_eq(m, most); /* not transformed: the raw count, to size a buffer */
    ck_assert_int_eq(mdt_r2r_bounds(NULL, 1, &m, d, big, 0), MDT_EINVAL);
    ck_assert_int_eq(mdt_r2r_bounds(a, CAP, &m, d, big, 4), MDT_EINVAL);
    ck_assert_int_eq(mdt_r2r_bounds(a, CAP, &m, d, nf, 0), MDT_EINVAL);
    ck_assert_int_eq(mdt_r2r_bounds(a, CAP, NULL, d, 0, 0), MDT_EINVAL);
    ck_assert_int_eq(mdt_r2r_bounds(a, CAP, &m, NULL, 0, 0), MDT_EINVAL);
    ck_assert_int_eq(mdt_r2r_debug_open(NULL, ctx, img), MDT_EINVAL);
    ck_assert_int_eq(mdt_r2r_function_at(NULL, d, 0), MDT_EINVAL);
    uint32_t at;
    ck_assert_int_eq(mdt_r2r_function_at(&at, d, 1), MDT_ENOTFOUND);
    ck_assert_uint_eq(mdt_r2r_debug_functions(NULL), 0);
    mdt_error_clear();
    /* a facade without ReadyToRun code */
    snprintf(path, sizeof path, "%s/System.Runtime.dll", framework);
    mdt_image *facade;
    ck_assert_int_eq(mdt_image_open_file(ctx, &facade, path, 0), 0);
    mdt_r2r_debug *none = (mdt_r2r_debug *)1;
    ck_assert_int_eq(mdt_r2r_debug_open(&none, ctx, facade), MDT_ENOTFOUND);
    ck_assert_ptr_null(none);
    mdt_error_clear();
    talloc_free(ctx);
}
END_TEST

/* The DebugInfo section's bytes overwritten: every method fails cleanly,
 * located in DebugInfo, or (bytes that still decode) succeeds. */
START_TEST(damaged_debug_info)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/System.Collections.dll", framework);
    void *ctx = talloc_new(NULL);
    size_t len;
    uint8_t *bytes = layout_read_file(path, &len);
    ck_assert_ptr_nonnull(bytes);
    mdt_image *img;
    mdt_r2r_debug *d;
    ck_assert_int_eq(mdt_image_open_buffer(ctx, &img, "damaged", bytes, len, 0), 0);
    mdt_r2r_header h;
    mdt_r2r_section s = {0, 0, 0};
    ck_assert_int_eq(mdt_r2r_header_read(&h, img), 0);
    for (uint32_t k = 0; k < h.nsections && s.type != 105; k++)
        ck_assert_int_eq(mdt_r2r_section_read(&s, img, k), 0);
    ck_assert_uint_eq(s.type, 105);
    uint64_t off;
    ck_assert_int_eq(mdt_image_rva_to_offset(&off, img, s.rva), 0);
    ck_assert_int_eq(mdt_r2r_debug_open(&d, ctx, img), 0);
    static const uint8_t fills[] = {0xff, 0x00, 0x1f, 0x55, 0xfe};
    unsigned bad = 0;
    for (size_t f = 0; f < sizeof fills; f++) {
        /* the array's header and the first blocks, then the blobs' start */
        for (uint64_t at = 0; at < s.size; at += s.size / 7 + 1)
            memset(bytes + off + at, fills[f], s.size - at < 64 ? s.size - at : 64);
        for (uint32_t i = 0; i < mdt_r2r_debug_functions(d); i++) {
            size_t n;
            int e = mdt_r2r_bounds(a, CAP, &n, d, i, MDT_R2R_BOUNDS_RUNTIME);
            if (e == MDT_EBADIMAGE || e == MDT_ETRUNC) {
                bad++;
                const mdt_errinfo *er = mdt_error_last();
                ck_assert_ptr_nonnull(er);
                ck_assert_msg(strstr(msg(), "DebugInfo") || strstr(msg(), "bounds") ||
                                  strstr(msg(), "debug info"),
                              "%s", msg());
            } else {
                ck_assert_msg(e == 0 || e == MDT_ENOTFOUND || e == MDT_EUNSUPPORTED, "%d: %s", e,
                              msg());
            }
            mdt_error_clear();
        }
    }
    printf("damaged System.Collections: %u located failures\n", bad);
    ck_assert_uint_ge(bad, 1);
    talloc_free(ctx);
    free(bytes);
}
END_TEST

/* Every ReadyToRun image of the framework decodes whole. */
START_TEST(framework_decodes)
{
    DIR *dir = opendir(framework);
    struct dirent *e;
    unsigned images = 0;
    size_t methods = 0;
    ck_assert_ptr_nonnull(dir);
    while ((e = readdir(dir))) {
        size_t nl = strlen(e->d_name);
        if (nl < 5 || strcmp(e->d_name + nl - 4, ".dll") != 0)
            continue;
        char path[PATH_MAX + 300];
        snprintf(path, sizeof path, "%s/%s", framework, e->d_name);
        void *ctx = talloc_new(NULL);
        mdt_image *img;
        mdt_r2r_debug *d;
        if (mdt_image_open_file(ctx, &img, path, 0) != 0 || mdt_r2r_debug_open(&d, ctx, img) != 0) {
            mdt_error_clear();
            talloc_free(ctx);
            continue; /* native, or not ReadyToRun */
        }
        images++;
        for (uint32_t i = 0; i < mdt_r2r_debug_functions(d); i++) {
            size_t n;
            int r = mdt_r2r_bounds(a, CAP, &n, d, i, MDT_R2R_BOUNDS_RUNTIME);
            ck_assert_msg(r == 0 || r == MDT_ENOTFOUND, "%s method %u: %s", e->d_name, i, msg());
            methods += r == 0;
            mdt_error_clear();
        }
        talloc_free(ctx);
    }
    closedir(dir);
    printf("framework: %u ReadyToRun images, %zu methods' maps\n", images, methods);
    ck_assert_uint_ge(images, 50);
    ck_assert_uint_ge(methods, 100000);
}
END_TEST

int main(void)
{
    if (test_framework(framework, sizeof framework) != 0) {
        fprintf(stderr, "SKIP: no .NET shared framework (Microsoft.NETCore.App): set "
                        "MDT_DOTNET_ROOT or put dotnet on PATH\n");
        return 77;
    }
    Suite *s = suite_create("r2r_debug");
    TCase *tc = tcase_create("r2r_debug");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, corelib_every_method);
    tcase_add_test(tc, small_buffer_and_bad_arguments);
    tcase_add_test(tc, damaged_debug_info);
    tcase_add_test(tc, framework_decodes);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
