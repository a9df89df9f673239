/* mdinspect batch: the fixed-width fields of input lines, hex tokens
 * (`0x06001234`) and MVIDs (32 hex digits), read sixteen digits at a time
 * in an SSE2 register, or eight in a 64-bit word (SWAR) where there is no
 * SSE2: every line of a log holds one or more of each, and a
 * byte-by-byte loop cost more than everything else the common line does.
 * No library reads hex this way; strtoul also takes signs, spaces and
 * shorter fields the formats forbid. Each function checks every byte. */
#ifndef MDINSPECT_BATCH_PARSE_H
#define MDINSPECT_BATCH_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
/* MDB_NO_SSE2: the word-at-a-time readers only (tests build both). */
#if defined(__SSE2__) && defined(__x86_64__) && !defined(MDB_NO_SSE2)
#include <emmintrin.h>
#define MDB_HEX_SSE2 1
#endif

#define MDB_ONES 0x0101010101010101ull
#define MDB_HIGH 0x8080808080808080ull

/* Eight bytes as a little-endian word (one load on x86 and arm64). */
static inline uint64_t mdb_load_le64(const char *s)
{
    uint64_t x;
    memcpy(&x, s, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    x = __builtin_bswap64(x);
#endif
    return x;
}

/* The high bit of each byte of x (all < 0x80) that is >= c: each byte
 * computes (b + 0x80) - c, which cannot borrow from its neighbour. */
static inline uint64_t mdb_bytes_ge(uint64_t x, unsigned c)
{
    return ((x | MDB_HIGH) - MDB_ONES * c) & MDB_HIGH;
}

/* Eight hex digits at s (lower-case letters only, or either case when
 * `anycase`): false when a byte is not one; else *v holds the four bytes
 * they spell, first digits in the lowest byte. */
static inline bool mdb_hex8(const char *s, bool anycase, uint32_t *v)
{
    uint64_t x = mdb_load_le64(s), l, digit, letter, n;
    if (x & MDB_HIGH)
        return false;
    digit = mdb_bytes_ge(x, '0') & ~mdb_bytes_ge(x, '9' + 1);
    l = anycase ? x | MDB_ONES * 0x20 : x;
    letter = mdb_bytes_ge(l, 'a') & ~mdb_bytes_ge(l, 'f' + 1);
    if ((digit | letter) != MDB_HIGH)
        return false;
    n = (x & MDB_ONES * 0x0F) + (letter >> 7) * 9; /* a nibble per byte */
    n = ((n << 4) | (n >> 8)) & 0x00FF00FF00FF00FFull;
    n = (n | (n >> 8)) & 0x0000FFFF0000FFFFull;
    *v = (uint32_t)(n | (n >> 16));
    return true;
}

#ifdef MDB_HEX_SSE2
/* The hex digits in the bytes of v that `mask` selects (lower-case
 * letters only, or either case when `anycase`): false when one is not a
 * digit; else *bytes holds the bytes they spell, first digits first, in
 * its low half. Bytes of 0x80 and above are negative to the signed
 * compares, so no digit. */
static inline bool mdb_hex_sse2(__m128i v, unsigned mask, bool anycase, __m128i *bytes)
{
    __m128i digit = _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8('0' - 1)),
                                  _mm_cmplt_epi8(v, _mm_set1_epi8('9' + 1)));
    __m128i l = anycase ? _mm_or_si128(v, _mm_set1_epi8(0x20)) : v;
    __m128i letter = _mm_and_si128(_mm_cmpgt_epi8(l, _mm_set1_epi8('a' - 1)),
                                   _mm_cmplt_epi8(l, _mm_set1_epi8('f' + 1)));
    if (((unsigned)_mm_movemask_epi8(_mm_or_si128(digit, letter)) & mask) != mask)
        return false;
    /* a nibble per byte, then each pair of bytes (even: high nibble) to one */
    __m128i n = _mm_add_epi8(_mm_and_si128(v, _mm_set1_epi8(0x0F)),
                             _mm_and_si128(letter, _mm_set1_epi8(9)));
    __m128i pair = _mm_or_si128(_mm_slli_epi16(_mm_and_si128(n, _mm_set1_epi16(0x00FF)), 4),
                                _mm_srli_epi16(n, 8));
    *bytes = _mm_packus_epi16(pair, _mm_setzero_si128());
    return true;
}
#endif

/* "0x" and 1..8 hex digits of either case (exactly 8 when `strict`). */
static inline bool mdb_parse_hex32(const char *s, size_t n, bool strict, uint32_t *v)
{
    uint32_t x = 0;
    if (n < 3 || n > 10 || s[0] != '0' || (s[1] | 0x20) != 'x' || (strict && n != 10))
        return false;
    if (n == 10) {
#ifdef MDB_HEX_SSE2
        __m128i b;
        if (!mdb_hex_sse2(_mm_loadl_epi64((const __m128i *)(const void *)(s + 2)), 0xFF, true, &b))
            return false;
        x = (uint32_t)_mm_cvtsi128_si32(b);
#else
        if (!mdb_hex8(s + 2, true, &x))
            return false;
#endif
        *v = __builtin_bswap32(x);
        return true;
    }
    for (size_t i = 2; i < n; i++) {
        unsigned c = (unsigned char)s[i], d;
        if (c - '0' < 10)
            d = c - '0';
        else if ((c | 0x20) - 'a' < 6)
            d = (c | 0x20) - 'a' + 10;
        else
            return false;
        x = x << 4 | d;
    }
    *v = x;
    return true;
}

/* The first byte c in [p, end), or NULL: memchr for the short fields of a
 * line (a frame, a line of ~50 bytes), where the call and the setup of
 * libc's memchr cost more than its scan. Reads nothing past end. */
static inline const char *mdb_find(const char *p, const char *end, char c)
{
#ifdef MDB_HEX_SSE2
    const __m128i want = _mm_set1_epi8(c);
    for (; end - p >= 16; p += 16) {
        unsigned m = (unsigned)_mm_movemask_epi8(
            _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)p), want));
        if (m)
            return p + __builtin_ctz(m);
    }
#endif
    for (; p < end; p++)
        if (*p == c)
            return p;
    return NULL;
}

static inline void mdb_store_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

/* 32 lower-case hex digits -> the 16 bytes of #GUID (doc/names.md: Data1,
 * Data2, Data3 are written as big-endian numbers, #GUID stores them
 * little-endian, then 8 bytes in order). */
static inline bool mdb_parse_mvid(const char *s, size_t n, uint8_t mvid[16])
{
#ifdef MDB_HEX_SSE2
    __m128i lo, hi;
    if (n != 32 ||
        !mdb_hex_sse2(_mm_loadu_si128((const __m128i *)(const void *)s), 0xFFFF, false, &lo) ||
        !mdb_hex_sse2(_mm_loadu_si128((const __m128i *)(const void *)(s + 16)), 0xFFFF, false, &hi))
        return false;
    /* x86 is little-endian: whole words, not byte stores */
    uint64_t x = (uint64_t)_mm_cvtsi128_si64(lo), y = (uint64_t)_mm_cvtsi128_si64(hi);
    uint32_t b = (uint32_t)(x >> 32);
    b = (b & 0x00FF00FFu) << 8 | (b >> 8 & 0x00FF00FFu);
    x = (uint64_t)b << 32 | __builtin_bswap32((uint32_t)x);
    memcpy(mvid, &x, 8);
    memcpy(mvid + 8, &y, 8);
    return true;
#else
    uint32_t a, b, c, d;
    if (n != 32 || !mdb_hex8(s, false, &a) || !mdb_hex8(s + 8, false, &b) ||
        !mdb_hex8(s + 16, false, &c) || !mdb_hex8(s + 24, false, &d))
        return false;
    mdb_store_le32(mvid, __builtin_bswap32(a));
    mdb_store_le32(mvid + 4, (b & 0x00FF00FFu) << 8 | (b >> 8 & 0x00FF00FFu));
    mdb_store_le32(mvid + 8, c);
    mdb_store_le32(mvid + 12, d);
    return true;
#endif
}

#endif
