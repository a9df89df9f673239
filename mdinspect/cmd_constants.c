/* `constants`: the literal values of the current module (ECMA-335 II.22.9
 * Constant: fields, parameters and properties, blobs per II.23.3's element
 * types), and the System.Decimal values compilers keep in a
 * DecimalConstantAttribute (II.21) on fields and parameters that have no
 * Constant row. Values print exactly (<mdtools/value.h>). */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <talloc.h>

#include <mdtools/errors.h>
#include <mdtools/names.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>
#include <mdtools/value.h>

#include "cmd.h"
#include "index.h"

/* ILAsm's name of a Constant's element type, or NULL for one the Constant
 * table cannot hold. */
static const char *type_name(uint8_t t)
{
    switch (t) {
    case MDT_VALUE_BOOLEAN: return "bool";
    case MDT_VALUE_CHAR: return "char";
    case MDT_VALUE_I1: return "int8";
    case MDT_VALUE_U1: return "uint8";
    case MDT_VALUE_I2: return "int16";
    case MDT_VALUE_U2: return "uint16";
    case MDT_VALUE_I4: return "int32";
    case MDT_VALUE_U4: return "uint32";
    case MDT_VALUE_I8: return "int64";
    case MDT_VALUE_U8: return "uint64";
    case MDT_VALUE_R4: return "float32";
    case MDT_VALUE_R8: return "float64";
    case MDT_VALUE_STRING: return "string";
    case MDT_VALUE_CLASS: return "class";
    case MDT_VALUE_DECIMAL: return "decimal";
    default: return NULL;
    }
}

/* The parent and its name, the type and the value (or the error). */
static int fields(mdi_state *st, void *tmp, uint32_t parent, uint8_t type, int rc,
                  const mdt_value *v)
{
    const mdt_image *img = mdi_image(st);
    mdi_printer *p = st->out;
    const char *tn = type_name(type);
    char *s, *val = NULL, msg[400], verr[400];

    /* The value first: naming the parent would replace its error record. */
    if (rc || mdt_value_format(tmp, &val, v, &st->names))
        mdi_errmsg_here(verr, sizeof verr);
    mdt_error_clear();
    mdi_token(p, "token", "parent", parent);
    s = mdi_row_name(st, tmp, img, parent);
    if (s)
        mdi_str(p, "parent_name", "name", s);
    else
        mdi_error(p, "parent_name", "name", mdi_errmsg_here(msg, sizeof msg));
    mdt_error_clear();
    mdi_metadata_name(st, "parent_metadata_name", img, parent);
    if (tn)
        mdi_str(p, "type", "type", tn);
    else {
        snprintf(msg, sizeof msg, "0x%02x", type);
        mdi_str(p, "type", "type", msg);
    }
    if (!val) {
        mdi_item_error(p, "error", verr);
        return 1;
    }
    mdi_str(p, "value", "value", val);
    return 0;
}

/* Whether the custom attribute constructor `ctor` is DecimalConstantAttribute's. */
static bool is_decimal_ctor(const mdt_image *img, uint32_t ctor)
{
    static const mdt_name_opts full = {.style = MDT_STYLE_FULL};
    char buf[128];
    size_t len;
    uint32_t type = 0;
    bool yes = mdt_token_owner(&type, img, ctor) == 0 && type &&
               mdt_token_name_buf(buf, sizeof buf, &len, img, type, &full) == 0 &&
               strcmp(buf, "System.Runtime.CompilerServices.DecimalConstantAttribute") == 0;
    mdt_error_clear();
    return yes;
}

/* Whether `parent` has a Constant row. */
static bool has_constant(const mdt_image *img, uint32_t parent)
{
    uint32_t key, rid;
    mdt_find f;
    bool yes = mdt_coded_encode(&key, MDT_CI_HasConstant, parent) == 0 &&
               mdt_find_init(&f, img, MDT_TABLE_Constant, MDT_COL_Constant_Parent, key) == 0 &&
               mdt_find_next(&rid, &f) == 0;
    mdt_error_clear();
    return yes;
}

static int run(mdi_state *st, size_t argc, const mdi_arg *argv)
{
    const mdt_image *img = mdi_image(st);
    mdi_printer *p = st->out;
    uint32_t n = mdt_table_rows_present(img, MDT_TABLE_Constant);
    uint32_t nca = mdt_table_rows_present(img, MDT_TABLE_CustomAttribute);
    uint32_t *dec = talloc_array(st, uint32_t, nca ? nca : 1);
    uint32_t ndec = 0, last = 0;
    char caption[96], msg[400];
    int bad = 0;

    if (!dec)
        return mdi_fail(st, "out of memory");
    /* The DecimalConstantAttributes first, to caption the list. */
    for (uint32_t rid = 1; rid <= nca && !mdi_interrupted(st); rid++) {
        mdt_row row;
        uint32_t parent, ctor;
        if (mdt_row_get(&row, img, MDT_TABLE_CustomAttribute, rid) ||
            mdt_row_token(&parent, &row, MDT_COL_CustomAttribute_Parent) ||
            mdt_row_token(&ctor, &row, MDT_COL_CustomAttribute_Type)) {
            mdt_error_clear();
            continue; /* `attrs` and `validate` report unreadable rows */
        }
        if ((MDT_TOKEN_TABLE(parent) != MDT_TABLE_Field &&
             MDT_TOKEN_TABLE(parent) != MDT_TABLE_Param) ||
            parent == last || !is_decimal_ctor(img, ctor) || has_constant(img, parent))
            continue;
        last = parent;
        dec[ndec++] = rid;
    }

    snprintf(caption, sizeof caption, "%" PRIu32 " constant%s, %" PRIu32 " decimal constant%s", n,
             n == 1 ? "" : "s", ndec, ndec == 1 ? "" : "s");
    mdi_list_begin(p, NULL, caption, NULL, 0);
    for (uint32_t rid = 1; rid <= n && !mdi_interrupted(st); rid++) {
        void *tmp = talloc_new(NULL);
        mdt_row row;
        mdt_value v;
        uint32_t parent;
        int rc;
        mdi_item_begin(p);
        mdi_token(p, "source", "row", MDT_TOKEN(MDT_TABLE_Constant, rid));
        if (mdt_row_get(&row, img, MDT_TABLE_Constant, rid) ||
            mdt_row_token(&parent, &row, MDT_COL_Constant_Parent)) {
            mdi_item_error(p, "error", mdi_cell_error(msg, sizeof msg));
            mdt_error_clear();
            bad++;
        } else {
            rc = mdt_constant_of_row(tmp, &v, img, rid);
            bad +=
                fields(st, tmp, parent, (uint8_t)mdt_row_raw(&row, MDT_COL_Constant_Type), rc, &v);
        }
        mdi_item_end(p);
        talloc_free(tmp);
    }
    for (uint32_t i = 0; i < ndec && !mdi_interrupted(st); i++) {
        void *tmp = talloc_new(NULL);
        mdt_row row;
        mdt_value v;
        uint32_t parent = 0;
        int rc;
        mdt_row_get(&row, img, MDT_TABLE_CustomAttribute, dec[i]);
        mdt_row_token(&parent, &row, MDT_COL_CustomAttribute_Parent);
        mdi_item_begin(p);
        mdi_token(p, "source", "row", MDT_TOKEN(MDT_TABLE_CustomAttribute, dec[i]));
        rc = mdt_value_default(tmp, &v, img, parent);
        bad += fields(st, tmp, parent, MDT_VALUE_DECIMAL, rc, &v);
        mdi_item_end(p);
        talloc_free(tmp);
    }
    if (!mdi_interrupted(st) && mdi_rows_missing(st, img, MDT_TABLE_Constant))
        bad++;
    mdi_list_end(p);
    talloc_free(dec);
    if (bad)
        return mdi_fail(st, "%s: %d value%s could not be decoded", mdi_image_path(st), bad,
                        bad == 1 ? "" : "s");
    return MDI_OK;
}

const mdi_cmd mdi_cmd_constants = {
    .name = "constants",
    .flags = MDI_CMD_IMAGE,
    .summary = "every literal value: Constant rows and decimal constants",
    .help = "Lists the Constant rows of the current module (the values of literal\n"
            "fields, of optional parameters and of properties) with their parent,\n"
            "element type and value, then the System.Decimal constants, which\n"
            "compilers store as a DecimalConstantAttribute on a field or parameter\n"
            "without a Constant row (row: the CustomAttribute). Values print\n"
            "exactly: integers in decimal, floats as the shortest text that reads\n"
            "back to the same bits, decimals with their scale (`12.34`), strings\n"
            "quoted with C escapes, `null`. A value that does not decode (a blob\n"
            "shorter than its type) shows its error.\n",
    .run = run,
};
