/* `exported`: the ExportedType rows of the current module (ECMA-335
 * II.22.14): types another module of the assembly defines, and type
 * forwarders to other assemblies, with the name built through nested
 * ExportedType rows (the chain is capped and checked for cycles). */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <talloc.h>

#include <mdtools/errors.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>

#include "cmd.h"
#include "resolve.h"

static int run(mdi_state *st, size_t argc, const mdi_arg *argv)
{
    const mdt_image *img = mdi_image(st);
    mdi_printer *p = st->out;
    uint32_t n = mdt_table_rows(img, MDT_TABLE_ExportedType);
    int bad = 0;
    bool marked = false;
    char caption[64], msg[400];
    mdt_modview *v = mdi_view(st);

    if (!v)
        return MDI_FAIL;

    snprintf(caption, sizeof caption, "%" PRIu32 " exported type%s", n, n == 1 ? "" : "s");
    mdi_list_begin(p, NULL, caption, NULL, 0);
    n = mdt_table_rows_present(img, MDT_TABLE_ExportedType);
    for (uint32_t rid = 1; rid <= n && !mdi_interrupted(st); rid++) {
        mdt_row row;
        uint32_t impl;
        const char *kind;
        char *name, *target;
        mdi_item_begin(p);
        mdi_token(p, "token", "token", MDT_TOKEN(MDT_TABLE_ExportedType, rid));
        if (mdt_row_get(&row, img, MDT_TABLE_ExportedType, rid) ||
            mdt_row_token(&impl, &row, MDT_COL_ExportedType_Implementation)) {
            mdi_item_error(p, "error", mdi_cell_error(msg, sizeof msg));
            mdi_item_end(p);
            bad++;
            continue;
        }
        mdi_flags(p, "flags", NULL, mdt_row_raw(&row, MDT_COL_ExportedType_Flags), mdi_type_flags);
        switch (MDT_TOKEN_TABLE(impl)) {
        case MDT_TABLE_AssemblyRef: kind = "forwarder"; break;
        case MDT_TABLE_File: kind = "file"; break;
        default: kind = "nested";
        }
        mdi_str(p, "kind", "kind", kind);
        name = mdi_name(st, p, img, MDT_TOKEN(MDT_TABLE_ExportedType, rid));
        if (name)
            mdi_str(p, "name", "name", name);
        else {
            mdi_error(p, "name", "name", mdi_cell_error(msg, sizeof msg));
            bad++;
        }
        mdi_metadata_name(st, NULL, img, MDT_TOKEN(MDT_TABLE_ExportedType, rid));
        mdi_hex(p, "type_def_id", "TypeDefId", mdt_row_raw(&row, MDT_COL_ExportedType_TypeDefId),
                8);
        mdi_token(p, "implementation", "implementation", impl);
        target = mdi_name(st, p, img, impl);
        if (target)
            mdi_str(p, "implementation_name", "in", target);
        else {
            mdi_error(p, "implementation_name", "in", mdi_cell_error(msg, sizeof msg));
            bad++;
        }
        mdt_error_clear();
        {
            mdt_resolution r;
            if (mdt_exportedtype_resolve(p, &r, NULL, v, mdi_current(st)->id,
                                         MDT_TOKEN(MDT_TABLE_ExportedType, rid), NULL) == 0)
                marked |= mdi_print_resolution(st, v, img, MDT_TOKEN(MDT_TABLE_ExportedType, rid),
                                               &r, true);
            else {
                mdi_error(p, "status", "resolves to", mdi_errmsg_here(msg, sizeof msg));
                bad++;
            }
            mdt_error_clear();
        }
        talloc_free(name);
        talloc_free(target);
        mdi_item_end(p);
    }
    if (!mdi_interrupted(st) && mdi_rows_missing(st, img, MDT_TABLE_ExportedType))
        bad++;
    mdi_list_end(p);
    mdi_other_legend(st, marked);
    mdt_modview_release(v);
    if (bad)
        return mdi_fail(st, "%s: %d field%s could not be read", mdi_image_path(st), bad,
                        bad == 1 ? "" : "s");
    return MDI_OK;
}

const mdi_cmd mdi_cmd_exported = {
    .name = "exported",
    .flags = MDI_CMD_IMAGE,
    .summary = "exported types: other modules' types and forwarders",
    .help = "Lists the ExportedType rows of the current module: token, kind\n"
            "(forwarder: the type lives in another assembly, an AssemblyRef;\n"
            "file: in another module of this assembly; nested: in the type of\n"
            "another ExportedType row), the type's name (nested names through\n"
            "their enclosing rows), the TypeDefId hint, and the implementation\n"
            "token with its name, and where the row finally leads over the open\n"
            "modules (`resolve` on the row): the defining module and TypeDef, the\n"
            "tier and hops and the assemblies visited, or why it does not resolve.\n",
    .run = run,
};
