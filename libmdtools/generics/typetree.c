/* Printing a type tree (ECMA-335 II.23.2.12 Type, as decoded into
 * mdt_type by decode.c) node by node: the primitive element types in each
 * style (System.Int32, int, int32), pointers, byrefs and arrays with their
 * shapes (II.23.2.13 ArrayShape), generic parameters (II.23.2.12 VAR and
 * MVAR: substituted by the context's arguments, named from the
 * GenericParam table, or numbered !0/!!0), generic instantiations
 * (GENERICINST), custom modifiers (II.7.1.1 modreq/modopt). Types named by
 * token go to typenames.c, function pointers to members.c. The depth of
 * the walk is capped, and a name that can no longer grow stops it. */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>

#include <mdtools/names.h>
#include <mdtools/sig.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>

#include "generics/fmt_int.h"
#include "util/error.h"
#include "util/strbuf.h"

static const char *prim_name(int style, unsigned flags, unsigned kind)
{
    static const char *const full[] = {[MDT_ELEMENT_TYPE_VOID] = "System.Void",
                                       [MDT_ELEMENT_TYPE_BOOLEAN] = "System.Boolean",
                                       [MDT_ELEMENT_TYPE_CHAR] = "System.Char",
                                       [MDT_ELEMENT_TYPE_I1] = "System.SByte",
                                       [MDT_ELEMENT_TYPE_U1] = "System.Byte",
                                       [MDT_ELEMENT_TYPE_I2] = "System.Int16",
                                       [MDT_ELEMENT_TYPE_U2] = "System.UInt16",
                                       [MDT_ELEMENT_TYPE_I4] = "System.Int32",
                                       [MDT_ELEMENT_TYPE_U4] = "System.UInt32",
                                       [MDT_ELEMENT_TYPE_I8] = "System.Int64",
                                       [MDT_ELEMENT_TYPE_U8] = "System.UInt64",
                                       [MDT_ELEMENT_TYPE_R4] = "System.Single",
                                       [MDT_ELEMENT_TYPE_R8] = "System.Double",
                                       [MDT_ELEMENT_TYPE_STRING] = "System.String",
                                       [MDT_ELEMENT_TYPE_TYPEDBYREF] = "System.TypedReference",
                                       [MDT_ELEMENT_TYPE_I] = "System.IntPtr",
                                       [MDT_ELEMENT_TYPE_U] = "System.UIntPtr",
                                       [MDT_ELEMENT_TYPE_OBJECT] = "System.Object"};
    static const char *const cs[] = {[MDT_ELEMENT_TYPE_VOID] = "void",
                                     [MDT_ELEMENT_TYPE_BOOLEAN] = "bool",
                                     [MDT_ELEMENT_TYPE_CHAR] = "char",
                                     [MDT_ELEMENT_TYPE_I1] = "sbyte",
                                     [MDT_ELEMENT_TYPE_U1] = "byte",
                                     [MDT_ELEMENT_TYPE_I2] = "short",
                                     [MDT_ELEMENT_TYPE_U2] = "ushort",
                                     [MDT_ELEMENT_TYPE_I4] = "int",
                                     [MDT_ELEMENT_TYPE_U4] = "uint",
                                     [MDT_ELEMENT_TYPE_I8] = "long",
                                     [MDT_ELEMENT_TYPE_U8] = "ulong",
                                     [MDT_ELEMENT_TYPE_R4] = "float",
                                     [MDT_ELEMENT_TYPE_R8] = "double",
                                     [MDT_ELEMENT_TYPE_STRING] = "string",
                                     [MDT_ELEMENT_TYPE_TYPEDBYREF] = "TypedReference",
                                     [MDT_ELEMENT_TYPE_I] = "nint",
                                     [MDT_ELEMENT_TYPE_U] = "nuint",
                                     [MDT_ELEMENT_TYPE_OBJECT] = "object"};
    static const char *const il[] = {[MDT_ELEMENT_TYPE_VOID] = "void",
                                     [MDT_ELEMENT_TYPE_BOOLEAN] = "bool",
                                     [MDT_ELEMENT_TYPE_CHAR] = "char",
                                     [MDT_ELEMENT_TYPE_I1] = "int8",
                                     [MDT_ELEMENT_TYPE_U1] = "unsigned int8",
                                     [MDT_ELEMENT_TYPE_I2] = "int16",
                                     [MDT_ELEMENT_TYPE_U2] = "unsigned int16",
                                     [MDT_ELEMENT_TYPE_I4] = "int32",
                                     [MDT_ELEMENT_TYPE_U4] = "unsigned int32",
                                     [MDT_ELEMENT_TYPE_I8] = "int64",
                                     [MDT_ELEMENT_TYPE_U8] = "unsigned int64",
                                     [MDT_ELEMENT_TYPE_R4] = "float32",
                                     [MDT_ELEMENT_TYPE_R8] = "float64",
                                     [MDT_ELEMENT_TYPE_STRING] = "string",
                                     [MDT_ELEMENT_TYPE_TYPEDBYREF] = "typedref",
                                     [MDT_ELEMENT_TYPE_I] = "native int",
                                     [MDT_ELEMENT_TYPE_U] = "native unsigned int",
                                     [MDT_ELEMENT_TYPE_OBJECT] = "object"};
    if (kind > MDT_ELEMENT_TYPE_OBJECT)
        return NULL;
    if (style == MDT_STYLE_IL)
        return il[kind];
    if (flags & MDT_NAME_FRIENDLY)
        return cs[kind];
    return full[kind];
}

static int put_generic_param(struct fmt *f, const mdt_type *t)
{
    bool method = t->kind == MDT_ELEMENT_TYPE_MVAR;
    const mdt_generic_context *g = f->g;
    if (g) {
        uint32_t n = method ? g->nmethod_args : g->ntype_args;
        const mdt_type *const *args = method ? g->method_args : g->type_args;
        if (args && t->number < n) {
            /* Arguments are closed with respect to this context. */
            const mdt_generic_context *saved = f->g;
            f->g = NULL;
            int e = fmt_type(f, args[t->number]);
            f->g = saved;
            return e;
        }
        uint32_t owner = method ? g->method_owner : g->type_owner;
        /* The one row of that Number, found by its own walk rather than
         * mdt_generic_params (members.h), which allocates the whole sorted
         * list: this runs per parameter printed. */
        if ((f->flags & MDT_NAME_PARAM_NAMES) && owner && g->img) {
            uint32_t key;
            mdt_find fi;
            uint32_t rid;
            if (mdt_coded_encode(&key, MDT_CI_TypeOrMethodDef, owner) == 0 &&
                mdt_find_init(&fi, g->img, MDT_TABLE_GenericParam, MDT_COL_GenericParam_Owner,
                              key) == 0) {
                while (mdt_find_next(&rid, &fi) == 0) {
                    mdt_row r;
                    const char *name;
                    if (mdt_row_get(&r, g->img, MDT_TABLE_GenericParam, rid) == 0 &&
                        mdt_row_raw(&r, MDT_COL_GenericParam_Number) == t->number &&
                        mdt_row_string(&name, NULL, &r, MDT_COL_GenericParam_Name) == 0) {
                        /* ILAsm names a parameter !T / !!T (II.23.2.12). */
                        if (f->style == MDT_STYLE_IL) {
                            sb_adds(&f->out, method ? "!!" : "!");
                            fmt_il_id(&f->out, name, strlen(name));
                        } else {
                            sb_adds(&f->out, name);
                        }
                        return 0;
                    }
                }
            }
        }
    }
    sb_adds(&f->out, method ? "!!" : "!");
    fmt_put_u32(&f->out, t->number);
    return 0;
}

static void put_array_shape(struct fmt *f, const mdt_array_shape *s)
{
    if (f->style == MDT_STYLE_REFLECTION) {
        if (s->rank == 1)
            sb_adds(&f->out, "[*]");
        else {
            sb_addc(&f->out, '[');
            for (uint32_t i = 1; i < s->rank; i++)
                sb_addc(&f->out, ',');
            sb_addc(&f->out, ']');
        }
        return;
    }
    sb_addc(&f->out, '[');
    if (s->rank == 1 && s->nsizes == 0 && s->nlobounds == 0 && f->style == MDT_STYLE_FULL)
        sb_addc(&f->out, '*');
    for (uint32_t i = 0; i < s->rank; i++) {
        bool has_size = i < s->nsizes, has_lo = i < s->nlobounds;
        if (i)
            sb_addc(&f->out, ',');
        if (has_lo && has_size)
            sb_addf(&f->out, "%d...%lld", s->lobounds[i],
                    (long long)s->lobounds[i] + (long long)s->sizes[i] - 1);
        else if (has_lo)
            sb_addf(&f->out, "%d...", s->lobounds[i]);
        else if (has_size)
            sb_addf(&f->out, "%u", s->sizes[i]);
        else if (s->rank == 1 && f->style == MDT_STYLE_IL)
            sb_adds(&f->out, "...");
    }
    sb_addc(&f->out, ']');
    if (f->style == MDT_STYLE_FULL && (s->nsizes > s->rank || s->nlobounds > s->rank)) {
        sb_adds(&f->out, "{sizes=");
        for (uint32_t i = 0; i < s->nsizes; i++)
            sb_addf(&f->out, "%s%u", i ? "," : "", s->sizes[i]);
        sb_adds(&f->out, ";lo=");
        for (uint32_t i = 0; i < s->nlobounds; i++)
            sb_addf(&f->out, "%s%d", i ? "," : "", s->lobounds[i]);
        sb_addc(&f->out, '}');
    }
}

static int put_mods(struct fmt *f, const mdt_type *t)
{
    if (f->style == MDT_STYLE_REFLECTION)
        return 0;
    /* ILAsm writes a chain in the reverse of blob order: the assembler
     * emits the modifier written last first (II.7.1.1), so only the
     * reversed text assembles back to the same blob. */
    bool il = f->style == MDT_STYLE_IL;
    for (uint16_t k = 0; k < t->nmods; k++) {
        uint16_t i = il ? (uint16_t)(t->nmods - 1 - k) : k;
        int e;
        sb_adds(&f->out, t->mods[i].required ? " modreq(" : " modopt(");
        if ((e = fmt_token(f, t->img, t->mods[i].token, 0, true)))
            return e;
        sb_addc(&f->out, ')');
    }
    return 0;
}

int fmt_type(struct fmt *f, const mdt_type *t)
{
    int e = 0;
    if (!t)
        return mdt__fail_simple(MDT_EINVAL, "NULL type");
    if (f->out.failed) /* stop expanding once the name cannot be built */
        return f->out.too_long ? fmt_too_long() : 0; /* finish() reports it */
    if (++f->depth > 4 * MDT_SIG_MAX_DEPTH) {
        f->depth--;
        return mdt__fail_simple(MDT_EBADIMAGE, "type nested too deeply to print");
    }
    const char *prim;
    switch (t->kind) {
    case MDT_ELEMENT_TYPE_CLASS:
    case MDT_ELEMENT_TYPE_VALUETYPE: e = fmt_token(f, t->img, t->token, t->kind, true); break;
    case MDT_ELEMENT_TYPE_PTR:
    case MDT_ELEMENT_TYPE_BYREF:
    case MDT_ELEMENT_TYPE_SZARRAY:
        if (!(e = fmt_type(f, t->elem)))
            sb_adds(&f->out, t->kind == MDT_ELEMENT_TYPE_PTR     ? "*"
                             : t->kind == MDT_ELEMENT_TYPE_BYREF ? "&"
                                                                 : "[]");
        break;
    case MDT_ELEMENT_TYPE_ARRAY:
        if (!(e = fmt_type(f, t->elem)))
            put_array_shape(f, t->shape);
        break;
    case MDT_ELEMENT_TYPE_VAR:
    case MDT_ELEMENT_TYPE_MVAR: e = put_generic_param(f, t); break;
    case MDT_ELEMENT_TYPE_GENERICINST:
        if (!(e = fmt_token(f, t->elem->img, t->elem->token, t->elem->kind, false)))
            e = fmt_type_args(f, t->nargs, t->args);
        break;
    case MDT_ELEMENT_TYPE_FNPTR: e = fmt_fnptr(f, t->method); break;
    case MDT_ELEMENT_TYPE_INTERNAL:
        sb_addf(&f->out, "<internal 0x%llx>", (unsigned long long)t->internal);
        break;
    case MDT_ELEMENT_TYPE_CANON:
        sb_adds(&f->out, (f->flags & MDT_NAME_FRIENDLY) ? "__Canon" : "System.__Canon");
        break;
    default:
        if ((prim = prim_name(f->style, f->flags, t->kind)))
            sb_adds(&f->out, prim);
        else
            e = mdt__fail_simple(MDT_EINVAL, "element type 0x%02x has no name", t->kind);
    }
    if (!e)
        e = put_mods(f, t);
    f->depth--;
    return e;
}
