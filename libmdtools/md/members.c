/* The members of a TypeDef, its kind, and which tokens name types or
 * members (<mdtools/members.h>): the walks mdinspect, the attribute and
 * value printers and the MemberRef resolver each wrote for themselves.
 * Members are the TypeDef's Field and MethodDef runs (ECMA-335 II.22.37
 * FieldList, MethodList) and the Property and Event runs of the
 * PropertyMap/EventMap rows whose Parent is the type (II.22.35, II.22.13),
 * a position mapped to a row through the Ptr tables of uncompressed
 * metadata (mdt_range_item) only when one is present. Every loop is
 * bounded by the rows of a table, so damaged runs (overlapping, reaching
 * past the stream) cost at most a pass over them. Also the GenericParam
 * rows of an owner in Number order (II.22.20), which the shell's names,
 * its ILAsm writer and batch's naming each looked up for themselves. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <talloc.h>

#include <mdtools/errors.h>
#include <mdtools/members.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>

#include "md/md_int.h"
#include "util/error.h"

/* Unreadable members after which a run is given up: a damaged run may
 * claim a million rows, and its reader wants a few errors, not each. */
#define RUN_ERRORS 16

static const struct kind {
    uint8_t table, ptr, name_col;
    uint8_t holder, list_col, parent_col; /* holder TypeDef: no map */
} kinds[4] = {
    {MDT_TABLE_Field, MDT_TABLE_FieldPtr, MDT_COL_Field_Name, MDT_TABLE_TypeDef,
     MDT_COL_TypeDef_FieldList, 0},
    {MDT_TABLE_MethodDef, MDT_TABLE_MethodPtr, MDT_COL_MethodDef_Name, MDT_TABLE_TypeDef,
     MDT_COL_TypeDef_MethodList, 0},
    {MDT_TABLE_Property, MDT_TABLE_PropertyPtr, MDT_COL_Property_Name, MDT_TABLE_PropertyMap,
     MDT_COL_PropertyMap_PropertyList, MDT_COL_PropertyMap_Parent},
    {MDT_TABLE_Event, MDT_TABLE_EventPtr, MDT_COL_Event_Name, MDT_TABLE_EventMap,
     MDT_COL_EventMap_EventList, MDT_COL_EventMap_Parent},
};

int mdt_members_init(mdt_members *it, const mdt_image *img, uint32_t typedef_token,
                     unsigned kinds_wanted)
{
    mdt_row r;
    int e;
    if (!it || !img || it->version != MDT_MEMBERS_VERSION)
        return mdt__fail_simple(MDT_EINVAL, "mdt_members_init: no image, or an iterator not "
                                            "set to MDT_MEMBERS_INIT");
    if (MDT_TOKEN_TABLE(typedef_token) != MDT_TABLE_TypeDef || !(kinds_wanted & MDT_MEMBERS_ALL))
        return mdt__fail_simple(MDT_EINVAL,
                                "mdt_members_init: 0x%08x is not a TypeDef token, "
                                "or no kind of member asked for",
                                typedef_token);
    if ((e = mdt_row_get(&r, img, MDT_TABLE_TypeDef, MDT_TOKEN_RID(typedef_token))))
        return e;
    memset(&it->img, 0, sizeof *it - offsetof(mdt_members, img));
    it->img = img;
    it->type = typedef_token;
    it->kinds = (uint8_t)(kinds_wanted & MDT_MEMBERS_ALL);
    return 0;
}

/* Begin the run of list column `col` in `holder`'s row rid. */
static int start_run(mdt_members *it, const struct kind *k, unsigned holder, uint32_t rid)
{
    mdt_row r;
    uint32_t first, count;
    int e;
    it->pos = it->end = it->errors = 0;
    if ((e = mdt_row_get(&r, it->img, holder, rid)) ||
        (e = mdt_row_range(&first, &count, &r, k->list_col)))
        return e;
    it->pos = first;
    it->end = first + count;
    return 0;
}

/* The next run of the current kind into [pos, end): 0, MDT_ITEROVER when
 * the kind has no more, or the error of a run that cannot be read. */
static int next_run(mdt_members *it, const struct kind *k)
{
    uint32_t rid;
    if (k->holder == MDT_TABLE_TypeDef) {
        if (it->open)
            return MDT_ITEROVER; /* a TypeDef has one run of each */
        it->open = 1;
        return start_run(it, k, MDT_TABLE_TypeDef, MDT_TOKEN_RID(it->type));
    }
    if (!it->open) {
        it->open = 1;
        /* A scan when the map is unsorted: its rows bound it. */
        if (!mdt_table_rows(it->img, k->holder) ||
            mdt_find_init(&it->map, it->img, k->holder, k->parent_col, MDT_TOKEN_RID(it->type)))
            return MDT_ITEROVER;
    }
    if (mdt_find_next(&rid, &it->map))
        return MDT_ITEROVER;
    return start_run(it, k, k->holder, rid);
}

int mdt_members_next(uint32_t *member, const char **name, mdt_members *it)
{
    int e;
    *member = 0;
    if (name)
        *name = NULL;
    if (!it || it->version != MDT_MEMBERS_VERSION || !it->img)
        return mdt__fail_simple(MDT_EINVAL, "mdt_members_next: an iterator not started");
    while (it->step < 4) {
        const struct kind *k = &kinds[it->step];
        if (!(it->kinds & (1u << it->step))) {
            it->step++;
            continue;
        }
        if (!it->open) {
            it->given = 0;
            it->cap = mdt_table_rows(it->img, k->table);
            it->direct = !mdt_table_rows(it->img, k->ptr);
        }
        if (it->pos < it->end && it->given < it->cap) {
            uint32_t rid = it->pos++;
            mdt_row r;
            if ((it->direct || !(e = mdt_range_item(&rid, it->img, k->table, rid))) &&
                !(e = mdt_row_get(&r, it->img, k->table, rid)) &&
                (!name || !(e = mdt_row_string(name, NULL, &r, k->name_col)))) {
                it->given++;
                *member = MDT_TOKEN(k->table, rid);
                return 0;
            }
            if (++it->errors > RUN_ERRORS)
                it->pos = it->end;
            return e;
        }
        e = it->given < it->cap ? next_run(it, k) : MDT_ITEROVER;
        if (e == MDT_ITEROVER) {
            it->step++;
            it->open = 0;
            it->pos = it->end = 0;
            continue;
        }
        if (e)
            return e;
    }
    return MDT_ITEROVER;
}

/* The members of the current run named `want`, where the run's positions
 * are rows (no Ptr table): names compared in place, row after row, with no
 * call a member. Stops at the first match (0), at the end of the rows it
 * can read the quick way (1: the caller goes on with mdt_members_next). */
static int scan_named(uint32_t *member, const char *want, mdt_members *it)
{
    const struct kind *k = &kinds[it->step];
    const struct mdt_md *md = mdt__md(it->img);
    const mdt_table_layout *t = &md->lay.tables[k->table];
    uint32_t lim = it->end, fast = md->lay.strings_fast;
    if (lim - it->pos > it->cap - it->given)
        lim = it->pos + (it->cap - it->given);
    if (lim > t->avail + 1)
        lim = t->avail + 1; /* rows past the stream: the slow path's error */
    while (it->pos < lim) {
        const uint8_t *row = t->base + (size_t)(it->pos - 1) * t->row_size;
        uint32_t idx = table_raw(t, row, k->name_col);
        if (idx >= fast)
            return 1; /* not readable the quick way: let next say why */
        it->given++;
        if (strcmp((const char *)md->lay.strings + idx, want) == 0) {
            *member = MDT_TOKEN(k->table, it->pos++);
            return 0;
        }
        it->pos++;
    }
    return 1;
}

int mdt_members_next_named(uint32_t *member, const char *want, mdt_members *it)
{
    const char *name;
    int e;
    *member = 0;
    if (!want || !it || it->version != MDT_MEMBERS_VERSION || !it->img)
        return mdt__fail_simple(MDT_EINVAL, "mdt_members_next_named: no name, or an iterator "
                                            "not started");
    for (;;) {
        if (it->step < 4 && it->direct && it->pos && it->pos < it->end &&
            scan_named(member, want, it) == 0)
            return 0;
        if ((e = mdt_members_next(member, &name, it)) != 0 || strcmp(name, want) == 0)
            return e;
    }
}

/* Namespace and name of a TypeDef or TypeRef. */
static int ns_name(const mdt_image *img, uint32_t tok, const char **ns, const char **name)
{
    unsigned t = MDT_TOKEN_TABLE(tok);
    bool def = t == MDT_TABLE_TypeDef;
    mdt_row r;
    int e;
    if ((e = mdt_row_get(&r, img, t, MDT_TOKEN_RID(tok))) ||
        (e = mdt_row_string(name, NULL, &r,
                            def ? MDT_COL_TypeDef_TypeName : MDT_COL_TypeRef_TypeName)))
        return e;
    return mdt_row_string(ns, NULL, &r,
                          def ? MDT_COL_TypeDef_TypeNamespace : MDT_COL_TypeRef_TypeNamespace);
}

int mdt_typedef_kind(mdt_type_kind *kind, const mdt_image *img, uint32_t typedef_token)
{
    mdt_row r;
    uint32_t base;
    const char *ns, *name;
    int e;
    if (!kind || !img || MDT_TOKEN_TABLE(typedef_token) != MDT_TABLE_TypeDef) {
        if (kind)
            *kind = MDT_KIND_CLASS;
        return mdt__fail_simple(MDT_EINVAL,
                                "mdt_typedef_kind: no image, or 0x%08x is not a "
                                "TypeDef token",
                                typedef_token);
    }
    *kind = MDT_KIND_CLASS;
    if ((e = mdt_row_get(&r, img, MDT_TABLE_TypeDef, MDT_TOKEN_RID(typedef_token))))
        return e;
    if (mdt_row_raw(&r, MDT_COL_TypeDef_Flags) & 0x20) { /* tdInterface */
        *kind = MDT_KIND_INTERFACE;
        return 0;
    }
    /* Extends is a TypeDefOrRef coded index (II.24.2.6): tag 0 TypeDef,
     * 1 TypeRef, 2 TypeSpec in the low two bits. Decoded here, not by
     * mdt_row_token: this runs once for every type a listing shows, and
     * ns_name's row read checks the rid. */
    base = mdt_row_raw(&r, MDT_COL_TypeDef_Extends);
    if (!(base >> 2) || (base & 3) > 1)
        return 0; /* no base (System.Object, an interface), or a generic one */
    base = MDT_TOKEN((base & 3) ? MDT_TABLE_TypeRef : MDT_TABLE_TypeDef, base >> 2);
    if ((e = ns_name(img, base, &ns, &name)))
        return e;
    if (strcmp(ns, "System") != 0)
        return 0;
    if (strcmp(name, "Enum") == 0) {
        *kind = MDT_KIND_ENUM;
    } else if (strcmp(name, "ValueType") == 0) {
        /* System.Enum extends System.ValueType and is a class; a name that
         * does not read makes a struct (its one error forgotten). */
        const char *sns, *sname;
        if (mdt_row_string(&sname, NULL, &r, MDT_COL_TypeDef_TypeName) ||
            mdt_row_string(&sns, NULL, &r, MDT_COL_TypeDef_TypeNamespace)) {
            mdt__err_forget_one();
            *kind = MDT_KIND_STRUCT;
        } else if (strcmp(sname, "Enum") != 0 || strcmp(sns, "System") != 0) {
            *kind = MDT_KIND_STRUCT;
        }
    } else if (strcmp(name, "MulticastDelegate") == 0) {
        *kind = MDT_KIND_DELEGATE;
    }
    return 0;
}

const char *mdt_type_kind_name(mdt_type_kind kind)
{
    static const char *const words[] = {"class", "interface", "struct", "enum", "delegate"};
    return (unsigned)kind < sizeof words / sizeof words[0] ? words[kind] : "class";
}

bool mdt_token_is_type_or_member(uint32_t token)
{
    switch (MDT_TOKEN_TABLE(token)) {
    case MDT_TABLE_TypeDef:
    case MDT_TABLE_TypeRef:
    case MDT_TABLE_TypeSpec:
    case MDT_TABLE_ExportedType:
    case MDT_TABLE_MethodDef:
    case MDT_TABLE_Field:
    case MDT_TABLE_MemberRef:
    case MDT_TABLE_MethodSpec:
    case MDT_TABLE_Property:
    case MDT_TABLE_Event: return true;
    default: return false;
    }
}

/* Number order, then row order: the order a declaration lists them in. */
struct gparam {
    uint32_t number, rid;
};

static int by_number(const void *a, const void *b)
{
    const struct gparam *x = a, *y = b;
    if (x->number != y->number)
        return x->number < y->number ? -1 : 1;
    return x->rid < y->rid ? -1 : x->rid > y->rid;
}

/* Number is 2 bytes: more parameters than that is a damaged table. */
#define MAX_GPARAMS 0x10000u

int mdt_generic_params(void *mem_ctx, uint32_t **rids, size_t *n, const mdt_image *img,
                       uint32_t owner)
{
    struct gparam *v = NULL;
    uint32_t key, rid, *out;
    size_t count = 0, cap = 0;
    bool sorted = true;
    mdt_find f;
    int e;

    if (rids)
        *rids = NULL;
    if (!n || !img)
        return mdt__fail_simple(MDT_EINVAL, "mdt_generic_params: no image or no output");
    *n = 0;
    if (MDT_TOKEN_TABLE(owner) != MDT_TABLE_TypeDef &&
        MDT_TOKEN_TABLE(owner) != MDT_TABLE_MethodDef)
        return mdt__fail_simple(MDT_EINVAL, "token 0x%08x: not a TypeDef or MethodDef", owner);
    if (!mdt_table_rows(img, MDT_TABLE_GenericParam))
        return 0;
    if ((e = mdt_coded_encode(&key, MDT_CI_TypeOrMethodDef, owner)) != 0)
        return mdt__fail_simple(e, "token 0x%08x: not a TypeOrMethodDef", owner);
    if ((e = mdt_find_init(&f, img, MDT_TABLE_GenericParam, MDT_COL_GenericParam_Owner, key)))
        return e;
    /* Number and row of each, under a temporary context, then the row
     * numbers alone under mem_ctx. The search ends with MDT_ITEROVER, its
     * only failure, which it does not record. */
    while (mdt_find_next(&rid, &f) == 0) {
        mdt_row r;
        if (count == MAX_GPARAMS) {
            e = mdt__fail_simple(MDT_EBADIMAGE, "token 0x%08x: more than %u generic parameters",
                                 owner, MAX_GPARAMS);
            goto done;
        }
        if (!rids) {
            count++;
            continue;
        }
        if ((e = mdt_row_get(&r, img, MDT_TABLE_GenericParam, rid)))
            goto done;
        if (count == cap) {
            struct gparam *nv;
            cap = cap ? 2 * cap : 8;
            if (!(nv = talloc_realloc(NULL, v, struct gparam, cap))) {
                e = mdt__fail_simple(MDT_ENOMEM, "out of memory listing generic parameters");
                goto done;
            }
            v = nv;
        }
        v[count].number = mdt_row_raw(&r, MDT_COL_GenericParam_Number);
        v[count].rid = rid;
        if (count && by_number(&v[count - 1], &v[count]) > 0)
            sorted = false;
        count++;
    }
    if (rids && count) {
        if (!sorted)
            qsort(v, count, sizeof v[0], by_number);
        if (!(out = talloc_array(mem_ctx, uint32_t, count))) {
            e = mdt__fail_simple(MDT_ENOMEM, "out of memory listing generic parameters");
            goto done;
        }
        for (size_t i = 0; i < count; i++)
            out[i] = v[i].rid;
        *rids = out;
    }
    *n = count;
done:
    talloc_free(v);
    return e;
}
