/* The CoreCLR adapter's state and the helpers its files share. One profiler
 * object per process: the runtime creates it through the class factory at
 * startup or on attach and keeps it until the process ends. */
#ifndef MDP_CLR_H
#define MDP_CLR_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "core/core.h"
#include "coreclr/corprof.h"

/* The profiler's CLSID, what CORECLR_PROFILER names:
 * {1C49C441-593E-4870-856F-98DA7A9DEE94} */
#define MDP_CLSID_TEXT "{1C49C441-593E-4870-856F-98DA7A9DEE94}"
extern const CLSID mdp_clsid;

/* The minimum ICorProfilerInfo the adapter needs: 9 for
 * GetNativeCodeStartAddresses, GetCodeInfo4 and GetILToNativeMapping3
 * (every code version of a method: tier-0, tier-1, OSR). */
#define MDP_MIN_INFO 9

typedef struct mdp_clr {
    ICorProfilerCallback iface; /* first: the COM object */
    _Atomic ULONG refs;
    ICorProfilerInfo *info;
    int info_level; /* N of the ICorProfilerInfoN obtained */
    mdp_core *core;
    mdp_config cfg;
    int attach;
    _Atomic int shut_down;
    /* Functions whose code was not published yet when the runtime reported
     * them (JITCompilationFinished with no code version listed yet): the
     * drain thread's tick records their code shortly after. */
    pthread_mutex_t pending_lock;
    struct mdp_pending *pending;
    size_t npending, pending_cap;
    EVENTPIPE_SESSION session; /* the EventPipe session (contention, alloc stacks), 0 none */
    int runtime_major;         /* the runtime's major version (10: .NET 10), 0 unknown */
    int alloc_event;           /* alloc stacks from AllocationSampled events (allocstack.c) */
    /* heap mode (heap.c): GCs started, a gen2 GC under way, the number of
     * the last gen2 GC the tick has not walked after (0 none) */
    _Atomic uint64_t heap_gcs, heap_pending;
    _Atomic int heap_gen2;
    int heap_refused;    /* the runtime has no EnumerateGCHeapObjects: said once */
    unsigned heap_tries; /* walks that found the runtime suspended, in a row */
} mdp_clr;

struct mdp_pending {
    FunctionID fn;
    uint64_t seq;
    unsigned tries;
};

/* record.c: queue fn for the tick (pending_lock taken inside). */
void mdp_clr_defer_code(mdp_clr *p, FunctionID fn, uint64_t seq, unsigned tries);

extern mdp_clr *mdp_clr_self; /* the one instance, or NULL */

/* allocstack.c: the current thread's managed stack for a sampled
 * allocation, given to the core (inside ObjectAllocated) */
void mdp_clr_alloc_stack(mdp_clr *p, ClassID cls, SIZE_T size);
/* allocstack.c: whether alloc stacks can come from the runtime's
 * AllocationSampled events (alloc mode with stacks, not --alloc-path
 * callback, .NET 10 and ICorProfilerInfo12); says why not in the log
 * when it was wanted. Sets p->alloc_event. */
int mdp_clr_alloc_event_choose(mdp_clr *p);
/* The runtime's mean of AllocationSampled (bytes per sample, fixed). */
#define MDP_CLR_ALLOC_SAMPLED_MEAN 102400u
#define MDP_CLR_ALLOC_SAMPLED_KEYWORD 0x80000000000ull
#define MDP_CLR_ALLOC_SAMPLED 303u
/* allocstack.c: one AllocationSampled event, delivered on the thread that
 * allocated (thread 0 or the current one): its stack, to the core. */
void mdp_clr_alloc_sampled(mdp_clr *p, DWORD version, ULONG len, const BYTE *data, ThreadID thread);

/* heap.c: heap mode. The GC callbacks note a gen2 GC; the drain thread's
 * tick walks the heap after it. */
void mdp_clr_heap_gc_started(mdp_clr *p, int ngen, const BOOL collected[]);
void mdp_clr_heap_gc_finished(mdp_clr *p);
void mdp_clr_heap_tick(mdp_clr *p);

/* callback.c */
mdp_clr *mdp_clr_create(void);
/* Forget the instance (mdp_clr_self): the runtime let it go; the next
 * class factory call makes a new one. */
void mdp_clr_forget(mdp_clr *p);

/* startup.c */
HRESULT mdp_clr_initialize(mdp_clr *p, IUnknown *info_unk, const void *client_data, UINT client_len,
                           int attach);
HRESULT mdp_clr_shutdown(mdp_clr *p);
HRESULT mdp_clr_attach_complete(mdp_clr *p);
HRESULT mdp_clr_detached(mdp_clr *p);

/* record.c: ask the runtime about an ID and send the core event. `seq` is
 * the caller's (taken on callback entry, or before an enumeration). */
int mdp_clr_module(mdp_clr *p, uint64_t seq, ModuleID module);
int mdp_clr_class(mdp_clr *p, uint64_t seq, ClassID cls);
int mdp_clr_function(mdp_clr *p, uint64_t seq, FunctionID fn);
int mdp_clr_code(mdp_clr *p, uint64_t seq, FunctionID fn);
/* Record the code versions of fn the map does not have yet: how many. */
unsigned mdp_clr_code_fresh(mdp_clr *p, uint64_t seq, FunctionID fn);
int mdp_clr_dynamic_function(mdp_clr *p, uint64_t seq, FunctionID fn);
int mdp_clr_ip(mdp_clr *p, uintptr_t ip);
extern const mdp_runtime_ops mdp_clr_ops;

/* elt.c: the calls mode's enter/leave hooks (the event mask's ELT bits in
 * *low / *high, then the hooks once the runtime has the mask). */
void mdp_clr_elt_setup(mdp_clr *p, DWORD *low, DWORD *high);
HRESULT mdp_clr_elt_hooks(mdp_clr *p);
/* events.c: the exceptions and contention modes. ExceptionThrown's
 * throw with the stack DoStackSnapshot walks; the EventPipe session of
 * the runtime's contention events (after the event mask), and one
 * delivered event. */
#define MDP_CLR_MAX_FRAMES 255u
void mdp_clr_exception_thrown(mdp_clr *p, ObjectID thrown);
/* The EventPipe session of the runtime's events the modes want: contention
 * (ContentionStop), alloc stacks (AllocationSampled, p->alloc_event). */
HRESULT mdp_clr_eventpipe_start(mdp_clr *p);
void mdp_clr_eventpipe_event(mdp_clr *p, DWORD id, DWORD version, ULONG len, const BYTE *data,
                             ThreadID thread, ULONG nframes, const UINT_PTR *frames);
/* catchup.c: an attached profiler enumerates what is already loaded. */
int mdp_clr_catch_up(mdp_clr *p);

/* utf16.c: UTF-16 (n units, or up to a NUL when n is SIZE_MAX) to UTF-8,
 * NUL-terminated, cut to len - 1 bytes; returns out. Unpaired surrogates
 * become U+FFFD. */
char *mdp_utf16_to_utf8(char *out, size_t len, const WCHAR *s, size_t n);
/* UTF-8 (ASCII expected) to UTF-16 into out (cap units with the NUL). */
void mdp_utf8_to_utf16(WCHAR *out, size_t cap, const char *s);

#endif
