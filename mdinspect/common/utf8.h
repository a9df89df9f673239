/* mdinspect (shell and batch): UTF-8 as both read it. Names and strings
 * of an image, and lines of a log, are untrusted bytes: what is printed
 * as text or JSON is first cut into well-formed sequences here, one rule
 * for every output. */
#ifndef MDINSPECT_COMMON_UTF8_H
#define MDINSPECT_COMMON_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* The length (1..4) of the well-formed UTF-8 sequence at s[0..len), its
 * code point in *cp (cp may be NULL); 0 when the bytes are not one
 * (overlongs, surrogates, values past U+10FFFF and a sequence cut short by
 * len included) or len is 0. RFC 3629 section 4. */
size_t mdi_utf8_seq(const unsigned char *s, size_t len, uint32_t *cp);

#endif
