/* Code ranges [start, end) -> function incarnation, for sampling profilers
 * that hold an instruction pointer. Ranges are disjoint and kept sorted in a
 * two-part structure built for few dependent cache misses:
 *
 * - leaves of at most IDM_LEAF_MAX ranges: all starts first (8 per cache
 *   line), then one 24-byte record (end, function ID, generation) per range,
 *   then the writer's seqs, so a lookup compares with the first start of
 *   each line of starts (loads the CPU issues in parallel), then with the
 *   starts of one line, then reads one record;
 * - above them a static tree of the leaves' first starts, one cache line of
 *   IDM_FANOUT keys per level (struct idm_rtop below): 2,000 leaves need
 *   4 levels, all of it a few kilobytes that stay in cache.
 *
 * A lookup reads one line per level, the leaf pointer, the starts and one
 * record: bounded (at most IDM_RLEVELS levels of IDM_FANOUT compares, then
 * 2 x IDM_FANOUT in the leaf), no lock, no allocation. The record is the
 * load that usually misses all caches; two prefetches keep it off the end
 * of the chain of dependent loads: the records around a position
 * interpolated from the leaf's bounds (issued with the first round of
 * starts), and the 8 records of the line of starts the first round picks
 * (issued with the second round).
 *
 * Leaves have a fixed size, room for IDM_LEAF_MAX ranges. An insert after
 * a leaf's last range into a leaf with room (most inserts: the JIT places
 * code in address order) is written in place: the record and seq into the
 * free slots, then the start over the padding with release, which readers
 * load with acquire before the record (ranges_int.h, struct idm_leaf).
 * Every other change copies on write: an insert before a leaf's last range
 * copies the leaf and swaps the leaf pointer in place; a full leaf splits
 * (in halves, or, for an append at the very end, the full leaf stays as it
 * is and a new leaf starts, so code JIT-compiled in address order fills
 * leaves completely) and a new top is built and published. A removal
 * copies the leaf, or builds a new top when the leaf empties or its first
 * start changes. Overlap replacement (code
 * memory reused) and the purge of dead functions' ranges rebuild the whole
 * structure (rare: unloads, code reuse). Replaced leaves and tops go
 * through the grace period. A range belongs to one
 * function incarnation (fid, gen), never one newer than itself, and is
 * dropped when that incarnation dies. A code_add names the FunctionID,
 * not what it stands for (the runtime may reuse the ID after an unload),
 * so it does not keep the function alive: only a load after a late
 * unload gives the function a new incarnation, and the ranges added since
 * that load move to it (regen).
 * A code_add at s also says that at s the memory held that code: older
 * ranges it overlaps go, applied or not, and code that leaves the map
 * (removed, replaced, gone with its function) or is refused leaves a
 * tombstone (writer-only pieces, sorted and disjoint, each with the newest
 * seq of its addresses) so that a code_add older than that cannot bring
 * dead code back; retire drops tombstones below the watermark, and past
 * IDM_TOMB_MIN plus one per live range neighbouring pieces merge.
 *
 * This file: the leaves, the top, the lookup and whole rebuilds. The
 * writer calls are ranges_write.c's, the tombstones ranges_tomb.c's, the
 * part's operations (deaths, renewals, stats) ranges_part.c's, and what
 * they share, the hot inline helpers included, ranges_int.h's. */
#define _DEFAULT_SOURCE /* clockid_t, pthread_getcpuclockid (grace_int.h) */
#include "config.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "tokens/base_int.h"
#include "tokens/grace_int.h"
#include "tokens/idmap_int.h"
#include "tokens/ranges_int.h"

/* ---- leaves ------------------------------------------------------------- */

struct idm_leaf *idm_leaf_new(size_t n)
{
    struct idm_leaf *l = aligned_alloc(64, IDM_LEAF_BYTES);
    if (!l)
        return NULL;
    l->n = n;
    for (size_t j = n; j < IDM_LEAF_MAX; j++)
        idm_leaf_start_set(l, j, UINTPTR_MAX);
    return l;
}

/* A leaf holding r[0..n). */
struct idm_leaf *idm_leaf_of(const struct idm_range *r, size_t n)
{
    struct idm_leaf *l = idm_leaf_new(n);
    for (size_t j = 0; l && j < n; j++)
        idm_leaf_set(l, j, &r[j]);
    return l;
}

/* A copy of l with r inserted at position pos. */
struct idm_leaf *idm_leaf_insert(const struct idm_leaf *l, size_t pos, const struct idm_range *r)
{
    size_t n = l->n;
    struct idm_leaf *nl = idm_leaf_new(n + 1);
    if (!nl)
        return NULL;
    for (size_t j = 0; j < n; j++)
        idm_leaf_start_set(nl, j < pos ? j : j + 1, idm_leaf_start(l, j));
    memcpy(nl->rec, l->rec, pos * sizeof l->rec[0]);
    memcpy(nl->rec + pos + 1, l->rec + pos, (n - pos) * sizeof l->rec[0]);
    memcpy(nl->seq, l->seq, pos * sizeof l->seq[0]);
    memcpy(nl->seq + pos + 1, l->seq + pos, (n - pos) * sizeof l->seq[0]);
    idm_leaf_set(nl, pos, r);
    return nl;
}

/* ---- the top ------------------------------------------------------------ */

static size_t pad_fanout(size_t n)
{
    return (n + IDM_FANOUT - 1) / IDM_FANOUT * IDM_FANOUT;
}

/* A top for n >= 1 leaves, level 0 and the leaf pointers to be filled by
 * the caller, then idm_top_finish(). */
struct idm_rtop *idm_top_new(size_t n)
{
    size_t sizes[IDM_RLEVELS];
    unsigned levels = 0;
    size_t k = n;
    for (;;) {
        sizes[levels++] = k;
        if (k <= IDM_FANOUT || levels == IDM_RLEVELS)
            break;
        k = (k + IDM_FANOUT - 1) / IDM_FANOUT;
    }
    size_t bytes = idm_round64(sizeof(struct idm_rtop));
    for (unsigned i = 0; i < levels; i++)
        bytes += pad_fanout(sizes[i]) * sizeof(uintptr_t);
    bytes += idm_round64(n * sizeof(void *));
    unsigned char *p = aligned_alloc(64, bytes);
    if (!p)
        return NULL;
    struct idm_rtop *t = (struct idm_rtop *)(void *)p;
    memset(t, 0, sizeof *t);
    t->n = n;
    t->bytes = bytes;
    t->levels = levels;
    size_t off = idm_round64(sizeof(struct idm_rtop));
    for (unsigned i = 0; i < levels; i++) {
        uintptr_t *lv = (uintptr_t *)(void *)(p + off);
        for (size_t j = 0; j < pad_fanout(sizes[i]); j++)
            lv[j] = UINTPTR_MAX;
        t->lvl[i] = lv;
        off += pad_fanout(sizes[i]) * sizeof(uintptr_t);
    }
    t->leaves = (_Atomic(struct idm_leaf *) *)(void *)(p + off);
    return t;
}

/* Fill the levels above level 0 (whose first key is forced to 0). */
void idm_top_finish(struct idm_rtop *t)
{
    idm_top_keys(t)[0] = 0;
    size_t k = t->n;
    for (unsigned i = 1; i < t->levels; i++) {
        uintptr_t *lv = (uintptr_t *)t->lvl[i];
        size_t kn = (k + IDM_FANOUT - 1) / IDM_FANOUT;
        for (size_t j = 0; j < kn; j++)
            lv[j] = t->lvl[i - 1][j * IDM_FANOUT];
        k = kn;
    }
}

/* A new top where leaf i of t is replaced by the k (0..2) leaves nl[]; keys
 * come from the leaves' first starts. */
struct idm_rtop *idm_top_splice(const struct idm_rtop *t, size_t i, struct idm_leaf *const *nl,
                                size_t k)
{
    size_t n = t->n - 1 + k;
    if (n == 0)
        return NULL;
    struct idm_rtop *nt = idm_top_new(n);
    if (!nt)
        return NULL;
    size_t o = 0;
    for (size_t j = 0; j < t->n; j++) {
        if (j != i) {
            idm_top_keys(nt)[o] = t->lvl[0][j];
            atomic_init(&nt->leaves[o++], idm_wleaf(t, j));
            continue;
        }
        for (size_t x = 0; x < k; x++) {
            idm_top_keys(nt)[o] = idm_leaf_start(nl[x], 0);
            atomic_init(&nt->leaves[o++], nl[x]);
        }
    }
    idm_top_finish(nt);
    return nt;
}

static struct idm_leaf *leaf_at(const struct idm_rtop *t, size_t i)
{
    return atomic_load_explicit(&t->leaves[i], memory_order_seq_cst);
}

/* ---- the lookup --------------------------------------------------------- */

/* While the leaf's starts load, guess the record's position by
 * interpolating between this leaf's first start and the next leaf's (both
 * in the top line just read) and prefetch around it: a good guess starts
 * the record's cache miss one round earlier still, a bad one costs a few
 * wasted line fetches; it never changes the answer. Always inline: GCC
 * treats a function whose only effects are prefetches as pure and deletes
 * its calls (it did, until this was inline). */
IDM_INLINE void prefetch_guess(const struct idm_rtop *t, size_t i, const struct idm_leaf *l,
                               uintptr_t ip)
{
    if (i == 0 || i + 1 >= t->n)
        return;
    uintptr_t k0 = t->lvl[0][i];
    uintptr_t span = t->lvl[0][i + 1] - k0;
    size_t e = (size_t)((ip - k0) / (span / IDM_LEAF_MAX + 1));
    if (e >= IDM_LEAF_MAX)
        e = IDM_LEAF_MAX - 1;
    /* The guess may lie past the leaf's n records: an address computed as
     * an integer (a prefetch neither faults nor counts as an access). */
    uintptr_t rec0 = (uintptr_t)l + offsetof(struct idm_leaf, rec);
    const size_t rs = sizeof(struct idm_leafrec);
    __builtin_prefetch((const void *)(rec0 + e * rs));
    __builtin_prefetch((const void *)(rec0 + (e > 2 ? e - 3 : 0) * rs));
    __builtin_prefetch((const void *)(rec0 + (e + 3 < IDM_LEAF_MAX ? e + 3 : e) * rs));
}

/* hot: GCC puts it with the profiler's signal handler (.text.hot), which
 * calls it and the counters below at every sample, on code pages the
 * handler's own code keeps warm */
__attribute__((hot)) int mdt_idmap_ip_lookup(mdt_idmap_code_range *out, const mdt_idmap *map,
                                             uintptr_t ip)
{
    if (!map || !out)
        return MDT_EINVAL;
    int rc = MDT_ENOTFOUND;
    if (ip == UINTPTR_MAX)
        return rc; /* no range ends above it */
    unsigned tok = idm_enter(&map->g);
    const struct idm_rtop *t =
        atomic_load_explicit(&((mdt_idmap *)map)->ranges, memory_order_seq_cst);
    if (t) {
        size_t i = idm_top_find(t, ip);
        const struct idm_leaf *l = leaf_at(t, i);
        prefetch_guess(t, i, l, ip);
        size_t j = idm_leaf_upper(l, ip);
        /* The start again, with acquire: if an append stored it, its
         * record is written (the compares loaded it relaxed, and may have
         * seen the padding there while a later start was already in). */
        uintptr_t s = j > 0 ? atomic_load_explicit((_Atomic uintptr_t *)&l->start[j - 1],
                                                   memory_order_acquire)
                            : UINTPTR_MAX;
        if (s <= ip) {
            const struct idm_leafrec *x = &l->rec[j - 1];
            uintptr_t end = x->end;
            if (ip < end) {
                out->start = s;
                out->size = end - s;
                out->function_id = x->fid;
                out->function_gen = x->gen;
                rc = 0;
            }
        }
    }
    idm_leave(&map->g, tok);
    return rc;
}

__attribute__((hot)) uint64_t mdt_idmap_code_changes(const mdt_idmap *map)
{
    return map ? atomic_load_explicit(&((mdt_idmap *)map)->code_changes, memory_order_seq_cst) : 0;
}

__attribute__((hot)) uint64_t mdt_idmap_code_removals(const mdt_idmap *map)
{
    return map ? atomic_load_explicit(&((mdt_idmap *)map)->code_removals, memory_order_seq_cst) : 0;
}

/* ---- whole rebuilds (writer) ------------------------------------------- */

/* Publish a new structure holding ranges r[0..n) (sorted, disjoint), leaves
 * 7/8 full: lookups prefer full leaves (less memory to miss in), later
 * inserts between the ranges prefer room (a full leaf splits). */
int idm_ranges_rebuild(mdt_idmap *m, const struct idm_range *r, size_t n)
{
    const size_t fill = IDM_LEAF_MAX * 7 / 8;
    struct idm_rtop *old = idm_cur_top(m), *t = NULL;
    if (n > 0) {
        size_t nleaves = (n + fill - 1) / fill;
        t = idm_top_new(nleaves);
        if (!t)
            return MDT_ENOMEM;
        for (size_t i = 0; i < nleaves; i++) {
            size_t from = i * fill, cnt = n - from < fill ? n - from : fill;
            struct idm_leaf *l = idm_leaf_of(r + from, cnt);
            if (!l) {
                for (size_t j = 0; j < i; j++)
                    free(idm_wleaf(t, j));
                free(t);
                return MDT_ENOMEM;
            }
            idm_top_keys(t)[i] = r[from].start;
            atomic_init(&t->leaves[i], l);
        }
        idm_top_finish(t);
    }
    idm_ranges_begin(m, true); /* a rebuild may drop or move any range */
    idm_ranges_publish(m, t);
    idm_ranges_end(m, true);
    for (size_t i = 0; old && i < old->n; i++) {
        idm_retire(&m->g, idm_wleaf(old, i), IDM_LEAF_BYTES);
    }
    if (old)
        idm_retire(&m->g, old, old->bytes);
    m->rw->nranges = n;
    return 0;
}

/* All ranges, sorted, into a malloc'd array (writer). */
struct idm_range *idm_ranges_gather(mdt_idmap *m, size_t *n)
{
    struct idm_rtop *t = idm_cur_top(m);
    struct idm_range *all = malloc((m->rw->nranges + 1) * sizeof *all);
    size_t k = 0;
    if (!all)
        return NULL;
    for (size_t i = 0; t && i < t->n; i++) {
        struct idm_leaf *l = idm_wleaf(t, i);
        for (size_t j = 0; j < l->n; j++)
            idm_leaf_get(l, j, &all[k++]);
    }
    *n = k;
    return all;
}
