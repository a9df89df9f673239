/* What the library's other areas (pe/, pdb/, strongname/) ask of an open
 * image beyond <mdtools/image.h>. */
#ifndef MDT_OPEN_OPEN_INT_H
#define MDT_OPEN_OPEN_INT_H

#include <stddef.h>
#include <stdint.h>

#include <mdtools/image.h>

/* mdt_image_bytes with the failure reported: an image opened with
 * MDT_OPEN_LAZY reads the rest of its file first, MDT_EIO (located) when
 * the file changed since the open. */
int mdt__image_all_bytes(const uint8_t **p, size_t *len, const mdt_image *img);
/* Make [off, off + len) of mdt_image_bytes' buffer (clipped to its length)
 * hold the file's bytes: 0 at once for an image not read on demand;
 * MDT_EIO as above. */
int mdt__image_need(const mdt_image *img, uint64_t off, uint64_t len);

/* The image's buffer as it is: for an image read on demand, only what has
 * been read holds the file's bytes (the headers always). */
const uint8_t *mdt__image_buffer(size_t *len, const mdt_image *img);

#endif
