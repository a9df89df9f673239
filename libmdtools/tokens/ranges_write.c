/* The code ranges' public writer calls, mdt_idmap_code_add() and
 * mdt_idmap_code_remove() (<mdtools/idmap_code.h>): the seq checks, an
 * insert with no overlap (an append in place after a leaf's last range, a
 * copied leaf swapped in place, or a split and a new top), the overlap
 * scan, and replacement of the ranges a newer one overlaps (a rebuild),
 * each leaving the tombstones ranges_tomb.c keeps. The structure is
 * ranges.c's; everything here runs under the writer's mutex. */
#define _DEFAULT_SOURCE /* clockid_t, pthread_getcpuclockid (grace_int.h) */
#include "config.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "tokens/base_int.h"
#include "tokens/grace_int.h"
#include "tokens/idmap_int.h"
#include "tokens/ranges_int.h"
#include "tokens/table_int.h"
#include "tokens/trace_int.h"
#include "tokens/writer_int.h"
#include "util/error.h"

/* r after the last range of leaf l, which has room: in place, no copy
 * (JIT-compiled code is mostly placed in address order, so this is most
 * inserts). The record and seq go into free slots no reader reads (a
 * reader reads the record of a start it found, and this start is still
 * the padding); then the start, with release, which makes the range
 * visible whole (readers load it with acquire before the record); then n,
 * the writer's. The range is new to readers of older tops that share the
 * leaf too, as it is to readers of the current one. */
static void append_in_place(mdt_idmap *m, struct idm_leaf *l, const struct idm_range *r)
{
    size_t n = l->n;
    l->rec[n] = (struct idm_leafrec){r->end, r->fid, r->gen};
    l->seq[n] = r->seq;
    idm_ranges_begin(m, false);
    atomic_store_explicit(&l->start[n], r->start, memory_order_release);
    idm_ranges_end(m, false);
    l->n = n + 1;
    m->rw->nranges++;
}

/* Insert r with no overlap present. After a leaf's last range, with room:
 * in place. Elsewhere in a leaf with room: a copy of the leaf. In a full
 * leaf: a split in halves. But code is placed in address order in each of
 * several regions (csc: 7 of 16 MiB, MSBuild: 8), so a region's next range
 * usually lands right after the one added before it, in the middle of a
 * leaf that also holds the start of the next region: there (a run) the
 * leaf splits after r instead, once, and the run's next ranges are
 * appended in place to the left leaf (a full leaf whose last range r
 * follows stays as it is, and r starts a new leaf). */
static int insert_fast(mdt_idmap *m, const struct idm_range *r)
{
    struct idm_rtop *t = idm_cur_top(m);
    if (!t) {
        m->rw->last_start = r->start;
        return idm_ranges_rebuild(m, r, 1);
    }
    size_t i = idm_top_find(t, r->start);
    struct idm_leaf *l = idm_wleaf(t, i);
    size_t n = l->n, pos = idm_leaf_upper(l, r->start);
    bool run = pos > 0 && pos < n && idm_leaf_start(l, pos - 1) == m->rw->last_start;
    m->rw->last_start = r->start;
    if (pos == n && n < IDM_LEAF_MAX) {
        append_in_place(m, l, r);
        return 0;
    }
    if (n < IDM_LEAF_MAX && !run) {
        struct idm_leaf *nl = idm_leaf_insert(l, pos, r);
        if (!nl)
            return MDT_ENOMEM;
        idm_ranges_begin(m, false);
        atomic_store_explicit(&t->leaves[i], nl, memory_order_seq_cst);
        idm_ranges_end(m, false);
        idm_retire(&m->g, l, IDM_LEAF_BYTES);
        m->rw->nranges++;
        return 0;
    }
    struct idm_range all[IDM_LEAF_MAX + 1];
    for (size_t j = 0; j < n; j++)
        idm_leaf_get(l, j, &all[j < pos ? j : j + 1]);
    all[pos] = *r;
    /* Split: after r in a run; a full leaf r follows stays as it is. */
    bool keep = pos == n;
    size_t cut = keep ? n : run ? pos + 1 : (n + 1) / 2;
    struct idm_leaf *nl[2] = {keep ? l : idm_leaf_of(all, cut),
                              idm_leaf_of(all + cut, n + 1 - cut)};
    struct idm_rtop *nt = nl[0] && nl[1] ? idm_top_splice(t, i, nl, 2) : NULL;
    if (!nt) {
        if (!keep)
            free(nl[0]);
        free(nl[1]);
        return MDT_ENOMEM;
    }
    idm_ranges_begin(m, false);
    idm_ranges_publish(m, nt);
    idm_ranges_end(m, false);
    if (!keep)
        idm_retire(&m->g, l, IDM_LEAF_BYTES);
    idm_retire(&m->g, t, t->bytes);
    m->rw->nranges++;
    return 0;
}

static void check_overlap(const struct idm_leaf *l, size_t j, const struct idm_range *r, bool *any,
                          bool *older, bool *newer, bool *same)
{
    struct idm_range x;
    idm_leaf_get(l, j, &x);
    if (x.start >= r->end || x.end <= r->start)
        return;
    *any = true;
    if (x.seq < r->seq)
        *older = true;
    if (x.seq > r->seq)
        *newer = true;
    if (x.start == r->start && x.end == r->end && x.fid == r->fid && x.gen == r->gen)
        *same = true;
}

/* Report whether any range overlaps r, whether one of those is older or
 * newer than r, and whether r itself is already there. The ranges are disjoint and
 * sorted, so only the last one starting at or before r's start, and those
 * starting inside r, can overlap it. */
static void scan_overlaps(const mdt_idmap *m, const struct idm_range *r, bool *any, bool *older,
                          bool *newer, bool *same)
{
    const struct idm_rtop *t = idm_cur_top(m);
    *any = *older = *newer = *same = false;
    if (!t)
        return;
    size_t i = idm_top_find(t, r->start);
    const struct idm_leaf *l = idm_wleaf(t, i);
    size_t pos = idm_leaf_upper(l, r->start);
    if (pos > 0)
        check_overlap(l, pos - 1, r, any, older, newer, same);
    else if (i > 0)
        check_overlap(idm_wleaf(t, i - 1), idm_wleaf(t, i - 1)->n - 1, r, any, older, newer, same);
    for (size_t li = i, j = pos; li < t->n; li++, j = 0) {
        l = idm_wleaf(t, li);
        for (; j < l->n && idm_leaf_start(l, j) < r->end; j++)
            check_overlap(l, j, r, any, older, newer, same);
        if (j < l->n)
            break;
    }
}

/* A duplicate code_add with a newer seq: the range's seq follows (the
 * writer's seqs after the records are never read by readers). */
static void raise_range_seq(mdt_idmap *m, const struct idm_range *r)
{
    struct idm_rtop *t = idm_cur_top(m);
    size_t i = idm_top_find(t, r->start);
    struct idm_leaf *l = idm_wleaf(t, i);
    size_t j = idm_leaf_upper(l, r->start);
    if (j > 0 && idm_leaf_start(l, j - 1) == r->start && l->seq[j - 1] < r->seq)
        l->seq[j - 1] = r->seq;
}

/* [r->start, r->end) held r's code at r->seq, so the code of the ranges
 * overlapping it that are older (all of them when r is applied: none is
 * newer then) was freed by r->seq: they go, each leaving a tombstone at
 * r->seq over its whole span (a function's code is freed as a whole);
 * r goes in when `apply`. */
static int replace_overlaps(mdt_idmap *m, const struct idm_range *r, bool apply)
{
    size_t n, k = 0;
    struct idm_range *all = idm_ranges_gather(m, &n);
    struct idm_range *nr = all ? malloc((n + 1) * sizeof *nr) : NULL;
    if (!nr) {
        free(all);
        return MDT_ENOMEM;
    }
    bool placed = !apply, dropped = false;
    for (size_t i = 0; i < n; i++) {
        if (all[i].start < r->end && all[i].end > r->start && (apply || all[i].seq < r->seq)) {
            idm_tomb_raise(m, all[i].start, all[i].end, r->seq);
            dropped = true;
            continue;
        }
        if (!placed && all[i].start > r->start) {
            nr[k++] = *r;
            placed = true;
        }
        nr[k++] = all[i];
    }
    if (!placed)
        nr[k++] = *r;
    int rc = apply || dropped ? idm_ranges_rebuild(m, nr, k) : 0;
    free(nr);
    free(all);
    return rc;
}

static int code_add(mdt_idmap *map, uintptr_t start, size_t size, uintptr_t function_id,
                    uint64_t seq)
{
    if (!map || !function_id || size == 0 || start + size < start)
        return mdt__fail_simple(MDT_EINVAL, "idmap: bad code range");
    int rc = idm_begin(map, seq);
    if (rc)
        return rc;
    struct idm_range r = {start, start + size, function_id, 0, seq};
    bool any = false, older = false, newer = false, same = false, apply = false, scanned = false;
    struct idm_head *h =
        idm_tab_find(atomic_load_explicit(&map->tab[K_FUNC], memory_order_relaxed), function_id);
    if (!h || !idm_live(h)) {
        rc =
            idm_last_unload(map, K_FUNC, function_id) >= seq ? MDT_IDMAP_SUPERSEDED : MDT_ENOTFOUND;
    } else if (idm_last_unload(map, K_FUNC, function_id) >= seq ||
               idm_tomb_seq(map, start, start + size) >= seq || seq < idm_gen(h)) {
        /* The function, or this code, was freed later; or the code is
         * older than the incarnation the map knows, and may be of an
         * earlier one whose end the map has not heard of (its module's
         * unload, say, which no longer names this ID). */
        rc = MDT_IDMAP_SUPERSEDED;
    } else {
        r.gen = idm_gen(h);
        scan_overlaps(map, &r, &any, &older, &newer, &same);
        scanned = true;
        if (same) {
            raise_range_seq(map, &r);
            rc = MDT_IDMAP_DUPLICATE;
            goto out;
        }
        apply = !newer;
        rc = apply ? MDT_IDMAP_APPLIED : MDT_IDMAP_SUPERSEDED;
    }
    /* Applied or not, the call says that at seq this memory held the
     * function's code: older ranges there are gone, and a code_add older
     * than seq there is refused from now on (by the range while it lives,
     * else by a tombstone), as it would have been had the calls come in
     * the order of their seqs. */
    if (!apply) {
        if (!scanned)
            scan_overlaps(map, &r, &any, &older, &newer, &same);
        int e = older ? replace_overlaps(map, &r, false) : 0;
        idm_tomb_raise(map, start, start + size, seq);
        if (e)
            rc = mdt__fail_simple(e, "idmap: out of memory adding a code range");
        else if (rc == MDT_ENOTFOUND)
            rc = mdt__fail_simple(MDT_ENOTFOUND, "idmap: code range of an unknown function");
        goto out;
    }
    rc = any ? replace_overlaps(map, &r, true) : insert_fast(map, &r);
    if (rc) {
        rc = mdt__fail_simple(rc, "idmap: out of memory adding a code range");
        goto out;
    }
    idm_tomb_clear(map, start, start + size);
    idm_set_meta(h, idm_meta(h) | META_WATCHED);
    rc = MDT_IDMAP_APPLIED;
out:
    return idm_finish(map, rc);
}

static int code_remove(mdt_idmap *map, uintptr_t start, uint64_t seq)
{
    if (!map)
        return mdt__fail_simple(MDT_EINVAL, "idmap: bad code range");
    int rc = idm_begin(map, seq);
    if (rc)
        return rc;
    struct idm_rtop *t = idm_cur_top(map);
    size_t i = 0, j = 0;
    struct idm_leaf *l = NULL;
    if (t && start != UINTPTR_MAX) {
        i = idm_top_find(t, start);
        l = idm_wleaf(t, i);
        j = idm_leaf_upper(l, start);
    }
    if (!l || j == 0 || idm_leaf_start(l, j - 1) != start) {
        /* Code the map never saw (or saw removed): a tombstone for its
         * start, unless a newer one covers it. */
        rc = MDT_IDMAP_DUPLICATE;
        if (start != UINTPTR_MAX && idm_tomb_seq(map, start, start + 1) < seq) {
            idm_tomb_raise(map, start, start + 1, seq);
            rc = MDT_IDMAP_APPLIED;
        }
        goto out;
    }
    j--;
    if (l->seq[j] > seq) {
        rc = MDT_IDMAP_SUPERSEDED;
        goto out;
    }
    struct idm_range rest[IDM_LEAF_MAX];
    size_t n = 0;
    for (size_t x = 0; x < l->n; x++)
        if (x != j)
            idm_leaf_get(l, x, &rest[n++]);
    struct idm_leaf *nl = n ? idm_leaf_of(rest, n) : NULL;
    if (n && !nl) {
        rc = mdt__fail_simple(MDT_ENOMEM, "idmap: out of memory");
        goto out;
    }
    if (n && (j > 0 || i == 0)) {
        /* Same first start: swap the leaf in place. */
        idm_ranges_begin(map, true);
        atomic_store_explicit(&t->leaves[i], nl, memory_order_seq_cst);
        idm_ranges_end(map, true);
    } else {
        struct idm_rtop *nt = idm_top_splice(t, i, &nl, n ? 1 : 0);
        if (!nt && t->n > 1) {
            free(nl);
            rc = mdt__fail_simple(MDT_ENOMEM, "idmap: out of memory");
            goto out;
        }
        idm_ranges_begin(map, true);
        idm_ranges_publish(map, nt); /* NULL when the last range went */
        idm_ranges_end(map, true);
        idm_retire(&map->g, t, t->bytes);
    }
    uintptr_t end = l->rec[j].end;
    idm_retire(&map->g, l, IDM_LEAF_BYTES);
    map->rw->nranges--;
    idm_tomb_raise(map, start, end, seq);
    rc = MDT_IDMAP_APPLIED;
out:
    return idm_finish(map, rc);
}

int mdt_idmap_code_add(mdt_idmap *map, uintptr_t start, size_t size, uintptr_t function_id,
                       uint64_t seq)
{
    IDM_TRACED(map, code_add(map, start, size, function_id, seq),
               idm_trace_call(map, "code_add", 3, start, size, function_id, seq, rc));
}

int mdt_idmap_code_remove(mdt_idmap *map, uintptr_t start, uint64_t seq)
{
    IDM_TRACED(map, code_remove(map, start, seq),
               idm_trace_call(map, "code_remove", 1, start, 0, 0, seq, rc));
}
