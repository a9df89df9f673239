/* `inst`, `typespecs`, `methodspecs`: generic instantiations by name
 * (ECMA-335 II.22.39 TypeSpec, II.22.29 MethodSpec, II.22.25 MemberRef with
 * a TypeSpec parent; blobs per II.23.2.14 and II.23.2.15), printed in the
 * session's style: `Ns.Type<A>::Method<B>`. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>

#include <talloc.h>

#include <mdtools/errors.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>

#include "cmd.h"
#include "index.h"

/* The column holding what a spec instantiates: MethodSpec.Method,
 * MemberRef.Class; TypeSpecs have none (the blob names it). */
static int generic_of(const mdt_image *img, uint32_t tok, uint32_t *out)
{
    mdt_row row;
    *out = 0;
    if (MDT_TOKEN_TABLE(tok) == MDT_TABLE_TypeSpec)
        return mdt_row_get(&row, img, MDT_TABLE_TypeSpec, MDT_TOKEN_RID(tok));
    if (mdt_row_get(&row, img, MDT_TOKEN_TABLE(tok), MDT_TOKEN_RID(tok)))
        return -1;
    return mdt_row_token(out, &row,
                         MDT_TOKEN_TABLE(tok) == MDT_TABLE_MethodSpec ? MDT_COL_MethodSpec_Method
                                                                      : MDT_COL_MemberRef_Class);
}

/* The fields of one instantiation; returns the number that failed. */
static int fields(mdi_state *st, uint32_t tok, bool item)
{
    const mdt_image *img = mdi_image(st);
    mdi_printer *p = st->out;
    char *s, msg[400];
    uint32_t of = 0;
    int bad = 0;

    mdi_token(p, "token", "token", tok);
    s = mdi_name(st, p, img, tok);
    if (s)
        mdi_str(p, "name", "name", s);
    else {
        mdi_error(p, "name", "name", mdi_errmsg_here(msg, sizeof msg));
        bad++;
    }
    talloc_free(s);
    mdt_error_clear();
    mdi_metadata_name(st, NULL, img, tok);
    if (MDT_TOKEN_TABLE(tok) != MDT_TABLE_TypeSpec) {
        const char *label = MDT_TOKEN_TABLE(tok) == MDT_TABLE_MethodSpec ? "method" : "parent";
        if (generic_of(img, tok, &of)) {
            mdi_error(p, "of", label, mdi_cell_error(msg, sizeof msg));
            mdi_none(p, "of_name", NULL, NULL);
            bad++;
        } else {
            s = mdi_name(st, p, img, of);
            mdi_token(p, "of", item ? label : NULL, of);
            mdi_str(p, "of_name", NULL, s);
            mdi_metadata_name(st, "of_metadata_name", img, of);
            if (!item)
                mdi_textf(p, label, "0x%08" PRIx32 " %s", of,
                          s ? s : mdi_errmsg_here(msg, sizeof msg));
            if (!s)
                bad++;
            talloc_free(s);
        }
        mdt_error_clear();
    }
    if (MDT_TOKEN_TABLE(tok) == MDT_TABLE_MethodSpec) {
        /* The instantiation itself: <A,B>. */
        s = mdi_sig_text(st, p, img, tok);
        if (s)
            mdi_str(p, "arguments", "arguments", s);
        else {
            mdi_error(p, "arguments", "arguments", mdi_errmsg_here(msg, sizeof msg));
            bad++;
        }
        talloc_free(s);
        mdt_error_clear();
    }
    if (!item || MDT_TOKEN_TABLE(tok) == MDT_TABLE_MethodSpec) {
        /* Instantiated: the arguments in place of !0 and !!0. */
        s = MDT_TOKEN_TABLE(tok) == MDT_TABLE_TypeSpec ? mdi_sig_text(st, p, img, tok)
                                                       : mdi_inst_sig_text(st, p, img, tok);
        if (s)
            mdi_str(p, "signature", "signature", s);
        else {
            mdi_error(p, "signature", "signature", mdi_errmsg_here(msg, sizeof msg));
            bad++;
        }
        talloc_free(s);
        mdt_error_clear();
    }
    return bad;
}

static int inst_one(mdi_state *st, uint32_t tok)
{
    const mdt_image *img = mdi_image(st);
    uint32_t of;
    int bad;
    switch (MDT_TOKEN_TABLE(tok)) {
    case MDT_TABLE_TypeSpec:
    case MDT_TABLE_MethodSpec: break;
    case MDT_TABLE_MemberRef:
        if (generic_of(img, tok, &of) == 0 && MDT_TOKEN_TABLE(of) == MDT_TABLE_TypeSpec)
            break;
        mdt_error_clear();
        return mdi_fail(st, "0x%08" PRIx32 ": the MemberRef's parent is not a TypeSpec", tok);
    default:
        return mdi_fail(st, "0x%08" PRIx32 " is not a TypeSpec, MethodSpec or MemberRef token",
                        tok);
    }
    mdi_record_begin(st->out);
    bad = fields(st, tok, false);
    mdi_record_end(st->out);
    if (bad)
        return mdi_fail(st, "0x%08" PRIx32 ": %d field%s could not be read", tok, bad,
                        bad == 1 ? "" : "s");
    return MDI_OK;
}

static int run_inst(mdi_state *st, size_t argc, const mdi_arg *argv)
{
    return mdi_each_token(st, argv[0].text, inst_one);
}

static int list(mdi_state *st, unsigned table, const char *what)
{
    mdi_printer *p = st->out;
    uint32_t n = mdt_table_rows(mdi_image(st), table);
    int bad = 0;
    char caption[64];
    snprintf(caption, sizeof caption, "%" PRIu32 " %s%s", n, what, n == 1 ? "" : "s");
    mdi_list_begin(p, NULL, caption, NULL, 0);
    n = mdt_table_rows_present(mdi_image(st), table);
    for (uint32_t rid = 1; rid <= n && !mdi_interrupted(st); rid++) {
        mdi_item_begin(p);
        bad += fields(st, MDT_TOKEN(table, rid), true);
        mdi_item_end(p);
    }
    if (!mdi_interrupted(st) && mdi_rows_missing(st, mdi_image(st), table))
        bad++;
    mdi_list_end(p);
    if (bad)
        return mdi_fail(st, "%s: %d field%s could not be read", mdi_image_path(st), bad,
                        bad == 1 ? "" : "s");
    return MDI_OK;
}

static int run_typespecs(mdi_state *st, size_t argc, const mdi_arg *argv)
{
    return list(st, MDT_TABLE_TypeSpec, "TypeSpec");
}

static int run_methodspecs(mdi_state *st, size_t argc, const mdi_arg *argv)
{
    return list(st, MDT_TABLE_MethodSpec, "MethodSpec");
}

const mdi_cmd mdi_cmd_inst = {
    .name = "inst",
    .args = {{.name = "TOKEN", .kind = MDI_ARG_TOKEN}},
    .flags = MDI_CMD_IMAGE,
    .summary = "the instantiated name of a TypeSpec, MethodSpec or generic member",
    .help = "Prints what a TypeSpec, a MethodSpec, or a MemberRef whose parent is\n"
            "a TypeSpec (a member of a generic instance) denotes, instantiated, in\n"
            "the session's style: `Ns.Type<A>::Method<B>`. A MethodSpec also shows\n"
            "the method it instantiates and its arguments (`<A,B>`), a MemberRef\n"
            "its TypeSpec parent; both show the signature instantiated: the\n"
            "MethodSpec's and the parent TypeSpec's arguments in place of !!0 and\n"
            "!0 (`System.Void(System.Int32)`, not `System.Void(!0)`).\n",
    .run = run_inst,
};

const mdi_cmd mdi_cmd_typespecs = {
    .name = "typespecs",
    .flags = MDI_CMD_IMAGE,
    .summary = "every TypeSpec by name",
    .help = "Lists the TypeSpec rows of the current module, each with the type its\n"
            "blob describes, in the session's style.\n",
    .run = run_typespecs,
};

const mdi_cmd mdi_cmd_methodspecs = {
    .name = "methodspecs",
    .flags = MDI_CMD_IMAGE,
    .summary = "every MethodSpec: instantiated name, method, arguments",
    .help = "Lists the MethodSpec rows of the current module: the instantiated\n"
            "method (`Ns.Type<A>::Method<B>`), the method it instantiates\n"
            "(MethodDef or MemberRef) and the type arguments (`<B>`), in the\n"
            "session's style.\n",
    .run = run_methodspecs,
};
