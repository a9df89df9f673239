/* Private helpers shared by the generics layer (signatures, values,
 * custom attributes, descriptors). */
#ifndef MDT_GENERICS_GEN_INT_H
#define MDT_GENERICS_GEN_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mdtools/image.h>
#include <mdtools/names.h>
#include <mdtools/sig.h>
#include <mdtools/value.h>

#include "md/nesting_int.h"
#include "util/reader.h"
#include "util/strbuf.h"

/* A reader over a blob of img's #Blob heap, named `#Blob[0x<index>]` (the
 * name is written into region_buf, which must outlive the reader), with
 * file offsets when the blob lies inside the heap. */
rd mdt__blob_reader(const struct mdt_image *img, char region_buf[40], const uint8_t *blob,
                    uint32_t len, uint32_t blob_index);

/* The failure just recorded at region `#Blob` (the decoder's reader)
 * recorded again at `#Blob[0x<index>]`, with the same offsets; returns its
 * code (sigblob.c). */
int mdt__blob_fail_named(const struct mdt_image *img, const uint8_t *blob, uint32_t len,
                         uint32_t blob_index);

/* The signature blob a row of MethodDef, MemberRef, Field, Property,
 * StandAloneSig, TypeSpec or MethodSpec carries, its kind (enum
 * mdt_sig_kind: a MemberRef's and a StandAloneSig's from the blob's first
 * byte) and its #Blob index (sigblob.c). Errors: MDT_EINVAL (another
 * table), those of mdt_row_get and mdt_row_blob, MDT_EBADIMAGE (an empty
 * blob where the kind is in the blob). */
int mdt__sig_blob(const struct mdt_image *img, uint32_t token, int *kind, const uint8_t **blob,
                  uint32_t *len, uint32_t *blob_index);

/* For tests (tests/generics/fuzz_sig.c): a blob of `kind` printed by the
 * blob printer alone (sigtext.c) into buf, as mdt_sig_name_buf prints its
 * tree: 0, or MDT_ETRUNC with the prefix that fits; 1 (FMT_TEXT_TREE)
 * where the printer leaves the blob to the tree, nothing recorded
 * (names.c). */
int mdt__sig_text_name_buf(char *buf, size_t size, size_t *len, const struct mdt_image *img,
                           int kind, const uint8_t *blob, uint32_t blob_len,
                           const mdt_name_opts *o);

/* Append a value's text (value.c). */
int mdt__put_value(sb *out, const mdt_value *v, const mdt_name_opts *opts);

/* A serialized type name (reflection syntax, II.23.3) in the full style
 * (value.c); the text as stored when it does not parse. */
int mdt__reflection_to_full(void *mem_ctx, char **out, const char *s, size_t len);

/* Append n bytes as an ILAsm quoted string (II.5.2 QSTRING; ilasm.c):
 * " and \\ escaped, other control bytes as \\ and three octal digits;
 * with `c_names`, newline, carriage return and tab as \\n, \\r, \\t (an
 * ldstr operand, as ILDasm writes it). */
void mdt__ilasm_qstring(sb *out, const uint8_t *p, size_t n, bool c_names);

/* The size in bytes of a primitive value kind (BOOLEAN, CHAR, I1..U8, R4,
 * R8: ECMA-335 II.23.1.16); 0 for any other kind. One table for the
 * attribute reader, the Constant reader and the enum printer. */
static inline unsigned mdt__value_size(unsigned kind)
{
    switch (kind) {
    case MDT_VALUE_BOOLEAN:
    case MDT_VALUE_I1:
    case MDT_VALUE_U1: return 1;
    case MDT_VALUE_CHAR:
    case MDT_VALUE_I2:
    case MDT_VALUE_U2: return 2;
    case MDT_VALUE_I4:
    case MDT_VALUE_U4:
    case MDT_VALUE_R4: return 4;
    case MDT_VALUE_I8:
    case MDT_VALUE_U8:
    case MDT_VALUE_R8: return 8;
    default: return 0;
    }
}

/* The case labels of those kinds, BOOLEAN to R8 (0x02..0x0d): element
 * types (sig.h) and the value kinds of the same bytes (value.h), for the
 * switches that treat them alike: the signature decoder (decode.c), the
 * custom attributes' type readers (attr_types.c), value reader (attr.c)
 * and printer (value.c). */
#define MDT__CASE_PRIMITIVE                                                                        \
    case MDT_ELEMENT_TYPE_BOOLEAN:                                                                 \
    case MDT_ELEMENT_TYPE_CHAR:                                                                    \
    case MDT_ELEMENT_TYPE_I1:                                                                      \
    case MDT_ELEMENT_TYPE_U1:                                                                      \
    case MDT_ELEMENT_TYPE_I2:                                                                      \
    case MDT_ELEMENT_TYPE_U2:                                                                      \
    case MDT_ELEMENT_TYPE_I4:                                                                      \
    case MDT_ELEMENT_TYPE_U4:                                                                      \
    case MDT_ELEMENT_TYPE_I8:                                                                      \
    case MDT_ELEMENT_TYPE_U8:                                                                      \
    case MDT_ELEMENT_TYPE_R4:                                                                      \
    case MDT_ELEMENT_TYPE_R8

#endif
