/* Private to profiler/core: the functions of the lifetime unit (core.c, drainloop.c, modules.c,
 * seqs.c): creating and finishing the core, the drain thread, module load and unload. Included by
 * the files of this unit and of the units above it (profiler/core/README.md); struct mdp_core is in
 * base.h. */
#ifndef MDP_LIFETIME_H
#define MDP_LIFETIME_H

#include <stddef.h>
#include <stdint.h>

#include "core/base.h"

#define MDP_SEQ_SLOTS 64u      /* seqs held at once without overflow (seqs.c) */
#define MDP_RETIRE_BATCH 4096u /* unloads that trigger a retirement at once */
#define MDP_RETIRE_MS 10000u   /* else at most this often after an unload */

/* The unit's state (core->life): no unit is above it. */
struct mdp_life {
    char end_reason[32]; /* core.c: why the log ended */
    /* drainloop.c: the drain thread */
    pthread_t drain_thread;
    int drain_started;
    _Atomic int drain_stop;
    /* seqs.c: the seqs callbacks hold (0 = free, 1 = taking one), the
     * takers that found no free slot; unloads applied (modules.c); what
     * the last retirement used (drain thread) */
    _Atomic uint64_t seq_held[MDP_SEQ_SLOTS];
    _Atomic unsigned seq_next_slot;
    _Atomic uint64_t seq_overflow, unloads;
    uint64_t retire_below, retire_last_ms, retire_unloads, stat_retired;
};

/* modules.c */
void mdp_modules_free(mdp_core *core);

/* drainloop.c: the drain thread */
int mdp_drain_start(mdp_core *core, char *err, size_t errlen);
/* Ask the drain thread to stop, and wait for it unless called on it. */
void mdp_drain_stop(mdp_core *core);
/* Wait for the drain thread to have ended (detached instead when called on
 * it). */
void mdp_drain_join(mdp_core *core);

#endif
