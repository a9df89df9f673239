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

int mdt_row_get(mdt_row *row, const mdt_image *img, unsigned table, uint32_t rid)
{
    const struct mdt_table *t;
    mdt_place pl = MDT_PLACE_NONE;
    const mdt_table_schema *s = mdt_table_schema_get(table);
    pl.img = img;
    pl.region = s ? s->name : "table";
    pl.row = rid;
    if (!s)
        return mdt__fail(MDT_EINVAL, pl, "no table with id 0x%02x", table);
    t = &img->tables[table];
    if (rid == 0 || rid > t->rows)
        return mdt__fail(MDT_ENOTFOUND, pl, "no row %u (table has %u rows)", rid, t->rows);
    if (rid > t->avail) {
        pl.offset = (uint64_t)t->offset + (uint64_t)(rid - 1) * t->row_size;
        pl.file_offset = img->mdi.file_offset + img->tables_stream.offset + pl.offset;
        return mdt__fail(MDT_ETRUNC, pl, "row lies beyond the end of the tables stream");
    }
    row->img = img;
    row->table = (uint8_t)table;
    row->rid = rid;
    row->p = t->base + (size_t)(rid - 1) * t->row_size;
    return 0;
}

uint32_t mdt_row_raw(const mdt_row *row, unsigned col)
{
    const struct mdt_table *t = &row->img->tables[row->table];
    const uint8_t *p = row->p + t->col_off[col];
    switch (t->col_w[col]) {
    case 1: return p[0];
    case 2: return le16(p);
    default: return le32(p);
    }
}

static int check_kind(const mdt_row *row, unsigned col, int kind, const mdt_column_schema **cs)
{
    const mdt_table_schema *s = mdt_table_schema_get(row->table);
    if (col >= s->ncols)
        return mdt__fail_simple(MDT_EINVAL, "table %s has no column %u", s->name, col);
    *cs = &s->cols[col];
    if (kind >= 0 && (*cs)->kind != kind)
        return mdt__fail_simple(MDT_EINVAL, "column %s.%s has another kind", s->name,
                                (*cs)->name);
    return 0;
}

int mdt_row_string(const mdt_row *row, unsigned col, const char **s, size_t *len)
{
    const mdt_column_schema *cs = NULL;
    int e = check_kind(row, col, MDT_COLK_STR, &cs);
    mdt_cellref ref = {row->table, row->rid, col};
    return e ? e : mdt__heap_string(row->img, mdt_row_raw(row, col), s, len, &ref);
}

int mdt_row_blob(const mdt_row *row, unsigned col, const uint8_t **data, uint32_t *len)
{
    const mdt_column_schema *cs = NULL;
    int e = check_kind(row, col, MDT_COLK_BLOB, &cs);
    mdt_cellref ref = {row->table, row->rid, col};
    return e ? e : mdt__heap_blob(row->img, mdt_row_raw(row, col), data, len, &ref);
}

int mdt_row_guid(const mdt_row *row, unsigned col, const uint8_t **guid)
{
    const mdt_column_schema *cs = NULL;
    int e = check_kind(row, col, MDT_COLK_GUID, &cs);
    mdt_cellref ref = {row->table, row->rid, col};
    return e ? e : mdt__heap_guid(row->img, mdt_row_raw(row, col), guid, &ref);
}

/* Rows of a table as far as indexes into it are concerned (a portable PDB
 * points into the type-system tables of its PE). */
static uint32_t target_rows(const struct mdt_image *img, unsigned t)
{
    uint32_t a = img->tables[t].rows, b = img->pdb_rows[t];
    return a > b ? a : b;
}

/* The table a LIST column really indexes: its Ptr table when present. */
static unsigned list_table(const struct mdt_image *img, unsigned target)
{
    unsigned ptr;
    switch (target) {
    case MDT_TABLE_Field: ptr = MDT_TABLE_FieldPtr; break;
    case MDT_TABLE_MethodDef: ptr = MDT_TABLE_MethodPtr; break;
    case MDT_TABLE_Param: ptr = MDT_TABLE_ParamPtr; break;
    case MDT_TABLE_Event: ptr = MDT_TABLE_EventPtr; break;
    case MDT_TABLE_Property: ptr = MDT_TABLE_PropertyPtr; break;
    default: return target;
    }
    return img->tables[ptr].rows ? ptr : target;
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
                             ? target_rows(row->img, list_table(row->img, table)) + 1
                             : target_rows(row->img, table);
        if (v > limit)
            return cell_fail(row, (int)col, MDT_EBADIMAGE,
                             "index %u beyond the target table (%u rows)", v,
                             target_rows(row->img, table));
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
        if (rid > target_rows(row->img, table))
            return cell_fail(row, (int)col, MDT_EBADIMAGE,
                             "coded index points at row %u beyond its table (%u rows)", rid,
                             target_rows(row->img, table));
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
    limit = target_rows(img, list_table(img, cs->target)) + 1;
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
    unsigned lt = list_table(img, table);
    if (lt == table) {
        if (pos == 0 || pos > target_rows(img, table))
            return mdt__fail_simple(MDT_ENOTFOUND, "position %u outside table %s", pos,
                                    mdt_table_schema_get(table)->name);
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
        return mdt__fail_simple(MDT_EBADIMAGE, "%s row %u points at row 0",
                                mdt_table_schema_get(lt)->name, pos);
    return 0;
}
