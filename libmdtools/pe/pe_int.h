/* pe/: the PE facts of <mdtools/pe.h>, read from an open image's bytes
 * through the public image API and the util reader. */
#ifndef MDT_PE_INT_H
#define MDT_PE_INT_H

#include <mdtools/image.h>
#include <mdtools/pe.h>

#include "util/reader.h"

/* A reader over the image's own bytes from its start (the headers of a
 * flat file or of a loader layout), region `region`. */
rd mdt__pe_reader(const mdt_image *img, const char *region);
/* A reader over `len` bytes at `rva` (mdt_image_rva), region `region`,
 * file offsets where the layout has them. */
int mdt__pe_rva_reader(rd *out, const mdt_image *img, uint32_t rva, uint32_t len,
                       const char *region);

/* NativeFormat (native.c): numbers at r's position; seek to an RVA
 * inside the section r reads (which starts at sec_rva); a sparse array's
 * element count, and its element `index` (*at: the element's RVA), 1 when
 * the array has none there (no message), < 0 on an error. */
int mdt__native_unsigned(rd *r, uint32_t *v, const char *what);
/* the same, its one-byte case inline */
static inline int mdt__native_u(rd *r, uint32_t *v, const char *what)
{
    if (r->pos < r->len && !(r->base[r->pos] & 1)) {
        *v = r->base[r->pos++] >> 1;
        return 0;
    }
    return mdt__native_unsigned(r, v, what);
}
int mdt__native_signed(rd *r, int32_t *v, const char *what);
int mdt__native_seek(rd *r, uint32_t sec_rva, uint64_t rva, const char *what);
int mdt__native_array_count(rd *r, uint32_t *n, const char *what);
int mdt__native_array_get(rd *r, uint32_t sec_rva, uint32_t index, uint32_t *at, const char *what);
/* Every element of a sparse array, in index order, each block's tree
 * walked once: fn(payload, index, RVA of the element); a non-zero return
 * of fn stops the walk and is returned. */
typedef int (*mdt__native_each_fn)(void *payload, uint32_t index, uint32_t at);
int mdt__native_array_each(rd *r, uint32_t sec_rva, const char *what, mdt__native_each_fn fn,
                           void *payload);

#endif
