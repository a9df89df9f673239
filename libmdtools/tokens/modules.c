/* ModuleID records, and the three ways modules go away: ModuleUnloadStarted,
 * AppDomain shutdown and (collectible) assembly unload. A module is
 * registered as a dependent of its AppDomain and assembly tags, so their
 * unload is an ordinary cascade (lifetime.c), and their tombstones keep a
 * late enumeration item of a module in a dead AppDomain out. The path is
 * copied into writer-allocated memory (freed through the grace period); the
 * image and identity pointers are the caller's. */
#define _DEFAULT_SOURCE /* clockid_t, pthread_getcpuclockid (grace_int.h) */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "tokens/deps_int.h"
#include "tokens/grace_int.h"
#include "tokens/idmap_int.h"
#include "tokens/lifetime_int.h"
#include "tokens/plugs_int.h"
#include "tokens/records_int.h"
#include "tokens/table_int.h"
#include "tokens/trace_int.h"
#include "tokens/writer_int.h"
#include "util/error.h"

static bool mvid_zero(const uint8_t m[16])
{
    for (int i = 0; i < 16; i++)
        if (m[i])
            return false;
    return true;
}

struct mcur {
    uintptr_t image, dom, asmb, ident, path;
    uint8_t mvid[16];
};

static void read_cur(const struct idm_head *h, struct mcur *c)
{
    struct idm_mslot *s = (struct idm_mslot *)h;
    c->image = atomic_load_explicit(&s->image, memory_order_relaxed);
    c->dom = atomic_load_explicit(&s->appdomain, memory_order_relaxed);
    c->asmb = atomic_load_explicit(&s->assembly, memory_order_relaxed);
    c->ident = atomic_load_explicit(&s->identity, memory_order_relaxed);
    c->path = atomic_load_explicit(&s->path, memory_order_relaxed);
    uint64_t w[2] = {atomic_load_explicit(&s->mvid[0], memory_order_relaxed),
                     atomic_load_explicit(&s->mvid[1], memory_order_relaxed)};
    memcpy(c->mvid, w, 16);
}

/* Filling in fields of a live record keeps its generation, so readers
 * check the slot's own counter too. */
static void fill_begin(struct idm_mslot *s)
{
    uint32_t v = atomic_load_explicit(&s->ver, memory_order_relaxed);
    atomic_store_explicit(&s->ver, v + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
}

static void fill_end(struct idm_mslot *s)
{
    uint32_t v = atomic_load_explicit(&s->ver, memory_order_relaxed);
    atomic_store_explicit(&s->ver, v + 1, memory_order_release);
}

/* A field conflicts when both sides know it and differ. */
static bool field_conflict(uintptr_t have, uintptr_t want)
{
    return have && want && have != want;
}

/* 0 same, 1 same but fields to fill in, -1 different. */
static int module_compare(const mdt_idmap *m, const struct idm_head *h, const void *info)
{
    const mdt_idmap_module_info *in = info;
    (void)m;
    struct mcur c;
    read_cur(h, &c);
    if (field_conflict(c.image, (uintptr_t)in->image) || field_conflict(c.dom, in->appdomain) ||
        field_conflict(c.asmb, in->assembly) || field_conflict(c.ident, (uintptr_t)in->identity))
        return -1;
    if (!mvid_zero(c.mvid) && !mvid_zero(in->mvid) && memcmp(c.mvid, in->mvid, 16) != 0)
        return -1;
    if ((!c.image && in->image) || (!c.dom && in->appdomain) || (!c.asmb && in->assembly) ||
        (!c.ident && in->identity) || (mvid_zero(c.mvid) && !mvid_zero(in->mvid)) ||
        (!c.path && in->path && in->path[0]))
        return 1;
    return 0;
}

static struct idm_path *make_path(mdt_idmap *m, const char *path, int *err)
{
    *err = 0;
    if (!path || !path[0])
        return NULL;
    size_t len = strlen(path);
    struct idm_path *p = malloc(sizeof *p + len + 1);
    if (!p) {
        *err = MDT_ENOMEM;
        return NULL;
    }
    p->len = len;
    memcpy(p->s, path, len + 1);
    m->args_bytes += sizeof *p + len + 1;
    return p;
}

static void store_fields(struct idm_mslot *s, const mdt_idmap_module_info *in, struct idm_path *p,
                         bool fill_only)
{
    struct mcur c;
    read_cur(&s->h, &c);
    if (!fill_only || !c.image)
        atomic_store_explicit(&s->image, (uintptr_t)in->image, memory_order_relaxed);
    if (!fill_only || !c.dom)
        atomic_store_explicit(&s->appdomain, in->appdomain, memory_order_relaxed);
    if (!fill_only || !c.asmb)
        atomic_store_explicit(&s->assembly, in->assembly, memory_order_relaxed);
    if (!fill_only || !c.ident)
        atomic_store_explicit(&s->identity, (uintptr_t)in->identity, memory_order_relaxed);
    if (!fill_only || mvid_zero(c.mvid)) {
        uint64_t w[2];
        memcpy(w, in->mvid, 16);
        atomic_store_explicit(&s->mvid[0], w[0], memory_order_relaxed);
        atomic_store_explicit(&s->mvid[1], w[1], memory_order_relaxed);
    }
    if (!fill_only || !c.path)
        atomic_store_explicit(&s->path, (uintptr_t)p, memory_order_seq_cst);
}

static void discard_path(mdt_idmap *m, struct idm_path *p)
{
    if (p) {
        m->args_bytes -= sizeof *p + p->len + 1;
        free(p);
    }
}

/* The same module again: the fields it did not know (unless its AppDomain
 * or assembly, unknown to the record, died after the item was made: then
 * so did the module), and a newer seq. */
static int module_same(mdt_idmap *m, struct idm_head *h, uintptr_t id, const void *info,
                       const struct idm_refs *refs, uint64_t seq, int cmp)
{
    const mdt_idmap_module_info *in = info;
    int rc = MDT_IDMAP_DUPLICATE, err;
    if (cmp == 1 && idm_refs_stale(m, refs, seq))
        return idm_refuse(m, K_MODULE, id, refs, seq);
    if (cmp == 1) {
        struct idm_path *p = NULL;
        struct mcur c;
        read_cur(h, &c);
        if (!c.path && (p = make_path(m, in->path, &err), err))
            return mdt__fail_simple(err, "idmap: out of memory for a path");
        if ((!c.dom && in->appdomain && idm_dep_push(m, K_DOMAIN, in->appdomain, K_MODULE, id)) ||
            (!c.asmb && in->assembly && idm_dep_push(m, K_ASSEMBLY, in->assembly, K_MODULE, id))) {
            discard_path(m, p);
            return mdt__fail_simple(MDT_ENOMEM, "idmap: out of memory");
        }
        fill_begin((struct idm_mslot *)h);
        store_fields((struct idm_mslot *)h, in, p, true);
        fill_end((struct idm_mslot *)h);
        rc = MDT_IDMAP_APPLIED;
    }
    if (idm_note_seq(m, K_MODULE, h, seq))
        return MDT_ENOMEM;
    if (rc == MDT_IDMAP_APPLIED)
        atomic_fetch_add_explicit(&m->modchanges, 1, memory_order_relaxed);
    return rc;
}

static int module_prepare(mdt_idmap *m, const void *info, struct idm_payload *p)
{
    const mdt_idmap_module_info *in = info;
    int err;
    p->block = make_path(m, in->path, &err);
    return err ? mdt__fail_simple(err, "idmap: out of memory for a path") : 0;
}

static void module_discard(mdt_idmap *m, struct idm_payload *p)
{
    discard_path(m, p->block);
}

static void module_write(mdt_idmap *m, struct idm_head *h, const void *info,
                         const struct idm_payload *p)
{
    (void)m;
    store_fields((struct idm_mslot *)h, info, p->block, false);
    atomic_store_explicit(&h->w, (uint64_t)META_LIVE << W_META_SHIFT, memory_order_relaxed);
}

static void module_refs(const mdt_idmap *m, const struct idm_head *h, struct idm_refs *out)
{
    struct idm_mslot *s = (struct idm_mslot *)h;
    (void)m;
    out->n = 2;
    out->r[0].kind = K_DOMAIN;
    out->r[0].id = atomic_load_explicit(&s->appdomain, memory_order_relaxed);
    out->r[1].kind = K_ASSEMBLY;
    out->r[1].id = atomic_load_explicit(&s->assembly, memory_order_relaxed);
    out->nargs = 0;
    out->args = NULL;
}

static bool module_names(const mdt_idmap *m, const struct idm_head *h, int pk, uintptr_t pid)
{
    struct idm_mslot *s = (struct idm_mslot *)h;
    (void)m;
    if (pk == K_DOMAIN)
        return atomic_load_explicit(&s->appdomain, memory_order_relaxed) == pid;
    if (pk == K_ASSEMBLY)
        return atomic_load_explicit(&s->assembly, memory_order_relaxed) == pid;
    return false;
}

/* Every module that comes or goes changes what mdt_idmap_module_each()
 * walks: the counter lets a mirror skip an unchanged map. */
static void module_changed(mdt_idmap *m, struct idm_head *h)
{
    (void)h;
    atomic_fetch_add_explicit(&m->modchanges, 1, memory_order_relaxed);
}

/* The path goes through the grace period (module_path readers copy it). */
static void module_release(mdt_idmap *m, struct idm_head *h)
{
    uintptr_t p = atomic_load_explicit(&((struct idm_mslot *)h)->path, memory_order_relaxed);
    if (p) {
        const struct idm_path *s = (const struct idm_path *)p;
        size_t bytes = sizeof *s + s->len + 1;
        m->args_bytes -= bytes;
        idm_retire(&m->g, (void *)p, bytes);
    }
}

static void module_destroy(struct idm_head *h)
{
    free((void *)atomic_load_explicit(&((struct idm_mslot *)h)->path, memory_order_relaxed));
}

const struct idm_kind_ops idm_module_kind = {
    .kind = K_MODULE,
    .slot_size = sizeof(struct idm_mslot),
    .names_mask = 1u << K_DOMAIN | 1u << K_ASSEMBLY,
    .refs = module_refs,
    .names = module_names,
    .compare = module_compare,
    .same = module_same,
    .prepare = module_prepare,
    .discard = module_discard,
    .write = module_write,
    .on_live = module_changed,
    .on_dead = module_changed,
    .release = module_release,
    .destroy = module_destroy,
};

static int module_load(mdt_idmap *map, uintptr_t module_id, const mdt_idmap_module_info *info,
                       uint64_t seq)
{
    if (!map || !module_id || !info)
        return mdt__fail_simple(MDT_EINVAL, "idmap: bad module load arguments");
    struct idm_refs refs = {0};
    if (info->appdomain) {
        refs.r[refs.n].kind = K_DOMAIN;
        refs.r[refs.n++].id = info->appdomain;
    }
    if (info->assembly) {
        refs.r[refs.n].kind = K_ASSEMBLY;
        refs.r[refs.n++].id = info->assembly;
    }
    return idm_load(map, K_MODULE, module_id, info, &refs, seq);
}

int mdt_idmap_module_load(mdt_idmap *map, uintptr_t module_id, const mdt_idmap_module_info *info,
                          uint64_t seq)
{
    IDM_TRACED(map, module_load(map, module_id, info, seq),
               idm_trace_module(map, module_id, info, seq, rc));
}

uint64_t mdt_idmap_module_changes(const mdt_idmap *map)
{
    return map ? atomic_load_explicit(&((mdt_idmap *)map)->modchanges, memory_order_relaxed) : 0;
}

static int module_each(uint64_t *changes, mdt_idmap *map, mdt_idmap_module_visit_fn fn,
                       void *payload)
{
    if (!map || !fn)
        return mdt__fail_simple(MDT_EINVAL, "idmap: bad module walk arguments");
    int rc = idm_lock(map);
    if (rc)
        return rc;
    if (changes)
        *changes = atomic_load_explicit(&map->modchanges, memory_order_relaxed);
    struct idm_tab *t = atomic_load_explicit(&map->tab[K_MODULE], memory_order_relaxed);
    for (size_t i = 0; i < t->cap && rc == 0; i++) {
        struct idm_head *h = idm_slot(t, i);
        uintptr_t id = atomic_load_explicit(&h->key, memory_order_relaxed);
        if (!id || !idm_live(h))
            continue;
        mdt_idmap_module_info info;
        idm_read_module(map, &info, id, 0);
        struct mcur c;
        read_cur(h, &c);
        const struct idm_path *p = (const struct idm_path *)c.path;
        rc = fn(payload, id, &info, p ? p->s : NULL);
    }
    idm_unlock(map);
    return rc;
}

int mdt_idmap_module_each(uint64_t *changes, mdt_idmap *map, mdt_idmap_module_visit_fn fn,
                          void *payload)
{
    /* The recorder's mutex comes before the map's, here too: a callback's
     * writer call then fails on the map's mutex, as without a recorder. */
    IDM_TRACED(map, module_each(changes, map, fn, payload), idm_trace_leave(map));
}

static int unload(mdt_idmap *map, int kind, uintptr_t id, uint64_t seq)
{
    if (!map || !id)
        return mdt__fail_simple(MDT_EINVAL, "idmap: bad unload arguments");
#ifdef MDT_IDMAP_RECORD
    static const char *const ev[K_NKINDS] = {[K_MODULE] = "module_unload",
                                             [K_DOMAIN] = "domain_shutdown",
                                             [K_ASSEMBLY] = "assembly_unload"};
    idm_trace_enter(map);
    int rc = idm_unload_call(map, kind, id, seq);
    idm_trace_call(map, ev[kind], 1, id, 0, 0, seq, rc);
    return rc;
#else
    return idm_unload_call(map, kind, id, seq);
#endif
}

int mdt_idmap_module_unload(mdt_idmap *map, uintptr_t module_id, uint64_t seq)
{
    return unload(map, K_MODULE, module_id, seq);
}

int mdt_idmap_appdomain_shutdown(mdt_idmap *map, uintptr_t appdomain, uint64_t seq)
{
    return unload(map, K_DOMAIN, appdomain, seq);
}

int mdt_idmap_assembly_unload(mdt_idmap *map, uintptr_t assembly, uint64_t seq)
{
    return unload(map, K_ASSEMBLY, assembly, seq);
}
