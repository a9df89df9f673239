/* heap mode on CoreCLR: after each gen2 GC, the objects on the GC heap
 * counted per class (core/heap.c writes them as `heap` records).
 *
 * Which API: the runtime offers three ways to see every object. The GC's
 * own heap walk (COR_PRF_MONITOR_GC: ObjectReferences for every live
 * object after every GC, gen0 and gen1 too) walks the whole heap after
 * each of them and turns concurrent GC off, whether the profiler wants
 * that GC or not; SurvivingReferences and MovedReferences give address
 * ranges, not objects, and only with that same flag. .NET 10's
 * ICorProfilerInfo15::EnumerateGCHeapObjects walks the heap once when
 * asked, the runtime suspended (ICorProfilerInfo10::SuspendRuntime first:
 * the walk's own suspension, called from the drain thread, kept failing
 * with CORPROF_E_SUSPENSION_IN_PROGRESS on .NET 10.0.12 where the explicit
 * one succeeds): so the GC callbacks stay the cheap
 * ones (COR_PRF_HIGH_BASIC_GC: GarbageCollectionStarted says which
 * generations a GC collects, Finished that it is over, concurrent GC stays
 * on), and a walk costs only after a gen2 GC. The drain thread's tick
 * walks (never a callback: the walk suspends the runtime, and a GC
 * callback runs while the GC holds it suspended), a few ms after the GC's
 * end; what the program allocated in between is counted too (dead or
 * not: the heap holds it until the next GC), a small part of a heap that
 * a gen2 GC has just swept. A walk that finds the runtime suspended by
 * something else (the next GC) is tried again at the next ticks. Before .NET 10 (no
 * ICorProfilerInfo15) heap mode says so in the log and counts nothing.
 *
 * Each object costs two runtime calls (GetClassFromObject, GetObjectSize2)
 * and a lookup in a table of the classes seen, made on the drain thread
 * while the runtime is suspended: bench/profiler/README.md measures it. */
#define _GNU_SOURCE
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coreclr/clr.h"

/* The classes a walk found: open addressing on the ClassID. */
struct walk {
    mdp_clr *p;
    struct mdp_heap_count *v;
    size_t n, cap; /* cap a power of two; n at most cap / 2 */
    int failed;
};

static size_t slot_of(const struct walk *w, uintptr_t cls)
{
    size_t i = (size_t)((cls >> 3) * 0x9e3779b97f4a7c15ull) & (w->cap - 1);
    while (w->v[i].cls && w->v[i].cls != cls)
        i = (i + 1) & (w->cap - 1);
    return i;
}

static int grow(struct walk *w)
{
    size_t cap = w->cap ? 2 * w->cap : 1024;
    struct mdp_heap_count *old = w->v, *v = calloc(cap, sizeof *v);
    if (!v)
        return -1;
    size_t oldcap = w->cap;
    w->v = v;
    w->cap = cap;
    for (size_t i = 0; i < oldcap; i++)
        if (old[i].cls)
            w->v[slot_of(w, old[i].cls)] = old[i];
    free(old);
    return 0;
}

static BOOL on_object(ObjectID obj, void *state)
{
    struct walk *w = state;
    ClassID cls = 0;
    SIZE_T size = 0;
    ICorProfilerInfo *info = w->p->info;
    if (FAILED(info->lpVtbl->GetClassFromObject(info, obj, &cls)) || !cls)
        return 1;
    if (FAILED(info->lpVtbl->GetObjectSize2(info, obj, &size)))
        size = 0;
    if ((w->n + 1) * 2 > w->cap && grow(w) != 0) {
        w->failed = 1;
        return 0; /* out of memory: stop the walk (the runtime resumes) */
    }
    size_t i = slot_of(w, cls);
    if (!w->v[i].cls) {
        w->v[i].cls = cls;
        w->n++;
    }
    w->v[i].count++;
    w->v[i].bytes += size;
    return 1;
}

void mdp_clr_heap_gc_started(mdp_clr *p, int ngen, const BOOL collected[])
{
    uint64_t n = atomic_fetch_add(&p->heap_gcs, 1) + 1;
    mdp_log(p->core, "heap: GC %llu started (%d generations, gen2 %d)", (unsigned long long)n, ngen,
            ngen > 2 && collected ? (int)collected[2] : -1);
    if (ngen > 2 && collected && collected[2])
        atomic_store(&p->heap_gen2, 1);
}

void mdp_clr_heap_gc_finished(mdp_clr *p)
{
    if (!atomic_exchange(&p->heap_gen2, 0))
        return;
    /* the GC's number (GCs since the start, 1 the first), for the tick */
    atomic_store(&p->heap_pending, atomic_load(&p->heap_gcs));
    mdp_core_drain_soon(p->core);
}

void mdp_clr_heap_tick(mdp_clr *p)
{
    uint64_t gc = atomic_exchange(&p->heap_pending, 0);
    if (!gc)
        return;
    if (p->info_level < 15) {
        if (!p->heap_refused) {
            p->heap_refused = 1;
            mdp_note(p->core, "heap mode: the runtime offers no ICorProfilerInfo15 "
                              "(EnumerateGCHeapObjects, .NET 10): no heap counted");
        }
        return;
    }
    struct walk w = {p, NULL, 0, 0, 0};
    if (grow(&w) != 0)
        return;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    HRESULT hs = p->info->lpVtbl->SuspendRuntime(p->info), hr = hs;
    if (SUCCEEDED(hs)) {
        hr = p->info->lpVtbl->EnumerateGCHeapObjects(p->info, (void *)on_object, &w);
        p->info->lpVtbl->ResumeRuntime(p->info);
    }
    mdp_log(p->core, "heap: after GC %llu: suspend %#x, walk %#x", (unsigned long long)gc,
            (unsigned)hs, (unsigned)hr);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    uint64_t ns = (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec));
    if (hr == (HRESULT)0x80131388u && !w.failed && ++p->heap_tries < 100) {
        /* CORPROF_E_SUSPENSION_IN_PROGRESS: another suspension (the next
         * GC) holds the runtime; again at the next tick, unless a later
         * gen2 GC has taken the turn */
        uint64_t none = 0;
        atomic_compare_exchange_strong(&p->heap_pending, &none, gc);
        mdp_core_drain_soon(p->core);
        free(w.v);
        return;
    }
    p->heap_tries = 0;
    if (FAILED(hr) || w.failed) {
        mdp_note(p->core, "heap mode: the walk after GC %llu failed (%s %#x)",
                 (unsigned long long)gc, w.failed ? "out of memory" : "HRESULT", (unsigned)hr);
    } else {
        /* the table's used slots, packed */
        size_t k = 0;
        for (size_t i = 0; i < w.cap; i++)
            if (w.v[i].cls)
                w.v[k++] = w.v[i];
        mdp_heap_snapshot(p->core, gc, ns, w.v, k);
    }
    free(w.v);
}
