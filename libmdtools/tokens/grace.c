/* Reader sections and deferred free for the runtime-ID maps. Readers (also
 * in signal handlers) must never wait, lock or allocate, yet memory they may
 * be reading (an old table after growth, a replaced type-argument array, a
 * code-range chunk) must not be freed under them. A reader counts itself in
 * one of 64 striped counters, chosen by its stack address, under the parity
 * of a global epoch (idm_enter/idm_leave in idmap_int.h: one atomic add and
 * one atomic subtract). A writer that unlinked memory flips the epoch and
 * waits until the old parity's counters drain, then does the same for the
 * other parity, then frees (idm_grace_wait). Why this is enough: the writer
 * unlinks with a seq_cst store U, then reads each counter with seq_cst loads;
 * a reader increments with a seq_cst RMW and loads every pointer to
 * reclaimable memory with seq_cst loads. If a reader's pointer load saw the
 * old pointer it precedes U in the single total order, so its increment does
 * too, and the writer's later counter load sees it (both parities are
 * waited for, so the parity the reader picked does not matter). Readers that
 * increment after U can only see the new pointers. Flipping first makes each
 * wait finite: new readers go to the other parity. A signal handler that
 * interrupts a waiting writer on the same thread reads the flipped epoch and
 * counts itself under the parity nobody is waiting for, so it cannot
 * deadlock; and it never waits itself. */
#include "config.h"

#include <sched.h>
#include <stdlib.h>
#include <time.h>

#include "tokens/idmap_int.h"

/* Spin briefly (readers take ~100 ns), then yield, then sleep: a reader
 * preempted inside a lookup may take a time slice to come back, and a
 * spinning writer would only keep it off the CPU. */
static void wait_parity(struct idm_grace *g, unsigned p)
{
    for (unsigned s = 0; s < IDM_NSTRIPES; s++) {
        unsigned spins = 0;
        while (atomic_load_explicit(&g->stripes[s].n[p], memory_order_seq_cst) != 0) {
            spins++;
            if (spins < 128)
                continue;
            if (spins < 160) {
                sched_yield();
                continue;
            }
            struct timespec ts = {0, 50000};
            nanosleep(&ts, NULL);
        }
    }
}

void idm_grace_wait(struct idm_grace *g)
{
    for (int round = 0; round < 2; round++) {
        unsigned e = atomic_load_explicit(&g->epoch, memory_order_relaxed);
        atomic_store_explicit(&g->epoch, e + 1, memory_order_seq_cst);
        wait_parity(g, e & 1u);
    }
    g->periods++;
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
