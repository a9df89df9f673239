/* Lookups by key in tables ECMA-335 II.22 requires sorted (ClassLayout,
 * Constant, CustomAttribute, ...): binary search when the rows really are
 * sorted (checked on the table's first lookup, lazy.c), a linear scan
 * otherwise, so an unsorted table gives the same answers, only slower. */
#include "config.h"

#include <mdtools/tables.h>

#include "md/md_int.h"

static uint32_t key_at(const mdt_table_layout *t, unsigned col, uint32_t i)
{
    const uint8_t *p = t->base + (size_t)i * t->row_size + t->off[col];
    switch (t->width[col]) {
    case 1: return p[0];
    case 2: return le16(p);
    default: return le32(p);
    }
}

int mdt_find_init(mdt_find *f, const mdt_image *img, unsigned table, unsigned col, uint32_t key)
{
    const mdt_table_schema *s = mdt_table_schema_get(table);
    const mdt_table_layout *t;
    if (!s || col >= s->ncols)
        return mdt__fail_simple(MDT_EINVAL, "mdt_find_init: bad table or column");
    t = &mdt__md(img)->lay.tables[table];
    f->img = img;
    f->table = (uint8_t)table;
    f->col = (uint8_t)col;
    f->key = key;
    f->scan = !(s->sort_col == (int)col && mdt__table_sorted(mdt__md(img), table));
    if (f->scan) {
        f->next = 0;
        f->end = t->avail;
        return 0;
    }
    uint32_t lo = 0, hi = t->avail;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (key_at(t, col, mid) < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    f->next = lo;
    f->end = t->avail;
    return 0;
}

int mdt_find_next(uint32_t *rid, mdt_find *f)
{
    const mdt_table_layout *t = &mdt__md(f->img)->lay.tables[f->table];
    while (f->next < f->end) {
        uint32_t i = f->next++;
        uint32_t k = key_at(t, f->col, i);
        if (k == f->key) {
            *rid = i + 1;
            return 0;
        }
        if (!f->scan) { /* sorted: past the run */
            f->next = f->end;
            break;
        }
    }
    return MDT_ITEROVER;
}
