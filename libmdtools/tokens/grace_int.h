/* Reader sections and deferred free (grace.c): how a lookup, which may run
 * in a signal handler, tells writers it is reading without a lock, an
 * atomic read-modify-write or thread-local storage, and how a writer frees
 * memory only once no reader can still reach it. grace.c says why it is
 * correct. */
#ifndef MDT_TOKENS_GRACE_INT_H
#define MDT_TOKENS_GRACE_INT_H

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "tokens/base_int.h"

/* Per-thread reader slots (one cache line each, per map) and the shared
 * counters used by threads that found no free slot (powers of two). */
#define IDM_NREADERS 256u
#define IDM_NSTRIPES 16u

/* A reader slot word: the nesting count in the low 32 bits (a signal handler
 * may nest a section inside the one it interrupted) and, while the count is
 * not 0, the phase of the grace-period clock when the outermost section
 * began. */
#define IDM_NEST_MASK 0xffffffffull
#define IDM_PHASE (1ull << 32)

struct idm_rdslot {
    alignas(IDM_SEP) _Atomic uint64_t ctr;
};

struct idm_stripe {
    alignas(IDM_SEP) _Atomic unsigned long n[2];
};

struct idm_grace {
    /* Read by every reader; written by writers at phase flips only. */
    alignas(64) _Atomic uint64_t gp; /* IDM_PHASE bit | 1 */
    _Atomic bool asym;               /* writers issue membarrier(); readers need no fence */
    struct idm_rdslot slot[IDM_NREADERS];
    struct idm_stripe stripe[IDM_NSTRIPES];
    /* writer only */
    alignas(IDM_SEP) void **retired;
    size_t nretired, capretired;
    size_t retired_bytes;
    uint64_t periods;
};

/* Reader slots are found without thread-local storage: a library that
 * profilers dlopen() cannot count on static TLS (initial-exec TLS fails to
 * load once glibc's surplus is used up), and dynamic TLS may be allocated
 * with malloc on a thread's first access, which a signal handler must never
 * do. A process-wide registry (grace.c) maps a thread's key, which stands
 * for its kernel thread ID (idm_self_key), to its slot index: IDM_NREADERS
 * entries, a thread's home entry picked by a hash of the key, claimed with
 * a compare-and-swap within IDM_REG_PROBE entries of it. Every map has one
 * slot per index. idm_reg_key[i] is the key of the thread that owns index
 * i, 0 when free. */
#define IDM_REG_PROBE 8u
extern _Atomic long idm_reg_key[IDM_NREADERS];

static inline unsigned idm_reg_home(long key)
{
    return (unsigned)(((uint32_t)key * 0x9E3779B9u) >> 24) & (IDM_NREADERS - 1);
}

/* The calling thread's key: its CPU-time clock, which glibc and musl make
 * from the kernel thread ID they keep in the thread descriptor, as Linux
 * defines CPU clocks: (~tid << 3) | 6. No system call, no TLS; both calls
 * only read the descriptor (async-signal-safe in fact, though POSIX does
 * not list them). 0 if the call failed. grace.c checks the encoding once
 * against gettid(2) before any claim trusts a key, and decodes keys into
 * IDs only to ask whether their threads still exist. */
static inline long idm_self_key(void)
{
    clockid_t c = 0;
    (void)pthread_getcpuclockid(pthread_self(), &c);
    return (long)c;
}

/* grace.c: a section of a thread whose slot is not its home entry (found
 * or claimed there), and sections of threads without one (a shared
 * stripe, chosen by stack address). */
unsigned idm_enter_slow(struct idm_grace *g, long key);
void idm_leave_slow(struct idm_grace *g, unsigned tok);

/* Enter a reader section in slot r. The load of the slot is an acquire:
 * it may read the last leave of the slot's previous owner, which a writer
 * that waited for this thread then also follows. */
IDM_INLINE unsigned idm_enter_slot(struct idm_grace *g, unsigned r)
{
    _Atomic uint64_t *c = &g->slot[r].ctr;
    uint64_t v = atomic_load_explicit(c, memory_order_acquire);
    if ((v & IDM_NEST_MASK) == 0)
        v = atomic_load_explicit(&g->gp, memory_order_acquire);
    else
        v++;
    atomic_store_explicit(c, v, memory_order_relaxed);
    if (__builtin_expect(atomic_load_explicit(&g->asym, memory_order_relaxed), 1))
        atomic_signal_fence(memory_order_seq_cst);
    else
        atomic_thread_fence(memory_order_seq_cst);
    return r;
}

/* Enter a reader section; the token goes back to idm_leave(). The fast path
 * finds the thread's slot at its home entry (the thread ID from its
 * descriptor, one load of a read-mostly line) and stores to the thread's
 * own cache line: when the map could register for
 * membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED), writers issue the barrier
 * that orders this store before the reader's loads (grace.c); otherwise
 * the reader fences. Threads without a slot count themselves in a shared
 * stripe with atomic read-modify-writes (idm_enter_slow). */
IDM_INLINE unsigned idm_enter(const struct idm_grace *cg)
{
    struct idm_grace *g = (struct idm_grace *)cg;
    long key = idm_self_key();
    unsigned h = idm_reg_home(key);
    if (__builtin_expect(
            atomic_load_explicit(&idm_reg_key[h], memory_order_relaxed) != key || key == 0, 0))
        return idm_enter_slow(g, key);
    return idm_enter_slot(g, h);
}

IDM_INLINE void idm_leave(const struct idm_grace *cg, unsigned tok)
{
    struct idm_grace *g = (struct idm_grace *)cg;
    if (__builtin_expect(tok >= IDM_NREADERS, 0)) {
        idm_leave_slow(g, tok);
        return;
    }
    _Atomic uint64_t *c = &g->slot[tok].ctr;
    uint64_t v = atomic_load_explicit(c, memory_order_relaxed);
    atomic_store_explicit(c, v - 1, memory_order_release);
}

/* Writer side: set up a map's reader slots (registering for membarrier);
 * wait for a grace period; put p (bytes long) on the retired list, freed
 * after a later grace period (when the list cannot grow, it waits for the
 * readers and frees p at once; returns 0); free the retired list when it is
 * large or force is set; free everything at the map's end. */
void idm_grace_init(struct idm_grace *g);
void idm_grace_wait(struct idm_grace *g);
int idm_retire(struct idm_grace *g, void *p, size_t bytes);
void idm_reclaim(struct idm_grace *g, bool force);
void idm_grace_destroy(struct idm_grace *g);

#ifdef IDM_TEST_CLAIM_HOOK
/* Tests built from the sources (tests/idmap/run-claimrace.sh): called
 * where a claim could race with a nested one; registry entries of the
 * thread with kernel ID tid. */
void idm_test_claim_hook(void);
unsigned idm_test_entries_of(long tid);
#endif

#endif
