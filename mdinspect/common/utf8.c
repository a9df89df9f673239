/* mdinspect (shell and batch): the one UTF-8 decoder of the program's
 * output paths (RFC 3629 section 4): the shell's text escaping, and the
 * JSON string writer both emitters use (common/json.c). */
#include "config.h"

#include "common/utf8.h"

size_t mdi_utf8_seq(const unsigned char *s, size_t len, uint32_t *cp)
{
    uint32_t c;
    size_t n;
    if (!len)
        return 0;
    if (s[0] < 0x80) {
        if (cp)
            *cp = s[0];
        return 1;
    }
    if (s[0] >= 0xC2 && s[0] <= 0xDF)
        n = 2, c = s[0] & 0x1F;
    else if (s[0] >= 0xE0 && s[0] <= 0xEF)
        n = 3, c = s[0] & 0x0F;
    else if (s[0] >= 0xF0 && s[0] <= 0xF4)
        n = 4, c = s[0] & 0x07;
    else
        return 0;
    if (n > len)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        c = c << 6 | (s[i] & 0x3F);
    }
    if ((n == 3 && c < 0x800) || (n == 4 && (c < 0x10000 || c > 0x10FFFF)) ||
        (c >= 0xD800 && c <= 0xDFFF))
        return 0;
    if (cp)
        *cp = c;
    return n;
}
