/* What the runtime is doing on a thread when the thread is sampled: a GC,
 * JIT compilation, a type load, exception dispatch (native.h). CoreCLR's
 * own libraries ship stripped, so a native frame's offset alone does not
 * say which; the adapter's callbacks do (JITCompilationStarted/Finished,
 * ClassLoadStarted/Finished, GarbageCollectionStarted/Finished,
 * ExceptionThrown/ExceptionCatcherEnter), and they run on the thread
 * concerned (a GC's on the thread that does it).
 *
 * Each thread's sampler slot holds the state: a stack of nested
 * activities, four bits a level, in one word the thread alone writes, a
 * GC flag (set by GarbageCollectionStarted on the thread that collects,
 * cleared by GarbageCollectionFinished, which may come on another thread),
 * an exception flag, and the thread's role (the runtime's GC worker
 * threads, by name, drain.c's housekeeping). The signal handler reads
 * these words (plain atomic loads: no lock, no thread-local storage) and
 * puts the activity into the sample's header; the drain thread then marks
 * the sample's native frames on the leaf side with it (drain.c).
 *
 * A callback finds its thread's slot through a thread-local cache checked
 * against the slot's thread ID; a thread without a slot is remembered as
 * such until the sampler registers another thread. */
#define _GNU_SOURCE
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/base.h"
#include "core/native.h"
#include "core/sampler.h"

const char *const mdp_activity_text[MDP_ACT_COUNT] = {
    [MDP_ACT_NONE] = "",
    [MDP_ACT_GC] = "gc",
    [MDP_ACT_JIT] = "jit",
    [MDP_ACT_TYPELOAD] = "type-load",
    [MDP_ACT_EXCEPTION] = "exception",
    [MDP_ACT_STUB] = "stub",
};

unsigned mdp_slot_activity(const struct mdp_slot *t)
{
    uint32_t st = atomic_load_explicit(&t->act_stack, memory_order_relaxed);
    if (st & 15u)
        return st & 15u;
    if (atomic_load_explicit(&t->act_gc, memory_order_relaxed))
        return MDP_ACT_GC;
    if (atomic_load_explicit(&t->act_exc, memory_order_relaxed))
        return MDP_ACT_EXCEPTION;
    return atomic_load_explicit(&t->act_role, memory_order_relaxed);
}

unsigned mdp_thread_role(const char *comm)
{
    /* CoreCLR names its GC threads (gcenv.unix.cpp, gc.cpp): the server
     * GC's workers ".NET Server GC", the background GC's ".NET BGC" */
    if (!strncmp(comm, ".NET Server GC", 14) || !strncmp(comm, ".NET BGC", 8))
        return MDP_ACT_GC;
    return MDP_ACT_NONE;
}

static __thread struct {
    uint64_t core; /* the core's serial (a later core may reuse its address: attach) */
    struct mdp_slot *slot;
    uint64_t seen; /* threads_seen when no slot was found */
    int tid;
} self;

static _Atomic uint64_t serials;

static uint64_t serial_of(mdp_core *core)
{
    uint64_t s = atomic_load_explicit(&core->act_serial, memory_order_acquire), zero = 0;
    if (s)
        return s;
    s = atomic_fetch_add(&serials, 1) + 1;
    return atomic_compare_exchange_strong(&core->act_serial, &zero, s) ? s : zero;
}

struct mdp_slot *mdp_self_slot(mdp_core *core)
{
    if (!core->slots)
        return NULL;
    if (!self.tid)
        self.tid = (int)syscall(SYS_gettid);
    uint64_t seen = atomic_load_explicit(&core->threads_seen, memory_order_acquire);
    uint64_t serial = serial_of(core);
    if (self.core == serial) {
        struct mdp_slot *t = self.slot;
        if (t && atomic_load_explicit(&t->state, memory_order_relaxed) == SLOT_ACTIVE &&
            atomic_load_explicit(&t->tid, memory_order_relaxed) == self.tid)
            return t;
        if (!t && self.seen == seen)
            return NULL;
    }
    self.core = serial;
    self.slot = NULL;
    self.seen = seen;
    for (unsigned i = 0, used = mdp_slots_used(); i < used; i++) {
        struct mdp_slot *t = &core->slots[i];
        if (atomic_load_explicit(&t->state, memory_order_acquire) == SLOT_ACTIVE &&
            atomic_load_explicit(&t->tid, memory_order_relaxed) == self.tid) {
            self.slot = t;
            break;
        }
    }
    return self.slot;
}

static void push(struct mdp_slot *t, unsigned act)
{
    if (t->act_depth++ < MDP_ACT_DEPTH) {
        uint32_t st = atomic_load_explicit(&t->act_stack, memory_order_relaxed);
        atomic_store_explicit(&t->act_stack, st << 4 | act, memory_order_relaxed);
    }
}

static void pop(struct mdp_slot *t)
{
    if (!t->act_depth)
        return; /* an end without its begin (attached in between) */
    if (t->act_depth-- <= MDP_ACT_DEPTH) {
        uint32_t st = atomic_load_explicit(&t->act_stack, memory_order_relaxed);
        atomic_store_explicit(&t->act_stack, st >> 4, memory_order_relaxed);
    }
}

void mdp_ev_activity(mdp_core *core, unsigned act, int begin)
{
    if (!core->cfg.activities)
        return;
    if (act == MDP_ACT_GC) {
        /* Started on the thread that collects; Finished may come on
         * another: the collecting slots are remembered (a background GC
         * and a foreground one may overlap), under a lock (callbacks only) */
        pthread_mutex_lock(&core->threads_lock);
        if (begin) {
            struct mdp_slot *t = mdp_self_slot(core);
            if (t && core->ngc_slots < MDP_GC_SLOTS) {
                atomic_fetch_add_explicit(&t->act_gc, 1, memory_order_relaxed);
                core->gc_slots[core->ngc_slots++] = t;
            }
        } else if (core->ngc_slots) {
            /* NULL: the slot went to another thread meanwhile (sampler.c) */
            struct mdp_slot *t = core->gc_slots[--core->ngc_slots];
            if (t && atomic_load_explicit(&t->act_gc, memory_order_relaxed))
                atomic_fetch_sub_explicit(&t->act_gc, 1, memory_order_relaxed);
        }
        pthread_mutex_unlock(&core->threads_lock);
        return;
    }
    struct mdp_slot *t = mdp_self_slot(core);
    if (!t)
        return;
    if (act == MDP_ACT_EXCEPTION)
        atomic_store_explicit(&t->act_exc, begin ? 1 : 0, memory_order_relaxed);
    else if (begin)
        push(t, act);
    else
        pop(t);
}

void mdp_native_stats(uint64_t native_module, const uint64_t act[16], char *buf, size_t cap)
{
    /* samples by what their leaf-side native frames were marked with */
    size_t n = 0;
    if (!cap)
        return;
    buf[0] = 0;
    int k = snprintf(buf, cap, " native.module=%" PRIu64, native_module);
    for (unsigned a = 1; a < MDP_ACT_COUNT && k > 0 && (n += (size_t)k) < cap; a++)
        k = snprintf(buf + n, cap - n, " act.%s=%" PRIu64, mdp_activity_text[a], act[a]);
}
