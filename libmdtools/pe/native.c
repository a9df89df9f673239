/* NativeFormat, the encoding of ReadyToRun's newer sections (CoreCLR's
 * nativeformatreader.h; facts only): variable-length unsigned and signed
 * numbers, the sparse array (DebugInfo, MethodDefEntryPoints: a header,
 * block offsets, a 4-level binary tree per block of 16 elements) and the
 * hashtable (InstanceMethodEntryPoints: a header, bucket offsets, entries
 * of a low hash byte and a relative offset). One reader for r2rdebug.c and
 * r2rmethods.c; every position is checked against the section's reader,
 * the array's descent is 4 steps, and an absent element costs no message
 * (a sparse array is mostly absent elements when enumerated). */
#include "config.h"

#include "pe/pe_int.h"
#include "util/error.h"

int mdt__native_unsigned(rd *r, uint32_t *v, const char *what)
{
    uint8_t b0;
    int e;
    if ((e = rd_u8(r, &b0, what)))
        return e;
    if (!(b0 & 1)) {
        *v = b0 >> 1;
        return 0;
    }
    const uint8_t *p;
    if (!(b0 & 2)) {
        if ((e = rd_bytes(r, &p, 1, what)))
            return e;
        *v = (uint32_t)b0 >> 2 | (uint32_t)p[0] << 6;
    } else if (!(b0 & 4)) {
        if ((e = rd_bytes(r, &p, 2, what)))
            return e;
        *v = (uint32_t)b0 >> 3 | (uint32_t)p[0] << 5 | (uint32_t)p[1] << 13;
    } else if (!(b0 & 8)) {
        if ((e = rd_bytes(r, &p, 3, what)))
            return e;
        *v = (uint32_t)b0 >> 4 | (uint32_t)p[0] << 4 | (uint32_t)p[1] << 12 | (uint32_t)p[2] << 20;
    } else if (!(b0 & 16)) {
        if ((e = rd_bytes(r, &p, 4, what)))
            return e;
        *v = le32(p);
    } else {
        r->pos--;
        return rd_fail(r, MDT_EBADIMAGE, "%s: byte 0x%02x opens no NativeFormat number", what, b0);
    }
    return 0;
}

int mdt__native_signed(rd *r, int32_t *v, const char *what)
{
    /* the unsigned layout, its top byte sign-extended */
    uint8_t b0;
    int e;
    if ((e = rd_u8(r, &b0, what)))
        return e;
    const uint8_t *p;
    if (!(b0 & 1)) {
        *v = (int8_t)b0 >> 1;
    } else if (!(b0 & 2)) {
        if ((e = rd_bytes(r, &p, 1, what)))
            return e;
        *v = (int32_t)(b0 >> 2) | (int32_t)(int8_t)p[0] * 64;
    } else if (!(b0 & 4)) {
        if ((e = rd_bytes(r, &p, 2, what)))
            return e;
        *v = (int32_t)(b0 >> 3) | (int32_t)p[0] << 5 | (int32_t)(int8_t)p[1] * 8192;
    } else if (!(b0 & 8)) {
        if ((e = rd_bytes(r, &p, 3, what)))
            return e;
        *v = (int32_t)(b0 >> 4) | (int32_t)p[0] << 4 | (int32_t)p[1] << 12 |
             (int32_t)(int8_t)p[2] * 1048576;
    } else if (!(b0 & 16)) {
        if ((e = rd_bytes(r, &p, 4, what)))
            return e;
        *v = (int32_t)le32(p);
    } else {
        r->pos--;
        return rd_fail(r, MDT_EBADIMAGE, "%s: byte 0x%02x opens no NativeFormat number", what, b0);
    }
    return 0;
}

int mdt__native_seek(rd *r, uint32_t sec_rva, uint64_t rva, const char *what)
{
    if (rva < sec_rva || rva - sec_rva > r->len)
        return rd_fail(r, MDT_EBADIMAGE, "%s at RVA 0x%llx lies outside %s", what,
                       (unsigned long long)rva, r->region ? r->region : "the section");
    r->pos = (size_t)(rva - sec_rva);
    return 0;
}

int mdt__native_array_count(rd *r, uint32_t *n, const char *what)
{
    uint32_t hdr;
    int e;
    r->pos = 0;
    if ((e = mdt__native_unsigned(r, &hdr, what)))
        return e;
    if ((hdr & 3) == 3) {
        r->pos = 0;
        return rd_fail(r, MDT_EBADIMAGE, "%s: block offset width code 3", what);
    }
    *n = hdr >> 2;
    return 0;
}

int mdt__native_array_get(rd *r, uint32_t sec_rva, uint32_t index, uint32_t *at, const char *what)
{
    uint32_t hdr, n, width;
    uint64_t base;
    int e;
    r->pos = 0;
    if ((e = mdt__native_unsigned(r, &hdr, what)))
        return e;
    base = (uint64_t)sec_rva + r->pos;
    n = hdr >> 2;
    width = hdr & 3; /* block offsets of 1, 2 or 4 bytes */
    if (index >= n)
        return 1;
    if (width == 3) {
        r->pos = 0;
        return rd_fail(r, MDT_EBADIMAGE, "%s: block offset width code 3", what);
    }
    size_t w = width == 0 ? 1 : width == 1 ? 2 : 4;
    uint64_t slot = base + (uint64_t)(index / 16) * w;
    if ((e = mdt__native_seek(r, sec_rva, slot, what)))
        return e;
    const uint8_t *p;
    if ((e = rd_bytes(r, &p, w, what)))
        return e;
    uint64_t off = base + (w == 1 ? p[0] : w == 2 ? le16(p) : le32(p));
    /* a binary tree over the block's 16 elements: 4 levels */
    for (uint32_t bit = 8; bit; bit >>= 1) {
        uint32_t v;
        if ((e = mdt__native_seek(r, sec_rva, off, what)) || (e = mdt__native_u(r, &v, what)))
            return e;
        uint64_t next = sec_rva + (uint64_t)r->pos;
        if (index & bit) {
            if (v & 2) {
                off += v >> 2;
                continue;
            }
        } else if (v & 1) {
            off = next;
            continue;
        }
        if ((v & 3) == 0 && (v >> 2) == (index & 15)) {
            off = next; /* a leaf standing for the one element below */
            break;
        }
        return 1;
    }
    if (off > UINT32_MAX)
        return rd_fail(r, MDT_EBADIMAGE, "%s: an element past 4 GiB", what);
    *at = (uint32_t)off;
    return 0;
}

/* One node of a block's tree at off, `bit` the level's index bit (8, 4,
 * 2, 1; 0: the element's data itself), prefix the index bits above it:
 * the elements below, left before right, as mdt__native_array_get finds
 * them (a leaf counts only where the lookup of its index would accept it). */
static int visit(rd *r, uint32_t sec_rva, uint64_t off, uint32_t block, uint32_t bit,
                 uint32_t prefix, uint32_t n, const char *what, mdt__native_each_fn fn,
                 void *payload)
{
    uint32_t v;
    int e;
    if (!bit) {
        if (block * 16 + prefix >= n)
            return 0;
        if (off > UINT32_MAX)
            return rd_fail(r, MDT_EBADIMAGE, "%s: an element past 4 GiB", what);
        return fn(payload, block * 16 + prefix, (uint32_t)off);
    }
    if ((e = mdt__native_seek(r, sec_rva, off, what)) || (e = mdt__native_u(r, &v, what)))
        return e;
    uint64_t next = sec_rva + (uint64_t)r->pos;
    if ((v & 3) == 0) { /* a leaf standing for one element below */
        uint32_t i = v >> 2, above = 15u & ~(2 * bit - 1);
        if (i > 15 || (i & above) != prefix || block * 16 + i >= n || next > UINT32_MAX)
            return 0;
        return fn(payload, block * 16 + i, (uint32_t)next);
    }
    if ((v & 1) && (e = visit(r, sec_rva, next, block, bit >> 1, prefix, n, what, fn, payload)))
        return e;
    if (v & 2)
        return visit(r, sec_rva, off + (v >> 2), block, bit >> 1, prefix | bit, n, what, fn,
                     payload);
    return 0;
}

int mdt__native_array_each(rd *r, uint32_t sec_rva, const char *what, mdt__native_each_fn fn,
                           void *payload)
{
    uint32_t hdr;
    int e;
    r->pos = 0;
    if ((e = mdt__native_unsigned(r, &hdr, what)))
        return e;
    uint64_t base = (uint64_t)sec_rva + r->pos;
    uint32_t n = hdr >> 2, width = hdr & 3;
    if (width == 3) {
        r->pos = 0;
        return rd_fail(r, MDT_EBADIMAGE, "%s: block offset width code 3", what);
    }
    size_t w = width == 0 ? 1 : width == 1 ? 2 : 4;
    for (uint32_t b = 0; b < (n + 15) / 16; b++) {
        const uint8_t *p;
        if ((e = mdt__native_seek(r, sec_rva, base + (uint64_t)b * w, what)) ||
            (e = rd_bytes(r, &p, w, what)))
            return e;
        uint64_t off = base + (w == 1 ? p[0] : w == 2 ? le16(p) : le32(p));
        if ((e = visit(r, sec_rva, off, b, 8, 0, n, what, fn, payload)))
            return e;
    }
    return 0;
}
