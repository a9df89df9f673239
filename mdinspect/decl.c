/* mdinspect's member declarations, as `type` and `token` show them: a
 * method's return type, name, generic parameters and parameters with
 * their names (ECMA-335 II.22.26 MethodDef, II.22.33 Param, II.22.20
 * GenericParam), a field's type and name with its literal value (II.22.15,
 * II.22.9 Constant), a property's type, name and index parameters
 * (II.22.34), an event's type and name (II.22.13). Types are named in the
 * session's style with generic parameters by name (`TKey`, not `!0`), a
 * generic method's with their constraints (mdt_generic_decl). */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <talloc.h>

#include <mdtools/errors.h>
#include <mdtools/sig.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>
#include <mdtools/value.h>

#include "cmd.h"

/* The names of a MethodDef's parameters by sequence (II.22.33: 1..n; 0 is
 * the return value), NULL where it has none; and their Param rids. */
static void param_names(void *mem, const mdt_image *img, uint32_t method, uint32_t n,
                        const char **names, uint32_t *rids)
{
    mdt_row r;
    uint32_t first, count;
    for (uint32_t i = 0; i <= n; i++)
        names[i] = NULL, rids[i] = 0;
    if (mdt_row_get(&r, img, MDT_TABLE_MethodDef, MDT_TOKEN_RID(method)) ||
        mdt_row_range(&first, &count, &r, MDT_COL_MethodDef_ParamList)) {
        mdt_error_clear();
        return;
    }
    for (uint32_t i = 0; i < count; i++) {
        uint32_t rid, seq;
        mdt_row p;
        const char *s;
        size_t len;
        if (mdt_range_item(&rid, img, MDT_TABLE_Param, first + i) ||
            mdt_row_get(&p, img, MDT_TABLE_Param, rid) ||
            mdt_row_string(&s, &len, &p, MDT_COL_Param_Name))
            continue;
        seq = mdt_row_raw(&p, MDT_COL_Param_Sequence);
        if (seq <= n && len && !names[seq]) {
            names[seq] = talloc_strndup(mem, s, len);
            rids[seq] = rid;
        }
    }
    mdt_error_clear();
}

/* " = VALUE" for a token with a default value (Constant row, or a
 * DecimalConstantAttribute), "" without one. */
static char *default_of(void *mem, const mdt_image *img, uint32_t token, const mdt_name_opts *o)
{
    mdt_value v;
    char *s = NULL, *out;
    if (mdt_value_default(mem, &v, img, token) != 0 || mdt_value_format(mem, &s, &v, o) != 0) {
        mdt_error_clear();
        return talloc_strdup(mem, "");
    }
    out = talloc_asprintf(mem, " = %s", s);
    talloc_free(s);
    return out;
}

static char *type_text(void *mem, const mdt_type *t, const mdt_name_opts *o)
{
    char *s = NULL;
    if (mdt_type_name(mem, &s, t, o) != 0)
        return NULL;
    return s;
}

/* A method: `RET Name<T>(P1 p1, ...)` then C#'s constraint clauses
 * (` where T : class`), or in the IL style with ILAsm's list
 * (`!!T As<class T>(object o)`): <mdtools/names.h>'s mdt_generic_decl. */
static char *method_decl(void *mem, const mdt_image *img, uint32_t token, const char *name,
                         const mdt_method_sig *m, const mdt_name_opts *o)
{
    const char **pn = talloc_zero_array(mem, const char *, m->nparams + 1);
    uint32_t *prid = talloc_zero_array(mem, uint32_t, m->nparams + 1);
    char *s, *ret, *gp = NULL, *where = NULL;
    mdt_name_opts go = *o;
    if (!pn || !prid)
        return NULL;
    param_names(mem, img, token, m->nparams, pn, prid);
    go.cache = NULL;
    if (mdt_generic_decl(mem, &gp, &where, img, token, &go))
        return NULL;
    if (!(ret = type_text(mem, m->ret, o)))
        return NULL;
    s = talloc_asprintf(mem, "%s%s %s%s(",
                        (m->callconv & MDT_CC_MASK) == MDT_CC_VARARG ? "vararg " : "", ret, name,
                        gp);
    for (uint32_t i = 0; s && i < m->nparams; i++) {
        char *t = type_text(mem, m->params[i], o);
        if (!t)
            return NULL;
        s = talloc_asprintf_append(s, "%s%s%s%s", i ? ", " : "", t, pn[i + 1] ? " " : "",
                                   pn[i + 1] ? pn[i + 1] : "");
        if (s && prid[i + 1])
            s = talloc_strdup_append(
                s, default_of(mem, img, MDT_TOKEN(MDT_TABLE_Param, prid[i + 1]), o));
    }
    if (s)
        s = talloc_strdup_append(s, ")");
    if (s && where[0])
        s = talloc_asprintf_append(s, " %s", where);
    return s;
}

/* A TypeDef: its name with its generic parameters as mdt_generic_decl
 * writes them, ILAsm's list in the IL style (``Decl.Holder`2<class T,.ctor
 * U>``), else C#'s `where` clauses after the name (`Decl.Holder<T,U> where
 * T : class where U : new()`). */
static char *type_decl(const mdi_state *st, void *mem, const mdt_image *img, uint32_t token)
{
    mdt_name_opts o = st->names;
    char *gp = NULL, *where = NULL, *name, *d = NULL;
    o.cache = NULL;
    o.gctx = NULL;
    if (mdt_generic_decl(mem, &gp, &where, img, token, &o) ||
        !(name = mdi_name(st, mem, img, token)))
        return NULL;
    /* The parameter list the full and friendly styles end the name with
     * (`Ns.Outer+Inner<T,U>`) is the declaration's, variance added:
     * printed once. */
    if (o.style != MDT_STYLE_IL && o.style != MDT_STYLE_REFLECTION && gp[0]) {
        char *lt = strrchr(name, '<');
        size_t n = strlen(name);
        if (lt && name[n - 1] == '>')
            *lt = '\0';
    }
    d = talloc_asprintf(mem, "%s%s%s%s", name, gp, where[0] ? " " : "", where);
    talloc_free(gp);
    talloc_free(where);
    talloc_free(name);
    return d;
}

char *mdi_declaration(const mdi_state *st, void *mem, const mdt_image *img, uint32_t token)
{
    unsigned t = MDT_TOKEN_TABLE(token);
    void *tmp = talloc_new(mem);
    mdt_name_opts o = st->names;
    mdt_generic_context g = {0};
    uint32_t owner = 0;
    const char *name;
    size_t len;
    mdt_row r;
    mdt_sig sig;
    char *out = NULL, *nm;
    unsigned name_col = t == MDT_TABLE_MethodDef  ? MDT_COL_MethodDef_Name
                        : t == MDT_TABLE_Field    ? MDT_COL_Field_Name
                        : t == MDT_TABLE_Property ? MDT_COL_Property_Name
                                                  : MDT_COL_Event_Name;
    if (!tmp)
        return NULL;
    if (t == MDT_TABLE_TypeDef) {
        out = type_decl(st, tmp, img, token);
        goto done;
    }
    if (t != MDT_TABLE_MethodDef && t != MDT_TABLE_Field && t != MDT_TABLE_Property &&
        t != MDT_TABLE_Event)
        goto done; /* not a type or member: the caller asks only for those */
    if (mdt_row_get(&r, img, t, MDT_TOKEN_RID(token)) ||
        mdt_row_string(&name, &len, &r, name_col) || mdt_token_owner(&owner, img, token))
        goto done;
    nm = talloc_strndup(tmp, name, len);
    g.img = img;
    g.type_owner = owner;
    g.method_owner = t == MDT_TABLE_MethodDef ? token : 0;
    o.flags |= MDT_NAME_PARAM_NAMES;
    o.gctx = &g;
    o.cache = NULL;
    if (t == MDT_TABLE_Event) {
        uint32_t et;
        char *tn;
        if (mdt_row_token(&et, &r, MDT_COL_Event_EventType) ||
            mdt_token_name(tmp, &tn, img, et, &o))
            goto done;
        out = talloc_asprintf(tmp, "%s %s", tn, nm);
        goto done;
    }
    if (mdt_sig_of_token(tmp, &sig, img, token))
        goto done;
    if (t == MDT_TABLE_MethodDef) {
        out = method_decl(tmp, img, token, nm, sig.method, &o);
    } else if (t == MDT_TABLE_Field) {
        char *ty = type_text(tmp, sig.type, &o);
        if (ty)
            out = talloc_asprintf(tmp, "%s %s%s", ty, nm, default_of(tmp, img, token, &o));
    } else {
        char *ty = type_text(tmp, sig.method->ret, &o);
        if (ty)
            out = talloc_asprintf(tmp, "%s %s", ty, nm);
        for (uint32_t i = 0; out && i < sig.method->nparams; i++) {
            char *p = type_text(tmp, sig.method->params[i], &o);
            out = p ? talloc_asprintf_append(out, "%s%s", i ? ", " : "[", p) : NULL;
        }
        if (out && sig.method->nparams)
            out = talloc_strdup_append(out, "]");
        if (out)
            out = talloc_strdup_append(out, default_of(tmp, img, token, &o));
    }
done:
    if (out)
        out = talloc_steal(mem, out);
    talloc_free(tmp);
    return out;
}
