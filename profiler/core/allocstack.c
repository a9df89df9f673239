/* alloc mode's stacks: one sampled allocation per BYTES allocated on each
 * thread (`--alloc-sample`, cfg.alloc_sample), with the allocating
 * thread's managed stack, counted per (type, stack, thread, slice) as
 * `astack` records (doc/profile-log.md).
 *
 * Which allocations, on one of two paths.
 *
 * The event path (CoreCLR 10 and later, the default there): the runtime
 * samples allocations itself and says so with its AllocationSampled event
 * (the adapter's in-process EventPipe session), so allocations keep the
 * runtime's fast path: no ObjectAllocated callback. The runtime's process
 * is a Bernoulli trial per allocated byte of probability 1/102400 (its
 * mean is fixed; dotnet/runtime docs/design/features/
 * RandomizedAllocationSampling.md): an object of size s is sampled with
 * probability 1 - q^s, q = 1 - 1/102400. The core keeps each event with
 * probability k = 102400/BYTES (k = 1 when BYTES is smaller: then the
 * runtime's mean is the one used, and the header says so), independently
 * of the event, so an object is kept with probability p = k(1 - q^s).
 *
 * The callback path (older runtimes, `--alloc-path callback`, and what
 * the event path falls back to): ObjectAllocated for every object, each
 * thread counting down a byte interval drawn from an exponential
 * distribution of mean BYTES (a Poisson process over the bytes it
 * allocates, as Go's heap profiler samples, runtime/malloc.go's
 * nextSample); the allocation that takes the countdown past zero is
 * sampled and a new interval is drawn: p = 1 - exp(-s/BYTES).
 *
 * On both, random intervals rather than a fixed one (AllocationTick's 100
 * KB), which would alias with a program's allocation pattern: a loop that
 * allocates A, B, A, B... whose period divides the interval would have
 * every sample fall on the same type. Each sampled object is weighted 1/p
 * objects and s/p bytes (Go's scaleHeapSample; the runtime's design
 * document's "weighted samples"), which gives unbiased estimates of the
 * objects and bytes each (type, stack) allocated, small objects and huge
 * ones alike. The weights are summed as doubles per record; a write
 * rounds the sum and keeps the fraction for the next, so nothing is lost
 * to rounding.
 *
 * The stack is taken by the adapter on the allocating thread, inside the
 * runtime's callback (CoreCLR: DoStackSnapshot of the current thread), as
 * (return address, FunctionID) pairs, leaf first. Each thread keeps its
 * raw samples under its own mutex (which only a write contends for); a
 * write (drain_lock held) names them: the type as alloc records name it,
 * each frame as a sample's frame with its IL offset. Memory is bounded: a
 * thread keeps at most MAX_PENDING samples, MAX_PENDING_BYTES bytes of
 * them, between two writes (a write every flush_ms), and counts the ones
 * it drops. */
#define _GNU_SOURCE
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/base.h"
#include "core/growbuf.h"
#include "core/sampler.h"
#include "core/naming.h"
#include "core/aggregate.h"
#include "core/modes.h"

#define MAX_PENDING 65536u            /* samples a thread keeps between two writes, */
#define MAX_PENDING_BYTES (16u << 20) /* ... and their bytes (--alloc-sample 1 and deep stacks) */

struct raw_sample {
    uintptr_t cls;
    uint64_t cls_gen;
    uint64_t size;
    uint64_t ms; /* when, since the core started (the record's slice) */
    int tid;
    unsigned n;
    struct {
        uintptr_t ip, fn;
        uint64_t gen;
    } f[];
};

struct stack_thread {
    pthread_mutex_t lock;
    struct raw_sample **v;
    size_t n, cap;
    size_t bytes; /* of the samples in v */
    struct stack_thread *next;
};

/* What a record has summed, and the fractions a write kept back. */
struct stack_weight {
    double objects, bytes;
};

struct mdp_allocstack {
    struct stack_thread *_Atomic threads;
    mdp_smap sums; /* record key -> struct stack_weight (drain_lock) */
    _Atomic uint64_t samples, dropped;
    /* the event path (set at startup, before any event): the mean the
     * estimates are for, the share of the runtime's samples kept, and
     * ln q of the runtime's per-byte trial; the events delivered */
    int event;
    uint64_t mean;
    double keep, log_q;
    uint64_t runtime_mean;
    _Atomic uint64_t events;
};

/* Per thread: the countdown, the generator, and the core they belong to
 * (an attach after a detach is another core: start over). */
static __thread struct {
    const void *core;
    int64_t left;
    uint64_t rng;
    int tid;
    struct stack_thread *table;
} me;

int mdp_alloc_stacks_init(mdp_core *core)
{
    if (!core->cfg.alloc_sample)
        return 0;
    struct mdp_allocstack *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    mdp_smap_init(&s->sums);
    s->mean = core->cfg.alloc_sample;
    core->allocstack = s;
    return 0;
}

uint64_t mdp_alloc_stacks_use_event(mdp_core *core, uint64_t runtime_mean)
{
    struct mdp_allocstack *s = core->allocstack;
    if (!s)
        return 0;
    if (!runtime_mean) {
        /* back to the callback path (the runtime refused the session) */
        s->event = 0;
        s->mean = core->cfg.alloc_sample;
        return s->mean;
    }
    s->event = 1;
    s->runtime_mean = runtime_mean;
    s->mean = core->cfg.alloc_sample > runtime_mean ? core->cfg.alloc_sample : runtime_mean;
    s->keep = (double)runtime_mean / (double)s->mean;
    s->log_q = log1p(-1.0 / (double)runtime_mean);
    if (core->cfg.alloc_sample < runtime_mean)
        mdp_note(core,
                 "--alloc-sample %u is below the runtime's fixed sampling mean: stacks are "
                 "sampled at one per %" PRIu64 " bytes",
                 core->cfg.alloc_sample, runtime_mean);
    return s->mean;
}

int mdp_alloc_stacks_describe(mdp_core *core, char *buf, size_t len)
{
    struct mdp_allocstack *s = core->allocstack;
    if (!s)
        return 0;
    if (s->event)
        return snprintf(buf, len,
                        " alloc_sample=%" PRIu64 " alloc_path=event alloc_scale=bernoulli "
                        "alloc_event_mean=%" PRIu64,
                        s->mean, s->runtime_mean);
    return snprintf(buf, len, " alloc_sample=%" PRIu64 " alloc_path=callback alloc_scale=poisson",
                    s->mean);
}

/* xorshift64*: a fast generator with no state shared between threads; the
 * intervals need to be unpredictable to the program's pattern, not to an
 * adversary. */
static uint64_t next_random(void)
{
    uint64_t x = me.rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    me.rng = x;
    return x * 0x2545f4914f6cdd1dull;
}

static int64_t draw_interval(uint64_t mean)
{
    /* u in (0, 1]: -ln(u) is exponential with mean 1; capped at 40 means
     * (a probability of e^-40) so the interval stays finite */
    double u = (double)((next_random() >> 11) + 1) * 0x1.0p-53;
    double x = -log(u);
    if (x > 40.0)
        x = 40.0;
    return (int64_t)(x * (double)mean) + 1;
}

/* The thread's state for this core (an attach after a detach is another
 * core: start over). */
static void me_init(mdp_core *core)
{
    if (me.core == core)
        return;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    me.core = core;
    me.table = NULL;
    me.tid = (int)syscall(SYS_gettid);
    me.rng = ((uint64_t)me.tid << 32) ^ (uint64_t)ts.tv_nsec ^ (uint64_t)(uintptr_t)&me;
    if (!me.rng)
        me.rng = 0x9e3779b97f4a7c15ull;
    me.left = draw_interval(core->cfg.alloc_sample);
}

int mdp_alloc_event_keep(mdp_core *core, uint64_t size)
{
    struct mdp_allocstack *s = core->allocstack;
    (void)size;
    if (!s || !s->event)
        return 0;
    me_init(core);
    atomic_fetch_add_explicit(&s->events, 1, memory_order_relaxed);
    if (s->keep >= 1.0)
        return 1;
    /* u in [0, 1): kept with probability keep, whatever the event says */
    double u = (double)(next_random() >> 11) * 0x1.0p-53;
    return u < s->keep;
}

int mdp_alloc_stack_due(mdp_core *core, uint64_t bytes)
{
    struct mdp_allocstack *s = core->allocstack;
    if (!s || s->event)
        return 0;
    me_init(core);
    me.left -= (int64_t)(bytes < INT64_MAX / 2 ? bytes : INT64_MAX / 2);
    if (me.left > 0)
        return 0;
    me.left = draw_interval(core->cfg.alloc_sample);
    return 1;
}

static struct stack_thread *my_table(struct mdp_allocstack *s)
{
    struct stack_thread *t = me.table;
    if (t)
        return t;
    if (!(t = calloc(1, sizeof *t)))
        return NULL;
    pthread_mutex_init(&t->lock, NULL);
    t->next = atomic_load(&s->threads);
    while (!atomic_compare_exchange_weak(&s->threads, &t->next, t))
        ;
    me.table = t;
    return t;
}

void mdp_alloc_stack_add(mdp_core *core, uintptr_t cls, uint64_t bytes, const uintptr_t *ips,
                         const uintptr_t *fns, unsigned n)
{
    struct mdp_allocstack *s = core->allocstack;
    if (!s || !cls || me.core != core)
        return;
    if (n > core->cfg.max_depth)
        n = core->cfg.max_depth;
    struct stack_thread *t = my_table(s);
    struct raw_sample *r = t ? malloc(sizeof *r + n * sizeof r->f[0]) : NULL;
    if (!r) {
        atomic_fetch_add(&s->dropped, 1);
        return;
    }
    mdt_idmap_class_info ci;
    r->cls = cls;
    r->cls_gen = mdt_idmap_class_lookup(&ci, NULL, 0, core->map, cls, 0) == 0 ? ci.gen : 0;
    mdp_thread_event_seen(core, me.tid); /* its #thread line, before the record */
    r->size = bytes;
    r->tid = me.tid;
    r->ms = mdp_elapsed_ms(core);
    r->n = 0;
    for (unsigned i = 0; i < n; i++) {
        /* a frame is named by its call instruction (each ip is a return
         * address); the map's incarnation of the code, when it knows it,
         * so the IL offset can be found; else the function as it is now */
        mdt_idmap_code_range cr;
        uintptr_t fn = fns[i];
        uint64_t gen = 0;
        if (!fn)
            continue; /* not managed code: the runtime's own frames */
        if (ips[i] > 1 && mdt_idmap_ip_lookup(&cr, core->map, ips[i] - 1) == 0 &&
            cr.function_id == fn)
            gen = cr.function_gen;
        r->f[r->n].ip = ips[i] - 1;
        r->f[r->n].fn = fn;
        r->f[r->n].gen = gen;
        r->n++;
    }
    size_t size = sizeof *r + r->n * sizeof r->f[0];
    pthread_mutex_lock(&t->lock);
    if (t->bytes + size > MAX_PENDING_BYTES) {
        pthread_mutex_unlock(&t->lock);
        free(r);
        atomic_fetch_add(&s->dropped, 1);
        return;
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        void *p = cap <= MAX_PENDING ? realloc(t->v, cap * sizeof *t->v) : NULL;
        if (!p) {
            pthread_mutex_unlock(&t->lock);
            free(r);
            atomic_fetch_add(&s->dropped, 1);
            return;
        }
        t->v = p;
        t->cap = cap;
    }
    t->v[t->n++] = r;
    t->bytes += size;
    pthread_mutex_unlock(&t->lock);
    atomic_fetch_add(&s->samples, 1);
}

/* One sample's key (its thread and slice, the type, then the frames leaf
 * first) and names. */
static void name_sample(mdp_core *core, const struct raw_sample *r, struct mdp_growbuf *key,
                        struct mdp_growbuf *dbg)
{
    char desc[4096], head[64];
    int hn = snprintf(head, sizeof head, "%d %" PRIu64 " ", r->tid, r->ms / core->cfg.slice_ms);
    mdp_growbuf_put(key, head, (size_t)hn);
    char *tdebug = NULL;
    int kind;
    const char *type = mdp_alloc_type_text(core, r->cls, r->cls_gen, desc, sizeof desc, &kind,
                                           core->cfg.debug_names ? &tdebug : NULL);
    mdp_growbuf_put(key, type, strlen(type));
    if (core->cfg.debug_names)
        mdp_growbuf_put(dbg, tdebug ? tdebug : type, strlen(tdebug ? tdebug : type));
    free(tdebug);
    for (unsigned i = 0; i < r->n; i++) {
        const struct mdp_frame *fr = mdp_frame_get(core, r->f[i].fn, r->f[i].gen);
        const char *text = fr ? fr->text : mdp_frame_kind_text[FK_UNMAPPED];
        char il[24] = "";
        if (fr && fr->kind == FK_MANAGED)
            mdp_frame_il(core, r->f[i].ip, r->f[i].fn, r->f[i].gen, il, sizeof il);
        mdp_growbuf_put(key, " ", 1);
        mdp_growbuf_put(key, text, strlen(text));
        mdp_growbuf_put(key, il, strlen(il));
        if (core->cfg.debug_names) {
            const char *d = fr && fr->debug ? fr->debug : text;
            mdp_growbuf_put(dbg, "\t", 1);
            mdp_growbuf_put(dbg, d, strlen(d));
        }
    }
}

void mdp_alloc_stacks_flush(mdp_core *core)
{
    struct mdp_allocstack *s = core->allocstack;
    if (!s)
        return;
    struct mdp_growbuf key = {0}, dbg = {0};
    double mean = (double)s->mean;
    for (struct stack_thread *t = atomic_load(&s->threads); t; t = t->next) {
        /* names are built outside the thread's lock: take its samples first */
        pthread_mutex_lock(&t->lock);
        struct raw_sample **v = t->v;
        size_t n = t->n;
        t->v = NULL;
        t->n = t->cap = t->bytes = 0;
        pthread_mutex_unlock(&t->lock);
        for (size_t i = 0; i < n; i++) {
            const struct raw_sample *r = v[i];
            mdp_growbuf_reset(&key);
            mdp_growbuf_reset(&dbg);
            name_sample(core, r, &key, &dbg);
            /* the sample stands for 1/p objects of its size: the
             * callback path's p = 1 - exp(-size/mean), the event path's
             * p = keep (1 - q^size) (a zero size: the runtime did not
             * say; one object) */
            double p = !r->size   ? 1.0
                       : s->event ? s->keep * -expm1((double)r->size * s->log_q)
                                  : -expm1(-(double)r->size / mean);
            struct stack_weight *w = key.bad ? NULL : mdp_smap_get(&s->sums, key.s, key.len);
            if (!key.bad && !w && (w = calloc(1, sizeof *w)) &&
                mdp_smap_put(&s->sums, key.s, key.len, w) != 0) {
                free(w);
                w = NULL;
            }
            if (w && p > 0) {
                w->objects += 1.0 / p;
                w->bytes += (double)r->size / p;
                /* the record, with what the sums have reached in whole
                 * units (the fraction stays for the next) */
                double objs = floor(w->objects), bytes = floor(w->bytes);
                w->objects -= objs;
                w->bytes -= bytes;
                struct mdp_record *rec = mdp_record_add(
                    core, MDP_REC_ASTACK, key.s, key.len, (uint64_t)objs, (uint64_t)bytes,
                    core->cfg.debug_names && !dbg.bad ? dbg.s : NULL);
                (void)rec;
            } else {
                atomic_fetch_add(&s->dropped, 1);
            }
            free(v[i]);
        }
        free(v);
    }
    free(key.s);
    free(dbg.s);
}

void mdp_alloc_stacks_stats(mdp_core *core, uint64_t *samples, uint64_t *dropped, uint64_t *events)
{
    struct mdp_allocstack *s = core->allocstack;
    *samples = s ? atomic_load(&s->samples) : 0;
    *dropped = s ? atomic_load(&s->dropped) : 0;
    *events = s && s->event ? atomic_load(&s->events) : UINT64_MAX;
}

static void free_weight(void *payload, const char *key, void *val)
{
    (void)payload;
    (void)key;
    free(val);
}

void mdp_alloc_stacks_free(mdp_core *core)
{
    struct mdp_allocstack *s = core->allocstack;
    if (!s)
        return;
    /* The per-thread tables stay: a thread may still be inside
     * mdp_alloc_stack_add. Their samples were written by the last flush. */
    mdp_smap_each(&s->sums, free_weight, NULL);
    mdp_smap_free(&s->sums);
    core->allocstack = NULL;
}
