/* The profiler's one growable text buffer, inline: a record's key and its
 * debug names (drain.c's stacks, allocstack.c, events.c) and the log's
 * header line (header.c), built piece by piece and always NUL-terminated.
 * malloc rather than talloc: the drain builds keys while the adapter's
 * callbacks run on other threads, and talloc is not thread-safe
 * (STYLE.md). A failed allocation returns -1 and leaves `bad` set until
 * the next reset, so a caller may stop at the first failure (the drain)
 * or check once at the end (the others) and drop the whole text rather
 * than write a torn one; the caller frees `s`. */
#ifndef MDP_GROWBUF_H
#define MDP_GROWBUF_H

#include <stdlib.h>
#include <string.h>

struct mdp_growbuf {
    char *s;
    size_t len, cap;
    int bad;
};

/* Room for n more bytes and the NUL: the first allocation is 1 KiB,
 * then doubled as often as needed. 0, or -1 with `bad` set. */
static inline int mdp_growbuf_grow(struct mdp_growbuf *b, size_t n)
{
    size_t cap = b->cap ? b->cap : 1024;
    while (b->len + n + 1 > cap)
        cap *= 2;
    char *p = realloc(b->s, cap);
    if (!p) {
        b->bad = 1;
        return -1;
    }
    b->s = p;
    b->cap = cap;
    return 0;
}

/* Appends the n bytes at s and a NUL; 0, or -1 with `bad` set. The drain
 * calls it twice a frame: the test for room first, the growth unlikely. */
static inline int mdp_growbuf_put(struct mdp_growbuf *b, const char *s, size_t n)
{
    if (__builtin_expect(b->len + n + 1 > b->cap, 0) && mdp_growbuf_grow(b, n))
        return -1;
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = 0;
    return 0;
}

/* Appends the string s. */
static inline int mdp_growbuf_puts(struct mdp_growbuf *b, const char *s)
{
    return mdp_growbuf_put(b, s, strlen(s));
}

/* Empties the buffer for the next text, keeping its memory (and clearing
 * a failure: the next text may fit). */
static inline void mdp_growbuf_reset(struct mdp_growbuf *b)
{
    b->len = 0;
    b->bad = 0;
}

#endif
