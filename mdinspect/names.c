/* mdinspect's names: everything printed as a type or member name goes
 * through <mdtools/names.h> in the session's style (`set style`; the
 * project's doc/names.md), and generic parameter lists come from the
 * GenericParam table (ECMA-335 II.22.20). */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <talloc.h>

#include <mdtools/assembly.h>
#include <mdtools/errors.h>
#include <mdtools/sig.h>
#include <mdtools/members.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>

#include "cmd.h"
#include "common/naming.h"
#include "index.h"

/* `set style`'s words, in the order mdi_set_style reads them. */
const char *const mdi_style_names[] = {"full", "reflection", "il", "friendly", NULL};

int mdi_set_style(mdi_state *st, const char *value)
{
    long v = mdi_match(value, mdi_style_names, 4, true);
    if (v < 0)
        return -1;
    st->names.style = v == 1 ? MDT_STYLE_REFLECTION : v == 2 ? MDT_STYLE_IL : MDT_STYLE_FULL;
    st->names.flags = (v == 3 ? MDT_NAME_FRIENDLY : 0) | (st->names.flags & MDI_NAME_SIGNATURES);
    return 0;
}

/* The session's name options for img, with that module's name cache
 * (made on first use, remade when the style changes): a listing names the
 * same types over and over. */
static mdt_name_opts opts_for(const mdi_state *cst, const mdt_image *img)
{
    mdi_state *st = (mdi_state *)cst; /* the caches are not part of the state's value */
    mdt_name_opts o = st->names;
    mdi_module *m = st->last_named;
    o.cache = NULL;
    if (!m || m->img != img) {
        m = NULL;
        for (size_t i = 0; i < st->nmods && !m; i++)
            if (st->mods[i]->img == img)
                m = st->mods[i];
        st->last_named = m;
    }
    if (!m)
        return o;
    if (m->names && (m->names_style != o.style || m->names_flags != o.flags)) {
        talloc_free(m->names);
        m->names = NULL;
    }
    if (!m->names && mdt_name_cache_new(m, &m->names, img, o.style, o.flags) == 0) {
        m->names_style = o.style;
        m->names_flags = o.flags;
    }
    mdt_error_clear();
    o.cache = m->names;
    return o;
}

char *mdi_name(const mdi_state *st, void *mem, const mdt_image *img, uint32_t token)
{
    mdt_name_opts o = opts_for(st, img);
    char *out = NULL;
    if (mdt_token_name(mem, &out, img, token, &o) != 0)
        return NULL;
    return out;
}

const char *mdi_name_buf(const mdi_state *st, void *mem, char *buf, size_t size,
                         const mdt_image *img, uint32_t token)
{
    mdt_name_opts o = opts_for(st, img);
    char *out = NULL;
    int e = mdt_token_name_buf(buf, size, NULL, img, token, &o);
    if (e == 0)
        return buf;
    if (e != MDT_ETRUNC)
        return NULL;
    mdt_error_clear();
    return mdt_token_name(mem, &out, img, token, &o) == 0 ? out : NULL;
}

char *mdi_name_in(const mdi_state *st, void *mem, const mdt_image *img, uint32_t token,
                  uint32_t type_owner)
{
    mdt_name_opts o = st->names;
    mdt_generic_context g = {0};
    char *out = NULL;
    /* Parameters by name in every style (doc/names.md, "Declarations"):
     * `IComparable<T>`, ``IComparable`1[T]``, `IComparable`1<!T>`. */
    g.img = img;
    g.type_owner = type_owner;
    o.flags |= MDT_NAME_PARAM_NAMES;
    o.gctx = &g;
    o.cache = NULL;
    if (mdt_token_name(mem, &out, img, token, &o) != 0)
        return NULL;
    return out;
}

char *mdi_row_name(const mdi_state *st, void *mem, const mdt_image *img, uint32_t token)
{
    unsigned t = MDT_TOKEN_TABLE(token);
    const mdt_table_schema *s = mdt_table_schema_get(t);
    mdt_row r;
    const char *name;
    size_t len;
    int c;
    switch (t) {
    case MDT_TABLE_ModuleRef:
    case MDT_TABLE_AssemblyRef:
    case MDT_TABLE_File:
    case MDT_TABLE_Module:
    case MDT_TABLE_Assembly:
    case MDT_TABLE_Document: return mdi_name(st, mem, img, token);
    default:
        if (mdt_token_is_type_or_member(token))
            return mdi_name(st, mem, img, token);
        break;
    }
    if (!s || (c = mdt_column_by_name(t, "Name")) < 0)
        return talloc_strdup(mem, ""); /* the row has no name */
    if (mdt_row_get(&r, img, t, MDT_TOKEN_RID(token)) ||
        mdt_row_string(&name, &len, &r, (unsigned)c))
        return NULL;
    return talloc_strndup(mem, name, len);
}

void mdi_metadata_name(mdi_state *st, const char *key, const mdt_image *img, uint32_t token)
{
    char *s = NULL;
    /* the tokens that have one (the rest print no field), made as batch
     * --json makes it: the library's one rule */
    if (mdi_printer_format(st->out) != MDI_FMT_JSON || !MDT_TOKEN_RID(token) ||
        !mdt_token_is_type_or_member(token))
        return;
    if (mdt_token_metadata_name(st, &s, img, token, NULL) == 0)
        mdi_str(st->out, key ? key : "metadata_name", NULL, s);
    else
        mdi_none(st->out, key ? key : "metadata_name", NULL, NULL);
    mdt_error_clear();
    talloc_free(s);
}

int mdi_print_name(mdi_state *st, const char *key, const char *label, const mdt_image *img,
                   uint32_t token)
{
    char *s = mdi_name(st, st, img, token);
    char msg[400];
    if (!s) {
        mdi_error(st->out, key, label, mdi_cell_error(msg, sizeof msg));
        return -1;
    }
    mdi_str(st->out, key, label, s);
    mdi_metadata_name(st, NULL, img, token);
    talloc_free(s);
    return 0;
}

const char *mdi_sig_buf(const mdi_state *st, void *mem, char *buf, size_t size,
                        const mdt_image *img, uint32_t token)
{
    if (!(st->names.flags & MDT_NAME_FRIENDLY)) {
        uint64_t arena[256];
        mdt_sig sig;
        mdt_name_opts o = opts_for(st, img);
        if (mdt_sig_of_token_buf(arena, sizeof arena, &sig, img, token) == 0 &&
            mdt_sig_name_buf(buf, size, NULL, &sig, &o) == 0)
            return buf;
        mdt_error_clear(); /* too large for the buffers: allocated below */
    }
    return mdi_sig_text(st, mem, img, token);
}

char *mdi_sig_text(const mdi_state *st, void *mem, const mdt_image *img, uint32_t token)
{
    void *tmp;
    mdt_sig sig;
    mdt_name_opts o = opts_for(st, img);
    mdt_generic_context g = {0};
    char *out = NULL;
    if (!(st->names.flags & MDT_NAME_FRIENDLY)) {
        /* The common case without an allocation for the tree. */
        uint64_t arena[256];
        char buf[512];
        size_t len;
        int e = mdt_sig_of_token_buf(arena, sizeof arena, &sig, img, token);
        if (e == 0) {
            /* Only the name's MDT_ETRUNC means "longer than buf": the
             * decoder's means a damaged blob, and leaves sig empty. */
            if ((e = mdt_sig_name_buf(buf, sizeof buf, &len, &sig, &o)) == 0)
                return talloc_strndup(mem, buf, len);
            if (e != MDT_ETRUNC)
                return NULL;
            mdt_error_clear();
            return mdt_sig_name(mem, &out, &sig, &o) == 0 ? out : NULL;
        }
        if (e != MDT_ENOMEM)
            return NULL;
        mdt_error_clear(); /* a large tree: decoded below */
    }
    if (!(tmp = talloc_new(mem)))
        return NULL;
    if (st->names.flags & MDT_NAME_FRIENDLY) {
        /* T and U rather than !0 and !1, where the owners are known. */
        unsigned t = MDT_TOKEN_TABLE(token);
        uint32_t owner = 0;
        g.img = img;
        if (t == MDT_TABLE_MethodDef)
            g.method_owner = token;
        if (t == MDT_TABLE_MethodDef || t == MDT_TABLE_Field || t == MDT_TABLE_Property) {
            if (mdt_token_owner(&owner, img, token) == 0)
                g.type_owner = owner;
            mdt_error_clear();
        }
        o.flags |= MDT_NAME_PARAM_NAMES;
        o.gctx = &g;
    }
    /* the text only: one call, one allocation (mdt_sig_name_of_token) */
    if (mdt_sig_name_of_token(mem, &out, img, token, &o) != 0)
        out = NULL;
    talloc_free(tmp);
    return out;
}

/* The type arguments of a TypeSpec that is a generic instance, decoded
 * under mem; false for any other parent. */
static bool instance_args(void *mem, const mdt_image *img, uint32_t parent, uint32_t *n,
                          const mdt_type *const **args)
{
    mdt_sig ts;
    if (MDT_TOKEN_TABLE(parent) != MDT_TABLE_TypeSpec || mdt_sig_of_token(mem, &ts, img, parent) ||
        !ts.type || ts.type->kind != MDT_ELEMENT_TYPE_GENERICINST) {
        mdt_error_clear();
        return false;
    }
    *n = ts.type->nargs;
    *args = ts.type->args;
    return true;
}

char *mdi_inst_sig_text(const mdi_state *st, void *mem, const mdt_image *img, uint32_t token)
{
    void *tmp = talloc_new(mem);
    mdt_generic_context g = {0};
    mdt_name_opts o = st->names;
    uint32_t member = token, parent = 0;
    mdt_sig spec;
    mdt_row r;
    char *out = NULL;
    if (!tmp)
        return NULL;
    g.img = img;
    o.gctx = &g;
    o.flags |= MDT_NAME_PARAM_NAMES; /* what stays open is named, not numbered */
    o.cache = NULL;
    if (MDT_TOKEN_TABLE(token) == MDT_TABLE_MethodSpec) {
        if (mdt_sig_of_token(tmp, &spec, img, token) ||
            mdt_row_get(&r, img, MDT_TABLE_MethodSpec, MDT_TOKEN_RID(token)) ||
            mdt_row_token(&member, &r, MDT_COL_MethodSpec_Method))
            goto done;
        g.nmethod_args = spec.nargs;
        g.method_args = spec.args;
        if (MDT_TOKEN_TABLE(member) == MDT_TABLE_MethodDef)
            g.method_owner = member;
    }
    switch (MDT_TOKEN_TABLE(member)) {
    case MDT_TABLE_MemberRef:
        if (mdt_row_get(&r, img, MDT_TABLE_MemberRef, MDT_TOKEN_RID(member)) ||
            mdt_row_token(&parent, &r, MDT_COL_MemberRef_Class))
            goto done;
        instance_args(tmp, img, parent, &g.ntype_args, &g.type_args);
        break;
    case MDT_TABLE_MethodDef:
        if (mdt_token_owner(&parent, img, member))
            goto done;
        g.type_owner = parent;
        break;
    default: break;
    }
    if (mdt_sig_name_of_token(mem, &out, img, member, &o) != 0)
        out = NULL;
done:
    talloc_free(tmp);
    return out;
}
