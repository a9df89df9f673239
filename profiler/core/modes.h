/* Private to profiler/core: the functions of the modes unit (calls.c, alloc.c, allocstack.c,
 * heap.c, events.c): calls, alloc, alloc stacks, heap, exceptions and contention. Included by the
 * files of this unit and of the units above it (profiler/core/README.md); struct mdp_core is in
 * base.h. */
#ifndef MDP_MODES_H
#define MDP_MODES_H

#include <stddef.h>
#include <stdint.h>

#include "core/base.h"

/* calls.c, alloc.c */
int mdp_calls_init(mdp_core *core);
void mdp_calls_flush(mdp_core *core); /* drain_lock held */
void mdp_calls_free(mdp_core *core);
int mdp_alloc_init(mdp_core *core);
void mdp_alloc_flush(mdp_core *core); /* drain_lock held */
/* ObjectAllocated callbacks counted so far (drain_lock held). */
uint64_t mdp_alloc_callbacks(mdp_core *core);
void mdp_alloc_free(mdp_core *core);
/* The text of an allocated type as alloc records name it (a descriptor in
 * desc, or a special frame's word: *kind says which), for class `cls` of
 * incarnation `gen` (0: any); with debug, its in-process name (malloc, or
 * NULL). drain_lock held. */
const char *mdp_alloc_type_text(mdp_core *core, uintptr_t cls, uint64_t gen, char *desc, size_t len,
                                int *kind, char **debug);
/* allocstack.c: alloc mode's sampled stacks (with cfg.alloc_sample) */
int mdp_alloc_stacks_init(mdp_core *core);
void mdp_alloc_stacks_flush(mdp_core *core); /* drain_lock held */
/* samples kept, dropped, and the runtime's events delivered (UINT64_MAX:
 * not on the event path) */
void mdp_alloc_stacks_stats(mdp_core *core, uint64_t *samples, uint64_t *dropped, uint64_t *events);
/* The header's alloc_sample=, alloc_path=, alloc_scale= (and
 * alloc_event_mean=) keys, each after a space, into buf; its length (0:
 * no alloc stacks). */
int mdp_alloc_stacks_describe(mdp_core *core, char *buf, size_t len);
void mdp_alloc_stacks_free(mdp_core *core);

/* events.c: the exceptions and contention modes' queue of stack events;
 * mdp_events_drain names them into records (drain_lock held). */
int mdp_events_init(mdp_core *core);
void mdp_events_drain(mdp_core *core);
void mdp_events_stats(const mdp_core *core, char *buf, size_t cap);
void mdp_events_free(mdp_core *core);

#endif
