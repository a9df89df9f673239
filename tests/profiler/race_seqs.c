/* Sequence holds and the retire watermark (profiler/core/seqs.c) under
 * threads, checked at every step.
 *
 * Writer threads play the adapter's callbacks: each takes a hold
 * (mdp_seq_take), sometimes nested several deep (a callback inside a
 * callback), applies a load of a function never seen before at the
 * outermost hold's seq, unloads it in a nested callback of its own (a
 * tombstone, and drain_lock taken as every unload does) and applies a late
 * load of it at the outer seq, then releases. One of them now and then
 * takes every one of the 64 slots and more at once and holds them a while,
 * so that the others overflow (seq_overflow) and then outlive its holds.
 * A scanner thread plays the drain thread's retirement: it reads the
 * watermark (mdp_seq_watermark) and retires the map's tombstones below it
 * (mdp_core_retire, forced: every pass), over and over.
 *
 * What is checked, on every step:
 *  - nothing is retired under a live hold: the writer's fresh load at its
 *    outermost seq is accepted (a retirement past that seq refuses it as
 *    SUPERSEDED: the callback's work would be lost), and the scanner's
 *    last retirement watermark, published after each retirement, never
 *    exceeds a hold the writer still has; its late load after its own
 *    unload is refused (the tombstone, or the retirement's floor, keeps a
 *    dead ID dead);
 *  - the scanner sees every live hold: each writer publishes the seq of
 *    its outermost hold after taking it and clears it before releasing it,
 *    and every watermark the scanner reads (other than 1, "a hold is being
 *    taken or overflowed") is at most every such seq it reads after it;
 *  - the watermark never goes backwards (its values other than 1);
 *  - no hold is lost or shared: a hold's slot keeps its seq while held,
 *    and at the end every slot is free, the overflow count is 0, the
 *    watermark is the next seq, and one retirement leaves the map with no
 *    tombstone and no function (every load was unloaded).
 *
 * Usage: race_seqs [iterations per writer] [writers]   (default 10000, 6) */
#define _GNU_SOURCE
#include "config.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "race.h"

#define MAX_WRITERS 16
#define MAX_NEST 8                    /* a callback's nesting */
#define HOG_HOLDS (2 * MDP_SEQ_SLOTS) /* the hog: takes until it has every slot */
#define HOG_EVERY 64                  /* the hog's iterations between two hogs */
#define FN_BASE 0x100000000ull

static mdp_core *core;
static unsigned iterations = 10000, nwriters = 6;
/* the scanner's last retirement watermark, stored after the retirement */
static _Atomic uint64_t retired_below;
/* each writer's outermost live hold's seq (0: none), set after the take,
 * cleared before the release */
static _Atomic uint64_t outer_seq[MAX_WRITERS];
static _Atomic unsigned writers_left;
static _Atomic int hog_holding; /* writer 0 holds every slot */
static _Atomic uint64_t n_holds, n_overflowed, n_scans, n_busy_scans, n_retired;

/* A hold just taken, or still held: its slot keeps its seq, and nothing
 * at or above the oldest hold of this writer has been retired. */
static void check_held(const mdp_seq_hold *h, uint64_t oldest, unsigned me, const char *when)
{
    RACE_CHECK(h->seq > 0, "writer %u: a hold without a seq", me);
    if (h->slot >= 0) {
        uint64_t in = atomic_load(&core->life->seq_held[h->slot]);
        RACE_CHECK(in == h->seq, "writer %u %s: slot %d holds %llu, not its seq %llu", me, when,
                   h->slot, (unsigned long long)in, (unsigned long long)h->seq);
    }
    uint64_t r = atomic_load(&retired_below);
    RACE_CHECK(r <= oldest, "writer %u %s: retired below %llu while seq %llu is held", me, when,
               (unsigned long long)r, (unsigned long long)oldest);
}

static void *writer(void *arg)
{
    unsigned me = (unsigned)(uintptr_t)arg;
    uint64_t rng = 0x9E3779B97F4A7C15ull * (me + 1);
    mdp_seq_hold h[HOG_HOLDS];
    for (unsigned it = 0; it < iterations && !atomic_load(&race_stop); it++) {
        int hog = me == 0 && it % HOG_EVERY == HOG_EVERY - 1;
        uint64_t r = race_rand(&rng);
        unsigned depth = hog ? HOG_HOLDS : (r & 7) == 0 ? 1 + (unsigned)(r >> 8) % MAX_NEST : 1;
        unsigned slots = 0;
        for (unsigned d = 0; d < depth; d++) {
            h[d] = mdp_seq_take(core);
            if (d == 0)
                atomic_store(&outer_seq[me], h[0].seq);
            if (h[d].slot < 0)
                atomic_fetch_add(&n_overflowed, 1);
            check_held(&h[d], h[0].seq, me, "after its take");
            slots += h[d].slot >= 0;
            if (hog && slots == MDP_SEQ_SLOTS) {
                depth = d + 1; /* every slot is the hog's: the others overflow */
                atomic_store(&hog_holding, 1);
                break;
            }
            if ((r >> (d % 48)) & 1)
                sched_yield();
        }
        atomic_fetch_add(&n_holds, depth);
        uint64_t s = h[0].seq;
        if (h[0].slot < 0 && !hog) {
            /* a callback that found no slot runs a while: the hog's holds
             * go meanwhile, and this one is then among the oldest in use,
             * in no slot; two scans see it so (at most 2 s) */
            time_t t0 = time(NULL);
            while (atomic_load(&hog_holding) && time(NULL) - t0 < 2 && !atomic_load(&race_stop)) {
                check_held(&h[0], s, me, "while overflowed");
                sched_yield();
            }
            uint64_t scans = atomic_load(&n_scans);
            while (atomic_load(&n_scans) < scans + 2 && time(NULL) - t0 < 2 &&
                   !atomic_load(&race_stop)) {
                check_held(&h[0], s, me, "while overflowed");
                sched_yield();
            }
        }
        if (hog) {
            /* hold them a while: the others overflow meanwhile */
            for (int k = 0; k < 50; k++)
                sched_yield();
        } else {
            /* a function never seen: its load at the held seq is accepted */
            uintptr_t fn = (uintptr_t)(FN_BASE + ((uint64_t)me << 28) + (uint64_t)it * 16);
            mdt_idmap_function_info fi = {.module = 0x5000, .token = 0x06000001};
            int e = mdp_ev_function_load(core, s, fn, &fi);
            RACE_CHECK(e == 0, "writer %u: load of a new function at held seq %llu: %d", me,
                       (unsigned long long)s, e);
            {
                /* its unload, by a nested callback: a tombstone newer than s */
                MDP_SEQ_HELD(u, core);
                RACE_CHECK(u > s, "writer %u: nested seq %llu not above %llu", me,
                           (unsigned long long)u, (unsigned long long)s);
                e = mdp_ev_function_unload(core, u, fn);
                RACE_CHECK(e >= 0, "writer %u: unload: %d", me, e);
            }
            if (r & 0x100)
                sched_yield();
            /* the outer callback's late load: the tombstone refuses it */
            e = mdp_ev_function_load(core, s, fn, &fi);
            RACE_CHECK(e == MDT_IDMAP_SUPERSEDED,
                       "writer %u: a late load at held seq %llu after the function's unload "
                       "gave %d, not SUPERSEDED: its tombstone was retired",
                       me, (unsigned long long)s, e);
        }
        for (unsigned d = depth; d-- > 0;) {
            check_held(&h[d], s, me, "before its release");
            if (d == 0)
                atomic_store(&outer_seq[me], 0);
            mdp_seq_release(&h[d]);
        }
        if (hog)
            atomic_store(&hog_holding, 0);
    }
    atomic_fetch_sub(&writers_left, 1);
    return NULL;
}

static void *scanner(void *arg)
{
    (void)arg;
    uint64_t last = 0, rng = 12345;
    while (atomic_load(&writers_left) && !atomic_load(&race_stop)) {
        uint64_t w = mdp_seq_watermark(core, 0);
        atomic_fetch_add(&n_scans, 1);
        if (w == 1) {
            atomic_fetch_add(&n_busy_scans, 1); /* a take in progress, or an overflow */
        } else {
            RACE_CHECK(w >= last, "the watermark went back from %llu to %llu",
                       (unsigned long long)last, (unsigned long long)w);
            last = w;
            for (unsigned k = 0; k < nwriters; k++) {
                uint64_t s = atomic_load(&outer_seq[k]);
                RACE_CHECK(!s || s >= w,
                           "watermark %llu above writer %u's live hold %llu: the scan missed it",
                           (unsigned long long)w, k, (unsigned long long)s);
            }
        }
        int r = mdp_core_retire(core, 0, 1);
        RACE_CHECK(r >= 0, "retire: %d", r);
        if (r > 0)
            atomic_fetch_add(&n_retired, (uint64_t)r);
        atomic_store(&retired_below, core->life->retire_below);
        if (race_rand(&rng) & 1)
            sched_yield();
    }
    return NULL;
}

/* The tight phase: takes and releases as fast as they come, no map work,
 * against a scanner that only reads the watermark and the writers' seqs:
 * the window between a taker's seq and its publication is a few
 * instructions wide, and only many tries meet it. */
static void *tight_writer(void *arg)
{
    unsigned me = (unsigned)(uintptr_t)arg;
    uint64_t rng = 0xD1B54A32D192ED03ull * (me + 1);
    for (unsigned it = 0; it < 20 * iterations && !atomic_load(&race_stop); it++) {
        mdp_seq_hold h = mdp_seq_take(core);
        atomic_store(&outer_seq[me], h.seq);
        atomic_fetch_add(&n_holds, 1);
        for (volatile unsigned k = 0; k < (unsigned)(race_rand(&rng) & 255); k++)
            ;
        check_held(&h, h.seq, me, "(tight)");
        atomic_store(&outer_seq[me], 0);
        mdp_seq_release(&h);
    }
    atomic_fetch_sub(&writers_left, 1);
    return NULL;
}

static void *tight_scanner(void *arg)
{
    (void)arg;
    uint64_t last = 0;
    while (atomic_load(&writers_left) && !atomic_load(&race_stop)) {
        uint64_t w = mdp_seq_watermark(core, 0);
        atomic_fetch_add(&n_scans, 1);
        if (w == 1) {
            atomic_fetch_add(&n_busy_scans, 1);
            continue;
        }
        RACE_CHECK(w >= last, "the watermark went back from %llu to %llu (tight)",
                   (unsigned long long)last, (unsigned long long)w);
        last = w;
        for (unsigned k = 0; k < nwriters; k++) {
            uint64_t s = atomic_load(&outer_seq[k]);
            RACE_CHECK(!s || s >= w,
                       "watermark %llu above writer %u's live hold %llu: the scan missed it "
                       "(tight)",
                       (unsigned long long)w, k, (unsigned long long)s);
        }
    }
    return NULL;
}

/* The interrupted phase: a signaller thread sends SIGUSR1 to the writers
 * without pause, and the handler reads the watermark right where the
 * writer was interrupted, in the middle of mdp_seq_take as often as
 * anywhere: on a busy machine, threads seldom run at the same instant, and
 * a window of a few instructions between a taker's seq and its publication
 * is met by an interruption far more often than by another CPU. A
 * watermark read there (other than 1) must not exceed the seq the take
 * then returns: a scan that came after the taker's seq was taken must see
 * its slot marked. (ThreadSanitizer runs handlers at its own points,
 * among them its atomic operations: the phase still meets the window.) */
static __thread _Atomic uint64_t seen_in_handler; /* the largest watermark read in it */
static _Atomic int writer_tids[MAX_WRITERS];
static _Atomic uint64_t n_signals;

static void on_usr1(int sig)
{
    (void)sig;
    uint64_t w = mdp_seq_watermark(core, 0);
    if (w != 1 && w > atomic_load_explicit(&seen_in_handler, memory_order_relaxed))
        atomic_store_explicit(&seen_in_handler, w, memory_order_relaxed);
    atomic_fetch_add_explicit(&n_signals, 1, memory_order_relaxed);
}

static void *interrupted_writer(void *arg)
{
    unsigned me = (unsigned)(uintptr_t)arg;
    atomic_store(&writer_tids[me], (int)syscall(SYS_gettid));
    /* until the handler has run 5 times per iteration of the first phase
     * (or 4 s have gone: a busy machine delivers few, and the count says so) */
    time_t t0 = time(NULL);
    while (atomic_load_explicit(&n_signals, memory_order_relaxed) < 5ull * iterations &&
           time(NULL) - t0 < 4 && !atomic_load(&race_stop)) {
        atomic_store(&seen_in_handler, 0);
        mdp_seq_hold h = mdp_seq_take(core);
        uint64_t w = atomic_load(&seen_in_handler);
        RACE_CHECK(w <= h.seq,
                   "writer %u: a watermark of %llu read while it took seq %llu: the scan "
                   "missed a take in progress",
                   me, (unsigned long long)w, (unsigned long long)h.seq);
        atomic_fetch_add_explicit(&n_holds, 1, memory_order_relaxed);
        mdp_seq_release(&h);
    }
    atomic_store(&writer_tids[me], 0);
    atomic_fetch_sub(&writers_left, 1);
    return NULL;
}

static void *signaller(void *arg)
{
    (void)arg;
    int pid = getpid();
    for (unsigned k = 0; atomic_load(&writers_left) && !atomic_load(&race_stop); k++) {
        int tid = atomic_load(&writer_tids[k % nwriters]);
        if (tid > 0)
            syscall(SYS_tgkill, pid, tid, SIGUSR1);
        if (k % 64 == 63)
            sched_yield();
    }
    return NULL;
}

/* An overflowed hold outlives the holds that filled the slots, on one
 * thread, step by step: 64 fillers, then a hold that finds no slot (seq
 * s), then the fillers released (in order, in reverse, or every other
 * first): the watermark may not pass s while it is held, a retirement then
 * leaves a load at s accepted, and once it is released the watermark
 * moves on. */
static void overflow_outlives(void)
{
    for (int order = 0; order < 3; order++) {
        mdp_seq_hold fill[MDP_SEQ_SLOTS];
        for (unsigned k = 0; k < MDP_SEQ_SLOTS; k++)
            fill[k] = mdp_seq_take(core);
        mdp_seq_hold late = mdp_seq_take(core);
        RACE_CHECK(late.slot < 0, "a take found a slot free after %u fillers", MDP_SEQ_SLOTS);
        for (unsigned k = 0; k < MDP_SEQ_SLOTS; k++) {
            unsigned i = order == 0   ? k
                         : order == 1 ? MDP_SEQ_SLOTS - 1 - k
                                      : (2 * k) % MDP_SEQ_SLOTS + (2 * k >= MDP_SEQ_SLOTS);
            mdp_seq_release(&fill[i]);
            uint64_t w = mdp_seq_watermark(core, 0);
            RACE_CHECK(w == 1 || w <= late.seq,
                       "order %d: watermark %llu above the overflowed hold %llu, %u fillers gone",
                       order, (unsigned long long)w, (unsigned long long)late.seq, k + 1);
        }
        int r = mdp_core_retire(core, 0, 1);
        RACE_CHECK(r >= 0, "retire: %d", r);
        mdt_idmap_function_info fi = {.module = 0x5000, .token = 0x06000001};
        uintptr_t fn = (uintptr_t)(FN_BASE - 0x1000u + 16u * (unsigned)order);
        int e = mdp_ev_function_load(core, late.seq, fn, &fi);
        RACE_CHECK(e == 0, "order %d: a load at the overflowed hold's seq %llu: %d", order,
                   (unsigned long long)late.seq, e);
        e = mdp_ev_function_unload(core, mdp_seq(core), fn);
        RACE_CHECK(e >= 0, "unload: %d", e);
        mdp_seq_release(&late);
        uint64_t w = mdp_seq_watermark(core, 0);
        RACE_CHECK(w > late.seq, "order %d: watermark %llu not past a released hold %llu", order,
                   (unsigned long long)w, (unsigned long long)late.seq);
    }
}

/* Writers and a scanner, joined. */
static void run_phase(void *(*wfn)(void *), void *(*sfn)(void *))
{
    pthread_t w[MAX_WRITERS], sc;
    atomic_store(&writers_left, nwriters);
    for (unsigned i = 0; i < nwriters; i++)
        pthread_create(&w[i], NULL, wfn, (void *)(uintptr_t)i);
    pthread_create(&sc, NULL, sfn, NULL);
    for (unsigned i = 0; i < nwriters; i++)
        pthread_join(w[i], NULL);
    pthread_join(sc, NULL);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        iterations = (unsigned)strtoul(argv[1], NULL, 10);
    if (argc > 2)
        nwriters = (unsigned)strtoul(argv[2], NULL, 10);
    if (nwriters < 2 || nwriters > MAX_WRITERS) {
        fprintf(stderr, "race_seqs: 2 to %d writers\n", MAX_WRITERS);
        return 2;
    }
    char log[600], err[256] = "";
    if (race_tmp_path(log, sizeof log, "seqs.log") != 0)
        return 2;
    mdp_config cfg;
    mdp_config_default(&cfg);
    cfg.drain_ms = 600000; /* the drain thread stays out of the way */
    cfg.all_threads = 0;
    snprintf(cfg.output, sizeof cfg.output, "%s", log);
    mdp_runtime_ops ops = {0};
    if (mdp_core_new(&core, &cfg, &ops, "test", 0, err, sizeof err) != 0) {
        fprintf(stderr, "race_seqs: %s\n", err);
        return 2;
    }
    run_phase(writer, scanner);
    if (!atomic_load(&race_failures))
        overflow_outlives();
    uint64_t holds = atomic_load(&n_holds), scans = atomic_load(&n_scans);
    if (!atomic_load(&race_failures))
        run_phase(tight_writer, tight_scanner);
    uint64_t tight_holds = atomic_load(&n_holds) - holds,
             tight_scans = atomic_load(&n_scans) - scans;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGUSR1, &sa, NULL);
    uint64_t before = atomic_load(&n_holds);
    if (!atomic_load(&race_failures))
        run_phase(interrupted_writer, signaller);

    /* nothing held: every slot free, no overflow, the watermark the next
     * seq, and one retirement drops every tombstone */
    for (unsigned k = 0; k < MDP_SEQ_SLOTS; k++)
        RACE_CHECK(atomic_load(&core->life->seq_held[k]) == 0, "slot %u still holds %llu", k,
                   (unsigned long long)atomic_load(&core->life->seq_held[k]));
    RACE_CHECK(atomic_load(&core->life->seq_overflow) == 0, "overflow count %llu at the end",
               (unsigned long long)atomic_load(&core->life->seq_overflow));
    uint64_t next = mdp_seq(core);
    uint64_t w_end = mdp_seq_watermark(core, 0);
    RACE_CHECK(w_end == next + 1, "watermark %llu at the end, not the next seq %llu",
               (unsigned long long)w_end, (unsigned long long)(next + 1));
    int r = mdp_core_retire(core, 0, 1);
    RACE_CHECK(r >= 0, "the last retire: %d", r);
    mdt_idmap_stats st;
    mdt_idmap_stats_get(&st, core->map);
    RACE_CHECK(st.functions_dead == 0 && st.functions_live == 0,
               "after the last retirement: %zu functions, %zu tombstones", st.functions_live,
               st.functions_dead);
    if (!atomic_load(&race_failures)) {
        /* what the run went through: a run without overflows or retirements
         * proves less than it claims */
        RACE_CHECK(atomic_load(&n_overflowed) > 0, "no take overflowed the slots");
        RACE_CHECK(atomic_load(&n_retired) > 0, "no tombstone was retired while writers ran");
    }
    printf("race_seqs: %u writers x %u iterations: %llu holds (%llu overflowed), %llu scans (%llu "
           "saw a take in progress), %llu tombstones retired; then %llu tight holds against %llu "
           "scans; then %llu holds interrupted by %llu signals\n",
           nwriters, iterations, (unsigned long long)holds, (unsigned long long)n_overflowed,
           (unsigned long long)scans, (unsigned long long)n_busy_scans,
           (unsigned long long)n_retired, (unsigned long long)tight_holds,
           (unsigned long long)tight_scans, (unsigned long long)(atomic_load(&n_holds) - before),
           (unsigned long long)atomic_load(&n_signals));
    mdp_core_finish(core, "exit");
    mdp_core_free(core);
    race_tmp_cleanup(log);
    race_tmp_done(log);
    return race_report("race_seqs");
}
