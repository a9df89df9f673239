/* The writer core (writer.c) and how the record kinds and the parts plug
 * into it. Every writer call locks, checks its seq, does its work and
 * finishes here; a record kind (modules.c, classes.c, functions.c) gives
 * the core a const struct idm_kind_ops, a part with state of its own
 * (presence.c, ranges_part.c) a const struct idm_part_ops, and idmap.c plugs
 * them in when it creates a map. The core calls them through the map and
 * names none of them. */
#ifndef MDT_TOKENS_WRITER_INT_H
#define MDT_TOKENS_WRITER_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mdtools/idmap.h>

#include "tokens/idmap_int.h"
#include "tokens/table_int.h"

/* ---- the plugs ------------------------------------------------------------- */

/* What an item or a record names: up to 3 single IDs plus a list of
 * ClassIDs (type arguments or the element of a shape). inl holds the one
 * inline argument when args has nowhere else to point. */
struct idm_refs {
    size_t n;
    struct {
        int kind;
        uintptr_t id;
    } r[3];
    uint32_t nargs;
    const uintptr_t *args;
    uintptr_t inl[1];
};

/* What a new incarnation's slot takes over: the kind's out-of-line memory
 * (type arguments, a path) and, for kinds that name a module, a reference
 * to the module's handle. */
struct idm_payload {
    void *block;
    uint32_t handle;
};

/* Does the record in slot h (live or dead) name (pk, pid)? */
typedef bool idm_names_fn(const mdt_idmap *m, const struct idm_head *h, int pk, uintptr_t pid);

/* How a record kind (modules, classes, functions) plugs into the writer
 * core: the core runs the precedence rules, the cascades, the tables and
 * the reverse indexes for every kind and calls these for what only the
 * kind knows. Members that do not apply are NULL. Every call is made with
 * the writer mutex held. */
struct idm_kind_ops {
    int kind;            /* K_MODULE, K_CLASS, K_FUNC */
    size_t slot_size;    /* bytes per slot of the kind's table */
    unsigned names_mask; /* 1u << K_... of what a record's content may name; a kind
                          * that names modules keeps the handle in its slot word w */
    /* What the record in slot h (live or dead) names; whether it names
     * (pk, pid) (the same answer, without building the list: dependents
     * walks ask it for every entry). */
    void (*refs)(const mdt_idmap *m, const struct idm_head *h, struct idm_refs *out);
    idm_names_fn *names;
    /* Hash of the content of slot h for the reverse index (0: this record
     * is not indexed); NULL: no index. */
    uint64_t (*content_hash)(const mdt_idmap *m, const struct idm_head *h);
    /* A load of `info` over the live record in slot h: -1 other content, 0
     * the same, 1 the same with fields to fill in. */
    int (*compare)(const mdt_idmap *m, const struct idm_head *h, const void *info);
    /* The same content (cmp 0 or 1) loaded again at seq: fill in, raise the
     * record's seq, or refuse; returns the call's outcome. */
    int (*same)(mdt_idmap *m, struct idm_head *h, uintptr_t id, const void *info,
                const struct idm_refs *refs, uint64_t seq, int cmp);
    /* Allocate the out-of-line memory of a new incarnation (error recorded),
     * and give it back when the load fails after all. */
    int (*prepare)(mdt_idmap *m, const void *info, struct idm_payload *p);
    void (*discard)(mdt_idmap *m, struct idm_payload *p);
    /* Store the payload words of a new incarnation (the core has made the
     * slot's seqlock odd, or the slot is not published yet). */
    void (*write)(mdt_idmap *m, struct idm_head *h, const void *info, const struct idm_payload *p);
    /* A record became live / died (indexes, counters). */
    void (*on_live)(mdt_idmap *m, struct idm_head *h);
    void (*on_dead)(mdt_idmap *m, struct idm_head *h);
    /* The slot's payload goes: through the grace period (release), or at
     * once when the map is freed (destroy). */
    void (*release)(mdt_idmap *m, struct idm_head *h);
    void (*destroy)(struct idm_head *h);
};

/* How a part with state of its own beside the records (the TypeDef
 * presence index, code ranges) plugs into the writer core. Members that do
 * not apply are NULL; every call but init is made with the writer mutex
 * held. */
struct idm_part_ops {
    /* At map creation (the tables exist; MDT_ENOMEM fails the creation) and
     * destruction (also after a failed init). */
    int (*init)(mdt_idmap *m, const mdt_idmap_options *opts);
    void (*fini)(mdt_idmap *m);
    /* A record flagged META_WATCHED died, or a late unload made it a new
     * incarnation (`from` -> `to`; what was applied after `after` stays). */
    void (*watched_died)(mdt_idmap *m, int kind, struct idm_head *h);
    void (*watched_reborn)(mdt_idmap *m, int kind, uintptr_t id, uint64_t from, uint64_t to,
                           uint64_t after);
    /* At the end of a writer call in which some part asked for it
     * (idm_want_settle; a negative error becomes the call's result), and in
     * mdt_idmap_retire(), after the tables were rebuilt. */
    int (*settle)(mdt_idmap *m);
    int (*retire)(mdt_idmap *m, uint64_t below);
    /* Add the part's memory and counts to *out (mdt_idmap_stats_get). */
    void (*stats)(const mdt_idmap *m, mdt_idmap_stats *out);
};

/* Plug a record kind or a part into the core (at creation; parts are
 * called in the order they were plugged). */
void idm_plug_kind(mdt_idmap *m, const struct idm_kind_ops *kind);
void idm_plug_part(mdt_idmap *m, const struct idm_part_ops *part);

/* A part has work for its settle at the end of this writer call. The
 * flag spares every other call a round of the parts. */
static inline void idm_want_settle(mdt_idmap *m)
{
    m->unsettled = true;
}

/* Do things of this kind have records (modules, classes, functions), or
 * only tombstones and dependents (AppDomains, assemblies)? */
static inline bool idm_has_records(const mdt_idmap *m, int kind)
{
    return m->kind[kind] != NULL;
}

/* Does the record in slot h (of kind ck, live or dead) name (pk, pid)? */
static inline bool idm_names(const mdt_idmap *m, const struct idm_head *h, int ck, int pk,
                             uintptr_t pid)
{
    return m->kind[ck]->names(m, h, pk, pid);
}

/* Is there a record kind that can name a thing of kind pk at or after *k
 * (start with *k = 0)? Then *k is the first. */
static inline bool idm_next_child(const mdt_idmap *m, int pk, int *k)
{
    unsigned c = m->children[pk] >> *k;
    if (!c)
        return false;
    *k += __builtin_ctz(c);
    return true;
}

/* ---- a writer call ----------------------------------------------------------- */

/* Take the writer mutex (MDT_EINVAL, recorded, on the thread that holds it
 * already, inside an mdt_idmap_module_each() callback); release it. */
int idm_lock(mdt_idmap *m);
void idm_unlock(mdt_idmap *m);
/* 0 when seq may be applied, MDT_IDMAP_SUPERSEDED below the retire
 * watermark, MDT_EINVAL (recorded) when out of range. */
int idm_check_seq(const mdt_idmap *m, uint64_t seq);
/* Begin a writer call at seq: the mutex taken and seq checked. 0: go on,
 * and end the call with idm_finish(); else the call is over already and
 * this is its result (an error, or MDT_IDMAP_SUPERSEDED below the
 * watermark). */
int idm_begin(mdt_idmap *m, uint64_t seq);
/* End a writer call whose result is rc: the parts settle (a negative
 * error of theirs replaces a non-negative rc), dependents merge, retired
 * memory and module handles are reclaimed, the mutex is released.
 * Returns the call's result. */
int idm_finish(mdt_idmap *m, int rc);

/* ---- seqs ------------------------------------------------------------------- */

/* Writer: a record's newest applied seq, and setting it (MDT_ENOMEM when a
 * live record's seq above its gen cannot be remembered). */
uint64_t idm_seq(const mdt_idmap *m, int kind, const struct idm_head *h);
int idm_set_seq(mdt_idmap *m, int kind, struct idm_head *h, uint64_t seq);
/* Writer: forget a live record's newer seq (its gen catches up or it dies). */
void idm_drop_newer(mdt_idmap *m, int kind, struct idm_head *h);
/* Raise a record's newest applied seq to seq (MDT_ENOMEM, recorded). */
int idm_note_seq(mdt_idmap *m, int kind, struct idm_head *h, uint64_t seq);
/* The last unload of (kind, id): a tombstone's seq, else the unload
 * history's; 0 when none is known. */
uint64_t idm_last_unload(const mdt_idmap *m, int kind, uintptr_t id);
/* Writer: an unload seq was stored (a tombstone's seq, the unload
 * history): keep m->unload_bound above every one. */
static inline void idm_unload_seen(mdt_idmap *m, uint64_t seq)
{
    if (seq > m->unload_bound)
        m->unload_bound = seq;
}
/* Writer: the unload history's entry of (kind, id) becomes seq
 * (MDT_ENOMEM). */
int idm_hist_put(mdt_idmap *m, int kind, uintptr_t id, uint64_t seq);

/* ---- slots and tables --------------------------------------------------------- */

/* The slot of id in the table of kind, growing the table when it must
 * (*fresh: an empty slot); NULL when out of memory (recorded). */
struct idm_head *idm_place(mdt_idmap *m, int kind, uintptr_t id, bool *fresh);
/* Writer: make n the table of `kind` (with a reverse index rebuilt for it)
 * and retire the old one; with drop_below != 0, release the payloads of the
 * old table's dead records older than that (n must leave them out) and
 * count them in *dropped. On failure n is freed and nothing changes. */
int idm_tab_publish(mdt_idmap *m, int kind, struct idm_tab *n, uint64_t drop_below, int *dropped);
/* The live record in slot h dies at seq (a tombstone); the kind and the
 * parts that watch it are told. */
void idm_kill_slot(mdt_idmap *m, int kind, struct idm_head *h, uint64_t seq);
/* A late unload at `after` of the live record in slot h, which a newer
 * load of the same content showed alive (gen <= after < its seq): the
 * unload ended incarnation gen, the newer information starts incarnation
 * seq; the parts that watch the record follow. */
void idm_renew_slot(mdt_idmap *m, int kind, struct idm_head *h, uint64_t after);

#endif
