/* Row cursors and typed cells (ECMA-335 II.22, II.24.2.6): raw values at
 * precomputed offsets, and checked decoding of heap indexes, simple and
 * coded indexes and range columns (with the Ptr tables of #- metadata).
 * The common paths of rows and heap cells are inline in <mdtools/tables.h>;
 * this file emits their external definitions and holds the slow paths,
 * which check everything again and report the located error. */
#include "config.h"

#include <talloc.h>

#include <mdtools/heaps.h>
#include <mdtools/tables.h>

#include "md/md_int.h"

static int cell_fail(const mdt_row *row, int col, int code, const char *fmt, uint32_t a, uint32_t b)
{
    const struct mdt_md *md = mdt__md(row->img);
    const mdt_table_schema *s = mdt_table_schema_get(row->table);
    const mdt_table_layout *t = &md->lay.tables[row->table];
    mdt_place pl = MDT_PLACE_NONE;
    pl.file = md->name;
    pl.region = s->name;
    pl.row = row->rid;
    if (col >= 0) {
        pl.column = s->cols[col].name;
        uint64_t in_stream = (uint64_t)md->tables[row->table].offset +
                             (uint64_t)(row->rid - 1) * t->row_size + t->off[col];
        pl.offset = in_stream;
        pl.file_offset = md->mdi.file_offset + md->tables_stream.offset + in_stream;
    }
    return mdt__fail(code, pl, fmt, a, b);
}

/* The external definitions of the inline functions of <mdtools/tables.h>
 * (C99 6.7.4): for bindings, and for callers whose compiler did not inline. */
extern inline uint32_t mdt_table_rows(const mdt_image *img, unsigned table);
extern inline int mdt_row_get(mdt_row *row, const mdt_image *img, unsigned table, uint32_t rid);
extern inline uint32_t mdt_row_raw(const mdt_row *row, unsigned col);
extern inline int mdt_row_string(const char **s, size_t *len, const mdt_row *row, unsigned col);
extern inline int mdt_row_blob(const uint8_t **data, uint32_t *len, const mdt_row *row,
                               unsigned col);
extern inline int mdt_row_guid(const uint8_t **guid, const mdt_row *row, unsigned col);

uint32_t mdt_table_rows_present(const mdt_image *img, unsigned table)
{
    return table < MDT_TABLE_MAX ? mdt__md(img)->lay.tables[table].avail : 0;
}

uint32_t mdt_table_row_size(const mdt_image *img, unsigned table)
{
    const struct mdt_md *md = mdt__md(img);
    return table < MDT_TABLE_MAX && md->lay.tables[table].rows ? md->lay.tables[table].row_size : 0;
}

unsigned mdt_column_width(const mdt_image *img, unsigned table, unsigned col)
{
    const struct mdt_md *md = mdt__md(img);
    if (table >= MDT_TABLE_MAX || col >= md->lay.tables[table].ncols)
        return 0;
    if (!md->lay.tables[table].rows) /* open lays out present tables only */
        return mdt__col_width(md, table, col);
    return md->lay.tables[table].width[col];
}

bool mdt_table_is_sorted(const mdt_image *img, unsigned table)
{
    const struct mdt_md *md = mdt__md(img);
    const mdt_table_schema *s = mdt_table_schema_get(table);
    if (!s || !md->lay.tables[table].rows)
        return false;
    return s->sort_col < 0 || mdt__table_sorted(md, table);
}

int mdt_row_get_slow(mdt_row *row, const mdt_image *img, unsigned table, uint32_t rid)
{
    const struct mdt_md *md = mdt__md(img);
    mdt_place pl = MDT_PLACE_NONE;
    const mdt_table_schema *s = mdt_table_schema_get(table);
    const mdt_table_layout *t;
    if (s && rid - 1u < md->lay.tables[table].avail)
        return mdt_row_get(row, img, table, rid);
    pl.file = md->name;
    pl.region = s ? s->name : "table";
    pl.row = rid;
    if (!s)
        return mdt__fail(MDT_EINVAL, pl, "no table with id 0x%02x", table);
    t = &md->lay.tables[table];
    if (rid == 0 || rid > t->rows)
        return mdt__fail(MDT_ENOTFOUND, pl, "no row %u (table has %u rows)", rid, t->rows);
    pl.offset = (uint64_t)md->tables[table].offset + (uint64_t)(rid - 1) * t->row_size;
    pl.file_offset = md->mdi.file_offset + md->tables_stream.offset + pl.offset;
    return mdt__fail(MDT_ETRUNC, pl, "row lies beyond the end of the tables stream");
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

int mdt_row_string_slow(const char **s, size_t *len, const mdt_row *row, unsigned col)
{
    const mdt_table_layout *t = row->lay;
    if (col >= t->ncols || t->kind[col] != MDT_COLK_STR)
        return kind_fail(row, col, MDT_COLK_STR);
    uint32_t idx = table_raw(t, row->p, col);
    if (heap_string_fast(mdt__md(row->img), idx, s, len) == 0)
        return 0;
    mdt_cellref ref = {row->table, row->rid, col};
    return mdt__heap_string_slow(mdt__md(row->img), idx, s, len, &ref);
}

int mdt_row_blob_slow(const uint8_t **data, uint32_t *len, const mdt_row *row, unsigned col)
{
    const mdt_table_layout *t = row->lay;
    if (col >= t->ncols || t->kind[col] != MDT_COLK_BLOB)
        return kind_fail(row, col, MDT_COLK_BLOB);
    uint32_t idx = table_raw(t, row->p, col);
    if (heap_blob_fast(mdt__md(row->img), idx, data, len) == 0)
        return 0;
    mdt_cellref ref = {row->table, row->rid, col};
    return mdt__heap_blob_slow(mdt__md(row->img), idx, data, len, &ref);
}

int mdt_row_guid_slow(const uint8_t **guid, const mdt_row *row, unsigned col)
{
    const mdt_table_layout *t = row->lay;
    if (col >= t->ncols || t->kind[col] != MDT_COLK_GUID)
        return kind_fail(row, col, MDT_COLK_GUID);
    mdt_cellref ref = {row->table, row->rid, col};
    return mdt__heap_guid(mdt__md(row->img), table_raw(t, row->p, col), guid, &ref);
}

/* Out of the loop of mdt_row_cells: a heap cell its fast path did not
 * take (a long blob prefix, a string near the heap's end, any GUID, any
 * damage). */
__attribute__((noinline)) static int cell_slow(const mdt_row *row, unsigned c, unsigned kind,
                                               uint32_t v, mdt_cell *o)
{
    const struct mdt_md *md = mdt__md(row->img);
    const uint8_t *d = NULL;
    const char *s = NULL;
    int bad = 0;
    o->len = 0;
    switch (kind) {
    case MDT_COLK_STR:
        if (v < md->lay.strings_fast) {
            s = (const char *)md->lay.strings + v;
            o->len = (uint32_t)strlen(s);
        } else {
            bad = mdt__cell_string_slow(md, row->table, row->rid, c, v, &s, &o->len);
        }
        d = (const uint8_t *)s;
        break;
    case MDT_COLK_BLOB:
        if (heap_blob_fast(md, v, &d, &o->len) != 0)
            bad = mdt__cell_blob_slow(md, row->table, row->rid, c, v, &d, &o->len);
        break;
    default:
        if (v - 1u < md->lay.guids)
            d = md->lay.guid + (size_t)(v - 1) * 16;
        else if (v != 0)
            bad = mdt__cell_guid_slow(md, row->table, row->rid, c, v, &d);
        o->len = d ? 16 : 0;
    }
    o->ptr = d;
    return bad;
}

/* Constants and indexes (most cells) are tested for first; the heaps'
 * bounds are read only for heap cells. restrict: the stores to cells[]
 * do not alias the layout, so nothing is reloaded per cell. */
int mdt_row_cells(mdt_cell *restrict cells, const mdt_row *row)
{
    const mdt_table_layout *restrict t = row->lay;
    const mdt_image_layout *restrict l = &mdt__md(row->img)->lay;
    const uint8_t *p = row->p;
    unsigned n = t->ncols;
    int bad = 0;
    for (unsigned c = 0; c < n; c++) {
        mdt_cell *o = &cells[c];
        unsigned kind = t->kind[c];
        uint32_t v = table_raw(t, p, c);
        o->value = v;
        if (kind - MDT_COLK_STR > MDT_COLK_BLOB - MDT_COLK_STR) {
            o->ptr = NULL; /* constants, table, list and coded indexes */
            o->len = 0;
        } else if (kind == MDT_COLK_STR && v < l->strings_fast - 15 &&
                   l->strings_fast >= 16) { /* 16 bytes readable: short_strlen */
            o->ptr = l->strings + v;
            o->len = (uint32_t)short_strlen((const char *)l->strings + v);
        } else if (kind == MDT_COLK_BLOB && v < l->blob_fast && l->blob[v] < 0x80) {
            o->ptr = l->blob + v + 1;
            o->len = l->blob[v];
        } else {
            bad += cell_slow(row, c, kind, v, o);
        }
    }
    return bad;
}

/* Rows of a table as far as indexes into it are concerned (a portable PDB
 * points into the type-system tables of its PE). */
uint32_t mdt__target_rows(const struct mdt_md *md, unsigned t)
{
    uint32_t a = md->lay.tables[t].rows, b = md->pdb_rows[t];
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

unsigned mdt__list_table(const struct mdt_md *md, unsigned target)
{
    unsigned ptr = mdt__ptr_table(target);
    return ptr && md->lay.tables[ptr].rows ? ptr : target;
}

int mdt_row_token(uint32_t *token, const mdt_row *row, unsigned col)
{
    const struct mdt_md *md = mdt__md(row->img);
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
                             ? mdt__target_rows(md, mdt__list_table(md, table)) + 1
                             : mdt__target_rows(md, table);
        if (v > limit)
            return cell_fail(row, (int)col, MDT_EBADIMAGE,
                             "index %u beyond the target table (%u rows)", v,
                             mdt__target_rows(md, table));
        rid = v;
        break;
    }
    case MDT_COLK_CODED: {
        const mdt_coded_schema *c = mdt_coded_schema_get(cs->target);
        uint32_t tag = v & ((1u << c->tag_bits) - 1);
        if (tag >= c->ntags || c->tables[tag] == MDT_NOTABLE)
            return cell_fail(row, (int)col, MDT_EBADIMAGE,
                             "coded index tag %u is not valid "
                             "(value 0x%x)",
                             tag, v);
        table = c->tables[tag];
        rid = v >> c->tag_bits;
        if (rid > mdt__target_rows(md, table))
            return cell_fail(row, (int)col, MDT_EBADIMAGE,
                             "coded index points at row %u beyond its table (%u rows)", rid,
                             mdt__target_rows(md, table));
        break;
    }
    default: return mdt__fail_simple(MDT_EINVAL, "column %s is not an index", cs->name);
    }
    *token = (uint32_t)table << 24 | rid;
    return 0;
}

/* A run of a column whose starts go down begins no lower than its row's
 * floor, where the readable runs of the rows before it end, so that no two
 * runs overlap and a walk over every row's run is bounded by the target's
 * rows (md/runs.c, which keeps the floors with the column's owner index). */
static int apply_floor(const mdt_row *row, unsigned col, uint32_t *start, uint32_t *end)
{
    const struct mdt_md *md = mdt__md(row->img);
    if (mdt__list_ascends(md, row->table, col))
        return 0; /* valid metadata: no floor, no index built for it */
    const struct mdt_run_index *ri = mdt__run_index(md, row->table, col);
    if (!ri)
        return mdt_error_last()->code; /* out of memory: the error recorded */
    if (ri->floor && row->rid <= ri->nfloor && *start < ri->floor[row->rid]) {
        *start = ri->floor[row->rid];
        if (*end < *start)
            *end = *start; /* every position of the run lies below: none is its own */
    }
    return 0;
}

int mdt_row_range(uint32_t *first, uint32_t *count, const mdt_row *row, unsigned col)
{
    const mdt_column_schema *cs = NULL;
    int e = check_kind(row, col, MDT_COLK_LIST, &cs);
    const mdt_image *img = row->img;
    const struct mdt_md *md = mdt__md(img);
    uint32_t start, end, limit;
    if (e)
        return e;
    limit = mdt__target_rows(md, mdt__list_table(md, cs->target)) + 1;
    start = mdt_row_raw(row, col);
    if (start == 0 || start > limit)
        return cell_fail(row, (int)col, MDT_EBADIMAGE, "list start %u outside 1..%u", start, limit);
    if (row->rid < md->lay.tables[row->table].rows) {
        mdt_row next;
        if ((e = mdt_row_get(&next, img, row->table, row->rid + 1)))
            return e;
        end = mdt_row_raw(&next, col);
        if (end > limit || end < start)
            return cell_fail(row, (int)col, MDT_EBADIMAGE,
                             "list ends at %u, before its start %u or past its table", end, start);
    } else {
        end = limit;
    }
    if (row->rid > 1 && (e = apply_floor(row, col, &start, &end)))
        return e;
    *first = start;
    *count = end - start;
    return 0;
}

__attribute__((cold, noinline)) static int no_table(unsigned table)
{
    return mdt__fail_simple(MDT_EINVAL, "mdt_range_item: no table with id 0x%02x", table);
}

int mdt_range_item(uint32_t *rid, const mdt_image *img, unsigned table, uint32_t pos)
{
    const struct mdt_md *md = mdt__md(img);
    if (table >= MDT_TABLE_MAX)
        return no_table(table);
    unsigned lt = mdt__list_table(md, table);
    if (lt == table) {
        /* A run's rows are in this image: a portable PDB's row counts of
         * its PE's tables (#Pdb) do not extend it, or a bogus TypeDef row
         * in a tiny PDB would own a run of 0xFFFFFF methods. */
        if (pos == 0 || pos > md->lay.tables[table].rows) {
            const mdt_table_schema *s = mdt_table_schema_get(table);
            return s ? mdt__fail_simple(MDT_ENOTFOUND, "position %u outside table %s", pos, s->name)
                     : no_table(table);
        }
        /* A row declared here but beyond the tables stream fails as
         * mdt_row_get does, so a loop over a run that a bogus row count
         * stretched to millions of rows stops at the first missing one. */
        if (pos > md->lay.tables[table].avail) {
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
    if ((e = mdt_row_token(&tok, &r, 0)))
        return e;
    *rid = tok & 0x00FFFFFFu;
    if (*rid == 0)
        return cell_fail(&r, 0, MDT_EBADIMAGE, "run position %u maps to row %u, the nil row", pos,
                         0);
    return 0;
}
