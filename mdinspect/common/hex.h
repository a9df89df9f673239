/* mdinspect (shell and batch): the one hex writer, inline: digits written
 * straight into the caller's buffer, without a NUL. By hand rather than
 * snprintf: a token's text is written per table cell in the shell and per
 * frame in batch, an MVID's per module line, where snprintf's format
 * parsing was most of the cost. The library has the same writer
 * (libmdtools/util/hex.h), but mdinspect includes only the public headers
 * (tools/check-layers.sh), and a hex digit is no query of metadata to
 * export: the few lines stand here again (and in profiler/core/hex.h). */
#ifndef MDINSPECT_COMMON_HEX_H
#define MDINSPECT_COMMON_HEX_H

#include <stdint.h>

#define MDI_HEX_LOWER "0123456789abcdef"
#define MDI_HEX_UPPER "0123456789ABCDEF"

/* Exactly n digits (1..16) of v's low 4n bits at o, most significant
 * first, from `digits` (MDI_HEX_LOWER or MDI_HEX_UPPER); returns o + n. */
static inline char *mdi_hex_put_as(char *o, uint64_t v, unsigned n, const char *digits)
{
    for (unsigned i = n; i-- > 0; v >>= 4)
        o[i] = digits[v & 15];
    return o + n;
}

/* Lower case, exactly n digits; returns o + n. */
static inline char *mdi_hex_put(char *o, uint64_t v, unsigned n)
{
    return mdi_hex_put_as(o, v, n, MDI_HEX_LOWER);
}

/* A token as "0xTTRRRRRR" (lower case, 10 bytes); returns o + 10. */
static inline char *mdi_hex_token(char *o, uint32_t token)
{
    o[0] = '0';
    o[1] = 'x';
    return mdi_hex_put(o + 2, token, 8);
}

#endif
