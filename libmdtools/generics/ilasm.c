/* What the IL style of the name printer adds to the others (ECMA-335
 * II.5 ILAsm syntax): the scope of a type from another assembly or module
 * (`[mscorlib]System.Object`, `[.module Other.netmodule]N.T`, II.7.3),
 * calling conventions as ILAsm spells them (II.15.3), and function
 * pointers as `method R *(A, B)` (II.14.5). Where IL only changes a word
 * (primitive names, `class`/`valuetype`, `/` between nested types, `!T`)
 * the other files pick it by style. */
#include "config.h"

#include <stdio.h>

#include <mdtools/assembly.h>
#include <mdtools/errors.h>
#include <mdtools/image.h>
#include <mdtools/names.h>
#include <mdtools/sig.h>
#include <mdtools/tables.h>

#include "generics/fmt_int.h"
#include "util/error.h"
#include "util/strbuf.h"

/* IL prefix for a TypeRef's outermost scope: [Assembly] or [.module X]. */
int fmt_il_typeref_scope(struct fmt *f, const struct mdt_image *img, uint32_t scope)
{
    mdt_row r;
    const char *name;
    int e;
    switch (scope >> 24) {
    case MDT_TABLE_AssemblyRef:
        if ((e = mdt_row_get(&r, img, MDT_TABLE_AssemblyRef, scope & 0xFFFFFF)) ||
            (e = mdt_row_string(&name, NULL, &r, MDT_COL_AssemblyRef_Name)))
            return e;
        sb_addf(&f->out, "[%s]", name);
        return 0;
    case MDT_TABLE_ModuleRef:
        if ((e = mdt_row_get(&r, img, MDT_TABLE_ModuleRef, scope & 0xFFFFFF)) ||
            (e = mdt_row_string(&name, NULL, &r, MDT_COL_ModuleRef_Name)))
            return e;
        sb_addf(&f->out, "[.module %s]", name);
        return 0;
    default:
        return 0;
    }
}

const char *fmt_cc_word_il(unsigned cc, char *buf, size_t n)
{
    switch (cc) {
    case MDT_CC_DEFAULT: return NULL;
    case MDT_CC_C: return "unmanaged cdecl";
    case MDT_CC_STDCALL: return "unmanaged stdcall";
    case MDT_CC_THISCALL: return "unmanaged thiscall";
    case MDT_CC_FASTCALL: return "unmanaged fastcall";
    case MDT_CC_VARARG: return "vararg";
    case MDT_CC_UNMANAGED: return "unmanaged";
    default: snprintf(buf, n, "callconv(%u)", cc); return buf;
    }
}

void fmt_il_typedef_scope(struct fmt *f, const struct mdt_image *img)
{
    mdt_identity id;
    uint64_t mark = mdt__err_mark();
    if (mdt_assembly_identity(&id, img) == 0) {
        sb_addf(&f->out, "[%s]", id.name);
    } else {
        mdt__err_forget(mark);
        sb_addf(&f->out, "[.module %s]", mdt_image_name(img));
    }
}

int fmt_il_fnptr(struct fmt *f, const mdt_method_sig *m)
{
    char buf[24];
    const char *w;
    int e;
    sb_adds(&f->out, "method ");
    if (m->callconv & MDT_CC_HASTHIS)
        sb_adds(&f->out, "instance ");
    if (m->callconv & MDT_CC_EXPLICITTHIS)
        sb_adds(&f->out, "explicit ");
    if ((w = fmt_cc_word_il(m->callconv & MDT_CC_MASK, buf, sizeof buf)))
            sb_addf(&f->out, "%s ", w);
    if ((e = fmt_type(f, m->ret)))
        return e;
    sb_adds(&f->out, " *(");
    if ((e = fmt_params(f, m, ", ")))
        return e;
    sb_addc(&f->out, ')');
    return 0;
}
