/* alloc mode's stacks on CoreCLR: the allocating thread's managed stack,
 * taken inside ObjectAllocated when the core says the allocation is one to
 * sample (core/allocstack.c: one per --alloc-sample bytes on average).
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
