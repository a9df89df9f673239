/* Private to profiler/core: the functions of the aggregate unit (aggregate.c): the aggregated
 * records, one table per kind. Included by the files of this unit and of the units above it
 * (profiler/core/README.md); struct mdp_core is in base.h. */
#ifndef MDP_AGGREGATE_H
#define MDP_AGGREGATE_H

#include <stddef.h>
#include <stdint.h>

#include "core/base.h"

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
