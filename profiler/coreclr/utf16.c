/* Text conversion between the runtime's UTF-16 (WCHAR is 16 bits on every
 * CoreCLR platform, unlike wchar_t on Linux) and the UTF-8 of the log and of
 * file names.
 *
 * Not the library's mdt_heap_utf16_to_utf8 (<mdtools/heaps.h>): that one
 * allocates its result under a talloc context and can fail (MDT_ENOMEM);
 * the callbacks here convert into a bounded buffer of their own, cut at a
 * whole character, with no allocation and no failure, and the library has
 * no UTF-8 to UTF-16 direction at all. */
#include "config.h"

#include <stdint.h>

#include "coreclr/clr.h"

static size_t put(char *out, size_t len, size_t pos, uint32_t c)
{
    unsigned char b[4];
    size_t n;
    if (c < 0x80) {
        b[0] = (unsigned char)c;
        n = 1;
    } else if (c < 0x800) {
        b[0] = (unsigned char)(0xc0 | c >> 6);
        b[1] = (unsigned char)(0x80 | (c & 0x3f));
        n = 2;
    } else if (c < 0x10000) {
        b[0] = (unsigned char)(0xe0 | c >> 12);
        b[1] = (unsigned char)(0x80 | (c >> 6 & 0x3f));
        b[2] = (unsigned char)(0x80 | (c & 0x3f));
        n = 3;
    } else {
        b[0] = (unsigned char)(0xf0 | c >> 18);
        b[1] = (unsigned char)(0x80 | (c >> 12 & 0x3f));
        b[2] = (unsigned char)(0x80 | (c >> 6 & 0x3f));
        b[3] = (unsigned char)(0x80 | (c & 0x3f));
        n = 4;
    }
    if (pos + n >= len)
        return pos; /* a character never gets cut in half */
    for (size_t i = 0; i < n; i++)
        out[pos + i] = (char)b[i];
    return pos + n;
}

char *mdp_utf16_to_utf8(char *out, size_t len, const WCHAR *s, size_t n)
{
    size_t pos = 0;
    if (!len)
        return out;
    for (size_t i = 0; s && i < n && (n != SIZE_MAX || s[i]); i++) {
        uint32_t c = s[i];
        if (c >= 0xd800 && c < 0xdc00 && i + 1 < n && s[i + 1] >= 0xdc00 && s[i + 1] < 0xe000) {
            c = 0x10000 + ((c - 0xd800) << 10) + (s[i + 1] - 0xdc00u);
            i++;
        } else if (c >= 0xd800 && c < 0xe000) {
            c = 0xfffd;
        }
        size_t next = put(out, len, pos, c);
        if (next == pos)
            break;
        pos = next;
    }
    out[pos] = 0;
    return out;
}

void mdp_utf8_to_utf16(WCHAR *out, size_t cap, const char *s)
{
    size_t i = 0;
    for (; cap && i + 1 < cap && s[i]; i++)
        out[i] = (WCHAR)(unsigned char)s[i];
    if (cap)
        out[i] = 0;
}
