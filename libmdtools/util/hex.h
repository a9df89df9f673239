/* The library's one hex writer: lower-case digits of a number written
 * straight into the caller's buffer, without a NUL. By hand rather than
 * snprintf, and inline: the writers run per signature (a blob's name),
 * per method incarnation in the profiler (a GUID's text), per descriptor,
 * where snprintf's format parsing cost more than the rest of the work.
 * The clients (mdinspect, the profiler) may not include this header
 * (tools/check-layers.sh: public headers only); each keeps its own copy
 * of the same few lines (mdinspect/common/hex.h, profiler/core/hex.h). */
#ifndef MDT_UTIL_HEX_H
#define MDT_UTIL_HEX_H

#include <stdint.h>

/* Exactly n digits (1..16) of v's low 4n bits at o, most significant
 * first; returns o + n. */
static inline char *mdt__hex_put(char *o, uint64_t v, unsigned n)
{
    for (unsigned i = n; i-- > 0; v >>= 4)
        o[i] = "0123456789abcdef"[v & 15];
    return o + n;
}

/* As many digits as v needs (no leading zeros, "0" for 0), but at least
 * `width` (at most 16) at o; returns the end. */
static inline char *mdt__hex_put_min(char *o, uint64_t v, unsigned width)
{
    unsigned n = 1;
    while (n < 16 && v >> 4 * n)
        n++;
    return mdt__hex_put(o, v, n < width ? width : n);
}

#endif
