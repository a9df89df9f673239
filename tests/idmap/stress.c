/* Stress: reader threads look up IDs while writer threads load and unload
 * the same ID values over and over (10,000 load/unload cycles in all), so
 * every address is reused thousands of times. Each cycle's records encode
 * the cycle number in every field (MVID, token, type arguments), so a
 * reader detects a torn record (fields from two cycles) and a stale answer:
 * before each lookup it reads the number of the last cycle whose module
 * unload has returned; an answer from that cycle or an older one is stale.
 * Writers also create fresh IDs that die as tombstones (the tables grow
 * under the readers) and one writer retires old tombstones now and then
 * (tables are rebuilt under the readers). A second phase runs 600
 * short-lived reader threads, 8 at a time (more threads than the map has
 * reader slots, so slots of exited threads must be reclaimed), against
 * records and code ranges that stay loaded while a writer splits and
 * rewrites the code-range leaves around them, grows the tables and waits
 * for grace periods: every lookup of a stable record must answer, and
 * correctly. Built plainly for `make check` and with -fsanitize=thread by
 * run-tsan.sh.
 * Usage: stress [cycles] [readers] [writers] */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mdtools/idmap.h>

#define MAXW 8
#define NCLS 4
#define NFN 2

static mdt_idmap *MAP;
static int nwriters, nreaders;
static long cycles_per_writer;
static _Atomic uint64_t seqctr;
static _Atomic uint64_t announce[MAXW];
static _Atomic long unloaded[MAXW]; /* last cycle whose unload returned */
static _Atomic bool done;
static _Atomic unsigned long stale, torn, found, lookups, retires;

static uintptr_t mod_id(int w)
{
    return 0x100000 + (uintptr_t)w * 0x1000;
}
static uintptr_t cls_id(int w, int k)
{
    return 0x200000 + (uintptr_t)w * 0x1000 + (uintptr_t)k * 0x40;
}
static uintptr_t fn_id(int w, int k)
{
    return 0x300000 + (uintptr_t)w * 0x1000 + (uintptr_t)k * 0x40;
}
static uintptr_t fresh_id(int w, long c)
{
    return 0x10000000 + ((uintptr_t)c * MAXW + (uintptr_t)w) * 0x40;
}
static uintptr_t code_at(int w)
{
    return 0x400000 + (uintptr_t)w * 0x1000;
}
static uint32_t rid(long c)
{
    return (uint32_t)(c % 0xfffff) + 1;
}
static uintptr_t arg_of(long c, int j)
{
    return 0x50000000 + (uintptr_t)c * 16 + (uintptr_t)j;
}

static uint64_t take_seq(int w)
{
    atomic_store(&announce[w], atomic_load(&seqctr) + 1);
    return atomic_fetch_add(&seqctr, 1) + 1;
}

static void idle(int w)
{
    atomic_store(&announce[w], UINT64_MAX);
}

static void must(int rc, const char *what)
{
    if (rc < 0) {
        fprintf(stderr, "writer: %s failed: %d\n", what, rc);
        exit(2);
    }
}

static void *writer(void *arg)
{
    int w = (int)(intptr_t)arg;
    for (long c = 1; c <= cycles_per_writer; c++) {
        mdt_idmap_module_info mi = {0};
        uint64_t v[2] = {(uint64_t)c, (uint64_t)c ^ (uint64_t)w};
        memcpy(mi.mvid, v, 16);
        mi.appdomain = 0xd000;
        mi.path = "/stress/m.dll";
        must(mdt_idmap_module_load(MAP, mod_id(w), &mi, take_seq(w)), "module load");
        for (int k = 0; k < NCLS; k++) {
            uintptr_t a[NCLS];
            for (int j = 0; j < k; j++)
                a[j] = arg_of(c, j);
            mdt_idmap_class_info ci = {mod_id(w), 0x02000000 | rid(c), 0, 0, 0, (uint32_t)k, a, 0};
            must(mdt_idmap_class_load(MAP, cls_id(w, k), &ci, take_seq(w)), "class load");
        }
        mdt_idmap_class_info fc = {mod_id(w), 0x02000000 | rid(c), 0, 0, 0, 0, NULL, 0};
        must(mdt_idmap_class_load(MAP, fresh_id(w, c), &fc, take_seq(w)), "fresh class");
        for (int k = 0; k < NFN; k++) {
            uintptr_t ma = arg_of(c, 7);
            mdt_idmap_function_info fi = {
                mod_id(w), 0x06000000 | rid(c), cls_id(w, k), (uint32_t)k, &ma, 0};
            must(mdt_idmap_function_load(MAP, fn_id(w, k), &fi, take_seq(w)), "function load");
        }
        must(mdt_idmap_code_add(MAP, code_at(w), 0x100, fn_id(w, 0), take_seq(w)), "code add");
        idle(w);
        must(mdt_idmap_module_unload(MAP, mod_id(w), take_seq(w)), "module unload");
        atomic_store_explicit(&unloaded[w], c, memory_order_release);
        idle(w);
        if (w == 0 && c % 500 == 0) {
            /* Retire tombstones no writer can still be behind. */
            uint64_t low = atomic_load(&seqctr) + 1;
            for (int i = 0; i < nwriters; i++) {
                uint64_t a = atomic_load(&announce[i]);
                if (a < low)
                    low = a;
            }
            must(mdt_idmap_retire(MAP, low), "retire");
            atomic_fetch_add(&retires, 1);
        }
    }
    return NULL;
}

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* The cycle encoded in a token (rid(c) == c + 1 below 0xfffff cycles). */
static long cycle_of(uint32_t token)
{
    return (long)(token & 0xffffff) - 1;
}

static void *reader(void *arg)
{
    uint64_t s = 0x9E3779B97F4A7C15ull * ((uint64_t)(intptr_t)arg + 1);
    unsigned long n = 0, f = 0, st = 0, tr = 0;
    while (!atomic_load_explicit(&done, memory_order_relaxed)) {
        int w = (int)(rnd(&s) % (uint64_t)nwriters);
        int what = (int)(rnd(&s) % 6);
        long u = atomic_load_explicit(&unloaded[w], memory_order_acquire);
        n++;
        if (what == 0) {
            mdt_idmap_module_info mi;
            if (mdt_idmap_module_lookup(&mi, MAP, mod_id(w), 0) == 0) {
                uint64_t v[2];
                memcpy(v, mi.mvid, 16);
                f++;
                if (v[1] != (v[0] ^ (uint64_t)w) || mi.appdomain != 0xd000)
                    tr++;
                else if ((long)v[0] <= u)
                    st++;
            }
        } else if (what <= 2) {
            int k = (int)(rnd(&s) % NCLS);
            mdt_idmap_class_info ci;
            uintptr_t a[NCLS];
            if (mdt_idmap_class_lookup(&ci, a, NCLS, MAP, cls_id(w, k), 0) == 0) {
                long c = cycle_of(ci.token);
                f++;
                bool bad = ci.module != mod_id(w) || ci.nargs != (uint32_t)k;
                for (int j = 0; j < k && !bad; j++)
                    bad = a[j] != arg_of(c, j);
                if (bad)
                    tr++;
                else if (c <= u)
                    st++;
            }
        } else if (what == 3) {
            mdt_idmap_code_range r;
            if (mdt_idmap_ip_lookup(&r, MAP, code_at(w) + 0x80) == 0) {
                mdt_idmap_function_info fi;
                uintptr_t ma;
                f++;
                if (r.function_id != fn_id(w, 0) || r.size != 0x100)
                    tr++;
                else if (mdt_idmap_function_lookup(&fi, &ma, 1, MAP, r.function_id,
                                                   r.function_gen) == 0) {
                    long c = cycle_of(fi.token);
                    if (fi.module != mod_id(w) || fi.class_id != cls_id(w, 0))
                        tr++;
                    else if (c <= u)
                        st++;
                }
                /* the same function with its module and owner in one
                 * read: all three of one cycle, whatever reloads race */
                mdt_idmap_function_desc d;
                uintptr_t da[4];
                if (mdt_idmap_function_describe(&d, da, 4, MAP, r.function_id, r.function_gen) ==
                    0) {
                    uint64_t v[2];
                    memcpy(v, d.mvid, 16);
                    if (d.module != mod_id(w) || d.class_id != cls_id(w, 0) || d.nargs != 0 ||
                        (d.module_gen && v[0] + 1 != (d.token & 0xffffff)) ||
                        (d.class_gen && (d.class_token != (0x02000000 | (d.token & 0xffffff)) ||
                                         d.class_nargs != 0)))
                        tr++;
                }
            }
        } else if (what == 4) {
            /* The unloaded cycle's TypeDef must be gone from the reverse
             * indexes. */
            if (u > 0) {
                mdt_idmap_class_info key = {mod_id(w), 0x02000000 | rid(u), 0, 0, 0, 0, NULL, 0};
                uintptr_t id;
                if (mdt_idmap_typedef_loaded(MAP, mod_id(w), 0x02000000 | rid(u)) != 0 ||
                    mdt_idmap_class_find(&id, NULL, MAP, &key) == 0)
                    st++;
            }
        } else {
            char buf[128];
            int k = (int)(rnd(&s) % NCLS);
            int len = mdt_idmap_class_descriptor(buf, sizeof buf, MAP, cls_id(w, k), 0);
            if (len > 0)
                f++;
        }
    }
    atomic_fetch_add(&lookups, n);
    atomic_fetch_add(&found, f);
    atomic_fetch_add(&stale, st);
    atomic_fetch_add(&torn, tr);
    return NULL;
}

/* ---- phase 2: short-lived readers, code-range churn ------------------- */

#define P2_MOD 0x7000000u
#define P2_NCLS 64
#define P2_NFN 2000
#define P2_THREADS 600
#define P2_BATCH 8

static _Atomic bool p2_done;
static _Atomic unsigned long p2_lookups, p2_bad;

static uintptr_t p2_cls(int i)
{
    return 0x7100000 + (uintptr_t)i * 64;
}
static uintptr_t p2_fn(int i)
{
    return 0x7200000 + (uintptr_t)i * 64;
}
static uintptr_t p2_code(int i)
{
    return 0x60000000 + (uintptr_t)i * 0x200; /* stable ranges: [+0, +0x100) */
}

static void *p2_writer(void *arg)
{
    (void)arg;
    uint64_t s = 12345;
    long round = 0;
    while (!atomic_load(&p2_done)) {
        /* Ranges of other functions between the stable ones, in random
         * order: leaves split and get copied around the stable ranges. */
        int order[P2_NFN];
        for (int i = 0; i < P2_NFN; i++)
            order[i] = i;
        for (int i = P2_NFN - 1; i > 0; i--) {
            int j = (int)(rnd(&s) % (uint64_t)(i + 1)), t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        for (int k = 0; k < P2_NFN && !atomic_load(&p2_done); k++) {
            int i = order[k];
            must(mdt_idmap_code_add(MAP, p2_code(i) + 0x100, 0x80, p2_fn(P2_NFN + i),
                                    atomic_fetch_add(&seqctr, 1) + 1),
                 "p2 code add");
        }
        for (int k = 0; k < P2_NFN && !atomic_load(&p2_done); k++)
            must(mdt_idmap_code_remove(MAP, p2_code(order[k]) + 0x100,
                                       atomic_fetch_add(&seqctr, 1) + 1),
                 "p2 code remove");
        /* Fresh classes: the class table and its reverse index grow. */
        for (int k = 0; k < 2000; k++) {
            mdt_idmap_class_info ci = {P2_MOD, 0x02000100, 0, 0, 0, 0, NULL, 0};
            must(mdt_idmap_class_load(MAP,
                                      0x80000000 + ((uintptr_t)round * 2000 + (uintptr_t)k) * 64,
                                      &ci, atomic_fetch_add(&seqctr, 1) + 1),
                 "p2 class load");
        }
        mdt_idmap_synchronize(MAP);
        round++;
    }
    return NULL;
}

static void *p2_reader(void *arg)
{
    uint64_t s = 0x9E3779B97F4A7C15ull * ((uint64_t)(intptr_t)arg + 7);
    unsigned long bad = 0;
    for (int n = 0; n < 3000; n++) {
        if (n & 1) {
            int i = (int)(rnd(&s) % P2_NCLS);
            mdt_idmap_class_info ci;
            if (mdt_idmap_class_lookup(&ci, NULL, 0, MAP, p2_cls(i), 0) != 0 ||
                ci.token != 0x02000001u + (uint32_t)i)
                bad++;
        } else {
            int i = (int)(rnd(&s) % P2_NFN);
            mdt_idmap_code_range r;
            if (mdt_idmap_ip_lookup(&r, MAP, p2_code(i) + 0x80) != 0 || r.function_id != p2_fn(i) ||
                r.start != p2_code(i))
                bad++;
        }
    }
    atomic_fetch_add(&p2_lookups, 3000);
    atomic_fetch_add(&p2_bad, bad);
    return NULL;
}

static bool phase2(void)
{
    mdt_idmap_module_info mi = {0};
    mi.mvid[0] = 0x42;
    must(mdt_idmap_module_load(MAP, P2_MOD, &mi, atomic_fetch_add(&seqctr, 1) + 1), "p2 module");
    for (int i = 0; i < P2_NCLS; i++) {
        mdt_idmap_class_info ci = {P2_MOD, 0x02000001u + (uint32_t)i, 0, 0, 0, 0, NULL, 0};
        must(mdt_idmap_class_load(MAP, p2_cls(i), &ci, atomic_fetch_add(&seqctr, 1) + 1),
             "p2 class");
    }
    for (int i = 0; i < 2 * P2_NFN; i++) {
        mdt_idmap_function_info fi = {P2_MOD, 0x06000001u + (uint32_t)i, 0, 0, NULL, 0};
        must(mdt_idmap_function_load(MAP, p2_fn(i), &fi, atomic_fetch_add(&seqctr, 1) + 1),
             "p2 function");
    }
    for (int i = 0; i < P2_NFN; i++)
        must(mdt_idmap_code_add(MAP, p2_code(i), 0x100, p2_fn(i), atomic_fetch_add(&seqctr, 1) + 1),
             "p2 stable range");
    pthread_t w, r[P2_BATCH];
    pthread_create(&w, NULL, p2_writer, NULL);
    for (int t = 0; t < P2_THREADS; t += P2_BATCH) {
        for (int i = 0; i < P2_BATCH; i++)
            pthread_create(&r[i], NULL, p2_reader, (void *)(intptr_t)(t + i));
        for (int i = 0; i < P2_BATCH; i++)
            pthread_join(r[i], NULL);
    }
    atomic_store(&p2_done, true);
    pthread_join(w, NULL);
    mdt_idmap_synchronize(MAP);
    printf("phase 2: %d short-lived reader threads, %lu lookups of stable records, %lu wrong\n",
           P2_THREADS, atomic_load(&p2_lookups), atomic_load(&p2_bad));
    return atomic_load(&p2_bad) == 0;
}

int main(int argc, char **argv)
{
    long cycles = argc > 1 ? atol(argv[1]) : 10000;
    nreaders = argc > 2 ? atoi(argv[2]) : 8;
    nwriters = argc > 3 ? atoi(argv[3]) : 3;
    if (nwriters < 1 || nwriters > MAXW || nreaders < 1 || nreaders > 64)
        return 2;
    cycles_per_writer = (cycles + nwriters - 1) / nwriters;
    if (mdt_idmap_new(&MAP, NULL) != 0)
        return 2;
    for (int i = 0; i < MAXW; i++)
        atomic_init(&announce[i], UINT64_MAX);
    pthread_t r[64], w[MAXW];
    for (int i = 0; i < nreaders; i++)
        pthread_create(&r[i], NULL, reader, (void *)(intptr_t)i);
    for (int i = 0; i < nwriters; i++)
        pthread_create(&w[i], NULL, writer, (void *)(intptr_t)i);
    for (int i = 0; i < nwriters; i++)
        pthread_join(w[i], NULL);
    atomic_store(&done, true);
    for (int i = 0; i < nreaders; i++)
        pthread_join(r[i], NULL);
    bool ok2 = phase2();
    mdt_idmap_stats st;
    mdt_idmap_stats_get(&st, MAP);
    mdt_idmap_free(MAP);
    printf("%ld load/unload cycles, %d writers, %d readers, %d retires, %" PRIu64
           " grace periods\n",
           cycles_per_writer * nwriters, nwriters, nreaders, (int)atomic_load(&retires),
           st.grace_periods);
    printf("%lu lookups, %lu answered, %lu stale, %lu torn\n", atomic_load(&lookups),
           atomic_load(&found), atomic_load(&stale), atomic_load(&torn));
    bool ok = atomic_load(&stale) == 0 && atomic_load(&torn) == 0 && atomic_load(&found) > 0 && ok2;
    printf("%d passed, %d failed\n", ok ? 1 : 0, ok ? 0 : 1);
    return ok ? 0 : 1;
}
