/* Private helpers shared by the generics layer (signatures, values,
 * custom attributes, descriptors). */
#ifndef MDT_GENERICS_GEN_INT_H
#define MDT_GENERICS_GEN_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mdtools/image.h>
#include <mdtools/names.h>
#include <mdtools/value.h>

#include "md/nesting_int.h"
#include "util/reader.h"
#include "util/strbuf.h"

/* A reader over a blob of img's #Blob heap, named `#Blob[0x<index>]` (the
 * name is written into region_buf, which must outlive the reader), with
 * file offsets when the blob lies inside the heap. */
rd mdt__blob_reader(const struct mdt_image *img, char region_buf[40], const uint8_t *blob,
                    uint32_t len, uint32_t blob_index);

/* Append a value's text (value.c). */
int mdt__put_value(sb *out, const mdt_value *v, const mdt_name_opts *opts);

/* A serialized type name (reflection syntax, II.23.3) in the full style
 * (value.c); the text as stored when it does not parse. */
int mdt__reflection_to_full(void *mem_ctx, char **out, const char *s, size_t len);

/* Append n bytes as an ILAsm quoted string (II.5.2 QSTRING; ilasm.c):
 * " and \\ escaped, other control bytes as \\ and three octal digits. */
void mdt__ilasm_qstring(sb *out, const uint8_t *p, size_t n);

#endif
