/* Binding an AssemblyRef to the loaded assemblies, in the tiers of
 * <mdtools/typeref.h> ("Binding an AssemblyRef"); ECMA-335 II.22.5
 * AssemblyRef, II.6.3 referencing assemblies. The
 * candidates of the reference's simple name and culture, visible from the
 * referencing module, ranked: tier 1 the exact identity, tier 2 a higher
 * version (nearest first), tier 3a any other version or token (nearest
 * first); weak-name and retargetable references rank as the header says.
 * A module's ranking of an AssemblyRef row does not depend on the type
 * looked for, so it is kept in the view's cache (cache.c) when short. Tier
 * 3b, any other loaded assembly that defines or forwards the type, does
 * depend on it and is asked for one assembly at a time. Which candidate
 * wins, and what a trace says of the others, is the engine's (engine.c). */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <mdtools/assembly.h>
#include <mdtools/errors.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>
#include <mdtools/typeref.h>

#include "typeref/bind_int.h"
#include "typeref/cache_int.h"
#include "typeref/index_int.h"
#include "typeref/modset_int.h"
#include "util/error.h"

static uint64_t pack_version(const uint16_t v[4])
{
    return (uint64_t)v[0] << 48 | (uint64_t)v[1] << 32 | (uint64_t)v[2] << 16 | v[3];
}

static const char *norm_culture(const char *c)
{
    return !c || !tr_ascii_casecmp(c, "neutral") ? "" : c;
}

static bool before(const struct tr_cand *a, const struct tr_cand *b)
{
    if (a->tier != b->tier)
        return a->tier < b->tier;
    if (a->tier == 1 && a->token_eq != b->token_eq)
        return a->token_eq;
    if (a->dist != b->dist)
        return a->dist < b->dist;
    if (a->higher != b->higher)
        return a->higher;
    if (a->token_eq != b->token_eq)
        return a->token_eq;
    return a->mi < b->mi;
}

/* Same-name candidates for `ref`, bound from module `from`, sorted. */
static size_t candidates(const struct mdt_modview *v, uint32_t from, const mdt_identity *ref,
                         struct tr_cand *out, size_t cap)
{
    size_t n = 0;
    uint64_t rv = pack_version(ref->version);
    bool weak = !ref->has_token, retarget = (ref->flags & MDT_AFL_RETARGETABLE) != 0;
    const char *rc = norm_culture(ref->culture);
    uint32_t b = tr_name_hash_ci(ref->name ? ref->name : "") & v->nmask;
    for (uint32_t k = v->ntab[b]; k; k = v->nnext[k - 1]) {
        uint32_t j = k - 1;
        const struct tr_mod *m = v->mods[j];
        if (tr_ascii_casecmp(m->ident.name ? m->ident.name : "", ref->name ? ref->name : "") ||
            !tr_visible(v, from, j) || tr_ascii_casecmp(m->culture, rc))
            continue;
        struct tr_cand c = {j, 3, false, false, 0};
        uint64_t dv = pack_version(m->ident.version);
        c.token_eq = weak ? !m->ident.has_token
                          : m->ident.has_token &&
                                !memcmp(m->ident.public_key_token, ref->public_key_token, 8);
        c.higher = dv > rv;
        c.dist = dv > rv ? dv - rv : rv - dv;
        if (weak)
            c.tier = dv == rv ? 1 : dv > rv ? 2 : 3;
        else if (retarget)
            c.tier = c.token_eq && dv == rv ? 1 : dv >= rv ? 2 : 3;
        else
            c.tier = c.token_eq && dv == rv ? 1 : c.token_eq && dv > rv ? 2 : 3;
        if (n == cap)
            break;
        size_t i = n++;
        while (i > 0 && before(&c, &out[i - 1])) {
            out[i] = out[i - 1];
            i--;
        }
        out[i] = c;
    }
    return n;
}

int tr_bind_rank(const struct mdt_modview *v, uint32_t from, uint32_t ref, struct tr_arentry *e,
                 struct tr_cand *out, size_t *n)
{
    mdt_identity id;
    if (mdt_assemblyref_identity(&id, v->mods[from]->img, ref))
        return -1;
    *n = candidates(v, from, &id, out, TR_MAX_CANDS);
    if (e && *n <= TR_CACHE_CANDS && tr_entry_claim(&e->state)) {
        e->n = (uint8_t)*n;
        for (size_t i = 0; i < *n; i++) {
            e->mi[i] = out[i].mi;
            e->tier[i] = out[i].tier;
        }
        tr_entry_publish(&e->state);
    }
    return 0;
}

/* ---- tier 3b ------------------------------------------------------------ */

/* Does manifest a define or forward ns.name (top level)? */
static bool has_type(const struct mdt_modview *v, uint32_t a, const struct tr_key *k)
{
    struct tr_mod *m = v->mods[a];
    if (!m->img || !tr_may_define(m, k))
        return false;
    return tr_find_typedef(m, k) || tr_find_exported(m, k);
}

uint32_t tr_bind_other(const struct mdt_modview *v, uint32_t from, const struct tr_key *k,
                       const struct tr_cand *cands, size_t n, const uint32_t *skip, unsigned nskip,
                       uint32_t j)
{
    for (; j < v->n; j++) {
        bool same = false;
        if (!v->mods[j]->manifest || !tr_visible(v, from, j))
            continue;
        for (unsigned i = 0; i < nskip; i++)
            same |= skip[i] == j;
        for (size_t i = 0; i < n; i++)
            same |= cands[i].mi == j;
        if (!same && has_type(v, j, k))
            return j;
    }
    return TR_NONE;
}

/* ---- without a type in mind --------------------------------------------- */

int mdt_assemblyref_bind(uintptr_t *manifest, int *tier, const mdt_modview *view, uintptr_t module,
                         uint32_t token)
{
    uint32_t mi;
    mdt_identity id;
    struct tr_cand cands[TR_MAX_CANDS];
    size_t n;
    *manifest = 0;
    *tier = 0;
    if (!view || (mi = tr_view_find(view, module)) == TR_NONE)
        return mdt__fail_simple(MDT_ENOTFOUND, "bind: no module %#jx in the view",
                                (uintmax_t)module);
    if (!view->mods[mi]->img || MDT_TOKEN_TABLE(token) != MDT_TABLE_AssemblyRef)
        return mdt__fail_simple(MDT_EINVAL, "bind: token 0x%08x is not an AssemblyRef", token);
    if (mdt_assemblyref_identity(&id, view->mods[mi]->img, MDT_TOKEN_RID(token)))
        return MDT_EBADIMAGE;
    n = candidates(view, mi, &id, cands, TR_MAX_CANDS);
    if (!n)
        return mdt__fail_simple(MDT_ENOTFOUND,
                                "bind: no loaded assembly named %s for AssemblyRef %u", id.name,
                                MDT_TOKEN_RID(token));
    *manifest = view->mods[cands[0].mi]->id;
    *tier = cands[0].tier;
    return 0;
}
