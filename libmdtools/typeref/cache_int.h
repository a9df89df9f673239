/* The result cache of a view (cache.c): per module, the answers for its
 * TypeRef, MemberRef and ExportedType rows and the ranked binding
 * candidates of its AssemblyRef rows. Only answers computed with the
 * default options and without a trace are cached; they stay valid for the
 * view's life because a view never changes. */
#ifndef MDT_TYPEREF_CACHE_INT_H
#define MDT_TYPEREF_CACHE_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <mdtools/tables.h>
#include <mdtools/token.h>
#include <mdtools/typeref.h>

#include "typeref/modset_int.h"
#include "typeref/result_int.h"

/* Every entry has a state: 0 empty, 1 being written, 2 ready. One thread
 * claims an empty entry (0 -> 1), fills it and publishes it (-> 2, release);
 * a reader takes only a ready one (acquire). A reader that finds it empty
 * or being written computes the answer itself: the same answer. */
enum { TR_ENTRY_EMPTY, TR_ENTRY_WRITING, TR_ENTRY_READY };

static inline bool tr_entry_ready(_Atomic uint32_t *state)
{
    return atomic_load_explicit(state, memory_order_acquire) == TR_ENTRY_READY;
}

/* True when the caller now owns the entry and must publish it. */
static inline bool tr_entry_claim(_Atomic uint32_t *state)
{
    uint32_t expected = TR_ENTRY_EMPTY;
    return atomic_compare_exchange_strong_explicit(state, &expected, TR_ENTRY_WRITING,
                                                   memory_order_acquire, memory_order_relaxed);
}

static inline void tr_entry_publish(_Atomic uint32_t *state)
{
    atomic_store_explicit(state, TR_ENTRY_READY, memory_order_release);
}

/* A cached answer: one cache line. Answers that visited more assemblies
 * than fit are not cached (they are recomputed: forwarder chains that long
 * are rare). */
#define TR_CACHE_VISITED 7
struct tr_centry {
    _Atomic uint32_t state;
    bool resolved;
    uint8_t reason, tier, flags;
    uint16_t hops;
    uint8_t nvisited, pad;
    uint32_t module, token;
    uint32_t where_module, where_token;
    uint32_t instead_module, instead_token;
    uint32_t visited[TR_CACHE_VISITED];
};

/* The ranked binding candidates of one AssemblyRef row (bind.c), when
 * there are few. */
#define TR_CACHE_CANDS 6
struct tr_arentry {
    _Atomic uint32_t state;
    uint8_t n;
    uint8_t tier[TR_CACHE_CANDS];
    uint32_t mi[TR_CACHE_CANDS];
};

/* Result caches of one module in one snapshot. The entries of each table
 * are allocated on the first request for a row of that table (most
 * modules' MemberRefs, say, are never resolved) and published with a
 * compare-and-swap, like the cache itself. */
enum { TR_C_TYPEREF, TR_C_MEMBERREF, TR_C_EXPORTED, TR_C_TABLES };
struct tr_cache {
    uint32_t n[TR_C_TABLES];                      /* rows of TypeRef, MemberRef, ExportedType */
    _Atomic(struct tr_centry *) ent[TR_C_TABLES]; /* their entries */
    uint32_t nar;
    struct tr_arentry *ar; /* AssemblyRef rows */
};

/* Which entries of a cache hold answers for `token`'s table, or -1. */
static inline int tr_cache_kind(uint32_t token)
{
    unsigned t = MDT_TOKEN_TABLE(token);
    return t == MDT_TABLE_TypeRef        ? TR_C_TYPEREF
           : t == MDT_TABLE_MemberRef    ? TR_C_MEMBERREF
           : t == MDT_TABLE_ExportedType ? TR_C_EXPORTED
                                         : -1;
}

/* The cache of module mi of view v, created on first use; NULL when out of
 * memory. */
struct tr_cache *tr_cache_get(const struct mdt_modview *v, uint32_t mi);
/* The entries for table k (TR_C_...) of cache c, allocated on first use;
 * NULL when out of memory. */
struct tr_centry *tr_cache_entries(struct tr_cache *c, unsigned k);
/* Free a cache and its entries (its view is being freed). */
void tr_cache_free(struct tr_cache *c);

/* Cache slot for (module, token) or NULL (no cache for that table / ENOMEM). */
struct tr_centry *tr_cache_slot(const struct mdt_modview *v, uint32_t mi, uint32_t token);
/* A ready entry into *r (flagged MDT_RES_FROM_CACHE), or false; e may be NULL. */
bool tr_cache_read(struct tr_centry *e, struct tr_res *r);
/* A ready entry straight into the public struct, or false. */
bool tr_cache_export(const struct mdt_modview *v, struct tr_centry *e, mdt_resolution *out);
/* Fill an empty entry with r, unless r does not fit or another thread has
 * claimed it; e may be NULL. */
void tr_cache_write(struct tr_centry *e, const struct tr_res *r);
/* The binding entry of AssemblyRef row `ref` of module mi, or NULL (no
 * such row, out of memory). */
static inline struct tr_arentry *tr_cache_binding(const struct mdt_modview *v, uint32_t mi,
                                                  uint32_t ref)
{
    struct tr_cache *c = tr_cache_get(v, mi);
    return c && ref && ref <= c->nar ? &c->ar[ref - 1] : NULL;
}

/* The fast path of every resolve call: a cached answer for default options
 * and no trace (inline: it is all a warm call does). *mip: the module's
 * index when it was looked up, else TR_NONE. */
static inline bool tr_cache_export_fast(const struct mdt_modview *v, uintptr_t module,
                                        uint32_t token, const mdt_resolve_opts *opts,
                                        mdt_trace **trace, mdt_resolution *out, uint32_t *mip)
{
    uint32_t mi, rid = MDT_TOKEN_RID(token);
    int k = tr_cache_kind(token);
    struct tr_cache *c;
    struct tr_centry *e;
    *mip = TR_NONE;
    if (trace || !v ||
        (opts && (opts->flags || opts->version > MDT_RESOLVE_OPTS_VERSION ||
                  (opts->max_hops && opts->max_hops < MDT_RESOLVE_MAX_HOPS))))
        return false;
    if ((*mip = mi = tr_view_find(v, module)) == TR_NONE || k < 0 ||
        !(c = atomic_load_explicit(&v->cache[mi], memory_order_acquire)) || rid - 1u >= c->n[k] ||
        !(e = atomic_load_explicit(&c->ent[k], memory_order_acquire)))
        return false; /* rid 0 wraps */
    return tr_cache_export(v, &e[rid - 1], out);
}

#endif
