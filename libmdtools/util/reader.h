/* The one reader of untrusted bytes: a window (base, len, pos) that knows its
 * region name and file offset, so every failure can say where it happened.
 * Checks are written `n > len - pos` so they cannot overflow; a failed read
 * does not advance. Values are read little-endian, byte-wise (no alignment,
 * no struct overlays). */
#ifndef MDT_UTIL_READER_H
#define MDT_UTIL_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

typedef struct rd {
    const uint8_t *base;
    size_t len;
    size_t pos;
    const char *region; /* borrowed: static, or living as long as the reader */
    uint64_t file_off;  /* file offset of base[0], UINT64_MAX if unknown */
    const char *file;   /* input named in error messages (borrowed), or NULL */
} rd;

static inline uint16_t le16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}
static inline uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t le64(const uint8_t *p)
{
    return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

static inline rd rd_make(const char *file, const char *region, const uint8_t *base, size_t len,
                         uint64_t file_off)
{
    rd r = {base, len, 0, region, file_off, file};
    return r;
}

static inline size_t rd_left(const rd *r)
{
    return r->len - r->pos;
}

static inline uint64_t rd_file_pos(const rd *r, size_t pos)
{
    return r->file_off == UINT64_MAX ? UINT64_MAX : r->file_off + pos;
}

/* Fail with MDT_ETRUNC at the current position. */
int rd_trunc(const rd *r, size_t need, const char *what);

static inline int rd_need(const rd *r, size_t n, const char *what)
{
    if (n > r->len - r->pos)
        return rd_trunc(r, n, what);
    return 0;
}

static inline int rd_u8(rd *r, uint8_t *v, const char *what)
{
    int e = rd_need(r, 1, what);
    if (e)
        return e;
    *v = r->base[r->pos++];
    return 0;
}
static inline int rd_u16(rd *r, uint16_t *v, const char *what)
{
    int e = rd_need(r, 2, what);
    if (e)
        return e;
    *v = le16(r->base + r->pos);
    r->pos += 2;
    return 0;
}
static inline int rd_u32(rd *r, uint32_t *v, const char *what)
{
    int e = rd_need(r, 4, what);
    if (e)
        return e;
    *v = le32(r->base + r->pos);
    r->pos += 4;
    return 0;
}
static inline int rd_u64(rd *r, uint64_t *v, const char *what)
{
    int e = rd_need(r, 8, what);
    if (e)
        return e;
    *v = le64(r->base + r->pos);
    r->pos += 8;
    return 0;
}
static inline int rd_bytes(rd *r, const uint8_t **p, size_t n, const char *what)
{
    int e = rd_need(r, n, what);
    if (e)
        return e;
    *p = r->base + r->pos;
    r->pos += n;
    return 0;
}
static inline int rd_skip(rd *r, size_t n, const char *what)
{
    int e = rd_need(r, n, what);
    if (e)
        return e;
    r->pos += n;
    return 0;
}
/* Move to absolute position `pos` (may equal len). */
int rd_seek(rd *r, size_t pos, const char *what);
/* Sub-window [off, off+n) of r, named `region`. */
int rd_sub(const rd *r, rd *out, size_t off, size_t n, const char *region, const char *what);
/* ECMA-335 II.23.2 compressed unsigned integer. */
int rd_compressed(rd *r, uint32_t *v, const char *what);
/* Fail with `code` at the current position of r, message printf-style. */
int rd_fail(const rd *r, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
