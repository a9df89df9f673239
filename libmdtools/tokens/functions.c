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
static int compare(const mdt_idmap *m, const struct idm_head *h, const mdt_idmap_function_info *in)
{
    struct idm_view v;
    idm_view(m, K_FUNC, h, &v);
    if (v.module != in->module || v.token != in->token || v.nargs != in->nargs ||
        (v.nargs && memcmp(v.args, in->args, v.nargs * sizeof *v.args) != 0))
        return -1;
    if (v.cls == in->class_id || in->class_id == 0)
        return 0;
    return v.cls == 0 ? 1 : -1;
}

static uint64_t func_word(const mdt_idmap_function_info *in, uint32_t hd)
{
    unsigned meta = META_LIVE | (in->nargs ? META_OOL : 0u);
    return (uint64_t)(in->token & W_ROW_MASK) | (uint64_t)hd << W_HANDLE_SHIFT |
           (uint64_t)meta << W_META_SHIFT;
}

void idm_func_on_live(mdt_idmap *m, struct idm_head *h)
{
    idm_rev_add(m, K_FUNC, h);
}

void idm_func_on_dead(mdt_idmap *m, struct idm_head *h)
{
    idm_rev_del(m, K_FUNC, h);
    if (idm_meta(h) & META_RANGES)
        m->ranges_dirty = true;
}

static void write_func(mdt_idmap *m, struct idm_head *h, bool fresh, uintptr_t id,
                       const mdt_idmap_function_info *in, struct idm_args *ool, uint32_t hd,
                       uint64_t seq)
{
    struct idm_fslot *f = (struct idm_fslot *)h;
    struct idm_tab *t = atomic_load_explicit(&m->tab[K_FUNC], memory_order_relaxed);
    if (!fresh) {
        idm_drop_newer(m, K_FUNC, h);
        idm_release_payload(m, K_FUNC, h);
        idm_slot_begin(h);
    }
    atomic_store_explicit(&f->x, ool ? (uintptr_t)ool : in->class_id, memory_order_seq_cst);
    atomic_store_explicit(&h->w, func_word(in, hd), memory_order_relaxed);
    if (fresh) {
        atomic_store_explicit(&h->gv, seq << 1, memory_order_relaxed);
        atomic_store_explicit(&h->key, id, memory_order_release);
        t->used++;
    } else {
        idm_slot_end(h, seq);
    }
    t->live++;
    idm_func_on_live(m, h);
}

/* Fill in the owning class of a live record that had none: one store of x
 * (with method type arguments, a new block replaces the old one). The
 * content, and so its reverse-index hash, changes. */
static int fill_class(mdt_idmap *m, struct idm_head *h, uintptr_t cls)
{
    struct idm_fslot *f = (struct idm_fslot *)h;
    struct idm_args *nb = NULL;
    if (idm_meta(h) & META_OOL) {
        const struct idm_args *ob =
            (const struct idm_args *)atomic_load_explicit(&f->x, memory_order_relaxed);
        int err;
        nb = idm_args_make(m, ob->n, ob->a, 0, cls, &err);
        if (err)
            return err;
    }
    idm_rev_del(m, K_FUNC, h);
    if (nb) {
        uintptr_t old = atomic_load_explicit(&f->x, memory_order_relaxed);
        atomic_store_explicit(&f->x, (uintptr_t)nb, memory_order_seq_cst);
        size_t bytes = idm_args_bytes((const struct idm_args *)old);
        m->args_bytes -= bytes;
        idm_retire(&m->g, (void *)old, bytes);
    } else {
        atomic_store_explicit(&f->x, cls, memory_order_seq_cst);
    }
    idm_rev_add(m, K_FUNC, h);
    return 0;
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
    if (h && idm_live(h)) {
        int cmp = compare(map, h, info);
        if (cmp >= 0) {
            rc = MDT_IDMAP_DUPLICATE;
            if (cmp == 1 && idm_last_unload(map, K_CLASS, info->class_id) >= seq) {
                /* Its owner died after the item was made: so did it. */
                rc = idm_refuse(map, K_FUNC, function_id, &refs, seq);
                goto out;
            }
            if (cmp == 1) {
                if (idm_dep_push(map, K_CLASS, info->class_id, K_FUNC, function_id)) {
                    rc = mdt__fail_simple(MDT_ENOMEM, "idmap: out of memory");
                    goto out;
                }
                if (fill_class(map, h, info->class_id)) {
                    rc = mdt__fail_simple(MDT_ENOMEM, "idmap: out of memory");
                    goto out;
                }
                rc = MDT_IDMAP_APPLIED;
            }
            if (seq > idm_seq(map, K_FUNC, h) && idm_set_seq(map, K_FUNC, h, seq))
                rc = mdt__fail_simple(MDT_ENOMEM, "idmap: out of memory");
            goto out;
        }
        if (seq <= idm_seq(map, K_FUNC, h)) {
            rc = MDT_IDMAP_SUPERSEDED;
            goto out;
        }
        if (idm_refs_stale(map, &refs, seq)) {
            rc = idm_refuse(map, K_FUNC, function_id, &refs, seq);
            goto out;
        }
        idm_kill_slot(map, K_FUNC, h, seq - 1);
        rc = idm_cascade(map, K_FUNC, function_id, seq - 1, seq - 1);
        if (rc < 0)
            goto out;
    } else if (h && seq <= idm_seq(map, K_FUNC, h)) {
        rc = MDT_IDMAP_SUPERSEDED;
        goto out;
    } else if (idm_refs_stale(map, &refs, seq)) {
        rc = idm_refuse(map, K_FUNC, function_id, &refs, seq);
        goto out;
    }

    if (h && idm_wmap_put(&map->hist, K_FUNC, function_id, idm_seq(map, K_FUNC, h))) {
        rc = mdt__fail_simple(MDT_ENOMEM, "idmap: out of memory");
        goto out;
    }
    int err = 0;
    struct idm_args *ool =
        info->nargs ? idm_args_make(map, info->nargs, info->args, 0, info->class_id, &err) : NULL;
    if (err) {
        rc = mdt__fail_simple(err, "idmap: out of memory for type arguments");
        goto out;
    }
    rc = idm_add_deps(map, &refs, K_FUNC, function_id);
    uint32_t hd = rc ? 0 : idm_handle_get(map, info->module);
    if (hd == UINT32_MAX)
        rc = mdt__fail_simple(MDT_ENOMEM, "idmap: out of memory or module handles");
    bool fresh = false;
    if (rc == 0 && !(h = idm_place(map, K_FUNC, function_id, &fresh))) {
        idm_handle_put(map, hd);
        rc = MDT_ENOMEM;
    }
    if (rc) {
        idm_args_discard(map, ool);
        goto out;
    }
    write_func(map, h, fresh, function_id, info, ool, hd, seq);
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
