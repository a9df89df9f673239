/* Threads named in the log: `#thread TID KEY=VALUE...` lines
 * (doc/profile-log.md, format 4), which tell a reader what the thread
 * numbers of the sample records are. A record carries its thread's kernel
 * ID alone (self-contained, and the same width whatever the name); these
 * lines say, for a TID, whether the runtime reported it as a managed
 * thread (`managed=1`), the name the program gave it (`name=`, from
 * ThreadNameChanged: Thread.Name, whole) and the kernel's name of it
 * (`os=`, /proc/self/task/TID/comm: 15 bytes at most, what CoreCLR sets
 * from Thread.Name and for its own threads, ".NET TP Worker"). Each line
 * says all that is known, so the last line of a TID wins; one is written
 * when a thread is first seen with a kernel name, and again whenever its
 * name or its kernel name changes, before the records of the write that
 * follows (as a note: notes.c).
 *
 * The profiling API gives no managed thread ID (Thread.ManagedThreadId):
 * its ThreadID is an address, which the log never holds.
 *
 * One registry holds what the lines say, with or without the sampler: a
 * thread by TID (its runtime thread, the runtime's name, the kernel's),
 * the runtime's threads by their ThreadID, and the names the runtime gave
 * threads that have not started yet (Thread.Name set before Start), which
 * a thread takes when it starts. With the sampler, a thread is registered
 * when its slot is taken, announced at once, and again at each write when
 * its kernel name changed; a write forgets the threads whose slots are no
 * longer active. A log without the sampler (exceptions, contention, alloc
 * stacks alone) has no slots: there a thread is registered when the
 * runtime reports it, and its line is written by the thread itself before
 * its first event is queued (so before the record that carries its TID),
 * and again when the runtime renames it; a thread that never has an event
 * is not announced. */
#define _GNU_SOURCE
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base.h"
#include "core/channel.h"
#include "core/sampler.h"

#define MAX_PENDING 4096u        /* names of threads not started yet */
#define MAX_THREADS (4096u * 16) /* threads registered at once */
#define MAX_NAME 128u            /* bytes of a name kept, with its NUL */
/* Scans between writes (threads.c, every 500 ms) that read a new thread's
 * kernel name again: CoreCLR names its threads just after they start, so a
 * thread's name (and its role, a GC thread's) settles within its first
 * second; after that only the writes (every 2 s) read it. */
#define FRESH_SCANS 2u

/* A copy of a name (malloc) cut at a character's start (UTF-8) to
 * MAX_NAME - 1 bytes, or NULL. */
static char *dup_name(const char *src)
{
    size_t n = strlen(src);
    if (n >= MAX_NAME) {
        n = MAX_NAME - 1;
        while (n && ((unsigned char)src[n] & 0xc0) == 0x80)
            n--;
    }
    return strndup(src, n);
}

/* A thread the log names. */
struct reg_thread {
    int tid;
    uintptr_t runtime_thread; /* 0: not reported by the runtime */
    char *name;               /* the runtime's name of it (dup_name), NULL none */
    char os_name[16];         /* the kernel's, "" not read yet */
    int announced;            /* without the sampler: its line was written */
    unsigned fresh;           /* scans left that read its kernel name between writes */
    uint64_t seen;            /* with the sampler: the last scan that found its slot */
};

/* The registry (core->threads, threads_lock). */
struct mdp_thread_reg {
    mdp_pmap by_tid;     /* TID -> struct reg_thread */
    mdp_pmap by_runtime; /* runtime thread -> TID (cast) */
    mdp_pmap pending;    /* runtime thread -> name (malloc): not started yet */
    uint64_t scans;
};

int mdp_thread_names_new(mdp_core *core)
{
    return (core->threads = calloc(1, sizeof *core->threads)) ? 0 : -1;
}

/* A thread's line, as a note "thread TID ..." (threads_lock held). */
static void announce(mdp_core *core, int tid, uintptr_t runtime_thread, const char *name,
                     const char *os_name)
{
    char line[64 + 3 * MAX_NAME + 3 * 16];
    int n = snprintf(line, sizeof line, "thread %d managed=%d", tid, runtime_thread ? 1 : 0);
    if (name && name[0]) {
        memcpy(line + n, " name=", 6);
        n += 6;
        n += (int)mdp_pct_escape(line + n, sizeof line - (size_t)n, name, strlen(name));
    }
    if (os_name[0] && (size_t)n + 5 < sizeof line) {
        memcpy(line + n, " os=", 4);
        n += 4;
        mdp_pct_escape(line + n, sizeof line - (size_t)n, os_name, strlen(os_name));
    }
    mdp_notes_add_raw(core, line);
}

static void announce_thread(mdp_core *core, const struct reg_thread *t)
{
    announce(core, t->tid, t->runtime_thread, t->name, t->os_name);
}

/* The kernel's name of a thread, or "" (a thread gone). */
static void comm_of(int tid, char *out, size_t cap)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/comm", tid);
    out[0] = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t k = read(fd, out, cap - 1);
    close(fd);
    if (k <= 0) {
        out[0] = 0;
        return;
    }
    out[k] = 0;
    char *nl = strchr(out, '\n');
    if (nl)
        *nl = 0;
}

/* The thread of a TID, registered if new (NULL: the registry is full or
 * out of memory). threads_lock held. */
static struct reg_thread *reg_get(struct mdp_thread_reg *r, int tid)
{
    struct reg_thread *t = mdp_pmap_get(&r->by_tid, (uint64_t)tid, 0);
    if (t || r->by_tid.n >= MAX_THREADS || !(t = calloc(1, sizeof *t)))
        return t;
    t->tid = tid;
    if (mdp_pmap_put(&r->by_tid, (uint64_t)tid, 0, t) != 0) {
        free(t);
        return NULL;
    }
    return t;
}

/* A thread no longer the runtime's thread it was. threads_lock held. */
static void reg_unbind(struct mdp_thread_reg *r, struct reg_thread *t)
{
    if (t->runtime_thread &&
        (int)(uintptr_t)mdp_pmap_get(&r->by_runtime, t->runtime_thread, 0) == t->tid)
        mdp_pmap_del(&r->by_runtime, t->runtime_thread, 0);
    t->runtime_thread = 0;
}

/* Give a thread its runtime thread (0 stays what it was): the name the
 * runtime gave that thread before it started comes with it. 1 when it
 * changed. threads_lock held. */
static int reg_bind(struct mdp_thread_reg *r, struct reg_thread *t, uintptr_t runtime_thread)
{
    if (!runtime_thread || t->runtime_thread == runtime_thread)
        return 0;
    reg_unbind(r, t);
    t->runtime_thread = runtime_thread;
    if (mdp_pmap_put(&r->by_runtime, runtime_thread, 0, (void *)(uintptr_t)t->tid) != 0)
        t->runtime_thread = 0;
    char *name = mdp_pmap_del(&r->pending, runtime_thread, 0);
    if (name) {
        free(t->name);
        t->name = name;
    }
    return 1;
}

static void reg_forget(struct mdp_thread_reg *r, struct reg_thread *t)
{
    reg_unbind(r, t);
    mdp_pmap_del(&r->by_tid, (uint64_t)t->tid, 0);
    free(t->name);
    free(t);
}

/* The registered thread of a runtime thread, or NULL. threads_lock held. */
static struct reg_thread *reg_runtime(struct mdp_thread_reg *r, uintptr_t runtime_thread)
{
    uintptr_t tid = (uintptr_t)mdp_pmap_get(&r->by_runtime, runtime_thread, 0);
    return tid ? mdp_pmap_get(&r->by_tid, tid, 0) : NULL;
}

/* Keep a name for a runtime thread not registered yet. threads_lock held. */
static void reg_pending(struct mdp_thread_reg *r, uintptr_t runtime_thread, const char *name)
{
    char *old = mdp_pmap_get(&r->pending, runtime_thread, 0), *dup;
    if ((old || r->pending.n < MAX_PENDING) && (dup = dup_name(name))) {
        if (mdp_pmap_put(&r->pending, runtime_thread, 0, dup) == 0)
            free(old);
        else
            free(dup);
    }
}

void mdp_thread_ev_started(mdp_core *core, uintptr_t runtime_thread, int tid)
{
    if (tid <= 0 || atomic_load(&core->finished))
        return;
    pthread_mutex_lock(&core->threads_lock);
    struct reg_thread *t = reg_get(core->threads, tid);
    if (t && reg_bind(core->threads, t, runtime_thread) && t->announced) {
        comm_of(tid, t->os_name, sizeof t->os_name);
        announce_thread(core, t); /* now known as the runtime's */
    }
    pthread_mutex_unlock(&core->threads_lock);
}

void mdp_thread_ev_ended(mdp_core *core, uintptr_t runtime_thread)
{
    pthread_mutex_lock(&core->threads_lock);
    /* the TID may be another thread's later: that one is announced anew */
    struct reg_thread *t = reg_runtime(core->threads, runtime_thread);
    if (t)
        reg_forget(core->threads, t);
    free(mdp_pmap_del(&core->threads->pending, runtime_thread, 0));
    pthread_mutex_unlock(&core->threads_lock);
}

/* The calling thread's: the core it announced itself to, as which TID. */
static __thread struct {
    const void *core;
    int tid;
} ev_me;

void mdp_thread_event_seen(mdp_core *core, int tid)
{
    if (core->slots || tid <= 0 || (ev_me.core == core && ev_me.tid == tid))
        return;
    pthread_mutex_lock(&core->threads_lock);
    struct reg_thread *t = reg_get(core->threads, tid);
    if (t && !t->announced) {
        comm_of(tid, t->os_name, sizeof t->os_name);
        announce_thread(core, t);
        t->announced = 1;
    }
    pthread_mutex_unlock(&core->threads_lock);
    ev_me.core = core;
    ev_me.tid = tid;
}

void mdp_ev_thread_name(mdp_core *core, uintptr_t runtime_thread, const char *name)
{
    if (!runtime_thread || !name)
        return;
    pthread_mutex_lock(&core->threads_lock);
    struct reg_thread *t = reg_runtime(core->threads, runtime_thread);
    if (!t) {
        /* not started yet: the thread takes the name when it starts */
        reg_pending(core->threads, runtime_thread, name);
    } else {
        char *dup = dup_name(name);
        if (dup && (!t->name || strcmp(t->name, dup) != 0)) {
            free(t->name);
            t->name = dup;
            dup = NULL;
            /* with the sampler every registered thread has its line (its
             * kernel name read at the start and by the scans); without,
             * an announced thread is announced again */
            if (core->slots) {
                announce_thread(core, t);
            } else if (t->announced) {
                comm_of(t->tid, t->os_name, sizeof t->os_name);
                announce_thread(core, t);
            }
        }
        free(dup);
    }
    pthread_mutex_unlock(&core->threads_lock);
}

void mdp_thread_named_start(mdp_core *core, struct mdp_slot *s)
{
    /* threads_lock held: a slot starts without names, or with the one the
     * runtime gave before the thread started */
    int tid = atomic_load(&s->tid);
    struct reg_thread *t = reg_get(core->threads, tid);
    if (!t)
        return; /* the registry is full: the thread has no line */
    free(t->name);
    t->name = NULL;
    t->os_name[0] = 0;
    reg_unbind(core->threads, t);
    reg_bind(core->threads, t, s->runtime_thread);
    t->seen = core->threads->scans;
    t->fresh = FRESH_SCANS;
    /* Announced now, not only at the next write's scan: a thread that
     * burns its share and exits between two writes (the drain waits up to
     * MDP_DRAIN_MAX_MS when idle) would leave records no line names. The
     * scan announces it again if its kernel name changes later. */
    if (core->cfg.modes & MDP_MODES_SAMPLED) {
        comm_of(tid, t->os_name, sizeof t->os_name);
        announce_thread(core, t);
    }
}

void mdp_thread_named_end(mdp_core *core, uintptr_t runtime_thread)
{
    /* threads_lock held: the slot is retired */
    struct reg_thread *t = reg_runtime(core->threads, runtime_thread);
    if (t)
        reg_forget(core->threads, t);
    free(mdp_pmap_del(&core->threads->pending, runtime_thread, 0));
}

struct stale {
    uint64_t scan;
    struct reg_thread **v;
    size_t n, cap;
};

static void find_stale(void *payload, mdp_key key, void *val)
{
    struct stale *s = payload;
    struct reg_thread *t = val;
    if (t->seen != s->scan && s->n < s->cap)
        s->v[s->n++] = t;
}

void mdp_threads_name_scan(mdp_core *core, int all)
{
    if (!core->slots || !(core->cfg.modes & MDP_MODES_SAMPLED))
        return;
    pthread_mutex_lock(&core->threads_lock);
    struct mdp_thread_reg *r = core->threads;
    uint64_t scan = ++r->scans;
    size_t active = 0;
    for (unsigned i = 0, used = mdp_slots_used(); i < used; i++) {
        struct mdp_slot *s = &core->slots[i];
        if (atomic_load(&s->state) != SLOT_ACTIVE)
            continue;
        int tid = atomic_load(&s->tid);
        struct reg_thread *t = reg_get(r, tid);
        if (!t)
            continue;
        t->seen = scan;
        active++;
        /* between writes only a thread's first scans read its name: an
         * open, read and close of a /proc file for every thread twice a
         * second was most of the drain thread's time outside the drain
         * (bench/profiler/README.md, "the drain thread's own cost") */
        if (!all && t->os_name[0] && !t->fresh)
            continue;
        if (!all)
            t->fresh -= t->fresh > 0;
        char comm[sizeof t->os_name];
        comm_of(tid, comm, sizeof comm);
        if (!comm[0])
            continue; /* gone: the liveness check retires its slot */
        if (core->cfg.activities) {
            /* its role by its name (activity.c): a GC thread's native
             * frames are the GC's */
            unsigned role = mdp_thread_role(comm);
            if (role != atomic_load_explicit(&s->act_role, memory_order_relaxed))
                atomic_store_explicit(&s->act_role, role, memory_order_relaxed);
        }
        if (strcmp(comm, t->os_name) != 0) {
            memcpy(t->os_name, comm, sizeof comm);
            announce_thread(core, t);
        }
    }
    /* threads whose slots were retired without an end event (a thread
     * the runtime does not report, gone): forgotten, at a write's scan
     * only (a slot being taken registers its thread a moment before the
     * slot is active) */
    if (all && r->by_tid.n > active) {
        struct stale s = {scan, NULL, 0, r->by_tid.n - active};
        if ((s.v = malloc(s.cap * sizeof *s.v))) {
            mdp_pmap_each(&r->by_tid, find_stale, &s);
            for (size_t i = 0; i < s.n; i++)
                reg_forget(r, s.v[i]);
            free(s.v);
        }
    }
    pthread_mutex_unlock(&core->threads_lock);
}

static void free_thread(void *payload, mdp_key key, void *val)
{
    struct reg_thread *t = val;
    free(t->name);
    free(t);
}

static void free_name(void *payload, mdp_key key, void *val)
{
    free(val);
}

void mdp_thread_names_free(mdp_core *core)
{
    struct mdp_thread_reg *r = core->threads;
    if (!r)
        return;
    mdp_pmap_each(&r->pending, free_name, NULL);
    mdp_pmap_free(&r->pending);
    mdp_pmap_each(&r->by_tid, free_thread, NULL);
    mdp_pmap_free(&r->by_tid);
    mdp_pmap_free(&r->by_runtime);
    free(r);
    core->threads = NULL;
}
