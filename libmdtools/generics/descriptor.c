/* Runtime instantiations and portable type-argument descriptors (doc/names.md).
 * A descriptor names a type independently of any process: a TypeDef in a
 * module identified by its MVID (ECMA-335 II.22.30) with its own type
 * arguments, a primitive (II.23.1.16), an array, pointer or byref of a
 * descriptor, or System.__Canon. Descriptors become type trees (the
 * GENERICINST, SZARRAY, ARRAY, PTR, BYREF shapes of II.23.2.12), names
 * (`MyClass<System.Int32>::Foo<System.Single>`), and text in both
 * directions (the text in desc_text.c). */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <talloc.h>

#include <mdtools/assembly.h>
#include <mdtools/descriptor.h>
#include <mdtools/heaps.h>
#include <mdtools/members.h>
#include <mdtools/names.h>
#include <mdtools/nesting.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>

#include "generics/desc_int.h"
#include "generics/gen_int.h"
#include "generics/opts_int.h"

#define MAX_RANK MDT_SIG_MAX_RANK

static int nomem(void)
{
    return mdt__fail_simple(MDT_ENOMEM, "out of memory");
}

/* --- generic parameters and base types --- */

/* VALUETYPE when the TypeDef derives from System.ValueType or System.Enum
 * (and is not System.Enum itself), else CLASS (II.13). */
static uint8_t typedef_kind(const mdt_image *img, uint32_t td)
{
    mdt_row r;
    uint32_t base;
    if (mdt_row_get(&r, img, MDT_TABLE_TypeDef, MDT_TOKEN_RID(td)) ||
        mdt_row_token(&base, &r, MDT_COL_TypeDef_Extends)) {
        mdt__err_forget_one();
        return MDT_ELEMENT_TYPE_CLASS;
    }
    if (mdt__type_is(img, td, "System", "Enum"))
        return MDT_ELEMENT_TYPE_CLASS;
    if (mdt__type_is(img, base, "System", "ValueType") || mdt__type_is(img, base, "System", "Enum"))
        return MDT_ELEMENT_TYPE_VALUETYPE;
    return MDT_ELEMENT_TYPE_CLASS;
}

/* A descriptor's TypeDef: an image and a TypeDef row of it. */
int mdt__desc_check_typedef(const mdt_image *img, uint32_t token)
{
    if (!img)
        return mdt__fail_simple(MDT_EINVAL, "descriptor of TypeDef 0x%08x without an image", token);
    if (MDT_TOKEN_TABLE(token) != MDT_TABLE_TypeDef || MDT_TOKEN_RID(token) == 0 ||
        MDT_TOKEN_RID(token) > mdt_table_rows(img, MDT_TABLE_TypeDef))
        return mdt__fail_simple(MDT_EINVAL, "0x%08x is not a TypeDef of %s", token,
                                mdt_image_name(img));
    return 0;
}

/* --- descriptor -> type tree --- */

static mdt_type *new_type(void *ctx, uint8_t kind, const mdt_image *img)
{
    mdt_type *t = talloc_zero(ctx, mdt_type);
    if (t) {
        t->kind = kind;
        t->img = img;
    }
    return t;
}

static int to_type(void *ctx, const mdt_type **out, const mdt_desc *d, unsigned depth);

/* A TypeDef with `n` arguments: CLASS / VALUETYPE, or GENERICINST of it. */
static int typedef_type(void *ctx, const mdt_type **out, const mdt_image *img, uint32_t token,
                        uint32_t n, const mdt_desc *const *args, unsigned depth)
{
    size_t want;
    int e;
    /* The owner's GenericParam rows counted (members.h): a table that
     * does not read is its error, not a count of 0. */
    if ((e = mdt__desc_check_typedef(img, token)) ||
        (e = mdt_generic_params(NULL, NULL, &want, img, token)))
        return e;
    if (n != want)
        return mdt__fail_simple(MDT_EINVAL,
                                "TypeDef 0x%08x of %s has %zu generic parameters, "
                                "%u arguments given",
                                token, mdt_image_name(img), want, n);
    mdt_type *g = new_type(ctx, typedef_kind(img, token), img);
    if (!g)
        return nomem();
    g->token = token;
    if (!n) {
        *out = g;
        return 0;
    }
    mdt_type *t = new_type(ctx, MDT_ELEMENT_TYPE_GENERICINST, img);
    const mdt_type **a = talloc_array(ctx, const mdt_type *, n);
    if (!t || !a)
        return nomem();
    for (uint32_t i = 0; i < n; i++) {
        if (!args || !args[i])
            return mdt__fail_simple(MDT_EINVAL, "type argument %u is missing", i);
        if ((e = to_type(ctx, &a[i], args[i], depth + 1)))
            return e;
    }
    t->elem = g;
    t->nargs = n;
    t->args = a;
    *out = t;
    return 0;
}

static int to_type(void *ctx, const mdt_type **out, const mdt_desc *d, unsigned depth)
{
    mdt_type *t;
    int e;
    if (depth > MDT_SIG_MAX_DEPTH)
        return mdt__fail_simple(MDT_EINVAL, "descriptor nested deeper than %u", MDT_SIG_MAX_DEPTH);
    switch (d->kind) {
    case MDT_DESC_PRIM:
        if (!mdt__desc_prim_name(d->prim))
            return mdt__fail_simple(MDT_EINVAL, "element type 0x%02x is not a primitive", d->prim);
        if (!(t = new_type(ctx, d->prim, NULL)))
            return nomem();
        *out = t;
        return 0;
    case MDT_DESC_CANON:
        if (!(t = new_type(ctx, MDT_ELEMENT_TYPE_CANON, NULL)))
            return nomem();
        *out = t;
        return 0;
    case MDT_DESC_TYPEDEF:
        return typedef_type(ctx, out, d->img, d->token, d->nargs, d->args, depth);
    case MDT_DESC_SZARRAY:
    case MDT_DESC_ARRAY:
    case MDT_DESC_PTR:
    case MDT_DESC_BYREF: {
        static const uint8_t kinds[] = {[MDT_DESC_SZARRAY] = MDT_ELEMENT_TYPE_SZARRAY,
                                        [MDT_DESC_ARRAY] = MDT_ELEMENT_TYPE_ARRAY,
                                        [MDT_DESC_PTR] = MDT_ELEMENT_TYPE_PTR,
                                        [MDT_DESC_BYREF] = MDT_ELEMENT_TYPE_BYREF};
        if (!d->elem)
            return mdt__fail_simple(MDT_EINVAL, "array, pointer or byref descriptor without an "
                                                "element");
        if (!(t = new_type(ctx, kinds[d->kind], NULL)))
            return nomem();
        if (d->kind == MDT_DESC_ARRAY) {
            mdt_array_shape *s = talloc_zero(ctx, mdt_array_shape);
            if (!s)
                return nomem();
            if (d->rank < 1 || d->rank > MAX_RANK)
                return mdt__fail_simple(MDT_EINVAL, "array rank %u is not 1..%u", d->rank,
                                        MAX_RANK);
            s->rank = d->rank;
            t->shape = s;
        }
        if ((e = to_type(ctx, &t->elem, d->elem, depth + 1)))
            return e;
        *out = t;
        return 0;
    }
    default: return mdt__fail_simple(MDT_EINVAL, "descriptor of unknown kind %u", d->kind);
    }
}

int mdt_desc_to_type(void *mem_ctx, const mdt_type **out, const mdt_desc *d)
{
    void *tmp = talloc_new(mem_ctx);
    int e;
    if (!tmp)
        return nomem();
    if ((e = to_type(tmp, out, d, 0))) {
        talloc_free(tmp);
        *out = NULL;
        return e;
    }
    return 0;
}

/* --- instantiated names --- */

/* MDT_NAME_SIGNATURE: `(A,B)`, the method's parameter types with the
 * instantiation's arguments for the generic parameters of its class and its
 * own (fmt_params' layout, built from the public printer). */
static int inst_signature(void *tmp, sb *b, const mdt_image *img, uint32_t method, uint32_t owner,
                          const mdt_type *owner_type, uint32_t nmargs, const mdt_type **margs,
                          const mdt_name_opts *o)
{
    mdt_generic_context g = {0};
    mdt_name_opts po = *o;
    const mdt_method_sig *m;
    const char *sep = o->style == MDT_STYLE_IL ? ", " : ",";
    mdt_sig sig;
    char *s;
    int e;
    if (owner_type && owner_type->kind == MDT_ELEMENT_TYPE_GENERICINST) {
        g.ntype_args = owner_type->nargs;
        g.type_args = owner_type->args;
    }
    g.nmethod_args = nmargs;
    g.method_args = margs;
    g.img = img;
    g.type_owner = owner;
    g.method_owner = method;
    po.gctx = &g;
    if ((e = mdt_sig_of_token(tmp, &sig, img, method)))
        return e;
    if (sig.kind != MDT_SIG_METHOD || !(m = sig.method))
        return 0;
    sb_addc(b, '(');
    for (uint32_t i = 0; i < m->nparams; i++) {
        if (i)
            sb_adds(b, sep);
        if (i == m->sentinel) {
            sb_adds(b, "...");
            sb_adds(b, sep);
        }
        if ((e = mdt_type_name(tmp, &s, m->params[i], &po)))
            return e;
        sb_adds(b, s);
    }
    if (m->sentinel != UINT32_MAX && m->sentinel >= m->nparams) {
        if (m->nparams)
            sb_adds(b, sep);
        sb_adds(b, "...");
    }
    sb_addc(b, ')');
    return 0;
}

int mdt_inst_name(void *mem_ctx, char **out, const mdt_image *img, uint32_t token,
                  uint32_t ntype_args, const mdt_desc *const *type_args, uint32_t nmethod_args,
                  const mdt_desc *const *method_args, const mdt_name_opts *opts)
{
    void *tmp = talloc_new(NULL);
    const mdt_type *owner_type = NULL;
    uint32_t owner = token;
    const char *mname = NULL;
    const mdt_type **margs = NULL;
    char *s;
    sb b;
    int e;
    if (!tmp)
        return nomem();
    if ((e = gen_opts_check(opts, "mdt_inst_name"))) {
        talloc_free(tmp);
        return e;
    }
    mdt_name_opts o = {opts ? opts->style : MDT_STYLE_FULL, opts ? opts->flags : 0,
                       MDT_NAME_OPTS_VERSION, NULL, opts ? opts->cache : NULL};
    bool refl = o.style == MDT_STYLE_REFLECTION;
    if (MDT_TOKEN_TABLE(token) == MDT_TABLE_MethodDef) {
        mdt_row r;
        if ((e = mdt_row_get(&r, img, MDT_TABLE_MethodDef, MDT_TOKEN_RID(token))) ||
            (e = mdt_row_string(&mname, NULL, &r, MDT_COL_MethodDef_Name)) ||
            (e = mdt_member_owner(&owner, img, token)))
            goto done;
        size_t want;
        if ((e = mdt_generic_params(NULL, NULL, &want, img, token)))
            goto done;
        if (want != nmethod_args) {
            e = mdt__fail_simple(MDT_EINVAL,
                                 "MethodDef 0x%08x has %zu generic parameters, %u arguments given",
                                 token, want, nmethod_args);
            goto done;
        }
    } else if (MDT_TOKEN_TABLE(token) != MDT_TABLE_TypeDef) {
        e = mdt__fail_simple(MDT_EINVAL, "0x%08x is not a TypeDef or MethodDef", token);
        goto done;
    } else if (nmethod_args) {
        e = mdt__fail_simple(MDT_EINVAL, "method type arguments given for TypeDef 0x%08x", token);
        goto done;
    }
    sb_init(&b, mem_ctx);
    if (owner) {
        if ((e = typedef_type(tmp, &owner_type, img, owner, ntype_args, type_args, 0)) ||
            (e = mdt_type_name(tmp, &s, owner_type, &o))) {
            sb_discard(&b);
            goto done;
        }
        sb_adds(&b, s);
    } else if (ntype_args) { /* a global method has no type to instantiate */
        e = mdt__fail_simple(MDT_EINVAL, "type arguments given for global method 0x%08x", token);
        sb_discard(&b);
        goto done;
    }
    if (mname) {
        if (owner)
            sb_adds(&b, "::");
        sb_adds(&b, mname);
        if (nmethod_args) {
            sb_addc(&b, refl ? '[' : '<');
            if (!(margs = talloc_array(tmp, const mdt_type *, nmethod_args)))
                e = nomem();
            for (uint32_t i = 0; i < nmethod_args && !e; i++) {
                const mdt_type *t;
                if (!method_args || !method_args[i]) {
                    e = mdt__fail_simple(MDT_EINVAL, "method type argument %u is missing", i);
                    break;
                }
                if ((e = to_type(tmp, &t, method_args[i], 1)) ||
                    (e = mdt_type_name(tmp, &s, t, &o)))
                    break;
                margs[i] = t;
                if (i)
                    sb_addc(&b, ',');
                sb_adds(&b, s);
            }
            sb_addc(&b, refl ? ']' : '>');
            if (e) {
                sb_discard(&b);
                goto done;
            }
        }
        if ((o.flags & MDT_NAME_SIGNATURE) &&
            (e = inst_signature(tmp, &b, img, token, owner, owner_type, nmethod_args, margs, &o))) {
            sb_discard(&b);
            goto done;
        }
    }
    e = sb_finish(&b, out);
done:
    talloc_free(tmp);
    return e;
}
