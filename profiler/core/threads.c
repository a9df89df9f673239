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
 * native frame they run is the GC's (native.h, activity.c). A thread that
 * lives less than half a second between two scans is not sampled. */
#define _GNU_SOURCE
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* The read-write mapping that holds sp, from /proc/self/maps. */
static int mapping_of(uintptr_t sp, uintptr_t *lo, uintptr_t *hi)
{
    FILE *f = fopen("/proc/self/maps", "re");
    if (!f)
        return -1;
    char line[512];
    int found = -1;
    while (found && fgets(line, sizeof line, f)) {
        uintptr_t a, b;
        char perms[8];
        if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %7s", &a, &b, perms) == 3 && sp >= a &&
            sp < b && perms[0] == 'r' && perms[1] == 'w') {
            *lo = a;
            *hi = b;
            found = 0;
        }
        while (!strchr(line, '\n') && fgets(line, sizeof line, f))
            ;
    }
    fclose(f);
    return found;
}

static unsigned role_of(const mdp_core *core, int tid)
{
    char path[64], comm[64];
    if (!core->cfg.activities)
        return MDP_ACT_NONE;
    snprintf(path, sizeof path, "/proc/self/task/%d/comm", tid);
    return read_small(path, comm, sizeof comm) > 0 ? mdp_thread_role(comm) : MDP_ACT_NONE;
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
    /* the threads that have a slot, and their roles by name (CoreCLR names
     * a thread after it has started: a runtime thread's role is set here too) */
    int *known = malloc(MDP_MAX_THREADS * sizeof *known);
    if (!known)
        return;
    size_t nknown = 0;
    for (unsigned i = 0, used = mdp_slots_used(); i < used; i++) {
        struct mdp_slot *t = &core->slots[i];
        if (atomic_load(&t->state) != SLOT_ACTIVE)
            continue;
        int tid = atomic_load(&t->tid);
        known[nknown++] = tid;
        unsigned role = role_of(core, tid);
        if (role != atomic_load_explicit(&t->act_role, memory_order_relaxed))
            atomic_store_explicit(&t->act_role, role, memory_order_relaxed);
    }
    qsort(known, nknown, sizeof *known, by_int);
    DIR *d = opendir("/proc/self/task");
    unsigned taken = 0;
    int self = atomic_load(&core->drain_tid), wall = atomic_load(&core->wall_tid);
    for (struct dirent *e; d && taken < MAX_NEW && (e = readdir(d));) {
        char *end;
        long tid = strtol(e->d_name, &end, 10);
        if (*end || tid <= 0 || tid > 0x3fffffff || tid == self || tid == wall ||
            bsearch(&(int){(int)tid}, known, nknown, sizeof *known, by_int))
            continue;
        uintptr_t sp = blocked_sp((int)tid), lo, hi;
        if (!sp || mapping_of(sp, &lo, &hi) != 0)
            continue; /* running, or no stack we can name: the next scan */
        if (mdp_sampler_thread_start(core, 0, (int)tid, lo, hi, role_of(core, (int)tid)) == 0)
            taken++;
    }
    if (d)
        closedir(d);
    free(known);
}
