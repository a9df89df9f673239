/* `dump`: the rows of one metadata table (ECMA-335 II.22), every column
 * decoded by its kind in the schema: constants, heap indexes (II.24.2.3 -
 * II.24.2.5), simple and coded indexes (II.24.2.6) as tokens, and the runs
 * owned by list columns (FieldList, MethodList, ...). A cell that fails to
 * decode is shown as an error and the dump goes on. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>

#include <talloc.h>

#include <mdtools/errors.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>

#include "cmd.h"

/* The last library error in the few words a cell has room for: the cell's
 * table, row and column are already on screen. */
static const char *cell_error(char *buf, size_t len)
{
    const mdt_errinfo *e = mdt_last_error();
    if (e->file_offset != UINT64_MAX)
        snprintf(buf, len, "%s (file 0x%" PRIx64 ")", e->what[0] ? e->what : mdt_strerror(e->code),
                 e->file_offset);
    else
        snprintf(buf, len, "%s", e->what[0] ? e->what : mdt_strerror(e->code));
    return buf;
}

/* The table a list column's positions really index: its Ptr table when the
 * image has one (uncompressed #- metadata, II.24.2.6). */
static unsigned list_table(const mdt_image *img, unsigned target)
{
    unsigned ptr;
    switch (target) {
    case MDT_TABLE_Field:
        ptr = MDT_TABLE_FieldPtr;
        break;
    case MDT_TABLE_MethodDef:
        ptr = MDT_TABLE_MethodPtr;
        break;
    case MDT_TABLE_Param:
        ptr = MDT_TABLE_ParamPtr;
        break;
    case MDT_TABLE_Event:
        ptr = MDT_TABLE_EventPtr;
        break;
    case MDT_TABLE_Property:
        ptr = MDT_TABLE_PropertyPtr;
        break;
    default:
        return target;
    }
    return mdt_table_rows(img, ptr) ? ptr : target;
}

/* One cell; returns 0, or -1 when it could not be decoded. */
static int cell(mdi_printer *p, const mdt_row *row, const mdt_column_schema *c, unsigned col)
{
    char msg[400];
    uint32_t raw = mdt_row_raw(row, col), tok, first, count, len;
    const char *s;
    const uint8_t *data;
    size_t slen;
    int e = 0;

    switch (c->kind) {
    case MDT_COLK_U8:
    case MDT_COLK_U16:
    case MDT_COLK_U32:
        mdi_hex(p, c->name, c->name, raw, (int)mdt_column_width(row->img, row->table, col) * 2);
        return 0;
    case MDT_COLK_STR:
        if (!(e = mdt_row_string(row, col, &s, &slen)))
            mdi_quoted(p, c->name, c->name, s, slen);
        break;
    case MDT_COLK_GUID:
        if (!(e = mdt_row_guid(row, col, &data)))
            mdi_guid(p, c->name, c->name, data);
        break;
    case MDT_COLK_BLOB:
        if (!(e = mdt_row_blob(row, col, &data, &len)))
            mdi_blob(p, c->name, c->name, raw, len);
        break;
    case MDT_COLK_TAB:
    case MDT_COLK_CODED:
        if (!(e = mdt_row_token(row, col, &tok)))
            mdi_token(p, c->name, c->name, tok);
        break;
    case MDT_COLK_LIST: {
        unsigned t = list_table(row->img, c->target);
        if (!(e = mdt_row_range(row, col, &first, &count)))
            mdi_range(p, c->name, c->name, MDT_TOKEN(t, first), MDT_TOKEN(t, first + count));
        break;
    }
    default:
        snprintf(msg, sizeof msg, "unknown column kind %u", c->kind);
        mdi_error(p, c->name, c->name, msg);
        return -1;
    }
    if (e) {
        mdi_error(p, c->name, c->name, cell_error(msg, sizeof msg));
        return -1;
    }
    return 0;
}

int mdi_cmd_dump(mdi_state *st, size_t argc, const mdi_arg *argv)
{
    const mdt_image *img = mdi_image(st);
    mdi_printer *p = st->out;
    unsigned table = argv[0].value;
    const mdt_table_schema *s = mdt_table_schema_get(table);
    uint32_t rows = mdt_table_rows(img, table);
    uint32_t from = argc > 1 ? argv[1].value : 1;
    uint32_t to = argc > 2 ? argv[2].value : rows;
    unsigned long errors = 0;
    uint32_t bad_from = 0;
    char caption[128];

    if (argc > 2 && to < from) {
        mdi_report(st, "dump: FROM (%" PRIu32 ") is after TO (%" PRIu32 ")", from, to);
        return MDI_FAIL;
    }
    if (to > rows)
        to = rows;
    if (rows == 0)
        snprintf(caption, sizeof caption, "%s (0x%02x): no rows", s->name, table);
    else if (from == 1 && to == rows)
        snprintf(caption, sizeof caption, "%s (0x%02x): %" PRIu32 " row%s", s->name, table, rows,
                 rows == 1 ? "" : "s");
    else if (from > to)
        snprintf(caption, sizeof caption, "%s (0x%02x): %" PRIu32 " row%s, none from row %" PRIu32,
                 s->name, table, rows, rows == 1 ? "" : "s", from);
    else
        snprintf(caption, sizeof caption,
                 "%s (0x%02x): rows %" PRIu32 " to %" PRIu32 " of %" PRIu32, s->name, table, from,
                 to, rows);

    mdi_list_begin(p, NULL, caption, NULL, 0);
    for (uint32_t rid = from; rid <= to && rid != 0; rid++) {
        mdt_row row;
        mdi_item_begin(p);
        mdi_str(p, "table", NULL, s->name);
        mdi_uint(p, "row", "row", rid);
        mdi_token(p, "token", "token", MDT_TOKEN(table, rid));
        if (mdt_row_get(&row, img, table, rid) != 0) {
            /* The rest of the table lies beyond the tables stream: say so
             * once rather than once per row. */
            char msg[400];
            mdi_item_error(p, "error", cell_error(msg, sizeof msg));
            mdi_item_end(p);
            bad_from = rid;
            break;
        }
        for (unsigned c = 0; c < s->ncols; c++)
            if (cell(p, &row, &s->cols[c], c))
                errors++;
        mdi_item_end(p);
    }
    mdi_list_end(p);

    if (errors)
        mdi_report(st, "dump: %s: %s: %lu cell%s could not be decoded", mdi_image_path(st), s->name,
                   errors, errors == 1 ? "" : "s");
    if (bad_from && bad_from == to)
        mdi_report(st, "dump: %s: %s: row %" PRIu32 " could not be read", mdi_image_path(st),
                   s->name, bad_from);
    else if (bad_from)
        mdi_report(st, "dump: %s: %s: rows %" PRIu32 " to %" PRIu32 " could not be read",
                   mdi_image_path(st), s->name, bad_from, to);
    return errors || bad_from ? MDI_FAIL : MDI_OK;
}
