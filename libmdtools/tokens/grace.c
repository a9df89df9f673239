/* Reader sections and deferred free for the runtime-ID maps. Readers (also
 * in signal handlers) must never wait, lock or allocate, yet memory they may
 * be reading (an old table after growth, a replaced type-argument array, a
 * code-range leaf) must not be freed under them.
 *
 * Each thread gets a reader slot index once: a process-wide registry maps
 * the thread's kernel ID to an index (idm_reg_key, claimed with a
 * compare-and-swap near the ID's home entry; grace_int.h says why not TLS);
 * every map has one cache line per index. A reader section stores "active
 * since phase p" into its own line and clears it on leaving: a load and
 * two plain stores, no atomic read-modify-write, no line shared with
 * another thread (idm_enter/idm_leave in grace_int.h). A signal handler
 * that interrupts a section on the same thread finds the same index and
 * nests in the same slot (the count is in the low bits; the handler
 * restores the word before the interrupted code resumes).
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
 *   the second round at the latest;
 * - the writer reads every slot any thread ever had (below idm_reg_high),
 *   owned or not, with an acquire load: also the last leave of a thread
 *   that has exited and whose registry entry was reclaimed, so the free has
 *   a happens-before edge with that thread's reads (skipping free entries
 *   lost it once more than 256 threads had read). A slot index first
 *   claimed after the writer read idm_reg_high belongs to a thread whose
 *   claim (a seq_cst read-modify-write) comes after the heavy barrier in
 *   the single total order, and so do its loads: it sees only new pointers.
 *
 * A thread that finds no free entry near its home (the registry is full
 * there) counts itself in one of IDM_NSTRIPES shared counters per phase,
 * with seq_cst read-modify-writes; writers wait for those counters to drain
 * as before. When a claim fails, the next grace period frees the entries of
 * threads that have exited (tgkill(pid, tid, 0) fails with ESRCH). A kernel
 * ID is unique among live threads, so an entry is never shared; a thread
 * that gets the ID of an exited one (IDs wrap after pid_max) inherits its
 * idle entry, and the check finds it alive. The one window left is a
 * writer's tgkill answering ESRCH and its compare-and-swap freeing the
 * entry: an ID reused inside it would need the kernel to hand out pid_max
 * IDs in between.
 *
 * Signals: a reader never waits, so a handler that interrupts anything
 * (including a writer waiting for a grace period on the same thread)
 * finishes; a handler that interrupts a waiting writer enters under the
 * current phase, which that writer is not waiting for. A handler that
 * interrupts a claim on its thread finds or makes the thread's one entry:
 * the interrupted claim then sees it (its compare-and-swap fails on the
 * thread's own ID, or its check after a successful one finds the other
 * entry and keeps the first in probe order), so a thread never holds two.
 * A thread stopped inside a lookup stops the writer's grace period (that
 * is the point); a reader must never leave a section by longjmp. */
#define _DEFAULT_SOURCE /* clockid_t, pthread_getcpuclockid (grace_int.h), nanosleep, syscall */
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

#include "tokens/grace_int.h"

/* Retired memory that triggers a grace period at the end of a writer call. */
#define IDM_RETIRE_COUNT 512u
#define IDM_RETIRE_BYTES (4u << 20)

_Atomic long idm_reg_key[IDM_NREADERS];
/* One past the highest index ever claimed: writers read the slots below it. */
static _Atomic unsigned reg_high;
static _Atomic bool reg_full;
/* idm_self_key() encodes gettid(2) as key_tid() decodes it (checked once;
 * else no claim succeeds and every reader uses the shared stripes). */
static _Atomic int key_ok = -1;

static long sys_tid(void)
{
#ifdef SYS_gettid
    return syscall(SYS_gettid);
#else
    return (long)getpid();
#endif
}

/* The kernel thread ID a key stands for: the CPU-time clock of thread tid
 * is (~tid << 3) | 6 (written without shifting a negative number). */
static long key_tid(long key)
{
    return -((key - 6) / 8) - 1;
}

#ifdef IDM_TEST_CLAIM_HOOK
unsigned idm_test_entries_of(long tid)
{
    unsigned n = 0;
    for (unsigned i = 0; i < IDM_NREADERS; i++) {
        long k = atomic_load(&idm_reg_key[i]);
        n += k != 0 && key_tid(k) == tid;
    }
    return n;
}
#define CLAIM_WINDOW() idm_test_claim_hook()
#else
#define CLAIM_WINDOW() ((void)0)
#endif

static void note_high(unsigned i)
{
    unsigned h = atomic_load_explicit(&reg_high, memory_order_seq_cst);
    while (h <= i && !atomic_compare_exchange_weak_explicit(
                         &reg_high, &h, i + 1, memory_order_seq_cst, memory_order_seq_cst))
        ;
}

/* The index the thread with this key owns, claimed if need be, or
 * IDM_NREADERS when there is none free near its home. Async-signal-safe:
 * loads and a bounded number of compare-and-swaps. A handler that runs in
 * the middle of this on the same thread completes a claim of its own; the
 * checks below make the interrupted claim end up with that same entry, or
 * free its own. */
static unsigned reader_claim(long key)
{
    unsigned home = idm_reg_home(key);
    if (atomic_load_explicit(&key_ok, memory_order_relaxed) != 1)
        return IDM_NREADERS;
    for (unsigned attempt = 0; attempt < IDM_REG_PROBE; attempt++) {
        unsigned free_at = IDM_NREADERS;
        for (unsigned k = 0; k < IDM_REG_PROBE; k++) {
            unsigned i = (home + k) & (IDM_NREADERS - 1);
            long o = atomic_load_explicit(&idm_reg_key[i], memory_order_relaxed);
            if (o == key)
                return i;
            if (o == 0 && free_at == IDM_NREADERS)
                free_at = i;
        }
        if (free_at == IDM_NREADERS)
            break;
        CLAIM_WINDOW();
        long expect = 0;
        if (!atomic_compare_exchange_strong_explicit(&idm_reg_key[free_at], &expect, key,
                                                     memory_order_seq_cst, memory_order_relaxed)) {
            if (expect == key)
                return free_at; /* a handler on this thread claimed it for us */
            continue;           /* another thread took it: look again */
        }
        note_high(free_at);
        /* Another entry of ours can only be a handler's, made between our
         * look and our claim; the first in probe order stays. */
        for (unsigned k = 0; k < IDM_REG_PROBE; k++) {
            unsigned i = (home + k) & (IDM_NREADERS - 1);
            if (i == free_at || atomic_load_explicit(&idm_reg_key[i], memory_order_relaxed) != key)
                continue;
            bool first = k < ((free_at - home) & (IDM_NREADERS - 1));
            atomic_store_explicit(&idm_reg_key[first ? free_at : i], 0, memory_order_release);
            return first ? i : free_at;
        }
        return free_at;
    }
    atomic_store_explicit(&reg_full, true, memory_order_relaxed);
    return IDM_NREADERS;
}

unsigned idm_enter_slow(struct idm_grace *g, long key)
{
    unsigned r = key ? reader_claim(key) : IDM_NREADERS;
    if (r < IDM_NREADERS)
        return idm_enter_slot(g, r);
    uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
    unsigned s =
        (unsigned)(((uint64_t)(sp >> 16) * 0x9E3779B97F4A7C15ull) >> 60) & (IDM_NSTRIPES - 1);
    unsigned p = (unsigned)(atomic_load_explicit(&g->gp, memory_order_relaxed) >> 32) & 1u;
    atomic_fetch_add_explicit(&g->stripe[s].n[p], 1, memory_order_seq_cst);
    return IDM_NREADERS + (s << 1 | p);
}

void idm_leave_slow(struct idm_grace *g, unsigned tok)
{
    tok -= IDM_NREADERS;
    atomic_fetch_sub_explicit(&g->stripe[tok >> 1].n[tok & 1u], 1, memory_order_release);
}

/* Writer: free the registry entries of threads that have exited, once a
 * claim found none free. A thread that got the ID of an exited one
 * inherits its (idle) entry and is alive to tgkill. */
static void reclaim_registry(void)
{
    if (!atomic_exchange_explicit(&reg_full, false, memory_order_relaxed))
        return;
#ifdef SYS_tgkill
    long pid = (long)getpid();
    for (unsigned i = 0; i < IDM_NREADERS; i++) {
        long key = atomic_load_explicit(&idm_reg_key[i], memory_order_acquire);
        int saved = errno;
        if (key != 0 && syscall(SYS_tgkill, pid, key_tid(key), 0) != 0 && errno == ESRCH)
            atomic_compare_exchange_strong_explicit(&idm_reg_key[i], &key, 0, memory_order_acq_rel,
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

/* Whether idm_self_key() encodes kernel thread IDs on this libc (once). */
static void check_key(void)
{
    long key = idm_self_key();
    int expect = -1;
    atomic_compare_exchange_strong(&key_ok, &expect,
                                   key != 0 && (key & 7) == 6 && key_tid(key) == sys_tid());
}

void idm_grace_init(struct idm_grace *g)
{
    int saved = errno;
    check_key();
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
    /* Every slot ever claimed, owned now or not (see the top of the file). */
    unsigned high = atomic_load_explicit(&reg_high, memory_order_seq_cst);
    for (unsigned i = 0; i < high; i++) {
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
