/* UTF-16LE text from an image (Win32 resource names, version strings,
 * .resources entry names) as UTF-8. */
#ifndef MDT_UTIL_UTF16_H
#define MDT_UTIL_UTF16_H

#include <stddef.h>
#include <stdint.h>

/* `n` UTF-16LE code units at p as a NUL-terminated UTF-8 string under
 * mem_ctx; an unpaired surrogate becomes U+FFFD, as does a NUL (which
 * would cut the string short). NULL when out of memory. */
char *mdt__utf16_to_utf8(void *mem_ctx, const uint8_t *p, size_t n);

#endif
