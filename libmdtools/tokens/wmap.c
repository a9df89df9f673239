/* A plain hash map from (kind, ID) to a 64-bit value, used only by writers
 * with the map's mutex held: unload history (last unload seq of IDs that came
 * back, tombstones of AppDomains and assemblies) and the heads of dependents
 * lists. Readers never see it, so it is an ordinary open-addressing table
 * with linear probing and backward-shift deletion, on malloc. */
#include "config.h"

#include <stdbool.h>
#include <stdlib.h>

#include <mdtools/errors.h>

#include "tokens/base_int.h"
#include "tokens/wmap_int.h"

static size_t home(const struct idm_wmap *m, int kind, uintptr_t id)
{
    return (size_t)idm_hash((uint64_t)id ^ (uint64_t)kind * 0x9E3779B97F4A7C15ull) & (m->cap - 1);
}

uint64_t *idm_wmap_get(const struct idm_wmap *m, int kind, uintptr_t id)
{
    if (m->cap == 0)
        return NULL;
    for (size_t i = home(m, kind, id);; i = (i + 1) & (m->cap - 1)) {
        struct idm_went *e = &m->e[i];
        if (e->kind == 0)
            return NULL;
        if (e->id == id && e->kind == (uint32_t)kind + 1)
            return &e->val;
    }
}

static int grow(struct idm_wmap *m)
{
    size_t ncap = m->cap ? m->cap * 2 : 64;
    struct idm_went *n = calloc(ncap, sizeof *n);
    struct idm_wmap nm = {n, ncap, 0};
    if (!n)
        return MDT_ENOMEM;
    for (size_t i = 0; i < m->cap; i++) {
        struct idm_went *e = &m->e[i];
        if (e->kind == 0)
            continue;
        size_t j = home(&nm, (int)e->kind - 1, e->id);
        while (n[j].kind != 0)
            j = (j + 1) & (ncap - 1);
        n[j] = *e;
        nm.n++;
    }
    free(m->e);
    *m = nm;
    return 0;
}

int idm_wmap_put(struct idm_wmap *m, int kind, uintptr_t id, uint64_t val)
{
    uint64_t *v = idm_wmap_get(m, kind, id);
    if (v) {
        *v = val;
        return 0;
    }
    if ((m->n + 1) * 2 > m->cap) {
        int e = grow(m);
        if (e)
            return e;
    }
    size_t i = home(m, kind, id);
    while (m->e[i].kind != 0)
        i = (i + 1) & (m->cap - 1);
    m->e[i] = (struct idm_went){id, val, (uint32_t)kind + 1};
    m->n++;
    return 0;
}

void idm_wmap_del(struct idm_wmap *m, int kind, uintptr_t id)
{
    uint64_t *v = idm_wmap_get(m, kind, id);
    if (!v)
        return;
    size_t mask = m->cap - 1;
    size_t i =
        (size_t)((struct idm_went *)(void *)((char *)v - offsetof(struct idm_went, val)) - m->e);
    m->e[i].kind = 0;
    m->n--;
    /* Backward shift: move later entries of the cluster into the hole when
     * their home does not lie cyclically in (hole, j]. */
    for (size_t j = (i + 1) & mask; m->e[j].kind != 0; j = (j + 1) & mask) {
        size_t h = home(m, (int)m->e[j].kind - 1, m->e[j].id);
        bool between = i <= j ? (i < h && h <= j) : (i < h || h <= j);
        if (between)
            continue;
        m->e[i] = m->e[j];
        m->e[j].kind = 0;
        i = j;
    }
}

void idm_wmap_free(struct idm_wmap *m)
{
    free(m->e);
    m->e = NULL;
    m->cap = m->n = 0;
}
