/* Private helpers of the md layer: the fast paths of heap reads, inline so
 * cell and column readers pay a few instructions per cell; every failure
 * goes to a cold slow path that re-checks and builds the located error. */
#ifndef MDT_MD_INT_H
#define MDT_MD_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "image/image_int.h"

/* Row counts and list targets (cells.c): a table's rows, also those a
 * portable PDB's #Pdb stream declares; the Ptr table of a LIST target (0
 * for none); the table a LIST column's positions really index (its Ptr
 * table when that has rows). */
uint32_t mdt__target_rows(const struct mdt_image *img, unsigned t);
unsigned mdt__ptr_table(unsigned target);
unsigned mdt__list_table(const struct mdt_image *img, unsigned target);

/* Whether a column's values never decrease over the readable rows
 * (tables.c): a spec-sorted table is really sorted, a list column's runs
 * are disjoint and in row order. */
bool mdt__column_ascends(const struct mdt_table *t, unsigned col);

/* Run indexes (runs.c): built at open from the tables; they make the owner
 * of a list position a lookup instead of a scan (owner.c). */
int mdt__runs_index(struct mdt_image *img);
/* The row of `table` whose run in LIST column `col` holds position pos:
 * 1 with *holder set (0 = none) when an index answers, 0 when the column's
 * starts never decrease and a binary search must find it. */
int mdt__run_holder_indexed(const struct mdt_image *img, unsigned table, unsigned col,
                            uint32_t pos, uint32_t *holder);
/* The position of a Field/MethodDef/Param/Event/Property row in its list
 * runs: through the Ptr table when it has rows (0 when no Ptr row names
 * it), else the row itself. */
uint32_t mdt__list_position(const struct mdt_image *img, unsigned target, uint32_t rid);

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
