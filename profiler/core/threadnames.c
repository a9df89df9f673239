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
 * its ThreadID is an address, which the log never holds. A name the
 * runtime reports for a thread that has no slot yet (Thread.Name set
 * before Start) waits in the core's table until the thread starts.
 *
 * A log without the sampler (exceptions, contention, alloc stacks alone)
 * has no slots: there the core keeps the runtime's threads (TID and
 * runtime thread) and their names in two small tables, and a thread's
 * line is written by the thread itself before its first event is queued
 * (so before the record that carries its TID), and again when the runtime
 * renames it; a thread that never has an event is not announced. */
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

#define MAX_PENDING 4096u /* names of threads not started yet */

/* The line of a slot (threads_lock held), as a note "thread TID ...". */
static void announce(mdp_core *core, const struct mdp_slot *t)
{
    char line[64 + 3 * sizeof t->name + 3 * sizeof t->os_name];
    int n = snprintf(line, sizeof line, "thread %d managed=%d", atomic_load(&t->tid),
                     t->runtime_thread ? 1 : 0);
    if (t->name[0]) {
        memcpy(line + n, " name=", 6);
        n += 6;
        n += (int)mdp_pct_escape(line + n, sizeof line - (size_t)n, t->name, strlen(t->name));
    }
    if (t->os_name[0] && (size_t)n + 5 < sizeof line) {
        memcpy(line + n, " os=", 4);
        n += 4;
        mdp_pct_escape(line + n, sizeof line - (size_t)n, t->os_name, strlen(t->os_name));
    }
    mdp_notes_add_raw(core, line);
}

/* Copy a name, cut at a character's start (UTF-8), to cap - 1 bytes. */
static void copy_name(char *dst, size_t cap, const char *src)
{
    size_t n = strlen(src);
    if (n >= cap) {
        n = cap - 1;
        while (n && ((unsigned char)src[n] & 0xc0) == 0x80)
            n--;
    }
    memcpy(dst, src, n);
    dst[n] = 0;
}

struct ev_thread {
    uintptr_t runtime_thread; /* 0: not reported by the runtime */
    int announced;
};

static void comm_of(int tid, char *out, size_t cap);

/* A thread's line without a slot (threads_lock held). */
static void announce_ev(mdp_core *core, int tid, const struct ev_thread *t)
{
    struct mdp_slot s; /* announce() reads the tid, the runtime thread and the names */
    atomic_init(&s.tid, tid);
    s.runtime_thread = t->runtime_thread;
    s.name[0] = 0;
    const char *name =
        t->runtime_thread ? mdp_pmap_get(&core->pending_names, t->runtime_thread, 0) : NULL;
    if (name)
        copy_name(s.name, sizeof s.name, name);
    comm_of(tid, s.os_name, sizeof s.os_name);
    announce(core, &s);
}

void mdp_thread_ev_started(mdp_core *core, uintptr_t runtime_thread, int tid)
{
    if (tid <= 0 || atomic_load(&core->finished))
        return;
    pthread_mutex_lock(&core->threads_lock);
    struct ev_thread *t = mdp_pmap_get(&core->ev_threads, (uint64_t)tid, 0);
    if (!t && core->ev_threads.n < MAX_PENDING * 16 && (t = calloc(1, sizeof *t)) &&
        mdp_pmap_put(&core->ev_threads, (uint64_t)tid, 0, t) != 0) {
        free(t);
        t = NULL;
    }
    if (t && runtime_thread && t->runtime_thread != runtime_thread) {
        if (t->runtime_thread)
            mdp_pmap_del(&core->ev_tids, t->runtime_thread, 0);
        t->runtime_thread = runtime_thread;
        if (mdp_pmap_put(&core->ev_tids, runtime_thread, 0, (void *)(uintptr_t)tid) != 0)
            t->runtime_thread = 0;
        else if (t->announced)
            announce_ev(core, tid, t); /* now known as the runtime's */
    }
    pthread_mutex_unlock(&core->threads_lock);
}

void mdp_thread_ev_ended(mdp_core *core, uintptr_t runtime_thread)
{
    pthread_mutex_lock(&core->threads_lock);
    uintptr_t tid = (uintptr_t)mdp_pmap_del(&core->ev_tids, runtime_thread, 0);
    /* the TID may be another thread's later: that one is announced anew */
    if (tid)
        free(mdp_pmap_del(&core->ev_threads, tid, 0));
    free(mdp_pmap_del(&core->pending_names, runtime_thread, 0));
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
    struct ev_thread *t = mdp_pmap_get(&core->ev_threads, (uint64_t)tid, 0);
    if (!t && core->ev_threads.n < MAX_PENDING * 16 && (t = calloc(1, sizeof *t)) &&
        mdp_pmap_put(&core->ev_threads, (uint64_t)tid, 0, t) != 0) {
        free(t);
        t = NULL;
    }
    if (t && !t->announced) {
        announce_ev(core, tid, t);
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
    if (!core->slots) {
        /* no sampler: the name waits in the table; an announced thread is
         * announced again with it */
        pthread_mutex_lock(&core->threads_lock);
        char *old = mdp_pmap_get(&core->pending_names, runtime_thread, 0), *dup;
        if ((old || core->pending_names.n < MAX_PENDING) && (dup = strdup(name))) {
            if (mdp_pmap_put(&core->pending_names, runtime_thread, 0, dup) == 0)
                free(old);
            else
                free(dup);
        }
        uintptr_t tid = (uintptr_t)mdp_pmap_get(&core->ev_tids, runtime_thread, 0);
        struct ev_thread *t = tid ? mdp_pmap_get(&core->ev_threads, tid, 0) : NULL;
        if (t && t->announced)
            announce_ev(core, (int)tid, t);
        pthread_mutex_unlock(&core->threads_lock);
        return;
    }
    pthread_mutex_lock(&core->threads_lock);
    int found = 0;
    for (unsigned i = 0, used = mdp_slots_used(); i < used; i++) {
        struct mdp_slot *t = &core->slots[i];
        if (atomic_load(&t->state) == SLOT_ACTIVE && t->runtime_thread == runtime_thread) {
            found = 1;
            if (strncmp(t->name, name, sizeof t->name - 1) != 0) {
                copy_name(t->name, sizeof t->name, name);
                announce(core, t);
            }
        }
    }
    if (!found) {
        /* not started yet: its slot takes the name when it starts */
        char *old = mdp_pmap_get(&core->pending_names, runtime_thread, 0), *dup;
        if ((old || core->pending_names.n < MAX_PENDING) && (dup = strdup(name))) {
            if (mdp_pmap_put(&core->pending_names, runtime_thread, 0, dup) == 0)
                free(old);
            else
                free(dup);
        }
    }
    pthread_mutex_unlock(&core->threads_lock);
}

void mdp_thread_named_start(mdp_core *core, struct mdp_slot *t)
{
    /* threads_lock held: a slot starts without names, or with the one the
     * runtime gave before the thread started */
    t->name[0] = t->os_name[0] = 0;
    if (t->runtime_thread) {
        char *name = mdp_pmap_del(&core->pending_names, t->runtime_thread, 0);
        if (name) {
            copy_name(t->name, sizeof t->name, name);
            free(name);
        }
    }
    /* Announced now, not only at the next write's scan: a thread that
     * burns its share and exits between two writes (the drain waits up to
     * MDP_DRAIN_MAX_MS when idle) would leave records no line names. The
     * scan announces it again if its kernel name changes later. */
    if (core->cfg.modes & MDP_MODES_SAMPLED) {
        comm_of(atomic_load(&t->tid), t->os_name, sizeof t->os_name);
        announce(core, t);
    }
}

void mdp_thread_named_end(mdp_core *core, uintptr_t runtime_thread)
{
    free(mdp_pmap_del(&core->pending_names, runtime_thread, 0));
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

void mdp_threads_name_scan(mdp_core *core, int all)
{
    if (!core->slots || !(core->cfg.modes & MDP_MODES_SAMPLED))
        return;
    pthread_mutex_lock(&core->threads_lock);
    for (unsigned i = 0, used = mdp_slots_used(); i < used; i++) {
        struct mdp_slot *t = &core->slots[i];
        if (atomic_load(&t->state) != SLOT_ACTIVE || (!all && t->os_name[0]))
            continue;
        char comm[sizeof t->os_name];
        comm_of(atomic_load(&t->tid), comm, sizeof comm);
        if (comm[0] && strcmp(comm, t->os_name) != 0) {
            memcpy(t->os_name, comm, sizeof comm);
            announce(core, t);
        }
    }
    pthread_mutex_unlock(&core->threads_lock);
}

static void free_name(void *payload, mdp_key key, void *val)
{
    (void)payload;
    (void)key;
    free(val);
}

void mdp_thread_names_free(mdp_core *core)
{
    mdp_pmap_each(&core->pending_names, free_name, NULL);
    mdp_pmap_free(&core->pending_names);
    mdp_pmap_each(&core->ev_threads, free_name, NULL);
    mdp_pmap_free(&core->ev_threads);
    mdp_pmap_free(&core->ev_tids);
}
