/* The writer core: what every writer call goes through, whatever it
 * writes. The mutex that serializes writers; the check of a call's seq
 * against the retire watermark; each record's newest applied seq (its
 * generation, or an entry in the writer-only `newer` map when a duplicate
 * was newer) and the last unload of an ID (a tombstone's seq, or the
 * unload history); the life of a slot (kill, renewal by a late unload),
 * with the record kind's operations and the parts that watch it told; the
 * publication of a grown or retired table with its reverse index; and the
 * end of every call, where the parts settle, dependents merge and retired
 * memory is reclaimed. The record kinds (modules.c, classes.c,
 * functions.c) and the parts (presence.c, ranges.c) plug into it through
 * const operation tables (writer_int.h); it names none of them. The rules
 * that decide which information wins are in lifetime.c. */
#define _DEFAULT_SOURCE /* clockid_t, pthread_getcpuclockid (grace_int.h) */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "tokens/deps_int.h"
#include "tokens/grace_int.h"
#include "tokens/handles_int.h"
#include "tokens/idmap_int.h"
#include "tokens/index_int.h"
#include "tokens/table_int.h"
#include "tokens/wmap_int.h"
#include "tokens/writer_int.h"
#include "util/error.h"

int idm_lock(mdt_idmap *m)
{
    /* An error-checking mutex (idmap.c): the thread that holds it, inside an
     * mdt_idmap_module_each() callback, gets EDEADLK instead of waiting for
     * itself forever. */
    int e = pthread_mutex_lock(&m->lock);
    if (e == EDEADLK)
        return mdt__fail_simple(MDT_EINVAL, "idmap: writer call on a thread that holds the "
                                            "map's mutex (inside mdt_idmap_module_each's "
                                            "callback)");
    return e ? mdt__fail_simple(MDT_EINVAL, "idmap: cannot lock the map (error %d)", e) : 0;
}

void idm_unlock(mdt_idmap *m)
{
    pthread_mutex_unlock(&m->lock);
}

int idm_check_seq(const mdt_idmap *m, uint64_t seq)
{
    if (seq == 0 || seq >= (UINT64_C(1) << 63))
        return mdt__fail_simple(MDT_EINVAL, "idmap: sequence number %llu out of range",
                                (unsigned long long)seq);
    return seq < m->watermark ? MDT_IDMAP_SUPERSEDED : 0;
}

int idm_begin(mdt_idmap *m, uint64_t seq)
{
    int rc = idm_lock(m);
    if (rc)
        return rc;
    rc = idm_check_seq(m, seq);
    return rc ? idm_finish(m, rc) : 0;
}

uint64_t idm_seq(const mdt_idmap *m, int kind, const struct idm_head *h)
{
    uint64_t g = idm_gen(h);
    if (!(idm_meta(h) & META_NEWER))
        return g;
    uint64_t *v = idm_wmap_get(
        &m->newer, kind, atomic_load_explicit(&((struct idm_head *)h)->key, memory_order_relaxed));
    return v && *v > g ? *v : g;
}

int idm_set_seq(mdt_idmap *m, int kind, struct idm_head *h, uint64_t seq)
{
    if (!idm_live(h)) {
        /* A tombstone's seq is its generation field; readers skip it. */
        idm_unload_seen(m, seq);
        atomic_store_explicit(&h->gv, seq << 1, memory_order_release);
        return 0;
    }
    if (seq <= idm_gen(h)) {
        idm_drop_newer(m, kind, h);
        return 0;
    }
    uintptr_t id = atomic_load_explicit(&h->key, memory_order_relaxed);
    if (idm_wmap_put(&m->newer, kind, id, seq))
        return MDT_ENOMEM;
    idm_set_meta(h, idm_meta(h) | META_NEWER);
    return 0;
}

void idm_drop_newer(mdt_idmap *m, int kind, struct idm_head *h)
{
    unsigned meta = idm_meta(h);
    if (!(meta & META_NEWER))
        return;
    idm_wmap_del(&m->newer, kind, atomic_load_explicit(&h->key, memory_order_relaxed));
    idm_set_meta(h, meta & ~META_NEWER);
}

int idm_note_seq(mdt_idmap *m, int kind, struct idm_head *h, uint64_t seq)
{
    if (seq > idm_seq(m, kind, h) && idm_set_seq(m, kind, h, seq))
        return mdt__fail_simple(MDT_ENOMEM, "idmap: out of memory");
    return 0;
}

uint64_t idm_last_unload(const mdt_idmap *m, int kind, uintptr_t id)
{
    if (idm_has_records(m, kind)) {
        struct idm_head *h = idm_wfind(m, kind, id);
        if (h && !idm_live(h))
            return idm_gen(h);
    }
    uint64_t *v = idm_wmap_get(&m->hist, kind, id);
    return v ? *v : 0;
}

int idm_hist_put(mdt_idmap *m, int kind, uintptr_t id, uint64_t seq)
{
    idm_unload_seen(m, seq);
    return idm_wmap_put(&m->hist, kind, id, seq);
}

void idm_plug_kind(mdt_idmap *m, const struct idm_kind_ops *kind)
{
    m->kind[kind->kind] = kind;
    for (int pk = 0; pk < K_NKINDS; pk++)
        if (kind->names_mask & 1u << pk)
            m->children[pk] |= 1u << kind->kind;
}

void idm_plug_part(mdt_idmap *m, const struct idm_part_ops *part)
{
    m->part[m->nparts++] = part;
}

/* Tell the parts that watch records (code ranges) about a change of one. */
static void watched_died(mdt_idmap *m, int kind, struct idm_head *h)
{
    for (unsigned i = 0; i < m->nparts; i++)
        if (m->part[i]->watched_died)
            m->part[i]->watched_died(m, kind, h);
}

static void watched_reborn(mdt_idmap *m, int kind, uintptr_t id, uint64_t from, uint64_t to,
                           uint64_t after)
{
    for (unsigned i = 0; i < m->nparts; i++)
        if (m->part[i]->watched_reborn)
            m->part[i]->watched_reborn(m, kind, id, from, to, after);
}

void idm_kill_slot(mdt_idmap *m, int kind, struct idm_head *h, uint64_t seq)
{
    idm_drop_newer(m, kind, h);
    /* Live bit first: a reader that sees the new gv sees the record dead. */
    idm_set_meta(h, idm_meta(h) & ~META_LIVE);
    idm_unload_seen(m, seq);
    atomic_store_explicit(&h->gv, seq << 1, memory_order_release);
    atomic_load_explicit(&m->tab[kind], memory_order_relaxed)->live--;
    const struct idm_kind_ops *k = m->kind[kind];
    if (k->on_dead)
        k->on_dead(m, h);
    if (idm_meta(h) & META_WATCHED)
        watched_died(m, kind, h);
}

void idm_renew_slot(mdt_idmap *m, int kind, struct idm_head *h, uint64_t after)
{
    uint64_t from = idm_gen(h), to = idm_seq(m, kind, h);
    idm_drop_newer(m, kind, h);
    idm_slot_begin(h);
    idm_slot_end(h, to);
    /* What watches the record (code ranges) and was applied after the
     * unload goes on with the new incarnation, the rest dies (one rule with
     * records). */
    if (idm_meta(h) & META_WATCHED)
        watched_reborn(m, kind, atomic_load_explicit(&h->key, memory_order_relaxed), from, to,
                       after);
}

int idm_tab_publish(mdt_idmap *m, int kind, struct idm_tab *n, uint64_t drop_below, int *dropped)
{
    struct idm_tab *old = atomic_load_explicit(&m->tab[kind], memory_order_relaxed);
    struct idm_itab *oldr = NULL, *nr = NULL;
    const struct idm_kind_ops *k = m->kind[kind];
    if (m->rev_on[kind]) {
        oldr = atomic_load_explicit(&m->rev[kind], memory_order_relaxed);
        nr = idm_rev_build(m, n, kind, 0);
        if (!nr) {
            free(n);
            return mdt__fail_simple(MDT_ENOMEM, "idmap: out of memory growing an index");
        }
    }
    /* Nothing can fail any more. The payloads of the dead records n leaves
     * out go to the grace period (readers skip a dead record before they
     * follow its payload pointer). */
    for (size_t i = 0; drop_below && i < old->cap; i++) {
        struct idm_head *h = idm_slot(old, i);
        if (atomic_load_explicit(&h->key, memory_order_relaxed) && !idm_live(h) &&
            idm_gen(h) < drop_below) {
            k->release(m, h);
            ++*dropped;
        }
    }
    /* Table first: a reader holding the old index verifies in the current
     * table, and until both are retired everything it can reach stays. */
    atomic_store_explicit(&m->tab[kind], n, memory_order_seq_cst);
    if (nr)
        atomic_store_explicit(&m->rev[kind], nr, memory_order_seq_cst);
    idm_deps_remap(m, kind, old, n);
    idm_retire(&m->g, old, old->bytes);
    if (oldr)
        idm_retire(&m->g, oldr, oldr->bytes);
    return 0;
}

struct idm_head *idm_place(mdt_idmap *m, int kind, uintptr_t id, bool *fresh)
{
    for (;;) {
        struct idm_tab *t = atomic_load_explicit(&m->tab[kind], memory_order_relaxed);
        struct idm_head *h = idm_tab_place(t, id, fresh);
        if (h)
            return h;
        struct idm_tab *n = idm_tab_rebuild(t, idm_cap_grow(t->cap), 0);
        if (!n) {
            mdt__fail_simple(MDT_ENOMEM, "idmap: out of memory growing a table");
            return NULL;
        }
        if (idm_tab_publish(m, kind, n, 0, NULL))
            return NULL;
    }
}

int idm_finish(mdt_idmap *m, int rc)
{
    if (m->unsettled) {
        /* Cleared first: a part whose settle fails asks again. */
        m->unsettled = false;
        for (unsigned i = 0; i < m->nparts; i++) {
            int e = m->part[i]->settle ? m->part[i]->settle(m) : 0;
            if (e < 0 && rc >= 0)
                rc = e;
        }
    }
    if (m->deps_due)
        idm_deps_settle(m);
    idm_reclaim(&m->g, false);
    idm_handles_reclaim(m);
    idm_unlock(m);
    return rc;
}
