/* `type`: one type in full: TypeDef row (ECMA-335 II.22.37) flags, base
 * type, enclosing type (II.22.32), layout (II.22.8 ClassLayout), generic
 * parameters and their constraints (II.22.20, II.22.21), interfaces
 * (II.22.23), nested types, and its fields, methods, properties and
 * events with their declarations (decl.c). A name is looked up in every
 * open module (index.c); a TypeRef token is followed to its definition
 * when an open module has it (II.22.38, <mdtools/typeref.h>); a TypeSpec
 * shows what it names. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <talloc.h>

#include <mdtools/errors.h>
#include <mdtools/members.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>

#include "cmd.h"
#include "index.h"
#include "resolve.h"

struct members {
    void *mem;
    uint32_t *toks[4]; /* fields, methods, properties, events */
    size_t n[4];
};

/* The members of `type` by kind; the number that cannot be read. */
static int collect(struct members *m, const mdt_image *img, uint32_t type)
{
    mdt_members it = MDT_MEMBERS_INIT;
    uint32_t token;
    const char *name;
    int e, bad = 0;
    if (mdt_members_init(&it, img, type, MDT_MEMBERS_ALL))
        return 1;
    while ((e = mdt_members_next(&token, &name, &it)) != MDT_ITEROVER) {
        unsigned t = MDT_TOKEN_TABLE(token);
        int k = t == MDT_TABLE_Field       ? 0
                : t == MDT_TABLE_MethodDef ? 1
                : t == MDT_TABLE_Property  ? 2
                                           : 3;
        uint32_t *nt = e ? NULL : talloc_realloc(m->mem, m->toks[k], uint32_t, m->n[k] + 1);
        if (e) {
            bad++;
            continue;
        }
        if (!nt)
            break;
        m->toks[k] = nt;
        nt[m->n[k]++] = token;
    }
    mdt_error_clear();
    return bad;
}

/* A token and its name: JSON {"token", "name"} under key; text one line. */
static int ref(mdi_state *st, const char *key, const char *label, uint32_t tok, uint32_t ctx)
{
    mdi_printer *p = st->out;
    char *name = mdi_name_in(st, p, mdi_image(st), tok, ctx);
    char msg[400];
    mdi_object_begin(p, key, NULL);
    mdi_token(p, "token", NULL, tok);
    if (name)
        mdi_str(p, "name", NULL, name);
    else
        mdi_error(p, "name", NULL, mdi_cell_error(msg, sizeof msg));
    mdi_metadata_name(st, NULL, mdi_image(st), tok);
    mdi_object_end(p);
    if (name)
        mdi_textf(p, label, "0x%08" PRIx32 " %s", tok, name);
    else
        mdi_textf(p, label, "0x%08" PRIx32 " <error: %s>", tok, msg);
    talloc_free(name);
    return name ? 0 : -1;
}

/* A member's own name (the Name column; JSON only: text shows it in the
 * declaration). */
static void member_name(mdi_printer *p, const mdt_row *r, unsigned col, int *bad)
{
    const char *s;
    size_t len;
    char msg[400];
    if (mdt_row_string(&s, &len, r, col) == 0) {
        char *copy = talloc_strndup(p, s, len);
        mdi_str(p, "name", NULL, copy);
        talloc_free(copy);
    } else {
        mdi_error(p, "name", NULL, mdi_cell_error(msg, sizeof msg));
        (*bad)++;
    }
}

/* A cell of the text a query made, or of the error it recorded (NULL),
 * counted in *bad. */
static void text_cell(mdi_state *st, const char *key, const char *label, char *text, int *bad)
{
    char msg[512];
    if (text) {
        mdi_str(st->out, key, label, text);
        talloc_free(text);
    } else {
        mdi_error(st->out, key, label, mdi_errmsg_here(msg, sizeof msg));
        (*bad)++;
    }
}

static void signature(mdi_state *st, const char *key, const char *label, uint32_t tok, int *bad)
{
    text_cell(st, key, label, mdi_sig_text(st, st->out, mdi_image(st), tok), bad);
}

/* A member's declaration, or the type's own: its name with its generic
 * parameters and their constraints (decl.c): the text column. */
static void declaration(mdi_state *st, uint32_t tok, int *bad)
{
    text_cell(st, "declaration", "declaration", mdi_declaration(st, st->out, mdi_image(st), tok),
              bad);
}

static void flags_cols(mdi_printer *p, uint32_t v, const mdi_flagname *names)
{
    char *w = mdi_flag_words(p, v, names);
    mdi_flags(p, "flags", NULL, v, names);
    mdi_str(p, "attributes", "attributes", w ? w : "");
    talloc_free(w);
}

static void member_list(mdi_state *st, const char *key, const char *label, const uint32_t *toks,
                        size_t n, int *bad)
{
    const mdt_image *img = mdi_image(st);
    mdi_printer *p = st->out;
    mdi_list_begin(p, key, label, "none", 0);
    for (size_t i = 0; i < n && !mdi_interrupted(st); i++) {
        unsigned t = MDT_TOKEN_TABLE(toks[i]);
        mdt_row r;
        char msg[400];
        mdi_item_begin(p);
        mdi_token(p, "token", "token", toks[i]);
        if (mdt_row_get(&r, img, t, MDT_TOKEN_RID(toks[i]))) {
            mdi_item_error(p, "error", mdi_cell_error(msg, sizeof msg));
            mdi_item_end(p);
            (*bad)++;
            continue;
        }
        switch (t) {
        case MDT_TABLE_Field:
            flags_cols(p, mdt_row_raw(&r, MDT_COL_Field_Flags), mdi_field_flags);
            member_name(p, &r, MDT_COL_Field_Name, bad);
            signature(st, "type", NULL, toks[i], bad);
            break;
        case MDT_TABLE_MethodDef:
            flags_cols(p, mdt_row_raw(&r, MDT_COL_MethodDef_Flags), mdi_method_flags);
            member_name(p, &r, MDT_COL_MethodDef_Name, bad);
            signature(st, "signature", NULL, toks[i], bad);
            break;
        case MDT_TABLE_Property:
            flags_cols(p, mdt_row_raw(&r, MDT_COL_Property_Flags), mdi_property_flags);
            member_name(p, &r, MDT_COL_Property_Name, bad);
            signature(st, "signature", NULL, toks[i], bad);
            break;
        default: {
            uint32_t et;
            char *name;
            flags_cols(p, mdt_row_raw(&r, MDT_COL_Event_EventFlags), mdi_event_flags);
            member_name(p, &r, MDT_COL_Event_Name, bad);
            if (mdt_row_token(&et, &r, MDT_COL_Event_EventType) == 0 &&
                (name = mdi_name(st, p, img, et))) {
                mdi_str(p, "type", NULL, name);
                talloc_free(name);
            } else {
                mdi_error(p, "type", NULL, mdi_cell_error(msg, sizeof msg));
                (*bad)++;
            }
            break;
        }
        }
        declaration(st, toks[i], bad);
        mdi_item_end(p);
    }
    mdi_list_end(p);
}

static void layout(mdi_state *st, uint32_t tok, uint32_t flags)
{
    const mdt_image *img = mdi_image(st);
    mdi_printer *p = st->out;
    const char *kind = (flags & 0x18) == 0x8    ? "sequential"
                       : (flags & 0x18) == 0x10 ? "explicit"
                                                : "auto";
    mdt_find f;
    uint32_t rid;
    mdi_object_begin(p, "layout", NULL);
    mdi_str(p, "kind", NULL, kind);
    if (mdt_table_rows(img, MDT_TABLE_ClassLayout) &&
        mdt_find_init(&f, img, MDT_TABLE_ClassLayout, MDT_COL_ClassLayout_Parent,
                      MDT_TOKEN_RID(tok)) == 0 &&
        mdt_find_next(&rid, &f) == 0) {
        mdt_row r;
        if (mdt_row_get(&r, img, MDT_TABLE_ClassLayout, rid) == 0) {
            uint32_t pack = mdt_row_raw(&r, MDT_COL_ClassLayout_PackingSize);
            uint32_t size = mdt_row_raw(&r, MDT_COL_ClassLayout_ClassSize);
            mdi_uint(p, "packing_size", NULL, pack);
            mdi_uint(p, "class_size", NULL, size);
            mdi_object_end(p);
            mdi_textf(p, "layout", "%s, pack %" PRIu32 ", size %" PRIu32, kind, pack, size);
            return;
        }
    }
    mdt_error_clear();
    mdi_none(p, "packing_size", NULL, NULL);
    mdi_none(p, "class_size", NULL, NULL);
    mdi_object_end(p);
    mdi_textf(p, "layout", "%s", kind);
}

static void generic_params(mdi_state *st, uint32_t tok, int *bad)
{
    const mdt_image *img = mdi_image(st);
    mdi_printer *p = st->out;
    size_t n;
    uint32_t *rids;
    if (mdt_generic_params(p, &rids, &n, img, tok) != 0)
        mdt_error_clear(); /* a type whose parameters cannot be read shows none */
    mdi_list_begin(p, "generic_params", "generic parameters", "none", 0);
    for (size_t i = 0; i < n; i++) {
        mdt_row r;
        const char *name;
        size_t len;
        char msg[400], *w, *cons;
        uint32_t crid, key;
        mdt_find f;
        mdi_item_begin(p);
        if (mdt_row_get(&r, img, MDT_TABLE_GenericParam, rids[i]) ||
            mdt_row_string(&name, &len, &r, MDT_COL_GenericParam_Name)) {
            mdi_item_error(p, "error", mdi_cell_error(msg, sizeof msg));
            mdi_item_end(p);
            (*bad)++;
            continue;
        }
        mdi_uint(p, "number", "number", mdt_row_raw(&r, MDT_COL_GenericParam_Number));
        w = talloc_strndup(p, name, len);
        mdi_str(p, "name", "name", w);
        talloc_free(w);
        mdi_token(p, "token", NULL, MDT_TOKEN(MDT_TABLE_GenericParam, rids[i]));
        flags_cols(p, mdt_row_raw(&r, MDT_COL_GenericParam_Flags), mdi_gparam_flags);
        /* Constraints: GenericParamConstraint rows owned by this one. */
        cons = talloc_strdup(p, "");
        mdi_list_begin(p, "constraints", NULL, NULL, MDI_LIST_SCALARS);
        key = rids[i];
        if (mdt_table_rows(img, MDT_TABLE_GenericParamConstraint) &&
            mdt_find_init(&f, img, MDT_TABLE_GenericParamConstraint,
                          MDT_COL_GenericParamConstraint_Owner, key) == 0)
            while (mdt_find_next(&crid, &f) == 0) {
                mdt_row cr;
                uint32_t ct;
                char *cn = NULL;
                if (mdt_row_get(&cr, img, MDT_TABLE_GenericParamConstraint, crid) == 0 &&
                    mdt_row_token(&ct, &cr, MDT_COL_GenericParamConstraint_Constraint) == 0)
                    cn = mdi_name_in(st, p, img, ct, tok);
                if (!cn) {
                    (*bad)++;
                    cn = talloc_asprintf(p, "<error: %s>", mdi_cell_error(msg, sizeof msg));
                }
                mdi_item_begin(p);
                mdi_str(p, "name", NULL, cn);
                mdi_item_end(p);
                if (cons)
                    cons = talloc_asprintf_append(cons, "%s%s", cons[0] ? ", " : "", cn);
                talloc_free(cn);
            }
        mdt_error_clear();
        mdi_list_end(p);
        mdi_textf(p, "constraints", "%s", cons ? cons : "");
        talloc_free(cons);
        mdi_item_end(p);
    }
    mdi_list_end(p);
    talloc_free(rids);
}

/* Rows of `table` whose column `col` holds `key`: their `out_col` tokens. */
static void related(mdi_state *st, const char *key_name, const char *label, unsigned table,
                    unsigned col, uint32_t key, unsigned out_col, int *bad)
{
    uint32_t key_owner = MDT_TOKEN(MDT_TABLE_TypeDef, key);
    const mdt_image *img = mdi_image(st);
    mdi_printer *p = st->out;
    mdt_find f;
    uint32_t rid;
    mdi_list_begin(p, key_name, label, "none", 0);
    if (mdt_table_rows(img, table) && mdt_find_init(&f, img, table, col, key) == 0)
        while (mdt_find_next(&rid, &f) == 0 && !mdi_interrupted(st)) {
            mdt_row r;
            uint32_t t;
            char *name = NULL, msg[400];
            mdi_item_begin(p);
            if (mdt_row_get(&r, img, table, rid) || mdt_row_token(&t, &r, out_col)) {
                mdi_item_error(p, "error", mdi_cell_error(msg, sizeof msg));
                (*bad)++;
            } else {
                mdi_token(p, "token", "token", t);
                if ((name = mdi_name_in(st, p, img, t, key_owner)))
                    mdi_str(p, "name", "name", name);
                else {
                    mdi_error(p, "name", "name", mdi_cell_error(msg, sizeof msg));
                    (*bad)++;
                }
                mdi_metadata_name(st, NULL, img, t);
                talloc_free(name);
            }
            mdi_item_end(p);
        }
    mdt_error_clear();
    mdi_list_end(p);
}

static int typedef_info(mdi_state *st, uint32_t tok, bool foreign)
{
    const mdt_image *img = mdi_image(st);
    mdi_module *m = mdi_current(st);
    mdi_printer *p = st->out;
    const mdi_index *ix = mdi_index_of(m);
    struct members mem = {p, {NULL}, {0}};
    uint32_t flags, base = 0, enclosing = 0;
    mdt_row r;
    char msg[400];
    int bad = 0;

    if (mdt_row_get(&r, img, MDT_TABLE_TypeDef, MDT_TOKEN_RID(tok)))
        return mdi_fail(st, "0x%08" PRIx32 ": %s", tok, mdi_cell_error(msg, sizeof msg));
    flags = mdt_row_raw(&r, MDT_COL_TypeDef_Flags);
    mdi_record_begin(p);
    mdi_token(p, "token", "token", tok);
    if (foreign) /* not the current module: say which */
        mdi_textf(p, "module", "#%u %s (%s)", m->id, m->name, m->path);
    {
        char *name = mdi_name(st, p, img, tok);
        if (name) {
            mdi_str(p, "name", "name", name);
        } else {
            mdi_error(p, "name", "name", mdi_cell_error(msg, sizeof msg));
            bad++;
        }
        talloc_free(name);
    }
    for (size_t i = 0; ix && i < ix->ntypes; i++)
        if (ix->types[i].token == tok)
            mdi_str(p, "metadata_name", NULL, ix->types[i].key);
    declaration(st, tok, &bad);
    mdi_str(p, "kind", "kind", mdi_kind_name(img, tok));
    mdi_flags(p, "flags", "flags", flags, mdi_type_flags);
    if (mdt_row_token(&base, &r, MDT_COL_TypeDef_Extends)) {
        mdi_error(p, "base", "base", mdi_cell_error(msg, sizeof msg));
        bad++;
    } else if (MDT_TOKEN_RID(base)) {
        bad += ref(st, "base", "base", base, tok) != 0;
    } else {
        mdi_none(p, "base", "base", "none");
    }
    if (mdt_typedef_enclosing(&enclosing, img, tok)) {
        mdi_error(p, "enclosing", "enclosing", mdi_cell_error(msg, sizeof msg));
        bad++;
    } else if (enclosing) {
        bad += ref(st, "enclosing", "enclosing", enclosing, 0) != 0;
    } else {
        mdi_none(p, "enclosing", "enclosing", NULL);
    }
    layout(st, tok, flags);
    generic_params(st, tok, &bad);
    related(st, "interfaces", "interfaces", MDT_TABLE_InterfaceImpl, MDT_COL_InterfaceImpl_Class,
            MDT_TOKEN_RID(tok), MDT_COL_InterfaceImpl_Interface, &bad);
    related(st, "nested", "nested types", MDT_TABLE_NestedClass, MDT_COL_NestedClass_EnclosingClass,
            MDT_TOKEN_RID(tok), MDT_COL_NestedClass_NestedClass, &bad);
    bad += collect(&mem, img, tok);
    member_list(st, "fields", "fields", mem.toks[0], mem.n[0], &bad);
    member_list(st, "methods", "methods", mem.toks[1], mem.n[1], &bad);
    member_list(st, "properties", "properties", mem.toks[2], mem.n[2], &bad);
    member_list(st, "events", "events", mem.toks[3], mem.n[3], &bad);
    mdi_record_end(p);
    for (int k = 0; k < 4; k++)
        talloc_free(mem.toks[k]);
    mdt_error_clear();
    if (bad)
        return mdi_fail(st, "0x%08" PRIx32 ": %d field%s could not be read", tok, bad,
                        bad == 1 ? "" : "s");
    return MDI_OK;
}

/* A reference or a specification: what it names; a TypeRef resolved over
 * the open modules, and shown in full when it lands on an open TypeDef. */
static int reference(mdi_state *st, uint32_t tok)
{
    const mdt_image *img = mdi_image(st);
    mdi_module *cur = mdi_current(st);
    unsigned t = MDT_TOKEN_TABLE(tok);
    mdt_resolution r = {0};
    mdt_modview *v = NULL;
    mdi_module *def = NULL;
    int bad = 0;
    if (t == MDT_TABLE_TypeRef && (v = mdi_view(st)) &&
        mdt_typeref_resolve(st, &r, NULL, v, cur->id, tok, NULL) == 0 && r.resolved)
        for (size_t i = 0; i < st->nmods; i++)
            if (st->mods[i]->id == r.module)
                def = st->mods[i];
    mdt_error_clear();
    mdi_record_begin(st->out);
    mdi_token(st->out, "token", "token", tok);
    bad += mdi_print_name(st, "name", "name", img, tok) != 0;
    mdi_str(st->out, "kind", "kind", t == MDT_TABLE_TypeRef ? "reference" : "specification");
    if (t == MDT_TABLE_TypeSpec)
        signature(st, "signature", "signature", tok, &bad);
    bool marked = t == MDT_TABLE_TypeRef && v && mdi_print_resolution(st, v, img, tok, &r, true);
    mdi_record_end(st->out);
    mdi_other_legend(st, marked);
    if (v)
        mdt_modview_release(v);
    if (bad)
        return mdi_fail(st, "0x%08" PRIx32 ": the name could not be read", tok);
    if (!def)
        return MDI_OK;
    /* The definition, from its module. */
    st->cur = def;
    mdi_about(st, def);
    bad = typedef_info(st, r.token, def != cur);
    st->cur = cur;
    mdi_about(st, cur);
    return bad;
}

/* C#'s array forms, `string[]`, `int[,]`, `byte[][]`: the length of the
 * element type's name (the text before the first of the trailing
 * `[...]` suffixes, each only commas inside), or 0 when there is none. */
static size_t array_element_len(const char *text)
{
    size_t n = strlen(text);
    bool any = false;
    while (n >= 2 && text[n - 1] == ']') {
        size_t i = n - 1;
        while (i > 0 && text[i - 1] == ',')
            i--;
        if (i == 0 || text[i - 1] != '[')
            break;
        n = i - 1;
        any = true;
    }
    return any && n > 0 ? n : 0;
}

static int run(mdi_state *st, size_t argc, const mdi_arg *argv)
{
    mdi_module *m, *cur = mdi_current(st);
    uint32_t tok;
    int status;
    const char *text = argv[0].text;
    size_t elen = array_element_len(text);
    char *element = elen ? talloc_strndup(st, text, elen) : NULL;
    if (elen) {
        /* an array: what it is, then its element type in full */
        if (!element)
            return mdi_fail(st, "out of memory");
        int e = mdi_arg_type(st, element, &m, &tok);
        if (e == 0) {
            mdi_record_begin(st->out);
            mdi_str(st->out, "name", "name", text);
            mdi_str(st->out, "kind", "kind", "array");
            mdi_str(st->out, "element", "element", element);
            mdi_str(st->out, "suffix", "suffix", text + elen);
            mdi_record_end(st->out);
        }
        talloc_free(element);
        if (e)
            return MDI_FAIL;
    } else if (mdi_arg_type(st, text, &m, &tok)) {
        return MDI_FAIL;
    }
    if (MDT_TOKEN_TABLE(tok) != MDT_TABLE_TypeDef)
        return reference(st, tok);
    /* A type of another open module: shown from there. */
    st->cur = m;
    mdi_about(st, m);
    status = typedef_info(st, tok, m != cur);
    st->cur = cur;
    mdi_about(st, cur);
    return status;
}

const mdi_cmd mdi_cmd_type = {
    .name = "type",
    .args = {{.name = "NAME", .kind = MDI_ARG_TYPE}},
    .flags = MDI_CMD_IMAGE,
    .summary = "a type in full: flags, base, interfaces, members with declarations",
    .help = "Shows a type the current module defines: token, name (with its\n"
            "generic parameters), its declaration (the generic parameters with\n"
            "their variance and constraints: C#'s `where T : class, new()`, or\n"
            "ILAsm's `<class .ctor T>` in the IL style), kind, flags, base type,\n"
            "enclosing type, layout\n"
            "(auto, sequential or explicit, with the ClassLayout packing and size),\n"
            "generic parameters with their flags and constraints, interfaces,\n"
            "nested types, and the fields, methods, properties and events with\n"
            "their attributes (ILAsm keywords), signatures and declarations (a\n"
            "generic method's with its constraints). Generic parameters are\n"
            "named in every list and declaration (`IComparable<T>`, `!T` in IL).\n"
            "\n"
            "NAME is looked up in every open module (the current module's type\n"
            "first when several have one): the metadata name, outermost type first,\n"
            "nested types after '+' (or '/'): `System.Collections.Generic.List`1`;\n"
            "or the name as the commands print it: `List<T>`, `List<>`,\n"
            "`Dictionary<TKey,TValue>`, `Dictionary<,>`; the arity suffix may be\n"
            "left out when that leaves one type (`System.Collections.Generic.List`),\n"
            "and the namespace too (`Dictionary`); case is ignored next. C#'s\n"
            "forms work too: `int`, `string` and the other keywords,\n"
            "`Dictionary<TKey,TValue>.Enumerator` ('.' for '+'), and last a nested\n"
            "type by its innermost names alone (`KeyCollection`: every enclosing\n"
            "type's is listed when several have one), and an array, `string[]`,\n"
            "`int[,]`: a line saying so, then its element type. A TypeDef, TypeRef or\n"
            "TypeSpec token of the current module\n"
            "will do too: a TypeRef shows where it resolves and, when an open\n"
            "module defines it, the definition in full.\n",
    .run = run,
};
