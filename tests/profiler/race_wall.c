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

#include "race_workers.h"

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

/* a and b: wall ticks */
static void *worker_main(void *arg)
{
    struct race_worker *w = arg;
    mdp_core *core = w->core;
    w->tid = (int)syscall(SYS_gettid);
    uintptr_t rt = 0x10000u + 0x100u * w->idx; /* the runtime's thread, made up */
    w->a = mdp_wall_now(core);
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
    w->b = mdp_wall_now(core);
    if (w->how == 2) {
        /* live on with signals: late ones find the slot retired */
        pthread_sigmask(SIG_UNBLOCK, &prof, NULL);
        spin_or_sleep(&w->rng, 5 + (unsigned)(race_rand(&w->rng) % 20));
        pthread_sigmask(SIG_BLOCK, &prof, NULL);
    }
    atomic_fetch_sub(&race_live, 1);
    return NULL;
}

static void round_run(unsigned round, unsigned nworkers)
{
    char log[600];
    mdp_config cfg;
    mdp_config_default(&cfg);
    cfg.modes = MDP_MODE_WALL;
    cfg.rate = 1000;
    cfg.wall_budget = 100000; /* every active slot at every wake */
    cfg.all_threads = 0;
    cfg.flush_ms = 100;
    mdp_core *core;
    if (race_core_new(&core, log, sizeof log, "wall", round, &cfg) != 0)
        return;
    pthread_t th[RACE_MAX_WORKERS];
    unsigned started = race_workers_start(core, th, nworkers, 99 + round, worker_main, round);
    for (unsigned i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    mdp_core_finish(core, "exit");
    mdp_core_free(core);

    /* the log: per TID, the weights of its records */
    uint64_t got[RACE_MAX_WORKERS], sent, lived = 0;
    uint64_t total = race_workers_charged(log, round, started, got, " wall.sent=", &sent);
    unsigned sampled = 0;
    for (unsigned i = 0; i < started; i++) {
        struct race_worker *w = &race_workers[i];
        RACE_CHECK(got[i] <= w->b - w->a,
                   "round %u: worker %u (tid %d, ends %d) charged %llu ticks, lived %llu", round, i,
                   w->tid, w->how, (unsigned long long)got[i], (unsigned long long)(w->b - w->a));
        lived += w->b - w->a;
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
    if (n < 1 || n > RACE_MAX_WORKERS) {
        fprintf(stderr, "race_wall: 1 to %d workers\n", RACE_MAX_WORKERS);
        return 2;
    }
    for (unsigned r = 0; r < rounds && !atomic_load(&race_stop); r++)
        round_run(r, n);
    race_tmp_done(last_log);
    return race_report("race_wall");
}
