/* Reading one column of a run of rows in one call (ECMA-335 II.24.2.6
 * layout). Whole-table scans pay a call per run instead of per cell: the
 * range and kind are checked once, then a tight loop per column width; heap
 * reads use the same inline fast paths as single cells, and a damaged cell
 * fails alone through the located slow path. */
#include "config.h"

#include <string.h>

#include <mdtools/tables.h>

#include "md/md_int.h"

/* Rows [first, first + count) of a table that exists, all readable. */
static int rows_readable(const mdt_image *img, unsigned table, uint32_t first, uint32_t count,
                         const mdt_table_layout **out)
{
    const mdt_table_layout *t = &mdt__md(img)->lay.tables[table];
    if (count == 0) {
        *out = t;
        return 0;
    }
    if (first == 0 || first > t->rows || count > t->rows - first + 1) {
        mdt_row r;
        return mdt_row_get(&r, img, table, first == 0 || first > t->rows ? first : t->rows + 1);
    }
    if (first - 1 + count > t->avail) {
        mdt_row r;
        return mdt_row_get(&r, img, table, t->avail + 1);
    }
    *out = t;
    return 0;
}

int mdt__rows_span(const mdt_image *img, unsigned table, uint32_t first, uint32_t count,
                   const mdt_table_layout **out)
{
    if (!mdt_table_schema_get(table))
        return mdt__fail_simple(MDT_EINVAL, "no table with id 0x%02x", table);
    return rows_readable(img, table, first, count, out);
}

/* Check table, column, kind (-1: any) and that the rows are readable. */
static int span(const mdt_image *img, unsigned table, unsigned col, int kind, uint32_t first,
                uint32_t count, const mdt_table_layout **out)
{
    const mdt_table_schema *s = mdt_table_schema_get(table);
    if (!s || col >= s->ncols)
        return mdt__fail_simple(MDT_EINVAL, "no column %u in table 0x%02x", col, table);
    if (kind >= 0 && s->cols[col].kind != kind)
        return mdt__fail_simple(MDT_EINVAL, "column %s.%s has another kind", s->name,
                                s->cols[col].name);
    return rows_readable(img, table, first, count, out);
}

int mdt_column_raw(uint32_t *out, const mdt_image *img, unsigned table, unsigned col,
                   uint32_t first, uint32_t count)
{
    const mdt_table_layout *t;
    int e = span(img, table, col, -1, first, count, &t);
    if (e || !count)
        return e;
    const uint8_t *p = t->base + (size_t)(first - 1) * t->row_size + t->off[col];
    size_t rs = t->row_size;
    uint32_t i = 0;
    switch (t->width[col]) {
    case 1:
        for (; i < count; i++, p += rs)
            out[i] = p[0];
        break;
    case 2: /* the widest tables hold mostly 2-byte cells: unrolled */
        for (; i + 4 <= count; i += 4, p += 4 * rs) {
            out[i] = le16(p);
            out[i + 1] = le16(p + rs);
            out[i + 2] = le16(p + 2 * rs);
            out[i + 3] = le16(p + 3 * rs);
        }
        for (; i < count; i++, p += rs)
            out[i] = le16(p);
        break;
    default:
        for (; i + 4 <= count; i += 4, p += 4 * rs) {
            out[i] = le32(p);
            out[i + 1] = le32(p + rs);
            out[i + 2] = le32(p + 2 * rs);
            out[i + 3] = le32(p + 3 * rs);
        }
        for (; i < count; i++, p += rs)
            out[i] = le32(p);
    }
    return 0;
}

/* One loop per index width, with the heap's bounds in registers. When
 * #Strings ends with a NUL (checked at open), strlen from any index inside
 * it stays inside; with 16 bytes left after the index, short_strlen() may
 * read them. */
#define STRING_LOOP(READ)                                                                          \
    for (uint32_t i = 0; i < count; i++, p += rs) {                                                \
        uint32_t idx = READ(p);                                                                    \
        if (idx < fast16) {                                                                        \
            s[i] = base + idx;                                                                     \
            len[i] = (uint32_t)short_strlen(s[i]);                                                 \
        } else if (idx < fast) {                                                                   \
            s[i] = base + idx;                                                                     \
            len[i] = (uint32_t)strlen(s[i]);                                                       \
        } else {                                                                                   \
            bad += mdt__cell_string_slow(md, table, first + i, col, idx, &s[i], &len[i]);          \
        }                                                                                          \
    }

int mdt_column_strings(const char **s, uint32_t *len, const mdt_image *img, unsigned table,
                       unsigned col, uint32_t first, uint32_t count)
{
    const struct mdt_md *md = mdt__md(img);
    const mdt_table_layout *t;
    int e = span(img, table, col, MDT_COLK_STR, first, count, &t), bad = 0;
    if (e || !count)
        return e;
    const uint8_t *p = t->base + (size_t)(first - 1) * t->row_size + t->off[col];
    const char *base = (const char *)md->lay.strings;
    uint32_t fast = md->lay.strings_fast, fast16 = strings_short(md);
    size_t rs = t->row_size;
    if (t->width[col] == 4)
        STRING_LOOP(le32)
    else
        STRING_LOOP(le16)
    return bad;
}

/* A blob below blob_fast with a one-byte length prefix ends inside the
 * heap (open computed the bound); anything else takes the checked path. */
#define BLOB_LOOP(READ)                                                                            \
    for (uint32_t i = 0; i < count; i++, p += rs) {                                                \
        uint32_t idx = READ(p);                                                                    \
        if (idx < fast && base[idx] < 0x80) {                                                      \
            data[i] = base + idx + 1;                                                              \
            len[i] = base[idx];                                                                    \
        } else if (heap_blob_fast(md, idx, &data[i], &len[i]) != 0) {                              \
            bad += mdt__cell_blob_slow(md, table, first + i, col, idx, &data[i], &len[i]);         \
        }                                                                                          \
    }

int mdt_column_blobs(const uint8_t **data, uint32_t *len, const mdt_image *img, unsigned table,
                     unsigned col, uint32_t first, uint32_t count)
{
    const struct mdt_md *md = mdt__md(img);
    const mdt_table_layout *t;
    int e = span(img, table, col, MDT_COLK_BLOB, first, count, &t), bad = 0;
    if (e || !count)
        return e;
    const uint8_t *p = t->base + (size_t)(first - 1) * t->row_size + t->off[col];
    const uint8_t *base = md->lay.blob;
    uint32_t fast = md->lay.blob_fast;
    size_t rs = t->row_size;
    if (t->width[col] == 4)
        BLOB_LOOP(le32)
    else
        BLOB_LOOP(le16)
    return bad;
}

int mdt_column_guids(const uint8_t **guid, const mdt_image *img, unsigned table, unsigned col,
                     uint32_t first, uint32_t count)
{
    const struct mdt_md *md = mdt__md(img);
    const mdt_table_layout *t;
    int e = span(img, table, col, MDT_COLK_GUID, first, count, &t), bad = 0;
    if (e || !count)
        return e;
    const uint8_t *p = t->base + (size_t)(first - 1) * t->row_size + t->off[col];
    size_t rs = t->row_size;
    bool wide = t->width[col] == 4;
    uint32_t nguids = md->guid.size / 16;
    for (uint32_t i = 0; i < count; i++, p += rs) {
        uint32_t idx = wide ? le32(p) : le16(p);
        if (idx == 0) {
            guid[i] = NULL;
        } else if (idx <= nguids) {
            guid[i] = md->guid.base + (size_t)(idx - 1) * 16;
        } else {
            mdt_cellref ref = {table, first + i, col};
            if (mdt__heap_guid(md, idx, &guid[i], &ref) != 0) {
                guid[i] = NULL;
                bad++;
            }
        }
    }
    return bad;
}
