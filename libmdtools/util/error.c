/* The per-thread error record behind mdt_last_error() and mdt_errmsg(). */
#include "config.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "util/error.h"

static _Thread_local mdt_errinfo last = {.row = UINT32_MAX,
                                         .offset = UINT64_MAX,
                                         .file_offset = UINT64_MAX};
/* Whether `last` holds a record: clearing a clear record is then free,
 * and callers clear after every row of a long listing. */
static _Thread_local bool dirty;

/* What mdt__err_forget() goes back to: a stack of the records that
 * failures overwrote. Each failure pushes the record it replaces (depth
 * counts them); forgetting back to a mark pops to it. The stack keeps its
 * top NBACK entries: a push at depth d drops depth d - NBACK, and marks
 * below `floor` can no longer be gone back to. Handled failures are
 * forgotten where they are handled, so the stack seldom holds more than
 * one or two (a callee that records again to add the place). */
#define NBACK 8
static _Thread_local struct {
    mdt_errinfo rec;
    bool dirty;
    uint64_t stamp; /* mdt__failures after this failure: see mdt__err_back_to */
} back[NBACK];
static _Thread_local uint64_t depth, floor_;

_Atomic uint64_t mdt__failures;

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
    back[depth % NBACK].rec = last;
    back[depth % NBACK].dirty = dirty;
    back[depth % NBACK].stamp =
        atomic_fetch_add_explicit(&mdt__failures, 1, memory_order_relaxed) + 1;
    if (depth >= NBACK && floor_ < depth - NBACK + 1)
        floor_ = depth - NBACK + 1;
    depth++;
    dirty = true;
    last.code = code;
    copy(last.file, sizeof last.file, pl.img ? mdt__image_name(pl.img) : NULL);
    copy(last.region, sizeof last.region, pl.region);
    copy(last.column, sizeof last.column, pl.column);
    last.row = pl.row;
    last.offset = pl.offset;
    last.file_offset = pl.file_offset;
    vsnprintf(last.what, sizeof last.what, fmt, ap);
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

uint64_t mdt__err_mark(void)
{
    return depth;
}

void mdt__err_forget(uint64_t mark)
{
    if (mark >= depth || mark < floor_)
        return;
    last = back[mark % NBACK].rec;
    dirty = back[mark % NBACK].dirty;
    depth = mark;
}

void mdt__err_forget_one(void)
{
    if (depth)
        mdt__err_forget(depth - 1);
}

void mdt__err_since(uint64_t stamp)
{
    /* This thread's failures since the stamp are the top of its stack (a
     * stamp a thread takes is at least that of its own earlier failures,
     * and below that of its later ones); go back to below the first. */
    uint64_t first = depth;
    while (first > floor_ && back[(first - 1) % NBACK].stamp > stamp)
        first--;
    /* Below `first` is a failure from before the stamp (or none at all):
     * the record as it was then is the one to go back to. Else it went out
     * of the stack, and the record stays. */
    if (first < depth && (first > floor_ || floor_ == 0))
        mdt__err_forget(first);
}

void mdt__err_save(mdt_errsave *s)
{
    s->depth = depth;
    s->dirty = dirty;
    if (dirty)
        s->rec = last;
}

void mdt__err_restore(const mdt_errsave *s)
{
    if (s->depth == depth)
        return;
    if (s->depth >= floor_ && s->depth < depth) {
        mdt__err_forget(s->depth);
        return;
    }
    /* Gone from the stack: the copy. Depth stays, so that the stack's
     * entries stay what they were. */
    if (s->dirty) {
        last = s->rec;
        dirty = true;
    } else {
        mdt_clear_error();
    }
}

const mdt_errinfo *mdt_last_error(void)
{
    return &last;
}

void mdt_clear_error(void)
{
    if (!dirty)
        return;
    dirty = false;
    memset(&last, 0, sizeof last);
    last.row = UINT32_MAX;
    last.offset = UINT64_MAX;
    last.file_offset = UINT64_MAX;
}

const char *mdt_strerror(int code)
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

char *mdt_errmsg(char *buf, size_t len)
{
    const mdt_errinfo *e = &last;
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
    PUT("%s", e->what[0] ? e->what : mdt_strerror(e->code));
#undef PUT
    return buf;
}
