/* Module handles (handles.c): class and function slots name their module by
 * a 24-bit handle, an index into an array of ModuleIDs that readers load
 * through the map. A handle stands for one ModuleID value while some slot
 * (live or dead) holds it; it is reused only after a grace period, so a
 * reader that copied a handle from a slot being rewritten reads the old
 * ModuleID or sees the slot changed. The array only grows (a copy, the old
 * one retired), so a handle copied from a published slot is always inside
 * the array the reader loads. */
#ifndef MDT_TOKENS_HANDLES_INT_H
#define MDT_TOKENS_HANDLES_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tokens/idmap_int.h"

/* The largest handle (24 bits: the width of its field in a slot word). */
#define IDM_HANDLE_MAX 0xffffffu

struct idm_mods {
    size_t cap;
    _Atomic uintptr_t id[];
};

/* Reader: the ModuleID of handle hd (0 for handle 0). */
static inline uintptr_t idm_module_of(const mdt_idmap *m, uint32_t hd)
{
    const struct idm_mods *md = atomic_load_explicit(&((mdt_idmap *)m)->mods, memory_order_acquire);
    return hd < md->cap
               ? atomic_load_explicit(&((struct idm_mods *)md)->id[hd], memory_order_relaxed)
               : 0;
}

/* At map creation (0 or MDT_ENOMEM) and destruction. */
int idm_handles_init(mdt_idmap *m);
void idm_handles_free(mdt_idmap *m);
/* Writer: a handle for module (taking one reference), 0 for 0; UINT32_MAX
 * when out of memory or handles. Put drops a reference; reclaim, after a
 * grace period, makes the handles nobody holds free for other modules. */
uint32_t idm_handle_get(mdt_idmap *m, uintptr_t module);
void idm_handle_put(mdt_idmap *m, uint32_t hd);
void idm_handles_reclaim(mdt_idmap *m);
/* Writer: how many slots hold module's handle (0 when none), the handle,
 * and whether the module's dependents are found by scanning (deps.c); a
 * flag kept in the handle's entry, so it goes when the last slot does. */
uint32_t idm_module_slots(const mdt_idmap *m, uintptr_t module, uint32_t *hd, bool *scanned);
void idm_module_set_scanned(mdt_idmap *m, uintptr_t module);
/* Writer: bytes held for handles (the writer's arrays and map, the current
 * ModuleID array). */
size_t idm_handles_bytes(const mdt_idmap *m);

#endif
