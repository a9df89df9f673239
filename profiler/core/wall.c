/* Wall-clock mode (`--mode wall`, issue 27): every sampled thread is
 * sampled at the rate in wall time, running or blocked, and each sample
 * says what the thread was doing (a state, the leaf of its stack).
 *
 * A CPU-time timer per thread (sample mode, sampler.c) never fires for a
 * thread that waits, so wall mode has one clock instead: a thread of its
 * own (`wall`, not sampled, all signals blocked) sleeps on CLOCK_MONOTONIC
 * (clock_nanosleep to an absolute time: no drift) and at each wake sends
 * SIGPROF to the next threads of the slot table, round robin, with
 * rt_tgsigqueueinfo: si_code SI_QUEUE, the slot in si_value, as a timer's
 * signal carries it, so the same handler finds the same ring. Signals are
 * sent from a normal thread, never from a handler.
 *
 * The signal budget. Signalling every thread at every period would make
 * 1,000 idle threads cost 1,000 wakeups a period; so at most `budget`
 * signals a second are sent (cfg.wall_budget, MDPROFILE_WALL_BUDGET,
 * 2,000 by default), spread over the wakes. Time is counted in ticks of
 * 1/rate s since the core started, derived from the monotonic clock (a
 * late wake loses nothing); each slot remembers the tick of its last
 * sample (`wall_seen`, set when the slot is taken), and the handler takes
 * as the sample's weight the ticks since then (an atomic exchange): a
 * thread sampled every k ticks has samples of weight k, so every thread's
 * counts sum to its wall time in periods of 1/rate s whatever the budget,
 * and a signal that could not be delivered at once (SIGPROF is a standard
 * signal: one pending per thread at most, the others merge into it) loses
 * no time either. The header says `clock=wall budget=N`.
 *
 * The state. A thread blocked in a system call and interrupted by the
 * signal runs the handler on the way out of the kernel, and its registers
 * say so: the kernel either rewound RIP onto the `syscall` instruction
 * (0f 05) with RAX back to the call's number (a call it restarts after the
 * handler: SA_RESTART is set, sampler.c, so read(), write(), futex waits
 * without a timeout and the like go on unseen by the host), or left RIP
 * after it with RAX = -EINTR (calls the kernel never restarts: nanosleep,
 * poll, epoll_wait, futex waits with a timeout return EINTR, as they do
 * under any signal; the runtime and .NET's native shims retry them). The
 * handler reads those two words and at most two code bytes at RIP, all
 * async-signal-safe; the drain then names the state from that and the
 * stack: in a system call with Monitor.Wait (or another known wait) as
 * the nearest managed frames, `waiting:Monitor.Wait`; Thread.Sleep,
 * `sleeping`; another call, `syscall`; else `running` when the leaf is
 * managed code, `native` when it is not. /proc/self/task/TID/stat was
 * the other way: the wall thread would read it for every thread before
 * signalling (an open, a read and a close per sample: the handler may not
 * open files), and the state could change between the read and the
 * signal; the registers are the state at the sample's instant, for free.
 * Frame names of managed waits come from the map (frames.c), once per
 * method. */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "core/base.h"
#include "core/sampler.h"

#define WALL_MIN_PERIOD_NS 1000000ull /* the wall thread wakes at most 1,000 times a second */

/* The managed methods whose frame, near the leaf of a thread blocked in a
 * system call, says what it waits for: the reflection name's class and
 * method (mdt_idmap_function_name's `Class::Method`), and the state. */
static const struct {
    const char *cls, *method, *state;
} waits[] = {
    {"System.Threading.Monitor", "Wait", "waiting:Monitor.Wait"},
    {"System.Threading.Monitor", "ObjWait", "waiting:Monitor.Wait"},
    {"System.Threading.Monitor", "Enter", "waiting:Monitor.Enter"},
    {"System.Threading.Monitor", "ReliableEnter", "waiting:Monitor.Enter"},
    {"System.Threading.Monitor", "ReliableEnterTimeout", "waiting:Monitor.Enter"},
    {"System.Threading.Monitor", "TryEnter", "waiting:Monitor.Enter"},
    {"System.Threading.Lock", "Enter", "waiting:Lock.Enter"},
    {"System.Threading.Lock", "EnterAndGetCurrentThreadId", "waiting:Lock.Enter"},
    {"System.Threading.Thread", "Sleep", "sleeping"},
    {"System.Threading.Thread", "SleepInternal", "sleeping"},
    {"System.Threading.Thread", "Join", "waiting:Thread.Join"},
    {"System.Threading.WaitHandle", "WaitOne", "waiting:WaitHandle.WaitOne"},
    {"System.Threading.WaitHandle", "WaitOneNoCheck", "waiting:WaitHandle.WaitOne"},
    {"System.Threading.WaitHandle", "WaitAny", "waiting:WaitHandle.WaitAny"},
    {"System.Threading.WaitHandle", "WaitAll", "waiting:WaitHandle.WaitAll"},
    {"System.Threading.WaitHandle", "WaitMultipleIgnoringSyncContext",
     "waiting:WaitHandle.WaitAny"},
    {"System.Threading.ManualResetEventSlim", "Wait", "waiting:ManualResetEventSlim.Wait"},
    {"System.Threading.SemaphoreSlim", "Wait", "waiting:SemaphoreSlim.Wait"},
    {"System.Threading.Tasks.Task", "Wait", "waiting:Task.Wait"},
    {"System.Threading.LowLevelLifoSemaphore", "Wait", "waiting:LowLevelLifoSemaphore.Wait"},
    {"System.Threading.LowLevelLifoSemaphore", "WaitForSignal",
     "waiting:LowLevelLifoSemaphore.Wait"},
    {"System.Threading.LowLevelLifoSemaphore", "WaitNative", "waiting:LowLevelLifoSemaphore.Wait"},
};

int mdp_wall_wait_of(const char *name)
{
    /* `Class::Method`, maybe with type arguments after either: compare the
     * class up to "::" and the method up to '<' or the end */
    const char *sep = name ? strstr(name, "::") : NULL;
    if (!sep)
        return 0;
    const char *m = sep + 2;
    size_t ml = strcspn(m, "<(");
    for (size_t i = 0; i < sizeof waits / sizeof waits[0]; i++)
        if ((size_t)(sep - name) == strlen(waits[i].cls) &&
            !memcmp(name, waits[i].cls, (size_t)(sep - name)) && ml == strlen(waits[i].method) &&
            !memcmp(m, waits[i].method, ml))
            return (int)i + 1;
    return 0;
}

const char *mdp_wall_wait_state(int wait)
{
    return wait > 0 && (size_t)wait <= sizeof waits / sizeof waits[0] ? waits[wait - 1].state
                                                                      : NULL;
}

/* In the handler: whether the interrupted thread was in a system call
 * (MDP_WALL_SYSCALL, with the call's number + 1 in bits 16 and up when the
 * kernel will restart it). Reads RIP and RAX and at most two code bytes at
 * RIP or before it within RIP's page, only where RIP lies in an ELF
 * object's executable segment (the code table below: libc's and the
 * runtime's system call wrappers are there; JIT-compiled code makes no
 * system call, and memory mapped execute-only through protection keys
 * could not be read). A `syscall` split across a page boundary before RIP
 * is not looked at. */
uint64_t mdp_wall_state_signal_safe(const mdp_core *core, const void *ucv)
{
    const ucontext_t *uc = ucv;
    uintptr_t ip = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
    long ax = (long)uc->uc_mcontext.gregs[REG_RAX];
    if (ip < 4096 || !mdp_wall_code_signal_safe(core, ip) ||
        !mdp_wall_code_signal_safe(core, ip + 1))
        return 0;
    const volatile uint8_t *p = (const volatile uint8_t *)ip;
    if (p[0] == 0x0f && p[1] == 0x05) /* rewound to restart: RAX is the call's number */
        return MDP_WALL_SYSCALL | (ax >= 0 && ax < 4096 ? (uint64_t)(ax + 1) << 16 : 0);
    if ((ip & 4095) >= 2 && ax == -EINTR && p[-2] == 0x0f && p[-1] == 0x05)
        return MDP_WALL_SYSCALL; /* interrupted, returning EINTR */
    return 0;
}

/* The executable segments of the loaded ELF objects, sorted, for the
 * handler's check that a return address found by a stack scan is code
 * (sampler.c, saved_fp): built by the wall thread (dl_iterate_phdr, a
 * normal thread), published whole through an atomic pointer, rebuilt
 * when the loader's counters of objects added and removed change. Old
 * tables stay on a list until the core goes (a handler may still read
 * one): a rebuild per dlopen or dlclose, a few hundred bytes each. */
struct code_table {
    struct code_table *older;
    size_t n, cap;
    struct {
        uintptr_t lo, hi;
    } r[];
};

struct mdp_wall {
    pthread_t thread;
    int started;
    struct code_table *_Atomic code;
    unsigned long long adds, subs;
    _Atomic int stop;
    uint64_t sent, failed,
        wakes; /* the wall thread's own (read after it is joined or racily for #stats) */
    _Atomic uint64_t sent_pub, failed_pub;
};

static int count_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct code_table *t = arg;
    (void)size;
    for (unsigned i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        if (t->n < t->cap) {
            t->r[t->n].lo = (uintptr_t)(info->dlpi_addr + ph->p_vaddr);
            t->r[t->n].hi = t->r[t->n].lo + ph->p_memsz;
        }
        t->n++;
    }
    return 0;
}

static int by_lo(const void *a, const void *b)
{
    uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
    return (x > y) - (x < y);
}

static int counters_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    unsigned long long *c = arg;
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
        c[0] = info->dlpi_adds;
        c[1] = info->dlpi_subs;
    }
    return 1; /* the counters are the same in every entry: the first will do */
}

/* Rebuild the code table when objects came or went (wall thread). */
static void code_refresh(struct mdp_wall *w)
{
    unsigned long long c[2] = {0, 0};
    dl_iterate_phdr(counters_cb, c);
    if (atomic_load(&w->code) && c[0] == w->adds && c[1] == w->subs)
        return;
    struct code_table probe = {0};
    dl_iterate_phdr(count_cb, &probe);
    size_t cap = probe.n + 16;
    struct code_table *t = malloc(sizeof *t + cap * sizeof t->r[0]);
    if (!t)
        return;
    t->n = 0;
    t->cap = cap;
    dl_iterate_phdr(count_cb, t);
    if (t->n > cap)
        t->n = cap; /* objects loaded between the two passes: the next refresh */
    qsort(t->r, t->n, sizeof t->r[0], by_lo);
    t->older = atomic_load(&w->code);
    atomic_store_explicit(&w->code, t, memory_order_release);
    w->adds = c[0];
    w->subs = c[1];
}

int mdp_wall_code_signal_safe(const mdp_core *core, uintptr_t ip)
{
    const struct mdp_wall *w = core->wall;
    const struct code_table *t = w ? atomic_load_explicit(&w->code, memory_order_acquire) : NULL;
    if (!t)
        return 0;
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ip < t->r[mid].lo)
            hi = mid;
        else if (ip >= t->r[mid].hi)
            lo = mid + 1;
        else
            return 1;
    }
    return 0;
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t mdp_wall_now(const mdp_core *core)
{
    return atomic_load_explicit(&core->wall_ticks, memory_order_relaxed);
}

static void *wall_main(void *arg)
{
    mdp_core *core = arg;
    struct mdp_wall *w = core->wall;
    atomic_store(&core->wall_tid, (int)syscall(SYS_gettid));
    uint64_t rate = core->cfg.rate;
    uint64_t period = 1000000000u / rate;
    if (period < WALL_MIN_PERIOD_NS)
        period = WALL_MIN_PERIOD_NS;
    /* signals per wake: the budget spread over the wakes, the fraction
     * carried over so that a budget below the wake rate is kept too */
    uint64_t budget = core->cfg.wall_budget ? core->cfg.wall_budget : MDP_WALL_BUDGET;
    uint64_t carry = 0;
    uint64_t t0 =
        (uint64_t)core->start_mono.tv_sec * 1000000000u + (uint64_t)core->start_mono.tv_nsec;
    uint64_t next = mono_ns();
    unsigned cursor = 0;
    int pid = getpid(), uid = (int)getuid();
    uint64_t last_refresh = 0;
    while (!atomic_load(&w->stop)) {
        next += period;
        struct timespec ts = {(time_t)(next / 1000000000u), (long)(next % 1000000000u)};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
            ;
        uint64_t now = mono_ns();
        if (now > next + 4 * period)
            next = now; /* woken late (a busy machine): no burst to catch up */
        w->wakes++;
        if (now - last_refresh >= 1000000000u) {
            code_refresh(w); /* about once a second */
            last_refresh = now;
        }
        uint64_t ticks =
            now > t0 ? (uint64_t)((unsigned __int128)(now - t0) * rate / 1000000000u) : 0;
        atomic_store_explicit(&core->wall_ticks, ticks, memory_order_relaxed);
        if (!core->slots || atomic_load(&core->finished))
            continue;
        carry += budget * period;
        uint64_t n = carry / 1000000000u;
        carry %= 1000000000u;
        unsigned used = mdp_slots_used();
        int self = atomic_load(&core->wall_tid), drain = atomic_load(&core->drain_tid);
        for (unsigned seen = 0; n && seen < used; seen++) {
            struct mdp_slot *t = &core->slots[cursor];
            cursor = cursor + 1 < used ? cursor + 1 : 0;
            int tid = atomic_load(&t->tid);
            if (atomic_load_explicit(&t->state, memory_order_acquire) != SLOT_ACTIVE || tid <= 0 ||
                tid == self || tid == drain)
                continue;
            /* nothing owed yet (a slot taken this tick) */
            if (atomic_load_explicit(&t->wall_seen, memory_order_relaxed) >= ticks)
                continue;
            siginfo_t si;
            memset(&si, 0, sizeof si);
            si.si_signo = SIGPROF;
            si.si_code = SI_QUEUE;
            si.si_pid = pid;
            si.si_uid = (uid_t)uid;
            si.si_value.sival_ptr = t;
            n--;
            if (syscall(SYS_rt_tgsigqueueinfo, pid, tid, SIGPROF, &si) == 0)
                w->sent++;
            else
                w->failed++; /* ESRCH: the thread ended (housekeeping retires its slot) */
        }
        atomic_store_explicit(&w->sent_pub, w->sent, memory_order_relaxed);
        atomic_store_explicit(&w->failed_pub, w->failed, memory_order_relaxed);
    }
    return NULL;
}

int mdp_wall_start(mdp_core *core, char *err, size_t errlen)
{
    struct mdp_wall *w = calloc(1, sizeof *w);
    if (!w) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    core->wall = w;
    code_refresh(w); /* before any signal: the runtime and libc are loaded */
    /* the wall thread takes no signal of the process, as the drain thread */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int e = pthread_create(&w->thread, NULL, wall_main, core);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (e) {
        snprintf(err, errlen, "cannot start the wall-clock thread: %s", strerror(e));
        return -1;
    }
    w->started = 1;
    return 0;
}

void mdp_wall_stop(mdp_core *core)
{
    struct mdp_wall *w = core->wall;
    if (!w || !w->started)
        return;
    atomic_store(&w->stop, 1);
    if (!pthread_equal(pthread_self(), w->thread))
        pthread_join(w->thread, NULL);
    else
        pthread_detach(w->thread);
    w->started = 0;
}

void mdp_wall_stats(const mdp_core *core, char *buf, size_t len)
{
    const struct mdp_wall *w = core->wall;
    if (!w) {
        buf[0] = 0;
        return;
    }
    snprintf(buf, len, " wall.sent=%llu wall.failed=%llu",
             (unsigned long long)atomic_load(&w->sent_pub),
             (unsigned long long)atomic_load(&w->failed_pub));
}

void mdp_wall_free(mdp_core *core)
{
    mdp_wall_stop(core);
    if (core->wall)
        for (struct code_table *t = atomic_load(&core->wall->code), *o; t; t = o) {
            o = t->older;
            free(t);
        }
    free(core->wall);
    core->wall = NULL;
}

int mdp_wall_mode(const mdp_core *core)
{
    return (core->cfg.modes & MDP_MODE_WALL) != 0;
}
