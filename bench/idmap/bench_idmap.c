/* Benchmark of the runtime-ID maps against two baselines:
 *   flat   - a single-threaded open-addressing table with plain 64-byte
 *            entries (every field at full width, as one would write it;
 *            the idmap packs its records into 32 bytes), the same hash,
 *            probing, load factor and huge-page advice, no atomics, no
 *            reclamation, and one sorted array of code ranges (the floor);
 *   rwlock - the same flat table behind a pthread_rwlock (what profilers
 *            hand-roll), laid out so that it does not suffer false sharing;
 *            in the concurrent phase of both kinds, reader-preferring
 *            (glibc's default) and writer-preferring.
 * 10^6 class entries (ClassID -> module, TypeDef, one type argument):
 * lookup by ID in random and in insertion order, reverse lookup by content,
 * lookup by instruction pointer over 10^5 code ranges (10^6 lookups), the
 * three map variants taking turns in blocks of 1,000 operations on the same
 * keys; insert, remove; per-operation latency (p50, p99; rdtsc, timer
 * overhead subtracted); throughput of independent lookups by ID; memory per
 * entry with a breakdown, for this workload and for a realistic mix of
 * classes and functions. Then 2 reader threads looking up while 1 writer
 * churns (as fast as it can, or paced), inserts across a table growth, or
 * sleeps, for the idmap and both rwlock maps: several runs each, taking
 * turns, reported as median [min-max], with lookups per reader CPU-second
 * besides lookups per second. A fourth turn in each configuration, the
 * ceiling, has the readers look up the flat table with no synchronization
 * at all while the writer stays idle: no correct map can beat it, so its
 * ratio to a lock bounds what any map could gain over that lock.
 * Usage: bench_idmap [entries] [ranges] [seconds per concurrent run] [runs] [conc]
 * (runs 0 skips the concurrent phase, "conc" the single-threaded one). */
#define _GNU_SOURCE
#include <inttypes.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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

struct fent { /* 64 bytes: every field at full width */
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

/* What lookups read, then (in another pair of cache lines) what inserts
 * update: the rwlock baseline should not lose to false sharing. `used`
 * counts live and dead forward slots, `live` the live records. */
struct flat {
    struct fent *e;
    size_t mask;
    struct rent *r;
    size_t rmask;
    alignas(128) size_t used, rused, live;
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

static uint64_t fent_hash(const struct fent *e)
{
    return content_hash(e->module, e->token, e->nargs, e->args);
}

/* Zeroed memory for a table, with the idmap's huge-page advice
 * (libmdtools/tokens/table.c): arrays of 8 MiB or more are aligned to 2 MiB
 * and their whole huge pages advised MADV_HUGEPAGE, so both maps pay the
 * same for address translation. */
static void *table_alloc(size_t bytes)
{
    const size_t huge = (size_t)2 << 20;
    size_t align = bytes >= 4 * huge ? huge : 64;
    void *p;
    if (posix_memalign(&p, align, bytes) != 0) {
        fprintf(stderr, "bench_idmap: out of memory\n");
        exit(1);
    }
    if (align == huge)
        (void)madvise(p, bytes & ~(huge - 1), MADV_HUGEPAGE);
    memset(p, 0, bytes);
    return p;
}

static void flat_init(struct flat *f, size_t cap)
{
    f->e = table_alloc(cap * sizeof *f->e);
    f->mask = cap - 1;
    f->used = 0;
    f->live = 0;
    f->r = table_alloc(cap * sizeof *f->r);
    f->rmask = cap - 1;
    f->rused = 0;
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

/* A removed record's reverse entry is deleted, as the idmap deletes its
 * own, by backward shift (each later entry of the run that may live at the
 * hole moves into it), so that churn leaves no tombstones there and never
 * makes the table rebuild under the lock. */
static void flat_rdelete(struct flat *f, size_t j)
{
    for (size_t k = (j + 1) & f->rmask; f->r[k].id; k = (k + 1) & f->rmask) {
        size_t home = (size_t)f->r[k].h & f->rmask;
        if (((k - home) & f->rmask) >= ((k - j) & f->rmask)) {
            f->r[j] = f->r[k];
            j = k;
        }
    }
    f->r[j].h = 0;
    f->r[j].id = 0;
    f->rused--;
}

/* Rebuild both tables without dead slots, at twice the size only when the
 * live records need it (load above 1/2), so that dead slots do not keep
 * doubling the table. */
static void flat_rebuild(struct flat *f)
{
    struct flat n;
    size_t cap = f->mask + 1;
    flat_init(&n, f->live * 2 >= cap ? cap * 2 : cap);
    for (size_t i = 0; i <= f->mask; i++) {
        if (f->e[i].key <= TOMB)
            continue;
        size_t j = (size_t)mix(f->e[i].key) & n.mask;
        while (n.e[j].key)
            j = (j + 1) & n.mask;
        n.e[j] = f->e[i];
        n.used++;
        n.live++;
        flat_rput(&n, fent_hash(&f->e[i]), f->e[i].key);
    }
    free(f->e);
    free(f->r);
    f->e = n.e;
    f->mask = n.mask;
    f->r = n.r;
    f->rmask = n.rmask;
    f->used = n.used;
    f->rused = n.rused;
    f->live = n.live;
}

static void flat_remove(struct flat *f, uintptr_t id);

static void flat_insert(struct flat *f, uintptr_t id, uintptr_t module, uint32_t token,
                        uintptr_t arg)
{
    if ((f->used + 1) * 4 > (f->mask + 1) * 3 || (f->rused + 1) * 4 > (f->rmask + 1) * 3)
        flat_rebuild(f);
    /* the record's slot if it is there, else the first dead or empty one */
    size_t j = (size_t)mix(id) & f->mask, at = SIZE_MAX;
    for (; f->e[j].key && f->e[j].key != id; j = (j + 1) & f->mask)
        if (f->e[j].key == TOMB && at == SIZE_MAX)
            at = j;
    if (f->e[j].key == id)
        flat_remove(f, id);
    else if (at == SIZE_MAX)
        f->used++;
    if (at == SIZE_MAX)
        at = j;
    f->live++;
    f->e[at] = (struct fent){id, 1, module, token, 1, {arg, 0}, {0, 0}};
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
    for (;; j = (j + 1) & f->mask) {
        struct fent *e = &f->e[j];
        if (e->key == 0)
            return;
        if (e->key != id)
            continue;
        uint64_t h = fent_hash(e);
        for (size_t k = (size_t)h & f->rmask; f->r[k].id; k = (k + 1) & f->rmask) {
            if (f->r[k].h == h && f->r[k].id == id) {
                flat_rdelete(f, k);
                break;
            }
        }
        e->key = TOMB;
        f->live--;
        return;
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
static uintptr_t *ids;  /* insertion order */
static uintptr_t *perm; /* random order */
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

/* The VM this runs on is shared and grants the process a varying share of
 * its 2 CPUs, so every concurrent measurement is repeated (the maps
 * take turns, in an order rotated from run to run) and reported as the
 * median with the smallest and largest value. Besides lookups per
 * wall-clock second, each reader counts lookups per second of its own CPU
 * time: that figure does not depend on how much CPU the VM happens to
 * grant, only on what a lookup costs while the writer works. */

/* The maps under test: the idmap, and the flat table behind a
 * pthread_rwlock of either kind glibc offers. The default prefers readers:
 * with two readers always inside, its writer gets in only when both happen
 * to be out at once. A profiler that must not stall class-load callbacks
 * would pick the writer-preferring kind (nonrecursive: a reader never
 * re-enters), under which a waiting writer holds new readers back. */
enum { M_IDMAP, M_RW_READER, M_RW_WRITER, M_CEIL, NMAPS };
static const char *const map_name[NMAPS] = {"idmap", "rwlock, reader-preferring (default)",
                                            "rwlock, writer-preferring",
                                            "ceiling: flat, no synchronization, writer idle"};

static bool is_lock(int m)
{
    return m == M_RW_READER || m == M_RW_WRITER;
}

struct rwmap {
    alignas(128) pthread_rwlock_t lock;
    alignas(128) struct flat f;
};

static void rwmap_set_kind(struct rwmap *m, int kind)
{
    pthread_rwlockattr_t a;
    pthread_rwlock_destroy(&m->lock);
    pthread_rwlockattr_init(&a);
    pthread_rwlockattr_setkind_np(&a, kind == M_RW_WRITER
                                          ? PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP
                                          : PTHREAD_RWLOCK_PREFER_READER_NP);
    pthread_rwlock_init(&m->lock, &a);
    pthread_rwlockattr_destroy(&a);
}

static mdt_idmap *MAP;
/* Each on its own lines: the threads share only what the maps share. Both
 * rwlock kinds use the same table (one map runs at a time). */
static struct rwmap RW = {.lock = PTHREAD_RWLOCK_INITIALIZER};
static alignas(128) _Atomic bool stop;
static int cur_map;
/* What the writer does: churn (unload + reload of CHURN IDs) as fast as it
 * can; the same paced at PACE unload+reload pairs per second (the same
 * work for every map, CPU left to the readers); insert new IDs across a
 * table growth; or sleep (readers alone, for reference). */
enum { W_CHURN, W_PACED, W_GROW, W_IDLE, W_NMODES };
/* Readers draw their IDs from all N loaded classes, or (hot != 0) from the
 * first HOT of them: a sampling profiler resolves mostly the same few
 * thousand hot functions and classes, whose records stay in cache. */
enum { HOT = 10000 };
static size_t hot;
static const double PACE = 20000;
static int wmode;
static uint64_t wseq = 50000000; /* writer seq, increasing across runs */
static uint64_t wn;              /* writer position in the churn cycle, across runs */
static size_t CHURN = 100000;    /* N / 10 */
static uintptr_t grow_base;

static double thread_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct rres {
    alignas(128) double worst; /* slowest batch of 1024 lookups, seconds */
    double cpu;                /* reader thread CPU seconds */
    uint64_t ops;
    uint64_t *samples;
    size_t nsamples;
};

static void *conc_reader(void *arg)
{
    struct rres *res = arg;
    /* Everything the loop touches besides the map is thread-local. */
    const uintptr_t *idv = ids;
    const size_t n = hot ? hot : N;
    const mdt_idmap *map = MAP;
    struct rwmap *rw = &RW;
    const bool flat = cur_map != M_IDMAP, locked = is_lock(cur_map);
    uint64_t *samples = res->samples;
    uint64_t s = (uint64_t)(uintptr_t)arg | 1;
    uint64_t ops = 0;
    uintptr_t acc = 0;
    size_t ns = 0;
    double worst = 0;
    double cpu0 = thread_cpu_s();
    double last = now_s();
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        uintptr_t id = idv[s % n];
        bool sample = (ops & 63) == 0 && ns < 1000000;
        uint64_t t0 = sample ? ticks() : 0;
        if (flat) {
            if (locked)
                pthread_rwlock_rdlock(&rw->lock);
            const struct fent *e = flat_find(&rw->f, id);
            acc += e ? e->token : 0;
            if (locked)
                pthread_rwlock_unlock(&rw->lock);
        } else {
            mdt_idmap_class_info ci;
            uintptr_t a[2];
            acc += mdt_idmap_class_lookup(&ci, a, 2, map, id, 0) == 0 ? ci.token : 0;
        }
        if (sample)
            samples[ns++] = ticks() - t0;
        if ((ops & 1023) == 0) {
            /* The slowest batch of 1024 lookups catches any stall. */
            double tnow = now_s();
            if (ops && tnow - last > worst)
                worst = tnow - last;
            last = tnow;
        }
        ops++;
    }
    res->cpu = thread_cpu_s() - cpu0;
    res->worst = worst;
    res->ops = ops;
    res->nsamples = ns;
    sink = acc;
    return NULL;
}

/* One writer step on the map under test: load `id` with the content of
 * workload item n, after unloading it when `unload`. */
static void write_one(uintptr_t id, uint64_t n, bool unload)
{
    uintptr_t a = arg_of(n);
    if (cur_map == M_IDMAP) {
        mdt_idmap_class_info ci = {MODULE, token_of(n), 0, 0, 0, 1, &a, 0};
        if (unload)
            mdt_idmap_class_unload(MAP, id, ++wseq);
        mdt_idmap_class_load(MAP, id, &ci, ++wseq);
    } else {
        pthread_rwlock_wrlock(&RW.lock);
        if (unload)
            flat_remove(&RW.f, id);
        flat_insert(&RW.f, id, MODULE, token_of(n), a);
        pthread_rwlock_unlock(&RW.lock);
    }
}

static uintptr_t churn_id(uint64_t n)
{
    return 0x7e0000000000 + (n % CHURN) * 0x40;
}

struct wres {
    uint64_t ops;
    double cpu;
};

static void *conc_writer(void *arg)
{
    struct wres *w = arg;
    uint64_t n = 0;
    double cpu0 = thread_cpu_s(), t0 = now_s();
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        if (wmode == W_IDLE || cur_map == M_CEIL) {
            struct timespec ts = {0, 1000000};
            nanosleep(&ts, NULL);
            continue;
        }
        if (wmode == W_PACED && (n & 63) == 0) {
            double due = t0 + (double)n / PACE;
            double ahead = due - now_s();
            if (ahead > 0) {
                struct timespec ts = {0, (long)(ahead * 1e9)};
                nanosleep(&ts, NULL);
            }
        }
        if (wmode == W_GROW) {
            if (n >= 2000000)
                break;
            write_one(grow_base + n * 0x40, n, false);
        } else {
            write_one(churn_id(wn + n), wn + n, true);
        }
        n++;
    }
    w->cpu = thread_cpu_s() - cpu0;
    w->ops = n;
    return NULL;
}

struct cres {
    double rate;     /* reader lookups per wall second, both readers */
    double rate_cpu; /* reader lookups per reader CPU second */
    double p50, p99; /* reader latency, ns */
    double worst_ms; /* slowest batch of 1024 lookups */
    double wops;     /* writer operations per second */
    double wcpu;     /* writer CPU share (CPU seconds per second) */
};

static struct cres concurrent(double seconds)
{
    pthread_t r[2], w;
    struct rres res[2];
    struct wres wr = {0, 0};
    struct cres out;
    atomic_store(&stop, false);
    for (int i = 0; i < 2; i++) {
        memset(&res[i], 0, sizeof res[i]);
        res[i].samples = malloc(1000000 * sizeof(uint64_t));
        pthread_create(&r[i], NULL, conc_reader, &res[i]);
    }
    pthread_create(&w, NULL, conc_writer, &wr);
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
    struct lat l = summarize(all, n ? n : 1);
    out.rate = (double)ops / el;
    out.rate_cpu = (double)ops / (res[0].cpu + res[1].cpu > 0 ? res[0].cpu + res[1].cpu : 1);
    out.p50 = l.p50;
    out.p99 = l.p99;
    out.worst_ms = (res[0].worst > res[1].worst ? res[0].worst : res[1].worst) * 1e3;
    out.wops = (double)wr.ops / el;
    out.wcpu = wr.cpu / el;
    if (wmode == W_CHURN || wmode == W_PACED)
        wn += wr.ops;
    free(all);
    free(res[0].samples);
    free(res[1].samples);
    return out;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* "median [min-max]" of v[0..n) (sorts v). */
static const char *spread(char *buf, size_t len, double *v, int n, const char *fmt)
{
    char a[24], b[24], c[24];
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    double med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    snprintf(a, sizeof a, fmt, med);
    snprintf(b, sizeof b, fmt, v[0]);
    snprintf(c, sizeof c, fmt, v[n - 1]);
    snprintf(buf, len, "%s [%s-%s]", a, b, c);
    return buf;
}

#define MAXRUNS 15

static void print_conc(const char *name, struct cres *r, int runs)
{
    double v[7][MAXRUNS];
    char b[7][96];
    for (int i = 0; i < runs; i++) {
        v[0][i] = r[i].rate;
        v[1][i] = r[i].rate_cpu;
        v[2][i] = r[i].p50;
        v[3][i] = r[i].p99;
        v[4][i] = r[i].worst_ms;
        v[5][i] = r[i].wops;
        v[6][i] = r[i].wcpu;
    }
    printf("| %s | %s | %s | %s | %s | %s | %s | %s |\n", name,
           spread(b[0], 96, v[0], runs, "%.3g"), spread(b[1], 96, v[1], runs, "%.3g"),
           spread(b[2], 96, v[2], runs, "%.0f"), spread(b[3], 96, v[3], runs, "%.0f"),
           spread(b[4], 96, v[4], runs, "%.1f"), spread(b[5], 96, v[5], runs, "%.3g"),
           spread(b[6], 96, v[6], runs, "%.2f"));
}

/* For the growth runs: a fresh map of the kind under test, filled to 20,000
 * entries (fewer for small maps) below its next growth. */
static void grow_setup(size_t live, int run)
{
    size_t cap = 64;
    while (cap < live + live / 3 + 1)
        cap *= 2;
    size_t margin = cap / 64 < 20000 ? cap / 64 : 20000;
    size_t target = cap / 4 * 3 - margin;
    uint64_t seq = 10;
    if (cur_map == M_IDMAP) {
        mdt_idmap_options o = {0};
        mdt_idmap_new(&MAP, &o);
        mdt_idmap_module_info mi = {0};
        mi.mvid[0] = 1;
        mdt_idmap_module_load(MAP, MODULE, &mi, ++seq);
    } else {
        flat_init(&RW.f, 64);
    }
    for (size_t i = 0; i < target; i++) {
        uintptr_t arg = arg_of(i), id = ids[i % N] + (i / N) * 0x10;
        mdt_idmap_class_info ci = {MODULE, token_of(i), 0, 0, 0, 1, &arg, 0};
        if (cur_map == M_IDMAP)
            mdt_idmap_class_load(MAP, id, &ci, ++seq);
        else
            flat_insert(&RW.f, id, MODULE, token_of(i), arg);
    }
    if (seq > wseq)
        wseq = seq;
    grow_base = 0x7d0000000000 + (uintptr_t)run * 0x100000000;
}

static void grow_teardown(mdt_idmap *keep, const struct flat *keepf)
{
    if (cur_map == M_IDMAP) {
        mdt_idmap_free(MAP);
        MAP = keep;
    } else {
        free(RW.f.e);
        free(RW.f.r);
        RW.f = *keepf;
    }
}

static void run_concurrent(double secs, int runs, size_t live)
{
    for (int phase = 0; phase < 2 * W_NMODES; phase++) {
        wmode = phase % W_NMODES;
        hot = phase >= W_NMODES ? (HOT < live ? HOT : live) : 0;
        /* The 1-minute load average before and after says how busy the
         * shared VM was: with the load well above 2, the readers rarely run
         * at the same time. */
        double load[2] = {0, 0};
        getloadavg(&load[0], 1);
        struct cres res[NMAPS][MAXRUNS];
        double ratio[NMAPS][4][MAXRUNS];
        double ceil_ratio[NMAPS][2][MAXRUNS];
        for (int k = 0; k < runs; k++) {
            for (int j = 0; j < NMAPS; j++) {
                cur_map = (k + j) % NMAPS;
                if (is_lock(cur_map))
                    rwmap_set_kind(&RW, cur_map);
                mdt_idmap *keep = MAP;
                struct flat keepf = RW.f;
                if (wmode == W_GROW)
                    grow_setup(live, k * NMAPS + j);
                res[cur_map][k] = concurrent(secs);
                if (wmode == W_GROW)
                    grow_teardown(keep, &keepf);
            }
            const struct cres *ri = &res[M_IDMAP][k];
            const struct cres *rc = &res[M_CEIL][k];
            for (int m = M_RW_READER; m <= M_RW_WRITER; m++) {
                const struct cres *rr = &res[m][k];
                ratio[m][0][k] = ri->rate / rr->rate;
                ratio[m][1][k] = ri->rate_cpu / rr->rate_cpu;
                ratio[m][2][k] = rr->p50 / ri->p50;
                ratio[m][3][k] = rr->p99 / ri->p99;
                ceil_ratio[m][0][k] = rc->rate / rr->rate;
                ceil_ratio[m][1][k] = rc->rate_cpu / rr->rate_cpu;
            }
        }
        char paced[96];
        snprintf(paced, sizeof paced,
                 "unloading and reloading %zu IDs at %.0f pairs/s (steady state, paced)", CHURN,
                 PACE);
        char churn[96];
        snprintf(churn, sizeof churn,
                 "unloading and reloading %zu IDs as fast as it can (steady state)", CHURN);
        const char *const what[W_NMODES] = {churn, paced, "inserting new IDs across a table growth",
                                            "idle (readers alone, for reference)"};
        getloadavg(&load[1], 1);
        char keys[64];
        if (hot)
            snprintf(keys, sizeof keys, "a hot set of %zu", hot);
        else
            snprintf(keys, sizeof keys, "all %zu", live);
        printf("\n2 readers (IDs from %s loaded classes) + 1 writer, %d runs of %.1f s per map, "
               "writer %s; median [min-max] (load average %.1f before, %.1f after):\n",
               keys, runs, secs, what[wmode], load[0], load[1]);
        printf("| map | reader lookups/s (wall) | reader lookups per reader CPU-s | reader p50 ns "
               "| reader p99 ns | slowest 1024 lookups ms | writer ops/s | writer CPU-s/s |\n"
               "| --- | --- | --- | --- | --- | --- | --- | --- |\n");
        for (int m = 0; m < NMAPS; m++)
            print_conc(map_name[m], res[m], runs);
        for (int m = M_RW_READER; m <= M_RW_WRITER; m++) {
            char b[4][96];
            printf("idmap / %s, per run (>1 = idmap better): reader throughput %s, per CPU-s "
                   "%s, p50 %s, p99 %s\n",
                   map_name[m], spread(b[0], 96, ratio[m][0], runs, "%.2fx"),
                   spread(b[1], 96, ratio[m][1], runs, "%.2fx"),
                   spread(b[2], 96, ratio[m][2], runs, "%.2fx"),
                   spread(b[3], 96, ratio[m][3], runs, "%.2fx"));
            printf("ceiling / %s, per run (the most any map could gain): reader throughput %s, "
                   "per CPU-s %s\n",
                   map_name[m], spread(b[0], 96, ceil_ratio[m][0], runs, "%.2fx"),
                   spread(b[1], 96, ceil_ratio[m][1], runs, "%.2fx"));
        }
        fflush(stdout);
    }
    hot = 0;
}

/* ---- single-threaded latency ----------------------------------------------- */

enum { V_IDMAP, V_FLAT, V_RWLOCK, NV };

struct opctx {
    size_t n; /* keys */
    const struct flat *F;
    pthread_rwlock_t *rw;
    const uintptr_t *keys;
    const size_t *pick;
    const struct frange *fr;
};

/* The rwlock variant reads the same table as the flat one right after it:
 * it takes the keys half an array away, so that it finds no line the flat
 * variant has just loaded. */
static size_t key_index(int v, size_t k, const struct opctx *c)
{
    return v == V_RWLOCK ? (k + c->n / 2) % c->n : k;
}

/* Each returns the ticks of one operation of variant v on key k. */
static uint64_t op_lookup(int v, size_t k, const struct opctx *c)
{
    uintptr_t id = c->keys[key_index(v, k, c)];
    uint64_t t0 = ticks(), t1;
    if (v == V_IDMAP) {
        mdt_idmap_class_info ci;
        uintptr_t ab[2];
        mdt_idmap_class_lookup(&ci, ab, 2, MAP, id, 0);
        t1 = ticks();
        sink = ci.token;
    } else if (v == V_FLAT) {
        const struct fent *e = flat_find(c->F, id);
        t1 = ticks();
        sink = e->token;
    } else {
        pthread_rwlock_rdlock(c->rw);
        const struct fent *e = flat_find(c->F, id);
        uint32_t tok = e->token;
        pthread_rwlock_unlock(c->rw);
        t1 = ticks();
        sink = tok;
    }
    return t1 - t0;
}

static uint64_t op_reverse(int v, size_t k, const struct opctx *c)
{
    size_t i = c->pick[k];
    uintptr_t arg = arg_of(i), got = 0;
    uint64_t t0, t1;
    if (v == V_IDMAP) {
        mdt_idmap_class_info key = {MODULE, token_of(i), 0, 0, 0, 1, &arg, 0};
        t0 = ticks();
        mdt_idmap_class_find(&got, NULL, MAP, &key);
        t1 = ticks();
    } else {
        t0 = ticks();
        got = flat_reverse(c->F, MODULE, token_of(i), arg);
        t1 = ticks();
    }
    sink = got;
    return t1 - t0;
}

static uint64_t op_ip(int v, size_t k, const struct opctx *c)
{
    uintptr_t ip = c->keys[key_index(v, k, c)], fid;
    uint64_t t0 = ticks(), t1;
    if (v == V_IDMAP) {
        mdt_idmap_code_range cr;
        mdt_idmap_ip_lookup(&cr, MAP, ip);
        t1 = ticks();
        fid = cr.function_id;
    } else if (v == V_FLAT) {
        const struct frange *x = franges_find(c->fr, R, ip);
        t1 = ticks();
        fid = x->fid;
    } else {
        pthread_rwlock_rdlock(c->rw);
        const struct frange *x = franges_find(c->fr, R, ip);
        fid = x->fid;
        pthread_rwlock_unlock(c->rw);
        t1 = ticks();
    }
    sink = fid;
    return t1 - t0;
}

static void interleaved(size_t n, int nv, uint64_t **t,
                        uint64_t (*op)(int, size_t, const struct opctx *), const struct opctx *c)
{
    for (size_t b = 0; b < n; b += 1000)
        for (int v = 0; v < nv; v++)
            for (size_t k = b; k < b + 1000 && k < n; k++)
                t[v][k] = op(v, k, c);
}

/* Throughput of independent random lookups by ID, as a sampling profiler
 * resolving a whole stack issues them: a tight loop with no timer per
 * lookup and no dependency between lookups, so that the CPU overlaps their
 * cache misses. idmap and flat take turns in blocks of 1,000 lookups over
 * the same keys (which goes first alternates). Each of TPUT_PASSES passes
 * over the keys gives the median over its blocks of ns per lookup of each
 * (v[0] idmap, v[1] flat) and of their per-block ratio (v[2]): the median
 * leaves out the blocks in which this shared VM took the CPU away. */
#define TPUT_PASSES 5
#define TPUT_BLOCK 1000

static double median_d(double *x, size_t n)
{
    qsort(x, n, sizeof *x, cmp_d);
    return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
}

static void throughput_by_id(const struct flat *F, double v[3][TPUT_PASSES])
{
    size_t nb = (N + TPUT_BLOCK - 1) / TPUT_BLOCK;
    double *bt[3] = {malloc(nb * sizeof(double)), malloc(nb * sizeof(double)),
                     malloc(nb * sizeof(double))};
    uintptr_t acc = 0;
    for (int pass = 0; pass < TPUT_PASSES; pass++) {
        for (size_t i = 0; i < nb; i++) {
            size_t b = i * TPUT_BLOCK, e = b + TPUT_BLOCK < N ? b + TPUT_BLOCK : N;
            for (int turn = 0; turn < 2; turn++) {
                int m = (int)((i + (size_t)turn) % 2);
                uint64_t t0 = ticks();
                if (m == 0) {
                    for (size_t k = b; k < e; k++) {
                        mdt_idmap_class_info ci;
                        uintptr_t ab[2];
                        if (mdt_idmap_class_lookup(&ci, ab, 2, MAP, perm[k], 0) == 0)
                            acc += ci.token;
                    }
                } else {
                    for (size_t k = b; k < e; k++) {
                        const struct fent *x = flat_find(F, perm[k]);
                        acc += x ? x->token : 0;
                    }
                }
                bt[m][i] = (double)(ticks() - t0) * ns_per_tick / (double)(e - b);
            }
            bt[2][i] = bt[0][i] / bt[1][i];
        }
        for (int m = 0; m < 3; m++)
            v[m][pass] = median_d(bt[m], nb);
    }
    sink = acc;
    for (int m = 0; m < 3; m++)
        free(bt[m]);
}

/* One row of the memory table: bytes per entry of what `s` counts beyond
 * `base` (NULL: everything), for `entries` entries. */
static void print_mem(const char *what, const mdt_idmap_stats *s, const mdt_idmap_stats *base,
                      size_t entries)
{
    static const mdt_idmap_stats zero;
    if (!base)
        base = &zero;
    double n = (double)entries;
#define PER(field) ((double)(s->field - base->field) / n)
    double other = PER(bytes_writer) - PER(bytes_deps) - PER(bytes_history);
    double total = PER(bytes_tables) + PER(bytes_index) + PER(bytes_writer);
    printf("| %s | %zu | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | **%.1f** |\n", what,
           entries, PER(bytes_tables), PER(bytes_reverse), PER(bytes_presence), PER(bytes_deps),
           PER(bytes_history), other, PER(bytes_args), total);
#undef PER
}

static void print_mem_header(void)
{
    printf("| entries | count | forward tables | reverse index | TypeDef presence | dependents "
           "| unload history | other writer-only | type-argument arrays (excluded) "
           "| total excl. arrays |\n"
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
}

/* The second memory workload, closer to a real process than the first
 * (where every class is its own generic TypeDef): n classes, 3/4 of them
 * non-generic TypeDefs over 500 modules and 1/4 instantiations of 3,000
 * generic TypeDefs (1 or 2 type arguments by TypeDef, the arguments
 * non-generic classes); then n functions, 4 for each of a quarter of the
 * classes (JIT-compiled code clusters in the classes a program uses), 1 in 20
 * with a method type argument. Prints the breakdown for the classes, the
 * functions, and both together. */
static void memory_realistic(size_t n)
{
    enum { MODULES = 500, GENERIC_DEFS = 3000 };
    mdt_idmap *m;
    mdt_idmap_options o = {0};
    mdt_idmap_new(&m, &o);
    uint64_t seq = 1;
    uintptr_t mods[MODULES];
    for (size_t i = 0; i < MODULES; i++) {
        mdt_idmap_module_info mi = {0};
        mi.mvid[0] = (uint8_t)(i + 1);
        mi.mvid[1] = (uint8_t)((i + 1) >> 8);
        mods[i] = 0x7f1000000000 + i * 0x1000;
        mdt_idmap_module_load(m, mods[i], &mi, ++seq);
    }
    size_t nng = n / 4 * 3 / MODULES * MODULES; /* non-generic classes */
    if (nng == 0)
        nng = n;
    uint32_t gen_token0 = 0x02000001 + (uint32_t)(nng / MODULES);
    uintptr_t *cls = malloc(n * sizeof *cls), *cmod = malloc(n * sizeof *cmod);
    uintptr_t a = 0x7f2000000000;
    for (size_t i = 0; i < n; i++) {
        a += 0x40 * (1 + rnd() % 4);
        cls[i] = a;
        mdt_idmap_class_info ci = {
            mods[i % MODULES], 0x02000001 + (uint32_t)(i / MODULES), 0, 0, 0, 0, NULL, 0};
        uintptr_t args[2];
        if (i >= nng) {
            /* instantiation j of generic TypeDef g, with argument j / 3000 */
            size_t j = i - nng, g = j % GENERIC_DEFS;
            ci.module = mods[g % MODULES];
            ci.token = gen_token0 + (uint32_t)(g / MODULES);
            args[0] = cls[(j / GENERIC_DEFS) % nng];
            args[1] = cls[(j * 7919) % nng];
            ci.nargs = 1 + (uint32_t)(g % 2);
            ci.args = args;
        }
        cmod[i] = ci.module;
        mdt_idmap_class_load(m, cls[i], &ci, ++seq);
    }
    mdt_idmap_stats sc, sf;
    mdt_idmap_synchronize(m);
    mdt_idmap_stats_get(&sc, m);
    size_t owners = n / 4 ? n / 4 : 1;
    for (size_t f = 0; f < n; f++) {
        size_t own = f % owners * (n / owners); /* owning class */
        uintptr_t arg = cls[(f * 31) % nng];
        mdt_idmap_function_info fi = {
            cmod[own], 0x06000001 + (uint32_t)(f / owners), cls[own], f % 20 == 0, &arg, 0};
        mdt_idmap_function_load(m, 0x7f4800000000 + f * 0x40, &fi, ++seq);
    }
    mdt_idmap_synchronize(m);
    mdt_idmap_stats_get(&sf, m);
    printf("\nmemory, workload 2 (realistic mix): %zu classes (%zu non-generic TypeDefs over %d "
           "modules, %zu instantiations of %d generic TypeDefs with 1-2 type arguments), then "
           "%zu functions (owned by %zu classes; 1 in 20 with a method type argument); "
           "B per entry:\n",
           sc.classes_live, nng, MODULES, n - nng, GENERIC_DEFS, sf.functions_live, owners);
    print_mem_header();
    print_mem("classes", &sc, NULL, sc.classes_live);
    print_mem("functions (added)", &sf, &sc, sf.functions_live);
    print_mem("classes + functions", &sf, NULL, sf.classes_live + sf.functions_live);
    mdt_idmap_free(m);
    free(cls);
    free(cmod);
}

/* Single-threaded latency of every operation against the flat table, and
 * memory; ends with 10% of the classes unloaded. */
static void latency_phase(struct flat *F, uint64_t *t, uint64_t *seq, struct lat ins_i,
                          struct lat ins_f, mdt_idmap_stats *st)
{
    pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;

    /* Lookups: the variants take turns in blocks of 1,000 operations on the
     * same keys, so that a burst of load from elsewhere on this shared VM
     * hits all of them alike. */
    struct lat lk[3][3];
    uint64_t *tv[NV] = {t, malloc(N * sizeof *t), malloc(N * sizeof *t)};
    struct opctx c = {N, F, &rw, NULL, NULL, NULL};
    for (int order = 0; order < 2; order++) {
        c.keys = order ? ids : perm;
        interleaved(N, NV, tv, op_lookup, &c);
        for (int v = 0; v < NV; v++)
            lk[order][v] = summarize(tv[v], N);
    }
    double tput[3][TPUT_PASSES];
    throughput_by_id(F, tput);
    /* reverse */
    size_t *pick = malloc(N * sizeof *pick);
    for (size_t k = 0; k < N; k++)
        pick[k] = (size_t)(rnd() % N);
    c.pick = pick;
    interleaved(N, 2, tv, op_reverse, &c);
    struct lat rev_i = summarize(tv[V_IDMAP], N), rev_f = summarize(tv[V_FLAT], N);
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
        mdt_idmap_function_load(MAP, fid, &fi, ++*seq);
        size_t sz = 0x40 + (rnd() % 0x400);
        fr[i] = (struct frange){code, code + sz, fid};
        code += sz + 0x10;
    }
    /* insert the ranges in JIT-like (increasing) order for idmap */
    double t_ranges = now_s();
    for (size_t i = 0; i < R; i++)
        mdt_idmap_code_add(MAP, fr[i].start, fr[i].end - fr[i].start, fr[i].fid, ++*seq);
    t_ranges = (now_s() - t_ranges) * 1e9 / (double)R;
    uintptr_t *ipv = malloc(N * sizeof *ipv);
    for (size_t k = 0; k < N; k++) {
        size_t i = (size_t)(rnd() % R);
        ipv[k] = fr[i].start + (fr[i].end - fr[i].start) / 2;
    }
    c.keys = ipv;
    c.fr = fr;
    interleaved(N, NV, tv, op_ip, &c);
    struct lat ip_i = summarize(tv[V_IDMAP], N), ip_f = summarize(tv[V_FLAT], N),
               ip_r = summarize(tv[V_RWLOCK], N);
    free(ipv);
    free(pick);
    free(tv[1]);
    free(tv[2]);

    /* remove (class unload) */
    size_t nrem = N / 10;
    for (size_t k = 0; k < nrem; k++) {
        uint64_t t0 = ticks();
        mdt_idmap_class_unload(MAP, perm[k], ++*seq);
        t[k] = ticks() - t0;
    }
    struct lat rem_i = summarize(t, nrem);
    for (size_t k = 0; k < nrem; k++) {
        uint64_t t0 = ticks();
        flat_remove(F, perm[k]);
        t[k] = ticks() - t0;
    }
    struct lat rem_f = summarize(t, nrem);

    printf("| operation                    | idmap p50 / p99   | flat p50 / p99    | rwlock p50 / "
           "p99  | idmap/flat |\n");
    printf("| --- | --- | --- | --- | --- |\n");
    print_row("lookup by ID, random", lk[0][0], lk[0][1], lk[0][2], true);
    print_row("lookup by ID, sequential", lk[1][0], lk[1][1], lk[1][2], true);
    print_row("reverse (module,TypeDef,args)", rev_i, rev_f, rev_f, false);
    print_row("lookup by IP (10^5 ranges)", ip_i, ip_f, ip_r, true);
    print_row("insert", ins_i, ins_f, ins_f, false);
    print_row("remove (class unload)", rem_i, rem_f, rem_f, false);
    printf("\nTypeDef presence check: %.1f ns mean; code range insert (idmap, JIT order): %.0f ns "
           "mean\n",
           typedef_ns, t_ranges);
    char tb[3][96];
    printf("\nthroughput, independent random lookups by ID (tight loop, no timer per lookup; "
           "per pass the median over blocks of 1,000; median [min-max] of %d passes): idmap %s "
           "ns/op, flat %s ns/op, idmap/flat %s\n",
           TPUT_PASSES, spread(tb[0], 96, tput[0], TPUT_PASSES, "%.1f"),
           spread(tb[1], 96, tput[1], TPUT_PASSES, "%.1f"),
           spread(tb[2], 96, tput[2], TPUT_PASSES, "%.2fx"));
    printf("\nmemory, workload 1 (the lookup workload): %zu classes, each its own generic "
           "TypeDef with one type argument, right after the inserts; slot %zu B; B per entry "
           "(map object %zu B, not counted):\n",
           N, st->class_slot_size, st->bytes_map);
    print_mem_header();
    print_mem("classes", st, NULL, st->classes_live);
    printf("memory (flat): entry %zu B; table %.1f B/entry, reverse %.1f B/entry\n",
           sizeof(struct fent), (double)((F->mask + 1) * sizeof *F->e) / (double)N,
           (double)((F->rmask + 1) * sizeof *F->r) / (double)N);
    mdt_idmap_stats_get(st, MAP);
    printf("code ranges (idmap): %.1f B/range\n", (double)st->bytes_ranges / (double)R);
    memory_realistic(N);
}

int main(int argc, char **argv)
{
    N = argc > 1 ? strtoul(argv[1], NULL, 0) : 1000000;
    R = argc > 2 ? strtoul(argv[2], NULL, 0) : 100000;
    double secs = argc > 3 ? atof(argv[3]) : 2.0;
    int runs = argc > 4 ? atoi(argv[4]) : 5;
    bool conc_only = argc > 5 && strcmp(argv[5], "conc") == 0;
    if (runs < 0 || runs > MAXRUNS)
        runs = 5;
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
    mdt_idmap_stats st = {0};
    mdt_idmap_synchronize(MAP);
    mdt_idmap_stats_get(&st, MAP);

    if (conc_only) {
        for (size_t k = 0; k < N / 10; k++) {
            mdt_idmap_class_unload(MAP, perm[k], ++seq);
            flat_remove(&F, perm[k]);
        }
    } else {
        latency_phase(&F, t, &seq, ins_i, ins_f, &st);
    }

    /* concurrent: 2 readers + 1 writer; the churned IDs are loaded first so
     * that every run is in steady state */
    CHURN = N / 10 ? N / 10 : 1;
    RW.f = F; /* shared by both rwlock kinds */
    for (cur_map = M_IDMAP; cur_map <= M_RW_READER; cur_map++)
        for (size_t n = 0; n < CHURN; n++)
            write_one(churn_id(n), n, false);
    wn = CHURN;
    if (runs > 0)
        run_concurrent(secs, runs, N);
    mdt_idmap_free(MAP);
    return 0;
}
