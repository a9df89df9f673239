/* bench_mono: the libmono side of the metadata-reading benchmark. Opens
 * every image named on the command line with mono_image_open and reads every
 * cell of every row of every table (ECMA-335 II.22, II.24.2.6) with
 * mono_metadata_decode_row and mono's heap accessors, adding up the same
 * sums as bench_md. Which column holds a #Strings, #Blob or #GUID index comes
 * from the mdtools schema: static data, no reading is done by mdtools here.
 *
 * Usage: bench_mono [-r|-o] file...
 *   -r  raw values only: decode the rows, no heap lookups.
 *   -o  open each image and read three cells only (as bench_md -o). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mono/metadata/image.h>
#include <mono/metadata/metadata.h>
#include <mono/utils/mono-counters.h>

#include <mdtools/tables.h>

#include "common.h"

static void walk_image(MonoImage *img, int raw_only, struct bench_sums *s)
{
    struct bench_sums l = {0};
    uint32_t cols[BENCH_MAX_COLS];
    for (unsigned t = 0; t < MDT_TABLE_MAX; t++) {
        const mdt_table_schema *ts = mdt_table_schema_get(t);
        const MonoTableInfo *ti;
        struct bench_plan p;
        int nrows;
        if (!ts || !(ti = mono_image_get_table_info(img, (int)t)) ||
            (nrows = mono_table_info_get_rows(ti)) <= 0)
            continue;
        bench_plan_make(&p, ts);
        for (int idx = 0; idx < nrows; idx++) {
            /* mono asserts that the column count matches its own schema. */
            mono_metadata_decode_row(ti, idx, cols, (int)p.ncols);
            l.rows++;
            l.cells += p.ncols;
            if (raw_only) {
                for (unsigned c = 0; c < p.ncols; c++)
                    l.raw_all += cols[c];
                continue;
            }
            for (unsigned k = 0; k < p.n_other; k++)
                l.raw_other += cols[p.other[k]];
            for (unsigned k = 0; k < p.n_str; k++)
                l.str_bytes += strlen(mono_metadata_string_heap(img, cols[p.str[k]]));
            for (unsigned k = 0; k < p.n_blob; k++) {
                const char *b = mono_metadata_blob_heap(img, cols[p.blob[k]]);
                l.blob_bytes += mono_metadata_decode_blob_size(b, &b);
            }
            for (unsigned k = 0; k < p.n_guid; k++) {
                /* Index 0 means "no GUID"; mono's accessor is 1-based and
                 * would complain about it. */
                if (cols[p.guid[k]]) {
                    const unsigned char *g =
                        (const unsigned char *)mono_metadata_guid_heap(img, cols[p.guid[k]]);
                    bench_guid(&l, g);
                }
            }
        }
    }
    bench_sums_add(s, &l);
}

/* The -o variant: the same three cells as bench_md's walk_few. */
static void walk_few(MonoImage *img, struct bench_sums *s)
{
    static const struct {
        uint8_t table, col;
        int last;
    } cells[] = {{MDT_TABLE_Module, MDT_COL_Module_Name, 0},
                 {MDT_TABLE_TypeDef, MDT_COL_TypeDef_TypeName, 1},
                 {MDT_TABLE_TypeDef, MDT_COL_TypeDef_TypeNamespace, 1}};
    for (size_t i = 0; i < sizeof cells / sizeof cells[0]; i++) {
        const MonoTableInfo *ti = mono_image_get_table_info(img, cells[i].table);
        int rows = ti ? mono_table_info_get_rows(ti) : 0;
        if (rows <= 0) {
            s->errors++;
            continue;
        }
        uint32_t v = mono_metadata_decode_row_col(ti, cells[i].last ? rows - 1 : 0, cells[i].col);
        s->cells++;
        s->str_bytes += strlen(mono_metadata_string_heap(img, v));
    }
}

/* The timed work, a separate symbol for callgrind's --toggle-collect. The
 * images stay open (all mapped at once) until the process exits. */
int bench_mono_work(int n, char **paths, MonoImage **imgs, int raw_only, struct bench_sums *s);
__attribute__((noinline)) int bench_mono_work(int n, char **paths, MonoImage **imgs, int raw_only,
                                              struct bench_sums *s)
{
    for (int i = 0; i < n; i++) {
        MonoImageOpenStatus st = MONO_IMAGE_OK;
        imgs[i] = mono_image_open(paths[i], &st);
        if (!imgs[i]) {
            fprintf(stderr, "bench_mono: %s: %s\n", paths[i], mono_image_strerror(st));
            return -1;
        }
        s->files++;
        if (raw_only == 2)
            walk_few(imgs[i], s);
        else
            walk_image(imgs[i], raw_only, s);
    }
    return 0;
}

int main(int argc, char **argv)
{
    int raw_only = 0, opt;
    while ((opt = getopt(argc, argv, "ro")) != -1) {
        if (opt == 'r') {
            raw_only = 1;
        } else if (opt == 'o') {
            raw_only = 2;
        } else {
            fprintf(stderr, "usage: bench_mono [-r|-o] file...\n");
            return 2;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "usage: bench_mono [-r|-o] file...\n");
        return 2;
    }
    int n = argc - optind;
    MonoImage **imgs = calloc((size_t)n, sizeof *imgs);
    if (!imgs)
        return 1;

    struct bench_sums s;
    memset(&s, 0, sizeof s);

    /* The least libmono needs before mono_image_open: the counters (else
     * each image open prints "counters not enabled"), the metadata type
     * tables and the loaded-images registry. No runtime, no JIT. */
    uint64_t t0 = bench_now_ns();
    mono_counters_init();
    mono_metadata_init();
    mono_images_init();
    uint64_t c1 = bench_cpu_ns(), t1 = bench_now_ns();
    int e = bench_mono_work(n, argv + optind, imgs, raw_only, &s);
    uint64_t t2 = bench_now_ns(), c2 = bench_cpu_ns();

    if (e == 0)
        bench_report("libmono",
                     raw_only == 2 ? "open"
                     : raw_only    ? "raw"
                                   : "full",
                     &s, t1 - t0, t2 - t1, c2 - c1);
    /* No mono_image_close: without the runtime initialised it updates
     * perf counters that were never allocated and crashes. Exit unmaps. */
    free(imgs);
    return e == 0 ? 0 : 1;
}
