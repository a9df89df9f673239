/* The executable ranges of the loaded modules' images, published for the
 * SIGPROF handler.
 *
 * A managed frame's caller comes from its prolog as a return address read
 * off the stack, and the handler accepts it only where it knows code
 * lives: a code range of the map, or (here) the executable mappings of a
 * module's image (maps.c: the module file's own private r-x mappings,
 * never a neighbour's), which is where ReadyToRun code sits before the map
 * has learnt its methods. After an attach the map learns ReadyToRun code
 * only from sampled addresses, so without this a caller in ReadyToRun code
 * would end every stack that reaches it, and never be learnt.
 *
 * The table is an array sorted by address, replaced whole (under
 * mods_lock) on every module load that brings executable ranges (the
 * published table and the new module's ranges merged: rebuilding it from
 * every module, each looked up in the map, cost MSBuild's ~120 loads ~4 ms,
 * the square of the modules) and on every module, assembly or AppDomain
 * unload (rebuilt from the live modules), and swapped in with one
 * atomic store. The handler loads the pointer once per lookup, after its
 * slot's `busy` increment (sampler.c); the writer, after the store, waits
 * until no handler is inside any slot (mdp_sampler_quiesce) and only then
 * frees the old array: a handler that read the old pointer has left, a
 * later one reads the new (both sides seq_cst: Dekker). The same wait,
 * inside the unload event, keeps an unloading image's code mapped for any
 * handler still reading it. */
#include "config.h"

#include <stdlib.h>

#include <mdtools/idmap.h>

#include "core/base.h"
#include "core/unwind.h"
#include "core/sampler.h"

struct collect {
    mdp_core *core;
    struct mdp_exec_table *t; /* NULL: counting */
    size_t n;
};

/* The i-th executable range of module m, as the handler reads it. */
static struct mdp_exec_range exec_range(const struct mdp_module *m, size_t i)
{
    return (struct mdp_exec_range){(uintptr_t)m->exec[i].start,
                                   (uintptr_t)m->exec[i].start + m->exec[i].len,
                                   (uintptr_t)m->base,
                                   m->rf,
                                   m->nrf,
                                   m->id};
}

static void visit(void *payload, mdp_key key, void *val)
{
    struct collect *c = payload;
    struct mdp_module *m = val;
    mdt_idmap_module_info info;
    (void)key;
    if (!m->nexec || mdt_idmap_module_lookup(&info, c->core->map, m->id, 0) != 0)
        return; /* no code, or unloaded */
    for (size_t i = 0; i < m->nexec; i++, c->n++)
        if (c->t)
            c->t->r[c->n] = exec_range(m, i);
}

static int by_start(const void *a, const void *b)
{
    const struct mdp_exec_range *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Publish t (NULL: none) and free the table it replaces once no handler
 * can read it. */
static int swap_in(mdp_core *core, struct mdp_exec_table *t)
{
    /* Out of memory: no table at all rather than the old one, which may
     * hold an unloading image's code (callers in ReadyToRun code the map
     * does not know then end their stacks, as they did without it). */
    struct mdp_exec_table *old = atomic_exchange(&core->exec, t);
    if (mdp_sampler_quiesce(core) == 0)
        free(old);
    /* else a handler is stuck inside (a stopped thread): leaking the old
     * array is safer than freeing it under the handler */
    return t ? 0 : -1;
}

int mdp_exec_publish(mdp_core *core)
{
    if (!core->slots)
        return 0; /* not sampling: no handler to tell */
    struct collect c = {core, NULL, 0};
    mdp_pmap_each(&core->modules, visit, &c);
    struct mdp_exec_table *t = malloc(sizeof *t + c.n * sizeof t->r[0]);
    if (t) {
        c.t = t;
        c.n = 0;
        mdp_pmap_each(&core->modules, visit, &c);
        t->n = c.n;
        qsort(t->r, t->n, sizeof t->r[0], by_start);
    }
    return swap_in(core, t);
}

int mdp_exec_publish_add(mdp_core *core, const struct mdp_module *m)
{
    if (!core->slots)
        return 0;
    const struct mdp_exec_table *cur = atomic_load(&core->exec);
    if (!cur) /* none yet, or lost to a failed allocation: from every module */
        return mdp_exec_publish(core);
    struct mdp_exec_range add[MDP_MAX_IMAGE_RANGES];
    size_t na = 0;
    for (size_t i = 0; i < m->nexec && na < MDP_MAX_IMAGE_RANGES; i++)
        add[na++] = exec_range(m, i);
    qsort(add, na, sizeof add[0], by_start);
    struct mdp_exec_table *t = malloc(sizeof *t + (cur->n + na) * sizeof t->r[0]);
    if (t) { /* merge: both in address order */
        size_t i = 0, j = 0, n = 0;
        while (i < cur->n || j < na)
            t->r[n++] =
                j == na || (i < cur->n && cur->r[i].lo <= add[j].lo) ? cur->r[i++] : add[j++];
        t->n = n;
    }
    return swap_in(core, t);
}

/* The executable range holding at, or NULL. */
static const struct mdp_exec_range *range_of(const struct mdp_exec_table *t, uintptr_t at)
{
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->r[mid].lo <= at)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo == 0 || at >= t->r[lo - 1].hi ? NULL : &t->r[lo - 1];
}

int mdp_exec_r2r_function(const mdp_core *core, uintptr_t ip, uintptr_t *start, size_t *size)
{
    const struct mdp_exec_table *t = atomic_load(&core->exec);
    if (!t || !t->n || ip < 4096)
        return 0;
    const struct mdp_exec_range *x = range_of(t, ip);
    if (!x || !x->rf || ip < x->base)
        return 0;
    /* the last entry beginning at or below ip's RVA */
    uintptr_t rva = ip - x->base;
    uint32_t lo = 0, hi = x->nrf;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (x->rf[3 * (size_t)mid] <= rva)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return 0;
    const uint32_t *e = &x->rf[3 * (size_t)(lo - 1)];
    uintptr_t b = x->base + e[0], end = x->base + e[1];
    if (e[1] <= e[0] || ip >= end || b < x->lo || end > x->hi)
        return 0; /* a gap between methods, or an entry outside the code */
    *start = b;
    *size = end - b;
    return 1;
}

int mdp_exec_module_of(const mdp_core *core, uintptr_t ip, uintptr_t *module)
{
    const struct mdp_exec_table *t = atomic_load(&core->exec);
    const struct mdp_exec_range *x = t && t->n ? range_of(t, ip) : NULL;
    if (!x)
        return 0;
    *module = x->module;
    return 1;
}

int mdp_exec_return_site(const mdp_core *core, uintptr_t ret)
{
    const struct mdp_exec_table *t = atomic_load(&core->exec);
    if (!t || !t->n || ret < 4096)
        return 0;
    /* the last range starting at or below the call's last byte */
    uintptr_t at = ret - 1;
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->r[mid].lo <= at)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || at >= t->r[lo - 1].hi)
        return 0;
    return mdp_follows_call((const uint8_t *)ret, ret - t->r[lo - 1].lo);
}

void mdp_exec_free(mdp_core *core)
{
    free(atomic_exchange(&core->exec, NULL));
}
