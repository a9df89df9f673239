/* Marshalling descriptors (ECMA-335 II.23.4, with the native types the
 * CoreCLR augments add): a field's or parameter's FieldMarshal blob as
 * ILAsm spells it inside `marshal(...)` (II.7.4's nativeType), the way
 * ILDasm writes it, so that an assembler reading the text back stores the
 * same blob: `lpwstr`, `fixed sysstring [32]`, `fixed array [4] int32`,
 * `int32[10 + 1]`, `safearray bstr`, `custom ("Type", "cookie")`.
 *
 * A blob is read through one bounded reader; a native type or a variant
 * type ILAsm has no word for is MDT_EUNSUPPORTED rather than a guess, and
 * bytes after a complete descriptor are MDT_EBADIMAGE: either way the
 * caller knows the text would not store the same blob. */
#include "config.h"

#include <string.h>
#include <talloc.h>

#include <mdtools/heaps.h>
#include <mdtools/names.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>

#include "generics/gen_int.h"

/* NATIVE_TYPE_* codes (II.23.4 and the CoreCLR augments). */
enum {
    NT_BOOLEAN = 0x02,
    NT_I1 = 0x03,
    NT_U1 = 0x04,
    NT_I2 = 0x05,
    NT_U2 = 0x06,
    NT_I4 = 0x07,
    NT_U4 = 0x08,
    NT_I8 = 0x09,
    NT_U8 = 0x0a,
    NT_R4 = 0x0b,
    NT_R8 = 0x0c,
    NT_CURRENCY = 0x0f,
    NT_BSTR = 0x13,
    NT_LPSTR = 0x14,
    NT_LPWSTR = 0x15,
    NT_LPTSTR = 0x16,
    NT_FIXEDSYSSTRING = 0x17,
    NT_IUNKNOWN = 0x19,
    NT_IDISPATCH = 0x1a,
    NT_STRUCT = 0x1b,
    NT_INTF = 0x1c,
    NT_SAFEARRAY = 0x1d,
    NT_FIXEDARRAY = 0x1e,
    NT_INT = 0x1f,
    NT_UINT = 0x20,
    NT_BYVALSTR = 0x22,
    NT_ANSIBSTR = 0x23,
    NT_TBSTR = 0x24,
    NT_VARIANTBOOL = 0x25,
    NT_FUNC = 0x26,
    NT_ASANY = 0x28,
    NT_ARRAY = 0x2a,
    NT_LPSTRUCT = 0x2b,
    NT_CUSTOMMARSHALER = 0x2c,
    NT_ERROR = 0x2d,
    NT_IINSPECTABLE = 0x2e,
    NT_HSTRING = 0x2f,
    NT_LPUTF8STR = 0x30,
    NT_MAX = 0x50
};

/* The native types that are one word (or two) and nothing else. */
static const char *simple_word(uint8_t t)
{
    switch (t) {
    case NT_BOOLEAN: return "bool";
    case NT_I1: return "int8";
    case NT_U1: return "unsigned int8";
    case NT_I2: return "int16";
    case NT_U2: return "unsigned int16";
    case NT_I4: return "int32";
    case NT_U4: return "unsigned int32";
    case NT_I8: return "int64";
    case NT_U8: return "unsigned int64";
    case NT_R4: return "float32";
    case NT_R8: return "float64";
    case NT_CURRENCY: return "currency";
    case NT_BSTR: return "bstr";
    case NT_LPSTR: return "lpstr";
    case NT_LPWSTR: return "lpwstr";
    case NT_LPTSTR: return "lptstr";
    case NT_STRUCT: return "struct";
    case NT_INT: return "int";
    case NT_UINT: return "unsigned int";
    case NT_BYVALSTR: return "byvalstr";
    case NT_ANSIBSTR: return "ansi bstr";
    case NT_TBSTR: return "tbstr";
    case NT_VARIANTBOOL: return "variant bool";
    case NT_FUNC: return "method";
    case NT_ASANY: return "as any";
    case NT_LPSTRUCT: return "lpstruct";
    case NT_ERROR: return "error";
    case NT_IINSPECTABLE: return "iinspectable";
    case NT_HSTRING: return "hstring";
    case NT_LPUTF8STR: return "lputf8str";
    default: return NULL;
    }
}

/* VARENUM values a safearray names (II.7.4's variantType). */
static const char *variant_word(uint32_t vt)
{
    switch (vt) {
    case 1: return "null";
    case 2: return "int16";
    case 3: return "int32";
    case 4: return "float32";
    case 5: return "float64";
    case 6: return "currency";
    case 7: return "date";
    case 8: return "bstr";
    case 9: return "idispatch";
    case 10: return "error";
    case 11: return "bool";
    case 12: return "variant";
    case 13: return "iunknown";
    case 14: return "decimal";
    case 16: return "int8";
    case 17: return "unsigned int8";
    case 18: return "unsigned int16";
    case 19: return "unsigned int32";
    case 20: return "int64";
    case 21: return "unsigned int64";
    case 22: return "int";
    case 23: return "unsigned int";
    case 24: return "void";
    case 25: return "hresult";
    case 26: return "*";
    case 27: return "safearray";
    case 28: return "carray";
    case 29: return "userdefined";
    case 30: return "lpstr";
    case 31: return "lpwstr";
    case 36: return "record";
    case 64: return "filetime";
    case 65: return "blob";
    case 66: return "stream";
    case 67: return "storage";
    case 68: return "streamed_object";
    case 69: return "stored_object";
    case 70: return "blob_object";
    case 71: return "cf";
    case 72: return "clsid";
    default: return NULL;
    }
}

/* A SerString-like string of a custom marshaler: compressed length, then
 * the bytes, as an ILAsm quoted string (" and \ escaped; a control byte
 * has no spelling ILAsm reads back the same). */
static int put_qstring(rd *r, sb *out, const char *what)
{
    uint32_t n;
    const uint8_t *p;
    int e;
    if ((e = rd_compressed(r, &n, what)) || (e = rd_bytes(r, &p, n, what)))
        return e;
    for (uint32_t i = 0; i < n; i++)
        if (p[i] < 0x20 || p[i] == 0x7f)
            return rd_fail(r, MDT_EUNSUPPORTED, "%s: control byte 0x%02x has no ILAsm spelling",
                           what, p[i]);
    mdt__ilasm_qstring(out, p, n, false);
    return 0;
}

static int put_native(rd *r, sb *out, unsigned depth);

/* An array's element type, then `[`, its sizes, `]` (II.23.4: ArrayElemType
 * [ParamNum [NumElem [Flags]]]; Flags bit 0 says ParamNum was given). */
static int put_array(rd *r, sb *out, unsigned depth)
{
    uint8_t elem;
    uint32_t param = 0, num = 0, flags = 0;
    int e, has_param = 0, has_num = 0;
    if (rd_left(r)) {
        if ((e = rd_u8(r, &elem, "array element type")))
            return e;
        if (elem != NT_MAX) {
            if (elem == NT_ARRAY)
                return rd_fail(r, MDT_EBADIMAGE, "an array of arrays in a marshalling descriptor");
            r->pos--;
            if ((e = put_native(r, out, depth + 1)))
                return e;
        }
    }
    if (rd_left(r)) {
        if ((e = rd_compressed(r, &param, "array size parameter")))
            return e;
        has_param = 1;
    }
    if (rd_left(r)) {
        if ((e = rd_compressed(r, &num, "array element count")))
            return e;
        has_num = 1;
    }
    if (rd_left(r)) {
        if ((e = rd_compressed(r, &flags, "array flags")))
            return e;
        /* ParamNum was not given: only the count is written */
        if (!(flags & 1))
            has_param = 0;
    }
    /* ILAsm stores what it reads back: [N] is NumElem, [+P] ParamNum; a
     * ParamNum of 0 with no count and no flags is how `[]` is stored. */
    sb_adds(out, "[");
    if (has_num && num)
        sb_addf(out, "%u", num);
    if (has_param)
        sb_addf(out, "%s+ %u", has_num && num ? " " : "", param);
    sb_adds(out, "]");
    return 0;
}

static int put_native(rd *r, sb *out, unsigned depth)
{
    uint8_t t;
    uint32_t n;
    int e;
    if (depth > 2)
        return rd_fail(r, MDT_EBADIMAGE, "marshalling descriptor nested too deep");
    if ((e = rd_u8(r, &t, "native type")))
        return e;
    const char *w = simple_word(t);
    if (w) {
        sb_adds(out, w);
        return 0;
    }
    switch (t) {
    case NT_FIXEDSYSSTRING:
        if ((e = rd_compressed(r, &n, "fixed string size")))
            return e;
        sb_addf(out, "fixed sysstring [%u]", n);
        return 0;
    case NT_FIXEDARRAY:
        if ((e = rd_compressed(r, &n, "fixed array size")))
            return e;
        sb_addf(out, "fixed array [%u]", n);
        if (rd_left(r)) {
            sb_addc(out, ' ');
            return put_native(r, out, depth + 1);
        }
        return 0;
    case NT_IUNKNOWN:
    case NT_IDISPATCH:
    case NT_INTF:
        sb_adds(out, t == NT_IUNKNOWN ? "iunknown" : t == NT_IDISPATCH ? "idispatch" : "interface");
        if (rd_left(r)) { /* the iid_is parameter */
            if ((e = rd_compressed(r, &n, "iid parameter")))
                return e;
            sb_addf(out, "(iidparam = %u)", n);
        }
        return 0;
    case NT_SAFEARRAY:
        sb_adds(out, "safearray");
        if (rd_left(r)) {
            if ((e = rd_compressed(r, &n, "safearray variant type")))
                return e;
            const char *v = variant_word(n & 0xfff);
            if (n & ~0x7000u & ~0xfffu || (!v && (n & 0xfff)))
                return rd_fail(r, MDT_EUNSUPPORTED, "safearray of variant type 0x%x", n);
            if (v) {
                sb_addc(out, ' ');
                sb_adds(out, v);
            }
            if (n & 0x1000)
                sb_adds(out, " vector");
            if (n & 0x2000)
                sb_adds(out, "[]");
            if (n & 0x4000)
                sb_adds(out, "&");
            if (rd_left(r)) { /* the user-defined subtype's name; ILAsm
                               * stores an empty one when none is given */
                size_t mark = out->len;
                sb_adds(out, ", ");
                if ((e = put_qstring(r, out, "safearray subtype")))
                    return e;
                if (out->len == mark + 4)
                    sb_cut(out, mark);
            }
        }
        return 0;
    case NT_CUSTOMMARSHALER: {
        /* GUID and native type name (unused by the runtime), then the
         * managed marshaler's type and the cookie */
        size_t mark = out->len;
        sb_adds(out, "custom (");
        for (int i = 0; i < 4; i++) {
            if (i)
                sb_adds(out, ", ");
            static const char *const what[] = {"custom marshaler GUID",
                                               "custom marshaler native type",
                                               "custom marshaler type", "custom marshaler cookie"};
            if ((e = put_qstring(r, out, what[i])))
                return e;
        }
        sb_adds(out, ")");
        /* ILDasm's short form when the first two are empty */
        char *s = out->failed || !out->buf ? NULL : out->buf + mark;
        if (s && strncmp(s, "custom (\"\", \"\", ", 16) == 0) {
            memmove(s + 8, s + 16, out->len - mark - 16 + 1);
            out->len -= 8;
        }
        return 0;
    }
    case NT_ARRAY: return put_array(r, out, depth);
    case NT_MAX:
        return rd_fail(r, MDT_EBADIMAGE, "native type MAX (no type) at the top of a descriptor");
    default: return rd_fail(r, MDT_EUNSUPPORTED, "native type 0x%02x has no ILAsm spelling", t);
    }
}

int mdt_marshal_text(void *mem_ctx, char **out, const mdt_image *img, uint32_t token)
{
    uint32_t key, rid, n;
    const uint8_t *blob;
    mdt_find fi;
    mdt_row row;
    char region[40], stack[128];
    int e;
    if (!out)
        return mdt__fail_simple(MDT_EINVAL, "mdt_marshal_text: no out");
    *out = NULL;
    if (!img ||
        (MDT_TOKEN_TABLE(token) != MDT_TABLE_Field && MDT_TOKEN_TABLE(token) != MDT_TABLE_Param))
        return mdt__fail_simple(MDT_EINVAL,
                                "mdt_marshal_text: token 0x%08x is neither a field nor a "
                                "parameter",
                                token);
    if ((e = mdt_coded_encode(&key, MDT_CI_HasFieldMarshal, token)) ||
        (e = mdt_find_init(&fi, img, MDT_TABLE_FieldMarshal, MDT_COL_FieldMarshal_Parent, key)))
        return e;
    if (mdt_find_next(&rid, &fi) != 0) /* 0 or MDT_ITEROVER */
        return mdt__fail_simple(MDT_ENOTFOUND, "token 0x%08x has no marshalling descriptor", token);
    if ((e = mdt_row_get(&row, img, MDT_TABLE_FieldMarshal, rid)) ||
        (e = mdt_row_blob(&blob, &n, &row, MDT_COL_FieldMarshal_NativeType)))
        return e;
    rd r = mdt__blob_reader(img, region, blob, n,
                            (uint32_t)mdt_row_raw(&row, MDT_COL_FieldMarshal_NativeType));
    sb b;
    sb_init_stack(&b, mem_ctx, stack, sizeof stack);
    e = put_native(&r, &b, 0);
    if (!e && rd_left(&r))
        e = rd_fail(&r, MDT_EBADIMAGE, "%zu bytes after the marshalling descriptor", rd_left(&r));
    if (e) {
        sb_discard(&b);
        return e;
    }
    return sb_finish(&b, out);
}
