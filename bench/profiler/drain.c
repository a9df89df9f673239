/* What the drain thread spends per sample and per frame, without a runtime
 * (bench/profiler/README.md, "Naming native frames"): a core as the
 * profiler makes it, one sampler slot fed by hand, SAMPLES samples of
 * DEPTH native frames each (return addresses inside DISTINCT functions of
 * this process's libc, chosen by a fixed pseudo-random sequence, so that
 * stacks repeat as in a real profile), drained in batches of 64 as the
 * drain thread does every 20 ms. Run under callgrind with
 * --toggle-collect=mdp_drain_all to count the drain's instructions
 * (`make bench/profiler/drain`, then bench/profiler/README.md); the same
 * source builds against an older tree's core (cc -I that tree's build,
 * top and profiler folders, linked with its libmdpcore.a and
 * library objects) for the before/after ratio.
 *
 *   drain SAMPLES DEPTH DISTINCT [activity]
 *
 * With `activity`, each sample carries the JIT activity in its header,
 * and the program also calls mdp_ev_activity's begin and end SAMPLES
 * times (toggle-collect=mdp_ev_activity for their cost). */
#define _GNU_SOURCE
#include "config.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/core_int.h"
#if __has_include("core/native.h")
#include "core/native.h"
#endif

#ifndef MDP_NATIVE_H
/* an older core has no activities */
#define NO_ACTIVITIES 1
#endif

static const char *const names[] = {"qsort",
                                    "memcpy",
                                    "memmove",
                                    "strlen",
                                    "malloc",
                                    "free",
                                    "printf",
                                    "fopen",
                                    "fclose",
                                    "read",
                                    "write",
                                    "open",
                                    "close",
                                    "strcmp",
                                    "strchr",
                                    "memset",
                                    "calloc",
                                    "realloc",
                                    "getenv",
                                    "setenv",
                                    "snprintf",
                                    "sscanf",
                                    "strtol",
                                    "strtoul",
                                    "atoi",
                                    "bsearch",
                                    "pthread_create",
                                    "pthread_join",
                                    "pthread_mutex_lock",
                                    "pthread_mutex_unlock",
                                    "nanosleep",
                                    "clock_gettime",
                                    "mmap",
                                    "munmap",
                                    "mprotect",
                                    "sched_yield",
                                    "epoll_wait",
                                    "poll",
                                    "select",
                                    "socket",
                                    "connect",
                                    "sendmsg",
                                    "recvmsg",
                                    "fwrite",
                                    "fread",
                                    "fflush",
                                    "fputs",
                                    "puts",
                                    "strncmp",
                                    "strstr",
                                    "strdup",
                                    "strndup",
                                    "memchr",
                                    "memrchr",
                                    "strrchr",
                                    "isatty",
                                    "getpid",
                                    "gettid",
                                    "dladdr",
                                    "dlsym",
                                    "dlopen",
                                    "opendir",
                                    "readdir",
                                    "closedir"};

int main(int argc, char **argv)
{
    if (argc < 4)
        return 2;
    unsigned samples = (unsigned)atoi(argv[1]), depth = (unsigned)atoi(argv[2]),
             distinct = (unsigned)atoi(argv[3]);
    int act = argc > 4 && !strcmp(argv[4], "activity");
    uintptr_t ips[64];
    unsigned nips = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && nips < 64; i++) {
        void *p = dlsym(RTLD_DEFAULT, names[i]);
        if (p)
            ips[nips++] = (uintptr_t)p + 5;
    }
    if (distinct > nips)
        distinct = nips;
    mdp_config cfg;
    mdp_config_default(&cfg);
    cfg.drain_ms = 600000; /* only this program drains */
    snprintf(cfg.output, sizeof cfg.output, "/tmp/mdp-bench-drain-%d.log", (int)getpid());
    mdp_runtime_ops ops = {0};
    mdp_core *core;
    char err[256] = "";
    if (mdp_core_new(&core, &cfg, &ops, "bench", 0, err, sizeof err) != 0) {
        fprintf(stderr, "drain: %s\n", err);
        return 1;
    }
    struct mdp_slot *t = &core->slots[0];
    mdp_slots_take(1);
    t->ringbuf =
        mmap(NULL, MDP_RING_WORDS * 8, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    mdp_ring_init(&t->ring, t->ringbuf, MDP_RING_WORDS);
    atomic_store(&t->tid, (int)syscall(SYS_gettid));
    atomic_store(&t->state, SLOT_ACTIVE);
    uint32_t x = 2463534242u;
    for (unsigned done = 0; done < samples;) {
        unsigned batch = samples - done < 64 ? samples - done : 64;
        for (unsigned s = 0; s < batch; s++) {
#ifndef NO_ACTIVITIES
            if (act) {
                mdp_ev_activity(core, 2 /* MDP_ACT_JIT */, 1);
                mdp_ev_activity(core, 2, 0);
            }
#endif
            mdp_ring_put(&t->ring, 0, MDP_SAMPLE_HDR(depth, act ? 2u << 4 : 0, 1));
            for (unsigned i = 0; i < depth; i++) {
                /* the leaf varies most, callers repeat: stacks recur */
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                unsigned k = i == 0 ? x % distinct : (i * 7 + (x % 3)) % distinct;
                mdp_ring_put(&t->ring, 1 + 3 * i, ips[k] + (i ? 0 : x % 16));
                mdp_ring_put(&t->ring, 2 + 3 * i, 0);
                mdp_ring_put(&t->ring, 3 + 3 * i, 0);
            }
            mdp_ring_publish(&t->ring, 1 + 3 * depth);
        }
        pthread_mutex_lock(&core->drain_lock);
        mdp_drain_all(core);
        pthread_mutex_unlock(&core->drain_lock);
        done += batch;
    }
    mdp_core_finish(core, "exit");
    unlink(cfg.output);
    mdp_core_free(core);
    printf("drained %u samples of %u frames\n", samples, depth);
    return 0;
}
