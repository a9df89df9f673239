/* Dependents: for each thing (module, class, AppDomain, assembly) and each
 * kind of record, the records that name it, so that an unload can kill them
 * (the cascade in lifetime.c). An entry stands for "whatever record is in
 * this slot now, if it still names the thing": a record that died or
 * changed content makes its entry inert, and every walk checks.
 *
 * Two stores, because one entry per name per record is most of what the
 * writer keeps (2 to 3 names per record):
 *
 * - packed: the parents sorted by (ID, dkey), 16 bytes each, and for each a
 *   run of 4-byte slot indexes into the current table of the child kind,
 *   in no order. A table rebuild moves records, so idm_deps_remap
 *   translates the runs of that kind into the new table (and drops the
 *   records it left out);
 * - recent: what was added since the last merge, one array of (parent,
 *   child ID) entries in the order they came, 24 bytes each. A push
 *   appends, so a load writes the line the previous push wrote instead of
 *   a writer map's entry, a list header and a list of its own (issue 24:
 *   per-parent lists were 7 cold lines per push, 15 per function load,
 *   and their malloc and free a third of a merge). A walk (an unload)
 *   sorts the array by parent and searches it. idm_deps_settle merges it
 *   into the packed store at the end of a writer call once it holds 1/32
 *   as many entries (or IDM_RECENT_MIN), so it stays a small share of the
 *   memory; the merge works in place from the end (merge_in_place) and
 *   moves only what lies after the first parent that gains entries.
 *   Whether a settle is due is decided where the counts change and kept
 *   in m->deps_due, so a writer call that changed nothing here (a code
 *   add) reads no line of the dependents at its end.
 *
 * A module that holds at least 1/8 of the slots of the tables whose records
 * name modules (classes and functions; they keep the module's handle in
 * their slot word) and IDM_SCAN_MIN keeps no entries at all: its unload
 * scans those tables for its handle instead, sequentially, 8 slot reads
 * per record it names when it was flagged (more if the tables grew a lot
 * since), while its entries would cost 4 bytes per record for the life of
 * the map. The flag lives with the module's handle (handles.c) and stays
 * set until no slot names the module. In a real process the module so big
 * is usually System.Private.CoreLib or one huge application assembly,
 * which are rarely unloaded.
 *
 * Merging happens only between writer calls, never inside one: while a
 * call runs, a pushed entry may name a record that is not written yet, and
 * a merge checks every entry it moves from the recent store against the
 * record it names. */
#define _DEFAULT_SOURCE /* clockid_t, pthread_getcpuclockid (grace_int.h) */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "tokens/deps_int.h"
#include "tokens/handles_int.h"
#include "tokens/idmap_int.h"
#include "tokens/records_int.h"
#include "tokens/table_int.h"
#include "tokens/writer_int.h"
#include "util/error.h"

#define IDM_RECENT_MIN 16u
#define IDM_SCAN_MIN 16u
#define IDM_DGONE UINT32_MAX
/* The recent array's first capacity (entries). */
#define IDM_RECENT_FIRST 64u

/* An entry of the recent store: the record with ID `id` named the thing
 * (kind, pid) of dkey = idm_dkey(kind, the record's kind) when it was
 * created. It stands for "whatever record has that ID now, if it still
 * names the thing": a record that died or changed content makes it inert,
 * a rebirth that names the thing again adds it again (duplicates go when
 * the store is merged). A walk that finds it inert sets id to 0. */
struct idm_rentry {
    uintptr_t pid;
    uintptr_t id;
    uint32_t dkey;
    uint32_t pad;
};

/* A parent in the packed store; its children are child[previous end, end). */
struct idm_dparent {
    uintptr_t id;
    uint32_t dkey;
    uint32_t end;
};

struct idm_packed {
    struct idm_dparent *par; /* sorted by (id, dkey) */
    uint32_t *child;         /* slot indexes in the current table of the child kind */
    size_t npar, nchild;
    size_t parcap, childcap; /* allocated entries (merge_in_place grows them) */
    size_t gone;             /* children marked IDM_DGONE */
    size_t stale;            /* children that went inert (an estimate) */
};

/* The map's dependents (m->deps). */
struct idm_deps {
    /* The recent store: rec[0, nrec) in the order of the pushes, except
     * that rec[0, nsorted) is sorted by (pid, dkey, id) for walks. */
    struct idm_rentry *rec;
    size_t nrec, nsorted, reccap;
    struct idm_packed dp;
};

static inline int idm_dkey(int pkind, int ckind)
{
    return pkind * K_NKINDS + ckind;
}

/* ---- recent store ----------------------------------------------------- */

/* Is a settle due (idm_deps_settle's two thresholds)? Decided wherever the
 * counts change, so that idm_finish tests one flag of the map. */
static void note_due(mdt_idmap *m)
{
    const struct idm_deps *d = m->deps;
    const struct idm_packed *dp = &d->dp;
    size_t live = dp->nchild - dp->gone, inert = dp->stale + dp->gone;
    m->deps_due = (inert >= IDM_RECENT_MIN && inert * 4 >= live) ||
                  (d->nrec >= IDM_RECENT_MIN && d->nrec * 32 >= live);
}

static int cmp_rentry(const void *a, const void *b)
{
    const struct idm_rentry *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->dkey != y->dkey)
        return x->dkey < y->dkey ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* The first entry of (pid, dkey) in the recent store, which is then sorted
 * whole (walks come with unloads, rarely, and a cascade's pushes, if any,
 * come after its walks have sorted); d->nsorted when there is none. */
static size_t recent_find(struct idm_deps *d, uintptr_t pid, uint32_t dkey)
{
    if (d->nsorted < d->nrec) {
        qsort(d->rec, d->nrec, sizeof *d->rec, cmp_rentry);
        d->nsorted = d->nrec;
    }
    size_t a = 0, b = d->nsorted;
    while (a < b) {
        size_t mid = a + (b - a) / 2;
        const struct idm_rentry *e = &d->rec[mid];
        if (e->pid < pid || (e->pid == pid && e->dkey < dkey))
            a = mid + 1;
        else
            b = mid;
    }
    return a;
}

static void forget_parent(mdt_idmap *m, int pk, uintptr_t pid, int ck);

/* Should (K_MODULE, pid) be found by scanning from now on? Sets the flag
 * and forgets the entries it has. */
static bool module_scanned(mdt_idmap *m, uintptr_t pid)
{
    uint32_t hd;
    bool scanned;
    uint32_t n = idm_module_slots(m, pid, &hd, &scanned);
    if (scanned)
        return true;
    if (n < IDM_SCAN_MIN)
        return false;
    size_t cap = 0;
    for (int ck = 0; idm_next_child(m, K_MODULE, &ck); ck++)
        cap += idm_wtab(m, ck)->cap;
    if ((size_t)n * 8 < cap)
        return false;
    idm_module_set_scanned(m, pid);
    for (int ck = 0; idm_next_child(m, K_MODULE, &ck); ck++)
        forget_parent(m, K_MODULE, pid, ck);
    note_due(m);
    return true;
}

int idm_dep_push(mdt_idmap *m, int pkind, uintptr_t pid, int kind, uintptr_t id)
{
    if (pkind == K_MODULE && module_scanned(m, pid))
        return 0;
    struct idm_deps *d = m->deps;
    if (d->nrec == d->reccap) {
        size_t cap = d->reccap ? d->reccap * 2 : IDM_RECENT_FIRST;
        if (cap > SIZE_MAX / sizeof *d->rec)
            return MDT_ENOMEM;
        struct idm_rentry *r = realloc(d->rec, cap * sizeof *r);
        if (!r)
            return MDT_ENOMEM;
        d->rec = r;
        d->reccap = cap;
    }
    d->rec[d->nrec++] = (struct idm_rentry){pid, id, (uint32_t)idm_dkey(pkind, kind), 0};
    note_due(m);
    return 0;
}

void idm_dep_stale(mdt_idmap *m, int pk, uintptr_t pid, int kind)
{
    (void)pk;
    (void)pid;
    (void)kind;
    /* An entry of either store: counted as the packed store's (an
     * estimate; an inert recent entry goes at the next merge anyway). */
    m->deps->dp.stale++;
    note_due(m);
}

/* ---- packed store ------------------------------------------------------ */

static int cmp_parent(uintptr_t id, uint32_t dkey, const struct idm_dparent *p)
{
    if (id != p->id)
        return id < p->id ? -1 : 1;
    return dkey < p->dkey ? -1 : dkey > p->dkey;
}

/* The run of (pid, dkey): [*lo, *hi) in dp.child; false when absent. */
static bool find_run(const struct idm_packed *dp, uintptr_t pid, uint32_t dkey, size_t *lo,
                     size_t *hi)
{
    size_t a = 0, b = dp->npar;
    while (a < b) {
        size_t mid = a + (b - a) / 2;
        int c = cmp_parent(pid, dkey, &dp->par[mid]);
        if (c == 0) {
            *lo = mid ? dp->par[mid - 1].end : 0;
            *hi = dp->par[mid].end;
            return true;
        }
        if (c < 0)
            b = mid;
        else
            a = mid + 1;
    }
    return false;
}

/* The records of kind ck that hold module pid's handle hd, by a scan. */
static int scan_module(mdt_idmap *m, uintptr_t pid, uint32_t hd, int ck, idm_dep_visit fn,
                       void *ctx)
{
    struct idm_tab *t = idm_wtab(m, ck);
    for (size_t i = 0; i < t->cap; i++) {
        struct idm_head *h = idm_slot(t, i);
        uint64_t w = atomic_load_explicit(&h->w, memory_order_relaxed);
        if (!atomic_load_explicit(&h->key, memory_order_relaxed) || idm_w_handle(w) != hd ||
            !idm_names(m, h, ck, K_MODULE, pid))
            continue;
        int rc = fn(m, ck, h, ctx);
        if (rc < 0)
            return rc;
    }
    return 0;
}

int idm_deps_walk(mdt_idmap *m, int pk, uintptr_t pid, int ck, idm_dep_visit fn, void *ctx)
{
    int dkey = idm_dkey(pk, ck);
    if (pk == K_MODULE) {
        uint32_t hd;
        bool scanned;
        idm_module_slots(m, pid, &hd, &scanned);
        if (scanned)
            return scan_module(m, pid, hd, ck, fn, ctx);
    }
    struct idm_packed *dp = &m->deps->dp;
    size_t lo, hi;
    if (find_run(dp, pid, (uint32_t)dkey, &lo, &hi)) {
        struct idm_tab *t = idm_wtab(m, ck);
        for (size_t i = lo; i < hi; i++) {
            if (dp->child[i] == IDM_DGONE)
                continue;
            struct idm_head *h = idm_slot(t, dp->child[i]);
            if (!idm_names(m, h, ck, pk, pid)) {
                dp->child[i] = IDM_DGONE; /* renamed: inert */
                dp->gone++;
                continue;
            }
            int rc = fn(m, ck, h, ctx);
            if (rc < 0)
                return rc;
        }
    }
    note_due(m); /* the walk marked entries gone */
    /* The recent entries: by index, because a visit may push (the array
     * moves; what it appends lies after the sorted part). */
    struct idm_deps *d = m->deps;
    uintptr_t prev = 0;
    for (size_t i = recent_find(d, pid, (uint32_t)dkey);
         i < d->nsorted && d->rec[i].pid == pid && d->rec[i].dkey == (uint32_t)dkey; i++) {
        uintptr_t id = d->rec[i].id;
        if (id == 0 || id == prev)
            continue; /* inert, or the same record listed twice */
        prev = id;
        struct idm_head *h = idm_wfind(m, ck, id);
        if (!h || !idm_names(m, h, ck, pk, pid)) {
            d->rec[i].id = 0; /* dropped or renamed: inert */
            continue;
        }
        int rc = fn(m, ck, h, ctx);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static void forget_parent(mdt_idmap *m, int pk, uintptr_t pid, int ck)
{
    int dkey = idm_dkey(pk, ck);
    struct idm_packed *dp = &m->deps->dp;
    size_t lo, hi;
    if (find_run(dp, pid, (uint32_t)dkey, &lo, &hi))
        for (size_t i = lo; i < hi; i++)
            if (dp->child[i] != IDM_DGONE) {
                dp->child[i] = IDM_DGONE;
                dp->gone++;
            }
    /* Rare (a module turns scanned): a pass over the recent store. */
    struct idm_deps *d = m->deps;
    for (size_t i = 0; i < d->nrec; i++)
        if (d->rec[i].pid == pid && d->rec[i].dkey == (uint32_t)dkey)
            d->rec[i].id = 0;
}

void idm_deps_remap(mdt_idmap *m, int kind, const struct idm_tab *old, const struct idm_tab *n)
{
    struct idm_packed *dp = &m->deps->dp;
    size_t lo = 0;
    for (size_t p = 0; p < dp->npar; lo = dp->par[p++].end) {
        if ((int)(dp->par[p].dkey % K_NKINDS) != kind)
            continue;
        for (size_t i = lo; i < dp->par[p].end; i++) {
            if (dp->child[i] == IDM_DGONE)
                continue;
            uintptr_t key =
                atomic_load_explicit(&idm_slot(old, dp->child[i])->key, memory_order_relaxed);
            struct idm_head *h = idm_tab_find(n, key);
            if (h) {
                dp->child[i] = (uint32_t)idm_slot_index(n, h);
            } else {
                dp->child[i] = IDM_DGONE; /* dropped tombstone */
                dp->gone++;
            }
        }
    }
    note_due(m);
}

/* One entry of the recent store on its way into the packed one. */
struct triple {
    uintptr_t pid;
    uint32_t dkey, child;
};

static inline bool triple_less(const struct triple *x, const struct triple *y)
{
    if (x->pid != y->pid)
        return x->pid < y->pid;
    if (x->dkey != y->dkey)
        return x->dkey < y->dkey;
    return x->child < y->child;
}

static inline void triple_swap(struct triple *x, struct triple *y)
{
    struct triple t = *x;
    *x = *y;
    *y = t;
}

static void triple_sift(struct triple *a, size_t root, size_t n)
{
    for (size_t c; (c = 2 * root + 1) < n; root = c) {
        if (c + 1 < n && triple_less(&a[c], &a[c + 1]))
            c++;
        if (!triple_less(&a[root], &a[c]))
            return;
        triple_swap(&a[root], &a[c]);
    }
}

/* Introsort: qsort's calls through a comparison pointer were most of a
 * merge (issue 24); a heapsort below a depth bound keeps it O(n log n)
 * whatever the IDs. */
static void sort_triples(struct triple *a, size_t n, unsigned depth)
{
    while (n > 16) {
        if (depth-- == 0) {
            for (size_t i = n / 2; i-- > 0;)
                triple_sift(a, i, n);
            for (size_t e = n; e-- > 1;) {
                triple_swap(&a[0], &a[e]);
                triple_sift(a, 0, e);
            }
            return;
        }
        struct triple *mid = &a[n / 2], *last = &a[n - 1];
        if (triple_less(mid, a))
            triple_swap(mid, a);
        if (triple_less(last, mid)) {
            triple_swap(last, mid);
            if (triple_less(mid, a))
                triple_swap(mid, a);
        }
        struct triple pv = *mid;
        /* Hoare's partition: [0, j] <= pv <= [j + 1, n), both non-empty. */
        size_t i = 0, j = n - 1;
        for (;;) {
            while (triple_less(&a[i], &pv))
                i++;
            while (triple_less(&pv, &a[j]))
                j--;
            if (i >= j)
                break;
            triple_swap(&a[i++], &a[j--]);
        }
        size_t left = j + 1;
        if (left < n - left) {
            sort_triples(a, left, depth);
            a += left;
            n -= left;
        } else {
            sort_triples(a + left, n - left, depth);
            n = left;
        }
    }
    for (size_t i = 1; i < n; i++) {
        struct triple x = a[i];
        size_t j = i;
        for (; j > 0 && triple_less(&x, &a[j - 1]); j--)
            a[j] = a[j - 1];
        a[j] = x;
    }
}

static unsigned sort_depth(size_t n)
{
    return 2 * (64u - (unsigned)__builtin_clzll((unsigned long long)n | 1));
}

/* The recent store as checked triples, sorted by (ID, dkey, slot), each
 * child once per parent: *out (caller frees). Each entry is checked in the
 * order of the pushes (consecutive loads' records), then the triples,
 * 16 bytes each, are sorted (issue 24). */
static int gather_recent(const mdt_idmap *m, struct triple **out, size_t *nout)
{
    const struct idm_deps *d = m->deps;
    struct triple *tr = malloc((d->nrec + 1) * sizeof *tr);
    if (!tr)
        return MDT_ENOMEM;
    size_t n = 0;
    for (size_t i = 0; i < d->nrec; i++) {
        const struct idm_rentry *e = &d->rec[i];
        if (e->id == 0)
            continue;
        int pk = (int)e->dkey / K_NKINDS, ck = (int)e->dkey % K_NKINDS;
        struct idm_tab *t = idm_wtab(m, ck);
        struct idm_head *h = idm_tab_find(t, e->id);
        if (h && m->kind[ck]->names(m, h, pk, e->pid))
            tr[n++] = (struct triple){e->pid, e->dkey, (uint32_t)idm_slot_index(t, h)};
    }
    sort_triples(tr, n, sort_depth(n));
    size_t u = 0;
    for (size_t i = 0; i < n; i++)
        if (u == 0 || tr[u - 1].pid != tr[i].pid || tr[u - 1].dkey != tr[i].dkey ||
            tr[u - 1].child != tr[i].child)
            tr[u++] = tr[i];
    *out = tr;
    *nout = u;
    return 0;
}

/* The recent store is merged: forget it, and give back an array that an
 * earlier, larger store left much larger than this one needed. */
static void clear_recent(mdt_idmap *m)
{
    struct idm_deps *d = m->deps;
    if (d->reccap > IDM_RECENT_FIRST && d->nrec < d->reccap / 8) {
        size_t cap = d->reccap / 4;
        struct idm_rentry *r = realloc(d->rec, cap * sizeof *r);
        if (r) {
            d->rec = r;
            d->reccap = cap;
        }
    }
    d->nrec = d->nsorted = 0;
}

/* Room for n entries of size bytes in *p (capacity *cap), growing by 1/8
 * at least, so that merges in place reallocate O(log n) times. */
static bool reserve(void **p, size_t *cap, size_t n, size_t size)
{
    if (n <= *cap)
        return true;
    size_t want = *cap + *cap / 8;
    if (want < n)
        want = n;
    void *q = realloc(*p, want * size);
    if (!q)
        return false;
    *p = q;
    *cap = want;
    return true;
}

/* Merge the recent store into the packed one in place, from the end: a
 * parent's new children go after its run (runs are in no order), the runs
 * and parents after it move toward the end by as many entries as the
 * parents before them gained, so a backward pass never overwrites what it
 * has not read, and once no parent before the one placed gains anything
 * the rest stays where it is. New IDs are mostly higher addresses, so this
 * usually moves a tail of the store (issue 24: rebuilding the whole store
 * into fresh arrays on every merge was half of a class load's
 * instructions in a real build). A child already in its run (a record
 * renamed away from the parent and back since the last merge, or twice
 * in the recent store) is listed twice, which a walk tolerates (the
 * second visit finds the record ended or newer than the unload); the
 * merge that checks (idm_deps_settle, once inert entries are a quarter of
 * the store, which the renaming counts toward) drops it. On ENOMEM
 * nothing changes. */
static int merge_in_place(mdt_idmap *m)
{
    struct idm_packed *dp = &m->deps->dp;
    struct triple *tr;
    size_t nt;
    if (gather_recent(m, &tr, &nt))
        return MDT_ENOMEM;
    size_t nnew = 0;
    for (size_t t = 0; t < nt; t++) {
        size_t lo, hi;
        if ((t == 0 || tr[t - 1].pid != tr[t].pid || tr[t - 1].dkey != tr[t].dkey) &&
            !find_run(dp, tr[t].pid, tr[t].dkey, &lo, &hi))
            nnew++;
    }
    if (dp->nchild + nt >= UINT32_MAX ||
        !reserve((void **)&dp->child, &dp->childcap, dp->nchild + nt, sizeof *dp->child) ||
        !reserve((void **)&dp->par, &dp->parcap, dp->npar + nnew, sizeof *dp->par)) {
        free(tr);
        return MDT_ENOMEM;
    }
    struct idm_dparent *par = dp->par;
    uint32_t *child = dp->child;
    /* s: how far the runs of the parents still to place move (the new
     * entries of those parents); np: new parents still to place. */
    size_t s = nt, np = nnew, p = dp->npar, t = nt;
    while (s > 0) {
        size_t g = t - 1;
        while (g > 0 && tr[g - 1].pid == tr[t - 1].pid && tr[g - 1].dkey == tr[t - 1].dkey)
            g--;
        /* Parents after the group [g, t): their runs move as a block. */
        size_t q = p;
        while (q > 0 && cmp_parent(tr[g].pid, tr[g].dkey, &par[q - 1]) < 0)
            q--;
        if (q < p) {
            size_t lo = q ? par[q - 1].end : 0;
            memmove(child + lo + s, child + lo, (par[p - 1].end - lo) * sizeof *child);
            for (size_t i = p; i-- > q;)
                par[i + np] =
                    (struct idm_dparent){par[i].id, par[i].dkey, (uint32_t)(par[i].end + s)};
            p = q;
        }
        size_t k = t - g;
        if (p > 0 && cmp_parent(tr[g].pid, tr[g].dkey, &par[p - 1]) == 0) {
            size_t lo = p > 1 ? par[p - 2].end : 0, hi = par[p - 1].end;
            for (size_t j = 0; j < k; j++)
                child[hi + s - k + j] = tr[g + j].child;
            if (s > k)
                memmove(child + lo + s - k, child + lo, (hi - lo) * sizeof *child);
            struct idm_dparent pp = par[p - 1];
            par[p - 1 + np] = (struct idm_dparent){pp.id, pp.dkey, (uint32_t)(hi + s)};
            p--;
        } else {
            size_t end = (p ? par[p - 1].end : 0) + s, w = end;
            for (size_t j = t; j-- > g;)
                child[--w] = tr[j].child;
            np--;
            par[p + np] = (struct idm_dparent){tr[g].pid, tr[g].dkey, (uint32_t)end};
        }
        s -= k;
        t = g;
    }
    dp->npar += nnew;
    dp->nchild += nt;
    free(tr);
    clear_recent(m);
    note_due(m);
    return 0;
}

static void u32_sift(uint32_t *a, size_t root, size_t n)
{
    for (size_t c; (c = 2 * root + 1) < n; root = c) {
        if (c + 1 < n && a[c] < a[c + 1])
            c++;
        if (a[root] >= a[c])
            return;
        uint32_t t = a[root];
        a[root] = a[c];
        a[c] = t;
    }
}

/* A run's slot indexes, as sort_triples sorts triples: most runs hold a
 * few, and qsort's calls were most of the merge that checks (issue 24). */
static void sort_run(uint32_t *a, size_t n, unsigned depth)
{
    while (n > 16) {
        if (depth-- == 0) {
            for (size_t i = n / 2; i-- > 0;)
                u32_sift(a, i, n);
            for (size_t e = n; e-- > 1;) {
                uint32_t t = a[0];
                a[0] = a[e];
                a[e] = t;
                u32_sift(a, 0, e);
            }
            return;
        }
        uint32_t x = a[0], y = a[n / 2], z = a[n - 1];
        uint32_t pv = x < y ? (y < z ? y : x < z ? z : x) : (x < z ? x : y < z ? z : y);
        size_t i = 0, j = n - 1;
        for (;;) {
            while (a[i] < pv)
                i++;
            while (pv < a[j])
                j--;
            if (i >= j)
                break;
            uint32_t t = a[i];
            a[i++] = a[j];
            a[j--] = t;
        }
        size_t left = j + 1;
        if (left < n - left) {
            sort_run(a, left, depth);
            a += left;
            n -= left;
        } else {
            sort_run(a + left, n - left, depth);
            n = left;
        }
    }
    for (size_t i = 1; i < n; i++) {
        uint32_t x = a[i];
        size_t j = i;
        for (; j > 0 && x < a[j - 1]; j--)
            a[j] = a[j - 1];
        a[j] = x;
    }
}

/* Merge the recent store into the packed one into fresh arrays; with
 * check, also drop the packed entries that went inert. On ENOMEM nothing
 * changes. */
static int merge(mdt_idmap *m, bool check)
{
    struct idm_packed *dp = &m->deps->dp;
    struct triple *tr;
    size_t nt;
    if (gather_recent(m, &tr, &nt))
        return MDT_ENOMEM;
    size_t maxc = dp->nchild - dp->gone + nt;
    if (maxc >= UINT32_MAX) {
        free(tr);
        return MDT_ENOMEM;
    }
    struct idm_dparent *par = malloc((dp->npar + nt + 1) * sizeof *par);
    uint32_t *child = malloc((maxc + 1) * sizeof *child);
    if (!par || !child) {
        free(par);
        free(child);
        free(tr);
        return MDT_ENOMEM;
    }
    /* Runs are in no order (merge_in_place appends, idm_deps_remap
     * translates): sort them, so that merging each with its new children
     * is a walk that lists every child once. */
    for (size_t q = 0, b = 0; q < dp->npar; b = dp->par[q++].end)
        sort_run(dp->child + b, dp->par[q].end - b, 64);
    size_t np = 0, nc = 0, p = 0, t = 0, lo = 0;
    while (p < dp->npar || t < nt) {
        /* The next parent in order, from either store or both. */
        int c = p == dp->npar ? 1 : t == nt ? -1 : -cmp_parent(tr[t].pid, tr[t].dkey, &dp->par[p]);
        uintptr_t pid = c <= 0 ? dp->par[p].id : tr[t].pid;
        uint32_t dkey = c <= 0 ? dp->par[p].dkey : tr[t].dkey;
        int pk = (int)dkey / K_NKINDS, ck = (int)dkey % K_NKINDS;
        size_t start = nc;
        /* Both runs are sorted: merge them, once each (a record renamed
         * away from this parent and back is in both). */
        size_t i = c <= 0 ? lo : 0, iend = c <= 0 ? dp->par[p].end : 0;
        struct idm_tab *tab = idm_wtab(m, ck);
        idm_names_fn *names = m->kind[ck]->names;
        for (;;) {
            /* Gone or (checking) inert entries are skipped; walks mark
             * entries gone in place, which keeps the others in order. */
            while (i < iend && (dp->child[i] == IDM_DGONE ||
                                (check && !names(m, idm_slot(tab, dp->child[i]), pk, pid))))
                i++;
            bool have_p = i < iend;
            bool have_t = t < nt && tr[t].pid == pid && tr[t].dkey == dkey;
            if (!have_p && !have_t)
                break;
            uint32_t w =
                !have_t || (have_p && dp->child[i] <= tr[t].child) ? dp->child[i] : tr[t].child;
            if (have_p && dp->child[i] == w)
                i++;
            if (have_t && tr[t].child == w)
                t++;
            if (nc == start || child[nc - 1] != w)
                child[nc++] = w;
        }
        if (c <= 0)
            lo = dp->par[p++].end;
        if (nc > start)
            par[np++] = (struct idm_dparent){pid, dkey, (uint32_t)nc};
    }
    free(tr);
    /* Shrinking cannot fail in a way that matters: keep the larger block. */
    size_t parcap = dp->npar + nt + 1, childcap = maxc + 1;
    struct idm_dparent *sp = realloc(par, (np ? np : 1) * sizeof *par);
    if (sp) {
        par = sp;
        parcap = np ? np : 1;
    }
    uint32_t *sc = realloc(child, (nc ? nc : 1) * sizeof *child);
    if (sc) {
        child = sc;
        childcap = nc ? nc : 1;
    }
    free(dp->par);
    free(dp->child);
    dp->par = par;
    dp->child = child;
    dp->parcap = parcap;
    dp->childcap = childcap;
    dp->npar = np;
    dp->nchild = nc;
    dp->gone = 0;
    if (check)
        dp->stale = 0;
    clear_recent(m);
    note_due(m);
    return 0;
}

/* Drop the entries marked gone, in place (the parents left without any
 * too), and give back the room when the store halved. */
static void drop_gone(struct idm_packed *dp)
{
    size_t w = 0, np = 0, lo = 0;
    for (size_t p = 0; p < dp->npar; p++) {
        size_t start = w, end = dp->par[p].end;
        for (size_t i = lo; i < end; i++)
            if (dp->child[i] != IDM_DGONE)
                dp->child[w++] = dp->child[i];
        if (w > start)
            dp->par[np++] = (struct idm_dparent){dp->par[p].id, dp->par[p].dkey, (uint32_t)w};
        lo = end;
    }
    dp->npar = np;
    dp->nchild = w;
    dp->gone = 0;
    if (w < dp->childcap / 2) {
        uint32_t *c = realloc(dp->child, (w ? w : 1) * sizeof *c);
        if (c) {
            dp->child = c;
            dp->childcap = w ? w : 1;
        }
    }
    if (np < dp->parcap / 2) {
        struct idm_dparent *q = realloc(dp->par, (np ? np : 1) * sizeof *q);
        if (q) {
            dp->par = q;
            dp->parcap = np ? np : 1;
        }
    }
}

void idm_deps_settle(mdt_idmap *m)
{
    struct idm_packed *dp = &m->deps->dp;
    size_t live = dp->nchild - dp->gone;
    if (dp->stale + dp->gone >= IDM_RECENT_MIN && (dp->stale + dp->gone) * 4 >= live) {
        /* Entries known gone (walks, a module that is scanned from now on,
         * tombstones a table rebuild dropped) go in one pass; only when the
         * estimate of the inert ones is itself a quarter of the store are
         * they all checked (issue 24: the first module scanned, usually
         * System.Private.CoreLib, made a checking merge of the whole store
         * that cost 7% of a real build's map instructions). */
        if (dp->stale * 4 < live) {
            drop_gone(dp);
        } else {
            (void)merge(m, true); /* on ENOMEM the recent store keeps the entries */
            return;
        }
        live = dp->nchild;
    }
    if (m->deps->nrec >= IDM_RECENT_MIN && m->deps->nrec * 32 >= live)
        (void)merge_in_place(m);
    note_due(m); /* still due after ENOMEM: the next call tries again */
}

void idm_deps_compact_all(mdt_idmap *m)
{
    if (merge(m, true) == 0)
        return;
    /* Out of memory: drop the inert recent entries in place at least. */
    struct idm_deps *d = m->deps;
    size_t k = 0;
    for (size_t i = 0; i < d->nrec; i++) {
        const struct idm_rentry *e = &d->rec[i];
        int pk = (int)e->dkey / K_NKINDS, ck = (int)e->dkey % K_NKINDS;
        struct idm_head *h = e->id ? idm_wfind(m, ck, e->id) : NULL;
        if (h && idm_names(m, h, ck, pk, e->pid))
            d->rec[k++] = *e;
    }
    d->nrec = k;
    d->nsorted = 0; /* still in order, but nothing relies on it */
    note_due(m);
}

size_t idm_deps_bytes(const mdt_idmap *m)
{
    const struct idm_deps *d = m->deps;
    return d->reccap * sizeof(struct idm_rentry) + d->dp.parcap * sizeof(struct idm_dparent) +
           d->dp.childcap * sizeof(uint32_t);
}

int idm_deps_init(mdt_idmap *m)
{
    m->deps = calloc(1, sizeof *m->deps);
    return m->deps ? 0 : MDT_ENOMEM;
}

void idm_deps_free(mdt_idmap *m)
{
    struct idm_deps *d = m->deps;
    if (!d)
        return;
    free(d->rec);
    free(d->dp.par);
    free(d->dp.child);
    free(d);
    m->deps = NULL;
}
