/* FunctionID records: JITCompilationFinished, EnumJITedFunctions items and
 * GetFunctionInfo2 answers go in here with the precedence rules of
 * lifetime.c. A function names its module, its owning class when known and
 * its method type arguments, and dies with any of them. An owning class of
 * 0 (shared generic code seen without frame info) is completed by a later
 * answer that knows it. Code ranges of a function (ranges.c) die with it. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "tokens/idmap_int.h"
#include "util/error.h"

#include <mdtools/token.h>

static int validate(const mdt_idmap_function_info *in)
{
    if (!in->module || MDT_TOKEN_TABLE(in->token) != 0x06 || (in->nargs && !in->args))
        return -1;
    for (uint32_t i = 0; i < in->nargs; i++)
        if (in->args[i] == 0)
            return -1;
    return 0;
}

/* 0 same, 1 same but the owning class to fill in, -1 different. */
static int compare(const struct idm_head *h, const mdt_idmap_function_info *in)
{
    struct idm_fslot *f = (struct idm_fslot *)h;
    if (atomic_load_explicit(&f->module, memory_order_relaxed) != in->module ||
        atomic_load_explicit(&f->token, memory_order_relaxed) != in->token)
        return -1;
    uint32_t n;
    uintptr_t inl[2];
    const uintptr_t *a = idm_slot_args(h, K_FUNC, &n, inl);
    if (n != in->nargs || (n && memcmp(a, in->args, n * sizeof *a) != 0))
        return -1;
    uintptr_t cls = atomic_load_explicit(&f->cls, memory_order_relaxed);
    if (cls == in->class_id || in->class_id == 0)
        return 0;
    return cls == 0 ? 1 : -1;
}

void idm_func_on_live(mdt_idmap *m, struct idm_head *h)
{
    idm_rev_add(m, K_FUNC, h);
}

void idm_func_on_dead(mdt_idmap *m, struct idm_head *h)
{
    idm_rev_del(m, K_FUNC, h);
    if (atomic_load_explicit(&h->meta, memory_order_relaxed) & META_RANGES)
        m->ranges_dirty = true;
}

static void write_func(mdt_idmap *m, struct idm_head *h, bool fresh, uintptr_t id,
                       const mdt_idmap_function_info *in, struct idm_args *ool, uint64_t seq)
{
    struct idm_fslot *f = (struct idm_fslot *)h;
    struct idm_tab *t = atomic_load_explicit(&m->tab[K_FUNC], memory_order_relaxed);
    if (!fresh) {
        idm_release_payload(m, K_FUNC, h);
        idm_slot_begin(h);
    }
    atomic_store_explicit(&f->module, in->module, memory_order_relaxed);
    atomic_store_explicit(&f->cls, in->class_id, memory_order_relaxed);
    atomic_store_explicit(&f->token, in->token, memory_order_relaxed);
    atomic_store_explicit(&f->nargs, in->nargs, memory_order_relaxed);
    atomic_store_explicit(&f->args, ool ? (uintptr_t)ool : in->nargs ? in->args[0] : 0,
                          memory_order_seq_cst);
    atomic_store_explicit(&h->gen, seq, memory_order_relaxed);
    atomic_store_explicit(&h->meta, META_LIVE | (ool ? META_OOL : 0u), memory_order_relaxed);
    h->seq = seq;
    if (fresh) {
        atomic_store_explicit(&h->key, id, memory_order_release);
        t->used++;
    } else {
        idm_slot_end(h);
    }
    t->live++;
    idm_func_on_live(m, h);
}

int mdt_idmap_function_load(mdt_idmap *map, uintptr_t function_id,
                            const mdt_idmap_function_info *info, uint64_t seq)
{
    if (!map || !function_id || !info || validate(info))
        return mdt__fail_simple(MDT_EINVAL, "idmap: bad function load arguments");
    int rc = idm_lock(map);
    if (rc)
        return rc;
    rc = idm_check_seq(map, seq);
    if (rc)
        goto out;

    struct idm_refs refs = {0};
    refs.r[refs.n].kind = K_MODULE;
    refs.r[refs.n++].id = info->module;
    if (info->class_id) {
        refs.r[refs.n].kind = K_CLASS;
        refs.r[refs.n++].id = info->class_id;
    }
    refs.nargs = info->nargs;
    refs.args = info->args;

    struct idm_head *h =
        idm_tab_find(atomic_load_explicit(&map->tab[K_FUNC], memory_order_relaxed), function_id);
    if (h && (atomic_load_explicit(&h->meta, memory_order_relaxed) & META_LIVE)) {
        int cmp = compare(h, info);
        if (cmp >= 0) {
            rc = MDT_IDMAP_DUPLICATE;
            if (cmp == 1 && idm_last_unload(map, K_CLASS, info->class_id) < seq) {
                if (idm_dep_push(map, K_CLASS, info->class_id, K_FUNC, function_id)) {
                    rc = mdt__fail_simple(MDT_ENOMEM, "idmap: out of memory");
                    goto out;
                }
                /* The content (and so its reverse-index hash) changes. */
                idm_rev_del(map, K_FUNC, h);
                atomic_store_explicit(&((struct idm_fslot *)h)->cls, info->class_id,
                                      memory_order_relaxed);
                idm_rev_add(map, K_FUNC, h);
                rc = MDT_IDMAP_APPLIED;
            }
            if (seq > h->seq)
                h->seq = seq;
            goto out;
        }
        if (seq <= h->seq || idm_refs_stale(map, &refs, seq)) {
            rc = MDT_IDMAP_SUPERSEDED;
            goto out;
        }
        idm_kill_slot(map, K_FUNC, h, seq - 1);
        rc = idm_cascade(map, K_FUNC, function_id, seq - 1, seq - 1);
        if (rc < 0)
            goto out;
    } else if (h && seq <= h->seq) {
        rc = MDT_IDMAP_SUPERSEDED;
        goto out;
    } else if (idm_refs_stale(map, &refs, seq)) {
        rc = MDT_IDMAP_SUPERSEDED;
        goto out;
    }

    if (h && idm_wmap_put(&map->hist, K_FUNC, function_id, h->seq)) {
        rc = mdt__fail_simple(MDT_ENOMEM, "idmap: out of memory");
        goto out;
    }
    int err;
    struct idm_args *ool = idm_args_make(map, info->nargs, info->args, FSLOT_INLINE, &err);
    if (err) {
        rc = mdt__fail_simple(err, "idmap: out of memory for type arguments");
        goto out;
    }
    rc = idm_add_deps(map, &refs, K_FUNC, function_id);
    bool fresh = false;
    if (rc == 0 && !(h = idm_place(map, K_FUNC, function_id, &fresh)))
        rc = MDT_ENOMEM;
    if (rc) {
        if (ool) {
            map->args_bytes -= sizeof *ool + ool->n * sizeof ool->a[0];
            free(ool);
        }
        goto out;
    }
    write_func(map, h, fresh, function_id, info, ool, seq);
    rc = MDT_IDMAP_APPLIED;
out:
    return idm_finish(map, rc);
}

int mdt_idmap_function_unload(mdt_idmap *map, uintptr_t function_id, uint64_t seq)
{
    if (!map || !function_id)
        return mdt__fail_simple(MDT_EINVAL, "idmap: bad function unload arguments");
    int rc = idm_lock(map);
    if (rc)
        return rc;
    rc = idm_check_seq(map, seq);
    if (rc == 0)
        rc = idm_unload(map, K_FUNC, function_id, seq);
    return idm_finish(map, rc);
}
