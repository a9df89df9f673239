/* Private to profiler/core: the functions of the lifetime unit (core.c, drainloop.c, modules.c,
 * seqs.c): creating and finishing the core, the drain thread, module load and unload. Included by
 * the files of this unit and of the units above it (profiler/core/README.md); struct mdp_core is in
 * base.h. */
#ifndef MDP_LIFETIME_H
#define MDP_LIFETIME_H

#include <stddef.h>
#include <stdint.h>

#include "core/base.h"

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
