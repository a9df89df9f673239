/* The MethodDef of ReadyToRun code (<mdtools/pe.h>: mdt_r2r_methods_open,
 * mdt_r2r_method_get, _at_index, _at_rva) over the .NET shared
 * framework's own images. In System.Private.CoreLib, every MethodDef entry
 * point's runtime functions (its main function and its funclets) map back
 * to its token, by index and by any RVA inside them; against what the map
 * does not read: the method has an IL body, a method with funclets has
 * exception clauses in its IL, the image's DebugInfo (keyed by method, not
 * by funclet) has a map for entry points and none for funclets, and its IL
 * offsets lie inside the body's code. Generic code answers MDT_ENOTFOUND.
 * Damaged entry points fail with a located MDT_EBADIMAGE; every ReadyToRun
 * image of the framework opens. (That the tokens are the runtime's own is
 * shown against the runtime by tests/profiler/ilmaps.sh.) Without a
 * framework the test exits 77. */
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

#include <mdtools/il.h>

#include "framework.h"
#include "layout.h"

static char framework[PATH_MAX];

static const char *msg(void)
{
    static char m[512];
    return mdt_error_message(m, sizeof m);
}

#define CAP 65536
static mdt_r2r_bound bounds[CAP];

START_TEST(corelib_every_method)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/System.Private.CoreLib.dll", framework);
    void *ctx = talloc_new(NULL);
    mdt_image *img;
    mdt_r2r_methods *m;
    mdt_r2r_debug *d;
    ck_assert_msg(mdt_image_open_file(ctx, &img, path, 0) == 0, "%s", msg());
    ck_assert_msg(mdt_r2r_methods_open(&m, ctx, img) == 0, "%s", msg());
    ck_assert_msg(mdt_r2r_debug_open(&d, ctx, img) == 0, "%s", msg());
    uint32_t n = mdt_r2r_methods_entries(m), nf = mdt_r2r_debug_functions(d);
    size_t il_outside = 0, with_funclets = 0, defs = 0, no_il = 0, generic = 0, funclets = 0,
           with_eh = 0, il_checked = 0;
    ck_assert_uint_ge(n, 10000);
    ck_assert_uint_ge(mdt_r2r_methods_instances(m), 1000);
    for (uint32_t i = 0; i < n; i++) {
        mdt_r2r_method e, x;
        ck_assert_msg(mdt_r2r_method_get(&e, m, i) == 0, "%u: %s", i, msg());
        ck_assert_uint_ge(e.count, 1);
        ck_assert_uint_ge(e.size, 1);
        /* the entry point has debug info (almost all do), funclets never */
        size_t nb = 0;
        int eb = mdt_r2r_bounds(bounds, CAP, &nb, d, e.first, 0);
        ck_assert_msg(eb == 0 || eb == MDT_ENOTFOUND, "%u: %s", e.first, msg());
        mdt_error_clear();
        for (uint32_t k = 1; k < e.count; k++) {
            size_t z;
            ck_assert_int_eq(mdt_r2r_bounds(bounds, 0, &z, d, e.first + k, 0), MDT_ENOTFOUND);
            mdt_error_clear();
        }
        if (!e.token) {
            generic++;
            ck_assert_int_eq(mdt_r2r_method_at_index(&x, m, e.first), MDT_ENOTFOUND);
            ck_assert_int_eq(mdt_r2r_method_at_rva(&x, m, e.rva), MDT_ENOTFOUND);
            mdt_error_clear();
            continue;
        }
        defs++;
        funclets += e.count - 1;
        ck_assert_uint_eq(e.token >> 24, 0x06);
        for (uint32_t k = 0; k < e.count; k++) {
            ck_assert_msg(mdt_r2r_method_at_index(&x, m, e.first + k) == 0, "%s", msg());
            ck_assert_uint_eq(x.token, e.token);
            ck_assert_uint_eq(x.first, e.first);
        }
        ck_assert_int_eq(mdt_r2r_method_at_rva(&x, m, e.rva), 0);
        ck_assert_uint_eq(x.token, e.token);
        ck_assert_int_eq(mdt_r2r_method_at_rva(&x, m, e.rva + e.size - 1), 0);
        ck_assert_uint_eq(x.token, e.token);
        /* the IL it was compiled from */
        mdt_il_body body;
        int ei = mdt_il_body_get(&body, img, e.token);
        if (ei == MDT_ENOTFOUND) { /* no IL: a P/Invoke's compiled stub */
            mdt_error_clear();
            no_il++;
            continue;
        }
        ck_assert_msg(ei == 0, "0x%08x: %s", e.token, msg());
        if (e.count > 1) { /* or an inlinee's (.NET 10 inlines methods with EH) */
            with_funclets++;
            with_eh += body.neh > 0;
        }
        if (eb == 0) {
            size_t k = 0;
            while (k < nb && (bounds[k].il >= 0xfffffff0u || bounds[k].il < body.code_size))
                k++;
            if (k < nb && il_outside++ < 5)
                printf("0x%08x: IL offset 0x%x of a %u-byte body\n", e.token, bounds[k].il,
                       body.code_size);
            il_checked++;
        }
    }
    printf("CoreLib: %u runtime functions, %u entry points: %zu MethodDefs (%zu with funclets, "
           "%zu of them with exception clauses; %zu funclets), %zu generic; %zu IL maps (%zu "
           "outside their bodies); %zu without IL\n",
           nf, n, defs, with_funclets, with_eh, funclets, generic, il_checked, il_outside, no_il);
    ck_assert_uint_le(no_il, defs / 20);
    /* a few bodies the runtime replaces (intrinsics compiled from IL of its own) */
    ck_assert_uint_le(il_outside, il_checked / 1000);
    ck_assert_uint_ge(defs, 10000);
    ck_assert_uint_ge(generic, 1000);
    ck_assert_uint_ge(funclets, 100);
    ck_assert_uint_ge(with_eh, with_funclets * 9 / 10);
    ck_assert_uint_ge(il_checked, (defs - no_il) * 9 / 10);
    talloc_free(ctx);
}
END_TEST

START_TEST(bad_arguments)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/System.Private.CoreLib.dll", framework);
    void *ctx = talloc_new(NULL);
    mdt_image *img, *facade;
    mdt_r2r_methods *m;
    mdt_r2r_method x;
    ck_assert_int_eq(mdt_image_open_file(ctx, &img, path, 0), 0);
    ck_assert_int_eq(mdt_r2r_methods_open(&m, ctx, img), 0);
    ck_assert_int_eq(mdt_r2r_methods_open(NULL, ctx, img), MDT_EINVAL);
    ck_assert_int_eq(mdt_r2r_methods_open(&m, ctx, NULL), MDT_EINVAL);
    ck_assert_int_eq(mdt_r2r_method_get(NULL, m, 0), MDT_EINVAL);
    ck_assert_int_eq(mdt_r2r_method_get(&x, NULL, 0), MDT_EINVAL);
    ck_assert_int_eq(mdt_r2r_method_get(&x, m, mdt_r2r_methods_entries(m)), MDT_ENOTFOUND);
    ck_assert_int_eq(mdt_r2r_method_at_index(&x, m, UINT32_MAX), MDT_ENOTFOUND);
    ck_assert_int_eq(mdt_r2r_method_at_index(NULL, m, 0), MDT_EINVAL);
    ck_assert_int_eq(mdt_r2r_method_at_rva(&x, m, 0), MDT_ENOTFOUND);
    ck_assert_int_eq(mdt_r2r_method_at_rva(&x, NULL, 0), MDT_EINVAL);
    ck_assert_uint_eq(mdt_r2r_methods_entries(NULL), 0);
    ck_assert_uint_eq(mdt_r2r_methods_instances(NULL), 0);
    mdt_error_clear();
    snprintf(path, sizeof path, "%s/System.Runtime.dll", framework);
    ck_assert_int_eq(mdt_image_open_file(ctx, &facade, path, 0), 0);
    mdt_r2r_methods *none = (mdt_r2r_methods *)1;
    ck_assert_int_eq(mdt_r2r_methods_open(&none, ctx, facade), MDT_ENOTFOUND);
    ck_assert_ptr_null(none);
    mdt_error_clear();
    talloc_free(ctx);
}
END_TEST

/* MethodDefEntryPoints or InstanceMethodEntryPoints overwritten: the open
 * fails, located in the section, or (bytes that still decode) succeeds
 * and every lookup stays inside the image. */
static void damage(uint32_t type)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/System.Collections.dll", framework);
    static const uint8_t fills[] = {0xff, 0x00, 0x1f, 0x55, 0xfe, 0x0b};
    unsigned bad = 0;
    for (size_t f = 0; f < sizeof fills; f++) {
        void *ctx = talloc_new(NULL);
        size_t len;
        uint8_t *bytes = layout_read_file(path, &len);
        ck_assert_ptr_nonnull(bytes);
        mdt_image *img;
        mdt_r2r_methods *m;
        ck_assert_int_eq(mdt_image_open_buffer(ctx, &img, "damaged", bytes, len, 0), 0);
        mdt_r2r_header h;
        mdt_r2r_section s = {0, 0, 0};
        ck_assert_int_eq(mdt_r2r_header_read(&h, img), 0);
        for (uint32_t k = 0; k < h.nsections && s.type != type; k++)
            ck_assert_int_eq(mdt_r2r_section_read(&s, img, k), 0);
        ck_assert_uint_eq(s.type, type);
        uint64_t off;
        ck_assert_int_eq(mdt_image_rva_to_offset(&off, img, s.rva), 0);
        for (uint64_t at = f & 1; at < s.size; at += s.size / 9 + 1)
            memset(bytes + off + at, fills[f], s.size - at < 48 ? s.size - at : 48);
        int e = mdt_r2r_methods_open(&m, ctx, img);
        if (e == MDT_EBADIMAGE || e == MDT_ETRUNC) {
            bad++;
            ck_assert_msg(strstr(msg(), "EntryPoints") || strstr(msg(), "signature") ||
                              strstr(msg(), "hashtable") || strstr(msg(), "type"),
                          "%s", msg());
        } else {
            ck_assert_msg(e == 0, "%d: %s", e, msg());
            mdt_r2r_method x;
            for (uint32_t i = 0; i < mdt_r2r_methods_entries(m); i++)
                if (mdt_r2r_method_get(&x, m, i) == 0)
                    mdt_r2r_method_at_rva(&x, m, x.rva);
        }
        mdt_error_clear();
        talloc_free(ctx);
        free(bytes);
    }
    ck_assert_uint_ge(bad, 1);
}

START_TEST(damaged_method_defs)
{
    damage(103);
}
END_TEST

START_TEST(damaged_instances)
{
    damage(109);
}
END_TEST

START_TEST(framework_opens)
{
    DIR *dir = opendir(framework);
    ck_assert_ptr_nonnull(dir);
    struct dirent *de;
    unsigned images = 0, entries = 0, unsupported = 0;
    while ((de = readdir(dir))) {
        size_t nl = strlen(de->d_name);
        if (nl < 5 || strcmp(de->d_name + nl - 4, ".dll") != 0)
            continue;
        char path[PATH_MAX + 300];
        snprintf(path, sizeof path, "%s/%s", framework, de->d_name);
        void *ctx = talloc_new(NULL);
        mdt_image *img;
        mdt_r2r_methods *m;
        mdt_r2r_header h;
        if (mdt_image_open_file(ctx, &img, path, 0) != 0 || mdt_r2r_header_read(&h, img) != 0) {
            mdt_error_clear();
            talloc_free(ctx);
            continue;
        }
        int e = mdt_r2r_methods_open(&m, ctx, img);
        if (e == MDT_EUNSUPPORTED || (e == MDT_ENOTFOUND && strstr(msg(), "no Method"))) {
            unsupported++;
        } else {
            ck_assert_msg(e == 0, "%s: %s", de->d_name, msg());
            images++;
            entries += mdt_r2r_methods_entries(m);
        }
        mdt_error_clear();
        talloc_free(ctx);
    }
    closedir(dir);
    printf("framework: %u ReadyToRun images, %u entry points; %u not mapped\n", images, entries,
           unsupported);
    ck_assert_uint_ge(images, 50);
}
END_TEST

int main(void)
{
    if (test_framework(framework, sizeof framework) != 0) {
        printf("no .NET shared framework found (set MDT_DOTNET_ROOT): skipped\n");
        return 77;
    }
    Suite *s = suite_create("r2r_methods");
    TCase *tc = tcase_create("r2r_methods");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, corelib_every_method);
    tcase_add_test(tc, bad_arguments);
    tcase_add_test(tc, damaged_method_defs);
    tcase_add_test(tc, damaged_instances);
    tcase_add_test(tc, framework_opens);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
