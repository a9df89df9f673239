/* Recording failures in the per-thread error record. Every failure path in
 * the library goes through mdt__fail() so there is one place for a
 * breakpoint (cf. SQLite's SQLITE_CORRUPT_BKPT). */
#ifndef MDT_UTIL_ERROR_H
#define MDT_UTIL_ERROR_H

#include <stdatomic.h>
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
 * Around a whole computation that handles failures in many places (an
 * attribute decode, a change of a module set), save the record (a copy
 * when it holds one) and restore it when the computation succeeds. Where
 * that is too dear (a resolution: a few thousand instructions, of which
 * the two calls would be 2%), take a stamp and go back to it: a load of a
 * counter of all threads' failures, and another at the end; only when
 * some thread failed meanwhile does it look at this thread's record (so
 * no thread-local storage is touched otherwise). Going back undoes at most
 * the last 8 failures, as mdt__err_forget. */
uint64_t mdt__err_mark(void);
void mdt__err_forget(uint64_t mark);
void mdt__err_forget_one(void);

extern _Atomic uint64_t mdt__failures __attribute__((visibility("hidden")));

static inline uint64_t mdt__err_stamp(void)
{
    return atomic_load_explicit(&mdt__failures, memory_order_relaxed);
}

void mdt__err_since(uint64_t stamp);

static inline void mdt__err_back_to(uint64_t stamp)
{
    if (atomic_load_explicit(&mdt__failures, memory_order_relaxed) != stamp)
        mdt__err_since(stamp);
}

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
