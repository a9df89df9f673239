/* Type-argument storage of class and function slots. Up to two (classes) or
 * one (functions) ClassIDs live inline in the 64-byte slot; longer lists go
 * to an immutable array allocated by the writer, whose pointer the slot
 * holds. The array carries its own length so a reader that copied a torn
 * pointer/count pair can never read past it, and it is freed only through
 * the grace period (grace.c) when the slot is rewritten or dropped. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "tokens/idmap_int.h"

struct idm_args *idm_args_make(mdt_idmap *m, uint32_t n, const uintptr_t *args, uint32_t inline_max,
                               int *err)
{
    *err = 0;
    if (n <= inline_max)
        return NULL;
    struct idm_args *a = malloc(sizeof *a + (size_t)n * sizeof a->a[0]);
    if (!a) {
        *err = MDT_ENOMEM;
        return NULL;
    }
    a->n = n;
    memcpy(a->a, args, (size_t)n * sizeof a->a[0]);
    m->args_bytes += sizeof *a + (size_t)n * sizeof a->a[0];
    return a;
}

const uintptr_t *idm_slot_args(const struct idm_head *h, int kind, uint32_t *n, uintptr_t inl[2])
{
    struct idm_head *hh = (struct idm_head *)h;
    uint32_t meta = atomic_load_explicit(&hh->meta, memory_order_relaxed);
    _Atomic uintptr_t *slot_args;
    if (kind == K_CLASS) {
        struct idm_cslot *c = (struct idm_cslot *)hh;
        *n = atomic_load_explicit(&c->nargs, memory_order_relaxed);
        slot_args = c->args;
        if (!(meta & META_OOL)) {
            inl[0] = atomic_load_explicit(&c->args[0], memory_order_relaxed);
            inl[1] = atomic_load_explicit(&c->args[1], memory_order_relaxed);
            return inl;
        }
    } else {
        struct idm_fslot *f = (struct idm_fslot *)hh;
        *n = atomic_load_explicit(&f->nargs, memory_order_relaxed);
        slot_args = &f->args;
        if (!(meta & META_OOL)) {
            inl[0] = atomic_load_explicit(&f->args, memory_order_relaxed);
            inl[1] = 0;
            return inl;
        }
    }
    return ((const struct idm_args *)atomic_load_explicit(&slot_args[0], memory_order_relaxed))->a;
}

/* Writer: hand the out-of-line array of a slot (if any) to the grace period. */
void idm_release_payload(mdt_idmap *m, int kind, struct idm_head *h)
{
    uint32_t meta = atomic_load_explicit(&h->meta, memory_order_relaxed);
    uintptr_t p = 0;
    if (kind == K_CLASS && (meta & META_OOL))
        p = atomic_load_explicit(&((struct idm_cslot *)h)->args[0], memory_order_relaxed);
    else if (kind == K_FUNC && (meta & META_OOL))
        p = atomic_load_explicit(&((struct idm_fslot *)h)->args, memory_order_relaxed);
    if (p) {
        const struct idm_args *a = (const struct idm_args *)p;
        size_t bytes = sizeof *a + a->n * sizeof a->a[0];
        m->args_bytes -= bytes;
        idm_retire(&m->g, (void *)p, bytes);
        return;
    }
    if (kind == K_MODULE) {
        p = atomic_load_explicit(&((struct idm_mslot *)h)->path, memory_order_relaxed);
        if (p) {
            const struct idm_path *s = (const struct idm_path *)p;
            size_t bytes = sizeof *s + s->len + 1;
            m->args_bytes -= bytes;
            idm_retire(&m->g, (void *)p, bytes);
        }
    }
}
