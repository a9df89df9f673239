/* Stack events: the exceptions mode's throws and the contention mode's
 * waits on a managed lock, each with the stack of the thread it happened
 * on, counted per (type, stack) or per stack (doc/profile-log.md, `throw`
 * and `wait` records).
 *
 * The adapter reports an event from the callback that runs on the thread
 * concerned (ExceptionThrown; the runtime's ContentionStop event), with
 * that thread's managed stack as the runtime walked it. The event's frames
 * are pinned there to (FunctionID, generation) with the map's IP lookup,
 * while the code is alive, and queued; the drain (mdp_drain_all, so also
 * before every unload) names them exactly as it names a sample's frames
 * (frames.c) and adds them to the records. Naming is the drain's job
 * because it may call back into the runtime (the map's misses) and takes
 * the drain lock, which a callback on an arbitrary thread must not wait
 * for while the drain may be waiting for it.
 *
 * The queue is bounded (MDP_EVENTS_MAX events): beyond, events are
 * counted as dropped (#stats `events.dropped=`), never blocking the
 * thread that threw; a queue past a quarter of that wakes the drain. */
#define _GNU_SOURCE
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <talloc.h>
#include <unistd.h>

#include <mdtools/names.h>

#include "core/base.h"
#include "core/growbuf.h"
#include "core/native.h"
#include "core/sampler.h"
#include "core/naming.h"
#include "core/aggregate.h"
#include "core/modes.h"

#define MDP_EVENTS_MAX 65536u

struct ev_frame {
    uintptr_t ip, fn;
    uint64_t gen;
};

struct ev {
    struct ev *next;
    int kind; /* enum mdp_event_kind */
    int tid;
    uint64_t ms;   /* since the core started */
    uintptr_t cls; /* throws: the exception's class */
    uint64_t cls_gen;
    uint64_t value; /* waits: nanoseconds */
    unsigned n, cut;
    struct ev_frame f[];
};

struct mdp_events {
    pthread_mutex_t lock;
    struct ev *head, **tail;
    unsigned n;
    uint64_t dropped, counted[2];
};

static __thread int my_tid;

int mdp_events_init(mdp_core *core)
{
    struct mdp_events *e = calloc(1, sizeof *e);
    if (!e)
        return -1;
    pthread_mutex_init(&e->lock, NULL);
    e->tail = &e->head;
    core->events = e;
    return 0;
}

void mdp_ev_stack_event(mdp_core *core, int kind, uintptr_t cls, uint64_t value,
                        const uintptr_t *ips, unsigned n, int cut)
{
    struct mdp_events *e = core->events;
    if (!e || atomic_load(&core->finished) || (kind != MDP_EVENT_THROW && kind != MDP_EVENT_WAIT))
        return;
    if (n > core->cfg.max_depth) {
        n = core->cfg.max_depth;
        cut = 1;
    }
    struct ev *v = malloc(sizeof *v + (n ? n : 1) * sizeof v->f[0]);
    if (!v) {
        pthread_mutex_lock(&e->lock);
        e->dropped++;
        pthread_mutex_unlock(&e->lock);
        return;
    }
    if (!my_tid)
        my_tid = (int)syscall(SYS_gettid);
    mdp_thread_event_seen(core, my_tid); /* its #thread line, before the record */
    v->next = NULL;
    v->kind = kind;
    v->tid = my_tid;
    v->ms = mdp_elapsed_ms(core);
    v->cls = cls;
    v->cls_gen = 0;
    v->value = value;
    v->n = n;
    v->cut = cut != 0;
    mdt_idmap_class_info ci;
    if (cls && mdt_idmap_class_lookup(&ci, NULL, 0, core->map, cls, 0) == 0)
        v->cls_gen = ci.gen;
    for (unsigned i = 0; i < n; i++) {
        /* the code is alive now: pin the incarnation (a frame the map does
         * not know yet is classified by the drain, as a sample's is) */
        mdt_idmap_code_range r;
        v->f[i].ip = ips[i];
        v->f[i].fn = 0;
        v->f[i].gen = 0;
        if (mdt_idmap_ip_lookup(&r, core->map, ips[i]) == 0) {
            v->f[i].fn = r.function_id;
            v->f[i].gen = r.function_gen;
        }
    }
    pthread_mutex_lock(&e->lock);
    int full = e->n >= MDP_EVENTS_MAX, soon = e->n >= MDP_EVENTS_MAX / 4;
    if (full) {
        e->dropped++;
    } else {
        *e->tail = v;
        e->tail = &v->next;
        e->n++;
    }
    pthread_mutex_unlock(&e->lock);
    if (full)
        free(v);
    else if (soon)
        mdp_drain_poke(core);
}

/* The exception's class as a descriptor (and its in-process name), or the
 * special word of what it could not be. */
static void type_text(mdp_core *core, const struct ev *v, struct mdp_growbuf *key,
                      struct mdp_growbuf *dbg)
{
    char desc[4096];
    int kind = FK_MANAGED;
    mdt_idmap_class_info ci;
    if (!v->cls)
        kind = FK_UNMAPPED;
    else if (v->cls_gen && mdt_idmap_class_lookup(&ci, NULL, 0, core->map, v->cls, v->cls_gen) != 0)
        kind = FK_UNLOADED; /* gone before the drain named it */
    else if (mdp_class_desc(core, v->cls, desc, sizeof desc) < 0)
        kind = FK_NOMVID;
    const char *text = kind == FK_MANAGED ? desc : mdp_frame_kind_text[kind];
    mdp_growbuf_puts(key, text);
    if (core->cfg.debug_names) {
        char *name = NULL, *esc = NULL;
        void *tmp = talloc_new(NULL);
        if (kind == FK_MANAGED && tmp &&
            mdt_idmap_class_name(tmp, &name, core->map, v->cls, 0, NULL) == 0)
            esc = mdp_escape_name(name);
        mdp_growbuf_puts(dbg, esc ? esc : text);
        free(esc);
        talloc_free(tmp);
    }
}

static void name_event(mdp_core *core, struct ev *v, struct mdp_growbuf *key,
                       struct mdp_growbuf *dbg)
{
    char head[64];
    snprintf(head, sizeof head, "%d %" PRIu64 " ", v->tid, v->ms / core->cfg.slice_ms);
    mdp_growbuf_puts(key, head);
    int sep = 0;
    if (v->kind == MDP_EVENT_THROW) {
        type_text(core, v, key, dbg);
        sep = 1;
    }
    for (unsigned i = 0; i < v->n; i++) {
        struct ev_frame *f = &v->f[i];
        char elf[256], il[24] = "";
        size_t elf_len = 0;
        int kind = FK_MANAGED;
        const char *text, *debug;
        if (!f->fn) {
            if ((elf_len = mdp_elf_frame(core, f->ip, elf, sizeof elf)))
                kind = FK_NATIVE;
            else
                kind = mdp_frame_classify_ip(core, f->ip, &f->fn, &f->gen);
        }
        if (kind == FK_MANAGED) {
            const struct mdp_frame *fr = mdp_frame_get(core, f->fn, f->gen);
            if (!fr) {
                kind = FK_UNMAPPED;
                text = debug = mdp_frame_kind_text[kind];
            } else {
                kind = fr->kind;
                text = fr->text;
                debug = fr->debug ? fr->debug : text;
                if (kind == FK_MANAGED)
                    mdp_frame_il(core, f->ip, f->fn, f->gen, il, sizeof il);
            }
        } else if (elf_len) {
            text = debug = elf;
        } else {
            text = debug = mdp_frame_kind_text[kind];
        }
        core->stats.kind[kind]++;
        core->stats.frames++;
        if (sep++)
            mdp_growbuf_put(key, " ", 1);
        mdp_growbuf_put(key, text, elf_len ? elf_len : strlen(text));
        mdp_growbuf_puts(key, il);
        if (core->cfg.debug_names) {
            if (dbg->len)
                mdp_growbuf_put(dbg, "\t", 1);
            mdp_growbuf_puts(dbg, debug);
        }
    }
    if (v->cut) {
        mdp_growbuf_puts(key, sep ? " truncated" : "truncated");
        if (core->cfg.debug_names)
            mdp_growbuf_puts(dbg, dbg->len ? "\ttruncated" : "truncated");
        core->stats.cut++;
    }
    if (!sep && !v->cut)
        mdp_growbuf_puts(key, "unknown:unmapped"); /* no frame at all: never an empty record */
}

void mdp_events_drain(mdp_core *core)
{
    struct mdp_events *e = core->events;
    if (!e)
        return;
    pthread_mutex_lock(&e->lock);
    struct ev *list = e->head;
    e->head = NULL;
    e->tail = &e->head;
    e->n = 0;
    pthread_mutex_unlock(&e->lock);
    struct mdp_growbuf key = {0}, dbg = {0};
    while (list) {
        struct ev *v = list;
        list = v->next;
        mdp_growbuf_reset(&key);
        mdp_growbuf_reset(&dbg);
        mdp_growbuf_put(&key, "", 0);
        mdp_growbuf_put(&dbg, "", 0);
        name_event(core, v, &key, &dbg);
        if (!key.bad && !dbg.bad)
            mdp_record_add(core, v->kind == MDP_EVENT_THROW ? MDP_REC_THROW : MDP_REC_WAIT, key.s,
                           key.len, 1, v->kind == MDP_EVENT_WAIT ? v->value : 0,
                           core->cfg.debug_names ? dbg.s : NULL);
        e->counted[v->kind]++;
        free(v);
    }
    free(key.s);
    free(dbg.s);
}

void mdp_events_stats(const mdp_core *core, char *buf, size_t cap)
{
    const struct mdp_events *e = core->events;
    if (!cap)
        return;
    buf[0] = 0;
    if (!e)
        return;
    snprintf(buf, cap, " throws=%" PRIu64 " waits=%" PRIu64 " events.dropped=%" PRIu64,
             e->counted[MDP_EVENT_THROW], e->counted[MDP_EVENT_WAIT], e->dropped);
}

void mdp_events_free(mdp_core *core)
{
    struct mdp_events *e = core->events;
    if (!e)
        return;
    core->events = NULL;
    for (struct ev *v = e->head, *next; v; v = next) {
        next = v->next;
        free(v);
    }
    pthread_mutex_destroy(&e->lock);
    free(e);
}
