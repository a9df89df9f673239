/* Per-image name indexes for resolution: top-level TypeDefs by namespace and
 * name (ECMA-335 II.22.37), nested TypeDefs by enclosing TypeDef and name
 * (II.22.32 NestedClass), top-level ExportedType rows by namespace and name
 * (II.22.14; rows whose Implementation is another ExportedType are nested
 * and deliberately absent: they are only reached through their enclosing
 * row). Built on first use by whichever thread needs it, with malloc, and
 * published with a compare-and-swap; a losing builder frees its copy. Rows
 * that cannot be read are left out (the resolver then answers as if the
 * type were absent; the rows themselves report bad-image when read). The
 * first of two rows with the same key wins. */
#include "config.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <mdtools/tables.h>
#include <mdtools/token.h>

#include "typeref/tr_int.h"

/* A string hashed eight bytes at a time (multiply-xorshift mixing). */
static uint64_t hash_str(uint64_t h, const char *s)
{
    size_t n = strlen(s);
    const uint64_t k = 0x9E3779B97F4A7C15ULL;
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, s, 8);
        h = (h ^ w) * k;
        h ^= h >> 29;
        s += 8;
        n -= 8;
    }
    if (n) {
        uint64_t w = 0;
        memcpy(&w, s, n);
        h = (h ^ w ^ (uint64_t)n << 56) * k;
        h ^= h >> 29;
    }
    return (h ^ 0xFF) * k; /* end marker: ("a.b", "c") and ("a", "b.c") differ */
}

uint32_t tr_hash(uint32_t key2, const char *ns, const char *name)
{
    uint64_t h = hash_str(hash_str(0x243F6A8885A308D3ULL ^ key2, ns), name);
    h ^= h >> 32;
    return (uint32_t)h;
}

static int htab_init(struct tr_htab *t, uint32_t count, unsigned table)
{
    t->table = (uint8_t)table;
    uint32_t cap = 4;
    while (cap < 2 * count && cap < (1u << 30))
        cap <<= 1;
    t->e = calloc(cap, sizeof *t->e);
    if (!t->e)
        return -1;
    t->mask = cap - 1;
    return 0;
}

/* Do the names of row rid of t's table equal (ns, name)? */
static bool names_eq(const struct mdt_image *img, unsigned table, uint32_t rid, const char *ns,
                     const char *name)
{
    mdt_row r;
    const char *n, *s;
    unsigned cn = table == MDT_TABLE_TypeDef ? MDT_COL_TypeDef_TypeName
                                             : MDT_COL_ExportedType_TypeName;
    unsigned cs = table == MDT_TABLE_TypeDef ? MDT_COL_TypeDef_TypeNamespace
                                             : MDT_COL_ExportedType_TypeNamespace;
    return !mdt_row_get(&r, img, table, rid) && !mdt_row_string(&r, cn, &n, NULL) &&
           !mdt_row_string(&r, cs, &s, NULL) && !strcmp(n, name) && !strcmp(s, ns);
}

static uint32_t htab_find(const struct mdt_image *img, const struct tr_htab *t, uint32_t key2,
                          const char *ns, const char *name)
{
    if (!t->e)
        return 0;
    uint32_t h = tr_hash(key2, ns, name);
    for (uint32_t i = h & t->mask, n = 0; n <= t->mask; i = (i + 1) & t->mask, n++) {
        const struct tr_hent *e = &t->e[i];
        if (!e->rid)
            return 0;
        if (e->hash == h && e->key2 == key2 && names_eq(img, t->table, e->rid, ns, name))
            return e->rid;
    }
    return 0;
}

static void htab_put(const struct mdt_image *img, struct tr_htab *t, uint32_t key2,
                     const char *ns, const char *name, uint32_t rid)
{
    uint32_t h = tr_hash(key2, ns, name);
    for (uint32_t i = h & t->mask, n = 0; n <= t->mask; i = (i + 1) & t->mask, n++) {
        struct tr_hent *e = &t->e[i];
        if (!e->rid) {
            *e = (struct tr_hent){h, rid, key2};
            return;
        }
        if (e->hash == h && e->key2 == key2 && names_eq(img, t->table, e->rid, ns, name))
            return; /* first wins */
    }
}

void tr_index_free(struct tr_index *x)
{
    if (!x)
        return;
    free(x->td.e);
    free(x->nest.e);
    free(x->et.e);
    free(x);
}

uint32_t tr_rows(const struct mdt_image *img, unsigned table)
{
    uint32_t lo = 0, hi = img ? mdt_table_rows(img, table) : 0;
    mdt_row r;
    if (!hi || mdt_row_get(&r, img, table, hi) == 0)
        return hi;
    /* Rows past the stream end fail from some rid on: find the last good one. */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo + 1) / 2;
        if (mdt_row_get(&r, img, table, mid) == 0)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

static struct tr_index *build(const struct mdt_image *img)
{
    uint32_t ntd = tr_rows(img, MDT_TABLE_TypeDef);
    uint32_t nnc = tr_rows(img, MDT_TABLE_NestedClass);
    uint32_t net = tr_rows(img, MDT_TABLE_ExportedType);
    struct tr_index *x = calloc(1, sizeof *x);
    uint32_t *enc = calloc((size_t)ntd + 1, sizeof *enc);
    uint32_t nnested = 0;
    if (!x || !enc)
        goto fail;
    for (uint32_t i = 1; i <= nnc; i++) {
        mdt_row r;
        uint32_t nested, outer;
        if (mdt_row_get(&r, img, MDT_TABLE_NestedClass, i) ||
            mdt_row_token(&r, MDT_COL_NestedClass_NestedClass, &nested) ||
            mdt_row_token(&r, MDT_COL_NestedClass_EnclosingClass, &outer))
            continue;
        nested = MDT_TOKEN_RID(nested);
        outer = MDT_TOKEN_RID(outer);
        if (nested && nested <= ntd && outer && !enc[nested]) {
            enc[nested] = outer;
            nnested++;
        }
    }
    x->img = img;
    if (htab_init(&x->td, ntd - nnested, MDT_TABLE_TypeDef) ||
        htab_init(&x->nest, nnested, MDT_TABLE_TypeDef) ||
        htab_init(&x->et, net, MDT_TABLE_ExportedType))
        goto fail;
    for (uint32_t i = 1; i <= ntd; i++) {
        mdt_row r;
        const char *ns, *name;
        if (mdt_row_get(&r, img, MDT_TABLE_TypeDef, i) ||
            mdt_row_string(&r, MDT_COL_TypeDef_TypeName, &name, NULL) ||
            mdt_row_string(&r, MDT_COL_TypeDef_TypeNamespace, &ns, NULL))
            continue;
        if (enc[i])
            htab_put(img, &x->nest, enc[i], ns, name, i);
        else
            htab_put(img, &x->td, 0, ns, name, i);
    }
    for (uint32_t i = 1; i <= net; i++) {
        mdt_row r;
        const char *ns, *name;
        uint32_t impl;
        if (mdt_row_get(&r, img, MDT_TABLE_ExportedType, i) ||
            mdt_row_token(&r, MDT_COL_ExportedType_Implementation, &impl) ||
            mdt_row_string(&r, MDT_COL_ExportedType_TypeName, &name, NULL) ||
            mdt_row_string(&r, MDT_COL_ExportedType_TypeNamespace, &ns, NULL))
            continue;
        if (MDT_TOKEN_TABLE(impl) == MDT_TABLE_ExportedType && MDT_TOKEN_RID(impl))
            continue; /* nested: reached only through its enclosing row */
        htab_put(img, &x->et, 0, ns, name, i);
    }
    free(enc);
    return x;
fail:
    free(enc);
    tr_index_free(x);
    return NULL;
}

const struct tr_index *tr_index_get(struct tr_mod *m)
{
    struct tr_index *x = atomic_load_explicit(&m->idx, memory_order_acquire);
    if (x || !m->img)
        return x;
    struct tr_index *mine = build(m->img), *expected = NULL;
    if (!mine)
        return NULL;
    if (atomic_compare_exchange_strong_explicit(&m->idx, &expected, mine, memory_order_acq_rel,
                                                memory_order_acquire))
        return mine;
    tr_index_free(mine);
    return expected;
}

uint32_t tr_find_typedef(const struct tr_index *x, const char *ns, const char *name)
{
    return x ? htab_find(x->img, &x->td, 0, ns, name) : 0;
}

uint32_t tr_find_nested(const struct tr_index *x, uint32_t enclosing, const char *ns,
                        const char *name)
{
    return x ? htab_find(x->img, &x->nest, enclosing, ns, name) : 0;
}

uint32_t tr_find_exported(const struct tr_index *x, const char *ns, const char *name)
{
    return x ? htab_find(x->img, &x->et, 0, ns, name) : 0;
}
