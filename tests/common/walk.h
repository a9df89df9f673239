/* Full walk of an open image: every row, every cell decoded through the
 * checked accessors, every range resolved, the assembly identities, every
 * user string. Used by the fuzz harness, the corrupt-input suite, the
 * corpus tests and the benchmark's correctness check. */
#ifndef MDT_TESTS_WALK_H
#define MDT_TESTS_WALK_H

#include <stdint.h>

#include <mdtools/mdtools.h>

typedef struct walk_stats {
    uint64_t rows, cells, string_bytes, blob_bytes, guid_bytes;
    uint64_t cells_ok; /* cells that decoded */
    uint64_t errors;   /* failures met (rows, cells, identities, user strings) */
} walk_stats;

/* Called for each failure: kind 'c' (row, cell or identity) or 'u' (user
 * string); mdt_error_last() holds the detail. */
typedef void (*walk_error_fn)(void *arg, char kind, int code);

/* Walks img; failures are counted (and reported to fn if given), never
 * fatal. Returns 0. */
int walk_image_report(const mdt_image *img, walk_stats *st, walk_error_fn fn, void *arg);
int walk_image(const mdt_image *img, walk_stats *st);

/* Oracles for a library that runs inside someone else's process: memory
 * bounded by the input (a name cache of the image, in every style, takes
 * at most 32 bytes per input byte), and mdt_coded_decode() of every stored
 * coded index either fails or gives a token that encodes back to the
 * stored value and agrees with mdt_row_token(). Returns 0, or -1 with what
 * failed in why. Clears the error record. */
int walk_guest_check(const mdt_image *img, char *why, size_t whylen);

#endif
