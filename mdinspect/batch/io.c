/* mdinspect batch: input and output. The input is read with read(2)
 * straight into blocks of whole lines (only the unfinished line at a
 * block's end is copied, to the next block), which the threads of a run
 * cut into lines in place; the output is gathered in buffers written with
 * write(2), so a million short lines cost a few thousand system calls.
 * A line of MDB_MAX_LINE bytes or more is not kept: its block says it was
 * cut, and its bytes are skipped up to its newline. A regular file is
 * read in ranges instead, each by the thread that resolves it
 * (mdb_read_range, run.c): the same lines, cut the same way. */

#define _GNU_SOURCE /* memrchr */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <talloc.h>
#include <unistd.h>

#include <mdtools/file.h>

#include "batch/batch.h"
#include "common/json.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define OUTBLOCK (1u << 18)

int mdb_reader_init(mdb_reader *rd, void *ctx, int fd)
{
    memset(rd, 0, sizeof *rd);
    rd->fd = fd;
    rd->ctx = ctx;
    rd->carry_cap = 256;
    rd->carry = talloc_size(ctx, rd->carry_cap);
    return rd->carry ? 0 : -1;
}

int mdb_block_init(mdb_block *b, void *ctx)
{
    memset(b, 0, sizeof *b);
    b->ctx = ctx;
    b->cap = MDB_BLOCK;
    b->buf = b->mem = talloc_size(ctx, b->cap);
    return b->buf ? 0 : -1;
}

/* Room for n bytes from the start of the block's memory (a line longer
 * than MDB_BLOCK); buf keeps its place in it. */
static int room(mdb_block *b, size_t n)
{
    size_t cap = b->cap, off = (size_t)(b->buf - b->mem);
    char *p;
    if (n <= cap)
        return 0;
    while (cap < n)
        cap *= 2;
    if (!(p = talloc_realloc(b->ctx, b->mem, char, cap)))
        return -1;
    b->mem = p;
    b->buf = p + off;
    b->cap = cap;
    return 0;
}

/* Keep buf[from, len) of the block for the next one. */
static int keep_carry(mdb_reader *rd, mdb_block *b, size_t from)
{
    size_t n = b->len - from;
    if (n > rd->carry_cap) {
        char *p = talloc_realloc(rd->ctx, rd->carry, char, n);
        if (!p)
            return -1;
        rd->carry = p;
        rd->carry_cap = n;
    }
    memcpy(rd->carry, b->buf + from, n);
    rd->carry_len = n;
    b->len = from;
    return 0;
}

/* One read(2) after the block's bytes: 1 with bytes, 0 at the end, -1 on
 * an error. */
static int more(mdb_reader *rd, mdb_block *b)
{
    ssize_t n;
    if (b->len == b->cap && room(b, b->cap * 2) < 0)
        return -1;
    do
        n = read(rd->fd, b->buf + b->len, b->cap - b->len);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return -1;
    if (n == 0)
        rd->eof = true;
    b->len += (size_t)n;
    return n > 0;
}

/* The block starts with a line too long to keep: drop its bytes up to its
 * newline (reading on while there is none); what follows is carried. */
static int cut_line(mdb_reader *rd, mdb_block *b)
{
    const char *nl = memchr(b->buf, '\n', b->len);
    while (!nl) {
        rd->consumed += b->len;
        b->len = 0;
        if (rd->eof)
            break;
        if (more(rd, b) < 0)
            return -1;
        nl = memchr(b->buf, '\n', b->len);
    }
    if (nl) {
        size_t after = (size_t)(nl - b->buf) + 1;
        rd->consumed += after;
        if (keep_carry(rd, b, after) < 0)
            return -1;
    }
    b->len = 0;
    b->nlines = 1;
    b->counted = true;
    b->single = b->cut = true;
    return 1;
}

int mdb_read_block(mdb_reader *rd, mdb_block *b)
{
    size_t scanned = 0; /* bytes known to hold no newline */
    b->nlines = 0;
    b->counted = false;
    b->single = b->cut = false;
    b->tail = 0;
    b->last_long = false;
    b->buf = b->mem;
    if (room(b, rd->carry_len + MDB_BLOCK) < 0)
        return -1;
    memcpy(b->buf, rd->carry, rd->carry_len);
    b->len = rd->carry_len;
    rd->carry_len = 0;
    for (;;) {
        size_t limit = b->len < MDB_MAX_LINE + 1 ? b->len : MDB_MAX_LINE + 1;
        const char *first =
                       scanned < limit ? memchr(b->buf + scanned, '\n', limit - scanned) : NULL,
                   *last;
        scanned = limit;
        if (first && (size_t)(first - b->buf) >= MDB_MAX_LINE)
            return cut_line(rd, b);
        if (first) {
            /* whole lines up to the last newline; the rest waits */
            last = memrchr(first, '\n', (size_t)(b->buf + b->len - first));
            if (keep_carry(rd, b, (size_t)(last - b->buf) + 1) < 0)
                return -1;
            /* the lines are counted by the thread that resolves the
             * block, not here: this thread is the run's serial part
             * (run.c, block_base) */
            rd->consumed += b->len;
            return 1;
        }
        if (b->len >= MDB_MAX_LINE)
            return cut_line(rd, b);
        if (rd->eof) {
            if (!b->len)
                return 0;
            /* the last line, without a newline */
            b->nlines = 1;
            b->counted = true;
            b->single = true;
            rd->consumed += b->len;
            return 1;
        }
        if (more(rd, b) < 0)
            return -1;
    }
}

/* ------------------------------------------------------------- ranges */

#define RANGE_EXTRA 1024u /* bytes read past a range's end with it: its last line */

/* The range's bytes are read with pread(2) into the block
 * (mdt_file_read_at: until the count or the end of the file), not mapped: a
 * mapping of a file that another process truncates raises SIGBUS on the
 * pages past its new end, which a multi-threaded filter cannot recover
 * from cleanly (a handler and siglongjmp out of any libc call); pread
 * simply returns fewer bytes. The copy costs system time, but each worker
 * makes its own, side by side (bench/README.md, issue 28, branch
 * batchio). */
int mdb_read_range(mdb_block *b, int fd, uint64_t base, uint64_t start, uint64_t end,
                   mdb_range_end *e)
{
    const uint64_t from = start ? start - 1 : 0; /* the byte before: a line's start? */
    const size_t span = (size_t)(end - from);
    size_t want = span + RANGE_EXTRA, got, inrange, skip = 0, ls, have, scanned;
    const char *nl;
    long long r;
    b->nlines = 0;
    b->counted = false;
    b->single = b->cut = false;
    b->tail = 0;
    b->last_long = false;
    b->buf = b->mem;
    b->len = 0;
    e->eof = UINT64_MAX;
    e->err = 0;
    e->err_at = 0;
    if (room(b, want) < 0)
        return -1;
    if ((r = mdt_file_read_at(fd, b->mem, want, base + from)) < 0) {
        e->err = errno ? errno : EIO;
        e->err_at = from;
        return -1;
    }
    got = (size_t)r;
    if (got < want)
        e->eof = from + got;
    inrange = got < span ? got : span; /* bytes of [from, end) */
    if (start) {
        /* the first line that starts in the range: past the first newline
         * at or after start - 1 */
        if (!(nl = memchr(b->mem, '\n', inrange)))
            return 0;
        skip = (size_t)(nl - b->mem) + 1;
    }
    if (skip >= inrange)
        return 0; /* no line starts in the range */
    b->buf = b->mem + skip;
    /* the last line that starts in the range, and whether it ends in it */
    nl = memrchr(b->mem + skip, '\n', inrange - skip);
    if (nl && (size_t)(nl - b->mem) == inrange - 1) {
        b->len = inrange - skip;
        return 0;
    }
    ls = nl ? (size_t)(nl - b->mem) + 1 : skip;
    /* Finish it: up to its newline, the end of the input, or MDB_MAX_LINE
     * bytes (a line of MDB_MAX_LINE or more is cut, as mdb_read_block
     * does; the ranges after it skip its bytes by themselves). */
    have = got;
    scanned = inrange;
    for (;;) {
        size_t lim = have < ls + MDB_MAX_LINE ? have : ls + MDB_MAX_LINE, more;
        nl = scanned < lim ? memchr(b->mem + scanned, '\n', lim - scanned) : NULL;
        scanned = lim;
        if (nl) {
            b->len = (size_t)(nl - b->buf) + 1;
            return 0;
        }
        if (lim == ls + MDB_MAX_LINE) {
            b->mem[ls] = '\n'; /* its bytes are not kept */
            b->len = ls + 1 - skip;
            b->last_long = true;
            return 0;
        }
        if (e->eof != UINT64_MAX) {
            /* the input ends inside it: the last line, without a newline */
            b->len = have - skip;
            b->tail = have - ls;
            return 0;
        }
        more = have - ls > 4096 ? have - ls : 4096;
        if (more > ls + MDB_MAX_LINE - have)
            more = ls + MDB_MAX_LINE - have;
        if (room(b, have + more) < 0)
            return -1;
        if ((r = mdt_file_read_at(fd, b->mem + have, more, base + from + have)) < 0) {
            e->err = errno ? errno : EIO;
            e->err_at = from + have;
            return -1;
        }
        if ((size_t)r < more)
            e->eof = from + have + (size_t)r;
        have += (size_t)r;
    }
}

uint64_t mdb_block_lines(const mdb_block *b)
{
    return mdb_count_newlines(b->buf, b->len) + (b->tail != 0);
}

uint64_t mdb_count_newlines(const char *s, size_t n)
{
    uint64_t c = 0;
    size_t i = 0;
#if defined(__SSE2__)
    /* Equal bytes are -1: subtracting them counts up to 255 per byte lane
     * (63 rounds of at most 4) before the lanes are summed. */
    const __m128i nl = _mm_set1_epi8('\n'), zero = _mm_setzero_si128();
    while (i + 64 <= n) {
        __m128i acc = zero;
        for (int k = 0; k < 63 && i + 64 <= n; k++, i += 64) {
            const __m128i *v = (const __m128i *)(const void *)(s + i);
            __m128i e = _mm_add_epi8(_mm_cmpeq_epi8(_mm_loadu_si128(v), nl),
                                     _mm_cmpeq_epi8(_mm_loadu_si128(v + 1), nl));
            e = _mm_add_epi8(e, _mm_cmpeq_epi8(_mm_loadu_si128(v + 2), nl));
            e = _mm_add_epi8(e, _mm_cmpeq_epi8(_mm_loadu_si128(v + 3), nl));
            acc = _mm_sub_epi8(acc, e); /* each byte lane gains at most 4 */
        }
        __m128i sum = _mm_sad_epu8(acc, zero);
        c += (uint64_t)_mm_cvtsi128_si32(sum) + (uint64_t)_mm_extract_epi16(sum, 4);
    }
#endif
    for (; i < n; i++)
        c += s[i] == '\n';
    return c;
}

int mdb_output_init(mdb_output *o, void *ctx, int fd)
{
    o->fd = fd;
    o->len = 0;
    o->cap = OUTBLOCK;
    o->failed = false;
    o->spill = NULL;
    o->arg = NULL;
    o->buf = talloc_size(ctx, o->cap);
    return o->buf ? 0 : -1;
}

static void write_all(mdb_output *o, const char *p, size_t n)
{
    while (n && !o->failed) {
        ssize_t w = write(o->fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            o->failed = true;
            return;
        }
        p += w;
        n -= (size_t)w;
    }
}

void mdb_write(mdb_output *o, const void *p, size_t n)
{
    write_all(o, p, n);
}

void mdb_output_flush(mdb_output *o)
{
    if (o->spill)
        o->spill(o);
    else
        write_all(o, o->buf, o->len);
    o->len = 0;
}

void mdb_out_slow(mdb_output *o, const void *p, size_t n)
{
    const char *c = p;
    for (;;) {
        size_t k = o->cap - o->len < n ? o->cap - o->len : n;
        memcpy(o->buf + o->len, c, k);
        o->len += k;
        c += k;
        n -= k;
        if (!n)
            return;
        mdb_output_flush(o);
        if (o->failed) {
            o->len = 0;
            return;
        }
    }
}

void mdb_outs(mdb_output *o, const char *s)
{
    mdb_out(o, s, strlen(s));
}

void mdb_outu(mdb_output *o, uint64_t v)
{
    char b[24], *p = b + sizeof b;
    do
        *--p = (char)('0' + v % 10);
    while (v /= 10);
    mdb_out(o, p, (size_t)(b + sizeof b - p));
}

/* A JSON string the way the shell writes one too (common/json.h): the
 * escaping runs straight into the output buffer, which is written out (or,
 * for a scratch buffer, marked failed) when it has no room left. */
void mdb_out_json_string(mdb_output *o, const char *s, size_t n)
{
    mdb_outc(o, '"');
    while (n) {
        size_t used;
        if (o->cap - o->len < MDI_JSON_ESCAPE_MAX) {
            mdb_output_flush(o);
            if (o->failed) {
                o->len = 0;
                return;
            }
        }
        o->len += mdi_json_escape(o->buf + o->len, o->cap - o->len, s, n, &used);
        s += used;
        n -= used;
    }
    mdb_outc(o, '"');
}
