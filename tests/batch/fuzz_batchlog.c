/* libFuzzer harness for mdinspect batch as a whole, on one input: the
 * input (after its first byte) is the standard input of a run (run.c) in
 * one of the six formats, resolved against data/pdb: blocks of lines
 * read and scanned for processes (logctx.c: headers, #stats, #module,
 * logs cut and appended; with two threads, ranges of the input read by
 * the threads, of 1, 7, 300 bytes or the default by the input's size),
 * resolved, written in input order, summed
 * (--speedscope, --top, --pprof), the logs without #stats reported. The first
 * byte chooses the format, one thread or two, and a --pid filter. The
 * folders headers name are not walked (a fuzzer's header may name any
 * folder of this machine), but their values are decoded. Oracle besides
 * the sanitizers: text and JSON runs without --pid print exactly one line
 * per input line. Built for libFuzzer with --enable-fuzzing and always as
 * a replayer (tests/fuzz/replay.c) that `make check` runs over
 * tests/batch/corpus/batchlog/. */

#define _GNU_SOURCE /* memfd_create */
#include "config.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <talloc.h>
#include <unistd.h>

#include "batch/batch.h"
#include "batch/native.h"
#include "paths.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int devnull = -1;
static FILE *devnull_file;

/* A file in memory holding the bytes (read back from its start). */
static int memfile(const void *p, size_t n)
{
    int fd = memfd_create("fuzz_batchlog", MFD_CLOEXEC);
    const char *c = p;
    if (fd < 0)
        abort();
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w <= 0)
            abort();
        c += w;
        n -= (size_t)w;
    }
    lseek(fd, 0, SEEK_SET);
    return fd;
}

static uint64_t newlines(int fd)
{
    char buf[65536];
    uint64_t n = 0;
    ssize_t k;
    lseek(fd, 0, SEEK_SET);
    while ((k = read(fd, buf, sizeof buf)) > 0)
        n += mdb_count_newlines(buf, (size_t)k);
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const int formats[] = {MDB_TEXT, MDB_JSON, MDB_FOLDED, MDB_SPEEDSCOPE,
                                  MDB_TOP,  MDB_TEXT, MDB_JSON,   MDB_PPROF};
    char dir[1024];
    char *paths[1];
    void *ctx;
    mdb_assemblies *a;
    mdb_logctx *lc;
    mdb_run_opts o = {0};
    mdb_budget budget;
    mdb_run_result res;
    mdb_output out;
    int in, outfd;
    if (size < 1 || size > (4u << 20))
        return 0;
    if (devnull < 0) {
        devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
        devnull_file = fopen("/dev/null", "w");
        if (devnull < 0 || !devnull_file)
            abort();
    }
    paths[0] = (char *)src_path(dir, sizeof dir, "data/pdb");
    ctx = talloc_new(NULL);
    if (!ctx || !(a = mdb_assemblies_new(ctx, paths, 1, false, NULL)) ||
        !(lc = mdb_logctx_new(ctx, a, false)) || mdb_output_init(&out, ctx, devnull))
        abort();
    o.format = formats[data[0] & 7];
    o.threads =
        (data[0] & 8) && o.format != MDB_SPEEDSCOPE && o.format != MDB_TOP && o.format != MDB_PPROF
            ? 2
            : 1;
    o.pid_only = (data[0] & 0x30) == 0x30;
    o.pid = (data[0] >> 6) * 100; /* 0, 100, 200, 300: the pids of the seeds */
    if ((data[0] & 0x30) == 0x10 && o.format != MDB_TEXT && o.format != MDB_JSON) {
        /* --thread, --from, --to (filter.c): by a name of the seeds, or a
         * TID when bit 6 is set */
        o.filter.on = true;
        o.filter.thread = (data[0] & 0x40) ? "101" : "Worker-A";
        o.filter.has_tid = (data[0] & 0x40) != 0;
        o.filter.tid = 101;
        o.filter.has_from = o.filter.has_to = true;
        o.filter.from = 0.5;
        o.filter.to = 3;
    }
    o.lc = lc;
    /* native frames and #elf lines (native.c); the debug folder is the
     * tree's, so only paths an input names are read */
    char dbg[1024];
    char *dbgs[1] = {(char *)src_path(dbg, sizeof dbg, "data/pdb")};
    if (!(o.natives = mdb_natives_new(ctx, dbgs, 1)))
        abort();
    /* 1 MiB: the threads' caches start over every few hundred frames */
    mdb_budget_init(&budget, (size_t)1 << 20, o.threads);
    o.budget = &budget;
    if ((o.format == MDB_SPEEDSCOPE || o.format == MDB_TOP || o.format == MDB_PPROF) &&
        !(o.agg = mdb_aggregate_new(ctx, o.format, 5, o.filter.has_from ? o.filter.from : 0)))
        abort();
    /* Two threads read the memfd (a regular file) in ranges (run.c): the
     * input's size picks their size, a few bytes to the default, so that
     * range edges fall inside lines, headers and long lines. */
    if (o.threads > 1) {
        static const char *const ranges[] = {"1", "7", "300", ""};
        setenv("MDINSPECT_BATCH_RANGE", ranges[size & 3], 1);
    }
    in = memfile(data + 1, size - 1);
    outfd = memfile("", 0);
    o.in_fd = in;
    o.out_fd = outfd;
    o.err_fd = devnull;
    mdb_run(ctx, a, &o, &res);
    if (o.agg && !res.nomem) {
        mdb_aggregate_write(o.agg, &out);
        mdb_output_flush(&out);
    }
    mdb_assemblies_finish(a);
    mdb_logctx_report(lc, devnull_file, o.pid_only, o.pid);
    if ((o.format == MDB_TEXT || o.format == MDB_JSON) && !o.pid_only && !res.nomem &&
        !res.read_error && !res.write_error) {
        uint64_t want = mdb_count_newlines((const char *)data + 1, size - 1) +
                        (size > 1 && data[size - 1] != '\n');
        uint64_t got = newlines(outfd);
        if (got != want) {
            fprintf(stderr, "format %d: %llu output lines for %llu input lines\n", o.format,
                    (unsigned long long)got, (unsigned long long)want);
            abort();
        }
    }
    close(in);
    close(outfd);
    talloc_free(ctx);
    return 0;
}
