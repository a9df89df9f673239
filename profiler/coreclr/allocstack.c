/* alloc mode's stacks on CoreCLR: the allocating thread's managed stack,
 * taken inside the runtime's AllocationSampled event (.NET 10) or inside
 * ObjectAllocated when the core says the allocation is one to sample
 * (core/allocstack.c: one per --alloc-sample bytes on average).
 *
 * AllocationSampled (Microsoft-Windows-DotNETRuntime, id 303, version 0,
 * keyword 0x80000000000 AllocationSampling, informational) is written by
 * the allocating thread on the runtime's allocation slow path, which the
 * fast path enters when an object crosses the thread's sampling limit
 * (the runtime folds that limit into its allocation context's, so the
 * fast path costs nothing more). The profiler's own EventPipe session is
 * synchronous (events.c): EventPipeEventDelivered runs on the thread that
 * allocated, with event thread 0 meaning that thread, so the walk below is
 * the allocation's stack (tests/profiler/allocstacks.sh checks it). Its
 * payload, packed: AllocationKind u32, ClrInstanceID u16, TypeID (the
 * MethodTable: a ClassID), TypeName (UTF-16, NUL-terminated; empty, the
 * runtime does not name it there), [HeapIndex u32 in some builds], Address,
 * ObjectSize u64, SampledByteOffset u64; the fields after the name are
 * read from the end, so either layout parses, and a payload of another
 * length is ignored.
 *
 * DoStackSnapshot of the current thread (thread 0) is the walk the
 * profiling API offers from inside a callback: synchronous, on the thread
 * that allocates, with the runtime's own unwinder, which knows every
 * managed frame (funclets, OSR, stubs) without the sampler's prolog
 * decoding. It reports managed frames as (FunctionID, return address);
 * what the runtime reports without a FunctionID (its own and native
 * frames) is left out: an allocation's stack is its managed callers, as
 * PerfView's GC Heap Alloc Stacks shows them. It needs
 * COR_PRF_ENABLE_STACK_SNAPSHOT in the event mask (startup.c). */
#define _GNU_SOURCE
#include "config.h"

#include "coreclr/clr.h"

struct walk {
    uintptr_t ip[255], fn[255];
    unsigned n, max;
};

static HRESULT on_frame(FunctionID fn, UINT_PTR ip, COR_PRF_FRAME_INFO info, ULONG32 ctx_len,
                        BYTE ctx[], void *client)
{
    (void)info;
    (void)ctx_len;
    (void)ctx;
    struct walk *w = client;
    if (!fn || !ip)
        return S_OK; /* the runtime's frames: not a managed caller */
    w->ip[w->n] = ip;
    w->fn[w->n] = fn;
    /* deeper than the depth limit: stop the walk (any failure code) */
    return ++w->n < w->max ? S_OK : E_FAIL;
}

void mdp_clr_alloc_stack(mdp_clr *p, ClassID cls, SIZE_T size)
{
    struct walk w;
    unsigned depth = mdp_core_config(p->core)->max_depth;
    w.n = 0;
    w.max = depth < 255 ? depth : 255;
    /* a walk stopped at the depth limit keeps what it found: alloc stacks
     * are for their leaf side (who allocates) */
    p->info->lpVtbl->DoStackSnapshot(p->info, 0, (void *)on_frame, 0, &w, NULL, 0);
    mdp_alloc_stack_add(p->core, cls, size, w.ip, w.fn, w.n);
}

int mdp_clr_alloc_event_choose(mdp_clr *p)
{
    p->alloc_event = 0;
    if (!(p->cfg.modes & MDP_MODE_ALLOC) || !p->cfg.alloc_sample ||
        p->cfg.alloc_path == MDP_ALLOC_PATH_CALLBACK)
        return 0;
    if (p->runtime_major < 10 || p->info_level < 12) {
        mdp_note(p->core,
                 "this runtime has no AllocationSampled event (.NET 10): alloc stacks from "
                 "ObjectAllocated, every allocation on the runtime's slow path");
        return 0;
    }
    p->alloc_event = 1;
    return 1;
}

/* A little-endian word of n bytes at d. */
static uint64_t le(const BYTE *d, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = n; i-- > 0;)
        v = v << 8 | d[i];
    return v;
}

void mdp_clr_alloc_sampled(mdp_clr *p, DWORD version, ULONG len, const BYTE *data, ThreadID thread)
{
    (void)version; /* version 0; a later one adds fields at the end, never read */
    if (!data || len < 14 + 2 + 24)
        return;
    /* the type's name: UTF-16 units up to a NUL, inside the payload */
    ULONG at = 14;
    while (at + 1 < len && (data[at] | data[at + 1]))
        at += 2;
    if (at + 1 >= len)
        return;
    at += 2;
    ULONG rest = len - at;
    if (rest != 24 && rest != 28)
        return; /* a layout not known: never guessed at */
    ClassID cls = (ClassID)le(data + 6, 8);
    uint64_t size = le(data + len - 16, 8);
    if (!cls || !size || !mdp_alloc_event_keep(p->core, size))
        return;
    ThreadID self = 0;
    if (thread && (FAILED(p->info->lpVtbl->GetCurrentThreadID(p->info, &self)) || self != thread)) {
        /* never seen: an allocation of another thread is not given this
         * thread's stack */
        mdp_log(p->core, "AllocationSampled of thread %#lx delivered on %#lx",
                (unsigned long)thread, (unsigned long)self);
        return;
    }
    mdp_clr_alloc_stack(p, cls, (SIZE_T)size);
}
