/* The profiler's one hex writer and digit reader, inline, for each of
 * its folders (core, coreclr, attach): digits written straight into the
 * caller's buffer, without a NUL; a digit's value, for the GUIDs' and
 * the %XX escapes' text. By hand rather than snprintf: a frame's token
 * and IL offset, a native frame's offset, a module's build-id are written
 * on the drain thread per new address (~680 instructions a call with
 * snprintf), and a guest should not parse formats it does not need. The
 * library has the same writer (libmdtools/util/hex.h), but a client
 * includes only the public headers (tools/check-layers.sh), and a hex
 * digit is no query of metadata to export: the few lines stand here
 * again. */
#ifndef MDP_HEX_H
#define MDP_HEX_H

#include <stdint.h>

#define MDP_HEX_LOWER "0123456789abcdef"
#define MDP_HEX_UPPER "0123456789ABCDEF"

/* Exactly n digits (1..16) of v's low 4n bits at o, most significant
 * first, from `digits` (MDP_HEX_LOWER or MDP_HEX_UPPER); returns o + n. */
static inline char *mdp_hex_put_as(char *o, uint64_t v, unsigned n, const char *digits)
{
    for (unsigned i = n; i-- > 0; v >>= 4)
        o[i] = digits[v & 15];
    return o + n;
}

/* Lower case, exactly n digits; returns o + n. */
static inline char *mdp_hex_put(char *o, uint64_t v, unsigned n)
{
    return mdp_hex_put_as(o, v, n, MDP_HEX_LOWER);
}

/* How many digits v needs: 1 (for 0) to 16. */
static inline unsigned mdp_hex_len(uint64_t v)
{
    unsigned n = 1;
    while (n < 16 && v >> 4 * n)
        n++;
    return n;
}

/* Lower case, as many digits as v needs but at least `width` (at most
 * 16); returns the end. */
static inline char *mdp_hex_put_min(char *o, uint64_t v, unsigned width)
{
    unsigned n = mdp_hex_len(v);
    return mdp_hex_put(o, v, n < width ? width : n);
}

/* The value of the hex digit c (either case), or -1. */
static inline int mdp_hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

#endif
