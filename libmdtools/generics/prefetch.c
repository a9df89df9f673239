/* Names asked for ahead (mdt_token_name_prefetch): the memory a name of a
 * MethodDef or Field reads first, requested from the memory system a
 * little before the name is printed, so that a caller naming many tokens
 * at random over large images (mdinspect batch: 260,000 methods over the
 * 26 MB of metadata of a framework) has several of them in flight at once
 * instead of waiting for each in turn. The printer reads the row, the name
 * in #Strings, the owner from the run index (md/owner.c) and the owner's
 * name from the name cache; each depends on the one before, hence two
 * steps. Reads only what the printer's fast paths read, checks each index
 * as they do, and stops where they would take a slow path: a hint is never
 * an error and never changes anything. */
#include "config.h"

#include <stdint.h>

#include <mdtools/names.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>

#include "generics/fmt_int.h"
#include "md/md_int.h"

/* The row of a MethodDef or Field whose bytes are in the tables stream, or
 * NULL. */
static const uint8_t *member_row(const mdt_image *img, uint32_t token, const mdt_table_layout **t)
{
    unsigned table = MDT_TOKEN_TABLE(token);
    uint32_t rid = MDT_TOKEN_RID(token);
    if (table != MDT_TABLE_MethodDef && table != MDT_TABLE_Field)
        return NULL;
    *t = &MDT_IMAGE_LAYOUT_(img)->tables[table];
    if (rid - 1u >= (*t)->avail) /* rid 0 wraps */
        return NULL;
    return (*t)->base + (size_t)(rid - 1) * (*t)->row_size;
}

/* The owner index of a member and its position there, when built and the
 * member's own row is its position (no Ptr table): what mdt_member_owner
 * reads. */
static const struct mdt_run_index *owner_index(const mdt_image *img, uint32_t token)
{
    const struct mdt_md *md = mdt__md(img);
    bool method = MDT_TOKEN_TABLE(token) == MDT_TABLE_MethodDef;
    const struct mdt_run_index *ri = mdt__run_index_built(md, MDT_TABLE_TypeDef, method);
    uint32_t rid = MDT_TOKEN_RID(token);
    if (!ri || rid >= ri->n ||
        md->lay.tables[method ? MDT_TABLE_MethodPtr : MDT_TABLE_FieldPtr].rows)
        return NULL;
    return ri;
}

void mdt_token_name_prefetch(const mdt_image *img, uint32_t token, const mdt_name_cache *cache,
                             unsigned step)
{
    const mdt_table_layout *t;
    const struct mdt_run_index *ri;
    const uint8_t *row;
    uint32_t rid = MDT_TOKEN_RID(token);
    if (!img || !(row = member_row(img, token, &t)))
        return;
    ri = owner_index(img, token);
    if (step == 0) {
        __builtin_prefetch(row);
        __builtin_prefetch(row + t->row_size - 1); /* a row may span two lines */
        if (ri)
            __builtin_prefetch(ri->h16 ? (const void *)&ri->h16[rid] : (const void *)&ri->h32[rid]);
        return;
    }
    /* Step 1: the row and the index have arrived (or are on their way). */
    unsigned col =
        MDT_TOKEN_TABLE(token) == MDT_TABLE_MethodDef ? MDT_COL_MethodDef_Name : MDT_COL_Field_Name;
    const mdt_image_layout *l = MDT_IMAGE_LAYOUT_(img);
    mdt_row r = {img, row, t, rid, (uint8_t)MDT_TOKEN_TABLE(token)};
    uint32_t name = mdt_row_raw(&r, col);
    if (t->kind[col] == MDT_COLK_STR && name < l->strings_fast)
        __builtin_prefetch(l->strings + name);
    if (ri && cache && cache->img == img) {
        uint32_t holder = mdt__run_index_get(ri, rid);
        /* the owner's name as the cache keeps it (its slot is in the
         * caches by now more often than not: a few types own most methods) */
        if (holder && holder <= cache->ntd && cache->td[holder].s)
            __builtin_prefetch(cache->td[holder].s);
    }
}
