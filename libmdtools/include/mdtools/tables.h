/* mdtools: the metadata tables (ECMA-335 II.22, II.24.2.6) and access to
 * their rows and cells.
 *
 * Tables, columns and coded indexes are generated from <mdtools/tables.def>.
 * Identifiers keep the spec's spelling: MDT_TABLE_TypeDef,
 * MDT_COL_TypeDef_Extends, MDT_CI_TypeDefOrRef.
 *
 * Thread safety: an open image is immutable; every function here may be
 * called from any thread without locks. None of them allocates. Whether a
 * spec-sorted table really is sorted is found out on first need (see
 * mdt_table_is_sorted): a scan that allocates nothing and publishes its
 * answer with an atomic store. Async-signal-safe: the inline readers (row,
 * raw, string, blob, GUID cells), mdt_row_cells and mdt_rows_cells are;
 * the rest is not promised to be. */
#ifndef MDTOOLS_TABLES_H
#define MDTOOLS_TABLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mdt_image mdt_image;

#define MDT_NOTABLE 0xFF

/* Table ids (the high byte of a token). */
enum mdt_table_id {
#define MDT_TABLE(id, name, sort) MDT_TABLE_##name = id,
#define MDT_COL(t, c, k, a)
#define MDT_TABLE_END(name)
#include <mdtools/tables.def>
#undef MDT_TABLE
#undef MDT_COL
#undef MDT_TABLE_END
    MDT_TABLE_MAX = 0x40 /* table ids are < 64 (bits of the Valid mask) */
};

/* Column numbers, per table: MDT_COL_<Table>_<Column>. */
#define MDT_TABLE(id, name, sort)                                                                  \
    enum mdt_cols_##name                                                                           \
    {
#define MDT_COL(t, c, k, a) MDT_COL_##t##_##c,
#define MDT_TABLE_END(name)                                                                        \
    MDT_NCOLS_##name                                                                               \
    }                                                                                              \
    ;
#include <mdtools/tables.def>
#undef MDT_TABLE
#undef MDT_COL
#undef MDT_TABLE_END

/* Coded index kinds. */
enum mdt_coded_index {
#define MDT_CODED(name, bits) MDT_CI_##name,
#define MDT_CODED_TAG(name, table)
#define MDT_CODED_END(name)
#include <mdtools/tables.def>
#undef MDT_CODED
#undef MDT_CODED_TAG
#undef MDT_CODED_END
    MDT_CI_COUNT
};

/* Column kinds of the schema. */
enum mdt_col_kind {
    MDT_COLK_U8,   /* 1-byte constant */
    MDT_COLK_U16,  /* 2-byte constant */
    MDT_COLK_U32,  /* 4-byte constant */
    MDT_COLK_STR,  /* #Strings index */
    MDT_COLK_GUID, /* #GUID index (1-based, 16-byte units) */
    MDT_COLK_BLOB, /* #Blob index */
    MDT_COLK_TAB,  /* simple index into one table */
    MDT_COLK_LIST, /* simple index starting a run (FieldList, ...) */
    MDT_COLK_CODED /* coded index (II.24.2.6) */
};

typedef struct mdt_column_schema {
    const char *name;
    uint8_t kind;   /* enum mdt_col_kind */
    uint8_t target; /* table id for TAB/LIST, coded index kind for CODED */
} mdt_column_schema;

typedef struct mdt_table_schema {
    const char *name; /* NULL for ids that are not tables */
    uint8_t id;
    uint8_t ncols;
    int8_t sort_col; /* column the spec requires sorted, or -1 */
    const mdt_column_schema *cols;
} mdt_table_schema;

typedef struct mdt_coded_schema {
    const char *name;
    uint8_t tag_bits;
    uint8_t ntags;
    const uint8_t *tables; /* table per tag; MDT_NOTABLE for unused tags */
} mdt_coded_schema;

/* Schema of table `id`, or NULL when id names no table. Static data. */
const mdt_table_schema *mdt_table_schema_get(unsigned id);
/* Table id for a name (case-insensitive), or -1. */
int mdt_table_by_name(const char *name);
/* Column number for a name within a table (case-insensitive), or -1. */
int mdt_column_by_name(unsigned table, const char *name);
const mdt_coded_schema *mdt_coded_schema_get(unsigned ci);

/* Rows 1..n of `table` whose bytes lie inside the tables stream (the others
 * fail with MDT_ETRUNC). A damaged image may declare up to 0xFFFFFF rows in
 * a few bytes: size anything per row by this count, never by the declared
 * one, so that memory stays bounded by the input. */
uint32_t mdt_table_rows_present(const mdt_image *img, unsigned table);
/* Bytes per row as laid out in this image, 0 if absent. */
uint32_t mdt_table_row_size(const mdt_image *img, unsigned table);
/* Width in bytes (2 or 4, 1 for U8) of a column in this image. */
unsigned mdt_column_width(const mdt_image *img, unsigned table, unsigned col);
/* True when the table is present and, where the spec requires it sorted,
 * its rows really are in key order. Checked on the first call that needs
 * it for this table (a scan of the key column, no allocation; the answer
 * is published with an atomic store, so concurrent first calls agree). */
bool mdt_table_is_sorted(const mdt_image *img, unsigned table);

/* ---- The layout the inline readers use -------------------------------
 *
 * mdt_table_rows, mdt_row_get, mdt_row_raw, mdt_row_string, mdt_row_blob
 * and mdt_row_guid are inline functions: a cell costs a few instructions
 * and no call. They read the open image through the two structures below,
 * which the library fills at open and never changes afterwards (so readers
 * on any thread need no lock). Every check they make is the one the
 * library made before these were inline (row inside the part of the table
 * the tables stream holds, column kind, heap index below the heap size,
 * blob length inside the heap); what they cannot decide in a few
 * instructions (a 2- or 4-byte blob length prefix, an absent heap, an
 * out-of-range index) goes to the out-of-line *_slow function, which
 * checks everything again and reports the located error.
 *
 * These structures are not an API: read an image only through the
 * functions. They are part of the ABI, though: a program compiled against
 * this header has their offsets, and the layout of mdt_row, built in, so
 * any change to them changes the library's soname (see README.md, "ABI").
 * The library also exports every inline function as an ordinary symbol
 * (for bindings and for compilers that do not inline). */
#define MDT_LAYOUT_COLS 9  /* columns of the widest table (AssemblyRef) */
#define MDT_COLK_NONE 0xFF /* kind[] of a column a table does not have */

/* One table. The column fields are filled for tables that have rows (the
 * inline readers never reach the others: mdt_row_get fails first), except
 * kind[], which is MDT_COLK_NONE wherever no column is read. */
typedef struct mdt_table_layout {
    const uint8_t *base; /* first row (borrowed); NULL when the table is absent */
    uint32_t rows;       /* declared by the tables stream */
    uint32_t avail;      /* rows whose bytes lie inside the stream (<= rows) */
    uint32_t row_size;
    uint8_t ncols;
    uint8_t off[MDT_LAYOUT_COLS];   /* byte offset of each column in a row */
    uint8_t width[MDT_LAYOUT_COLS]; /* 1, 2 or 4 */
    uint8_t kind[MDT_LAYOUT_COLS];  /* enum mdt_col_kind; MDT_COLK_NONE past ncols */
    /* The low `width` bytes: a cell is read as 4 bytes and masked. Open
     * makes sure 3 bytes past the end of the last row are still readable
     * (else the rows are read from a padded copy of the tables stream). */
    uint32_t mask[MDT_LAYOUT_COLS];
} mdt_table_layout;

/* The first member of every open image. */
typedef struct mdt_image_layout {
    mdt_table_layout tables[MDT_TABLE_MAX];
    const uint8_t *strings; /* #Strings */
    uint32_t strings_fast;  /* #Strings size when its last byte is NUL (a string at
                               any index below ends inside the heap), else 0 */
    uint32_t blob_fast;     /* #Blob size - 127, or 0: a blob at any index below
                               with a one-byte length prefix ends inside the heap */
    const uint8_t *blob;
    const uint8_t *guid;
    uint32_t guids; /* whole 16-byte GUIDs in #GUID */
} mdt_image_layout;

/* C99 inline semantics (an inline definition here, the external one in the
 * library); a compiler in GNU89 inline mode gets a private copy per file. */
#if defined(__cplusplus) || !defined(__GNUC_GNU_INLINE__)
#define MDT_INLINE inline
#else
#define MDT_INLINE static inline
#endif
#define MDT_IMAGE_LAYOUT_(img) ((const mdt_image_layout *)(const void *)(img))

/* Number of rows the tables stream declares for `table` (0 if absent). */
MDT_INLINE uint32_t mdt_table_rows(const mdt_image *img, unsigned table)
{
    return table < MDT_TABLE_MAX ? MDT_IMAGE_LAYOUT_(img)->tables[table].rows : 0;
}

/* A row cursor: a value, allocates nothing, valid while the image is open.
 * Its fields are read by the inline functions; treat them as private. */
typedef struct mdt_row {
    const mdt_image *img;
    const uint8_t *p;            /* first byte of the row (borrowed) */
    const mdt_table_layout *lay; /* its table's layout in img (borrowed) */
    uint32_t rid;                /* 1-based row number */
    uint8_t table;
} mdt_row;

/* The out-of-line paths of the inline functions below: the same contract
 * and every check made again, with the located error. Callable directly.
 * Errors: those of the inline function (mdt_row_get: MDT_EINVAL,
 * MDT_ENOTFOUND, MDT_ETRUNC; the cells: MDT_EINVAL, MDT_EBADIMAGE,
 * MDT_ENOHEAP, and MDT_ETRUNC for a blob). */
int mdt_row_get_slow(mdt_row *row, const mdt_image *img, unsigned table, uint32_t rid);
int mdt_row_string_slow(const char **s, size_t *len, const mdt_row *row, unsigned col);
int mdt_row_blob_slow(const uint8_t **data, uint32_t *len, const mdt_row *row, unsigned col);
int mdt_row_guid_slow(const uint8_t **guid, const mdt_row *row, unsigned col);

/* Position `row` on row `rid` (1-based) of `table`.
 * Errors: MDT_ENOTFOUND (rid 0 or > rows), MDT_ETRUNC (row lies beyond the
 * end of the tables stream: the table is damaged from there on), MDT_EINVAL
 * (no table with that id). */
MDT_INLINE int mdt_row_get(mdt_row *row, const mdt_image *img, unsigned table, uint32_t rid)
{
    if (table < MDT_TABLE_MAX) {
        const mdt_table_layout *t = &MDT_IMAGE_LAYOUT_(img)->tables[table];
        if (rid - 1u < t->avail) { /* rid 0 wraps and fails */
            row->img = img;
            row->p = t->base + (size_t)(rid - 1) * t->row_size;
            row->lay = t;
            row->rid = rid;
            row->table = (uint8_t)table;
            return 0;
        }
    }
    return mdt_row_get_slow(row, img, table, rid);
}

/* Raw value of a column (constant, heap index, table index or coded index
 * as stored). Never fails once the row was obtained; col must be one of
 * the table's columns (not checked). */
MDT_INLINE uint32_t mdt_row_raw(const mdt_row *row, unsigned col)
{
    const uint8_t *p = row->p + row->lay->off[col];
    return ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24) &
           row->lay->mask[col];
}

/* Decoded cells. Each checks the column's kind (MDT_EINVAL) and the value
 * against this image, and fails with a located error (table, row, column,
 * offset) when it is out of range. */

/* #Strings cell. *s is borrowed, NUL-terminated; *len (may be NULL)
 * excludes the NUL. Errors: MDT_EINVAL (not a #Strings column of the
 * table), MDT_EBADIMAGE (an index beyond the heap, no NUL before its end),
 * MDT_ENOHEAP (no #Strings stream). */
MDT_INLINE int mdt_row_string(const char **s, size_t *len, const mdt_row *row, unsigned col)
{
    if (col < MDT_LAYOUT_COLS && row->lay->kind[col] == MDT_COLK_STR) {
        const mdt_image_layout *l = MDT_IMAGE_LAYOUT_(row->img);
        uint32_t i = mdt_row_raw(row, col);
        if (i < l->strings_fast) {
            *s = (const char *)l->strings + i;
            if (len)
                *len = strlen(*s);
            return 0;
        }
    }
    return mdt_row_string_slow(s, len, row, col);
}

/* #Blob cell: the blob's bytes (borrowed) and length; index 0 is empty.
 * Errors: MDT_EINVAL (not a #Blob column), MDT_EBADIMAGE, MDT_ETRUNC,
 * MDT_ENOHEAP (as for mdt_heap_blob). */
MDT_INLINE int mdt_row_blob(const uint8_t **data, uint32_t *len, const mdt_row *row, unsigned col)
{
    if (col < MDT_LAYOUT_COLS && row->lay->kind[col] == MDT_COLK_BLOB) {
        const mdt_image_layout *l = MDT_IMAGE_LAYOUT_(row->img);
        uint32_t i = mdt_row_raw(row, col);
        /* A one-byte length prefix (II.23.2): its bytes are inside the heap. */
        if (i < l->blob_fast && l->blob[i] < 0x80) {
            *data = l->blob + i + 1;
            *len = l->blob[i];
            return 0;
        }
    }
    return mdt_row_blob_slow(data, len, row, col);
}

/* #GUID cell: 16 bytes (borrowed), or *guid = NULL for index 0. Errors:
 * MDT_EINVAL (not a #GUID column), MDT_EBADIMAGE (beyond the heap),
 * MDT_ENOHEAP (no #GUID stream). */
MDT_INLINE int mdt_row_guid(const uint8_t **guid, const mdt_row *row, unsigned col)
{
    if (col < MDT_LAYOUT_COLS && row->lay->kind[col] == MDT_COLK_GUID) {
        const mdt_image_layout *l = MDT_IMAGE_LAYOUT_(row->img);
        uint32_t i = mdt_row_raw(row, col);
        if (i - 1u < l->guids) { /* index 0 wraps */
            *guid = l->guid + (size_t)(i - 1) * 16;
            return 0;
        }
        if (i == 0) {
            *guid = NULL;
            return 0;
        }
    }
    return mdt_row_guid_slow(guid, row, col);
}

/* Every cell of a row in one call: what mdt_row_raw, mdt_row_string,
 * mdt_row_blob and mdt_row_guid give, for each column c at cells[c]
 * (cells must have room for the table's column count, at most
 * MDT_LAYOUT_COLS). value is the raw stored value of every cell; ptr and
 * len are the string (len without the NUL), the blob, or the GUID (len
 * 16; ptr NULL for index 0); NULL and 0 for other kinds, which are not
 * checked (use mdt_row_token). A cell that fails to decode gets ptr NULL,
 * len 0. Returns the number of failed cells (>= 0; the error record
 * describes the last one). */
typedef struct mdt_cell {
    const void *ptr;
    uint32_t value;
    uint32_t len;
} mdt_cell;
int mdt_row_cells(mdt_cell *cells, const mdt_row *row);

/* Every cell of rows [first, first + count) of `table` (1-based) in one
 * call: for each row what mdt_row_cells gives, row after row. The cells of
 * row first + i are cells[i * ncols + c] for c < ncols, the table's column
 * count (mdt_table_schema_get(table)->ncols); cells must have room for
 * count * ncols of them, and nothing else is written. The rows are checked
 * once for the run: all must lie inside the tables stream (MDT_ETRUNC
 * otherwise, MDT_ENOTFOUND for first 0 or rows beyond the table, MDT_EINVAL
 * for no table with that id; nothing is written then). Heap cells are
 * checked as one at a time: a cell that fails to decode gets ptr NULL,
 * len 0, and the others are still decoded. Returns the number of failed
 * cells (>= 0; the error record describes the last one found, the cells
 * being decoded a column at a time), or a negative error as above.
 * count 0 writes nothing and returns 0 (or the error of a bad table).
 *
 * The cheapest way to read whole rows (dumps, scans, ports of loops over
 * mono_metadata_decode_row): each column is decoded down the run by a
 * loop for its kind and width, with no per-cell dispatch, so a call costs
 * about 250 instructions more than its cells (a run of one row is handed
 * to mdt_row_cells); with runs of 64 rows or more, reading every table
 * this way takes about half the instructions of mono_metadata_decode_row
 * and mono's heap calls (bench/README.md). */
int mdt_rows_cells(mdt_cell *cells, const mdt_image *img, unsigned table, uint32_t first,
                   uint32_t count);

/* TAB, LIST or CODED cell as a token (table << 24 | rid); rid 0 is the nil
 * token of that table. Errors: MDT_EBADIMAGE (a coded tag that names no
 * table, a rid beyond the target table; for LIST: beyond rows + 1),
 * MDT_EINVAL (not a TAB, LIST or CODED column). */
int mdt_row_token(uint32_t *token, const mdt_row *row, unsigned col);

/* Range columns (FieldList, MethodList, ParamList, EventList, PropertyList,
 * VariableList, ConstantList): the run owned by this row, as logical
 * positions [*first, *first + *count) in the target table. Use
 * mdt_range_item() to map a position to a rid, honouring the Ptr tables of
 * uncompressed (#-) metadata. Where a damaged column's values go down, a
 * run begins no lower than where the runs of the rows before it end, so
 * that no two runs overlap (a walk over every row's run is linear).
 * Errors: MDT_EINVAL (not a LIST column), MDT_EBADIMAGE (a start outside
 * the target table, a run that ends before it starts), MDT_ETRUNC (the
 * next row, which ends the run, lies beyond the tables stream),
 * MDT_ENOMEM (the column's index, built on first need, in a column that
 * does not ascend). */
int mdt_row_range(uint32_t *first, uint32_t *count, const mdt_row *row, unsigned col);
/* Rid in `table` of logical position `pos` of a range (identity unless a
 * FieldPtr/MethodPtr/ParamPtr/EventPtr/PropertyPtr table is present).
 * Errors: MDT_ENOTFOUND (pos outside the table's rows in this image; a
 * portable PDB's #Pdb row counts do not count), MDT_ETRUNC (the row, or its
 * Ptr row, lies beyond the end of the tables stream), MDT_EBADIMAGE (a Ptr
 * row naming no row), MDT_EINVAL (no table with that id). */
int mdt_range_item(uint32_t *rid, const mdt_image *img, unsigned table, uint32_t pos);

/* Column at a time: one call reads a run of rows of one column, for tools
 * that scan whole tables (dumps, indexes, full walks). Rows are
 * [first, first + count), 1-based; all of them must lie inside the tables
 * stream (MDT_ETRUNC otherwise, MDT_ENOTFOUND beyond the table, MDT_EINVAL
 * for a column of another kind). */

/* Raw stored values of any column. Errors: MDT_ETRUNC, MDT_ENOTFOUND,
 * MDT_EINVAL (no such table or column), as above. */
int mdt_column_raw(uint32_t *out, const mdt_image *img, unsigned table, unsigned col,
                   uint32_t first, uint32_t count);
/* #Strings cells: s[i] borrowed and NUL-terminated, len[i] its length.
 * A cell that fails gets s[i] = NULL, len[i] = 0. Returns the number of
 * failed cells (>= 0; the error record describes the last one), or a
 * negative error as above: MDT_ETRUNC, MDT_ENOTFOUND, MDT_EINVAL (not a
 * #Strings column). */
int mdt_column_strings(const char **s, uint32_t *len, const mdt_image *img, unsigned table,
                       unsigned col, uint32_t first, uint32_t count);
/* #Blob cells, as mdt_column_strings (failed cells: data NULL, len 0).
 * Errors: MDT_ETRUNC, MDT_ENOTFOUND, MDT_EINVAL (not a #Blob column). */
int mdt_column_blobs(const uint8_t **data, uint32_t *len, const mdt_image *img, unsigned table,
                     unsigned col, uint32_t first, uint32_t count);
/* #GUID cells: 16 bytes each, NULL for index 0 and for failed cells.
 * Returns as mdt_column_strings. Errors: MDT_ETRUNC, MDT_ENOTFOUND,
 * MDT_EINVAL (not a #GUID column). */
int mdt_column_guids(const uint8_t **guid, const mdt_image *img, unsigned table, unsigned col,
                     uint32_t first, uint32_t count);

/* Rows whose column `col` holds the raw value `key` (e.g. the coded index of
 * a parent): an iterator, a value that allocates nothing. When `col` is the
 * column the spec requires the table sorted by and the rows really are
 * sorted (checked on first need), it binary-searches; otherwise it scans, so an
 * unsorted table gives the same answers, only slower.
 *
 *     mdt_find f; uint32_t rid;
 *     mdt_find_init(&f, img, MDT_TABLE_CustomAttribute,
 *                   MDT_COL_CustomAttribute_Parent, key);
 *     while (mdt_find_next(&rid, &f) == 0) ...
 */
typedef struct mdt_find {
    const mdt_image *img;
    uint32_t key, next, end;
    uint8_t table, col;
    bool scan;
} mdt_find;

/* Start a search. Errors: MDT_EINVAL (no such table or column). */
int mdt_find_init(mdt_find *f, const mdt_image *img, unsigned table, unsigned col, uint32_t key);
/* Next matching rid; MDT_ITEROVER when there are no more. */
int mdt_find_next(uint32_t *rid, mdt_find *f);

/* Encode a token as the coded index value `ci` would store, or fail with
 * MDT_EINVAL when the token's table is not part of that coded index (or
 * `ci` is unknown). Touches no error record. */
int mdt_coded_encode(uint32_t *value, unsigned ci, uint32_t token);
/* Decode a stored coded index value into a token. No check against an
 * image's row counts (mdt_row_token does that); MDT_EBADIMAGE when the tag
 * names no table or the row does not fit a token's 24 bits, MDT_EINVAL for
 * an unknown `ci`. Touches no error record. */
int mdt_coded_decode(uint32_t *token, unsigned ci, uint32_t value);

#ifdef __cplusplus
}
#endif
#endif
