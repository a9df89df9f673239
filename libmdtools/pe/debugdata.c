/* The data of debug directory entries (PE/COFF "The .debug Section";
 * Portable PDB v1.0 "PE/COFF Headers"): an embedded portable PDB's sizes
 * (type 17: "MPDB", the inflated size, a deflate stream), a PDB checksum
 * (type 19: the algorithm's name, NUL, the checksum) and crossgen2's perf
 * map entry (type 21: "R2RM", signature, version, path). CodeView records
 * are decoded at open (image/pe.c). */
#include "config.h"

#include <string.h>

#include "open/open_int.h"
#include "pe/pe_int.h"
#include "util/error.h"

enum { EMBEDDED_PDB = 17, PDB_CHECKSUM = 19, PERFMAP = 21 };

static int fail_at(const mdt_image *img, int code, size_t i, const char *fmt, const char *what)
{
    mdt_place pl = MDT_PLACE_NONE;
    pl.file = mdt_image_name(img);
    pl.region = "debug directory";
    pl.row = (uint32_t)i + 1;
    return mdt__fail(code, pl, fmt, what);
}

int mdt_debug_entry_data(const uint8_t **data, size_t *len, const mdt_image *img, size_t i)
{
    const mdt_debug_entry *e;
    size_t n;
    const uint8_t *all;
    if (!data || !len || !img)
        return mdt__fail_simple(MDT_EINVAL, "mdt_debug_entry_data: NULL argument");
    if (!(e = mdt_image_debug_entry(img, i)))
        return fail_at(img, MDT_ENOTFOUND, i, "%s", "no such debug directory entry");
    if (!e->size)
        return fail_at(img, MDT_ENOTFOUND, i, "%s", "the entry has no data");
    all = mdt__image_buffer(&n, img);
    /* A flat file has the data at its file pointer (which is also where
     * the entry's RVA points, in a well-formed file); a loader layout and
     * Webcil only at the RVA. */
    if (mdt_image_kind(img) == MDT_KIND_PE && e->file_pointer) {
        if (e->file_pointer > n || e->size > n - e->file_pointer) {
            mdt_place pl = MDT_PLACE_NONE;
            pl.file = mdt_image_name(img);
            pl.region = "debug directory";
            pl.row = (uint32_t)i + 1;
            pl.file_offset = e->file_pointer;
            return mdt__fail(MDT_ETRUNC, pl,
                             "0x%x bytes of data at file 0x%x run past the "
                             "file's end (0x%zx)",
                             e->size, e->file_pointer, n);
        }
        int err = mdt__image_need(img, e->file_pointer, e->size);
        if (err)
            return err;
        *data = all + e->file_pointer;
        *len = e->size;
        return 0;
    }
    if (!e->rva)
        return fail_at(img, MDT_ENOTFOUND, i, "%s", "the entry's data has no address");
    *len = e->size;
    return mdt_image_rva(data, img, e->rva, e->size);
}

static int typed(const uint8_t **p, size_t *n, const mdt_image *img, size_t i, uint32_t type,
                 const char *what)
{
    const mdt_debug_entry *e = img ? mdt_image_debug_entry(img, i) : NULL;
    if (e && e->type != type)
        return mdt__fail_simple(MDT_EINVAL, "debug entry %zu is of type %u, not %s", i + 1, e->type,
                                what);
    return mdt_debug_entry_data(p, n, img, i);
}

int mdt_debug_embedded_pdb(uint32_t *uncompressed, uint32_t *compressed, const mdt_image *img,
                           size_t i)
{
    const uint8_t *p;
    size_t n;
    int e;
    if (!uncompressed || !compressed)
        return mdt__fail_simple(MDT_EINVAL, "mdt_debug_embedded_pdb: NULL argument");
    if ((e = typed(&p, &n, img, i, EMBEDDED_PDB, "an embedded portable PDB")))
        return e;
    if (n < 8)
        return fail_at(img, MDT_ETRUNC, i, "%s", "embedded PDB shorter than its 8-byte header");
    if (memcmp(p, "MPDB", 4) != 0)
        return fail_at(img, MDT_EBADIMAGE, i, "%s", "embedded PDB without its \"MPDB\" signature");
    *uncompressed = le32(p + 4);
    *compressed = (uint32_t)(n - 8);
    return 0;
}

int mdt_debug_pdb_checksum(const char **algorithm, const uint8_t **checksum, size_t *len,
                           const mdt_image *img, size_t i)
{
    const uint8_t *p, *nul;
    size_t n;
    int e;
    if (!algorithm || !checksum || !len)
        return mdt__fail_simple(MDT_EINVAL, "mdt_debug_pdb_checksum: NULL argument");
    if ((e = typed(&p, &n, img, i, PDB_CHECKSUM, "a PDB checksum")))
        return e;
    if (!(nul = memchr(p, 0, n)))
        return fail_at(img, MDT_EBADIMAGE, i, "%s",
                       "PDB checksum: the algorithm's name is not NUL-terminated");
    *algorithm = (const char *)p;
    *checksum = nul + 1;
    *len = n - (size_t)(nul + 1 - p);
    return 0;
}

int mdt_debug_perfmap(uint8_t signature[16], uint32_t *version, const char **path,
                      const mdt_image *img, size_t i)
{
    const uint8_t *p;
    size_t n;
    int e;
    if (!signature || !version || !path)
        return mdt__fail_simple(MDT_EINVAL, "mdt_debug_perfmap: NULL argument");
    if ((e = typed(&p, &n, img, i, PERFMAP, "a perf map")))
        return e;
    if (n < 24)
        return fail_at(img, MDT_ETRUNC, i, "%s", "perf map entry shorter than 24 bytes");
    if (memcmp(p, "R2RM", 4) != 0)
        return fail_at(img, MDT_EBADIMAGE, i, "%s", "perf map entry without \"R2RM\"");
    if (!memchr(p + 24, 0, n - 24))
        return fail_at(img, MDT_EBADIMAGE, i, "%s", "perf map path not NUL-terminated");
    memcpy(signature, p + 4, 16);
    *version = le32(p + 20);
    *path = (const char *)(p + 24);
    return 0;
}
