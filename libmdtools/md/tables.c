/* The tables stream header and the layout of every table (ECMA-335
 * II.24.2.6): row counts, heap index widths (HeapSizes, with EXTRA_DATA
 * 0x40), simple and coded index widths, row sizes and offsets; the #Pdb
 * stream of portable PDBs, whose type-system row counts size the indexes
 * into tables the PDB does not contain. Tables whose rows run past the end
 * of the stream keep the rows that fit; the rest fail on access. */
#include "config.h"

#include <string.h>

#include "image/image_int.h"
#include "md/md_int.h"

#define HEAP_STRING_4 0x01
#define HEAP_GUID_4 0x02
#define HEAP_BLOB_4 0x04
#define HEAP_EXTRA_DATA 0x40
#define MAX_ROWS 0x00FFFFFFu /* a token's rid has 24 bits */

static uint32_t rows_for_width(const struct mdt_image *img, unsigned t)
{
    uint32_t a = img->tables[t].rows, b = img->pdb_rows[t];
    return a > b ? a : b;
}

static unsigned col_width(const struct mdt_image *img, const mdt_column_schema *c)
{
    bool jtd = img->mdi.jtd;
    switch (c->kind) {
    case MDT_COLK_U8: return 1;
    case MDT_COLK_U16: return 2;
    case MDT_COLK_U32: return 4;
    case MDT_COLK_STR: return jtd || (img->mdi.heap_sizes & HEAP_STRING_4) ? 4 : 2;
    case MDT_COLK_GUID: return jtd || (img->mdi.heap_sizes & HEAP_GUID_4) ? 4 : 2;
    case MDT_COLK_BLOB: return jtd || (img->mdi.heap_sizes & HEAP_BLOB_4) ? 4 : 2;
    case MDT_COLK_TAB:
    case MDT_COLK_LIST: return jtd || rows_for_width(img, c->target) > 0xFFFF ? 4 : 2;
    case MDT_COLK_CODED: return jtd || img->ci_wide[c->target] ? 4 : 2;
    }
    return 4;
}

static int parse_pdb_stream(struct mdt_image *img)
{
    rd r = rd_make(img, "#Pdb", img->pdb.base, img->pdb.size,
                   img->mdi.file_offset + img->pdb.offset);
    const uint8_t *id;
    uint64_t refd;
    int e;
    if ((e = rd_bytes(&r, &id, 20, "PDB id")) ||
        (e = rd_u32(&r, &img->mdi.pdb_entry_point, "#Pdb entry point")) ||
        (e = rd_u64(&r, &refd, "#Pdb referenced tables")))
        return e;
    memcpy(img->mdi.pdb_id, id, 20);
    img->mdi.pdb_referenced_tables = refd;
    for (unsigned t = 0; t < 64; t++) {
        if (!(refd >> t & 1))
            continue;
        uint32_t n;
        if ((e = rd_u32(&r, &n, "#Pdb type-system row count")))
            return e;
        if (t >= MDT_TABLE_MAX || t >= 0x30 || !mdt_table_schema_get(t)) {
            r.pos -= 4;
            return rd_fail(&r, MDT_EBADIMAGE, "#Pdb refers to table 0x%02x, not a type-system table",
                           t);
        }
        if (n > MAX_ROWS) {
            r.pos -= 4;
            return rd_fail(&r, MDT_EBADIMAGE, "#Pdb row count 0x%x for %s exceeds 0xFFFFFF", n,
                           mdt_table_schema_get(t)->name);
        }
        img->pdb_rows[t] = n;
    }
    return 0;
}

/* One loop per key width: this runs over every sorted table and every list
 * column at open. */
bool mdt__column_ascends(const struct mdt_table *t, unsigned col)
{
    const uint8_t *p = t->base + t->col_off[col];
    size_t rs = t->row_size;
    if (t->col_w[col] == 2) {
        uint32_t prev = 0;
        for (uint32_t i = 0; i < t->avail; i++, p += rs) {
            uint32_t v = le16(p);
            if (v < prev)
                return false;
            prev = v;
        }
    } else {
        uint32_t prev = 0;
        for (uint32_t i = 0; i < t->avail; i++, p += rs) {
            uint32_t v = le32(p);
            if (v < prev)
                return false;
            prev = v;
        }
    }
    return true;
}

int mdt__tables_parse(struct mdt_image *img)
{
    struct mdt_heap_view *ts = &img->tables_stream;
    rd r = rd_make(img, ts->name, ts->base, ts->size, img->mdi.file_offset + ts->offset);
    const uint8_t *h;
    int e;

    if (img->pdb.present && (e = parse_pdb_stream(img)))
        return e;
    if ((e = rd_bytes(&r, &h, 24, "tables stream header")))
        return e;
    img->mdi.tables_major = h[4];
    img->mdi.tables_minor = h[5];
    img->mdi.heap_sizes = h[6];
    img->mdi.valid = le64(h + 8);
    img->mdi.sorted = le64(h + 16);
    for (unsigned t = 0; t < 64; t++) {
        uint32_t n;
        if (!(img->mdi.valid >> t & 1))
            continue;
        if (!mdt_table_schema_get(t)) {
            r.pos = 8;
            return rd_fail(&r, MDT_EBADIMAGE,
                           "Valid mask 0x%016llx has bit 0x%02x set: no such table, so the "
                           "layout of the tables after it is unknown",
                           (unsigned long long)img->mdi.valid, t);
        }
        if ((e = rd_u32(&r, &n, "row count")))
            return e;
        if (n > MAX_ROWS) {
            r.pos -= 4;
            return rd_fail(&r, MDT_EBADIMAGE, "table %s declares 0x%x rows (at most 0xFFFFFF)",
                           mdt_table_schema_get(t)->name, n);
        }
        img->tables[t].rows = n;
        if (t >= 0x30 && !img->mdi.has_pdb)
            mdt__warn(img, "portable PDB table %s present without a #Pdb stream",
                      mdt_table_schema_get(t)->name);
    }
    if (img->mdi.heap_sizes & HEAP_EXTRA_DATA) {
        if ((e = rd_u32(&r, &img->mdi.extra_data, "extra data (HeapSizes 0x40)")))
            return e;
        img->mdi.has_extra_data = true;
        mdt__warn(img, "HeapSizes has EXTRA_DATA (0x40): skipped 4 bytes, value 0x%08x",
                  img->mdi.extra_data);
    }

    /* Coded index widths: 4 bytes when some table of the index has 2^(16-tag
     * bits) rows or more. Compared in 32 bits: counts are at most 0xFFFFFF. */
    for (unsigned ci = 0; ci < MDT_CI_COUNT; ci++) {
        const mdt_coded_schema *c = mdt_coded_schema_get(ci);
        uint32_t limit = 1u << (16 - c->tag_bits);
        for (unsigned tag = 0; tag < c->ntags; tag++)
            if (c->tables[tag] != MDT_NOTABLE && rows_for_width(img, c->tables[tag]) >= limit)
                img->ci_wide[ci] = 1;
    }

    uint64_t off = r.pos;
    for (unsigned t = 0; t < MDT_TABLE_MAX; t++) {
        const mdt_table_schema *s = mdt_table_schema_get(t);
        struct mdt_table *tb = &img->tables[t];
        if (!s)
            continue;
        unsigned rs = 0;
        tb->ncols = s->ncols;
        for (unsigned c = 0; c < s->ncols; c++) {
            tb->col_off[c] = (uint8_t)rs;
            tb->col_w[c] = (uint8_t)col_width(img, &s->cols[c]);
            tb->col_kind[c] = s->cols[c].kind;
            rs += tb->col_w[c];
        }
        tb->row_size = rs;
        if (!tb->rows)
            continue;
        uint64_t bytes = (uint64_t)tb->rows * rs;
        uint64_t left = off < ts->size ? ts->size - off : 0;
        tb->offset = off < ts->size ? (uint32_t)off : ts->size;
        tb->base = ts->base + tb->offset;
        tb->avail = bytes <= left ? tb->rows : (uint32_t)(left / rs);
        if (tb->avail < tb->rows)
            mdt__warn(img, "table %s: only %u of %u rows lie inside %s (0x%llx bytes needed "
                           "at +0x%llx, 0x%llx left); later rows are unreadable",
                      s->name, tb->avail, tb->rows, ts->name, (unsigned long long)bytes,
                      (unsigned long long)off, (unsigned long long)left);
        off += bytes;
    }
    /* Up to 7 bytes are alignment padding compilers add. */
    if (off < ts->size && ts->size - off > 7 && !img->mdi.enc)
        mdt__warn(img, "%s has 0x%llx bytes after the last table", ts->name,
                  (unsigned long long)(ts->size - off));

    for (unsigned t = 0; t < MDT_TABLE_MAX; t++) {
        const mdt_table_schema *s = mdt_table_schema_get(t);
        struct mdt_table *tb = &img->tables[t];
        if (!s || s->sort_col < 0 || !tb->rows)
            continue;
        tb->sorted = mdt__column_ascends(tb, (unsigned)s->sort_col);
        if (!tb->sorted)
            mdt__warn(img, "table %s is not sorted by %s as ECMA-335 requires%s; lookups scan",
                      s->name, s->cols[s->sort_col].name,
                      img->mdi.sorted >> t & 1 ? " (its Sorted bit is set)" : "");
    }
    return mdt__runs_index(img);
}
