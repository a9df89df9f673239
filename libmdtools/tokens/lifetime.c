/* Which information wins, and what an unload takes with it. Each record
 * keeps the seq of the newest information applied to it (a dead record
 * keeps its unload seq: a tombstone), so an older load or unload is ignored
 * whatever order threads deliver them in. An item is also refused when
 * something it names (module, AppDomain, assembly, owning class, type
 * argument) was unloaded at or after the item's seq: enumerations are
 * stamped with the seq at which they were generated, and such an item
 * describes an incarnation that is already gone. Unloads cascade through
 * dependents lists kept by the writer: each incarnation is registered with
 * (kind, ID, gen) under every ID it names, and an unload at seq t kills the
 * registered incarnations that are still current and not newer than t. */
#include "config.h"

#include <stdlib.h>

#include "tokens/idmap_int.h"
#include "util/error.h"

int idm_lock(mdt_idmap *m)
{
    return pthread_mutex_lock(&m->lock) ? MDT_EINVAL : 0;
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

static bool has_records(int kind)
{
    return kind == K_MODULE || kind == K_CLASS || kind == K_FUNC;
}

static struct idm_head *wfind(const mdt_idmap *m, int kind, uintptr_t id)
{
    return idm_tab_find(atomic_load_explicit(&((mdt_idmap *)m)->tab[kind], memory_order_relaxed),
                        id);
}

static bool is_live(const struct idm_head *h)
{
    return atomic_load_explicit(&((struct idm_head *)h)->meta, memory_order_relaxed) & META_LIVE;
}

uint64_t idm_last_unload(const mdt_idmap *m, int kind, uintptr_t id)
{
    if (has_records(kind)) {
        struct idm_head *h = wfind(m, kind, id);
        if (h && !is_live(h))
            return h->seq;
    }
    uint64_t *v = idm_wmap_get(&m->hist, kind, id);
    return v ? *v : 0;
}

bool idm_refs_stale(const mdt_idmap *m, const struct idm_refs *refs, uint64_t seq)
{
    for (size_t i = 0; i < refs->n; i++)
        if (idm_last_unload(m, refs->r[i].kind, refs->r[i].id) >= seq)
            return true;
    for (uint32_t i = 0; i < refs->nargs; i++)
        if (idm_last_unload(m, K_CLASS, refs->args[i]) >= seq)
            return true;
    return false;
}

int idm_dep_push(mdt_idmap *m, int pkind, uintptr_t pid, int kind, uintptr_t id, uint64_t gen)
{
    uint64_t *v = idm_wmap_get(&m->deps, pkind, pid);
    struct idm_deplist *l = v ? (struct idm_deplist *)(uintptr_t)*v : NULL;
    if (l && l->n == l->cap) {
        /* Drop entries whose incarnation is gone before growing. */
        size_t k = 0;
        for (size_t i = 0; i < l->n; i++) {
            struct idm_head *h = wfind(m, (int)l->d[i].kind, l->d[i].id);
            if (h && is_live(h) &&
                atomic_load_explicit(&h->gen, memory_order_relaxed) == l->d[i].gen)
                l->d[k++] = l->d[i];
        }
        l->n = k;
    }
    if (!l || l->n == l->cap) {
        size_t ncap = l ? l->cap * 2 : 4;
        struct idm_deplist *n = realloc(l, sizeof *n + ncap * sizeof n->d[0]);
        if (!n)
            return MDT_ENOMEM;
        if (!l)
            n->n = 0;
        m->deps_bytes += (ncap - (l ? n->cap : 0)) * sizeof n->d[0] + (l ? 0 : sizeof *n);
        n->cap = ncap;
        if (idm_wmap_put(&m->deps, pkind, pid, (uint64_t)(uintptr_t)n)) {
            if (!l)
                free(n);
            return MDT_ENOMEM;
        }
        l = n;
    }
    l->d[l->n++] = (struct idm_dep){id, gen, (uint32_t)kind};
    return 0;
}

int idm_add_deps(mdt_idmap *m, const struct idm_refs *refs, int kind, uintptr_t id, uint64_t gen)
{
    for (size_t i = 0; i < refs->n; i++) {
        bool seen = false;
        for (size_t j = 0; j < i; j++)
            if (refs->r[j].kind == refs->r[i].kind && refs->r[j].id == refs->r[i].id)
                seen = true;
        if (!seen && idm_dep_push(m, refs->r[i].kind, refs->r[i].id, kind, id, gen))
            return mdt__fail_simple(MDT_ENOMEM, "idmap: out of memory for dependents");
    }
    for (uint32_t i = 0; i < refs->nargs; i++) {
        bool seen = false;
        for (size_t j = 0; j < refs->n; j++)
            if (refs->r[j].kind == K_CLASS && refs->r[j].id == refs->args[i])
                seen = true;
        for (uint32_t j = 0; j < i && !seen; j++)
            if (refs->args[j] == refs->args[i])
                seen = true;
        if (!seen && idm_dep_push(m, K_CLASS, refs->args[i], kind, id, gen))
            return mdt__fail_simple(MDT_ENOMEM, "idmap: out of memory for dependents");
    }
    return 0;
}

void idm_on_live(mdt_idmap *m, int kind, struct idm_head *h)
{
    if (kind == K_CLASS)
        idm_class_on_live(m, h);
    else if (kind == K_FUNC)
        idm_func_on_live(m, h);
}

void idm_on_dead(mdt_idmap *m, int kind, struct idm_head *h)
{
    if (kind == K_CLASS)
        idm_class_on_dead(m, h);
    else if (kind == K_FUNC &&
             (atomic_load_explicit(&h->meta, memory_order_relaxed) & META_RANGES))
        m->ranges_dirty = true;
}

void idm_kill_slot(mdt_idmap *m, int kind, struct idm_head *h, uint64_t seq)
{
    uint32_t meta = atomic_load_explicit(&h->meta, memory_order_relaxed);
    idm_slot_begin(h);
    atomic_store_explicit(&h->meta, meta & ~(uint32_t)META_LIVE, memory_order_relaxed);
    idm_slot_end(h);
    h->seq = seq;
    atomic_load_explicit(&m->tab[kind], memory_order_relaxed)->live--;
    idm_on_dead(m, kind, h);
}

struct idm_head *idm_place(mdt_idmap *m, int kind, uintptr_t id, bool *fresh)
{
    for (;;) {
        struct idm_tab *t = atomic_load_explicit(&m->tab[kind], memory_order_relaxed);
        struct idm_head *h = idm_tab_place(t, id, fresh);
        if (h)
            return h;
        struct idm_tab *n = idm_tab_rebuild(t, (t->mask + 1) * 2, 0, NULL, NULL);
        if (!n) {
            mdt__fail_simple(MDT_ENOMEM, "idmap: out of memory growing a table");
            return NULL;
        }
        atomic_store_explicit(&m->tab[kind], n, memory_order_seq_cst);
        idm_retire(&m->g, t, t->bytes);
    }
}

/* Kill the incarnations registered under (pkind, pid) that are current and
 * have seq <= limit; cascade to what they contain. */
static int cascade(mdt_idmap *m, int pkind, uintptr_t pid, uint64_t seq, uint64_t limit)
{
    struct item {
        int kind;
        uintptr_t id;
    };
    struct item *work = NULL;
    size_t nwork = 0, capwork = 0;
    int killed = 0;
    struct item cur = {pkind, pid};
    for (;;) {
        uint64_t *v = idm_wmap_get(&m->deps, cur.kind, cur.id);
        struct idm_deplist *l = v ? (struct idm_deplist *)(uintptr_t)*v : NULL;
        if (l) {
            size_t k = 0;
            for (size_t i = 0; i < l->n; i++) {
                struct idm_dep d = l->d[i];
                struct idm_head *h = wfind(m, (int)d.kind, d.id);
                if (!h || !is_live(h) || atomic_load_explicit(&h->gen, memory_order_relaxed) != d.gen)
                    continue;
                if (h->seq > limit) {
                    l->d[k++] = d;
                    continue;
                }
                idm_kill_slot(m, (int)d.kind, h, seq);
                killed++;
                if (nwork == capwork) {
                    size_t ncap = capwork ? capwork * 2 : 16;
                    struct item *nw = realloc(work, ncap * sizeof *nw);
                    if (!nw) {
                        /* Keep the rest registered; report the failure. */
                        for (size_t j = i + 1; j < l->n; j++)
                            l->d[k++] = l->d[j];
                        l->n = k;
                        free(work);
                        return mdt__fail_simple(MDT_ENOMEM, "idmap: out of memory in unload");
                    }
                    work = nw;
                    capwork = ncap;
                }
                work[nwork++] = (struct item){(int)d.kind, d.id};
            }
            l->n = k;
            if (k == 0) {
                m->deps_bytes -= sizeof *l + l->cap * sizeof l->d[0];
                free(l);
                idm_wmap_del(&m->deps, cur.kind, cur.id);
            }
        }
        if (nwork == 0)
            break;
        cur = work[--nwork];
    }
    free(work);
    return killed;
}

int idm_cascade(mdt_idmap *m, int kind, uintptr_t id, uint64_t seq, uint64_t limit)
{
    return cascade(m, kind, id, seq, limit);
}

/* What the record in slot h names (writer). */
static void slot_refs(const struct idm_head *h, int kind, struct idm_refs *refs, uintptr_t inl[2])
{
    refs->n = 0;
    refs->nargs = 0;
    refs->args = NULL;
    if (kind == K_MODULE) {
        struct idm_mslot *s = (struct idm_mslot *)h;
        uintptr_t d = atomic_load_explicit(&s->appdomain, memory_order_relaxed);
        uintptr_t a = atomic_load_explicit(&s->assembly, memory_order_relaxed);
        if (d) {
            refs->r[refs->n].kind = K_DOMAIN;
            refs->r[refs->n++].id = d;
        }
        if (a) {
            refs->r[refs->n].kind = K_ASSEMBLY;
            refs->r[refs->n++].id = a;
        }
        return;
    }
    uintptr_t mod = kind == K_CLASS
                        ? atomic_load_explicit(&((struct idm_cslot *)h)->module, memory_order_relaxed)
                        : atomic_load_explicit(&((struct idm_fslot *)h)->module, memory_order_relaxed);
    if (mod) {
        refs->r[refs->n].kind = K_MODULE;
        refs->r[refs->n++].id = mod;
    }
    if (kind == K_FUNC) {
        uintptr_t cls = atomic_load_explicit(&((struct idm_fslot *)h)->cls, memory_order_relaxed);
        if (cls) {
            refs->r[refs->n].kind = K_CLASS;
            refs->r[refs->n++].id = cls;
        }
    }
    refs->args = idm_slot_args(h, kind, &refs->nargs, inl);
}

int idm_unload(mdt_idmap *m, int kind, uintptr_t id, uint64_t seq)
{
    int rc = MDT_IDMAP_DUPLICATE;
    if (has_records(kind)) {
        struct idm_head *h = wfind(m, kind, id);
        if (!h) {
            bool fresh;
            h = idm_place(m, kind, id, &fresh);
            if (!h)
                return MDT_ENOMEM;
            /* A tombstone for an ID never seen alive. */
            atomic_store_explicit(&h->meta, 0, memory_order_relaxed);
            atomic_store_explicit(&h->gen, 0, memory_order_relaxed);
            h->seq = seq;
            atomic_store_explicit(&h->key, id, memory_order_release);
            atomic_load_explicit(&m->tab[kind], memory_order_relaxed)->used++;
            rc = MDT_IDMAP_APPLIED;
        } else if (!is_live(h)) {
            if (seq > h->seq) {
                h->seq = seq;
                rc = MDT_IDMAP_APPLIED;
            }
        } else {
            uint64_t g = atomic_load_explicit(&h->gen, memory_order_relaxed);
            if (seq >= h->seq) {
                idm_kill_slot(m, kind, h, seq);
                rc = MDT_IDMAP_APPLIED;
            } else if (g <= seq) {
                /* A late unload of the incarnation that a newer load already
                 * replaced (same content): the newer load starts a new
                 * incarnation. */
                uint64_t *v = idm_wmap_get(&m->hist, kind, id);
                if ((!v || *v < seq) && idm_wmap_put(&m->hist, kind, id, seq))
                    return mdt__fail_simple(MDT_ENOMEM, "idmap: out of memory");
                struct idm_refs refs;
                uintptr_t inl[2];
                slot_refs(h, kind, &refs, inl);
                if (idm_add_deps(m, &refs, kind, id, h->seq))
                    return MDT_ENOMEM;
                idm_slot_begin(h);
                atomic_store_explicit(&h->gen, h->seq, memory_order_relaxed);
                idm_slot_end(h);
                /* Code ranges belonged to the old incarnation. */
                if (kind == K_FUNC &&
                    (atomic_load_explicit(&h->meta, memory_order_relaxed) & META_RANGES))
                    m->ranges_dirty = true;
                rc = MDT_IDMAP_APPLIED;
            } else {
                rc = MDT_IDMAP_SUPERSEDED;
            }
        }
    } else {
        uint64_t *v = idm_wmap_get(&m->hist, kind, id);
        if (!v || *v < seq) {
            if (idm_wmap_put(&m->hist, kind, id, seq))
                return mdt__fail_simple(MDT_ENOMEM, "idmap: out of memory");
            rc = MDT_IDMAP_APPLIED;
        }
    }
    int killed = cascade(m, kind, id, seq, seq);
    if (killed < 0)
        return killed;
    return killed > 0 ? MDT_IDMAP_APPLIED : rc;
}

int idm_finish(mdt_idmap *m, int rc)
{
    if (m->ranges_dirty) {
        int e = idm_ranges_filter(m);
        if (e < 0 && rc >= 0)
            rc = e;
    }
    idm_reclaim(&m->g, false);
    idm_unlock(m);
    return rc;
}
