/* Private helpers of the md layer. */
#ifndef MDT_MD_INT_H
#define MDT_MD_INT_H

#include <stddef.h>
#include <stdint.h>

struct mdt_image;

/* The table cell a heap access came from, for error messages. */
typedef struct mdt_cellref {
    unsigned table;
    uint32_t rid;
    unsigned col;
} mdt_cellref;

int mdt__heap_string(const struct mdt_image *img, uint32_t idx, const char **s, size_t *len,
                     const mdt_cellref *ref);
int mdt__heap_blob(const struct mdt_image *img, uint32_t idx, const uint8_t **data,
                   uint32_t *len, const mdt_cellref *ref);
int mdt__heap_guid(const struct mdt_image *img, uint32_t idx, const uint8_t **guid,
                   const mdt_cellref *ref);

#endif
