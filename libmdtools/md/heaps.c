/* The #Strings, #US, #Blob and #GUID heaps (ECMA-335 II.24.2.3-II.24.2.5).
 * Every access is bounded by its own heap; a damaged entry fails alone. */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <talloc.h>

#include <mdtools/heaps.h>

#include "md/md_int.h"
#include "util/hex.h"

static int heap_fail(const struct mdt_md *md, const struct mdt_heap_view *h, uint32_t idx,
                     const mdt_cellref *ref, int code, const char *what)
{
    mdt_place pl = MDT_PLACE_NONE;
    pl.file = md->name;
    if (ref && ref->table < MDT_TABLE_MAX) {
        const mdt_table_schema *s = mdt_table_schema_get(ref->table);
        const mdt_table_layout *t = &md->lay.tables[ref->table];
        /* The cell's place in the tables stream, as cells.c reports it. */
        uint64_t in_stream = (uint64_t)md->tables[ref->table].offset +
                             (uint64_t)(ref->rid - 1) * t->row_size + t->off[ref->col];
        pl.region = s->name;
        pl.row = ref->rid;
        pl.column = s->cols[ref->col].name;
        pl.offset = in_stream;
        pl.file_offset = md->mdi.file_offset + md->tables_stream.offset + in_stream;
        return mdt__fail(code, pl, "%s index 0x%x: %s", h->name, idx, what);
    }
    pl.region = h->name;
    pl.offset = idx;
    if (h->present && idx <= h->size)
        pl.file_offset = md->mdi.file_offset + h->offset + idx;
    return mdt__fail(code, pl, "%s", what);
}

uint32_t mdt_heap_size(const mdt_image *img, int heap)
{
    const struct mdt_md *md = mdt__md(img);
    switch (heap) {
    case MDT_HEAP_STRINGS: return md->strings.size;
    case MDT_HEAP_US: return md->us.size;
    case MDT_HEAP_BLOB: return md->blob.size;
    case MDT_HEAP_GUID: return md->guid.size;
    }
    return 0;
}

int mdt__heap_string_slow(const struct mdt_md *md, uint32_t idx, const char **s, size_t *len,
                          const mdt_cellref *ref)
{
    const struct mdt_heap_view *h = &md->strings;
    if (!h->present) {
        static const struct mdt_heap_view none = {.name = "#Strings"};
        if (idx == 0) {
            *s = "";
            if (len)
                *len = 0;
            return 0;
        }
        return heap_fail(md, &none, idx, ref, MDT_ENOHEAP, "no #Strings heap");
    }
    if (idx >= h->size)
        return heap_fail(md, h, idx, ref, MDT_EBADIMAGE, "string index beyond the heap");
    const uint8_t *p = h->base + idx;
    const uint8_t *nul = memchr(p, 0, h->size - idx);
    if (!nul)
        return heap_fail(md, h, idx, ref, MDT_EBADIMAGE,
                         "string runs to the end of #Strings without a NUL");
    *s = (const char *)p;
    if (len)
        *len = (size_t)(nul - p);
    return 0;
}

int mdt__heap_blob_slow(const struct mdt_md *md, uint32_t idx, const uint8_t **data, uint32_t *len,
                        const mdt_cellref *ref)
{
    const struct mdt_heap_view *h = &md->blob;
    uint32_t n;
    unsigned used;
    if (idx == 0 && (!h->present || h->size == 0 || h->base[0] == 0)) {
        *data = (const uint8_t *)"";
        *len = 0;
        return 0;
    }
    if (!h->present) {
        static const struct mdt_heap_view none = {.name = "#Blob"};
        return heap_fail(md, &none, idx, ref, MDT_ENOHEAP, "no #Blob heap");
    }
    if (idx >= h->size)
        return heap_fail(md, h, idx, ref, MDT_EBADIMAGE, "blob index beyond the heap");
    int e = mdt_heap_decode_compressed_u32(&n, &used, h->base + idx, h->size - idx);
    if (e)
        return heap_fail(md, h, idx, ref, e,
                         e == MDT_ETRUNC ? "blob length runs past the heap end"
                                         : "bad compressed blob length (prefix 111)");
    if (n > h->size - idx - used) {
        char what[96];
        snprintf(what, sizeof what, "blob length 0x%x runs past the heap end (0x%x left)", n,
                 h->size - idx - used);
        return heap_fail(md, h, idx, ref, MDT_EBADIMAGE, what);
    }
    *data = h->base + idx + used;
    *len = n;
    return 0;
}

int mdt__heap_guid(const struct mdt_md *md, uint32_t idx, const uint8_t **guid,
                   const mdt_cellref *ref)
{
    const struct mdt_heap_view *h = &md->guid;
    if (idx == 0) {
        *guid = NULL;
        return 0;
    }
    if (!h->present) {
        static const struct mdt_heap_view none = {.name = "#GUID"};
        return heap_fail(md, &none, idx, ref, MDT_ENOHEAP, "no #GUID heap");
    }
    if (idx > h->size / 16)
        return heap_fail(md, h, idx, ref, MDT_EBADIMAGE, "GUID index beyond the heap");
    *guid = h->base + (size_t)(idx - 1) * 16;
    return 0;
}

int mdt__cell_string_slow(const struct mdt_md *md, unsigned table, uint32_t rid, unsigned col,
                          uint32_t idx, const char **s, uint32_t *len)
{
    mdt_cellref ref = {table, rid, col};
    size_t n = 0;
    if (mdt__heap_string_slow(md, idx, s, &n, &ref) != 0) {
        *s = NULL;
        *len = 0;
        return 1;
    }
    *len = (uint32_t)n;
    return 0;
}

int mdt__cell_blob_slow(const struct mdt_md *md, unsigned table, uint32_t rid, unsigned col,
                        uint32_t idx, const uint8_t **data, uint32_t *len)
{
    mdt_cellref ref = {table, rid, col};
    if (mdt__heap_blob_slow(md, idx, data, len, &ref) != 0) {
        *data = NULL;
        *len = 0;
        return 1;
    }
    return 0;
}

int mdt__cell_guid_slow(const struct mdt_md *md, unsigned table, uint32_t rid, unsigned col,
                        uint32_t idx, const uint8_t **guid)
{
    mdt_cellref ref = {table, rid, col};
    if (mdt__heap_guid(md, idx, guid, &ref) != 0) {
        *guid = NULL;
        return 1;
    }
    return 0;
}

int mdt_heap_string(const char **s, size_t *len, const mdt_image *img, uint32_t index)
{
    const struct mdt_md *md = mdt__md(img);
    return heap_string_fast(md, index, s, len) ? mdt__heap_string_slow(md, index, s, len, NULL) : 0;
}

int mdt_heap_blob(const uint8_t **data, uint32_t *len, const mdt_image *img, uint32_t index)
{
    const struct mdt_md *md = mdt__md(img);
    return heap_blob_fast(md, index, data, len) ? mdt__heap_blob_slow(md, index, data, len, NULL)
                                                : 0;
}

int mdt_heap_guid(const uint8_t **guid, const mdt_image *img, uint32_t index)
{
    const struct mdt_md *md = mdt__md(img);
    return mdt__heap_guid(md, index, guid, NULL);
}

int mdt_heap_us(const uint8_t **utf16le, uint32_t *nunits, int *flag, const mdt_image *img,
                uint32_t index)
{
    const struct mdt_md *md = mdt__md(img);
    const struct mdt_heap_view *h = &md->us;
    uint32_t n;
    unsigned used;
    if (!h->present) {
        static const struct mdt_heap_view none = {.name = "#US"};
        return heap_fail(md, &none, index, NULL, MDT_ENOHEAP, "no #US heap");
    }
    if (index >= h->size)
        return heap_fail(md, h, index, NULL, MDT_EBADIMAGE, "user string index beyond the heap");
    int e = mdt_heap_decode_compressed_u32(&n, &used, h->base + index, h->size - index);
    if (e)
        return heap_fail(md, h, index, NULL, e, "bad compressed user string length");
    if (n > h->size - index - used)
        return heap_fail(md, h, index, NULL, MDT_EBADIMAGE,
                         "user string length runs past the heap end");
    *utf16le = h->base + index + used;
    *nunits = n / 2;
    *flag = n % 2 ? h->base[index + used + n - 1] : -1;
    return 0;
}

int mdt_heap_next(uint32_t *next, const mdt_image *img, int heap, uint32_t index)
{
    const struct mdt_md *md = mdt__md(img);
    const struct mdt_heap_view *h;
    const uint8_t *d;
    uint32_t n;
    unsigned used;
    int e, flag;
    switch (heap) {
    case MDT_HEAP_STRINGS: {
        const char *s;
        size_t len;
        if ((e = mdt_heap_string(&s, &len, img, index)))
            return e;
        *next = index + (uint32_t)len + 1;
        return 0;
    }
    case MDT_HEAP_GUID:
        if ((e = mdt_heap_guid(&d, img, index)))
            return e;
        *next = index + 1;
        return 0;
    case MDT_HEAP_US:
        h = &md->us;
        e = mdt_heap_us(&d, &n, &flag, img, index);
        break;
    case MDT_HEAP_BLOB:
        h = &md->blob;
        e = mdt_heap_blob(&d, &n, img, index);
        break;
    default: return mdt__fail_simple(MDT_EINVAL, "no heap number %d", heap);
    }
    if (e)
        return e;
    if (!h->present || index >= h->size) {
        *next = index + 1; /* the empty blob 0 of an absent or empty #Blob */
        return 0;
    }
    /* The prefix again, for the bytes it takes: II.23.2 prescribes the
     * shortest encoding, but the decoder accepts a longer one (a hand-made
     * or damaged image), and then the length alone would put the next
     * entry in the wrong place. */
    (void)mdt_heap_decode_compressed_u32(&n, &used, h->base + index, h->size - index);
    *next = index + used + n;
    return 0;
}

int mdt_heap_utf16_to_utf8(void *mem_ctx, char **out, size_t *outlen, int *replaced,
                           const uint8_t *u, uint32_t nunits)
{
    char *buf = talloc_array(mem_ctx, char, (size_t)nunits * 3 + 1);
    size_t o = 0;
    if (replaced)
        *replaced = 0;
    if (!buf)
        return mdt__fail_simple(MDT_ENOMEM, "out of memory");
    for (uint32_t i = 0; i < nunits; i++) {
        uint32_t c = le16(u + 2 * (size_t)i);
        if (c >= 0xD800 && c <= 0xDBFF && i + 1 < nunits) {
            uint32_t d = le16(u + 2 * (size_t)(i + 1));
            if (d >= 0xDC00 && d <= 0xDFFF) {
                c = 0x10000 + ((c - 0xD800) << 10) + (d - 0xDC00);
                i++;
            }
        }
        if (c >= 0xD800 && c <= 0xDFFF) {
            c = 0xFFFD;
            if (replaced)
                *replaced = 1;
        }
        if (c < 0x80) {
            buf[o++] = (char)c;
        } else if (c < 0x800) {
            buf[o++] = (char)(0xC0 | c >> 6);
            buf[o++] = (char)(0x80 | (c & 0x3F));
        } else if (c < 0x10000) {
            buf[o++] = (char)(0xE0 | c >> 12);
            buf[o++] = (char)(0x80 | (c >> 6 & 0x3F));
            buf[o++] = (char)(0x80 | (c & 0x3F));
        } else {
            buf[o++] = (char)(0xF0 | c >> 18);
            buf[o++] = (char)(0x80 | (c >> 12 & 0x3F));
            buf[o++] = (char)(0x80 | (c >> 6 & 0x3F));
            buf[o++] = (char)(0x80 | (c & 0x3F));
        }
    }
    buf[o] = '\0';
    *out = buf;
    if (outlen)
        *outlen = o;
    return 0;
}

int mdt_heap_decode_compressed_u32(uint32_t *value, unsigned *used, const uint8_t *p, size_t len)
{
    if (len < 1)
        return MDT_ETRUNC;
    if ((p[0] & 0x80) == 0) {
        *value = p[0];
        *used = 1;
    } else if ((p[0] & 0xC0) == 0x80) {
        if (len < 2)
            return MDT_ETRUNC;
        *value = (uint32_t)(p[0] & 0x3F) << 8 | p[1];
        *used = 2;
    } else if ((p[0] & 0xE0) == 0xC0) {
        if (len < 4)
            return MDT_ETRUNC;
        *value = (uint32_t)(p[0] & 0x1F) << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
        *used = 4;
    } else {
        return MDT_EBADIMAGE;
    }
    return 0;
}

/* Which byte of the GUID each pair of digits shows: Data1..Data3 are
 * stored little-endian and printed as numbers (most significant byte
 * first), Data4's eight bytes in order; -1 is a dash. */
static const signed char guid_text_order[20] = {3,  2, 1, 0,  -1, 5,  4,  -1, 7,  6,
                                                -1, 8, 9, -1, 10, 11, 12, 13, 14, 15};

char *mdt_heap_guid_format(char buf[37], const uint8_t g[16])
{
    /* By hand rather than snprintf: the profiler names a frame's MVID with
     * it once per method incarnation, where snprintf's format parsing was
     * ~4,600 instructions a call, and the text is fixed. */
    char *o = buf;
    for (int i = 0; i < 20; i++) {
        int b = guid_text_order[i];
        if (b < 0)
            *o++ = '-';
        else
            o = mdt__hex_put(o, g[b], 2);
    }
    *o = '\0';
    return buf;
}

/* api-rename: off */
/* The old names (<mdtools/errors.h>, MDT_DEPRECATED_FOR), for programs
 * built against libmdtools 1:0:0. */
int mdt_decode_compressed_u32(uint32_t *value, unsigned *used, const uint8_t *p, size_t len)
{
    return mdt_heap_decode_compressed_u32(value, used, p, len);
}

char *mdt_guid_format(char buf[37], const uint8_t guid[16])
{
    return mdt_heap_guid_format(buf, guid);
}

int mdt_utf16_to_utf8(void *mem_ctx, char **out, size_t *outlen, int *replaced,
                      const uint8_t *utf16le, uint32_t nunits)
{
    return mdt_heap_utf16_to_utf8(mem_ctx, out, outlen, replaced, utf16le, nunits);
}
/* api-rename: on */
