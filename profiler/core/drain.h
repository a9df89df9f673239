/* Private to profiler/core: the functions of the drain unit (drain.c): a ring's samples to records.
 * Included by the files of this unit and of the units above it
 * (profiler/core/README.md); struct mdp_core is in base.h. */
#ifndef MDP_DRAIN_H
#define MDP_DRAIN_H

#include <stddef.h>
#include <stdint.h>

#include "core/base.h"

/* drain.c: the unit's state (core->drain, opaque above): 0, or -1 out of
 * memory. */
int mdp_drain_new(mdp_core *core);
void mdp_drain_free(mdp_core *core);
/* What mdp_drain_all drains besides the rings, from a unit above (core.c
 * sets events.c's queue of throws and waits). */
void mdp_drain_set_events(mdp_core *core, void (*events)(mdp_core *core));
/* The most a ring held at a drain, in 64ths of it, since the last call
 * (drain_lock held): the drain thread's schedule (drainloop.c). */
uint64_t mdp_drain_take_fill(mdp_core *core);

/* drain.c: drain every ring now; the caller holds drain_lock. */
void mdp_drain_all(mdp_core *core);

/* drain.c: the drain's per-process buffers, freed when the core goes. */
void mdp_drain_buffers_free(void);

#endif
