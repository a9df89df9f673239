/* Threads the runtime does not report: CPU time of the process that the
 * sampler would miss. The runtime reports its managed threads
 * (ThreadAssignedToOSThread: the program's, the finalizer, the thread
 * pool, the tiered-compilation worker); the server GC's workers, the
 * host's threads and those of native libraries it never names. Twice a
 * second the drain thread lists /proc/self/task and times each thread
 * that has no sampler slot (the drain thread itself excepted) with the
 * same per-thread CPU-time timer.
 *
 * Its stack must be known before its first sample, or that sample would
 * be its leaf alone (`unwalked`): a thread blocked in a system call shows
 * its stack pointer in /proc/self/task/TID/syscall, and the mapping that
 * holds it is its stack; a running thread is taken at a later scan. The
 * threads' names (/proc/self/task/TID/comm, which CoreCLR sets) give the
 * runtime's GC threads (".NET Server GC", ".NET BGC") their role: every
 * native frame they run is the GC's (native.h, activity.c). A thread's
 * name is read when its slot is taken, at its first scans (the runtime
 * names its threads just after they start) and at each write
 * (threadnames.c), not at every scan: that was most of the drain thread's
 * time outside the drain. The task folder is listed only when the process
 * has more threads than slots (the folder's link count), and the blocked threads'
 * stacks come from one read of /proc/self/maps a scan. A thread that
 * lives less than half a second between two scans is not sampled. */
#define _GNU_SOURCE
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base.h"
#include "core/native.h"
#include "core/sampler.h"

#define MAX_NEW 256u /* threads taken per scan */

/* Up to n-1 bytes of a small /proc file, NUL-terminated; -1 on failure. */
static ssize_t read_small(const char *path, char *buf, size_t n)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t k = read(fd, buf, n - 1);
    close(fd);
    if (k < 0)
        return -1;
    buf[k] = 0;
    return k;
}

/* The stack pointer of a thread blocked in a system call, or 0. The file
 * reads "NR ARG1 .. ARG6 SP PC", or "running", or "-1 SP PC" outside a
 * system call (then the thread is not blocked: its stack is still that). */
static uintptr_t blocked_sp(int tid)
{
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/self/task/%d/syscall", tid);
    if (read_small(path, buf, sizeof buf) <= 0 || !strncmp(buf, "running", 7))
        return 0;
    char *f[9];
    int n = 0;
    for (char *save = NULL, *t = strtok_r(buf, " \n", &save); t && n < 9;
         t = strtok_r(NULL, " \n", &save))
        f[n++] = t;
    const char *sp = n == 9 ? f[7] : n == 3 ? f[1] : NULL;
    return sp ? (uintptr_t)strtoull(sp, NULL, 16) : 0;
}

static unsigned role_of(const mdp_core *core, int tid)
{
    char path[64], comm[64];
    if (!core->cfg.activities)
        return MDP_ACT_NONE;
    snprintf(path, sizeof path, "/proc/self/task/%d/comm", tid);
    return read_small(path, comm, sizeof comm) > 0 ? mdp_thread_role(comm) : MDP_ACT_NONE;
}

/* A thread found blocked, whose stack is still to be named. */
struct blocked {
    uintptr_t sp, lo, hi;
    int tid;
};

static int by_sp(const void *a, const void *b)
{
    const struct blocked *x = a, *y = b;
    return (x->sp > y->sp) - (x->sp < y->sp);
}

/* The read-write mappings that hold the blocked threads' stack pointers,
 * in one pass over the process's mappings (maps.c; a runtime's process maps
 * thousands of ranges, which were read once per new thread at startup, a
 * few dozen times a scan): v sorted by sp, lo and hi 0 where none holds
 * it. */
static void mappings_of(struct blocked *v, size_t n)
{
    uintptr_t *sp = n ? malloc(3 * n * sizeof *sp) : NULL;
    if (!sp)
        return;
    qsort(v, n, sizeof *v, by_sp);
    for (size_t i = 0; i < n; i++)
        sp[i] = v[i].sp;
    mdp_rw_mappings_at(sp, n, sp + n, sp + 2 * n);
    for (size_t i = 0; i < n; i++) {
        v[i].lo = sp[n + i];
        v[i].hi = sp[2 * n + i];
    }
    free(sp);
}

/* The process's number of threads, or -1: the task folder's link count is
 * 2 plus its threads (proc_task_getattr), one stat of 2 us where reading
 * /proc/self/stat's count (it sums every thread's times) took 19 and
 * listing the folder 31 (a process of 31 threads). */
static long threads_now(void)
{
    struct stat st;
    if (stat("/proc/self/task", &st) != 0 || st.st_nlink < 3)
        return -1;
    return (long)st.st_nlink - 2;
}

static int by_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

void mdp_threads_scan(mdp_core *core)
{
    if (!core->cfg.all_threads || !core->slots || !core->sampling || atomic_load(&core->finished))
        return;
    /* the names and roles of threads started lately (CoreCLR names a
     * thread after it has started: a runtime thread's role is set there
     * too); the others' at each write (threadnames.c) */
    mdp_threads_name_scan(core, 0);
    /* the threads that have a slot */
    int *known = malloc(MDP_MAX_THREADS * sizeof *known);
    struct blocked *found = malloc(MAX_NEW * sizeof *found);
    if (!known || !found) {
        free(known);
        free(found);
        return;
    }
    size_t nknown = 0, nfound = 0;
    for (unsigned i = 0, used = mdp_slots_used(); i < used; i++) {
        struct mdp_slot *t = &core->slots[i];
        if (atomic_load(&t->state) == SLOT_ACTIVE)
            known[nknown++] = atomic_load(&t->tid);
    }
    int self = atomic_load(&core->drain_tid), wall = atomic_load(&core->wall_tid);
    /* every thread has a slot (or is this one, or wall mode's): nothing to
     * list. A slot of a thread gone and not retired yet (the liveness
     * check, every second) can hide a new thread until then. */
    long now = threads_now();
    if (now >= 0 && (size_t)now <= nknown + (self > 0) + (wall > 0)) {
        free(found);
        free(known);
        return;
    }
    qsort(known, nknown, sizeof *known, by_int);
    DIR *d = opendir("/proc/self/task");
    for (struct dirent *e; d && nfound < MAX_NEW && (e = readdir(d));) {
        char *end;
        long tid = strtol(e->d_name, &end, 10);
        if (*end || tid <= 0 || tid > 0x3fffffff || tid == self || tid == wall ||
            bsearch(&(int){(int)tid}, known, nknown, sizeof *known, by_int))
            continue;
        uintptr_t sp = blocked_sp((int)tid);
        if (sp) /* running: the next scan */
            found[nfound++] = (struct blocked){sp, 0, 0, (int)tid};
    }
    if (d)
        closedir(d);
    mappings_of(found, nfound);
    for (size_t i = 0; i < nfound; i++)
        if (found[i].hi) /* else no stack we can name: the next scan */
            mdp_sampler_thread_start(core, 0, found[i].tid, found[i].lo, found[i].hi,
                                     role_of(core, found[i].tid));
    free(found);
    free(known);
}
