/* Out-of-line parts of the bounds-checked reader (util/reader.h). */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>

#include "util/reader.h"

static mdt_place place_of(const rd *r)
{
    mdt_place pl = MDT_PLACE_NONE;
    pl.file = r->file;
    pl.region = r->region;
    pl.offset = r->pos;
    pl.file_offset = rd_file_pos(r, r->pos);
    return pl;
}

int rd_fail(const rd *r, int code, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return mdt__fail(code, place_of(r), "%s", what);
}

int rd_trunc(const rd *r, size_t need, const char *what)
{
    return rd_fail(r, MDT_ETRUNC, "%s: need %zu bytes, %zu left", what, need, r->len - r->pos);
}

int rd_seek(rd *r, size_t pos, const char *what)
{
    if (pos > r->len)
        return rd_fail(r, MDT_ETRUNC, "%s: offset 0x%zx beyond end 0x%zx", what, pos, r->len);
    r->pos = pos;
    return 0;
}

int rd_sub(const rd *r, rd *out, size_t off, size_t n, const char *region, const char *what)
{
    if (off > r->len || n > r->len - off) {
        rd tmp = *r;
        tmp.pos = off > r->len ? r->len : off;
        return rd_fail(&tmp, MDT_ETRUNC, "%s: 0x%zx bytes at 0x%zx exceed %s size 0x%zx", what, n,
                       off, r->region, r->len);
    }
    *out = rd_make(r->file, region, r->base + off, n, rd_file_pos(r, off));
    return 0;
}

int rd_compressed(rd *r, uint32_t *v, const char *what)
{
    uint8_t b0;
    int e = rd_need(r, 1, what);
    if (e)
        return e;
    b0 = r->base[r->pos];
    if ((b0 & 0x80) == 0) {
        *v = b0;
        r->pos += 1;
        return 0;
    }
    if ((b0 & 0xC0) == 0x80) {
        if ((e = rd_need(r, 2, what)))
            return e;
        *v = (uint32_t)(b0 & 0x3F) << 8 | r->base[r->pos + 1];
        r->pos += 2;
        return 0;
    }
    if ((b0 & 0xE0) == 0xC0) {
        const uint8_t *p = r->base + r->pos;
        if ((e = rd_need(r, 4, what)))
            return e;
        *v = (uint32_t)(b0 & 0x1F) << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
        r->pos += 4;
        return 0;
    }
    return rd_fail(r, MDT_EBADIMAGE, "%s: compressed integer with prefix 111 (byte 0x%02x)", what,
                   b0);
}
