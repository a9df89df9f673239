/* The sampler's thread slots: a thread's registration (its slot, its ring,
 * its stack's bounds, its CPU-time timer), its end, the drain thread's
 * housekeeping of ended threads, and the end of sampling. The handler
 * that fills the slots' rings is sampler.c's.
 *
 * A slot goes FREE -> ACTIVE (a thread registered: mdp_ev_thread_start,
 * or the drain thread's scan of threads the runtime did not report,
 * threads.c) -> RETIRED (its thread ended, or sampling stopped: its timer
 * is deleted, its perf fd closed) -> FREE again once its ring is drained and no handler is
 * inside it (housekeeping, two passes later). Slots are never unmapped
 * while the process lives: a late signal may still name one, and an
 * attach after a detach takes them over. Every scan stops at the highest
 * slot ever taken (mdp_slots_used). threads_lock serializes all of it;
 * the handler takes no lock, and reads a slot's state, TID and stack
 * bounds with atomics. */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/base.h"
#include "core/native.h"
#include "core/sampler.h"

static _Atomic unsigned slots_used; /* mdp_slots_used(): only grows */

unsigned mdp_slots_used(void)
{
    return atomic_load_explicit(&slots_used, memory_order_acquire);
}

void mdp_slots_take(unsigned n)
{
    unsigned cur = atomic_load(&slots_used);
    if (n > MDP_MAX_THREADS)
        n = MDP_MAX_THREADS;
    while (cur < n && !atomic_compare_exchange_weak_explicit(
                          &slots_used, &cur, n, memory_order_release, memory_order_relaxed))
        ;
}

void mdp_slot_wcache_reset(struct mdp_slot *t)
{
    size_t bytes = sizeof *t->wcache;
    if (!t->wcache) {
        void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        t->wcache = p == MAP_FAILED ? NULL : p; /* fresh pages are zero: empty */
        return;
    }
    memset(t->wcache, 0, bytes);
}

static void stack_bounds_of_self(uintptr_t *lo, uintptr_t *hi)
{
    pthread_attr_t a;
    void *addr;
    size_t size;
    *lo = *hi = 0;
    if (pthread_getattr_np(pthread_self(), &a) != 0)
        return;
    if (pthread_attr_getstack(&a, &addr, &size) == 0) {
        *lo = (uintptr_t)addr;
        *hi = (uintptr_t)addr + size;
    }
    pthread_attr_destroy(&a);
}

int mdp_ev_thread_start(mdp_core *core, uintptr_t runtime_thread, int tid)
{
    uintptr_t lo = 0, hi = 0;
    if (!core->sampling) {
        /* no sampler: what names the event records' threads */
        mdp_thread_ev_started(core, runtime_thread, tid);
        return 0;
    }
    if ((int)syscall(SYS_gettid) == tid)
        stack_bounds_of_self(&lo, &hi);
    return mdp_sampler_thread_start(core, runtime_thread, tid, lo, hi, 0);
}

int mdp_sampler_thread_start(mdp_core *core, uintptr_t runtime_thread, int tid, uintptr_t lo,
                             uintptr_t hi, unsigned role)
{
    if (!core->sampling || tid <= 0 || atomic_load(&core->finished))
        return 0;
    pthread_mutex_lock(&core->threads_lock);
    if (!core->sampling) {
        /* mdp_sampler_stop came in between (the drain thread's scan of the
         * threads, or a thread starting, while another finishes the core):
         * no timer may outlive it */
        pthread_mutex_unlock(&core->threads_lock);
        return 0;
    }
    struct mdp_slot *free_slot = NULL;
    unsigned used = mdp_slots_used(); /* only threads_lock's holders raise it */
    for (unsigned i = 0; i < used; i++) {
        struct mdp_slot *t = &core->slots[i];
        int st = atomic_load(&t->state);
        if (st == SLOT_ACTIVE && atomic_load(&t->tid) == tid) {
            /* known already (startup thread, or an earlier event) */
            if (runtime_thread && t->runtime_thread != runtime_thread) {
                t->runtime_thread = runtime_thread;
                mdp_thread_named_start(core, t); /* its name is the runtime thread's */
            }
            if (lo && !atomic_load(&t->stack_lo)) {
                atomic_store(&t->stack_hi, hi);
                atomic_store(&t->stack_lo, lo);
            }
            pthread_mutex_unlock(&core->threads_lock);
            return 0;
        }
        if (st == SLOT_FREE && !free_slot)
            free_slot = t;
    }
    if (!free_slot && used < MDP_MAX_THREADS) {
        free_slot = &core->slots[used]; /* never taken: FREE, no ring yet */
        mdp_slots_take(used + 1);       /* a max: never lowers what a test took */
    }
    struct mdp_slot *t = free_slot;
    if (!t) {
        pthread_mutex_unlock(&core->threads_lock);
        mdp_log(core, "thread %d: no free sampler slot", tid);
        return -1;
    }
    if (!t->ringbuf) {
        t->ringbuf = mmap(NULL, MDP_RING_WORDS * sizeof(uint64_t), PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (t->ringbuf == MAP_FAILED) {
            t->ringbuf = NULL;
            pthread_mutex_unlock(&core->threads_lock);
            return -1;
        }
    }
    mdp_ring_init(&t->ring, t->ringbuf, MDP_RING_WORDS);
    mdp_slot_wcache_reset(t);
    atomic_store(&t->samples, 0);
    atomic_store(&t->drops, 0);
    atomic_store(&t->stray, 0);
    atomic_store(&t->stack_lo, lo);
    atomic_store(&t->stack_hi, hi);
    atomic_store(&t->tid, tid);
    t->runtime_thread = runtime_thread;
    mdp_thread_named_start(core, t); /* threadnames.c */
    t->retired_cycles = 0;
    /* a fresh activity state (activity.c): no GC of a former thread ends in it */
    atomic_store(&t->act_stack, 0);
    t->act_depth = 0;
    atomic_store(&t->act_gc, 0);
    atomic_store(&t->act_exc, 0);
    atomic_store(&t->act_role, role);
    for (unsigned i = 0; i < core->ngc_slots; i++)
        if (core->gc_slots[i] == t)
            core->gc_slots[i] = NULL;
    atomic_store(&t->wall_seen, mdp_wall_now(core)); /* wall mode: owed from now on */
    atomic_store(&t->state, SLOT_ACTIVE);
    if (mdp_wall_mode(core)) {
        /* no timer: the wall thread signals the active slots (wall.c) */
        atomic_fetch_add(&core->threads_seen, 1);
        pthread_mutex_unlock(&core->threads_lock);
        mdp_log(core, "thread %d sampled in wall time (stack %s)", tid,
                lo ? "known" : "to be found");
        return 0;
    }

    /* the perf_events clock where it is chosen and under its cap on fds
     * (perfclock.c), else the CPU-time timer */
    int perf = mdp_perf_start(core, t, tid, 0), timer_errno = 0;
    t->has_timer = 0;
    if (perf != 0) {
        struct sigevent sev;
        memset(&sev, 0, sizeof sev);
        sev.sigev_notify = SIGEV_THREAD_ID;
        sev.sigev_signo = SIGPROF;
        sev.sigev_value.sival_ptr = t;
        sev._sigev_un._tid = tid;
        if (timer_create(mdp_thread_cpu_clock(tid), &sev, &t->timer) == 0) {
            long period = 1000000000L / (long)core->cfg.rate;
            struct itimerspec its = {{period / 1000000000L, period % 1000000000L},
                                     {period / 1000000000L, period % 1000000000L}};
            if (timer_settime(t->timer, 0, &its, NULL) == 0)
                t->has_timer = 1;
            else
                timer_delete(t->timer);
        }
        timer_errno = errno;
    }
    int clocked = perf == 0 || t->has_timer;
    if (clocked)
        atomic_fetch_add(perf == 0 ? &core->perf_threads : &core->timer_threads, 1);
    atomic_fetch_add(&core->threads_seen, 1);
    pthread_mutex_unlock(&core->threads_lock);
    if (perf == -2)
        mdp_note(core,
                 "sampling: the perf_events CPU clock's cap on fds (%u, from RLIMIT_NOFILE) is "
                 "reached; further threads get the CPU-time timer (~HZ signals per CPU second, "
                 "each sample weighing the periods it stands for)",
                 core->perf_cap);
    if (!clocked)
        mdp_log(core, "thread %d: no CPU-time timer: %s", tid, strerror(timer_errno));
    else
        mdp_log(core, "thread %d sampled (%s, stack %s)", tid, perf == 0 ? "perf" : "timer",
                lo ? "known" : "to be found");
    return clocked ? 0 : -1;
}

static void retire(mdp_core *core, struct mdp_slot *t)
{
    mdp_perf_stop(core, t); /* its fd closed (perfclock.c) */
    if (t->has_timer) {
        timer_delete(t->timer);
        t->has_timer = 0;
    }
    t->retired_cycles = 0;
    atomic_store(&t->state, SLOT_RETIRED);
}

int mdp_ev_thread_end(mdp_core *core, uintptr_t runtime_thread)
{
    if (!runtime_thread)
        return 0;
    if (!core->sampling) {
        mdp_thread_ev_ended(core, runtime_thread);
        return 0;
    }
    pthread_mutex_lock(&core->threads_lock);
    for (unsigned i = 0, used = mdp_slots_used(); i < used; i++) {
        struct mdp_slot *t = &core->slots[i];
        if (atomic_load(&t->state) == SLOT_ACTIVE && t->runtime_thread == runtime_thread)
            retire(core, t);
    }
    mdp_thread_named_end(core, runtime_thread);
    pthread_mutex_unlock(&core->threads_lock);
    return 0;
}

/* Drain-thread housekeeping (drain_lock held): free retired slots whose
 * rings are empty and that no handler is inside; every ~second, retire
 * slots whose thread is gone without an event. */
void mdp_sampler_housekeeping(mdp_core *core, int check_alive)
{
    if (!core->slots)
        return;
    pthread_mutex_lock(&core->threads_lock);
    for (unsigned i = 0, used = mdp_slots_used(); i < used; i++) {
        struct mdp_slot *t = &core->slots[i];
        int st = atomic_load(&t->state);
        if (st == SLOT_ACTIVE && check_alive) {
            char path[64];
            snprintf(path, sizeof path, "/proc/self/task/%d", atomic_load(&t->tid));
            if (access(path, F_OK) != 0)
                retire(core, t);
        } else if (st == SLOT_RETIRED && mdp_ring_avail(&t->ring) == 0 &&
                   atomic_load(&t->busy) == 0 && ++t->retired_cycles >= 2) {
            atomic_store(&t->state, SLOT_FREE);
        }
    }
    double moved = 0;
    if (check_alive && !mdp_wall_mode(core))
        moved = mdp_perf_move_sparse(core); /* once a second: threads the timer serves badly */
    pthread_mutex_unlock(&core->threads_lock);
    mdp_perf_move_note(core, moved); /* after the lock, as every note here */
}

int mdp_sampler_quiesce(mdp_core *core)
{
    if (!core->slots)
        return 0;
    int r = 0;
    for (unsigned i = 0, used = mdp_slots_used(); i < used; i++) {
        int spins = 0;
        while (atomic_load(&core->slots[i].busy) && spins < 100000) {
            sched_yield();
            spins++;
        }
        if (spins == 100000)
            r = -1;
    }
    return r;
}

void mdp_sampler_stop(mdp_core *core)
{
    if (!core->slots)
        return;
    pthread_mutex_lock(&core->threads_lock);
    for (unsigned i = 0, used = mdp_slots_used(); i < used; i++)
        if (atomic_load(&core->slots[i].state) == SLOT_ACTIVE)
            retire(core, &core->slots[i]);
    core->sampling = 0;
    pthread_mutex_unlock(&core->threads_lock);
}

void mdp_sampler_free(mdp_core *core)
{
    /* The handler stays installed and the slots stay mapped: a signal queued
     * before the timers were deleted may still arrive, and must find memory
     * that says "not active". The next core (an attach after a detach)
     * takes the slots over, free, with their rings. */
    mdp_core *me = core;
    if (!core->slots || !atomic_compare_exchange_strong(&mdp_sampling_core, &me, NULL))
        return;
    if (mdp_sampler_quiesce(core) != 0)
        return; /* a handler stayed inside: leave the slots as they are */
    pthread_mutex_lock(&core->threads_lock);
    for (unsigned i = 0, used = mdp_slots_used(); i < used; i++) {
        struct mdp_slot *t = &core->slots[i];
        if (atomic_load(&t->state) == SLOT_ACTIVE)
            retire(core, t);
        atomic_store(&t->state, SLOT_FREE);
        atomic_store(&t->drops, 0);
    }
    pthread_mutex_unlock(&core->threads_lock);
}
