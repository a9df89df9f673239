/* Private to profiler/core: the functions of the aggregate unit (aggregate.c): the aggregated
 * records, one table per kind. Included by the files of this unit and of the units above it
 * (profiler/core/README.md); struct mdp_core is in base.h. */
#ifndef MDP_AGGREGATE_H
#define MDP_AGGREGATE_H

#include <stddef.h>
#include <stdint.h>

#include "core/base.h"

/* The #stats counters (records.c writes them): the drain, the modes and
 * the lifetime add to them, drain_lock held; inside the aggregate's
 * state, reached as core->stats. */
struct mdp_stats {
    uint64_t samples, signals, late, frames, kind[FK_COUNT], cut, drops_other;
    uint64_t unwalked; /* samples of the leaf alone: the thread's stack bounds were not known */
    uint64_t native_module;            /* native frames named by an ELF object */
    uint64_t act[16];                  /* samples by activity (native.h) */
    uint64_t heap_walks, heap_walk_ns; /* heap.c */
    unsigned drain_cycles;             /* the drain thread's passes (drainloop.c) */
#ifdef MDP_BENCH_CLOCK
    /* bench builds only: the TSC when the core started (to convert ticks
     * to ns), what two back-to-back reads of the thread's CPU clock measure
     * (ns, to subtract per handler call), the drain thread's CPU time and
     * the part of it spent in mdp_drain_all */
    uint64_t bench_tsc0;
    double bench_clock_ns;
    _Atomic uint64_t bench_drain_ns, bench_drain_all_ns;
#endif
};

/* aggregate.c: the unit's state (core->agg, core->stats); 0, or -1 out of
 * memory. Freed with the records it holds. */
int mdp_aggregate_new(mdp_core *core);
void mdp_aggregate_free(mdp_core *core);
/* The table of one kind (key text -> struct mdp_record), for the log
 * writer to take the records out (drain_lock held). */
mdp_smap *mdp_records_table(mdp_core *core, enum mdp_rec_kind kind);

/* aggregate.c: with drain_lock held. Adds to the record of kind `kind`
 * and `key` (created with `debug` as its names); returns it, NULL when
 * out of memory. */
struct mdp_record *mdp_record_add(mdp_core *core, enum mdp_rec_kind kind, const char *key,
                                  size_t keylen, uint64_t count, uint64_t bytes, const char *debug);

#endif
