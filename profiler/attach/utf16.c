/* UTF-8 <-> UTF-16LE for the diagnostics IPC, whose strings are
 * length-prefixed UTF-16LE (ipc-protocol.md, "Payloads"; Unicode 15 3.9
 * for the encoding forms, Table 3-7 for well-formed UTF-8).
 *
 * Written by hand rather than with iconv(3) or libunistring: the encoder
 * must reject ill-formed UTF-8 with the offset of the bad byte and write
 * little-endian units into a bounded slot of the request; the decoder reads
 * untrusted bytes from the socket and must keep going past a lone surrogate
 * (replacing it with U+FFFD) and cut its output at a character boundary.
 * iconv stops at the first ill-formed unit (or silently drops it with
 * //IGNORE), depends on the locale's gconv modules and on iconv_open
 * succeeding; libunistring's u8_to_u16 gives host-order units in a malloc'd
 * buffer and also fails on lone surrogates. The two loops below are small
 * and tested unit by unit (tests/attach/test_ipc.c). */
#include "config.h"

#include <string.h>

#include "ipc_int.h"

/* Length of the well-formed UTF-8 sequence at s (1..4) and its code point,
 * or 0 when ill-formed (Unicode Table 3-7). s is NUL-terminated, so reading
 * continuation bytes stops at the terminator, which is no continuation. */
static int utf8_next(const unsigned char *s, uint32_t *cp)
{
    unsigned char b = s[0];
    unsigned char lo = 0x80, hi = 0xBF;
    int n;
    uint32_t v;

    if (b < 0x80) {
        *cp = b;
        return 1;
    }
    if (b >= 0xC2 && b <= 0xDF) {
        n = 2;
        v = b & 0x1Fu;
    } else if (b >= 0xE0 && b <= 0xEF) {
        n = 3;
        v = b & 0x0Fu;
        if (b == 0xE0)
            lo = 0xA0; /* no overlong forms */
        else if (b == 0xED)
            hi = 0x9F; /* no surrogates D800..DFFF */
    } else if (b >= 0xF0 && b <= 0xF4) {
        n = 4;
        v = b & 0x07u;
        if (b == 0xF0)
            lo = 0x90; /* no overlong forms */
        else if (b == 0xF4)
            hi = 0x8F; /* nothing above U+10FFFF */
    } else {
        return 0;
    }
    for (int i = 1; i < n; i++) {
        unsigned char c = s[i];
        if (i == 1 ? (c < lo || c > hi) : (c < 0x80 || c > 0xBF))
            return 0;
        v = (v << 6) | (c & 0x3Fu);
    }
    *cp = v;
    return n;
}

static void put_unit(uint8_t *out, size_t i, uint32_t u)
{
    out[2 * i] = (uint8_t)(u & 0xFF);
    out[2 * i + 1] = (uint8_t)(u >> 8);
}

int mdp__utf16le_encode(uint8_t *out, size_t cap, size_t *units, size_t *bad_at, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t pos = 0, n = 0;

    *units = 0;
    *bad_at = SIZE_MAX;
    while (p[pos]) {
        uint32_t cp;
        int len = utf8_next(p + pos, &cp);
        size_t need = cp >= 0x10000 ? 2 : 1;
        if (len == 0) {
            *bad_at = pos;
            return MDT_EINVAL;
        }
        if (out) {
            if (need > cap / 2 - n)
                return MDT_EINVAL;
            if (need == 2) {
                uint32_t v = cp - 0x10000;
                put_unit(out, n, 0xD800u | (v >> 10));
                put_unit(out, n + 1, 0xDC00u | (v & 0x3FFu));
            } else {
                put_unit(out, n, cp);
            }
        }
        n += need;
        pos += (size_t)len;
    }
    *units = n;
    return 0;
}

/* Append the UTF-8 form of cp if it fits in out[*at .. cap-1) leaving room
 * for the terminator. */
static bool put_utf8(char *out, size_t cap, size_t *at, uint32_t cp)
{
    unsigned char b[4];
    size_t n;

    if (cp < 0x80) {
        b[0] = (unsigned char)cp;
        n = 1;
    } else if (cp < 0x800) {
        b[0] = (unsigned char)(0xC0 | (cp >> 6));
        b[1] = (unsigned char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        b[0] = (unsigned char)(0xE0 | (cp >> 12));
        b[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        b[2] = (unsigned char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        b[0] = (unsigned char)(0xF0 | (cp >> 18));
        b[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
        b[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        b[3] = (unsigned char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    if (n > cap - 1 - *at)
        return false;
    memcpy(out + *at, b, n);
    *at += n;
    return true;
}

bool mdp__utf16le_decode(char *out, size_t cap, const uint8_t *in, size_t n_units)
{
    size_t at = 0;
    bool fit = true;

    for (size_t i = 0; i < n_units; i++) {
        uint32_t u = (uint32_t)in[2 * i] | ((uint32_t)in[2 * i + 1] << 8);
        uint32_t cp = u;
        if (u == 0)
            break;
        if (u >= 0xD800 && u <= 0xDBFF && i + 1 < n_units) {
            uint32_t low = (uint32_t)in[2 * i + 2] | ((uint32_t)in[2 * i + 3] << 8);
            if (low >= 0xDC00 && low <= 0xDFFF) {
                cp = 0x10000 + ((u - 0xD800) << 10) + (low - 0xDC00);
                i++;
            } else {
                cp = 0xFFFD;
            }
        } else if (u >= 0xD800 && u <= 0xDFFF) {
            cp = 0xFFFD;
        }
        if (!put_utf8(out, cap, &at, cp)) {
            fit = false;
            break;
        }
    }
    out[at] = '\0';
    return fit;
}
