/* Shared by bench_md.c and bench_mono.c: the sums both sides compute over
 * every cell of every metadata table (ECMA-335 II.22, II.24.2.6), the clock,
 * the peak-RSS probe and the one-line report run.sh parses. Both programs
 * print the same keys so their sums can be compared field by field. */
#ifndef MDT_BENCH_COMMON_H
#define MDT_BENCH_COMMON_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>

#include <mdtools/tables.h>

/* What the walk adds up. raw_other sums the raw value of every cell that is
 * not a heap index (constants, table, list and coded indexes); raw_all sums
 * every cell's raw value, heap indexes included (the raw-only variant). */
struct bench_sums {
    uint64_t files;
    uint64_t rows;
    uint64_t cells;
    uint64_t str_bytes;  /* strlen of every #Strings cell */
    uint64_t blob_bytes; /* length of every #Blob cell */
    uint64_t guid_bytes; /* 16 for every non-nil #GUID cell */
    uint64_t guid_sum;   /* sum of those GUID bytes, to prove they were read */
    uint64_t raw_other;
    uint64_t raw_all;
    uint64_t errors; /* cells one side refused to decode */
};

/* A non-nil GUID cell: 16 bytes, and their values summed to prove they
 * were read. */
static inline void bench_guid(struct bench_sums *l, const uint8_t *g)
{
    l->guid_bytes += 16;
    for (int i = 0; i < 16; i++)
        l->guid_sum += g[i];
}

/* A walk keeps its sums in a local struct (the compiler keeps its fields
 * in registers) and adds them to the caller's at the end. */
static inline void bench_sums_add(struct bench_sums *s, const struct bench_sums *l)
{
    s->rows += l->rows;
    s->cells += l->cells;
    s->str_bytes += l->str_bytes;
    s->blob_bytes += l->blob_bytes;
    s->guid_bytes += l->guid_bytes;
    s->guid_sum += l->guid_sum;
    s->raw_other += l->raw_other;
    s->raw_all += l->raw_all;
    s->errors += l->errors;
}

/* A table's columns grouped by what the walk does with them, taken from the
 * mdtools schema (static data) before a table is walked. Both sides use the
 * same plan, so the loop overhead around the library calls is identical
 * and as small as it can be: no per-cell switch, sums kept in locals. */
#define BENCH_MAX_COLS 16
struct bench_plan {
    unsigned ncols, n_str, n_blob, n_guid, n_other;
    uint8_t str[BENCH_MAX_COLS], blob[BENCH_MAX_COLS], guid[BENCH_MAX_COLS], other[BENCH_MAX_COLS];
};

static inline void bench_plan_make(struct bench_plan *p, const mdt_table_schema *ts)
{
    p->ncols = ts->ncols;
    p->n_str = p->n_blob = p->n_guid = p->n_other = 0;
    for (unsigned c = 0; c < ts->ncols && c < BENCH_MAX_COLS; c++) {
        switch (ts->cols[c].kind) {
        case MDT_COLK_STR: p->str[p->n_str++] = (uint8_t)c; break;
        case MDT_COLK_BLOB: p->blob[p->n_blob++] = (uint8_t)c; break;
        case MDT_COLK_GUID: p->guid[p->n_guid++] = (uint8_t)c; break;
        default: p->other[p->n_other++] = (uint8_t)c; break;
        }
    }
}

static inline uint64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CPU time of the process: unlike wall time, it does not grow while the
 * process waits for a CPU on a busy machine. */
static inline uint64_t bench_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline long bench_maxrss_kb(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : -1;
}

/* One line of key=value pairs. Variant is "full" or "raw". */
static inline void bench_report(const char *side, const char *variant, const struct bench_sums *s,
                                uint64_t init_ns, uint64_t work_ns, uint64_t cpu_ns)
{
    printf("side=%s variant=%s files=%" PRIu64 " rows=%" PRIu64 " cells=%" PRIu64
           " str_bytes=%" PRIu64 " blob_bytes=%" PRIu64 " guid_bytes=%" PRIu64 " guid_sum=%" PRIu64
           " raw_other=%" PRIu64 " raw_all=%" PRIu64 " errors=%" PRIu64 " init_ns=%" PRIu64
           " work_ns=%" PRIu64 " cpu_ns=%" PRIu64 " maxrss_kb=%ld\n",
           side, variant, s->files, s->rows, s->cells, s->str_bytes, s->blob_bytes, s->guid_bytes,
           s->guid_sum, s->raw_other, s->raw_all, s->errors, init_ns, work_ns, cpu_ns,
           bench_maxrss_kb());
}

#endif
