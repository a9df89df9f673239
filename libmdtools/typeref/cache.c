/* The result cache of a view (cache_int.h): what makes a warm resolution
 * a few loads. A view's modules never change, so an answer computed once
 * for (module, row) with the default options holds for the view's life.
 * Each module's cache, and each table's entries in it, is created by the
 * first reader that needs it (malloc: readers run on any thread, talloc is
 * not thread-safe) and published with a compare-and-swap; each entry is
 * then claimed and published on its own (cache_int.h). Nothing here waits
 * or takes a lock. The cache is freed with its view (modset.c). */
#include "config.h"

#include <stdatomic.h>
#include <stdlib.h>

#include <mdtools/tables.h>
#include <mdtools/token.h>
#include <mdtools/typeref.h>

#include "typeref/cache_int.h"
#include "typeref/index_int.h"
#include "typeref/modset_int.h"
#include "typeref/result_int.h"

/* ---- caches and entry blocks --------------------------------------------- */

/* Cache entries live in a calloc'ed block, aligned to a cache line inside
 * it; the block's address is kept just before the first entry. */
static void entries_free(struct tr_centry *e)
{
    if (e)
        free(((void **)e)[-1]);
}

void tr_cache_free(struct tr_cache *c)
{
    for (unsigned k = 0; k < TR_C_TABLES; k++)
        entries_free(atomic_load_explicit(&c->ent[k], memory_order_relaxed));
    free(c->ar);
    free(c);
}

struct tr_cache *tr_cache_get(const struct mdt_modview *v, uint32_t mi)
{
    _Atomic(struct tr_cache *) *slot = &v->cache[mi];
    struct tr_cache *c = atomic_load_explicit(slot, memory_order_acquire), *expected = NULL;
    const struct mdt_image *img = v->mods[mi]->img;
    if (c)
        return c;
    c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    if (img) {
        c->n[TR_C_TYPEREF] = tr_rows(img, MDT_TABLE_TypeRef);
        c->n[TR_C_MEMBERREF] = tr_rows(img, MDT_TABLE_MemberRef);
        c->n[TR_C_EXPORTED] = tr_rows(img, MDT_TABLE_ExportedType);
        c->nar = tr_rows(img, MDT_TABLE_AssemblyRef);
    }
    c->ar = calloc(c->nar ? c->nar : 1, sizeof *c->ar);
    if (!c->ar) {
        free(c);
        return NULL;
    }
    if (atomic_compare_exchange_strong_explicit(slot, &expected, c, memory_order_acq_rel,
                                                memory_order_acquire))
        return c;
    tr_cache_free(c);
    return expected;
}

struct tr_centry *tr_cache_entries(struct tr_cache *c, unsigned k)
{
    struct tr_centry *e = atomic_load_explicit(&c->ent[k], memory_order_acquire), *expected = NULL;
    uint32_t n = c->n[k];
    void *block;
    if (e)
        return e;
    /* calloc, not memset: pages of rows never resolved are never touched. */
    block = calloc(1, (size_t)(n ? n : 1) * sizeof *e + 64 + sizeof(void *));
    if (!block)
        return NULL;
    e = (struct tr_centry *)(((uintptr_t)block + sizeof(void *) + 63) & ~(uintptr_t)63);
    ((void **)e)[-1] = block;
    if (atomic_compare_exchange_strong_explicit(&c->ent[k], &expected, e, memory_order_acq_rel,
                                                memory_order_acquire))
        return e;
    free(block);
    return expected;
}

/* ---- answers ------------------------------------------------------------- */

struct tr_centry *tr_cache_slot(const struct mdt_modview *v, uint32_t mi, uint32_t token)
{
    struct tr_cache *c = tr_cache_get(v, mi);
    uint32_t rid = MDT_TOKEN_RID(token);
    int k = tr_cache_kind(token);
    struct tr_centry *e;
    if (!c || k < 0 || rid - 1u >= c->n[k] || !(e = tr_cache_entries(c, (unsigned)k)))
        return NULL; /* rid 0 wraps */
    return &e[rid - 1];
}

bool tr_cache_read(struct tr_centry *e, struct tr_res *r)
{
    if (!e || !tr_entry_ready(&e->state))
        return false;
    tr_res_init(r);
    r->resolved = e->resolved;
    r->reason = e->reason;
    r->tier = e->tier;
    r->flags = (uint8_t)(e->flags | MDT_RES_FROM_CACHE);
    r->hops = e->hops;
    r->nvisited = e->nvisited;
    r->module = e->module;
    r->token = e->token;
    r->where_module = e->where_module;
    r->where_token = e->where_token;
    r->instead_module = e->instead_module;
    r->instead_token = e->instead_token;
    for (unsigned i = 0; i < e->nvisited; i++)
        r->visited[i] = e->visited[i];
    return true;
}

bool tr_cache_export(const struct mdt_modview *v, struct tr_centry *e, mdt_resolution *out)
{
    if (!tr_entry_ready(&e->state))
        return false;
    out->resolved = e->resolved;
    out->reason = e->reason;
    out->tier = e->tier;
    out->flags = (uint8_t)(e->flags | MDT_RES_FROM_CACHE);
    out->hops = e->hops;
    out->nvisited = e->nvisited;
    out->module = e->resolved ? v->mods[e->module]->id : 0;
    out->token = e->resolved ? e->token : 0;
    for (unsigned i = 0; i < e->nvisited; i++)
        out->visited[i] = v->mods[e->visited[i]]->id;
    out->where_module = tr_view_id(v, e->where_module);
    out->where_token = e->where_token;
    out->instead_module = tr_view_id(v, e->instead_module);
    out->instead_token = e->instead_token;
    return true;
}

void tr_cache_write(struct tr_centry *e, const struct tr_res *r)
{
    if (!e || r->nvisited > TR_CACHE_VISITED || !tr_entry_claim(&e->state))
        return; /* another thread has it (or is writing it): it computes the same */
    e->resolved = r->resolved;
    e->reason = r->reason;
    e->tier = r->tier;
    e->flags = (uint8_t)(r->flags & ~MDT_RES_FROM_CACHE);
    e->hops = r->hops;
    e->nvisited = (uint8_t)r->nvisited;
    e->module = r->module;
    e->token = r->token;
    e->where_module = r->where_module;
    e->where_token = r->where_token;
    e->instead_module = r->instead_module;
    e->instead_token = r->instead_token;
    for (unsigned i = 0; i < r->nvisited; i++)
        e->visited[i] = r->visited[i];
    tr_entry_publish(&e->state);
}
