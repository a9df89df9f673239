/* Recording failures in the per-thread error record. Every failure path in
 * the library goes through mdt__fail() so there is one place for a
 * breakpoint (cf. SQLite's SQLITE_CORRUPT_BKPT). */
#ifndef MDT_UTIL_ERROR_H
#define MDT_UTIL_ERROR_H

#include <stdatomic.h>
#include <stdbool.h>
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
/* MDT_EINVAL for an options struct `type` (mdt_name_opts, ...) whose
 * version is later than `known`, the newest this library reads: a program
 * built against a later libmdtools. Located at the struct's version
 * member, and naming the function `fn` that was given it. */
int mdt__fail_opts_version(const char *fn, const char *type, unsigned version, unsigned known);

/* The check every public function taking a versioned options struct makes
 * first (mdt_name_opts, mdt_resolve_opts, ...; `o` may be NULL): its
 * version is one this library reads, up to `known`; a later one is refused
 * through mdt__fail_opts_version(). MDT_EINVAL or 0. A macro, for any
 * struct with a `version` member, so that the test stays one expression
 * under __builtin_expect: the refusal's MDT_EINVAL is known at the call
 * site and the caller's hot path keeps no saves of its arguments around
 * the failure call (which cost +24 instructions a signature name; a
 * function taking the version by value let gcc split mdt_sig_name again,
 * +4; bench/README.md, issue 29). */
#define MDT__OPTS_CHECK(o, known, fn, type)                                                        \
    (__builtin_expect((o) && (o)->version > (known), 0)                                            \
         ? (mdt__fail_opts_version((fn), (type), (o)->version, (known)), MDT_EINVAL)               \
         : 0)

/* A failure the library handles itself (it falls back, skips a damaged
 * row, degrades to a shorter name) is no failure of the public call: a call
 * that succeeds leaves the record as it found it, still describing the
 * caller's last failure (errors.h: "valid until the next failing call").
 * Every failure keeps the record it replaces (the last 8), so a handled
 * failure is forgotten, where it is handled, by going back:
 *
 * - where the failed call is a row or cell accessor (mdt_row_get,
 *   mdt_row_string, mdt_row_token, ..., mdt_typedef_enclosing), which
 *   records exactly one failure: mdt__err_forget_one(), nothing on the
 *   path that succeeds;
 * - else to a mark taken before the attempt (a number, no copy; a call
 *   into thread-local storage):
 *
 *       uint64_t m = mdt__err_mark();
 *       if (attempt(...)) {
 *           mdt__err_forget(m);
 *           return fallback;
 *       }
 *
 * - around a whole computation that handles failures in many places (a
 *   resolution, an attribute decode): a stamp, a load of a counter of all
 *   threads' failures, and mdt__err_back_to(stamp) when it succeeds, which
 *   loads the counter again and only when some thread failed meanwhile
 *   looks at this thread's record: no thread-local storage is touched
 *   otherwise;
 * - around a computation that may handle more failures than the record
 *   keeps (a change of a module set: a damaged image per module): save a
 *   copy and restore it.
 *
 * Going back undoes at most the last 8 failures; beyond that the record is
 * left as it is (it then describes a failure the library handled). */
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

#endif
