/* Private to profiler/core: the functions of the drain unit (drain.c): a ring's samples to records.
 * Included by the files of this unit and of the units above it
 * (profiler/core/README.md); struct mdp_core is in base.h. */
#ifndef MDP_DRAIN_H
#define MDP_DRAIN_H

#include <stddef.h>
#include <stdint.h>

#include "core/base.h"

/* drain.c: drain every ring now; the caller holds drain_lock. */
void mdp_drain_all(mdp_core *core);

/* drain.c: the drain's per-process buffers, freed when the core goes. */
void mdp_drain_buffers_free(void);

#endif
