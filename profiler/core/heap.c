/* heap mode: the live heap after each gen2 GC, as `heap` records
 * (doc/profile-log.md): per type, the objects and bytes a walk of the heap
 * found, with the GC's number and the time of the walk, so that a reader
 * can show the last heap or how it grew between two GCs. The adapter
 * walks (coreclr/heap.c says how and why that way); the core names each
 * class as alloc records name types, and counts the walks and their time
 * for #stats (heap.walks=, heap.walk_ms=). */
#define _GNU_SOURCE
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base.h"
#include "core/aggregate.h"
#include "core/modes.h"

void mdp_heap_snapshot(mdp_core *core, uint64_t gc, uint64_t walk_ns,
                       const struct mdp_heap_count *v, size_t n)
{
    if (atomic_load(&core->finished))
        return;
    pthread_mutex_lock(&core->drain_lock);
    uint64_t ms = mdp_elapsed_ms(core);
    core->stats.heap_walks++;
    core->stats.heap_walk_ns += walk_ns;
    for (size_t i = 0; i < n; i++) {
        char desc[4096], key[4200];
        char *debug = NULL;
        int kind;
        const char *text = mdp_alloc_type_text(core, v[i].cls, 0, desc, sizeof desc, &kind,
                                               core->cfg.debug_names ? &debug : NULL);
        /* the key: the GC and the time, then the type (the record's line
         * after its counts) */
        int k = snprintf(key, sizeof key, "%" PRIu64 " %" PRIu64 " %s", gc, ms, text);
        if (k > 0 && (size_t)k < sizeof key)
            mdp_record_add(core, MDP_REC_HEAP, key, (size_t)k, v[i].count, v[i].bytes,
                           core->cfg.debug_names ? (debug ? debug : text) : NULL);
        free(debug);
    }
    pthread_mutex_unlock(&core->drain_lock);
}
