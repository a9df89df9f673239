/* The map object, which every unit of tokens/ reads (README.md explains the
 * design): the structures readers load on every lookup (current tables and
 * indexes, the module handle array, the reader slots), then the writer's
 * state. It is the one header the units share above the tables, because
 * every unit reaches its own structures through the map; what a unit keeps
 * for itself sits behind a pointer to a structure only that unit defines
 * (dependents, module handles, code ranges), so this header names them
 * without showing them. Layout rules are in base_int.h. */
#ifndef MDT_TOKENS_IDMAP_INT_H
#define MDT_TOKENS_IDMAP_INT_H

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mdtools/idmap.h>

#include "tokens/base_int.h"
#include "tokens/grace_int.h"
#include "tokens/table_int.h"
#include "tokens/wmap_int.h"

/* Kinds of things with lifetimes. Domains and assemblies have no records,
 * only tombstones and dependents. */
enum idm_kind { K_MODULE = 0, K_CLASS = 1, K_FUNC = 2, K_DOMAIN = 3, K_ASSEMBLY = 4, K_NKINDS };

/* Parts plugged into the writer core beside the record kinds: the TypeDef
 * presence index and code ranges (idmap.c lists them). */
#define IDM_NPARTS 2u

struct mdt_idmap {
    /* Read by every reader, written only when a structure is replaced. */
    alignas(IDM_SEP) _Atomic(struct idm_tab *) tab[3]; /* K_MODULE, K_CLASS, K_FUNC */
    _Atomic(struct idm_itab *) rev[3];                 /* reverse: [K_CLASS], [K_FUNC] (index.c) */
    _Atomic(struct idm_itab *) presence;               /* presence.c */
    _Atomic(struct idm_rtop *) ranges;                 /* ranges_int.h */
    _Atomic(struct idm_mods *) mods;                   /* module handle -> ModuleID (handles.c) */
    struct idm_grace g;
    /* Any thread (mdt_idmap_next_seq). */
    alignas(IDM_SEP) _Atomic uint64_t seqctr;

    /* writer only */
    alignas(IDM_SEP) pthread_mutex_t lock;
    /* What is plugged into the core (idmap.c, writer_int.h): the record
     * kinds (NULL for kinds without records) and the parts, in order. */
    const struct idm_kind_ops *kind[K_NKINDS];
    const struct idm_part_ops *part[IDM_NPARTS];
    unsigned nparts;
    unsigned children[K_NKINDS]; /* 1u << kind of the records that can name each kind */
    bool unsettled;              /* a part wants to settle (idm_want_settle) */
    bool deps_due;               /* the dependents want to settle (deps.c) */
    bool rev_on[3];              /* kinds with a reverse index (content hash, options) */
    uint64_t watermark;
    /* At least every seq idm_last_unload can answer (tombstones, unload
     * history): a load newer than it names nothing unloaded, which spares
     * a common load the history's and the tables' lines (issue 24). */
    uint64_t unload_bound;
    struct idm_wmap hist;   /* (kind, id) -> last unload seq, for live or absent records */
    struct idm_wmap newer;  /* (kind, id) -> newest seq of a live record with META_NEWER */
    struct idm_deps *deps;  /* dependents (deps.c) */
    struct idm_handles *hd; /* module handles (handles.c) */
    struct idm_rwriter *rw; /* code ranges, writer's side (ranges_int.h) */
    /* Presence counts from 0xffff up (presence.c): one writer map, which
     * needs no structure of its own. */
    struct idm_wmap pover;
    size_t args_bytes;           /* out-of-line blocks and paths (args.c, modules.c) */
    _Atomic uint64_t modchanges; /* mdt_idmap_module_changes(); any thread may load it */
    /* mdt_idmap_code_changes(), mdt_idmap_code_removals(): odd while the
     * writer changes the ranges (ranges_int.h, idm_ranges_begin/_end) */
    _Atomic uint64_t code_changes, code_removals;
    mdt_idmap_miss_fn miss;
    void *miss_payload;
#ifdef MDT_IDMAP_RECORD
    struct idm_trace *trace; /* trace.c */
#endif
};

/* Current tables (seq_cst: see grace.c for why). */
static inline struct idm_tab *idm_cur(const mdt_idmap *m, int kind)
{
    return atomic_load_explicit(&((mdt_idmap *)m)->tab[kind], memory_order_seq_cst);
}

/* Writer (mutex held): the current table of kind, and the slot of id in it. */
static inline struct idm_tab *idm_wtab(const mdt_idmap *m, int kind)
{
    return atomic_load_explicit(&((mdt_idmap *)m)->tab[kind], memory_order_relaxed);
}

static inline struct idm_head *idm_wfind(const mdt_idmap *m, int kind, uintptr_t id)
{
    return idm_tab_find(idm_wtab(m, kind), id);
}

#endif
