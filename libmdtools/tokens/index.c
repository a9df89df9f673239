/* Reverse lookups that never ask the runtime: (module, TypeDef, type args)
 * -> ClassID, (module, MethodDef, owning class, method type args) ->
 * FunctionID, and "is some class of this TypeDef loaded?".
 *
 * A reverse index maps a hash of a live record's content to the index of
 * its slot in the forward table: one 4-byte word per entry (rword). The
 * index belongs to one forward table instance (it names slots, and a growth
 * or retire moves records), so both are rebuilt and published together
 * (idm_tab_publish in lifetime.c): the new table first, then the new index,
 * and only then are the old ones retired. A reader verifies a candidate by a
 * consistent read of the record it names, in the current table; an entry
 * whose record died or changed since is harmless. The writer deletes the
 * entry of a record before its content changes or it dies (a deleted word
 * keeps probe chains intact and is reused by later inserts), so churn does
 * not fill the index; it is rebuilt when live plus deleted entries pass 4/5.
 *
 * TypeDef presence: a TypeDef is loaded when a live class of that TypeDef
 * exists. For a non-generic TypeDef that class has the content (module,
 * TypeDef, no arguments), so the reverse index answers; generic TypeDefs
 * are counted in the presence index (presence.c), so that a map does not
 * spend an entry per non-generic class on it. */
#define _DEFAULT_SOURCE /* clockid_t, pthread_getcpuclockid (grace_int.h) */
#include "config.h"

#include <stdlib.h>

#include "tokens/args_int.h"
#include "tokens/grace_int.h"
#include "tokens/idmap_int.h"
#include "tokens/index_int.h"
#include "tokens/presence_int.h"
#include "tokens/records_int.h"
#include "tokens/table_int.h"
#include "tokens/writer_int.h"
#include "util/error.h"

/* Reverse index slot: one 32-bit word, 0 = empty, IDM_RDEL = deleted,
 * else a tag over the index of the record's slot in the forward table
 * instance the index was built for: the low `bits` bits (rbits: as
 * many as that table's largest slot index needs) are the slot index, the
 * bits above them come from the low bits of the content hash, the lowest
 * of them forced to 1 (so a word is never 0 or IDM_RDEL). The reader
 * verifies a candidate by reading that record; the tag only spares it most
 * reads of records that do not match. */
#define IDM_RDEL 1u

static inline unsigned rbits(const struct idm_tab *f)
{
    return 64u - (unsigned)__builtin_clzll((unsigned long long)(f->cap - 1));
}

/* The tag bits of a reverse word for content hash h (slot index bits 0). */
static inline uint32_t rtag(uint64_t h, unsigned bits)
{
    return (uint32_t)((uint64_t)((uint32_t)h | 1u) << bits);
}

static inline uint32_t rword(uint64_t h, size_t idx, unsigned bits)
{
    return rtag(h, bits) | (uint32_t)idx;
}

static _Atomic uint32_t *rslot(const struct idm_itab *t, size_t i)
{
    return (_Atomic uint32_t *)(void *)t->slots + i;
}

/* The content hash of slot h, by its kind. */
static uint64_t slot_hash(const mdt_idmap *m, const struct idm_head *h, int kind)
{
    return m->kind[kind]->content_hash(m, h);
}

/* Writer: add word w (hash h) unless present; reuses the first deleted
 * word of the probe sequence. False when the probe bound is hit. */
static bool rput(struct idm_itab *t, uint64_t h, uint32_t w)
{
    size_t i = idm_home(h, t->cap), hole = SIZE_MAX;
    for (unsigned n = 0; n < IDM_MAX_PROBE && n < t->cap; n++, i = idm_next(i, t->cap)) {
        uint32_t x = atomic_load_explicit(rslot(t, i), memory_order_relaxed);
        if (x == w)
            return true;
        if (x == IDM_RDEL && hole == SIZE_MAX)
            hole = i;
        if (x == 0) {
            if (hole == SIZE_MAX) {
                hole = i;
                t->used++;
            }
            atomic_store_explicit(rslot(t, hole), w, memory_order_release);
            t->live++;
            return true;
        }
    }
    if (hole == SIZE_MAX)
        return false;
    atomic_store_explicit(rslot(t, hole), w, memory_order_release);
    t->live++;
    return true;
}

static void rdel(struct idm_itab *t, uint64_t h, uint32_t w)
{
    size_t i = idm_home(h, t->cap);
    for (unsigned n = 0; n < IDM_MAX_PROBE && n < t->cap; n++, i = idm_next(i, t->cap)) {
        uint32_t x = atomic_load_explicit(rslot(t, i), memory_order_relaxed);
        if (x == 0)
            return;
        if (x == w) {
            atomic_store_explicit(rslot(t, i), IDM_RDEL, memory_order_release);
            t->live--;
            return;
        }
    }
}

struct idm_itab *idm_rev_build(const mdt_idmap *m, const struct idm_tab *f, int kind,
                               size_t min_cap)
{
    /* Room for the records that are indexed (content hash not 0): as many
     * as the index being replaced holds (its entries are exactly the live
     * records it indexes), plus the one whose insert asked for a rebuild
     * (the slack below). Counting them computed every hash twice (issue
     * 24: a tenth of a real build's class loads went to growing tables). */
    const struct idm_itab *cur = atomic_load_explicit(&m->rev[kind], memory_order_relaxed);
    size_t live = cur ? cur->live : 0;
    size_t want = live + live / 8 + 16;
    size_t cap = idm_cap_for(want > min_cap ? want : min_cap);
    unsigned bits = rbits(f);
    for (int attempt = 0; attempt < 3; attempt++, cap = idm_cap_grow(cap)) {
        struct idm_itab *n = idm_itab_new(cap, sizeof(uint32_t));
        if (!n)
            return NULL;
        n->tab = (struct idm_tab *)f;
        bool ok = true;
        for (size_t i = 0; i < f->cap && ok; i++) {
            const struct idm_head *h = idm_slot(f, i);
            if (!idm_slot_live(h))
                continue;
            uint64_t hh = slot_hash(m, h, kind);
            ok = !hh || rput(n, hh, rword(hh, i, bits)); /* 0: not indexed */
        }
        /* Pathological hash clustering: accept the last attempt as it is. */
        if (ok || attempt == 2)
            return n;
        free(n);
    }
    return NULL;
}

/* Rebuild the reverse index of `which` (K_CLASS or K_FUNC) from the live
 * forward records. */
static int rev_rebuild(mdt_idmap *m, int which)
{
    struct idm_tab *f = atomic_load_explicit(&m->tab[which], memory_order_relaxed);
    struct idm_itab *old = atomic_load_explicit(&m->rev[which], memory_order_relaxed);
    struct idm_itab *n = idm_rev_build(m, f, which, 0);
    if (!n)
        return mdt__fail_simple(MDT_ENOMEM, "idmap: out of memory growing an index");
    atomic_store_explicit(&m->rev[which], n, memory_order_seq_cst);
    if (old)
        idm_retire(&m->g, old, old->bytes);
    return 0;
}

int idm_rev_add(mdt_idmap *m, int kind, const struct idm_head *h)
{
    if (!m->rev_on[kind])
        return 0;
    struct idm_itab *t = atomic_load_explicit(&m->rev[kind], memory_order_relaxed);
    struct idm_tab *f = atomic_load_explicit(&m->tab[kind], memory_order_relaxed);
    uint64_t hh = slot_hash(m, h, kind);
    if (!hh || (t->tab == f && !idm_over(t->used, t->cap) &&
                rput(t, hh, rword(hh, idm_slot_index(f, h), rbits(f)))))
        return 0;
    /* The rebuild indexes every live record, this one included. */
    return rev_rebuild(m, kind);
}

void idm_rev_del(mdt_idmap *m, int kind, const struct idm_head *h)
{
    if (!m->rev_on[kind])
        return;
    struct idm_itab *t = atomic_load_explicit(&m->rev[kind], memory_order_relaxed);
    struct idm_tab *f = atomic_load_explicit(&m->tab[kind], memory_order_relaxed);
    if (t->tab != f)
        return;
    uint64_t hh = slot_hash(m, h, kind);
    if (hh)
        rdel(t, hh, rword(hh, idm_slot_index(f, h), rbits(f)));
}

/* ---- readers ------------------------------------------------------------ */

/* Reader: a consistent copy of the words of slot h, or false when it is
 * being rewritten or not live. */
static bool copy_words(struct idm_head *h, uint64_t *gv, uint64_t *w, uintptr_t *x)
{
    for (int tries = 0; tries < 4; tries++) {
        uint64_t v1 = atomic_load_explicit(&h->gv, memory_order_acquire);
        if (v1 & 1u)
            return false;
        *w = atomic_load_explicit(&h->w, memory_order_relaxed);
        *x = atomic_load_explicit(&((struct idm_cslot *)h)->x, memory_order_seq_cst);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&h->gv, memory_order_relaxed) != v1)
            continue;
        *gv = v1;
        return (*w >> W_META_SHIFT) & META_LIVE;
    }
    return false;
}

static bool args_match(const uintptr_t *a, const uintptr_t *b, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (a[i] != b[i])
            return false;
    return true;
}

/* Does the class record in slot h (live) have exactly the content of key? */
static bool class_slot_matches(const mdt_idmap *m, struct idm_head *h,
                               const mdt_idmap_class_info *key, uint64_t *gen)
{
    uint64_t gv, w;
    uintptr_t x;
    struct idm_view v;
    if (!copy_words(h, &gv, &w, &x))
        return false;
    idm_decode(m, K_CLASS, w, x, &v);
    unsigned rank = key->shape == MDT_IDMAP_SHAPE_ARRAY ? key->rank : 0;
    if (v.shape != key->shape || v.rank != rank || v.token != key->token ||
        v.module != key->module || v.nargs != key->nargs || !args_match(v.args, key->args, v.nargs))
        return false;
    *gen = gv >> 1;
    return true;
}

static bool func_slot_matches(const mdt_idmap *m, struct idm_head *h,
                              const mdt_idmap_function_info *key, uint64_t *gen)
{
    uint64_t gv, w;
    uintptr_t x;
    struct idm_view v;
    if (!copy_words(h, &gv, &w, &x))
        return false;
    idm_decode(m, K_FUNC, w, x, &v);
    if (v.token != key->token || v.cls != key->class_id || v.module != key->module ||
        v.nargs != key->nargs || !args_match(v.args, key->args, v.nargs))
        return false;
    *gen = gv >> 1;
    return true;
}

/* Reader (inside a section): the reverse index of `kind`, loaded once for
 * the whole search. Only the functions' can be NULL (mdt_idmap_set_flags
 * drops it, perhaps after the caller's section began). */
static const struct idm_itab *rev_index(const mdt_idmap *map, int kind)
{
    return atomic_load_explicit(&((mdt_idmap *)map)->rev[kind], memory_order_seq_cst);
}

/* Reader (inside a section): the live record of `kind` whose content hashes
 * to h and satisfies match(), through the reverse index t. */
static int rev_find(const mdt_idmap *map, const struct idm_itab *t, int kind, uint64_t h,
                    const void *key, uintptr_t *id, uint64_t *gen)
{
    mdt_idmap *m = (mdt_idmap *)map;
    const struct idm_tab *cur = idm_cur(m, kind);
    const struct idm_tab *f = t->tab;
    unsigned bits = rbits(f);
    uint32_t tag = rtag(h, bits);
    uint32_t imask = (uint32_t)((UINT64_C(1) << bits) - 1);
    size_t i = idm_home(h, t->cap);
    for (unsigned n = 0; n < IDM_MAX_PROBE && n < t->cap; n++, i = idm_next(i, t->cap)) {
        uint32_t w = atomic_load_explicit(rslot(t, i), memory_order_acquire);
        if (w == 0)
            break;
        if (w == IDM_RDEL || (w & ~imask) != tag)
            continue;
        struct idm_head *hd = idm_slot(f, (size_t)(w & imask));
        uintptr_t cand = atomic_load_explicit(&hd->key, memory_order_acquire);
        /* An index being replaced names slots of the table being replaced,
         * which the writer no longer updates: verify in the current one. */
        if (f != cur && !(hd = idm_tab_find(cur, cand)))
            continue;
        bool ok = kind == K_CLASS ? class_slot_matches(m, hd, key, gen)
                                  : func_slot_matches(m, hd, key, gen);
        if (ok) {
            *id = cand;
            return 0;
        }
    }
    return MDT_ENOTFOUND;
}

int mdt_idmap_class_find(uintptr_t *class_id, uint64_t *gen, const mdt_idmap *map,
                         const mdt_idmap_class_info *key)
{
    if (!map || !class_id || !key || (key->nargs && !key->args))
        return MDT_EINVAL;
    unsigned rank = key->shape == MDT_IDMAP_SHAPE_ARRAY ? key->rank : 0;
    uint64_t h =
        idm_class_key_hash(key->module, key->token, key->shape, rank, key->nargs, key->args);
    uint64_t g = 0;
    unsigned tok = idm_enter(&map->g);
    int rc = rev_find(map, rev_index(map, K_CLASS), K_CLASS, h, key, class_id, &g);
    idm_leave(&map->g, tok);
    if (rc == 0 && gen)
        *gen = g;
    return rc;
}

int mdt_idmap_function_find(uintptr_t *function_id, uint64_t *gen, const mdt_idmap *map,
                            const mdt_idmap_function_info *key)
{
    if (!map || !function_id || !key || (key->nargs && !key->args))
        return MDT_EINVAL;
    uint64_t h = idm_func_key_hash(key->module, key->token, key->class_id, key->nargs, key->args);
    uint64_t g = 0;
    unsigned tok = idm_enter(&map->g);
    const struct idm_itab *t = rev_index(map, K_FUNC);
    int rc = t ? rev_find(map, t, K_FUNC, h, key, function_id, &g) : MDT_EUNSUPPORTED;
    idm_leave(&map->g, tok);
    if (rc == 0 && gen)
        *gen = g;
    return rc;
}

int mdt_idmap_typedef_loaded(const mdt_idmap *map, uintptr_t module_id, uint32_t typedef_token)
{
    if (!map)
        return MDT_EINVAL;
    unsigned tok = idm_enter(&map->g);
    int rc = idm_presence_find(map, module_id, typedef_token);
    if (rc < 0) {
        /* No generic instantiation: is the non-generic class loaded? */
        mdt_idmap_class_info key = {
            module_id, typedef_token, MDT_IDMAP_SHAPE_TYPEDEF, 0, 0, 0, NULL, 0};
        uintptr_t id;
        uint64_t g;
        uint64_t h =
            idm_class_key_hash(module_id, typedef_token, MDT_IDMAP_SHAPE_TYPEDEF, 0, 0, NULL);
        rc = rev_find(map, rev_index(map, K_CLASS), K_CLASS, h, &key, &id, &g) == 0;
    }
    idm_leave(&map->g, tok);
    return rc;
}
