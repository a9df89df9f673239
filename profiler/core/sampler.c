/* The sampler: a CPU clock per runtime thread (sample mode) and the
 * SIGPROF handler that records where the thread was.
 *
 * The clock is a perf_events task clock where the kernel allows it
 * (perfclock.c: its overflow signals the thread, si_code POLL_IN, the
 * slot found from si_fd, the weight from the thread's CPU clock), else the
 * CPU-time timer below (--clock, config.c).
 *
 * Each registered thread gets a POSIX timer on its own CPU-time clock
 * (timer_create on the thread's clock, SIGEV_THREAD_ID so the signal goes
 * to that thread, firing every 1/rate s of the thread's CPU time): a thread
 * that sleeps is not sampled, a busy one is sampled at the rate whatever
 * the others do. The timer's sigev_value points at the thread's slot, so
 * the handler finds its ring without thread-local storage.
 *
 * The kernel checks CPU-time timers at its tick (HZ, often 250), so at
 * rates above HZ several periods elapse between two signals; the timer's
 * overrun count says how many, and the sample stands for all of them (its
 * weight). Counts in the log are therefore in periods of 1/rate s of CPU
 * time whatever the kernel's tick, while the handler runs at most HZ times
 * a second per thread.
 *
 * The handler reads the interrupted IP, stack pointer and frame pointer
 * from the ucontext, walks the frame-pointer chain (leaf first, at most
 * max_depth frames, each frame pointer checked to lie inside the thread's
 * stack, above the last one and 8-aligned before it is read, so a garbage
 * RBP from native code ends the walk instead of faulting), maps every
 * address with mdt_idmap_ip_lookup (async-signal-safe: no lock, no
 * allocation) and appends the sample's time (CLOCK_MONOTONIC_COARSE, read
 * from the vDSO: the record's time slice) and (ip, FunctionID, generation)
 * triples to the thread's preallocated ring, when the ring has room for the deepest walk
 * (else the sample is dropped, never cut short). Callers' addresses are
 * looked up through the slot's walk cache (below: the map's answer and
 * the method's unwind step, kept while the map's code counters say they
 * hold). A managed frame's caller
 * comes from its prolog (unwind.c) and must land in code the map knows or
 * right after a call in a module image's code (execmap.c: ReadyToRun code
 * not learnt yet). Return addresses are recorded minus one, so that a
 * caller's frame is the call instruction's. It allocates nothing, takes no
 * lock, touches no thread-local storage of its own and calls the runtime
 * never. A thread whose stack bounds are not known yet (registered
 * from another thread) records its leaf and stack pointer; the drain thread
 * then looks the stack's mapping up and fills the bounds in.
 *
 * Wall mode (wall.c) has no timers: the wall thread queues SIGPROF to each
 * thread in turn (si_code SI_QUEUE from this process, the slot in
 * si_value); the sample's weight is the wall ticks since the thread's last
 * sample, and a state word (in a system call or not) follows its time.
 *
 * Slots are never unmapped while the process lives (a late signal may still
 * name one); a slot whose thread ended is reused only after its ring is
 * drained and no handler is inside it. A thread's registration, its timer
 * and its slot's life are slots.c's; this file is the handler, its walk,
 * and the handler's installation. */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "core/base.h"
#include "core/unwind.h"
#include "core/native.h"
#include "core/sampler.h"

#ifdef MDP_BENCH_CLOCK
#include <x86intrin.h>
#endif

mdp_core *_Atomic mdp_sampling_core;
static struct sigaction old_action;
static int handler_installed;
/* The thread slots of this copy of the library, for the life of the
 * process: every core in turn uses them (an attach after a detach), and a
 * late signal of an earlier session must find memory that says "not
 * active". */
static struct mdp_slot *slot_pool;
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;

#ifdef MDP_HANDLER_PROBE
/* Test builds: the interposition test library (tests/profiler/) tells the
 * allocator and lock wrappers when this thread is inside the handler. */
#include <dlfcn.h>
static void (*probe_enter)(void);
static void (*probe_leave)(void);
static void (*probe_exec_step)(void);
static void probe_init(void)
{
    probe_enter = (void (*)(void))dlsym(RTLD_DEFAULT, "mdp_probe_enter");
    probe_leave = (void (*)(void))dlsym(RTLD_DEFAULT, "mdp_probe_leave");
    probe_exec_step = (void (*)(void))dlsym(RTLD_DEFAULT, "mdp_probe_exec_step");
}
#define PROBE_ENTER()                                                                              \
    do {                                                                                           \
        if (probe_enter)                                                                           \
            probe_enter();                                                                         \
    } while (0)
#define PROBE_LEAVE()                                                                              \
    do {                                                                                           \
        if (probe_leave)                                                                           \
            probe_leave();                                                                         \
    } while (0)
/* a step to a caller found through the executable ranges (execmap.c) */
#define PROBE_EXEC_STEP()                                                                          \
    do {                                                                                           \
        if (probe_exec_step)                                                                       \
            probe_exec_step();                                                                     \
    } while (0)
#else
#define PROBE_ENTER() ((void)0)
#define PROBE_LEAVE() ((void)0)
#define PROBE_EXEC_STEP() ((void)0)
#endif

static int valid_slot(const struct mdp_slot *t)
{
    uintptr_t p = (uintptr_t)t, lo = (uintptr_t)slot_pool;
    return lo && p >= lo && p < lo + MDP_MAX_THREADS * sizeof *t && (p - lo) % sizeof *t == 0;
}

static void chain(int sig, siginfo_t *si, void *uc)
{
    /* A SIGPROF that is not one of ours: hand it to whoever had the signal
     * before. The default action (terminate) is not taken: with the profiler
     * loaded, a stray profiling signal is more likely a late one of ours. */
    if (old_action.sa_flags & SA_SIGINFO) {
        if (old_action.sa_sigaction)
            old_action.sa_sigaction(sig, si, uc);
    } else if (old_action.sa_handler != SIG_DFL && old_action.sa_handler != SIG_IGN) {
        old_action.sa_handler(sig);
    }
}

/* The walk cache (base.h, struct mdp_wentry): the map's answer for a
 * caller's address, and its method's unwind step, kept in the slot. A real
 * walk's cost is its cache misses, not its instructions: each lookup reads
 * the map's levels, a leaf and a record, and each prolog decoded reads the
 * method's code, all cold by the next signal (bench/profiler/README.md,
 * "the handler's cold walk"); a thread's callers repeat from sample to
 * sample, and one line of its own cache answers for all of that.
 * An entry is used only while the map's code counters read what they did
 * before its lookup (mdt_idmap_code_removals() for a range found,
 * mdt_idmap_code_changes() for none: sequence locks, odd while the writer
 * changes the ranges), so a range unloaded, replaced or moved to another
 * incarnation since is looked up again, never answered from the cache.
 * Only this thread's handler reads or writes its slot's cache (SIGPROF is
 * blocked inside the handler); registration empties it before the slot is
 * active. Leaves are not cached: their addresses seldom repeat. */
struct wc {
    struct mdp_wcache *w; /* NULL: no cache */
    uint64_t removals, changes;
    unsigned nused; /* entries this walk used so far (w->last) */
    int misses;     /* keep the map's misses too */
};

static inline struct mdp_wentry *wc_slot(const struct wc *c, uintptr_t ip)
{
    return &c->w->e[(ip * 0x9e3779b97f4a7c15u) >> (64 - 9)];
}

/* An entry a caller's frame used, for the next walk's prefetch. */
static inline void wc_used(struct wc *c, const struct mdp_wentry *x)
{
    if (c->nused < MDP_WCACHE_LAST)
        c->w->last[c->nused++] = (uint16_t)(x - c->w->e);
}

/* mdt_idmap_ip_lookup through the cache; *e: the entry that holds the
 * answer now (NULL when not cached). */
MDP_HOT static int cached_lookup(struct wc *c, const mdp_core *core, uintptr_t ip,
                                 mdt_idmap_code_range *r, struct mdp_wentry **e)
{
    _Static_assert(MDP_WCACHE_ENTRIES == 1u << 9, "wc_slot's shift");
    *e = NULL;
    if (!c->w)
        return mdt_idmap_ip_lookup(r, core->map, ip);
    struct mdp_wentry *x = wc_slot(c, ip);
    wc_used(c, x);
    if (x->ip == ip && x->epoch == (x->fn ? c->removals : c->changes)) {
        *e = x;
        if (!x->fn)
            return MDT_ENOTFOUND;
        *r = (mdt_idmap_code_range){x->start, x->size, x->fn, x->gen};
        return 0;
    }
    int rc = mdt_idmap_ip_lookup(r, core->map, ip);
    uint64_t epoch = rc == 0 ? c->removals : c->changes;
    if ((rc != 0 && (rc != MDT_ENOTFOUND || !c->misses)) || (epoch & 1) || !ip)
        return rc; /* a change was being made when the walk began: not cached */
    *x = (struct mdp_wentry){.ip = ip, .epoch = epoch};
    if (rc == 0) {
        x->fn = r->function_id;
        x->gen = r->function_gen;
        x->start = r->start;
        x->size = r->size;
    }
    *e = x;
    return rc;
}

/* Look ip up (unless `looked`: managed_return_at looked it up already,
 * 1: *r is the map's range, 2: the map has none) and record (ip, FunctionID, generation) at word
 * `at` of the sample; *r gets the code range (size 0 when unknown). */
static inline uintptr_t put_frame(struct mdp_slot *t, const mdp_core *core, struct wc *c,
                                  uint64_t at, uintptr_t ip, mdt_idmap_code_range *r, int looked,
                                  int leaf, struct mdp_wentry **e)
{
    uintptr_t fn = 0;
    uint64_t gen = 0;
    if (!looked)
        *e = NULL;
    if (looked ? looked == 1
               : (leaf ? mdt_idmap_ip_lookup(r, core->map, ip)
                       : cached_lookup(c, core, ip, r, e)) == 0) {
        fn = r->function_id;
        gen = r->function_gen;
    } else {
        r->start = 0;
        r->size = 0;
    }
    mdp_ring_put(&t->ring, at, ip);
    mdp_ring_put(&t->ring, at + 1, fn);
    mdp_ring_put(&t->ring, at + 2, gen);
    return fn;
}

/* Whether a return address found without a frame record that vouches for
 * it (computed from a prolog, or read from a tier-0 frame record found from
 * one) lands in managed code: a method the map knows, or right after a call
 * in a module image's code (ReadyToRun code the map has not learnt yet,
 * execmap.c: the frame goes in without a FunctionID, the drain learns its
 * method from the address, and the walk goes on from it by the
 * frame-pointer chain, as from any frame without one). 1: in a method the
 * map knows (*r: its range, which the walk's next step records instead of
 * looking the same address up again), 2: a return site in an image's
 * code, 0: neither. */
MDP_HOT static int managed_return_at(const mdp_core *core, struct wc *c, uintptr_t ret,
                                     mdt_idmap_code_range *r, struct mdp_wentry **e)
{
    *e = NULL;
    if (ret < 4096)
        return 0;
    if (cached_lookup(c, core, ret - 1, r, e) == 0)
        return 1;
    *e = NULL;
    if (!mdp_exec_return_site(core, ret))
        return 0;
    PROBE_EXEC_STEP();
    return 2;
}

static int managed_return(const mdp_core *core, uintptr_t ret)
{
    mdt_idmap_code_range r;
    struct mdp_wentry *e;
    struct wc none = {NULL, 0, 0, 0, 0};
    return managed_return_at(core, &none, ret, &r, &e);
}

/* On-stack replacement: an OSR method version runs on top of its tier-0
 * frame, and its frame record (at fp) holds {the tier-0 frame's saved RBP,
 * a return address into the tier-0 code right after the patchpoint call},
 * so the plain chain shows the method twice and skips its caller. The
 * tier-0 frame record lies above, holding the same saved RBP and the real
 * return address: where exactly, the tier-0 code's prolog says
 * (mdp_osr_tier0_record; `fn` is the method, whose tier-0 code the return
 * address must be in; the record's return address must be managed_return:
 * a long-running thread's OSR loop is often called from ReadyToRun code,
 * Thread.StartCallback). Failing that, scan for it (at most 4 KiB up,
 * inside the stack, its return address in code the map knows: the scan is
 * the weaker guess, and gets no more latitude), which can be fooled by a
 * stale record of an earlier OSR call left in the tier-0 frame's slots.
 * Returns its address, or 0 to walk the plain chain. */
static uintptr_t osr_frame(const mdp_core *core, uintptr_t fp, uintptr_t saved, uintptr_t lo,
                           uintptr_t hi, uintptr_t fn)
{
    mdt_idmap_code_range r;
    if (fp >= lo && fp <= hi - 16 && !(fp & 7)) {
        uintptr_t ret0 = mdp_stack_word(fp + 8), s;
        if (ret0 >= 4096 && mdt_idmap_ip_lookup(&r, core->map, ret0 - 1) == 0 &&
            r.function_id == fn &&
            (s = mdp_osr_tier0_record(fp, saved, (const uint8_t *)r.start, r.size, lo, hi)) &&
            managed_return(core, mdp_stack_word(s + 8)))
            return s;
    }
    for (uintptr_t s = fp + 16; s <= fp + 4096 && s <= hi - 16 && s < saved; s += 8) {
        uintptr_t ret;
        if (mdp_stack_word(s) == saved && (ret = mdp_stack_word(s + 8)) >= 4096 &&
            mdt_idmap_ip_lookup(&r, core->map, ret - 1) == 0)
            return s;
    }
    return 0;
}

/* Wall mode: a thread interrupted in a system call is most often inside
 * libc (a futex wait under pthread_cond_wait), whose functions use RBP as
 * a plain register, so the frame-pointer chain breaks at the leaf. A
 * function that uses RBP saved its caller's on entry, between RSP and the
 * caller's frame: the first word above RSP that holds a frame record's
 * address (above the word, inside the stack, 8-aligned, a return address
 * in code: an ELF object's executable segment, wall.c, or managed code,
 * and a saved RBP of its own that is 0 or above it) is
 * taken for the caller's RBP (at most 512 words up). The libc frames in
 * between are skipped, as for a leaf that keeps no frame. 0: none. */
static int code_return(const mdp_core *core, uintptr_t ret)
{
    return ret >= 4096 && (mdp_wall_code_signal_safe(core, ret - 1) || managed_return(core, ret));
}

static uintptr_t saved_fp(const mdp_core *core, uintptr_t sp, uintptr_t lo, uintptr_t hi)
{
    if (sp < lo || sp >= hi || (sp & 7))
        return 0;
    /* Two passes: first a record whose caller's record holds a return into
     * code too (a stale record left by an earlier call, with a saved RBP of
     * 0 or pointing at junk, is what fooled one pass: the walk then ended
     * inside pthread_cond_wait, seen under ASan's interceptors); then, for
     * a thread at its root, one whose saved RBP is 0. */
    for (int pass = 0; pass < 2; pass++)
        for (uintptr_t a = sp; a < hi && a < sp + 512 * 8; a += 8) {
            uintptr_t f = mdp_stack_word(a);
            if (f <= a || f > hi - 16 || (f & 7))
                continue;
            uintptr_t up = mdp_stack_word(f), ret = mdp_stack_word(f + 8);
            if (!code_return(core, ret))
                continue;
            if (pass == 0 && up > f && up <= hi - 16 && !(up & 7) &&
                code_return(core, mdp_stack_word(up + 8)))
                return f;
            if (pass == 1 && (up == 0 || (up > f && up <= hi - 16 && !(up & 7))))
                return f;
        }
    return 0;
}

/* Walk the interrupted thread's stack into its ring. A managed frame's
 * caller comes from its prolog (unwind.c: RBP or RSP frame); anything else
 * (native code, an unknown prolog) follows the frame-pointer chain. Every
 * step must move up the stack, and every word read lies inside it. */
MDP_HOT static void take_sample(const mdp_core *core, struct mdp_slot *t, const ucontext_t *uc,
                                uint32_t weight, int wall)
{
    mdp_uw cur = {(uintptr_t)uc->uc_mcontext.gregs[REG_RIP],
                  (uintptr_t)uc->uc_mcontext.gregs[REG_RSP],
                  (uintptr_t)uc->uc_mcontext.gregs[REG_RBP]};
    uintptr_t lo = atomic_load_explicit(&t->stack_lo, memory_order_relaxed);
    uintptr_t hi = atomic_load_explicit(&t->stack_hi, memory_order_relaxed);
    int known = lo && hi > lo && cur.sp >= lo && cur.sp < hi;
    uint64_t space = mdp_ring_space(&t->ring);
    /* the header, the time, the stack pointer when unknown, the state (wall mode) */
    uint64_t hdr = (known ? 2 : 3) + !!wall;
    /* Room for the deepest walk, or no sample: a walk cut short by a full
     * ring would look like a whole stack whose root is some caller (the
     * drain thread starved on a busy machine: tests/profiler/starved.sh). */
    uint64_t maxf = core->cfg.max_depth;
    if (wall && maxf > MDP_MAX_DEPTH - 1)
        maxf = MDP_MAX_DEPTH - 1; /* the drain puts the state before the leaf */
    if (space < hdr + 3 * maxf) {
        atomic_fetch_add_explicit(&t->drops, 1, memory_order_relaxed);
        return;
    }
    /* what the runtime is doing on the thread (activity.c), for the drain
     * to mark the sample's native frames with */
    uint64_t state = wall ? mdp_wall_state_signal_safe(core, uc) : 0;
    unsigned flags = MDP_SAMPLE_HAVE_TIME | (known ? 0 : MDP_SAMPLE_HAVE_SP) |
                     (wall ? MDP_SAMPLE_WALL : 0) | mdp_slot_activity(t) << 4;
    uint64_t n = 0;
    mdt_idmap_code_range r;
    uintptr_t prev_fn = 0, prev_start = 0;
    int leaf = 1, looked = 0;
    /* The map's code counters before any lookup of this walk. While code
     * is replaced or removed (a program's start: tiering, ReJIT), entries
     * would be filled only to be dropped at the next change, each fill a
     * cold line more than a plain lookup: the cache is used only when the
     * removals have not moved since the thread's last walk, and the map's
     * misses (native code) kept only when no code was added either. */
    struct wc c = {NULL, 0, 0, 0, 0};
    struct mdp_wcache *w = t->wcache;
    if (w) {
        uint64_t removals = mdt_idmap_code_removals(core->map);
        uint64_t changes = mdt_idmap_code_changes(core->map);
        if (removals == w->seen_removals) {
            /* the last walk's entries first: their misses overlap */
            unsigned nlast = w->nlast < MDP_WCACHE_LAST ? w->nlast : MDP_WCACHE_LAST;
            for (unsigned i = 0; i < nlast; i++)
                __builtin_prefetch(&w->e[w->last[i] % MDP_WCACHE_ENTRIES]);
            c = (struct wc){w, removals, changes, 0, changes == w->seen_changes};
        }
        w->seen_removals = removals;
        w->seen_changes = changes;
    }
    struct mdp_wentry *e = NULL; /* the cache's entry for this frame's address */
    for (unsigned steps = 0; steps < 2 * MDP_MAX_DEPTH; steps++) {
        /* a caller's frame is named by its call instruction */
        uintptr_t fn =
            put_frame(t, core, &c, hdr + 3 * n, leaf ? cur.ip : cur.ip - 1, &r, looked, leaf, &e);
        looked = 0;
        if (!leaf && fn && fn == prev_fn && r.start != prev_start) {
            /* an OSR version's tier-0 frame: skip it, on from the tier-0 record */
            uintptr_t s = osr_frame(core, cur.sp - 16, cur.fp, lo, hi, fn);
            if (s) {
                cur = (mdp_uw){mdp_stack_word(s + 8), s + 16, mdp_stack_word(s)};
                continue;
            }
        }
        n++;
        if (!known)
            break;
        mdp_uw next;
        int how = 0;
        /* ReadyToRun code the map has not learnt: its method's range from
         * the image's own table (execmap.c), so it unwinds as known code */
        int managed =
            fn || mdp_exec_r2r_function(core, leaf ? cur.ip : cur.ip - 1, &r.start, &r.size);
        uintptr_t start = r.start; /* r may hold the caller's range below */
        if (managed) {
            if (e && fn) {
                /* a caller's frame: its method's step, decoded once per
                 * entry (the method's code is not read again) */
                if (!e->step.kind)
                    mdp_unwind_step_of(&e->step, (const uint8_t *)r.start, r.size);
                how = mdp_unwind_caller(&next, &cur, &e->step, r.start, r.size, lo, hi);
            } else {
                how =
                    mdp_unwind_managed(&next, &cur, (const uint8_t *)r.start, r.size, leaf, lo, hi);
            }
            /* an offset computed from a decoded prolog must land in managed code */
            if (how == 1) {
                /* next.ip - 1 looked up here is the next put_frame's (into
                 * r and e: this frame's range is not read again) */
                looked = managed_return_at(core, &c, next.ip, &r, &e);
                if (!looked)
                    how = 0;
            }
            if (how == 3) {
                /* OSR: on from the tier-0 frame record, found by its saved RBP */
                uintptr_t s = osr_frame(core, cur.fp, next.fp, lo, hi, fn);
                if (s)
                    next = (mdp_uw){mdp_stack_word(s + 8), s + 16, mdp_stack_word(s)};
                else
                    break; /* the caller is unknown: stop rather than guess */
            }
        }
        if (!how) {
            /* the frame-pointer chain: [fp] = caller's fp, [fp + 8] = return address */
            uintptr_t floor = cur.sp > lo ? cur.sp : lo;
            if ((cur.fp < floor || cur.fp > hi - 16 || (cur.fp & 7)) &&
                !(leaf && !fn && (state & MDP_WALL_SYSCALL) &&
                  (cur.fp = saved_fp(core, cur.sp, lo, hi))))
                break;
            next = (mdp_uw){mdp_stack_word(cur.fp + 8), cur.fp + 16, mdp_stack_word(cur.fp)};
        }
        if (next.ip < 4096 || next.sp <= cur.sp || next.sp > hi)
            break;
        if (n >= maxf) {
            flags |= MDP_SAMPLE_CUT; /* a caller lies beyond the depth limit */
            break;
        }
        prev_start = start;
        prev_fn = fn;
        cur = next;
        leaf = 0;
    }
    /* when, for the record's time slice: the coarse monotonic clock is
     * read from the vDSO (no system call, async-signal-safe), to the
     * kernel's tick (1-4 ms), far finer than a slice; stamped here rather
     * than by the drain, which a busy machine may not schedule for long
     * (tests/profiler/starved.sh) */
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
    mdp_ring_put(&t->ring, 0, MDP_SAMPLE_HDR(n, flags, weight));
    mdp_ring_put(&t->ring, 1, (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec);
    if (!known)
        mdp_ring_put(&t->ring, 2, cur.sp);
    if (wall)
        mdp_ring_put(&t->ring, hdr - 1, state);
    mdp_ring_publish(&t->ring, hdr + 3 * n);
    if (c.w)
        c.w->nlast = c.nused;
    atomic_fetch_add_explicit(&t->samples, 1, memory_order_relaxed);
}

MDP_HOT static void on_sigprof(int sig, siginfo_t *si, void *ucv)
{
    int saved = errno;
    struct mdp_slot *t = NULL;
    int wall = 0, perf = 0;
    unsigned ix;
    if (si && si->si_code == SI_TIMER) {
        t = si->si_value.sival_ptr;
    } else if (si && si->si_code == POLL_IN && (ix = mdp_perf_slot_of_fd(si->si_fd)) != 0 &&
               ix <= MDP_MAX_THREADS && slot_pool) {
        /* a perf_events clock's overflow (perfclock.c): its fd's slot */
        t = &slot_pool[ix - 1];
        perf = 1;
    } else if (si && si->si_code == SI_QUEUE && si->si_pid == getpid()) {
        t = si->si_value.sival_ptr; /* wall mode: the wall thread's (wall.c) */
        wall = 1;
    }
    if (!t || !valid_slot(t)) {
        chain(sig, si, ucv);
        errno = saved;
        return;
    }
    PROBE_ENTER();
    /* busy before the core: mdp_sampler_free clears the core, then waits
     * for busy to be 0, so no handler uses a core that is being freed */
    atomic_fetch_add_explicit(&t->busy, 1, memory_order_seq_cst);
    mdp_core *core = atomic_load_explicit(&mdp_sampling_core, memory_order_seq_cst);
    if (core && atomic_load_explicit(&t->state, memory_order_seq_cst) == SLOT_ACTIVE &&
        atomic_load_explicit(&t->tid, memory_order_relaxed) == (int)syscall(SYS_gettid)) {
#ifdef MDP_BENCH_CLOCK
        /* bench builds only: the walk's cost in the thread's CPU time
         * (clock_gettime is async-signal-safe; a preempted handler is not
         * charged for the other thread's time, as TSC ticks would be) and
         * in TSC ticks, and the frames it recorded (the words it published:
         * only this thread moves head) */
        struct timespec c0, c1;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
        uint64_t h0 = atomic_load_explicit(&t->ring.head, memory_order_relaxed), t0 = __rdtsc();
#endif
        if (wall != mdp_wall_mode(core)) {
            /* a timer's signal in wall mode, or a queued one in sample mode */
            atomic_fetch_add_explicit(&t->stray, 1, memory_order_relaxed);
        } else if (wall) {
            /* the ticks since the thread's last sample (wall.c): 0 when
             * two signals came within one tick, then no sample */
            uint64_t now = mdp_wall_now(core);
            uint64_t was = atomic_exchange_explicit(&t->wall_seen, now, memory_order_relaxed);
            if (now > was)
                take_sample(core, t, ucv, now - was < 1u << 30 ? (uint32_t)(now - was) : 1u << 30,
                            1);
        } else if (perf) {
            /* the periods of the thread's CPU time since the slot's last
             * sample (perfclock.c): a lost signal's too; 0: none yet */
            uint32_t w = mdp_perf_weight(core, t);
            if (w)
                take_sample(core, t, ucv, w, 0);
        } else {
            take_sample(core, t, ucv,
                        si->si_overrun >= 0 && si->si_overrun < 1 << 30
                            ? 1u + (uint32_t)si->si_overrun
                            : 1u << 30,
                        0);
        }
        /* a ring half full: the drain comes now, whatever its period */
        if (mdp_ring_space(&t->ring) <= (t->ring.mask + 1) / 2)
            mdp_drain_poke(core);
#ifdef MDP_BENCH_CLOCK
        uint64_t t1 = __rdtsc(),
                 used = atomic_load_explicit(&t->ring.head, memory_order_relaxed) - h0;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
        atomic_fetch_add_explicit(&t->bench_ticks, t1 - t0, memory_order_relaxed);
        atomic_fetch_add_explicit(
            &t->bench_cpu_ns,
            (uint64_t)((c1.tv_sec - c0.tv_sec) * 1000000000L + c1.tv_nsec - c0.tv_nsec),
            memory_order_relaxed);
        atomic_fetch_add_explicit(&t->bench_calls, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&t->bench_frames, used / 3, memory_order_relaxed);
#endif
    } else
        atomic_fetch_add_explicit(&t->stray, 1, memory_order_relaxed);
    atomic_fetch_sub_explicit(&t->busy, 1, memory_order_release);
    PROBE_LEAVE();
    errno = saved;
}

int mdp_sampler_init(mdp_core *core, char *err, size_t errlen)
{
    pthread_mutex_lock(&pool_lock);
    if (!slot_pool) {
        void *p = mmap(NULL, MDP_MAX_THREADS * sizeof *slot_pool, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) {
            pthread_mutex_unlock(&pool_lock);
            snprintf(err, errlen, "cannot map the sampler's thread slots: %s", strerror(errno));
            return -1;
        }
        slot_pool = p;
    }
    pthread_mutex_unlock(&pool_lock);
#ifdef MDP_HANDLER_PROBE
    probe_init();
#endif
    mdp_core *none = NULL;
    if (!atomic_compare_exchange_strong(&mdp_sampling_core, &none, core)) {
        snprintf(err, errlen, "another profiler core samples this process");
        return -1;
    }
    core->slots = slot_pool;
    if ((core->cfg.modes & MDP_MODE_SAMPLE) && mdp_perf_choose(core) != 0) {
        snprintf(err, errlen, "--clock perf: %s", core->clock_why);
        atomic_store(&mdp_sampling_core, NULL);
        core->slots = NULL;
        return -1;
    }
    if ((core->cfg.modes & MDP_MODE_SAMPLE) && core->clock_why[0])
        mdp_note(core,
                 "sampling with CPU-time timers: %s; the kernel checks them once a tick, so "
                 "--rate %u gives at most ~HZ signals per CPU second, each sample weighing the "
                 "periods it stands for (--clock timer says this is wanted)",
                 core->clock_why, core->cfg.rate);
    if (!handler_installed) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_sigprof;
        sa.sa_flags = SA_SIGINFO | SA_RESTART;
        sigemptyset(&sa.sa_mask);
        if (sigaction(SIGPROF, &sa, &old_action) != 0) {
            snprintf(err, errlen, "cannot install the SIGPROF handler: %s", strerror(errno));
            atomic_store(&mdp_sampling_core, NULL);
            core->slots = NULL;
            return -1;
        }
        handler_installed = 1;
    }
    core->sampling = 1;
    return 0;
}
