/* mdtools: the metadata tables (ECMA-335 II.22, II.24.2.6) and access to
 * their rows and cells.
 *
 * Tables, columns and coded indexes are generated from <mdtools/tables.def>.
 * Identifiers keep the spec's spelling: MDT_TABLE_TypeDef,
 * MDT_COL_TypeDef_Extends, MDT_CI_TypeDefOrRef.
 *
 * Thread safety: an open image is immutable; every function here may be
 * called from any thread without locks. None of them allocates. */
#ifndef MDTOOLS_TABLES_H
#define MDTOOLS_TABLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
#define MDT_TABLE(id, name, sort) enum mdt_cols_##name {
#define MDT_COL(t, c, k, a) MDT_COL_##t##_##c,
#define MDT_TABLE_END(name) MDT_NCOLS_##name };
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
    MDT_COLK_U8,    /* 1-byte constant */
    MDT_COLK_U16,   /* 2-byte constant */
    MDT_COLK_U32,   /* 4-byte constant */
    MDT_COLK_STR,   /* #Strings index */
    MDT_COLK_GUID,  /* #GUID index (1-based, 16-byte units) */
    MDT_COLK_BLOB,  /* #Blob index */
    MDT_COLK_TAB,   /* simple index into one table */
    MDT_COLK_LIST,  /* simple index starting a run (FieldList, ...) */
    MDT_COLK_CODED  /* coded index (II.24.2.6) */
};

typedef struct mdt_column_schema {
    const char *name;
    uint8_t kind;   /* enum mdt_col_kind */
    uint8_t target; /* table id for TAB/LIST, coded index kind for CODED */
} mdt_column_schema;

typedef struct mdt_table_schema {
    const char *name;    /* NULL for ids that are not tables */
    uint8_t id;
    uint8_t ncols;
    int8_t sort_col;     /* column the spec requires sorted, or -1 */
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

/* Number of rows the tables stream declares for `table` (0 if absent). */
uint32_t mdt_table_rows(const mdt_image *img, unsigned table);
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
 * its rows really are in key order (checked at open). */
bool mdt_table_is_sorted(const mdt_image *img, unsigned table);

/* A row cursor: a value, allocates nothing, valid while the image is open. */
typedef struct mdt_row {
    const mdt_image *img;
    const uint8_t *p; /* first byte of the row (borrowed) */
    uint32_t rid;     /* 1-based row number */
    uint8_t table;
} mdt_row;

/* Position `row` on row `rid` (1-based) of `table`.
 * Errors: MDT_ENOTFOUND (rid 0 or > rows), MDT_ETRUNC (row lies beyond the
 * end of the tables stream: the table is damaged from there on). */
int mdt_row_get(mdt_row *row, const mdt_image *img, unsigned table, uint32_t rid);

/* Raw value of a column (constant, heap index, table index or coded index
 * as stored). Never fails once the row was obtained; col must be valid. */
uint32_t mdt_row_raw(const mdt_row *row, unsigned col);

/* Decoded cells. Each checks the value against this image and fails with a
 * located error (table, row, column, offset) when it is out of range. */

/* #Strings cell. *s is borrowed, NUL-terminated; *len excludes the NUL. */
int mdt_row_string(const mdt_row *row, unsigned col, const char **s, size_t *len);
/* #Blob cell: the blob's bytes (borrowed) and length; index 0 is empty. */
int mdt_row_blob(const mdt_row *row, unsigned col, const uint8_t **data, uint32_t *len);
/* #GUID cell: 16 bytes (borrowed), or *guid = NULL for index 0. */
int mdt_row_guid(const mdt_row *row, unsigned col, const uint8_t **guid);
/* TAB, LIST or CODED cell as a token (table << 24 | rid); rid 0 is the nil
 * token of that table. Fails for a coded tag that names no table or a rid
 * beyond the target table (for LIST: beyond rows + 1). */
int mdt_row_token(const mdt_row *row, unsigned col, uint32_t *token);

/* Range columns (FieldList, MethodList, ParamList, EventList, PropertyList,
 * VariableList, ConstantList): the run owned by this row, as logical
 * positions [*first, *first + *count) in the target table. Use
 * mdt_range_item() to map a position to a rid, honouring the Ptr tables of
 * uncompressed (#-) metadata. */
int mdt_row_range(const mdt_row *row, unsigned col, uint32_t *first, uint32_t *count);
/* Rid in `table` of logical position `pos` of a range (identity unless a
 * FieldPtr/MethodPtr/ParamPtr/EventPtr/PropertyPtr table is present).
 * Errors: MDT_ENOTFOUND (pos outside the table's rows in this image; a
 * portable PDB's #Pdb row counts do not count), MDT_ETRUNC (the row, or its
 * Ptr row, lies beyond the end of the tables stream), MDT_EBADIMAGE. */
int mdt_range_item(const mdt_image *img, unsigned table, uint32_t pos, uint32_t *rid);

/* Column at a time: one call reads a run of rows of one column, for tools
 * that scan whole tables (dumps, indexes, full walks). Rows are
 * [first, first + count), 1-based; all of them must lie inside the tables
 * stream (MDT_ETRUNC otherwise, MDT_ENOTFOUND beyond the table, MDT_EINVAL
 * for a column of another kind). */

/* Raw stored values of any column. */
int mdt_column_raw(const mdt_image *img, unsigned table, unsigned col, uint32_t first,
                   uint32_t count, uint32_t *out);
/* #Strings cells: s[i] borrowed and NUL-terminated, len[i] its length.
 * A cell that fails gets s[i] = NULL, len[i] = 0. Returns the number of
 * failed cells (>= 0; the error record describes the last one), or a
 * negative error as above. */
int mdt_column_strings(const mdt_image *img, unsigned table, unsigned col, uint32_t first,
                       uint32_t count, const char **s, uint32_t *len);
/* #Blob cells, as mdt_column_strings (failed cells: data NULL, len 0). */
int mdt_column_blobs(const mdt_image *img, unsigned table, unsigned col, uint32_t first,
                     uint32_t count, const uint8_t **data, uint32_t *len);
/* #GUID cells: 16 bytes each, NULL for index 0 and for failed cells. */
int mdt_column_guids(const mdt_image *img, unsigned table, unsigned col, uint32_t first,
                     uint32_t count, const uint8_t **guid);

/* Rows whose column `col` holds the raw value `key` (e.g. the coded index of
 * a parent): an iterator, a value that allocates nothing. When `col` is the
 * column the spec requires the table sorted by and the rows really are
 * sorted (checked at open), it binary-searches; otherwise it scans, so an
 * unsorted table gives the same answers, only slower.
 *
 *     mdt_find f; uint32_t rid;
 *     mdt_find_init(&f, img, MDT_TABLE_CustomAttribute,
 *                   MDT_COL_CustomAttribute_Parent, key);
 *     while (mdt_find_next(&f, &rid) == 0) ...
 */
typedef struct mdt_find {
    const mdt_image *img;
    uint32_t key, next, end;
    uint8_t table, col;
    bool scan;
} mdt_find;

int mdt_find_init(mdt_find *f, const mdt_image *img, unsigned table, unsigned col, uint32_t key);
/* Next matching rid; MDT_ITEROVER when there are no more. */
int mdt_find_next(mdt_find *f, uint32_t *rid);

/* Encode a token as the coded index value `ci` would store, or fail with
 * MDT_EINVAL when the token's table is not part of that coded index. */
int mdt_coded_encode(unsigned ci, uint32_t token, uint32_t *value);
/* Decode a stored coded index value into a token. No check against an
 * image's row counts (mdt_row_token does that); MDT_EBADIMAGE when the tag
 * names no table or the row does not fit a token's 24 bits, MDT_EINVAL for
 * an unknown `ci`. Touches no error record. */
int mdt_coded_decode(unsigned ci, uint32_t value, uint32_t *token);

#ifdef __cplusplus
}
#endif
#endif
