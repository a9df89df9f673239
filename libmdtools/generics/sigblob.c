/* Signature blobs by token (ECMA-335 II.23.2): which column of which row
 * carries a signature and of what kind (II.22.25 MemberRef and II.22.36
 * StandAloneSig tell it by the blob's first byte), the blob's name in
 * messages (`#Blob[0x<index>]`), and mdt_sig_of_token and its _buf form,
 * which find the blob and hand it to the decoder (decode.c). The blob
 * printer (sigtext.c) finds its blobs here too. */
#include "config.h"

#include <string.h>

#include <mdtools/sig.h>
#include <mdtools/tables.h>

#include "generics/gen_int.h"
#include "md/md_int.h"
#include "util/hex.h"

rd mdt__blob_reader(const struct mdt_image *img, char region[40], const uint8_t *blob, uint32_t len,
                    uint32_t blob_index)
{
    uint64_t foff = UINT64_MAX;
    /* "#Blob[0x<index>]" without printf: this runs for every signature. */
    memcpy(region, "#Blob[0x", 8);
    char *o = mdt__hex_put_min(region + 8, blob_index, 1);
    o[0] = ']';
    o[1] = '\0';
    foff = mdt__blob_file_offset(mdt__md(img), blob);
    return rd_make(mdt__md(img)->name, region, blob, len, foff);
}

/* Recorded again, naming the blob: formatting the name for every
 * signature would cost more than the decoding, so the decoder reads
 * under the plain name `#Blob` and names the blob only when it fails. */
int mdt__blob_fail_named(const struct mdt_image *img, const uint8_t *blob, uint32_t len,
                         uint32_t blob_index)
{
    mdt_errinfo saved = *mdt_error_last();
    mdt_place pl = MDT_PLACE_NONE;
    char region[40];
    (void)mdt__blob_reader(img, region, blob, len, blob_index);
    pl.file = mdt_image_name(img);
    pl.region = region;
    pl.offset = saved.offset;
    pl.file_offset = saved.file_offset;
    return mdt__fail(saved.code, pl, "%s", saved.what);
}

int mdt__sig_blob(const mdt_image *img, uint32_t token, int *kind_out, const uint8_t **blob_out,
                  uint32_t *len_out, uint32_t *index_out)
{
    unsigned table = token >> 24, col;
    int kind;
    mdt_row r;
    const uint8_t *blob;
    uint32_t len;
    int e;
    switch (table) {
    case MDT_TABLE_MethodDef:
        col = MDT_COL_MethodDef_Signature;
        kind = MDT_SIG_METHOD;
        break;
    case MDT_TABLE_MemberRef:
        col = MDT_COL_MemberRef_Signature;
        kind = -1;
        break;
    case MDT_TABLE_Field:
        col = MDT_COL_Field_Signature;
        kind = MDT_SIG_FIELD;
        break;
    case MDT_TABLE_Property:
        col = MDT_COL_Property_Type;
        kind = MDT_SIG_PROPERTY;
        break;
    case MDT_TABLE_StandAloneSig:
        col = MDT_COL_StandAloneSig_Signature;
        kind = -1;
        break;
    case MDT_TABLE_TypeSpec:
        col = MDT_COL_TypeSpec_Signature;
        kind = MDT_SIG_TYPESPEC;
        break;
    case MDT_TABLE_MethodSpec:
        col = MDT_COL_MethodSpec_Instantiation;
        kind = MDT_SIG_METHODSPEC;
        break;
    default: return mdt__fail_simple(MDT_EINVAL, "token 0x%08x carries no signature", token);
    }
    if ((e = mdt_row_get(&r, img, table, token & 0x00FFFFFFu)) ||
        (e = mdt_row_blob(&blob, &len, &r, col)))
        return e;
    if (kind < 0) {
        if (len == 0) {
            mdt_place pl = MDT_PLACE_NONE;
            pl.file = mdt_image_name(img);
            pl.region = mdt_table_schema_get(table)->name;
            pl.row = token & 0x00FFFFFFu;
            return mdt__fail(MDT_EBADIMAGE, pl, "empty signature blob");
        }
        if (table == MDT_TABLE_MemberRef)
            kind = (blob[0] & MDT_CC_MASK) == MDT_CC_FIELD ? MDT_SIG_FIELD : MDT_SIG_METHOD;
        else
            kind = blob[0] == MDT_CC_LOCAL_SIG ? MDT_SIG_LOCALS : MDT_SIG_METHOD;
    }
    *kind_out = kind;
    *blob_out = blob;
    *len_out = len;
    *index_out = mdt_row_raw(&r, col);
    return 0;
}

int mdt_sig_of_token(void *mem_ctx, mdt_sig *out, const mdt_image *img, uint32_t token)
{
    int kind, e;
    const uint8_t *blob;
    uint32_t len, index;
    if ((e = mdt__sig_blob(img, token, &kind, &blob, &len, &index))) {
        memset(out, 0, sizeof *out);
        return e;
    }
    return mdt_sig_decode(mem_ctx, out, img, kind, blob, len, index);
}

int mdt_sig_of_token_buf(void *arena, size_t size, mdt_sig *out, const mdt_image *img,
                         uint32_t token)
{
    int kind, e;
    const uint8_t *blob;
    uint32_t len, index;
    if ((e = mdt__sig_blob(img, token, &kind, &blob, &len, &index))) {
        memset(out, 0, sizeof *out);
        return e;
    }
    return mdt_sig_decode_buf(arena, size, out, img, kind, blob, len, index);
}
