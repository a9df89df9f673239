/* The answer of one resolution as the resolver computes it: modules named
 * by their index in one view (so an answer can be cached in that view and
 * compared without hashing IDs), turned into the public mdt_resolution,
 * which names modules by ID, only when it is handed out (result.c). */
#ifndef MDT_TYPEREF_RESULT_INT_H
#define MDT_TYPEREF_RESULT_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <mdtools/typeref.h>

#include "typeref/modset_int.h"

/* An answer, module references as view indexes (TR_NONE: none). */
struct tr_res {
    bool resolved;
    uint8_t reason, tier, flags;
    uint16_t hops, nvisited;
    uint32_t module, token;
    uint32_t where_module, where_token;
    uint32_t instead_module, instead_token;
    uint32_t visited[MDT_RESOLVE_MAX_VISITED];
};

/* No answer yet. Field by field: visited[] past nvisited is never read,
 * and a memset of the whole struct compiles to a `rep stos` that costs
 * more than the rest of a cached resolution. */
static inline void tr_res_init(struct tr_res *r)
{
    r->resolved = false;
    r->reason = r->tier = r->flags = 0;
    r->hops = r->nvisited = 0;
    r->module = r->where_module = r->instead_module = TR_NONE;
    r->token = r->where_token = r->instead_token = 0;
}

/* r in the public form, modules as IDs of view v: writes every field of
 * *out. */
void tr_res_export(const struct mdt_modview *v, const struct tr_res *r, mdt_resolution *out);

#endif
