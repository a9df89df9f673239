/* alloc mode: objects and bytes allocated per class.
 *
 * The runtime reports every allocation on the allocating thread
 * (ObjectAllocated). Each thread counts into its own table of
 * (ClassID, generation) -> (objects, bytes) under its own mutex, which only
 * the flush ever contends for; mdp_alloc_flush turns the counts into
 * `alloc` records keyed by the class's portable descriptor (arrays with
 * their element type, `T[]`, `T[N]`), before every unload (so a class of a
 * collectible assembly is named while it is known) and at the end. A class
 * the map has not seen yet (the runtime may report an object before its
 * class load) is counted under generation 0 and looked up at the flush.
 * With --alloc-sample, allocstack.c also samples allocations with their
 * stacks; its records are written by the same flush. */
#define _GNU_SOURCE
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <talloc.h>

#include <mdtools/names.h>

#include "core/base.h"
#include "core/naming.h"
#include "core/aggregate.h"
#include "core/modes.h"

struct alloc_count {
    uint64_t count, bytes;
};

struct alloc_thread {
    pthread_mutex_t lock;
    mdp_pmap classes; /* (ClassID, gen) -> struct alloc_count */
    struct alloc_thread *next;
};

struct mdp_alloc {
    struct alloc_thread *_Atomic threads;
    uint64_t callbacks; /* objects counted by the flushes (drain_lock) */
};

static __thread struct alloc_thread *my_table;

int mdp_alloc_init(mdp_core *core)
{
    core->alloc = calloc(1, sizeof *core->alloc);
    return core->alloc && mdp_alloc_stacks_init(core) == 0 ? 0 : -1;
}

void mdp_alloc_count(mdp_core *core, uintptr_t cls, uint64_t bytes)
{
    struct mdp_alloc *a = core->alloc;
    if (!a || !cls)
        return;
    struct alloc_thread *t = my_table;
    if (!t) {
        t = calloc(1, sizeof *t);
        if (!t)
            return;
        pthread_mutex_init(&t->lock, NULL);
        mdp_pmap_init(&t->classes);
        t->next = atomic_load(&a->threads);
        while (!atomic_compare_exchange_weak(&a->threads, &t->next, t))
            ;
        my_table = t;
    }
    mdt_idmap_class_info ci;
    uint64_t gen = mdt_idmap_class_lookup(&ci, NULL, 0, core->map, cls, 0) == 0 ? ci.gen : 0;
    pthread_mutex_lock(&t->lock);
    struct alloc_count *c = mdp_pmap_get(&t->classes, cls, gen);
    if (!c && (c = calloc(1, sizeof *c)) && mdp_pmap_put(&t->classes, cls, gen, c) != 0) {
        free(c);
        c = NULL;
    }
    if (c) {
        c->count++;
        c->bytes += bytes;
    }
    pthread_mutex_unlock(&t->lock);
}

struct flush_ctx {
    mdp_core *core;
};

const char *mdp_alloc_type_text(mdp_core *core, uintptr_t cls, uint64_t gen, char *desc, size_t len,
                                int *kind, char **debug)
{
    mdt_idmap_class_info ci;
    *kind = FK_MANAGED;
    if (gen && mdt_idmap_class_lookup(&ci, NULL, 0, core->map, cls, gen) != 0)
        *kind = FK_UNLOADED; /* gone before its counts were flushed */
    else if (mdp_class_desc(core, cls, desc, len) < 0)
        *kind = FK_NOMVID;
    const char *text = *kind == FK_MANAGED ? desc : mdp_frame_kind_text[*kind];
    if (debug) {
        char *name = NULL;
        void *tmp = talloc_new(NULL);
        *debug = NULL;
        if (*kind == FK_MANAGED && tmp &&
            mdt_idmap_class_name(tmp, &name, core->map, cls, 0, NULL) == 0)
            *debug = mdp_escape_name(name);
        talloc_free(tmp);
    }
    return text;
}

static void flush_one(void *payload, mdp_key key, void *val)
{
    mdp_core *core = ((struct flush_ctx *)payload)->core;
    struct alloc_count *c = val;
    if (!c->count)
        return;
    char desc[4096];
    int kind;
    char *debug = NULL;
    const char *text = mdp_alloc_type_text(core, (uintptr_t)key.a, key.b, desc, sizeof desc, &kind,
                                           core->cfg.debug_names ? &debug : NULL);
    core->stats.kind[kind] += c->count;
    core->alloc->callbacks += c->count;
    core->stats.frames += c->count;
    mdp_record_add(core, MDP_REC_ALLOC, text, strlen(text), c->count, c->bytes,
                   core->cfg.debug_names ? (debug ? debug : text) : NULL);
    free(debug);
    c->count = c->bytes = 0;
}

void mdp_alloc_flush(mdp_core *core)
{
    struct mdp_alloc *a = core->alloc;
    if (!a)
        return;
    struct flush_ctx fc = {core};
    for (struct alloc_thread *t = atomic_load(&a->threads); t; t = t->next) {
        /* Names are built outside the thread's lock: take its counts first. */
        pthread_mutex_lock(&t->lock);
        mdp_pmap moved = t->classes;
        mdp_pmap_init(&t->classes);
        pthread_mutex_unlock(&t->lock);
        mdp_pmap_each(&moved, flush_one, &fc);
        for (size_t i = 0; i < moved.cap; i++)
            free(moved.slots[i].val);
        mdp_pmap_free(&moved);
    }
    mdp_alloc_stacks_flush(core); /* allocstack.c: the sampled stacks */
}

uint64_t mdp_alloc_callbacks(mdp_core *core)
{
    return core->alloc ? core->alloc->callbacks : 0;
}

void mdp_alloc_free(mdp_core *core)
{
    /* Per-thread tables stay: a thread may still be inside mdp_alloc_count. */
    mdp_alloc_stacks_free(core);
    core->alloc = NULL;
}
