/* What descriptor.c (descriptors and their type trees) and desc_text.c
 * (descriptors as text) share. Only those two include it. */
#ifndef MDT_GENERICS_DESC_INT_H
#define MDT_GENERICS_DESC_INT_H

#include <stdint.h>

struct mdt_image;

/* The descriptor text's name of primitive element type `et` (II.23.1.16:
 * "I4", "STRING", ...), NULL when it is none (desc_text.c). */
const char *mdt__desc_prim_name(uint8_t et);

/* MDT_EINVAL unless `token` is a TypeDef row of `img` (descriptor.c). */
int mdt__desc_check_typedef(const struct mdt_image *img, uint32_t token);

#endif
