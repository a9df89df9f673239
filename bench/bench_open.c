/* bench_open: what reading files into memory (the default of
 * mdt_image_open_file, safe against truncation) costs against mapping them
 * (MDT_OPEN_MAP) and against reading only what is needed (MDT_OPEN_LAZY:
 * headers and metadata at open, the rest on first need), on the same files
 * in the same process. Each round opens every file named on the command
 * line, keeps all of them open, optionally reads every row of every table
 * (ECMA-335 II.24.2.6) by its raw cells, then frees them all; rounds
 * rotate the order of the three ways so that all see the same machine.
 * Prints the median wall and CPU time (user + system: the copy happens in
 * the kernel, which an instruction count of the process does not see) of
 * each way with the spread (lowest-highest), their ratios, and the
 * resident memory a round adds.
 *
 * Usage: bench_open [-w] [-n rounds] file...
 *   -w  also read every row of every table (raw cells) after opening
 *   -n  rounds per way (default 15) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <talloc.h>

#include <mdtools/mdtools.h>

#include "common.h"

/* Resident set size now, in KiB (/proc/self/statm). */
static long rss_kb(void)
{
    long pages = -1, resident = -1;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
            resident = -1;
        fclose(f);
    }
    return resident < 0 ? -1 : resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static uint64_t walk_raw(const mdt_image *img)
{
    uint64_t sum = 0;
    for (unsigned t = 0; t < MDT_TABLE_MAX; t++) {
        const mdt_table_schema *ts = mdt_table_schema_get(t);
        uint32_t n = ts ? mdt_table_rows(img, t) : 0;
        for (uint32_t rid = 1; rid <= n; rid++) {
            mdt_row r;
            if (mdt_row_get(&r, img, t, rid) != 0)
                break;
            for (unsigned c = 0; c < ts->ncols; c++)
                sum += mdt_row_raw(&r, c);
        }
    }
    return sum;
}

struct round {
    uint64_t wall_ns, cpu_ns, sum;
    long rss_kb;
};

static int one_round(int n, char **paths, unsigned flags, int walk, struct round *out)
{
    void *ctx = talloc_new(NULL);
    long rss0 = rss_kb();
    uint64_t c0 = bench_cpu_ns(), t0 = bench_now_ns(), sum = 0;
    for (int i = 0; i < n; i++) {
        mdt_image *img;
        if (mdt_image_open_file(ctx, &img, paths[i], flags) != 0) {
            char msg[512];
            fprintf(stderr, "bench_open: %s\n", mdt_error_message(msg, sizeof msg));
            talloc_free(ctx);
            return -1;
        }
        if (walk)
            sum += walk_raw(img);
    }
    out->wall_ns = bench_now_ns() - t0;
    out->cpu_ns = bench_cpu_ns() - c0;
    out->rss_kb = rss_kb() - rss0;
    out->sum = sum;
    talloc_free(ctx);
    return 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static uint64_t median(uint64_t *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_u64);
    return v[n / 2];
}

int main(int argc, char **argv)
{
    int walk = 0, rounds = 15, opt;
    while ((opt = getopt(argc, argv, "wn:")) != -1) {
        if (opt == 'w') {
            walk = 1;
        } else if (opt == 'n' && atoi(optarg) > 0) {
            rounds = atoi(optarg);
        } else {
            fprintf(stderr, "usage: bench_open [-w] [-n rounds] file...\n");
            return 2;
        }
    }
    int nfiles = argc - optind;
    if (nfiles <= 0) {
        fprintf(stderr, "usage: bench_open [-w] [-n rounds] file...\n");
        return 2;
    }
    enum { NWAYS = 3 };
    static const unsigned how[NWAYS] = {0, MDT_OPEN_MAP, MDT_OPEN_LAZY};
    static const char *const name[NWAYS] = {"read", "map", "lazy"};
    uint64_t *wall[NWAYS], *cpu[NWAYS], sum[NWAYS] = {0, 0, 0};
    long rss[NWAYS] = {0, 0, 0};
    for (int k = 0; k < NWAYS; k++) {
        wall[k] = calloc((size_t)rounds, sizeof *wall[k]);
        cpu[k] = calloc((size_t)rounds, sizeof *cpu[k]);
        if (!wall[k] || !cpu[k])
            return 1;
    }
    struct round r;
    /* One untimed round of each: the page cache holds every file after it. */
    for (int k = 0; k < NWAYS; k++)
        if (one_round(nfiles, argv + optind, how[k], walk, &r))
            return 1;
    for (int i = 0; i < rounds; i++)
        for (int k0 = 0; k0 < NWAYS; k0++) {
            int k = (i + k0) % NWAYS; /* rotate which way goes first */
            if (one_round(nfiles, argv + optind, how[k], walk, &r))
                return 1;
            wall[k][i] = r.wall_ns;
            cpu[k][i] = r.cpu_ns;
            sum[k] = r.sum;
            if (r.rss_kb > rss[k])
                rss[k] = r.rss_kb;
        }
    if (sum[0] != sum[1] || sum[0] != sum[2]) {
        fprintf(stderr, "bench_open: the ways read different cells\n");
        return 1;
    }
    uint64_t mw[NWAYS], mc[NWAYS];
    for (int k = 0; k < NWAYS; k++) {
        mw[k] = median(wall[k], rounds); /* sorts: [0] and [rounds - 1] are the spread */
        mc[k] = median(cpu[k], rounds);
        printf("way=%s files=%d walk=%d rounds=%d wall_ms=%.2f cpu_ms=%.2f (%.2f-%.2f) "
               "rss_kb=%ld\n",
               name[k], nfiles, walk, rounds, mw[k] / 1e6, mc[k] / 1e6, cpu[k][0] / 1e6,
               cpu[k][rounds - 1] / 1e6, rss[k]);
        free(wall[k]);
        free(cpu[k]);
    }
    printf("read/map: wall %.2fx, cpu %.2fx\n", (double)mw[0] / (double)mw[1],
           (double)mc[0] / (double)mc[1]);
    printf("lazy/read: wall %.2fx, cpu %.2fx; lazy/map: wall %.2fx, cpu %.2fx\n",
           (double)mw[2] / (double)mw[0], (double)mc[2] / (double)mc[0],
           (double)mw[2] / (double)mw[1], (double)mc[2] / (double)mc[1]);
    return 0;
}
