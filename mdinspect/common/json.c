/* mdinspect (shell and batch): the JSON text of strings and numbers
 * (RFC 8259 sections 6 and 7) that both emitters write (see json.h for
 * the rules). Written by hand rather than through jansson: jansson builds
 * a json_t per value before it prints one, and batch writes a string per
 * distinct frame and the shell a value per table cell; here a value is
 * written straight into the caller's buffer, a run of plain bytes copied
 * at once. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "common/hex.h"
#include "common/json.h"
#include "common/utf8.h"

/* A byte copied as it is: printable ASCII but the two that need a
 * backslash (0x7F too: JSON escapes controls below 0x20 only). */
static inline int plain(unsigned char c)
{
    return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
}

/* The number of leading bytes of p[0..n) that are plain, eight at a time:
 * a word fails when a byte is below 0x20, has its high bit set, or is '"'
 * or '\\' (the "has a zero byte" test of each; a borrow can mark bytes
 * above a true one, never a word without one). Names are nearly all
 * plain: this loop is most of batch --json's string writing. */
static inline size_t plain_run(const unsigned char *p, size_t n)
{
    const uint64_t ones = 0x0101010101010101u, high = 0x8080808080808080u;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w, q, b;
        memcpy(&w, p + i, 8);
        q = w ^ (ones * '"');
        b = w ^ (ones * '\\');
        if (((((w - ones * 0x20) & ~w) | w | ((q - ones) & ~q) | ((b - ones) & ~b)) & high) != 0)
            break;
    }
    while (i < n && plain(p[i]))
        i++;
    return i;
}

size_t mdi_json_escape(char *dst, size_t room, const char *s, size_t n, size_t *used)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0, o = 0;
    while (i < n) {
        size_t j = i + plain_run(p + i, n - i), k;
        unsigned c;
        /* a run of bytes that need no escape, copied at once */
        if (j > i) {
            k = j - i < room - o ? j - i : room - o;
            memcpy(dst + o, p + i, k);
            o += k;
            i += k;
            if (i < j)
                break; /* out of room */
            continue;
        }
        if (room - o < MDI_JSON_ESCAPE_MAX)
            break;
        c = p[i];
        if (c == '"' || c == '\\') {
            dst[o++] = '\\';
            dst[o++] = (char)c;
            i++;
        } else if (c < 0x20) {
            static const char shortform[0x20] = {
                ['\b'] = 'b', ['\f'] = 'f', ['\n'] = 'n', ['\r'] = 'r', ['\t'] = 't'};
            dst[o++] = '\\';
            if (shortform[c]) {
                dst[o++] = shortform[c];
            } else {
                memcpy(dst + o, "u00", 3);
                mdi_hex_put_as(dst + o + 3, c, 2, MDI_HEX_UPPER);
                o += 5;
            }
            i++;
        } else if ((k = mdi_utf8_seq(p + i, n - i, NULL)) != 0) {
            memcpy(dst + o, p + i, k);
            o += k;
            i += k;
        } else {
            memcpy(dst + o, "\xEF\xBF\xBD", 3); /* U+FFFD for the byte */
            o += 3;
            i++;
        }
    }
    *used = i;
    return o;
}

size_t mdi_json_uint(char *dst, uint64_t v)
{
    char b[24], *p = b + sizeof b;
    size_t n;
    do
        *--p = (char)('0' + v % 10);
    while (v /= 10);
    n = (size_t)(b + sizeof b - p);
    memcpy(dst, p, n);
    return n;
}

size_t mdi_json_int(char *dst, int64_t v)
{
    if (v >= 0)
        return mdi_json_uint(dst, (uint64_t)v);
    dst[0] = '-';
    return 1 + mdi_json_uint(dst + 1, 0 - (uint64_t)v);
}

size_t mdi_json_real(char *dst, double v)
{
    char *e;
    int r = snprintf(dst, MDI_JSON_NUMBER_MAX - 3, "%.17g", v);
    size_t n;
    if (r < 0 || r >= MDI_JSON_NUMBER_MAX - 3)
        return 0; /* not for a finite double: "%.17g" fits */
    n = (size_t)r;
    /* the decimal point as JSON spells it, whatever the locale's */
    for (size_t i = 0; i < n; i++)
        if (dst[i] == ',')
            dst[i] = '.';
    /* a real stays a real when read back */
    if (!memchr(dst, '.', n) && !memchr(dst, 'e', n)) {
        memcpy(dst + n, ".0", 2);
        n += 2;
    }
    /* "1e+20" -> "1e20", "1e-07" -> "1e-7" */
    if ((e = memchr(dst, 'e', n))) {
        char *start = e + 1, *end = e + 2;
        if (*start == '-')
            start++;
        while (end < dst + n && *end == '0')
            end++;
        if (end != start) {
            memmove(start, end, (size_t)(dst + n - end));
            n -= (size_t)(end - start);
        }
    }
    return n;
}

size_t mdi_json_token(char *dst, uint32_t token)
{
    mdi_hex_token(dst, token);
    return 10;
}
