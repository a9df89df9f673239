/* What the IL style of the name printer adds to the others (ECMA-335
 * II.5 ILAsm syntax): the scope of a type from another assembly or module
 * (`[mscorlib]System.Object`, `[.module Other.netmodule]N.T`, II.7.3),
 * calling conventions as ILAsm spells them (II.15.3), and function
 * pointers as `method R *(A, B)` (II.14.5). Where IL only changes a word
 * (primitive names, `class`/`valuetype`, `/` between nested types, `!T`)
 * the other files pick it by style. */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <mdtools/assembly.h>
#include <mdtools/errors.h>
#include <mdtools/image.h>
#include <mdtools/names.h>
#include <mdtools/sig.h>
#include <mdtools/tables.h>

#include "generics/fmt_int.h"
#include "generics/gen_int.h"
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
        sb_addc(&f->out, '[');
        fmt_il_id(&f->out, name, strlen(name));
        sb_addc(&f->out, ']');
        return 0;
    case MDT_TABLE_ModuleRef:
        if ((e = mdt_row_get(&r, img, MDT_TABLE_ModuleRef, scope & 0xFFFFFF)) ||
            (e = mdt_row_string(&name, NULL, &r, MDT_COL_ModuleRef_Name)))
            return e;
        sb_adds(&f->out, "[.module ");
        fmt_il_id(&f->out, name, strlen(name));
        sb_addc(&f->out, ']');
        return 0;
    default: return 0;
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

/* ILAsm's identifiers (II.5.3): a name that is no ID (letters, digits, _ $ @
 * ` ?, not starting with a digit) or is a keyword of the assembler (its
 * directives' words and every instruction name) is written in single
 * quotes, ' and \ escaped; a dotted name is quoted component by component
 * (`System.'<>c'`), as ILDasm does, so that the assembler reads the same
 * dotted name back. `.ctor` and `.cctor` are keywords ILAsm takes as names. */
/* clang-format off */
static const char *const il_keywords[] = {
    "abstract", "algorithm", "alignment", "ansi", "any", "array", "as", "assembly", "assert",
    "at", "auto", "autochar", "beforefieldinit", "blob", "blob_object", "bool", "bstr",
    "bytearray", "byvalstr", "callconv", "carray", "catch", "cdecl", "cf", "char", "cil",
    "class", "clsid", "compilercontrolled", "constraint", "currency", "custom", "date",
    "decimal", "default", "demand", "deny", "error", "explicit", "extends", "extern",
    "false", "famandassem", "family", "famorassem", "fastcall", "fault", "field", "filetime",
    "filter", "final", "finally", "flags", "float", "float32", "float64", "forwardref",
    "fromunmanaged", "handler", "hidebysig", "hresult", "idispatch", "il", "illegal",
    "implements", "import", "in", "inheritcheck", "init", "initonly", "instance", "int",
    "int16", "int32", "int64", "int8", "interface", "internalcall", "iunknown", "lasterr",
    "lcid", "legacy", "library", "linkcheck", "literal", "lpstr", "lpstruct", "lptstr",
    "lpvoid", "lpwstr", "managed", "marshal", "mdtoken", "method", "modopt", "modreq",
    "native", "nested", "newslot", "noappdomain", "noinlining", "nomachine", "nomangle",
    "nometadata", "noncasdemand", "noncasinheritance", "noncaslinkdemand", "nooptimization",
    "noprocess", "not", "not_in_gc_heap", "notremotable", "notserialized", "null", "nullref",
    "object", "objectref", "opt", "optil", "out", "permitonly", "pinned", "pinvokeimpl",
    "prejitdeny", "prejitgrant", "preservesig", "private", "privatescope", "property",
    "protected", "public", "readonly", "record", "reqmin", "reqopt", "reqrefuse",
    "reqsecobj", "request", "retargetable", "retval", "rtspecialname", "runtime",
    "safearray", "sealed", "sequential", "serializable", "specialname", "static", "stdcall",
    "storage", "stored_object", "stream", "streamed_object", "strict", "string", "struct",
    "synchronized", "syschar", "sysstring", "tbstr", "thiscall", "tls", "to", "true", "type",
    "typedref", "uint", "uint16", "uint32", "uint64", "uint8", "unicode", "unmanaged",
    "unmanagedexp", "unsigned", "unused", "userdefined", "value", "valuetype", "vararg",
    "variant", "vector", "virtual", "void", "wchar", "winapi", "with", "wrapper",
    /* Instruction names (opcodes.def, written out here: this layer is below
     * il/): each whole name without a dot, the first word of one with dots
     * (`ldarg` of ldarg.0 reads as an opcode). */
    "add", "and", "arglist", "beq", "bge", "bgt", "ble", "blt", "bne", "box", "br", "break",
    "brfalse", "brtrue", "call", "calli", "callvirt", "castclass", "ceq", "cgt", "ckfinite",
    "clt", "constrained", "conv", "cpblk", "cpobj", "div", "dup", "endfilter", "endfinally",
    "initblk", "initobj", "isinst", "jmp", "ldarg", "ldarga", "ldc", "ldelem", "ldelema",
    "ldfld", "ldflda", "ldftn", "ldind", "ldlen", "ldloc", "ldloca", "ldnull", "ldobj",
    "ldsfld", "ldsflda", "ldstr", "ldtoken", "ldvirtftn", "leave", "localloc", "mkrefany",
    "mul", "neg", "newarr", "newobj", "no", "nop", "or", "pop", "refanytype",
    "refanyval", "rem", "ret", "rethrow", "shl", "shr", "sizeof", "starg", "stelem", "stfld",
    "stind", "stloc", "stobj", "stsfld", "sub", "switch", "tail", "throw", "unaligned", "unbox",
    "volatile", "xor",
};
/* clang-format on */

static bool is_keyword(const char *s, size_t n)
{
    for (size_t i = 0; i < sizeof il_keywords / sizeof *il_keywords; i++)
        if (strlen(il_keywords[i]) == n && memcmp(il_keywords[i], s, n) == 0)
            return true;
    return false;
}

static bool is_id(const char *s, size_t n)
{
    if (n == 0 || (s[0] >= '0' && s[0] <= '9'))
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '$' || c == '@' || c == '`' || c == '?'))
            return false;
    }
    return !is_keyword(s, n);
}

static void put_quoted(sb *out, const char *s, size_t n)
{
    sb_addc(out, '\'');
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\'' || s[i] == '\\')
            sb_addc(out, '\\');
        sb_addc(out, s[i]);
    }
    sb_addc(out, '\'');
}

void fmt_il_id(sb *out, const char *s, size_t n)
{
    if ((n == 5 && memcmp(s, ".ctor", 5) == 0) || (n == 6 && memcmp(s, ".cctor", 6) == 0)) {
        sb_add(out, s, n);
        return;
    }
    /* Components: a name with an empty one (`a..b`, `.x`, `x.`) is quoted
     * whole, as a dotted name cannot hold it. */
    bool empty = n == 0 || s[0] == '.' || s[n - 1] == '.';
    for (size_t i = 1; i < n && !empty; i++)
        empty = s[i] == '.' && s[i - 1] == '.';
    if (empty) {
        put_quoted(out, s, n);
        return;
    }
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && s[j] != '.')
            j++;
        if (i)
            sb_addc(out, '.');
        if (is_id(s + i, j - i))
            sb_add(out, s + i, j - i);
        else
            put_quoted(out, s + i, j - i);
        i = j + 1;
    }
}

void fmt_il_member_id(sb *out, const char *s, size_t n)
{
    if ((n == 5 && memcmp(s, ".ctor", 5) == 0) || (n == 6 && memcmp(s, ".cctor", 6) == 0)) {
        sb_add(out, s, n);
        return;
    }
    bool plain = n > 0 && s[0] != '.' && s[n - 1] != '.';
    for (size_t i = 0; i < n && plain;) {
        size_t j = i;
        while (j < n && s[j] != '.')
            j++;
        plain = is_id(s + i, j - i);
        i = j + 1;
    }
    if (plain)
        sb_add(out, s, n);
    else
        put_quoted(out, s, n);
}

/* ILAsm's QSTRING (II.5.2): the one writer of the library's quoted strings
 * (mdt_ilasm_string, a custom marshaler's strings in marshal.c, an ldstr
 * operand in il/text.c). The two spellings of a control byte differ on
 * purpose, and ILAsm reads both: an ldstr operand names a newline,
 * carriage return or tab as C does (`c_names`: `"a\\nb"`), as ILDasm names
 * a string's newline and tab, and as the shell's `il` always printed it;
 * a declaration's string (a pinvokeimpl module or entry, a marshaler's
 * name) keeps the one octal form mdt_ilasm_string documents (names.h:
 * `\\012`), its callers' output since. */
void mdt__ilasm_qstring(sb *out, const uint8_t *p, size_t n, bool c_names)
{
    sb_addc(out, '"');
    for (size_t i = 0; i < n; i++) {
        uint8_t c = p[i];
        if (c == '"' || c == '\\') {
            sb_addc(out, '\\');
            sb_addc(out, (char)c);
        } else if (c_names && (c == '\n' || c == '\r' || c == '\t')) {
            sb_addc(out, '\\');
            sb_addc(out, c == '\n' ? 'n' : c == '\r' ? 'r' : 't');
        } else if (c < 0x20 || c == 0x7f) {
            sb_addf(out, "\\%03o", c);
        } else {
            sb_addc(out, (char)c);
        }
    }
    sb_addc(out, '"');
}

int mdt_ilasm_string(void *mem_ctx, char **out, const char *s, size_t len)
{
    char stack[256];
    sb b;
    if (out)
        *out = NULL;
    if (!out || (!s && len))
        return mdt__fail_simple(MDT_EINVAL, "mdt_ilasm_string: no %s", out ? "string" : "output");
    sb_init_stack(&b, mem_ctx, stack, sizeof stack);
    mdt__ilasm_qstring(&b, (const uint8_t *)s, len, false);
    return sb_finish(&b, out);
}

int mdt_ilasm_name(void *mem_ctx, char **out, const char *name, size_t len)
{
    char stack[256];
    sb b;
    if (!out || !name)
        return mdt__fail_simple(MDT_EINVAL, "mdt_ilasm_name: no name");
    *out = NULL;
    sb_init_stack(&b, mem_ctx, stack, sizeof stack);
    fmt_il_member_id(&b, name, len);
    return sb_finish(&b, out);
}
