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
 * Writers copy on write: an insert copies its leaf and swaps the leaf
 * pointer in place; a full leaf splits (in halves, or, for an append at the
 * very end, the full leaf stays as it is and a new leaf starts, so code
 * JIT-compiled in address order fills leaves completely) and a new top is
 * built and published. A removal copies the leaf, or builds a new top when
 * the leaf empties or its first start changes. Overlap replacement (code
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
 * IDM_TOMB_MIN plus one per live range neighbouring pieces merge. */
#define _DEFAULT_SOURCE /* clockid_t, pthread_getcpuclockid (grace_int.h) */
#include "config.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "tokens/base_int.h"
#include "tokens/grace_int.h"
#include "tokens/idmap_int.h"
#include "tokens/plugs_int.h"
#include "tokens/table_int.h"
#include "tokens/writer_int.h"
#include "util/error.h"

/* Code ranges per leaf, and the fan-out above the leaves (one cache line of
 * keys), and the most levels above them. */
#define IDM_LEAF_MAX 64u
#define IDM_FANOUT 8u
#define IDM_RLEVELS 12u

/* One range, as the writer handles it. */
struct idm_range {
    uintptr_t start, end, fid;
    uint64_t gen, seq;
};

/* A leaf: n (1..IDM_LEAF_MAX) ranges sorted by start. The starts come
 * first, always IDM_LEAF_MAX of them (padded with UINTPTR_MAX, one cache
 * line per IDM_FANOUT starts); then n; then, from the next line on, one
 * 24-byte record per range; then the writer's seqs. A lookup compares with
 * the first start of each line of starts, then with the starts of one line,
 * then reads one record: two dependent rounds of loads, at offsets that do
 * not depend on n, over 32 bytes per range. Immutable once published. */
struct idm_leafrec {
    uintptr_t end, fid;
    uint64_t gen;
};

struct idm_leaf {
    uintptr_t start[IDM_LEAF_MAX];
    size_t n;
    alignas(64) struct idm_leafrec rec[]; /* n, then uint64_t seq[n] */
};

/* A piece of the code tombstones (writer only): no code_add at or below seq
 * over [start, end) may be applied, because at seq the code there was
 * freed or was other code. The pieces are sorted and disjoint, each with
 * the newest such seq of its addresses (tomb_raise), so a tombstone that
 * overlaps an older one raises only the addresses they share. */
struct idm_rtomb {
    uintptr_t start, end;
    uint64_t seq;
};

/* A late unload at `after` of function `fid` whose incarnation `from` had
 * been reloaded (or shown alive by a code_add) later: it now is incarnation
 * `to`; its ranges added after `after` go with it, the others die. */
struct idm_regen {
    uintptr_t fid;
    uint64_t from, to, after;
};

/* Code tombstones: at least IDM_TOMB_MIN pieces are always allowed (and
 * IDM_TOMB_CAP0 preallocated, so that raising one never fails), beyond
 * that one per live range; past the bound, neighbours merge (tomb_coarsen). */
#define IDM_TOMB_MIN 1024u
#define IDM_TOMB_CAP0 16u

/* The index above the leaves: level 0 holds the first start of every leaf
 * (level 0's first key is 0), level k+1 every IDM_FANOUT-th key of level k,
 * up to a top level of at most IDM_FANOUT keys; each level is padded with
 * UINTPTR_MAX to whole cache lines of IDM_FANOUT keys. A lookup reads one
 * line per level. One allocation; the leaf pointers may be swapped in
 * place (copy-on-write of one leaf), anything else builds a new top. */
struct idm_rtop {
    size_t n;     /* leaves */
    size_t bytes; /* the top's allocation */
    unsigned levels;
    const uintptr_t *lvl[IDM_RLEVELS];
    _Atomic(struct idm_leaf *) *leaves;
};

/* The writer's side (m->rw): how many ranges there are, whether a watched
 * function died since the last filter, code tombstones, pending
 * incarnation changes. */
struct idm_rwriter {
    size_t nranges;
    bool dirty;
    struct idm_rtomb *tomb; /* sorted, disjoint */
    size_t ntomb, captomb;
    uint64_t coarsened;      /* how many times neighbours merged (tests) */
    struct idm_regen *regen; /* pending for the next filter */
    size_t nregen, capregen;
};

_Static_assert(IDM_LEAF_MAX == IDM_FANOUT * IDM_FANOUT, "a leaf is one line of line heads");

static size_t round64(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

/* ---- leaves ------------------------------------------------------------- */

static size_t leaf_bytes(size_t n)
{
    return round64(sizeof(struct idm_leaf) + n * (sizeof(struct idm_leafrec) + sizeof(uint64_t)));
}

/* The writer's seqs, after the n records. */
static uint64_t *leaf_seq(const struct idm_leaf *l)
{
    return (uint64_t *)(void *)((struct idm_leafrec *)l->rec + l->n);
}

static struct idm_leaf *leaf_new(size_t n)
{
    struct idm_leaf *l = aligned_alloc(64, leaf_bytes(n));
    if (!l)
        return NULL;
    l->n = n;
    for (size_t j = n; j < IDM_LEAF_MAX; j++)
        l->start[j] = UINTPTR_MAX;
    return l;
}

static void leaf_get(const struct idm_leaf *l, size_t j, struct idm_range *r)
{
    r->start = l->start[j];
    r->end = l->rec[j].end;
    r->fid = l->rec[j].fid;
    r->gen = l->rec[j].gen;
    r->seq = leaf_seq(l)[j];
}

static void leaf_set(struct idm_leaf *l, size_t j, const struct idm_range *r)
{
    l->start[j] = r->start;
    l->rec[j] = (struct idm_leafrec){r->end, r->fid, r->gen};
    leaf_seq(l)[j] = r->seq;
}

/* A leaf holding r[0..n). */
static struct idm_leaf *leaf_of(const struct idm_range *r, size_t n)
{
    struct idm_leaf *l = leaf_new(n);
    for (size_t j = 0; l && j < n; j++)
        leaf_set(l, j, &r[j]);
    return l;
}

/* Number of ranges in l with start <= x (x < UINTPTR_MAX): the line whose
 * first start is the last one <= x, then the starts of that line. The
 * answer's record is among that line's 8 records (8 x 24 bytes from a
 * line-aligned offset: 3 whole cache lines): they are prefetched before the
 * starts of the line are compared, so the record's cache miss overlaps
 * theirs instead of following it. The compare loops are unrolled (GCC
 * does not at -O2): no loop counter among the loads. */
IDM_INLINE size_t leaf_upper(const struct idm_leaf *l, uintptr_t x)
{
    const uintptr_t *st = l->start;
    size_t g = 0, c = 0;
#pragma GCC unroll 8
    for (unsigned k = 1; k < IDM_FANOUT; k++)
        g += st[k * IDM_FANOUT] <= x;
    const char *rg = (const char *)&l->rec[g * IDM_FANOUT];
    _Static_assert(IDM_FANOUT * sizeof(struct idm_leafrec) == 3 * 64, "a line's records: 3 lines");
    __builtin_prefetch(rg);
    __builtin_prefetch(rg + 64);
    __builtin_prefetch(rg + 128);
    st += g * IDM_FANOUT;
#pragma GCC unroll 8
    for (unsigned k = 0; k < IDM_FANOUT; k++)
        c += st[k] <= x;
    return g * IDM_FANOUT + c;
}

/* ---- the top ------------------------------------------------------------ */

static size_t pad_fanout(size_t n)
{
    return (n + IDM_FANOUT - 1) / IDM_FANOUT * IDM_FANOUT;
}

/* A top for n >= 1 leaves, level 0 and the leaf pointers to be filled by
 * the caller, then top_finish(). */
static struct idm_rtop *top_new(size_t n)
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
    size_t bytes = round64(sizeof(struct idm_rtop));
    for (unsigned i = 0; i < levels; i++)
        bytes += pad_fanout(sizes[i]) * sizeof(uintptr_t);
    bytes += round64(n * sizeof(void *));
    unsigned char *p = aligned_alloc(64, bytes);
    if (!p)
        return NULL;
    struct idm_rtop *t = (struct idm_rtop *)(void *)p;
    memset(t, 0, sizeof *t);
    t->n = n;
    t->bytes = bytes;
    t->levels = levels;
    size_t off = round64(sizeof(struct idm_rtop));
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

static uintptr_t *top_keys(struct idm_rtop *t)
{
    return (uintptr_t *)t->lvl[0];
}

/* Fill the levels above level 0 (whose first key is forced to 0). */
static void top_finish(struct idm_rtop *t)
{
    top_keys(t)[0] = 0;
    size_t k = t->n;
    for (unsigned i = 1; i < t->levels; i++) {
        uintptr_t *lv = (uintptr_t *)t->lvl[i];
        size_t kn = (k + IDM_FANOUT - 1) / IDM_FANOUT;
        for (size_t j = 0; j < kn; j++)
            lv[j] = t->lvl[i - 1][j * IDM_FANOUT];
        k = kn;
    }
}

static struct idm_leaf *leaf_at(const struct idm_rtop *t, size_t i)
{
    return atomic_load_explicit(&t->leaves[i], memory_order_seq_cst);
}

/* The leaf that holds x if any leaf does: greatest i with key[i] <= x.
 * x < UINTPTR_MAX, so the padding keys are never counted. */
static size_t top_find(const struct idm_rtop *t, uintptr_t x)
{
    size_t idx = 0;
    for (unsigned k = t->levels; k-- > 0;) {
        const uintptr_t *b = t->lvl[k] + idx * IDM_FANOUT;
        size_t c = 0;
#pragma GCC unroll 8
        for (unsigned i = 0; i < IDM_FANOUT; i++)
            c += b[i] <= x;
        idx = idx * IDM_FANOUT + c - 1;
    }
    return idx;
}

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

int mdt_idmap_ip_lookup(mdt_idmap_code_range *out, const mdt_idmap *map, uintptr_t ip)
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
        size_t i = top_find(t, ip);
        const struct idm_leaf *l = leaf_at(t, i);
        prefetch_guess(t, i, l, ip);
        size_t j = leaf_upper(l, ip);
        if (j > 0) {
            const struct idm_leafrec *x = &l->rec[j - 1];
            uintptr_t end = x->end;
            if (ip < end) {
                out->start = l->start[j - 1];
                out->size = end - out->start;
                out->function_id = x->fid;
                out->function_gen = x->gen;
                rc = 0;
            }
        }
    }
    idm_leave(&map->g, tok);
    return rc;
}

/* ---- writer ------------------------------------------------------------- */

static struct idm_rtop *cur_top(const mdt_idmap *m)
{
    return atomic_load_explicit(&((mdt_idmap *)m)->ranges, memory_order_relaxed);
}

static struct idm_leaf *wleaf(const struct idm_rtop *t, size_t i)
{
    return atomic_load_explicit(&t->leaves[i], memory_order_relaxed);
}

static void publish(mdt_idmap *m, struct idm_rtop *t)
{
    atomic_store_explicit(&m->ranges, t, memory_order_seq_cst);
}

/* Publish a new structure holding ranges r[0..n) (sorted, disjoint), leaves
 * 7/8 full: lookups prefer full leaves (less memory to miss in), later
 * inserts between the ranges prefer room (a full leaf splits). */
static int rebuild_from(mdt_idmap *m, const struct idm_range *r, size_t n)
{
    const size_t fill = IDM_LEAF_MAX * 7 / 8;
    struct idm_rtop *old = cur_top(m), *t = NULL;
    if (n > 0) {
        size_t nleaves = (n + fill - 1) / fill;
        t = top_new(nleaves);
        if (!t)
            return MDT_ENOMEM;
        for (size_t i = 0; i < nleaves; i++) {
            size_t from = i * fill, cnt = n - from < fill ? n - from : fill;
            struct idm_leaf *l = leaf_of(r + from, cnt);
            if (!l) {
                for (size_t j = 0; j < i; j++)
                    free(wleaf(t, j));
                free(t);
                return MDT_ENOMEM;
            }
            top_keys(t)[i] = r[from].start;
            atomic_init(&t->leaves[i], l);
        }
        top_finish(t);
    }
    publish(m, t);
    for (size_t i = 0; old && i < old->n; i++) {
        struct idm_leaf *l = wleaf(old, i);
        idm_retire(&m->g, l, leaf_bytes(l->n));
    }
    if (old)
        idm_retire(&m->g, old, old->bytes);
    m->rw->nranges = n;
    return 0;
}

/* All ranges, sorted, into a malloc'd array (writer). */
static struct idm_range *gather(mdt_idmap *m, size_t *n)
{
    struct idm_rtop *t = cur_top(m);
    struct idm_range *all = malloc((m->rw->nranges + 1) * sizeof *all);
    size_t k = 0;
    if (!all)
        return NULL;
    for (size_t i = 0; t && i < t->n; i++) {
        struct idm_leaf *l = wleaf(t, i);
        for (size_t j = 0; j < l->n; j++)
            leaf_get(l, j, &all[k++]);
    }
    *n = k;
    return all;
}

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

static void tomb_raise(mdt_idmap *m, uintptr_t a, uintptr_t e, uint64_t seq);

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
    struct idm_range *all = gather(m, &n);
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
            tomb_raise(m, all[i].start, all[i].end, all[i].seq);
    }
    m->rw->nregen = 0;
    /* A moved range is a changed record: readers see it in a new leaf. */
    int rc = k == n && !moved ? 0 : rebuild_from(m, all, k);
    free(all);
    if (rc)
        mark_dirty(m);
    return rc ? mdt__fail_simple(rc, "idmap: out of memory filtering code ranges") : 0;
}

static void ranges_fini(mdt_idmap *m)
{
    struct idm_rtop *t = cur_top(m);
    for (size_t i = 0; t && i < t->n; i++)
        free(wleaf(t, i));
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
    struct idm_rtop *t = cur_top(m);
    size_t b = t ? t->bytes : 0;
    for (size_t i = 0; t && i < t->n; i++)
        b += leaf_bytes(wleaf(t, i)->n);
    return b;
}

/* A new top where leaf i of t is replaced by the k (0..2) leaves nl[]; keys
 * come from the leaves' first starts. */
static struct idm_rtop *top_splice(const struct idm_rtop *t, size_t i, struct idm_leaf *const *nl,
                                   size_t k)
{
    size_t n = t->n - 1 + k;
    if (n == 0)
        return NULL;
    struct idm_rtop *nt = top_new(n);
    if (!nt)
        return NULL;
    size_t o = 0;
    for (size_t j = 0; j < t->n; j++) {
        if (j != i) {
            top_keys(nt)[o] = t->lvl[0][j];
            atomic_init(&nt->leaves[o++], wleaf(t, j));
            continue;
        }
        for (size_t x = 0; x < k; x++) {
            top_keys(nt)[o] = nl[x]->start[0];
            atomic_init(&nt->leaves[o++], nl[x]);
        }
    }
    top_finish(nt);
    return nt;
}

/* A copy of l with r inserted at position pos. */
static struct idm_leaf *leaf_insert(const struct idm_leaf *l, size_t pos, const struct idm_range *r)
{
    size_t n = l->n;
    struct idm_leaf *nl = leaf_new(n + 1);
    if (!nl)
        return NULL;
    memcpy(nl->start, l->start, pos * sizeof l->start[0]);
    memcpy(nl->start + pos + 1, l->start + pos, (n - pos) * sizeof l->start[0]);
    memcpy(nl->rec, l->rec, pos * sizeof l->rec[0]);
    memcpy(nl->rec + pos + 1, l->rec + pos, (n - pos) * sizeof l->rec[0]);
    memcpy(leaf_seq(nl), leaf_seq(l), pos * sizeof(uint64_t));
    memcpy(leaf_seq(nl) + pos + 1, leaf_seq(l) + pos, (n - pos) * sizeof(uint64_t));
    leaf_set(nl, pos, r);
    return nl;
}

/* Insert r with no overlap present. */
static int insert_fast(mdt_idmap *m, const struct idm_range *r)
{
    struct idm_rtop *t = cur_top(m);
    if (!t)
        return rebuild_from(m, r, 1);
    size_t i = top_find(t, r->start);
    struct idm_leaf *l = wleaf(t, i);
    size_t n = l->n, pos = leaf_upper(l, r->start);
    if (n + 1 <= IDM_LEAF_MAX) {
        struct idm_leaf *nl = leaf_insert(l, pos, r);
        if (!nl)
            return MDT_ENOMEM;
        atomic_store_explicit(&t->leaves[i], nl, memory_order_seq_cst);
        idm_retire(&m->g, l, leaf_bytes(n));
        m->rw->nranges++;
        return 0;
    }
    struct idm_range all[IDM_LEAF_MAX + 1];
    for (size_t j = 0; j < n; j++)
        leaf_get(l, j, &all[j < pos ? j : j + 1]);
    all[pos] = *r;
    /* Split. An append after the last range keeps the full leaf as it is. */
    bool append = pos == n && i == t->n - 1;
    size_t half = append ? n : (n + 1) / 2;
    struct idm_leaf *nl[2] = {append ? l : leaf_of(all, half), leaf_of(all + half, n + 1 - half)};
    struct idm_rtop *nt = nl[0] && nl[1] ? top_splice(t, i, nl, 2) : NULL;
    if (!nt) {
        if (!append)
            free(nl[0]);
        free(nl[1]);
        return MDT_ENOMEM;
    }
    publish(m, nt);
    if (!append)
        idm_retire(&m->g, l, leaf_bytes(n));
    idm_retire(&m->g, t, t->bytes);
    m->rw->nranges++;
    return 0;
}

static void check_overlap(const struct idm_leaf *l, size_t j, const struct idm_range *r, bool *any,
                          bool *older, bool *newer, bool *same)
{
    struct idm_range x;
    leaf_get(l, j, &x);
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
    const struct idm_rtop *t = cur_top(m);
    *any = *older = *newer = *same = false;
    if (!t)
        return;
    size_t i = top_find(t, r->start);
    const struct idm_leaf *l = wleaf(t, i);
    size_t pos = leaf_upper(l, r->start);
    if (pos > 0)
        check_overlap(l, pos - 1, r, any, older, newer, same);
    else if (i > 0)
        check_overlap(wleaf(t, i - 1), wleaf(t, i - 1)->n - 1, r, any, older, newer, same);
    for (size_t li = i, j = pos; li < t->n; li++, j = 0) {
        l = wleaf(t, li);
        for (; j < l->n && l->start[j] < r->end; j++)
            check_overlap(l, j, r, any, older, newer, same);
        if (j < l->n)
            break;
    }
}

/* ---- code tombstones --------------------------------------------------- */

/* The first piece that ends after `a` (they are disjoint and sorted, so
 * their ends are sorted too). */
static size_t tomb_first(const mdt_idmap *m, uintptr_t a)
{
    size_t lo = 0, hi = m->rw->ntomb;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->rw->tomb[mid].end <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The newest seq among pieces overlapping [a, e), 0 if none. */
static uint64_t tomb_seq(const mdt_idmap *m, uintptr_t a, uintptr_t e)
{
    uint64_t s = 0;
    for (size_t i = tomb_first(m, a); i < m->rw->ntomb && m->rw->tomb[i].start < e; i++)
        if (m->rw->tomb[i].seq > s)
            s = m->rw->tomb[i].seq;
    return s;
}

static size_t tomb_limit(const mdt_idmap *m)
{
    return IDM_TOMB_MIN + m->rw->nranges;
}

/* Halve the number of pieces: each pair of neighbours becomes one piece
 * over both and the gap between them, with the newer seq. The gap then
 * refuses code_adds older than that seq which it did not have to: an
 * address left unknown (lazy catch-up can fill it), never dead code
 * answered, because a refused code_add still drops the older ranges it
 * overlaps (mdt_idmap_code_add). */
static void tomb_coarsen(mdt_idmap *m)
{
    struct idm_rwriter *w = m->rw;
    size_t k = 0;
    for (size_t i = 0; i < w->ntomb; i += 2, k++) {
        struct idm_rtomb t = w->tomb[i];
        if (i + 1 < w->ntomb) {
            t.end = w->tomb[i + 1].end;
            if (w->tomb[i + 1].seq > t.seq)
                t.seq = w->tomb[i + 1].seq;
        }
        w->tomb[k] = t;
    }
    w->ntomb = k;
    w->coarsened++;
}

/* Room for n pieces; false when there is none (the caller coarsens). */
static bool tomb_room(mdt_idmap *m, size_t n)
{
    struct idm_rwriter *w = m->rw;
    if (n <= w->captomb)
        return true;
    size_t ncap = w->captomb * 2 > n ? w->captomb * 2 : n;
    struct idm_rtomb *t = realloc(w->tomb, ncap * sizeof *t);
    if (!t)
        return false;
    w->tomb = t;
    w->captomb = ncap;
    return true;
}

/* Refuse code_adds at or below seq over [a, e) from now on: every address
 * there gets the newer of its seq and this one. Never fails: without
 * memory for more pieces, neighbours merge until there is room (the
 * preallocated IDM_TOMB_CAP0 always is, for a few), and past the bound
 * (tomb_limit) likewise. */
static void tomb_raise(mdt_idmap *m, uintptr_t a, uintptr_t e, uint64_t seq)
{
    struct idm_rwriter *w = m->rw;
    struct idm_rtomb small[32], *out;
    size_t i, j, no;
    for (;;) {
        i = tomb_first(m, a);
        for (j = i; j < w->ntomb && w->tomb[j].start < e; j++)
            ;
        /* [i, j) overlap [a, e); they become at most 2 (j - i) + 3 pieces. */
        size_t most = 2 * (j - i) + 3;
        out = most <= sizeof small / sizeof small[0] ? small : malloc(most * sizeof *out);
        if (out && tomb_room(m, w->ntomb - (j - i) + most))
            break;
        if (out != small)
            free(out);
        tomb_coarsen(m);
    }
    no = 0;
#define EMIT(lo, hi, sq)                                                                           \
    do {                                                                                           \
        if ((lo) < (hi)) {                                                                         \
            if (no > 0 && out[no - 1].end == (lo) && out[no - 1].seq == (sq))                      \
                out[no - 1].end = (hi);                                                            \
            else                                                                                   \
                out[no++] = (struct idm_rtomb){(lo), (hi), (sq)};                                  \
        }                                                                                          \
    } while (0)
    uintptr_t c = a;
    for (size_t x = i; x < j; x++) {
        struct idm_rtomb p = w->tomb[x];
        if (p.start < c)
            EMIT(p.start, c, p.seq); /* the first piece begins before a */
        else
            EMIT(c, p.start, seq); /* a gap before this piece */
        uintptr_t lo = p.start > a ? p.start : a, hi = p.end < e ? p.end : e;
        EMIT(lo, hi, p.seq > seq ? p.seq : seq);
        if (p.end > e)
            EMIT(e, p.end, p.seq); /* the last piece ends after e */
        c = hi;
    }
    EMIT(c, e, seq);
#undef EMIT
    memmove(&w->tomb[i + no], &w->tomb[j], (w->ntomb - j) * sizeof *out);
    memcpy(&w->tomb[i], out, no * sizeof *out);
    w->ntomb = w->ntomb - (j - i) + no;
    if (out != small)
        free(out);
    while (w->ntomb > tomb_limit(m))
        tomb_coarsen(m);
}

/* A range applied over [a, e): the pieces there are older than it (or it
 * would have been refused) and it refuses every code_add older than
 * itself, and leaves a tombstone at least as new when it goes (removed,
 * replaced, or dropped with its function), so the pieces under it say
 * nothing more: they go. Best effort: a piece that would have to split
 * in two without memory for the second half stays whole. */
static void tomb_clear(mdt_idmap *m, uintptr_t a, uintptr_t e)
{
    struct idm_rwriter *w = m->rw;
    size_t i = tomb_first(m, a), j = i;
    for (; j < w->ntomb && w->tomb[j].start < e; j++)
        ;
    if (i == j)
        return;
    struct idm_rtomb keep[2];
    size_t nk = 0;
    if (w->tomb[i].start < a)
        keep[nk++] = (struct idm_rtomb){w->tomb[i].start, a, w->tomb[i].seq};
    if (w->tomb[j - 1].end > e)
        keep[nk++] = (struct idm_rtomb){e, w->tomb[j - 1].end, w->tomb[j - 1].seq};
    if (nk > j - i && !tomb_room(m, w->ntomb + 1))
        return;
    memmove(&w->tomb[i + nk], &w->tomb[j], (w->ntomb - j) * sizeof keep[0]);
    memcpy(&w->tomb[i], keep, nk * sizeof keep[0]);
    w->ntomb = w->ntomb - (j - i) + nk;
}

/* Retire: pieces below the watermark go; an array much larger than what
 * is left shrinks. */
static int ranges_retire(mdt_idmap *m, uint64_t below)
{
    struct idm_rwriter *w = m->rw;
    size_t k = 0;
    for (size_t i = 0; i < w->ntomb; i++)
        if (w->tomb[i].seq >= below)
            w->tomb[k++] = w->tomb[i];
    w->ntomb = k;
    size_t want = k * 2 > IDM_TOMB_CAP0 ? k * 2 : IDM_TOMB_CAP0;
    if (w->captomb > 2 * want) {
        struct idm_rtomb *t = realloc(w->tomb, want * sizeof *t);
        if (t) {
            w->tomb = t;
            w->captomb = want;
        }
    }
    return 0;
}

/* A duplicate code_add with a newer seq: the range's seq follows (the
 * writer's seqs after the records are never read by readers). */
static void raise_range_seq(mdt_idmap *m, const struct idm_range *r)
{
    struct idm_rtop *t = cur_top(m);
    size_t i = top_find(t, r->start);
    struct idm_leaf *l = wleaf(t, i);
    size_t j = leaf_upper(l, r->start);
    if (j > 0 && l->start[j - 1] == r->start && leaf_seq(l)[j - 1] < r->seq)
        leaf_seq(l)[j - 1] = r->seq;
}

/* [r->start, r->end) held r's code at r->seq, so the code of the ranges
 * overlapping it that are older (all of them when r is applied: none is
 * newer then) was freed by r->seq: they go, each leaving a tombstone at
 * r->seq over its whole span (a function's code is freed as a whole);
 * r goes in when `apply`. */
static int replace_overlaps(mdt_idmap *m, const struct idm_range *r, bool apply)
{
    size_t n, k = 0;
    struct idm_range *all = gather(m, &n);
    struct idm_range *nr = all ? malloc((n + 1) * sizeof *nr) : NULL;
    if (!nr) {
        free(all);
        return MDT_ENOMEM;
    }
    bool placed = !apply, dropped = false;
    for (size_t i = 0; i < n; i++) {
        if (all[i].start < r->end && all[i].end > r->start && (apply || all[i].seq < r->seq)) {
            tomb_raise(m, all[i].start, all[i].end, r->seq);
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
    int rc = apply || dropped ? rebuild_from(m, nr, k) : 0;
    free(nr);
    free(all);
    return rc;
}

int mdt_idmap_code_add(mdt_idmap *map, uintptr_t start, size_t size, uintptr_t function_id,
                       uint64_t seq)
{
    if (!map || !function_id || size == 0 || start + size < start)
        return mdt__fail_simple(MDT_EINVAL, "idmap: bad code range");
    int rc = idm_lock(map);
    if (rc)
        return rc;
    rc = idm_check_seq(map, seq);
    if (rc)
        goto out;
    struct idm_range r = {start, start + size, function_id, 0, seq};
    bool any = false, older = false, newer = false, same = false, apply = false, scanned = false;
    struct idm_head *h =
        idm_tab_find(atomic_load_explicit(&map->tab[K_FUNC], memory_order_relaxed), function_id);
    if (!h || !idm_live(h)) {
        rc =
            idm_last_unload(map, K_FUNC, function_id) >= seq ? MDT_IDMAP_SUPERSEDED : MDT_ENOTFOUND;
    } else if (idm_last_unload(map, K_FUNC, function_id) >= seq ||
               tomb_seq(map, start, start + size) >= seq || seq < idm_gen(h)) {
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
        tomb_raise(map, start, start + size, seq);
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
    tomb_clear(map, start, start + size);
    idm_set_meta(h, idm_meta(h) | META_WATCHED);
    rc = MDT_IDMAP_APPLIED;
out:
    return idm_finish(map, rc);
}

int mdt_idmap_code_remove(mdt_idmap *map, uintptr_t start, uint64_t seq)
{
    if (!map)
        return mdt__fail_simple(MDT_EINVAL, "idmap: bad code range");
    int rc = idm_lock(map);
    if (rc)
        return rc;
    rc = idm_check_seq(map, seq);
    if (rc)
        goto out;
    struct idm_rtop *t = cur_top(map);
    size_t i = 0, j = 0;
    struct idm_leaf *l = NULL;
    if (t && start != UINTPTR_MAX) {
        i = top_find(t, start);
        l = wleaf(t, i);
        j = leaf_upper(l, start);
    }
    if (!l || j == 0 || l->start[j - 1] != start) {
        /* Code the map never saw (or saw removed): a tombstone for its
         * start, unless a newer one covers it. */
        rc = MDT_IDMAP_DUPLICATE;
        if (start != UINTPTR_MAX && tomb_seq(map, start, start + 1) < seq) {
            tomb_raise(map, start, start + 1, seq);
            rc = MDT_IDMAP_APPLIED;
        }
        goto out;
    }
    j--;
    if (leaf_seq(l)[j] > seq) {
        rc = MDT_IDMAP_SUPERSEDED;
        goto out;
    }
    struct idm_range rest[IDM_LEAF_MAX];
    size_t n = 0;
    for (size_t x = 0; x < l->n; x++)
        if (x != j)
            leaf_get(l, x, &rest[n++]);
    struct idm_leaf *nl = n ? leaf_of(rest, n) : NULL;
    if (n && !nl) {
        rc = mdt__fail_simple(MDT_ENOMEM, "idmap: out of memory");
        goto out;
    }
    if (n && (j > 0 || i == 0)) {
        /* Same first start: swap the leaf in place. */
        atomic_store_explicit(&t->leaves[i], nl, memory_order_seq_cst);
    } else {
        struct idm_rtop *nt = top_splice(t, i, &nl, n ? 1 : 0);
        if (!nt && t->n > 1) {
            free(nl);
            rc = mdt__fail_simple(MDT_ENOMEM, "idmap: out of memory");
            goto out;
        }
        publish(map, nt); /* NULL when the last range went */
        idm_retire(&map->g, t, t->bytes);
    }
    uintptr_t end = l->rec[j].end;
    idm_retire(&map->g, l, leaf_bytes(l->n));
    map->rw->nranges--;
    tomb_raise(map, start, end, seq);
    rc = MDT_IDMAP_APPLIED;
out:
    return idm_finish(map, rc);
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
    .retire = ranges_retire,
    .stats = ranges_stats,
};
