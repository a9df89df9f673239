/* The row API of <mdtools/tables.h>: the inline readers against the
 * library's exported definitions of the same functions and their slow
 * paths, the whole-row and run calls against the per-cell readers, the
 * layout the inline readers rely on (part of the ABI), and the checks open
 * leaves to first need (sorted tables, late warnings). Inputs: every file
 * of the corpus that opens, the corrupt cases, mscorlib when Mono is
 * installed; for the run call every fixture under data/ too (the Mono
 * framework: test_rows_framework.c). */
#define _GNU_SOURCE /* nftw */
#include <check.h>
#include <dirent.h>
#include <ftw.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <talloc.h>
#include <unistd.h>

#include <mdtools/mdtools.h>

#include "paths.h"
#include "rowruns.h"

/* Calls through volatile pointers reach the external definitions the
 * library exports (C11 6.7.4p7): what bindings and non-inlining compilers
 * use. */
static int (*volatile ext_get)(mdt_row *, const mdt_image *, unsigned, uint32_t) = mdt_row_get;
static uint32_t (*volatile ext_raw)(const mdt_row *, unsigned) = mdt_row_raw;
static int (*volatile ext_string)(const char **, size_t *, const mdt_row *,
                                  unsigned) = mdt_row_string;
static int (*volatile ext_blob)(const uint8_t **, uint32_t *, const mdt_row *,
                                unsigned) = mdt_row_blob;
static int (*volatile ext_guid)(const uint8_t **, const mdt_row *, unsigned) = mdt_row_guid;
static uint32_t (*volatile ext_rows)(const mdt_image *, unsigned) = mdt_table_rows;

struct tally {
    uint64_t cells, failed;
};

/* Check's assertions record their place on every call (a write to the
 * parent's channel each time): over millions of cells that is most of the
 * run, and under valgrind minutes. Cells are compared plainly and only a
 * mismatch goes through Check, with the place. */
#define AGREE(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            ck_abort_msg("%s: table %u row %u: %s", what, t, rid, #cond);                          \
    } while (0)

/* Every cell of img, read four ways: inline, exported, slow path, whole
 * row. All must agree, failures included. */
static void agree(const mdt_image *img, const char *what, struct tally *n)
{
    for (unsigned t = 0; t < MDT_TABLE_MAX + 2; t++) {
        const mdt_table_schema *s = mdt_table_schema_get(t);
        uint32_t rows = mdt_table_rows(img, t);
        if (rows != ext_rows(img, t))
            ck_abort_msg("%s: table %u: %u rows inline, %u exported", what, t, rows,
                         ext_rows(img, t));
        if (!s)
            continue;
        for (uint32_t rid = 0; rid <= rows + 1; rid++) {
            mdt_row r, x;
            mdt_cell cells[MDT_LAYOUT_COLS];
            int e = mdt_row_get(&r, img, t, rid), bad = 0;
            AGREE((e) == (ext_get(&x, img, t, rid)));
            AGREE((e) == (mdt_row_get_slow(&x, img, t, rid)));
            if (e)
                continue;
            AGREE(r.img == x.img && r.p == x.p && r.lay == x.lay && r.rid == x.rid &&
                  r.table == x.table);
            int got = mdt_row_cells(cells, &r);
            for (unsigned c = 0; c < s->ncols; c++) {
                const char *s1 = NULL, *s2 = NULL, *s3 = NULL;
                size_t l1 = 0, l2 = 0, l3 = 0;
                const uint8_t *p1 = NULL, *p2 = NULL, *p3 = NULL;
                uint32_t b1 = 0, b2 = 0, b3 = 0;
                int e1 = 0, e2 = 0, e3 = 0;
                n->cells++;
                AGREE((mdt_row_raw(&r, c)) == (ext_raw(&r, c)));
                AGREE((mdt_row_raw(&r, c)) == (cells[c].value));
                switch (s->cols[c].kind) {
                case MDT_COLK_STR:
                    e1 = mdt_row_string(&s1, &l1, &r, c);
                    e2 = ext_string(&s2, &l2, &r, c);
                    e3 = mdt_row_string_slow(&s3, &l3, &r, c);
                    p1 = (const uint8_t *)s1, p2 = (const uint8_t *)s2, p3 = (const uint8_t *)s3;
                    b1 = (uint32_t)l1, b2 = (uint32_t)l2, b3 = (uint32_t)l3;
                    break;
                case MDT_COLK_BLOB:
                    e1 = mdt_row_blob(&p1, &b1, &r, c);
                    e2 = ext_blob(&p2, &b2, &r, c);
                    e3 = mdt_row_blob_slow(&p3, &b3, &r, c);
                    break;
                case MDT_COLK_GUID:
                    e1 = mdt_row_guid(&p1, &r, c);
                    e2 = ext_guid(&p2, &r, c);
                    e3 = mdt_row_guid_slow(&p3, &r, c);
                    b1 = b2 = b3 = p1 ? 16 : 0;
                    break;
                default:
                    AGREE((cells[c].ptr) == NULL);
                    AGREE((cells[c].len) == (0));
                    /* A heap reader refuses a column of another kind. */
                    AGREE((mdt_row_string(&s1, &l1, &r, c)) == (MDT_EINVAL));
                    AGREE((mdt_row_blob(&p1, &b1, &r, c)) == (MDT_EINVAL));
                    AGREE((mdt_row_guid(&p1, &r, c)) == (MDT_EINVAL));
                    continue;
                }
                if (!(e1 == e2 && e1 == e3))
                    ck_abort_msg("%s: %s row %u col %u: %d %d %d", what, s->name, rid, c, e1, e2,
                                 e3);
                if (e1) {
                    bad++;
                    n->failed++;
                    AGREE((cells[c].ptr) == NULL);
                    AGREE((cells[c].len) == (0));
                    continue;
                }
                AGREE((p1) == (p2));
                AGREE((p1) == (p3));
                AGREE((p1) == (cells[c].ptr));
                AGREE((b1) == (b2));
                AGREE((b1) == (b3));
                AGREE((b1) == (cells[c].len));
            }
            /* A column the table does not have. */
            const char *none;
            AGREE((mdt_row_string(&none, NULL, &r, s->ncols)) == (MDT_EINVAL));
            AGREE((mdt_row_string(&none, NULL, &r, 1000)) == (MDT_EINVAL));
            AGREE((got) == (bad));
        }
    }
}

START_TEST(inline_exported_slow_and_whole_row_readers_agree)
{
    void *ctx = talloc_new(NULL);
    char dir[1024], path[2048];
    struct tally n = {0, 0};
    size_t files = 0;
    static const char *const dirs[] = {"data/corpus/asmresolver", "tests/corrupt/cases"};
    for (size_t d = 0; d < 2; d++) {
        DIR *dh = opendir(src_path(dir, sizeof dir, dirs[d]));
        struct dirent *e;
        ck_assert_ptr_nonnull(dh);
        while ((e = readdir(dh))) {
            mdt_image *img;
            if (e->d_name[0] == '.')
                continue;
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            if (mdt_image_open_file(ctx, &img, path, 0) != 0)
                continue; /* both directories hold files that must not open */
            agree(img, e->d_name, &n);
            files++;
            mdt_image_close(img);
        }
        closedir(dh);
    }
    if (access(MONO_45_DIR "/mscorlib.dll", R_OK) == 0) {
        mdt_image *img;
        ck_assert_int_eq(mdt_image_open_file(ctx, &img, MONO_45_DIR "/mscorlib.dll", 0), 0);
        agree(img, "mscorlib.dll", &n);
        files++;
    } else {
        fprintf(stderr, "no %s/mscorlib.dll: the large image is not checked\n", MONO_45_DIR);
    }
    fprintf(stderr, "readers agree: %zu files, %llu cells, %llu failed cells\n", files,
            (unsigned long long)n.cells, (unsigned long long)n.failed);
    ck_assert_uint_gt(files, 100);
    ck_assert_uint_gt(n.failed, 10); /* the corrupt cases do fail cells */
    talloc_free(ctx);
}
END_TEST

/* The inline readers' view of an image is part of the ABI: a program built
 * against <mdtools/tables.h> has these sizes and offsets in it. A change
 * here needs a new soname (README.md, "ABI"); change these numbers with it. */
START_TEST(layout_abi_is_unchanged)
{
    if (sizeof(void *) != 8) {
        fprintf(stderr, "not an LP64 target: sizes not checked\n");
        return;
    }
    ck_assert_uint_eq(sizeof(mdt_row), 32);
    ck_assert_uint_eq(offsetof(mdt_row, lay), 16);
    ck_assert_uint_eq(sizeof(mdt_table_layout), 88);
    ck_assert_uint_eq(offsetof(mdt_table_layout, off), 21);
    ck_assert_uint_eq(offsetof(mdt_table_layout, kind), 39);
    ck_assert_uint_eq(offsetof(mdt_table_layout, mask), 48);
    ck_assert_uint_eq(sizeof(mdt_image_layout), 64 * 88 + 40);
    ck_assert_uint_eq(offsetof(mdt_image_layout, blob), 64 * 88 + 16);
    ck_assert_uint_eq(sizeof(mdt_cell), 16);
}
END_TEST

/* Open no longer checks which tables are sorted nor indexes list runs; the
 * warnings those checks make appear when the warnings are asked for, after
 * open's own, and the list stays the same afterwards. */
START_TEST(late_warnings_follow_open_warnings)
{
    void *ctx = talloc_new(NULL);
    char p[1024];
    mdt_image *img;
    ck_assert_int_eq(
        mdt_image_open_file(ctx, &img,
                            src_path(p, sizeof p, "tests/corrupt/cases/table-not-sorted.bin"), 0),
        0);
    size_t n = mdt_image_warning_count(img);
    ck_assert_uint_ge(n, 1);
    ck_assert_ptr_nonnull(strstr(mdt_image_warning(img, n - 1), "CustomAttribute is not sorted"));
    ck_assert_ptr_null(mdt_image_warning(img, n));
    const char *w = mdt_image_warning(img, n - 1);
    ck_assert(!mdt_table_is_sorted(img, MDT_TABLE_CustomAttribute));
    ck_assert_uint_eq(mdt_image_warning_count(img), n);
    ck_assert_ptr_eq(mdt_image_warning(img, n - 1), w);
    /* Asking whether the table is sorted first gives the same warnings. */
    ck_assert_int_eq(mdt_image_open_file(ctx, &img, p, 0), 0);
    ck_assert(!mdt_table_is_sorted(img, MDT_TABLE_CustomAttribute));
    ck_assert(mdt_table_is_sorted(img, MDT_TABLE_TypeDef)); /* not a sorted table */
    ck_assert_uint_eq(mdt_image_warning_count(img), n);
    ck_assert_str_eq(mdt_image_warning(img, n - 1), w);
    talloc_free(ctx);
}
END_TEST

/* The cells open pads for: the last row of the last table ends at the last
 * byte of the file (read from a buffer of exactly that size, so a sanitizer
 * sees any read past it). */
START_TEST(rows_ending_at_the_buffer_end_read_whole)
{
    void *ctx = talloc_new(NULL);
    char p[1024];
    FILE *f = fopen(src_path(p, sizeof p, "tests/corrupt/cases/tables-end-at-file-end.bin"), "rb");
    uint8_t *buf = talloc_array(ctx, uint8_t, 4096);
    size_t len;
    mdt_image *img;
    mdt_row r;
    const char *s;
    ck_assert_ptr_nonnull(f);
    len = fread(buf, 1, 4096, f);
    fclose(f);
    buf = talloc_realloc(ctx, buf, uint8_t, len);
    ck_assert_int_eq(mdt_image_open_buffer(ctx, &img, "end", buf, len, 0), 0);
    ck_assert_uint_eq(mdt_table_rows(img, MDT_TABLE_TypeRef), 2);
    ck_assert_int_eq(mdt_row_get(&r, img, MDT_TABLE_TypeRef, 2), 0);
    ck_assert_int_eq(mdt_row_string(&s, NULL, &r, MDT_COL_TypeRef_TypeNamespace), 0);
    ck_assert_str_eq(s, "Foo");
    ck_assert_int_eq(mdt_row_string(&s, NULL, &r, MDT_COL_TypeRef_TypeName), 0);
    ck_assert_str_eq(s, "Bar");
    /* The last two bytes of the buffer are that cell. */
    ck_assert_uint_eq(buf[len - 2], 1);
    ck_assert_uint_eq(buf[len - 1], 0);
    talloc_free(ctx);
}
END_TEST

/* mdt_rows_cells against the per-cell readers (tests/common/rowruns.c) on
 * every file under data/ (fixtures, corpus) and tests/corrupt/cases that
 * opens, in runs of 1 and 5 rows (the unrolled loops' tails), 64 and whole
 * tables; runs that reach past a damaged table's readable rows must be
 * refused whole. */
static struct {
    void *ctx;
    rowruns_stats st;
    size_t files;
    char why[1024];
} runs_walk;

static int run_file(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
    static const uint32_t runs[] = {1, 5, 64, 0};
    mdt_image *img;
    (void)sb;
    (void)ftw;
    if (type != FTW_F || mdt_image_open_file(runs_walk.ctx, &img, path, 0) != 0)
        return 0; /* sources, scripts, and the inputs that must not open */
    runs_walk.files++;
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        char why[900];
        if (rowruns_check(img, runs[i], &runs_walk.st, why, sizeof why) != 0) {
            snprintf(runs_walk.why, sizeof runs_walk.why, "%s, runs of %u: %s", path, runs[i], why);
            mdt_image_close(img);
            return 1;
        }
    }
    mdt_image_close(img);
    return 0;
}

START_TEST(run_reader_agrees_with_cell_readers_on_every_fixture)
{
    static const char *const dirs[] = {"data", "tests/corrupt/cases"};
    char dir[1024];
    runs_walk.ctx = talloc_new(NULL);
    for (size_t d = 0; d < sizeof dirs / sizeof dirs[0]; d++) {
        int e = nftw(src_path(dir, sizeof dir, dirs[d]), run_file, 16, FTW_PHYS);
        ck_assert_msg(e == 0, "%s", e > 0 ? runs_walk.why : "cannot walk the directory");
    }
    fprintf(stderr,
            "run reader agrees: %zu files, %llu runs, %llu refused, %llu cells, %llu failed\n",
            runs_walk.files, (unsigned long long)runs_walk.st.runs,
            (unsigned long long)runs_walk.st.refused, (unsigned long long)runs_walk.st.cells,
            (unsigned long long)runs_walk.st.failed);
    ck_assert_uint_gt(runs_walk.files, 150);
    ck_assert_uint_gt(runs_walk.st.failed, 10);  /* the corrupt cases do fail cells */
    ck_assert_uint_gt(runs_walk.st.refused, 10); /* and hold damaged tables */
    talloc_free(runs_walk.ctx);
}
END_TEST

/* A run is checked once, whole: rows before 1, past the table or past the
 * readable rows, and tables that do not exist, fail as mdt_row_get fails
 * for the first row at fault, and write nothing; an empty run writes
 * nothing. */
START_TEST(run_reader_refuses_bad_runs_whole)
{
    void *ctx = talloc_new(NULL);
    char p[1024], msg[256];
    mdt_image *img;
    mdt_cell cells[16 * MDT_LAYOUT_COLS], keep[16 * MDT_LAYOUT_COLS];
    ck_assert_int_eq(
        mdt_image_open_file(ctx, &img, src_path(p, sizeof p, "data/Everything.dll"), 0), 0);
    uint32_t rows = mdt_table_rows(img, MDT_TABLE_TypeDef);
    ck_assert_uint_gt(rows, 4);
    memset(cells, 0x5A, sizeof cells);
    memcpy(keep, cells, sizeof keep);
    ck_assert_int_eq(mdt_rows_cells(cells, img, MDT_TABLE_TypeDef, 0, 1), MDT_ENOTFOUND);
    ck_assert_int_eq(mdt_rows_cells(cells, img, MDT_TABLE_TypeDef, rows + 1, 1), MDT_ENOTFOUND);
    ck_assert_int_eq(mdt_rows_cells(cells, img, MDT_TABLE_TypeDef, rows, 2), MDT_ENOTFOUND);
    mdt_error_message(msg, sizeof msg);
    ck_assert_msg(strstr(msg, "TypeDef") && strstr(msg, "no row"), "%s", msg);
    ck_assert_int_eq(mdt_rows_cells(cells, img, 0x2D, 1, 1), MDT_EINVAL); /* no such table */
    ck_assert_int_eq(mdt_rows_cells(cells, img, MDT_TABLE_MAX, 1, 1), MDT_EINVAL);
    ck_assert_int_eq(mdt_rows_cells(cells, img, 1000, 1, 0), MDT_EINVAL);
    ck_assert_int_eq(mdt_rows_cells(cells, img, MDT_TABLE_TypeDef, 2, 0), 0);
    ck_assert_int_eq(mdt_rows_cells(cells, img, MDT_TABLE_TypeDef, 0, 0), 0);
    ck_assert_int_eq(memcmp(cells, keep, sizeof cells), 0);
    /* A table present in the image with none of its rows readable. */
    ck_assert_int_eq(
        mdt_image_open_file(
            ctx, &img,
            src_path(p, sizeof p, "tests/corrupt/cases/declared-rows-huge-blob-tiny.bin"), 0),
        0);
    rows = mdt_table_rows(img, MDT_TABLE_TypeDef);
    ck_assert_uint_eq(mdt_table_rows_present(img, MDT_TABLE_TypeDef), 1);
    ck_assert_int_eq(mdt_rows_cells(cells, img, MDT_TABLE_TypeDef, 1, 2), MDT_ETRUNC);
    mdt_error_message(msg, sizeof msg);
    ck_assert_msg(strstr(msg, "TypeDef row 2") &&
                      strstr(msg, "beyond the end of the tables stream"),
                  "%s", msg);
    ck_assert_int_eq(mdt_rows_cells(cells, img, MDT_TABLE_TypeDef, 1, rows), MDT_ETRUNC);
    ck_assert_int_eq(mdt_rows_cells(cells, img, MDT_TABLE_TypeDef, rows, 1), MDT_ETRUNC);
    ck_assert_int_eq(memcmp(cells, keep, sizeof cells), 0);
    ck_assert_int_eq(mdt_rows_cells(cells, img, MDT_TABLE_TypeDef, 1, 1), 0);
    talloc_free(ctx);
}
END_TEST

/* A table id that names no table is refused, not indexed (a NULL schema
 * below MDT_TABLE_MAX, the layout's end above it). */
START_TEST(range_item_refuses_a_bad_table)
{
    void *ctx = talloc_new(NULL);
    char p[1024];
    mdt_image *img;
    uint32_t rid = 77;
    ck_assert_int_eq(
        mdt_image_open_file(ctx, &img, src_path(p, sizeof p, "data/Everything.dll"), 0), 0);
    ck_assert_int_eq(mdt_range_item(&rid, img, MDT_TABLE_MethodDef, 1), 0);
    ck_assert_uint_eq(rid, 1);
    rid = 77;
    ck_assert_int_eq(mdt_range_item(&rid, img, 0x2D, 1), MDT_EINVAL);
    ck_assert_int_eq(mdt_range_item(&rid, img, MDT_TABLE_MAX, 1), MDT_EINVAL);
    ck_assert_int_eq(mdt_range_item(&rid, img, 100000, 1), MDT_EINVAL);
    ck_assert_uint_eq(rid, 77);
    talloc_free(ctx);
}
END_TEST

/* A bad heap index fails its cell alone, with the located error the cell
 * readers give, and the rest of the run still decodes. */
START_TEST(run_reader_fails_a_bad_cell_alone)
{
    void *ctx = talloc_new(NULL);
    char p[1024], msg[512];
    mdt_image *img;
    mdt_cell cells[64 * MDT_LAYOUT_COLS];
    ck_assert_int_eq(mdt_image_open_file(
                         ctx, &img,
                         src_path(p, sizeof p, "tests/corrupt/cases/string-index-beyond-heap.bin"),
                         0),
                     0);
    uint32_t rows = mdt_table_rows(img, MDT_TABLE_TypeDef);
    unsigned n = mdt_table_schema_get(MDT_TABLE_TypeDef)->ncols;
    ck_assert_uint_ge(rows, 2);
    ck_assert_uint_le(rows, 64);
    ck_assert_int_eq(mdt_rows_cells(cells, img, MDT_TABLE_TypeDef, 1, rows), 1);
    mdt_error_message(msg, sizeof msg);
    /* The error record as the cell readers word it (after the file). */
    ck_assert_msg(strstr(msg, "string-index-beyond-heap.bin: TypeDef row 2 column TypeName at "
                              "+0xa6 (file 0x376): #Strings index 0xfff0: string index beyond "
                              "the heap"),
                  "%s", msg);
    const mdt_cell *bad = &cells[n + MDT_COL_TypeDef_TypeName];
    ck_assert_uint_eq(bad->value, 0xfff0);
    ck_assert_ptr_null(bad->ptr);
    ck_assert_uint_eq(bad->len, 0);
    /* Its neighbours: row 2's namespace, row 1's name. */
    ck_assert_int_eq(mdt_rows_cells(cells, img, MDT_TABLE_TypeDef, 1, 1), 0);
    ck_assert_str_eq(cells[MDT_COL_TypeDef_TypeName].ptr, "<Module>");
    talloc_free(ctx);
}
END_TEST

Suite *suite(void);
Suite *suite(void)
{
    Suite *s = suite_create("rows");
    TCase *tc = tcase_create("rows");
    tcase_add_test(tc, inline_exported_slow_and_whole_row_readers_agree);
    tcase_add_test(tc, layout_abi_is_unchanged);
    tcase_add_test(tc, run_reader_agrees_with_cell_readers_on_every_fixture);
    tcase_add_test(tc, run_reader_refuses_bad_runs_whole);
    tcase_add_test(tc, range_item_refuses_a_bad_table);
    tcase_add_test(tc, run_reader_fails_a_bad_cell_alone);
    tcase_add_test(tc, late_warnings_follow_open_warnings);
    tcase_add_test(tc, rows_ending_at_the_buffer_end_read_whole);
    suite_add_tcase(s, tc);
    return s;
}
