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

/* The longest text a builder makes unless told otherwise (s->max). */
#define SB_MAX_DEFAULT ((size_t)1 << 30)

typedef struct sb {
    char *buf;      /* cap bytes: len of text, then a NUL; NULL before the first append */
    size_t len, cap;
    void *ctx;      /* talloc parent of the grown block (may be NULL) */
    size_t max;     /* growing past it fails (too_long); checked when the
                       block must grow, so the text stops short of 2 * max */
    bool heap;      /* buf is a talloc block under ctx */
    bool fixed;     /* buf is the caller's and never grows */
    int failed;     /* out of memory, too long, or a fixed buffer full */
    int too_long;   /* the failure was passing max */
} sb;

/* A builder whose text grows in a talloc block under ctx. */
void sb_init(sb *s, void *ctx);
/* A builder that starts in buf (cap >= 1 bytes, the caller's, e.g. on its
 * stack) and moves to a talloc block under ctx when the text outgrows it. */
void sb_init_stack(sb *s, void *ctx, char *buf, size_t cap);
/* A builder that writes into buf (cap >= 1 bytes) only. */
void sb_init_fixed(sb *s, char *buf, size_t cap);

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

/* The finished text of a growing builder (sb_init, sb_init_stack), owned
 * by ctx: the grown block itself, or a copy of the caller's buffer at its
 * exact size; "" when nothing was appended. On failure the block is freed
 * and MDT_ENOMEM recorded ("out of memory building a name"): a caller that
 * wants another error for s->too_long checks it first. */
int sb_finish(sb *s, char **out);
/* Free the grown block, if any; the builder is empty and usable again. */
void sb_discard(sb *s);

#endif
