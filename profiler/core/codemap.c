/* Code versions: where each version of a function's native code lies (its
 * regions, recorded at JIT time together with the map's code ranges) and,
 * fetched from the runtime the first time a sample needs it, its
 * IL-to-native map, so the drain can give each frame the IL offset of the
 * sampled instruction (a leaf) or of the call (a caller).
 *
 * Every version counts: tier-0 code, its tier-1 replacement and OSR code all
 * stay executable and each has its own regions and map. An address reused
 * after an unload gets a new serial number, so an IL map cached for the code
 * that lived there before is never applied to the new code. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "core/base.h"
#include "core/naming.h"
#include "core/naming_state.h"

int mdp_ev_code(mdp_core *core, uint64_t seq, uintptr_t fn, const mdp_code_region *regions,
                size_t nregions)
{
    int result = 0;
    size_t base = 0;
    mdt_idmap_function_info fi;
    uint64_t gen = mdt_idmap_function_lookup(&fi, NULL, 0, core->map, fn, 0) == 0 ? fi.gen : 0;
    for (size_t i = 0; i < nregions; i++) {
        if (!regions[i].size)
            continue;
        int r = mdt_idmap_code_add(core->map, regions[i].start, regions[i].size, fn, seq);
        if (r < 0) {
            result = r;
        } else if (r == MDT_IDMAP_APPLIED || r == MDT_IDMAP_DUPLICATE) {
            struct mdp_region *reg = malloc(sizeof *reg);
            if (reg) {
                pthread_mutex_lock(&core->naming->code_lock);
                *reg = (struct mdp_region){regions[i].start,
                                           regions[i].size,
                                           regions[0].start,
                                           base,
                                           ++core->naming->region_serial,
                                           fn,
                                           gen};
                struct mdp_region *old = mdp_pmap_get(&core->naming->regions, reg->start, 0);
                if (old && old->size == reg->size && old->version == reg->version &&
                    old->base == reg->base && old->fn == fn && old->fn_gen == gen) {
                    free(reg); /* the same region again: keep its serial and IL map */
                } else if (mdp_pmap_put(&core->naming->regions, reg->start, 0, reg) == 0) {
                    if (old) /* the drain's texts of its addresses are stale */
                        atomic_fetch_add(&core->naming->code_epoch, 1);
                    free(old);
                } else {
                    free(reg);
                }
                pthread_mutex_unlock(&core->naming->code_lock);
            }
        }
        base += regions[i].size;
    }
    return result;
}

int mdp_code_region_get(mdp_core *core, uintptr_t start, struct mdp_region *out)
{
    pthread_mutex_lock(&core->naming->code_lock);
    struct mdp_region *r = mdp_pmap_get(&core->naming->regions, start, 0);
    if (r)
        *out = *r;
    pthread_mutex_unlock(&core->naming->code_lock);
    return r ? 0 : -1;
}

static int by_start(const void *a, const void *b)
{
    const struct mdp_il_entry *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

/* An empty map is cached too (as n == 0) so a method without one is asked
 * about once. */
const struct mdp_ilmap *mdp_code_ilmap(mdp_core *core, const struct mdp_region *r)
{
    struct mdp_ilmap *m = mdp_pmap_get(&core->naming->ilmaps, r->version, r->serial);
    if (m)
        return m->n ? m : NULL;
    if (!mdp_ops_live(core) || !core->ops.il_map)
        return NULL;
    size_t cap = 64;
    for (int tries = 0; tries < 4; tries++) {
        m = malloc(sizeof *m + cap * sizeof m->e[0]);
        if (!m)
            return NULL;
        int n = core->ops.il_map(core->ops.payload, r->version, m->e, cap);
        if (n < 0)
            n = 0;
        if ((size_t)n <= cap) {
            m->n = (size_t)n;
            qsort(m->e, m->n, sizeof m->e[0], by_start);
            if (mdp_pmap_put(&core->naming->ilmaps, r->version, r->serial, m) != 0) {
                free(m);
                return NULL;
            }
            return m->n ? m : NULL;
        }
        free(m);
        cap = (size_t)n;
    }
    return NULL;
}

static void free_val(void *payload, mdp_key key, void *val)
{
    free(val);
}

void mdp_code_forget_ilmaps(mdp_core *core)
{
    mdp_pmap_each(&core->naming->ilmaps, free_val, NULL);
    mdp_pmap_free(&core->naming->ilmaps);
}

void mdp_code_free(mdp_core *core)
{
    mdp_code_forget_ilmaps(core);
    mdp_pmap_each(&core->naming->regions, free_val, NULL);
    mdp_pmap_free(&core->naming->regions);
}

int mdp_naming_new(mdp_core *core)
{
    struct mdp_naming *n = calloc(1, sizeof *n); /* every table empty */
    if (!n)
        return -1;
    pthread_mutex_init(&n->code_lock, NULL);
    core->naming = n;
    return 0;
}

void mdp_naming_free(mdp_core *core)
{
    if (!core->naming)
        return;
    mdp_frames_free(core);
    mdp_code_free(core);
    pthread_mutex_destroy(&core->naming->code_lock);
    free(core->naming);
    core->naming = NULL;
}
