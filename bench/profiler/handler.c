/* What the SIGPROF handler spends per sample and per frame, without a
 * runtime (bench/profiler/README.md, "The handler's cost"). A core as the
 * profiler makes it installs the sampler's handler; this program takes
 * that very handler back from sigaction() and calls it, CALLS times, with
 * a timer's siginfo (SI_TIMER, the slot in si_value) and a ucontext whose
 * RIP, RSP and RBP are the leaf of a synthetic stack of DEPTH frames, built
 * in a buffer that the slot's stack bounds cover, as a thread's stack
 * would be by real calls:
 *   - managed frames: FUNCS methods registered in the core's map (code
 *     ranges of 256 bytes in a buffer that is never run), alternately with
 *     an RBP frame (`push rbp; push rbx; sub rsp, 0x28; lea rbp,
 *     [rsp+0x30]`) and an RSP frame (`push rbx; push rsi; sub rsp, 0x28`),
 *     so the handler decodes prologs and checks computed return addresses
 *     as it does for JIT-compiled code; every return site follows a
 *     `call rel32`;
 *   - native frames: return addresses inside functions of this process's
 *     libc, with frame records (`push rbp; mov rbp, rsp`), walked by the
 *     frame-pointer chain as the handler walks native code.
 * KIND says which: `managed`, `native`, or `mixed` (leaf and its caller
 * native, a runtime helper in libc called from managed code, the rest
 * managed). The first call's sample is checked: DEPTH frames (or the depth
 * limit, 255), each with the FunctionID it should have, or the program
 * fails. Run under callgrind with --toggle-collect=on_sigprof to count the
 * handler's instructions; bench/profiler/README.md has the command lines.
 * EVICT_KB (0 by default) reads that many KiB of a buffer of its own
 * between two calls, as the thread's own work would between two signals,
 * so that the walk's map levels, code, stack and walk cache start cold (a
 * real run's handler, bench/profiler/README.md "the handler's cold
 * walk"): under callgrind with --cache-sim=yes the D1 and LL misses per
 * sample, outside it the time of a cold walk. HANDLER_NOCACHE=1 in the
 * environment: the slot gets no walk cache (sampler.c), every frame is
 * looked up and decoded, as before the cache.
 * What the kernel spends to deliver the signal and return from it is not
 * in these counts: `handler signal N` times N signals sent to this thread
 * (the handler's stray path, a few instructions) against N plain system
 * calls, in CPU time. `handler perfsignal RATE ROUNDS` does the same for
 * the perf_events clock's signals (profiler/core/perfclock.c: the hrtimer,
 * the irq work and the SIGPROF it queues, the delivery and the return):
 * a fixed amount of work timed in the thread's CPU time, ROUNDS times
 * with a task-clock event signalling it at RATE Hz (its fd is not a
 * slot's: the handler's stray path) and ROUNDS times without, taking
 * turns; the difference over the signals, median and range.
 *
 *   handler DEPTH KIND [CALLS [FUNCS [EVICT_KB]]]   (defaults: 1000 calls, 2000 methods, 0)
 *   handler signal N
 *   handler perfsignal RATE ROUNDS */
#define _GNU_SOURCE
#include "config.h"

#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <dlfcn.h>

#include "core/core_int.h"

static const char *const names[] = {
    "qsort",  "memcpy",  "memmove",  "strlen",      "malloc",  "free",      "printf",
    "fopen",  "fclose",  "read",     "write",       "open",    "close",     "strcmp",
    "strchr", "memset",  "calloc",   "realloc",     "getenv",  "setenv",    "snprintf",
    "sscanf", "strtol",  "strtoul",  "atoi",        "bsearch", "nanosleep", "clock_gettime",
    "mmap",   "munmap",  "mprotect", "sched_yield", "poll",    "select",    "fwrite",
    "fread",  "fflush",  "fputs",    "puts",        "strncmp", "strstr",    "strdup",
    "memchr", "strrchr", "isatty",   "getpid"};

enum { CODE = 256, CALL_AT = 0x40, RET_AT = CALL_AT + 5, LEAF_AT = 0x80, FN_BASE = 0x7000 };

static double cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* Signal delivery and return, in CPU time per signal: N signals to this
 * thread through the installed handler's stray path (si_code is not
 * SI_TIMER: it counts nothing and chains to SIG_DFL, which it does not
 * run), against N getppid() calls. */
static int signal_cost(long n)
{
    pid_t pid = getpid(), tid = (pid_t)syscall(SYS_gettid);
    double t0 = cpu_ns();
    for (long i = 0; i < n; i++)
        syscall(SYS_getppid);
    double t1 = cpu_ns();
    for (long i = 0; i < n; i++)
        syscall(SYS_tgkill, pid, tid, SIGPROF);
    double t2 = cpu_ns();
    printf("syscall %.0f ns, signal %.0f ns, delivery and return %.0f ns per signal\n",
           (t1 - t0) / (double)n, (t2 - t1) / (double)n, (t2 - t1 - (t1 - t0)) / (double)n);
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The perf clock's signals: see the file's comment. */
static double work_ns(long n)
{
    volatile uint64_t x = 1;
    double t0 = cpu_ns();
    for (long i = 0; i < n; i++)
        x = x * 6364136223846793005u + 1442695040888963407u;
    return cpu_ns() - t0;
}

static int perf_signal_cost(long rate, int rounds)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_TASK_CLOCK;
    a.sample_period = (uint64_t)(1000000000L / rate);
    a.disabled = 1;
    a.exclude_hv = 1;
    a.wakeup_events = 1;
    pid_t tid = (pid_t)syscall(SYS_gettid);
    int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) {
        a.exclude_kernel = 1;
        fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    }
    struct f_owner_ex own = {F_OWNER_TID, tid};
    if (fd < 0 || fcntl(fd, F_SETFL, O_ASYNC) != 0 || fcntl(fd, F_SETSIG, SIGPROF) != 0 ||
        fcntl(fd, F_SETOWN_EX, &own) != 0) {
        perror("handler: perf_event_open");
        return 1;
    }
    long n = 200000000; /* ~0.3 s of work here */
    work_ns(n / 10);    /* warm */
    double *per = calloc((size_t)rounds, sizeof *per);
    if (!per)
        return 1;
    for (int r = 0; r < rounds; r++) {
        double off = work_ns(n);
        uint64_t c0 = 0, c1 = 0;
        if (read(fd, &c0, sizeof c0) != sizeof c0)
            return 1;
        ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
        double on = work_ns(n);
        ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
        if (read(fd, &c1, sizeof c1) != sizeof c1)
            return 1;
        double signals = (double)(c1 - c0) / (double)a.sample_period;
        per[r] = signals > 0 ? (on - off) / signals : 0;
    }
    qsort(per, (size_t)rounds, sizeof *per, cmp_double);
    printf("perf clock at %ld Hz (exclude_kernel %d): %.0f ns per signal (%.0f-%.0f), %d rounds\n",
           rate, (int)a.exclude_kernel, per[rounds / 2], per[0], per[rounds - 1], rounds);
    free(per);
    close(fd);
    return 0;
}

/* Write the prolog of method i at c: even i an RBP frame, odd an RSP
 * frame; returns the bytes its setup pushes and subtracts. */
static unsigned prolog(uint8_t *c, unsigned i)
{
    static const uint8_t rbp_frame[] = {0x55, 0x53, 0x48, 0x83, 0xec, 0x28,
                                        0x48, 0x8d, 0x6c, 0x24, 0x30};
    static const uint8_t rsp_frame[] = {0x53, 0x56, 0x48, 0x83, 0xec, 0x28};
    memset(c, 0x90, CODE); /* nop: neither a prolog nor an epilog instruction */
    if (i % 2 == 0)
        memcpy(c, rbp_frame, sizeof rbp_frame);
    else
        memcpy(c, rsp_frame, sizeof rsp_frame);
    c[CALL_AT] = 0xe8; /* call rel32, whose return site is RET_AT */
    return 8 + 8 + 0x28;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "signal")) {
        mdp_config cfg;
        mdp_config_default(&cfg);
        cfg.drain_ms = 600000;
        snprintf(cfg.output, sizeof cfg.output, "/tmp/mdp-bench-handler-%d.log", (int)getpid());
        mdp_runtime_ops ops = {0};
        mdp_core *core;
        char err[256] = "";
        if (mdp_core_new(&core, &cfg, &ops, "bench", 0, err, sizeof err) != 0) {
            fprintf(stderr, "handler: %s\n", err);
            return 1;
        }
        int r = signal_cost(atol(argv[2]));
        mdp_core_finish(core, "exit");
        unlink(cfg.output);
        mdp_core_free(core);
        return r;
    }
    if (argc == 4 && !strcmp(argv[1], "perfsignal")) {
        mdp_config cfg;
        mdp_config_default(&cfg);
        cfg.drain_ms = 600000;
        cfg.all_threads = 0; /* no thread of this program gets a clock of the core's */
        snprintf(cfg.output, sizeof cfg.output, "/tmp/mdp-bench-handler-%d.log", (int)getpid());
        mdp_runtime_ops ops = {0};
        mdp_core *core;
        char err[256] = "";
        if (mdp_core_new(&core, &cfg, &ops, "bench", 0, err, sizeof err) != 0) {
            fprintf(stderr, "handler: %s\n", err);
            return 1;
        }
        int r = perf_signal_cost(atol(argv[2]), atoi(argv[3]) > 0 ? atoi(argv[3]) : 1);
        mdp_core_finish(core, "exit");
        unlink(cfg.output);
        mdp_core_free(core);
        return r;
    }
    if (argc < 3) {
        fprintf(stderr, "usage: handler DEPTH managed|native|mixed [CALLS [FUNCS [EVICT_KB]]]\n"
                        "       handler signal N\n"
                        "       handler perfsignal RATE ROUNDS\n");
        return 2;
    }
    unsigned depth = (unsigned)atoi(argv[1]);
    const char *kind = argv[2];
    unsigned calls = argc > 3 ? (unsigned)atoi(argv[3]) : 1000;
    unsigned nfuncs = argc > 4 ? (unsigned)atoi(argv[4]) : 2000;
    size_t evict = argc > 5 ? (size_t)atol(argv[5]) * 1024 : 0;
    volatile uint8_t *junk = NULL;
    if (evict) {
        junk = malloc(evict);
        if (!junk)
            return 1;
        memset((void *)junk, 1, evict);
    }
    uint64_t junk_sum = 0;
    if (depth < 1 || depth > 1000 || nfuncs < 16 || nfuncs > 1000000 ||
        (strcmp(kind, "managed") && strcmp(kind, "native") && strcmp(kind, "mixed"))) {
        fprintf(stderr, "handler: DEPTH 1-1000, KIND managed|native|mixed, FUNCS 16-1000000\n");
        return 2;
    }
    uintptr_t libc[64];
    unsigned nlibc = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && nlibc < 64; i++) {
        void *p = dlsym(RTLD_DEFAULT, names[i]);
        if (p)
            libc[nlibc++] = (uintptr_t)p;
    }
    if (nlibc < 8) {
        fprintf(stderr, "handler: too few libc functions found\n");
        return 1;
    }

    mdp_config cfg;
    mdp_config_default(&cfg);
    cfg.drain_ms = 600000; /* nothing drains: the ring is emptied by hand */
    snprintf(cfg.output, sizeof cfg.output, "/tmp/mdp-bench-handler-%d.log", (int)getpid());
    mdp_runtime_ops ops = {0};
    mdp_core *core;
    char err[256] = "";
    if (mdp_core_new(&core, &cfg, &ops, "bench", 0, err, sizeof err) != 0) {
        fprintf(stderr, "handler: %s\n", err);
        return 1;
    }
    if (!core->slots) {
        fprintf(stderr, "handler: the core installed no sampler\n");
        return 1;
    }
    struct sigaction sa;
    if (sigaction(SIGPROF, NULL, &sa) != 0 || !(sa.sa_flags & SA_SIGINFO) || !sa.sa_sigaction) {
        fprintf(stderr, "handler: no SIGPROF handler installed\n");
        return 1;
    }

    /* the methods: code that is never run, registered in the map */
    uint8_t *code = mmap(NULL, (size_t)nfuncs * CODE, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (code == MAP_FAILED) {
        perror("handler: mmap");
        return 1;
    }
    unsigned frame_size[2];
    for (unsigned i = 0; i < nfuncs; i++) {
        frame_size[i % 2] = prolog(code + (size_t)i * CODE, i);
        mdt_idmap_function_info fi = {.module = 0x5000, .token = 0x06000001 + i};
        mdp_code_region reg = {(uintptr_t)code + (size_t)i * CODE, CODE};
        if (mdp_ev_function_load(core, mdp_seq(core), FN_BASE + 16 * i, &fi) < 0 ||
            mdp_ev_code(core, mdp_seq(core), FN_BASE + 16 * i, &reg, 1) != 0) {
            fprintf(stderr, "handler: cannot register method %u\n", i);
            return 1;
        }
    }

    /* The stack, built from its root down as calls would build it: a call
     * pushes the return address into the caller, the callee's prolog its
     * frame. frame i (0 the leaf): managed method m[i] or libc function. */
    size_t stack_bytes = 64 + (size_t)depth * 128;
    uint8_t *stack =
        mmap(NULL, stack_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (stack == MAP_FAILED) {
        perror("handler: mmap");
        return 1;
    }
    uintptr_t lo = (uintptr_t)stack, hi = lo + stack_bytes;
    int *managed = calloc(depth, sizeof *managed);
    unsigned *m = calloc(depth, sizeof *m);
    uintptr_t *want_fn = calloc(depth, sizeof *want_fn);
    if (!managed || !m || !want_fn)
        return 1;
    for (unsigned i = 0; i < depth; i++) {
        managed[i] = !strcmp(kind, "managed") || (!strcmp(kind, "mixed") && (i >= 2 || depth < 3));
        m[i] = (i * 37 + 11) % nfuncs; /* spread over the map */
        want_fn[i] = managed[i] ? FN_BASE + 16 * m[i] : 0;
    }
    uintptr_t sp = hi - 64, rbp = 0; /* the root's caller: no frame record */
    uintptr_t ret = 0;               /* and no return address */
    for (unsigned k = depth; k-- > 0;) {
        sp -= 8;
        *(uintptr_t *)sp = ret; /* the call into frame k */
        if (managed[k]) {
            unsigned i = m[k];
            if (i % 2 == 0) {
                sp -= 8;
                *(uintptr_t *)sp = rbp; /* push rbp */
                rbp = sp;               /* lea rbp, [rsp+0x30] after the rest */
                sp -= frame_size[0] - 8;
            } else {
                sp -= frame_size[1]; /* push rbx; push rsi; sub rsp, 0x28: rbp untouched */
            }
            ret = (uintptr_t)code + (size_t)i * CODE + RET_AT;
        } else {
            sp -= 8;
            *(uintptr_t *)sp = rbp; /* push rbp; mov rbp, rsp; sub rsp, 0x20 */
            rbp = sp;
            sp -= 0x20;
            ret = libc[(k * 7 + 3) % nlibc] + 16;
        }
    }
    uintptr_t leaf_ip = managed[0] ? (uintptr_t)code + (size_t)m[0] * CODE + LEAF_AT : libc[2] + 9;

    struct mdp_slot *t = &core->slots[0];
    mdp_slots_take(1);
    t->ringbuf =
        mmap(NULL, MDP_RING_WORDS * 8, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (t->ringbuf == MAP_FAILED) {
        perror("handler: mmap");
        return 1;
    }
    mdp_ring_init(&t->ring, t->ringbuf, MDP_RING_WORDS);
    const char *nocache = getenv("HANDLER_NOCACHE");
    if (!nocache || strcmp(nocache, "1"))
        mdp_slot_wcache_reset(t);
    atomic_store(&t->stack_lo, lo);
    atomic_store(&t->stack_hi, hi);
    atomic_store(&t->tid, (int)syscall(SYS_gettid));
    atomic_store(&t->state, SLOT_ACTIVE);

    siginfo_t si;
    memset(&si, 0, sizeof si);
    si.si_signo = SIGPROF;
    si.si_code = SI_TIMER;
    si.si_value.sival_ptr = t;
    ucontext_t uc;
    memset(&uc, 0, sizeof uc);
    uc.uc_mcontext.gregs[REG_RIP] = (greg_t)leaf_ip;
    uc.uc_mcontext.gregs[REG_RSP] = (greg_t)sp;
    uc.uc_mcontext.gregs[REG_RBP] = (greg_t)rbp;

    unsigned expect = depth < cfg.max_depth ? depth : cfg.max_depth;
    /* cold calls: each timed alone on the monotonic clock (vDSO, no system
     * call), the median reported (a preempted call is an outlier) */
    double *cold = evict ? calloc(calls, sizeof *cold) : NULL;
    if (evict && !cold)
        return 1;
    double t0 = cpu_ns();
    for (unsigned c = 0; c < calls; c++) {
        struct timespec m0, m1;
        if (evict) {
            for (size_t i = 0; i < evict; i += 64)
                junk_sum += junk[i];
            clock_gettime(CLOCK_MONOTONIC, &m0);
        }
        sa.sa_sigaction(SIGPROF, &si, &uc);
        if (evict) {
            clock_gettime(CLOCK_MONOTONIC, &m1);
            cold[c] = (m1.tv_sec - m0.tv_sec) * 1e9 + (m1.tv_nsec - m0.tv_nsec);
        }
        uint64_t avail = mdp_ring_avail(&t->ring);
        if (c == 0) {
            uint64_t hdr = mdp_ring_peek(&t->ring, 0);
            unsigned n = (unsigned)(hdr & 0xff), flags = (unsigned)(hdr >> 8) & 0xff;
            /* the frames follow the header and its time word (the handler
             * stamps every sample), and a stack pointer's when it is there */
            uint64_t at = 1 + !!(flags & MDP_SAMPLE_HAVE_TIME) + !!(flags & MDP_SAMPLE_HAVE_SP);
            if (avail != at + 3 * (uint64_t)expect || n != expect) {
                fprintf(stderr, "handler: walked %u frames (%llu words), expected %u\n", n,
                        (unsigned long long)avail, expect);
                return 1;
            }
            for (unsigned i = 0; i < n; i++)
                if (mdp_ring_peek(&t->ring, at + 1 + 3 * i) != want_fn[i]) {
                    fprintf(stderr, "handler: frame %u has function %#llx, expected %#llx\n", i,
                            (unsigned long long)mdp_ring_peek(&t->ring, at + 1 + 3 * i),
                            (unsigned long long)want_fn[i]);
                    return 1;
                }
        }
        mdp_ring_consume(&t->ring, avail);
    }
    double t1 = cpu_ns();
    if (evict) {
        qsort(cold, calls, sizeof *cold, cmp_double);
        printf("handler: %u samples of %u %s frames, caches evicted (%zu KiB) before each: "
               "%.0f ns per sample (median; quartiles %.0f-%.0f)%s\n",
               calls, expect, kind, evict / 1024, cold[calls / 2], cold[calls / 4],
               cold[calls * 3 / 4], t->wcache ? "" : ", no walk cache");
        free(cold);
    } else {
        printf("handler: %u samples of %u %s frames, %.0f ns CPU per sample (not under "
               "valgrind)%s\n",
               calls, expect, kind, (t1 - t0) / calls, t->wcache ? "" : ", no walk cache");
    }
    if (junk_sum == 42) /* keeps the reads */
        putchar(' ');
    free((void *)junk);
    atomic_store(&t->state, SLOT_FREE);
    mdp_core_finish(core, "exit");
    unlink(cfg.output);
    mdp_core_free(core);
    free(managed);
    free(m);
    free(want_fn);
    return 0;
}
