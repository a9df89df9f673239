/* Benchmark of the runtime-ID maps against two baselines:
 *   flat   - a single-threaded open-addressing table with the same 64-byte
 *            entries, hash, probing and load factor, no atomics, no
 *            reclamation (the floor);
 *   rwlock - the same flat table behind a pthread_rwlock (what profilers
 *            hand-roll).
 * 10^6 class entries (ClassID -> module, TypeDef, one type argument):
 * lookup by ID in random and in insertion order, reverse lookup by content,
 * lookup by instruction pointer over 10^5 code ranges, insert, remove;
 * per-operation latency (p50, p99; rdtsc, timer overhead subtracted) and
 * memory per entry; then 2 reader threads looking up while 1 writer inserts
 * and removes, for the idmap and the rwlock map.
 * Usage: bench_idmap [entries] [ranges] [seconds-for-concurrent-run] */
#define _GNU_SOURCE
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mdtools/idmap.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
static inline uint64_t ticks(void)
{
    unsigned aux;
    return __rdtscp(&aux);
}
#else
static inline uint64_t ticks(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
#endif

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double ns_per_tick;
static uint64_t tick_overhead;

static void calibrate(void)
{
    double t0 = now_s();
    uint64_t k0 = ticks();
    while (now_s() - t0 < 0.2)
        ;
    ns_per_tick = (now_s() - t0) * 1e9 / (double)(ticks() - k0);
    uint64_t best[2001];
    for (int i = 0; i < 2001; i++) {
        uint64_t a = ticks();
        best[i] = ticks() - a;
    }
    uint64_t mn = best[0];
    for (int i = 1; i < 2001; i++)
        mn = best[i] < mn ? best[i] : mn;
    tick_overhead = mn;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

struct lat {
    double p50, p99;
};

static struct lat summarize(uint64_t *t, size_t n)
{
    qsort(t, n, sizeof *t, cmp_u64);
    struct lat l;
    uint64_t a = t[n / 2], b = t[n * 99 / 100];
    l.p50 = (double)(a > tick_overhead ? a - tick_overhead : 0) * ns_per_tick;
    l.p99 = (double)(b > tick_overhead ? b - tick_overhead : 0) * ns_per_tick;
    return l;
}

static uint64_t rs = 88172645463325252ull;
static uint64_t rnd(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return rs;
}

/* ---- the flat floor ----------------------------------------------------- */

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

struct fent { /* 64 bytes, like the idmap slot */
    uintptr_t key;
    uint64_t gen;
    uintptr_t module;
    uint32_t token, nargs;
    uintptr_t args[2];
    uint64_t pad[2];
};

struct rent {
    uint64_t h;
    uintptr_t id;
};

struct flat {
    struct fent *e;
    size_t mask, used;
    struct rent *r;
    size_t rmask, rused;
};

#define TOMB ((uintptr_t)1)

static uint64_t content_hash(uintptr_t module, uint32_t token, uint32_t n, const uintptr_t *a)
{
    uint64_t h = mix(module ^ 0x636c617373ull) + token;
    h = mix(h ^ n);
    for (uint32_t i = 0; i < n; i++)
        h = mix(h ^ a[i]);
    return h | 1;
}

static void flat_init(struct flat *f, size_t cap)
{
    f->e = aligned_alloc(64, cap * sizeof *f->e);
    memset(f->e, 0, cap * sizeof *f->e);
    f->mask = cap - 1;
    f->used = 0;
    f->r = calloc(cap, sizeof *f->r);
    f->rmask = cap - 1;
    f->rused = 0;
}

static void flat_rput(struct flat *f, uint64_t h, uintptr_t id);

static void flat_grow(struct flat *f)
{
    struct flat n;
    flat_init(&n, (f->mask + 1) * 2);
    for (size_t i = 0; i <= f->mask; i++) {
        if (f->e[i].key <= TOMB)
            continue;
        size_t j = (size_t)mix(f->e[i].key) & n.mask;
        while (n.e[j].key)
            j = (j + 1) & n.mask;
        n.e[j] = f->e[i];
        n.used++;
        flat_rput(&n, content_hash(f->e[i].module, f->e[i].token, f->e[i].nargs, f->e[i].args),
                  f->e[i].key);
    }
    free(f->e);
    free(f->r);
    *f = n;
}

static void flat_rput(struct flat *f, uint64_t h, uintptr_t id)
{
    size_t j = (size_t)h & f->rmask;
    while (f->r[j].id)
        j = (j + 1) & f->rmask;
    f->r[j].h = h;
    f->r[j].id = id;
    f->rused++;
}

static void flat_insert(struct flat *f, uintptr_t id, uintptr_t module, uint32_t token,
                        uintptr_t arg)
{
    if ((f->used + 1) * 4 > (f->mask + 1) * 3 || (f->rused + 1) * 4 > (f->rmask + 1) * 3)
        flat_grow(f);
    size_t j = (size_t)mix(id) & f->mask;
    while (f->e[j].key > TOMB && f->e[j].key != id)
        j = (j + 1) & f->mask;
    if (f->e[j].key == 0)
        f->used++;
    f->e[j] = (struct fent){id, 1, module, token, 1, {arg, 0}, {0, 0}};
    flat_rput(f, content_hash(module, token, 1, &arg), id);
}

static const struct fent *flat_find(const struct flat *f, uintptr_t id)
{
    size_t j = (size_t)mix(id) & f->mask;
    for (;;) {
        const struct fent *e = &f->e[j];
        if (e->key == id)
            return e;
        if (e->key == 0)
            return NULL;
        j = (j + 1) & f->mask;
    }
}

static uintptr_t flat_reverse(const struct flat *f, uintptr_t module, uint32_t token, uintptr_t arg)
{
    uint64_t h = content_hash(module, token, 1, &arg);
    size_t j = (size_t)h & f->rmask;
    for (; f->r[j].id; j = (j + 1) & f->rmask) {
        if (f->r[j].h != h)
            continue;
        const struct fent *e = flat_find(f, f->r[j].id);
        if (e && e->module == module && e->token == token && e->args[0] == arg)
            return e->key;
    }
    return 0;
}

static void flat_remove(struct flat *f, uintptr_t id)
{
    size_t j = (size_t)mix(id) & f->mask;
    for (;;) {
        struct fent *e = &f->e[j];
        if (e->key == id) {
            e->key = TOMB;
            return;
        }
        if (e->key == 0)
            return;
        j = (j + 1) & f->mask;
    }
}

/* Code ranges: a sorted array, binary search (floor for IP lookup). */
struct frange {
    uintptr_t start, end, fid;
};

static const struct frange *franges_find(const struct frange *r, size_t n, uintptr_t ip)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r[mid].start <= ip)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo && ip < r[lo - 1].end ? &r[lo - 1] : NULL;
}

/* ---- workload ------------------------------------------------------------ */

static size_t N, R;
static uintptr_t *ids;   /* insertion order */
static uintptr_t *perm;  /* random order */
static uintptr_t MODULE = 0x7f0000001000;

static uintptr_t arg_of(size_t i)
{
    return 0x7f5500000000 + (i % 1000) * 0x40;
}
static uint32_t token_of(size_t i)
{
    return 0x02000001 + (uint32_t)(i % 0xfffff);
}

static volatile uintptr_t sink;

static void print_row(const char *what, struct lat a, struct lat b, struct lat c, bool has_c)
{
    if (has_c)
        printf("| %-28s | %7.1f / %7.1f | %7.1f / %7.1f | %7.1f / %7.1f | %5.2fx |\n", what, a.p50,
               a.p99, b.p50, b.p99, c.p50, c.p99, a.p50 / (b.p50 > 0 ? b.p50 : 1));
    else
        printf("| %-28s | %7.1f / %7.1f | %7.1f / %7.1f | %17s | %5.2fx |\n", what, a.p50, a.p99,
               b.p50, b.p99, "-", a.p50 / (b.p50 > 0 ? b.p50 : 1));
}

/* ---- concurrent phase ------------------------------------------------------ */

static mdt_idmap *MAP;
static struct flat RWF;
static pthread_rwlock_t RWL = PTHREAD_RWLOCK_INITIALIZER;
static _Atomic bool stop;
static int use_rw;
static int grow_mode; /* writer inserts fresh IDs (tables grow) instead of churning */

struct rres {
    double worst; /* slowest batch of 1024 lookups, seconds */
    uint64_t ops;
    uint64_t *samples;
    size_t nsamples;
};

static void *conc_reader(void *arg)
{
    struct rres *res = arg;
    uint64_t s = (uint64_t)(uintptr_t)arg | 1;
    uint64_t ops = 0;
    size_t ns = 0;
    double last = now_s();
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        uintptr_t id = ids[s % N];
        bool sample = (ops & 63) == 0 && ns < 1000000;
        uint64_t t0 = sample ? ticks() : 0;
        if (use_rw) {
            pthread_rwlock_rdlock(&RWL);
            const struct fent *e = flat_find(&RWF, id);
            sink = e ? e->token : 0;
            pthread_rwlock_unlock(&RWL);
        } else {
            mdt_idmap_class_info ci;
            uintptr_t a[2];
            sink = mdt_idmap_class_lookup(MAP, &ci, a, 2, id, 0) == 0 ? ci.token : 0;
        }
        if (sample)
            res->samples[ns++] = ticks() - t0;
        if ((ops & 1023) == 0) {
            /* The slowest batch of 1024 lookups catches any stall. */
            double tnow = now_s();
            if (ops && tnow - last > res->worst)
                res->worst = tnow - last;
            last = tnow;
        }
        ops++;
    }
    res->ops = ops;
    res->nsamples = ns;
    return NULL;
}

static void *conc_writer(void *arg)
{
    uint64_t *count = arg;
    uint64_t seq = 50000000, n = 0;
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        uintptr_t id = grow_mode ? 0x7d0000000000 + n * 0x40 : 0x7e0000000000 + (n % 100000) * 0x40;
        uintptr_t a = arg_of(n);
        if (grow_mode && n >= 2000000)
            break;
        if (use_rw) {
            pthread_rwlock_wrlock(&RWL);
            if (n >= 100000 && !grow_mode)
                flat_remove(&RWF, id);
            flat_insert(&RWF, id, MODULE, token_of(n), a);
            pthread_rwlock_unlock(&RWL);
        } else {
            mdt_idmap_class_info ci = {MODULE, token_of(n), 0, 0, 0, 1, &a, 0};
            if (n >= 100000 && !grow_mode)
                mdt_idmap_class_unload(MAP, id, ++seq);
            mdt_idmap_class_load(MAP, id, &ci, ++seq);
        }
        n++;
    }
    *count = n;
    return NULL;
}

static double worst_lookup;

static void concurrent(double seconds, const char *name, double *rate, struct lat *l,
                       uint64_t *writes)
{
    pthread_t r[2], w;
    struct rres res[2];
    atomic_store(&stop, false);
    for (int i = 0; i < 2; i++) {
        res[i].samples = malloc(1000000 * sizeof(uint64_t));
        res[i].worst = 0;
        pthread_create(&r[i], NULL, conc_reader, &res[i]);
    }
    pthread_create(&w, NULL, conc_writer, writes);
    double t0 = now_s();
    while (now_s() - t0 < seconds) {
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    atomic_store(&stop, true);
    for (int i = 0; i < 2; i++)
        pthread_join(r[i], NULL);
    pthread_join(w, NULL);
    double el = now_s() - t0;
    uint64_t ops = res[0].ops + res[1].ops;
    size_t n = res[0].nsamples + res[1].nsamples;
    uint64_t *all = malloc((n + 1) * sizeof *all);
    memcpy(all, res[0].samples, res[0].nsamples * sizeof *all);
    memcpy(all + res[0].nsamples, res[1].samples, res[1].nsamples * sizeof *all);
    *rate = (double)ops / el;
    worst_lookup = res[0].worst > res[1].worst ? res[0].worst : res[1].worst;
    *l = summarize(all, n ? n : 1);
    free(all);
    free(res[0].samples);
    free(res[1].samples);
    (void)name;
}

int main(int argc, char **argv)
{
    N = argc > 1 ? strtoul(argv[1], NULL, 0) : 1000000;
    R = argc > 2 ? strtoul(argv[2], NULL, 0) : 100000;
    double secs = argc > 3 ? atof(argv[3]) : 2.0;
    calibrate();
    ids = malloc(N * sizeof *ids);
    perm = malloc(N * sizeof *perm);
    uint64_t *t = malloc((N > R ? N : R) * sizeof *t);
    /* ClassIDs look like heap pointers: increasing, 64-byte steps with gaps. */
    uintptr_t a = 0x7f3000000000;
    for (size_t i = 0; i < N; i++) {
        a += 0x40 * (1 + rnd() % 4);
        ids[i] = a;
        perm[i] = a;
    }
    for (size_t i = N - 1; i > 0; i--) {
        size_t j = rnd() % (i + 1);
        uintptr_t x = perm[i];
        perm[i] = perm[j];
        perm[j] = x;
    }

    printf("# %zu classes, %zu code ranges; ns per operation, p50 / p99 (rdtsc, "
           "%.1f ns timer overhead subtracted)\n\n",
           N, R, (double)tick_overhead * ns_per_tick);

    /* insert */
    struct flat F;
    flat_init(&F, 64);
    mdt_idmap_options o = {0};
    mdt_idmap_new(&MAP, &o);
    mdt_idmap_module_info mi = {0};
    mi.mvid[0] = 1;
    mdt_idmap_module_load(MAP, MODULE, &mi, 1);
    uint64_t seq = 10;
    for (size_t i = 0; i < N; i++) {
        uintptr_t arg = arg_of(i);
        mdt_idmap_class_info ci = {MODULE, token_of(i), 0, 0, 0, 1, &arg, 0};
        uint64_t t0 = ticks();
        mdt_idmap_class_load(MAP, ids[i], &ci, ++seq);
        t[i] = ticks() - t0;
    }
    struct lat ins_i = summarize(t, N);
    for (size_t i = 0; i < N; i++) {
        uint64_t t0 = ticks();
        flat_insert(&F, ids[i], MODULE, token_of(i), arg_of(i));
        t[i] = ticks() - t0;
    }
    struct lat ins_f = summarize(t, N);
    pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;

    mdt_idmap_stats st;
    mdt_idmap_synchronize(MAP);
    mdt_idmap_stats_get(MAP, &st);

    /* lookups */
    struct lat lk[3][3];
    for (int order = 0; order < 2; order++) {
        const uintptr_t *seqv = order ? ids : perm;
        for (size_t i = 0; i < N; i++) {
            mdt_idmap_class_info ci;
            uintptr_t ab[2];
            uint64_t t0 = ticks();
            mdt_idmap_class_lookup(MAP, &ci, ab, 2, seqv[i], 0);
            t[i] = ticks() - t0;
            sink = ci.token;
        }
        lk[order][0] = summarize(t, N);
        for (size_t i = 0; i < N; i++) {
            uint64_t t0 = ticks();
            const struct fent *e = flat_find(&F, seqv[i]);
            t[i] = ticks() - t0;
            sink = e->token;
        }
        lk[order][1] = summarize(t, N);
        for (size_t i = 0; i < N; i++) {
            uint64_t t0 = ticks();
            pthread_rwlock_rdlock(&rw);
            const struct fent *e = flat_find(&F, seqv[i]);
            uint32_t tok = e->token;
            pthread_rwlock_unlock(&rw);
            t[i] = ticks() - t0;
            sink = tok;
        }
        lk[order][2] = summarize(t, N);
    }
    /* reverse */
    for (size_t k = 0; k < N; k++) {
        size_t i = (size_t)(rnd() % N);
        uintptr_t arg = arg_of(i), got;
        mdt_idmap_class_info key = {MODULE, token_of(i), 0, 0, 0, 1, &arg, 0};
        uint64_t t0 = ticks();
        mdt_idmap_class_find(MAP, &got, NULL, &key);
        t[k] = ticks() - t0;
        sink = got;
    }
    struct lat rev_i = summarize(t, N);
    for (size_t k = 0; k < N; k++) {
        size_t i = (size_t)(rnd() % N);
        uint64_t t0 = ticks();
        sink = flat_reverse(&F, MODULE, token_of(i), arg_of(i));
        t[k] = ticks() - t0;
    }
    struct lat rev_f = summarize(t, N);
    uint64_t typedef_t0 = ticks();
    for (size_t k = 0; k < N; k++)
        sink = (uintptr_t)mdt_idmap_typedef_loaded(MAP, MODULE, token_of(k));
    double typedef_ns = (double)(ticks() - typedef_t0) * ns_per_tick / (double)N;

    /* code ranges */
    struct frange *fr = malloc(R * sizeof *fr);
    uintptr_t code = 0x7f6000000000;
    for (size_t i = 0; i < R; i++) {
        uintptr_t fid = 0x7f4000000000 + i * 0x40;
        mdt_idmap_function_info fi = {MODULE, 0x06000001 + (uint32_t)i, 0, 0, NULL, 0};
        mdt_idmap_function_load(MAP, fid, &fi, ++seq);
        size_t sz = 0x40 + (rnd() % 0x400);
        fr[i] = (struct frange){code, code + sz, fid};
        code += sz + 0x10;
    }
    /* insert the ranges in JIT-like (increasing) order for idmap */
    double t_ranges = now_s();
    for (size_t i = 0; i < R; i++)
        mdt_idmap_code_add(MAP, fr[i].start, fr[i].end - fr[i].start, fr[i].fid, ++seq);
    t_ranges = (now_s() - t_ranges) * 1e9 / (double)R;
    for (size_t k = 0; k < R; k++) {
        size_t i = (size_t)(rnd() % R);
        uintptr_t ip = fr[i].start + (fr[i].end - fr[i].start) / 2;
        mdt_idmap_code_range cr;
        uint64_t t0 = ticks();
        mdt_idmap_ip_lookup(MAP, &cr, ip);
        t[k] = ticks() - t0;
        sink = cr.function_id;
    }
    struct lat ip_i = summarize(t, R);
    for (size_t k = 0; k < R; k++) {
        size_t i = (size_t)(rnd() % R);
        uintptr_t ip = fr[i].start + (fr[i].end - fr[i].start) / 2;
        uint64_t t0 = ticks();
        const struct frange *x = franges_find(fr, R, ip);
        t[k] = ticks() - t0;
        sink = x->fid;
    }
    struct lat ip_f = summarize(t, R);
    for (size_t k = 0; k < R; k++) {
        size_t i = (size_t)(rnd() % R);
        uintptr_t ip = fr[i].start + (fr[i].end - fr[i].start) / 2;
        uint64_t t0 = ticks();
        pthread_rwlock_rdlock(&rw);
        const struct frange *x = franges_find(fr, R, ip);
        uintptr_t fid = x->fid;
        pthread_rwlock_unlock(&rw);
        t[k] = ticks() - t0;
        sink = fid;
    }
    struct lat ip_r = summarize(t, R);

    /* remove (class unload) */
    size_t nrem = N / 10;
    for (size_t k = 0; k < nrem; k++) {
        uint64_t t0 = ticks();
        mdt_idmap_class_unload(MAP, perm[k], ++seq);
        t[k] = ticks() - t0;
    }
    struct lat rem_i = summarize(t, nrem);
    for (size_t k = 0; k < nrem; k++) {
        uint64_t t0 = ticks();
        flat_remove(&F, perm[k]);
        t[k] = ticks() - t0;
    }
    struct lat rem_f = summarize(t, nrem);

    printf("| operation                    | idmap p50 / p99   | flat p50 / p99    | rwlock p50 / p99  | idmap/flat |\n");
    printf("| --- | --- | --- | --- | --- |\n");
    print_row("lookup by ID, random", lk[0][0], lk[0][1], lk[0][2], true);
    print_row("lookup by ID, sequential", lk[1][0], lk[1][1], lk[1][2], true);
    print_row("reverse (module,TypeDef,args)", rev_i, rev_f, rev_f, false);
    print_row("lookup by IP (10^5 ranges)", ip_i, ip_f, ip_r, true);
    print_row("insert", ins_i, ins_f, ins_f, false);
    print_row("remove (class unload)", rem_i, rem_f, rem_f, false);
    printf("\nTypeDef presence check: %.1f ns mean; code range insert (idmap, JIT order): %.0f ns mean\n",
           typedef_ns, t_ranges);
    printf("\nmemory after 10^6 inserts (idmap): slot %zu B; forward table %.1f B/entry, "
           "reverse+presence %.1f B/entry, dependents+history %.1f B/entry, total %.1f B/entry\n",
           st.class_slot_size, (double)st.bytes_tables / (double)st.classes_live,
           (double)st.bytes_index / (double)st.classes_live,
           (double)st.bytes_writer / (double)st.classes_live,
           (double)(st.bytes_tables + st.bytes_index + st.bytes_writer + st.bytes_args) /
               (double)st.classes_live);
    printf("memory (flat): entry %zu B; table %.1f B/entry, reverse %.1f B/entry\n",
           sizeof(struct fent), (double)((F.mask + 1) * sizeof *F.e) / (double)N,
           (double)((F.rmask + 1) * sizeof *F.r) / (double)N);
    mdt_idmap_stats_get(MAP, &st);
    printf("code ranges (idmap): %.1f B/range\n", (double)st.bytes_ranges / (double)R);

    /* concurrent: 2 readers + 1 writer */
    RWF = F;
    for (grow_mode = 0; grow_mode < 2; grow_mode++) {
        double rate_i, rate_r, worst_i, worst_r;
        struct lat cl_i, cl_r;
        uint64_t w_i = 0, w_r = 0;
        if (grow_mode) {
            /* Fill both maps to just below their next growth. */
            mdt_idmap_stats_get(MAP, &st);
            size_t cap = st.bytes_tables / 64; /* about: module + function tables are small */
            size_t target = 1;
            while (target < cap)
                target <<= 1;
            target = target / 2 * 3 / 4;
            for (size_t i = st.classes_live; i + 20000 < target; i++) {
                uintptr_t id = 0x7c0000000000 + i * 0x40, arg = arg_of(i);
                mdt_idmap_class_info ci = {MODULE, token_of(i), 0, 0, 0, 1, &arg, 0};
                mdt_idmap_class_load(MAP, id, &ci, ++seq);
            }
            for (size_t i = 0; (RWF.used + 20000) * 4 < (RWF.mask + 1) * 3; i++)
                flat_insert(&RWF, 0x7b0000000000 + i * 0x40, MODULE, token_of(i), arg_of(i));
        }
        use_rw = 0;
        concurrent(secs, "idmap", &rate_i, &cl_i, &w_i);
        worst_i = worst_lookup;
        use_rw = 1;
        concurrent(secs, "rwlock", &rate_r, &cl_r, &w_r);
        worst_r = worst_lookup;
        printf("\n2 readers + 1 writer, %.1f s each, writer %s:\n", secs,
               grow_mode ? "inserting new IDs across a table growth"
                         : "unloading and reloading 10^5 IDs (steady state)");
        printf("| map | reader lookups/s (both) | reader p50 / p99 ns | slowest 1024 lookups | writer ops/s |\n"
               "| --- | --- | --- | --- | --- |\n");
        printf("| idmap | %.3g | %.1f / %.1f | %.3f ms | %.3g |\n", rate_i, cl_i.p50, cl_i.p99,
               worst_i * 1e3, (double)w_i / secs);
        printf("| rwlock | %.3g | %.1f / %.1f | %.3f ms | %.3g |\n", rate_r, cl_r.p50, cl_r.p99,
               worst_r * 1e3, (double)w_r / secs);
        printf("idmap/rwlock: reader throughput %.2fx, p50 %.2fx, p99 %.2fx, longest %.2fx "
               "(>1 = idmap better)\n",
               rate_i / rate_r, cl_r.p50 / (cl_i.p50 > 0 ? cl_i.p50 : 1),
               cl_r.p99 / (cl_i.p99 > 0 ? cl_i.p99 : 1), worst_r / (worst_i > 0 ? worst_i : 1e-9));
    }
    mdt_idmap_free(MAP);
    return 0;
}
