/* Whole rows a run at a time (ECMA-335 II.22, II.24.2.6): every cell of
 * rows [first, first + count) of one table, decoded into the caller's
 * row-major mdt_cell array as mdt_row_cells decodes one row: the raw value
 * of every cell, and for #Strings, #Blob and #GUID cells also the bytes
 * and the length.
 *
 * The rows are checked once for the run (mdt__rows_span, as the column
 * calls do), then each column is decoded down the run by a loop made for
 * its kind and width, so no cell pays for a switch on its kind. The heap
 * checks are those of the per-cell readers: a string below strings_fast
 * ends inside #Strings, a blob below blob_fast with a one-byte prefix ends
 * inside #Blob (open computed both bounds), a GUID index is compared with
 * the heap's GUID count; any other cell goes to the located slow path and
 * fails alone. The loops call nothing on their common path (each leaves
 * its inner loop for the rare cell and comes back), so the compiler keeps
 * their state in registers. */
#include "config.h"

#include <stddef.h>
#include <string.h>

#include <mdtools/tables.h>

#include "md/md_int.h"

/* The run being decoded, for the loops and the out-of-line paths (whose
 * located errors name the cell's table, row and column). */
struct run {
    const struct mdt_md *md;
    const uint8_t *row0; /* the run's first row */
    size_t rs;           /* row size */
    size_t n;            /* the output's row stride: the table's columns */
    uint32_t first;      /* rid of the run's first row */
    unsigned table;
};

/* The row of a cell p points into (any column: offsets are below rs). */
static uint32_t run_rid(const struct run *r, const uint8_t *p)
{
    return r->first + (uint32_t)((size_t)(p - r->row0) / r->rs);
}

/* A string the inner loop left: one with no NUL in its first 16 bytes
 * (libc's strlen from there: the heap ends with a NUL, checked at open),
 * one too near the heap's end for a 16-byte read, or a bad index. */
__attribute__((noinline)) static int string_rest(const struct run *r, unsigned col,
                                                 const uint8_t *p, uint32_t idx, mdt_cell *o)
{
    const char *s;
    int bad = 0;
    if (idx < r->md->lay.strings_fast) {
        s = (const char *)r->md->lay.strings + idx;
        o->len = (uint32_t)strlen(s);
    } else {
        bad = mdt__cell_string_slow(r->md, r->table, run_rid(r, p), col, idx, &s, &o->len);
    }
    o->ptr = s;
    return bad;
}

/* A blob with a longer length prefix, one in the last 127 bytes of #Blob,
 * or a bad one. */
__attribute__((noinline)) static int blob_rest(const struct run *r, unsigned col, const uint8_t *p,
                                               uint32_t idx, mdt_cell *o)
{
    const uint8_t *d;
    int bad = 0;
    if (heap_blob_fast(r->md, idx, &d, &o->len) != 0)
        bad = mdt__cell_blob_slow(r->md, r->table, run_rid(r, p), col, idx, &d, &o->len);
    o->ptr = d;
    return bad;
}

/* Index 0 (no GUID) or a bad index. */
__attribute__((noinline)) static int guid_rest(const struct run *r, unsigned col, const uint8_t *p,
                                               uint32_t idx, mdt_cell *o)
{
    const uint8_t *g;
    int bad = mdt__cell_guid_slow(r->md, r->table, run_rid(r, p), col, idx, &g);
    o->ptr = g;
    o->len = g ? 16 : 0;
    return bad;
}

static inline uint32_t u8at(const uint8_t *p)
{
    return p[0];
}

/* A cell of another kind than a heap index: ptr NULL, len 0. value and
 * len are adjacent, so on a little-endian target one 8-byte store writes
 * both. */
_Static_assert(offsetof(mdt_cell, len) == offsetof(mdt_cell, value) + 4, "mdt_cell layout");
static inline void raw_cell(mdt_cell *o, uint32_t v)
{
    o->ptr = NULL;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t value_len = v;
    memcpy((char *)o + offsetof(mdt_cell, value), &value_len, 8);
#else
    o->value = v;
    o->len = 0;
#endif
}

/* Constants and table indexes: a load and two stores a cell, unrolled. */
#define RAW_LOOP(READ)                                                                             \
    do {                                                                                           \
        for (; count >= 4; count -= 4, p += 4 * rs, o += 4 * n) {                                  \
            raw_cell(o, READ(p));                                                                  \
            raw_cell(o + n, READ(p + rs));                                                         \
            raw_cell(o + 2 * n, READ(p + 2 * rs));                                                 \
            raw_cell(o + 3 * n, READ(p + 3 * rs));                                                 \
        }                                                                                          \
        for (; count; count--, p += rs, o += n)                                                    \
            raw_cell(o, READ(p));                                                                  \
    } while (0)

static void raw_cells(mdt_cell *o, size_t n, const uint8_t *p, uint32_t count, size_t rs,
                      unsigned width)
{
    if (width == 2)
        RAW_LOOP(le16);
    else if (width == 4)
        RAW_LOOP(le32);
    else
        RAW_LOOP(u8at);
}

/* The heap loops, two rows a step: FAST(base, bound, idx, o) decodes the
 * cell at o from idx and is false, writing nothing, when the cell needs
 * REST. A cell that needs REST, and a last odd row, take the single step
 * after the inner loop, which calls REST there (a call in the inner loop
 * would make the compiler keep the loop's state in memory). */
#define HEAP_LOOP(READ, FAST, REST)                                                                \
    while (p < end) {                                                                              \
        while (p < end2) { /* two rows left at least */                                            \
            uint32_t idx = READ(p), idx2 = READ(p + rs);                                           \
            o->value = idx;                                                                        \
            o[n].value = idx2;                                                                     \
            if (!FAST(base, bound, idx, o))                                                        \
                break;                                                                             \
            p += rs, o += n;                                                                       \
            if (!FAST(base, bound, idx2, o))                                                       \
                break;                                                                             \
            p += rs, o += n;                                                                       \
        }                                                                                          \
        if (p < end) {                                                                             \
            uint32_t idx = READ(p);                                                                \
            o->value = idx;                                                                        \
            if (!FAST(base, bound, idx, o))                                                        \
                bad += REST(r, col, p, idx, o);                                                    \
            p += rs, o += n;                                                                       \
        }                                                                                          \
    }

/* The decoder of a heap column: the heap's base and the bound below which
 * FAST may decode, then the loop for the column's width. */
#define HEAP_CELLS(NAME, BASE, BOUND, FAST, REST)                                                  \
    static int NAME(mdt_cell *o, const uint8_t *p, const uint8_t *end, const struct run *r,        \
                    unsigned col, unsigned width)                                                  \
    {                                                                                              \
        const uint8_t *base = (BASE), *end2 = end - r->rs; /* count >= 1 */                        \
        uint32_t bound = (BOUND);                                                                  \
        size_t rs = r->rs, n = r->n;                                                               \
        int bad = 0;                                                                               \
        if (width == 4)                                                                            \
            HEAP_LOOP(le32, FAST, REST)                                                            \
        else                                                                                       \
            HEAP_LOOP(le16, FAST, REST)                                                            \
        return bad;                                                                                \
    }

#if defined(__SSE2__)
/* Bit i set where s[i] is NUL, for the 16 bytes from s. */
static inline unsigned nul_mask16(const char *s)
{
    __m128i b = _mm_loadu_si128((const __m128i *)(const void *)s);
    return (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(b, _mm_setzero_si128()));
}
#endif

/* 16-byte compares find the NUL while 16 bytes from the compared one lie in
 * the heap (below strings_short()); a string that runs closer to the end
 * takes string_rest. Most names end in the first 16 bytes. */
static inline bool string_fast(const uint8_t *heap, uint32_t fast16, uint32_t idx, mdt_cell *o)
{
    const char *base = (const char *)heap;
    if (idx >= fast16)
        return false;
    const char *s = base + idx;
#if defined(__SSE2__)
    unsigned m = nul_mask16(s);
    if (__builtin_expect(m != 0, 1)) {
        o->len = (unsigned)__builtin_ctz(m);
    } else {
        uint32_t at = idx;
        do {
            if (fast16 - at <= 16) /* the next 16 bytes are not all in the heap */
                return false;
            at += 16;
            m = nul_mask16(base + at);
        } while (!m);
        o->len = at - idx + (unsigned)__builtin_ctz(m);
    }
#else
    o->len = (uint32_t)strlen(s);
#endif
    o->ptr = s;
    return true;
}

HEAP_CELLS(string_cells, r->md->lay.strings, strings_short(r->md), string_fast, string_rest)

/* A blob with a one-byte length prefix (II.23.2) below blob_fast. */
static inline bool blob_fast(const uint8_t *base, uint32_t fast, uint32_t idx, mdt_cell *o)
{
    if (idx >= fast)
        return false;
    uint32_t len = base[idx];
    if (len >= 0x80)
        return false;
    o->ptr = base + idx + 1;
    o->len = len;
    return true;
}

HEAP_CELLS(blob_cells, r->md->lay.blob, r->md->lay.blob_fast, blob_fast, blob_rest)

/* A GUID index 1..guids (index 0 wraps and takes guid_rest). */
static inline bool guid_fast(const uint8_t *base, uint32_t guids, uint32_t idx, mdt_cell *o)
{
    if (idx - 1u >= guids)
        return false;
    o->ptr = base + (size_t)(idx - 1) * 16;
    o->len = 16;
    return true;
}

HEAP_CELLS(guid_cells, r->md->lay.guid, r->md->lay.guids, guid_fast, guid_rest)

int mdt_rows_cells(mdt_cell *cells, const mdt_image *img, unsigned table, uint32_t first,
                   uint32_t count)
{
    const mdt_table_layout *t = table < MDT_TABLE_MAX ? &mdt__md(img)->lay.tables[table] : NULL;
    int bad = 0;
    /* Rows inside the readable part of a table (the check mdt_row_get
     * makes for one row); anything else fails where the column calls do. */
    if (!t || first - 1u >= t->avail || count > t->avail - (first - 1u)) {
        int e = mdt__rows_span(img, table, first, count, &t);
        if (e || !count)
            return e;
    }
    size_t rs = t->row_size, n = t->ncols;
    const uint8_t *row0 = t->base + (size_t)(first - 1) * rs;
    /* One row: the loops' set-up per column costs more than the row. */
    if (count == 1) {
        mdt_row row = {img, row0, t, first, (uint8_t)table};
        return mdt_row_cells(cells, &row);
    }
    /* Every column's cells lie before the end of the run's last row. */
    const uint8_t *end = row0 + (size_t)count * rs;
    struct run r = {mdt__md(img), row0, rs, n, first, table};
    for (unsigned c = 0; c < n; c++) {
        const uint8_t *p = row0 + t->off[c];
        unsigned width = t->width[c];
        switch (t->kind[c]) {
        case MDT_COLK_STR: bad += string_cells(cells + c, p, end, &r, c, width); break;
        case MDT_COLK_BLOB: bad += blob_cells(cells + c, p, end, &r, c, width); break;
        case MDT_COLK_GUID: bad += guid_cells(cells + c, p, end, &r, c, width); break;
        default: raw_cells(cells + c, n, p, count, rs, width);
        }
    }
    return bad;
}
