/* Who owns a row. Owners come in two kinds (ECMA-335 II.22): runs of a
 * list column (a TypeDef owns its Field and MethodDef runs, a MethodDef its
 * Param run, a PropertyMap/EventMap row its Property/Event run, whose owner
 * is the map row's Parent), and parent columns (MemberRef.Class,
 * CustomAttribute.Parent, ...). The holders of runs, and the Ptr tables of
 * uncompressed (#-) metadata, have indexes built on the first query that
 * needs them (runs.c): no query scans or searches a table after that. */
#include "config.h"

#include <mdtools/errors.h>
#include <mdtools/nesting.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>

#include "md/md_int.h"
#include "util/error.h"

/* The last row of `table` whose start in list column `col` is at or
 * before pos, if its run holds pos; 0 for none. Exact when the starts
 * never decrease: the runs are then disjoint and in row order. Used only
 * where the index does not answer (out of memory, or a position past the
 * readable rows of a truncated table). */
static int search_holder(const mdt_image *img, unsigned table, unsigned col, uint32_t pos,
                         uint32_t *holder)
{
    uint32_t lo = 1, hi = mdt_table_rows(img, table), found = 0, first, count;
    uint64_t mark = mdt__err_mark();
    mdt_row r;
    int e;
    while (lo <= hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if ((e = mdt_row_get(&r, img, table, mid)))
            return e;
        if (mdt_row_raw(&r, col) <= pos) {
            found = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    if (found && mdt_row_get(&r, img, table, found) == 0 &&
        mdt_row_range(&first, &count, &r, col) == 0 && pos >= first && pos - first < count)
        *holder = found;
    mdt__err_forget(mark);
    return 0;
}

/* The row of `table` whose run in list column `col` holds position pos, or
 * 0 for none: the first row, in row order, whose readable run holds it
 * (runs.c indexes them on the column's first query). */
static int run_holder(const mdt_image *img, unsigned table, unsigned col, uint32_t pos,
                      uint32_t *holder)
{
    const struct mdt_run_index *ri;
    *holder = 0;
    if (!pos)
        return 0;
    if (!(ri = mdt__run_index(mdt__md(img), table, col))) {
        /* Out of memory: a valid column can still be searched. */
        if (!mdt__column_ascends(&mdt__md(img)->lay.tables[table], col))
            return mdt_error_last()->code;
        mdt__err_forget_one(); /* mdt__run_index records one failure */
        return search_holder(img, table, col, pos, holder);
    }
    if (pos < ri->n)
        *holder = mdt__run_index_get(ri, pos);
    else if (ri->ascending)
        return search_holder(img, table, col, pos, holder);
    return 0;
}

static int run_owner(const mdt_image *img, unsigned table, unsigned col, unsigned target,
                     uint32_t rid, uint32_t *owner)
{
    uint32_t holder = 0, pos;
    int e = mdt__list_position(mdt__md(img), target, rid, &pos);
    if (!e)
        e = run_holder(img, table, col, pos, &holder);
    *owner = holder ? MDT_TOKEN(table, holder) : 0;
    return e;
}

int mdt_member_owner(uint32_t *owner, const mdt_image *img, uint32_t member)
{
    unsigned table = MDT_TOKEN_TABLE(member);
    uint32_t rid = MDT_TOKEN_RID(member);
    *owner = 0;
    if (table == MDT_TABLE_MethodDef || table == MDT_TABLE_Field) {
        /* The common case in two loads: no Ptr table, the index built.
         * FieldList and MethodList are TypeDef's first and second LIST
         * columns. */
        unsigned ptr = table == MDT_TABLE_MethodDef ? MDT_TABLE_MethodPtr : MDT_TABLE_FieldPtr;
        const struct mdt_md *md = mdt__md(img);
        const struct mdt_run_index *ri =
            mdt__run_index_built(md, MDT_TABLE_TypeDef, table == MDT_TABLE_MethodDef);
        if (ri && rid && rid < ri->n && !md->lay.tables[ptr].rows) {
            uint32_t holder = mdt__run_index_get(ri, rid);
            *owner = holder ? MDT_TOKEN(MDT_TABLE_TypeDef, holder) : 0;
            return 0;
        }
    }
    if (table == MDT_TABLE_MethodDef)
        return run_owner(img, MDT_TABLE_TypeDef, MDT_COL_TypeDef_MethodList, MDT_TABLE_MethodDef,
                         MDT_TOKEN_RID(member), owner);
    if (table == MDT_TABLE_Field)
        return run_owner(img, MDT_TABLE_TypeDef, MDT_COL_TypeDef_FieldList, MDT_TABLE_Field,
                         MDT_TOKEN_RID(member), owner);
    if (table == MDT_TABLE_Property || table == MDT_TABLE_Event) {
        /* The common case as above: the map's index built, no Ptr table,
         * the holder's Parent (a TypeDef index) read in place. */
        bool prop = table == MDT_TABLE_Property;
        unsigned map = prop ? MDT_TABLE_PropertyMap : MDT_TABLE_EventMap;
        const struct mdt_md *md = mdt__md(img);
        const struct mdt_run_index *ri = mdt__run_index_built(md, map, 0);
        const mdt_table_layout *t = &md->lay.tables[map];
        if (ri && rid && rid < ri->n &&
            !md->lay.tables[prop ? MDT_TABLE_PropertyPtr : MDT_TABLE_EventPtr].rows) {
            uint32_t holder = mdt__run_index_get(ri, rid), parent;
            if (!holder) {
                *owner = 0;
                return 0;
            }
            parent = table_raw(t, t->base + (size_t)(holder - 1) * t->row_size,
                               prop ? MDT_COL_PropertyMap_Parent : MDT_COL_EventMap_Parent);
            if (parent && parent <= md->lay.tables[MDT_TABLE_TypeDef].rows) {
                *owner = MDT_TOKEN(MDT_TABLE_TypeDef, parent);
                return 0;
            }
        }
    }
    if (table == MDT_TABLE_Property || table == MDT_TABLE_Event || table == MDT_TABLE_Param) {
        /* Through the map row's Parent, or the Param's method. */
        uint32_t t = 0;
        mdt_row r;
        int e;
        if (!rid || rid > mdt_table_rows(img, table))
            return mdt_row_get(&r, img, table, rid); /* the located error */
        if ((e = mdt_token_owner(&t, img, member)) || table != MDT_TABLE_Param ||
            MDT_TOKEN_TABLE(t) != MDT_TABLE_MethodDef) {
            *owner = MDT_TOKEN_TABLE(t) == MDT_TABLE_TypeDef && MDT_TOKEN_RID(t) ? t : 0;
            return e;
        }
        return mdt_member_owner(owner, img, t);
    }
    return mdt__fail_simple(
        MDT_EINVAL, "token 0x%08x is not a Field, MethodDef, Property, Event or Param", member);
}

/* Property and Event: the map row holding the run, then its Parent. */
static int map_owner(const mdt_image *img, unsigned map, unsigned col, unsigned target,
                     unsigned parent, uint32_t rid, uint32_t *owner)
{
    uint32_t holder = 0, pos;
    mdt_row r;
    int e = mdt__list_position(mdt__md(img), target, rid, &pos);
    if (!e)
        e = run_holder(img, map, col, pos, &holder);
    *owner = 0;
    if (e || !holder)
        return e;
    if ((e = mdt_row_get(&r, img, map, holder)))
        return e;
    return mdt_row_token(owner, &r, parent);
}

int mdt_token_owner(uint32_t *owner, const mdt_image *img, uint32_t token)
{
    static const struct {
        uint8_t table, col;
    } parent_col[] = {
        {MDT_TABLE_MemberRef, MDT_COL_MemberRef_Class},
        {MDT_TABLE_GenericParam, MDT_COL_GenericParam_Owner},
        {MDT_TABLE_GenericParamConstraint, MDT_COL_GenericParamConstraint_Owner},
        {MDT_TABLE_CustomAttribute, MDT_COL_CustomAttribute_Parent},
        {MDT_TABLE_Constant, MDT_COL_Constant_Parent},
        {MDT_TABLE_MethodSpec, MDT_COL_MethodSpec_Method},
        {MDT_TABLE_InterfaceImpl, MDT_COL_InterfaceImpl_Class},
        {MDT_TABLE_MethodImpl, MDT_COL_MethodImpl_Class},
        {MDT_TABLE_DeclSecurity, MDT_COL_DeclSecurity_Parent},
        {MDT_TABLE_FieldMarshal, MDT_COL_FieldMarshal_Parent},
        {MDT_TABLE_FieldRVA, MDT_COL_FieldRVA_Field},
        {MDT_TABLE_FieldLayout, MDT_COL_FieldLayout_Field},
        {MDT_TABLE_ClassLayout, MDT_COL_ClassLayout_Parent},
        {MDT_TABLE_ImplMap, MDT_COL_ImplMap_MemberForwarded},
        {MDT_TABLE_MethodSemantics, MDT_COL_MethodSemantics_Association},
        {MDT_TABLE_NestedClass, MDT_COL_NestedClass_EnclosingClass},
    };
    unsigned table = MDT_TOKEN_TABLE(token);
    uint32_t rid = MDT_TOKEN_RID(token);
    mdt_row r;
    int e;
    if (!img || !owner)
        return mdt__fail_simple(MDT_EINVAL, "mdt_token_owner: no image or no output");
    *owner = 0;
    if (!rid || rid > mdt_table_rows(img, table))
        return mdt_row_get(&r, img, table, rid); /* the located error */
    switch (table) {
    case MDT_TABLE_TypeDef: return mdt_typedef_enclosing(owner, img, token);
    case MDT_TABLE_MethodDef:
    case MDT_TABLE_Field: return mdt_member_owner(owner, img, token);
    case MDT_TABLE_Param:
        return run_owner(img, MDT_TABLE_MethodDef, MDT_COL_MethodDef_ParamList, MDT_TABLE_Param,
                         rid, owner);
    case MDT_TABLE_Property:
        return map_owner(img, MDT_TABLE_PropertyMap, MDT_COL_PropertyMap_PropertyList,
                         MDT_TABLE_Property, MDT_COL_PropertyMap_Parent, rid, owner);
    case MDT_TABLE_Event:
        return map_owner(img, MDT_TABLE_EventMap, MDT_COL_EventMap_EventList, MDT_TABLE_Event,
                         MDT_COL_EventMap_Parent, rid, owner);
    default: break;
    }
    for (size_t i = 0; i < sizeof parent_col / sizeof parent_col[0]; i++)
        if (parent_col[i].table == table) {
            if ((e = mdt_row_get(&r, img, table, rid)))
                return e;
            return mdt_row_token(owner, &r, parent_col[i].col);
        }
    return 0;
}
