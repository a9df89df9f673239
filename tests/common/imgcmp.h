/* Two opens of the same assembly compared through the public API: a flat
 * file against the same file laid out by a loader (layout.h). */
#ifndef MDT_TESTS_IMGCMP_H
#define MDT_TESTS_IMGCMP_H

#include <stddef.h>
#include <stdint.h>

#include <mdtools/mdtools.h>

typedef struct imgcmp_stats {
    uint64_t cells;        /* table cells compared */
    uint64_t heap_entries; /* #Strings, #US, #Blob and #GUID entries compared */
    uint64_t md_bytes;     /* metadata bytes compared (every stream, whole) */
} imgcmp_stats;

/* Compare a and b: the PE and CLI header facts, the sections, the debug
 * directory, the metadata root and stream headers, the metadata bytes
 * themselves, every table's row count and every cell (raw value, decoded
 * string, blob or GUID, token), every entry of every heap, the warnings.
 * Facts that depend on the layout are not compared: the metadata's offset
 * in the buffer (a file offset against an RVA) and, since they are about
 * the file, warnings about section raw data beyond the file's end.
 * Returns the number of differences; the first is described in why. */
int imgcmp(const mdt_image *a, const mdt_image *b, imgcmp_stats *st, char *why, size_t whylen);

/* What imgcmp_file found, counted over many files. */
typedef struct imgcmp_tally {
    unsigned pe;         /* files starting with MZ */
    unsigned flat_fails; /* ... whose flat open fails: laid out, opened and
                            walked all the same (it must not fault) */
    unsigned same;       /* opened both ways and read alike */
    unsigned differ;     /* a difference, or the laid-out image fails */
    unsigned with_holes; /* of the compared, laid out with gaps */
    unsigned r2r;        /* of the compared, ReadyToRun images */
    imgcmp_stats st;     /* summed over the compared */
} imgcmp_tally;

/* The file at `path` opened flat (from a buffer of exactly its bytes) and
 * laid out as a loader does (layout.h), opened there with
 * mdt_image_open_mapped_ranges on the layout's readable ranges, and the
 * two compared. Returns 0, or -1 with why filled when they differ or the
 * laid-out image does not open; files that are not PE count as nothing. */
int imgcmp_file(const char *path, imgcmp_tally *t, char *why, size_t whylen);
/* imgcmp_file on every file under dir, recursively (symbolic links to
 * files are followed, to directories not). 0, or -1 at the first file
 * that fails, with why. */
int imgcmp_tree(const char *dir, imgcmp_tally *t, char *why, size_t whylen);
/* One line saying what a tally holds, to stderr. */
void imgcmp_report(const char *what, const imgcmp_tally *t);

#endif
