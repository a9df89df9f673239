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

/* ReadyToRun section types (CoreCLR's readytorun.h) and the header's
 * flag of a composite image's component. */
#define MDT__R2R_RUNTIME_FUNCTIONS 102u
#define MDT__R2R_METHODDEF_ENTRY_POINTS 103u
#define MDT__R2R_DEBUG_INFO 105u
#define MDT__R2R_INSTANCE_ENTRY_POINTS 109u
#define MDT__R2R_HOT_COLD_MAP 120u
#define MDT__R2R_FLAG_COMPONENT 0x20u

/* A section a reader of an image's ReadyToRun code asks for (r2r.c). */
typedef struct mdt__r2r_want {
    uint32_t type; /* MDT__R2R_* */
    int required;  /* MDT_ENOTFOUND without it */
    uint32_t rva, size;
    int have; /* set: the first section of the type */
} mdt__r2r_want;
/* The header read once, the sections of w[0..n) found: a component of a
 * composite image is refused (MDT_EUNSUPPORTED: `in_composite` says what
 * the composite image holds, "its code is"), a required section missing
 * is MDT_ENOTFOUND, RuntimeFunctions not a whole number of 12-byte
 * entries MDT_EBADIMAGE; *major: the header's major version (may be
 * NULL). Errors are located at the image's ReadyToRun header. */
int mdt__r2r_sections(mdt__r2r_want *w, size_t n, uint16_t *major, const mdt_image *img,
                      const char *in_composite);

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
