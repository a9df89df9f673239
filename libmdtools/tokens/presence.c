/* TypeDef presence for generic TypeDefs: (module, TypeDef) -> number of
 * live instantiations, the guard a profiler checks before it dares
 * GetClassFromToken (non-generic TypeDefs are answered by the reverse
 * index, index.c).
 *
 * One 64-bit word per generic TypeDef, so that a map where every class is
 * its own generic TypeDef does not spend 16 bytes (ModuleID, token, count)
 * at each slot on it: the module handle (24 bits, handles.c), the TypeDef's
 * row (24) and the count (16), placed by a hash of (ModuleID, token). A
 * reader verifies the handle by loading the ModuleID it stands for; a
 * handle held by a live class is never reused, and an entry whose count
 * drops to zero is deleted at once, so no entry outlives the handle it
 * names. A count above 0xffff is kept in a writer-only map (the word then
 * says 0xffff); readers only ask "more than zero?". */
#define _DEFAULT_SOURCE /* clockid_t, pthread_getcpuclockid (grace_int.h) */
#include "config.h"

#include <stdlib.h>

#include "tokens/args_int.h"
#include "tokens/grace_int.h"
#include "tokens/handles_int.h"
#include "tokens/idmap_int.h"
#include "tokens/plugs_int.h"
#include "tokens/presence_int.h"
#include "tokens/records_int.h"
#include "tokens/table_int.h"
#include "tokens/wmap_int.h"
#include "tokens/writer_int.h"
#include "util/error.h"

#include <mdtools/token.h>

#define P_DEL UINT64_C(1) /* deleted entry: probes go on past it */
#define P_COUNT_MAX 0xffffu
#define P_ROW_SHIFT 16
#define P_HANDLE_SHIFT 40

static _Atomic uint64_t *pword(const struct idm_itab *t, size_t i)
{
    return (_Atomic uint64_t *)(void *)t->slots + i;
}

static size_t home(const struct idm_itab *t, uintptr_t module, uint32_t token)
{
    return idm_home(idm_hash(module ^ (uint64_t)token << 40), t->cap);
}

/* The entry's identity: handle and row, the bits above the count. */
static uint64_t ident(uint32_t hd, uint32_t token)
{
    return (uint64_t)hd << (P_HANDLE_SHIFT - P_ROW_SHIFT) | (token & W_ROW_MASK);
}

/* Writer: the index of the entry (module, hd, token) in t, or SIZE_MAX;
 * *hole gets the first deleted or empty slot of the probe, SIZE_MAX when
 * the probe bound was hit first. */
static size_t find(const struct idm_itab *t, uintptr_t module, uint32_t hd, uint32_t token,
                   size_t *hole)
{
    uint64_t id = ident(hd, token);
    size_t i = home(t, module, token);
    *hole = SIZE_MAX;
    for (unsigned n = 0; n < IDM_MAX_PROBE && n < t->cap; n++, i = idm_next(i, t->cap)) {
        uint64_t w = atomic_load_explicit(pword(t, i), memory_order_relaxed);
        if (w == 0) {
            if (*hole == SIZE_MAX)
                *hole = i;
            return SIZE_MAX;
        }
        if (w == P_DEL) {
            if (*hole == SIZE_MAX)
                *hole = i;
            continue;
        }
        if (w >> P_ROW_SHIFT == id)
            return i;
    }
    return SIZE_MAX;
}

/* Writer: add delta (+1 or -1) to the count of (module, hd, token) in t,
 * its overflow counts in *over. False when a new entry does not fit. */
static bool adjust(struct idm_itab *t, struct idm_wmap *over, uintptr_t module, uint32_t hd,
                   uint32_t token, int delta)
{
    size_t hole, i = find(t, module, hd, token, &hole);
    uint64_t id = ident(hd, token);
    if (i == SIZE_MAX) {
        if (delta < 0)
            return true; /* not counted: nothing to take away */
        if (hole == SIZE_MAX || (atomic_load_explicit(pword(t, hole), memory_order_relaxed) == 0 &&
                                 idm_over(t->used, t->cap)))
            return false;
        if (atomic_load_explicit(pword(t, hole), memory_order_relaxed) == 0)
            t->used++;
        t->live++;
        atomic_store_explicit(pword(t, hole), id << P_ROW_SHIFT | 1u, memory_order_release);
        return true;
    }
    _Atomic uint64_t *p = pword(t, i);
    uint32_t c = (uint32_t)(atomic_load_explicit(p, memory_order_relaxed) & P_COUNT_MAX);
    if (c == P_COUNT_MAX) {
        /* The exact count is in the writer map, or is 0xffff when absent. */
        uint64_t *v = idm_wmap_get(over, 0, (uintptr_t)id);
        uint64_t nv = (v ? *v : P_COUNT_MAX) + (uint64_t)(int64_t)delta;
        if (nv > P_COUNT_MAX)
            return v ? (*v = nv, true) : idm_wmap_put(over, 0, (uintptr_t)id, nv) == 0;
        idm_wmap_del(over, 0, (uintptr_t)id); /* nv is 0xffff or 0xfffe */
        atomic_store_explicit(p, id << P_ROW_SHIFT | nv, memory_order_release);
        return true;
    }
    if (c + (uint32_t)delta == 0) {
        atomic_store_explicit(p, P_DEL, memory_order_release);
        t->live--;
        return true;
    }
    atomic_store_explicit(p, id << P_ROW_SHIFT | (c + (uint32_t)delta), memory_order_release);
    return true;
}

static bool counts_presence(const struct idm_view *v)
{
    return v->shape == MDT_IDMAP_SHAPE_TYPEDEF && v->module && v->nargs > 0;
}

static uint32_t slot_handle(const struct idm_head *h)
{
    return idm_w_handle(atomic_load_explicit(&((struct idm_head *)h)->w, memory_order_relaxed));
}

/* Writer: recount the presence index from the live classes. */
static int rebuild(mdt_idmap *m)
{
    struct idm_tab *f = atomic_load_explicit(&m->tab[K_CLASS], memory_order_relaxed);
    struct idm_itab *old = atomic_load_explicit(&m->presence, memory_order_relaxed);
    struct idm_view v;
    /* Sized for the entries the old index holds and one more (a rebuild
     * either makes room for a new one or drops deleted ones); the loop
     * below grows it when the live classes say otherwise. */
    size_t want = old ? old->live + 1 : 0;
    for (size_t cap = idm_cap_for(want + want / 8 + 16);; cap = idm_cap_grow(cap)) {
        struct idm_itab *n = idm_itab_new(cap, sizeof(uint64_t));
        struct idm_wmap over = {NULL, 0, 0};
        if (!n)
            return mdt__fail_simple(MDT_ENOMEM, "idmap: out of memory growing an index");
        bool ok = true;
        for (size_t i = 0; i < f->cap && ok; i++) {
            struct idm_head *h = idm_slot(f, i);
            if (!idm_slot_live(h))
                continue;
            idm_view(m, K_CLASS, h, &v);
            if (counts_presence(&v))
                ok = adjust(n, &over, v.module, slot_handle(h), v.token, +1);
        }
        if (ok) {
            atomic_store_explicit(&m->presence, n, memory_order_seq_cst);
            if (old)
                idm_retire(&m->g, old, old->bytes);
            idm_wmap_free(&m->pover);
            m->pover = over;
            return 0;
        }
        idm_wmap_free(&over);
        free(n);
        if (cap >= IDM_MAX_SLOTS)
            return mdt__fail_simple(MDT_ENOMEM, "idmap: presence index full");
    }
}

void idm_class_presence(mdt_idmap *m, const struct idm_head *h, int delta)
{
    struct idm_view v;
    idm_view(m, K_CLASS, h, &v);
    if (!counts_presence(&v))
        return;
    struct idm_itab *t = atomic_load_explicit(&m->presence, memory_order_relaxed);
    if (!adjust(t, &m->pover, v.module, slot_handle(h), v.token, delta))
        (void)rebuild(m); /* counts this class too */
}

int idm_presence_find(const mdt_idmap *map, uintptr_t module_id, uint32_t typedef_token)
{
    const struct idm_itab *t =
        atomic_load_explicit(&((mdt_idmap *)map)->presence, memory_order_seq_cst);
    uint32_t row = typedef_token & W_ROW_MASK;
    if (MDT_TOKEN_TABLE(typedef_token) != 0x02) /* TypeDef */
        return -1; /* entries keep the row only: they are all TypeDefs */
    size_t i = home(t, module_id, typedef_token);
    for (unsigned n = 0; n < IDM_MAX_PROBE && n < t->cap; n++, i = idm_next(i, t->cap)) {
        uint64_t w = atomic_load_explicit(pword(t, i), memory_order_acquire);
        if (w == 0)
            break;
        if (w == P_DEL || ((w >> P_ROW_SHIFT) & W_ROW_MASK) != row ||
            idm_module_of(map, (uint32_t)(w >> P_HANDLE_SHIFT)) != module_id)
            continue;
        return (w & P_COUNT_MAX) > 0;
    }
    return -1;
}

/* ---- the part's operations (the writer core calls them) ---------------- */

/* Presence counts generic TypeDefs only: a fraction of the classes. */
static int presence_init(mdt_idmap *m, const mdt_idmap_options *opts)
{
    struct idm_itab *p = idm_itab_new(idm_cap_for(opts->classes / 8), sizeof(uint64_t));
    atomic_init(&m->presence, p);
    return p ? 0 : MDT_ENOMEM;
}

static void presence_fini(mdt_idmap *m)
{
    free(atomic_load_explicit(&m->presence, memory_order_relaxed));
    idm_wmap_free(&m->pover);
}

/* Retire rebuilt the class table: recount (the index names no slots, but
 * a rebuild drops the deleted entries). */
static int presence_retire(mdt_idmap *m, uint64_t below)
{
    (void)below;
    return rebuild(m);
}

static void presence_stats(const mdt_idmap *m, mdt_idmap_stats *out)
{
    out->bytes_presence =
        atomic_load_explicit(&((mdt_idmap *)m)->presence, memory_order_relaxed)->bytes;
    out->bytes_index += out->bytes_presence;
    out->bytes_writer += m->pover.cap * sizeof(struct idm_went);
}

const struct idm_part_ops idm_presence_part = {
    .init = presence_init,
    .fini = presence_fini,
    .retire = presence_retire,
    .stats = presence_stats,
};
