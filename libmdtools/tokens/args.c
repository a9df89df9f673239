/* What a class or function slot cannot hold in its 32 bytes goes to an
 * immutable block allocated by the writer, whose pointer the slot holds in
 * x: type arguments beyond the one a class keeps inline (a function keeps
 * none: x is its owning class), and with them a shape's token or a
 * function's owning class. The block carries its own length so a reader
 * that copied a torn pointer/count pair can never read past it, and it is
 * freed only through the grace period (grace.c) when the slot is rewritten
 * or dropped. This file also decodes a slot's words (idm_decode), for the
 * writer and for reverse lookups. */
#define _DEFAULT_SOURCE /* clockid_t, pthread_getcpuclockid (grace_int.h) */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "tokens/args_int.h"
#include "tokens/grace_int.h"
#include "tokens/handles_int.h"
#include "tokens/idmap_int.h"
#include "tokens/records_int.h"
#include "tokens/table_int.h"
#include "tokens/writer_int.h"

size_t idm_args_bytes(const struct idm_args *a)
{
    return sizeof *a + (size_t)a->n * sizeof a->a[0];
}

struct idm_args *idm_args_make(mdt_idmap *m, uint32_t n, const uintptr_t *args, uint32_t token,
                               uintptr_t cls, int *err)
{
    *err = 0;
    struct idm_args *a = malloc(sizeof *a + (size_t)n * sizeof a->a[0]);
    if (!a) {
        *err = MDT_ENOMEM;
        return NULL;
    }
    a->n = n;
    a->token = token;
    a->cls = cls;
    if (n)
        memcpy(a->a, args, (size_t)n * sizeof a->a[0]);
    m->args_bytes += idm_args_bytes(a);
    return a;
}

void idm_args_discard(mdt_idmap *m, struct idm_args *a)
{
    if (!a)
        return;
    m->args_bytes -= idm_args_bytes(a);
    free(a);
}

void idm_decode(const mdt_idmap *m, int kind, uint64_t w, uintptr_t x, struct idm_view *v)
{
    uint32_t row = (uint32_t)w & W_ROW_MASK;
    unsigned meta = (unsigned)(w >> W_META_SHIFT);
    v->shape = kind == K_FUNC ? 0 : meta >> META_SHAPE_SHIFT & 7u;
    v->prim = (unsigned)(w >> W_PRIM_SHIFT) & 0xffu;
    v->module = idm_module_of(m, idm_w_handle(w));
    v->rank = 0;
    v->cls = 0;
    v->nargs = 0;
    v->args = v->inl;
    v->inl[0] = 0;
    const struct idm_args *oa = (meta & META_OOL) ? (const struct idm_args *)x : NULL;
    if (kind == K_FUNC) {
        v->token = 0x06000000u | row;
        v->cls = oa ? oa->cls : x;
    } else if (v->shape == MDT_IDMAP_SHAPE_TYPEDEF) {
        v->token = 0x02000000u | row;
    } else {
        v->token = oa ? oa->token : 0;
        v->rank = row;
    }
    if (oa) {
        v->nargs = oa->n;
        v->args = oa->a;
    } else if (kind == K_CLASS && (meta & META_ARG)) {
        v->nargs = 1;
        v->inl[0] = x;
    }
}

void idm_view(const mdt_idmap *m, int kind, const struct idm_head *h, struct idm_view *v)
{
    idm_decode(m, kind, atomic_load_explicit(&((struct idm_head *)h)->w, memory_order_relaxed),
               atomic_load_explicit(&((struct idm_cslot *)h)->x, memory_order_relaxed), v);
}

void idm_rec_refs(const mdt_idmap *m, int kind, const struct idm_head *h, struct idm_refs *out)
{
    struct idm_view v;
    idm_view(m, kind, h, &v);
    out->n = 1;
    out->r[0].kind = K_MODULE;
    out->r[0].id = v.module;
    if (kind == K_FUNC) {
        out->r[1].kind = K_CLASS;
        out->r[1].id = v.cls;
        out->n = 2;
    }
    out->nargs = v.nargs;
    out->inl[0] = v.inl[0];
    out->args = v.args == v.inl ? out->inl : v.args;
}

/* Writer: what the slot's content holds goes: its out-of-line block to the
 * grace period, its module handle back. */
void idm_rec_release(mdt_idmap *m, struct idm_head *h)
{
    uint64_t w = atomic_load_explicit(&h->w, memory_order_relaxed);
    idm_handle_put(m, idm_w_handle(w));
    if ((unsigned)(w >> W_META_SHIFT) & META_OOL) {
        uintptr_t p = atomic_load_explicit(&((struct idm_cslot *)h)->x, memory_order_relaxed);
        const struct idm_args *a = (const struct idm_args *)p;
        size_t bytes = idm_args_bytes(a);
        m->args_bytes -= bytes;
        idm_retire(&m->g, (void *)p, bytes);
    }
}

/* The map is freed: no reader is left. */
void idm_rec_destroy(struct idm_head *h)
{
    if (idm_meta(h) & META_OOL)
        free((void *)atomic_load_explicit(&((struct idm_cslot *)h)->x, memory_order_relaxed));
}
