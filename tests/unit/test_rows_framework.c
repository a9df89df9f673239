/* The run reader (mdt_rows_cells) against the per-cell readers over the
 * Mono 4.5 framework, every table of its 269 files (4.6 million cells), in
 * runs of 3 rows (the unrolled loops' tails), 128 rows and whole tables:
 * tests/common/rowruns.c says what is compared. The fixtures and the
 * corrupt cases are test_rows.c's. Needs Debian's mono-devel (skipped
 * otherwise). */
#include <check.h>
#include <glob.h>
#include <stdio.h>
#include <talloc.h>

#include <mdtools/mdtools.h>

#include "paths.h"
#include "rowruns.h"

MDT_TESTS_NEED_MONO

START_TEST(run_reader_agrees_with_cell_readers_on_the_framework)
{
    static const uint32_t runs[] = {3, 128, 0};
    void *ctx = talloc_new(NULL);
    rowruns_stats st = {0, 0, 0, 0};
    glob_t g;
    ck_assert_int_eq(glob(MONO_45_DIR "/*.dll", 0, NULL, &g), 0);
    ck_assert_int_eq(glob(MONO_45_DIR "/Facades/*.dll", GLOB_APPEND, NULL, &g), 0);
    for (size_t f = 0; f < g.gl_pathc; f++) {
        mdt_image *img;
        char why[1024];
        ck_assert_msg(mdt_image_open_file(ctx, &img, g.gl_pathv[f], 0) == 0, "%s does not open",
                      g.gl_pathv[f]);
        for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++)
            if (rowruns_check(img, runs[i], &st, why, sizeof why) != 0)
                ck_abort_msg("%s, runs of %u: %s", g.gl_pathv[f], runs[i], why);
        mdt_image_close(img);
    }
    fprintf(stderr, "run reader agrees: %zu files, %llu runs, %llu cells\n", g.gl_pathc,
            (unsigned long long)st.runs, (unsigned long long)st.cells);
    ck_assert_uint_gt(g.gl_pathc, 250);
    ck_assert_uint_gt(st.cells, 3 * 4000000ull);
    globfree(&g);
    talloc_free(ctx);
}
END_TEST

Suite *suite(void);
Suite *suite(void)
{
    Suite *s = suite_create("rows_framework");
    TCase *tc = tcase_create("rows_framework");
    tcase_add_test(tc, run_reader_agrees_with_cell_readers_on_the_framework);
    suite_add_tcase(s, tc);
    return s;
}
