/* mdinspect batch: input and output. The input is read in large blocks
 * with read(2) and cut into lines in place (no copy, no allocation per
 * line); the output is gathered in a buffer written with write(2) when
 * full, so a million short lines cost a few dozen system calls. */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <talloc.h>
#include <unistd.h>

#include "batch/batch.h"

#define INBLOCK (2 * MDB_MAX_LINE) /* a whole line always fits after compaction */
#define OUTBLOCK (1u << 18)

int mdb_input_init(mdb_input *in, void *ctx, int fd)
{
    memset(in, 0, sizeof *in);
    in->fd = fd;
    in->cap = INBLOCK;
    in->buf = talloc_size(ctx, in->cap);
    return in->buf ? 0 : -1;
}

/* Read more bytes after the unread ones (moved to the front first). */
static int fill(mdb_input *in)
{
    ssize_t n;
    if (in->start > 0) {
        memmove(in->buf, in->buf + in->start, in->end - in->start);
        in->end -= in->start;
        in->start = 0;
    }
    do
        n = read(in->fd, in->buf + in->end, in->cap - in->end);
    while (n < 0 && errno == EINTR);
    if (n < 0) {
        in->failed = true;
        return -1;
    }
    if (n == 0)
        in->eof = true;
    in->end += (size_t)n;
    return 0;
}

int mdb_input_line(mdb_input *in, const char **line, size_t *len, bool *cut)
{
    size_t scanned = 0;
    *cut = false;
    for (;;) {
        char *s = in->buf + in->start;
        size_t avail = in->end - in->start;
        char *nl = memchr(s + scanned, '\n', avail - scanned);
        if (nl || (in->eof && avail > 0) || avail >= MDB_MAX_LINE) {
            size_t n = nl ? (size_t)(nl - s) : avail;
            bool toolong = n >= MDB_MAX_LINE;
            if (toolong)
                n = MDB_MAX_LINE;
            in->start += nl && !toolong ? n + 1 : n;
            in->consumed += nl && !toolong ? n + 1 : n;
            in->lineno++;
            if (n && s[n - 1] == '\r')
                n--;
            *line = s;
            *len = n;
            if (toolong) {
                /* skip the rest of the line */
                *cut = true;
                for (;;) {
                    char *e = memchr(in->buf + in->start, '\n', in->end - in->start);
                    if (e) {
                        in->consumed += (size_t)(e - (in->buf + in->start)) + 1;
                        in->start = (size_t)(e - in->buf) + 1;
                        break;
                    }
                    in->consumed += in->end - in->start;
                    in->start = in->end;
                    if (in->eof || fill(in) < 0)
                        break;
                    if (in->eof && in->start == in->end)
                        break;
                }
                /* the line's head was moved by fill(): it is not kept */
                *line = "";
                *len = 0;
            }
            return 1;
        }
        if (in->eof)
            return 0;
        scanned = avail;
        if (fill(in) < 0)
            return -1;
    }
}

int mdb_output_init(mdb_output *o, void *ctx, int fd)
{
    o->fd = fd;
    o->len = 0;
    o->cap = OUTBLOCK;
    o->failed = false;
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

void mdb_output_flush(mdb_output *o)
{
    write_all(o, o->buf, o->len);
    o->len = 0;
}

void mdb_out_slow(mdb_output *o, const void *p, size_t n)
{
    mdb_output_flush(o);
    if (n >= o->cap)
        write_all(o, p, n);
    else {
        memcpy(o->buf, p, n);
        o->len = n;
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

/* Length of the well-formed UTF-8 sequence at s (at most n bytes), 0 when
 * it is not one (overlongs, surrogates and values past U+10FFFF included). */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t k;
    uint32_t v;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        k = 2, v = c & 0x1F;
    else if (c >= 0xE0 && c <= 0xEF)
        k = 3, v = c & 0x0F;
    else if (c >= 0xF0 && c <= 0xF4)
        k = 4, v = c & 0x07;
    else
        return 0;
    if (k > n)
        return 0;
    for (size_t i = 1; i < k; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        v = v << 6 | (s[i] & 0x3F);
    }
    if ((k == 3 && (v < 0x800 || (v >= 0xD800 && v <= 0xDFFF))) || (k == 4 && (v < 0x10000 || v > 0x10FFFF)))
        return 0;
    return k;
}

/* JSON string escaping (RFC 8259 section 7) is written here rather than
 * through jansson: jansson would build a json_t per string, and this runs
 * once per distinct frame on the hot path of --json. */
void mdb_out_json_string(mdb_output *o, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)s;
    mdb_outc(o, '"');
    for (size_t i = 0; i < n;) {
        unsigned c = p[i];
        if (c == '"' || c == '\\') {
            mdb_outc(o, '\\');
            mdb_outc(o, (char)c);
            i++;
        } else if (c < 0x20) {
            char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            mdb_out(o, e, 6);
            i++;
        } else {
            size_t k = utf8_seq(p + i, n - i);
            if (k == 0) {
                mdb_out(o, "\xEF\xBF\xBD", 3);
                i++;
            } else {
                mdb_out(o, p + i, k);
                i += k;
            }
        }
    }
    mdb_outc(o, '"');
}
