/* Where a reference starts: the scope it names in its own module, before
 * anything is bound. Resolution (dispatch.c, engine.c) answers where a
 * reference ends; callers that report an unresolved reference ("which
 * AssemblyRef did it ask for?") need the start, which this walks without a
 * module set: the ResolutionScope chain of nested TypeRefs, a MemberRef's
 * class (through a generic instance's type), an ExportedType's
 * Implementation chain. */
#include "config.h"

#include <mdtools/errors.h>
#include <mdtools/image.h>
#include <mdtools/sig.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>
#include <mdtools/typeref.h>

#include "util/error.h"

/* Longer chains are damaged metadata (a cycle, or nesting nobody writes). */
#define MAX_STEPS 64u

/* The generic type of a GENERICINST TypeSpec, or the TypeSpec itself. */
static int typespec_head(const mdt_image *img, uint32_t token, uint32_t *head)
{
    uint64_t arena[256];
    mdt_sig s;
    uint64_t mark = mdt__err_mark();
    int e = mdt_sig_of_token_buf(arena, sizeof arena, &s, img, token);
    *head = token;
    if (e == MDT_ENOMEM) { /* an instantiation too large for the arena: no head */
        mdt__err_forget(mark);
        return 0;
    }
    if (e)
        return e;
    if (s.type && s.type->kind == MDT_ELEMENT_TYPE_GENERICINST && s.type->elem)
        *head = s.type->elem->token;
    return 0;
}

int mdt_token_scope(uint32_t *scope, const mdt_image *img, uint32_t token)
{
    if (!img || !scope)
        return mdt__fail_simple(MDT_EINVAL, "mdt_token_scope: no image or no output");
    *scope = 0;
    unsigned kind = MDT_TOKEN_TABLE(token);
    if (kind != MDT_TABLE_TypeRef && kind != MDT_TABLE_MemberRef && kind != MDT_TABLE_ExportedType)
        return mdt__fail_simple(MDT_EINVAL,
                                "token 0x%08x is not a TypeRef, MemberRef or ExportedType", token);
    uint32_t t = token;
    for (unsigned step = 0; step < MAX_STEPS; step++) {
        unsigned table = MDT_TOKEN_TABLE(t), col;
        mdt_row r;
        uint32_t next;
        int e;
        switch (table) {
        case MDT_TABLE_TypeRef: col = MDT_COL_TypeRef_ResolutionScope; break;
        case MDT_TABLE_MemberRef: col = MDT_COL_MemberRef_Class; break;
        case MDT_TABLE_ExportedType: col = MDT_COL_ExportedType_Implementation; break;
        case MDT_TABLE_TypeSpec:
            if ((e = typespec_head(img, t, &next)))
                return e;
            if (next == t) { /* not a generic instance: the TypeSpec is the scope */
                *scope = t;
                return 0;
            }
            t = next;
            continue;
        case MDT_TABLE_TypeDef:
        case MDT_TABLE_MethodDef:
            /* Defined here (a MemberRef's TypeDef or vararg MethodDef parent). */
            *scope = MDT_TOKEN(MDT_TABLE_Module, 1);
            return 0;
        case MDT_TABLE_AssemblyRef:
        case MDT_TABLE_ModuleRef:
        case MDT_TABLE_Module:
        case MDT_TABLE_File: *scope = t; return 0;
        default: /* a coded index cannot name anything else */
            return mdt__fail_simple(MDT_EBADIMAGE, "%s: 0x%08x names 0x%08x as its scope",
                                    mdt_image_name(img), token, t);
        }
        if ((e = mdt_row_get(&r, img, table, MDT_TOKEN_RID(t))) ||
            (e = mdt_row_token(&next, &r, col)))
            return e;
        if (!MDT_TOKEN_RID(next))
            return 0; /* a nil scope: the reference leaves it to ExportedType */
        t = next;
    }
    return mdt__fail_simple(MDT_EBADIMAGE,
                            "%s: the scope chain of 0x%08x is longer than %u steps (a cycle?)",
                            mdt_image_name(img), token, MAX_STEPS);
}

/* api-rename: off */
/* The old names (<mdtools/errors.h>, MDT_DEPRECATED_FOR), for programs
 * built against libmdtools 1:0:0. */
int mdt_ref_scope(uint32_t *scope, const mdt_image *img, uint32_t token)
{
    return mdt_token_scope(scope, img, token);
}
/* api-rename: on */
