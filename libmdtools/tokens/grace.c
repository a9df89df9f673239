/* Reader sections and deferred free for the runtime-ID maps. Readers (also
 * in signal handlers) must never wait, lock or allocate, yet memory they may
 * be reading (an old table after growth, a replaced type-argument array, a
 * code-range leaf) must not be freed under them.
 *
 * Each thread gets a reader slot index once (a process-wide registry, claimed
 * with a compare-and-swap, kept in initial-exec TLS); every map has one
 * cache line per index. A reader section stores "active since phase p" into
 * its own line and clears it on leaving: a load and two plain stores, no
 * atomic read-modify-write, no line shared with another thread
 * (idm_enter/idm_leave in idmap_int.h). A signal handler that interrupts a
 * section on the same thread nests in the same slot (the count is in the low
 * bits; the handler restores the word before the interrupted code resumes).
 *
 * A writer that unlinked memory calls idm_grace_wait(): one heavy barrier,
 * then twice: flip the phase and wait until no slot is in a section that
 * began under the old phase. Then nothing can still see the memory:
 *
 * - the unlinking store precedes the heavy barrier. With membarrier(
 *   MEMBARRIER_CMD_PRIVATE_EXPEDITED) every thread of the process passes a
 *   full barrier during the call (running threads by IPI, others at their
 *   context switch). A reader whose slot store was issued before that point
 *   has it visible when the writer reads the slot, so the writer waits for
 *   it; a reader whose slot store comes after it also loads its pointers
 *   after it and sees only the new ones. Without membarrier the readers
 *   fence (seq_cst) after the slot store and the writer fences instead: the
 *   same store-buffering argument with two seq_cst fences;
 * - the phase only bounds the wait: a section that began after a flip never
 *   delays the writer, so a thread that re-enters constantly cannot starve
 *   it. Two flips, like classic user-space RCU, so that a reader that read
 *   the phase just before a flip and stored it just after is waited for in
 *   the second round at the latest.
 *
 * A thread that finds no free slot (more than IDM_NREADERS threads have
 * read) counts itself in one of IDM_NSTRIPES shared counters per phase, with
 * seq_cst read-modify-writes; writers wait for those counters to drain as
 * before. Slots of exited threads are reclaimed by writers when the registry
 * fills up (a thread ID that no longer exists cannot be inside a section).
 *
 * Signals: a reader never waits, so a handler that interrupts anything
 * (including a writer waiting for a grace period on the same thread)
 * finishes; a handler that interrupts a waiting writer enters under the
 * current phase, which that writer is not waiting for. A thread stopped
 * inside a lookup stops the writer's grace period (that is the point); a
 * reader must never leave a section by longjmp. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* membarrier(2) commands (kernel ABI; <linux/membarrier.h> declares them
 * as enumerators, which the preprocessor cannot test). */
#define MB_QUERY 0
#define MB_PRIVATE_EXPEDITED (1 << 3)
#define MB_REGISTER_PRIVATE_EXPEDITED (1 << 4)

#include "tokens/idmap_int.h"

_Thread_local unsigned idm_tls_reader __attribute__((tls_model("initial-exec")));

/* Registry of reader slot indexes: the owning thread's kernel ID, 0 = free. */
static _Atomic long reg_owner[IDM_NREADERS];
static _Atomic bool reg_full;

static long this_tid(void)
{
#ifdef SYS_gettid
    return syscall(SYS_gettid);
#else
    return (long)getpid();
#endif
}

/* Async-signal-safe: a system call that cannot fail and bounded CASes. */
static unsigned reader_claim(void)
{
    long tid = this_tid();
    for (unsigned i = 0; i < IDM_NREADERS; i++) {
        long expect = 0;
        if (atomic_load_explicit(&reg_owner[i], memory_order_relaxed) != 0 ||
            !atomic_compare_exchange_strong_explicit(&reg_owner[i], &expect, tid,
                                                     memory_order_acq_rel, memory_order_relaxed))
            continue;
        /* A signal handler may have claimed one for this thread meanwhile. */
        if (idm_tls_reader != 0 && idm_tls_reader != IDM_NO_SLOT) {
            atomic_store_explicit(&reg_owner[i], 0, memory_order_release);
            return idm_tls_reader;
        }
        idm_tls_reader = i + 1;
        return i + 1;
    }
    atomic_store_explicit(&reg_full, true, memory_order_relaxed);
    idm_tls_reader = IDM_NO_SLOT;
    return IDM_NO_SLOT;
}

unsigned idm_enter_slow(struct idm_grace *g)
{
    unsigned r = idm_tls_reader;
    if (r == 0)
        r = reader_claim();
    if (r != IDM_NO_SLOT)
        return idm_enter(g); /* now with a slot */
    uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
    unsigned s = (unsigned)(((uint64_t)(sp >> 16) * 0x9E3779B97F4A7C15ull) >> 60) &
                 (IDM_NSTRIPES - 1);
    unsigned p = (unsigned)(atomic_load_explicit(&g->gp, memory_order_relaxed) >> 32) & 1u;
    atomic_fetch_add_explicit(&g->stripe[s].n[p], 1, memory_order_seq_cst);
    return IDM_NREADERS + (s << 1 | p);
}

void idm_leave_slow(struct idm_grace *g, unsigned tok)
{
    tok -= IDM_NREADERS;
    atomic_fetch_sub_explicit(&g->stripe[tok >> 1].n[tok & 1u], 1, memory_order_release);
}

/* Writer: free the registry entries of threads that have exited. A thread
 * ID that was reused keeps its entry (harmless: its slots are idle). */
static void reclaim_registry(void)
{
    if (!atomic_exchange_explicit(&reg_full, false, memory_order_relaxed))
        return;
#ifdef SYS_tgkill
    long pid = (long)getpid();
    for (unsigned i = 0; i < IDM_NREADERS; i++) {
        long tid = atomic_load_explicit(&reg_owner[i], memory_order_acquire);
        int saved = errno;
        if (tid != 0 && syscall(SYS_tgkill, pid, tid, 0) != 0 && errno == ESRCH)
            atomic_compare_exchange_strong_explicit(&reg_owner[i], &tid, 0, memory_order_acq_rel,
                                                    memory_order_relaxed);
        errno = saved;
    }
#endif
}

static bool membarrier_register(void)
{
#ifdef SYS_membarrier
    long cmds = syscall(SYS_membarrier, MB_QUERY, 0, 0);
    if (cmds < 0 || !(cmds & MB_PRIVATE_EXPEDITED) || !(cmds & MB_REGISTER_PRIVATE_EXPEDITED))
        return false;
    return syscall(SYS_membarrier, MB_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
#else
    return false;
#endif
}

/* In a child of fork() only the forking thread exists; it takes a fresh
 * index so that the registry entry of its parent-side ID can be reclaimed
 * without anyone still using it. */
static void atfork_child(void)
{
    idm_tls_reader = 0;
}

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void atfork_setup(void)
{
    pthread_atfork(NULL, NULL, atfork_child);
}

void idm_grace_init(struct idm_grace *g)
{
    int saved = errno;
    pthread_once(&atfork_once, atfork_setup);
    atomic_init(&g->gp, 1);
    /* MDT_IDMAP_FENCED=1 makes the readers fence as on a kernel without
     * membarrier, so that tests can cover that path too. */
    const char *fenced = getenv("MDT_IDMAP_FENCED");
    atomic_init(&g->asym, !(fenced && fenced[0] == '1') && membarrier_register());
    errno = saved;
}

static void heavy_barrier(struct idm_grace *g)
{
#ifdef SYS_membarrier
    if (atomic_load_explicit(&g->asym, memory_order_relaxed)) {
        int saved = errno;
        /* Registered at creation: the kernel documents no failure left.
         * Should it fail anyway, readers go back to fencing, and a pause
         * far longer than any store can stay buffered covers the sections
         * that did not fence. */
        long r;
        while ((r = syscall(SYS_membarrier, MB_PRIVATE_EXPEDITED, 0, 0)) != 0 && errno == EINTR)
            ;
        if (r == 0) {
            errno = saved;
            atomic_thread_fence(memory_order_seq_cst);
            return;
        }
        atomic_store_explicit(&g->asym, false, memory_order_seq_cst);
        atomic_thread_fence(memory_order_seq_cst);
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
        errno = saved;
    }
#endif
    (void)g;
    atomic_thread_fence(memory_order_seq_cst);
}

/* Spin briefly (readers take ~100 ns), then yield, then sleep: a reader
 * preempted inside a lookup may take a time slice to come back, and a
 * spinning writer would only keep it off the CPU. */
static void backoff(unsigned *spins)
{
    ++*spins;
    if (*spins < 128)
        return;
    if (*spins < 160) {
        sched_yield();
        return;
    }
    struct timespec ts = {0, 50000};
    nanosleep(&ts, NULL);
}

static void wait_phase(struct idm_grace *g, uint64_t gp)
{
    for (unsigned i = 0; i < IDM_NREADERS; i++) {
        /* An index claimed after this load belongs to a thread whose first
         * section starts after the heavy barrier: it sees only new
         * pointers. */
        if (atomic_load_explicit(&reg_owner[i], memory_order_relaxed) == 0)
            continue;
        unsigned spins = 0;
        for (;;) {
            uint64_t v = atomic_load_explicit(&g->slot[i].ctr, memory_order_acquire);
            if ((v & IDM_NEST_MASK) == 0 || ((v ^ gp) & IDM_PHASE) == 0)
                break;
            backoff(&spins);
        }
    }
    unsigned old = (unsigned)((gp ^ IDM_PHASE) >> 32) & 1u;
    for (unsigned s = 0; s < IDM_NSTRIPES; s++) {
        unsigned spins = 0;
        while (atomic_load_explicit(&g->stripe[s].n[old], memory_order_seq_cst) != 0)
            backoff(&spins);
    }
}

void idm_grace_wait(struct idm_grace *g)
{
    int saved = errno;
    reclaim_registry();
    heavy_barrier(g);
    for (int round = 0; round < 2; round++) {
        uint64_t gp = atomic_load_explicit(&g->gp, memory_order_relaxed) ^ IDM_PHASE;
        atomic_store_explicit(&g->gp, gp, memory_order_seq_cst);
        atomic_thread_fence(memory_order_seq_cst);
        wait_phase(g, gp);
    }
    g->periods++;
    errno = saved;
}

int idm_retire(struct idm_grace *g, void *p, size_t bytes)
{
    if (!p)
        return 0;
    if (g->nretired == g->capretired) {
        size_t ncap = g->capretired ? g->capretired * 2 : 64;
        void **n = realloc(g->retired, ncap * sizeof *n);
        if (!n) {
            /* Cannot defer: wait for readers now and free at once. */
            idm_grace_wait(g);
            free(p);
            return 0;
        }
        g->retired = n;
        g->capretired = ncap;
    }
    g->retired[g->nretired++] = p;
    g->retired_bytes += bytes;
    return 0;
}

void idm_reclaim(struct idm_grace *g, bool force)
{
    if (g->nretired == 0)
        return;
    if (!force && g->nretired < IDM_RETIRE_COUNT && g->retired_bytes < IDM_RETIRE_BYTES)
        return;
    idm_grace_wait(g);
    for (size_t i = 0; i < g->nretired; i++)
        free(g->retired[i]);
    g->nretired = 0;
    g->retired_bytes = 0;
}

void idm_grace_destroy(struct idm_grace *g)
{
    for (size_t i = 0; i < g->nretired; i++)
        free(g->retired[i]);
    free(g->retired);
    g->retired = NULL;
    g->nretired = g->capretired = 0;
}
