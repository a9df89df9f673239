/* Consistent reads of one record, for readers that may run in a signal
 * handler (the writer's side of the protocol, idm_slot_begin/end, is in
 * table.c), the forward lookups by ID, and the content hashes of the
 * reverse indexes. A class or function slot is four words
 * (records_int.h): key, gv, w, x. gv is the generation
 * shifted left by one and doubles as the seqlock: a writer that rewrites
 * several words makes gv odd, rewrites them, and publishes the new
 * generation; a change of one word (a kill clears the live bit in w, a fill
 * stores prim or the owning class) is a single store. The reader copies the
 * words, re-checks gv, and only then decodes them: the module handle to its
 * ModuleID (handles.c), the out-of-line block (type arguments) it points
 * to, so a torn copy is never dereferenced; the pointed-to memory is
 * immutable and cannot be freed or reused while the reader is inside its
 * section (grace.c). A reader that finds gv odd answers "not found" at once
 * instead of spinning: the writer may be the very thread the signal handler
 * interrupted, and an ID being rewritten is logically not live until the
 * rewrite ends. A reader retries a changed gv at most IDM_READ_TRIES times.
 * Module slots fill fields in place under the same generation, so they
 * have a counter of their own (`ver`) that readers check as well. */
#define _DEFAULT_SOURCE /* clockid_t, pthread_getcpuclockid (grace_int.h) */
#include "config.h"

#include <string.h>

#include "tokens/base_int.h"
#include "tokens/grace_int.h"
#include "tokens/handles_int.h"
#include "tokens/idmap_int.h"
#include "tokens/records_int.h"
#include "tokens/table_int.h"

#define IDM_READ_TRIES 4

static uint32_t min_u32(uint64_t a, uint32_t b)
{
    return a < b ? (uint32_t)a : b;
}

/* The reads are split so that each public lookup compiles to one short
 * straight-line function: the first attempt is inline, retries and
 * out-of-line type arguments are cold calls. Fewer instructions per lookup
 * let the CPU keep the cache misses of several consecutive lookups in
 * flight. */
#define IDM_RETRY 1

static __attribute__((noinline)) void copy_ool(uintptr_t p, uintptr_t *args, uint32_t cap)
{
    const struct idm_args *oa = (const struct idm_args *)p;
    uint32_t n = min_u32(oa->n, cap);
    for (uint32_t i = 0; i < n; i++)
        args[i] = oa->a[i];
}

/* The seqlock's side of one attempt, for class and function slots alike
 * (both are key, gv, w, x): gv, w and x copied, gv re-checked, the live bit
 * and the generation tested. Returns s->rc: 0 with the consistent words
 * in *s (v1 the generation word, meta w's), MDT_ENOTFOUND, or IDM_RETRY. */
struct snap {
    int rc;
    unsigned meta;
    uint64_t v1, w;
    uintptr_t x;
};

IDM_INLINE int snap_slot(struct snap *s, struct idm_head *h, _Atomic uintptr_t *xp, uint64_t gen)
{
    uint64_t v1 = atomic_load_explicit(&h->gv, memory_order_acquire);
    uint64_t w = atomic_load_explicit(&h->w, memory_order_relaxed);
    uintptr_t x = atomic_load_explicit(xp, memory_order_seq_cst);
    atomic_thread_fence(memory_order_acquire);
    if (v1 & 1u)
        return s->rc = MDT_ENOTFOUND;
    if (atomic_load_explicit(&h->gv, memory_order_relaxed) != v1)
        return s->rc = IDM_RETRY;
    unsigned meta = (unsigned)(w >> W_META_SHIFT);
    if (!(meta & META_LIVE) || (gen && v1 >> 1 != gen))
        return s->rc = MDT_ENOTFOUND;
    s->meta = meta;
    s->v1 = v1;
    s->w = w;
    s->x = x;
    return s->rc = 0;
}

/* One attempt at a consistent copy of the class record in slot h into
 * *out: 0, MDT_ENOTFOUND, or IDM_RETRY when a writer changed it meanwhile.
 * The fields go straight to the caller's structure: a copy through a local
 * structure with narrow fields made the CPU wait for those stores to
 * retire (a wide load cannot be forwarded from several narrow stores), that
 * is for this lookup's cache miss, before it could start the next lookup. */
IDM_INLINE int copy_class(const mdt_idmap *m, struct idm_head *h, mdt_idmap_class_info *out,
                          uintptr_t *args, uint32_t cap, uint64_t gen)
{
    struct snap sn;
    if (__builtin_expect(snap_slot(&sn, h, &((struct idm_cslot *)h)->x, gen) != 0, 0))
        return sn.rc;
    unsigned shape = sn.meta >> META_SHAPE_SHIFT & 7u;
    uint32_t row = (uint32_t)sn.w & W_ROW_MASK;
    out->module = idm_module_of(m, idm_w_handle(sn.w));
    out->token = shape == MDT_IDMAP_SHAPE_TYPEDEF ? 0x02000000u | row : 0;
    out->shape = (uint8_t)shape;
    out->prim = (uint8_t)(sn.w >> W_PRIM_SHIFT);
    out->rank = shape == MDT_IDMAP_SHAPE_TYPEDEF ? 0 : (uint16_t)row;
    out->args = args;
    out->gen = sn.v1 >> 1;
    if (__builtin_expect(sn.meta & META_OOL, 0)) {
        const struct idm_args *oa = (const struct idm_args *)sn.x;
        if (shape != MDT_IDMAP_SHAPE_TYPEDEF)
            out->token = oa->token;
        out->nargs = oa->n;
        copy_ool(sn.x, args, cap);
    } else {
        out->nargs = sn.meta & META_ARG ? 1 : 0;
        if ((sn.meta & META_ARG) && cap > 0)
            args[0] = sn.x;
    }
    return 0;
}

IDM_INLINE int copy_func(const mdt_idmap *m, struct idm_head *h, mdt_idmap_function_info *out,
                         uintptr_t *args, uint32_t cap, uint64_t gen)
{
    struct snap sn;
    if (__builtin_expect(snap_slot(&sn, h, &((struct idm_fslot *)h)->x, gen) != 0, 0))
        return sn.rc;
    out->module = idm_module_of(m, idm_w_handle(sn.w));
    out->token = 0x06000000u | ((uint32_t)sn.w & W_ROW_MASK);
    out->args = args;
    out->gen = sn.v1 >> 1;
    if (__builtin_expect(sn.meta & META_OOL, 0)) {
        const struct idm_args *oa = (const struct idm_args *)sn.x;
        out->class_id = oa->cls;
        out->nargs = oa->n;
        copy_ool(sn.x, args, cap);
    } else {
        out->class_id = sn.x;
        out->nargs = 0;
    }
    return 0;
}

/* A writer changed the record during the first attempt: a few more (each
 * failure means a complete writer change in between). Two functions, as
 * read_class and read_func below are two: their records differ in type,
 * and one over both would put a kind test in every lookup. */
static __attribute__((noinline)) int class_retry(const mdt_idmap *m, struct idm_head *h,
                                                 mdt_idmap_class_info *out, uintptr_t *args,
                                                 uint32_t cap, uint64_t gen)
{
    for (int tries = 1; tries < IDM_READ_TRIES; tries++) {
        int rc = copy_class(m, h, out, args, cap, gen);
        if (rc != IDM_RETRY)
            return rc;
    }
    return MDT_ENOTFOUND;
}

static __attribute__((noinline)) int func_retry(const mdt_idmap *m, struct idm_head *h,
                                                mdt_idmap_function_info *out, uintptr_t *args,
                                                uint32_t cap, uint64_t gen)
{
    for (int tries = 1; tries < IDM_READ_TRIES; tries++) {
        int rc = copy_func(m, h, out, args, cap, gen);
        if (rc != IDM_RETRY)
            return rc;
    }
    return MDT_ENOTFOUND;
}

IDM_INLINE int read_class(const mdt_idmap *m, mdt_idmap_class_info *out, uintptr_t *args,
                          uint32_t cap, uintptr_t id, uint64_t gen)
{
    struct idm_head *h = idm_tab_find_sz(idm_cur(m, K_CLASS), id, sizeof(struct idm_cslot));
    if (!h)
        return MDT_ENOTFOUND;
    int rc = copy_class(m, h, out, args, cap, gen);
    if (__builtin_expect(rc == IDM_RETRY, 0))
        rc = class_retry(m, h, out, args, cap, gen);
    return rc;
}

IDM_INLINE int read_func(const mdt_idmap *m, mdt_idmap_function_info *out, uintptr_t *args,
                         uint32_t cap, uintptr_t id, uint64_t gen)
{
    struct idm_head *h = idm_tab_find_sz(idm_cur(m, K_FUNC), id, sizeof(struct idm_fslot));
    if (!h)
        return MDT_ENOTFOUND;
    int rc = copy_func(m, h, out, args, cap, gen);
    if (__builtin_expect(rc == IDM_RETRY, 0))
        rc = func_retry(m, h, out, args, cap, gen);
    return rc;
}

int idm_read_class(const mdt_idmap *m, struct idm_crec *r, uintptr_t *args, uint32_t cap,
                   uintptr_t id, uint64_t gen)
{
    mdt_idmap_class_info ci;
    int rc = read_class(m, &ci, args, cap, id, gen);
    if (rc)
        return rc;
    r->gen = ci.gen;
    r->module = ci.module;
    r->token = ci.token;
    r->nargs = ci.nargs;
    r->shape = ci.shape;
    r->prim = ci.prim;
    r->rank = ci.rank;
    r->cls = 0;
    return 0;
}

int idm_read_func(const mdt_idmap *m, struct idm_crec *r, uintptr_t *args, uint32_t cap,
                  uintptr_t id, uint64_t gen)
{
    mdt_idmap_function_info fi;
    int rc = read_func(m, &fi, args, cap, id, gen);
    if (rc)
        return rc;
    r->gen = fi.gen;
    r->module = fi.module;
    r->token = fi.token;
    r->nargs = fi.nargs;
    r->cls = fi.class_id;
    r->shape = 0;
    r->prim = 0;
    r->rank = 0;
    return 0;
}

/* Module read; when path_buf is given, also copy the path (returns its
 * length through *path_len). */
static int read_module(const mdt_idmap *m, mdt_idmap_module_info *out, char *path_buf,
                       size_t path_cap, size_t *path_len, uintptr_t id, uint64_t gen)
{
    struct idm_head *h = idm_tab_find_sz(idm_cur(m, K_MODULE), id, sizeof(struct idm_mslot));
    if (!h)
        return MDT_ENOTFOUND;
    struct idm_mslot *s = (struct idm_mslot *)h;
    for (int tries = 0; tries < IDM_READ_TRIES; tries++) {
        uint32_t v1 = atomic_load_explicit(&s->ver, memory_order_acquire);
        uint64_t gv = atomic_load_explicit(&h->gv, memory_order_acquire);
        if ((v1 & 1u) || (gv & 1u))
            return MDT_ENOTFOUND;
        unsigned meta = idm_meta(h);
        uint64_t g = gv >> 1;
        uintptr_t image = atomic_load_explicit(&s->image, memory_order_relaxed);
        uintptr_t dom = atomic_load_explicit(&s->appdomain, memory_order_relaxed);
        uintptr_t asmb = atomic_load_explicit(&s->assembly, memory_order_relaxed);
        uintptr_t ident = atomic_load_explicit(&s->identity, memory_order_relaxed);
        uintptr_t path = atomic_load_explicit(&s->path, memory_order_seq_cst);
        uint64_t mv0 = atomic_load_explicit(&s->mvid[0], memory_order_relaxed);
        uint64_t mv1 = atomic_load_explicit(&s->mvid[1], memory_order_relaxed);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&s->ver, memory_order_relaxed) != v1 ||
            atomic_load_explicit(&h->gv, memory_order_relaxed) != gv)
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

int mdt_idmap_module_lookup(mdt_idmap_module_info *out, const mdt_idmap *map, uintptr_t module_id,
                            uint64_t gen)
{
    if (!map || !out)
        return MDT_EINVAL;
    unsigned tok = idm_enter(&map->g);
    int rc = read_module(map, out, NULL, 0, NULL, module_id, gen);
    idm_leave(&map->g, tok);
    return rc;
}

int mdt_idmap_module_path(char *buf, size_t len, const mdt_idmap *map, uintptr_t module_id,
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

int mdt_idmap_class_lookup(mdt_idmap_class_info *out, uintptr_t *args_buf, uint32_t args_cap,
                           const mdt_idmap *map, uintptr_t class_id, uint64_t gen)
{
    if (!map || !out || (!args_buf && args_cap))
        return MDT_EINVAL;
    unsigned tok = idm_enter(&map->g);
    int rc = read_class(map, out, args_buf, args_cap, class_id, gen);
    idm_leave(&map->g, tok);
    return rc;
}

int mdt_idmap_function_lookup(mdt_idmap_function_info *out, uintptr_t *args_buf, uint32_t args_cap,
                              const mdt_idmap *map, uintptr_t function_id, uint64_t gen)
{
    if (!map || !out || (!args_buf && args_cap))
        return MDT_EINVAL;
    unsigned tok = idm_enter(&map->g);
    int rc = read_func(map, out, args_buf, args_cap, function_id, gen);
    idm_leave(&map->g, tok);
    return rc;
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
    struct idm_head *h = idm_tab_find_sz(idm_cur(m, K_CLASS), id, sizeof(struct idm_cslot));
    if (!h)
        return MDT_ENOTFOUND;
    struct idm_cslot *c = (struct idm_cslot *)h;
    for (int tries = 0; tries < IDM_READ_TRIES; tries++) {
        uint64_t v1 = atomic_load_explicit(&h->gv, memory_order_acquire);
        if (v1 & 1u)
            return MDT_ENOTFOUND;
        uint64_t w = atomic_load_explicit(&h->w, memory_order_relaxed);
        uintptr_t x = atomic_load_explicit(&c->x, memory_order_seq_cst);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&h->gv, memory_order_relaxed) != v1)
            continue;
        unsigned meta = (unsigned)(w >> W_META_SHIFT);
        if (!(meta & META_LIVE) || (gen && v1 >> 1 != gen))
            return MDT_ENOTFOUND;
        if (meta & META_OOL) {
            const struct idm_args *oa = (const struct idm_args *)x;
            if (k >= oa->n)
                return MDT_ENOTFOUND;
            *out = oa->a[k];
        } else {
            if (k > 0 || !(meta & META_ARG))
                return MDT_ENOTFOUND;
            *out = x;
        }
        return 0;
    }
    return MDT_ENOTFOUND;
}
