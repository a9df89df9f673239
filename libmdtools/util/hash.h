/* The library's one integer mixer, for its hash tables (the ID maps' slots,
 * the resolver's name indexes): murmur3's 64-bit finalizer. Keys there are
 * pointers and tokens, which differ in a few middle bits only; the mixer
 * spreads them over every bit, so a table may index by the low bits. */
#ifndef MDT_UTIL_HASH_H
#define MDT_UTIL_HASH_H

#include <stdint.h>

static inline uint64_t mdt__mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

#endif
