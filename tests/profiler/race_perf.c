/* Sample mode's perf_events clocks (profiler/core/perfclock.c) while
 * threads come and go (slots.c's slots, retired and taken again, their
 * fds closed and their numbers reused), with the real SIGPROF handler
 * finding each signal's slot through its fd.
 *
 * Worker threads register themselves (mdp_ev_thread_start), spin 1 to 30
 * ms of CPU time, and end in one of three ways, as race_wall.c's: they say
 * so and exit; they exit without a word (the drain thread's liveness check
 * retires the slot and closes its fd); or they say so and spin on a while
 * (late signals of the closed fd, or of a number another slot took since,
 * must find no slot or one whose TID is not theirs: stray, never a sample
 * of another thread).
 *
 * A sample weighs the whole periods of the thread's CPU time since its
 * last one (from the CPU time at its registration), so a worker that read
 * its CPU time c_a before it registered and c_b after its last possible
 * sample (SIGPROF blocked first) has samples of at most (c_b - c_a) / period
 * + 1 periods (the rounding) in the log: a sample charged to the wrong
 * thread breaks it. Every TID in the log must be a worker's, some samples
 * must have been taken, and no perf fd may be open once the core is
 * finished. Exits 77 where perf_event_open is refused (nothing to race).
 *
 * Usage: race_perf [rounds] [workers per round]   (default 3, 120) */
#define _GNU_SOURCE
#include "config.h"

#include <dirent.h>
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

static char last_log[600];

/* The system call itself, not libc's clock_gettime: under ASan the
 * sanitizer's interceptors run without frame records, and a handler's
 * frame-pointer walk from inside one may read a frame's redzone (a real
 * stack word). The handler's reads are unchecked now (mdp_stack_word,
 * core/unwind.h; test_core's test_walk_reads_stack_words_asan_poisoned),
 * but this test is about clocks and slots, not walks, so its workers
 * stay out of interceptors while signalled. The worker also makes its
 * signal set before it registers, and masks signals with the system call. */
static uint64_t cpu_ns(void)
{
    struct timespec ts;
    syscall(SYS_clock_gettime, CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void spin(unsigned ms)
{
    uint64_t t0 = cpu_ns();
    while (cpu_ns() - t0 < ms * 1000000ull)
        for (volatile unsigned k = 0; k < 2000; k++)
            ;
}

static int perf_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    int n = 0;
    struct dirent *de;
    char path[300], link[64];
    while ((de = readdir(d))) {
        snprintf(path, sizeof path, "/proc/self/fd/%s", de->d_name);
        ssize_t k = readlink(path, link, sizeof link - 1);
        if (k > 0) {
            link[k] = 0;
            n += strstr(link, "perf_event") != NULL;
        }
    }
    closedir(d);
    return n;
}

/* rt_sigprocmask itself, for the same reason as cpu_ns (ASan intercepts
 * pthread_sigmask) */
static void mask(int how, const sigset_t *set)
{
    syscall(SYS_rt_sigprocmask, how, set, NULL, 8);
}

/* a and b: the thread's CPU ns; a worker that ends in way 2 spins on */
static void *worker_main(void *arg)
{
    struct race_worker *w = arg;
    mdp_core *core = w->core;
    w->tid = (int)syscall(SYS_gettid);
    uintptr_t rt = 0x10000u + 0x100u * w->idx;
    sigset_t prof;
    sigemptyset(&prof);
    sigaddset(&prof, SIGPROF);
    w->a = cpu_ns();
    int e = mdp_ev_thread_start(core, rt, w->tid);
    RACE_CHECK(e == 0, "worker %u: thread start: %d", w->idx, e);
    spin(1 + (unsigned)(race_rand(&w->rng) % 30));
    if (w->how != 1)
        mdp_ev_thread_end(core, rt);
    mask(SIG_BLOCK, &prof);
    w->b = cpu_ns();
    if (w->how == 2) {
        mask(SIG_UNBLOCK, &prof);
        spin(2 + (unsigned)(race_rand(&w->rng) % 10));
        mask(SIG_BLOCK, &prof);
    }
    atomic_fetch_sub(&race_live, 1);
    return NULL;
}

static int round_run(unsigned round, unsigned nworkers)
{
    char log[600];
    mdp_config cfg;
    mdp_config_default(&cfg);
    cfg.modes = MDP_MODE_SAMPLE;
    cfg.rate = 1000;
    cfg.clock = MDP_CLOCK_AUTO;
    cfg.all_threads = 0;
    cfg.flush_ms = 100;
    mdp_core *core;
    if (race_core_new(&core, log, sizeof log, "perf", round, &cfg) != 0)
        return -1;
    if (core->clock != MDP_CLOCK_PERF) {
        printf("race_perf: skipped: %s\n", core->clock_why);
        mdp_core_finish(core, "exit");
        mdp_core_free(core);
        race_tmp_cleanup(log);
        snprintf(last_log, sizeof last_log, "%s", log);
        return 77;
    }
    pthread_t th[RACE_MAX_WORKERS];
    unsigned started = race_workers_start(core, th, nworkers, 7 + round, worker_main, round);
    for (unsigned i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    uint64_t period = core->perf_period;
    mdp_core_finish(core, "exit");
    mdp_core_free(core);
    int left = perf_fds();
    RACE_CHECK(left == 0, "round %u: %d perf fds open after the core finished", round, left);

    uint64_t got[RACE_MAX_WORKERS], signals, lived = 0;
    uint64_t total = race_workers_charged(log, round, started, got, " signals=", &signals);
    for (unsigned i = 0; i < started; i++) {
        struct race_worker *w = &race_workers[i];
        uint64_t most = (w->b - w->a) / period + 1;
        RACE_CHECK(got[i] <= most,
                   "round %u: worker %u (tid %d, ends %d) charged %llu periods, ran %llu at most",
                   round, i, w->tid, w->how, (unsigned long long)got[i], (unsigned long long)most);
        lived += (w->b - w->a) / period;
    }
    RACE_CHECK(total > 0, "round %u: no sample", round);
    printf("round %u: %u workers, %llu of their %llu periods sampled, %llu signals\n", round,
           started, (unsigned long long)total, (unsigned long long)lived,
           (unsigned long long)signals);
    race_tmp_cleanup(log);
    snprintf(last_log, sizeof last_log, "%s", log);
    return 0;
}

int main(int argc, char **argv)
{
    unsigned rounds = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 3;
    unsigned n = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 120;
    if (n < 1 || n > RACE_MAX_WORKERS) {
        fprintf(stderr, "race_perf: 1 to %d workers\n", RACE_MAX_WORKERS);
        return 2;
    }
    for (unsigned r = 0; r < rounds && !atomic_load(&race_stop); r++)
        if (round_run(r, n) == 77) {
            race_tmp_done(last_log);
            return 77;
        }
    race_tmp_done(last_log);
    return race_report("race_perf");
}
