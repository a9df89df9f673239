/* Per-image name indexes for resolution: top-level TypeDefs by namespace and
 * name (ECMA-335 II.22.37), nested TypeDefs by enclosing TypeDef and name
 * (II.22.32 NestedClass), top-level ExportedType rows by namespace and name
 * (II.22.14; rows whose Implementation is another ExportedType are nested
 * and deliberately absent: they are only reached through their enclosing
 * row), and a namespace filter (every namespace a TypeDef or ExportedType
 * row names) that lets a scan over all loaded assemblies skip those that
 * cannot have the type without building their indexes.
 *
 * Each of the four is built separately, the first time a lookup needs it
 * (most assemblies are only ever asked for top-level types; most are never
 * scanned), by whichever thread needs it, with malloc, and published with
 * a compare-and-swap on its own pointer in the module record: a reader that
 * loses the race frees its copy and uses the winner's, so readers never
 * wait on a lock and a published table is never written again. (Not built
 * under the set's mutex: a writer holds it while it builds a snapshot, and
 * a resolver called from a profiler callback must not wait for that; a lost
 * race only costs a duplicate build.) Rows that cannot be read are left out
 * (the resolver then answers as if the type were absent; the rows
 * themselves report bad-image when read). The first of two rows with the
 * same key wins.
 *
 * Cells are read through the image's validated layout (row = base + (rid -
 * 1) * size, heap index < heap size, heap NUL-terminated) and fall back to
 * the checked public readers for anything else, so a damaged image gets
 * exactly the checked answers. Names are hashed in one pass that finds the
 * terminating NUL eight bytes at a time (no separate strlen): FxHash's word
 * step (rustc's hasher for identifiers) finalized with MurmurHash3's fmix64;
 * a word read never crosses the end of the #Strings heap. */
#include "config.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <mdtools/tables.h>
#include <mdtools/token.h>

#include "md/md_int.h"
#include "typeref/index_int.h"
#include "typeref/modset_int.h"
#include "util/hash.h"
#include "util/reader.h"

/* ---- hashing ------------------------------------------------------------- */

#define FX_K 0x517cc1b727220a95ULL
#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL

static inline uint64_t fx(uint64_t h, uint64_t w)
{
    return ((h << 5 | h >> 59) ^ w) * FX_K;
}

static inline uint32_t fmix(uint64_t h)
{
    return (uint32_t)mdt__mix64(h);
}

/* Continue hash h over the bytes of s (little-endian words, the last one
 * zero-padded) and its length. `end` bounds where whole words may be read
 * (the end of the #Strings heap, which is NUL-terminated), or NULL for a
 * plain C string. Both ways give the same value. */
static inline __attribute__((always_inline)) uint64_t hash_str(uint64_t h, const char *s,
                                                               const char *end)
{
    const char *p = s;
    size_t n;
    if (end) {
        while (end - p >= 8) {
            uint64_t w = le64((const uint8_t *)p);
            uint64_t z = (w - ONES) & ~w & HIGHS; /* lowest flag: the first NUL */
            if (z) {
                unsigned nb = (unsigned)__builtin_ctzll(z) >> 3;
                if (nb)
                    h = fx(h, w & ((1ULL << (8 * nb)) - 1));
                return fx(h, (size_t)(p - s) + nb);
            }
            h = fx(h, w);
            p += 8;
        }
    }
    n = strlen(p); /* the tail, or the whole of a plain string */
    while (n >= 8) {
        h = fx(h, le64((const uint8_t *)p));
        p += 8;
        n -= 8;
    }
    if (n) {
        uint64_t w = 0;
        for (size_t i = 0; i < n; i++)
            w |= (uint64_t)(uint8_t)p[i] << (8 * i);
        h = fx(h, w);
    }
    return fx(h, (size_t)(p - s) + n);
}

/* Where whole words of s may be read: the end of img's #Strings heap when s
 * lies in it, else NULL. */
static const char *heap_end(const struct mdt_image *img, const char *s)
{
    const struct mdt_heap_view *h;
    uintptr_t a = (uintptr_t)s, base;
    if (!img)
        return NULL;
    h = &mdt__md(img)->strings;
    base = (uintptr_t)h->base;
    if (!h->nul_terminated || a < base || a - base >= h->size)
        return NULL;
    return (const char *)h->base + h->size;
}

#define SEED 0x243F6A8885A308D3ULL

void tr_key_init(struct tr_key *k, const struct mdt_image *img, const char *ns, const char *name)
{
    uint64_t nsst = hash_str(SEED, ns, heap_end(img, ns));
    k->ns = ns;
    k->name = name;
    k->nshash = fmix(nsst) | 1;
    k->state = hash_str(nsst, name, heap_end(img, name));
    k->hash = fmix(k->state);
}

static inline uint32_t nested_hash(uint64_t state, uint32_t enclosing)
{
    return fmix(fx(state, enclosing));
}

/* ---- cells --------------------------------------------------------------- */

/* The checked way (cold): NULL when the cell cannot be read. */
__attribute__((noinline)) static const char *
cell_str_checked(const struct mdt_image *img, unsigned table, uint32_t rid, unsigned col)
{
    mdt_row r;
    const char *s;
    if (mdt_row_get(&r, img, table, rid) || mdt_row_string(&s, NULL, &r, col))
        return NULL;
    return s;
}

/* String cell `col` of row rid of `table` (p: the row, or NULL when the row
 * is not in the validated part of the table): the heap directly when the
 * index is plainly inside it (*idx: that index), the checked reader
 * otherwise (*idx: UINT32_MAX). NULL when the cell cannot be read. */
static inline const char *cell_str(const struct mdt_image *img, unsigned table, uint32_t rid,
                                   const uint8_t *p, unsigned col, uint32_t *idx)
{
    if (p) {
        const struct mdt_md *md = mdt__md(img);
        uint32_t i = table_raw(&md->lay.tables[table], p, col);
        if (i < md->strings.size && md->strings.nul_terminated) {
            *idx = i;
            return (const char *)md->strings.base + i;
        }
    }
    *idx = UINT32_MAX;
    return cell_str_checked(img, table, rid, col);
}

static inline const uint8_t *row_ptr(const struct mdt_image *img, unsigned table, uint32_t rid)
{
    const mdt_table_layout *t = &mdt__md(img)->lay.tables[table];
    return rid - 1u < t->avail ? t->base + (size_t)(rid - 1) * t->row_size : NULL;
}

/* A TypeDef cell of NestedClass row i as a rid: the raw value when it is
 * plainly a TypeDef row, the checked reader otherwise; -1: unreadable. */
static int64_t nested_cell(const struct mdt_image *img, uint32_t i, const uint8_t *p, unsigned col)
{
    mdt_row r;
    uint32_t tok;
    if (p) {
        uint32_t v = table_raw(&mdt__md(img)->lay.tables[MDT_TABLE_NestedClass], p, col);
        if (v <= mdt__md(img)->lay.tables[MDT_TABLE_TypeDef].rows)
            return v;
    }
    if (mdt_row_get(&r, img, MDT_TABLE_NestedClass, i) || mdt_row_token(&tok, &r, col))
        return -1;
    return MDT_TOKEN_RID(tok);
}

/* Do the names of row rid of `table` equal (ns, name)? */
static bool names_eq(const struct mdt_image *img, unsigned table, uint32_t rid, const char *ns,
                     const char *name)
{
    const uint8_t *p = row_ptr(img, table, rid);
    uint32_t idx;
    unsigned cn =
        table == MDT_TABLE_TypeDef ? MDT_COL_TypeDef_TypeName : MDT_COL_ExportedType_TypeName;
    unsigned cs = table == MDT_TABLE_TypeDef ? MDT_COL_TypeDef_TypeNamespace
                                             : MDT_COL_ExportedType_TypeNamespace;
    const char *n = cell_str(img, table, rid, p, cn, &idx), *s;
    if (!n || strcmp(n, name))
        return false;
    s = cell_str(img, table, rid, p, cs, &idx);
    return s && !strcmp(s, ns);
}

/* ---- tables -------------------------------------------------------------- */

static struct tr_htab *htab_new(uint32_t count, unsigned table)
{
    uint32_t cap = 4;
    while (cap < 2 * (uint64_t)count && cap < (1u << 30))
        cap <<= 1;
    struct tr_htab *t = calloc(1, sizeof *t + (size_t)cap * sizeof t->e[0]);
    if (!t)
        return NULL;
    t->mask = cap - 1;
    t->table = (uint8_t)table;
    return t;
}

static uint32_t htab_find(const struct mdt_image *img, const struct tr_htab *t, uint32_t h,
                          uint32_t key2, const char *ns, const char *name)
{
    for (uint32_t i = h & t->mask, n = 0; n <= t->mask; i = (i + 1) & t->mask, n++) {
        const struct tr_hent *e = &t->e[i];
        if (!e->rid)
            return 0;
        if (e->hash == h && e->key2 == key2 && names_eq(img, t->table, e->rid, ns, name))
            return e->rid;
    }
    return 0;
}

static void htab_put(const struct mdt_image *img, struct tr_htab *t, uint32_t h, uint32_t key2,
                     const char *ns, const char *name, uint32_t rid)
{
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

uint32_t tr_rows(const struct mdt_image *img, unsigned table)
{
    return img ? mdt_table_rows_present(img, table) : 0;
}

/* enc[i]: the TypeDef enclosing TypeDef i as the first NestedClass row that
 * names i says, 0 for top-level types (calloc'ed, ntd + 1 entries). */
static uint32_t *enclosing_map(const struct mdt_image *img, uint32_t ntd, uint32_t *nnested)
{
    uint32_t nnc = tr_rows(img, MDT_TABLE_NestedClass);
    uint32_t *enc = calloc((size_t)ntd + 1, sizeof *enc);
    *nnested = 0;
    if (!enc)
        return NULL;
    for (uint32_t i = 1; i <= nnc; i++) {
        const uint8_t *p = row_ptr(img, MDT_TABLE_NestedClass, i);
        int64_t nested = nested_cell(img, i, p, MDT_COL_NestedClass_NestedClass), outer;
        if (nested < 0 || (outer = nested_cell(img, i, p, MDT_COL_NestedClass_EnclosingClass)) < 0)
            continue;
        if (nested && nested <= ntd && outer && !enc[nested]) {
            enc[nested] = (uint32_t)outer;
            (*nnested)++;
        }
    }
    return enc;
}

/* Hash state of a namespace, remembered for the last #Strings index seen:
 * rows of one namespace are usually next to each other. */
struct nscache {
    uint32_t idx;
    uint64_t state;
};

/* Hash state after (ns, name) of TypeDef / ExportedType row rid (p: the
 * row or NULL). False when a name cannot be read. */
static bool row_state(const struct mdt_image *img, unsigned table, uint32_t rid, const uint8_t *p,
                      struct nscache *nc, const char **ns, const char **name, uint64_t *state)
{
    unsigned cn =
        table == MDT_TABLE_TypeDef ? MDT_COL_TypeDef_TypeName : MDT_COL_ExportedType_TypeName;
    unsigned cs = table == MDT_TABLE_TypeDef ? MDT_COL_TypeDef_TypeNamespace
                                             : MDT_COL_ExportedType_TypeNamespace;
    uint32_t nsidx, idx;
    uint64_t nsst;
    if (!(*name = cell_str(img, table, rid, p, cn, &idx)) ||
        !(*ns = cell_str(img, table, rid, p, cs, &nsidx)))
        return false;
    if (nsidx != UINT32_MAX && nsidx == nc->idx) {
        nsst = nc->state;
    } else {
        nsst = hash_str(SEED, *ns, heap_end(img, *ns));
        if (nsidx != UINT32_MAX) {
            nc->idx = nsidx;
            nc->state = nsst;
        }
    }
    *state = hash_str(nsst, *name, heap_end(img, *name));
    return true;
}

static struct tr_htab *build_typedefs(const struct mdt_image *img, bool nested)
{
    uint32_t ntd = tr_rows(img, MDT_TABLE_TypeDef), nnested;
    uint32_t *enc = enclosing_map(img, ntd, &nnested);
    struct tr_htab *t = enc ? htab_new(nested ? nnested : ntd - nnested, MDT_TABLE_TypeDef) : NULL;
    struct nscache nc = {UINT32_MAX, 0};
    if (!t) {
        free(enc);
        return NULL;
    }
    for (uint32_t i = 1; i <= ntd; i++) {
        const char *ns, *name;
        uint64_t st;
        if ((enc[i] != 0) != nested ||
            !row_state(img, MDT_TABLE_TypeDef, i, row_ptr(img, MDT_TABLE_TypeDef, i), &nc, &ns,
                       &name, &st))
            continue;
        if (nested)
            htab_put(img, t, nested_hash(st, enc[i]), enc[i], ns, name, i);
        else
            htab_put(img, t, fmix(st), 0, ns, name, i);
    }
    free(enc);
    return t;
}

static struct tr_htab *build_exported(const struct mdt_image *img)
{
    uint32_t net = tr_rows(img, MDT_TABLE_ExportedType);
    struct tr_htab *t = htab_new(net, MDT_TABLE_ExportedType);
    struct nscache nc = {UINT32_MAX, 0};
    if (!t)
        return NULL;
    for (uint32_t i = 1; i <= net; i++) {
        mdt_row r;
        const char *ns, *name;
        uint32_t impl;
        uint64_t st;
        if (mdt_row_get(&r, img, MDT_TABLE_ExportedType, i) ||
            mdt_row_token(&impl, &r, MDT_COL_ExportedType_Implementation) ||
            !row_state(img, MDT_TABLE_ExportedType, i, r.p, &nc, &ns, &name, &st))
            continue;
        if (MDT_TOKEN_TABLE(impl) == MDT_TABLE_ExportedType && MDT_TOKEN_RID(impl))
            continue; /* nested: reached only through its enclosing row */
        htab_put(img, t, fmix(st), 0, ns, name, i);
    }
    return t;
}

/* ---- namespace filter ---------------------------------------------------- */

static bool nsset_add(struct tr_nsset **sp, uint32_t h)
{
    struct tr_nsset *s = *sp;
    uint32_t i;
    for (i = h & s->mask; s->h[i]; i = (i + 1) & s->mask)
        if (s->h[i] == h)
            return true;
    s->h[i] = h;
    if (++s->n * 2 <= s->mask + 1)
        return true;
    /* Grow at half full. */
    uint32_t cap = 2 * (s->mask + 1);
    struct tr_nsset *g = calloc(1, sizeof *g + (size_t)cap * sizeof g->h[0]);
    if (!g)
        return false;
    g->mask = cap - 1;
    g->n = s->n;
    for (uint32_t k = 0; k <= s->mask; k++)
        if (s->h[k]) {
            uint32_t j = s->h[k] & g->mask;
            while (g->h[j])
                j = (j + 1) & g->mask;
            g->h[j] = s->h[k];
        }
    free(s);
    *sp = g;
    return true;
}

/* Every namespace of a TypeDef or ExportedType row (nested ones too: a
 * superset of what the indexes hold is all a filter needs). */
static struct tr_nsset *build_nsset(const struct mdt_image *img)
{
    static const unsigned tables[2] = {MDT_TABLE_TypeDef, MDT_TABLE_ExportedType};
    static const unsigned cols[2] = {MDT_COL_TypeDef_TypeNamespace,
                                     MDT_COL_ExportedType_TypeNamespace};
    struct tr_nsset *s = calloc(1, sizeof *s + 16 * sizeof s->h[0]);
    if (!s)
        return NULL;
    s->mask = 15;
    for (unsigned t = 0; t < 2; t++) {
        uint32_t n = tr_rows(img, tables[t]), last = UINT32_MAX;
        for (uint32_t i = 1; i <= n; i++) {
            uint32_t idx;
            const char *ns = cell_str(img, tables[t], i, row_ptr(img, tables[t], i), cols[t], &idx);
            if (!ns || (idx != UINT32_MAX && idx == last))
                continue;
            last = idx;
            if (!nsset_add(&s, fmix(hash_str(SEED, ns, heap_end(img, ns))) | 1)) {
                free(s);
                return NULL;
            }
        }
    }
    return s;
}

/* ---- lazily built parts -------------------------------------------------- */

enum { IDX_TOP, IDX_NESTED, IDX_EXPORTED };

static const struct tr_htab *get_htab(struct tr_mod *m, _Atomic(struct tr_htab *) *slot, int which)
{
    struct tr_htab *t = atomic_load_explicit(slot, memory_order_acquire), *expected = NULL;
    if (t || !m->img)
        return t;
    t = which == IDX_EXPORTED ? build_exported(m->img)
                              : build_typedefs(m->img, which == IDX_NESTED);
    if (!t)
        return NULL;
    if (atomic_compare_exchange_strong_explicit(slot, &expected, t, memory_order_acq_rel,
                                                memory_order_acquire))
        return t;
    free(t);
    return expected;
}

const struct tr_htab *tr_idx_typedefs(struct tr_mod *m)
{
    return get_htab(m, &m->idx_td, IDX_TOP);
}

const struct tr_htab *tr_idx_nested(struct tr_mod *m)
{
    return get_htab(m, &m->idx_nest, IDX_NESTED);
}

const struct tr_htab *tr_idx_exported(struct tr_mod *m)
{
    return get_htab(m, &m->idx_et, IDX_EXPORTED);
}

void tr_index_free(struct tr_mod *m)
{
    free(atomic_load_explicit(&m->idx_td, memory_order_relaxed));
    free(atomic_load_explicit(&m->idx_nest, memory_order_relaxed));
    free(atomic_load_explicit(&m->idx_et, memory_order_relaxed));
    free(atomic_load_explicit(&m->idx_ns, memory_order_relaxed));
}

uint32_t tr_htab_find(const struct tr_mod *m, const struct tr_htab *t, const struct tr_key *k)
{
    return t ? htab_find(m->img, t, k->hash, 0, k->ns, k->name) : 0;
}

uint32_t tr_find_typedef(struct tr_mod *m, const struct tr_key *k)
{
    return tr_htab_find(m, tr_idx_typedefs(m), k);
}

uint32_t tr_find_exported(struct tr_mod *m, const struct tr_key *k)
{
    return tr_htab_find(m, tr_idx_exported(m), k);
}

uint32_t tr_find_nested(struct tr_mod *m, uint32_t enclosing, const struct tr_key *k)
{
    const struct tr_htab *t = tr_idx_nested(m);
    return t ? htab_find(m->img, t, nested_hash(k->state, enclosing), enclosing, k->ns, k->name)
             : 0;
}

bool tr_may_define(struct tr_mod *m, const struct tr_key *k)
{
    struct tr_nsset *s = atomic_load_explicit(&m->idx_ns, memory_order_acquire), *expected = NULL;
    if (!m->img)
        return false;
    if (!s) {
        if (!(s = build_nsset(m->img)))
            return true; /* no filter: look for real */
        if (!atomic_compare_exchange_strong_explicit(&m->idx_ns, &expected, s, memory_order_acq_rel,
                                                     memory_order_acquire)) {
            free(s);
            s = expected;
        }
    }
    for (uint32_t i = k->nshash & s->mask; s->h[i]; i = (i + 1) & s->mask)
        if (s->h[i] == k->nshash)
            return true;
    return false;
}

/* ---- reference rows ------------------------------------------------------ */

int tr_typeref_row(const struct mdt_image *img, uint32_t rid, uint32_t *scope, const char **ns,
                   const char **name)
{
    const uint8_t *p = row_ptr(img, MDT_TABLE_TypeRef, rid);
    uint32_t idx;
    if (p) {
        /* The scope the fast way when its tag names a table and its row is
         * within that table's declared rows; the checked reader decides
         * everything else. */
        const mdt_coded_schema *cs = mdt_coded_schema_get(MDT_CI_ResolutionScope);
        uint32_t v = table_raw(&mdt__md(img)->lay.tables[MDT_TABLE_TypeRef], p,
                               MDT_COL_TypeRef_ResolutionScope);
        uint32_t tag = v & ((1u << cs->tag_bits) - 1), srid = v >> cs->tag_bits;
        if (tag < cs->ntags && cs->tables[tag] != MDT_NOTABLE &&
            srid <= mdt__md(img)->lay.tables[cs->tables[tag]].rows) {
            *scope = (uint32_t)cs->tables[tag] << 24 | srid;
            *name = cell_str(img, MDT_TABLE_TypeRef, rid, p, MDT_COL_TypeRef_TypeName, &idx);
            *ns = cell_str(img, MDT_TABLE_TypeRef, rid, p, MDT_COL_TypeRef_TypeNamespace, &idx);
            return *name && *ns ? 0 : -1;
        }
    }
    mdt_row r;
    if (mdt_row_get(&r, img, MDT_TABLE_TypeRef, rid) ||
        mdt_row_token(scope, &r, MDT_COL_TypeRef_ResolutionScope) ||
        mdt_row_string(name, NULL, &r, MDT_COL_TypeRef_TypeName) ||
        mdt_row_string(ns, NULL, &r, MDT_COL_TypeRef_TypeNamespace))
        return -1;
    return 0;
}
