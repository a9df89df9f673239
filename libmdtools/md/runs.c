/* Indexes of list runs, built once at open, so that the owner of a Field,
 * MethodDef, Param, Property or Event row is a lookup and never a scan.
 *
 * A LIST column (ECMA-335 II.22: TypeDef.FieldList, MethodDef.ParamList,
 * ...) gives the first position of a run, which ends where the next row's
 * run starts. In valid metadata the starts never decrease and a binary
 * search finds the run holding a position (owner.c). Damaged metadata whose
 * starts go down has overlapping and unreadable runs; the owner is then the
 * first row, in row order, whose readable run holds the position (what a
 * scan would answer), kept here in a position index filled in one pass. Each
 * position is written once: a "next unfilled position" forest with path
 * compression skips the filled ones, so overlapping runs cost no more than
 * disjoint ones. Before this index, each such query scanned the table, and
 * naming every member of a damaged image took rows^2 steps.
 *
 * Uncompressed (#-) metadata may send positions through Ptr tables
 * (FieldPtr, MethodPtr, ...): the inverse, row -> first Ptr row naming it,
 * is indexed here too (it was a scan of the Ptr table per query).
 *
 * Arrays are sized by the rows whose bytes are present (`avail`), never by
 * declared row counts, so a tiny file cannot make us allocate 64 MiB. They
 * exist only for damaged columns and Ptr tables, 4 bytes a position, owned
 * by the image (talloc) and immutable after open, so readers on several
 * threads need no lock. */
#include "config.h"

#include <talloc.h>

#include <mdtools/errors.h>
#include <mdtools/tables.h>

#include "md/md_int.h"
#include "util/error.h"

/* Row r (from 1, r <= avail) of t, column c. */
static uint32_t raw(const struct mdt_table *t, uint32_t r, unsigned c)
{
    const uint8_t *p = t->base + (size_t)(r - 1) * t->row_size + t->col_off[c];
    return t->col_w[c] == 2 ? le16(p) : le32(p);
}

/* The first unfilled position at or after p (next[n] = n never fills). */
static uint32_t unfilled(uint32_t *next, uint32_t p)
{
    uint32_t root = p;
    while (next[root] != root)
        root = next[root];
    while (next[p] != root) {
        uint32_t q = next[p];
        next[p] = root;
        p = q;
    }
    return root;
}

/* Positions 1..n-1 of column c of table `table`, whose runs index list
 * table lt: each gets the first row whose run holds it. A run is readable
 * under the rules of mdt_row_range (cells.c): its start in 1..limit, and
 * its end (the next row's start, or limit after the last row) between its
 * start and limit. */
static int fill_holders(struct mdt_image *img, struct mdt_run_index *ri, const struct mdt_table *t,
                        unsigned c, unsigned lt)
{
    uint32_t limit = mdt__target_rows(img, lt) + 1;
    uint32_t n = img->tables[lt].avail + 1;
    uint32_t *h = talloc_zero_array(img, uint32_t, n);
    uint32_t *next = talloc_array(NULL, uint32_t, (size_t)n + 1);
    if (!h || !next) {
        talloc_free(h);
        talloc_free(next);
        return mdt__fail_simple(MDT_ENOMEM, "out of memory indexing list runs");
    }
    for (uint32_t p = 0; p <= n; p++)
        next[p] = p;
    for (uint32_t r = 1; r <= t->avail; r++) {
        uint32_t start = raw(t, r, c), end = limit;
        if (start == 0 || start > limit)
            continue;
        if (r < t->rows) {
            if (r + 1 > t->avail)
                continue; /* the next row is unreadable, so is this run's end */
            end = raw(t, r + 1, c);
            if (end > limit || end < start)
                continue;
        }
        if (end > n)
            end = n;
        for (uint32_t p = start < n ? unfilled(next, start) : n; p < end; p = unfilled(next, p)) {
            h[p] = r;
            next[p] = p + 1;
        }
    }
    talloc_free(next);
    ri->holder = h;
    ri->n = n;
    ri->col = (uint8_t)c;
    return 0;
}

/* Row -> first Ptr row naming it, for rows 1..avail of the target. */
static int fill_ptr(struct mdt_image *img, unsigned ptr, unsigned target)
{
    struct mdt_table *p = &img->tables[ptr];
    uint32_t n = img->tables[target].avail + 1;
    uint32_t *pos = talloc_zero_array(img, uint32_t, n);
    if (!pos)
        return mdt__fail_simple(MDT_ENOMEM, "out of memory indexing %s",
                                mdt_table_schema_get(ptr)->name);
    for (uint32_t r = p->avail; r >= 1; r--) { /* backwards: the first row wins */
        uint32_t rid = raw(p, r, 0);
        if (rid && rid < n)
            pos[rid] = r;
    }
    p->ptr_pos = pos;
    p->ptr_n = n;
    return 0;
}

int mdt__runs_index(struct mdt_image *img)
{
    static const unsigned targets[] = {MDT_TABLE_Field, MDT_TABLE_MethodDef, MDT_TABLE_Param,
                                       MDT_TABLE_Event, MDT_TABLE_Property};
    int e;
    for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++) {
        unsigned ptr = mdt__ptr_table(targets[i]);
        if (img->tables[ptr].avail && (e = fill_ptr(img, ptr, targets[i])))
            return e;
    }
    for (unsigned t = 0; t < MDT_TABLE_MAX; t++) {
        const mdt_table_schema *s = mdt_table_schema_get(t);
        struct mdt_table *tb = &img->tables[t];
        unsigned k = 0;
        if (!s || !tb->avail)
            continue;
        for (unsigned c = 0; c < s->ncols && k < 2; c++) {
            if (s->cols[c].kind != MDT_COLK_LIST || mdt__column_ascends(tb, c))
                continue;
            mdt__warn(img, "table %s: the starts of column %s go down; a member's owner is the "
                           "first row whose readable run holds it",
                      s->name, s->cols[c].name);
            if ((e = fill_holders(img, &tb->runs[k++], tb, c,
                                  mdt__list_table(img, s->cols[c].target))))
                return e;
        }
    }
    return 0;
}

int mdt__run_holder_indexed(const struct mdt_image *img, unsigned table, unsigned col,
                            uint32_t pos, uint32_t *holder)
{
    for (unsigned k = 0; k < 2; k++) {
        const struct mdt_run_index *ri = &img->tables[table].runs[k];
        if (ri->holder && ri->col == col) {
            *holder = pos < ri->n ? ri->holder[pos] : 0;
            return 1;
        }
    }
    return 0;
}

uint32_t mdt__list_position(const struct mdt_image *img, unsigned target, uint32_t rid)
{
    unsigned ptr = mdt__ptr_table(target);
    const struct mdt_table *p = ptr ? &img->tables[ptr] : NULL;
    if (!p || !p->rows)
        return rid;
    return p->ptr_pos && rid < p->ptr_n ? p->ptr_pos[rid] : 0;
}
