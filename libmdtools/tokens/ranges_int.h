/* The code ranges' part (ranges.c, ranges_write.c, ranges_tomb.c,
 * ranges_part.c; ranges.c's opening comment says how the structure is laid
 * out and why): its leaves, the static index above them and the writer's
 * side, the small inline helpers every file of the part uses (the lookup's
 * hot path among them, which must stay inline), and the calls between the
 * four files. Only those four files include it. */
#ifndef MDT_TOKENS_RANGES_INT_H
#define MDT_TOKENS_RANGES_INT_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tokens/base_int.h"
#include "tokens/idmap_int.h"

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

/* A leaf: n (1..IDM_LEAF_MAX) ranges sorted by start, in one allocation of
 * fixed size (IDM_LEAF_BYTES). The starts come first, always IDM_LEAF_MAX
 * of them (padded with UINTPTR_MAX, one cache line per IDM_FANOUT starts);
 * then n; then, from the next line on, one 24-byte record per range; then
 * the writer's seqs. A lookup compares with the first start of each line of
 * starts, then with the starts of one line, then reads one record: two
 * dependent rounds of loads, at offsets that do not depend on n, over 32
 * bytes per range.
 *
 * Published leaves change in one way only: a range appended after the last
 * one (ranges_write.c, append_in_place) writes its record and seq into the
 * free slots, then stores its start over the padding with release, then n.
 * A start goes from UINTPTR_MAX to its value once and never changes again
 * in that leaf; readers load starts with relaxed atomics and the start of
 * the range they answer with acquire before reading its record, so a
 * reader sees the whole range or none of it. Readers never read n (the
 * padding bounds them); it is the writer's. Everything else (an insert
 * before the last range, a removal, a split) copies the leaf. */
struct idm_leafrec {
    uintptr_t end, fid;
    uint64_t gen;
};

struct idm_leaf {
    _Atomic uintptr_t start[IDM_LEAF_MAX];
    size_t n;
    alignas(64) struct idm_leafrec rec[IDM_LEAF_MAX];
    uint64_t seq[IDM_LEAF_MAX];
};

#define IDM_LEAF_BYTES sizeof(struct idm_leaf)
_Static_assert(sizeof(struct idm_leaf) % 64 == 0, "a leaf is whole cache lines");

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
 * place (copy-on-write of one leaf), a leaf may gain a range after its
 * last one in place (its first start, the key here, stays), anything else
 * builds a new top. */
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
    uintptr_t last_start; /* of the range inserted last (insert_fast) */
    bool dirty;
    struct idm_rtomb *tomb; /* sorted, disjoint */
    size_t ntomb, captomb;
    uint64_t coarsened;      /* how many times neighbours merged (tests) */
    struct idm_regen *regen; /* pending for the next filter */
    size_t nregen, capregen;
};

_Static_assert(IDM_LEAF_MAX == IDM_FANOUT * IDM_FANOUT, "a leaf is one line of line heads");

static inline size_t idm_round64(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

/* ---- leaves ------------------------------------------------------------- */

/* Start j of l: a relaxed load (an append may store it concurrently), the
 * same instruction as a plain load on the targets we build for. */
static inline uintptr_t idm_leaf_start(const struct idm_leaf *l, size_t j)
{
    return atomic_load_explicit((_Atomic uintptr_t *)&l->start[j], memory_order_relaxed);
}

/* Writer: store start j of a leaf not yet published (or j >= n of the
 * writer's own leaf: append_in_place stores the published start itself). */
static inline void idm_leaf_start_set(struct idm_leaf *l, size_t j, uintptr_t s)
{
    atomic_store_explicit(&l->start[j], s, memory_order_relaxed);
}

static inline void idm_leaf_get(const struct idm_leaf *l, size_t j, struct idm_range *r)
{
    r->start = idm_leaf_start(l, j);
    r->end = l->rec[j].end;
    r->fid = l->rec[j].fid;
    r->gen = l->rec[j].gen;
    r->seq = l->seq[j];
}

static inline void idm_leaf_set(struct idm_leaf *l, size_t j, const struct idm_range *r)
{
    idm_leaf_start_set(l, j, r->start);
    l->rec[j] = (struct idm_leafrec){r->end, r->fid, r->gen};
    l->seq[j] = r->seq;
}

/* Number of ranges in l with start <= x (x < UINTPTR_MAX): the line whose
 * first start is the last one <= x, then the starts of that line. The
 * answer's record is among that line's 8 records (8 x 24 bytes from a
 * line-aligned offset: 3 whole cache lines): they are prefetched before the
 * starts of the line are compared, so the record's cache miss overlaps
 * theirs instead of following it. The compare loops are unrolled (GCC
 * does not at -O2): no loop counter among the loads. */
IDM_INLINE size_t idm_leaf_upper(const struct idm_leaf *l, uintptr_t x)
{
    size_t g = 0, c = 0;
#pragma GCC unroll 8
    for (unsigned k = 1; k < IDM_FANOUT; k++)
        g += idm_leaf_start(l, k * IDM_FANOUT) <= x;
    const char *rg = (const char *)&l->rec[g * IDM_FANOUT];
    _Static_assert(IDM_FANOUT * sizeof(struct idm_leafrec) == 3 * 64, "a line's records: 3 lines");
    __builtin_prefetch(rg);
    __builtin_prefetch(rg + 64);
    __builtin_prefetch(rg + 128);
#pragma GCC unroll 8
    for (unsigned k = 0; k < IDM_FANOUT; k++)
        c += idm_leaf_start(l, g * IDM_FANOUT + k) <= x;
    return g * IDM_FANOUT + c;
}

static inline uintptr_t *idm_top_keys(struct idm_rtop *t)
{
    return (uintptr_t *)t->lvl[0];
}

/* The leaf that holds x if any leaf does: greatest i with key[i] <= x.
 * x < UINTPTR_MAX, so the padding keys are never counted. */
static inline size_t idm_top_find(const struct idm_rtop *t, uintptr_t x)
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

/* ---- the writer's view ---------------------------------------------- */

static inline struct idm_rtop *idm_cur_top(const mdt_idmap *m)
{
    return atomic_load_explicit(&((mdt_idmap *)m)->ranges, memory_order_relaxed);
}

static inline struct idm_leaf *idm_wleaf(const struct idm_rtop *t, size_t i)
{
    return atomic_load_explicit(&t->leaves[i], memory_order_relaxed);
}

static inline void idm_ranges_publish(mdt_idmap *m, struct idm_rtop *t)
{
    atomic_store_explicit(&m->ranges, t, memory_order_seq_cst);
}

/* Around every change readers can see (a leaf or a top published), the
 * counters of mdt_idmap_code_changes() and, when a range may go or change
 * (`removal`: everything but an insert that overlaps nothing), of
 * mdt_idmap_code_removals() go odd before and even after, as a sequence
 * lock's: a reader that read an even value before its lookup, and the
 * same value later, knows no change began in between, so a cached answer
 * is still the map's (sampler.c's walk cache). */
static inline void idm_ranges_begin(mdt_idmap *m, bool removal)
{
    atomic_fetch_add_explicit(&m->code_changes, 1, memory_order_seq_cst);
    if (removal)
        atomic_fetch_add_explicit(&m->code_removals, 1, memory_order_seq_cst);
}

static inline void idm_ranges_end(mdt_idmap *m, bool removal)
{
    if (removal)
        atomic_fetch_add_explicit(&m->code_removals, 1, memory_order_seq_cst);
    atomic_fetch_add_explicit(&m->code_changes, 1, memory_order_seq_cst);
}

/* ---- between the files ------------------------------------------------ */

/* ranges.c: new leaves and tops (the old ones go through the grace period:
 * the caller's task), whole rebuilds. */
/* A leaf for n ranges, its starts from n on padded; the first n to be set
 * by the caller. */
struct idm_leaf *idm_leaf_new(size_t n);
/* A leaf holding r[0..n). */
struct idm_leaf *idm_leaf_of(const struct idm_range *r, size_t n);
/* A copy of l with r inserted at position pos. */
struct idm_leaf *idm_leaf_insert(const struct idm_leaf *l, size_t pos, const struct idm_range *r);
/* A top for n >= 1 leaves, level 0 and the leaf pointers to be filled by
 * the caller, then idm_top_finish(). */
struct idm_rtop *idm_top_new(size_t n);
/* Fill the levels above level 0 (whose first key is forced to 0). */
void idm_top_finish(struct idm_rtop *t);
/* A new top where leaf i of t is replaced by the k (0..2) leaves nl[]; keys
 * come from the leaves' first starts. */
struct idm_rtop *idm_top_splice(const struct idm_rtop *t, size_t i, struct idm_leaf *const *nl,
                                size_t k);
/* Publish a new structure holding ranges r[0..n) (sorted, disjoint), leaves
 * 7/8 full: lookups prefer full leaves (less memory to miss in), later
 * inserts between the ranges prefer room (a full leaf splits). */
int idm_ranges_rebuild(mdt_idmap *m, const struct idm_range *r, size_t n);
/* All ranges, sorted, into a malloc'd array (writer). */
struct idm_range *idm_ranges_gather(mdt_idmap *m, size_t *n);

/* ranges_tomb.c: the code tombstones. */
/* The newest seq among pieces overlapping [a, e), 0 if none. */
uint64_t idm_tomb_seq(const mdt_idmap *m, uintptr_t a, uintptr_t e);
/* Refuse code_adds at or below seq over [a, e) from now on: every address
 * there gets the newer of its seq and this one. Never fails: without
 * memory for more pieces, neighbours merge until there is room (the
 * preallocated IDM_TOMB_CAP0 always is, for a few), and past the bound
 * (tomb_limit) likewise. */
void idm_tomb_raise(mdt_idmap *m, uintptr_t a, uintptr_t e, uint64_t seq);
/* A range applied over [a, e): the pieces there are older than it (or it
 * would have been refused) and it refuses every code_add older than
 * itself, and leaves a tombstone at least as new when it goes (removed,
 * replaced, or dropped with its function), so the pieces under it say
 * nothing more: they go. Best effort: a piece that would have to split
 * in two without memory for the second half stays whole. */
void idm_tomb_clear(mdt_idmap *m, uintptr_t a, uintptr_t e);
/* Retire: pieces below the watermark go; an array much larger than what
 * is left shrinks. */
int idm_tomb_retire(mdt_idmap *m, uint64_t below);

#endif
