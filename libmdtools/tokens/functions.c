/* FunctionID records: JITCompilationFinished, EnumJITedFunctions items and
 * GetFunctionInfo2 answers go in here with the precedence rules of
 * lifetime.c. A function names its module, its owning class when known and
 * its method type arguments, and dies with any of them. An owning class of
 * 0 (shared generic code seen without frame info) is completed by a later
 * answer that knows it. Code ranges of a function (ranges.c) die with it. */
#define _DEFAULT_SOURCE /* clockid_t, pthread_getcpuclockid (grace_int.h) */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "tokens/args_int.h"
#include "tokens/deps_int.h"
#include "tokens/grace_int.h"
#include "tokens/idmap_int.h"
#include "tokens/index_int.h"
#include "tokens/lifetime_int.h"
#include "tokens/plugs_int.h"
#include "tokens/records_int.h"
#include "tokens/table_int.h"
#include "tokens/trace_int.h"
#include "tokens/writer_int.h"
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
static int func_compare(const mdt_idmap *m, const struct idm_head *h, const void *info)
{
    const mdt_idmap_function_info *in = info;
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

/* The same function again: its owning class when it was not known (unless
 * that class died after the item was made: then so did the function), and
 * a newer seq. */
static int func_same(mdt_idmap *m, struct idm_head *h, uintptr_t id, const void *info,
                     const struct idm_refs *refs, uint64_t seq, int cmp)
{
    const mdt_idmap_function_info *in = info;
    int rc = MDT_IDMAP_DUPLICATE;
    if (cmp == 1 && idm_last_unload(m, K_CLASS, in->class_id) >= seq)
        return idm_refuse(m, K_FUNC, id, refs, seq);
    if (cmp == 1) {
        if (idm_dep_push(m, K_CLASS, in->class_id, K_FUNC, id) || fill_class(m, h, in->class_id))
            return mdt__fail_simple(MDT_ENOMEM, "idmap: out of memory");
        rc = MDT_IDMAP_APPLIED;
    }
    return idm_note_seq(m, K_FUNC, h, seq) ? MDT_ENOMEM : rc;
}

static int func_prepare(mdt_idmap *m, const void *info, struct idm_payload *p)
{
    const mdt_idmap_function_info *in = info;
    int err = 0;
    if (in->nargs)
        p->block = idm_args_make(m, in->nargs, in->args, 0, in->class_id, &err);
    return err ? mdt__fail_simple(err, "idmap: out of memory for type arguments") : 0;
}

static void func_discard(mdt_idmap *m, struct idm_payload *p)
{
    idm_args_discard(m, p->block);
}

static void func_write(mdt_idmap *m, struct idm_head *h, const void *info,
                       const struct idm_payload *p)
{
    const mdt_idmap_function_info *in = info;
    struct idm_fslot *f = (struct idm_fslot *)h;
    (void)m;
    atomic_store_explicit(&f->x, p->block ? (uintptr_t)p->block : in->class_id,
                          memory_order_seq_cst);
    atomic_store_explicit(&h->w, func_word(in, p->handle), memory_order_relaxed);
}

static void func_refs(const mdt_idmap *m, const struct idm_head *h, struct idm_refs *out)
{
    idm_rec_refs(m, K_FUNC, h, out);
}

static bool func_names(const mdt_idmap *m, const struct idm_head *h, int pk, uintptr_t pid)
{
    return idm_rec_names(m, K_FUNC, h, pk, pid);
}

/* 0 (not indexed) for a function without a MethodDef row: DynamicMethods
 * and IL stubs all have the same content, so no lookup by content can
 * choose among them, and thousands of equal keys made every insert probe
 * to the index's bound and rebuild it (a JIT-heavy program spent 40% of
 * its time there). */
static uint64_t func_content_hash(const mdt_idmap *m, const struct idm_head *h)
{
    struct idm_view v;
    idm_view(m, K_FUNC, h, &v);
    if (!MDT_TOKEN_RID(v.token))
        return 0;
    return idm_func_key_hash(v.module, v.token, v.cls, v.nargs, v.args);
}

static void func_on_live(mdt_idmap *m, struct idm_head *h)
{
    idm_rev_add(m, K_FUNC, h);
}

static void func_on_dead(mdt_idmap *m, struct idm_head *h)
{
    idm_rev_del(m, K_FUNC, h);
}

const struct idm_kind_ops idm_function_kind = {
    .kind = K_FUNC,
    .slot_size = sizeof(struct idm_fslot),
    .names_mask = 1u << K_MODULE | 1u << K_CLASS,
    .refs = func_refs,
    .names = func_names,
    .content_hash = func_content_hash,
    .compare = func_compare,
    .same = func_same,
    .prepare = func_prepare,
    .discard = func_discard,
    .write = func_write,
    .on_live = func_on_live,
    .on_dead = func_on_dead,
    .release = idm_rec_release,
    .destroy = idm_rec_destroy,
};

static int function_load(mdt_idmap *map, uintptr_t function_id, const mdt_idmap_function_info *info,
                         uint64_t seq)
{
    if (!map || !function_id || !info || validate(info))
        return mdt__fail_simple(MDT_EINVAL, "idmap: bad function load arguments");
    struct idm_refs refs = {0};
    refs.r[refs.n].kind = K_MODULE;
    refs.r[refs.n++].id = info->module;
    if (info->class_id) {
        refs.r[refs.n].kind = K_CLASS;
        refs.r[refs.n++].id = info->class_id;
    }
    refs.nargs = info->nargs;
    refs.args = info->args;
    return idm_load(map, K_FUNC, function_id, info, &refs, seq);
}

static int function_unload(mdt_idmap *map, uintptr_t function_id, uint64_t seq)
{
    if (!map || !function_id)
        return mdt__fail_simple(MDT_EINVAL, "idmap: bad function unload arguments");
    return idm_unload_call(map, K_FUNC, function_id, seq);
}

int mdt_idmap_function_load(mdt_idmap *map, uintptr_t function_id,
                            const mdt_idmap_function_info *info, uint64_t seq)
{
    IDM_TRACED(map, function_load(map, function_id, info, seq),
               idm_trace_function(map, function_id, info, seq, rc));
}

int mdt_idmap_function_unload(mdt_idmap *map, uintptr_t function_id, uint64_t seq)
{
    IDM_TRACED(map, function_unload(map, function_id, seq),
               idm_trace_call(map, "function_unload", 1, function_id, 0, 0, seq, rc));
}
