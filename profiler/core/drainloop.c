/* The drain thread (the top of profiler/core, with the lifetime: README.md):
 * every period it lets the adapter do its deferred work, drains the rings
 * (drain.c), does the sampler's housekeeping and the thread scan, writes
 * the log when a write is due, and ends an attached session after its
 * duration or its number of samples.
 *
 * Its period adapts: a pass costs tens of microseconds even with nothing to
 * drain (the wakeup, the scans), 50 a second in a process that mostly
 * waits (a `dotnet build`'s MSBuild and compiler processes live 8-23 s,
 * bench/profiler/README.md). So while the rings are nearly empty at each
 * pass (under 1/16 of a ring) the period doubles, up to MDP_DRAIN_MAX_MS;
 * a ring over 1/4 full halves it, and anything that must not wait brings
 * the base period back at once, waking the thread when it waits longer
 * than that: a ring half full (the signal handler, long before the ring
 * could drop a sample: a full walk needs 767 of its 16,384 words), code
 * the adapter must record at the next tick; a termination signal and the
 * core's end (mdp_drain_stop) wake it whatever it waits for. The
 * launcher's `stop` (channel.h) is read at the next pass: at most
 * MDP_DRAIN_MAX_MS later. The thread waits on a futex
 * with the period as its timeout; waking it is an atomic add and a futex
 * system call, both async-signal-safe. What runs by time rather than by
 * pass (the thread scan every 500 ms, the liveness check every second)
 * counts milliseconds, not passes; a session's duration bounds the wait. */
#define _GNU_SOURCE
#include "config.h"

#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/base.h"
#include "core/native.h"
#include "core/sampler.h"
#include "core/aggregate.h"
#include "core/drain.h"
#include "core/log.h"
#include "core/lifetime.h"

/* Wait up to ms for a wake that came after seq was read. */
static void drain_wait(mdp_core *core, uint32_t seq, unsigned ms, int may_nap)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    /* napping set after seq was read: a poke that finds it set bumps the
     * word, so the futex call returns at once rather than miss the wake;
     * a poke that came before it was set found no napper and woke nobody:
     * its drain_poked is seen here instead, and there is no wait (it used
     * to wait out the whole period, up to MDP_DRAIN_MAX_MS:
     * tests/profiler/race_poke.c pokes in that window) */
    atomic_store(&core->drain_napping, may_nap);
    if (!atomic_load(&core->life->drain_stop) && !(may_nap && atomic_load(&core->drain_poked)))
        syscall(SYS_futex, (uint32_t *)&core->drain_seq, FUTEX_WAIT_PRIVATE, seq, &ts, NULL, 0);
    atomic_store(&core->drain_napping, 0);
}

/* The next period after a pass that found a ring at most fill/64 full. */
static unsigned next_period(mdp_core *core, unsigned period, unsigned base, uint64_t fill)
{
    if (base >= MDP_DRAIN_MAX_MS)
        return base; /* a period set longer (tests): kept as it is */
    if (atomic_exchange(&core->drain_poked, 0) || mdp_term_signal(core) || core->cfg.max_samples)
        return base; /* a session of N samples ends at the base period's pace */
    if (fill > 16)
        return period / 2 > base ? period / 2 : base;
    if (fill < 4)
        return 2 * period < MDP_DRAIN_MAX_MS ? 2 * period : MDP_DRAIN_MAX_MS;
    return period;
}

/* The wait before the next pass: the period, cut short by a session's end
 * when the period is the adaptive one (a period set longer, as tests do,
 * is kept exactly: the drain then runs only at its end). The log's writes
 * (every flush_ms, 2 s) need no bound: at most MDP_DRAIN_MAX_MS late. */
static unsigned wait_ms(mdp_core *core, unsigned period, unsigned base)
{
    uint64_t now = mdp_elapsed_ms(core), ms = period;
    if (base < MDP_DRAIN_MAX_MS && core->cfg.duration_ms) {
        if (now >= core->cfg.duration_ms)
            ms = 1;
        else if (core->cfg.duration_ms - now < ms)
            ms = core->cfg.duration_ms - now;
    }
    return ms ? (unsigned)ms : 1;
}

/* Why an attached session is over, or NULL. Its duration is wall time; its
 * number of samples is CPU time of the process at the rate, which a busy
 * machine does not shorten (what a test needs, and who wants a profile of
 * a given weight). */
static const char *session_over(mdp_core *core)
{
    if (mdp_stop_requested(core))
        return "stopped by mdprofile";
    if (core->cfg.max_samples && core->stats.samples >= core->cfg.max_samples)
        return "samples reached";
    if (core->cfg.duration_ms && mdp_elapsed_ms(core) >= core->cfg.duration_ms)
        return "duration reached";
    return NULL;
}

static void *drain_main(void *arg)
{
    mdp_core *core = arg;
    atomic_store(&core->drain_tid, (int)syscall(SYS_gettid));
    unsigned base = core->cfg.drain_ms ? core->cfg.drain_ms : MDP_DRAIN_MS, period = base;
    uint64_t last_alive = 0, last_scan = 0;
    int scanned = 0;
    /* The futex word is read before each pass, not after it: a wake that
     * comes while a pass runs (a termination signal's write asked for once
     * the pass has looked) ends the next wait at once. Read after the
     * pass, it was lost until the period ran out (tests/profiler/
     * race_poke.c asks for a write at the end of a pass). The first wait
     * is on the word as the core made it (0), so that a wake that came
     * before this thread ran ends it too. */
    uint32_t seq = 0;
    while (!atomic_load(&core->life->drain_stop)) {
        /* a poke wakes only a wait longer than the base period: at the
         * base period a JIT-heavy process would otherwise be woken at
         * every method whose code it defers (hundreds a second) */
        unsigned ms = wait_ms(core, period, base);
        drain_wait(core, seq, ms, ms > base);
        if (atomic_load(&core->life->drain_stop))
            break;
        seq = atomic_load(&core->drain_seq);
        if (core->ops.tick && mdp_ops_live(core))
            core->ops.tick(core->ops.payload);
        pthread_mutex_lock(&core->drain_lock);
#ifdef MDP_BENCH_CLOCK
        struct timespec d0, d1;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &d0);
#endif
        mdp_drain_take_fill(core); /* from this pass on */
        mdp_drain_all(core);
#ifdef MDP_BENCH_CLOCK
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &d1);
        atomic_fetch_add(
            &core->stats.bench_drain_all_ns,
            (uint64_t)((d1.tv_sec - d0.tv_sec) * 1000000000L + d1.tv_nsec - d0.tv_nsec));
#endif
        core->stats.drain_cycles++;
        uint64_t now = mdp_elapsed_ms(core);
        int alive = now - last_alive >= 1000;
        if (alive)
            last_alive = now;
        mdp_sampler_housekeeping(core, alive);
        if (!scanned || now - last_scan >= 500) {
            mdp_threads_scan(core); /* threads the runtime does not report (threads.c) */
            last_scan = now;
            scanned = 1;
        }
        mdp_log_tick(core);
#ifdef MDP_BENCH_CLOCK
        /* bench builds only: this thread's CPU time so far */
        struct timespec cpu;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
        atomic_store(&core->stats.bench_drain_ns,
                     (uint64_t)cpu.tv_sec * 1000000000u + (uint64_t)cpu.tv_nsec);
        /* and its page faults (its heap's growth, first touches) */
        struct rusage ru;
        if (getrusage(RUSAGE_THREAD, &ru) == 0)
            atomic_store(&core->stats.bench_drain_minflt, (uint64_t)ru.ru_minflt);
#endif
        const char *over = session_over(core);
        period = next_period(core, period, base, mdp_drain_take_fill(core));
        pthread_mutex_unlock(&core->drain_lock);
        if (over) {
            mdp_log(core, "%s: writing the log", over);
            mdp_core_finish(core, "detach");
            break;
        }
    }
    return NULL;
}

int mdp_drain_start(mdp_core *core, char *err, size_t errlen)
{
    /* The drain thread takes no signal of the process (SIGPROF is
     * thread-directed anyway; this keeps the host's signals on its threads). */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int e = pthread_create(&core->life->drain_thread, NULL, drain_main, core);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (e) {
        snprintf(err, errlen, "cannot start the drain thread: %s", strerror(e));
        return -1;
    }
    core->life->drain_started = 1;
    return 0;
}

void mdp_drain_stop(mdp_core *core)
{
    if (!core->life->drain_started)
        return;
    atomic_store(&core->life->drain_stop, 1);
    mdp_drain_wake(core);
    /* the drain thread itself (an attached session that ended) is joined
     * by mdp_core_free, so that nothing of it runs once the core is gone */
    if (!pthread_equal(pthread_self(), core->life->drain_thread))
        mdp_drain_join(core);
}

void mdp_drain_join(mdp_core *core)
{
    if (!core->life->drain_started)
        return;
    if (pthread_equal(pthread_self(), core->life->drain_thread)) {
        pthread_detach(core->life->drain_thread);
    } else {
        atomic_store(&core->life->drain_stop, 1);
        mdp_drain_wake(core);
        pthread_join(core->life->drain_thread, NULL);
    }
    core->life->drain_started = 0;
}
