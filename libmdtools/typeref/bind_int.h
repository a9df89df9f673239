/* Binding an AssemblyRef to loaded assemblies (bind.c): the ranked
 * candidates of tiers 1, 2 and 3a, and tier 3b, any other assembly that
 * defines or forwards a given type. */
#ifndef MDT_TYPEREF_BIND_INT_H
#define MDT_TYPEREF_BIND_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "typeref/cache_int.h"
#include "typeref/index_int.h"
#include "typeref/modset_int.h"

/* A candidate: a manifest (view index) and its tier, 1..3; the other
 * fields only rank candidates of one tier (and are not kept in the cache). */
struct tr_cand {
    uint32_t mi;
    uint8_t tier;
    bool token_eq;
    bool higher;
    uint64_t dist;
};

/* At most this many candidates of one name are ranked; more are dropped. */
#define TR_MAX_CANDS 64

/* The candidates for AssemblyRef row `ref` of module `from`, best first,
 * into out[TR_MAX_CANDS] and *n (0: nothing of that name is loaded or
 * visible), ranked afresh and kept in the view's binding entry e (when not
 * NULL and they fit). 0, or -1 when the row cannot be read (the error
 * record says why). */
int tr_bind_rank(const struct mdt_modview *v, uint32_t from, uint32_t ref, struct tr_arentry *e,
                 struct tr_cand *out, size_t *n);

/* The same, from the view's cache when it has them (inline: a cached
 * binding is a few loads, and every AssemblyRef scope asks for one). */
static inline int tr_bind_candidates(const struct mdt_modview *v, uint32_t from, uint32_t ref,
                                     struct tr_cand *out, size_t *n)
{
    struct tr_arentry *e = tr_cache_binding(v, from, ref);
    if (e && tr_entry_ready(&e->state)) {
        for (unsigned i = 0; i < e->n; i++)
            out[i] = (struct tr_cand){e->mi[i], e->tier[i], false, false, 0};
        *n = e->n;
        return 0;
    }
    return tr_bind_rank(v, from, ref, e, out, n);
}
/* Tier 3b: the first manifest from view index j on that `from` sees, that
 * is neither among cands[0..n) nor skip[0..nskip) (the assemblies this
 * resolution has visited), and that defines or forwards top-level k; or
 * TR_NONE. In registration order: call again with the answer + 1 for the
 * next one. */
uint32_t tr_bind_other(const struct mdt_modview *v, uint32_t from, const struct tr_key *k,
                       const struct tr_cand *cands, size_t n, const uint32_t *skip, unsigned nskip,
                       uint32_t j);

#endif
