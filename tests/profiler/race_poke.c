/* A poke that lands in the drain thread's narrowest window (drain.c): after
 * the thread has read its futex word for the next wait and before it says
 * it naps (drain_napping). Such a poke finds no napper to wake, so the
 * drain must see it before it waits; it used to wait out its whole period
 * instead (up to MDP_DRAIN_MAX_MS, 320 ms: a ring half full, or code the
 * adapter defers, left for that long).
 *
 * The window is a few instructions wide and no timing meets it at will, so
 * this test places the poke there: it interposes pthread_mutex_lock and
 * _unlock (the drain thread's pass ends by releasing drain_lock) and
 * clock_gettime (the only call between that release and the wait: the
 * wait's length, mdp_elapsed_ms), and when armed pokes from inside that
 * clock_gettime, on the drain thread itself. The drain has first backed
 * off to its longest period; each of five pokes must get its pass within
 * 100 ms.
 *
 * The same hooks ask for a write of the log, as a termination signal does
 * (flush_req, then a wake), at the end of a pass, after the pass has looked
 * for one: the wake must end the drain's next wait (its period 30 s) and
 * the write come within 1 s. It waited the 30 s: the futex word was read
 * after the pass, and the wake went into it. Not built with
 * ThreadSanitizer (its own interceptors of these calls).
 *
 * Usage: race_poke */
#define _GNU_SOURCE
#include "config.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "race.h"

static mdp_core *_Atomic core;      /* set while the hooks may poke it */
static _Atomic int armed;           /* poke at the drain's next window */
static _Atomic uint64_t poked_at;   /* CLOCK_MONOTONIC ns of that poke, 0 none yet */
static _Atomic unsigned poked_pass; /* the drain's passes then */
static _Atomic int armed_write;     /* ask for a write at the end of the next pass */
static _Atomic uint64_t write_want; /* the flush_req it asked for, 0 none yet */
static __thread int my_tid;
static __thread unsigned drain_depth; /* drain_lock held by this thread */
static __thread int in_window;        /* the drain thread released drain_lock last */

static int (*real_clock_gettime)(clockid_t, struct timespec *);
static int (*real_lock)(pthread_mutex_t *);
static int (*real_unlock)(pthread_mutex_t *);

static void resolve(void)
{
    if (!real_clock_gettime) {
        real_clock_gettime =
            (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
        real_lock = (int (*)(pthread_mutex_t *))dlsym(RTLD_NEXT, "pthread_mutex_lock");
        real_unlock = (int (*)(pthread_mutex_t *))dlsym(RTLD_NEXT, "pthread_mutex_unlock");
        if (!real_clock_gettime || !real_lock || !real_unlock)
            abort();
    }
}

static int on_drain_thread(void)
{
    mdp_core *c = core;
    if (!c)
        return 0;
    if (!my_tid)
        my_tid = (int)syscall(SYS_gettid);
    return my_tid == atomic_load(&c->drain_tid);
}

int pthread_mutex_lock(pthread_mutex_t *m)
{
    resolve();
    int r = real_lock(m);
    if (core && m == &core->drain_lock && on_drain_thread()) {
        drain_depth++;
        in_window = 0;
    }
    return r;
}

int pthread_mutex_unlock(pthread_mutex_t *m)
{
    resolve();
    if (core && m == &core->drain_lock && on_drain_thread() && drain_depth && !--drain_depth) {
        in_window = 1; /* the pass is over: next comes the wait */
        int one = 1;
        if (atomic_compare_exchange_strong(&armed_write, &one, 0)) {
            /* a write asked for once the pass has looked, as a termination
             * signal arriving here would (termsig.c) */
            atomic_store(&write_want, atomic_fetch_add(&core->writer->flush_req, 1) + 1);
            mdp_drain_wake(core);
        }
    }
    return real_unlock(m);
}

int clock_gettime(clockid_t id, struct timespec *ts)
{
    resolve();
    int r = real_clock_gettime(id, ts);
    if (in_window && on_drain_thread()) {
        in_window = 0;
        int one = 1;
        if (atomic_compare_exchange_strong(&armed, &one, 0)) {
            /* between reading the futex word and napping: poke now */
            struct timespec now;
            real_clock_gettime(CLOCK_MONOTONIC, &now);
            atomic_store(&poked_pass, core->stats.drain_cycles);
            atomic_store(&poked_at, (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec);
            mdp_drain_poke(core);
        }
    }
    return r;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static unsigned passes(void)
{
    pthread_mutex_lock(&core->drain_lock);
    unsigned n = core->stats.drain_cycles;
    pthread_mutex_unlock(&core->drain_lock);
    return n;
}

int main(void)
{
    resolve(); /* before any other thread */
    char log[600], err[256] = "";
    if (race_tmp_path(log, sizeof log, "poke.log") != 0)
        return 2;
    mdp_config cfg;
    mdp_config_default(&cfg);
    cfg.drain_ms = 20; /* the adaptive period: 20 ms up to 320 ms */
    cfg.all_threads = 0;
    snprintf(cfg.output, sizeof cfg.output, "%s", log);
    mdp_runtime_ops ops = {0};
    mdp_core *c;
    if (mdp_core_new(&c, &cfg, &ops, "test", 0, err, sizeof err) != 0) {
        fprintf(stderr, "race_poke: %s\n", err);
        return 2;
    }
    core = c;
    for (int round = 0; round < 5 && !atomic_load(&race_failures); round++) {
        usleep(1500000); /* nothing to drain: back off to the longest period */
        atomic_store(&poked_at, 0);
        atomic_store(&armed, 1);
        /* the poke comes at the end of the drain's next pass */
        uint64_t t0 = now_ns();
        while (!atomic_load(&poked_at) && now_ns() - t0 < 5000000000ull)
            usleep(1000);
        RACE_CHECK(atomic_load(&poked_at), "round %d: the drain thread made no pass in 5 s", round);
        if (!atomic_load(&poked_at))
            break;
        unsigned before = atomic_load(&poked_pass);
        while (passes() == before && now_ns() - atomic_load(&poked_at) < 2000000000ull)
            usleep(1000);
        double ms = (double)(now_ns() - atomic_load(&poked_at)) / 1e6;
        RACE_CHECK(ms < 100,
                   "round %d: a poke between the drain's read of its futex word and its nap "
                   "got its pass after %.0f ms (the period: it was missed)",
                   round, ms);
        printf("round %d: a poke in the drain's window got its pass after %.1f ms\n", round, ms);
    }
    core = NULL;
    mdp_core_finish(c, "exit");
    mdp_core_free(c);
    race_tmp_cleanup(log);

    /* A write asked for at the end of a pass (after mdp_log_tick looked)
     * with a wake, the drain's period 30 s: the wake must end the next
     * wait, and the write come within 1 s. */
    cfg.drain_ms = 30000;
    if (mdp_core_new(&c, &cfg, &ops, "test", 0, err, sizeof err) != 0) {
        fprintf(stderr, "race_poke: %s\n", err);
        return 2;
    }
    core = c;
    for (int round = 0; round < 3 && !atomic_load(&race_failures); round++) {
        atomic_store(&write_want, 0);
        atomic_store(&armed_write, 1);
        mdp_drain_wake(c); /* a pass now, at whose end the write is asked for */
        uint64_t t0 = now_ns();
        while (!atomic_load(&write_want) && now_ns() - t0 < 5000000000ull)
            usleep(1000);
        uint64_t want = atomic_load(&write_want);
        RACE_CHECK(want, "round %d: no pass in 5 s after a wake", round);
        if (!want)
            break;
        t0 = now_ns();
        while (atomic_load(&c->writer->flush_done) < want && now_ns() - t0 < 3000000000ull)
            usleep(1000);
        double ms = (double)(now_ns() - t0) / 1e6;
        RACE_CHECK(atomic_load(&c->writer->flush_done) >= want,
                   "round %d: a write asked for (and a wake) at the end of a pass not done "
                   "after %.0f ms: the wake was lost, the drain waits its 30 s period",
                   round, ms);
        printf("round %d: a write asked for at the end of a pass done after %.1f ms\n", round, ms);
    }
    core = NULL;
    mdp_core_finish(c, "exit");
    mdp_core_free(c);
    race_tmp_cleanup(log);
    race_tmp_done(log);
    return race_report("race_poke");
}
