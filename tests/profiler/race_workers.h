/* What race_wall.c and race_perf.c share: worker threads that register as
 * the runtime's do, live a while and end in one of three ways, started at
 * most RACE_LIVE_AT_ONCE at a time, and the log's stack records charged to
 * them by TID. Each test has its own worker's body and its own clock (wall
 * ticks, CPU time), read before the registration and after the last
 * possible sample: a worker's records must weigh no more than that. */
#ifndef MDP_TESTS_RACE_WORKERS_H
#define MDP_TESTS_RACE_WORKERS_H

#include <pthread.h>

#include "race.h"

#define RACE_MAX_WORKERS 1024
#define RACE_LIVE_AT_ONCE 8

struct race_worker {
    mdp_core *core;
    unsigned idx;
    int tid;
    uint64_t a, b; /* the test's clock before the registration, after the last sample */
    int how;       /* 0 ends and says so, 1 exits without a word, 2 says so and lives on */
    uint64_t rng;
};

static struct race_worker race_workers[RACE_MAX_WORKERS];
/* Workers started and not done: a worker's body ends by taking itself off. */
static _Atomic unsigned race_live;

/* Start n workers of core running fn (its argument: the struct
 * race_worker), each with its own generator and way to end drawn from
 * seed, at most RACE_LIVE_AT_ONCE alive; stops at a failure. Returns how
 * many started, their threads in th. */
static unsigned race_workers_start(mdp_core *core, pthread_t *th, unsigned n, uint64_t seed,
                                   void *(*fn)(void *), unsigned round)
{
    unsigned started = 0;
    uint64_t rng = seed;
    while (started < n && !atomic_load(&race_stop)) {
        if (atomic_load(&race_live) >= RACE_LIVE_AT_ONCE) {
            usleep(500);
            continue;
        }
        struct race_worker *w = &race_workers[started];
        memset(w, 0, sizeof *w);
        w->core = core;
        w->idx = started;
        w->rng = race_rand(&rng) | 1;
        w->how = (int)(race_rand(&rng) % 3);
        atomic_fetch_add(&race_live, 1);
        if (pthread_create(&th[started], NULL, fn, w) != 0) {
            atomic_fetch_sub(&race_live, 1);
            RACE_CHECK(0, "round %u: no thread", round);
            break;
        }
        started++;
    }
    return started;
}

/* The stack records of the log, each record's count charged to the worker
 * whose TID it names (got[i], for the first `started` workers): a record
 * of a TID no worker had is a failure. *stat gets the number after `key`
 * (" signals=") in #stats, 0 without it. Returns the sum of all counts. */
static uint64_t race_workers_charged(const char *log, unsigned round, unsigned started,
                                     uint64_t *got, const char *key, uint64_t *stat)
{
    uint64_t total = 0;
    memset(got, 0, started * sizeof *got);
    *stat = 0;
    FILE *f = fopen(log, "r");
    RACE_CHECK(f != NULL, "round %u: no log", round);
    char line[8192];
    while (f && fgets(line, sizeof line, f)) {
        if (!strncmp(line, "#stats ", 7)) {
            const char *s = strstr(line, key);
            if (s)
                *stat = strtoull(s + strlen(key), NULL, 10);
            continue;
        }
        if (strncmp(line, "stack ", 6))
            continue;
        char *end;
        uint64_t count = strtoull(line + 6, &end, 10);
        int tid = (int)strtol(end, NULL, 10);
        unsigned who = 0;
        while (who < started && race_workers[who].tid != tid)
            who++;
        RACE_CHECK(who < started, "round %u: a record of thread %d, no worker", round, tid);
        if (who < started)
            got[who] += count;
        total += count;
    }
    if (f)
        fclose(f);
    return total;
}

#endif
