/* Which information wins, and what an unload takes with it. Each record
 * keeps the seq of the newest information applied to it (a dead record
 * keeps its unload seq: a tombstone; a live one its generation, or, when a
 * duplicate was newer, an entry in the map's `newer` table, see idm_seq),
 * so an older load or unload is ignored whatever order threads deliver
 * them in. An item is also refused when something it names (module,
 * AppDomain, assembly, owning class, type argument) was unloaded at or
 * after the item's seq: enumerations are stamped with the seq at which
 * they were generated, and such an item
 * describes an incarnation that is already gone. Unloads cascade through
 * the dependents kept by the writer (deps.c): every record is listed under
 * every ID its content names, and an unload at seq t ends the incarnation
 * of the listed records that are live, still name the unloaded ID and were
 * created at or before t: they die, or, when a newer load said what they
 * stood for after t, go on as a new incarnation (the result of applying
 * the unload before that load; README.md, "Semantics", says why).
 * An entry is kept as long as the record in that slot, live or dead,
 * names the thing; a rebirth whose previous content already named it adds
 * nothing, so reloading the same content does not grow the lists. The
 * load of every record kind (idm_load) and every unload go through here;
 * what only a kind knows (its content, its payload) it says through its
 * operations (struct idm_kind_ops). */
#define _DEFAULT_SOURCE /* clockid_t, pthread_getcpuclockid (grace_int.h) */
#include "config.h"

#include <stdlib.h>

#include "tokens/deps_int.h"
#include "tokens/handles_int.h"
#include "tokens/idmap_int.h"
#include "tokens/lifetime_int.h"
#include "tokens/table_int.h"
#include "tokens/wmap_int.h"
#include "tokens/writer_int.h"
#include "util/error.h"

/* The first last-unload at or after seq of what refs names, 0 if none. */
static uint64_t refs_unloaded(const mdt_idmap *m, const struct idm_refs *refs, uint64_t seq)
{
    uint64_t first = 0;
    if (seq > m->unload_bound)
        return 0; /* nothing was unloaded at or after seq */
    for (size_t i = 0; i < refs->n + refs->nargs; i++) {
        uint64_t u = i < refs->n ? idm_last_unload(m, refs->r[i].kind, refs->r[i].id)
                                 : idm_last_unload(m, K_CLASS, refs->args[i - refs->n]);
        if (u >= seq && (first == 0 || u < first))
            first = u;
    }
    return first;
}

bool idm_refs_stale(const mdt_idmap *m, const struct idm_refs *refs, uint64_t seq)
{
    return refs_unloaded(m, refs, seq) != 0;
}

/* The item described a thing that died with what it names: as if its
 * record had been live and named it, it dies at that unload (a tombstone
 * when the map had no record; a live record of older content dies; one of
 * the same content reloaded later gets a new incarnation, as any late
 * unload gives it). Only the first unload at or after seq among those
 * named is known to be the one (history keeps the last unload of an ID):
 * a later one refuses more than it must, which leaves an ID unknown, never
 * wrong. */
static int unload(mdt_idmap *m, int kind, uintptr_t id, uint64_t seq);

int idm_refuse(mdt_idmap *m, int kind, uintptr_t id, const struct idm_refs *refs, uint64_t seq)
{
    int rc = unload(m, kind, id, refs_unloaded(m, refs, seq));
    return rc < 0 ? rc : MDT_IDMAP_SUPERSEDED;
}

static bool refs_name(const struct idm_refs *refs, int pk, uintptr_t pid)
{
    for (size_t i = 0; i < refs->n; i++)
        if (refs->r[i].kind == pk && refs->r[i].id == pid)
            return true;
    for (uint32_t i = 0; pk == K_CLASS && i < refs->nargs; i++)
        if (refs->args[i] == pid)
            return true;
    return false;
}

/* Count, for every thing the old content of slot h names and the new
 * content (refs) does not, one inert entry in its list. */
static void old_refs_stale(mdt_idmap *m, const struct idm_head *h, int kind,
                           const struct idm_refs *refs)
{
    struct idm_refs o;
    m->kind[kind]->refs(m, h, &o);
    for (size_t i = 0; i < o.n; i++)
        if (o.r[i].id && !refs_name(refs, o.r[i].kind, o.r[i].id))
            idm_dep_stale(m, o.r[i].kind, o.r[i].id, kind);
    for (uint32_t i = 0; i < o.nargs; i++)
        if (!refs_name(refs, K_CLASS, o.args[i]))
            idm_dep_stale(m, K_CLASS, o.args[i], kind);
}

/* List (kind, id) as a dependent of everything refs names that the
 * previous content of its slot old (NULL if none) did not name already:
 * that is listed already. */
static int add_deps(mdt_idmap *m, const struct idm_refs *refs, int kind, uintptr_t id,
                    struct idm_head *old)
{
    if (old)
        old_refs_stale(m, old, kind, refs);
    for (size_t i = 0; i < refs->n; i++) {
        bool seen = old && idm_names(m, old, kind, refs->r[i].kind, refs->r[i].id);
        for (size_t j = 0; j < i && !seen; j++)
            if (refs->r[j].kind == refs->r[i].kind && refs->r[j].id == refs->r[i].id)
                seen = true;
        if (!seen && idm_dep_push(m, refs->r[i].kind, refs->r[i].id, kind, id))
            return mdt__fail_simple(MDT_ENOMEM, "idmap: out of memory for dependents");
    }
    for (uint32_t i = 0; i < refs->nargs; i++) {
        bool seen = old && idm_names(m, old, kind, K_CLASS, refs->args[i]);
        for (size_t j = 0; j < refs->n && !seen; j++)
            if (refs->r[j].kind == K_CLASS && refs->r[j].id == refs->args[i])
                seen = true;
        for (uint32_t j = 0; j < i && !seen; j++)
            if (refs->args[j] == refs->args[i])
                seen = true;
        if (!seen && idm_dep_push(m, K_CLASS, refs->args[i], kind, id))
            return mdt__fail_simple(MDT_ENOMEM, "idmap: out of memory for dependents");
    }
    return 0;
}

struct work {
    struct {
        int kind;
        uintptr_t id;
    } * it;
    size_t n, cap;
};

static bool work_push(struct work *w, int kind, uintptr_t id)
{
    if (w->n == w->cap) {
        size_t ncap = w->cap ? w->cap * 2 : 16;
        void *nw = realloc(w->it, ncap * sizeof w->it[0]);
        if (!nw)
            return false;
        w->it = nw;
        w->cap = ncap;
    }
    w->it[w->n].kind = kind;
    w->it[w->n++].id = id;
    return true;
}

/* A late unload at t of the live record in slot h, which a newer load of
 * the same content showed alive after t: the unload ended incarnation
 * gen <= t, the newer load starts one of its own, as if the unload had
 * been applied first and that load after it (a code_add is no such news:
 * it names the ID, which may stand for something else by then). The
 * history keeps t, so that an item older than t naming the ID is refused
 * as it would be by the tombstone the record would have had in between. */
static int renew_late(mdt_idmap *m, int kind, struct idm_head *h, uint64_t t)
{
    uintptr_t id = atomic_load_explicit(&h->key, memory_order_relaxed);
    uint64_t *v = idm_wmap_get(&m->hist, kind, id);
    if ((!v || *v < t) && idm_hist_put(m, kind, id, t))
        return mdt__fail_simple(MDT_ENOMEM, "idmap: out of memory");
    /* Its dependents entries stay valid: same content. */
    idm_renew_slot(m, kind, h, t);
    return 0;
}

struct kill_ctx {
    struct work w;
    uint64_t seq;
    int changed;
};

/* A dependent of the thing unloaded at k->seq: its incarnation ends with
 * what it names, whatever its own seq (nothing contained in a dead module,
 * class, AppDomain or assembly outlives it). A record that a newer load
 * showed alive after the unload goes on as a new incarnation (renew_late);
 * one created after the unload is not touched. Either way what the ended
 * incarnation contained is queued. */
static int kill_dependent(mdt_idmap *m, int ck, struct idm_head *h, void *ctx)
{
    struct kill_ctx *k = ctx;
    if (!idm_live(h) || idm_gen(h) > k->seq)
        return 0;
    if (idm_seq(m, ck, h) <= k->seq) {
        idm_kill_slot(m, ck, h, k->seq);
    } else {
        int rc = renew_late(m, ck, h, k->seq);
        if (rc < 0)
            return rc;
    }
    k->changed++;
    if (!work_push(&k->w, ck, atomic_load_explicit(&h->key, memory_order_relaxed)))
        return mdt__fail_simple(MDT_ENOMEM, "idmap: out of memory in unload");
    return 0;
}

/* End, at seq, the incarnations of the records listed under (pkind, pid)
 * that are live, still name it and were created at or before seq; cascade
 * to what they contain. Returns how many records changed, or an error. */
static int cascade(mdt_idmap *m, int pkind, uintptr_t pid, uint64_t seq)
{
    struct kill_ctx k = {{NULL, 0, 0}, seq, 0};
    if (!work_push(&k.w, pkind, pid))
        return mdt__fail_simple(MDT_ENOMEM, "idmap: out of memory in unload");
    while (k.w.n > 0) {
        k.w.n--;
        int pk = k.w.it[k.w.n].kind;
        uintptr_t p = k.w.it[k.w.n].id;
        for (int ck = 0; idm_next_child(m, pk, &ck); ck++) {
            int rc = idm_deps_walk(m, pk, p, ck, kill_dependent, &k);
            if (rc < 0) {
                free(k.w.it);
                return rc == MDT_ENOMEM ? mdt__fail_simple(MDT_ENOMEM, "idmap: out of memory in "
                                                                       "unload")
                                        : rc;
            }
        }
    }
    free(k.w.it);
    return k.changed;
}

/* Unload (kind, id) at seq and cascade: an MDT_IDMAP_ outcome or an error. */
static int unload(mdt_idmap *m, int kind, uintptr_t id, uint64_t seq)
{
    int rc = MDT_IDMAP_DUPLICATE;
    if (idm_has_records(m, kind)) {
        struct idm_head *h = idm_wfind(m, kind, id);
        if (!h) {
            bool fresh;
            h = idm_place(m, kind, id, &fresh);
            if (!h)
                return MDT_ENOMEM;
            /* A tombstone for an ID never seen alive. */
            atomic_store_explicit(&h->w, 0, memory_order_relaxed);
            idm_unload_seen(m, seq);
            atomic_store_explicit(&h->gv, seq << 1, memory_order_relaxed);
            atomic_store_explicit(&h->key, id, memory_order_release);
            atomic_load_explicit(&m->tab[kind], memory_order_relaxed)->used++;
            rc = MDT_IDMAP_APPLIED;
        } else if (!idm_live(h)) {
            if (seq > idm_gen(h)) {
                idm_set_seq(m, kind, h, seq);
                rc = MDT_IDMAP_APPLIED;
            }
        } else {
            uint64_t g = idm_gen(h), hs = idm_seq(m, kind, h);
            if (seq >= hs) {
                idm_kill_slot(m, kind, h, seq);
                rc = MDT_IDMAP_APPLIED;
            } else if (g <= seq) {
                /* A late unload of the incarnation that a newer load already
                 * replaced (same content): the newer load starts a new
                 * incarnation. */
                rc = renew_late(m, kind, h, seq);
                if (rc < 0)
                    return rc;
                rc = MDT_IDMAP_APPLIED;
            } else {
                /* An unload of an incarnation before the one the map
                 * knows. The record stays, but the history keeps the
                 * unload: an item older than it that names this ID named
                 * that earlier incarnation (found by order_oracle.c: a
                 * function of a module unloaded and reloaded, applied
                 * after both, answered for the new module). */
                uint64_t *v = idm_wmap_get(&m->hist, kind, id);
                if ((!v || *v < seq) && idm_hist_put(m, kind, id, seq))
                    return mdt__fail_simple(MDT_ENOMEM, "idmap: out of memory");
                rc = MDT_IDMAP_SUPERSEDED;
            }
        }
    } else {
        uint64_t *v = idm_wmap_get(&m->hist, kind, id);
        if (!v || *v < seq) {
            if (idm_hist_put(m, kind, id, seq))
                return mdt__fail_simple(MDT_ENOMEM, "idmap: out of memory");
            rc = MDT_IDMAP_APPLIED;
        }
    }
    int changed = cascade(m, kind, id, seq);
    if (changed < 0)
        return changed;
    return changed > 0 ? MDT_IDMAP_APPLIED : rc;
}

/* Write a new incarnation into slot h (fresh or dead): the kind stores its
 * payload words inside the seqlock (or before the key publishes a fresh
 * slot). */
static void write_record(mdt_idmap *m, int kind, struct idm_head *h, bool fresh, uintptr_t id,
                         const void *info, const struct idm_payload *p, uint64_t seq)
{
    const struct idm_kind_ops *k = m->kind[kind];
    struct idm_tab *t = atomic_load_explicit(&m->tab[kind], memory_order_relaxed);
    if (!fresh) {
        idm_drop_newer(m, kind, h);
        k->release(m, h);
        idm_slot_begin(h);
    }
    k->write(m, h, info, p);
    if (fresh) {
        atomic_store_explicit(&h->gv, seq << 1, memory_order_relaxed);
        atomic_store_explicit(&h->key, id, memory_order_release);
        t->used++;
    } else {
        idm_slot_end(h, seq);
    }
    t->live++;
    if (k->on_live)
        k->on_live(m, h);
}

/* The module a load names (its handle goes into the slot), 0 if none. */
static uintptr_t refs_module(const struct idm_refs *refs)
{
    for (size_t i = 0; i < refs->n; i++)
        if (refs->r[i].kind == K_MODULE)
            return refs->r[i].id;
    return 0;
}

int idm_load(mdt_idmap *m, int kind, uintptr_t id, const void *info, const struct idm_refs *refs,
             uint64_t seq)
{
    const struct idm_kind_ops *k = m->kind[kind];
    int rc = idm_begin(m, seq);
    if (rc)
        return rc;

    /* The ID's slot is found once: what runs before the record is written
     * (kills and cascades, the kind's prepare, the dependents, the module
     * handle) never replaces the table, so h stays its slot (issue 24: the
     * same probe three times, the first one cold, in a real build). */
    struct idm_tab *t0 = idm_wtab(m, kind);
    struct idm_head *h = idm_tab_find(t0, id);
    if (h && idm_live(h)) {
        int cmp = k->compare(m, h, info);
        if (cmp >= 0) {
            rc = k->same(m, h, id, info, refs, seq, cmp);
            goto out;
        }
        if (seq <= idm_seq(m, kind, h)) {
            rc = MDT_IDMAP_SUPERSEDED;
            goto out;
        }
        if (idm_refs_stale(m, refs, seq)) {
            rc = idm_refuse(m, kind, id, refs, seq);
            goto out;
        }
        /* Newer and different: the old incarnation ended unseen. */
        idm_kill_slot(m, kind, h, seq - 1);
        rc = cascade(m, kind, id, seq - 1);
        if (rc < 0)
            goto out;
    } else if (h && seq <= idm_seq(m, kind, h)) {
        rc = MDT_IDMAP_SUPERSEDED;
        goto out;
    } else if (idm_refs_stale(m, refs, seq)) {
        rc = idm_refuse(m, kind, id, refs, seq);
        goto out;
    }

    /* Reviving a tombstone: remember when the previous incarnation ended. */
    if (h && idm_hist_put(m, kind, id, idm_seq(m, kind, h))) {
        rc = mdt__fail_simple(MDT_ENOMEM, "idmap: out of memory");
        goto out;
    }
    struct idm_payload p = {NULL, 0};
    rc = k->prepare(m, info, &p);
    if (rc)
        goto out;
    rc = add_deps(m, refs, kind, id, h);
    if (rc == 0 && (k->names_mask & 1u << K_MODULE)) {
        p.handle = idm_handle_get(m, refs_module(refs));
        if (p.handle == UINT32_MAX) {
            p.handle = 0;
            rc = mdt__fail_simple(MDT_ENOMEM, "idmap: out of memory or module handles");
        }
    }
    bool fresh = false;
    if (rc == 0 && (!h || idm_wtab(m, kind) != t0) && !(h = idm_place(m, kind, id, &fresh))) {
        idm_handle_put(m, p.handle);
        rc = MDT_ENOMEM;
    }
    if (rc) {
        k->discard(m, &p);
        goto out;
    }
    write_record(m, kind, h, fresh, id, info, &p, seq);
    rc = MDT_IDMAP_APPLIED;
out:
    return idm_finish(m, rc);
}

int idm_unload_call(mdt_idmap *m, int kind, uintptr_t id, uint64_t seq)
{
    int rc = idm_begin(m, seq);
    if (rc)
        return rc;
    return idm_finish(m, unload(m, kind, id, seq));
}
