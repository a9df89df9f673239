/* Wall mode's thread signalling threads in turn (profiler/core/wall.c)
 * while threads come and go (sampler.c's slots, retired and taken again),
 * with the real SIGPROF handler taking the samples.
 *
 * Worker threads register themselves (mdp_ev_thread_start, as the
 * runtime's ThreadAssignedToOSThread does), live 1 to 40 ms, spinning and
 * sleeping by turns, and end in one of three ways: they say so
 * (mdp_ev_thread_end) and exit; they exit without a word (the slot stays
 * active with a dead TID until the drain thread's liveness check retires
 * it, and the wall thread's signals to it fail); or they say so and live on
 * a while (late signals find the slot retired, or taken by another thread:
 * the handler's TID check). Ended slots are freed and taken by later
 * workers, while the wall thread reads them.
 *
 * A sample's weight is the wall ticks since the thread's last sample
 * (mdp_wall_now, the slot's wall_seen set when the slot is taken), so a
 * worker that read the tick t_a before it registered and t_b after its last
 * possible sample (SIGPROF blocked first) has samples of at most t_b - t_a
 * ticks in the log, exactly: a sample charged to the wrong thread, or a
 * slot's old thread's time to its new one, breaks it. Every TID in the log
 * must be a worker's, and some samples must have been taken.
 *
 * Usage: race_wall [rounds] [workers per round]   (default 3, 120) */
#define _GNU_SOURCE
#include "config.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "race.h"

#define MAX_WORKERS 1024
#define LIVE_AT_ONCE 8

struct worker {
    mdp_core *core;
    unsigned idx;
    int tid;
    uint64_t t_a, t_b; /* wall ticks before the registration, after the last sample */
    int how;           /* 0 ends and says so, 1 exits without a word, 2 says so and lives on */
    uint64_t rng;
    _Atomic int done;
};

static struct worker workers[MAX_WORKERS];
static _Atomic unsigned live;
static char last_log[600]; /* a log's path in the test's folder */

static void spin_or_sleep(uint64_t *rng, unsigned ms)
{
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        if ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000 >= ms)
            return;
        if (race_rand(rng) & 1) {
            for (volatile unsigned k = 0; k < 20000; k++)
                ;
            sched_yield();
        } else {
            usleep(500); /* a signal may cut it short: so be it */
        }
    }
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    mdp_core *core = w->core;
    w->tid = (int)syscall(SYS_gettid);
    uintptr_t rt = 0x10000u + 0x100u * w->idx; /* the runtime's thread, made up */
    w->t_a = mdp_wall_now(core);
    int e = mdp_ev_thread_start(core, rt, w->tid);
    RACE_CHECK(e == 0, "worker %u: thread start: %d", w->idx, e);
    spin_or_sleep(&w->rng, 1 + (unsigned)(race_rand(&w->rng) % 40));
    sigset_t prof;
    sigemptyset(&prof);
    sigaddset(&prof, SIGPROF);
    if (w->how != 1)
        mdp_ev_thread_end(core, rt);
    /* no sample after this: the time a worker is charged ends here */
    pthread_sigmask(SIG_BLOCK, &prof, NULL);
    w->t_b = mdp_wall_now(core);
    if (w->how == 2) {
        /* live on with signals: late ones find the slot retired */
        pthread_sigmask(SIG_UNBLOCK, &prof, NULL);
        spin_or_sleep(&w->rng, 5 + (unsigned)(race_rand(&w->rng) % 20));
        pthread_sigmask(SIG_BLOCK, &prof, NULL);
    }
    atomic_store(&w->done, 1);
    atomic_fetch_sub(&live, 1);
    return NULL;
}

static void round_run(unsigned round, unsigned nworkers)
{
    char log[600], name[64], err[256] = "";
    snprintf(name, sizeof name, "wall-%u.log", round);
    if (race_tmp_path(log, sizeof log, name) != 0) {
        RACE_CHECK(0, "no temporary folder");
        return;
    }
    mdp_config cfg;
    mdp_config_default(&cfg);
    cfg.modes = MDP_MODE_WALL;
    cfg.rate = 1000;
    cfg.wall_budget = 100000; /* every active slot at every wake */
    cfg.all_threads = 0;
    cfg.flush_ms = 100;
    snprintf(cfg.output, sizeof cfg.output, "%s", log);
    mdp_runtime_ops ops = {0};
    mdp_core *core;
    if (mdp_core_new(&core, &cfg, &ops, "test", 0, err, sizeof err) != 0) {
        RACE_CHECK(0, "round %u: %s", round, err);
        return;
    }
    pthread_t th[MAX_WORKERS];
    unsigned started = 0;
    uint64_t rng = 99 + round;
    while (started < nworkers && !atomic_load(&race_stop)) {
        if (atomic_load(&live) >= LIVE_AT_ONCE) {
            usleep(500);
            continue;
        }
        struct worker *w = &workers[started];
        memset(w, 0, sizeof *w);
        w->core = core;
        w->idx = started;
        w->rng = race_rand(&rng) | 1;
        w->how = (int)(race_rand(&rng) % 3);
        atomic_fetch_add(&live, 1);
        if (pthread_create(&th[started], NULL, worker_main, w) != 0) {
            atomic_fetch_sub(&live, 1);
            RACE_CHECK(0, "round %u: no thread", round);
            break;
        }
        started++;
    }
    for (unsigned i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    mdp_core_finish(core, "exit");
    mdp_core_free(core);

    /* the log: per TID, the weights of its records */
    uint64_t got[MAX_WORKERS];
    memset(got, 0, sizeof got);
    uint64_t sent = 0, total = 0, lived = 0;
    FILE *f = fopen(log, "r");
    RACE_CHECK(f != NULL, "round %u: no log", round);
    char line[8192];
    while (f && fgets(line, sizeof line, f)) {
        if (!strncmp(line, "#stats ", 7)) {
            const char *s = strstr(line, " wall.sent=");
            if (s)
                sent = strtoull(s + 11, NULL, 10);
            continue;
        }
        if (strncmp(line, "stack ", 6))
            continue;
        char *end;
        uint64_t count = strtoull(line + 6, &end, 10);
        int tid = (int)strtol(end, NULL, 10);
        unsigned who = 0;
        while (who < started && workers[who].tid != tid)
            who++;
        RACE_CHECK(who < started, "round %u: a record of thread %d, no worker", round, tid);
        if (who < started)
            got[who] += count;
        total += count;
    }
    if (f)
        fclose(f);
    unsigned sampled = 0;
    for (unsigned i = 0; i < started; i++) {
        struct worker *w = &workers[i];
        RACE_CHECK(got[i] <= w->t_b - w->t_a,
                   "round %u: worker %u (tid %d, ends %d) charged %llu ticks, lived %llu", round, i,
                   w->tid, w->how, (unsigned long long)got[i],
                   (unsigned long long)(w->t_b - w->t_a));
        lived += w->t_b - w->t_a;
        sampled += got[i] > 0;
    }
    RACE_CHECK(sent > 0 && total > 0, "round %u: %llu signals sent, %llu ticks sampled", round,
               (unsigned long long)sent, (unsigned long long)total);
    printf("round %u: %u workers (%u sampled), %llu of their %llu ticks sampled, %llu signals "
           "sent\n",
           round, started, sampled, (unsigned long long)total, (unsigned long long)lived,
           (unsigned long long)sent);
    race_tmp_cleanup(log);
    snprintf(last_log, sizeof last_log, "%s", log);
}

int main(int argc, char **argv)
{
    unsigned rounds = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 3;
    unsigned n = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 120;
    if (n < 1 || n > MAX_WORKERS) {
        fprintf(stderr, "race_wall: 1 to %d workers\n", MAX_WORKERS);
        return 2;
    }
    for (unsigned r = 0; r < rounds && !atomic_load(&race_stop); r++)
        round_run(r, n);
    race_tmp_done(last_log);
    return race_report("race_wall");
}
