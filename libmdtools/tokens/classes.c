/* ClassID records: ClassLoadFinished and enumeration answers go in here
 * with the precedence rules of lifetime.c; a class names its module and its
 * type arguments (or the element of an array/pointer/byref), and is
 * registered as their dependent so that their unload takes it along. While
 * a class is live it is reachable from the reverse index by its content and,
 * if it instantiates a generic TypeDef, counted in the TypeDef-presence
 * index (index.c). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "tokens/idmap_int.h"
#include "util/error.h"

#include <mdtools/token.h>

static uint32_t class_meta(const mdt_idmap_class_info *in)
{
    uint32_t rank = in->shape == MDT_IDMAP_SHAPE_ARRAY ? in->rank : 0;
    return META_LIVE | (uint32_t)in->shape << META_SHAPE_SHIFT |
           (uint32_t)in->prim << META_PRIM_SHIFT | rank << META_RANK_SHIFT |
           (in->nargs > CSLOT_INLINE ? META_OOL : 0u);
}

static int validate(const mdt_idmap_class_info *in)
{
    if (in->nargs && !in->args)
        return -1;
    for (uint32_t i = 0; i < in->nargs; i++)
        if (in->args[i] == 0)
            return -1;
    switch (in->shape) {
    case MDT_IDMAP_SHAPE_TYPEDEF:
        return in->module && MDT_TOKEN_TABLE(in->token) == 0x02 ? 0 : -1;
    case MDT_IDMAP_SHAPE_ARRAY:
        if (in->rank == 0)
            return -1;
        /* fall through */
    case MDT_IDMAP_SHAPE_SZARRAY:
    case MDT_IDMAP_SHAPE_PTR:
    case MDT_IDMAP_SHAPE_BYREF:
        return in->nargs == 1 ? 0 : -1;
    default:
        return -1;
    }
}

/* 0 same content, 1 same but prim to fill in, -1 different. */
static int compare(const struct idm_head *h, const mdt_idmap_class_info *in)
{
    const struct idm_cslot *c = (const struct idm_cslot *)h;
    uint32_t meta = atomic_load_explicit(&((struct idm_head *)h)->meta, memory_order_relaxed);
    uint32_t want = class_meta(in);
    uint32_t mask = ~((uint32_t)0xff << META_PRIM_SHIFT);
    if ((meta & mask) != (want & mask) ||
        atomic_load_explicit(&((struct idm_cslot *)c)->module, memory_order_relaxed) != in->module ||
        atomic_load_explicit(&((struct idm_cslot *)c)->token, memory_order_relaxed) != in->token)
        return -1;
    uint32_t n;
    uintptr_t inl[2];
    const uintptr_t *a = idm_slot_args(h, K_CLASS, &n, inl);
    if (n != in->nargs || (n && memcmp(a, in->args, n * sizeof *a) != 0))
        return -1;
    uint8_t prim = (uint8_t)(meta >> META_PRIM_SHIFT);
    return in->prim && prim != in->prim ? 1 : 0;
}

void idm_class_on_live(mdt_idmap *m, struct idm_head *h)
{
    idm_class_presence(m, h, +1);
    idm_rev_add(m, K_CLASS, h);
}

void idm_class_on_dead(mdt_idmap *m, struct idm_head *h)
{
    idm_class_presence(m, h, -1);
    idm_rev_del(m, K_CLASS, h);
}

/* Write a new incarnation into the slot (fresh or dead). */
static void write_class(mdt_idmap *m, struct idm_head *h, bool fresh, uintptr_t id,
                        const mdt_idmap_class_info *in, struct idm_args *ool, uint64_t seq)
{
    struct idm_cslot *c = (struct idm_cslot *)h;
    struct idm_tab *t = atomic_load_explicit(&m->tab[K_CLASS], memory_order_relaxed);
    if (!fresh) {
        idm_release_payload(m, K_CLASS, h);
        idm_slot_begin(h);
    }
    atomic_store_explicit(&c->module, in->module, memory_order_relaxed);
    atomic_store_explicit(&c->token, in->token, memory_order_relaxed);
    atomic_store_explicit(&c->nargs, in->nargs, memory_order_relaxed);
    if (ool) {
        atomic_store_explicit(&c->args[0], (uintptr_t)ool, memory_order_seq_cst);
        atomic_store_explicit(&c->args[1], 0, memory_order_relaxed);
    } else {
        atomic_store_explicit(&c->args[0], in->nargs > 0 ? in->args[0] : 0, memory_order_seq_cst);
        atomic_store_explicit(&c->args[1], in->nargs > 1 ? in->args[1] : 0, memory_order_relaxed);
    }
    atomic_store_explicit(&h->gen, seq, memory_order_relaxed);
    atomic_store_explicit(&h->meta, class_meta(in), memory_order_relaxed);
    h->seq = seq;
    if (fresh) {
        atomic_store_explicit(&h->key, id, memory_order_release);
        t->used++;
    } else {
        idm_slot_end(h);
    }
    t->live++;
    idm_class_on_live(m, h);
}

int mdt_idmap_class_load(mdt_idmap *map, uintptr_t class_id, const mdt_idmap_class_info *info,
                         uint64_t seq)
{
    if (!map || !class_id || !info || validate(info))
        return mdt__fail_simple(MDT_EINVAL, "idmap: bad class load arguments");
    int rc = idm_lock(map);
    if (rc)
        return rc;
    rc = idm_check_seq(map, seq);
    if (rc)
        goto out;

    struct idm_refs refs = {0};
    if (info->module)
        refs.r[refs.n++].kind = K_MODULE, refs.r[refs.n - 1].id = info->module;
    refs.nargs = info->nargs;
    refs.args = info->args;

    struct idm_head *h = idm_tab_find(atomic_load_explicit(&map->tab[K_CLASS], memory_order_relaxed),
                                      class_id);
    if (h && (atomic_load_explicit(&h->meta, memory_order_relaxed) & META_LIVE)) {
        int cmp = compare(h, info);
        if (cmp >= 0) {
            if (seq > h->seq)
                h->seq = seq;
            if (cmp == 1) {
                uint32_t meta = atomic_load_explicit(&h->meta, memory_order_relaxed);
                meta = (meta & ~((uint32_t)0xff << META_PRIM_SHIFT)) |
                       (uint32_t)info->prim << META_PRIM_SHIFT;
                atomic_store_explicit(&h->meta, meta, memory_order_relaxed);
                rc = MDT_IDMAP_APPLIED;
            } else {
                rc = MDT_IDMAP_DUPLICATE;
            }
            goto out;
        }
        if (seq <= h->seq || idm_refs_stale(map, &refs, seq)) {
            rc = MDT_IDMAP_SUPERSEDED;
            goto out;
        }
        /* Newer and different: the old incarnation ended unseen. */
        idm_kill_slot(map, K_CLASS, h, seq - 1);
        rc = idm_cascade(map, K_CLASS, class_id, seq - 1, seq - 1);
        if (rc < 0)
            goto out;
    } else if (h && seq <= h->seq) {
        rc = MDT_IDMAP_SUPERSEDED;
        goto out;
    } else if (idm_refs_stale(map, &refs, seq)) {
        rc = MDT_IDMAP_SUPERSEDED;
        goto out;
    }

    /* Reviving a tombstone: remember when the previous incarnation ended. */
    if (h && idm_wmap_put(&map->hist, K_CLASS, class_id, h->seq)) {
        rc = mdt__fail_simple(MDT_ENOMEM, "idmap: out of memory");
        goto out;
    }
    int err;
    struct idm_args *ool = idm_args_make(map, info->nargs, info->args, CSLOT_INLINE, &err);
    if (err) {
        rc = mdt__fail_simple(err, "idmap: out of memory for type arguments");
        goto out;
    }
    rc = idm_add_deps(map, &refs, K_CLASS, class_id);
    bool fresh = false;
    if (rc == 0 && !(h = idm_place(map, K_CLASS, class_id, &fresh)))
        rc = MDT_ENOMEM;
    if (rc) {
        if (ool) {
            map->args_bytes -= sizeof *ool + ool->n * sizeof ool->a[0];
            free(ool);
        }
        goto out;
    }
    write_class(map, h, fresh, class_id, info, ool, seq);
    rc = MDT_IDMAP_APPLIED;
out:
    return idm_finish(map, rc);
}

int mdt_idmap_class_unload(mdt_idmap *map, uintptr_t class_id, uint64_t seq)
{
    if (!map || !class_id)
        return mdt__fail_simple(MDT_EINVAL, "idmap: bad class unload arguments");
    int rc = idm_lock(map);
    if (rc)
        return rc;
    rc = idm_check_seq(map, seq);
    if (rc == 0)
        rc = idm_unload(map, K_CLASS, class_id, seq);
    return idm_finish(map, rc);
}
