/* mdinspect batch: a block's lines cut and a frame's line written, the two
 * ends of run.c's loop over a block, inlined there (each a call, or a
 * libc call, per line cost more than its work: bench/README.md, issue 28,
 * branch line6). */
#ifndef MDINSPECT_BATCH_LINES_H
#define MDINSPECT_BATCH_LINES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "batch/io.h"
#include "batch/parse.h" /* MDB_HEX_SSE2 */

/* A block cut into lines at its newlines, 64 bytes at a time: a mask of
 * the window's '\n' bytes, then one bit a line (a search per line, even
 * with SSE2, cost three times as much: a line is ~50 bytes). */
struct mdb_cutter {
    const char *buf;
    size_t len, at; /* the window is buf[at, at + 64) */
    uint64_t mask;  /* its newlines not handed out yet */
};

static inline uint64_t mdb_newlines64(const char *p)
{
#ifdef MDB_HEX_SSE2
    const __m128i nl = _mm_set1_epi8('\n');
    const __m128i *v = (const __m128i *)(const void *)p;
    uint64_t a = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128(v), nl));
    uint64_t b = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128(v + 1), nl));
    uint64_t c = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128(v + 2), nl));
    uint64_t d = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128(v + 3), nl));
    return a | b << 16 | c << 32 | d << 48;
#else
    uint64_t m = 0;
    for (unsigned i = 0; i < 64; i++)
        m |= (uint64_t)(p[i] == '\n') << i;
    return m;
#endif
}

/* The mask of the window at c->at; past the block's end, no newline (the
 * buffer is not read there: the last window is copied). */
static inline uint64_t mdb_cutter_window(const struct mdb_cutter *c)
{
    char tail[64];
    size_t left = c->len - c->at;
    if (__builtin_expect(left >= 64, 1))
        return mdb_newlines64(c->buf + c->at);
    memset(tail, 0, sizeof tail);
    memcpy(tail, c->buf + c->at, left);
    return mdb_newlines64(tail);
}

static inline void mdb_cutter_init(struct mdb_cutter *c, const char *buf, size_t len)
{
    c->buf = buf;
    c->len = len;
    c->at = 0;
    c->mask = len ? mdb_cutter_window(c) : 0;
}

/* The next newline of the block, or its end when no newline is left. */
static inline const char *mdb_next_newline(struct mdb_cutter *c)
{
    while (!c->mask) {
        if (c->len - c->at <= 64)
            return c->buf + c->len;
        c->at += 64;
        c->mask = mdb_cutter_window(c);
    }
    const char *nl = c->buf + c->at + __builtin_ctzll(c->mask);
    c->mask &= c->mask - 1;
    return nl;
}

/* A frame's text and a newline to o. A name is 20-100 bytes: copied
 * sixteen at a time, the last sixteen overlapping, within its bytes
 * (libc's memcpy for a length it learns at run time, and a second call for
 * the newline, cost more than the copy). */
static inline void mdb_out_line(mdb_output *o, const char *t, size_t n)
{
#ifdef MDB_HEX_SSE2
    if (n >= 16 && n < o->cap - o->len) {
        char *d = o->buf + o->len;
        for (size_t i = 0; i + 16 < n; i += 16)
            _mm_storeu_si128((__m128i *)(void *)(d + i),
                             _mm_loadu_si128((const __m128i *)(const void *)(t + i)));
        _mm_storeu_si128((__m128i *)(void *)(d + n - 16),
                         _mm_loadu_si128((const __m128i *)(const void *)(t + n - 16)));
        d[n] = '\n';
        o->len += n + 1;
        return;
    }
#endif
    mdb_out(o, t, n);
    mdb_outc(o, '\n');
}

#endif
