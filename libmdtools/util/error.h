/* Recording failures in the per-thread error record. Every failure path in
 * the library goes through mdt__fail() so there is one place for a
 * breakpoint (cf. SQLite's SQLITE_CORRUPT_BKPT). */
#ifndef MDT_UTIL_ERROR_H
#define MDT_UTIL_ERROR_H

#include <stdint.h>

#include <mdtools/errors.h>

/* Where a failure happened. Fields not known are UINT32_MAX / UINT64_MAX or
 * NULL. `file` names the input (an image's name: its path, or the name its
 * caller gave a buffer); the record copies it. */
typedef struct mdt_place {
    const char *file;
    const char *region;
    const char *column;
    uint32_t row;
    uint64_t offset;
    uint64_t file_offset;
} mdt_place;

#define MDT_PLACE_NONE ((mdt_place){NULL, NULL, NULL, UINT32_MAX, UINT64_MAX, UINT64_MAX})

/* Record the failure and return `code`. */
int mdt__fail(int code, mdt_place place, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Record a failure with no place (allocation, bad arguments). */
int mdt__fail_simple(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
