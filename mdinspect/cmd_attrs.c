/* `attrs`: custom attributes decoded (ECMA-335 II.22.10 CustomAttribute,
 * blobs per II.23.3), of one token (the rows whose Parent is its
 * HasCustomAttribute coded index) or of the whole module, printed C#-like:
 * `[Ns.InfoAttribute(42, "hello", Number = -1)]`. Enums defined in other
 * open modules are sized through the module set (mdi_enum_resolver). */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>

#include <talloc.h>

#include <mdtools/attr.h>
#include <mdtools/errors.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>

#include "cmd.h"
#include "index.h"
#include "resolve.h"

/* One CustomAttribute row as a list item; `all`: with its parent. Returns
 * the number of parts that could not be read. */
static int item(mdi_state *st, uint32_t rid, bool all)
{
    const mdt_image *img = mdi_image(st);
    mdi_printer *p = st->out;
    void *tmp = talloc_new(NULL);
    mdt_row row;
    mdt_attr a;
    uint32_t parent = 0, ctor = 0, type = 0;
    char *s, msg[400];
    int bad = 0;

    mdi_item_begin(p);
    mdi_token(p, "attribute", "row", MDT_TOKEN(MDT_TABLE_CustomAttribute, rid));
    if (mdt_row_get(&row, img, MDT_TABLE_CustomAttribute, rid) ||
        mdt_row_token(&parent, &row, MDT_COL_CustomAttribute_Parent) ||
        mdt_row_token(&ctor, &row, MDT_COL_CustomAttribute_Type)) {
        mdi_item_error(p, "error", mdi_cell_error(msg, sizeof msg));
        mdt_error_clear();
        mdi_item_end(p);
        talloc_free(tmp);
        return 1;
    }
    mdi_token(p, "token", all ? "parent" : NULL, parent);
    s = mdi_row_name(st, tmp, img, parent);
    if (s)
        mdi_str(p, "parent_name", all ? "name" : NULL, s);
    else
        mdi_error(p, "parent_name", all ? "name" : NULL, mdi_errmsg_here(msg, sizeof msg));
    mdt_error_clear();
    mdi_metadata_name(st, "parent_metadata_name", img, parent);
    mdi_token(p, "ctor", NULL, ctor);
    if (mdt_token_owner(&type, img, ctor) == 0 && type && (s = mdi_name(st, tmp, img, type)))
        mdi_str(p, "type", NULL, s);
    else
        mdi_none(p, "type", NULL, NULL);
    mdt_error_clear();
    if (type)
        mdi_metadata_name(st, "type_metadata_name", img, type);

    if (mdt_attr_of_row(tmp, &a, img, rid, mdi_enum_resolver, st) ||
        mdt_attr_format(tmp, &s, &a, &st->names)) {
        mdi_item_error(p, "error", mdi_errmsg_here(msg, sizeof msg));
        mdt_error_clear();
        mdi_item_end(p);
        talloc_free(tmp);
        return 1;
    }
    mdi_str(p, "text", "attribute", s);
    mdi_list_begin(p, "fixed", NULL, NULL, MDI_LIST_SCALARS);
    for (uint32_t i = 0; i < a.nfixed; i++) {
        mdi_item_begin(p);
        if (mdt_value_format(tmp, &s, &a.fixed[i], &st->names) == 0)
            mdi_str(p, "value", NULL, s);
        else {
            mdi_error(p, "value", NULL, mdi_errmsg_here(msg, sizeof msg));
            bad++;
        }
        mdi_item_end(p);
    }
    mdi_list_end(p);
    mdi_list_begin(p, "named", NULL, NULL, 0);
    for (uint32_t i = 0; i < a.nnamed; i++) {
        mdi_item_begin(p);
        mdi_str(p, "kind", NULL, a.named[i].property ? "property" : "field");
        mdi_str(p, "name", NULL, a.named[i].name);
        if (mdt_value_format(tmp, &s, &a.named[i].value, &st->names) == 0)
            mdi_str(p, "value", NULL, s);
        else {
            mdi_error(p, "value", NULL, mdi_errmsg_here(msg, sizeof msg));
            bad++;
        }
        mdi_item_end(p);
    }
    mdi_list_end(p);
    mdt_error_clear();
    mdi_item_end(p);
    talloc_free(tmp);
    return bad;
}

static int of_token(mdi_state *st, uint32_t tok)
{
    const mdt_image *img = mdi_image(st);
    mdi_printer *p = st->out;
    uint32_t key, rid, n = 0;
    mdt_find f;
    char caption[600], msg[400], *name;
    int bad = 0;

    if (mdt_coded_encode(&key, MDT_CI_HasCustomAttribute, tok)) {
        mdt_error_clear();
        return mdi_fail(st, "0x%08" PRIx32 ": a %s cannot carry custom attributes", tok,
                        MDT_TOKEN_TABLE(tok) == MDT_TOKEN_STRING
                            ? "user string"
                            : mdt_table_schema_get(MDT_TOKEN_TABLE(tok))->name);
    }
    if (mdt_find_init(&f, img, MDT_TABLE_CustomAttribute, MDT_COL_CustomAttribute_Parent, key))
        return mdi_fail(st, "%s", mdi_errmsg_here(msg, sizeof msg));
    while (mdt_find_next(&rid, &f) == 0)
        n++;
    mdt_error_clear();
    name = mdi_row_name(st, st, img, tok);
    mdt_error_clear();
    snprintf(caption, sizeof caption, "%" PRIu32 " custom attribute%s on 0x%08" PRIx32 "%s%s", n,
             n == 1 ? "" : "s", tok, name && name[0] ? " " : "", name ? name : "");
    talloc_free(name);
    mdi_list_begin(p, NULL, caption, NULL, 0);
    mdt_find_init(&f, img, MDT_TABLE_CustomAttribute, MDT_COL_CustomAttribute_Parent, key);
    while (mdt_find_next(&rid, &f) == 0 && !mdi_interrupted(st))
        bad += item(st, rid, false);
    mdt_error_clear();
    mdi_list_end(p);
    if (bad)
        return mdi_fail(st, "0x%08" PRIx32 ": %d attribute%s could not be decoded", tok, bad,
                        bad == 1 ? "" : "s");
    return MDI_OK;
}

static int run(mdi_state *st, size_t argc, const mdi_arg *argv)
{
    const mdt_image *img = mdi_image(st);
    int bad = 0;

    if (argc)
        return mdi_each_token(st, argv[0].text, of_token);

    uint32_t n = mdt_table_rows(img, MDT_TABLE_CustomAttribute);
    char caption[64];
    snprintf(caption, sizeof caption, "%" PRIu32 " custom attribute%s", n, n == 1 ? "" : "s");
    mdi_list_begin(st->out, NULL, caption, NULL, 0);
    n = mdt_table_rows_present(img, MDT_TABLE_CustomAttribute);
    for (uint32_t rid = 1; rid <= n && !mdi_interrupted(st); rid++)
        bad += item(st, rid, true);
    if (!mdi_interrupted(st) && mdi_rows_missing(st, img, MDT_TABLE_CustomAttribute))
        bad++;
    mdi_list_end(st->out);
    if (bad)
        return mdi_fail(st, "%s: %d attribute%s could not be decoded", mdi_image_path(st), bad,
                        bad == 1 ? "" : "s");
    return MDI_OK;
}

const mdi_cmd mdi_cmd_attrs = {
    .name = "attrs",
    .args = {{.name = "TOKEN", .kind = MDI_ARG_TOKEN, .flags = MDI_ARGF_OPTIONAL}},
    .flags = MDI_CMD_IMAGE,
    .summary = "custom attributes decoded, of a token or of the whole module",
    .help = "Decodes the custom attributes (CustomAttribute rows) whose parent is\n"
            "TOKEN (any token that can carry them: type, member, parameter, the\n"
            "assembly 0x20000001, the module 0x00000001, ...), or without TOKEN\n"
            "every custom attribute of the current module with its parent. Each is\n"
            "shown as C# writes it, names in the session's style:\n"
            "\n"
            "  [Ns.InfoAttribute(42, \"hi\", Ns.Color.Green, Number = -1)]\n"
            "\n"
            "An enum argument needs the enum's size, read from its definition:\n"
            "enums of other assemblies are found among the open modules; when the\n"
            "defining assembly is not open, the error (unknown enum size) is shown\n"
            "in place of the attribute. JSON fields: attribute (the CustomAttribute\n"
            "token), token and parent_name (its parent), ctor (MethodDef or\n"
            "MemberRef token), type (the attribute type's name), text, fixed (the\n"
            "constructor arguments as text), named (objects with kind \"field\" or\n"
            "\"property\", name and value), or error when the blob does not decode.\n",
    .run = run,
};
