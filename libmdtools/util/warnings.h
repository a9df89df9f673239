/* The warnings about one input: what was found odd but could be read (a
 * stream past the metadata's end, a section past the file's end, ...), in
 * the order found. Several readers of one input may append to one list. */
#ifndef MDT_UTIL_WARNINGS_H
#define MDT_UTIL_WARNINGS_H

#include <stddef.h>

/* At most this many are kept: a hostile file must not grow the list
 * unboundedly. Warnings kept elsewhere about the same input count against
 * it too (the caller adds them up). */
#define MDT_MAX_WARNINGS 1000

typedef struct mdt_warnings {
    void *mem; /* talloc parent of the messages and the array */
    char **msg;
    size_t n;
} mdt_warnings;

/* Append a formatted message. Out of memory or past MDT_MAX_WARNINGS, the
 * message is dropped: a warning never fails an open. */
void mdt__warn(mdt_warnings *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
