/* calls mode: how many times each function was entered and how it was
 * left: returned (leave hook), left by a tail call (tailcall hook: the
 * callee returns to the caller's caller, and its own leave is its own), or
 * unwound by an exception (the runtime's ExceptionUnwindFunctionEnter for
 * every frame its unwind pass reaches, less ExceptionCatcherEnter for the
 * frame that catches and goes on). Enters equal the sum of the three for
 * every function not on a stack when the log is written.
 *
 * Each function gets a counter when the runtime first asks whether to hook
 * it (the adapter's FunctionIDMapper2): a cache line of its own in one
 * preallocated table, whose address is what the runtime then hands the
 * hooks; its words are the enters, leaves, tail calls and unwinds. The
 * fast hooks (assembly, coreclr/elt.c) increment their word atomically and
 * return; the slow ones (C functions behind the runtime's register-saving
 * stub) add to the calling thread's own array at the counter's index, no
 * atomic operation; exceptions (rare) go to the shared words. The drain thread
 * never touches the counters; mdp_calls_flush turns what they gained since
 * the last flush into `call` records, before every unload (the function's
 * frame is named while its code is still known) and at the end.
 *
 * A flush reads a function's exits before its enters, and every thread
 * publishes an enter before the exit of the same call (release stores, or
 * the fast hooks' locked increments; acquire loads here): so what a flush
 * sees never has more exits than enters, even while threads run. */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core/base.h"
#include "core/naming.h"
#include "core/aggregate.h"
#include "core/modes.h"

#define CALLS_MAX (1u << 20) /* counters (functions hooked) */
#define CALLS_STRIDE 8u      /* words per counter: one cache line each */

/* A thread's counts for one core. Never freed (a thread's pointer to its
 * own may outlive the core), on one process-wide list. */
struct calls_thread {
    uint64_t *counts; /* CALLS_MAX * MDP_CALL_WORDS words, mapped without reserve, touched lazily */
    uint64_t owner;   /* the id of the mdp_calls it counts for */
    struct calls_thread *next;
};

static struct calls_thread *_Atomic all_threads;
static _Atomic uint64_t next_id = 1;

struct mdp_calls {
    uint64_t id;
    uint64_t *table; /* CALLS_MAX * CALLS_STRIDE words */
    pthread_mutex_t lock;
    mdp_pmap index; /* FunctionID -> counter index + 1 */
    uintptr_t *fn;  /* per index: the function and its incarnation */
    uint64_t *gen;
    uint64_t *flushed; /* per index and word: what earlier flushes recorded */
    size_t n;
};

static __thread struct calls_thread *my_counts;

int mdp_calls_init(mdp_core *core)
{
    struct mdp_calls *c = calloc(1, sizeof *c);
    if (!c)
        return -1;
    size_t bytes = (size_t)CALLS_MAX * CALLS_STRIDE * sizeof(uint64_t);
    c->table = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    c->fn = calloc(CALLS_MAX, sizeof *c->fn);
    c->gen = calloc(CALLS_MAX, sizeof *c->gen);
    c->flushed = calloc((size_t)CALLS_MAX * MDP_CALL_WORDS, sizeof *c->flushed);
    if (c->table == MAP_FAILED || !c->fn || !c->gen || !c->flushed) {
        if (c->table != MAP_FAILED)
            munmap(c->table, bytes);
        free(c->fn);
        free(c->gen);
        free(c->flushed);
        free(c);
        return -1;
    }
    pthread_mutex_init(&c->lock, NULL);
    mdp_pmap_init(&c->index);
    c->id = atomic_fetch_add(&next_id, 1);
    core->calls = c;
    return 0;
}

/* The counter of `fn` (its incarnation: FunctionIDs are reused after an
 * unload): found, or made when `make` (NULL when the table is full or
 * there is none). */
static uint64_t *counter_of(mdp_core *core, uintptr_t fn, int make)
{
    struct mdp_calls *c = core->calls;
    if (!c || !fn)
        return NULL;
    mdt_idmap_function_info fi;
    uint64_t gen = mdt_idmap_function_lookup(&fi, NULL, 0, core->map, fn, 0) == 0 ? fi.gen : 0;
    pthread_mutex_lock(&c->lock);
    uintptr_t at = (uintptr_t)mdp_pmap_get(&c->index, fn, gen);
    if (!at && make && c->n < CALLS_MAX) {
        at = c->n + 1;
        c->fn[c->n] = fn;
        c->gen[c->n] = gen;
        if (mdp_pmap_put(&c->index, fn, gen, (void *)at) == 0)
            c->n++;
        else
            at = 0;
    }
    pthread_mutex_unlock(&c->lock);
    return at ? &c->table[(at - 1) * CALLS_STRIDE] : NULL;
}

uint64_t *mdp_calls_counter(mdp_core *core, uintptr_t fn)
{
    uint64_t *counter = counter_of(core, fn, 1);
    if (!counter && core->calls && fn) {
        pthread_mutex_lock(&core->drain_lock);
        core->stats.drops_other++;
        pthread_mutex_unlock(&core->drain_lock);
    }
    return counter;
}

void mdp_calls_count(mdp_core *core, uint64_t *counter, int what)
{
    struct mdp_calls *c = core->calls;
    if (!c)
        return;
    struct calls_thread *t = my_counts;
    if (!t || t->owner != c->id) {
        t = calloc(1, sizeof *t);
        if (t)
            t->counts =
                mmap(NULL, (size_t)CALLS_MAX * MDP_CALL_WORDS * sizeof(uint64_t),
                     PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (!t || t->counts == MAP_FAILED) {
            /* no array for this thread: count in the shared table */
            free(t);
            __atomic_fetch_add(&counter[what], 1, __ATOMIC_RELEASE);
            return;
        }
        t->owner = c->id;
        t->next = atomic_load(&all_threads);
        while (!atomic_compare_exchange_weak(&all_threads, &t->next, t))
            ;
        my_counts = t;
    }
    size_t i = (size_t)(counter - c->table) / CALLS_STRIDE * MDP_CALL_WORDS + (size_t)what;
    uint64_t v = __atomic_load_n(&t->counts[i], __ATOMIC_RELAXED);
    __atomic_store_n(&t->counts[i], v + 1, __ATOMIC_RELEASE);
}

void mdp_calls_exception(mdp_core *core, uintptr_t fn, int what)
{
    /* no new counter: a function that was not hooked has no enters to set
     * exits against */
    uint64_t *counter = counter_of(core, fn, 0);
    if (counter)
        __atomic_fetch_add(&counter[what], 1, __ATOMIC_RELEASE);
}

/* What function i's word `what` holds in all, the shared word and every
 * thread's. */
static uint64_t total(struct mdp_calls *c, size_t i, int what)
{
    uint64_t n = __atomic_load_n(&c->table[i * CALLS_STRIDE + (size_t)what], __ATOMIC_ACQUIRE);
    for (struct calls_thread *t = atomic_load(&all_threads); t; t = t->next)
        if (t->owner == c->id)
            n += __atomic_load_n(&t->counts[i * MDP_CALL_WORDS + (size_t)what], __ATOMIC_ACQUIRE);
    return n;
}

void mdp_calls_flush(mdp_core *core)
{
    struct mdp_calls *c = core->calls;
    if (!c)
        return;
    pthread_mutex_lock(&c->lock);
    size_t n = c->n;
    pthread_mutex_unlock(&c->lock);
    for (size_t i = 0; i < n; i++) {
        /* exits first (a thread counts the enter of a call before its
         * exit), catches before unwinds (the unwind pass reaches a frame
         * before its catch clause runs) */
        uint64_t now[MDP_CALL_WORDS], add[MDP_CALL_WORDS], any = 0;
        for (int w = MDP_CALL_WORDS - 1; w >= 0; w--)
            now[w] = total(c, i, w);
        for (int w = 0; w < MDP_CALL_WORDS; w++) {
            uint64_t *was = &c->flushed[i * MDP_CALL_WORDS + (size_t)w];
            add[w] = now[w] > *was ? now[w] - *was : 0;
            *was += add[w];
            any |= add[w];
        }
        if (!any)
            continue;
        const struct mdp_frame *f = mdp_frame_get(core, c->fn[i], c->gen[i]);
        int kind = f ? f->kind : FK_UNMAPPED;
        const char *text = f ? f->text : mdp_frame_kind_text[FK_UNMAPPED];
        core->stats.kind[kind] += add[MDP_CALL_ENTER];
        core->stats.frames += add[MDP_CALL_ENTER];
        struct mdp_record *r =
            mdp_record_add(core, MDP_REC_CALL, text, strlen(text), add[MDP_CALL_ENTER], 0,
                           core->cfg.debug_names ? (f && f->debug ? f->debug : text) : NULL);
        if (r) {
            r->exits[0] += add[MDP_CALL_LEAVE];
            r->exits[1] += add[MDP_CALL_TAILCALL];
            r->exits[2] += add[MDP_CALL_UNWIND];
            r->caught += add[MDP_CALL_CATCH];
        }
    }
}

void mdp_calls_free(mdp_core *core)
{
    struct mdp_calls *c = core->calls;
    if (!c)
        return;
    /* The table and the per-thread arrays stay mapped: a fast hook compiled
     * into code that still runs may increment them until the process ends
     * (a slow one finds no core->calls and counts nothing). The rest only
     * the core's own calls use. */
    core->calls = NULL;
    mdp_pmap_free(&c->index);
    pthread_mutex_destroy(&c->lock);
    free(c->fn);
    free(c->gen);
    free(c->flushed);
    free(c);
}
