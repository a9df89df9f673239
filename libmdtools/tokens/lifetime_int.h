/* Which information wins, and what an unload takes with it (lifetime.c):
 * the load of a record of any kind, the unload of any kind of thing, the
 * refusal of an item that names something unloaded after it was made,
 * and the cascades through the dependents. The record kinds call these
 * from their public calls; the precedence rules are in README.md. */
#ifndef MDT_TOKENS_LIFETIME_INT_H
#define MDT_TOKENS_LIFETIME_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "tokens/idmap_int.h"
#include "tokens/writer_int.h"

/* Writer calls: load `info` (the kind's info structure) of ID `id`, whose
 * content names refs, at seq; unload (kind, id) at seq, also of kinds
 * without records. Each locks, checks seq and finishes (writer.c). They
 * return MDT_IDMAP_APPLIED, _DUPLICATE, _SUPERSEDED or an error. */
int idm_load(mdt_idmap *m, int kind, uintptr_t id, const void *info, const struct idm_refs *refs,
             uint64_t seq);
int idm_unload_call(mdt_idmap *m, int kind, uintptr_t id, uint64_t seq);

/* Inside a load (mutex held), for a kind's `same` operation: was
 * something refs names unloaded at or after seq? A load of (kind, id)
 * refused because of it: the ID dies at that unload too; returns
 * MDT_IDMAP_SUPERSEDED or an error. */
bool idm_refs_stale(const mdt_idmap *m, const struct idm_refs *refs, uint64_t seq);
int idm_refuse(mdt_idmap *m, int kind, uintptr_t id, const struct idm_refs *refs, uint64_t seq);

#endif
