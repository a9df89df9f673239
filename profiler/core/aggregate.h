/* Private to profiler/core: the functions of the aggregate unit (aggregate.c): the aggregated
 * records, one table per kind. Included by the files of this unit and of the units above it
 * (profiler/core/README.md); struct mdp_core is in base.h. */
#ifndef MDP_AGGREGATE_H
#define MDP_AGGREGATE_H

#include <stddef.h>
#include <stdint.h>

#include "core/base.h"

/* What a record counts; its log line starts with the kind's word
 * (log.h's mdp_rec_kinds, doc/profile-log.md). A mode adds its kinds
 * here: each kind has a map of its own, so one stack counted as a sample
 * and as something else stays two records. */
enum mdp_rec_kind {
    MDP_REC_STACK, /* `stack`: sampled stacks (sample and wall modes) */
    MDP_REC_CALL,  /* `call`: calls of one function (calls mode) */
    MDP_REC_ALLOC, /* `alloc`: allocations of one type (alloc mode) */
    MDP_REC_THROW, /* `throw`: exceptions of one type thrown from one stack (exceptions mode) */
    MDP_REC_WAIT,  /* `wait`: waits on a managed lock from one stack, their nanoseconds (contention)
                    */
    MDP_REC_ASTACK, /* `astack`: sampled allocations of one type and stack (alloc mode) */
    MDP_REC_HEAP,   /* `heap`: live objects of one type after a gen2 GC (heap mode) */
    MDP_REC_NKINDS
};

/* One aggregated record. */
struct mdp_record {
    uint64_t count, bytes;
    uint64_t exits[3]; /* call records: leaves, tail calls, frames the unwind pass reached */
    uint64_t caught;   /* ... and of those, frames that caught the exception */
    char *debug;       /* TAB-separated names, NULL without --debug-names */
};

/* aggregate.c: the unit's state (core->agg); 0, or -1 out of memory.
 * Freed with the records it holds. */
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
