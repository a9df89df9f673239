/* The metadata layer: a byte window (ECMA-335 II.24.2.1's root) parsed into
 * streams, heaps and tables, and the queries that read them. Private to
 * the library: the layers above (signatures and names, resolution) use it
 * for the fast paths of heap reads, which are inline here so cell and
 * column readers pay a few instructions per cell; every failure goes to a
 * cold slow path that re-checks and builds the located error. */
#ifndef MDT_MD_INT_H
#define MDT_MD_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <mdtools/image.h>
#include <mdtools/tables.h>

#include "util/reader.h"
#include "util/warnings.h"

#define MDT_MAX_STREAMS 64 /* more headers than this is nonsense */

/* What md/ keeps about one table beside its public layout (the rows, their
 * size and the columns, in md->lay.tables[]). */
struct mdt_table {
    uint32_t offset; /* from the start of the tables stream */
    /* lazy.c: found out on first need, never at open, published with
     * atomic stores (see there). Whether the spec-sorted key column really
     * is sorted: 0 not known yet, 1 sorted, 2 not. */
    _Atomic uint8_t sort_state;
    /* For each LIST column (at most 2 per table: TypeDef, LocalScope), in
     * column order: NULL until the first owner query, then an index
     * position -> row owning it (runs.c). For a Ptr table, ptr_pos: row
     * of the target -> the first Ptr row naming it. */
    struct mdt_run_index *_Atomic runs[2];
    /* whether each LIST column's starts ascend, as sort_state: 0 not known
     * yet, 1 yes, 2 no (runs.c, for mdt_row_range's floors) */
    _Atomic uint8_t list_ascends[2];
    struct mdt_ptr_index *_Atomic ptr_pos;
};

struct mdt_heap_view {
    const uint8_t *base;
    uint32_t size;
    uint32_t offset; /* from the metadata root */
    bool present;
    bool nul_terminated; /* last byte is 0: strlen from any index stays inside */
    const char *name;    /* "#Strings", ... for messages */
};

/* The metadata of an open image, immutable after open. */
struct mdt_md {
    /* Must stay the first member: the inline readers of <mdtools/tables.h>
     * reach it by converting the image pointer (C11 6.7.2.1p15), as
     * mdt__md() does for the whole structure. Filled at open. */
    mdt_image_layout lay;
    const char *name;   /* the image's, for messages */
    void *mem;          /* talloc parent of what md/ allocates: the image */
    mdt_warnings *warn; /* the image's warnings */
    mdt_md_info mdi;
    mdt_stream_info *streams;
    struct mdt_heap_view strings, us, blob, guid, tables_stream, pdb;
    uint32_t pdb_rows[MDT_TABLE_MAX]; /* type-system row counts from #Pdb */
    struct mdt_table tables[MDT_TABLE_MAX];
    uint8_t ci_wide[MDT_CI_COUNT]; /* coded index is 4 bytes wide */
    /* Warnings of the checks open leaves to first need (lazy.c),
     * produced when the warnings are first asked for. */
    struct mdt_late_warnings *_Atomic late_warnings;
};

/* The metadata of an image: an image handle begins with its struct mdt_md
 * (struct mdt_image, open/open.c), so the conversion is free. */
static inline const struct mdt_md *mdt__md(const mdt_image *img)
{
    return (const struct mdt_md *)(const void *)img;
}

/* Parse the metadata in `window` (root.c): at most 4 GiB, window->file
 * names the image in messages, window->file_off places it in the file.
 * Allocations hang off `mem`, warnings go to `warn`, both borrowed for the
 * life of md; `slack` bytes after the window may be read too (the inline
 * row readers read a cell as 4 bytes: tables.c copies the tables stream
 * when fewer than 3 bytes past the last row are readable). Errors are
 * located; afterwards md is immutable. */
int mdt__md_parse(struct mdt_md *md, void *mem, mdt_warnings *warn, const rd *window, size_t slack);
/* The tables stream and the #Pdb stream (tables.c), for root.c; `beyond`
 * bytes after the end of the tables stream may be read. */
int mdt__tables_parse(struct mdt_md *md, size_t beyond);

/* File offset of p, a pointer into the #Blob heap (or just past it), for
 * readers over blobs; UINT64_MAX when p lies elsewhere. */
static inline uint64_t mdt__blob_file_offset(const struct mdt_md *md, const uint8_t *p)
{
    const struct mdt_heap_view *h = &md->blob;
    if (h->present && p >= h->base && p <= h->base + h->size)
        return md->mdi.file_offset + h->offset + (uint64_t)(p - h->base);
    return UINT64_MAX;
}

/* Row counts and list targets (cells.c): a table's rows, also those a
 * portable PDB's #Pdb stream declares; the Ptr table of a LIST target (0
 * for none); the table a LIST column's positions really index (its Ptr
 * table when that has rows). */
uint32_t mdt__target_rows(const struct mdt_md *md, unsigned t);
unsigned mdt__ptr_table(unsigned target);
unsigned mdt__list_table(const struct mdt_md *md, unsigned target);

/* Rows [first, first + count) of `table`, checked as the column and row
 * run calls check them (columns.c): MDT_EINVAL for no such table, else
 * what mdt_row_get says of the first row that is missing or unreadable;
 * *out is the table's layout. */
int mdt__rows_span(const mdt_image *img, unsigned table, uint32_t first, uint32_t count,
                   const mdt_table_layout **out);

/* Width in bytes of a column in this image (tables.c). */
unsigned mdt__col_width(const struct mdt_md *md, unsigned table, unsigned col);

/* Whether a column's values never decrease over the readable rows
 * (tables.c): a spec-sorted table is really sorted, a list column's runs
 * are disjoint and in row order. */
bool mdt__column_ascends(const mdt_table_layout *t, unsigned col);

/* Checks left to first need (lazy.c). mdt__lazy_attach, at open, arranges
 * for the lazy structures to be freed with the image. */
int mdt__lazy_attach(struct mdt_md *md);
/* Whether a spec-sorted table really is sorted (false for others). */
bool mdt__table_sorted(const struct mdt_md *md, unsigned table);
/* The warnings of the deferred checks (unsorted tables, list columns whose
 * starts go down), computed when first asked for. */
size_t mdt__late_warning_count(const struct mdt_md *md);
const char *mdt__late_warning(const struct mdt_md *md, size_t i);

/* Run indexes (runs.c), built on the first owner query of a LIST column;
 * they make the owner of a list position a load (owner.c). */
struct mdt_run_index {
    uint32_t n;     /* positions 0..n-1 are indexed (the readable rows) */
    bool ascending; /* the column's starts never decrease */
    uint16_t *h16;  /* position -> row whose run holds it, 0: none; */
    uint32_t *h32;  /* h16 when the owning table has < 65536 rows */
    /* Columns that do not ascend: floor[r], r in 1..nfloor (the readable
     * rows), where the readable runs of the rows before r end, below which
     * r's run does not begin (runs.c); NULL for ascending columns. */
    uint32_t *floor;
    uint32_t nfloor;
};
/* The index of LIST column `col` of `table`, built on first need; NULL
 * with the error recorded when out of memory. Thread-safe (lazy.c). */
const struct mdt_run_index *mdt__run_index(const struct mdt_md *md, unsigned table, unsigned col);
/* Whether LIST column `col` of `table` ascends (its starts never go down),
 * found out once (a pass over the column) and kept. */
bool mdt__list_ascends(const struct mdt_md *md, unsigned table, unsigned col);
/* The index of a table's k-th LIST column when it is built already (a
 * load), else NULL. */
static inline const struct mdt_run_index *mdt__run_index_built(const struct mdt_md *md,
                                                               unsigned table, unsigned k)
{
    struct mdt_table *tb = (struct mdt_table *)&md->tables[table];
    return atomic_load_explicit(&tb->runs[k], memory_order_acquire);
}
/* The holder of pos < ri->n. */
static inline uint32_t mdt__run_index_get(const struct mdt_run_index *ri, uint32_t pos)
{
    return ri->h16 ? ri->h16[pos] : ri->h32[pos];
}
/* The position of a Field/MethodDef/Param/Event/Property row in its list
 * runs: through the Ptr table when it has rows (0 when no Ptr row names
 * it), else the row itself. 0 or MDT_ENOMEM. */
int mdt__list_position(const struct mdt_md *md, unsigned target, uint32_t rid, uint32_t *pos);
/* Free a table's lazy indexes (with the image). */
void mdt__runs_free(struct mdt_table *tb);

/* The table cell a heap access came from, for error messages. */
typedef struct mdt_cellref {
    unsigned table;
    uint32_t rid;
    unsigned col;
} mdt_cellref;

int mdt__heap_string_slow(const struct mdt_md *md, uint32_t idx, const char **s, size_t *len,
                          const mdt_cellref *ref) __attribute__((cold, noinline));
int mdt__heap_blob_slow(const struct mdt_md *md, uint32_t idx, const uint8_t **data, uint32_t *len,
                        const mdt_cellref *ref) __attribute__((cold, noinline));
int mdt__heap_guid(const struct mdt_md *md, uint32_t idx, const uint8_t **guid,
                   const mdt_cellref *ref);
/* A cell of row rid the inline fast path refused, for the loops of
 * columns.c and mdt_row_cells: 0 with the value, or 1 with NULL and 0 and
 * the located error recorded. */
int mdt__cell_string_slow(const struct mdt_md *md, unsigned table, uint32_t rid, unsigned col,
                          uint32_t idx, const char **s, uint32_t *len)
    __attribute__((cold, noinline));
int mdt__cell_blob_slow(const struct mdt_md *md, unsigned table, uint32_t rid, unsigned col,
                        uint32_t idx, const uint8_t **data, uint32_t *len)
    __attribute__((cold, noinline));
int mdt__cell_guid_slow(const struct mdt_md *md, unsigned table, uint32_t rid, unsigned col,
                        uint32_t idx, const uint8_t **guid) __attribute__((cold, noinline));

/* Length of the string at s, which lies in a NUL-terminated heap with at
 * least 16 bytes from s on (see strings_short()). Most metadata names are
 * shorter than 16 bytes: one 16-byte compare finds their NUL, libc's strlen
 * is called for the rest. In whole-table reads the call to strlen per cell
 * cost more than its scan, and libc has no inline form of it. */
static inline size_t short_strlen(const char *s)
{
#if defined(__SSE2__)
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)s);
    unsigned m = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_setzero_si128()));
    if (m)
        return (size_t)__builtin_ctz(m);
    return 16 + strlen(s + 16);
#else
    return strlen(s);
#endif
}

/* Indexes below this have 16 readable bytes in #Strings (0 when it does not
 * end with a NUL, as the fast paths require). */
static inline uint32_t strings_short(const struct mdt_md *md)
{
    return md->lay.strings_fast >= 16 ? md->lay.strings_fast - 15 : 0;
}

/* 0 when the string at idx is readable the quick way; -1: take the slow
 * path (which also handles index 0 without a heap, and reports errors). */
static inline int heap_string_fast(const struct mdt_md *md, uint32_t idx, const char **s,
                                   size_t *len)
{
    if (idx < md->lay.strings_fast) {
        *s = (const char *)md->lay.strings + idx;
        if (len)
            *len = strlen(*s);
        return 0;
    }
    return -1;
}

static inline int heap_blob_fast(const struct mdt_md *md, uint32_t idx, const uint8_t **data,
                                 uint32_t *len)
{
    const struct mdt_heap_view *h = &md->blob;
    if (idx < h->size) {
        const uint8_t *p = h->base + idx;
        uint32_t left = h->size - idx, n;
        if (p[0] < 0x80) {
            n = p[0];
            if (n < left) {
                *data = p + 1;
                *len = n;
                return 0;
            }
        } else if ((p[0] & 0xC0) == 0x80 && left >= 2) {
            n = (uint32_t)(p[0] & 0x3F) << 8 | p[1];
            if (n <= left - 2) {
                *data = p + 2;
                *len = n;
                return 0;
            }
        }
    }
    return -1;
}

/* A cell of a row inside the table's readable rows: 4 bytes read and
 * masked to the cell's width (open made the 3 bytes past the last row
 * readable, tables.c). */
static inline uint32_t table_raw(const mdt_table_layout *t, const uint8_t *row, unsigned col)
{
    return le32(row + t->off[col]) & t->mask[col];
}

#endif
