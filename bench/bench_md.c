/* bench_md: the mdtools side of the metadata-reading benchmark. Opens every
 * image named on the command line and reads every cell of every row of
 * every table (ECMA-335 II.22, II.24.2.6) through the public API only,
 * summing string, blob and GUID lengths and the other raw cell values so the
 * work cannot be optimised away. bench_mono does the same through libmono;
 * run.sh compares the sums and the costs.
 *
 * Usage: bench_md [-r|-c|-w|-m|-o] file...
 *   -r  raw values only: mdt_row_raw for every cell, no heap decoding
 *       (shows what the heap lookups cost on top of the row walk).
 *   -c  column at a time: mdt_column_raw/_strings/_blobs/_guids over runs
 *       of rows, the API for whole-table scans; same cells, same sums.
 *   -w  whole rows: one mdt_row_cells call per row decodes every cell.
 *   -m  runs of whole rows: one mdt_rows_cells call decodes every cell of
 *       RUN rows.
 *   -o  open each image and read three cells only (the Module name, the
 *       last TypeDef's name and namespace): what opening costs a caller
 *       that looks at a few rows.
 *   --passes N  steady state (bench/srm): one untimed warm-up pass, then N
 *       passes, each opening, walking and closing every image; the report
 *       adds each pass's process CPU and wall time (pass_cpu_ns=a,b,...). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <talloc.h>

#include <mdtools/mdtools.h>

#include "common.h"

#define RUN 1024 /* rows per column call, and per mdt_rows_cells call */

/* The same walk, column at a time. Sums are kept in locals (not through
 * `s`) so the compiler can keep them in registers. */
static void walk_columns(const mdt_image *img, struct bench_sums *s)
{
    static uint32_t raw[RUN], len[RUN];
    static const char *str[RUN];
    static const uint8_t *ptr[RUN];
    struct bench_sums l = {0};
    for (unsigned t = 0; t < MDT_TABLE_MAX; t++) {
        const mdt_table_schema *ts = mdt_table_schema_get(t);
        uint32_t nrows;
        if (!ts || !(nrows = mdt_table_rows(img, t)))
            continue;
        l.rows += nrows;
        l.cells += (uint64_t)nrows * ts->ncols;
        for (unsigned c = 0; c < ts->ncols; c++) {
            for (uint32_t first = 1; first <= nrows; first += RUN) {
                uint32_t n = nrows - first + 1 < RUN ? nrows - first + 1 : RUN;
                int bad = 0;
                switch (ts->cols[c].kind) {
                case MDT_COLK_STR:
                    bad = mdt_column_strings(str, len, img, t, c, first, n);
                    for (uint32_t i = 0; i < n; i++)
                        l.str_bytes += len[i];
                    break;
                case MDT_COLK_BLOB:
                    bad = mdt_column_blobs(ptr, len, img, t, c, first, n);
                    for (uint32_t i = 0; i < n; i++)
                        l.blob_bytes += len[i];
                    break;
                case MDT_COLK_GUID:
                    bad = mdt_column_guids(ptr, img, t, c, first, n);
                    for (uint32_t i = 0; i < n; i++)
                        if (ptr[i])
                            bench_guid(&l, ptr[i]);
                    break;
                default:
                    bad = mdt_column_raw(raw, img, t, c, first, n);
                    for (uint32_t i = 0; i < n; i++)
                        l.raw_other += raw[i];
                }
                if (bad)
                    l.errors += bad > 0 ? (uint64_t)bad : n;
            }
        }
    }
    bench_sums_add(s, &l);
}

/* What both whole-row variants do with a row's cells (from mdt_row_cells
 * or mdt_rows_cells): the four grouped loops of the plan, as every variant
 * has them. A macro rather than a function: the same source for both, and
 * each compiled in place as it was written there before (the compiler's
 * register choices for such a loop move with its surroundings). */
#define SUM_CELLS(l, p, c)                                                                         \
    do {                                                                                           \
        for (unsigned k = 0; k < p.n_other; k++)                                                   \
            l.raw_other += c[p.other[k]].value;                                                    \
        for (unsigned k = 0; k < p.n_str; k++)                                                     \
            l.str_bytes += c[p.str[k]].len;                                                        \
        for (unsigned k = 0; k < p.n_blob; k++)                                                    \
            l.blob_bytes += c[p.blob[k]].len;                                                      \
        for (unsigned k = 0; k < p.n_guid; k++) {                                                  \
            const uint8_t *g = c[p.guid[k]].ptr;                                                   \
            if (g)                                                                                 \
                bench_guid(&l, g);                                                                 \
        }                                                                                          \
    } while (0)

/* The same walk, a row at a time with one call per row (mdt_row_cells,
 * the counterpart of mono_metadata_decode_row, with the heaps decoded too). */
static void walk_cells(const mdt_image *img, struct bench_sums *s)
{
    struct bench_sums l = {0};
    for (unsigned t = 0; t < MDT_TABLE_MAX; t++) {
        const mdt_table_schema *ts = mdt_table_schema_get(t);
        struct bench_plan p;
        uint32_t nrows;
        if (!ts || !(nrows = mdt_table_rows(img, t)))
            continue;
        bench_plan_make(&p, ts);
        for (uint32_t rid = 1; rid <= nrows; rid++) {
            mdt_row row;
            mdt_cell c[MDT_LAYOUT_COLS];
            if (mdt_row_get(&row, img, t, rid) != 0) {
                l.errors++;
                continue;
            }
            l.rows++;
            l.cells += p.ncols;
            l.errors += (uint64_t)mdt_row_cells(c, &row);
            SUM_CELLS(l, p, c);
        }
    }
    bench_sums_add(s, &l);
}

/* The same walk, runs of whole rows: one mdt_rows_cells call decodes
 * every cell of RUN rows (as many as a column call reads) into cells[],
 * row after row; the loop then reads each row's cells by the same plan,
 * in the same four grouped loops as every other variant. */
static void walk_rows(const mdt_image *img, struct bench_sums *s)
{
    static mdt_cell cells[RUN * MDT_LAYOUT_COLS];
    struct bench_sums l = {0};
    for (unsigned t = 0; t < MDT_TABLE_MAX; t++) {
        const mdt_table_schema *ts = mdt_table_schema_get(t);
        struct bench_plan p;
        uint32_t nrows;
        if (!ts || !(nrows = mdt_table_rows(img, t)))
            continue;
        bench_plan_make(&p, ts);
        for (uint32_t first = 1; first <= nrows; first += RUN) {
            uint32_t n = nrows - first + 1 < RUN ? nrows - first + 1 : RUN;
            int bad = mdt_rows_cells(cells, img, t, first, n);
            if (bad < 0) {
                l.errors += n;
                continue;
            }
            l.errors += (uint64_t)bad;
            l.rows += n;
            l.cells += (uint64_t)n * p.ncols;
            const mdt_cell *c = cells;
            for (uint32_t i = 0; i < n; i++, c += p.ncols)
                SUM_CELLS(l, p, c);
        }
    }
    bench_sums_add(s, &l);
}

/* What a profiler does with most of the modules it opens: look at a few
 * rows. The Module row's name and the name and namespace of the last
 * TypeDef. */
static void walk_few(const mdt_image *img, struct bench_sums *s)
{
    static const struct {
        uint8_t table, col;
        int last; /* row: 1 or the last */
    } cells[] = {{MDT_TABLE_Module, MDT_COL_Module_Name, 0},
                 {MDT_TABLE_TypeDef, MDT_COL_TypeDef_TypeName, 1},
                 {MDT_TABLE_TypeDef, MDT_COL_TypeDef_TypeNamespace, 1}};
    for (size_t i = 0; i < sizeof cells / sizeof cells[0]; i++) {
        uint32_t rid = cells[i].last ? mdt_table_rows(img, cells[i].table) : 1;
        mdt_row row;
        const char *str;
        size_t len;
        if (mdt_row_get(&row, img, cells[i].table, rid) != 0 ||
            mdt_row_string(&str, &len, &row, cells[i].col) != 0) {
            s->errors++;
            continue;
        }
        s->cells++;
        s->str_bytes += len;
    }
}

static void walk_image(const mdt_image *img, int raw_only, struct bench_sums *s)
{
    if (raw_only == 4) {
        walk_few(img, s);
        return;
    }
    if (raw_only == 2) {
        walk_columns(img, s);
        return;
    }
    if (raw_only == 3) {
        walk_cells(img, s);
        return;
    }
    struct bench_sums l = {0};
    for (unsigned t = 0; t < MDT_TABLE_MAX; t++) {
        const mdt_table_schema *ts = mdt_table_schema_get(t);
        struct bench_plan p;
        uint32_t nrows;
        if (!ts || !(nrows = mdt_table_rows(img, t)))
            continue;
        bench_plan_make(&p, ts);
        for (uint32_t rid = 1; rid <= nrows; rid++) {
            mdt_row row;
            if (mdt_row_get(&row, img, t, rid) != 0) {
                l.errors++;
                continue;
            }
            l.rows++;
            l.cells += p.ncols;
            if (raw_only) {
                for (unsigned c = 0; c < p.ncols; c++)
                    l.raw_all += mdt_row_raw(&row, c);
                continue;
            }
            for (unsigned k = 0; k < p.n_other; k++)
                l.raw_other += mdt_row_raw(&row, p.other[k]);
            for (unsigned k = 0; k < p.n_str; k++) {
                const char *str;
                size_t len;
                if (mdt_row_string(&str, &len, &row, p.str[k]) == 0)
                    l.str_bytes += len;
                else
                    l.errors++;
            }
            for (unsigned k = 0; k < p.n_blob; k++) {
                const uint8_t *data;
                uint32_t len;
                if (mdt_row_blob(&data, &len, &row, p.blob[k]) == 0)
                    l.blob_bytes += len;
                else
                    l.errors++;
            }
            for (unsigned k = 0; k < p.n_guid; k++) {
                const uint8_t *g;
                if (mdt_row_guid(&g, &row, p.guid[k]) != 0) {
                    l.errors++;
                } else if (g) {
                    bench_guid(&l, g);
                }
            }
        }
    }
    bench_sums_add(s, &l);
}

/* The timed work: open and walk every image. Not inlined and not static so
 * `valgrind --tool=callgrind --toggle-collect=bench_md_work` can count its
 * instructions alone. Images stay open (all mapped at once, as a tool
 * holding a module set would) until the caller frees `ctx`. */
int bench_md_work(void *ctx, int n, char **paths, int raw_only, struct bench_sums *s);
__attribute__((noinline)) int bench_md_work(void *ctx, int n, char **paths, int raw_only,
                                            struct bench_sums *s)
{
    for (int i = 0; i < n; i++) {
        mdt_image *img;
        /* Mapped, as libmono maps: this benchmark compares reading cells;
         * what the default (reading the file into memory) adds is
         * bench_open's figure (README.md, "Opening files"). */
        if (mdt_image_open_file(ctx, &img, paths[i], MDT_OPEN_MAP) != 0) {
            char msg[512];
            fprintf(stderr, "bench_md: %s\n", mdt_error_message(msg, sizeof msg));
            return -1;
        }
        s->files++;
        walk_image(img, raw_only, s);
    }
    return 0;
}

/* The timed work of -m: bench_md_work with walk_rows. A function of its
 * own, so that adding this variant left the code of the others as it was:
 * the compiler's register choices for a loop move with everything else
 * inlined into its function, by up to 0.5M instructions on A (-m called
 * from bench_md_work, or its open loop shared through a helper, cost the
 * row API 0.5-1.2M more). Hence also the open loop written twice. */
int bench_md_work_rows(void *ctx, int n, char **paths, struct bench_sums *s);
__attribute__((noinline)) int bench_md_work_rows(void *ctx, int n, char **paths,
                                                 struct bench_sums *s)
{
    for (int i = 0; i < n; i++) {
        mdt_image *img;
        if (mdt_image_open_file(ctx, &img, paths[i], MDT_OPEN_MAP) != 0) {
            char msg[512];
            fprintf(stderr, "bench_md: %s\n", mdt_error_message(msg, sizeof msg));
            return -1;
        }
        s->files++;
        walk_rows(img, s);
    }
    return 0;
}

/* One pass: open, walk, close every image (the images live under a
 * context of their own, freed at the end of the pass). */
static int one_pass(void *ctx, int raw_only, int n, char **paths, struct bench_sums *s)
{
    void *pass = talloc_new(ctx);
    if (!pass)
        return -1;
    int e = raw_only == 5 ? bench_md_work_rows(pass, n, paths, s)
                          : bench_md_work(pass, n, paths, raw_only, s);
    talloc_free(pass);
    return e;
}

#define MAX_PASSES 1000

int main(int argc, char **argv)
{
    static const char *const variants[] = {"full", "raw", "column", "cells", "open", "rows"};
    static const struct option longopts[] = {{"passes", required_argument, NULL, 'P'},
                                             {NULL, 0, NULL, 0}};
    int raw_only = 0, opt;
    long passes = 0;
    while ((opt = getopt_long(argc, argv, "rcwom", longopts, NULL)) != -1) {
        switch (opt) {
        case 'r': raw_only = 1; break;
        case 'c': raw_only = 2; break;
        case 'w': raw_only = 3; break;
        case 'o': raw_only = 4; break;
        case 'm': raw_only = 5; break;
        case 'P':
            passes = strtol(optarg, NULL, 10);
            if (passes < 1 || passes > MAX_PASSES) {
                fprintf(stderr, "bench_md: --passes takes 1..%d\n", MAX_PASSES);
                return 2;
            }
            break;
        default:
            fprintf(stderr, "usage: bench_md [-r|-c|-w|-m|-o] [--passes N] file...\n");
            return 2;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "usage: bench_md [-r|-c|-w|-m|-o] [--passes N] file...\n");
        return 2;
    }

    struct bench_sums s;
    memset(&s, 0, sizeof s);
    void *ctx = talloc_new(NULL);
    if (!ctx)
        return 1;

    if (passes > 0) {
        /* Steady state: a warm-up pass (page cache, the CPU's caches and
         * predictors; there is no JIT to warm), then N timed passes. */
        static uint64_t cpu[MAX_PASSES], wall[MAX_PASSES];
        int e = one_pass(ctx, raw_only, argc - optind, argv + optind, &s);
        for (long p = 0; e == 0 && p < passes; p++) {
            memset(&s, 0, sizeof s);
            uint64_t c0 = bench_cpu_ns(), t0 = bench_now_ns();
            e = one_pass(ctx, raw_only, argc - optind, argv + optind, &s);
            wall[p] = bench_now_ns() - t0;
            cpu[p] = bench_cpu_ns() - c0;
        }
        if (e == 0) {
            printf("side=mdtools variant=%s files=%" PRIu64 " rows=%" PRIu64 " cells=%" PRIu64
                   " str_bytes=%" PRIu64 " blob_bytes=%" PRIu64 " guid_bytes=%" PRIu64
                   " guid_sum=%" PRIu64 " raw_other=%" PRIu64 " raw_all=%" PRIu64 " errors=%" PRIu64
                   " passes=%ld pass_cpu_ns=",
                   variants[raw_only], s.files, s.rows, s.cells, s.str_bytes, s.blob_bytes,
                   s.guid_bytes, s.guid_sum, s.raw_other, s.raw_all, s.errors, passes);
            for (long p = 0; p < passes; p++)
                printf("%s%" PRIu64, p ? "," : "", cpu[p]);
            printf(" pass_wall_ns=");
            for (long p = 0; p < passes; p++)
                printf("%s%" PRIu64, p ? "," : "", wall[p]);
            printf(" proc_cpu_ns=%" PRIu64 "\n", bench_cpu_ns());
        }
        talloc_free(ctx);
        return e == 0 && s.errors == 0 ? 0 : 1;
    }

    uint64_t c0 = bench_cpu_ns(), t0 = bench_now_ns();
    int e = raw_only == 5 ? bench_md_work_rows(ctx, argc - optind, argv + optind, &s)
                          : bench_md_work(ctx, argc - optind, argv + optind, raw_only, &s);
    uint64_t t1 = bench_now_ns(), c1 = bench_cpu_ns();

    if (e == 0)
        bench_report("mdtools", variants[raw_only], &s, 0, t1 - t0, c1 - c0);
    talloc_free(ctx);
    return e == 0 && s.errors == 0 ? 0 : 1;
}
