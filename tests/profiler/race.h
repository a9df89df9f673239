/* What the profiler's race tests share (race_seqs.c, race_drain.c,
 * race_wall.c, race_perf.c): a located failure that every thread may report (the first
 * few are printed, all are counted, and the threads are told to stop), a
 * small random generator per thread, a core made for a round of a test,
 * and the log's path in a temporary folder (race_workers.h: the workers of
 * race_wall.c and race_perf.c). Plain C with no test framework: the same
 * sources are built with ThreadSanitizer by run-race-tsan.sh. */
#ifndef MDP_TESTS_RACE_H
#define MDP_TESTS_RACE_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/core_int.h"

static _Atomic unsigned race_failures;
static _Atomic int race_stop; /* set by the first failure, and by the test at its end */

static void race_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void race_fail(const char *file, int line, const char *fmt, ...)
{
    unsigned n = atomic_fetch_add(&race_failures, 1);
    atomic_store(&race_stop, 1);
    if (n >= 10)
        return;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s:%d: FAIL: %s\n", file, line, buf);
}

#define RACE_CHECK(cond, ...)                                                                      \
    do {                                                                                           \
        if (!(cond))                                                                               \
            race_fail(__FILE__, __LINE__, __VA_ARGS__);                                            \
    } while (0)

/* xorshift64*: a thread's own sequence, seeded per thread and run */
static inline uint64_t race_rand(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1DULL;
}

/* A folder of the test's own under TMPDIR (or /tmp) for its logs: path
 * gets "DIR/NAME". 0, or -1 with a message. */
static int race_tmp_path(char *path, size_t len, const char *name)
{
    static char dir[512];
    if (!dir[0]) {
        const char *t = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/mdp-race-XXXXXX", t && *t ? t : "/tmp");
        if (!mkdtemp(dir)) {
            perror("mkdtemp");
            dir[0] = 0;
            return -1;
        }
    }
    snprintf(path, len, "%s/%s", dir, name);
    return 0;
}

static void race_tmp_cleanup(const char *path)
{
    unlink(path);
}

/* Remove the folder (once its logs are gone). */
static void race_tmp_done(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (slash) {
        char dir[512];
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
        rmdir(dir);
    }
}

/* A core for round `round` of a test from cfg, writing NAME-ROUND.log in
 * the test's folder (its path into log, and cfg's output), with no
 * runtime. 0, or -1 after a failed check (no folder, the core refused). */
static inline int race_core_new(mdp_core **core, char *log, size_t len, const char *name,
                                unsigned round, mdp_config *cfg)
{
    char file[64], err[256] = "";
    snprintf(file, sizeof file, "%s-%u.log", name, round);
    if (race_tmp_path(log, len, file) != 0) {
        RACE_CHECK(0, "no temporary folder");
        return -1;
    }
    snprintf(cfg->output, sizeof cfg->output, "%s", log);
    mdp_runtime_ops ops = {0};
    if (mdp_core_new(core, cfg, &ops, "test", 0, err, sizeof err) != 0) {
        RACE_CHECK(0, "round %u: %s", round, err);
        return -1;
    }
    return 0;
}

/* Returns 0 when every check passed (the process's exit status). */
static int race_report(const char *what)
{
    unsigned n = atomic_load(&race_failures);
    if (n)
        printf("%s: %u failed checks\n", what, n);
    else
        printf("%s: passed\n", what);
    return n ? 1 : 0;
}

#endif
