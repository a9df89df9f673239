/* ClassID records: ClassLoadFinished and enumeration answers go in here
 * with the precedence rules of lifetime.c; a class names its module and its
 * type arguments (or the element of an array/pointer/byref), and is
 * registered as their dependent so that their unload takes it along. While
 * a class is live it is reachable from the reverse index by its content and,
 * if it instantiates a generic TypeDef, counted in the TypeDef-presence
 * index (index.c). */
#define _DEFAULT_SOURCE /* clockid_t, pthread_getcpuclockid (grace_int.h) */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "tokens/args_int.h"
#include "tokens/idmap_int.h"
#include "tokens/index_int.h"
#include "tokens/lifetime_int.h"
#include "tokens/plugs_int.h"
#include "tokens/presence_int.h"
#include "tokens/records_int.h"
#include "tokens/table_int.h"
#include "tokens/trace_int.h"
#include "tokens/writer_int.h"
#include "util/error.h"

#include <mdtools/token.h>

/* Does the class need an out-of-line block (records_int.h)? */
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
                    (class_ool(in)    ? META_OOL
                     : in->nargs == 1 ? META_ARG
                                      : 0u);
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
    case MDT_IDMAP_SHAPE_TYPEDEF: return in->module && MDT_TOKEN_TABLE(in->token) == 0x02 ? 0 : -1;
    case MDT_IDMAP_SHAPE_ARRAY:
        if (in->rank == 0)
            return -1;
        /* fall through */
    case MDT_IDMAP_SHAPE_SZARRAY:
    case MDT_IDMAP_SHAPE_PTR:
    case MDT_IDMAP_SHAPE_BYREF: return in->nargs == 1 ? 0 : -1;
    default: return -1;
    }
}

/* 0 same content, 1 same but prim to fill in, -1 different. prim is content
 * (it names the class): 0 is "not known" and is filled in, another
 * non-zero value is another class. */
static int class_compare(const mdt_idmap *m, const struct idm_head *h, const void *info)
{
    const mdt_idmap_class_info *in = info;
    struct idm_view v;
    idm_view(m, K_CLASS, h, &v);
    unsigned rank = in->shape == MDT_IDMAP_SHAPE_ARRAY ? in->rank : 0;
    if (v.shape != in->shape || v.rank != rank || v.module != in->module || v.token != in->token ||
        v.nargs != in->nargs ||
        (v.nargs && memcmp(v.args, in->args, v.nargs * sizeof *v.args) != 0))
        return -1;
    if (in->prim && v.prim && v.prim != in->prim)
        return -1;
    return in->prim && !v.prim ? 1 : 0;
}

/* The same class again: a newer seq, and prim when it was not known. */
static int class_same(mdt_idmap *m, struct idm_head *h, uintptr_t id, const void *info,
                      const struct idm_refs *refs, uint64_t seq, int cmp)
{
    const mdt_idmap_class_info *in = info;
    (void)id;
    (void)refs;
    if (idm_note_seq(m, K_CLASS, h, seq))
        return MDT_ENOMEM;
    if (cmp == 0)
        return MDT_IDMAP_DUPLICATE;
    uint64_t w = atomic_load_explicit(&h->w, memory_order_relaxed);
    w = (w & ~((uint64_t)0xff << W_PRIM_SHIFT)) | (uint64_t)in->prim << W_PRIM_SHIFT;
    atomic_store_explicit(&h->w, w, memory_order_relaxed);
    return MDT_IDMAP_APPLIED;
}

static int class_prepare(mdt_idmap *m, const void *info, struct idm_payload *p)
{
    const mdt_idmap_class_info *in = info;
    int err = 0;
    if (class_ool(in))
        p->block = idm_args_make(m, in->nargs, in->args, in->token, 0, &err);
    return err ? mdt__fail_simple(err, "idmap: out of memory for type arguments") : 0;
}

static void class_discard(mdt_idmap *m, struct idm_payload *p)
{
    idm_args_discard(m, p->block);
}

/* The payload words of a new incarnation: x before w (a reader decodes x by
 * the meta byte in w only after its seqlock check). */
static void class_write(mdt_idmap *m, struct idm_head *h, const void *info,
                        const struct idm_payload *p)
{
    const mdt_idmap_class_info *in = info;
    struct idm_cslot *c = (struct idm_cslot *)h;
    (void)m;
    atomic_store_explicit(&c->x,
                          p->block         ? (uintptr_t)p->block
                          : in->nargs == 1 ? in->args[0]
                                           : 0,
                          memory_order_seq_cst);
    atomic_store_explicit(&h->w, class_word(in, p->handle), memory_order_relaxed);
}

static void class_refs(const mdt_idmap *m, const struct idm_head *h, struct idm_refs *out)
{
    idm_rec_refs(m, K_CLASS, h, out);
}

static bool class_names(const mdt_idmap *m, const struct idm_head *h, int pk, uintptr_t pid)
{
    return idm_rec_names(m, K_CLASS, h, pk, pid);
}

static uint64_t class_content_hash(const mdt_idmap *m, const struct idm_head *h)
{
    struct idm_view v;
    idm_view(m, K_CLASS, h, &v);
    return idm_class_key_hash(v.module, v.token, v.shape, v.rank, v.nargs, v.args);
}

/* A live class is in the reverse index and, if it instantiates a generic
 * TypeDef, counted in the presence index. */
static void class_on_live(mdt_idmap *m, struct idm_head *h)
{
    idm_class_presence(m, h, +1);
    idm_rev_add(m, K_CLASS, h);
}

static void class_on_dead(mdt_idmap *m, struct idm_head *h)
{
    idm_class_presence(m, h, -1);
    idm_rev_del(m, K_CLASS, h);
}

const struct idm_kind_ops idm_class_kind = {
    .kind = K_CLASS,
    .slot_size = sizeof(struct idm_cslot),
    .names_mask = 1u << K_MODULE | 1u << K_CLASS,
    .refs = class_refs,
    .names = class_names,
    .content_hash = class_content_hash,
    .compare = class_compare,
    .same = class_same,
    .prepare = class_prepare,
    .discard = class_discard,
    .write = class_write,
    .on_live = class_on_live,
    .on_dead = class_on_dead,
    .release = idm_rec_release,
    .destroy = idm_rec_destroy,
};

static int class_load(mdt_idmap *map, uintptr_t class_id, const mdt_idmap_class_info *info,
                      uint64_t seq)
{
    if (!map || !class_id || !info || validate(info))
        return mdt__fail_simple(MDT_EINVAL, "idmap: bad class load arguments");
    struct idm_refs refs = {0};
    if (info->module) {
        refs.r[refs.n].kind = K_MODULE;
        refs.r[refs.n++].id = info->module;
    }
    refs.nargs = info->nargs;
    refs.args = info->args;
    return idm_load(map, K_CLASS, class_id, info, &refs, seq);
}

static int class_unload(mdt_idmap *map, uintptr_t class_id, uint64_t seq)
{
    if (!map || !class_id)
        return mdt__fail_simple(MDT_EINVAL, "idmap: bad class unload arguments");
    return idm_unload_call(map, K_CLASS, class_id, seq);
}

int mdt_idmap_class_load(mdt_idmap *map, uintptr_t class_id, const mdt_idmap_class_info *info,
                         uint64_t seq)
{
    IDM_TRACED(map, class_load(map, class_id, info, seq),
               idm_trace_class(map, class_id, info, seq, rc));
}

int mdt_idmap_class_unload(mdt_idmap *map, uintptr_t class_id, uint64_t seq)
{
    IDM_TRACED(map, class_unload(map, class_id, seq),
               idm_trace_call(map, "class_unload", 1, class_id, 0, 0, seq, rc));
}
