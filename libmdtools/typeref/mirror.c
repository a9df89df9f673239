/* The module set as a mirror of a profiler's runtime-ID map: the map learns
 * which modules the runtime has loaded (with unload and attach precedence,
 * tokens/), the set is what resolution looks at; mdt_modset_mirror() makes
 * the second follow the first, in one snapshot per call. The map is read
 * through its public API only (tokens/ is below typeref/ and knows nothing
 * of sets). Lock order: set, then map. */
#define _DEFAULT_SOURCE /* strdup */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <mdtools/errors.h>
#include <mdtools/idmap.h>
#include <mdtools/tables.h>

#include "typeref/modset_int.h"
#include "util/error.h"

/* One live module of the map, as the set should hold it. */
struct want {
    mdt_module_desc d;
    uintptr_t assembly; /* the map's assembly tag, for grouping .netmodules */
    bool manifest;      /* its image has an Assembly row */
    bool kept;          /* the set already holds it as it is */
    char *path;         /* malloc'ed copy */
};

struct collect {
    struct want *w;
    size_t n, cap;
};

static int collect_one(void *payload, uintptr_t id, const mdt_idmap_module_info *info,
                       const char *path)
{
    struct collect *c = payload;
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 64;
        struct want *w = realloc(c->w, cap * sizeof *w);
        if (!w)
            return MDT_ENOMEM;
        c->w = w;
        c->cap = cap;
    }
    struct want *w = &c->w[c->n];
    memset(w, 0, sizeof *w);
    if (path && !(w->path = strdup(path)))
        return MDT_ENOMEM;
    c->n++;
    w->d.id = id;
    w->d.image = info->image;
    w->d.appdomain = info->appdomain;
    w->d.path = w->path;
    w->assembly = info->assembly;
    w->manifest = info->image && mdt_table_rows(info->image, MDT_TABLE_Assembly) > 0;
    return 0;
}

static int by_id(const void *a, const void *b)
{
    uintptr_t x = ((const struct want *)a)->d.id, y = ((const struct want *)b)->d.id;
    return x < y ? -1 : x > y;
}

static struct want *find(const struct collect *c, uintptr_t id)
{
    struct want key = {.d.id = id};
    if (!c->n)
        return NULL;
    return bsearch(&key, c->w, c->n, sizeof *c->w, by_id);
}

static bool same_str(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* A .netmodule's manifest: the module with an Assembly row that shares its
 * AppDomain and assembly tag (0 when the map gave no tag: the set then
 * finds it by File name). */
static void group_netmodules(struct collect *c)
{
    for (size_t i = 0; i < c->n; i++) {
        struct want *w = &c->w[i];
        if (w->manifest || !w->d.image || !w->assembly)
            continue;
        for (size_t j = 0; j < c->n; j++)
            if (c->w[j].manifest && c->w[j].assembly == w->assembly &&
                c->w[j].d.appdomain == w->d.appdomain) {
                w->d.manifest = c->w[j].d.id;
                break;
            }
    }
}

static void collect_free(struct collect *c)
{
    for (size_t i = 0; i < c->n; i++)
        free(c->w[i].path);
    free(c->w);
}

int mdt_modset_mirror(mdt_modset *set, struct mdt_idmap *map)
{
    if (!set || !map)
        return mdt__fail_simple(MDT_EINVAL, "mdt_modset_mirror: no set or no map");
    pthread_mutex_lock(&set->lock);
    if (set->mirror == map && set->mirror_changes == mdt_idmap_module_changes(map)) {
        pthread_mutex_unlock(&set->lock);
        return 0;
    }
    struct collect c = {0};
    uint64_t changes = 0;
    uintptr_t *remove = NULL;
    mdt_module_desc *add = NULL;
    int rc = mdt_idmap_module_each(&changes, map, collect_one, &c);
    if (rc)
        goto out;
    if (c.n) /* c.w is NULL for an empty map */
        qsort(c.w, c.n, sizeof *c.w, by_id);
    group_netmodules(&c);

    /* A module stays when the map still has it as the set knows it. */
    remove = malloc((set->nlive ? set->nlive : 1) * sizeof *remove);
    add = malloc((c.n ? c.n : 1) * sizeof *add);
    if (!remove || !add) {
        rc = MDT_ENOMEM;
        goto out;
    }
    size_t nremove = 0, nadd = 0;
    for (uint32_t i = 0; i < set->nlive; i++) {
        const struct tr_mod *m = set->live[i];
        struct want *w = find(&c, m->id);
        if (w && w->d.image == m->img && w->d.appdomain == m->domain &&
            same_str(w->path, m->path) && w->d.manifest == m->manifest_req)
            w->kept = true;
        else
            remove[nremove++] = m->id;
    }
    for (size_t i = 0; i < c.n; i++)
        if (!c.w[i].kept)
            add[nadd++] = c.w[i].d;
    rc = nremove || nadd ? tr_modset_change_locked(set, remove, nremove, add, nadd, 0) : 0;
    if (rc == 0) {
        set->mirror = map;
        set->mirror_changes = changes;
    }
out:
    pthread_mutex_unlock(&set->lock);
    free(remove);
    free(add);
    collect_free(&c);
    if (rc == MDT_ENOMEM)
        return mdt__fail_simple(rc, "mdt_modset_mirror: out of memory");
    return rc;
}
