/* mdinspect batch: progress on standard error when it is a terminal:
 * records so far, records per second, and when the input is a regular
 * file (its size known), the part read and the time left. Updated at most
 * four times a second, checked after each block of input written. */
#define _DEFAULT_SOURCE /* CLOCK_MONOTONIC, clock_gettime, off_t */
#include "config.h"

#include <stdio.h>
#include <sys/stat.h>
#include <talloc.h>
#include <time.h>
#include <unistd.h>

#include "batch/batch.h"

struct mdb_progress {
    double start, last;
    uint64_t size; /* 0: unknown */
    bool shown;
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

mdb_progress *mdb_progress_new(void *ctx, bool on, int input_fd)
{
    struct stat st;
    mdb_progress *p;
    if (!on || !isatty(STDERR_FILENO) || !(p = talloc_zero(ctx, mdb_progress)))
        return NULL;
    p->start = p->last = now();
    if (fstat(input_fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
        off_t pos = lseek(input_fd, 0, SEEK_CUR);
        p->size = (uint64_t)(st.st_size - (pos > 0 ? pos : 0));
    }
    return p;
}

void mdb_progress_tick(mdb_progress *p, uint64_t records, uint64_t consumed)
{
    double t;
    if (!p || (t = now()) - p->last < 0.25)
        return;
    p->last = t;
    double rate = (double)records / (t - p->start);
    fprintf(stderr, "\r\033[K" MDB_PROGNAME " batch: %llu records, %.0f records/s",
            (unsigned long long)records, rate);
    if (p->size && consumed <= p->size && consumed) {
        double left = (t - p->start) * (double)(p->size - consumed) / (double)consumed;
        fprintf(stderr, ", %.0f%%, %.0f s left", 100.0 * (double)consumed / (double)p->size, left);
    }
    p->shown = true;
}

void mdb_progress_done(mdb_progress *p, uint64_t records)
{
    if (p && p->shown)
        fprintf(stderr, "\r\033[K" MDB_PROGNAME " batch: %llu records in %.2f s\n",
                (unsigned long long)records, now() - p->start);
}
