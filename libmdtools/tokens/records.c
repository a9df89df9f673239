/* Consistent reads of one record, for readers that may run in a signal
 * handler, and the writer's side of the same protocol. A slot is a seqlock:
 * the writer makes `ver` odd, rewrites the payload, makes it even. The
 * reader copies the scalars, re-checks `ver`, and only then follows a
 * pointer it copied (type-argument array, path), so a torn copy is never
 * dereferenced; the pointed-to memory is immutable and cannot be freed
 * while the reader is inside its section (grace.c). A reader that finds
 * `ver` odd answers "not found" at once instead of spinning: the writer may
 * be the very thread the signal handler interrupted, and an ID being
 * rewritten is logically not live until the rewrite ends. A reader retries a
 * changed version at most IDM_READ_TRIES times. */
#include "config.h"

#include <string.h>

#include "tokens/idmap_int.h"

#define IDM_READ_TRIES 4

void idm_slot_begin(struct idm_head *h)
{
    uint32_t v = atomic_load_explicit(&h->ver, memory_order_relaxed);
    atomic_store_explicit(&h->ver, v + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
}

void idm_slot_end(struct idm_head *h)
{
    uint32_t v = atomic_load_explicit(&h->ver, memory_order_relaxed);
    atomic_store_explicit(&h->ver, v + 1, memory_order_release);
}

static uint32_t min_u32(uint64_t a, uint32_t b)
{
    return a < b ? (uint32_t)a : b;
}

int idm_read_class(const mdt_idmap *m, struct idm_crec *r, uintptr_t *args, uint32_t cap,
                   uintptr_t id, uint64_t gen)
{
    struct idm_head *h = idm_tab_find(idm_cur(m, K_CLASS), id);
    if (!h)
        return MDT_ENOTFOUND;
    struct idm_cslot *c = (struct idm_cslot *)h;
    for (int tries = 0; tries < IDM_READ_TRIES; tries++) {
        uint32_t v1 = atomic_load_explicit(&h->ver, memory_order_acquire);
        if (v1 & 1u)
            return MDT_ENOTFOUND;
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
        if (!(meta & META_LIVE) || (gen && g != gen))
            return MDT_ENOTFOUND;
        r->gen = g;
        r->module = module;
        r->token = token;
        r->nargs = nargs;
        r->shape = (uint8_t)(meta >> META_SHAPE_SHIFT & 7u);
        r->prim = (uint8_t)(meta >> META_PRIM_SHIFT);
        r->rank = (uint16_t)(meta >> META_RANK_SHIFT);
        r->cls = 0;
        if (meta & META_OOL) {
            const struct idm_args *oa = (const struct idm_args *)a0;
            uint32_t n = min_u32(oa->n, cap);
            for (uint32_t i = 0; i < n; i++)
                args[i] = oa->a[i];
        } else {
            uintptr_t in[2] = {a0, a1};
            uint32_t n = min_u32(nargs < CSLOT_INLINE ? nargs : CSLOT_INLINE, cap);
            for (uint32_t i = 0; i < n; i++)
                args[i] = in[i];
        }
        return 0;
    }
    return MDT_ENOTFOUND;
}

int idm_read_func(const mdt_idmap *m, struct idm_crec *r, uintptr_t *args, uint32_t cap,
                  uintptr_t id, uint64_t gen)
{
    struct idm_head *h = idm_tab_find(idm_cur(m, K_FUNC), id);
    if (!h)
        return MDT_ENOTFOUND;
    struct idm_fslot *f = (struct idm_fslot *)h;
    for (int tries = 0; tries < IDM_READ_TRIES; tries++) {
        uint32_t v1 = atomic_load_explicit(&h->ver, memory_order_acquire);
        if (v1 & 1u)
            return MDT_ENOTFOUND;
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
        if (!(meta & META_LIVE) || (gen && g != gen))
            return MDT_ENOTFOUND;
        r->gen = g;
        r->module = module;
        r->token = token;
        r->nargs = nargs;
        r->cls = cls;
        r->shape = 0;
        r->prim = 0;
        r->rank = 0;
        if (meta & META_OOL) {
            const struct idm_args *oa = (const struct idm_args *)a0;
            uint32_t n = min_u32(oa->n, cap);
            for (uint32_t i = 0; i < n; i++)
                args[i] = oa->a[i];
        } else if (nargs >= 1 && cap >= 1) {
            args[0] = a0;
        }
        return 0;
    }
    return MDT_ENOTFOUND;
}

/* Module read; when path_buf is given, also copy the path (returns its
 * length through *path_len). */
static int read_module(const mdt_idmap *m, mdt_idmap_module_info *out, char *path_buf,
                       size_t path_cap, size_t *path_len, uintptr_t id, uint64_t gen)
{
    struct idm_head *h = idm_tab_find(idm_cur(m, K_MODULE), id);
    if (!h)
        return MDT_ENOTFOUND;
    struct idm_mslot *s = (struct idm_mslot *)h;
    for (int tries = 0; tries < IDM_READ_TRIES; tries++) {
        uint32_t v1 = atomic_load_explicit(&h->ver, memory_order_acquire);
        if (v1 & 1u)
            return MDT_ENOTFOUND;
        uint32_t meta = atomic_load_explicit(&h->meta, memory_order_relaxed);
        uint64_t g = atomic_load_explicit(&h->gen, memory_order_relaxed);
        uintptr_t image = atomic_load_explicit(&s->image, memory_order_relaxed);
        uintptr_t dom = atomic_load_explicit(&s->appdomain, memory_order_relaxed);
        uintptr_t asmb = atomic_load_explicit(&s->assembly, memory_order_relaxed);
        uintptr_t ident = atomic_load_explicit(&s->identity, memory_order_relaxed);
        uintptr_t path = atomic_load_explicit(&s->path, memory_order_seq_cst);
        uint64_t mv0 = atomic_load_explicit(&s->mvid[0], memory_order_relaxed);
        uint64_t mv1 = atomic_load_explicit(&s->mvid[1], memory_order_relaxed);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&h->ver, memory_order_relaxed) != v1)
            continue;
        if (!(meta & META_LIVE) || (gen && g != gen))
            return MDT_ENOTFOUND;
        if (out) {
            out->image = (const struct mdt_image *)image;
            out->path = NULL;
            out->appdomain = dom;
            out->assembly = asmb;
            out->identity = (const struct mdt_identity *)ident;
            out->gen = g;
            memcpy(out->mvid, &mv0, 8);
            memcpy(out->mvid + 8, &mv1, 8);
        }
        if (path_buf) {
            const struct idm_path *p = (const struct idm_path *)path;
            size_t len = p ? p->len : 0;
            if (path_cap > 0) {
                size_t n = len < path_cap - 1 ? len : path_cap - 1;
                for (size_t i = 0; i < n; i++)
                    path_buf[i] = p->s[i];
                path_buf[n] = '\0';
            }
            *path_len = len;
        }
        return 0;
    }
    return MDT_ENOTFOUND;
}

int idm_read_module(const mdt_idmap *m, mdt_idmap_module_info *out, uintptr_t id, uint64_t gen)
{
    return read_module(m, out, NULL, 0, NULL, id, gen);
}

int mdt_idmap_module_lookup(const mdt_idmap *map, mdt_idmap_module_info *out, uintptr_t module_id,
                            uint64_t gen)
{
    if (!map || !out)
        return MDT_EINVAL;
    unsigned tok = idm_enter(&map->g);
    int rc = read_module(map, out, NULL, 0, NULL, module_id, gen);
    idm_leave(&map->g, tok);
    return rc;
}

int mdt_idmap_module_path(const mdt_idmap *map, char *buf, size_t len, uintptr_t module_id,
                          uint64_t gen)
{
    size_t plen = 0;
    if (!map || (!buf && len))
        return MDT_EINVAL;
    char dummy;
    unsigned tok = idm_enter(&map->g);
    int rc = read_module(map, NULL, buf ? buf : &dummy, buf ? len : 0, &plen, module_id, gen);
    idm_leave(&map->g, tok);
    if (rc)
        return rc;
    return plen > INT32_MAX ? INT32_MAX : (int)plen;
}

int mdt_idmap_class_lookup(const mdt_idmap *map, mdt_idmap_class_info *out, uintptr_t *args_buf,
                           uint32_t args_cap, uintptr_t class_id, uint64_t gen)
{
    struct idm_crec r;
    if (!map || !out || (!args_buf && args_cap))
        return MDT_EINVAL;
    unsigned tok = idm_enter(&map->g);
    int rc = idm_read_class(map, &r, args_buf, args_cap, class_id, gen);
    idm_leave(&map->g, tok);
    if (rc)
        return rc;
    out->module = r.module;
    out->token = r.token;
    out->shape = r.shape;
    out->prim = r.prim;
    out->rank = r.rank;
    out->nargs = r.nargs;
    out->args = args_buf;
    out->gen = r.gen;
    return 0;
}

int mdt_idmap_function_lookup(const mdt_idmap *map, mdt_idmap_function_info *out,
                              uintptr_t *args_buf, uint32_t args_cap, uintptr_t function_id,
                              uint64_t gen)
{
    struct idm_crec r;
    if (!map || !out || (!args_buf && args_cap))
        return MDT_EINVAL;
    unsigned tok = idm_enter(&map->g);
    int rc = idm_read_func(map, &r, args_buf, args_cap, function_id, gen);
    idm_leave(&map->g, tok);
    if (rc)
        return rc;
    out->module = r.module;
    out->token = r.token;
    out->class_id = r.cls;
    out->nargs = r.nargs;
    out->args = args_buf;
    out->gen = r.gen;
    return 0;
}

/* Hashes for the reverse indexes: content only, never the ID. */
static uint64_t fold(uint64_t h, uint64_t v)
{
    return idm_hash(h ^ v) + 0x9E3779B97F4A7C15ull;
}

uint64_t idm_class_key_hash(uintptr_t module, uint32_t token, unsigned shape, unsigned rank,
                            uint32_t nargs, const uintptr_t *args)
{
    uint64_t h = fold(0x636c617373ull, module);
    h = fold(h, (uint64_t)token << 32 | shape << 16 | rank);
    h = fold(h, nargs);
    for (uint32_t i = 0; i < nargs; i++)
        h = fold(h, args[i]);
    return h ? h : 1;
}

uint64_t idm_func_key_hash(uintptr_t module, uint32_t token, uintptr_t cls, uint32_t nargs,
                           const uintptr_t *args)
{
    uint64_t h = fold(0x66756e63ull, module);
    h = fold(h, token);
    h = fold(h, cls);
    h = fold(h, nargs);
    for (uint32_t i = 0; i < nargs; i++)
        h = fold(h, args[i]);
    return h ? h : 1;
}

int idm_class_arg(const mdt_idmap *m, uintptr_t id, uint64_t gen, uint32_t k, uintptr_t *out)
{
    struct idm_head *h = idm_tab_find(idm_cur(m, K_CLASS), id);
    if (!h)
        return MDT_ENOTFOUND;
    struct idm_cslot *c = (struct idm_cslot *)h;
    for (int tries = 0; tries < IDM_READ_TRIES; tries++) {
        uint32_t v1 = atomic_load_explicit(&h->ver, memory_order_acquire);
        if (v1 & 1u)
            return MDT_ENOTFOUND;
        uint32_t meta = atomic_load_explicit(&h->meta, memory_order_relaxed);
        uint64_t g = atomic_load_explicit(&h->gen, memory_order_relaxed);
        uint32_t nargs = atomic_load_explicit(&c->nargs, memory_order_relaxed);
        uintptr_t a0 = atomic_load_explicit(&c->args[0], memory_order_seq_cst);
        uintptr_t a1 = atomic_load_explicit(&c->args[1], memory_order_relaxed);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&h->ver, memory_order_relaxed) != v1)
            continue;
        if (!(meta & META_LIVE) || (gen && g != gen) || k >= nargs)
            return MDT_ENOTFOUND;
        if (meta & META_OOL) {
            const struct idm_args *oa = (const struct idm_args *)a0;
            if (k >= oa->n)
                return MDT_ENOTFOUND;
            *out = oa->a[k];
        } else {
            *out = k == 0 ? a0 : a1;
        }
        return 0;
    }
    return MDT_ENOTFOUND;
}
