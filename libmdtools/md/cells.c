/* Row cursors and typed cells (ECMA-335 II.22, II.24.2.6): raw values at
 * precomputed offsets, and checked decoding of heap indexes, simple and
 * coded indexes and range columns (with the Ptr tables of #- metadata). */
#include "config.h"

#include <talloc.h>

#include <mdtools/heaps.h>
#include <mdtools/tables.h>

#include "image/image_int.h"
#include "md/md_int.h"

static int cell_fail(const mdt_row *row, int col, int code, const char *fmt, uint32_t a,
                     uint32_t b)
{
    const struct mdt_image *img = row->img;
    const mdt_table_schema *s = mdt_table_schema_get(row->table);
    const struct mdt_table *t = &img->tables[row->table];
    mdt_place pl = MDT_PLACE_NONE;
    pl.img = img;
    pl.region = s->name;
    pl.row = row->rid;
    if (col >= 0) {
        pl.column = s->cols[col].name;
        uint64_t in_stream = (uint64_t)t->offset + (uint64_t)(row->rid - 1) * t->row_size +
                             t->col_off[col];
        pl.offset = in_stream;
        pl.file_offset = img->mdi.file_offset + img->tables_stream.offset + in_stream;
    }
    return mdt__fail(code, pl, fmt, a, b);
}

uint32_t mdt_table_rows(const mdt_image *img, unsigned table)
{
    return table < MDT_TABLE_MAX ? img->tables[table].rows : 0;
}

uint32_t mdt_table_rows_present(const mdt_image *img, unsigned table)
{
    return table < MDT_TABLE_MAX ? img->tables[table].avail : 0;
}

uint32_t mdt_table_row_size(const mdt_image *img, unsigned table)
{
    return table < MDT_TABLE_MAX && img->tables[table].rows ? img->tables[table].row_size : 0;
}

unsigned mdt_column_width(const mdt_image *img, unsigned table, unsigned col)
{
    if (table >= MDT_TABLE_MAX || col >= img->tables[table].ncols)
        return 0;
    return img->tables[table].col_w[col];
}

bool mdt_table_is_sorted(const mdt_image *img, unsigned table)
{
    const mdt_table_schema *s = mdt_table_schema_get(table);
    if (!s || !img->tables[table].rows)
        return false;
    return s->sort_col < 0 || img->tables[table].sorted;
}

/* Why mdt_row_get failed, with the place. Kept out of the fast path. */
__attribute__((cold, noinline)) static int row_get_fail(const mdt_image *img, unsigned table,
                                                        uint32_t rid)
{
    mdt_place pl = MDT_PLACE_NONE;
    const mdt_table_schema *s = mdt_table_schema_get(table);
    const struct mdt_table *t;
    pl.img = img;
    pl.region = s ? s->name : "table";
    pl.row = rid;
    if (!s)
        return mdt__fail(MDT_EINVAL, pl, "no table with id 0x%02x", table);
    t = &img->tables[table];
    if (rid == 0 || rid > t->rows)
        return mdt__fail(MDT_ENOTFOUND, pl, "no row %u (table has %u rows)", rid, t->rows);
    pl.offset = (uint64_t)t->offset + (uint64_t)(rid - 1) * t->row_size;
    pl.file_offset = img->mdi.file_offset + img->tables_stream.offset + pl.offset;
    return mdt__fail(MDT_ETRUNC, pl, "row lies beyond the end of the tables stream");
}

int mdt_row_get(mdt_row *row, const mdt_image *img, unsigned table, uint32_t rid)
{
    if (table < MDT_TABLE_MAX) {
        const struct mdt_table *t = &img->tables[table];
        if (rid - 1u < t->avail) { /* rid 0 wraps and fails */
            row->img = img;
            row->table = (uint8_t)table;
            row->rid = rid;
            row->p = t->base + (size_t)(rid - 1) * t->row_size;
            return 0;
        }
    }
    return row_get_fail(img, table, rid);
}

uint32_t mdt_row_raw(const mdt_row *row, unsigned col)
{
    return table_raw(&row->img->tables[row->table], row->p, col);
}

__attribute__((cold, noinline)) static int kind_fail(const mdt_row *row, unsigned col, int kind)
{
    const mdt_table_schema *s = mdt_table_schema_get(row->table);
    if (col >= s->ncols)
        return mdt__fail_simple(MDT_EINVAL, "table %s has no column %u", s->name, col);
    return mdt__fail_simple(MDT_EINVAL, "column %s.%s is not of kind %d", s->name,
                            s->cols[col].name, kind);
}

static int check_kind(const mdt_row *row, unsigned col, int kind, const mdt_column_schema **cs)
{
    const mdt_table_schema *s = mdt_table_schema_get(row->table);
    if (col >= s->ncols || (kind >= 0 && s->cols[col].kind != kind))
        return kind_fail(row, col, kind);
    *cs = &s->cols[col];
    return 0;
}

int mdt_row_string(const mdt_row *row, unsigned col, const char **s, size_t *len)
{
    const struct mdt_table *t = &row->img->tables[row->table];
    if (col >= t->ncols || t->col_kind[col] != MDT_COLK_STR)
        return kind_fail(row, col, MDT_COLK_STR);
    uint32_t idx = table_raw(t, row->p, col);
    if (heap_string_fast(row->img, idx, s, len) == 0)
        return 0;
    mdt_cellref ref = {row->table, row->rid, col};
    return mdt__heap_string_slow(row->img, idx, s, len, &ref);
}

int mdt_row_blob(const mdt_row *row, unsigned col, const uint8_t **data, uint32_t *len)
{
    const struct mdt_table *t = &row->img->tables[row->table];
    if (col >= t->ncols || t->col_kind[col] != MDT_COLK_BLOB)
        return kind_fail(row, col, MDT_COLK_BLOB);
    uint32_t idx = table_raw(t, row->p, col);
    if (heap_blob_fast(row->img, idx, data, len) == 0)
        return 0;
    mdt_cellref ref = {row->table, row->rid, col};
    return mdt__heap_blob_slow(row->img, idx, data, len, &ref);
}

int mdt_row_guid(const mdt_row *row, unsigned col, const uint8_t **guid)
{
    const struct mdt_table *t = &row->img->tables[row->table];
    if (col >= t->ncols || t->col_kind[col] != MDT_COLK_GUID)
        return kind_fail(row, col, MDT_COLK_GUID);
    uint32_t idx = table_raw(t, row->p, col);
    const struct mdt_heap_view *h = &row->img->guid;
    if (idx == 0) {
        *guid = NULL;
        return 0;
    }
    if (idx <= h->size / 16) {
        *guid = h->base + (size_t)(idx - 1) * 16;
        return 0;
    }
    mdt_cellref ref = {row->table, row->rid, col};
    return mdt__heap_guid(row->img, idx, guid, &ref);
}

/* Rows of a table as far as indexes into it are concerned (a portable PDB
 * points into the type-system tables of its PE). */
uint32_t mdt__target_rows(const struct mdt_image *img, unsigned t)
{
    uint32_t a = img->tables[t].rows, b = img->pdb_rows[t];
    return a > b ? a : b;
}

unsigned mdt__ptr_table(unsigned target)
{
    switch (target) {
    case MDT_TABLE_Field: return MDT_TABLE_FieldPtr;
    case MDT_TABLE_MethodDef: return MDT_TABLE_MethodPtr;
    case MDT_TABLE_Param: return MDT_TABLE_ParamPtr;
    case MDT_TABLE_Event: return MDT_TABLE_EventPtr;
    case MDT_TABLE_Property: return MDT_TABLE_PropertyPtr;
    default: return 0;
    }
}

unsigned mdt__list_table(const struct mdt_image *img, unsigned target)
{
    unsigned ptr = mdt__ptr_table(target);
    return ptr && img->tables[ptr].rows ? ptr : target;
}

int mdt_row_token(const mdt_row *row, unsigned col, uint32_t *token)
{
    const mdt_column_schema *cs = NULL;
    int e = check_kind(row, col, -1, &cs);
    uint32_t v, rid;
    unsigned table;
    if (e)
        return e;
    v = mdt_row_raw(row, col);
    switch (cs->kind) {
    case MDT_COLK_TAB:
    case MDT_COLK_LIST: {
        table = cs->target;
        uint32_t limit = cs->kind == MDT_COLK_LIST
                             ? mdt__target_rows(row->img, mdt__list_table(row->img, table)) + 1
                             : mdt__target_rows(row->img, table);
        if (v > limit)
            return cell_fail(row, (int)col, MDT_EBADIMAGE,
                             "index %u beyond the target table (%u rows)", v,
                             mdt__target_rows(row->img, table));
        rid = v;
        break;
    }
    case MDT_COLK_CODED: {
        const mdt_coded_schema *c = mdt_coded_schema_get(cs->target);
        uint32_t tag = v & ((1u << c->tag_bits) - 1);
        if (tag >= c->ntags || c->tables[tag] == MDT_NOTABLE)
            return cell_fail(row, (int)col, MDT_EBADIMAGE, "coded index tag %u is not valid "
                             "(value 0x%x)", tag, v);
        table = c->tables[tag];
        rid = v >> c->tag_bits;
        if (rid > mdt__target_rows(row->img, table))
            return cell_fail(row, (int)col, MDT_EBADIMAGE,
                             "coded index points at row %u beyond its table (%u rows)", rid,
                             mdt__target_rows(row->img, table));
        break;
    }
    default:
        return mdt__fail_simple(MDT_EINVAL, "column %s is not an index", cs->name);
    }
    *token = (uint32_t)table << 24 | rid;
    return 0;
}

int mdt_row_range(const mdt_row *row, unsigned col, uint32_t *first, uint32_t *count)
{
    const mdt_column_schema *cs = NULL;
    int e = check_kind(row, col, MDT_COLK_LIST, &cs);
    const struct mdt_image *img = row->img;
    uint32_t start, end, limit;
    if (e)
        return e;
    limit = mdt__target_rows(img, mdt__list_table(img, cs->target)) + 1;
    start = mdt_row_raw(row, col);
    if (start == 0 || start > limit)
        return cell_fail(row, (int)col, MDT_EBADIMAGE,
                         "list start %u outside 1..%u", start, limit);
    if (row->rid < img->tables[row->table].rows) {
        mdt_row next;
        if ((e = mdt_row_get(&next, img, row->table, row->rid + 1)))
            return e;
        end = mdt_row_raw(&next, col);
        if (end > limit || end < start)
            return cell_fail(row, (int)col, MDT_EBADIMAGE,
                             "list ends at %u, before its start %u or past its table", end,
                             start);
    } else {
        end = limit;
    }
    *first = start;
    *count = end - start;
    return 0;
}

int mdt_range_item(const mdt_image *img, unsigned table, uint32_t pos, uint32_t *rid)
{
    unsigned lt = mdt__list_table(img, table);
    if (lt == table) {
        /* A run's rows are in this image: a portable PDB's row counts of
         * its PE's tables (#Pdb) do not extend it, or a bogus TypeDef row
         * in a tiny PDB would own a run of 0xFFFFFF methods. */
        if (pos == 0 || pos > img->tables[table].rows)
            return mdt__fail_simple(MDT_ENOTFOUND, "position %u outside table %s", pos,
                                    mdt_table_schema_get(table)->name);
        /* A row declared here but beyond the tables stream fails as
         * mdt_row_get does, so a loop over a run that a bogus row count
         * stretched to millions of rows stops at the first missing one. */
        if (pos > img->tables[table].avail) {
            mdt_row r;
            return mdt_row_get(&r, img, table, pos);
        }
        *rid = pos;
        return 0;
    }
    mdt_row r;
    int e = mdt_row_get(&r, img, lt, pos);
    if (e)
        return e;
    uint32_t tok;
    if ((e = mdt_row_token(&r, 0, &tok)))
        return e;
    *rid = tok & 0x00FFFFFFu;
    if (*rid == 0)
        return cell_fail(&r, 0, MDT_EBADIMAGE, "run position %u maps to row %u, the nil row", pos,
                         0);
    return 0;
}
