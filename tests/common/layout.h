/* A flat PE file laid out in memory as a loader does it, with holes: what
 * CoreCLR's loader on Linux (the PAL's MAPMapPEFile) makes of a ReadyToRun
 * image. An inaccessible reservation of SizeOfImage bytes, the header page
 * and each section copied to its RVA, only those pages made readable; the
 * gaps between sections stay PROT_NONE, and one more inaccessible page on
 * each side of the reservation, so a read outside the declared ranges
 * faults instead of passing unnoticed. Used by the mapped-layout tests and
 * the corrupt-input suite; the input may be damaged (every header field is
 * checked against the file and the reservation before use). */
#ifndef MDT_TESTS_LAYOUT_H
#define MDT_TESTS_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include <mdtools/image.h>

#define LAYOUT_MAX_SECTIONS 96             /* as the library's limit */
#define LAYOUT_MAX_IMAGE ((size_t)1 << 30) /* a larger SizeOfImage is cut */

typedef struct loader_layout {
    uint8_t *map; /* the reservation, guard pages included */
    size_t map_len;
    const uint8_t *base;                           /* RVA 0 */
    size_t image_len;                              /* SizeOfImage rounded up to pages (or cut) */
    mdt_mem_range ranges[1 + LAYOUT_MAX_SECTIONS]; /* readable, ascending, merged */
    size_t nranges;
    unsigned sections; /* sections mapped */
    unsigned skipped;  /* sections the headers place outside the image or
                          over another (left unmapped) */
} loader_layout;

/* Lay out `file`. 0, or -1 when its headers describe no layout (not MZ/PE,
 * headers cut short, SizeOfImage 0): then nothing is mapped. */
int layout_make(loader_layout *l, const uint8_t *file, size_t len);
void layout_free(loader_layout *l);

/* The bytes of a file (malloc'ed, exactly its size: 1 for an empty file),
 * or NULL. */
uint8_t *layout_read_file(const char *path, size_t *len);

#endif
