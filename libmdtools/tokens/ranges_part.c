/* The code ranges as a part of the map (writer_int.h's struct
 * idm_part_ops, plugged in by idmap.c): the writer's state, created and
 * freed with the map; what follows the death of a function that has
 * ranges (they go at the end of the writer call, each leaving a
 * tombstone) or its renewal by a late unload (the ranges added since the
 * load that renewed it move to the new incarnation, the others go); the
 * part's share of the map's stats and of retire. */
#define _DEFAULT_SOURCE /* clockid_t, pthread_getcpuclockid (grace_int.h) */
#include "config.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "tokens/base_int.h"
#include "tokens/idmap_int.h"
#include "tokens/plugs_int.h"
#include "tokens/ranges_int.h"
#include "tokens/table_int.h"
#include "tokens/writer_int.h"
#include "util/error.h"

static bool range_alive(const mdt_idmap *m, const struct idm_range *r)
{
    struct idm_head *h = idm_tab_find(
        atomic_load_explicit(&((mdt_idmap *)m)->tab[K_FUNC], memory_order_relaxed), r->fid);
    return h && idm_live(h) && idm_gen(h) == r->gen;
}

/* Dead functions' ranges to drop, or moved ones to rebuild, at the end of
 * this writer call (settle). */
static void mark_dirty(mdt_idmap *m)
{
    m->rw->dirty = true;
    idm_want_settle(m);
}

/* Function fid's incarnation `from` became `to` by a late unload at `after`
 * (lifetime.c): its ranges follow or die at the next filter. */
static void regen(mdt_idmap *m, uintptr_t fid, uint64_t from, uint64_t to, uint64_t after)
{
    struct idm_rwriter *w = m->rw;
    mark_dirty(m);
    /* One per function a late unload renews: one, or all the functions of
     * a module whose unload came late. Should memory run out, the ranges
     * of the functions left out die (and leave tombstones): unknown,
     * never wrong. */
    if (w->nregen == w->capregen) {
        size_t ncap = w->capregen ? w->capregen * 2 : 8;
        struct idm_regen *n = realloc(w->regen, ncap * sizeof *n);
        if (!n)
            return;
        w->regen = n;
        w->capregen = ncap;
    }
    w->regen[w->nregen++] = (struct idm_regen){fid, from, to, after};
}

static int regen_cmp(const void *a, const void *b)
{
    const struct idm_regen *x = a, *y = b;
    if (x->fid != y->fid)
        return x->fid < y->fid ? -1 : 1;
    return x->from < y->from ? -1 : x->from > y->from;
}

/* Does a pending incarnation change move r to its function's new
 * incarnation? The pending list is sorted by (fid, from) first. */
static bool range_regen(const mdt_idmap *m, struct idm_range *r)
{
    const struct idm_rwriter *w = m->rw;
    size_t lo = 0, hi = w->nregen;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct idm_regen *g = &w->regen[mid];
        if (g->fid < r->fid || (g->fid == r->fid && g->from < r->gen))
            lo = mid + 1;
        else
            hi = mid;
    }
    for (; lo < w->nregen && w->regen[lo].fid == r->fid && w->regen[lo].from == r->gen; lo++) {
        /* Only code added since the news that starts the new incarnation
         * is surely its: code added between the unload and that news may
         * be of another incarnation the map never heard of. */
        if (r->seq >= w->regen[lo].to && r->seq > w->regen[lo].after) {
            r->gen = w->regen[lo].to;
            return true;
        }
    }
    return false;
}

/* Drop the ranges of dead incarnations, move those of a late unload's new
 * incarnation (regen). A dropped range leaves a tombstone at its own seq:
 * while it lived it refused every older code_add over it (that code was
 * gone by then), and it still does. */
static int filter(mdt_idmap *m)
{
    size_t n, k = 0;
    bool moved = false;
    m->rw->dirty = false;
    if (m->rw->nranges == 0) {
        m->rw->nregen = 0;
        return 0;
    }
    struct idm_range *all = idm_ranges_gather(m, &n);
    if (!all) {
        m->rw->nregen = 0;
        return mdt__fail_simple(MDT_ENOMEM, "idmap: out of memory filtering code ranges");
    }
    if (m->rw->nregen > 1)
        qsort(m->rw->regen, m->rw->nregen, sizeof m->rw->regen[0], regen_cmp);
    for (size_t i = 0; i < n; i++) {
        bool r = range_regen(m, &all[i]);
        moved = moved || r;
        if (range_alive(m, &all[i]))
            all[k++] = all[i];
        else
            idm_tomb_raise(m, all[i].start, all[i].end, all[i].seq);
    }
    m->rw->nregen = 0;
    /* A moved range is a changed record: readers see it in a new leaf. */
    int rc = k == n && !moved ? 0 : idm_ranges_rebuild(m, all, k);
    free(all);
    if (rc)
        mark_dirty(m);
    return rc ? mdt__fail_simple(rc, "idmap: out of memory filtering code ranges") : 0;
}

static void ranges_fini(mdt_idmap *m)
{
    struct idm_rtop *t = idm_cur_top(m);
    for (size_t i = 0; t && i < t->n; i++)
        free(idm_wleaf(t, i));
    free(t);
    atomic_store_explicit(&m->ranges, NULL, memory_order_relaxed);
    if (m->rw) {
        free(m->rw->tomb);
        free(m->rw->regen);
    }
    free(m->rw);
    m->rw = NULL;
}

static size_t ranges_bytes(const mdt_idmap *m)
{
    struct idm_rtop *t = idm_cur_top(m);
    return t ? t->bytes + t->n * IDM_LEAF_BYTES : 0;
}

/* ---- the part's operations (the writer core calls them) ---------------- */

/* A function with ranges died: its ranges go at the next filter. */
static void watched_died(mdt_idmap *m, int kind, struct idm_head *h)
{
    (void)h;
    if (kind == K_FUNC)
        mark_dirty(m);
}

static void watched_reborn(mdt_idmap *m, int kind, uintptr_t id, uint64_t from, uint64_t to,
                           uint64_t after)
{
    if (kind == K_FUNC)
        regen(m, id, from, to, after);
}

static int settle(mdt_idmap *m)
{
    return m->rw->dirty ? filter(m) : 0;
}

static void ranges_stats(const mdt_idmap *m, mdt_idmap_stats *out)
{
    out->bytes_ranges = ranges_bytes(m);
    out->ranges = m->rw->nranges;
    out->bytes_writer +=
        m->rw->captomb * sizeof(struct idm_rtomb) + m->rw->capregen * sizeof(struct idm_regen);
}

static int ranges_init(mdt_idmap *m, const mdt_idmap_options *opts)
{
    (void)opts;
    m->rw = calloc(1, sizeof *m->rw);
    if (!m->rw)
        return MDT_ENOMEM;
    /* Raising a tombstone never fails (tomb_raise): it can always merge
     * pieces down to what this holds. */
    m->rw->tomb = malloc(IDM_TOMB_CAP0 * sizeof *m->rw->tomb);
    if (!m->rw->tomb)
        return MDT_ENOMEM;
    m->rw->captomb = IDM_TOMB_CAP0;
    return 0;
}

const struct idm_part_ops idm_range_part = {
    .init = ranges_init,
    .fini = ranges_fini,
    .watched_died = watched_died,
    .watched_reborn = watched_reborn,
    .settle = settle,
    .retire = idm_tomb_retire,
    .stats = ranges_stats,
};
