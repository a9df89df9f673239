/* Indexes of list runs, built on first need, so that the owner of a Field,
 * MethodDef, Param, Property or Event row is a load and never a search.
 *
 * A LIST column (ECMA-335 II.22: TypeDef.FieldList, MethodDef.ParamList,
 * ...) gives the first position of a run, which ends where the next row's
 * run starts. The first owner query of a column fills an array position ->
 * row holding it, in one pass over the column; naming every method of a
 * module (mdinspect batch names hundreds of thousands) then costs a load
 * per method instead of a binary search over the TypeDef table. Holders are
 * 2 bytes when the owning table has fewer than 65536 readable rows (nearly
 * every module), else 4.
 *
 * In valid metadata the starts never decrease and the runs are disjoint.
 * Damaged metadata whose starts go down would have overlapping runs, and a
 * caller walking every row's run (the natural loop over a type's members)
 * would then make rows x positions steps: starts alternating 1 and N+1
 * give half the rows a run of all N positions. So a run begins no lower
 * than where the readable runs of the rows before it end (its floor): a
 * row whose start lies below keeps only the positions from there on. The
 * runs are then disjoint whatever the column holds, the sum of all runs is
 * at most the target's rows, and each position still goes to the first
 * row, in row order, whose run covers it; what changes is only that a
 * position an earlier run passed over (that run began above it) has no
 * owner rather than a later, overlapping one. The floors are kept here,
 * per row, for non-ascending columns only, and mdt_row_range (cells.c)
 * applies them.
 *
 * Uncompressed (#-) metadata may send positions through Ptr tables
 * (FieldPtr, MethodPtr, ...): the inverse, row -> first Ptr row naming it,
 * is indexed here too (it was a scan of the Ptr table per query).
 *
 * Open used to check every list column and build these; now the first
 * owner query of a column does, published as lazy.c describes: malloc,
 * then a compare-and-swap; the loser of a race frees its copy. Arrays are
 * sized by the rows whose bytes are present (`avail`), never by declared
 * row counts, so a tiny file cannot make us allocate 64 MiB. */
#include "config.h"

#include <stdatomic.h>
#include <stdlib.h>

#include <mdtools/errors.h>
#include <mdtools/tables.h>

#include "md/md_int.h"
#include "util/error.h"

struct mdt_ptr_index {
    uint32_t n;
    uint32_t pos[]; /* row of the target -> first Ptr row naming it, 0: none */
};

/* Row r (from 1, r <= avail) of t, column c. */
static uint32_t raw(const mdt_table_layout *t, uint32_t r, unsigned c)
{
    const uint8_t *p = t->base + (size_t)(r - 1) * t->row_size + t->off[c];
    return t->width[c] == 2 ? le16(p) : le32(p);
}

static void set_holder(struct mdt_run_index *ri, uint32_t p, uint32_t r)
{
    if (ri->h16)
        ri->h16[p] = (uint16_t)r;
    else
        ri->h32[p] = r;
}

/* Positions 1..n-1 of column c of table t, whose runs index list table lt:
 * each gets the row whose run holds it. A run is readable under the rules
 * of mdt_row_range (cells.c): its start in 1..limit, and its end (the next
 * row's start, or limit after the last row) between its start and limit;
 * it begins at its row's floor (above). ascending: whether the column's
 * starts never go down (mdt__list_ascends). NULL when out of memory. */
static struct mdt_run_index *fill_holders(const struct mdt_md *md, const mdt_table_layout *t,
                                          unsigned c, unsigned lt, bool ascending)
{
    uint32_t limit = mdt__target_rows(md, lt) + 1;
    uint32_t n = md->lay.tables[lt].avail + 1;
    bool narrow = t->avail <= UINT16_MAX;
    size_t each = narrow ? sizeof(uint16_t) : sizeof(uint32_t);
    /* the floors first: 4-byte aligned, after the header */
    size_t floors = ascending ? 0 : ((size_t)t->avail + 1) * sizeof(uint32_t);
    struct mdt_run_index *ri = calloc(1, sizeof *ri + floors + (size_t)n * each);
    if (!ri)
        return NULL;
    ri->n = n;
    ri->ascending = ascending;
    uint8_t *holders = (uint8_t *)(ri + 1) + floors;
    if (narrow)
        ri->h16 = (uint16_t *)holders;
    else
        ri->h32 = (uint32_t *)holders;
    uint32_t most = 0; /* where the readable runs so far end: the next floor */
    if (!ascending) {
        ri->floor = (uint32_t *)(ri + 1);
        ri->nfloor = t->avail;
    }
    for (uint32_t r = 1; r <= t->avail; r++) {
        uint32_t start = raw(t, r, c), end = limit;
        if (!ascending)
            ri->floor[r] = most;
        if (start == 0 || start > limit)
            continue;
        if (r < t->rows) {
            if (r + 1 > t->avail)
                continue; /* the next row is unreadable, so is this run's end */
            end = raw(t, r + 1, c);
            if (end > limit || end < start)
                continue;
        }
        if (start < most)
            start = most;
        if (end > most)
            most = end;
        if (end > n)
            end = n;
        for (uint32_t p = start; p < end; p++) /* disjoint runs: each written once */
            set_holder(ri, p, r);
    }
    return ri;
}

/* Which of a table's LIST columns col is (0 or 1). */
static unsigned list_rank(const mdt_table_schema *s, unsigned col)
{
    unsigned k = 0;
    for (unsigned c = 0; c < col; c++)
        k += s->cols[c].kind == MDT_COLK_LIST;
    return k;
}

bool mdt__list_ascends(const struct mdt_md *md, unsigned table, unsigned col)
{
    const mdt_table_schema *s = mdt_table_schema_get(table);
    unsigned k = list_rank(s, col);
    struct mdt_table *tb = (struct mdt_table *)&md->tables[table];
    if (k >= 2) /* not a table's first two LIST columns: asked each time */
        return mdt__column_ascends(&md->lay.tables[table], col);
    uint8_t st = atomic_load_explicit(&tb->list_ascends[k], memory_order_relaxed);
    if (!st) {
        st = mdt__column_ascends(&md->lay.tables[table], col) ? 1 : 2;
        atomic_store_explicit(&tb->list_ascends[k], st, memory_order_relaxed);
    }
    return st == 1;
}

const struct mdt_run_index *mdt__run_index(const struct mdt_md *md, unsigned table, unsigned col)
{
    const mdt_table_schema *s = mdt_table_schema_get(table);
    const mdt_table_layout *t = &md->lay.tables[table];
    struct mdt_table *tb = (struct mdt_table *)&md->tables[table];
    unsigned k = list_rank(s, col);
    if (k >= 2 || s->cols[col].kind != MDT_COLK_LIST) {
        mdt__fail_simple(MDT_EINVAL, "%s.%s is not a list column", s->name, s->cols[col].name);
        return NULL;
    }
    struct mdt_run_index *ri = atomic_load_explicit(&tb->runs[k], memory_order_acquire);
    if (ri)
        return ri;
    if (!(ri = fill_holders(md, t, col, mdt__list_table(md, s->cols[col].target),
                            mdt__list_ascends(md, table, col)))) {
        mdt__fail_simple(MDT_ENOMEM, "out of memory indexing the runs of %s.%s", s->name,
                         s->cols[col].name);
        return NULL;
    }
    struct mdt_run_index *expected = NULL;
    if (!atomic_compare_exchange_strong_explicit(&tb->runs[k], &expected, ri, memory_order_acq_rel,
                                                 memory_order_acquire)) {
        free(ri); /* another thread was first: use its index */
        ri = expected;
    }
    return ri;
}

/* Row -> first Ptr row naming it, for rows 1..avail of the target. */
static struct mdt_ptr_index *fill_ptr(const struct mdt_md *md, unsigned ptr, unsigned target)
{
    const mdt_table_layout *p = &md->lay.tables[ptr];
    uint32_t n = md->lay.tables[target].avail + 1;
    struct mdt_ptr_index *pi = calloc(1, sizeof *pi + (size_t)n * sizeof pi->pos[0]);
    if (!pi)
        return NULL;
    pi->n = n;
    for (uint32_t r = p->avail; r >= 1; r--) { /* backwards: the first row wins */
        uint32_t rid = raw(p, r, 0);
        if (rid && rid < n)
            pi->pos[rid] = r;
    }
    return pi;
}

int mdt__list_position(const struct mdt_md *md, unsigned target, uint32_t rid, uint32_t *pos)
{
    unsigned ptr = mdt__ptr_table(target);
    if (!ptr || !md->lay.tables[ptr].rows) {
        *pos = rid;
        return 0;
    }
    struct mdt_table *tb = (struct mdt_table *)&md->tables[ptr];
    struct mdt_ptr_index *pi = atomic_load_explicit(&tb->ptr_pos, memory_order_acquire);
    if (!pi) {
        if (!(pi = fill_ptr(md, ptr, target)))
            return mdt__fail_simple(MDT_ENOMEM, "out of memory indexing %s",
                                    mdt_table_schema_get(ptr)->name);
        struct mdt_ptr_index *expected = NULL;
        if (!atomic_compare_exchange_strong_explicit(&tb->ptr_pos, &expected, pi,
                                                     memory_order_acq_rel, memory_order_acquire)) {
            free(pi);
            pi = expected;
        }
    }
    *pos = rid < pi->n ? pi->pos[rid] : 0;
    return 0;
}

void mdt__runs_free(struct mdt_table *tb)
{
    for (unsigned k = 0; k < 2; k++)
        free(atomic_load_explicit(&tb->runs[k], memory_order_acquire));
    free(atomic_load_explicit(&tb->ptr_pos, memory_order_acquire));
}
