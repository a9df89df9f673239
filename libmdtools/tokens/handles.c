/* Module handles: class and function slots are 32 bytes, too small for a
 * ModuleID, so they name their module by a 24-bit handle, an index into an
 * array of ModuleIDs that readers load through the map (idm_module_of). A
 * handle stands for one ModuleID value, not for a module record: a slot may
 * name a module the map does not know, and a dead slot still names the
 * module its content had (lifetime.c relies on that). The writer counts the
 * slots that hold each handle; a handle whose count drops to zero waits for
 * one grace period before it is given to another ModuleID, so a reader that
 * copied it from a slot that was rewritten or dropped meanwhile still reads
 * the ModuleID it stood for (and then sees the slot changed). The array
 * only grows: a bigger copy is published and the old one retired, so a
 * handle copied from a published slot is inside whatever array a reader
 * loads afterwards. */
#define _DEFAULT_SOURCE /* clockid_t, pthread_getcpuclockid (grace_int.h) */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "tokens/grace_int.h"
#include "tokens/handles_int.h"
#include "tokens/idmap_int.h"
#include "tokens/wmap_int.h"

/* The writer's handles (m->hd): which ModuleID holds which handle and how
 * many slots hold it, the free handles, and those released but not yet
 * past a grace period. */
struct idm_handles {
    struct idm_wmap refs; /* ModuleID -> handle | IDM_HD_SCANNED | slots holding it << 32 */
    uint32_t next;        /* handles below it have been used */
    uint32_t *free, nfree, capfree;
    struct {
        uint32_t handle;
        uint64_t period; /* grace periods completed when it was released */
    } * pending;
    size_t npending, cappending;
    size_t bytes; /* the arrays above and the current idm_mods */
};

/* The module's dependents are found by scanning (deps.c). */
#define IDM_HD_SCANNED (UINT64_C(1) << 31)

static size_t mods_bytes(size_t cap)
{
    return sizeof(struct idm_mods) + cap * sizeof(uintptr_t);
}

static struct idm_mods *mods_new(size_t cap)
{
    struct idm_mods *md = calloc(1, mods_bytes(cap));
    if (md)
        md->cap = cap;
    return md;
}

int idm_handles_init(mdt_idmap *m)
{
    struct idm_mods *md = mods_new(64);
    m->hd = calloc(1, sizeof *m->hd);
    if (!md || !m->hd) {
        free(md);
        free(m->hd);
        m->hd = NULL;
        return MDT_ENOMEM;
    }
    atomic_init(&m->mods, md);
    m->hd->next = 1; /* handle 0 is module 0 */
    m->hd->bytes = mods_bytes(64);
    return 0;
}

/* A handle for a new ModuleID: a released one whose grace period is over,
 * else the next unused one (growing the array). */
static uint32_t fresh_handle(mdt_idmap *m, uintptr_t module)
{
    struct idm_handles *hd = m->hd;
    uint32_t h;
    if (hd->nfree > 0) {
        h = hd->free[--hd->nfree];
    } else {
        if (hd->next > IDM_HANDLE_MAX)
            return UINT32_MAX;
        struct idm_mods *md = atomic_load_explicit(&m->mods, memory_order_relaxed);
        if (hd->next >= md->cap) {
            struct idm_mods *n = mods_new(md->cap * 2);
            if (!n)
                return UINT32_MAX;
            for (size_t i = 0; i < md->cap; i++)
                atomic_init(&n->id[i], atomic_load_explicit(&md->id[i], memory_order_relaxed));
            atomic_store_explicit(&m->mods, n, memory_order_seq_cst);
            hd->bytes += mods_bytes(n->cap) - mods_bytes(md->cap);
            idm_retire(&m->g, md, mods_bytes(md->cap));
        }
        h = hd->next++;
    }
    /* Published by the release store that publishes the slot holding it. */
    atomic_store_explicit(&atomic_load_explicit(&m->mods, memory_order_relaxed)->id[h], module,
                          memory_order_relaxed);
    return h;
}

uint32_t idm_handle_get(mdt_idmap *m, uintptr_t module)
{
    if (!module)
        return 0;
    uint64_t *v = idm_wmap_get(&m->hd->refs, 0, module);
    if (v) {
        *v += (uint64_t)1 << 32;
        return (uint32_t)*v & IDM_HANDLE_MAX;
    }
    if (m->hd->nfree == m->hd->capfree) {
        /* Room to release it again later without allocating. */
        uint32_t ncap = m->hd->capfree ? m->hd->capfree * 2 : 64;
        uint32_t *n = realloc(m->hd->free, ncap * sizeof *n);
        if (!n)
            return UINT32_MAX;
        m->hd->free = n;
        m->hd->bytes += (ncap - m->hd->capfree) * sizeof *n;
        m->hd->capfree = ncap;
    }
    uint32_t h = fresh_handle(m, module);
    if (h == UINT32_MAX)
        return h;
    if (idm_wmap_put(&m->hd->refs, 0, module, (uint64_t)1 << 32 | h)) {
        m->hd->free[m->hd->nfree++] = h; /* never seen by a reader */
        return UINT32_MAX;
    }
    return h;
}

void idm_handle_put(mdt_idmap *m, uint32_t h)
{
    if (h == 0)
        return;
    struct idm_mods *md = atomic_load_explicit(&m->mods, memory_order_relaxed);
    uintptr_t module = atomic_load_explicit(&md->id[h], memory_order_relaxed);
    uint64_t *v = idm_wmap_get(&m->hd->refs, 0, module);
    if (!v || ((uint32_t)*v & IDM_HANDLE_MAX) != h)
        return; /* not held: a bug elsewhere; never hand it out twice */
    *v -= (uint64_t)1 << 32;
    if (*v >> 32)
        return;
    idm_wmap_del(&m->hd->refs, 0, module);
    struct idm_handles *hd = m->hd;
    if (hd->npending == hd->cappending) {
        size_t ncap = hd->cappending ? hd->cappending * 2 : 64;
        void *n = realloc(hd->pending, ncap * sizeof hd->pending[0]);
        if (!n)
            return; /* the handle is lost, not reused: harmless */
        hd->pending = n;
        hd->bytes += (ncap - hd->cappending) * sizeof hd->pending[0];
        hd->cappending = ncap;
    }
    hd->pending[hd->npending].handle = h;
    hd->pending[hd->npending++].period = m->g.periods;
}

uint32_t idm_module_slots(const mdt_idmap *m, uintptr_t module, uint32_t *hd, bool *scanned)
{
    const uint64_t *v = idm_wmap_get(&m->hd->refs, 0, module);
    *hd = v ? (uint32_t)*v & IDM_HANDLE_MAX : 0;
    *scanned = v && (*v & IDM_HD_SCANNED);
    return v ? (uint32_t)(*v >> 32) : 0;
}

void idm_module_set_scanned(mdt_idmap *m, uintptr_t module)
{
    uint64_t *v = idm_wmap_get(&m->hd->refs, 0, module);
    if (v)
        *v |= IDM_HD_SCANNED;
}

/* After a grace period: released handles become free. Grace periods run
 * under the writer mutex, so one that completed after a release began
 * after it. */
void idm_handles_reclaim(mdt_idmap *m)
{
    struct idm_handles *hd = m->hd;
    size_t k = 0;
    for (size_t i = 0; i < hd->npending; i++) {
        if (hd->pending[i].period < m->g.periods && hd->nfree < hd->capfree)
            hd->free[hd->nfree++] = hd->pending[i].handle;
        else
            hd->pending[k++] = hd->pending[i];
    }
    hd->npending = k;
}

void idm_handles_free(mdt_idmap *m)
{
    struct idm_handles *hd = m->hd;
    if (!hd)
        return;
    free(atomic_load_explicit(&m->mods, memory_order_relaxed));
    free(hd->free);
    free(hd->pending);
    idm_wmap_free(&hd->refs);
    free(hd);
    m->hd = NULL;
}

size_t idm_handles_bytes(const mdt_idmap *m)
{
    return m->hd->refs.cap * sizeof(struct idm_went) + m->hd->bytes;
}
