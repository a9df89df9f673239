/* Printing signatures and members: method and property signatures
 * (ECMA-335 II.23.2.1 MethodDefSig, II.23.2.2 MethodRefSig with its
 * vararg sentinel, II.23.2.5 PropertySig), function pointer types
 * (II.23.2.12 FNPTR), locals (II.23.2.6) and MethodSpec instantiations
 * (II.23.2.15), and the names of members: `Owner::name` for a MethodDef,
 * Field, Property or Event (owner from the list runs, md/owner.c), a
 * MemberRef (its Class: a type, a ModuleRef, or a vararg call site's
 * MethodDef), a MethodSpec (its method with `<args>`). */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <mdtools/names.h>
#include <mdtools/nesting.h>
#include <mdtools/sig.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>

#include "generics/fmt_int.h"
#include "util/error.h"
#include "util/strbuf.h"

/* A calling convention as C# function pointers spell it
 * (`delegate* unmanaged[Cdecl]<...>`), NULL for the default; an unknown
 * one as `callconv(N)` in buf. */
static const char *cc_word(unsigned cc, char *buf, size_t n)
{
    switch (cc) {
    case MDT_CC_DEFAULT: return NULL;
    case MDT_CC_C: return "unmanaged[Cdecl]";
    case MDT_CC_STDCALL: return "unmanaged[Stdcall]";
    case MDT_CC_THISCALL: return "unmanaged[Thiscall]";
    case MDT_CC_FASTCALL: return "unmanaged[Fastcall]";
    case MDT_CC_VARARG: return "vararg";
    case MDT_CC_UNMANAGED: return "unmanaged";
    default: snprintf(buf, n, "callconv(%u)", cc); return buf;
    }
}

/* Parameters; a vararg call site's sentinel (II.23.2.2) as `...` where it
 * stands, also after the last parameter. */
int fmt_params(struct fmt *f, const mdt_method_sig *m, const char *sep)
{
    int e = 0;
    for (uint32_t i = 0; i < m->nparams && !e; i++) {
        if (i)
            sb_adds(&f->out, sep);
        if (i == m->sentinel) {
            sb_adds(&f->out, "...");
            sb_adds(&f->out, sep);
        }
        e = fmt_type(f, m->params[i]);
    }
    if (!e && m->sentinel != UINT32_MAX && m->sentinel >= m->nparams) {
        if (m->nparams)
            sb_adds(&f->out, sep);
        sb_adds(&f->out, "...");
    }
    return e;
}

/* A function pointer type: C#'s `delegate*<A,R>` in the full style, its
 * ILAsm form in IL (ilasm.c); reflection shows only System.IntPtr, as
 * Type.ToString() does. */
int fmt_fnptr(struct fmt *f, const mdt_method_sig *m)
{
    char buf[24];
    const char *w;
    int e;
    if (f->style == MDT_STYLE_REFLECTION) {
        sb_adds(&f->out, "System.IntPtr");
        return 0;
    }
    if (f->style == MDT_STYLE_IL)
        return fmt_il_fnptr(f, m);
    sb_adds(&f->out, "delegate*");
    if (m->callconv & MDT_CC_HASTHIS)
        sb_adds(&f->out, " instance");
    if (m->callconv & MDT_CC_EXPLICITTHIS)
        sb_adds(&f->out, " explicit");
    if ((w = cc_word(m->callconv & MDT_CC_MASK, buf, sizeof buf)))
        sb_addf(&f->out, " %s", w);
    sb_addc(&f->out, '<');
    if ((e = fmt_params(f, m, ",")))
        return e;
    if (m->nparams || m->sentinel != UINT32_MAX)
        sb_addc(&f->out, ',');
    if ((e = fmt_type(f, m->ret)))
        return e;
    sb_addc(&f->out, '>');
    return 0;
}

/* `instance System.Void(System.Int32)`: what the calling convention says
 * comes before the return type; a generic method's arity as `generic<N>`
 * in the full and reflection styles, after it as ILAsm's `<[N]>`. */
static int method_sig(struct fmt *f, const mdt_method_sig *m)
{
    char buf[24];
    const char *w;
    bool il = f->style == MDT_STYLE_IL;
    int e;
    if (m->callconv & MDT_CC_HASTHIS)
        sb_adds(&f->out, "instance ");
    if (m->callconv & MDT_CC_EXPLICITTHIS)
        sb_adds(&f->out, "explicit ");
    if ((m->callconv & MDT_CC_MASK) != MDT_CC_PROPERTY &&
        (w = (il ? fmt_cc_word_il : cc_word)(m->callconv & MDT_CC_MASK, buf, sizeof buf)))
        sb_addf(&f->out, "%s ", w);
    if ((m->callconv & MDT_CC_GENERIC) && !il) {
        sb_add(&f->out, "generic<", 8);
        fmt_put_u32(&f->out, m->gen_count);
        sb_add(&f->out, "> ", 2);
    }
    if ((e = fmt_type(f, m->ret)))
        return e;
    /* ILAsm states a generic method's arity where its name would go
     * (II.15.4.1, genArity: `<[N]>`). */
    if ((m->callconv & MDT_CC_GENERIC) && il)
        sb_addf(&f->out, " <[%u]>", m->gen_count);
    sb_addc(&f->out, '(');
    if ((e = fmt_params(f, m, il ? ", " : ",")))
        return e;
    sb_addc(&f->out, ')');
    return 0;
}

/* A decoder that fails leaves its mdt_sig zeroed: kind METHOD with no
 * method. A caller that prints it anyway (mistaking the decoder's
 * MDT_ETRUNC for a buffer's) gets MDT_EINVAL, not a NULL dereference. */
static int not_decoded(void)
{
    return mdt__fail_simple(MDT_EINVAL, "signature not decoded (its decoding failed)");
}

int fmt_sig(struct fmt *f, const mdt_sig *s)
{
    int e = 0;
    if (!s)
        return not_decoded();
    switch (s->kind) {
    case MDT_SIG_METHOD:
    case MDT_SIG_PROPERTY: return s->method ? method_sig(f, s->method) : not_decoded();
    case MDT_SIG_FIELD:
    case MDT_SIG_TYPESPEC: return s->type ? fmt_type(f, s->type) : not_decoded();
    case MDT_SIG_LOCALS:
        if (!s->locals)
            return not_decoded();
        sb_addc(&f->out, '(');
        for (uint32_t i = 0; i < s->locals->count && !e; i++) {
            if (i)
                sb_adds(&f->out, f->style == MDT_STYLE_IL ? ", " : ",");
            e = fmt_type(f, s->locals->locals[i].type);
            if (s->locals->locals[i].pinned && f->style != MDT_STYLE_REFLECTION)
                sb_adds(&f->out, " pinned");
        }
        sb_addc(&f->out, ')');
        return e;
    case MDT_SIG_METHODSPEC:
        return s->args || !s->nargs ? fmt_type_args(f, s->nargs, s->args) : not_decoded();
    default: return mdt__fail_simple(MDT_EINVAL, "unknown signature kind %d", s->kind);
    }
}

static int put_parent_and_name(struct fmt *f, const struct mdt_image *img, uint32_t parent,
                               const char *name)
{
    int e = 0;
    /* ILAsm names a global (a member of <Module>, TypeDef 1) bare. */
    if (f->style == MDT_STYLE_IL && parent == ((uint32_t)MDT_TABLE_TypeDef << 24 | 1))
        parent = 0;
    if (parent) {
        switch (parent >> 24) {
        case MDT_TABLE_ModuleRef: {
            mdt_row r;
            const char *mod;
            if ((e = mdt_row_get(&r, img, MDT_TABLE_ModuleRef, parent & 0xFFFFFF)) ||
                (e = mdt_row_string(&mod, NULL, &r, MDT_COL_ModuleRef_Name)))
                return e;
            sb_addf(&f->out, "[module %s]", mod);
            break;
        }
        case MDT_TABLE_MethodDef: { /* vararg call site: the method's owner */
            uint32_t owner;
            if ((e = mdt_member_owner(&owner, img, parent)))
                return e;
            if (owner)
                e = fmt_token(f, img, owner, 0, true);
            break;
        }
        default: e = fmt_token(f, img, parent, 0, true);
        }
        if (e)
            return e;
        sb_adds(&f->out, "::");
    }
    if (f->style == MDT_STYLE_IL)
        fmt_il_member_id(&f->out, name, strlen(name));
    else
        sb_adds(&f->out, name);
    return 0;
}

/* `(A,B)`: the parameter types of a method's signature (MDT_NAME_SIGNATURE),
 * ", " between them in IL as in its type arguments. What the generic
 * parameters stand for: `spec`'s arguments for the method's own (a
 * MethodSpec), the class's from the caller's context, else from the
 * instantiation a MemberRef's parent TypeSpec names; with nothing to
 * substitute, a MethodDef's are named from its owners when
 * MDT_NAME_PARAM_NAMES asks. `parent`: the MethodDef's owner or the
 * MemberRef's class. A signature that is not a method's (a MemberRef of a
 * field) adds nothing. */
static int put_signature(struct fmt *f, const struct mdt_image *img, uint32_t token,
                         uint32_t parent, const mdt_sig *spec)
{
    const mdt_generic_context *outer = f->g;
    mdt_generic_context g = {0};
    uint64_t arena[256], parena[128];
    mdt_sig s, ps;
    int e = fmt_sig_of_token(f, arena, sizeof arena, &s, img, token);
    if (e || s.kind != MDT_SIG_METHOD || !s.method)
        return e;
    if (outer)
        g = *outer;
    else
        g.img = img;
    if (spec) {
        g.nmethod_args = spec->nargs;
        g.method_args = spec->args;
    }
    if (!outer && (token >> 24) == MDT_TABLE_MethodDef) {
        g.method_owner = token;
        g.type_owner = parent;
    }
    if (!g.ntype_args && (token >> 24) == MDT_TABLE_MemberRef &&
        (parent >> 24) == MDT_TABLE_TypeSpec &&
        fmt_sig_of_token(f, parena, sizeof parena, &ps, img, parent) == 0 && ps.type &&
        ps.type->kind == MDT_ELEMENT_TYPE_GENERICINST) {
        g.ntype_args = ps.type->nargs;
        g.type_args = ps.type->args;
    }
    f->g = &g;
    sb_addc(&f->out, '(');
    if (!(e = fmt_params(f, s.method, f->style == MDT_STYLE_IL ? ", " : ",")))
        sb_addc(&f->out, ')');
    f->g = outer;
    return e;
}

/* The class of a MethodDef or MemberRef, for put_signature (0: none). */
static uint32_t method_parent(const struct mdt_image *img, uint32_t method)
{
    mdt_row r;
    uint32_t parent = 0;
    if ((method >> 24) == MDT_TABLE_MemberRef
            ? mdt_row_get(&r, img, MDT_TABLE_MemberRef, method & 0xFFFFFF) ||
                  mdt_row_token(&parent, &r, MDT_COL_MemberRef_Class)
            : mdt_member_owner(&parent, img, method))
        return 0;
    return parent;
}

int fmt_member(struct fmt *f, const struct mdt_image *img, uint32_t token)
{
    unsigned table = token >> 24;
    uint32_t rid = token & 0xFFFFFF, parent = 0;
    mdt_row r;
    const char *name = NULL;
    int e;
    if ((e = mdt_row_get(&r, img, table, rid)))
        return e;
    switch (table) {
    case MDT_TABLE_MethodDef:
        if ((e = mdt_row_string(&name, NULL, &r, MDT_COL_MethodDef_Name)) ||
            (e = mdt_member_owner(&parent, img, token)))
            return e;
        break;
    case MDT_TABLE_Field:
        if ((e = mdt_row_string(&name, NULL, &r, MDT_COL_Field_Name)) ||
            (e = mdt_member_owner(&parent, img, token)))
            return e;
        break;
    case MDT_TABLE_MemberRef:
        if ((e = mdt_row_string(&name, NULL, &r, MDT_COL_MemberRef_Name)) ||
            (e = mdt_row_token(&parent, &r, MDT_COL_MemberRef_Class)))
            return e;
        if ((parent & 0xFFFFFF) == 0)
            parent = 0;
        break;
    case MDT_TABLE_Property:
    case MDT_TABLE_Event:
        if ((e = mdt_row_string(&name, NULL, &r,
                                table == MDT_TABLE_Property ? MDT_COL_Property_Name
                                                            : MDT_COL_Event_Name)) ||
            (e = mdt_token_owner(&parent, img, token)))
            return e;
        break;
    case MDT_TABLE_MethodSpec: {
        uint32_t method;
        mdt_sig s;
        if ((e = mdt_row_token(&method, &r, MDT_COL_MethodSpec_Method)))
            return e;
        if ((method & 0xFFFFFF) == 0)
            return fmt_bad(img, "MethodSpec", rid, "MethodSpec %u has a nil method (row %u)", rid,
                           rid);
        uint64_t arena[256];
        unsigned flags = f->flags;
        f->flags &= ~(unsigned)MDT_NAME_SIGNATURE; /* the list follows the arguments */
        e = fmt_member(f, img, method);
        f->flags = flags;
        if (e || (e = fmt_sig_of_token(f, arena, sizeof arena, &s, img, token)) ||
            (e = fmt_type_args(f, s.nargs, s.args)))
            return e;
        return flags & MDT_NAME_SIGNATURE
                   ? put_signature(f, img, method, method_parent(img, method), &s)
                   : 0;
    }
    default: return mdt__fail_simple(MDT_EINVAL, "token 0x%08x is not a member", token);
    }
    if ((e = put_parent_and_name(f, img, parent, name)))
        return e;
    if ((f->flags & MDT_NAME_SIGNATURE) &&
        (table == MDT_TABLE_MethodDef || table == MDT_TABLE_MemberRef))
        return put_signature(f, img, token, parent, NULL);
    return 0;
}
