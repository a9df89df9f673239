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

#include "race.h"

#define MAX_WORKERS 1024
#define LIVE_AT_ONCE 8

struct worker {
    mdp_core *core;
    unsigned idx;
    int tid;
    uint64_t c_a, c_b; /* the thread's CPU ns before the registration, after the last sample */
    int how;           /* 0 ends and says so, 1 exits without a word, 2 says so and spins on */
    uint64_t rng;
};

static struct worker workers[MAX_WORKERS];
static _Atomic unsigned live;
static char last_log[600];

/* The system call itself, not libc's clock_gettime: under ASan the
 * sanitizer's interceptors run without frame records, and a handler's
 * frame-pointer walk from inside one may read a frame's redzone (a real
 * stack word, reported all the same). The worker also makes its signal
 * set before it registers, and masks signals with the system call. */
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

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    mdp_core *core = w->core;
    w->tid = (int)syscall(SYS_gettid);
    uintptr_t rt = 0x10000u + 0x100u * w->idx;
    sigset_t prof;
    sigemptyset(&prof);
    sigaddset(&prof, SIGPROF);
    w->c_a = cpu_ns();
    int e = mdp_ev_thread_start(core, rt, w->tid);
    RACE_CHECK(e == 0, "worker %u: thread start: %d", w->idx, e);
    spin(1 + (unsigned)(race_rand(&w->rng) % 30));
    if (w->how != 1)
        mdp_ev_thread_end(core, rt);
    mask(SIG_BLOCK, &prof);
    w->c_b = cpu_ns();
    if (w->how == 2) {
        mask(SIG_UNBLOCK, &prof);
        spin(2 + (unsigned)(race_rand(&w->rng) % 10));
        mask(SIG_BLOCK, &prof);
    }
    atomic_fetch_sub(&live, 1);
    return NULL;
}

static int round_run(unsigned round, unsigned nworkers)
{
    char log[600], name[64], err[256] = "";
    snprintf(name, sizeof name, "perf-%u.log", round);
    if (race_tmp_path(log, sizeof log, name) != 0) {
        RACE_CHECK(0, "no temporary folder");
        return -1;
    }
    mdp_config cfg;
    mdp_config_default(&cfg);
    cfg.modes = MDP_MODE_SAMPLE;
    cfg.rate = 1000;
    cfg.clock = MDP_CLOCK_AUTO;
    cfg.all_threads = 0;
    cfg.flush_ms = 100;
    snprintf(cfg.output, sizeof cfg.output, "%s", log);
    mdp_runtime_ops ops = {0};
    mdp_core *core;
    if (mdp_core_new(&core, &cfg, &ops, "test", 0, err, sizeof err) != 0) {
        RACE_CHECK(0, "round %u: %s", round, err);
        return -1;
    }
    if (core->clock != MDP_CLOCK_PERF) {
        printf("race_perf: skipped: %s\n", core->clock_why);
        mdp_core_finish(core, "exit");
        mdp_core_free(core);
        race_tmp_cleanup(log);
        snprintf(last_log, sizeof last_log, "%s", log);
        return 77;
    }
    pthread_t th[MAX_WORKERS];
    unsigned started = 0;
    uint64_t rng = 7 + round;
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
    uint64_t period = core->perf_period;
    mdp_core_finish(core, "exit");
    mdp_core_free(core);
    int left = perf_fds();
    RACE_CHECK(left == 0, "round %u: %d perf fds open after the core finished", round, left);

    uint64_t got[MAX_WORKERS];
    memset(got, 0, sizeof got);
    uint64_t total = 0, signals = 0;
    FILE *f = fopen(log, "r");
    RACE_CHECK(f != NULL, "round %u: no log", round);
    char line[8192];
    while (f && fgets(line, sizeof line, f)) {
        if (!strncmp(line, "#stats ", 7)) {
            const char *s = strstr(line, " signals=");
            if (s)
                signals = strtoull(s + 9, NULL, 10);
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
    uint64_t lived = 0;
    for (unsigned i = 0; i < started; i++) {
        struct worker *w = &workers[i];
        uint64_t most = (w->c_b - w->c_a) / period + 1;
        RACE_CHECK(got[i] <= most,
                   "round %u: worker %u (tid %d, ends %d) charged %llu periods, ran %llu at most",
                   round, i, w->tid, w->how, (unsigned long long)got[i], (unsigned long long)most);
        lived += (w->c_b - w->c_a) / period;
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
    if (n < 1 || n > MAX_WORKERS) {
        fprintf(stderr, "race_perf: 1 to %d workers\n", MAX_WORKERS);
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
