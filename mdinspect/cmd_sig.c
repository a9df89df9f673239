/* `sig`: the signature of a row that has one (ECMA-335 II.23.2: MethodDef,
 * MemberRef, StandAloneSig, Field, Property, TypeSpec, MethodSpec),
 * decoded and printed in the session's style (`set style`, doc/names.md). */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>

#include <talloc.h>

#include <mdtools/errors.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>

#include "cmd.h"
#include "index.h"

static const char *sig_kind(unsigned t)
{
    switch (t) {
    case MDT_TABLE_MethodDef: return "MethodDefSig";
    case MDT_TABLE_MemberRef: return "MemberRefSig";
    case MDT_TABLE_StandAloneSig: return "StandAloneSig";
    case MDT_TABLE_Field: return "FieldSig";
    case MDT_TABLE_Property: return "PropertySig";
    case MDT_TABLE_TypeSpec: return "TypeSpec";
    case MDT_TABLE_MethodSpec: return "MethodSpec";
    default: return NULL;
    }
}

static int one(mdi_state *st, uint32_t tok)
{
    const mdt_image *img = mdi_image(st);
    mdi_printer *p = st->out;
    const char *kind = sig_kind(MDT_TOKEN_TABLE(tok));
    char *name, *sig, msg[400];
    int status = MDI_OK;

    if (!kind)
        return mdi_fail(st, "0x%08" PRIx32 " is a %s token, which has no signature", tok,
                        MDT_TOKEN_TABLE(tok) == MDT_TOKEN_STRING
                            ? "user string"
                            : mdt_table_schema_get(MDT_TOKEN_TABLE(tok))->name);
    mdi_record_begin(p);
    mdi_token(p, "token", "token", tok);
    mdi_str(p, "kind", "kind", kind);
    name = mdi_row_name(st, p, img, tok);
    if (name && name[0])
        mdi_str(p, "name", "name", name);
    else if (name)
        mdi_none(p, "name", "name", NULL);
    else {
        mdi_error(p, "name", "name", mdi_cell_error(msg, sizeof msg));
        status = MDI_FAIL;
    }
    mdt_error_clear();
    mdi_metadata_name(st, NULL, img, tok);
    sig = mdi_sig_text(st, p, img, tok);
    if (sig)
        mdi_str(p, "signature", "signature", sig);
    else {
        mdi_error(p, "signature", "signature", mdi_errmsg_here(msg, sizeof msg));
        status = MDI_FAIL;
    }
    mdt_error_clear();
    talloc_free(name);
    talloc_free(sig);
    mdi_record_end(p);
    if (status != MDI_OK)
        mdi_fail(st, "0x%08" PRIx32 ": could not be decoded", tok);
    return status;
}

static int run(mdi_state *st, size_t argc, const mdi_arg *argv)
{
    return mdi_each_token(st, argv[0].text, one);
}

const mdi_cmd mdi_cmd_sig = {
    .name = "sig",
    .args = {{.name = "TOKEN", .kind = MDI_ARG_TOKEN}},
    .flags = MDI_CMD_IMAGE,
    .summary = "the decoded signature of a method, field, property or spec",
    .help = "Decodes the signature blob of the row TOKEN names (ECMA-335 II.23.2)\n"
            "and prints it in the session's style (`set style`): a MethodDefSig or\n"
            "MemberRefSig as `[instance ][CC ][generic<N> ]RET(P1,...)` with `...`\n"
            "before vararg parameters, a FieldSig or PropertySig, a\n"
            "StandAloneSig (locals as `(T0,T1 pinned)` or a call site), a\n"
            "TypeSpec's type, a MethodSpec's `<A,B>`. TOKEN may also be\n"
            "Type::member (every member of that name).\n",
    .run = run,
};
