/* Private to the naming unit of profiler/core (codemap.c, frames.c): its
 * state, core->naming, which no unit above sees inside (README.md,
 * "State"; tools/check-layers.sh checks that only the unit's files, and
 * core_int.h for the tests, include this header). */
#ifndef MDP_NAMING_STATE_H
#define MDP_NAMING_STATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "core/base.h"

struct mdp_naming {
    /* codemap.c: code regions -> code versions (code_lock, a leaf) */
    pthread_mutex_t code_lock;
    mdp_pmap regions; /* start -> struct mdp_region, of versions of several regions */
    uint64_t region_serial;
    unsigned splits_pending; /* such versions being recorded */
    /* codemap.c: bumped when a region replaces another at its address */
    _Atomic uint64_t code_epoch;
    /* drain_lock: the IL maps of code versions, the frames' texts */
    mdp_pmap ilmaps;        /* (version start, serial) -> struct mdp_ilmap */
    mdp_pmap frames;        /* (function, gen) -> struct mdp_frame */
    mdp_pmap ipnames;       /* (ip, gen) -> struct mdp_ipname (frames.c) */
    uint64_t ipnames_epoch; /* code_epoch when ipnames was last valid */
    mdp_pmap ipkinds;       /* unattributed ip -> kind + 1 (cast) */
    mdp_pmap wait_sites;    /* wall mode: (call site ip, gen) -> known wait + 1 (cast), frames.c */
    mdp_pmap class_texts;   /* class ID -> its descriptor's text (frames.c), until an unload */
};

#endif
