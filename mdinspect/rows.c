/* mdinspect: rows as several commands print them: one decoded cell of a
 * row (`dump`, `token`), every column kind of the schema (ECMA-335 II.22,
 * heaps II.24.2.3 - II.24.2.5, coded indexes II.24.2.6, list columns
 * through their Ptr tables), and the one item that stands for the rows a
 * damaged image declares but does not hold (every listing). */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>

#include <talloc.h>

#include <mdtools/errors.h>
#include <mdtools/heaps.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>

#include "cmd.h"

uint32_t mdi_rows_missing(mdi_state *st, const mdt_image *img, unsigned table)
{
    uint32_t rows = mdt_table_rows(img, table), have = mdt_table_rows_present(img, table);
    mdi_printer *p = st->out;
    mdt_row row;
    char msg[400], what[480];
    if (have >= rows)
        return 0;
    /* The first missing row's error, located, for all of them. */
    if (mdt_row_get(&row, img, table, have + 1) == 0)
        return 0; /* cannot be: present rows are the readable ones */
    snprintf(what, sizeof what, "%s (rows %" PRIu32 " to %" PRIu32 " of %" PRIu32 " declared)",
             mdi_cell_error(msg, sizeof msg), have + 1, rows, rows);
    mdt_error_clear();
    mdi_item_begin(p);
    mdi_token(p, "token", "token", MDT_TOKEN(table, have + 1));
    mdi_item_error(p, "error", what);
    mdi_item_end(p);
    return rows - have;
}

/* The table a list column's positions really index: its Ptr table when the
 * image has one (uncompressed #- metadata, II.24.2.6). */
static unsigned list_table(const mdt_image *img, unsigned target)
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
    return mdt_table_rows(img, ptr) ? ptr : target;
}

int mdi_print_cell(mdi_printer *p, const mdt_row *row, unsigned col)
{
    const mdt_column_schema *c = &mdt_table_schema_get(row->table)->cols[col];
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
        if (!(e = mdt_row_string(&s, &slen, row, col)))
            mdi_quoted(p, c->name, c->name, s, slen);
        break;
    case MDT_COLK_GUID:
        if (!(e = mdt_row_guid(&data, row, col)))
            mdi_guid(p, c->name, c->name, data);
        break;
    case MDT_COLK_BLOB:
        if (row->table == MDT_TABLE_Document && col == MDT_COL_Document_Name) {
            /* A portable PDB document: the path its name blob spells. */
            char *path = NULL;
            if (!(e = mdt_token_name(NULL, &path, row->img, MDT_TOKEN(MDT_TABLE_Document, row->rid),
                                     NULL)))
                mdi_str(p, c->name, c->name, path);
            talloc_free(path);
        } else if (!(e = mdt_row_blob(&data, &len, row, col))) {
            mdi_blob(p, c->name, c->name, raw, len);
        }
        break;
    case MDT_COLK_TAB:
    case MDT_COLK_CODED:
        if (!(e = mdt_row_token(&tok, row, col)))
            mdi_token(p, c->name, c->name, tok);
        break;
    case MDT_COLK_LIST: {
        unsigned t = list_table(row->img, c->target);
        if (!(e = mdt_row_range(&first, &count, row, col)))
            mdi_range(p, c->name, c->name, MDT_TOKEN(t, first), MDT_TOKEN(t, first + count));
        break;
    }
    default:
        snprintf(msg, sizeof msg, "unknown column kind %u", c->kind);
        mdi_error(p, c->name, c->name, msg);
        return -1;
    }
    if (e) {
        mdi_error(p, c->name, c->name, mdi_cell_error(msg, sizeof msg));
        return -1;
    }
    return 0;
}
