/* The map object: creation and destruction, the sequence counter, the
 * housekeeping calls (synchronize, retire old tombstones) and statistics.
 * The records themselves are in modules.c, classes.c and functions.c, the
 * rules in lifetime.c, the indexes in index.c and ranges.c. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "tokens/idmap_int.h"
#include "util/error.h"

_Static_assert(sizeof(struct idm_cslot) == 32, "class slots: two to a cache line");
_Static_assert(sizeof(struct idm_fslot) == 32, "function slots: two to a cache line");
_Static_assert(sizeof(struct idm_mslot) == 128, "module slot is two cache lines");

static const size_t slot_sizes[3] = {sizeof(struct idm_mslot), sizeof(struct idm_cslot),
                                     sizeof(struct idm_fslot)};

int mdt_idmap_new(mdt_idmap **out, const mdt_idmap_options *opts)
{
    mdt_idmap_options none = {0};
    if (!out)
        return mdt__fail_simple(MDT_EINVAL, "idmap: out is NULL");
    *out = NULL;
    if (!opts)
        opts = &none;
    mdt_idmap *m = aligned_alloc(IDM_SEP, (sizeof *m + IDM_SEP - 1) & ~(size_t)(IDM_SEP - 1));
    if (!m)
        return mdt__fail_simple(MDT_ENOMEM, "idmap: out of memory");
    memset(m, 0, sizeof *m);
    /* Error-checking: a writer call from the thread that holds it (inside
     * an mdt_idmap_module_each() callback) fails instead of deadlocking. */
    pthread_mutexattr_t attr;
    int me = pthread_mutexattr_init(&attr);
    if (me == 0) {
        me = pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ERRORCHECK);
        if (me == 0)
            me = pthread_mutex_init(&m->lock, &attr);
        pthread_mutexattr_destroy(&attr);
    }
    if (me) {
        free(m);
        return mdt__fail_simple(MDT_ENOMEM, "idmap: cannot create mutex");
    }
    idm_grace_init(&m->g);
    if (idm_handles_init(m)) {
        pthread_mutex_destroy(&m->lock);
        free(m);
        return mdt__fail_simple(MDT_ENOMEM, "idmap: out of memory");
    }
    size_t hint[3] = {opts->modules, opts->classes, opts->functions};
    bool ok = true;
    for (int k = 0; k < 3; k++) {
        struct idm_tab *t = idm_tab_new(idm_cap_for(hint[k]), slot_sizes[k]);
        atomic_init(&m->tab[k], t);
        ok = ok && t;
    }
    atomic_init(&m->rev[K_MODULE], NULL);
    for (int k = K_CLASS; k <= K_FUNC; k++) {
        struct idm_tab *f = atomic_load_explicit(&m->tab[k], memory_order_relaxed);
        struct idm_itab *t = f ? idm_rev_build(m, f, k, hint[k]) : NULL;
        atomic_init(&m->rev[k], t);
        ok = ok && t;
    }
    /* Presence counts generic TypeDefs only: a fraction of the classes. */
    struct idm_itab *p = idm_itab_new(idm_cap_for(hint[K_CLASS] / 8), sizeof(uint64_t));
    atomic_init(&m->presence, p);
    atomic_init(&m->ranges, NULL);
    atomic_init(&m->seqctr, 0);
    m->miss = opts->miss;
    m->miss_payload = opts->miss_payload;
    if (!ok || !p) {
        mdt_idmap_free(m);
        return mdt__fail_simple(MDT_ENOMEM, "idmap: out of memory");
    }
    *out = m;
    return 0;
}

static void free_payloads(struct idm_tab *t, int kind)
{
    for (size_t i = 0; t && i < t->cap; i++) {
        struct idm_head *h = idm_slot(t, i);
        if (!atomic_load_explicit(&h->key, memory_order_relaxed))
            continue;
        if (kind != K_MODULE && (idm_meta(h) & META_OOL))
            free((void *)atomic_load_explicit(&((struct idm_cslot *)h)->x, memory_order_relaxed));
        else if (kind == K_MODULE)
            free((void *)atomic_load_explicit(&((struct idm_mslot *)h)->path, memory_order_relaxed));
    }
}

void mdt_idmap_free(mdt_idmap *map)
{
    if (!map)
        return;
    idm_grace_destroy(&map->g);
    for (int k = 0; k < 3; k++) {
        struct idm_tab *t = atomic_load_explicit(&map->tab[k], memory_order_relaxed);
        free_payloads(t, k);
        free(t);
        free(atomic_load_explicit(&map->rev[k], memory_order_relaxed));
    }
    free(atomic_load_explicit(&map->presence, memory_order_relaxed));
    idm_ranges_free(map);
    idm_deps_free(map);
    idm_wmap_free(&map->hist);
    idm_wmap_free(&map->newer);
    idm_wmap_free(&map->pover);
    idm_handles_free(map);
    pthread_mutex_destroy(&map->lock);
    free(map);
}

void mdt_idmap_set_miss(mdt_idmap *map, mdt_idmap_miss_fn fn, void *payload)
{
    if (!map || idm_lock(map))
        return;
    map->miss = fn;
    map->miss_payload = payload;
    idm_unlock(map);
}

uint64_t mdt_idmap_next_seq(mdt_idmap *map)
{
    return atomic_fetch_add_explicit(&map->seqctr, 1, memory_order_relaxed) + 1;
}

void mdt_idmap_synchronize(mdt_idmap *map)
{
    if (!map || idm_lock(map))
        return;
    idm_reclaim(&map->g, true);
    if (map->g.nretired == 0)
        idm_grace_wait(&map->g);
    idm_handles_reclaim(map);
    idm_unlock(map);
}

int mdt_idmap_retire(mdt_idmap *map, uint64_t below)
{
    if (!map)
        return mdt__fail_simple(MDT_EINVAL, "idmap: map is NULL");
    int rc = idm_lock(map);
    if (rc)
        return rc;
    if (below > map->watermark)
        map->watermark = below;
    below = map->watermark;
    int dropped = 0;
    for (int k = 0; k < 3 && rc == 0; k++) {
        struct idm_tab *t = atomic_load_explicit(&map->tab[k], memory_order_relaxed);
        size_t keep = t->live;
        for (size_t i = 0; i < t->cap; i++) {
            struct idm_head *h = idm_slot(t, i);
            if (atomic_load_explicit(&h->key, memory_order_relaxed) && !idm_live(h) &&
                idm_gen(h) >= below)
                keep++;
        }
        struct idm_tab *n = idm_tab_rebuild(t, idm_cap_for(keep + keep / 8), below);
        if (!n || idm_tab_publish(map, k, n, below, &dropped)) {
            rc = mdt__fail_simple(MDT_ENOMEM, "idmap: out of memory in retire");
            break;
        }
    }
    if (rc == 0) {
        /* History below the watermark can no longer refuse anything. */
        for (size_t i = 0; i < map->hist.cap;) {
            struct idm_went *e = &map->hist.e[i];
            if (e->kind && e->val < below)
                idm_wmap_del(&map->hist, (int)e->kind - 1, e->id); /* re-check slot i */
            else
                i++;
        }
        idm_deps_compact_all(map);
        idm_ranges_retire(map, below);
        rc = idm_presence_rebuild(map);
    }
    if (rc == 0)
        rc = dropped;
    if (map->ranges_dirty) {
        int e = idm_ranges_filter(map);
        if (e < 0 && rc >= 0)
            rc = e;
    }
    idm_reclaim(&map->g, true);
    idm_handles_reclaim(map);
    idm_unlock(map);
    return rc;
}

void mdt_idmap_stats_get(mdt_idmap_stats *out, mdt_idmap *map)
{
    memset(out, 0, sizeof *out);
    if (!map || idm_lock(map))
        return;
    struct idm_tab *t[3];
    for (int k = 0; k < 3; k++) {
        t[k] = atomic_load_explicit(&map->tab[k], memory_order_relaxed);
        out->bytes_tables += t[k]->bytes;
    }
    out->modules_live = t[K_MODULE]->live;
    out->classes_live = t[K_CLASS]->live;
    out->functions_live = t[K_FUNC]->live;
    out->modules_dead = t[K_MODULE]->used - t[K_MODULE]->live;
    out->classes_dead = t[K_CLASS]->used - t[K_CLASS]->live;
    out->functions_dead = t[K_FUNC]->used - t[K_FUNC]->live;
    out->class_slot_size = sizeof(struct idm_cslot);
    out->function_slot_size = sizeof(struct idm_fslot);
    for (int k = K_CLASS; k <= K_FUNC; k++)
        out->bytes_reverse += atomic_load_explicit(&map->rev[k], memory_order_relaxed)->bytes;
    out->bytes_presence = atomic_load_explicit(&map->presence, memory_order_relaxed)->bytes;
    out->bytes_index = out->bytes_reverse + out->bytes_presence;
    out->bytes_args = map->args_bytes;
    out->bytes_ranges = idm_ranges_bytes(map);
    out->ranges = map->nranges;
    out->bytes_deps = idm_deps_bytes(map);
    out->bytes_history = map->hist.cap * sizeof(struct idm_went);
    out->bytes_writer = out->bytes_deps + out->bytes_history + map->g.capretired * sizeof(void *) +
                        (map->newer.cap + map->hd.refs.cap + map->pover.cap) * sizeof(struct idm_went) +
                        map->hd.bytes + map->caprtomb * sizeof(struct idm_rtomb);
    out->bytes_map = sizeof *map;
    out->bytes_retired = map->g.retired_bytes;
    out->grace_periods = map->g.periods;
    idm_unlock(map);
}
