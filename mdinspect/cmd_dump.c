/* `dump`: the rows of one metadata table (ECMA-335 II.22), every column
 * decoded by its kind in the schema: constants, heap indexes (II.24.2.3 -
 * II.24.2.5), simple and coded indexes (II.24.2.6) as tokens, and the runs
 * owned by list columns (FieldList, MethodList, ...). A cell that fails to
 * decode is shown as an error and the dump goes on. `where COL=VALUE`
 * keeps the rows whose cell equals VALUE (for a list column: whose run
 * holds the token). */
#include "config.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <talloc.h>

#include <mdtools/errors.h>
#include <mdtools/heaps.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>

#include "cmd.h"

enum { A_TABLE, A_FROM, A_TO, A_WHERE };

/* ---- where COL=VALUE ---- */

struct where {
    unsigned col;
    const mdt_column_schema *c;
    const char *text; /* VALUE as given */
    uint32_t num;     /* number, offset or token */
    bool nil;         /* GUID: nil */
};

/* A GUID as it prints: xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx (any case). */
static bool is_guid(const char *s)
{
    if (strlen(s) != 36)
        return false;
    for (int i = 0; i < 36; i++) {
        bool dash = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash ? s[i] != '-' : !isxdigit((unsigned char)s[i]))
            return false;
    }
    return true;
}

static int where_parse(mdi_state *st, const mdt_table_schema *s, const mdi_arg *a, struct where *w)
{
    const char *v = strchr(a->text, '=') + 1;
    memset(w, 0, sizeof *w);
    w->col = a->value;
    w->c = &s->cols[w->col];
    w->text = v;
    switch (w->c->kind) {
    case MDT_COLK_STR: return 0;
    case MDT_COLK_GUID:
        if (strcmp(v, "nil") == 0) {
            w->nil = true;
            return 0;
        }
        if (is_guid(v))
            return 0;
        return mdi_fail(st, "where: %s: '%s' is not a GUID (or nil)", w->c->name, v);
    case MDT_COLK_TAB:
    case MDT_COLK_LIST:
        if (!mdi_parse_number(v, UINT32_MAX, &w->num))
            return mdi_fail(st, "where: %s: '%s' is not a token or row number", w->c->name, v);
        if (w->num <= 0xFFFFFF)
            w->num = MDT_TOKEN(w->c->target, w->num);
        else if (MDT_TOKEN_TABLE(w->num) != w->c->target)
            return mdi_fail(st, "where: %s: %s is not a %s token", w->c->name, v,
                            mdt_table_schema_get(w->c->target)->name);
        return 0;
    case MDT_COLK_CODED:
        if (!mdi_parse_number(v, UINT32_MAX, &w->num) || (w->num <= 0xFFFFFF && w->num != 0))
            return mdi_fail(st, "where: %s: '%s' is not a token", w->c->name, v);
        return 0;
    default:
        if (!mdi_parse_number(v, UINT32_MAX, &w->num))
            return mdi_fail(st, "where: %s: '%s' is not a number", w->c->name, v);
        return 0;
    }
}

/* Does the row match? -1 when its cell could not be decoded. */
static int where_match(const mdt_row *row, const struct where *w)
{
    const char *s;
    size_t len;
    const uint8_t *g;
    uint32_t tok, first, count;
    char buf[37];
    switch (w->c->kind) {
    case MDT_COLK_STR:
        if (mdt_row_string(&s, &len, row, w->col))
            return -1;
        return len == strlen(w->text) && memcmp(s, w->text, len) == 0;
    case MDT_COLK_GUID:
        if (mdt_row_guid(&g, row, w->col))
            return -1;
        if (!g)
            return w->nil;
        return !w->nil && strcasecmp(mdt_heap_guid_format(buf, g), w->text) == 0;
    case MDT_COLK_TAB:
    case MDT_COLK_CODED:
        if (mdt_row_token(&tok, row, w->col))
            return -1;
        return tok == w->num;
    case MDT_COLK_LIST:
        if (mdt_row_range(&first, &count, row, w->col))
            return -1;
        return MDT_TOKEN_RID(w->num) >= first && MDT_TOKEN_RID(w->num) - first < count;
    default: return mdt_row_raw(row, w->col) == w->num;
    }
}

static int run(mdi_state *st, size_t argc, const mdi_arg *argv)
{
    const mdt_image *img = mdi_image(st);
    mdi_printer *p = st->out;
    const mdi_arg *afrom = mdi_arg_of(argc, argv, A_FROM), *ato = mdi_arg_of(argc, argv, A_TO);
    const mdi_arg *awhere = mdi_arg_of(argc, argv, A_WHERE);
    unsigned table = argv[0].value;
    const mdt_table_schema *s = mdt_table_schema_get(table);
    uint32_t rows = mdt_table_rows(img, table);
    uint32_t from = afrom ? afrom->value : 1;
    uint32_t to = ato ? ato->value : rows;
    uint32_t *pick = NULL, npick = 0;
    unsigned long errors = 0;
    uint32_t bad_from = 0;
    struct where w;
    char caption[256];

    if (ato && to < from)
        return mdi_fail(st, "FROM (%" PRIu32 ") is after TO (%" PRIu32 ")", from, to);
    /* No such row: the same failure as `token` gives for it. */
    if (afrom && from > rows)
        return mdi_fail(st, "%s has %" PRIu32 " row%s, no row %" PRIu32, s->name, rows,
                        rows == 1 ? "" : "s", from);
    if (to > rows)
        to = rows;
    if (awhere) {
        if (where_parse(st, s, awhere, &w))
            return MDI_FAIL;
        pick = talloc_array(st, uint32_t, from <= to ? to - from + 1 : 1);
        if (!pick)
            return mdi_fail(st, "out of memory");
        for (uint32_t rid = from; rid <= to && rid != 0 && !mdi_interrupted(st); rid++) {
            mdt_row row;
            int m;
            if (mdt_row_get(&row, img, table, rid) != 0) {
                bad_from = rid;
                break;
            }
            if ((m = where_match(&row, &w)) < 0)
                errors++;
            else if (m)
                pick[npick++] = rid;
        }
        mdt_error_clear();
        snprintf(caption, sizeof caption, "%s (0x%02x): %" PRIu32 " of %" PRIu32 " row%s where %s",
                 s->name, table, npick, rows, rows == 1 ? "" : "s", awhere->text);
        if (errors)
            mdi_report(st, "dump: %s: %s: %lu %s cell%s could not be decoded and did not match",
                       mdi_image_path(st), s->name, errors, w.c->name, errors == 1 ? "" : "s");
    } else if (rows == 0)
        snprintf(caption, sizeof caption, "%s (0x%02x): no rows", s->name, table);
    else if (from == 1 && to == rows)
        snprintf(caption, sizeof caption, "%s (0x%02x): %" PRIu32 " row%s", s->name, table, rows,
                 rows == 1 ? "" : "s");
    else
        snprintf(caption, sizeof caption,
                 "%s (0x%02x): rows %" PRIu32 " to %" PRIu32 " of %" PRIu32, s->name, table, from,
                 to, rows);

    mdi_list_begin(p, NULL, caption, NULL, 0);
    for (uint32_t i = 0, rid = from; !mdi_interrupted(st); i++, rid++) {
        mdt_row row;
        if (pick) {
            if (i >= npick)
                break;
            rid = pick[i];
        } else if (rid > to || rid == 0 || bad_from) {
            break;
        }
        mdi_item_begin(p);
        mdi_str(p, "table", NULL, s->name);
        mdi_uint(p, "row", "row", rid);
        mdi_token(p, "token", "token", MDT_TOKEN(table, rid));
        if (mdt_row_get(&row, img, table, rid) != 0) {
            /* The rest of the table lies beyond the tables stream: say so
             * once rather than once per row. */
            char msg[400];
            mdi_item_error(p, "error", mdi_cell_error(msg, sizeof msg));
            mdi_item_end(p);
            bad_from = rid;
            break;
        }
        for (unsigned c = 0; c < s->ncols; c++)
            if (mdi_print_cell(p, &row, c))
                errors++;
        mdi_item_end(p);
    }
    mdi_list_end(p);
    talloc_free(pick);

    if (errors && !awhere)
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

const mdi_cmd mdi_cmd_dump = {
    .name = "dump",
    .args = {{.name = "TABLE", .kind = MDI_ARG_TABLE},
             {.name = "FROM", .kind = MDI_ARG_ROW, .flags = MDI_ARGF_OPTIONAL},
             {.name = "TO", .kind = MDI_ARG_ROW, .flags = MDI_ARGF_OPTIONAL},
             {.name = "COL=VALUE",
              .kind = MDI_ARG_COLUMN_VALUE,
              .flags = MDI_ARGF_OPTIONAL,
              .keyword = "where"}},
    .flags = MDI_CMD_IMAGE,
    .summary = "decoded rows of a metadata table",
    .help = "Prints rows FROM to TO (inclusive; by default all rows) of TABLE: the\n"
            "row number and token, then every column in schema order (ECMA-335 II.22):\n"
            "  constants     hex, as wide as the column: 0x0001\n"
            "  #Strings      quoted, with \\\" \\\\ \\n \\t \\r \\xNN \\uNNNN escapes\n"
            "  #Blob         blob@0xOFFSET[LENGTH]: heap offset, length in bytes\n"
            "                (a portable PDB Document's Name: the path it spells)\n"
            "  #GUID         the GUID, or nil for index 0\n"
            "  indexes       the token of the row pointed at: 0x01000005 (rid 0: none)\n"
            "  lists         FIRST..END, tokens of the run the row owns, END exclusive\n"
            "A cell that cannot be decoded shows <error: MESSAGE>; the dump goes on\n"
            "and the command fails at the end. A FROM past the last row fails, as\n"
            "`token` does for a row that is not there; a TO past it is clipped.\n"
            "TABLE is a table name (any case, or a\n"
            "unique prefix) or a table id (0x02); `tables` shows those present.\n"
            "\n"
            "With `where COL=VALUE`, only the rows whose column COL holds VALUE:\n"
            "a number (decimal or 0x hex) for constants and #Blob offsets, the\n"
            "exact string for #Strings, a GUID or nil for #GUID, a token for\n"
            "indexes (a row number will do for a simple index), and for a list\n"
            "column a token of the run: `dump TypeDef where MethodList=0x06000007`\n"
            "shows the type that owns method 7.\n",
    .run = run,
};
