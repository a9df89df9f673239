/* Bump allocation of names in chunks, for the caller's name arena
 * (names.c: names printed straight into the free bytes) and the name
 * cache (typenames.c: each name copied once when kept): the free bytes of
 * the chunk in use are [*cur, *end); a chunk is a talloc block of `size`
 * bytes off `owner`, freed with it. Neither call records an error: the
 * arena's caller says what failed (MDT_ENOMEM, located), the cache does
 * without the name. */
#ifndef MDT_GENERICS_BUMP_INT_H
#define MDT_GENERICS_BUMP_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <talloc.h>

/* A fresh chunk as the free bytes (the rest of the one in use is left);
 * false, with them unchanged, when out of memory. */
static inline bool mdt__bump_chunk(void *owner, size_t size, char **cur, char **end)
{
    char *c = talloc_size(owner, size);
    if (!c)
        return false;
    *cur = c;
    *end = c + size;
    return true;
}

/* s[0..n) and a NUL copied into the free bytes, a fresh chunk taken when
 * they do not fit (n + 1 <= size: a longer name is the caller's to keep
 * in a block of its own); the copy, or NULL when out of memory. */
static inline char *mdt__bump_keep(void *owner, size_t size, char **cur, char **end, const char *s,
                                   size_t n)
{
    if ((size_t)(*end - *cur) < n + 1 && !mdt__bump_chunk(owner, size, cur, end))
        return NULL;
    char *p = *cur;
    memcpy(p, s, n);
    p[n] = '\0';
    *cur += n + 1;
    return p;
}

#endif
