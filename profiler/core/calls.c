/* calls mode: how many times each function was entered.
 *
 * Each function gets a counter when the runtime first asks whether to hook
 * it (the adapter's FunctionIDMapper2): a cache line of its own in one
 * preallocated table, whose address is what the runtime then hands the
 * enter hook. The fast hook (assembly, coreclr/elt.c) increments that word
 * atomically and returns; the slow one (a C function behind the runtime's
 * register-saving stub) adds to the calling thread's own array at the
 * counter's index, no atomic operation. The drain thread never touches the
 * counters; mdp_calls_flush turns what they gained since the last flush
 * into `call` records, before every unload (the function's frame is named
 * while its code is still known) and at the end. */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core/core_int.h"

#define CALLS_MAX (1u << 20)  /* counters (functions hooked) */
#define CALLS_STRIDE 8u       /* words per counter: one cache line each */

struct calls_thread {
    uint64_t *counts; /* CALLS_MAX words, mapped without reserve, touched lazily */
    struct calls_thread *next;
};

struct mdp_calls {
    uint64_t *table;  /* CALLS_MAX * CALLS_STRIDE words */
    pthread_mutex_t lock;
    mdp_pmap index;   /* FunctionID -> counter index + 1 */
    uintptr_t *fn;    /* per index: the function and its incarnation */
    uint64_t *gen;
    uint64_t *flushed; /* per index: what earlier flushes recorded */
    size_t n;
    struct calls_thread *_Atomic threads;
};

static __thread struct calls_thread *my_counts;

int mdp_calls_init(mdp_core *core)
{
    struct mdp_calls *c = calloc(1, sizeof *c);
    if (!c)
        return -1;
    size_t bytes = (size_t)CALLS_MAX * CALLS_STRIDE * sizeof(uint64_t);
    c->table = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                    -1, 0);
    c->fn = calloc(CALLS_MAX, sizeof *c->fn);
    c->gen = calloc(CALLS_MAX, sizeof *c->gen);
    c->flushed = calloc(CALLS_MAX, sizeof *c->flushed);
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
    core->calls = c;
    return 0;
}

uint64_t *mdp_calls_counter(mdp_core *core, uintptr_t fn)
{
    struct mdp_calls *c = core->calls;
    if (!c || !fn)
        return NULL;
    mdt_idmap_function_info fi;
    uint64_t gen = mdt_idmap_function_lookup(&fi, NULL, 0, core->map, fn, 0) == 0 ? fi.gen : 0;
    pthread_mutex_lock(&c->lock);
    uintptr_t at = (uintptr_t)mdp_pmap_get(&c->index, fn, gen);
    if (!at && c->n < CALLS_MAX) {
        at = c->n + 1;
        c->fn[c->n] = fn;
        c->gen[c->n] = gen;
        if (mdp_pmap_put(&c->index, fn, gen, (void *)at) == 0)
            c->n++;
        else
            at = 0;
    }
    pthread_mutex_unlock(&c->lock);
    if (!at) {
        pthread_mutex_lock(&core->drain_lock);
        core->stat_drops_other++;
        pthread_mutex_unlock(&core->drain_lock);
        return NULL;
    }
    return &c->table[(at - 1) * CALLS_STRIDE];
}

void mdp_calls_enter(mdp_core *core, uint64_t *counter)
{
    struct mdp_calls *c = core->calls;
    struct calls_thread *t = my_counts;
    if (!t) {
        t = calloc(1, sizeof *t);
        if (t)
            t->counts = mmap(NULL, (size_t)CALLS_MAX * sizeof(uint64_t), PROT_READ | PROT_WRITE,
                             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (!t || t->counts == MAP_FAILED) {
            /* no array for this thread: count in the shared table */
            free(t);
            __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
            return;
        }
        t->next = atomic_load(&c->threads);
        while (!atomic_compare_exchange_weak(&c->threads, &t->next, t))
            ;
        my_counts = t;
    }
    size_t i = (size_t)(counter - c->table) / CALLS_STRIDE;
    uint64_t v = __atomic_load_n(&t->counts[i], __ATOMIC_RELAXED);
    __atomic_store_n(&t->counts[i], v + 1, __ATOMIC_RELAXED);
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
        uint64_t total = __atomic_load_n(&c->table[i * CALLS_STRIDE], __ATOMIC_RELAXED);
        for (struct calls_thread *t = atomic_load(&c->threads); t; t = t->next)
            total += __atomic_load_n(&t->counts[i], __ATOMIC_RELAXED);
        if (total <= c->flushed[i])
            continue;
        uint64_t add = total - c->flushed[i];
        c->flushed[i] = total;
        const struct mdp_frame *f = mdp_frame_get(core, c->fn[i], c->gen[i]);
        int kind = f ? f->kind : FK_UNMAPPED;
        const char *text = f ? f->text : mdp_frame_kind_text[FK_UNMAPPED];
        core->stat_kind[kind] += add;
        core->stat_frames += add;
        mdp_record_add(core, text, strlen(text), add, 0,
                       core->cfg.debug_names ? (f && f->debug ? f->debug : text) : NULL);
    }
}

void mdp_calls_free(mdp_core *core)
{
    struct mdp_calls *c = core->calls;
    if (!c)
        return;
    /* The table and the per-thread arrays stay mapped: a hook compiled into
     * code that still runs may increment them until the process ends. */
    mdp_pmap_free(&c->index);
    core->calls = NULL;
}
