/* The sample rings and the drain thread (profiler/core/ring.h, drain.c,
 * sampler.c's slot protocol, core.c's finish) under threads: every sample
 * published is drained exactly once, through the drain thread's passes, its
 * waits and wakes, the log's incremental writes and the final flush.
 *
 * Producer threads play the SIGPROF handler, each on a slot of its own (a
 * ring of 1,024 words, so it wraps often and fills): inside the slot's
 * `busy` count they read the sampling core and the slot's state as the
 * handler does, and publish a sample (header, time, 1 to 5 frames, weight 1
 * to 7) when the ring has room, else count a drop; a ring half full pokes
 * the drain. They count, per depth, the weights they published. A poker
 * thread meanwhile wakes and pokes the drain thread at random and asks for
 * writes of the log as a termination signal does (flush_req, then a wake),
 * each of which must be done within 10 s although the drain's period may be
 * 30 s (a lost wake fails it).
 *
 * Each round is a core of its own, ended while the producers still run:
 * by the test's thread (mdp_core_finish, as the runtime's shutdown), or by
 * the drain thread itself once it has counted its session's samples (an
 * attached session's end), then freed while the producers still try (they
 * then find no core). The producers then stop, and the round's log must
 * hold, per producer thread and depth, exactly the weights it published:
 * summed over the log's records and writes, a sample lost or drained twice
 * changes the sum, and a torn one shows frames other than `stub` or the
 * wrong depth. The #stats line's samples= is their total.
 *
 * A last round has the real SIGPROF handler as producer: threads with
 * their CPU-time timers (sampler.c), finished while they spin; the log
 * must have drained exactly the samples the handlers counted as published.
 *
 * Usage: race_drain [rounds] [producers] [ms per round]   (default 4, 4, 400) */
#define _GNU_SOURCE
#include "config.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "race.h"

#define MAX_PRODUCERS 8
#define MAX_DEPTH 5
#define RING_WORDS 1024u
#define STUB_IP 0x30000u /* no object, no code: a `stub` frame */

struct producer {
    unsigned idx;
    struct mdp_slot *slot;
    _Atomic int tid;
    _Atomic int ready;
    uint64_t weight[MAX_DEPTH + 1]; /* published, per depth */
    uint64_t published, dropped, inactive;
    uint64_t rng;
    int full; /* the last try found the ring full */
};

static struct producer prods[MAX_PRODUCERS];
static unsigned nproducers = 4;
static _Atomic int producers_stop, poker_stop;
static uint64_t ringbufs[MAX_PRODUCERS][RING_WORDS];
static _Atomic uint64_t n_pokes, n_wakes, n_flushes;
static char tmpdir_log[600]; /* a log's path in the test's folder */

/* One pass of the handler's protocol (sampler.c, on_sigprof): the slot's
 * busy count first, then the core, then the slot's state. */
static void produce_once(struct producer *p)
{
    struct mdp_slot *t = p->slot;
    atomic_fetch_add_explicit(&t->busy, 1, memory_order_seq_cst);
    mdp_core *core = atomic_load_explicit(&mdp_sampling_core, memory_order_seq_cst);
    if (core && atomic_load_explicit(&t->state, memory_order_seq_cst) == SLOT_ACTIVE &&
        atomic_load_explicit(&t->tid, memory_order_relaxed) == atomic_load(&p->tid)) {
        uint64_t r = race_rand(&p->rng);
        unsigned depth = 1 + (unsigned)(r % MAX_DEPTH);
        uint32_t weight = 1 + (uint32_t)((r >> 8) % 7);
        uint64_t words = 2 + 3ull * depth;
        if (mdp_ring_space(&t->ring) < words) {
            atomic_fetch_add_explicit(&t->drops, 1, memory_order_relaxed);
            p->dropped++;
            p->full = 1;
        } else {
            struct timespec now;
            clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
            mdp_ring_put(&t->ring, 0, MDP_SAMPLE_HDR(depth, MDP_SAMPLE_HAVE_TIME, weight));
            mdp_ring_put(&t->ring, 1, (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec);
            for (unsigned i = 0; i < depth; i++) {
                mdp_ring_put(&t->ring, 2 + 3 * i, STUB_IP + 16 * i);
                mdp_ring_put(&t->ring, 3 + 3 * i, 0);
                mdp_ring_put(&t->ring, 4 + 3 * i, 0);
            }
            mdp_ring_publish(&t->ring, words);
            atomic_fetch_add_explicit(&t->samples, 1, memory_order_relaxed);
            p->weight[depth] += weight;
            p->published++;
        }
        if (mdp_ring_space(&t->ring) <= (t->ring.mask + 1) / 2)
            mdp_drain_poke(core);
    } else {
        p->inactive++;
    }
    atomic_fetch_sub_explicit(&t->busy, 1, memory_order_release);
}

static void *producer_main(void *arg)
{
    struct producer *p = arg;
    atomic_store(&p->tid, (int)syscall(SYS_gettid));
    atomic_store(&p->ready, 1);
    while (!atomic_load(&producers_stop)) {
        p->full = 0;
        produce_once(p);
        /* a thread's samples come apart in time: a short pause, now and
         * then a longer one, so that the rings fill and empty by turns */
        uint64_t r = race_rand(&p->rng);
        if (p->full)
            usleep(200); /* a full ring: let the drain come */
        else if ((r & 15) == 0)
            sched_yield();
        else if ((r & 1023) == 1)
            usleep(1000);
        else
            for (volatile unsigned k = 0; k < (unsigned)(r >> 54); k++)
                ;
    }
    return NULL;
}

static uint64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Wakes, pokes and write requests at random; a write asked for must come
 * within 10 s (the drain's period may be 30 s: only the wake brings it). */
static void *poker_main(void *arg)
{
    mdp_core *core = arg;
    uint64_t rng = 777;
    while (!atomic_load(&poker_stop)) {
        uint64_t r = race_rand(&rng);
        switch (r % 4) {
        case 0:
            mdp_drain_poke(core);
            atomic_fetch_add(&n_pokes, 1);
            break;
        case 1:
            mdp_drain_wake(core);
            atomic_fetch_add(&n_wakes, 1);
            break;
        case 2:
            if ((r & 0x30) == 0 && !atomic_load(&core->finished)) {
                /* a write now, as termsig.c's handler asks for one */
                uint64_t want = atomic_fetch_add(&core->writer->flush_req, 1) + 1;
                mdp_drain_wake(core);
                uint64_t t0 = mono_ms();
                while (atomic_load(&core->writer->flush_done) < want &&
                       !atomic_load(&core->finished) && mono_ms() - t0 < 10000)
                    usleep(500);
                RACE_CHECK(atomic_load(&core->writer->flush_done) >= want ||
                               atomic_load(&core->finished),
                           "a write asked for (flush_req %llu) not done after %llu ms",
                           (unsigned long long)want, (unsigned long long)(mono_ms() - t0));
                atomic_fetch_add(&n_flushes, 1);
            }
            break;
        default: break;
        }
        usleep((useconds_t)(r >> 56) * 10);
    }
    return NULL;
}

/* The round's log: per producer thread and depth, the weights its stack
 * records add up to; every frame `stub`. Returns the #stats samples=. */
static uint64_t read_log(const char *path, uint64_t got[MAX_PRODUCERS][MAX_DEPTH + 1],
                         const char **end)
{
    static char endbuf[64];
    *end = NULL;
    uint64_t stats_samples = UINT64_MAX;
    FILE *f = fopen(path, "r");
    RACE_CHECK(f != NULL, "no log at %s", path);
    if (!f)
        return stats_samples;
    char line[4096];
    unsigned lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (!strncmp(line, "#stats ", 7)) {
            const char *s = strstr(line, " samples="), *e = strstr(line, " end=");
            if (s)
                stats_samples = strtoull(s + 9, NULL, 10);
            if (e) {
                snprintf(endbuf, sizeof endbuf, "%.*s", (int)strcspn(e + 5, " \n"), e + 5);
                *end = endbuf;
            }
            continue;
        }
        if (strncmp(line, "stack ", 6))
            continue;
        char *save = NULL, *tok = strtok_r(line + 6, " \n", &save);
        uint64_t count = tok ? strtoull(tok, NULL, 10) : 0;
        tok = strtok_r(NULL, " \n", &save);
        int tid = tok ? atoi(tok) : 0;
        tok = strtok_r(NULL, " \n", &save); /* the slice */
        unsigned depth = 0;
        while ((tok = strtok_r(NULL, " \n", &save))) {
            RACE_CHECK(!strcmp(tok, "stub"), "%s:%u: a frame '%s', not stub", path, lineno, tok);
            depth++;
        }
        unsigned who = 0;
        while (who < nproducers && atomic_load(&prods[who].tid) != tid)
            who++;
        RACE_CHECK(who < nproducers, "%s:%u: thread %d is no producer", path, lineno, tid);
        RACE_CHECK(depth >= 1 && depth <= MAX_DEPTH, "%s:%u: %u frames", path, lineno, depth);
        if (who < nproducers && depth >= 1 && depth <= MAX_DEPTH)
            got[who][depth] += count;
    }
    fclose(f);
    return stats_samples;
}

/* One core from its start to its free, with the producers running
 * throughout. by_drain: the session ends on the drain thread after
 * max_samples, else the test's thread finishes it after ms. */
static void round_run(unsigned round, int by_drain, unsigned ms)
{
    char log[600];
    mdp_config cfg;
    mdp_config_default(&cfg);
    /* odd rounds: the adaptive period (5 ms up to 320 ms: pokes wake it);
     * even ones: a fixed 30 s period, so that only wakes bring a pass
     * before the end (a poke wakes only a wait longer than the base) */
    cfg.drain_ms = round % 2 ? 5 : 30000;
    cfg.flush_ms = 50;   /* the log written in pieces as the round runs */
    cfg.all_threads = 0; /* no thread but the producers' in the log */
    cfg.max_samples = by_drain ? 20000 : 0;
    mdp_core *core;
    if (race_core_new(&core, log, sizeof log, "drain", round, &cfg) != 0)
        return;
    atomic_store(&producers_stop, 0);
    atomic_store(&poker_stop, 0);
    pthread_t th[MAX_PRODUCERS], poker;
    for (unsigned i = 0; i < nproducers; i++) {
        struct producer *p = &prods[i];
        memset(p, 0, sizeof *p);
        p->idx = i;
        p->rng = 0x9E3779B97F4A7C15ull * (i + 1) + round;
        p->slot = &core->slots[i];
        pthread_create(&th[i], NULL, producer_main, p);
        while (!atomic_load(&p->ready))
            sched_yield();
        /* the slot made active as mdp_sampler_thread_start does, with no
         * timer: this thread's samples come from its producer */
        pthread_mutex_lock(&core->threads_lock);
        struct mdp_slot *t = p->slot;
        mdp_ring_init(&t->ring, ringbufs[i], RING_WORDS);
        atomic_store(&t->samples, 0);
        atomic_store(&t->drops, 0);
        atomic_store(&t->stack_lo, 0);
        atomic_store(&t->stack_hi, 0);
        atomic_store(&t->tid, atomic_load(&p->tid));
        atomic_store(&t->state, SLOT_ACTIVE);
        atomic_fetch_add(&core->threads_seen, 1);
        pthread_mutex_unlock(&core->threads_lock);
    }
    pthread_create(&poker, NULL, poker_main, core);
    if (by_drain) {
        /* the drain thread ends the session once it has counted 20,000
         * samples (weights): wait for its log, at most 60 s */
        uint64_t t0 = mono_ms();
        while (!atomic_load(&core->finished) && mono_ms() - t0 < 60000 && !atomic_load(&race_stop))
            usleep(2000);
        RACE_CHECK(atomic_load(&core->finished), "round %u: the session did not end", round);
        usleep(ms * 100); /* the producers go on meanwhile, finding the slots retired */
    } else {
        usleep(ms * 1000);
        mdp_core_finish(core, "exit");
        usleep(ms * 100);
    }
    atomic_store(&poker_stop, 1);
    pthread_join(poker, NULL);
    /* freed while the producers still try: the handler's protocol keeps
     * them off the core (sampler.c: mdp_sampler_free) */
    mdp_core_free(core);
    usleep(1000);
    atomic_store(&producers_stop, 1);
    for (unsigned i = 0; i < nproducers; i++)
        pthread_join(th[i], NULL);

    uint64_t got[MAX_PRODUCERS][MAX_DEPTH + 1];
    memset(got, 0, sizeof got);
    const char *end;
    uint64_t stats = read_log(log, got, &end);
    uint64_t total = 0, published = 0, dropped = 0, inactive = 0;
    for (unsigned i = 0; i < nproducers; i++) {
        for (unsigned d = 1; d <= MAX_DEPTH; d++) {
            RACE_CHECK(got[i][d] == prods[i].weight[d],
                       "round %u: producer %u, depth %u: %llu published, %llu in the log", round, i,
                       d, (unsigned long long)prods[i].weight[d], (unsigned long long)got[i][d]);
            total += prods[i].weight[d];
        }
        published += prods[i].published;
        dropped += prods[i].dropped;
        inactive += prods[i].inactive;
    }
    RACE_CHECK(stats == total, "round %u: #stats samples=%llu, published %llu", round,
               (unsigned long long)stats, (unsigned long long)total);
    RACE_CHECK(end && !strcmp(end, by_drain ? "detach" : "exit"), "round %u: the log ends %s",
               round, end ? end : "without #stats end=");
    RACE_CHECK(published > 0 && inactive > 0, "round %u: %llu published, %llu tries without a core",
               round, (unsigned long long)published, (unsigned long long)inactive);
    printf("round %u (%s): %llu samples (weight %llu) published and drained once, %llu dropped "
           "on a full ring, %llu tries after the end\n",
           round, by_drain ? "ended by the drain thread" : "finished by the test",
           (unsigned long long)published, (unsigned long long)total, (unsigned long long)dropped,
           (unsigned long long)inactive);
    race_tmp_cleanup(log);
    if (round == 0)
        snprintf(tmpdir_log, sizeof tmpdir_log, "%s", log);
}

/* The real handler: threads registered as the runtime's are (a CPU-time
 * timer each, sampler.c), spinning, while the drain runs and pokes come;
 * the core finished while they spin. Every sample the handler published
 * (its slot's `samples`, counted after the publication) is drained once:
 * the log's #stats signals= (samples drained) is their sum, and its
 * samples= the weights of the thread's records. */
static _Atomic int spin_stop;

static void *spinner_main(void *arg)
{
    struct producer *p = arg;
    atomic_store(&p->tid, (int)syscall(SYS_gettid));
    mdp_core *core = atomic_load(&mdp_sampling_core);
    int e = mdp_ev_thread_start(core, 0x1000u + p->idx, atomic_load(&p->tid));
    RACE_CHECK(e == 0, "spinner %u: thread start: %d", p->idx, e);
    atomic_store(&p->ready, 1);
    volatile uint64_t x = 0;
    while (!atomic_load(&spin_stop))
        for (unsigned k = 0; k < 100000; k++)
            x += k ^ (x >> 3);
    return NULL;
}

static void handler_round(unsigned round, unsigned ms)
{
    char log[600];
    mdp_config cfg;
    mdp_config_default(&cfg);
    cfg.drain_ms = 5;
    cfg.flush_ms = 50;
    cfg.all_threads = 0;
    mdp_core *core;
    if (race_core_new(&core, log, sizeof log, "handler", round, &cfg) != 0)
        return;
    atomic_store(&spin_stop, 0);
    atomic_store(&poker_stop, 0);
    pthread_t th[MAX_PRODUCERS], poker;
    for (unsigned i = 0; i < nproducers; i++) {
        memset(&prods[i], 0, sizeof prods[i]);
        prods[i].idx = i;
        pthread_create(&th[i], NULL, spinner_main, &prods[i]);
        while (!atomic_load(&prods[i].ready))
            sched_yield();
    }
    pthread_create(&poker, NULL, poker_main, core);
    usleep(ms * 1000);
    mdp_core_finish(core, "exit");
    /* the slots are retired, not yet freed: what each handler published */
    uint64_t published = 0;
    for (unsigned i = 0, used = mdp_slots_used(); i < used; i++)
        for (unsigned k = 0; k < nproducers; k++)
            if (atomic_load(&core->slots[i].tid) == atomic_load(&prods[k].tid))
                published += atomic_load(&core->slots[i].samples);
    atomic_store(&poker_stop, 1);
    pthread_join(poker, NULL);
    atomic_store(&spin_stop, 1);
    for (unsigned i = 0; i < nproducers; i++)
        pthread_join(th[i], NULL);
    mdp_core_free(core);

    uint64_t signals = UINT64_MAX, samples = UINT64_MAX, weights = 0;
    FILE *f = fopen(log, "r");
    RACE_CHECK(f != NULL, "round %u: no log", round);
    char line[16384];
    while (f && fgets(line, sizeof line, f)) {
        if (!strncmp(line, "#stats ", 7)) {
            const char *a = strstr(line, " signals="), *b = strstr(line, " samples=");
            if (a)
                signals = strtoull(a + 9, NULL, 10);
            if (b)
                samples = strtoull(b + 9, NULL, 10);
        } else if (!strncmp(line, "stack ", 6)) {
            char *end;
            uint64_t count = strtoull(line + 6, &end, 10);
            int tid = (int)strtol(end, NULL, 10);
            unsigned k = 0;
            while (k < nproducers && atomic_load(&prods[k].tid) != tid)
                k++;
            RACE_CHECK(k < nproducers, "round %u: a record of thread %d, no spinner", round, tid);
            weights += count;
        }
    }
    if (f)
        fclose(f);
    RACE_CHECK(signals == published,
               "round %u: the handlers published %llu samples, the log drained %llu", round,
               (unsigned long long)published, (unsigned long long)signals);
    RACE_CHECK(samples == weights, "round %u: #stats samples=%llu, the records hold %llu", round,
               (unsigned long long)samples, (unsigned long long)weights);
    RACE_CHECK(published > 0, "round %u: no sample taken in %u ms of %u spinning threads", round,
               ms, nproducers);
    printf("round %u (the real handler): %llu samples (weight %llu) published and drained once\n",
           round, (unsigned long long)published, (unsigned long long)weights);
    race_tmp_cleanup(log);
}

int main(int argc, char **argv)
{
    unsigned rounds = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 4;
    nproducers = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 4;
    unsigned ms = argc > 3 ? (unsigned)strtoul(argv[3], NULL, 10) : 400;
    if (nproducers < 1 || nproducers > MAX_PRODUCERS) {
        fprintf(stderr, "race_drain: 1 to %d producers\n", MAX_PRODUCERS);
        return 2;
    }
    mdp_slots_take(nproducers);
    for (unsigned r = 0; r < rounds && !atomic_load(&race_failures); r++)
        round_run(r, r % 4 >= 2, ms);
    if (!atomic_load(&race_failures))
        handler_round(rounds, ms);
    race_tmp_done(tmpdir_log);
    printf("race_drain: %llu pokes, %llu wakes, %llu writes asked for\n",
           (unsigned long long)n_pokes, (unsigned long long)n_wakes, (unsigned long long)n_flushes);
    return race_report("race_drain");
}
