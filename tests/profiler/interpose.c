/* Preloaded into a profiled dotnet process by tests/profiler/handler.sh,
 * with the probe build of the profiler (sampler.c compiled with
 * MDP_HANDLER_PROBE, which calls mdp_probe_enter/leave around its SIGPROF
 * handler): counts handler runs and every call of the allocator, the
 * mutex and rwlock functions and __tls_get_addr (a first touch of dynamic
 * TLS) made while the calling thread is inside the handler. The calls are
 * forwarded with dlsym(RTLD_NEXT). At exit each process that loaded it
 * (the launcher too) appends
 *     pid=P handler=N violations=M first=NAME execsteps=K
 * to $MDP_INTERPOSE_REPORT (execsteps: the handler's steps to a caller in
 * a module image's code the map did not know, mdp_probe_exec_step).  Under ASan, whose allocator
 * comes first, the allocations are seen through its malloc/free hooks instead. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static __thread int in_handler __attribute__((tls_model("initial-exec")));
static _Atomic unsigned long handler_runs;
static _Atomic unsigned long violations;
static _Atomic unsigned long exec_steps;
static _Atomic(const char *) first_violation;

static void violation(const char *what)
{
    if (!in_handler)
        return;
    const char *none = NULL;
    atomic_fetch_add(&violations, 1);
    atomic_compare_exchange_strong(&first_violation, &none, what);
}

__attribute__((visibility("default"))) void mdp_probe_enter(void);
__attribute__((visibility("default"))) void mdp_probe_leave(void);

void mdp_probe_enter(void)
{
    in_handler++;
    atomic_fetch_add_explicit(&handler_runs, 1, memory_order_relaxed);
}

void mdp_probe_leave(void)
{
    in_handler--;
}

__attribute__((visibility("default"))) void mdp_probe_exec_step(void);

void mdp_probe_exec_step(void)
{
    atomic_fetch_add_explicit(&exec_steps, 1, memory_order_relaxed);
}

#define BOOT_ARENA_SIZE 65536
#include "bootalloc.h"

static int resolving;

static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void (*real_free)(void *);
static void *(*real_memalign)(size_t, size_t);
static void *(*real_aligned_alloc)(size_t, size_t);
static int (*real_posix_memalign)(void **, size_t, size_t);
static int (*real_mutex_lock)(pthread_mutex_t *);
static int (*real_mutex_trylock)(pthread_mutex_t *);
static int (*real_mutex_unlock)(pthread_mutex_t *);
static int (*real_rw_rdlock)(pthread_rwlock_t *);
static int (*real_rw_wrlock)(pthread_rwlock_t *);
static int (*real_rw_tryrdlock)(pthread_rwlock_t *);
static int (*real_rw_trywrlock)(pthread_rwlock_t *);
static int (*real_rw_unlock)(pthread_rwlock_t *);
static void *(*real_tls_get_addr)(void *);

#define RESOLVE(var, name) var = (__typeof__(var))dlsym(RTLD_NEXT, name)

static void resolve(void)
{
    if (real_malloc || resolving)
        return;
    resolving = 1;
    RESOLVE(real_calloc, "calloc");
    RESOLVE(real_malloc, "malloc");
    RESOLVE(real_realloc, "realloc");
    RESOLVE(real_free, "free");
    RESOLVE(real_memalign, "memalign");
    RESOLVE(real_aligned_alloc, "aligned_alloc");
    RESOLVE(real_posix_memalign, "posix_memalign");
    RESOLVE(real_mutex_lock, "pthread_mutex_lock");
    RESOLVE(real_mutex_trylock, "pthread_mutex_trylock");
    RESOLVE(real_mutex_unlock, "pthread_mutex_unlock");
    RESOLVE(real_rw_rdlock, "pthread_rwlock_rdlock");
    RESOLVE(real_rw_wrlock, "pthread_rwlock_wrlock");
    RESOLVE(real_rw_tryrdlock, "pthread_rwlock_tryrdlock");
    RESOLVE(real_rw_trywrlock, "pthread_rwlock_trywrlock");
    RESOLVE(real_rw_unlock, "pthread_rwlock_unlock");
    RESOLVE(real_tls_get_addr, "__tls_get_addr");
    resolving = 0;
}

/* Under ASan the sanitizer's allocator is found first: watch it instead. */
extern int __sanitizer_install_malloc_and_free_hooks(void (*)(const volatile void *, size_t),
                                                     void (*)(const volatile void *))
    __attribute__((weak));
static void asan_malloc_hook(const volatile void *p, size_t n)
{
    violation("malloc (ASan hook)");
}
static void asan_free_hook(const volatile void *p)
{
    violation("free (ASan hook)");
}

__attribute__((constructor)) static void init(void)
{
    resolve();
    if (__sanitizer_install_malloc_and_free_hooks)
        __sanitizer_install_malloc_and_free_hooks(asan_malloc_hook, asan_free_hook);
}

__attribute__((destructor)) static void report(void)
{
    const char *path = getenv("MDP_INTERPOSE_REPORT");
    if (!path)
        return;
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd < 0)
        return;
    char buf[256];
    const char *first = atomic_load(&first_violation);
    int n = snprintf(buf, sizeof buf, "pid=%d handler=%lu violations=%lu first=%s execsteps=%lu\n",
                     (int)getpid(), atomic_load(&handler_runs), atomic_load(&violations),
                     first ? first : "-", atomic_load(&exec_steps));
    if (n > 0 && write(fd, buf, (size_t)n) < 0)
        n = 0;
    close(fd);
}

#define EXPORT __attribute__((visibility("default")))

EXPORT void *malloc(size_t n)
{
    violation("malloc");
    resolve();
    if (!real_malloc)
        return boot_alloc(n);
    return real_malloc(n);
}

EXPORT void *calloc(size_t a, size_t b)
{
    violation("calloc");
    resolve();
    if (!real_calloc) {
        void *p = boot_alloc(a * b);
        if (p)
            memset(p, 0, a * b);
        return p;
    }
    return real_calloc(a, b);
}

EXPORT void *realloc(void *p, size_t n)
{
    violation("realloc");
    resolve();
    if (in_boot(p)) {
        void *q = real_malloc ? real_malloc(n) : boot_alloc(n);
        if (q && p)
            memcpy(q, p, n); /* the arena is larger than anything dlsym asks for */
        return q;
    }
    return real_realloc(p, n);
}

EXPORT void free(void *p)
{
    violation("free");
    if (!p || in_boot(p))
        return;
    resolve();
    real_free(p);
}

EXPORT void *memalign(size_t a, size_t n)
{
    violation("memalign");
    resolve();
    return real_memalign(a, n);
}

EXPORT void *aligned_alloc(size_t a, size_t n)
{
    violation("aligned_alloc");
    resolve();
    return real_aligned_alloc(a, n);
}

EXPORT int posix_memalign(void **out, size_t a, size_t n)
{
    violation("posix_memalign");
    resolve();
    return real_posix_memalign(out, a, n);
}

/* The lock functions: count, then forward. */
#define LOCK_WRAPPER(name, type, real)                                                             \
    EXPORT int name(type *l)                                                                       \
    {                                                                                              \
        violation(#name);                                                                          \
        resolve();                                                                                 \
        return real(l);                                                                            \
    }
LOCK_WRAPPER(pthread_mutex_lock, pthread_mutex_t, real_mutex_lock)
LOCK_WRAPPER(pthread_mutex_trylock, pthread_mutex_t, real_mutex_trylock)
LOCK_WRAPPER(pthread_mutex_unlock, pthread_mutex_t, real_mutex_unlock)
LOCK_WRAPPER(pthread_rwlock_rdlock, pthread_rwlock_t, real_rw_rdlock)
LOCK_WRAPPER(pthread_rwlock_wrlock, pthread_rwlock_t, real_rw_wrlock)
LOCK_WRAPPER(pthread_rwlock_tryrdlock, pthread_rwlock_t, real_rw_tryrdlock)
LOCK_WRAPPER(pthread_rwlock_trywrlock, pthread_rwlock_t, real_rw_trywrlock)
LOCK_WRAPPER(pthread_rwlock_unlock, pthread_rwlock_t, real_rw_unlock)

EXPORT void *__tls_get_addr(void *ti)
{
    violation("__tls_get_addr");
    if (!real_tls_get_addr)
        resolve();
    return real_tls_get_addr(ti);
}
