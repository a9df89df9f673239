/* Printing a type named by token (ECMA-335 II.22.37 TypeDef, II.22.38
 * TypeRef, II.22.39 TypeSpec, II.22.14 ExportedType): namespace and name
 * of each row, nested types joined outermost first (`+`, or `/` in IL)
 * through NestedClass for TypeDefs and resolution scopes for TypeRefs,
 * with a depth cap and cycle detection; TypeSpecs decoded and printed as
 * type trees, those that refer to themselves reported as cycles. In the
 * full style arity suffixes (`` `2 ``) are dropped and a generic type
 * named on its own shows its parameters (doc/names.md). The name cache
 * (mdt_name_cache_new) keeps each TypeDef's and TypeRef's name once
 * built. */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <talloc.h>

#include <mdtools/names.h>
#include <mdtools/nesting.h>
#include <mdtools/sig.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>

#include "generics/bump_int.h"
#include "generics/fmt_int.h"
#include "util/error.h"
#include "util/strbuf.h"

#define MAX_NEST 64          /* enclosing types / TypeRef scopes followed */
#define MAX_SORTED_PARAMS 64 /* parameter lists put in Number order; longer ones in row order */

/* The generic arity a simple name's suffix states (`` `2 ``), or 0 when it
 * has none: a backtick, then 1 to 65535 without leading zeros (the
 * GenericParam Number column is 2 bytes), at the end of the name. *stem is
 * the length of the name without the suffix. */
static uint32_t arity_suffix(const char *name, size_t len, size_t *stem)
{
    const char *tick = NULL;
    uint32_t n = 0;
    *stem = len;
    for (size_t i = len; i-- > 0 && !tick;)
        if (name[i] == '`')
            tick = name + i;
    if (!tick || tick + 1 == name + len || tick[1] == '0')
        return 0;
    for (const char *p = tick + 1; p < name + len; p++) {
        if (*p < '0' || *p > '9' || (n = n * 10 + (uint32_t)(*p - '0')) > 0xFFFF)
            return 0;
    }
    *stem = (size_t)(tick - name);
    return n;
}

/* Reflection's escapes: a `\` before each of `\ , + & * [ ]`. */
static void put_reflection_escaped(struct fmt *f, const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (strchr("\\,+&*[]", s[i]))
            sb_addc(&f->out, '\\');
        sb_addc(&f->out, s[i]);
    }
}

/* A simple name as this style prints it: arity suffix dropped in the full
 * style (and counted in f->arity), reflection's escapes. */
static void put_simple(struct fmt *f, const char *name, size_t len)
{
    if (fmt_plain_generics(f)) {
        size_t stem;
        uint32_t n = arity_suffix(name, len, &stem);
        /* Capped: a list past MAX_NAME_LEN fails anyway. */
        f->arity = n > MAX_NAME_LEN - f->arity ? (uint32_t)MAX_NAME_LEN : f->arity + n;
        sb_add(&f->out, name, stem);
        return;
    }
    if (f->style == MDT_STYLE_REFLECTION) {
        put_reflection_escaped(f, name, len);
        return;
    }
    sb_add(&f->out, name, len);
}

static void put_segment(struct fmt *f, const char *ns, size_t nslen, const char *name, size_t len,
                        bool outermost)
{
    if (f->style == MDT_STYLE_IL) { /* ILAsm identifiers, quoted where needed */
        if (nslen && outermost) {
            fmt_il_id(&f->out, ns, nslen);
            sb_addc(&f->out, '.');
        }
        fmt_il_id(&f->out, name, len);
        return;
    }
    if (nslen && outermost && !(f->flags & MDT_NAME_FRIENDLY)) {
        /* the namespace is part of a reflection name, escaped as the rest:
         * mdt_typedef_by_name and Type.GetType unescape the whole segment */
        if (f->style == MDT_STYLE_REFLECTION)
            put_reflection_escaped(f, ns, nslen);
        else
            sb_add(&f->out, ns, nslen);
        sb_addc(&f->out, '.');
    }
    put_simple(f, name, len);
}

static const char *nest_sep(const struct fmt *f)
{
    return f->style == MDT_STYLE_IL ? "/" : "+";
}

/* The cache slot for a TypeDef or TypeRef of img, or NULL. */
static struct cached *cache_slot(struct fmt *f, const struct mdt_image *img, uint32_t token)
{
    mdt_name_cache *c = f->cache;
    uint32_t rid = token & 0xFFFFFF;
    if (!c || c->img != img)
        return NULL;
    if (token >> 24 == MDT_TABLE_TypeDef)
        return rid && rid <= c->ntd ? &c->td[rid] : NULL;
    return rid && rid <= c->ntr ? &c->tr[rid] : NULL;
}

/* Cached names are packed into chunks of CACHE_CHUNK bytes under the
 * cache, those longer than CACHE_OWN each in a block of its own: a talloc
 * block a name cost its header (~100 bytes) on every name, and a run
 * naming the framework's 25,000 types took 1,800 page faults for them
 * (bench/README.md, issue 28, branch batch7). Freed with the cache; the
 * chunks as the name arena's (bump_int.h). */
#define CACHE_CHUNK 16384
#define CACHE_OWN 1024

static char *cache_keep(mdt_name_cache *c, const char *s, size_t n)
{
    if (n >= CACHE_OWN)
        return talloc_strndup(c, s, n);
    return mdt__bump_keep(c, CACHE_CHUNK, &c->cur, &c->end, s, n);
}

/* Keep what was printed since `start` as the slot's name; its first
 * `bare` bytes are the name without a parameter list. */
static void cache_store(struct fmt *f, struct cached *slot, size_t start, size_t bare)
{
    if (!slot || f->out.failed || f->out.len - start > UINT32_MAX)
        return;
    char *s = cache_keep(f->cache, f->out.buf + start, f->out.len - start);
    if (s) {
        slot->s = s;
        slot->len = (uint32_t)(f->out.len - start);
        slot->bare = (uint32_t)bare;
    }
}

int mdt_name_cache_new(void *mem_ctx, mdt_name_cache **out, const mdt_image *img, int style,
                       unsigned flags)
{
    mdt_name_cache *c = talloc_zero(mem_ctx, mdt_name_cache);
    if (!c)
        return mdt__fail_simple(MDT_ENOMEM, "out of memory");
    c->img = img;
    c->style = style;
    c->flags = flags;
    /* Rows present, not declared: memory bounded by the input. */
    c->ntd = mdt_table_rows_present(img, MDT_TABLE_TypeDef);
    c->ntr = mdt_table_rows_present(img, MDT_TABLE_TypeRef);
    c->td = talloc_zero_array(c, struct cached, (size_t)c->ntd + 1);
    c->tr = talloc_zero_array(c, struct cached, (size_t)c->ntr + 1);
    if (!c->td || !c->tr) {
        talloc_free(c);
        return mdt__fail_simple(MDT_ENOMEM, "out of memory");
    }
    *out = c;
    return 0;
}

/* "<,,>": `arity` parameters without names. */
static void put_arity_params(struct fmt *f, uint32_t arity)
{
    if (!arity)
        return;
    sb_addc(&f->out, '<');
    for (uint32_t i = 1; i < arity && !f->out.failed; i++)
        sb_addc(&f->out, ',');
    sb_addc(&f->out, '>');
}

/* The parameter list of a generic TypeDef named on its own: the names of
 * its GenericParam rows (II.22.20) in Number order, `<TKey,TValue>`; from
 * its arity suffixes (`arity`) when it has no such rows. An unreadable
 * GenericParam table degrades to the arity form, never to an error. Its
 * own walk, not mdt_generic_params (members.h): that one allocates and
 * fails on a row that does not read; this runs per name printed, on the
 * stack, and leaves such a row out. */
static void put_typedef_params(struct fmt *f, const struct mdt_image *img, uint32_t token,
                               uint32_t arity)
{
    uint32_t key, rid, rids[MAX_SORTED_PARAMS], nums[MAX_SORTED_PARAMS];
    unsigned n = 0;
    bool many = false;
    mdt_find fi;
    if (!mdt_table_rows(img, MDT_TABLE_GenericParam) ||
        mdt_coded_encode(&key, MDT_CI_TypeOrMethodDef, token) ||
        mdt_find_init(&fi, img, MDT_TABLE_GenericParam, MDT_COL_GenericParam_Owner, key)) {
        put_arity_params(f, arity);
        return;
    }
    while (mdt_find_next(&rid, &fi) == 0) {
        mdt_row r;
        if (n == MAX_SORTED_PARAMS) {
            many = true;
            break;
        }
        if (mdt_row_get(&r, img, MDT_TABLE_GenericParam, rid))
            continue;
        /* Insertion by Number: a sorted table keeps them so already. */
        uint32_t num = mdt_row_raw(&r, MDT_COL_GenericParam_Number);
        unsigned j = n++;
        for (; j > 0 && nums[j - 1] > num; j--) {
            nums[j] = nums[j - 1];
            rids[j] = rids[j - 1];
        }
        nums[j] = num;
        rids[j] = rid;
    }
    if (!n) {
        put_arity_params(f, arity);
        return;
    }
    if (many) /* a very long list: row order, in a second pass */
        mdt_find_init(&fi, img, MDT_TABLE_GenericParam, MDT_COL_GenericParam_Owner, key);
    sb_addc(&f->out, '<');
    for (unsigned i = 0; !f->out.failed; i++) {
        mdt_row r;
        const char *name;
        size_t len;
        if (many ? mdt_find_next(&rid, &fi) != 0 : i == n)
            break;
        if (i)
            sb_addc(&f->out, ',');
        if (mdt_row_get(&r, img, MDT_TABLE_GenericParam, many ? rid : rids[i]) == 0 &&
            mdt_row_string(&name, &len, &r, MDT_COL_GenericParam_Name) == 0)
            sb_add(&f->out, name, len);
        else
            mdt__err_forget_one(); /* a name that does not read is left out */
    }
    sb_addc(&f->out, '>');
}

static int put_typedef_uncached(struct fmt *f, const struct mdt_image *img, uint32_t token);
static int put_typeref_uncached(struct fmt *f, const struct mdt_image *img, uint32_t token);

/* A TypeDef or TypeRef. `own`: named on its own, not as the generic type
 * of an instantiation, so a generic one shows its parameters in the full
 * style (doc/names.md): `Dictionary<TKey,TValue>`, or `Dictionary<,>` from
 * the arity suffixes of a TypeRef. The cache keeps that form and the
 * length of the name without it. */
static int put_named(struct fmt *f, const struct mdt_image *img, uint32_t token, bool own)
{
    struct cached *slot = cache_slot(f, img, token);
    bool typedef_ = token >> 24 == MDT_TABLE_TypeDef;
    size_t start = f->out.len, bare;
    int e;
    if (slot && slot->s) {
        sb_add(&f->out, slot->s, own ? slot->len : slot->bare);
        return 0;
    }
    f->arity = 0;
    if ((e = typedef_ ? put_typedef_uncached(f, img, token) : put_typeref_uncached(f, img, token)))
        return e;
    bare = f->out.len - start;
    if (!fmt_plain_generics(f)) { /* no parameter list in this style */
        cache_store(f, slot, start, bare);
        return 0;
    }
    if (!own && !slot)
        return 0;
    if (typedef_)
        put_typedef_params(f, img, token, f->arity);
    else
        put_arity_params(f, f->arity);
    cache_store(f, slot, start, bare);
    if (!own)
        sb_cut(&f->out, start + bare);
    return 0;
}

/* Rows chain[n-1] (outermost) .. chain[0] of `table` as nested segments;
 * `rows`, when the walk kept them (a TypeRef's), are not read again. */
static int put_chain(struct fmt *f, const struct mdt_image *img, unsigned table,
                     const uint32_t *chain, const mdt_row *rows, unsigned n, unsigned name_col,
                     unsigned ns_col)
{
    for (unsigned i = n; i-- > 0;) {
        mdt_row r;
        const mdt_row *rp = rows ? &rows[i] : &r;
        const char *name, *ns;
        size_t len, nslen;
        int e;
        if ((!rows && (e = mdt_row_get(&r, img, table, chain[i] & 0xFFFFFF))) ||
            (e = mdt_row_string(&name, &len, rp, name_col)) ||
            (e = mdt_row_string(&ns, &nslen, rp, ns_col)))
            return e;
        put_segment(f, ns, nslen, name, len, i == n - 1);
        if (i)
            sb_adds(&f->out, nest_sep(f));
    }
    return 0;
}

static int put_typedef_uncached(struct fmt *f, const struct mdt_image *img, uint32_t token)
{
    uint32_t chain[MAX_NEST];
    unsigned n = 0;
    int e;
    for (uint32_t t = token; t;) {
        for (unsigned i = 0; i < n; i++)
            if (chain[i] == t)
                return fmt_bad(img, "NestedClass", UINT32_MAX,
                               "nesting cycle: TypeDef %u encloses itself (via TypeDef %u)",
                               t & 0xFFFFFF, chain[n - 1] & 0xFFFFFF);
        if (n == MAX_NEST)
            return fmt_bad(img, "NestedClass", UINT32_MAX,
                           "types nested deeper than %u (TypeDef %u)", MAX_NEST, token & 0xFFFFFF);
        chain[n++] = t;
        if ((e = mdt_typedef_enclosing(&t, img, t)))
            return e;
        if (t >> 24 != MDT_TABLE_TypeDef)
            t = 0;
    }
    if (f->style == MDT_STYLE_IL && f->home && f->home != img)
        fmt_il_typedef_scope(f, img);
    return put_chain(f, img, MDT_TABLE_TypeDef, chain, NULL, n, MDT_COL_TypeDef_TypeName,
                     MDT_COL_TypeDef_TypeNamespace);
}

static int put_typeref_uncached(struct fmt *f, const struct mdt_image *img, uint32_t token)
{
    uint32_t chain[MAX_NEST], scope = 0;
    mdt_row rows[MAX_NEST];
    unsigned n = 0;
    int e;
    for (uint32_t t = token; t >> 24 == MDT_TABLE_TypeRef && (t & 0xFFFFFF);) {
        mdt_row *r = &rows[n];
        for (unsigned i = 0; i < n; i++)
            if (chain[i] == t)
                return fmt_bad(img, "TypeRef", t & 0xFFFFFF,
                               "resolution scope cycle: TypeRef %u is its own scope (via %u)",
                               t & 0xFFFFFF, chain[n - 1] & 0xFFFFFF);
        if (n == MAX_NEST)
            return fmt_bad(img, "TypeRef", token & 0xFFFFFF,
                           "resolution scopes nested deeper than %u (TypeRef %u)", MAX_NEST,
                           token & 0xFFFFFF);
        chain[n++] = t;
        if ((e = mdt_row_get(r, img, MDT_TABLE_TypeRef, t & 0xFFFFFF)) ||
            (e = mdt_row_token(&scope, r, MDT_COL_TypeRef_ResolutionScope)))
            return e;
        t = scope;
    }
    if (f->style == MDT_STYLE_IL && (e = fmt_il_typeref_scope(f, img, scope)))
        return e;
    return put_chain(f, img, MDT_TABLE_TypeRef, chain, rows, n, MDT_COL_TypeRef_TypeName,
                     MDT_COL_TypeRef_TypeNamespace);
}

static int put_typespec(struct fmt *f, const struct mdt_image *img, uint32_t token)
{
    mdt_sig s;
    int e;
    for (unsigned i = 0; i < f->ts_depth; i++)
        if (f->ts_stack[i] == token && f->ts_img[i] == img)
            return fmt_bad(img, "TypeSpec", token & 0xFFFFFF,
                           "TypeSpec %u refers to itself (through TypeSpec %u)", token & 0xFFFFFF,
                           f->ts_stack[f->ts_depth - 1] & 0xFFFFFF);
    if (f->ts_depth == MAX_TYPESPEC)
        return fmt_bad(img, "TypeSpec", token & 0xFFFFFF, "TypeSpecs nested deeper than %u (%u)",
                       MAX_TYPESPEC, token & 0xFFFFFF);
    /* A TypeSpec tree goes on the stack; only a huge one needs the heap. */
    uint64_t arena[256];
    if ((e = fmt_sig_of_token(f, arena, sizeof arena, &s, img, token)))
        return e;
    f->ts_img[f->ts_depth] = img;
    f->ts_stack[f->ts_depth++] = token;
    e = fmt_type(f, s.type);
    f->ts_depth--;
    return e;
}

/* A TypeDefOrRef(OrSpec) token; `kind` CLASS/VALUETYPE selects IL's prefix,
 * 0 prints none; `own` as for put_named. */
int fmt_token(struct fmt *f, const struct mdt_image *img, uint32_t token, int kind, bool own)
{
    if (!f->home)
        f->home = img;
    switch (token >> 24) {
    case MDT_TABLE_TypeDef:
    case MDT_TABLE_TypeRef:
        if (f->style == MDT_STYLE_IL && kind)
            sb_adds(&f->out, kind == MDT_ELEMENT_TYPE_VALUETYPE ? "valuetype " : "class ");
        return put_named(f, img, token, own);
    case MDT_TABLE_TypeSpec: return put_typespec(f, img, token);
    default: return mdt__fail_simple(MDT_EINVAL, "token 0x%08x is not a type", token);
    }
}

/* An ExportedType's name: its Implementation chain through enclosing
 * ExportedType rows gives the nesting (II.22.14), outermost first. */
int fmt_exported(struct fmt *f, const mdt_image *img, uint32_t token)
{
    uint32_t chain[MAX_NEST];
    unsigned n = 0;
    int e;
    for (uint32_t t = token; t;) {
        mdt_row r;
        for (unsigned i = 0; i < n; i++)
            if (chain[i] == t)
                return fmt_bad(
                    img, "ExportedType", t & 0xFFFFFF,
                    "nesting cycle: ExportedType %u encloses itself (via ExportedType %u)",
                    t & 0xFFFFFF, chain[n - 1] & 0xFFFFFF);
        if (n == MAX_NEST)
            return fmt_bad(img, "ExportedType", token & 0xFFFFFF,
                           "types nested deeper than %u (ExportedType %u)", MAX_NEST,
                           token & 0xFFFFFF);
        chain[n++] = t;
        if ((e = mdt_row_get(&r, img, MDT_TABLE_ExportedType, t & 0xFFFFFF)) ||
            (e = mdt_row_token(&t, &r, MDT_COL_ExportedType_Implementation)))
            return e;
        if (t >> 24 != MDT_TABLE_ExportedType || !(t & 0xFFFFFF))
            t = 0;
    }
    f->arity = 0;
    if ((e = put_chain(f, img, MDT_TABLE_ExportedType, chain, NULL, n,
                       MDT_COL_ExportedType_TypeName, MDT_COL_ExportedType_TypeNamespace)))
        return e;
    /* Named on its own, like a TypeRef: the arity suffixes tell the list. */
    if (fmt_plain_generics(f))
        put_arity_params(f, f->arity);
    return 0;
}
