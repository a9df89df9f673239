/* Signature equivalence for MemberRef resolution (memberref.c; ECMA-335
 * II.23.2): structural over the decoded trees of the reference and of a
 * candidate definition. Element types and custom modifiers equal,
 * VAR/MVAR by number, named types equal when they resolve to the same
 * TypeDef of the same module, else by name (both sides unresolved:
 * assembly simple name and full name; one side unresolved: full name),
 * which the comparison records; a vararg call site matches its definition
 * by the part before SENTINEL. Recursion follows the decoded trees, whose
 * depth the decoder caps (MDT_SIG_MAX_DEPTH). Also the cheap test of a
 * MethodDef's signature head that spares most overloads a decode
 * (sigeq_int.h, inline: it runs on every candidate). */
#include "config.h"

#include <stdbool.h>
#include <string.h>

#include <mdtools/heaps.h>
#include <mdtools/nesting.h>
#include <mdtools/sig.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>

#include "typeref/dispatch_int.h"
#include "typeref/modset_int.h"
#include "typeref/sigeq_int.h"
#include "util/error.h"
#include "util/strbuf.h"

/* Assembly simple name and full type name of a TypeDef/TypeRef token of
 * module mi, without resolving: "Asm|Ns.Outer+Inner". 0 on success. */
static int static_name(const struct mdt_modview *v, uint32_t mi, uint32_t token, char *buf,
                       size_t len, bool with_asm)
{
    const struct mdt_image *img = v->mods[mi]->img;
    struct nm chain[MDT_RESOLVE_MAX_NEST];
    unsigned n = 0;
    const char *asmname = NULL;
    uint32_t t = token;
    for (;;) {
        mdt_row r;
        uint32_t next = 0;
        if (n == MDT_RESOLVE_MAX_NEST)
            return -1;
        if (MDT_TOKEN_TABLE(t) == MDT_TABLE_TypeDef) {
            if (mdt_row_get(&r, img, MDT_TABLE_TypeDef, MDT_TOKEN_RID(t)) ||
                mdt_row_string(&chain[n].name, NULL, &r, MDT_COL_TypeDef_TypeName) ||
                mdt_row_string(&chain[n].ns, NULL, &r, MDT_COL_TypeDef_TypeNamespace) ||
                mdt_typedef_enclosing(&next, img, t))
                return -1;
            n++;
            if (!next) {
                uint32_t a = v->asm_of[mi];
                asmname = a != TR_NONE ? v->mods[a]->ident.name : v->mods[mi]->name;
                break;
            }
            t = next;
        } else if (MDT_TOKEN_TABLE(t) == MDT_TABLE_TypeRef) {
            uint32_t scope;
            if (mdt_row_get(&r, img, MDT_TABLE_TypeRef, MDT_TOKEN_RID(t)) ||
                mdt_row_token(&scope, &r, MDT_COL_TypeRef_ResolutionScope) ||
                mdt_row_string(&chain[n].name, NULL, &r, MDT_COL_TypeRef_TypeName) ||
                mdt_row_string(&chain[n].ns, NULL, &r, MDT_COL_TypeRef_TypeNamespace))
                return -1;
            n++;
            if (MDT_TOKEN_TABLE(scope) == MDT_TABLE_TypeRef && MDT_TOKEN_RID(scope)) {
                t = scope;
                continue;
            }
            if (MDT_TOKEN_TABLE(scope) == MDT_TABLE_AssemblyRef && MDT_TOKEN_RID(scope)) {
                if (mdt_row_get(&r, img, MDT_TABLE_AssemblyRef, MDT_TOKEN_RID(scope)) ||
                    mdt_row_string(&asmname, NULL, &r, MDT_COL_AssemblyRef_Name))
                    return -1;
            } else {
                uint32_t a = v->asm_of[mi];
                asmname = a != TR_NONE ? v->mods[a]->ident.name : v->mods[mi]->name;
            }
            break;
        } else {
            return -1;
        }
    }
    sb key;
    sb_init_fixed(&key, buf, len);
    if (with_asm && asmname)
        sb_adds(&key, asmname);
    sb_addc(&key, '|');
    for (unsigned i = n; i-- > 0;) {
        sb_adds(&key, chain[i].ns);
        if (*chain[i].ns)
            sb_addc(&key, '.');
        sb_adds(&key, chain[i].name);
        if (i)
            sb_addc(&key, '+');
    }
    if (key.failed)
        return -1;
    /* Simple names compare case-insensitively: fold the assembly part. */
    for (char *p = buf; *p && *p != '|'; p++)
        if (*p >= 'A' && *p <= 'Z')
            *p = (char)(*p + 32);
    return 0;
}

static bool named_eq(struct tr_sigeq *k, uint32_t ta, uint32_t tb)
{
    struct tr_res ra, rb;
    char na[1024], nb[1024];
    bool ua, ub;
    if (tr_resolve_type(k->v, k->rmi, ta, &ra) || tr_resolve_type(k->v, k->dmi, tb, &rb))
        return false;
    if (ra.resolved && rb.resolved)
        return ra.module == rb.module && ra.token == rb.token;
    ua = !ra.resolved;
    ub = !rb.resolved;
    /* One side unresolved: compare full names only (the resolved side by
     * its definition); both: assembly simple names too. */
    if (ua && ub) {
        if (static_name(k->v, k->rmi, ta, na, sizeof na, true) ||
            static_name(k->v, k->dmi, tb, nb, sizeof nb, true))
            return false;
    } else {
        if (static_name(k->v, ua ? k->rmi : ra.module, ua ? ta : ra.token, na, sizeof na, false) ||
            static_name(k->v, ub ? k->dmi : rb.module, ub ? tb : rb.token, nb, sizeof nb, false))
            return false;
    }
    if (strcmp(na, nb))
        return false;
    k->by_name = true;
    return true;
}

bool tr_sigeq_type(struct tr_sigeq *k, const mdt_type *a, const mdt_type *b)
{
    if (!a || !b)
        return a == b;
    if (a->kind != b->kind || a->nmods != b->nmods)
        return false;
    for (uint16_t i = 0; i < a->nmods; i++)
        if (a->mods[i].required != b->mods[i].required ||
            !named_eq(k, a->mods[i].token, b->mods[i].token))
            return false;
    switch (a->kind) {
    case MDT_ELEMENT_TYPE_CLASS:
    case MDT_ELEMENT_TYPE_VALUETYPE: return named_eq(k, a->token, b->token);
    case MDT_ELEMENT_TYPE_VAR:
    case MDT_ELEMENT_TYPE_MVAR: return a->number == b->number;
    case MDT_ELEMENT_TYPE_PTR:
    case MDT_ELEMENT_TYPE_BYREF:
    case MDT_ELEMENT_TYPE_SZARRAY: return tr_sigeq_type(k, a->elem, b->elem);
    case MDT_ELEMENT_TYPE_ARRAY: {
        const mdt_array_shape *x = a->shape, *y = b->shape;
        if (!x || !y || x->rank != y->rank || x->nsizes != y->nsizes ||
            x->nlobounds != y->nlobounds)
            return false;
        for (uint32_t i = 0; i < x->nsizes; i++)
            if (x->sizes[i] != y->sizes[i])
                return false;
        for (uint32_t i = 0; i < x->nlobounds; i++)
            if (x->lobounds[i] != y->lobounds[i])
                return false;
        return tr_sigeq_type(k, a->elem, b->elem);
    }
    case MDT_ELEMENT_TYPE_GENERICINST:
        if (a->nargs != b->nargs || !tr_sigeq_type(k, a->elem, b->elem))
            return false;
        for (uint32_t i = 0; i < a->nargs; i++)
            if (!tr_sigeq_type(k, a->args[i], b->args[i]))
                return false;
        return true;
    case MDT_ELEMENT_TYPE_FNPTR:
        return a->method && b->method && tr_sigeq_method(k, a->method, b->method, false);
    case MDT_ELEMENT_TYPE_INTERNAL: return a->internal == b->internal;
    default: return true; /* primitives, TYPEDBYREF, OBJECT, STRING, ... */
    }
}

/* a: the reference (a call site when `callsite`), b: the definition. */
bool tr_sigeq_method(struct tr_sigeq *k, const mdt_method_sig *a, const mdt_method_sig *b,
                     bool callsite)
{
    uint32_t fixed = a->nparams;
    if ((a->callconv & ~MDT_CC_MASK) != (b->callconv & ~MDT_CC_MASK) ||
        (a->callconv & MDT_CC_MASK) != (b->callconv & MDT_CC_MASK) || a->gen_count != b->gen_count)
        return false;
    if (callsite && (a->callconv & MDT_CC_MASK) == MDT_CC_VARARG && a->sentinel != UINT32_MAX)
        fixed = a->sentinel;
    if (fixed != b->nparams || (!callsite && a->sentinel != b->sentinel))
        return false;
    if (!tr_sigeq_type(k, a->ret, b->ret))
        return false;
    for (uint32_t i = 0; i < fixed; i++)
        if (!tr_sigeq_type(k, a->params[i], b->params[i]))
            return false;
    return true;
}
