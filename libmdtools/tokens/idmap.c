/* The map object: creation and destruction, the sequence counter, the
 * housekeeping calls (synchronize, retire old tombstones) and statistics.
 * A map is the writer core (writer.c) with the record kinds (modules.c,
 * classes.c, functions.c) and the parts (presence.c, ranges.c) plugged in
 * here; the rules are in lifetime.c, the reverse indexes in index.c. */
#define _DEFAULT_SOURCE /* clockid_t, pthread_getcpuclockid (grace_int.h),                         \
                           PTHREAD_MUTEX_ERRORCHECK, pthread_mutexattr_settype */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "tokens/base_int.h"
#include "tokens/deps_int.h"
#include "tokens/grace_int.h"
#include "tokens/handles_int.h"
#include "tokens/idmap_int.h"
#include "tokens/index_int.h"
#include "tokens/plugs_int.h"
#include "tokens/table_int.h"
#include "tokens/trace_int.h"
#include "tokens/wmap_int.h"
#include "tokens/writer_int.h"
#include "util/error.h"

/* What the map is made of: the record kinds and the parts the writer core
 * calls, in the order it calls them. */
static const struct idm_kind_ops *const kinds[] = {&idm_module_kind, &idm_class_kind,
                                                   &idm_function_kind};
static const struct idm_part_ops *const parts[IDM_NPARTS] = {&idm_presence_part, &idm_range_part};

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
    bool ok = idm_deps_init(m) == 0;
    for (unsigned i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        idm_plug_kind(m, kinds[i]);
    for (unsigned i = 0; i < IDM_NPARTS; i++)
        idm_plug_part(m, parts[i]);
    size_t hint[K_NKINDS] = {
        [K_MODULE] = opts->modules, [K_CLASS] = opts->classes, [K_FUNC] = opts->functions};
    for (int k = 0; k < 3; k++) {
        struct idm_tab *t = idm_tab_new(idm_cap_for(hint[k]), m->kind[k]->slot_size);
        atomic_init(&m->tab[k], t);
        ok = ok && t;
    }
    for (int k = 0; k < 3; k++) {
        struct idm_tab *f = atomic_load_explicit(&m->tab[k], memory_order_relaxed);
        struct idm_itab *t = NULL;
        m->rev_on[k] = m->kind[k]->content_hash;
        if (m->rev_on[k]) {
            t = f ? idm_rev_build(m, f, k, hint[k]) : NULL;
            ok = ok && t;
        }
        atomic_init(&m->rev[k], t);
    }
    atomic_init(&m->presence, NULL);
    atomic_init(&m->ranges, NULL);
    atomic_init(&m->code_changes, 0);
    atomic_init(&m->code_removals, 0);
    atomic_init(&m->seqctr, 0);
    m->miss = opts->miss;
    m->miss_payload = opts->miss_payload;
    for (unsigned i = 0; i < m->nparts && ok; i++)
        ok = !m->part[i]->init || m->part[i]->init(m, opts) == 0;
    if (!ok) {
        mdt_idmap_free(m);
        return mdt__fail_simple(MDT_ENOMEM, "idmap: out of memory");
    }
#ifdef MDT_IDMAP_RECORD
    idm_trace_open(m, opts);
#endif
    *out = m;
    return 0;
}

static void free_payloads(const mdt_idmap *m, struct idm_tab *t, int kind)
{
    for (size_t i = 0; t && i < t->cap; i++) {
        struct idm_head *h = idm_slot(t, i);
        if (atomic_load_explicit(&h->key, memory_order_relaxed))
            m->kind[kind]->destroy(h);
    }
}

void mdt_idmap_free(mdt_idmap *map)
{
    if (!map)
        return;
#ifdef MDT_IDMAP_RECORD
    idm_trace_close(map);
#endif
    idm_grace_destroy(&map->g);
    for (int k = 0; k < 3; k++) {
        struct idm_tab *t = atomic_load_explicit(&map->tab[k], memory_order_relaxed);
        free_payloads(map, t, k);
        free(t);
        free(atomic_load_explicit(&map->rev[k], memory_order_relaxed));
    }
    for (unsigned i = 0; i < map->nparts; i++)
        if (map->part[i]->fini)
            map->part[i]->fini(map);
    idm_deps_free(map);
    idm_wmap_free(&map->hist);
    idm_wmap_free(&map->newer);
    idm_handles_free(map);
    pthread_mutex_destroy(&map->lock);
    free(map);
}

int mdt_idmap_set_flags(mdt_idmap *map, unsigned flags)
{
    if (!map || (flags & ~MDT_IDMAP_NO_FUNCTION_FIND))
        return mdt__fail_simple(MDT_EINVAL, "idmap: unknown flags");
    if (idm_lock(map))
        return mdt__fail_simple(MDT_EINVAL, "idmap: set_flags inside module_each");
    int rc = 0;
    if ((flags & MDT_IDMAP_NO_FUNCTION_FIND) && map->rev_on[K_FUNC]) {
        struct idm_tab *f = atomic_load_explicit(&map->tab[K_FUNC], memory_order_relaxed);
        if (f && f->used) {
            rc = mdt__fail_simple(MDT_EINVAL, "idmap: functions recorded before set_flags");
        } else {
            /* a function_find racing this call may still read the empty
             * index: it goes through the grace period */
            struct idm_itab *old = atomic_load_explicit(&map->rev[K_FUNC], memory_order_relaxed);
            map->rev_on[K_FUNC] = false;
            atomic_store_explicit(&map->rev[K_FUNC], NULL, memory_order_release);
            if (old)
                idm_retire(&map->g, old, old->bytes);
        }
    }
#ifdef MDT_IDMAP_RECORD
    if (rc == 0)
        idm_trace_flags(map, flags);
#endif
    idm_unlock(map);
    return rc;
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

static int retire(mdt_idmap *map, uint64_t below)
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
        for (unsigned i = 0; i < map->nparts; i++) {
            int e = map->part[i]->retire ? map->part[i]->retire(map, below) : 0;
            if (e && rc == 0)
                rc = e;
        }
    }
    if (rc == 0)
        rc = dropped;
    map->unsettled = false;
    for (unsigned i = 0; i < map->nparts; i++) {
        int e = map->part[i]->settle ? map->part[i]->settle(map) : 0;
        if (e < 0 && rc >= 0)
            rc = e;
    }
    idm_reclaim(&map->g, true);
    idm_handles_reclaim(map);
    idm_unlock(map);
    return rc;
}

int mdt_idmap_retire(mdt_idmap *map, uint64_t below)
{
    IDM_TRACED(map, retire(map, below), idm_trace_call(map, "retire", 0, 0, 0, 0, below, rc));
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
    out->class_slot_size = map->kind[K_CLASS]->slot_size;
    out->function_slot_size = map->kind[K_FUNC]->slot_size;
    for (int k = 0; k < 3; k++) {
        struct idm_itab *r = atomic_load_explicit(&map->rev[k], memory_order_relaxed);
        out->bytes_reverse += r ? r->bytes : 0;
    }
    out->bytes_index = out->bytes_reverse;
    out->bytes_args = map->args_bytes;
    out->bytes_deps = idm_deps_bytes(map);
    out->bytes_history = map->hist.cap * sizeof(struct idm_went);
    out->bytes_writer = out->bytes_deps + out->bytes_history + map->g.capretired * sizeof(void *) +
                        map->newer.cap * sizeof(struct idm_went) + idm_handles_bytes(map);
    for (unsigned i = 0; i < map->nparts; i++)
        if (map->part[i]->stats)
            map->part[i]->stats(map, out);
    out->bytes_map = sizeof *map;
    out->bytes_retired = map->g.retired_bytes;
    out->grace_periods = map->g.periods;
    idm_unlock(map);
}
