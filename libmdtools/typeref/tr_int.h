/* Private structures of the module set and the resolver.
 *
 * Memory: everything a reader may touch (snapshots, module records, per-image
 * name indexes, result caches) is malloc'ed, never talloc'ed, because
 * readers run on any thread and talloc is not thread-safe. Module records and
 * snapshots are immutable once published, except for the lazily built name
 * index and result caches, which are published with a compare-and-swap (the
 * loser frees its copy) and whose cache entries are claimed one by one. */
#ifndef MDT_TYPEREF_TR_INT_H
#define MDT_TYPEREF_TR_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mdtools/assembly.h>
#include <mdtools/modset.h>
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

struct tr_htab {
    struct tr_hent *e;
    uint32_t mask;     /* capacity - 1; capacity 0 when e == NULL */
    uint8_t table;     /* TypeDef or ExportedType: where the names are */
};

/* Name indexes of one image. Immutable once published. */
struct tr_index {
    const struct mdt_image *img;
    struct tr_htab td;    /* top-level TypeDefs by (ns, name) */
    struct tr_htab nest;  /* nested TypeDefs by (enclosing rid, ns, name) */
    struct tr_htab et;    /* top-level ExportedType rows by (ns, name) */
};

/* A registered module. Immutable once published, but for `idx`. */
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
    _Atomic(struct tr_index *) idx;
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

/* Result caches of one module in one snapshot. */
struct tr_cache {
    uint32_t ntr, nmr, net, nar;
    struct tr_arentry *ar;          /* AssemblyRef rows */
    struct tr_centry *tr, *mr, *et; /* TypeRef, MemberRef, ExportedType rows */
    void *block;                    /* what to free */
};

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
};

struct mdt_modset {
    pthread_mutex_t lock;
    _Atomic(struct mdt_modview *) cur;
    _Atomic long acquiring;         /* readers between loading cur and taking a ref */
    uint64_t gen;                   /* writer only */
    struct tr_mod **live;           /* writer only, registration order */
    uint32_t nlive, caplive;
    struct mdt_modview *retired;    /* writer only: replaced snapshots */
    struct tr_mod *dead;            /* writer only: removed modules */
};

/* modset.c */
uint32_t tr_view_find(const struct mdt_modview *v, uintptr_t id);
bool tr_visible(const struct mdt_modview *v, uint32_t from, uint32_t cand);
int tr_ascii_casecmp(const char *a, const char *b);
uint32_t tr_name_hash_ci(const char *s);
/* The module of assembly `a` (a manifest index) whose name is `name`, or TR_NONE. */
uint32_t tr_assembly_module(const struct mdt_modview *v, uint32_t a, const char *name);
struct tr_cache *tr_cache_get(const struct mdt_modview *v, uint32_t mi);

/* index.c */
/* Rows of `table` that can actually be read (a damaged image may declare
 * more rows than its tables stream holds: those all fail with MDT_ETRUNC).
 * Every walk over a table here is bounded by this, not by the declared count. */
uint32_t tr_rows(const struct mdt_image *img, unsigned table);
uint32_t tr_hash(uint32_t key2, const char *ns, const char *name);
/* The index of module mi, built on first use; NULL when it has no image or
 * the index could not be built (out of memory). */
const struct tr_index *tr_index_get(struct tr_mod *m);
void tr_index_free(struct tr_index *x);
/* Lookups: the rid, or 0. */
uint32_t tr_find_typedef(const struct tr_index *x, const char *ns, const char *name);
uint32_t tr_find_nested(const struct tr_index *x, uint32_t enclosing, const char *ns,
                        const char *name);
uint32_t tr_find_exported(const struct tr_index *x, const char *ns, const char *name);

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
bool tr_cache_export_fast(const struct mdt_modview *v, uintptr_t module, uint32_t token,
                          const mdt_resolve_opts *opts, mdt_trace **trace, mdt_resolution *out);
void tr_cache_write(struct tr_centry *e, const struct tr_res *r);

#endif
