/* The warnings about one input: what open found odd but could read (a
 * stream past the metadata's end, a section past the file's end, ...),
 * in the order found. The container (image/) and the metadata (md/) append
 * to the list their image owns. */
#ifndef MDT_UTIL_WARNINGS_H
#define MDT_UTIL_WARNINGS_H

#include <stddef.h>

/* At most this many are kept: a hostile file must not grow the list
 * unboundedly. md/lazy.c's deferred warnings count against it too. */
#define MDT_MAX_WARNINGS 1000

typedef struct mdt_warnings {
    void *mem;   /* talloc parent of the messages and the array */
    char **msg;
    size_t n;
} mdt_warnings;

/* Append a formatted message. Out of memory or past MDT_MAX_WARNINGS, the
 * message is dropped: a warning never fails an open. */
void mdt__warn(mdt_warnings *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
