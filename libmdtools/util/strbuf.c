/* Building strings (util/strbuf.h): what the inline appends do not handle.
 * A growing builder doubles its block, so appends cost amortized O(1); a
 * builder in a caller's buffer moves to a talloc block the first time the
 * text outgrows it; a fixed one keeps the prefix that fits and fails. */
#include "config.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <talloc.h>

#include "util/error.h"
#include "util/strbuf.h"

/* A block with room for n more bytes and the NUL; 0, or -1 having failed. */
static int grow(sb *s, size_t n)
{
    size_t cap = s->cap ? s->cap * 2 : 64;
    while (cap - s->len <= n) /* len + n <= max: no overflow */
        cap *= 2;
    char *b = s->heap ? talloc_realloc(s->ctx, s->buf, char, cap) : talloc_array(s->ctx, char, cap);
    if (!b) {
        s->failed = true;
        return -1;
    }
    if (!s->heap) { /* leaving the caller's buffer */
        if (s->len)
            memcpy(b, s->buf, s->len);
        b[s->len] = '\0';
    }
    s->buf = b;
    s->cap = cap;
    s->heap = true;
    return 0;
}

void sb_add_slow(sb *s, const char *str, size_t n)
{
    if (s->failed)
        return;
    if (s->fixed) {
        /* What fits of it (the inline append took everything that fits
         * whole), NUL-terminated: the caller gets the prefix. */
        size_t room = s->cap - s->len - 1;
        if (room > n)
            room = n;
        memcpy(s->buf + s->len, str, room);
        s->len += room;
        s->buf[s->len] = '\0';
        s->failed = true;
        return;
    }
    if (n > s->max - s->len) {
        s->failed = s->too_long = true;
        return;
    }
    if (n >= s->cap - s->len && grow(s, n))
        return;
    memcpy(s->buf + s->len, str, n);
    s->len += n;
    s->buf[s->len] = '\0';
}

void sb_addf(sb *s, const char *fmt, ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof small) {
        sb_add(s, small, (size_t)n);
        return;
    }
    /* Rare: formatted apart, so every kind of storage takes it alike. */
    char *big = talloc_array(NULL, char, (size_t)n + 1);
    if (!big) {
        s->failed = true;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    sb_add(s, big, (size_t)n);
    talloc_free(big);
}

int sb_finish_slow(sb *s, char **out)
{
    assert(!s->fixed);
    if (!s->failed && !s->buf)
        sb_add_slow(s, "", 0);
    if (s->failed) {
        sb_discard(s);
        return mdt__fail_simple(MDT_ENOMEM, "out of memory building a name");
    }
    if (s->heap) {
        *out = s->buf;
        return 0;
    }
    if (!(*out = talloc_memdup(s->ctx, s->buf, s->len + 1)))
        return mdt__fail_simple(MDT_ENOMEM, "out of memory building a name");
    talloc_set_name_const(*out, "char");
    return 0;
}

void sb_discard(sb *s)
{
    if (s->heap)
        talloc_free(s->buf);
    sb_init(s, s->ctx);
}
