/* The module set: registered modules, their assembly identities (ECMA-335
 * II.22.2 Assembly, computed once at add), multi-module assemblies (II.6.5,
 * II.22.19 File), and immutable snapshots ("views") published RCU-style.
 *
 * Readers: mdt_modset_acquire() reads the set's epoch, counts itself in the
 * acquire window of that epoch's parity (acquiring[epoch & 1]), loads the
 * current snapshot, takes a reference on it and leaves the window. Writers
 * serialize on the mutex, build a new snapshot with malloc, publish it with
 * an atomic store and retire the old one, noting the epoch E at that time.
 * A retired snapshot is freed once the epoch has advanced twice since E
 * and its reference count is zero. The epoch advances from e to e + 1 only
 * when a writer sees acquiring[(e - 1) & 1] at zero, which new readers no
 * longer touch (they count under e), so a window full of readers that
 * never stop cannot hold it back: only the few that read the epoch before
 * the last advance must leave. Why two advances suffice: a reader that can
 * still reach a snapshot retired at E loaded the pointer before it was
 * unpublished, so it was counted in its window before that (all these
 * atomics are sequentially consistent); the advances E -> E + 1 and
 * E + 1 -> E + 2 each saw one parity at zero after the unpublish, so that
 * reader had left its window and either holds a reference (counted) or
 * never will. A reader whose epoch load came earlier but whose count came
 * after a check loads the pointer after that check, which was after the
 * unpublish: it sees a newer snapshot. A removed module is freed once no
 * retired snapshot older than its removal remains. Readers never free,
 * never wait and never call talloc. A writer spins a moment for the
 * stragglers of the previous epoch and otherwise leaves the advance to the
 * next writer call, unless more than TR_YOUNG_MAX retired snapshots are
 * waiting for it: then it waits (yields, sleeps) until the stragglers, at
 * most a few instructions from the end of their window, have left. So the
 * snapshots a set holds are bounded by that plus the views readers hold,
 * however constant the reader traffic; only a reader stopped inside its
 * window of a few instructions would make a writer wait. */
#define _DEFAULT_SOURCE /* nanosleep */
#include "config.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <talloc.h>
#include <time.h>

#include <mdtools/errors.h>
#include <mdtools/image.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>

#include "typeref/cache_int.h"
#include "typeref/index_int.h"
#include "typeref/modset_int.h"
#include "util/error.h"

int tr_ascii_casecmp(const char *a, const char *b)
{
    for (;; a++, b++) {
        unsigned char x = (unsigned char)*a, y = (unsigned char)*b;
        if (x >= 'A' && x <= 'Z')
            x = (unsigned char)(x + 32);
        if (y >= 'A' && y <= 'Z')
            y = (unsigned char)(y + 32);
        if (x != y)
            return x < y ? -1 : 1;
        if (!x)
            return 0;
    }
}

uint32_t tr_name_hash_ci(const char *s)
{
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        unsigned char c = *p;
        if (c >= 'A' && c <= 'Z')
            c = (unsigned char)(c + 32);
        h ^= c;
        h *= 16777619u;
    }
    return h ^ (h >> 15);
}

static char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p)
        memcpy(p, s, n);
    return p;
}

/* ---- module records ------------------------------------------------------ */

static void mod_free(struct tr_mod *m)
{
    if (!m)
        return;
    tr_index_free(m);
    free(m->name);
    free(m->path);
    free(m->culture);
    talloc_free(m->owned);
    free(m);
}

static const char *basename_of(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static struct tr_mod *mod_new(const mdt_module_desc *d)
{
    struct tr_mod *m = calloc(1, sizeof *m);
    const char *name = d->name;
    if (!m)
        return NULL;
    m->id = d->id;
    m->img = d->image;
    m->domain = d->appdomain;
    m->manifest_req = d->manifest;
    if (d->image) {
        mdt_row r;
        const char *mname = NULL;
        if (mdt_row_get(&r, d->image, MDT_TABLE_Module, 1) ||
            mdt_row_string(&mname, NULL, &r, MDT_COL_Module_Name))
            m->bad = true;
        if (!name)
            name = mname;
        if (mdt_table_rows(d->image, MDT_TABLE_Assembly)) {
            if (mdt_assembly_identity(&m->ident, d->image) == 0)
                m->manifest = true;
            else
                m->bad = true;
        }
    }
    if (!name)
        name = d->path ? basename_of(d->path) : "";
    m->name = xstrdup(name);
    m->path = d->path ? xstrdup(d->path) : NULL;
    {
        const char *c = m->manifest && m->ident.culture ? m->ident.culture : "";
        m->culture = xstrdup(tr_ascii_casecmp(c, "neutral") ? c : "");
    }
    m->name_hash = tr_name_hash_ci(m->manifest && m->ident.name ? m->ident.name : "");
    if (!m->name || (d->path && !m->path) || !m->culture) {
        mod_free(m);
        return NULL;
    }
    return m;
}

/* ---- snapshots ----------------------------------------------------------- */

static void view_free(struct mdt_modview *v)
{
    if (!v)
        return;
    if (v->cache)
        for (uint32_t i = 0; i < v->n; i++) {
            struct tr_cache *c = atomic_load_explicit(&v->cache[i], memory_order_relaxed);
            if (c)
                tr_cache_free(c);
        }
    free(v->cache);
    free(v->mods);
    free(v->asm_of);
    free(v->idtab);
    free(v->ntab);
    free(v->nnext);
    free(v);
}

/* Does manifest a's File table name `name`? */
static bool lists_file(const struct tr_mod *a, const char *name)
{
    uint32_t n = tr_rows(a->img, MDT_TABLE_File);
    for (uint32_t i = 1; i <= n; i++) {
        mdt_row r;
        const char *f;
        if (mdt_row_get(&r, a->img, MDT_TABLE_File, i) ||
            mdt_row_string(&f, NULL, &r, MDT_COL_File_Name))
            continue;
        if (!tr_ascii_casecmp(f, name))
            return true;
    }
    return false;
}

uint32_t tr_assembly_module(const struct mdt_modview *v, uint32_t a, const char *name)
{
    for (uint32_t i = 0; i < v->n; i++)
        if (v->asm_of[i] == a && !tr_ascii_casecmp(v->mods[i]->name, name))
            return i;
    /* A .netmodule listed by several manifests belongs to the first one;
     * the others still find it, unless the caller tied it elsewhere. */
    if (!lists_file(v->mods[a], name))
        return TR_NONE;
    for (uint32_t i = 0; i < v->n; i++) {
        const struct tr_mod *m = v->mods[i];
        if (!m->manifest && !m->manifest_req && tr_visible(v, a, i) &&
            !tr_ascii_casecmp(m->name, name))
            return i;
    }
    return TR_NONE;
}

static uint32_t pow2_at_least(uint32_t n)
{
    uint32_t c = 8;
    while (c < n && c < (1u << 30))
        c <<= 1;
    return c;
}

static struct mdt_modview *view_build(mdt_modset *set)
{
    struct mdt_modview *v = calloc(1, sizeof *v);
    uint32_t n = set->nlive, *tail = NULL;
    if (!v)
        return NULL;
    v->n = n;
    v->gen = set->gen;
    atomic_init(&v->refs, 1);
    v->mods = malloc(sizeof *v->mods * (n ? n : 1));
    v->asm_of = malloc(sizeof *v->asm_of * (n ? n : 1));
    v->idmask = pow2_at_least(2 * n) - 1;
    v->idtab = calloc((size_t)v->idmask + 1, sizeof *v->idtab);
    v->nmask = pow2_at_least(2 * n) - 1;
    v->ntab = calloc((size_t)v->nmask + 1, sizeof *v->ntab);
    v->nnext = calloc(n ? n : 1, sizeof *v->nnext);
    v->cache = calloc(n ? n : 1, sizeof *v->cache);
    tail = calloc((size_t)v->nmask + 1, sizeof *tail);
    if (!v->mods || !v->asm_of || !v->idtab || !v->ntab || !v->nnext || !v->cache || !tail) {
        free(tail);
        view_free(v);
        return NULL;
    }
    for (uint32_t i = 0; i < n; i++) {
        struct tr_mod *m = set->live[i];
        v->mods[i] = m;
        uint32_t k = tr_id_hash(m->id) & v->idmask;
        while (v->idtab[k].id)
            k = (k + 1) & v->idmask;
        v->idtab[k] = (struct tr_idslot){m->id, i};
        if (m->manifest) {
            uint32_t b = m->name_hash & v->nmask;
            if (tail[b])
                v->nnext[tail[b] - 1] = i + 1;
            else
                v->ntab[b] = i + 1;
            tail[b] = i + 1;
        }
    }
    free(tail);
    /* Assemblies: manifests are their own; netmodules by request or File name. */
    for (uint32_t i = 0; i < n; i++) {
        struct tr_mod *m = v->mods[i];
        v->asm_of[i] = TR_NONE;
        if (m->manifest) {
            v->asm_of[i] = i;
        } else if (m->manifest_req) {
            uint32_t j = tr_view_find(v, m->manifest_req);
            if (j != TR_NONE && v->mods[j]->manifest)
                v->asm_of[i] = j;
        } else if (m->img && m->name[0]) {
            for (uint32_t j = 0; j < n; j++)
                if (v->mods[j]->manifest && tr_visible(v, i, j) &&
                    lists_file(v->mods[j], m->name)) {
                    v->asm_of[i] = j;
                    break;
                }
        }
    }
    return v;
}

/* Retired snapshots younger than two epochs a writer lets pile up before
 * it waits for the epoch to advance (see above). */
#define TR_YOUNG_MAX 2

/* Writer, lock held: advance the epoch once the readers counted under the
 * one before it have left their windows (a few instructions each). Without
 * `wait`, spin a moment for stragglers and otherwise leave it to the next
 * call; with it, keep trying, yielding and then sleeping: a reader
 * preempted inside its window needs the CPU back. */
static void advance_epoch(mdt_modset *set, bool wait)
{
    uint64_t e = atomic_load(&set->epoch);
    for (unsigned spins = 0; atomic_load(&set->acquiring[(e - 1) & 1]) != 0; spins++) {
        if (spins < 256) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
        } else if (!wait) {
            return;
        } else if (spins < 288) {
            sched_yield();
        } else {
            struct timespec ts = {0, 50000};
            nanosleep(&ts, NULL);
        }
    }
    atomic_store(&set->epoch, e + 1);
}

/* Writer, lock held: free retired snapshots and dead modules nobody can
 * see. Retired snapshots still within two epochs of their retirement are
 * at most TR_YOUNG_MAX after this; the others go as soon as no reader
 * holds them. */
static size_t reclaim_locked(mdt_modset *set)
{
    size_t held = 0, young = 0;
    uint64_t min_gen = UINT64_MAX, now = atomic_load(&set->epoch);
    for (struct mdt_modview *r = set->retired; r; r = r->next_retired)
        young += now - r->retired_epoch < 2;
    if (young) {
        advance_epoch(set, young > TR_YOUNG_MAX);
        advance_epoch(set, young > TR_YOUNG_MAX);
    }
    now = atomic_load(&set->epoch);
    for (struct mdt_modview **pp = &set->retired; *pp;) {
        struct mdt_modview *r = *pp;
        if (now - r->retired_epoch >= 2 && atomic_load(&r->refs) == 0) {
            *pp = r->next_retired;
            view_free(r);
        } else {
            pp = &r->next_retired;
        }
    }
    for (struct mdt_modview *r = set->retired; r; r = r->next_retired) {
        held++;
        if (r->gen < min_gen)
            min_gen = r->gen;
    }
    for (struct tr_mod **pp = &set->dead; *pp;) {
        struct tr_mod *m = *pp;
        if (m->dead_gen <= min_gen) {
            *pp = m->next_dead;
            mod_free(m);
        } else {
            pp = &m->next_dead;
        }
    }
    return held;
}

static void publish_locked(mdt_modset *set, struct mdt_modview *v)
{
    struct mdt_modview *old = atomic_exchange(&set->cur, v);
    if (old) {
        old->next_retired = set->retired;
        old->retired_epoch = atomic_load(&set->epoch);
        set->retired = old;
        atomic_fetch_sub(&old->refs, 1);
    }
    reclaim_locked(set);
}

static int modset_destroy(mdt_modset *set)
{
    view_free(atomic_load(&set->cur));
    while (set->retired) {
        struct mdt_modview *r = set->retired;
        set->retired = r->next_retired;
        view_free(r);
    }
    for (uint32_t i = 0; i < set->nlive; i++)
        mod_free(set->live[i]);
    free(set->live);
    while (set->dead) {
        struct tr_mod *m = set->dead;
        set->dead = m->next_dead;
        mod_free(m);
    }
    pthread_mutex_destroy(&set->lock);
    return 0;
}

int mdt_modset_new(void *mem_ctx, mdt_modset **out)
{
    mdt_modset *set = talloc_zero(mem_ctx, mdt_modset);
    struct mdt_modview *v;
    *out = NULL;
    if (!set)
        return mdt__fail_simple(MDT_ENOMEM, "out of memory creating a module set");
    if (pthread_mutex_init(&set->lock, NULL)) {
        talloc_free(set);
        return mdt__fail_simple(MDT_ENOMEM, "cannot create the module set's mutex");
    }
    atomic_init(&set->cur, NULL);
    atomic_init(&set->epoch, 2);
    atomic_init(&set->acquiring[0], 0);
    atomic_init(&set->acquiring[1], 0);
    talloc_set_destructor(set, modset_destroy);
    if (!(v = view_build(set))) {
        talloc_free(set);
        return mdt__fail_simple(MDT_ENOMEM, "out of memory creating a module set");
    }
    atomic_store(&set->cur, v);
    *out = set;
    return 0;
}

/* Writer, lock held: drop the modules `remove` and register `add`, as one
 * new snapshot; all or nothing. add_many, remove and the idmap mirror
 * (mirror.c) are this one operation, so a module can be replaced without
 * a snapshot in which it is missing. */
int tr_modset_change_locked(mdt_modset *set, const uintptr_t *remove, size_t nremove,
                            const mdt_module_desc *add, size_t nadd, unsigned flags)
{
    struct mdt_modview *cur = atomic_load(&set->cur), *v;
    mdt_errsave saved;
    if (nremove > set->nlive || nadd > UINT32_MAX / 2 - set->nlive)
        return mdt__fail_simple(nremove > set->nlive ? MDT_ENOTFOUND : MDT_ENOMEM,
                                "mdt_modset: too many modules in one change");
    /* Rows a new module's identity or a manifest's File table cannot give
     * are facts of the module (bad_image), not failures of the change. */
    mdt__err_save(&saved);
    /* Removed modules by their index in the current snapshot (= in live). */
    bool *gone = calloc(set->nlive ? set->nlive : 1, sizeof *gone);
    if (!gone)
        return mdt__fail_simple(MDT_ENOMEM, "out of memory changing the module set");
    for (size_t i = 0; i < nremove; i++) {
        uint32_t j = tr_view_find(cur, remove[i]);
        if (j == TR_NONE || gone[j]) {
            free(gone);
            if (j == TR_NONE)
                return mdt__fail_simple(MDT_ENOTFOUND, "mdt_modset_remove: no module %#jx",
                                        (uintmax_t)remove[i]);
            return mdt__fail_simple(MDT_EINVAL, "mdt_modset_remove: module %#jx named twice",
                                    (uintmax_t)remove[i]);
        }
        gone[j] = true;
    }
    for (size_t i = 0; i < nadd; i++) {
        uint32_t j = add[i].id ? tr_view_find(cur, add[i].id) : TR_NONE;
        bool dup = !add[i].id || (j != TR_NONE && !gone[j]);
        for (size_t k = 0; k < i && !dup; k++)
            dup = add[k].id == add[i].id;
        if (dup) {
            free(gone);
            return mdt__fail_simple(MDT_EINVAL,
                                    "mdt_modset_add: module ID %#jx is 0 or already registered",
                                    (uintmax_t)add[i].id);
        }
    }
    uint32_t base = set->nlive - (uint32_t)nremove, n = base + (uint32_t)nadd, kept = 0;
    struct tr_mod **live = malloc(sizeof *live * (n ? n : 1));
    if (!live)
        goto nomem;
    for (uint32_t i = 0; i < set->nlive; i++)
        if (!gone[i])
            live[kept++] = set->live[i];
    for (size_t i = 0; i < nadd; i++) {
        struct tr_mod *m = mod_new(&add[i]);
        if (!m)
            goto undo;
        live[kept++] = m;
    }
    struct tr_mod **old = set->live;
    uint32_t oldn = set->nlive;
    set->live = live;
    set->nlive = n;
    set->gen++;
    if (!(v = view_build(set))) {
        set->live = old;
        set->nlive = oldn;
        set->gen--;
        goto undo;
    }
    /* Nothing can fail any more. */
    for (uint32_t i = 0; i < oldn; i++)
        if (gone[i]) {
            old[i]->dead_gen = set->gen;
            old[i]->next_dead = set->dead;
            set->dead = old[i];
        }
    free(old);
    free(gone);
    for (size_t i = 0; i < nadd; i++)
        if ((flags & MDT_MODSET_OWN_IMAGE) && add[i].image)
            live[base + i]->owned = talloc_steal(set, (void *)add[i].image);
    publish_locked(set, v);
    mdt__err_restore(&saved);
    return 0;
undo:
    while (kept > base)
        mod_free(live[--kept]);
    free(live);
nomem:
    free(gone);
    return mdt__fail_simple(MDT_ENOMEM, "out of memory changing the module set");
}

int mdt_modset_update(mdt_modset *set, const uintptr_t *remove, size_t nremove,
                      const mdt_module_desc *add, size_t nadd, unsigned flags)
{
    if (!set || (nremove && !remove) || (nadd && !add))
        return mdt__fail_simple(MDT_EINVAL, "mdt_modset_update: no set, IDs or descriptors");
    pthread_mutex_lock(&set->lock);
    int rc = tr_modset_change_locked(set, remove, nremove, add, nadd, flags);
    pthread_mutex_unlock(&set->lock);
    return rc;
}

int mdt_modset_add_many(mdt_modset *set, const mdt_module_desc *descs, size_t n, unsigned flags)
{
    return mdt_modset_update(set, NULL, 0, descs, n, flags);
}

int mdt_modset_add(mdt_modset *set, const mdt_module_desc *desc, unsigned flags)
{
    if (!desc)
        return mdt__fail_simple(MDT_EINVAL, "mdt_modset_add: no descriptor");
    return mdt_modset_add_many(set, desc, 1, flags);
}

int mdt_modset_remove(mdt_modset *set, uintptr_t id)
{
    if (!set)
        return mdt__fail_simple(MDT_EINVAL, "mdt_modset_remove: no set");
    return mdt_modset_update(set, &id, 1, NULL, 0, 0);
}

size_t mdt_modset_reclaim(mdt_modset *set)
{
    size_t held;
    pthread_mutex_lock(&set->lock);
    held = reclaim_locked(set);
    pthread_mutex_unlock(&set->lock);
    return held;
}

uint64_t mdt_modset_generation(mdt_modset *set)
{
    mdt_modview *v = mdt_modset_acquire(set);
    uint64_t g = v->gen;
    mdt_modview_release(v);
    return g;
}
