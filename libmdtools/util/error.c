/* The per-thread error record behind mdt_error_last() and mdt_error_message(). */
#include "config.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "util/error.h"

/* The record, and the records failures replaced, for mdt__err_forget():
 * ring[d % NRING] is the record as it stands at depth d, depth counting
 * the failures recorded and not forgotten. A failure writes the next slot
 * and so keeps the record it replaces without copying it; forgetting back
 * to a mark goes back to the mark's slot. The ring holds the last NRING
 * depths: marks below `floor_` can no longer be gone back to. Handled
 * failures are forgotten where they are handled, so the ring seldom holds
 * more than one or two (a callee that records again to add the place). */
#define NRING 9
static _Thread_local mdt_errinfo ring[NRING] = {
    [0] = {.row = UINT32_MAX, .offset = UINT64_MAX, .file_offset = UINT64_MAX}};
/* Whether a slot holds a failure: clearing a clear record is then free,
 * and callers clear after every row of a long listing. */
static _Thread_local bool dirty[NRING];
/* mdt__failures after the failure that made each slot (0 for none): see
 * mdt__err_back_to. */
static _Thread_local uint64_t stamps[NRING];
static _Thread_local uint64_t depth, floor_;
/* depth % NRING, kept: callers clear the record after every row of a long
 * listing, which should cost a load and a test. */
static _Thread_local unsigned cur;

_Atomic uint64_t mdt__failures;

#define LAST (ring[cur])

static void copy(char *dst, size_t n, const char *src)
{
    if (!src) {
        dst[0] = '\0';
        return;
    }
    snprintf(dst, n, "%s", src);
}

static void vrecord(int code, mdt_place pl, const char *fmt, va_list ap)
{
    mdt_errinfo *e;
    depth++;
    cur = (unsigned)(depth % NRING);
    if (depth >= NRING && floor_ < depth - NRING + 1)
        floor_ = depth - NRING + 1;
    e = &ring[cur];
    dirty[cur] = true;
    stamps[cur] = atomic_fetch_add_explicit(&mdt__failures, 1, memory_order_relaxed) + 1;
    e->code = code;
    copy(e->file, sizeof e->file, pl.file);
    copy(e->region, sizeof e->region, pl.region);
    copy(e->column, sizeof e->column, pl.column);
    e->row = pl.row;
    e->offset = pl.offset;
    e->file_offset = pl.file_offset;
    vsnprintf(e->what, sizeof e->what, fmt, ap);
}

int mdt__fail(int code, mdt_place place, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vrecord(code, place, fmt, ap);
    va_end(ap);
    return code;
}

int mdt__fail_simple(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vrecord(code, MDT_PLACE_NONE, fmt, ap);
    va_end(ap);
    return code;
}

int mdt__fail_opts_version(const char *fn, const char *type, unsigned version, unsigned known)
{
    mdt_place at = MDT_PLACE_NONE;
    at.region = type;
    at.column = "version";
    return mdt__fail(MDT_EINVAL, at,
                     "%s: %s version %u is later than this libmdtools reads (0 to %u): "
                     "built against a newer one?",
                     fn, type, version, known);
}

uint64_t mdt__err_mark(void)
{
    return depth;
}

void mdt__err_forget(uint64_t mark)
{
    if (mark < depth && mark >= floor_) {
        depth = mark;
        cur = (unsigned)(depth % NRING);
    }
}

void mdt__err_forget_one(void)
{
    if (depth)
        mdt__err_forget(depth - 1);
}

void mdt__err_since(uint64_t stamp)
{
    /* This thread's failures since the stamp made the top slots (a stamp a
     * thread takes is at least that of its own earlier failures, and below
     * that of its later ones): go back to the slot below them, if the ring
     * still holds it; else the record stays. */
    uint64_t k = depth;
    while (k > floor_ && stamps[k % NRING] > stamp)
        k--;
    if (k < depth && stamps[k % NRING] <= stamp)
        mdt__err_forget(k);
}

void mdt__err_save(mdt_errsave *s)
{
    s->depth = depth;
    s->dirty = dirty[cur];
    if (s->dirty)
        s->rec = LAST;
}

void mdt__err_restore(const mdt_errsave *s)
{
    if (s->depth == depth)
        return;
    if (s->depth >= floor_ && s->depth < depth) {
        mdt__err_forget(s->depth);
        return;
    }
    /* Gone from the ring: the copy, in the current slot. */
    if (s->dirty) {
        LAST = s->rec;
        dirty[cur] = true;
    } else {
        mdt_error_clear();
    }
}

const mdt_errinfo *mdt_error_last(void)
{
    return &LAST;
}

void mdt_error_clear(void)
{
    mdt_errinfo *e = &LAST;
    if (!dirty[cur])
        return;
    dirty[cur] = false;
    memset(e, 0, sizeof *e);
    e->row = UINT32_MAX;
    e->offset = UINT64_MAX;
    e->file_offset = UINT64_MAX;
}

const char *mdt_error_string(int code)
{
    switch (code) {
    case MDT_OK: return "success";
    case MDT_ENOMEM: return "out of memory";
    case MDT_EINVAL: return "invalid argument";
    case MDT_EIO: return "I/O error";
    case MDT_EBADIMAGE: return "bad image";
    case MDT_ETRUNC: return "truncated";
    case MDT_ENOTFOUND: return "not found";
    case MDT_EUNSUPPORTED: return "unsupported";
    case MDT_ENOTDOTNET: return "not a .NET image";
    case MDT_ENOHEAP: return "heap absent";
    case MDT_ITEROVER: return "no more items";
    case MDT_EUNRESOLVED: return "needs a module that is not open";
    default: return "unknown error";
    }
}

char *mdt_error_message(char *buf, size_t len)
{
    const mdt_errinfo *e = &LAST;
    size_t n = 0;
    if (!buf || !len)
        return buf;
    buf[0] = '\0';
#define PUT(...)                                                                                   \
    do {                                                                                           \
        if (n < len) {                                                                             \
            int w_ = snprintf(buf + n, len - n, __VA_ARGS__);                                      \
            if (w_ > 0)                                                                            \
                n += (size_t)w_;                                                                   \
        }                                                                                          \
    } while (0)
    if (e->file[0])
        PUT("%s: ", e->file);
    if (e->region[0]) {
        PUT("%s", e->region);
        if (e->row != UINT32_MAX)
            PUT(" row %u", e->row);
        if (e->column[0])
            PUT(" column %s", e->column);
        if (e->offset != UINT64_MAX)
            PUT("%s+0x%llx", e->row != UINT32_MAX || e->column[0] ? " at " : "",
                (unsigned long long)e->offset);
        if (e->file_offset != UINT64_MAX)
            PUT(" (file 0x%llx)", (unsigned long long)e->file_offset);
        PUT(": ");
    } else if (e->file_offset != UINT64_MAX) {
        PUT("file 0x%llx: ", (unsigned long long)e->file_offset);
    }
    PUT("%s", e->what[0] ? e->what : mdt_error_string(e->code));
#undef PUT
    return buf;
}

/* api-rename: off */
/* The old names (<mdtools/errors.h>, MDT_DEPRECATED_FOR), for programs
 * built against libmdtools 1:0:0. */
const char *mdt_strerror(int code)
{
    return mdt_error_string(code);
}

const mdt_errinfo *mdt_last_error(void)
{
    return mdt_error_last();
}

char *mdt_errmsg(char *buf, size_t len)
{
    return mdt_error_message(buf, len);
}

void mdt_clear_error(void)
{
    mdt_error_clear();
}
/* api-rename: on */
