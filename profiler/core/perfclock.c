/* Sample mode's CPU clock on perf_events: per sampled thread, a software
 * task-clock event on that thread whose overflow, every 1/rate s of the
 * thread's CPU time, sends SIGPROF to that thread (the fd in O_ASYNC mode,
 * F_SETSIG SIGPROF, F_SETOWN_EX to the TID), and the choice between it
 * and the POSIX CPU-time timer (slots.c) that it replaces where it can.
 *
 * Why: the kernel checks CPU-time timers once per tick (HZ, 250 here), so
 * a timer at 1 kHz fires ~250 times a CPU second, each signal weighing
 * ~4 periods. The task clock is driven by an hrtimer while the thread
 * runs, so it fires at the rate asked (down to 10 us periods).
 *
 * The choice (--clock, config.c): perf, timer, auto (perf where the
 * kernel allows perf_event_open, else the timer), or adaptive (the
 * default: the timer, and perf for a thread it serves badly, below). The
 * timer alone opens no event. Otherwise, at the core's start one
 * event on the calling thread is opened and closed: it says whether
 * perf_event_open works here (perf_event_paranoid, a container's seccomp,
 * no CAP_PERFMON). The event counts kernel time too (exclude_kernel 0,
 * as the CPU-time timer counts user and system time, and a period that
 * ends inside a system call signals the thread as it returns, like the
 * timer) where that is allowed (perf_event_paranoid <= 1 or
 * CAP_PERFMON); else user time only triggers a signal (exclude_kernel 1:
 * paranoid 2 allows that to any user) and the periods that ended in the
 * kernel count toward the next sample's weight (below). The header says
 * which: cpu_clock=perf, perf_user or timer.
 *
 * The weight: a SIGPROF that comes while one is pending is lost (a
 * standard signal), and exclude_kernel drops the kernel's periods, so a
 * sample weighs the whole periods of the thread's CPU time since the
 * slot's last one (clock_gettime of CLOCK_THREAD_CPUTIME_ID: one system
 * call, as cheap as read(2) of the event's count; bench/profiler/README.md).
 * The thread's CPU clock, not the event's count: on the VM this was
 * measured on, under load, the task clock ran up to 16% ahead of the
 * scheduler's CPU time (what the timer, getrusage and `time` count), so
 * the signals come up to that much more often than the periods; a signal
 * less than half a period after the last sample's is then no sample
 * (#stats clock.short=), and the counts stay periods of 1/rate s of CPU
 * time, as with the timer.
 *
 * The handler finds a signal's slot from si_fd through fd_slot (a slot's
 * index + 1 per fd, written here under threads_lock, read by the handler
 * with an atomic load: no lock, no allocation); it then checks that the
 * slot is active and its TID is the thread's own (sampler.c), so a late
 * signal of a closed fd whose number another slot reuses is stray.
 *
 * File descriptors are counted against a cap: a quarter of RLIMIT_NOFILE's
 * soft limit (256 for the usual 1024), and at most half of what lies above
 * the first 256 (none under a limit of 258: the runtime needs its own), so
 * that a process with many threads is not pushed out of descriptors by its
 * profiler (at a limit of 48 it was, with a quarter alone); a thread
 * beyond the cap gets the timer (said once as a `#` line and counted in
 * #stats clock.capped=). A slot's fd is closed when it retires. */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/base.h"
#include "core/sampler.h"

/* fd -> slot index + 1 (0: not one of ours); an fd at or above the table's
 * end is closed and the thread gets the timer. 128 KB of zero pages until
 * used. */
#define PERF_FDS 65536u
static _Atomic uint16_t fd_slot[PERF_FDS];

static int perf_open(uint64_t period, int tid, int user_only)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_TASK_CLOCK;
    a.sample_period = period;
    a.disabled = 1;
    a.exclude_kernel = (unsigned)user_only;
    a.exclude_hv = 1;
    a.wakeup_events = 1; /* every overflow signals: no ring buffer is mapped */
    return (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

int mdp_perf_choose(mdp_core *core)
{
    core->clock = MDP_CLOCK_TIMER;
    core->perf_user = 0;
    core->perf_ok = 0;
    core->clock_why[0] = 0;
    core->perf_period = 1000000000u / (core->cfg.rate ? core->cfg.rate : 1);
    struct rlimit rl;
    rlim_t cur = getrlimit(RLIMIT_NOFILE, &rl) == 0 ? rl.rlim_cur : 1024;
    /* a quarter of the limit, and never one of the process's first 256
     * (half of what lies above them): at 48 the runtime ran out of fds */
    rlim_t cap = cur == RLIM_INFINITY ? MDP_MAX_THREADS : cur / 4;
    if (cur != RLIM_INFINITY && cap > (cur > 256 ? (cur - 256) / 2 : 0))
        cap = cur > 256 ? (cur - 256) / 2 : 0;
    core->perf_cap = cap > MDP_MAX_THREADS ? MDP_MAX_THREADS : (unsigned)cap;
    if (core->cfg.clock == MDP_CLOCK_TIMER)
        return 0; /* the timer alone asked for: no perf fd, no thread moves */
    /* Tests force the refusal that a container's seccomp or
     * perf_event_paranoid 3 would give (tests/profiler/perfclock.sh). */
    const char *t = getenv("MDPROFILE_TEST_PERF");
    int fd = -1, err = EACCES;
    if (!(t && strcmp(t, "refuse") == 0)) {
        fd = perf_open(core->perf_period, 0, 0);
        if (fd < 0 && (errno == EACCES || errno == EPERM)) {
            core->perf_user = 1; /* kernel time refused: user time may be allowed */
            fd = perf_open(core->perf_period, 0, 1);
        }
        err = errno;
    }
    if (fd >= 0) {
        close(fd);
        core->perf_ok = 1;
        /* adaptive (the default): the timer, perf only for threads it
         * serves badly (mdp_perf_move_sparse) */
        if (core->cfg.clock != MDP_CLOCK_ADAPTIVE)
            core->clock = MDP_CLOCK_PERF;
        return 0;
    }
    core->perf_user = 0;
    if (core->cfg.clock == MDP_CLOCK_ADAPTIVE)
        return 0; /* the default: the timer, nothing to say (no thread will move) */
    snprintf(core->clock_why, sizeof core->clock_why, "perf_event_open refused (%s)",
             strerror(err));
    if (core->cfg.clock == MDP_CLOCK_PERF)
        return -1;
    return 0;
}

const char *mdp_perf_clock_name(const mdp_core *core)
{
    if (core->clock != MDP_CLOCK_PERF)
        return "timer";
    return core->perf_user ? "perf_user" : "perf";
}

/* Whether `signals` standing for `periods` of CPU time came seldom: over
 * 6 ms of CPU and 1.5 periods a signal on average. */
static int sparse(const mdp_core *core, uint64_t periods, uint64_t signals)
{
    if (signals == 0 || core->cfg.rate == 0)
        return 0;
    double period_ms = 1000.0 / core->cfg.rate;
    double mean_ms = period_ms * (double)periods / (double)signals;
    return mean_ms > 6.0 && mean_ms > 1.5 * period_ms;
}

/* Under load the timer may come far less often than HZ: the kernel
 * checks a thread's CPU-time timer only at a tick that finds the thread
 * running, and on an oversubscribed machine many ticks find another. On a
 * 2-vCPU VM with four busy threads besides, a 1 kHz timer on a busy
 * thread gave 29-33 signals a CPU second (one covering up to 327 ms of
 * CPU), against 250 idle. The counts still add up to the CPU time, but a
 * short phase may get no stack. Where no thread could move to the perf
 * clock (mdp_perf_move_sparse: perf refused), the user is told at the end
 * how many stacks the time got, and which clock gives the rate asked: only
 * where the timer sampled all threads, a CPU second at least was sampled,
 * and the mean CPU time a stack stands for is over 6 ms and 1.5 periods
 * (250 Hz at rest gives 4 ms). */
void mdp_perf_sparse_note(mdp_core *core)
{
    if (core->sparse_noted ||
        (core->cfg.modes & (MDP_MODE_SAMPLE | MDP_MODE_WALL)) != MDP_MODE_SAMPLE ||
        core->clock == MDP_CLOCK_PERF || atomic_load(&core->perf_threads) != 0 ||
        atomic_load(&core->perf_moved) != 0 || core->cfg.rate == 0)
        return;
    uint64_t samples = core->stats.samples, signals = core->stats.signals;
    if (samples < core->cfg.rate || !sparse(core, samples, signals))
        return;
    double period_ms = 1000.0 / core->cfg.rate;
    double mean_ms = period_ms * (double)samples / (double)signals;
    core->sparse_noted = 1;
    /* --clock perf is advice only where perf was not found refused (with
     * --clock timer it was not asked) */
    int refused = core->cfg.clock != MDP_CLOCK_TIMER && !core->perf_ok;
    mdp_note(core,
             "%" PRIu64 " stacks for %.1f s of CPU time: one per %.1f ms on average, "
             "where %u Hz was asked (the timer clock is checked at the kernel's tick, "
             "and on a busy machine fewer ticks find a thread running); %s",
             signals, (double)samples * period_ms / 1000.0, mean_ms, core->cfg.rate,
             refused ? "perf_event_open, which would take one per period, is refused here"
                     : "--clock perf takes one per period");
}

/* Once a second, on the drain thread (threads_lock held): a thread whose
 * timer came seldom over its last 200 ms of CPU time (sparse(), as on a
 * busy machine: the kernel checks the timer only at ticks that find the
 * thread running) moves to a perf_events clock every 4 ms of its CPU
 * time, or every period when that is longer: as many stacks as the timer
 * gives at rest, whatever the load, at the perf signal's price (an
 * interrupt each: 24-33 us on a VM, ~0.7% of the thread at 250 a second).
 * Where perf_event_open is refused, beyond the cap on fds, or with
 * --clock timer (the timer alone: perf_ok stays 0), the thread keeps its
 * timer. The first move is said once, by mdp_perf_move_note after the
 * lock (the notes' convention: slots.c). */
#define MOVED_PERIOD_NS 4000000u
static uint64_t moved_period(const mdp_core *core)
{
    return core->perf_period > MOVED_PERIOD_NS ? core->perf_period : MOVED_PERIOD_NS;
}

double mdp_perf_move_sparse(mdp_core *core)
{
    unsigned moved = 0;
    double mean_ms = 0;
    for (unsigned i = 0, used = mdp_slots_used(); i < used; i++) {
        struct mdp_slot *t = &core->slots[i];
        uint64_t periods = t->win_periods, signals = t->win_signals;
        if (atomic_load(&t->state) != SLOT_ACTIVE) {
            t->win_periods = t->win_signals = 0; /* a slot's next thread starts afresh */
            continue;
        }
        /* judged on 200 ms of the thread's CPU time at least (50 signals at
         * rest), however many seconds that takes a thread that shares its
         * CPU: a mean over fewer says little */
        if (periods < (core->cfg.rate + 4) / 5)
            continue;
        t->win_periods = t->win_signals = 0;
        if (!t->has_timer || atomic_load(&t->perf_fd) != 0 || !core->perf_ok ||
            !sparse(core, periods, signals))
            continue;
        if (mdp_perf_start(core, t, atomic_load(&t->tid), moved_period(core)) != 0)
            continue;
        timer_delete(t->timer); /* a signal of it still pending is a sample all the same */
        t->has_timer = 0;
        atomic_fetch_sub(&core->timer_threads, 1);
        atomic_fetch_add(&core->perf_moved, 1);
        if (moved++ == 0)
            mean_ms = 1000.0 / core->cfg.rate * (double)periods / (double)signals;
    }
    if (!moved || core->move_noted)
        return 0;
    core->move_noted = 1;
    return mean_ms;
}

void mdp_perf_move_note(mdp_core *core, double mean_ms)
{
    if (mean_ms > 0)
        mdp_note(core,
                 "sampling: the CPU-time timer came once per %.1f ms of a thread's CPU time "
                 "(a busy machine: the kernel checks it at ticks that find the thread "
                 "running); such threads now sample on a perf_events clock every %.0f ms "
                 "of their CPU time",
                 mean_ms, moved_period(core) / 1e6);
}

int mdp_perf_start(mdp_core *core, struct mdp_slot *t, int tid, uint64_t period)
{
    if (period ? !core->perf_ok : core->clock != MDP_CLOCK_PERF)
        return -1;
    if (atomic_load(&core->perf_open) >= core->perf_cap)
        return period ? -1 : atomic_fetch_add(&core->perf_capped, 1) == 0 ? -2 : -1;
    int fd = perf_open(period ? period : core->perf_period, tid, core->perf_user);
    if (fd < 0)
        return -1;
    struct f_owner_ex own = {F_OWNER_TID, tid};
    if ((unsigned)fd >= PERF_FDS || fcntl(fd, F_SETFL, O_ASYNC) != 0 ||
        fcntl(fd, F_SETSIG, SIGPROF) != 0 || fcntl(fd, F_SETOWN_EX, &own) != 0) {
        close(fd);
        return -1;
    }
    /* the thread's CPU time now: the first sample weighs the periods since */
    struct timespec ts;
    t->perf_last = clock_gettime(mdp_thread_cpu_clock(tid), &ts) == 0
                       ? (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec
                       : 0;
    atomic_store(&t->perf_extra, 0);
    atomic_store(&t->perf_short, 0);
    t->perf_every =
        period && period > core->perf_period ? (uint32_t)(period / core->perf_period) : 1;
    atomic_store(&fd_slot[fd], (uint16_t)(t - core->slots + 1));
    atomic_store(&t->perf_fd, fd + 1);
    if (ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) != 0) {
        atomic_store(&t->perf_fd, 0);
        atomic_store(&fd_slot[fd], 0);
        close(fd);
        return -1;
    }
    atomic_fetch_add(&core->perf_open, 1);
    return 0;
}

void mdp_perf_stop(mdp_core *core, struct mdp_slot *t)
{
    int fd = atomic_exchange(&t->perf_fd, 0) - 1;
    if (fd < 0)
        return;
    /* A signal of this fd still pending finds no slot through fd_slot, or
     * (its number reused at once) a slot whose TID is not the thread's:
     * stray either way (sampler.c). */
    ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
    atomic_store(&fd_slot[fd], 0);
    close(fd);
    atomic_fetch_sub(&core->perf_open, 1);
}

unsigned mdp_perf_slot_of_fd(int fd)
{
    if (fd < 0 || (unsigned)fd >= PERF_FDS)
        return 0;
    return atomic_load_explicit(&fd_slot[fd], memory_order_acquire);
}

uint32_t mdp_perf_weight(const mdp_core *core, struct mdp_slot *t)
{
    struct timespec ts;
    uint64_t period = core->perf_period, now;
    if (period == 0 || clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return 1;
    now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    if (now < t->perf_last) {
        /* behind the periods already counted: no sample */
        atomic_fetch_add_explicit(&t->perf_short, 1, memory_order_relaxed);
        return 0;
    }
    /* whole periods of the thread's CPU time since the last sample, to the
     * nearest (the task clock and the CPU clock differ: above) */
    uint64_t w = (now - t->perf_last + period / 2) / period;
    if (w == 0) {
        atomic_fetch_add_explicit(&t->perf_short, 1, memory_order_relaxed);
        return 0;
    }
    if (w > 1u << 30)
        w = 1u << 30;
    t->perf_last += w * period;
    if (w > t->perf_every) /* beyond the periods between two signals */
        atomic_fetch_add_explicit(&t->perf_extra, w - t->perf_every, memory_order_relaxed);
    return (uint32_t)w;
}
