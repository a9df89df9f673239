/* Reverse lookups that never ask the runtime: (module, TypeDef, type args)
 * -> ClassID, (module, MethodDef, owning class, method type args) ->
 * FunctionID, and "is some class of this TypeDef loaded?". The reverse
 * indexes map a hash of a record's content to its ID; a reader verifies a
 * candidate by reading the forward record consistently (records.c), so an
 * index entry that went stale (the class died or came back different) is
 * harmless and is dropped at the next rebuild. The presence index counts
 * live classes per (module, TypeDef). Entries never move inside an index
 * instance; growth rebuilds from the live forward records and publishes a
 * new instance, the old one going through the grace period. */
#include "config.h"

#include <string.h>

#include "tokens/idmap_int.h"
#include "util/error.h"

#define IDX_PRESENCE 0

static struct idm_rslot *rslot(const struct idm_itab *t, size_t i)
{
    return (struct idm_rslot *)(t->slots + i * sizeof(struct idm_rslot));
}

static struct idm_pslot *pslot(const struct idm_itab *t, size_t i)
{
    return (struct idm_pslot *)(t->slots + i * sizeof(struct idm_pslot));
}

/* Writer: insert without checks; false when the probe bound is hit. */
static bool rput(struct idm_itab *t, uint64_t h, uintptr_t id)
{
    size_t i = (size_t)h & t->mask;
    for (unsigned n = 0; n < IDM_MAX_PROBE && n <= t->mask; n++, i = (i + 1) & t->mask) {
        struct idm_rslot *s = rslot(t, i);
        uintptr_t sid = atomic_load_explicit(&s->id, memory_order_relaxed);
        if (sid == id && atomic_load_explicit(&s->h, memory_order_relaxed) == h)
            return true;
        if (sid == 0) {
            atomic_store_explicit(&s->h, h, memory_order_relaxed);
            atomic_store_explicit(&s->id, id, memory_order_release);
            t->used++;
            return true;
        }
    }
    return false;
}

static bool pput(struct idm_itab *t, uintptr_t module, uint32_t token, uint32_t count)
{
    size_t i = (size_t)idm_hash(module ^ (uint64_t)token << 40) & t->mask;
    for (unsigned n = 0; n < IDM_MAX_PROBE && n <= t->mask; n++, i = (i + 1) & t->mask) {
        struct idm_pslot *s = pslot(t, i);
        uintptr_t mod = atomic_load_explicit(&s->module, memory_order_relaxed);
        if (mod == module && atomic_load_explicit(&s->token, memory_order_relaxed) == token) {
            uint32_t c = atomic_load_explicit(&s->count, memory_order_relaxed);
            atomic_store_explicit(&s->count, c + count, memory_order_relaxed);
            return true;
        }
        if (mod == 0) {
            atomic_store_explicit(&s->token, token, memory_order_relaxed);
            atomic_store_explicit(&s->count, count, memory_order_relaxed);
            atomic_store_explicit(&s->module, module, memory_order_release);
            t->used++;
            return true;
        }
    }
    return false;
}

/* Rebuild index `which` (K_CLASS / K_FUNC reverse, or IDX_PRESENCE in the
 * slot of K_MODULE) from the live forward records, with room to grow. */
int idm_index_rebuild(mdt_idmap *m, int which)
{
    int fkind = which == K_MODULE ? K_CLASS : which;
    struct idm_tab *f = atomic_load_explicit(&m->tab[fkind], memory_order_relaxed);
    _Atomic(struct idm_itab *) *slotp = which == K_MODULE ? &m->presence : &m->rev[which];
    struct idm_itab *old = atomic_load_explicit(slotp, memory_order_relaxed);
    size_t slot_size = which == K_MODULE ? sizeof(struct idm_pslot) : sizeof(struct idm_rslot);
    size_t cap = idm_cap_for(2 * f->live + 16);
    if (old && cap < old->mask + 1)
        cap = old->mask + 1;
    struct idm_itab *n = idm_itab_new(cap, slot_size);
    if (!n)
        return mdt__fail_simple(MDT_ENOMEM, "idmap: out of memory growing an index");
    for (size_t i = 0; i <= f->mask; i++) {
        struct idm_head *h = idm_slot(f, i);
        if (!atomic_load_explicit(&h->key, memory_order_relaxed) ||
            !(atomic_load_explicit(&h->meta, memory_order_relaxed) & META_LIVE))
            continue;
        uint32_t meta = atomic_load_explicit(&h->meta, memory_order_relaxed);
        uint32_t na;
        uintptr_t inl[2];
        const uintptr_t *a = idm_slot_args(h, fkind, &na, inl);
        if (which == K_MODULE) {
            struct idm_cslot *c = (struct idm_cslot *)h;
            uintptr_t mod = atomic_load_explicit(&c->module, memory_order_relaxed);
            if ((meta >> META_SHAPE_SHIFT & 7u) == MDT_IDMAP_SHAPE_TYPEDEF && mod)
                pput(n, mod, atomic_load_explicit(&c->token, memory_order_relaxed), 1);
        } else if (which == K_CLASS) {
            struct idm_cslot *c = (struct idm_cslot *)h;
            rput(n,
                 idm_class_key_hash(atomic_load_explicit(&c->module, memory_order_relaxed),
                                    atomic_load_explicit(&c->token, memory_order_relaxed),
                                    meta >> META_SHAPE_SHIFT & 7u, meta >> META_RANK_SHIFT, na, a),
                 atomic_load_explicit(&h->key, memory_order_relaxed));
        } else {
            struct idm_fslot *fs = (struct idm_fslot *)h;
            rput(n,
                 idm_func_key_hash(atomic_load_explicit(&fs->module, memory_order_relaxed),
                                   atomic_load_explicit(&fs->token, memory_order_relaxed),
                                   atomic_load_explicit(&fs->cls, memory_order_relaxed), na, a),
                 atomic_load_explicit(&h->key, memory_order_relaxed));
        }
    }
    atomic_store_explicit(slotp, n, memory_order_seq_cst);
    if (old)
        idm_retire(&m->g, old, old->bytes);
    return 0;
}

static bool needs_room(const struct idm_itab *t)
{
    return (t->used + 1) * 4 > (t->mask + 1) * 3;
}

int idm_rev_add(mdt_idmap *m, int kind, uint64_t h, uintptr_t id)
{
    for (int round = 0; round < 2; round++) {
        struct idm_itab *t = atomic_load_explicit(&m->rev[kind], memory_order_relaxed);
        if (!needs_room(t) && rput(t, h, id))
            return 0;
        /* The rebuild indexes every live record, this one included. */
        if (round == 0) {
            int e = idm_index_rebuild(m, kind);
            if (e)
                return e;
            t = atomic_load_explicit(&m->rev[kind], memory_order_relaxed);
            if (!needs_room(t))
                return 0;
        }
    }
    return MDT_EUNSUPPORTED; /* pathological hash clustering: not indexed */
}

int idm_presence_adjust(mdt_idmap *m, uintptr_t module, uint32_t token, int delta)
{
    struct idm_itab *t = atomic_load_explicit(&m->presence, memory_order_relaxed);
    size_t i = (size_t)idm_hash(module ^ (uint64_t)token << 40) & t->mask;
    for (unsigned n = 0; n < IDM_MAX_PROBE && n <= t->mask; n++, i = (i + 1) & t->mask) {
        struct idm_pslot *s = pslot(t, i);
        uintptr_t mod = atomic_load_explicit(&s->module, memory_order_relaxed);
        if (mod == module && atomic_load_explicit(&s->token, memory_order_relaxed) == token) {
            uint32_t c = atomic_load_explicit(&s->count, memory_order_relaxed);
            if (delta < 0 && c == 0)
                return 0;
            atomic_store_explicit(&s->count, c + (uint32_t)delta, memory_order_relaxed);
            return 0;
        }
        if (mod == 0)
            break;
    }
    if (delta < 0)
        return 0;
    if (!needs_room(t) && pput(t, module, token, (uint32_t)delta))
        return 0;
    return idm_index_rebuild(m, K_MODULE); /* counts this class too */
}

/* ---- readers ------------------------------------------------------------ */

/* Does live class `id` have exactly the content of `key`? */
static bool class_matches(const mdt_idmap *m, uintptr_t id, const mdt_idmap_class_info *key,
                          uint64_t *gen)
{
    struct idm_head *h = idm_tab_find(idm_cur(m, K_CLASS), id);
    if (!h)
        return false;
    struct idm_cslot *c = (struct idm_cslot *)h;
    unsigned rank = key->shape == MDT_IDMAP_SHAPE_ARRAY ? key->rank : 0;
    for (int tries = 0; tries < 4; tries++) {
        uint32_t v1 = atomic_load_explicit(&h->ver, memory_order_acquire);
        if (v1 & 1u)
            return false;
        uint32_t meta = atomic_load_explicit(&h->meta, memory_order_relaxed);
        uint64_t g = atomic_load_explicit(&h->gen, memory_order_relaxed);
        uintptr_t module = atomic_load_explicit(&c->module, memory_order_relaxed);
        uint32_t token = atomic_load_explicit(&c->token, memory_order_relaxed);
        uint32_t nargs = atomic_load_explicit(&c->nargs, memory_order_relaxed);
        uintptr_t a0 = atomic_load_explicit(&c->args[0], memory_order_seq_cst);
        uintptr_t a1 = atomic_load_explicit(&c->args[1], memory_order_relaxed);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&h->ver, memory_order_relaxed) != v1)
            continue;
        if (!(meta & META_LIVE) || module != key->module || token != key->token ||
            (meta >> META_SHAPE_SHIFT & 7u) != key->shape || (meta >> META_RANK_SHIFT) != rank ||
            nargs != key->nargs)
            return false;
        const uintptr_t *a;
        uintptr_t in[2] = {a0, a1};
        if (meta & META_OOL) {
            const struct idm_args *oa = (const struct idm_args *)a0;
            if (oa->n != nargs)
                return false;
            a = oa->a;
        } else {
            a = in;
        }
        for (uint32_t i = 0; i < nargs; i++)
            if (a[i] != key->args[i])
                return false;
        *gen = g;
        return true;
    }
    return false;
}

static bool func_matches(const mdt_idmap *m, uintptr_t id, const mdt_idmap_function_info *key,
                         uint64_t *gen)
{
    struct idm_head *h = idm_tab_find(idm_cur(m, K_FUNC), id);
    if (!h)
        return false;
    struct idm_fslot *f = (struct idm_fslot *)h;
    for (int tries = 0; tries < 4; tries++) {
        uint32_t v1 = atomic_load_explicit(&h->ver, memory_order_acquire);
        if (v1 & 1u)
            return false;
        uint32_t meta = atomic_load_explicit(&h->meta, memory_order_relaxed);
        uint64_t g = atomic_load_explicit(&h->gen, memory_order_relaxed);
        uintptr_t module = atomic_load_explicit(&f->module, memory_order_relaxed);
        uintptr_t cls = atomic_load_explicit(&f->cls, memory_order_relaxed);
        uint32_t token = atomic_load_explicit(&f->token, memory_order_relaxed);
        uint32_t nargs = atomic_load_explicit(&f->nargs, memory_order_relaxed);
        uintptr_t a0 = atomic_load_explicit(&f->args, memory_order_seq_cst);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&h->ver, memory_order_relaxed) != v1)
            continue;
        if (!(meta & META_LIVE) || module != key->module || token != key->token ||
            cls != key->class_id || nargs != key->nargs)
            return false;
        const uintptr_t *a = &a0;
        if (meta & META_OOL) {
            const struct idm_args *oa = (const struct idm_args *)a0;
            if (oa->n != nargs)
                return false;
            a = oa->a;
        }
        for (uint32_t i = 0; i < nargs; i++)
            if (a[i] != key->args[i])
                return false;
        *gen = g;
        return true;
    }
    return false;
}

int mdt_idmap_class_find(const mdt_idmap *map, uintptr_t *class_id, uint64_t *gen,
                         const mdt_idmap_class_info *key)
{
    if (!map || !class_id || !key || (key->nargs && !key->args))
        return MDT_EINVAL;
    unsigned rank = key->shape == MDT_IDMAP_SHAPE_ARRAY ? key->rank : 0;
    uint64_t h = idm_class_key_hash(key->module, key->token, key->shape, rank, key->nargs, key->args);
    int rc = MDT_ENOTFOUND;
    unsigned tok = idm_enter(&map->g);
    const struct idm_itab *t =
        atomic_load_explicit(&((mdt_idmap *)map)->rev[K_CLASS], memory_order_seq_cst);
    size_t i = (size_t)h & t->mask;
    for (unsigned n = 0; n < IDM_MAX_PROBE && n <= t->mask; n++, i = (i + 1) & t->mask) {
        struct idm_rslot *s = rslot(t, i);
        uintptr_t id = atomic_load_explicit(&s->id, memory_order_acquire);
        uint64_t g;
        if (id == 0)
            break;
        if (atomic_load_explicit(&s->h, memory_order_relaxed) == h &&
            class_matches(map, id, key, &g)) {
            *class_id = id;
            if (gen)
                *gen = g;
            rc = 0;
            break;
        }
    }
    idm_leave(&map->g, tok);
    return rc;
}

int mdt_idmap_function_find(const mdt_idmap *map, uintptr_t *function_id, uint64_t *gen,
                            const mdt_idmap_function_info *key)
{
    if (!map || !function_id || !key || (key->nargs && !key->args))
        return MDT_EINVAL;
    uint64_t h = idm_func_key_hash(key->module, key->token, key->class_id, key->nargs, key->args);
    int rc = MDT_ENOTFOUND;
    unsigned tok = idm_enter(&map->g);
    const struct idm_itab *t =
        atomic_load_explicit(&((mdt_idmap *)map)->rev[K_FUNC], memory_order_seq_cst);
    size_t i = (size_t)h & t->mask;
    for (unsigned n = 0; n < IDM_MAX_PROBE && n <= t->mask; n++, i = (i + 1) & t->mask) {
        struct idm_rslot *s = rslot(t, i);
        uintptr_t id = atomic_load_explicit(&s->id, memory_order_acquire);
        uint64_t g;
        if (id == 0)
            break;
        if (atomic_load_explicit(&s->h, memory_order_relaxed) == h &&
            func_matches(map, id, key, &g)) {
            *function_id = id;
            if (gen)
                *gen = g;
            rc = 0;
            break;
        }
    }
    idm_leave(&map->g, tok);
    return rc;
}

int mdt_idmap_typedef_loaded(const mdt_idmap *map, uintptr_t module_id, uint32_t typedef_token)
{
    if (!map)
        return MDT_EINVAL;
    int rc = 0;
    unsigned tok = idm_enter(&map->g);
    const struct idm_itab *t =
        atomic_load_explicit(&((mdt_idmap *)map)->presence, memory_order_seq_cst);
    size_t i = (size_t)idm_hash(module_id ^ (uint64_t)typedef_token << 40) & t->mask;
    for (unsigned n = 0; n < IDM_MAX_PROBE && n <= t->mask; n++, i = (i + 1) & t->mask) {
        struct idm_pslot *s = pslot(t, i);
        uintptr_t mod = atomic_load_explicit(&s->module, memory_order_acquire);
        if (mod == 0)
            break;
        if (mod == module_id &&
            atomic_load_explicit(&s->token, memory_order_relaxed) == typedef_token) {
            rc = atomic_load_explicit(&s->count, memory_order_relaxed) > 0;
            break;
        }
    }
    idm_leave(&map->g, tok);
    return rc;
}
