/* The signal-safe lookups really are: SIGPROF at 10 kHz (one
 * CLOCK_MONOTONIC timer per thread with SIGEV_THREAD_ID: ITIMER_PROF only
 * fires at the scheduler tick) interrupts reader threads and writer threads (also while a writer
 * holds the map's mutex or waits for readers), and the handler runs every signal-safe lookup.
 * malloc, calloc, realloc, free, aligned_alloc, posix_memalign, pthread_mutex_lock/trylock and the
 * pthread_rwlock_* calls are interposed here (forwarded with dlsym(RTLD_NEXT)); any call of them
 * while the calling thread is inside the handler is a failure. The test also fails unless the
 * handler ran often, its lookups found answers, and some signals landed inside a writer call.
 *
 * Built twice. sigtest links libmdtools. sigtest_dl (SIGTEST_DLOPEN) is
 * how a profiler gets it: it first uses up glibc's static TLS surplus by
 * loading copies of small libraries with initial-exec TLS blocks
 * (tlshog.c) until one fails to load, then dlopen()s libmdtools.so and
 * runs the same test through dlsym()ed pointers. It fails unless the
 * surplus was really used up and the library loaded: a library with
 * static TLS would not, and one whose lookups touched dynamic TLS could
 * make the loader allocate in the handler (the interposed malloc sees
 * that). Neither can run under ThreadSanitizer, whose own interposition
 * the malloc interposition here fights: built with it, they exit 77. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mdtools/idmap.h>

#if defined(__SANITIZE_THREAD__)
#define SIGTEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SIGTEST_TSAN 1
#endif
#endif

#ifdef SIGTEST_TSAN
int main(void)
{
    fprintf(stderr, "sigtest: skipped under ThreadSanitizer: its malloc and lock interceptors "
                    "and this test's interposition of the same functions do not mix\n");
    return 77;
}
#else

#ifdef SIGTEST_DLOPEN
/* The API from the dlopen()ed library (load_library()). */
#define SIGTEST_API(X)                                                                             \
    X(mdt_idmap_new)                                                                               \
    X(mdt_idmap_free)                                                                              \
    X(mdt_idmap_module_load)                                                                       \
    X(mdt_idmap_class_load)                                                                        \
    X(mdt_idmap_class_unload)                                                                      \
    X(mdt_idmap_function_load)                                                                     \
    X(mdt_idmap_code_add)                                                                          \
    X(mdt_idmap_synchronize)                                                                       \
    X(mdt_idmap_module_lookup)                                                                     \
    X(mdt_idmap_module_path)                                                                       \
    X(mdt_idmap_class_lookup)                                                                      \
    X(mdt_idmap_function_lookup)                                                                   \
    X(mdt_idmap_function_describe)                                                                 \
    X(mdt_idmap_ip_lookup)                                                                         \
    X(mdt_idmap_class_find)                                                                        \
    X(mdt_idmap_function_find)                                                                     \
    X(mdt_idmap_typedef_loaded)                                                                    \
    X(mdt_idmap_class_descriptor)                                                                  \
    X(mdt_idmap_class_describe)
#define SIGTEST_PTR(name) static __typeof__(name) *p_##name;
SIGTEST_API(SIGTEST_PTR)
#define mdt_idmap_new (*p_mdt_idmap_new)
#define mdt_idmap_free (*p_mdt_idmap_free)
#define mdt_idmap_module_load (*p_mdt_idmap_module_load)
#define mdt_idmap_class_load (*p_mdt_idmap_class_load)
#define mdt_idmap_class_unload (*p_mdt_idmap_class_unload)
#define mdt_idmap_function_load (*p_mdt_idmap_function_load)
#define mdt_idmap_code_add (*p_mdt_idmap_code_add)
#define mdt_idmap_synchronize (*p_mdt_idmap_synchronize)
#define mdt_idmap_module_lookup (*p_mdt_idmap_module_lookup)
#define mdt_idmap_module_path (*p_mdt_idmap_module_path)
#define mdt_idmap_class_lookup (*p_mdt_idmap_class_lookup)
#define mdt_idmap_function_lookup (*p_mdt_idmap_function_lookup)
#define mdt_idmap_function_describe (*p_mdt_idmap_function_describe)
#define mdt_idmap_ip_lookup (*p_mdt_idmap_ip_lookup)
#define mdt_idmap_class_find (*p_mdt_idmap_class_find)
#define mdt_idmap_function_find (*p_mdt_idmap_function_find)
#define mdt_idmap_typedef_loaded (*p_mdt_idmap_typedef_loaded)
#define mdt_idmap_class_descriptor (*p_mdt_idmap_class_descriptor)
#define mdt_idmap_class_describe (*p_mdt_idmap_class_describe)
#endif

/* ---- interposition ------------------------------------------------------ */

static _Thread_local int in_handler;
static _Thread_local int in_writer;
static _Atomic unsigned long violations;
static _Atomic(const char *) first_violation;

static void violation(const char *what)
{
    const char *none = NULL;
    atomic_fetch_add(&violations, 1);
    atomic_compare_exchange_strong(&first_violation, &none, what);
}

#include "bootalloc.h"

static int resolving;

static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void (*real_free)(void *);
static void *(*real_aligned_alloc)(size_t, size_t);
static int (*real_posix_memalign)(void **, size_t, size_t);
static int (*real_mutex_lock)(pthread_mutex_t *);
static int (*real_mutex_trylock)(pthread_mutex_t *);
static int (*real_rw_rdlock)(pthread_rwlock_t *);
static int (*real_rw_wrlock)(pthread_rwlock_t *);
static int (*real_rw_tryrdlock)(pthread_rwlock_t *);
static int (*real_rw_trywrlock)(pthread_rwlock_t *);
static int (*real_rw_unlock)(pthread_rwlock_t *);

static void resolve(void)
{
    if (real_malloc || resolving)
        return;
    resolving = 1;
    real_calloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
    real_malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
    real_realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
    real_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
    real_aligned_alloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "aligned_alloc");
    real_posix_memalign = (int (*)(void **, size_t, size_t))dlsym(RTLD_NEXT, "posix_memalign");
    real_mutex_lock = (int (*)(pthread_mutex_t *))dlsym(RTLD_NEXT, "pthread_mutex_lock");
    real_mutex_trylock = (int (*)(pthread_mutex_t *))dlsym(RTLD_NEXT, "pthread_mutex_trylock");
    real_rw_rdlock = (int (*)(pthread_rwlock_t *))dlsym(RTLD_NEXT, "pthread_rwlock_rdlock");
    real_rw_wrlock = (int (*)(pthread_rwlock_t *))dlsym(RTLD_NEXT, "pthread_rwlock_wrlock");
    real_rw_tryrdlock = (int (*)(pthread_rwlock_t *))dlsym(RTLD_NEXT, "pthread_rwlock_tryrdlock");
    real_rw_trywrlock = (int (*)(pthread_rwlock_t *))dlsym(RTLD_NEXT, "pthread_rwlock_trywrlock");
    real_rw_unlock = (int (*)(pthread_rwlock_t *))dlsym(RTLD_NEXT, "pthread_rwlock_unlock");
    resolving = 0;
}

void *malloc(size_t n)
{
    if (in_handler)
        violation("malloc");
    if (!real_malloc) {
        if (resolving)
            return boot_alloc(n);
        resolve();
    }
    return real_malloc(n);
}

void *calloc(size_t n, size_t m)
{
    if (in_handler)
        violation("calloc");
    if (!real_calloc) {
        if (resolving)
            return boot_alloc(n * m); /* static arena is zeroed */
        resolve();
    }
    return real_calloc(n, m);
}

void *realloc(void *p, size_t n)
{
    if (in_handler)
        violation("realloc");
    if (!real_realloc)
        resolve();
    if (in_boot(p)) {
        void *q = malloc(n);
        if (q)
            memcpy(q, p, n); /* the arena is large enough to read n */
        return q;
    }
    return real_realloc(p, n);
}

void free(void *p)
{
    if (in_handler)
        violation("free");
    if (!p || in_boot(p))
        return;
    if (!real_free)
        resolve();
    real_free(p);
}

void *aligned_alloc(size_t a, size_t n)
{
    if (in_handler)
        violation("aligned_alloc");
    if (!real_aligned_alloc)
        resolve();
    return real_aligned_alloc(a, n);
}

int posix_memalign(void **p, size_t a, size_t n)
{
    if (in_handler)
        violation("posix_memalign");
    if (!real_posix_memalign)
        resolve();
    return real_posix_memalign(p, a, n);
}

int pthread_mutex_lock(pthread_mutex_t *m)
{
    if (in_handler)
        violation("pthread_mutex_lock");
    if (!real_mutex_lock)
        resolve();
    return real_mutex_lock(m);
}

int pthread_mutex_trylock(pthread_mutex_t *m)
{
    if (in_handler)
        violation("pthread_mutex_trylock");
    if (!real_mutex_trylock)
        resolve();
    return real_mutex_trylock(m);
}

#define RW(name, real)                                                                             \
    int name(pthread_rwlock_t *l)                                                                  \
    {                                                                                              \
        if (in_handler)                                                                            \
            violation(#name);                                                                      \
        if (!real)                                                                                 \
            resolve();                                                                             \
        return real(l);                                                                            \
    }
RW(pthread_rwlock_rdlock, real_rw_rdlock)
RW(pthread_rwlock_wrlock, real_rw_wrlock)
RW(pthread_rwlock_tryrdlock, real_rw_tryrdlock)
RW(pthread_rwlock_trywrlock, real_rw_trywrlock)
RW(pthread_rwlock_unlock, real_rw_unlock)

/* ---- the map and the handler ------------------------------------------ */

#define MOD 0x10000u
#define NCLS 64
#define NFN 64

static mdt_idmap *MAP;
static _Atomic bool done;
static _Atomic unsigned long signals, in_writer_hits, handler_found, handler_calls;

static uintptr_t cls(int i)
{
    return 0x200000 + (uintptr_t)i * 0x40;
}
static uintptr_t fn(int i)
{
    return 0x300000 + (uintptr_t)i * 0x40;
}
static uintptr_t code(int i)
{
    return 0x7000000 + (uintptr_t)i * 0x100;
}

static void on_prof(int sig)
{
    int saved = errno;
    (void)sig;
    in_handler = 1;
    atomic_fetch_add_explicit(&signals, 1, memory_order_relaxed);
    if (in_writer)
        atomic_fetch_add_explicit(&in_writer_hits, 1, memory_order_relaxed);
    static _Atomic unsigned tick;
    unsigned t = atomic_fetch_add_explicit(&tick, 1, memory_order_relaxed);
    unsigned long ok = 0, calls = 0;
    uintptr_t args[8];
    char buf[256];
    mdt_idmap_module_info mi;
    mdt_idmap_class_info ci;
    mdt_idmap_function_info fi;
    mdt_idmap_code_range cr;
    mdt_idmap_type_node nodes[8];
    size_t count;
    uintptr_t id;
    int i = (int)(t % NCLS);
    calls += 10;
    ok += mdt_idmap_module_lookup(&mi, MAP, MOD, 0) == 0;
    ok += mdt_idmap_module_path(buf, sizeof buf, MAP, MOD, 0) > 0;
    ok += mdt_idmap_class_lookup(&ci, args, 8, MAP, cls(i), 0) == 0;
    ok += mdt_idmap_function_lookup(&fi, args, 8, MAP, fn(i), 0) == 0;
    mdt_idmap_function_desc fd;
    ok += mdt_idmap_function_describe(&fd, args, 8, MAP, fn(i), 0) == 0;
    if (mdt_idmap_ip_lookup(&cr, MAP, code(i) + 0x42) == 0) {
        ok++;
        ok += mdt_idmap_function_lookup(&fi, args, 8, MAP, cr.function_id, cr.function_gen) == 0;
    }
    mdt_idmap_class_info key = {MOD, 0x02000100 + (uint32_t)i, 0, 0, 0, 0, NULL, 0};
    uintptr_t a3[3] = {cls(0), cls(1), cls(2)};
    if (i % 4 == 3) {
        key.nargs = 3;
        key.args = a3;
    }
    ok += mdt_idmap_class_find(&id, NULL, MAP, &key) == 0;
    mdt_idmap_function_info fkey = {MOD, 0x06000100 + (uint32_t)i, cls(i), 0, NULL, 0};
    ok += mdt_idmap_function_find(&id, NULL, MAP, &fkey) == 0;
    ok += mdt_idmap_typedef_loaded(MAP, MOD, 0x02000100 + (uint32_t)i) == 1;
    ok += mdt_idmap_class_descriptor(buf, sizeof buf, MAP, cls(i), 0) > 0;
    ok += mdt_idmap_class_describe(nodes, 8, &count, MAP, cls(i), 0) == 0;
    atomic_fetch_add_explicit(&handler_found, ok, memory_order_relaxed);
    atomic_fetch_add_explicit(&handler_calls, calls, memory_order_relaxed);
    in_handler = 0;
    errno = saved;
}

static _Atomic uint64_t seqctr;
static uint64_t next_seq(void)
{
    return atomic_fetch_add(&seqctr, 1) + 1;
}

static void load_class(int i, uint64_t seq)
{
    uintptr_t a3[3] = {cls(0), cls(1), cls(2)};
    mdt_idmap_class_info ci = {MOD, 0x02000100 + (uint32_t)i, 0, 0, 0, 0, NULL, 0};
    if (i % 4 == 3) {
        ci.nargs = 3; /* out-of-line arguments */
        ci.args = a3;
    }
    mdt_idmap_class_load(MAP, cls(i), &ci, seq);
}

static void load_fn(int i, uint64_t seq)
{
    mdt_idmap_function_info fi = {MOD, 0x06000100 + (uint32_t)i, cls(i), 0, NULL, 0};
    mdt_idmap_function_load(MAP, fn(i), &fi, seq);
    mdt_idmap_code_add(MAP, code(i), 0x100, fn(i), next_seq());
}

/* A 10 kHz SIGPROF timer aimed at the calling thread. */
static timer_t arm(void)
{
    timer_t t;
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = SIGPROF;
    sev._sigev_un._tid = gettid(); /* sigev_notify_thread_id */
    if (timer_create(CLOCK_MONOTONIC, &sev, &t) != 0) {
        perror("timer_create");
        exit(2);
    }
    struct itimerspec its = {{0, 100000}, {0, 100000}};
    timer_settime(t, 0, &its, NULL);
    return t;
}

static void *writer(void *arg)
{
    timer_t t = arm();
    unsigned s = (unsigned)(uintptr_t)arg * 7919u + 1;
    while (!atomic_load(&done)) {
        int i = (int)((s = s * 1103515245u + 12345u) >> 8) % NCLS;
        in_writer = 1;
        mdt_idmap_class_unload(MAP, cls(i), next_seq());
        load_class(i, next_seq());
        load_fn(i, next_seq());
        if (i == 5) {
            /* A fresh tombstone every so often: the tables grow. */
            mdt_idmap_class_unload(MAP, 0x90000000 + (uintptr_t)s * 0x40, next_seq());
        }
        if (i == 7)
            mdt_idmap_synchronize(MAP);
        in_writer = 0;
    }
    timer_delete(t);
    return NULL;
}

static void *reader(void *arg)
{
    unsigned long n = 0;
    timer_t t = arm();
    (void)arg;
    while (!atomic_load(&done)) {
        mdt_idmap_class_info ci;
        uintptr_t a[4];
        mdt_idmap_class_lookup(&ci, a, 4, MAP, cls((int)(n++ % NCLS)), 0);
    }
    timer_delete(t);
    return NULL;
}

#ifdef SIGTEST_DLOPEN
/* Where the build put libmdtools.so and the TLS hogs: MDT_BUILDDIR (set by
 * make check), else the build tree this program was compiled in. */
static const char *builddir(void)
{
    const char *d = getenv("MDT_BUILDDIR");
    return d && *d ? d : SIGTEST_BUILDDIR;
}

static bool copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = in ? fopen(to, "wb") : NULL;
    char buf[8192];
    size_t n;
    bool ok = in && out;
    while (ok && (n = fread(buf, 1, sizeof buf, in)) > 0)
        ok = fwrite(buf, 1, n, out) == n;
    if (in)
        fclose(in);
    if (out && fclose(out) != 0)
        ok = false;
    return ok;
}

/* Load copies of the hog of `bytes` until one fails; the number loaded, or
 * -1 if one failed for another reason than static TLS. */
static int load_hogs(const char *dir, unsigned bytes, bool *refused)
{
    char from[1024], to[1200];
    snprintf(from, sizeof from, "%s/tests/idmap/.libs/libtlshog%u.so", builddir(), bytes);
    for (int k = 0; k < 4096; k++) {
        snprintf(to, sizeof to, "%s/hog%u-%d.so", dir, bytes, k);
        if (!copy_file(from, to)) {
            fprintf(stderr, "sigtest_dl: cannot copy %s to %s\n", from, to);
            return -1;
        }
        void *h = dlopen(to, RTLD_NOW | RTLD_LOCAL);
        unlink(to);
        if (!h) {
            const char *e = dlerror();
            *refused = e && strstr(e, "static TLS");
            if (!*refused)
                fprintf(stderr, "sigtest_dl: %s\n", e ? e : "dlopen failed");
            return *refused ? k : -1;
        }
    }
    return -1;
}

/* Use up the static TLS surplus, then load libmdtools.so. */
static bool load_library(void)
{
    char dir[] = "/tmp/sigtest-dl-XXXXXX", lib[1024];
    bool refused = false;
    int n[3], total = 0;
    static const unsigned sizes[3] = {512, 64, 8};
    if (!mkdtemp(dir))
        return false;
    for (int i = 0; i < 3; i++) {
        n[i] = load_hogs(dir, sizes[i], &refused);
        if (n[i] < 0)
            break;
        total += n[i] * (int)sizes[i];
    }
    rmdir(dir);
    bool used_up = n[0] >= 0 && n[1] >= 0 && n[2] >= 0 && refused;
    printf("static TLS surplus used up: %s (%d bytes in %d+%d+%d libraries; a further 8-byte "
           "block is refused)\n",
           used_up ? "yes" : "NO", total, n[0], n[1], n[2]);
    const char *env = getenv("MDT_SIGTEST_LIB");
    if (env && *env)
        snprintf(lib, sizeof lib, "%s", env);
    else
        snprintf(lib, sizeof lib, "%s/libmdtools/.libs/libmdtools.so", builddir());
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        printf("libmdtools.so did not load after that: %s\n", e ? e : "?");
        return false;
    }
    bool all = true;
#define SIGTEST_SYM(name) all = all && (*(void **)&p_##name = dlsym(h, #name)) != NULL;
    SIGTEST_API(SIGTEST_SYM)
    printf("libmdtools.so loaded after that%s\n", all ? "" : ", but a symbol is missing");
    return used_up && all;
}
#endif

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 3.0;
    /* A handler that allocates can deadlock in malloc's lock instead of
     * being counted: then this ends the test (a failure). */
    alarm(60 + (unsigned)(seconds * 4));
    resolve();
#ifdef SIGTEST_DLOPEN
    if (!load_library()) {
        printf("0 passed, 1 failed\n");
        return 1;
    }
#endif
    if (mdt_idmap_new(&MAP, NULL) != 0)
        return 2;
    mdt_idmap_module_info mi = {0};
    memset(mi.mvid, 0x5a, 16);
    mi.path = "/sigtest/Module.dll";
    mdt_idmap_module_load(MAP, MOD, &mi, next_seq());
    for (int i = 0; i < NCLS; i++)
        load_class(i, next_seq());
    for (int i = 0; i < NFN; i++)
        load_fn(i, next_seq());

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_prof;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGPROF, &sa, NULL);
    timer_t mt = arm();

    pthread_t w[2], r[2];
    for (int i = 0; i < 2; i++) {
        pthread_create(&w[i], NULL, writer, (void *)(uintptr_t)i);
        pthread_create(&r[i], NULL, reader, NULL);
    }
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    do {
        /* The main thread reads too. */
        mdt_idmap_code_range cr;
        mdt_idmap_ip_lookup(&cr, MAP, code(3) + 1);
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while ((double)(now.tv_sec - start.tv_sec) + (double)(now.tv_nsec - start.tv_nsec) / 1e9 <
             seconds);
    atomic_store(&done, true);
    for (int i = 0; i < 2; i++) {
        pthread_join(w[i], NULL);
        pthread_join(r[i], NULL);
    }
    timer_delete(mt);
    mdt_idmap_free(MAP);

    unsigned long sig = atomic_load(&signals), found = atomic_load(&handler_found);
    unsigned long vio = atomic_load(&violations), hits = atomic_load(&in_writer_hits);
    printf("%lu signals, %lu during writer calls, %lu lookups in the handler, %lu answered\n", sig,
           hits, atomic_load(&handler_calls), found);
    printf("%lu calls of malloc/free/lock functions inside the handler%s%s\n", vio,
           vio ? ", first: " : "", vio ? atomic_load(&first_violation) : "");
    bool ok[4] = {vio == 0, sig >= 1000, found >= sig, hits > 0};
    int passed = 0, failed = 0;
    for (int i = 0; i < 4; i++)
        *(ok[i] ? &passed : &failed) += 1;
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
#endif
