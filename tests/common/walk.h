/* Full walk of an open image: every row, every cell decoded through the
 * checked accessors, every range resolved. Used by the fuzz harness, the
 * corpus test and the benchmark's correctness check. */
#ifndef MDT_TESTS_WALK_H
#define MDT_TESTS_WALK_H

#include <stdint.h>

#include <mdtools/mdtools.h>

typedef struct walk_stats {
    uint64_t rows, cells, string_bytes, blob_bytes, guid_bytes;
    uint64_t errors;    /* cells that failed to decode */
} walk_stats;

/* Walks img; returns 0 (cell errors are counted, not fatal). */
int walk_image(const mdt_image *img, walk_stats *st);

#endif
