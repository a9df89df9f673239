/* Manifest resources (ECMA-335 II.22.24): a ManifestResource row's name,
 * visibility and place, and the bytes of an embedded one. An embedded
 * resource (Implementation null) lies at Offset in the CLI header's
 * Resources directory (II.25.3.3): a 4-byte length, then the bytes, all of
 * which must lie inside the directory (II.24.2.4 says resources are
 * aligned to 8 bytes, but the CLR does not check it and neither does this). */
#include "config.h"

#include <string.h>

#include <mdtools/resources.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>

#include "util/error.h"
#include "util/reader.h"

static int fail_row(const mdt_image *img, int code, uint32_t rid, const char *msg)
{
    mdt_place pl = MDT_PLACE_NONE;
    pl.file = mdt_image_name(img);
    pl.region = "ManifestResource";
    pl.row = rid;
    return mdt__fail(code, pl, "%s", msg);
}

/* The embedded resource at `offset` of the Resources directory: its
 * length prefix, checked, and the RVA of its bytes. */
static int embedded(mdt_manifest_resource *out, const mdt_image *img, uint32_t rid)
{
    const mdt_pe_info *pe = mdt_image_pe_info(img);
    const mdt_data_dir *d = &pe->resources;
    const uint8_t *p;
    uint32_t len;
    int e;
    if (!d->rva || !d->size)
        return fail_row(img, MDT_EBADIMAGE, rid,
                        "an embedded resource, but the image has no Resources directory");
    if ((uint64_t)d->rva + d->size > UINT32_MAX)
        return fail_row(img, MDT_EBADIMAGE, rid,
                        "the Resources directory runs past the 4 GiB address space");
    if (out->offset > d->size || d->size - out->offset < 4) {
        mdt_place pl = MDT_PLACE_NONE;
        pl.file = mdt_image_name(img);
        pl.region = "ManifestResource";
        pl.row = rid;
        return mdt__fail(MDT_ETRUNC, pl,
                         "resource offset 0x%x: its length runs past the Resources directory "
                         "(0x%x bytes)",
                         out->offset, d->size);
    }
    if ((e = mdt_image_rva(&p, img, d->rva + out->offset, 4)))
        return e;
    len = le32(p);
    if (len > d->size - out->offset - 4) {
        mdt_place pl = MDT_PLACE_NONE;
        pl.file = mdt_image_name(img);
        pl.region = "ManifestResource";
        pl.row = rid;
        return mdt__fail(MDT_ETRUNC, pl,
                         "resource at offset 0x%x says it is 0x%x bytes long: past the "
                         "Resources directory (0x%x bytes)",
                         out->offset, len, d->size);
    }
    out->size = len;
    out->data_rva = d->rva + out->offset + 4;
    if (mdt_image_kind(img) == MDT_KIND_PE) {
        if ((e = mdt_image_rva_to_offset(&out->data_file_offset, img, out->data_rva)))
            return e;
    }
    return 0;
}

int mdt_manifest_resource_read(mdt_manifest_resource *out, const mdt_image *img, uint32_t rid)
{
    mdt_row row;
    size_t n;
    int e;
    if (!out || !img)
        return mdt__fail_simple(MDT_EINVAL, "mdt_manifest_resource_read: NULL argument");
    memset(out, 0, sizeof *out);
    if (rid == 0 || rid > mdt_table_rows(img, MDT_TABLE_ManifestResource))
        return fail_row(img, MDT_ENOTFOUND, rid, "no such ManifestResource row");
    if ((e = mdt_row_get(&row, img, MDT_TABLE_ManifestResource, rid)))
        return e;
    out->token = MDT_TOKEN(MDT_TABLE_ManifestResource, rid);
    out->offset = mdt_row_raw(&row, MDT_COL_ManifestResource_Offset);
    out->flags = mdt_row_raw(&row, MDT_COL_ManifestResource_Flags);
    if ((e = mdt_row_string(&out->name, &n, &row, MDT_COL_ManifestResource_Name)))
        return e;
    /* A null Implementation (a coded index of row 0) means this file. */
    uint32_t raw = mdt_row_raw(&row, MDT_COL_ManifestResource_Implementation);
    if ((raw >> 2) == 0) {
        out->where = MDT_RESOURCE_EMBEDDED;
        return embedded(out, img, rid);
    }
    if ((e = mdt_row_token(&out->implementation, &row, MDT_COL_ManifestResource_Implementation)))
        return e;
    unsigned t = MDT_TOKEN_TABLE(out->implementation);
    unsigned col;
    if (t == MDT_TABLE_File) {
        out->where = MDT_RESOURCE_FILE;
        col = MDT_COL_File_Name;
    } else if (t == MDT_TABLE_AssemblyRef) {
        out->where = MDT_RESOURCE_ASSEMBLY;
        col = MDT_COL_AssemblyRef_Name;
    } else {
        return fail_row(img, MDT_EBADIMAGE, rid,
                        "Implementation is an ExportedType: a resource lives in a file or an "
                        "assembly");
    }
    mdt_row target;
    if ((e = mdt_row_get(&target, img, t, MDT_TOKEN_RID(out->implementation))) ||
        (e = mdt_row_string(&out->implementation_name, &n, &target, col)))
        return e;
    return 0;
}

int mdt_manifest_resource_data(const uint8_t **data, size_t *len, const mdt_image *img,
                               uint32_t rid)
{
    mdt_manifest_resource r;
    int e;
    if (!data || !len || !img)
        return mdt__fail_simple(MDT_EINVAL, "mdt_manifest_resource_data: NULL argument");
    if ((e = mdt_manifest_resource_read(&r, img, rid)))
        return e;
    if (r.where != MDT_RESOURCE_EMBEDDED)
        return fail_row(img, MDT_EINVAL, rid,
                        r.where == MDT_RESOURCE_FILE ? "the resource lives in another file"
                                                     : "the resource lives in another assembly");
    *len = r.size;
    if (!r.size) {
        *data = (const uint8_t *)"";
        return 0;
    }
    return mdt_image_rva(data, img, r.data_rva, r.size);
}
