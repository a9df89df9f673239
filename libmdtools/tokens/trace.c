/* The writer calls' recorder (trace_int.h), for benchmarks: with
 * -DMDT_IDMAP_RECORD and MDT_IDMAP_RECORD=prefix in the environment, a map
 * writes each writer call it applies to prefix.<pid>.<n>.trace, one line
 * per call in the trace format of tests/idmap, followed by the outcome the
 * map gave (an `expect outcome` line, so that tests/idmap/replay checks a
 * replay against the recording). The image and identity pointers of a
 * module are not recorded (the map never follows them). Each line is one
 * write(2), so that what a process wrote before it died is in the file. */
#define _GNU_SOURCE /* PTHREAD_MUTEX_RECURSIVE, O_CLOEXEC */
#include "config.h"

#ifdef MDT_IDMAP_RECORD

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tokens/idmap_int.h"
#include "tokens/trace_int.h"

struct idm_trace {
    pthread_mutex_t mu;
    int fd;
};

/* Type arguments written per call; a longer list is cut (never seen in a
 * real process: the runtime's own limit is far above, generic arity far
 * below). */
#define TRACE_MAXARGS 256u

struct line {
    char b[TRACE_MAXARGS * 20 + 1024];
    size_t n;
};

static void put(struct line *l, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(l->b + l->n, sizeof l->b - l->n, fmt, ap);
    va_end(ap);
    if (k > 0)
        l->n = l->n + (size_t)k < sizeof l->b ? l->n + (size_t)k : sizeof l->b - 1;
}

static void emit(const mdt_idmap *m, struct line *l, int rc, bool outcome)
{
    static const char *const names[] = {"applied", "duplicate", "superseded"};
    if (rc < 0)
        put(l, "\n# error %d\n", rc);
    else if (outcome && rc <= 2)
        put(l, "\nexpect outcome %s\n", names[rc]);
    else
        put(l, "\n");
    for (size_t off = 0; off < l->n;) {
        ssize_t w = write(m->trace->fd, l->b + off, l->n - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    pthread_mutex_unlock(&m->trace->mu);
}

void idm_trace_open(mdt_idmap *m, const mdt_idmap_options *o)
{
    static _Atomic unsigned nmaps;
    const char *prefix = getenv("MDT_IDMAP_RECORD");
    if (!prefix || !*prefix)
        return;
    struct idm_trace *t = calloc(1, sizeof *t);
    if (!t)
        return;
    char path[4096];
    snprintf(path, sizeof path, "%s.%ld.%u.trace", prefix, (long)getpid(),
             atomic_fetch_add(&nmaps, 1));
    t->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    pthread_mutexattr_t a;
    if (t->fd < 0 || pthread_mutexattr_init(&a)) {
        if (t->fd >= 0)
            close(t->fd);
        free(t);
        return;
    }
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&t->mu, &a);
    pthread_mutexattr_destroy(&a);
    m->trace = t;
    struct line l = {.n = 0};
    pthread_mutex_lock(&t->mu);
    put(&l, "# options modules=%zu classes=%zu functions=%zu", o->modules, o->classes,
        o->functions);
    emit(m, &l, 0, false);
}

/* mdt_idmap_set_flags(): a comment line the replayers apply (the map
 * mutex held, so no call's line is cut). */
void idm_trace_flags(mdt_idmap *m, unsigned flags)
{
    if (!m->trace)
        return;
    struct line l = {.n = 0};
    pthread_mutex_lock(&m->trace->mu);
    put(&l, "# flags %u", flags);
    emit(m, &l, 0, false);
}

void idm_trace_close(mdt_idmap *m)
{
    if (!m->trace)
        return;
    close(m->trace->fd);
    pthread_mutex_destroy(&m->trace->mu);
    free(m->trace);
    m->trace = NULL;
}

void idm_trace_enter(const mdt_idmap *m)
{
    if (m && m->trace)
        pthread_mutex_lock(&m->trace->mu);
}

void idm_trace_leave(const mdt_idmap *m)
{
    if (m && m->trace)
        pthread_mutex_unlock(&m->trace->mu);
}

static void put_args(struct line *l, const char *key, uint32_t n, const uintptr_t *a)
{
    if (!n || !a)
        return;
    put(l, " %s=", key);
    for (uint32_t i = 0; i < n && i < TRACE_MAXARGS; i++)
        put(l, i ? ",%#lx" : "%#lx", (unsigned long)a[i]);
}

void idm_trace_module(const mdt_idmap *m, uintptr_t id, const mdt_idmap_module_info *mi,
                      uint64_t seq, int rc)
{
    if (!m || !m->trace)
        return;
    struct line l = {.n = 0};
    put(&l, "%llu module_load %#lx", (unsigned long long)seq, (unsigned long)id);
    if (mi) {
        put(&l, " mvid=");
        for (int i = 0; i < 16; i++)
            put(&l, "%02x", mi->mvid[i]);
        if (mi->appdomain)
            put(&l, " domain=%#lx", (unsigned long)mi->appdomain);
        if (mi->assembly)
            put(&l, " assembly=%#lx", (unsigned long)mi->assembly);
        /* The tokenizer knows no escapes: a path it cannot carry is left
         * out (the record then lacks it, which changes no outcome but a
         * fill-in's). */
        if (mi->path && *mi->path && !strpbrk(mi->path, "\"\n") && strlen(mi->path) < 2048)
            put(&l, " path=\"%s\"", mi->path);
    }
    emit(m, &l, rc, true);
}

void idm_trace_class(const mdt_idmap *m, uintptr_t id, const mdt_idmap_class_info *ci, uint64_t seq,
                     int rc)
{
    if (!m || !m->trace)
        return;
    struct line l = {.n = 0};
    put(&l, "%llu class_load %#lx", (unsigned long long)seq, (unsigned long)id);
    if (ci) {
        if (ci->module)
            put(&l, " module=%#lx", (unsigned long)ci->module);
        if (ci->token)
            put(&l, " typedef=%#x", ci->token);
        uintptr_t elem = ci->nargs && ci->args ? ci->args[0] : 0;
        switch (ci->shape) {
        case MDT_IDMAP_SHAPE_SZARRAY: put(&l, " szarray=%#lx", (unsigned long)elem); break;
        case MDT_IDMAP_SHAPE_ARRAY:
            put(&l, " array=%#lx,%u", (unsigned long)elem, (unsigned)ci->rank);
            break;
        case MDT_IDMAP_SHAPE_PTR: put(&l, " ptr=%#lx", (unsigned long)elem); break;
        case MDT_IDMAP_SHAPE_BYREF: put(&l, " byref=%#lx", (unsigned long)elem); break;
        default: put_args(&l, "args", ci->nargs, ci->args);
        }
        if (ci->prim)
            put(&l, " prim=%#x", (unsigned)ci->prim);
    }
    emit(m, &l, rc, true);
}

void idm_trace_function(const mdt_idmap *m, uintptr_t id, const mdt_idmap_function_info *fi,
                        uint64_t seq, int rc)
{
    if (!m || !m->trace)
        return;
    struct line l = {.n = 0};
    put(&l, "%llu function_load %#lx", (unsigned long long)seq, (unsigned long)id);
    if (fi) {
        if (fi->module)
            put(&l, " module=%#lx", (unsigned long)fi->module);
        if (fi->token)
            put(&l, " methoddef=%#x", fi->token);
        if (fi->class_id)
            put(&l, " class=%#lx", (unsigned long)fi->class_id);
        put_args(&l, "args", fi->nargs, fi->args);
    }
    emit(m, &l, rc, true);
}

void idm_trace_call(const mdt_idmap *m, const char *ev, int nnum, uintptr_t a, uintptr_t b,
                    uintptr_t c, uint64_t seq, int rc)
{
    if (!m || !m->trace)
        return;
    struct line l = {.n = 0};
    put(&l, "%llu %s", (unsigned long long)seq, ev);
    uintptr_t v[3] = {a, b, c};
    for (int i = 0; i < nnum && i < 3; i++)
        put(&l, " %#lx", (unsigned long)v[i]);
    emit(m, &l, rc, strcmp(ev, "retire") != 0);
}

#else
/* ISO C wants a translation unit to declare something. */
typedef int idm_trace_unused;
#endif
