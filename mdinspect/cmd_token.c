/* `token`: everything about one token (ECMA-335 II.22, III.1.9): its
 * table and row, the name of what it denotes, its owner (the type of a
 * member, the method of a parameter, the parent column of attribute-like
 * rows), its signature when the row has one, and every column decoded as
 * `dump` shows it. A user-string token (0x70) shows the string. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <talloc.h>

#include <mdtools/errors.h>
#include <mdtools/heaps.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>

#include "cmd.h"
#include "index.h"

static bool has_sig(unsigned t)
{
    switch (t) {
    case MDT_TABLE_MethodDef:
    case MDT_TABLE_Field:
    case MDT_TABLE_Property:
    case MDT_TABLE_MemberRef:
    case MDT_TABLE_StandAloneSig:
    case MDT_TABLE_TypeSpec:
    case MDT_TABLE_MethodSpec: return true;
    default: return false;
    }
}

static int user_string(mdi_state *st, uint32_t tok)
{
    mdi_printer *p = st->out;
    const uint8_t *d;
    uint32_t units;
    int flag, replaced;
    char *u8, msg[512];
    size_t len;
    mdi_record_begin(p);
    mdi_token(p, "token", "token", tok);
    mdi_str(p, "table", "table", "#US");
    mdi_hex(p, "offset", "offset", MDT_TOKEN_RID(tok), 0);
    if (mdt_heap_us(&d, &units, &flag, mdi_image(st), MDT_TOKEN_RID(tok)) ||
        mdt_heap_utf16_to_utf8(p, &u8, &len, &replaced, d, units)) {
        mdi_error(p, "string", "string", mdi_errmsg_here(msg, sizeof msg));
        mdi_record_end(p);
        return MDI_FAIL;
    }
    mdi_quoted(p, "string", "string", u8, len);
    talloc_free(u8);
    mdi_record_end(p);
    return MDI_OK;
}

static int one(mdi_state *st, uint32_t tok)
{
    const mdt_image *img = mdi_image(st);
    mdi_printer *p = st->out;
    unsigned t = MDT_TOKEN_TABLE(tok);
    const mdt_table_schema *s = mdt_table_schema_get(t);
    uint32_t owner = 0;
    mdt_row row;
    char msg[400];
    int bad = 0;

    if (t == MDT_TOKEN_STRING)
        return user_string(st, tok);
    mdi_record_begin(p);
    mdi_token(p, "token", "token", tok);
    mdi_str(p, "table", NULL, s->name);
    mdi_uint(p, "row", NULL, MDT_TOKEN_RID(tok));
    mdi_textf(p, "table", "%s (0x%02x), row %" PRIu32, s->name, t, MDT_TOKEN_RID(tok));
    if (mdt_row_get(&row, img, t, MDT_TOKEN_RID(tok))) {
        mdi_error(p, "error", "error", mdi_cell_error(msg, sizeof msg));
        mdi_record_end(p);
        return MDI_FAIL;
    }
    {
        char *name = mdi_row_name(st, p, img, tok);
        if (name && !name[0])
            mdi_none(p, "name", "name", NULL);
        else if (name)
            mdi_str(p, "name", "name", name);
        else {
            mdi_error(p, "name", "name", mdi_cell_error(msg, sizeof msg));
            bad++;
        }
        talloc_free(name);
        mdi_metadata_name(st, NULL, img, tok);
    }
    if (mdt_token_owner(&owner, img, tok) != 0) {
        mdi_error(p, "owner", "owner", mdi_cell_error(msg, sizeof msg));
        mdi_none(p, "owner_name", NULL, NULL);
        bad++;
    } else if (owner && MDT_TOKEN_RID(owner)) {
        char *on = mdi_row_name(st, p, img, owner);
        mdi_token(p, "owner", NULL, owner);
        mdi_str(p, "owner_name", NULL, on);
        mdi_metadata_name(st, "owner_metadata_name", img, owner);
        if (!on) {
            bad++;
            on = talloc_asprintf(p, "<error: %s>", mdi_cell_error(msg, sizeof msg));
        } else if (!on[0]) {
            talloc_free(on);
            on = talloc_asprintf(p, "%s row %" PRIu32,
                                 mdt_table_schema_get(MDT_TOKEN_TABLE(owner))->name,
                                 MDT_TOKEN_RID(owner));
        }
        mdi_textf(p, "owner", "0x%08" PRIx32 " %s", owner, on ? on : "");
        mdt_error_clear();
        talloc_free(on);
    } else {
        mdi_none(p, "owner", "owner", NULL);
        mdi_none(p, "owner_name", NULL, NULL);
    }
    if (has_sig(t)) {
        char *sig = mdi_sig_text(st, p, img, tok);
        if (sig)
            mdi_str(p, "signature", "signature", sig);
        else {
            mdi_error(p, "signature", "signature", mdi_errmsg_here(msg, sizeof msg));
            bad++;
        }
        talloc_free(sig);
    } else {
        mdi_none(p, "signature", "signature", NULL);
    }
    if (t == MDT_TABLE_TypeDef) {
        /* Its name with its generic parameters and their constraints. */
        char *decl = mdi_declaration(st, p, img, tok);
        if (decl)
            mdi_str(p, "declaration", "declaration", decl);
        else {
            mdi_error(p, "declaration", "declaration", mdi_errmsg_here(msg, sizeof msg));
            bad++;
        }
        talloc_free(decl);
    }
    if (t == MDT_TABLE_MethodDef || t == MDT_TABLE_Field || t == MDT_TABLE_Property ||
        t == MDT_TABLE_Event) {
        /* As C# or ILAsm would declare it: names for parameters and
         * generic parameters, the flags as ILAsm keywords. */
        char *decl = mdi_declaration(st, p, img, tok);
        const mdi_flagname *fl = t == MDT_TABLE_MethodDef  ? mdi_method_flags
                                 : t == MDT_TABLE_Field    ? mdi_field_flags
                                 : t == MDT_TABLE_Property ? mdi_property_flags
                                                           : mdi_event_flags;
        unsigned fc = t == MDT_TABLE_MethodDef  ? MDT_COL_MethodDef_Flags
                      : t == MDT_TABLE_Field    ? MDT_COL_Field_Flags
                      : t == MDT_TABLE_Property ? MDT_COL_Property_Flags
                                                : MDT_COL_Event_EventFlags;
        char *words = mdi_flag_words(p, mdt_row_raw(&row, fc), fl);
        if (decl)
            mdi_textf(p, "declaration", "%s%s%s", words ? words : "", words && words[0] ? " " : "",
                      decl);
        else
            mdi_error(p, "declaration", "declaration", mdi_errmsg_here(msg, sizeof msg));
        mdi_str(p, "declaration", NULL, decl);
        mdi_str(p, "attributes", NULL, words);
        if (!decl)
            bad++;
        talloc_free(decl);
        talloc_free(words);
    } else {
        mdi_none(p, "declaration", NULL, NULL);
    }
    mdi_object_begin(p, "columns", "columns");
    for (unsigned c = 0; c < s->ncols; c++)
        if (mdi_print_cell(p, &row, c))
            bad++;
    mdi_object_end(p);
    mdi_record_end(p);
    return bad ? MDI_FAIL : MDI_OK;
}

static int run(mdi_state *st, size_t argc, const mdi_arg *argv)
{
    uint32_t *toks;
    size_t n;
    int status = MDI_OK;
    if (mdi_arg_tokens(st, st, argv[0].text, &toks, &n))
        return MDI_FAIL;
    for (size_t i = 0; i < n && !mdi_interrupted(st); i++)
        if (one(st, toks[i]) != MDI_OK)
            status = MDI_FAIL;
    talloc_free(toks);
    if (status != MDI_OK)
        mdi_fail(st, "%s: some fields could not be read", argv[0].text);
    return status;
}

const mdi_cmd mdi_cmd_token = {
    .name = "token",
    .args = {{.name = "TOKEN", .kind = MDI_ARG_TOKEN}},
    .flags = MDI_CMD_IMAGE,
    .summary = "what a token is: table, name, owner, signature, columns",
    .help = "Shows the row a token (0xTTRRRRRR, any table) denotes: its table and\n"
            "row, the name of what it is in the style of `set style` (the Name\n"
            "column for rows without a formal name), its owner (the type of a\n"
            "method, field, property or event; the method of a parameter; the\n"
            "enclosing type of a nested type; the parent of a custom attribute,\n"
            "constant, generic parameter, member reference, ...), its signature\n"
            "when the row has one, a type's or member's declaration (generic\n"
            "parameters with their constraints), and every column decoded as\n"
            "`dump` shows it.\n"
            "A user-string token (0x70) shows the string. Instead of a token,\n"
            "TOKEN may be a type name or Type::member: every member of that name\n"
            "is shown (all the overloads of a method).\n",
    .run = run,
};
