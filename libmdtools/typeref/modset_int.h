/* Private structures of the module set (modset.c, modview.c): module records,
 * snapshots ("views") and the set itself, and the lookups on a view every
 * part of the resolver uses.
 *
 * Memory: everything a reader may touch (snapshots, module records, per-image
 * name indexes, result caches) is malloc'ed, never talloc'ed, because
 * readers run on any thread and talloc is not thread-safe. Module records and
 * snapshots are immutable once published, except for what is built lazily:
 * a module's four name indexes (index_int.h), a view's per-module result
 * caches and each cache's entry blocks (cache_int.h). Each of those is built
 * by the first reader that needs it, without a lock, and published with a
 * compare-and-swap on its own pointer: a reader that loses the race frees
 * its copy and uses the winner's, so two readers may both build (wasted
 * work, never a wrong answer) but nobody waits, and nothing published is
 * written again, except cache entries, which are claimed one by one. */
#ifndef MDT_TYPEREF_MODSET_INT_H
#define MDT_TYPEREF_MODSET_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mdtools/assembly.h>
#include <mdtools/modset.h>

#include "util/hash.h"

#define TR_NONE UINT32_MAX

struct tr_htab; /* index_int.h */
struct tr_nsset;
struct tr_cache; /* cache_int.h */

/* A registered module. Immutable once published, but for the indexes. */
struct tr_mod {
    uintptr_t id;
    const struct mdt_image *img;
    uintptr_t domain;
    char *name;             /* malloc'ed, never NULL */
    char *path;             /* malloc'ed or NULL */
    uintptr_t manifest_req; /* explicit manifest ID or 0 */
    bool manifest;          /* has an Assembly row */
    bool bad;               /* Module/Assembly row unreadable */
    mdt_identity ident;     /* manifests */
    char *culture;          /* normalized: "" for neutral (malloc'ed) */
    uint32_t name_hash;     /* tr_name_hash_ci of the simple name (manifests) */
    void *owned;            /* talloc image to free at reclamation */
    /* Name indexes, each built on first need (index.c). */
    _Atomic(struct tr_htab *) idx_td;   /* top-level TypeDefs by (ns, name) */
    _Atomic(struct tr_htab *) idx_nest; /* nested TypeDefs by (enclosing rid, ns, name) */
    _Atomic(struct tr_htab *) idx_et;   /* top-level ExportedType rows by (ns, name) */
    _Atomic(struct tr_nsset *) idx_ns;  /* namespace filter */
    uint64_t dead_gen;                  /* writer only: generation that dropped it */
    struct tr_mod *next_dead;           /* writer only */
};

/* A slot of the ID hash: the ID inline, so a lookup touches one line. */
struct tr_idslot {
    uintptr_t id; /* 0: empty */
    uint32_t index;
};

/* A snapshot: what readers see. The public mdt_modview. */
struct mdt_modview {
    _Atomic long refs;
    uint64_t gen;
    uint32_t n;
    struct tr_mod **mods;    /* registration order */
    uint32_t *asm_of;        /* manifest index of module i's assembly, or TR_NONE */
    struct tr_idslot *idtab; /* ID hash, open addressing */
    uint32_t idmask;
    uint32_t *ntab; /* simple-name hash: first manifest index + 1 */
    uint32_t nmask;
    uint32_t *nnext; /* next manifest index + 1 in the same bucket */
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
    uint64_t gen;         /* writer only */
    struct tr_mod **live; /* writer only, registration order */
    uint32_t nlive;
    struct mdt_modview *retired; /* writer only: replaced snapshots */
    struct tr_mod *dead;         /* writer only: removed modules */
    const void *mirror;          /* writer only: the idmap last mirrored (mirror.c) */
    uint64_t mirror_changes;     /* its mdt_idmap_module_changes() then */
};

/* Writer, lock held: drop the modules `remove` and register `add`, as one
 * new snapshot; all or nothing (mirror.c uses it too). */
int tr_modset_change_locked(mdt_modset *set, const uintptr_t *remove, size_t nremove,
                            const mdt_module_desc *add, size_t nadd, unsigned flags);

/* A module ID's slot: IDs are pointers, apart in a few middle bits. */
static inline uint32_t tr_id_hash(uintptr_t id)
{
    return (uint32_t)mdt__mix64((uint64_t)id);
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

/* The ID of module mi of the view, or 0 for TR_NONE (and out of range). */
static inline uintptr_t tr_view_id(const struct mdt_modview *v, uint32_t mi)
{
    return mi == TR_NONE || mi >= v->n ? 0 : v->mods[mi]->id;
}

/* Whether module `cand` is visible from module `from` (same AppDomain, or
 * shared; modview.c). */
bool tr_visible(const struct mdt_modview *v, uint32_t from, uint32_t cand);
/* strcmp and a hash folding ASCII case only: assembly and module names. */
int tr_ascii_casecmp(const char *a, const char *b);
uint32_t tr_name_hash_ci(const char *s);
/* The module of assembly `a` (a manifest index) whose name is `name`, or TR_NONE. */
uint32_t tr_assembly_module(const struct mdt_modview *v, uint32_t a, const char *name);

#endif
