/* Private structures of the module set and the resolver.
 *
 * Memory: everything a reader may touch (snapshots, module records, per-image
 * name indexes, result caches) is malloc'ed, never talloc'ed, because
 * readers run on any thread and talloc is not thread-safe. Module records and
 * snapshots are immutable once published, except for what is built lazily:
 * a module's four name indexes (top-level TypeDefs, nested TypeDefs,
 * ExportedTypes, namespace filter), a view's per-module result caches and
 * each cache's entry blocks (one per table). Each of those is built by the
 * first reader that needs it, without a lock, and published with a
 * compare-and-swap on its own pointer: a reader that loses the race frees
 * its copy and uses the winner's, so two readers may both build (wasted
 * work, never a wrong answer) but nobody waits, and nothing published is
 * written again, except cache entries, which are claimed one by one. */
#ifndef MDT_TYPEREF_TR_INT_H
#define MDT_TYPEREF_TR_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mdtools/assembly.h>
#include <mdtools/modset.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>
#include <mdtools/typeref.h>

#define TR_NONE UINT32_MAX

/* One entry of an open-addressing hash table keyed by (key2, ns, name).
 * The names themselves are read back from the row on a hash match: 12 bytes
 * an entry keep the tables small (fewer pages to fault in). */
struct tr_hent {
    uint32_t hash;
    uint32_t rid;      /* 0: empty slot */
    uint32_t key2;     /* enclosing TypeDef rid for nested entries, else 0 */
};

/* A name index of one image (index.c). Immutable once published. */
struct tr_htab {
    uint32_t mask;     /* capacity - 1 */
    uint8_t table;     /* TypeDef or ExportedType: where the names are */
    struct tr_hent e[];
};

/* The namespace filter of one image: hashes (never 0) of every namespace
 * its TypeDef and ExportedType rows name. Immutable once published. */
struct tr_nsset {
    uint32_t mask, n;
    uint32_t h[];
};

/* A type name to look up, hashed once and then probed in any number of
 * modules' indexes. */
struct tr_key {
    const char *ns, *name;
    uint64_t state;    /* hash state after (ns, name): nested keys add the enclosing rid */
    uint32_t hash;     /* top-level key */
    uint32_t nshash;   /* namespace alone (the filter) */
};

/* A registered module. Immutable once published, but for the indexes. */
struct tr_mod {
    uintptr_t id;
    const struct mdt_image *img;
    uintptr_t domain;
    char *name;               /* malloc'ed, never NULL */
    char *path;               /* malloc'ed or NULL */
    uintptr_t manifest_req;   /* explicit manifest ID or 0 */
    bool manifest;            /* has an Assembly row */
    bool bad;                 /* Module/Assembly row unreadable */
    mdt_identity ident;       /* manifests */
    char *culture;            /* normalized: "" for neutral (malloc'ed) */
    uint32_t name_hash;       /* tr_name_hash_ci of the simple name (manifests) */
    void *owned;              /* talloc image to free at reclamation */
    /* Name indexes, each built on first need (index.c). */
    _Atomic(struct tr_htab *) idx_td;    /* top-level TypeDefs by (ns, name) */
    _Atomic(struct tr_htab *) idx_nest;  /* nested TypeDefs by (enclosing rid, ns, name) */
    _Atomic(struct tr_htab *) idx_et;    /* top-level ExportedType rows by (ns, name) */
    _Atomic(struct tr_nsset *) idx_ns;   /* namespace filter */
    uint64_t dead_gen;        /* writer only: generation that dropped it */
    struct tr_mod *next_dead; /* writer only */
};

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

/* A cached answer: one cache line. Answers that visited more assemblies
 * than fit are not cached (they are recomputed: forwarder chains that long
 * are rare). */
#define TR_CACHE_VISITED 7
struct tr_centry {
    _Atomic uint32_t state;   /* 0 empty, 1 being written, 2 ready */
    bool resolved;
    uint8_t reason, tier, flags;
    uint16_t hops;
    uint8_t nvisited, pad;
    uint32_t module, token;
    uint32_t where_module, where_token;
    uint32_t instead_module, instead_token;
    uint32_t visited[TR_CACHE_VISITED];
};

/* The sorted binding candidates of one AssemblyRef row (when few). */
#define TR_CACHE_CANDS 6
struct tr_arentry {
    _Atomic uint32_t state;   /* 0 empty, 1 being written, 2 ready */
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
    uint32_t n[TR_C_TABLES];        /* rows of TypeRef, MemberRef, ExportedType */
    _Atomic(struct tr_centry *) ent[TR_C_TABLES]; /* their entries */
    uint32_t nar;
    struct tr_arentry *ar;          /* AssemblyRef rows */
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

/* A slot of the ID hash: the ID inline, so a lookup touches one line. */
struct tr_idslot {
    uintptr_t id;       /* 0: empty */
    uint32_t index;
};

/* A snapshot: what readers see. The public mdt_modview. */
struct mdt_modview {
    _Atomic long refs;
    uint64_t gen;
    uint32_t n;
    struct tr_mod **mods;           /* registration order */
    uint32_t *asm_of;               /* manifest index of module i's assembly, or TR_NONE */
    struct tr_idslot *idtab;        /* ID hash, open addressing */
    uint32_t idmask;
    uint32_t *ntab;                 /* simple-name hash: first manifest index + 1 */
    uint32_t nmask;
    uint32_t *nnext;                /* next manifest index + 1 in the same bucket */
    _Atomic(struct tr_cache *) *cache;
    struct mdt_modview *next_retired; /* writer only */
    uint64_t retired_epoch;           /* writer only: the set's epoch when unpublished */
};

struct mdt_modset {
    pthread_mutex_t lock;
    _Atomic(struct mdt_modview *) cur;
    /* Readers between loading cur and taking a ref count themselves in
     * acquiring[epoch & 1] (modset.c says why two). */
    _Atomic uint64_t epoch;
    _Atomic long acquiring[2];
    uint64_t gen;                   /* writer only */
    struct tr_mod **live;           /* writer only, registration order */
    uint32_t nlive;
    struct mdt_modview *retired;    /* writer only: replaced snapshots */
    struct tr_mod *dead;            /* writer only: removed modules */
    const void *mirror;             /* writer only: the idmap last mirrored (mirror.c) */
    uint64_t mirror_changes;        /* its mdt_idmap_module_changes() then */
};

/* modset.c */
int tr_modset_change_locked(mdt_modset *set, const uintptr_t *remove, size_t nremove,
                            const mdt_module_desc *add, size_t nadd, unsigned flags);
static inline uint32_t tr_id_hash(uintptr_t id)
{
    uint64_t x = (uint64_t)id;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (uint32_t)x;
}

/* The view index of module `id`, or TR_NONE. */
static inline uint32_t tr_view_find(const struct mdt_modview *v, uintptr_t id)
{
    if (!v->idtab || !id)
        return TR_NONE;
    for (uint32_t i = tr_id_hash(id) & v->idmask, n = 0; n <= v->idmask;
         i = (i + 1) & v->idmask, n++) {
        const struct tr_idslot *e = &v->idtab[i];
        if (e->id == id)
            return e->index;
        if (!e->id)
            return TR_NONE;
    }
    return TR_NONE;
}
bool tr_visible(const struct mdt_modview *v, uint32_t from, uint32_t cand);
int tr_ascii_casecmp(const char *a, const char *b);
uint32_t tr_name_hash_ci(const char *s);
/* The module of assembly `a` (a manifest index) whose name is `name`, or TR_NONE. */
uint32_t tr_assembly_module(const struct mdt_modview *v, uint32_t a, const char *name);
struct tr_cache *tr_cache_get(const struct mdt_modview *v, uint32_t mi);
/* The entries for table k (TR_C_...) of cache c, allocated on first use;
 * NULL when out of memory. */
struct tr_centry *tr_cache_entries(struct tr_cache *c, unsigned k);

/* index.c */
/* Rows of `table` that can actually be read (a damaged image may declare
 * more rows than its tables stream holds: those all fail with MDT_ETRUNC).
 * Every walk over a table here is bounded by this, not by the declared count. */
uint32_t tr_rows(const struct mdt_image *img, unsigned table);
/* Hash ns and name (borrowed: the key points at them) into k. img: the
 * image whose #Strings heap they lie in, when they do (faster), or NULL. */
void tr_key_init(struct tr_key *k, const struct mdt_image *img, const char *ns, const char *name);
/* The indexes of module m, built on first use; NULL when it has no image or
 * the index could not be built (out of memory). */
const struct tr_htab *tr_idx_typedefs(struct tr_mod *m);
const struct tr_htab *tr_idx_nested(struct tr_mod *m);
const struct tr_htab *tr_idx_exported(struct tr_mod *m);
void tr_index_free(struct tr_mod *m);
/* Lookups: the rid, or 0 (also when the index is missing). */
uint32_t tr_htab_find(const struct tr_mod *m, const struct tr_htab *t, const struct tr_key *k);
uint32_t tr_find_typedef(struct tr_mod *m, const struct tr_key *k);
uint32_t tr_find_nested(struct tr_mod *m, uint32_t enclosing, const struct tr_key *k);
uint32_t tr_find_exported(struct tr_mod *m, const struct tr_key *k);
/* False when module m surely has no top-level TypeDef or ExportedType in
 * k's namespace (true when it may, or when the filter cannot be built). */
bool tr_may_define(struct tr_mod *m, const struct tr_key *k);
/* TypeRef row rid: its ResolutionScope token and names, as mdt_row_get,
 * mdt_row_token and mdt_row_string would read them (0), or -1 when one of
 * them fails (the error record then says why). */
int tr_typeref_row(const struct mdt_image *img, uint32_t rid, uint32_t *scope, const char **ns,
                   const char **name);

/* resolve.c */
/* Resolve a TypeDef/TypeRef token of module mi to (module index, TypeDef
 * rid) through the view's cache. Returns 0 with *r filled (resolved or not),
 * or a negative code for bad arguments. */
int tr_resolve_type(const struct mdt_modview *v, uint32_t mi, uint32_t token, struct tr_res *r);
void tr_res_export(const struct mdt_modview *v, const struct tr_res *r, mdt_resolution *out);
void tr_res_init(struct tr_res *r);
/* Cache slot for (module, token) or NULL (no cache for that table / ENOMEM). */
struct tr_centry *tr_cache_slot(const struct mdt_modview *v, uint32_t mi, uint32_t token);
bool tr_cache_read(struct tr_centry *e, struct tr_res *r);
/* Cached answer straight into the public struct, or false. */
bool tr_cache_export(const struct mdt_modview *v, struct tr_centry *e, mdt_resolution *out);
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
    if (trace || !v || (opts && (opts->flags || (opts->max_hops &&
                                                 opts->max_hops < MDT_RESOLVE_MAX_HOPS))))
        return false;
    if ((*mip = mi = tr_view_find(v, module)) == TR_NONE || k < 0 ||
        !(c = atomic_load_explicit(&v->cache[mi], memory_order_acquire)) ||
        rid - 1u >= c->n[k] || !(e = atomic_load_explicit(&c->ent[k], memory_order_acquire)))
        return false; /* rid 0 wraps */
    return tr_cache_export(v, &e[rid - 1], out);
}
void tr_cache_write(struct tr_centry *e, const struct tr_res *r);

#endif
