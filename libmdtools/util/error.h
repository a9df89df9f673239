/* Recording failures in the per-thread error record. Every failure path in
 * the library goes through mdt__fail() so there is one place for a
 * breakpoint (cf. SQLite's SQLITE_CORRUPT_BKPT). */
#ifndef MDT_UTIL_ERROR_H
#define MDT_UTIL_ERROR_H

#include <stdbool.h>
#include <stdint.h>

#include <mdtools/errors.h>

struct mdt_image;

/* Where a failure happened. Fields not known are UINT32_MAX / UINT64_MAX or
 * NULL. */
typedef struct mdt_place {
    const struct mdt_image *img;
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

/* A failure the library handles itself (it falls back, skips a damaged
 * row, degrades to a shorter name) is no failure of the public call: a call
 * that succeeds leaves the record as it found it, still describing the
 * caller's last failure (errors.h: "valid until the next failing call").
 *
 * Around one attempt, or each turn of a loop, take a mark before it and
 * forget back to the mark where its failure is handled:
 *
 *     uint64_t m = mdt__err_mark();
 *     if (mdt_row_blob(...)) {
 *         mdt__err_forget(m);
 *         return fallback;
 *     }
 *
 * A mark is a number (no copy); forgetting goes back over at most 8
 * failures recorded since it (beyond that the record is left as it is).
 * Where the failed call is a row or cell accessor (mdt_row_get,
 * mdt_row_string, mdt_row_token, ...), which records exactly one failure,
 * mdt__err_forget_one() forgets it without a mark taken before: nothing on
 * the path that succeeds.
 *
 * Around a whole computation that handles failures in many places (a
 * resolution), save the record (a copy when it holds one) and restore it
 * when the computation succeeds. */
uint64_t mdt__err_mark(void);
void mdt__err_forget(uint64_t mark);
void mdt__err_forget_one(void);

typedef struct mdt_errsave {
    uint64_t depth;
    bool dirty;
    mdt_errinfo rec;
} mdt_errsave;
void mdt__err_save(mdt_errsave *s);
void mdt__err_restore(const mdt_errsave *s);

/* Name of an image for messages (defined by the image layer). */
const char *mdt__image_name(const struct mdt_image *img);

#endif
