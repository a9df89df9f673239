/* Growing strings (util/strbuf.h). */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <talloc.h>

#include "util/error.h"
#include "util/strbuf.h"

void sb_init(sb *s, void *ctx)
{
    s->ctx = ctx;
    s->buf = NULL;
    s->len = s->cap = 0;
    s->failed = 0;
}

static int grow(sb *s, size_t extra)
{
    if (s->failed)
        return -1;
    if (extra < s->cap - s->len)
        return 0;
    size_t cap = s->cap ? s->cap : 64;
    while (cap - s->len <= extra) {
        if (cap > ((size_t)1 << 30)) { /* names are never this long */
            s->failed = 1;
            return -1;
        }
        cap *= 2;
    }
    char *b = talloc_realloc(s->ctx, s->buf, char, cap);
    if (!b) {
        s->failed = 1;
        return -1;
    }
    s->buf = b;
    s->cap = cap;
    return 0;
}

void sb_add(sb *s, const char *str, size_t n)
{
    if (grow(s, n))
        return;
    memcpy(s->buf + s->len, str, n);
    s->len += n;
    s->buf[s->len] = '\0';
}

void sb_adds(sb *s, const char *str)
{
    sb_add(s, str, strlen(str));
}

void sb_addc(sb *s, char c)
{
    sb_add(s, &c, 1);
}

void sb_addf(sb *s, const char *fmt, ...)
{
    char small[128];
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
    if (grow(s, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(s->buf + s->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    s->len += (size_t)n;
}

int sb_finish(sb *s, char **out)
{
    if (!s->failed && !s->buf)
        sb_add(s, "", 0);
    if (s->failed) {
        talloc_free(s->buf);
        s->buf = NULL;
        return mdt__fail_simple(MDT_ENOMEM, "out of memory building a name");
    }
    *out = s->buf;
    return 0;
}

void sb_discard(sb *s)
{
    talloc_free(s->buf);
    s->buf = NULL;
}
