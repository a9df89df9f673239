/* UTF-16LE to UTF-8 (RFC 2781, RFC 3629) for text an image stores as
 * UTF-16: Win32 resource names and version strings, the names of
 * System.Resources entries. Written here because the library needs only
 * this one direction, on short strings, and no dependency it has does it
 * without a locale (iconv depends on the process's setup). */
#include "config.h"

#include <talloc.h>

#include "util/utf16.h"

static size_t put(char *o, uint32_t c)
{
    if (c < 0x80) {
        o[0] = (char)c;
        return 1;
    }
    if (c < 0x800) {
        o[0] = (char)(0xC0 | c >> 6);
        o[1] = (char)(0x80 | (c & 0x3F));
        return 2;
    }
    if (c < 0x10000) {
        o[0] = (char)(0xE0 | c >> 12);
        o[1] = (char)(0x80 | (c >> 6 & 0x3F));
        o[2] = (char)(0x80 | (c & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | c >> 18);
    o[1] = (char)(0x80 | (c >> 12 & 0x3F));
    o[2] = (char)(0x80 | (c >> 6 & 0x3F));
    o[3] = (char)(0x80 | (c & 0x3F));
    return 4;
}

char *mdt__utf16_to_utf8(void *mem_ctx, const uint8_t *p, size_t n)
{
    /* Each unit gives at most 3 bytes (a pair of units 4). */
    char *out = talloc_array(mem_ctx, char, n * 3 + 1);
    size_t o = 0;
    if (!out)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        uint32_t c = (uint32_t)p[2 * i] | (uint32_t)p[2 * i + 1] << 8;
        if (c >= 0xD800 && c < 0xDC00 && i + 1 < n) {
            uint32_t d = (uint32_t)p[2 * i + 2] | (uint32_t)p[2 * i + 3] << 8;
            if (d >= 0xDC00 && d < 0xE000) {
                c = 0x10000 + ((c - 0xD800) << 10) + (d - 0xDC00);
                i++;
                o += put(out + o, c);
                continue;
            }
        }
        if ((c >= 0xD800 && c < 0xE000) || c == 0)
            c = 0xFFFD;
        o += put(out + o, c);
    }
    out[o] = '\0';
    return out;
}
