/* The .NET shared framework's ReadyToRun images (System.Private.CoreLib
 * among them) laid out as CoreCLR's loader on Linux lays them out (each
 * section at its RVA, rounded to pages, PROT_NONE gaps: tests/common/
 * layout.h), opened with mdt_image_open_mapped_ranges and compared, every
 * cell and heap entry, with the flat files (ECMA-335 II.25, II.24). The
 * framework is found from MDT_DOTNET_ROOT, else DOTNET_ROOT, else the
 * `dotnet` on PATH; without one the test exits 77 and says why. */
#define _GNU_SOURCE /* strverscmp */
#include <check.h>
#include <dirent.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mdtools/mdtools.h>

#include "framework.h"
#include "imgcmp.h"

static char framework[PATH_MAX]; /* shared/Microsoft.NETCore.App/<newest> */

START_TEST(framework_reads_alike_laid_out_with_holes)
{
    char why[1024], corelib[PATH_MAX + 32];
    imgcmp_tally t = {0}, c = {0};
    ck_assert_msg(imgcmp_tree(framework, &t, why, sizeof why) == 0, "%s", why);
    imgcmp_report(framework, &t);
    ck_assert_uint_eq(t.differ, 0);
    ck_assert_uint_ge(t.same, 100); /* 160-odd assemblies */
    ck_assert_uint_ge(t.r2r, t.same / 2);
    ck_assert_uint_ge(t.with_holes, t.same - t.same / 10);
    /* CoreLib itself: ReadyToRun, with holes, read alike. */
    snprintf(corelib, sizeof corelib, "%s/System.Private.CoreLib.dll", framework);
    ck_assert_msg(imgcmp_file(corelib, &c, why, sizeof why) == 0, "%s", why);
    ck_assert_uint_eq(c.same, 1);
    ck_assert_uint_eq(c.r2r, 1);
    ck_assert_uint_eq(c.with_holes, 1);
    ck_assert_uint_ge(c.st.cells, 500000);
}
END_TEST

int main(void)
{
    if (test_framework(framework, sizeof framework) != 0) {
        fprintf(stderr, "SKIP: no .NET shared framework (Microsoft.NETCore.App): set "
                        "MDT_DOTNET_ROOT or put dotnet on PATH\n");
        return 77;
    }
    Suite *s = suite_create("mapped_r2r");
    TCase *tc = tcase_create("mapped_r2r");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, framework_reads_alike_laid_out_with_holes);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
