/* The schema of every table and coded index, generated from tables.def
 * (ECMA-335 II.22, II.24.2.6; Portable PDB v1.0 tables 0x30-0x37). */
#include "config.h"

#include <stddef.h>
#include <strings.h>

#include <mdtools/errors.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>

#define U8 MDT_COLK_U8
#define U16 MDT_COLK_U16
#define U32 MDT_COLK_U32
#define STR MDT_COLK_STR
#define GUID MDT_COLK_GUID
#define BLOB MDT_COLK_BLOB
#define TAB MDT_COLK_TAB
#define LIST MDT_COLK_LIST
#define CODED MDT_COLK_CODED

/* Column arrays, one per table. */
#define MDT_TABLE(id, name, sort) static const mdt_column_schema cols_##name[] = {
#define MDT_COL(t, c, k, a) {#c, k, a},
#define MDT_TABLE_END(name)                                                                        \
    }                                                                                              \
    ;
#include <mdtools/tables.def>
#undef MDT_TABLE
#undef MDT_COL
#undef MDT_TABLE_END

static const mdt_table_schema tables[MDT_TABLE_MAX] = {
#define MDT_TABLE(id, name, sort)                                                                  \
    [id] = {#name, id, sizeof cols_##name / sizeof cols_##name[0], sort, cols_##name},
#define MDT_COL(t, c, k, a)
#define MDT_TABLE_END(name)
#include <mdtools/tables.def>
#undef MDT_TABLE
#undef MDT_COL
#undef MDT_TABLE_END
};

#define MDT_CODED(name, bits) static const uint8_t tags_##name[] = {
#define MDT_CODED_TAG(name, table) table,
#define MDT_CODED_END(name)                                                                        \
    }                                                                                              \
    ;
#include <mdtools/tables.def>
#undef MDT_CODED
#undef MDT_CODED_TAG
#undef MDT_CODED_END

static const mdt_coded_schema coded[MDT_CI_COUNT] = {
#define MDT_CODED(name, bits) [MDT_CI_##name] = {#name, bits, sizeof tags_##name, tags_##name},
#define MDT_CODED_TAG(name, table)
#define MDT_CODED_END(name)
#include <mdtools/tables.def>
#undef MDT_CODED
#undef MDT_CODED_TAG
#undef MDT_CODED_END
};

const mdt_table_schema *mdt_table_schema_get(unsigned id)
{
    return id < MDT_TABLE_MAX && tables[id].name ? &tables[id] : NULL;
}

const mdt_coded_schema *mdt_coded_schema_get(unsigned ci)
{
    return ci < MDT_CI_COUNT ? &coded[ci] : NULL;
}

int mdt_table_by_name(const char *name)
{
    for (unsigned i = 0; i < MDT_TABLE_MAX; i++)
        if (tables[i].name && strcasecmp(tables[i].name, name) == 0)
            return (int)i;
    return -1;
}

int mdt_column_by_name(unsigned table, const char *name)
{
    const mdt_table_schema *t = mdt_table_schema_get(table);
    if (!t)
        return -1;
    for (unsigned c = 0; c < t->ncols; c++)
        if (strcasecmp(t->cols[c].name, name) == 0)
            return (int)c;
    return -1;
}

int mdt_coded_decode(uint32_t *token, unsigned ci, uint32_t value)
{
    const mdt_coded_schema *c = mdt_coded_schema_get(ci);
    uint32_t tag;
    if (!c)
        return MDT_EINVAL;
    tag = value & ((1u << c->tag_bits) - 1);
    if (tag >= c->ntags || c->tables[tag] == MDT_NOTABLE)
        return MDT_EBADIMAGE;
    /* A row number of 2^24 or more has no token (II.22: tokens hold 24-bit
     * rows); shifted in, its top bits would change the table. */
    if (value >> c->tag_bits > 0x00FFFFFFu)
        return MDT_EBADIMAGE;
    *token = MDT_TOKEN(c->tables[tag], value >> c->tag_bits);
    return 0;
}

int mdt_coded_encode(uint32_t *value, unsigned ci, uint32_t token)
{
    const mdt_coded_schema *c = mdt_coded_schema_get(ci);
    if (!c)
        return MDT_EINVAL;
    for (unsigned tag = 0; tag < c->ntags; tag++)
        if (c->tables[tag] == token >> 24) {
            *value = (token & 0x00FFFFFFu) << c->tag_bits | tag;
            return 0;
        }
    return MDT_EINVAL;
}
