/* Building strings: the library's one string builder. Its storage is one
 * of three kinds:
 *  - sb_init: a talloc block under ctx, grown as needed;
 *  - sb_init_stack: a buffer of the caller's (on its stack) until the text
 *    outgrows it, then a talloc block under ctx: a short string costs one
 *    allocation of its exact size, at sb_finish;
 *  - sb_init_fixed: a caller's buffer and nothing else: text that does not
 *    fit is cut (the prefix that fits is kept, NUL-terminated) and the
 *    builder fails.
 * The text is NUL-terminated after every append (once there is storage).
 * A failure (out of memory, past s->max bytes, a full fixed buffer) is
 * kept in s->failed and reported once, by sb_finish or by the caller;
 * what is appended after it is not used. The common append is inline: a
 * bounds check and a memcpy. Not thread-safe: one builder, one thread. */
#ifndef MDT_UTIL_STRBUF_H
#define MDT_UTIL_STRBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <talloc.h>

/* The longest text a builder makes unless told otherwise (s->max). */
#define SB_MAX_DEFAULT ((size_t)1 << 30)

typedef struct sb {
    char *buf; /* cap bytes: len of text, then a NUL; NULL before the first append */
    size_t len, cap;
    void *ctx;  /* talloc parent of the grown block (may be NULL) */
    size_t max; /* growing past it fails (too_long); checked when the
                   block must grow, so the text stops short of 2 * max */
    /* Flags side by side: starting a builder stores them at once. */
    bool heap;     /* buf is a talloc block under ctx, or NULL before one is
                      needed; false while the text is in the caller's buffer */
    bool fixed;    /* buf is the caller's and never grows */
    bool failed;   /* out of memory, too long, or a fixed buffer full */
    bool too_long; /* the failure was passing max */
} sb;

/* The initializers are inline: a name printer starts a builder per name. */

/* A builder whose text grows in a talloc block under ctx. */
static inline void sb_init(sb *s, void *ctx)
{
    s->buf = NULL;
    s->len = s->cap = 0;
    s->ctx = ctx;
    s->max = SB_MAX_DEFAULT;
    s->heap = true;
    s->fixed = s->failed = s->too_long = false;
}

/* A builder that starts in buf (cap >= 1 bytes, the caller's, e.g. on its
 * stack) and moves to a talloc block under ctx when the text outgrows it. */
static inline void sb_init_stack(sb *s, void *ctx, char *buf, size_t cap)
{
    s->buf = buf;
    s->len = 0;
    s->cap = cap;
    s->ctx = ctx;
    s->max = SB_MAX_DEFAULT;
    s->heap = s->fixed = s->failed = s->too_long = false;
    buf[0] = '\0';
}

/* A builder that writes into buf (cap >= 1 bytes) only. */
static inline void sb_init_fixed(sb *s, char *buf, size_t cap)
{
    s->buf = buf;
    s->len = 0;
    s->cap = cap;
    s->ctx = NULL;
    s->max = SB_MAX_DEFAULT;
    s->heap = false;
    s->fixed = true;
    s->failed = s->too_long = false;
    buf[0] = '\0';
}

/* Where an append does not fit: grow, cut (fixed) or fail. */
void sb_add_slow(sb *s, const char *str, size_t n);

static inline void sb_add(sb *s, const char *str, size_t n)
{
    if (n < s->cap - s->len) {
        memcpy(s->buf + s->len, str, n);
        s->len += n;
        s->buf[s->len] = '\0';
        return;
    }
    sb_add_slow(s, str, n);
}

static inline void sb_adds(sb *s, const char *str)
{
    sb_add(s, str, strlen(str));
}

static inline void sb_addc(sb *s, char c)
{
    sb_add(s, &c, 1);
}

void sb_addf(sb *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Forget the text after its first len bytes (nothing after a failure). */
static inline void sb_cut(sb *s, size_t len)
{
    if (s->failed || len > s->len)
        return;
    s->len = len;
    s->buf[len] = '\0';
}

/* sb_finish where its inline part does not finish: failures, nothing
 * appended. */
int sb_finish_slow(sb *s, char **out);

/* The finished text of a growing builder (sb_init, sb_init_stack; never a
 * fixed one), owned by ctx: the grown block itself, or a copy of the
 * caller's buffer at its exact size; "" when nothing was appended. On
 * failure the block is freed and MDT_ENOMEM recorded ("out of memory
 * building a name"): a caller that wants another error for s->too_long
 * checks it first. Inline: a name printer finishes a builder per name. */
static inline int sb_finish(sb *s, char **out)
{
    if (!s->failed) {
        if (!s->heap) {
            /* Named as talloc_strdup names its strings, in one call. */
            if ((*out = (char *)talloc_named_const(s->ctx, s->len + 1, "char"))) {
                memcpy(*out, s->buf, s->len + 1);
                return 0;
            }
        } else if (s->buf) {
            *out = s->buf;
            return 0;
        }
    }
    return sb_finish_slow(s, out);
}
/* Free the grown block, if any; the builder is empty and usable again, as
 * a growing one (sb_init). */
void sb_discard(sb *s);

#endif
