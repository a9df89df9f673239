/* Constant table values (ECMA-335 II.22.9): the blob of a field's,
 * parameter's or property's literal, read according to the row's Type
 * column (BOOLEAN, CHAR, I1..U8, R4, R8, STRING as UTF-16LE, CLASS as 4
 * zero bytes for null). Decimal literals are not Constant rows: compilers
 * store them in a DecimalConstantAttribute on the same parent, which
 * mdt_value_default() reads as well. A blob shorter than its type is a
 * located error. */
#include "config.h"

#include <string.h>
#include <talloc.h>

#include <mdtools/attr.h>
#include <mdtools/heaps.h>
#include <mdtools/nesting.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>
#include <mdtools/value.h>

#include "generics/gen_int.h"

static int nomem(void)
{
    return mdt__fail_simple(MDT_ENOMEM, "out of memory decoding a constant");
}

/* The bytes of a Constant of this type: a primitive's, or a null CLASS's
 * 4 zero bytes; 0 for a type a Constant cannot have. */
static unsigned value_size(uint8_t type)
{
    return type == MDT_VALUE_CLASS ? 4 : mdt__value_size(type);
}

/* Integer kinds: the bits, zero- and sign-extended. */
static void set_bits(mdt_value *v, uint64_t bits, unsigned size, bool is_signed)
{
    v->u = bits;
    v->i = (int64_t)bits;
    if (is_signed && size < 8 && (bits >> (8 * size - 1) & 1))
        v->i = (int64_t)(bits | ~(((uint64_t)1 << (8 * size)) - 1));
}

int mdt_constant_decode(void *mem_ctx, mdt_value *out, const mdt_image *img, uint8_t type,
                        const uint8_t *blob, uint32_t len, uint32_t blob_index)
{
    char region[40];
    rd r = mdt__blob_reader(img, region, blob, len, blob_index);
    mdt_value_type *t;
    int e;
    memset(out, 0, sizeof *out);
    if (type != MDT_VALUE_STRING && !value_size(type))
        return rd_fail(&r, MDT_EBADIMAGE,
                       "constant of element type 0x%02x (not a primitive, "
                       "string or class)",
                       type);
    if (!(t = talloc_zero(mem_ctx, mdt_value_type)))
        return nomem();
    t->kind = type;
    if (type == MDT_VALUE_STRING) {
        char *s;
        size_t n;
        if (len % 2) {
            talloc_free(t);
            return rd_fail(&r, MDT_EBADIMAGE, "string constant of odd length %u", len);
        }
        if ((e = mdt_heap_utf16_to_utf8(t, &s, &n, NULL, blob, len / 2))) {
            talloc_free(t);
            return e;
        }
        out->str = s;
        out->len = n;
    } else {
        unsigned size = value_size(type);
        const uint8_t *p;
        if ((e = rd_bytes(&r, &p, size, "constant value"))) {
            talloc_free(t);
            return e;
        }
        uint64_t bits = 0;
        for (unsigned i = 0; i < size; i++)
            bits |= (uint64_t)p[i] << (8 * i);
        switch (type) {
        case MDT_VALUE_CLASS:
            if (bits != 0) {
                r.pos = 0;
                talloc_free(t);
                return rd_fail(&r, MDT_EBADIMAGE,
                               "constant of a reference type must be null (4 zero bytes), "
                               "found 0x%08x",
                               (uint32_t)bits);
            }
            out->null = true;
            break;
        case MDT_VALUE_R4: {
            float f;
            uint32_t b32 = (uint32_t)bits;
            memcpy(&f, &b32, sizeof f);
            out->r = f;
            out->u = bits;
            break;
        }
        case MDT_VALUE_R8:
            memcpy(&out->r, &bits, sizeof out->r);
            out->u = bits;
            break;
        default:
            set_bits(out, bits, size,
                     type == MDT_VALUE_I1 || type == MDT_VALUE_I2 || type == MDT_VALUE_I4 ||
                         type == MDT_VALUE_I8);
        }
    }
    out->type = t;
    return 0;
}

int mdt_constant_of_row(void *mem_ctx, mdt_value *out, const mdt_image *img, uint32_t rid)
{
    mdt_row r;
    const uint8_t *blob;
    uint32_t len;
    int e;
    memset(out, 0, sizeof *out);
    if ((e = mdt_row_get(&r, img, MDT_TABLE_Constant, rid)) ||
        (e = mdt_row_blob(&blob, &len, &r, MDT_COL_Constant_Value)))
        return e;
    e = mdt_constant_decode(mem_ctx, out, img, (uint8_t)mdt_row_raw(&r, MDT_COL_Constant_Type),
                            blob, len, mdt_row_raw(&r, MDT_COL_Constant_Value));
    if (e) {
        /* Say which row, keeping the blob offset the decoder found. */
        mdt_errinfo saved = *mdt_error_last();
        mdt_place pl = MDT_PLACE_NONE;
        pl.file = mdt_image_name(img);
        pl.region = "Constant";
        pl.row = rid;
        pl.column = "Value";
        pl.offset = saved.offset;
        pl.file_offset = saved.file_offset;
        return mdt__fail(e, pl, "%s (%s)", saved.what, saved.region);
    }
    return 0;
}

/* A DecimalConstantAttribute on `parent`, decoded. MDT_ENOTFOUND, not
 * recorded, when there is none (rows that do not read are not one). */
static int decimal_attr(void *mem_ctx, mdt_value *out, const mdt_image *img, uint32_t parent)
{
    uint32_t key, rid;
    uint64_t mark = mdt__err_mark();
    mdt_find fi;
    int e;
    if (mdt_coded_encode(&key, MDT_CI_HasCustomAttribute, parent) ||
        (e = mdt_find_init(&fi, img, MDT_TABLE_CustomAttribute, MDT_COL_CustomAttribute_Parent,
                           key)))
        return MDT_ENOTFOUND;
    while (mdt_find_next(&rid, &fi) == 0) {
        mdt_row r, m;
        uint32_t ctor, type = 0;
        if (mdt_row_get(&r, img, MDT_TABLE_CustomAttribute, rid) ||
            mdt_row_token(&ctor, &r, MDT_COL_CustomAttribute_Type) ||
            (MDT_TOKEN_TABLE(ctor) == MDT_TABLE_MemberRef &&
             (mdt_row_get(&m, img, MDT_TABLE_MemberRef, MDT_TOKEN_RID(ctor)) ||
              mdt_row_token(&type, &m, MDT_COL_MemberRef_Class))) ||
            (MDT_TOKEN_TABLE(ctor) == MDT_TABLE_MethodDef && mdt_member_owner(&type, img, ctor))) {
            mdt__err_forget(mark);
            continue;
        }
        if (!mdt__type_is(img, type, "System.Runtime.CompilerServices", "DecimalConstantAttribute"))
            continue;
        void *tmp = talloc_new(NULL);
        mdt_attr a;
        mdt_value_type *t;
        if (!tmp)
            return nomem();
        if ((e = mdt_attr_of_row(tmp, &a, img, rid, NULL, NULL)) ||
            (e = mdt_attr_decimal(&out->dec, &a))) {
            talloc_free(tmp);
            return e;
        }
        talloc_free(tmp);
        if (!(t = talloc_zero(mem_ctx, mdt_value_type)))
            return nomem();
        t->kind = MDT_VALUE_DECIMAL;
        out->type = t;
        return 0;
    }
    return MDT_ENOTFOUND;
}

int mdt_value_default(void *mem_ctx, mdt_value *out, const mdt_image *img, uint32_t parent)
{
    uint32_t key, rid;
    mdt_find fi;
    int e;
    memset(out, 0, sizeof *out);
    if (mdt_coded_encode(&key, MDT_CI_HasConstant, parent))
        return mdt__fail_simple(MDT_EINVAL, "token 0x%08x cannot have a default value", parent);
    if ((e = mdt_find_init(&fi, img, MDT_TABLE_Constant, MDT_COL_Constant_Parent, key)))
        return e;
    if (mdt_find_next(&rid, &fi) == 0)
        return mdt_constant_of_row(mem_ctx, out, img, rid);
    if (MDT_TOKEN_TABLE(parent) != MDT_TABLE_Property &&
        (e = decimal_attr(mem_ctx, out, img, parent)) != MDT_ENOTFOUND)
        return e;
    return mdt__fail_simple(MDT_ENOTFOUND, "token 0x%08x has no default value", parent);
}

/* api-rename: off */
/* The old names (<mdtools/errors.h>, MDT_DEPRECATED_FOR), for programs
 * built against libmdtools 1:0:0. */
int mdt_default_value(void *mem_ctx, mdt_value *out, const mdt_image *img, uint32_t parent)
{
    return mdt_value_default(mem_ctx, out, img, parent);
}
/* api-rename: on */
