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
 * The choice (--clock, config.c): perf, timer, or auto (perf where the
 * kernel allows perf_event_open, else the timer). At the core's start one
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
 * standard signal), and exclude_kernel drops the kernel's periods, so the
 * handler reads the event's count (read(2) of the fd: the thread's CPU
 * ns since the event was enabled, one system call, ~0.3 us against the
 * walk's few us: bench/profiler/README.md) and weighs the sample by the
 * whole periods since the slot's last one. Counts stay in periods of
 * 1/rate s of CPU time, as with the timer.
 *
 * The handler finds a signal's slot from si_fd through fd_slot (a slot's
 * index + 1 per fd, written here under threads_lock, read by the handler
 * with an atomic load: no lock, no allocation); it then checks that the
 * slot is active and its TID is the thread's own (sampler.c), so a late
 * signal of a closed fd whose number another slot reuses is stray.
 *
 * File descriptors are counted against a cap: a quarter of RLIMIT_NOFILE's
 * soft limit (256 for the usual 1024), so that a process with many
 * threads is not pushed out of descriptors by its profiler; a thread
 * beyond the cap gets the timer (said once as a `#` line and counted in
 * #stats clock.capped=). A slot's fd is closed when it retires. */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/base.h"
#include "core/sampler.h"

/* fd -> slot index + 1 (0: not one of ours); an fd at or above the table's
 * end is closed and the thread gets the timer. 128 KB of zero pages until
 * used. */
#define PERF_FDS 65536u
static _Atomic uint16_t fd_slot[PERF_FDS];

static int perf_open(const mdp_core *core, int tid, int user_only)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_TASK_CLOCK;
    a.sample_period = core->perf_period;
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
    core->clock_why[0] = 0;
    core->perf_period = 1000000000u / (core->cfg.rate ? core->cfg.rate : 1);
    if (core->cfg.clock == MDP_CLOCK_TIMER)
        return 0;
    struct rlimit rl;
    rlim_t cur = getrlimit(RLIMIT_NOFILE, &rl) == 0 ? rl.rlim_cur : 1024;
    core->perf_cap =
        cur == RLIM_INFINITY || cur / 4 > MDP_MAX_THREADS ? MDP_MAX_THREADS : (unsigned)(cur / 4);
    /* Tests force the refusal that a container's seccomp or
     * perf_event_paranoid 3 would give (tests/profiler/perfclock.sh). */
    const char *t = getenv("MDPROFILE_TEST_PERF");
    int fd = -1, err = EACCES;
    if (!(t && strcmp(t, "refuse") == 0)) {
        fd = perf_open(core, 0, 0);
        if (fd < 0 && (errno == EACCES || errno == EPERM)) {
            core->perf_user = 1; /* kernel time refused: user time may be allowed */
            fd = perf_open(core, 0, 1);
        }
        err = errno;
    }
    if (fd >= 0) {
        close(fd);
        core->clock = MDP_CLOCK_PERF;
        return 0;
    }
    core->perf_user = 0;
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

int mdp_perf_start(mdp_core *core, struct mdp_slot *t, int tid)
{
    if (core->clock != MDP_CLOCK_PERF)
        return -1;
    if (atomic_load(&core->perf_open) >= core->perf_cap)
        return atomic_fetch_add(&core->perf_capped, 1) == 0 ? -2 : -1;
    int fd = perf_open(core, tid, core->perf_user);
    if (fd < 0)
        return -1;
    struct f_owner_ex own = {F_OWNER_TID, tid};
    if ((unsigned)fd >= PERF_FDS || fcntl(fd, F_SETFL, O_ASYNC) != 0 ||
        fcntl(fd, F_SETSIG, SIGPROF) != 0 || fcntl(fd, F_SETOWN_EX, &own) != 0) {
        close(fd);
        return -1;
    }
    t->perf_last = 0; /* the count starts at 0 when the event is enabled */
    atomic_store(&t->perf_extra, 0);
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
    /* A handler inside the slot may still read this fd: after the close
     * that read fails (weight 1) or, if the number is reused at once, gives
     * a count the weight's bounds reject (mdp_perf_weight). */
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
    int fd = atomic_load_explicit(&t->perf_fd, memory_order_relaxed) - 1;
    uint64_t count, period = core->perf_period;
    if (fd < 0 || period == 0 || read(fd, &count, sizeof count) != (ssize_t)sizeof count ||
        count < t->perf_last || count - t->perf_last > (uint64_t)period << 30)
        return 1;
    /* whole periods since the last sample, to the nearest: the hrtimer's
     * expiry and the count differ by its slack */
    uint64_t w = (count - t->perf_last + period / 2) / period;
    if (w == 0)
        w = 1;
    t->perf_last += w * period;
    if (w > 1)
        atomic_fetch_add_explicit(&t->perf_extra, w - 1, memory_order_relaxed);
    return (uint32_t)w;
}
