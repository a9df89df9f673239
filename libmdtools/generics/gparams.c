/* The generic parameters of a declaration (mdt_generic_decl,
 * <mdtools/names.h>): a TypeDef's or MethodDef's GenericParam rows
 * (ECMA-335 II.22.20) in Number order (mdt_generic_params,
 * <mdtools/members.h>) with their flags (variance and the
 * special constraints, II.23.1.7, and 0x20 AllowByRefLike of .NET 9) and
 * their GenericParamConstraint rows (II.22.21), written as the style
 * writes a declaration (doc/names.md, "Declarations"): ILAsm's list in the
 * IL style, `<class T,+ U>` as ILDasm prints it; C#'s in the others, the
 * list `<T,out U>` (`[T,out U]` in the reflection style, as
 * MethodInfo.ToString() writes `As[T]`) and the clauses `where T : class,
 * new()`. Every type a
 * constraint names is printed by the name printer with the parameters by
 * name (`IComparable<T>`, `!T` in IL). C# writes `struct` and
 * `unmanaged` as a flag and a System.ValueType constraint (with a modreq
 * of UnmanagedType for `unmanaged`): those are recognised by the
 * constraint's metadata name and printed as the keyword. */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <talloc.h>

#include <mdtools/members.h>
#include <mdtools/names.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>

#include "generics/fmt_int.h"
#include "generics/opts_int.h"
#include "util/error.h"
#include "util/strbuf.h"

/* Constraints of one parameter: more is damage, not a declaration. */
#define MAX_CONSTRAINTS 4096u

enum {
    GP_VARIANCE = 0x3,
    GP_COVARIANT = 0x1,
    GP_CONTRAVARIANT = 0x2,
    GP_CLASS = 0x4,
    GP_VALUETYPE = 0x8,
    GP_CTOR = 0x10,
    GP_BYREFLIKE = 0x20
};

struct gp {
    uint32_t rid, number, flags;
};

/* What a System.ValueType constraint stands for in C#: 1 `struct`, 2
 * `unmanaged`, 0 neither (from the constraint's name as stored). */
static int valuetype_keyword(const mdt_image *img, uint32_t tok)
{
    static const mdt_name_opts stored = {MDT_STYLE_FULL, MDT_NAME_METADATA, MDT_NAME_OPTS_VERSION,
                                         NULL, NULL};
    char buf[160];
    uint64_t m = mdt__err_mark();
    if (mdt_token_name_buf(buf, sizeof buf, NULL, img, tok, &stored)) {
        mdt__err_forget(m); /* too long or unreadable: not the keyword */
        return 0;
    }
    if (!strcmp(buf, "System.ValueType"))
        return 1;
    if (!strcmp(buf, "System.ValueType modreq(System.Runtime.InteropServices.UnmanagedType)"))
        return 2;
    return 0;
}

/* One parameter: its constraints' tokens (at most MAX_CONSTRAINTS) into
 * *toks under mem, their number into *n. */
static int constraints_of(void *mem, uint32_t **toks, uint32_t *n, const mdt_image *img,
                          uint32_t rid)
{
    mdt_find fi;
    uint32_t crid;
    int e;
    *toks = NULL;
    *n = 0;
    if (!mdt_table_rows(img, MDT_TABLE_GenericParamConstraint))
        return 0;
    if ((e = mdt_find_init(&fi, img, MDT_TABLE_GenericParamConstraint,
                           MDT_COL_GenericParamConstraint_Owner, rid)))
        return e;
    while (mdt_find_next(&crid, &fi) == 0) { /* to MDT_ITEROVER, its only failure */
        mdt_row r;
        uint32_t t, *nt;
        if (*n == MAX_CONSTRAINTS)
            return mdt__fail_simple(MDT_EBADIMAGE, "GenericParam row %u: more than %u constraints",
                                    rid, MAX_CONSTRAINTS);
        if ((e = mdt_row_get(&r, img, MDT_TABLE_GenericParamConstraint, crid)) ||
            (e = mdt_row_token(&t, &r, MDT_COL_GenericParamConstraint_Constraint)))
            return e;
        if (!(nt = talloc_realloc(mem, *toks, uint32_t, *n + 1)))
            return mdt__fail_simple(MDT_ENOMEM, "out of memory reading constraints");
        *toks = nt;
        nt[(*n)++] = t;
    }
    return 0;
}

/* A constraint's type named in the style, parameters by name. */
static int put_constraint(sb *s, void *tmp, const mdt_image *img, uint32_t tok,
                          const mdt_name_opts *o)
{
    char *name;
    int e = mdt_token_name(tmp, &name, img, tok, o);
    if (e)
        return e;
    sb_adds(s, name);
    talloc_free(name);
    return 0;
}

/* One parameter in ILAsm's syntax (II.10.1.7), as ILDasm writes it:
 * variance, the special constraints, the constraint types, the name. */
static int put_il_param(sb *s, void *tmp, const mdt_image *img, const struct gp *g,
                        const char *name, size_t len, const uint32_t *cons, uint32_t ncons,
                        const mdt_name_opts *o)
{
    int e;
    if ((g->flags & GP_VARIANCE) == GP_COVARIANT)
        sb_adds(s, "+ ");
    else if ((g->flags & GP_VARIANCE) == GP_CONTRAVARIANT)
        sb_adds(s, "- ");
    if (g->flags & GP_CLASS)
        sb_adds(s, "class ");
    if (g->flags & GP_VALUETYPE)
        sb_adds(s, "valuetype ");
    if (g->flags & GP_BYREFLIKE)
        sb_adds(s, "byreflike ");
    if (g->flags & GP_CTOR)
        sb_adds(s, ".ctor ");
    for (uint32_t i = 0; i < ncons; i++) {
        sb_adds(s, i ? ", " : "(");
        if ((e = put_constraint(s, tmp, img, cons[i], o)))
            return e;
    }
    if (ncons)
        sb_adds(s, ") ");
    fmt_il_id(s, name, len);
    return 0;
}

/* One parameter's C# clause, `where T : class, IShape, new()`, when it
 * has a constraint; nothing otherwise. C#'s order: the primary constraint
 * (class, struct, unmanaged), the types in row order, new(), allows ref
 * struct. */
static int put_where(sb *s, void *tmp, const mdt_image *img, const struct gp *g, const char *name,
                     size_t len, const uint32_t *cons, uint32_t ncons, const mdt_name_opts *o)
{
    bool any = false;
    int vt = 0, e;
    if (g->flags & GP_VALUETYPE)
        for (uint32_t i = 0; i < ncons && !vt; i++)
            vt = valuetype_keyword(img, cons[i]);
#define ITEM(text)                                                                                 \
    do {                                                                                           \
        if (!any) {                                                                                \
            sb_adds(s, s->len ? " where " : "where ");                                             \
            sb_add(s, name, len);                                                                  \
            sb_adds(s, " : ");                                                                     \
        } else {                                                                                   \
            sb_adds(s, ", ");                                                                      \
        }                                                                                          \
        any = true;                                                                                \
        if (text)                                                                                  \
            sb_adds(s, (const char *)(text));                                                      \
    } while (0)
    if (g->flags & GP_CLASS)
        ITEM("class");
    if (g->flags & GP_VALUETYPE)
        ITEM(vt == 2 ? "unmanaged" : "struct");
    for (uint32_t i = 0; i < ncons; i++) {
        if (vt && valuetype_keyword(img, cons[i]))
            continue; /* said by struct / unmanaged */
        ITEM(NULL);
        if ((e = put_constraint(s, tmp, img, cons[i], o)))
            return e;
    }
    if ((g->flags & GP_CTOR) && !(g->flags & GP_VALUETYPE))
        ITEM("new()");
    if (g->flags & GP_BYREFLIKE)
        ITEM("allows ref struct");
#undef ITEM
    return 0;
}

int mdt_generic_decl(void *mem_ctx, char **params, char **where, const mdt_image *img,
                     uint32_t owner, const mdt_name_opts *opts)
{
    unsigned table = owner >> 24;
    mdt_name_opts o = {MDT_STYLE_FULL, 0, MDT_NAME_OPTS_VERSION, NULL, NULL};
    mdt_generic_context g = {0};
    uint32_t *rids;
    size_t n;
    void *tmp;
    sb ps, ws;
    int e;
    if (!params || !where || !img || (table != MDT_TABLE_TypeDef && table != MDT_TABLE_MethodDef))
        return mdt__fail_simple(MDT_EINVAL,
                                "mdt_generic_decl: not a TypeDef or MethodDef "
                                "token (0x%08x), or no output",
                                owner);
    *params = *where = NULL;
    if ((e = gen_opts_check(opts, "mdt_generic_decl")))
        return e;
    if (opts)
        o = *opts;
    /* Parameters by name, the owner's and (for a method) its type's. */
    g.img = img;
    if (table == MDT_TABLE_TypeDef) {
        g.type_owner = owner;
    } else {
        g.method_owner = owner;
        if ((e = mdt_token_owner(&g.type_owner, img, owner)))
            return e;
    }
    o.gctx = &g;
    o.flags |= MDT_NAME_PARAM_NAMES;
    o.flags &= ~(unsigned)MDT_NAME_METADATA;
    o.cache = NULL; /* names with a context are not the cache's */
    if (!(tmp = talloc_new(NULL)))
        return mdt__fail_simple(MDT_ENOMEM, "out of memory naming generic parameters");
    sb_init(&ps, tmp);
    sb_init(&ws, tmp);
    /* The owner's rows in Number order (members.h), as declared. */
    if ((e = mdt_generic_params(tmp, &rids, &n, img, owner)))
        goto done;
    for (size_t i = 0; i < n; i++) {
        mdt_row r;
        const char *name;
        size_t len;
        uint32_t *cons, ncons;
        struct gp gp = {rids[i], 0, 0};
        if ((e = mdt_row_get(&r, img, MDT_TABLE_GenericParam, gp.rid)) ||
            (e = mdt_row_string(&name, &len, &r, MDT_COL_GenericParam_Name)) ||
            (e = constraints_of(tmp, &cons, &ncons, img, gp.rid)))
            goto done;
        gp.number = mdt_row_raw(&r, MDT_COL_GenericParam_Number);
        gp.flags = mdt_row_raw(&r, MDT_COL_GenericParam_Flags);
        sb_adds(&ps, i ? "," : o.style == MDT_STYLE_REFLECTION ? "[" : "<");
        if (o.style == MDT_STYLE_IL) {
            e = put_il_param(&ps, tmp, img, &gp, name, len, cons, ncons, &o);
        } else {
            if ((gp.flags & GP_VARIANCE) == GP_COVARIANT)
                sb_adds(&ps, "out ");
            else if ((gp.flags & GP_VARIANCE) == GP_CONTRAVARIANT)
                sb_adds(&ps, "in ");
            sb_add(&ps, name, len);
            e = put_where(&ws, tmp, img, &gp, name, len, cons, ncons, &o);
        }
        talloc_free(cons);
        if (e)
            goto done;
        if (ps.len > MAX_NAME_LEN || ws.len > MAX_NAME_LEN) {
            e = fmt_too_long();
            goto done;
        }
    }
    if (n)
        sb_addc(&ps, o.style == MDT_STYLE_REFLECTION ? ']' : '>');
    if ((e = sb_finish(&ps, params)) == 0 && (e = sb_finish(&ws, where)) == 0) {
        talloc_steal(mem_ctx, *params);
        talloc_steal(mem_ctx, *where);
        talloc_free(tmp);
        return 0;
    }
done:
    talloc_free(tmp);
    *params = *where = NULL;
    return e;
}
