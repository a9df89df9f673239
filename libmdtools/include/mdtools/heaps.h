/* mdtools: the metadata heaps (ECMA-335 II.24.2.3 - II.24.2.5).
 *
 * Each accessor bounds-checks the index against its heap and fails with a
 * located error; results are borrowed from the image. No allocation except
 * in mdt_heap_utf16_to_utf8. Thread-safe on an open image. */
#ifndef MDTOOLS_HEAPS_H
#define MDTOOLS_HEAPS_H

#include <stddef.h>
#include <stdint.h>

#include <mdtools/errors.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mdt_image mdt_image;

enum mdt_heap { MDT_HEAP_STRINGS, MDT_HEAP_US, MDT_HEAP_BLOB, MDT_HEAP_GUID };

/* Size in bytes of a heap (0 if absent). */
uint32_t mdt_heap_size(const mdt_image *img, int heap);

/* UTF-8 string at `index` in #Strings. Errors: MDT_EBADIMAGE (the index is
 * beyond the heap, or the string runs to the end of the heap without a
 * NUL), MDT_ENOHEAP (no #Strings stream, and the index is not 0). */
int mdt_heap_string(const char **s, size_t *len, const mdt_image *img, uint32_t index);
/* Blob at `index` in #Blob: compressed length then bytes. Index 0 is the
 * empty blob even when there is no #Blob stream. Errors: MDT_EBADIMAGE (the
 * index is beyond the heap, a length prefix 111, bytes that run past the
 * heap's end), MDT_ETRUNC (the length prefix runs past the heap's end),
 * MDT_ENOHEAP (no #Blob stream). */
int mdt_heap_blob(const uint8_t **data, uint32_t *len, const mdt_image *img, uint32_t index);
/* GUID number `index` (1-based) in #GUID; index 0 gives *guid = NULL.
 * Errors: MDT_EBADIMAGE (beyond the heap), MDT_ENOHEAP (no #GUID stream). */
int mdt_heap_guid(const uint8_t **guid, const mdt_image *img, uint32_t index);
/* User string at `index` (the low 24 bits of a 0x70 token): UTF-16LE code
 * units (*nunits of them, borrowed, possibly unaligned) and the final flag
 * byte (1 = needs more than 8-bit handling), or -1 when the blob has even
 * length and so no flag byte (accepted with that note). Errors:
 * MDT_EBADIMAGE (the index is beyond the heap, a length prefix 111, a
 * string that runs past the heap's end), MDT_ETRUNC (the length prefix
 * runs past the heap's end), MDT_ENOHEAP (no #US stream). */
int mdt_heap_us(const uint8_t **utf16le, uint32_t *nunits, int *flag, const mdt_image *img,
                uint32_t index);

/* Walk a heap entry by entry: *next gets the index of the entry after the
 * one at `index` (#Strings: past its NUL; #US and #Blob: past its length
 * prefix, as many bytes as it is encoded in, and its bytes; #GUID: index +
 * 1). Fails, as the accessor would, when the entry at `index` does not
 * read; MDT_EINVAL for an unknown heap. Walks start at 0 (#Strings), 1
 * (#US, #Blob: 0 is the empty entry) or 1 (#GUID) and end at
 * mdt_heap_size() (for #GUID, at size / 16 + 1); zero bytes of padding
 * read as empty entries. Errors: MDT_EINVAL (an unknown heap), and those
 * of the accessor: MDT_EBADIMAGE, MDT_ETRUNC, MDT_ENOHEAP. */
int mdt_heap_next(uint32_t *next, const mdt_image *img, int heap, uint32_t index);

/* Convert UTF-16LE to UTF-8 under mem_ctx. Unpaired surrogates become
 * U+FFFD and *replaced is set (never ill-formed UTF-8). Errors:
 * MDT_ENOMEM. */
int mdt_heap_utf16_to_utf8(void *mem_ctx, char **out, size_t *outlen, int *replaced,
                           const uint8_t *utf16le, uint32_t nunits);

/* ECMA-335 II.23.2 compressed unsigned integer from p[0..len): value and
 * bytes used. MDT_EBADIMAGE for the 111 prefix, MDT_ETRUNC when short.
 * Touches no error record. */
int mdt_heap_decode_compressed_u32(uint32_t *value, unsigned *used, const uint8_t *p, size_t len);

/* Format 16 GUID bytes as "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (37 bytes
 * with the NUL) and return buf. */
char *mdt_heap_guid_format(char buf[37], const uint8_t guid[16]);

/* api-rename: off */
/* The names these functions had in libmdtools 1:0:0, exported until the
 * next soname (each calls the function of its new name); a compiler warns
 * where one is used and names the new one (MDT_DEPRECATED_FOR,
 * <mdtools/errors.h>). tools/api-rename.py moves code to the new names;
 * MDT_NO_DEPRECATED leaves them undeclared. */
#ifndef MDT_NO_DEPRECATED
MDT_DEPRECATED_FOR(mdt_heap_decode_compressed_u32)
int mdt_decode_compressed_u32(uint32_t *value, unsigned *used, const uint8_t *p, size_t len);
MDT_DEPRECATED_FOR(mdt_heap_guid_format)
char *mdt_guid_format(char buf[37], const uint8_t guid[16]);
MDT_DEPRECATED_FOR(mdt_heap_utf16_to_utf8)
int mdt_utf16_to_utf8(void *mem_ctx, char **out, size_t *outlen, int *replaced,
                      const uint8_t *utf16le, uint32_t nunits);
#endif /* MDT_NO_DEPRECATED */
/* api-rename: on */

#ifdef __cplusplus
}
#endif
#endif
