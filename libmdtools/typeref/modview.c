/* Reading the module set (modset.c): a reader takes the current snapshot
 * ("view") in the acquire window of the set's epoch and holds it by a
 * reference until it releases it (modset.c's opening comment says why a
 * writer never frees a snapshot a reader can still reach); a view answers
 * for its modules by position, by ID and by AppDomain, and tells the
 * resolver which modules a module sees (its AppDomain and the shared
 * one). Readers never free, never wait and never call talloc. */
#include "config.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#include <mdtools/modset.h>
#include <mdtools/tables.h>

#include "typeref/modset_int.h"

bool tr_visible(const struct mdt_modview *v, uint32_t from, uint32_t cand)
{
    uintptr_t c = v->mods[cand]->domain;
    return c == MDT_APPDOMAIN_SHARED || c == v->mods[from]->domain;
}

mdt_modview *mdt_modset_acquire(mdt_modset *set)
{
    struct mdt_modview *v;
    _Atomic long *window = &set->acquiring[atomic_load(&set->epoch) & 1];
    atomic_fetch_add(window, 1);
    v = atomic_load(&set->cur);
    atomic_fetch_add(&v->refs, 1);
    atomic_fetch_sub(window, 1);
    return v;
}

void mdt_modview_release(mdt_modview *v)
{
    if (v)
        atomic_fetch_sub(&v->refs, 1);
}

uint64_t mdt_modview_generation(const mdt_modview *v)
{
    return v->gen;
}

size_t mdt_modview_count(const mdt_modview *v)
{
    return v->n;
}

static void fill_info(const mdt_modview *v, uint32_t i, mdt_module_info *out)
{
    const struct tr_mod *m = v->mods[i];
    memset(out, 0, sizeof *out);
    out->id = m->id;
    out->image = m->img;
    out->appdomain = m->domain;
    out->name = m->name;
    out->path = m->path;
    out->index = i;
    out->is_manifest = m->manifest;
    out->bad_image = m->bad;
    if (m->manifest)
        out->identity = m->ident;
    out->manifest = v->asm_of[i] == TR_NONE ? 0 : v->mods[v->asm_of[i]]->id;
}

int mdt_modview_module(mdt_module_info *out, const mdt_modview *v, size_t i)
{
    if (i >= v->n)
        return MDT_ENOTFOUND;
    fill_info(v, (uint32_t)i, out);
    return 0;
}

int mdt_modview_lookup(mdt_module_info *out, const mdt_modview *v, uintptr_t id)
{
    uint32_t i = tr_view_find(v, id);
    if (i == TR_NONE)
        return MDT_ENOTFOUND;
    fill_info(v, i, out);
    return 0;
}

int mdt_modview_next(mdt_module_info *out, const mdt_modview *v, uintptr_t appdomain,
                     bool include_shared, size_t *pos)
{
    for (size_t i = *pos; i < v->n; i++) {
        uintptr_t d = v->mods[i]->domain;
        if (d == appdomain || (include_shared && d == MDT_APPDOMAIN_SHARED)) {
            fill_info(v, (uint32_t)i, out);
            *pos = i + 1;
            return 0;
        }
    }
    *pos = v->n;
    return MDT_ITEROVER;
}
