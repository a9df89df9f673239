/* The tables stream header and the layout of every table (ECMA-335
 * II.24.2.6): row counts, heap index widths (HeapSizes, with EXTRA_DATA
 * 0x40), simple and coded index widths, row sizes and offsets; the #Pdb
 * stream of portable PDBs, whose type-system row counts size the indexes
 * into tables the PDB does not contain. Tables whose rows run past the end
 * of the stream keep the rows that fit; the rest fail on access. */
#include "config.h"

#include <stddef.h>
#include <string.h>
#include <talloc.h>

#include "md/md_int.h"
#include "util/error.h"

#define HEAP_STRING_4 0x01
#define HEAP_GUID_4 0x02
#define HEAP_BLOB_4 0x04
#define HEAP_EXTRA_DATA 0x40
#define MAX_ROWS 0x00FFFFFFu /* a token's rid has 24 bits */

static uint32_t rows_for_width(const struct mdt_md *md, unsigned t)
{
    uint32_t a = md->lay.tables[t].rows, b = md->pdb_rows[t];
    return a > b ? a : b;
}

static unsigned col_width(const struct mdt_md *md, const mdt_column_schema *c)
{
    bool jtd = md->mdi.jtd;
    switch (c->kind) {
    case MDT_COLK_U8: return 1;
    case MDT_COLK_U16: return 2;
    case MDT_COLK_U32: return 4;
    case MDT_COLK_STR: return jtd || (md->mdi.heap_sizes & HEAP_STRING_4) ? 4 : 2;
    case MDT_COLK_GUID: return jtd || (md->mdi.heap_sizes & HEAP_GUID_4) ? 4 : 2;
    case MDT_COLK_BLOB: return jtd || (md->mdi.heap_sizes & HEAP_BLOB_4) ? 4 : 2;
    case MDT_COLK_TAB:
    case MDT_COLK_LIST: return jtd || rows_for_width(md, c->target) > 0xFFFF ? 4 : 2;
    case MDT_COLK_CODED: return jtd || md->ci_wide[c->target] ? 4 : 2;
    }
    return 4;
}

/* The inline readers of <mdtools/tables.h> reach the layout by converting
 * the image pointer; the public structures must keep the sizes the header
 * promises callers. */
_Static_assert(offsetof(struct mdt_md, lay) == 0, "the layout must open struct mdt_md");
#define MDT_TABLE(id, name, sort)                                                                  \
    _Static_assert(MDT_NCOLS_##name <= MDT_LAYOUT_COLS, #name " is wider than MDT_LAYOUT_COLS");
#define MDT_COL(t, c, k, a)
#define MDT_TABLE_END(name)
#include <mdtools/tables.def>
#undef MDT_TABLE
#undef MDT_COL
#undef MDT_TABLE_END

unsigned mdt__col_width(const struct mdt_md *md, unsigned table, unsigned col)
{
    return col_width(md, &mdt_table_schema_get(table)->cols[col]);
}

static int parse_pdb_stream(struct mdt_md *md)
{
    rd r =
        rd_make(md->name, "#Pdb", md->pdb.base, md->pdb.size, md->mdi.file_offset + md->pdb.offset);
    const uint8_t *id;
    uint64_t refd;
    int e;
    if ((e = rd_bytes(&r, &id, 20, "PDB id")) ||
        (e = rd_u32(&r, &md->mdi.pdb_entry_point, "#Pdb entry point")) ||
        (e = rd_u64(&r, &refd, "#Pdb referenced tables")))
        return e;
    memcpy(md->mdi.pdb_id, id, 20);
    md->mdi.pdb_referenced_tables = refd;
    for (unsigned t = 0; t < 64; t++) {
        if (!(refd >> t & 1))
            continue;
        uint32_t n;
        if ((e = rd_u32(&r, &n, "#Pdb type-system row count")))
            return e;
        if (t >= MDT_TABLE_MAX || t >= 0x30 || !mdt_table_schema_get(t)) {
            r.pos -= 4;
            return rd_fail(&r, MDT_EBADIMAGE,
                           "#Pdb refers to table 0x%02x, not a type-system table", t);
        }
        if (n > MAX_ROWS) {
            r.pos -= 4;
            return rd_fail(&r, MDT_EBADIMAGE, "#Pdb row count 0x%x for %s exceeds 0xFFFFFF", n,
                           mdt_table_schema_get(t)->name);
        }
        md->pdb_rows[t] = n;
    }
    return 0;
}

/* One loop per key width: this runs over every sorted table and every list
 * column at open. A table with no readable row may have no base at all (a
 * table that declares none is never laid out): no pointer is formed from
 * it, not even base + 0, which is undefined for NULL. */
bool mdt__column_ascends(const mdt_table_layout *t, unsigned col)
{
    if (!t->avail)
        return true;
    const uint8_t *p = t->base + t->off[col];
    size_t rs = t->row_size;
    if (t->width[col] == 2) {
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

/* The inline readers of <mdtools/tables.h> read every cell as 4 bytes and
 * mask off what is not the cell, so up to 3 bytes past the end of the last
 * row are read (and dropped). Those bytes are almost always in the image
 * (a heap follows the tables stream); when they are not, the rows are read
 * from a copy of the tables stream with 3 zero bytes after it. `end` is
 * where the tables end in the stream; `beyond` bytes after the stream may
 * be read (what follows the metadata may be the end of the buffer or, in a
 * loader layout, a gap between sections: the container said how much). */
static int pad_rows(struct mdt_md *md, uint64_t end, size_t beyond)
{
    const struct mdt_heap_view *ts = &md->tables_stream;
    uint8_t *copy;
    if ((end < ts->size ? ts->size - end : 0) + beyond >= 3)
        return 0;
    copy = talloc_zero_size(md->mem, (size_t)ts->size + 3);
    if (!copy)
        return mdt__fail_simple(MDT_ENOMEM, "out of memory copying %s", ts->name);
    memcpy(copy, ts->base, ts->size);
    for (unsigned t = 0; t < MDT_TABLE_MAX; t++)
        if (md->lay.tables[t].base)
            md->lay.tables[t].base = copy + md->tables[t].offset;
    return 0;
}

int mdt__tables_parse(struct mdt_md *md, size_t beyond)
{
    struct mdt_heap_view *ts = &md->tables_stream;
    rd r = rd_make(md->name, ts->name, ts->base, ts->size, md->mdi.file_offset + ts->offset);
    const uint8_t *h;
    int e;

    if (md->pdb.present && (e = parse_pdb_stream(md)))
        return e;
    if ((e = rd_bytes(&r, &h, 24, "tables stream header")))
        return e;
    md->mdi.tables_major = h[4];
    md->mdi.tables_minor = h[5];
    md->mdi.heap_sizes = h[6];
    md->mdi.valid = le64(h + 8);
    md->mdi.sorted = le64(h + 16);
    for (unsigned t = 0; t < 64; t++) {
        uint32_t n;
        if (!(md->mdi.valid >> t & 1))
            continue;
        if (!mdt_table_schema_get(t)) {
            r.pos = 8;
            return rd_fail(&r, MDT_EBADIMAGE,
                           "Valid mask 0x%016llx has bit 0x%02x set: no such table, so the "
                           "layout of the tables after it is unknown",
                           (unsigned long long)md->mdi.valid, t);
        }
        if ((e = rd_u32(&r, &n, "row count")))
            return e;
        if (n > MAX_ROWS) {
            r.pos -= 4;
            return rd_fail(&r, MDT_EBADIMAGE, "table %s declares 0x%x rows (at most 0xFFFFFF)",
                           mdt_table_schema_get(t)->name, n);
        }
        md->lay.tables[t].rows = n;
        if (t >= 0x30 && !md->mdi.has_pdb)
            mdt__warn(md->warn, "portable PDB table %s present without a #Pdb stream",
                      mdt_table_schema_get(t)->name);
    }
    if (md->mdi.heap_sizes & HEAP_EXTRA_DATA) {
        if ((e = rd_u32(&r, &md->mdi.extra_data, "extra data (HeapSizes 0x40)")))
            return e;
        md->mdi.has_extra_data = true;
        mdt__warn(md->warn, "HeapSizes has EXTRA_DATA (0x40): skipped 4 bytes, value 0x%08x",
                  md->mdi.extra_data);
    }

    /* Coded index widths: 4 bytes when some table of the index has 2^(16-tag
     * bits) rows or more. Compared in 32 bits: counts are at most 0xFFFFFF. */
    for (unsigned ci = 0; ci < MDT_CI_COUNT; ci++) {
        const mdt_coded_schema *c = mdt_coded_schema_get(ci);
        uint32_t limit = 1u << (16 - c->tag_bits);
        for (unsigned tag = 0; tag < c->ntags; tag++)
            if (c->tables[tag] != MDT_NOTABLE && rows_for_width(md, c->tables[tag]) >= limit)
                md->ci_wide[ci] = 1;
    }

    uint64_t off = r.pos;
    for (unsigned t = 0; t < MDT_TABLE_MAX; t++) {
        const mdt_table_schema *s = mdt_table_schema_get(t);
        mdt_table_layout *tl = &md->lay.tables[t];
        memset(tl->kind, MDT_COLK_NONE, sizeof tl->kind);
        if (!s)
            continue;
        tl->ncols = s->ncols;
        if (!tl->rows)
            continue; /* no rows to read: mdt_column_width() works its widths out */
        unsigned rs = 0;
        for (unsigned c = 0; c < s->ncols; c++) {
            tl->off[c] = (uint8_t)rs;
            tl->width[c] = (uint8_t)col_width(md, &s->cols[c]);
            tl->kind[c] = s->cols[c].kind;
            tl->mask[c] = tl->width[c] == 4 ? 0xFFFFFFFFu : (1u << 8 * tl->width[c]) - 1;
            rs += tl->width[c];
        }
        tl->row_size = rs;
        uint64_t bytes = (uint64_t)tl->rows * rs;
        uint64_t left = off < ts->size ? ts->size - off : 0;
        md->tables[t].offset = off < ts->size ? (uint32_t)off : ts->size;
        tl->base = ts->base + md->tables[t].offset;
        tl->avail = bytes <= left ? tl->rows : (uint32_t)(left / rs);
        if (tl->avail < tl->rows)
            mdt__warn(md->warn,
                      "table %s: only %u of %u rows lie inside %s (0x%llx bytes needed "
                      "at +0x%llx, 0x%llx left); later rows are unreadable",
                      s->name, tl->avail, tl->rows, ts->name, (unsigned long long)bytes,
                      (unsigned long long)off, (unsigned long long)left);
        off += bytes;
    }
    /* Up to 7 bytes are alignment padding compilers add. */
    if (off < ts->size && ts->size - off > 7 && !md->mdi.enc)
        mdt__warn(md->warn, "%s has 0x%llx bytes after the last table", ts->name,
                  (unsigned long long)(ts->size - off));

    if ((e = pad_rows(md, off, beyond)))
        return e;

    /* The heaps as the inline readers of <mdtools/tables.h> see them. A
     * string may be read with strlen only when the heap ends with a NUL
     * (checked once here, not per cell). */
    md->lay.strings = md->strings.base;
    md->lay.strings_fast = md->strings.nul_terminated ? md->strings.size : 0;
    md->lay.blob = md->blob.base;
    md->lay.blob_fast = md->blob.present && md->blob.size > 127 ? md->blob.size - 127 : 0;
    md->lay.guid = md->guid.base;
    md->lay.guids = md->guid.present ? md->guid.size / 16 : 0;

    /* Whether the spec-sorted tables really are sorted, and whether list
     * columns ever go down, is found out on first need (lazy.c, runs.c):
     * scanning those columns was most of what opening cost. */
    return mdt__lazy_attach(md);
}
