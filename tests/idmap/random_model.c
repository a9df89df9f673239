/* Randomized check of the runtime-ID maps against a sequential model.
 *
 * The model is the specification in the plainest form: arrays indexed by
 * small ID numbers, unload cascades found by scanning every record for
 * references, code ranges in an unsorted array. Random loads (many with old
 * sequence numbers, as enumeration items), unloads of modules, AppDomains,
 * assemblies, classes and functions, code ranges and retires run against
 * both; every outcome and, after each operation, lookups of random IDs,
 * addresses, reverse keys and TypeDef presence must agree. Seeds are fixed;
 * a failure prints the seed and operation number to reproduce it, and
 * RM_TRACE=1 prints every operation. Usage: random_model [ops-per-seed]
 * [seed...] */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mdtools/idmap.h>

enum { KM, KC, KF, KD, KA };
#define NMOD 8
#define NCLS 48
#define NFN 48
#define NDOM 3
#define NASM 3
#define NADDR 64

static uintptr_t idof(int kind, int i)
{
    static const uintptr_t base[] = {0x10000, 0x20000, 0x30000, 0xd0000, 0xa0000};
    return base[kind] + (uintptr_t)i * 0x40;
}

static int idx(int kind, uintptr_t id)
{
    static const uintptr_t base[] = {0x10000, 0x20000, 0x30000, 0xd0000, 0xa0000};
    return (int)((id - base[kind]) / 0x40);
}

struct rec {
    bool exists, live;
    uint64_t gen, seq;
    /* module */
    uintptr_t dom, asmb;
    uint8_t mvid;
    /* class, function */
    uintptr_t module;
    uint32_t token;
    uint8_t shape, prim;
    uint16_t rank;
    uint32_t nargs;
    uintptr_t args[4];
    uintptr_t cls;
};

struct range {
    uintptr_t start, end, fid;
    uint64_t gen, seq;
};

/* Code tombstones, per 16-byte address slot: no code_add at or below
 * tomb[a] that covers slot a is applied (idmap.h). Every range and every
 * code_add covers whole slots, and a code_remove starts at one, so a slot
 * is the unit: the map's pieces with the newest seq of their addresses
 * answer exactly as the newest seq per slot. */
static struct {
    struct rec r[3][64];
    uint64_t hist[5][64];
    uint64_t wm;
    struct range rg[NADDR];
    int nrg;
    uint64_t tomb[NADDR];
} M;

static int slot_of(uintptr_t a)
{
    return (int)((a - 0x800000) / 0x10);
}

/* The newest seq of a tombstone over [a, e), 0 if none. */
static uint64_t tomb_seq(uintptr_t a, uintptr_t e)
{
    uint64_t t = 0;
    for (int j = slot_of(a); j < slot_of(e - 1) + 1; j++)
        if (M.tomb[j] > t)
            t = M.tomb[j];
    return t;
}

static void tomb_raise(uintptr_t a, uintptr_t e, uint64_t s)
{
    for (int j = slot_of(a); j < slot_of(e - 1) + 1; j++)
        if (M.tomb[j] < s)
            M.tomb[j] = s;
}

static uint64_t rng_state;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}
static int pick(int n)
{
    return (int)(rnd() % (uint64_t)n);
}

static unsigned long long seed_now, op_now;
static int failures;

#define FAILF(...)                                                                                 \
    do {                                                                                           \
        fprintf(stderr, "seed %llu op %llu: ", seed_now, op_now);                                  \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fputc('\n', stderr);                                                                       \
        failures++;                                                                                \
    } while (0)

/* ---- model -------------------------------------------------------------- */

static uint64_t last_unload(int kind, int i)
{
    if (kind <= KF && M.r[kind][i].exists && !M.r[kind][i].live)
        return M.r[kind][i].seq;
    return M.hist[kind][i];
}

struct refs {
    int n;
    int kind[8];
    int i[8];
};

static void refs_of(int kind, const struct rec *p, struct refs *rf)
{
    rf->n = 0;
    if (kind == KM) {
        if (p->dom)
            rf->kind[rf->n] = KD, rf->i[rf->n++] = idx(KD, p->dom);
        if (p->asmb)
            rf->kind[rf->n] = KA, rf->i[rf->n++] = idx(KA, p->asmb);
        return;
    }
    if (p->module)
        rf->kind[rf->n] = KM, rf->i[rf->n++] = idx(KM, p->module);
    if (kind == KF && p->cls)
        rf->kind[rf->n] = KC, rf->i[rf->n++] = idx(KC, p->cls);
    for (uint32_t a = 0; a < p->nargs; a++)
        rf->kind[rf->n] = KC, rf->i[rf->n++] = idx(KC, p->args[a]);
}

/* The first last-unload at or after s of what rf names, 0 if none. */
static uint64_t unloaded_at(const struct refs *rf, uint64_t s)
{
    uint64_t first = 0;
    for (int k = 0; k < rf->n; k++) {
        uint64_t u = last_unload(rf->kind[k], rf->i[k]);
        if (u >= s && (first == 0 || u < first))
            first = u;
    }
    return first;
}

static bool stale(const struct refs *rf, uint64_t s)
{
    return unloaded_at(rf, s) != 0;
}

static bool refers(int kind, const struct rec *y, int xk, int xi)
{
    struct refs rf;
    refs_of(kind, y, &rf);
    for (int k = 0; k < rf.n; k++)
        if (rf.kind[k] == xk && rf.i[k] == xi)
            return true;
    return false;
}

/* A late unload at t of a live record that newer information showed
 * alive after t (gen <= t < seq): a new incarnation from seq; a function's
 * ranges applied after t go with it. */
static void renew(int kind, int i, uint64_t t)
{
    struct rec *r = &M.r[kind][i];
    for (int j = 0; kind == KF && j < M.nrg; j++)
        if (M.rg[j].fid == idof(KF, i) && M.rg[j].gen == r->gen && M.rg[j].seq > t &&
            M.rg[j].seq >= r->seq)
            M.rg[j].gen = r->seq;
    r->gen = r->seq;
    if (M.hist[kind][i] < t)
        M.hist[kind][i] = t;
}

/* An unload at t ends the incarnation of every record that names the
 * unloaded thing and was created at or before t, whatever its seq; a
 * record with newer news goes on as a new incarnation. */
static int cascade(int kind, int i, uint64_t t)
{
    int wk[512], wi[512], nw = 0, changed = 0;
    wk[nw] = kind;
    wi[nw++] = i;
    while (nw) {
        nw--;
        int xk = wk[nw], xi = wi[nw];
        for (int k = KM; k <= KF; k++) {
            int n = k == KM ? NMOD : k == KC ? NCLS : NFN;
            for (int j = 0; j < n; j++) {
                struct rec *y = &M.r[k][j];
                if (!y->exists || !y->live || y->gen > t || !refers(k, y, xk, xi))
                    continue;
                if (y->seq <= t) {
                    y->live = false;
                    y->seq = t;
                } else {
                    renew(k, j, t);
                }
                changed++;
                wk[nw] = k;
                wi[nw++] = j;
            }
        }
    }
    return changed;
}

/* Ranges of dead incarnations go, leaving a tombstone at their own seq. */
static void model_filter_ranges(void)
{
    int k = 0;
    for (int j = 0; j < M.nrg; j++) {
        struct rec *f = &M.r[KF][idx(KF, M.rg[j].fid)];
        if (f->exists && f->live && f->gen == M.rg[j].gen)
            M.rg[k++] = M.rg[j];
        else
            tomb_raise(M.rg[j].start, M.rg[j].end, M.rg[j].seq);
    }
    M.nrg = k;
}

static int model_unload(int kind, int i, uint64_t t)
{
    if (t < M.wm)
        return MDT_IDMAP_SUPERSEDED;
    int rc = MDT_IDMAP_DUPLICATE;
    if (kind <= KF) {
        struct rec *r = &M.r[kind][i];
        if (!r->exists) {
            memset(r, 0, sizeof *r);
            r->exists = true;
            r->seq = t;
            rc = MDT_IDMAP_APPLIED;
        } else if (!r->live) {
            if (t > r->seq) {
                r->seq = t;
                rc = MDT_IDMAP_APPLIED;
            }
        } else if (t >= r->seq) {
            r->live = false;
            r->seq = t;
            rc = MDT_IDMAP_APPLIED;
        } else if (r->gen <= t) {
            renew(kind, i, t);
            rc = MDT_IDMAP_APPLIED;
        } else {
            /* An earlier incarnation's unload: remembered for the items
             * older than it that name the ID. */
            if (M.hist[kind][i] < t)
                M.hist[kind][i] = t;
            rc = MDT_IDMAP_SUPERSEDED;
        }
    } else if (M.hist[kind][i] < t) {
        M.hist[kind][i] = t;
        rc = MDT_IDMAP_APPLIED;
    }
    return cascade(kind, i, t) ? MDT_IDMAP_APPLIED : rc;
}

/* 0 same, 1 fill, -1 conflict */
static int model_compare(int kind, const struct rec *r, const struct rec *p)
{
    if (kind == KM) {
        if ((r->dom && p->dom && r->dom != p->dom) || (r->asmb && p->asmb && r->asmb != p->asmb) ||
            (r->mvid && p->mvid && r->mvid != p->mvid))
            return -1;
        return (!r->dom && p->dom) || (!r->asmb && p->asmb) || (!r->mvid && p->mvid) ? 1 : 0;
    }
    if (r->module != p->module || r->token != p->token || r->nargs != p->nargs ||
        memcmp(r->args, p->args, p->nargs * sizeof p->args[0]) != 0)
        return -1;
    if (kind == KC) {
        if (r->shape != p->shape || r->rank != p->rank ||
            (p->prim && r->prim && p->prim != r->prim))
            return -1;
        return p->prim && !r->prim ? 1 : 0;
    }
    if (r->cls == p->cls || p->cls == 0)
        return 0;
    return r->cls == 0 ? 1 : -1;
}

/* An item refused because what it names was unloaded at u >= s: the ID
 * dies at u too. */
static int model_refuse(int kind, int i, const struct refs *rf, uint64_t s)
{
    model_unload(kind, i, unloaded_at(rf, s));
    return MDT_IDMAP_SUPERSEDED;
}

static int model_load(int kind, int i, const struct rec *p, uint64_t s)
{
    if (s < M.wm)
        return MDT_IDMAP_SUPERSEDED;
    struct rec *r = &M.r[kind][i];
    struct refs rf;
    refs_of(kind, p, &rf);
    if (r->exists && r->live) {
        int cmp = model_compare(kind, r, p);
        if (cmp >= 0) {
            int rc = MDT_IDMAP_DUPLICATE;
            if (cmp == 1 && kind == KM && stale(&rf, s))
                return model_refuse(kind, i, &rf, s);
            if (cmp == 1 && kind == KF && last_unload(KC, idx(KC, p->cls)) >= s)
                return model_refuse(kind, i, &rf, s);
            if (cmp == 1) {
                if (kind == KM) {
                    if (!r->dom)
                        r->dom = p->dom;
                    if (!r->asmb)
                        r->asmb = p->asmb;
                    if (!r->mvid)
                        r->mvid = p->mvid;
                    rc = MDT_IDMAP_APPLIED;
                } else if (kind == KC) {
                    r->prim = p->prim;
                    rc = MDT_IDMAP_APPLIED;
                } else if (kind == KF) {
                    r->cls = p->cls;
                    rc = MDT_IDMAP_APPLIED;
                }
            }
            if (s > r->seq)
                r->seq = s;
            return rc;
        }
        if (s <= r->seq)
            return MDT_IDMAP_SUPERSEDED;
        if (stale(&rf, s))
            return model_refuse(kind, i, &rf, s);
        r->live = false;
        r->seq = s - 1;
        cascade(kind, i, s - 1);
    } else if (r->exists && s <= r->seq) {
        return MDT_IDMAP_SUPERSEDED;
    } else if (stale(&rf, s)) {
        return model_refuse(kind, i, &rf, s);
    }
    if (r->exists)
        M.hist[kind][i] = r->seq;
    *r = *p;
    r->exists = r->live = true;
    r->gen = r->seq = s;
    return MDT_IDMAP_APPLIED;
}

/* Ranges overlapping r that are older than it (all of them when r is
 * applied) go, each leaving a tombstone at r's seq over its span. */
static void drop_overlaps(const struct range *r, bool apply)
{
    int k = 0;
    for (int j = 0; j < M.nrg; j++) {
        struct range *x = &M.rg[j];
        if (x->start < r->end && x->end > r->start && (apply || x->seq < r->seq))
            tomb_raise(x->start, x->end, r->seq);
        else
            M.rg[k++] = *x;
    }
    M.nrg = k;
}

static int model_code_add(int a, int len, int fi, uint64_t s)
{
    if (s < M.wm)
        return MDT_IDMAP_SUPERSEDED;
    struct rec *f = &M.r[KF][fi];
    struct range r = {0x800000 + (uintptr_t)a * 0x10, 0x800000 + (uintptr_t)(a + len) * 0x10,
                      idof(KF, fi), 0, s};
    int rc;
    if (!f->exists || !f->live) {
        rc = last_unload(KF, fi) >= s ? MDT_IDMAP_SUPERSEDED : MDT_ENOTFOUND;
    } else if (last_unload(KF, fi) >= s || tomb_seq(r.start, r.end) >= s || s < f->gen) {
        rc = MDT_IDMAP_SUPERSEDED;
    } else {
        r.gen = f->gen;
        bool newer = false, same = false;
        for (int j = 0; j < M.nrg; j++) {
            struct range *x = &M.rg[j];
            if (x->start >= r.end || x->end <= r.start)
                continue;
            newer |= x->seq > s;
            same |= x->start == r.start && x->end == r.end && x->fid == r.fid && x->gen == r.gen;
        }
        if (same) {
            /* News of the range at s (not of its function's content). */
            for (int j = 0; j < M.nrg; j++)
                if (M.rg[j].start == r.start && M.rg[j].seq < s)
                    M.rg[j].seq = s;
            return MDT_IDMAP_DUPLICATE;
        }
        rc = newer ? MDT_IDMAP_SUPERSEDED : MDT_IDMAP_APPLIED;
    }
    /* Applied or not, the memory held this code at s. */
    drop_overlaps(&r, rc == MDT_IDMAP_APPLIED);
    if (rc != MDT_IDMAP_APPLIED) {
        tomb_raise(r.start, r.end, s);
        return rc;
    }
    for (int j = slot_of(r.start); j < slot_of(r.end - 1) + 1; j++)
        M.tomb[j] = 0; /* older than r (or r was refused); r stands for them */
    M.rg[M.nrg++] = r;
    return MDT_IDMAP_APPLIED;
}

static int model_code_remove(int a, uint64_t s)
{
    if (s < M.wm)
        return MDT_IDMAP_SUPERSEDED;
    uintptr_t start = 0x800000 + (uintptr_t)a * 0x10;
    for (int j = 0; j < M.nrg; j++) {
        if (M.rg[j].start != start)
            continue;
        if (M.rg[j].seq > s)
            return MDT_IDMAP_SUPERSEDED;
        tomb_raise(start, M.rg[j].end, s);
        M.rg[j] = M.rg[--M.nrg];
        return MDT_IDMAP_APPLIED;
    }
    /* Code never seen: a tombstone for its start. */
    if (tomb_seq(start, start + 1) >= s)
        return MDT_IDMAP_DUPLICATE;
    tomb_raise(start, start + 1, s);
    return MDT_IDMAP_APPLIED;
}

static int model_retire(uint64_t below)
{
    int dropped = 0;
    if (below > M.wm)
        M.wm = below;
    for (int k = KM; k <= KF; k++)
        for (int j = 0; j < 64; j++)
            if (M.r[k][j].exists && !M.r[k][j].live && M.r[k][j].seq < M.wm) {
                M.r[k][j].exists = false;
                dropped++;
            }
    for (int k = 0; k < 5; k++)
        for (int j = 0; j < 64; j++)
            if (M.hist[k][j] < M.wm)
                M.hist[k][j] = 0;
    for (int j = 0; j < NADDR; j++)
        if (M.tomb[j] < M.wm)
            M.tomb[j] = 0;
    return dropped;
}

/* ---- comparing --------------------------------------------------------- */

static mdt_idmap *MAP;

static void check_module(int i)
{
    mdt_idmap_module_info mi;
    struct rec *r = &M.r[KM][i];
    int rc = mdt_idmap_module_lookup(&mi, MAP, idof(KM, i), 0);
    bool live = r->exists && r->live;
    if ((rc == 0) != live) {
        FAILF("module %d: lookup %d, model live %d", i, rc, live);
        return;
    }
    if (live && (mi.gen != r->gen || mi.appdomain != r->dom || mi.assembly != r->asmb ||
                 mi.mvid[0] != r->mvid))
        FAILF("module %d: fields differ (gen %" PRIu64 "/%" PRIu64 ", dom %lx/%lx, asm %lx/%lx, "
              "mvid %d/%d)",
              i, mi.gen, r->gen, (unsigned long)mi.appdomain, (unsigned long)r->dom,
              (unsigned long)mi.assembly, (unsigned long)r->asmb, mi.mvid[0], r->mvid);
}

static void check_class(int i)
{
    mdt_idmap_class_info ci;
    uintptr_t a[4];
    struct rec *r = &M.r[KC][i];
    int rc = mdt_idmap_class_lookup(&ci, a, 4, MAP, idof(KC, i), 0);
    bool live = r->exists && r->live;
    if ((rc == 0) != live) {
        FAILF("class %d: lookup %d, model live %d (seq %" PRIu64 ")", i, rc, live, r->seq);
        return;
    }
    if (!live)
        return;
    if (ci.gen != r->gen || ci.module != r->module || ci.token != r->token ||
        ci.shape != r->shape || ci.prim != r->prim || ci.rank != r->rank || ci.nargs != r->nargs ||
        memcmp(a, r->args, r->nargs * sizeof a[0]) != 0)
        FAILF("class %d: fields differ (gen %" PRIu64 "/%" PRIu64 ")", i, ci.gen, r->gen);
    /* reverse lookup: some live class with this content */
    uintptr_t got;
    mdt_idmap_class_info key = {r->module, r->token, r->shape, 0, r->rank, r->nargs, r->args, 0};
    if (mdt_idmap_class_find(&got, NULL, MAP, &key) != 0)
        FAILF("class %d: reverse lookup failed", i);
    else {
        struct rec *g = &M.r[KC][idx(KC, got)];
        if (!g->live || g->module != r->module || g->token != r->token || g->nargs != r->nargs ||
            g->shape != r->shape || g->rank != r->rank ||
            memcmp(g->args, r->args, r->nargs * sizeof a[0]) != 0)
            FAILF("class %d: reverse lookup gave a different class", i);
    }
    if (r->shape == MDT_IDMAP_SHAPE_TYPEDEF &&
        mdt_idmap_typedef_loaded(MAP, r->module, r->token) != 1)
        FAILF("class %d: typedef not reported loaded", i);
}

static void check_function(int i)
{
    mdt_idmap_function_info fi;
    uintptr_t a[4];
    struct rec *r = &M.r[KF][i];
    int rc = mdt_idmap_function_lookup(&fi, a, 4, MAP, idof(KF, i), 0);
    bool live = r->exists && r->live;
    if ((rc == 0) != live) {
        FAILF("function %d: lookup %d, model live %d", i, rc, live);
        return;
    }
    if (live && (fi.gen != r->gen || fi.module != r->module || fi.token != r->token ||
                 fi.class_id != r->cls || fi.nargs != r->nargs ||
                 memcmp(a, r->args, r->nargs * sizeof a[0]) != 0))
        FAILF("function %d: fields differ", i);
}

static void check_ip(int a)
{
    mdt_idmap_code_range cr;
    uintptr_t ip = 0x800000 + (uintptr_t)a * 0x10 + 7;
    int rc = mdt_idmap_ip_lookup(&cr, MAP, ip);
    const struct range *want = NULL;
    for (int j = 0; j < M.nrg; j++)
        if (M.rg[j].start <= ip && ip < M.rg[j].end)
            want = &M.rg[j];
    if ((rc == 0) != (want != NULL))
        FAILF("ip slot %d: lookup %d, model %s", a, rc, want ? "has a range" : "none");
    else if (want && (cr.function_id != want->fid || cr.function_gen != want->gen ||
                      cr.start != want->start))
        FAILF("ip slot %d: other range", a);
}

static void check_typedef_absent(void)
{
    uintptr_t mod = idof(KM, pick(NMOD));
    uint32_t tok = 0x02000001 + (uint32_t)pick(4);
    bool any = false;
    for (int j = 0; j < NCLS; j++) {
        struct rec *r = &M.r[KC][j];
        any |= r->exists && r->live && r->shape == 0 && r->module == mod && r->token == tok;
    }
    if (mdt_idmap_typedef_loaded(MAP, mod, tok) != (int)any)
        FAILF("typedef presence differs");
}

static void check_all(void)
{
    for (int i = 0; i < NMOD; i++)
        check_module(i);
    for (int i = 0; i < NCLS; i++)
        check_class(i);
    for (int i = 0; i < NFN; i++)
        check_function(i);
    for (int a = 0; a < NADDR; a++)
        check_ip(a);
}

/* ---- random operations ------------------------------------------------- */

static uint64_t seq;
static unsigned long long hist_out[4];

static uint64_t some_seq(void)
{
    /* Mostly new events; a third are enumeration items generated earlier. */
    if (pick(3) == 0 && seq > 2) {
        uint64_t back = (uint64_t)pick(40) + 1;
        return seq > back ? seq - back : 1;
    }
    return ++seq;
}

static void random_payload(int kind, struct rec *p)
{
    memset(p, 0, sizeof *p);
    if (kind == KM) {
        p->dom = pick(4) ? idof(KD, pick(NDOM)) : 0;
        p->asmb = pick(4) ? idof(KA, pick(NASM)) : 0;
        p->mvid = (uint8_t)(pick(4) ? 1 + pick(2) : 0);
        return;
    }
    p->module = idof(KM, pick(NMOD));
    if (kind == KC) {
        int sh = pick(8);
        if (sh >= 5) {
            p->shape = (uint8_t)(sh - 4); /* SZARRAY, ARRAY, PTR */
            p->module = 0;
            p->nargs = 1;
            p->args[0] = idof(KC, pick(NCLS));
            if (p->shape == MDT_IDMAP_SHAPE_ARRAY)
                p->rank = (uint16_t)(1 + pick(2));
            return;
        }
        p->token = 0x02000001 + (uint32_t)pick(4);
        p->prim = (uint8_t)(pick(6) == 0 ? 0x08 : pick(8) == 0 ? 0x0e : 0); /* I4, STRING */
        p->nargs = (uint32_t)pick(4);
    } else {
        p->token = 0x06000001 + (uint32_t)pick(4);
        p->cls = pick(2) ? idof(KC, pick(NCLS)) : 0;
        p->nargs = (uint32_t)pick(3);
    }
    for (uint32_t a = 0; a < p->nargs; a++)
        p->args[a] = idof(KC, pick(NCLS));
}

static int impl_load(int kind, int i, const struct rec *p, uint64_t s)
{
    if (kind == KM) {
        mdt_idmap_module_info mi = {0};
        mi.appdomain = p->dom;
        mi.assembly = p->asmb;
        mi.mvid[0] = p->mvid;
        return mdt_idmap_module_load(MAP, idof(KM, i), &mi, s);
    }
    if (kind == KC) {
        mdt_idmap_class_info ci = {p->module, p->token, p->shape, p->prim,
                                   p->rank,   p->nargs, p->args,  0};
        return mdt_idmap_class_load(MAP, idof(KC, i), &ci, s);
    }
    mdt_idmap_function_info fi = {p->module, p->token, p->cls, p->nargs, p->args, 0};
    return mdt_idmap_function_load(MAP, idof(KF, i), &fi, s);
}

static void one_op(void)
{
    int what = pick(100);
    int got, want;
    char name[96];
    if (what < 45) {
        int kind = what < 8 ? KM : what < 28 ? KC : KF;
        int n = kind == KM ? NMOD : kind == KC ? NCLS : NFN;
        int i = pick(n);
        struct rec p;
        uint64_t s = some_seq();
        random_payload(kind, &p);
        /* Often repeat what the model holds (duplicates, fills). */
        if (pick(3) == 0 && M.r[kind][i].exists && M.r[kind][i].live) {
            p = M.r[kind][i];
            if (kind == KF && pick(2))
                p.cls = 0;
            if (kind == KM && pick(2))
                p.dom = 0;
        }
        want = model_load(kind, i, &p, s);
        got = impl_load(kind, i, &p, s);
        snprintf(name, sizeof name, "load k%d #%d s%" PRIu64 " d%lx a%lx m%d", kind, i, s,
                 (unsigned long)p.dom, (unsigned long)p.asmb, p.mvid);
    } else if (what < 60) {
        int kind = pick(10) < 6 ? (pick(2) ? KC : KF) : pick(5);
        int n = kind == KM ? NMOD : kind == KC ? NCLS : kind == KF ? NFN : kind == KD ? NDOM : NASM;
        int i = pick(n);
        uint64_t s = some_seq();
        want = model_unload(kind, i, s);
        uintptr_t id = idof(kind, i);
        got = kind == KM   ? mdt_idmap_module_unload(MAP, id, s)
              : kind == KC ? mdt_idmap_class_unload(MAP, id, s)
              : kind == KF ? mdt_idmap_function_unload(MAP, id, s)
              : kind == KD ? mdt_idmap_appdomain_shutdown(MAP, id, s)
                           : mdt_idmap_assembly_unload(MAP, id, s);
        snprintf(name, sizeof name, "unload k%d #%d s%" PRIu64, kind, i, s);
    } else if (what < 75) {
        int a = pick(NADDR - 4), len = 1 + pick(4), fi = pick(NFN);
        uint64_t s = some_seq();
        want = model_code_add(a, len, fi, s);
        got = mdt_idmap_code_add(MAP, 0x800000 + (uintptr_t)a * 0x10, (size_t)len * 0x10,
                                 idof(KF, fi), s);
        snprintf(name, sizeof name, "code_add %d+%d f%d", a, len, fi);
    } else if (what < 78) {
        int a = pick(NADDR);
        uint64_t s = some_seq();
        want = model_code_remove(a, s);
        got = mdt_idmap_code_remove(MAP, 0x800000 + (uintptr_t)a * 0x10, s);
        snprintf(name, sizeof name, "code_remove %d", a);
    } else if (what == 78 && pick(20) == 0 && seq > 100) {
        uint64_t below = seq - 60;
        want = model_retire(below);
        got = mdt_idmap_retire(MAP, below);
        snprintf(name, sizeof name, "retire %" PRIu64, below);
    } else {
        check_module(pick(NMOD));
        check_class(pick(NCLS));
        check_function(pick(NFN));
        check_ip(pick(NADDR));
        check_typedef_absent();
        return;
    }
    model_filter_ranges();
    hist_out[want < 0 ? 3 : want > 2 ? 0 : want]++;
    if (got != want)
        FAILF("%s: outcome %d, model %d", name, got, want);
    if (getenv("RM_TRACE"))
        fprintf(stderr, "op %llu %s -> %d\n", op_now, name, got);
    check_class(pick(NCLS));
    check_function(pick(NFN));
    check_ip(pick(NADDR));
}

int main(int argc, char **argv)
{
    unsigned long long ops = argc > 1 ? strtoull(argv[1], NULL, 0) : 500000;
    unsigned long long seeds[16] = {1, 2, 3, 4};
    int nseeds = 4;
    if (argc > 2) {
        nseeds = 0;
        for (int i = 2; i < argc && nseeds < 16; i++)
            seeds[nseeds++] = strtoull(argv[i], NULL, 0);
    }
    unsigned long long total = 0;
    int seeds_failed = 0;
    for (int s = 0; s < nseeds; s++) {
        seed_now = seeds[s];
        rng_state = 0x9E3779B97F4A7C15ull * (seed_now + 1);
        memset(&M, 0, sizeof M);
        seq = 0;
        if (mdt_idmap_new(&MAP, NULL) != 0)
            return 2;
        int before = failures;
        for (op_now = 0; op_now < ops && failures - before < 10; op_now++) {
            one_op();
            if (op_now % 50000 == 0)
                check_all();
        }
        check_all();
        total += op_now;
        mdt_idmap_free(MAP);
        seeds_failed += failures > before;
        printf("seed %llu: %llu operations, %d failures (applied %llu, duplicate %llu, "
               "superseded %llu, not found %llu)\n",
               seed_now, op_now, failures - before, hist_out[0], hist_out[1], hist_out[2],
               hist_out[3]);
        memset(hist_out, 0, sizeof hist_out);
    }
    printf("%llu operations\n", total);
    printf("%d passed, %d failed\n", nseeds - seeds_failed, seeds_failed);
    return failures ? 1 : 0;
}
