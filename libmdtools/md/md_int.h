/* Private helpers of the md layer: the fast paths of heap reads, inline so
 * cell and column readers pay a few instructions per cell; every failure
 * goes to a cold slow path that re-checks and builds the located error. */
#ifndef MDT_MD_INT_H
#define MDT_MD_INT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "image/image_int.h"

/* The table cell a heap access came from, for error messages. */
typedef struct mdt_cellref {
    unsigned table;
    uint32_t rid;
    unsigned col;
} mdt_cellref;

int mdt__heap_string_slow(const struct mdt_image *img, uint32_t idx, const char **s, size_t *len,
                          const mdt_cellref *ref) __attribute__((cold, noinline));
int mdt__heap_blob_slow(const struct mdt_image *img, uint32_t idx, const uint8_t **data,
                        uint32_t *len, const mdt_cellref *ref) __attribute__((cold, noinline));
int mdt__heap_guid(const struct mdt_image *img, uint32_t idx, const uint8_t **guid,
                   const mdt_cellref *ref);

/* 0 when the string at idx is readable the quick way; -1: take the slow
 * path (which also handles index 0 without a heap, and reports errors). */
static inline int heap_string_fast(const struct mdt_image *img, uint32_t idx, const char **s,
                                   size_t *len)
{
    const struct mdt_heap_view *h = &img->strings;
    if (idx < h->size && h->nul_terminated) {
        *s = (const char *)h->base + idx;
        if (len)
            *len = strlen(*s);
        return 0;
    }
    return -1;
}

static inline int heap_blob_fast(const struct mdt_image *img, uint32_t idx, const uint8_t **data,
                                 uint32_t *len)
{
    const struct mdt_heap_view *h = &img->blob;
    if (idx < h->size) {
        const uint8_t *p = h->base + idx;
        uint32_t left = h->size - idx, n;
        if (p[0] < 0x80) {
            n = p[0];
            if (n < left) {
                *data = p + 1;
                *len = n;
                return 0;
            }
        } else if ((p[0] & 0xC0) == 0x80 && left >= 2) {
            n = (uint32_t)(p[0] & 0x3F) << 8 | p[1];
            if (n <= left - 2) {
                *data = p + 2;
                *len = n;
                return 0;
            }
        }
    }
    return -1;
}

static inline uint32_t table_raw(const struct mdt_table *t, const uint8_t *row, unsigned col)
{
    const uint8_t *p = row + t->col_off[col];
    switch (t->col_w[col]) {
    case 1: return p[0];
    case 2: return le16(p);
    default: return le32(p);
    }
}

#endif
