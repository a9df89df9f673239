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

#define MAX_NEST 64

/* "Ns.Outer+Inner" of ExportedType rid, or NULL (error record set, or a
 * cycle reported in *why). */
static char *exported_name(void *mem, const mdt_image *img, uint32_t rid, const char **why)
{
    uint32_t chain[MAX_NEST];
    unsigned n = 0;
    char *s;
    *why = NULL;
    for (uint32_t r = rid;;) {
        mdt_row row;
        uint32_t impl;
        for (unsigned i = 0; i < n; i++)
            if (chain[i] == r) {
                *why = "the rows enclose each other (a cycle)";
                return NULL;
            }
        if (n == MAX_NEST) {
            *why = "nested too deep";
            return NULL;
        }
        chain[n++] = r;
        if (mdt_row_get(&row, img, MDT_TABLE_ExportedType, r) ||
            mdt_row_token(&row, MDT_COL_ExportedType_Implementation, &impl))
            return NULL;
        if (MDT_TOKEN_TABLE(impl) != MDT_TABLE_ExportedType || !MDT_TOKEN_RID(impl))
            break;
        r = MDT_TOKEN_RID(impl);
    }
    s = talloc_strdup(mem, "");
    for (unsigned i = n; s && i-- > 0;) {
        mdt_row row;
        const char *name, *ns;
        size_t len, nsl;
        if (mdt_row_get(&row, img, MDT_TABLE_ExportedType, chain[i]) ||
            mdt_row_string(&row, MDT_COL_ExportedType_TypeName, &name, &len) ||
            mdt_row_string(&row, MDT_COL_ExportedType_TypeNamespace, &ns, &nsl)) {
            talloc_free(s);
            return NULL;
        }
        if (i != n - 1)
            s = talloc_strdup_append(s, "+");
        else if (nsl)
            s = talloc_asprintf_append(s, "%.*s.", (int)nsl, ns);
        if (s)
            s = talloc_strndup_append(s, name, len);
    }
    return s;
}

static int run(mdi_state *st, size_t argc, const mdi_arg *argv)
{
    const mdt_image *img = mdi_image(st);
    mdi_printer *p = st->out;
    uint32_t n = mdt_table_rows(img, MDT_TABLE_ExportedType);
    int bad = 0;
    char caption[64], msg[400];

    snprintf(caption, sizeof caption, "%" PRIu32 " exported type%s", n, n == 1 ? "" : "s");
    mdi_list_begin(p, NULL, caption, NULL, 0);
    for (uint32_t rid = 1; rid <= n && !mdi_interrupted(st); rid++) {
        mdt_row row;
        uint32_t impl;
        const char *why, *kind;
        char *name, *target;
        mdi_item_begin(p);
        mdi_token(p, "token", "token", MDT_TOKEN(MDT_TABLE_ExportedType, rid));
        if (mdt_row_get(&row, img, MDT_TABLE_ExportedType, rid) ||
            mdt_row_token(&row, MDT_COL_ExportedType_Implementation, &impl)) {
            mdi_item_error(p, "error", mdi_cell_error(msg, sizeof msg));
            mdi_item_end(p);
            bad++;
            continue;
        }
        mdi_flags(p, "flags", NULL, mdt_row_raw(&row, MDT_COL_ExportedType_Flags), mdi_type_flags);
        switch (MDT_TOKEN_TABLE(impl)) {
        case MDT_TABLE_AssemblyRef:
            kind = "forwarder";
            break;
        case MDT_TABLE_File:
            kind = "file";
            break;
        default:
            kind = "nested";
        }
        mdi_str(p, "kind", "kind", kind);
        name = exported_name(p, img, rid, &why);
        if (name)
            mdi_str(p, "name", "name", name);
        else {
            mdi_error(p, "name", "name", why ? why : mdi_cell_error(msg, sizeof msg));
            bad++;
        }
        mdi_hex(p, "type_def_id", "TypeDefId", mdt_row_raw(&row, MDT_COL_ExportedType_TypeDefId),
                8);
        mdi_token(p, "implementation", "implementation", impl);
        target = MDT_TOKEN_TABLE(impl) == MDT_TABLE_ExportedType
                     ? exported_name(p, img, MDT_TOKEN_RID(impl), &why)
                     : mdi_name(st, p, img, impl);
        if (target)
            mdi_str(p, "implementation_name", "in", target);
        else {
            mdi_error(p, "implementation_name", "in", why ? why : mdi_cell_error(msg, sizeof msg));
            bad++;
        }
        mdt_clear_error();
        talloc_free(name);
        talloc_free(target);
        mdi_item_end(p);
    }
    mdi_list_end(p);
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
            "token with its name.\n",
    .run = run,
};
