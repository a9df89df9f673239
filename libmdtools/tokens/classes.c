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

/* Does the class need an out-of-line block (idmap_int.h)? */
static bool class_ool(const mdt_idmap_class_info *in)
{
    return in->nargs > 1 || (in->shape != MDT_IDMAP_SHAPE_TYPEDEF && in->token != 0);
}

/* The slot word w for in, with module handle hd. */
static uint64_t class_word(const mdt_idmap_class_info *in, uint32_t hd)
{
    uint32_t row = in->shape == MDT_IDMAP_SHAPE_TYPEDEF ? in->token & W_ROW_MASK
                   : in->shape == MDT_IDMAP_SHAPE_ARRAY ? in->rank
                                                          : 0;
    unsigned meta = META_LIVE | (unsigned)in->shape << META_SHAPE_SHIFT |
                    (class_ool(in) ? META_OOL : in->nargs == 1 ? META_ARG : 0u);
    return (uint64_t)row | (uint64_t)hd << W_HANDLE_SHIFT | (uint64_t)in->prim << W_PRIM_SHIFT |
           (uint64_t)meta << W_META_SHIFT;
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

/* 0 same content, 1 same but prim to fill in, -1 different. prim is content
 * (it names the class): 0 is "not known" and is filled in, another
 * non-zero value is another class. */
static int compare(const mdt_idmap *m, const struct idm_head *h, const mdt_idmap_class_info *in)
{
    struct idm_view v;
    idm_view(m, K_CLASS, h, &v);
    unsigned rank = in->shape == MDT_IDMAP_SHAPE_ARRAY ? in->rank : 0;
    if (v.shape != in->shape || v.rank != rank || v.module != in->module ||
        v.token != in->token || v.nargs != in->nargs ||
        (v.nargs && memcmp(v.args, in->args, v.nargs * sizeof *v.args) != 0))
        return -1;
    if (in->prim && v.prim && v.prim != in->prim)
        return -1;
    return in->prim && !v.prim ? 1 : 0;
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

/* Write a new incarnation into the slot (fresh or dead); hd is a module
 * handle reference the slot takes over. */
static void write_class(mdt_idmap *m, struct idm_head *h, bool fresh, uintptr_t id,
                        const mdt_idmap_class_info *in, struct idm_args *ool, uint32_t hd,
                        uint64_t seq)
{
    struct idm_cslot *c = (struct idm_cslot *)h;
    struct idm_tab *t = atomic_load_explicit(&m->tab[K_CLASS], memory_order_relaxed);
    if (!fresh) {
        idm_drop_newer(m, K_CLASS, h);
        idm_release_payload(m, K_CLASS, h);
        idm_slot_begin(h);
    }
    atomic_store_explicit(&c->x, ool ? (uintptr_t)ool : in->nargs == 1 ? in->args[0] : 0,
                          memory_order_seq_cst);
    atomic_store_explicit(&h->w, class_word(in, hd), memory_order_relaxed);
    if (fresh) {
        atomic_store_explicit(&h->gv, seq << 1, memory_order_relaxed);
        atomic_store_explicit(&h->key, id, memory_order_release);
        t->used++;
    } else {
        idm_slot_end(h, seq);
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
    if (h && idm_live(h)) {
        int cmp = compare(map, h, info);
        if (cmp >= 0) {
            if (seq > idm_seq(map, K_CLASS, h) && idm_set_seq(map, K_CLASS, h, seq)) {
                rc = mdt__fail_simple(MDT_ENOMEM, "idmap: out of memory");
                goto out;
            }
            if (cmp == 1) {
                uint64_t w = atomic_load_explicit(&h->w, memory_order_relaxed);
                w = (w & ~((uint64_t)0xff << W_PRIM_SHIFT)) | (uint64_t)info->prim << W_PRIM_SHIFT;
                atomic_store_explicit(&h->w, w, memory_order_relaxed);
                rc = MDT_IDMAP_APPLIED;
            } else {
                rc = MDT_IDMAP_DUPLICATE;
            }
            goto out;
        }
        if (seq <= idm_seq(map, K_CLASS, h)) {
            rc = MDT_IDMAP_SUPERSEDED;
            goto out;
        }
        if (idm_refs_stale(map, &refs, seq)) {
            rc = idm_refuse(map, K_CLASS, class_id, &refs, seq);
            goto out;
        }
        /* Newer and different: the old incarnation ended unseen. */
        idm_kill_slot(map, K_CLASS, h, seq - 1);
        rc = idm_cascade(map, K_CLASS, class_id, seq - 1, seq - 1);
        if (rc < 0)
            goto out;
    } else if (h && seq <= idm_seq(map, K_CLASS, h)) {
        rc = MDT_IDMAP_SUPERSEDED;
        goto out;
    } else if (idm_refs_stale(map, &refs, seq)) {
        rc = idm_refuse(map, K_CLASS, class_id, &refs, seq);
        goto out;
    }

    /* Reviving a tombstone: remember when the previous incarnation ended. */
    if (h && idm_wmap_put(&map->hist, K_CLASS, class_id, idm_seq(map, K_CLASS, h))) {
        rc = mdt__fail_simple(MDT_ENOMEM, "idmap: out of memory");
        goto out;
    }
    int err = 0;
    struct idm_args *ool =
        class_ool(info) ? idm_args_make(map, info->nargs, info->args, info->token, 0, &err) : NULL;
    if (err) {
        rc = mdt__fail_simple(err, "idmap: out of memory for type arguments");
        goto out;
    }
    rc = idm_add_deps(map, &refs, K_CLASS, class_id);
    uint32_t hd = rc ? 0 : idm_handle_get(map, info->module);
    if (hd == UINT32_MAX)
        rc = mdt__fail_simple(MDT_ENOMEM, "idmap: out of memory or module handles");
    bool fresh = false;
    if (rc == 0 && !(h = idm_place(map, K_CLASS, class_id, &fresh))) {
        idm_handle_put(map, hd);
        rc = MDT_ENOMEM;
    }
    if (rc) {
        idm_args_discard(map, ool);
        goto out;
    }
    write_class(map, h, fresh, class_id, info, ool, hd, seq);
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
