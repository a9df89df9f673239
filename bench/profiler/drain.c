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
 *   drain SAMPLES DEPTH DISTINCT [activity|managed]
 *
 * With `activity`, each sample carries the JIT activity in its header,
 * and the program also calls mdp_ev_activity's begin and end SAMPLES
 * times (toggle-collect=mdp_ev_activity for their cost). With `managed`,
 * the frames are managed: DISTINCT methods (at least 64) registered in the
 * core's map as the adapter's events would (a module with an MVID, generic
 * owning classes over primitives, a method type argument on every third
 * method, 256 bytes of code each with an IL map of 8 entries given by the
 * il_map callback), each frame at one of 16 addresses in its method; the
 * leaf and its caller vary most, so nearly every stack is new, as in a
 * compiler's profile (bench/profiler/README.md, "One read per frame"). */
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

/* managed mode: the il_map callback, 8 entries over 256 bytes */
static int il_map(void *payload, uintptr_t code_start, struct mdp_il_entry *out, size_t cap)
{
    (void)payload;
    (void)code_start;
    for (uint32_t i = 0; i < 8 && i < cap; i++)
        out[i] = (struct mdp_il_entry){i ? 0x10 * i : MDP_IL_PROLOG, 32 * i, 32 * i + 32};
    return 8;
}

#define MFN_BASE 0x7f0000100000ull
#define MCLS_BASE 0x7f0000900000ull
#define MMOD 0x7f0000050000ull

/* Register n methods; their code at code + 256 * i, their gens in gens. */
static int managed_setup(mdp_core *core, unsigned n, const uint8_t *code, uint64_t *gens)
{
    mdt_idmap *map = mdp_core_map(core);
    mdt_idmap_module_info mi = {0};
    for (int i = 0; i < 16; i++)
        mi.mvid[i] = (uint8_t)(0x11 * i + 1);
    mi.path = "/bench/Bench.dll";
    if (mdt_idmap_module_load(map, MMOD, &mi, mdp_seq(core)) < 0)
        return -1;
    /* primitives, then 32 generic classes over two of them */
    uintptr_t prim[4];
    static const uint8_t elems[4] = {0x08, 0x0e, 0x0a, 0x02};
    for (int i = 0; i < 4; i++) {
        mdt_idmap_class_info ci = {
            .module = MMOD, .token = 0x02000002u + (uint32_t)i, .prim = elems[i]};
        prim[i] = MCLS_BASE + 0x1000 + 16 * (uintptr_t)i;
        if (mdt_idmap_class_load(map, prim[i], &ci, mdp_seq(core)) < 0)
            return -1;
    }
    for (unsigned i = 0; i < 32; i++) {
        uintptr_t args[2] = {prim[i % 4], prim[(i / 4) % 4]};
        mdt_idmap_class_info ci = {
            .module = MMOD, .token = 0x02000010u + i, .nargs = i % 3, .args = args};
        if (mdt_idmap_class_load(map, MCLS_BASE + 16 * (uintptr_t)i, &ci, mdp_seq(core)) < 0)
            return -1;
    }
    for (unsigned i = 0; i < n; i++) {
        uintptr_t marg = prim[i % 4];
        mdt_idmap_function_info fi = {.module = MMOD,
                                      .token = 0x06000001u + i,
                                      .class_id = MCLS_BASE + 16 * (uintptr_t)(i % 32),
                                      .nargs = i % 3 == 0,
                                      .args = &marg};
        mdp_code_region reg = {(uintptr_t)code + 256 * (uintptr_t)i, 256};
        uintptr_t fn = MFN_BASE + 16 * (uintptr_t)i;
        mdt_idmap_function_info got;
        if (mdp_ev_function_load(core, mdp_seq(core), fn, &fi) < 0 ||
            mdp_ev_code(core, mdp_seq(core), fn, &reg, 1) != 0 ||
            mdt_idmap_function_lookup(&got, NULL, 0, map, fn, 0) != 0)
            return -1;
        gens[i] = got.gen;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 4)
        return 2;
    unsigned samples = (unsigned)atoi(argv[1]), depth = (unsigned)atoi(argv[2]),
             distinct = (unsigned)atoi(argv[3]);
    int act = argc > 4 && !strcmp(argv[4], "activity");
    int managed = argc > 4 && !strcmp(argv[4], "managed");
    if (managed && distinct < 64)
        distinct = 64;
    uintptr_t ips[64];
    unsigned nips = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && nips < 64; i++) {
        void *p = dlsym(RTLD_DEFAULT, names[i]);
        if (p)
            ips[nips++] = (uintptr_t)p + 5;
    }
    if (!managed && distinct > nips)
        distinct = nips;
    mdp_config cfg;
    mdp_config_default(&cfg);
    cfg.drain_ms = 600000; /* only this program drains */
    snprintf(cfg.output, sizeof cfg.output, "/tmp/mdp-bench-drain-%d.log", (int)getpid());
    mdp_runtime_ops ops = {0};
    if (managed)
        ops.il_map = il_map;
    mdp_core *core;
    char err[256] = "";
    if (mdp_core_new(&core, &cfg, &ops, "bench", 0, err, sizeof err) != 0) {
        fprintf(stderr, "drain: %s\n", err);
        return 1;
    }
    uint8_t *code = NULL;
    uint64_t *gens = NULL;
    if (managed) {
        code = mmap(NULL, (size_t)distinct * 256, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        gens = calloc(distinct, sizeof *gens);
        if (code == MAP_FAILED || !gens || managed_setup(core, distinct, code, gens) != 0) {
            fprintf(stderr, "drain: cannot register the methods\n");
            return 1;
        }
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
                if (managed) {
                    /* the two innermost frames vary over every method,
                     * the callers over a few each: nearly every stack new */
                    unsigned k = i < 2 ? x % distinct : (i * 13 + (x % 4)) % distinct;
                    mdp_ring_put(&t->ring, 1 + 3 * i,
                                 (uintptr_t)code + 256 * (uintptr_t)k + 16 * ((x >> 8) % 16) + 5);
                    mdp_ring_put(&t->ring, 2 + 3 * i, MFN_BASE + 16 * (uintptr_t)k);
                    mdp_ring_put(&t->ring, 3 + 3 * i, gens[k]);
                    continue;
                }
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
    if (getenv("MDP_BENCH_KEEP")) /* to look at what was named */
        printf("log: %s\n", cfg.output);
    else
        unlink(cfg.output);
    mdp_core_free(core);
    free(gens);
    if (code)
        munmap(code, (size_t)distinct * 256);
    printf("drained %u samples of %u frames\n", samples, depth);
    return 0;
}
