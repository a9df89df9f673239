/* The callback object CoreCLR calls: ICorProfilerCallback11 and everything
 * it extends. Every slot of callback.def exists; the ones the profiler does
 * not act on return S_OK. The others turn the runtime's notifications into
 * core events, each taking its sequence number on entry (before asking the
 * runtime anything), as the attach precedence rules need. */
#define _GNU_SOURCE
#include "config.h"

#include <stdlib.h>

#include <mdtools/errors.h>

#include "coreclr/clr.h"
#include "core/native.h"

#define SELF(x) ((mdp_clr *)(x))

mdp_clr *mdp_clr_self;

/* ---- IUnknown --------------------------------------------------------- */

static HRESULT cb_QueryInterface(ICorProfilerCallback *self, REFIID iid, void **out)
{
    if (!out)
        return E_POINTER;
    int ok = mdp_guid_equal(iid, &mdp_IID_IUnknown);
    for (int i = 0; i < 11 && !ok; i++)
        ok = mdp_guid_equal(iid, &mdp_IID_ICorProfilerCallback[i]);
    if (!ok) {
        *out = NULL;
        return E_NOINTERFACE;
    }
    *out = self;
    self->lpVtbl->AddRef(self);
    return S_OK;
}

static ULONG cb_AddRef(ICorProfilerCallback *self)
{
    return atomic_fetch_add(&SELF(self)->refs, 1) + 1;
}

static ULONG cb_Release(ICorProfilerCallback *self)
{
    /* The object lives as long as the process: the signal handler and the
     * drain thread may still use the core after the runtime lets go. */
    ULONG n = atomic_fetch_sub(&SELF(self)->refs, 1) - 1;
    return n;
}

/* ---- the slots nothing happens in -------------------------------------- */

#define MDP_CB(ver, name, params)                                                                  \
    static HRESULT stub_##name params                                                              \
    {                                                                                              \
        return S_OK;                                                                               \
    }
#include "coreclr/callback.def"
#undef MDP_CB

/* ---- startup, shutdown, attach ------------------------------------------ */

static HRESULT on_Initialize(MDP_CB_THIS, IUnknown *info)
{
    return mdp_clr_initialize(SELF(self), info, NULL, 0, 0);
}

static HRESULT on_InitializeForAttach(MDP_CB_THIS, IUnknown *info, void *client_data,
                                      UINT client_len)
{
    return mdp_clr_initialize(SELF(self), info, client_data, client_len, 1);
}

static HRESULT on_ProfilerAttachComplete(MDP_CB_THIS)
{
    return mdp_clr_attach_complete(SELF(self));
}

static HRESULT on_Shutdown(MDP_CB_THIS)
{
    return mdp_clr_shutdown(SELF(self));
}

static HRESULT on_ProfilerDetachSucceeded(MDP_CB_THIS)
{
    return mdp_clr_detached(SELF(self));
}

/* ---- modules, assemblies ------------------------------------------------- */

#define CORE_OR_OK(p)                                                                              \
    do {                                                                                           \
        if (!(p)->core || atomic_load(&(p)->shut_down))                                            \
            return S_OK;                                                                           \
    } while (0)

/* The unloads pass their ID straight to the core, with a fresh seq. */
#define FORWARD(name, type, event)                                                                 \
    static HRESULT on_##name(MDP_CB_THIS, type id)                                                 \
    {                                                                                              \
        mdp_clr *p = SELF(self);                                                                   \
        CORE_OR_OK(p);                                                                             \
        MDP_BENCH_CALLBACK(p->core, MDP_BENCH_CB_OTHER);                                           \
        MDP_SEQ_HELD(seq, p->core);                                                                \
        event(p->core, seq, id);                                                                   \
        return S_OK;                                                                               \
    }
FORWARD(ModuleUnloadStarted, ModuleID, mdp_ev_module_unload)
FORWARD(AssemblyUnloadStarted, AssemblyID, mdp_ev_assembly_unload)
FORWARD(AppDomainShutdownStarted, AppDomainID, mdp_ev_appdomain_shutdown)
FORWARD(ClassUnloadStarted, ClassID, mdp_ev_class_unload)
FORWARD(FunctionUnloadStarted, FunctionID, mdp_ev_function_unload)
FORWARD(DynamicMethodUnloaded, FunctionID, mdp_ev_function_unload)
#undef FORWARD

static HRESULT on_ModuleLoadFinished(MDP_CB_THIS, ModuleID module, HRESULT status)
{
    mdp_clr *p = SELF(self);
    CORE_OR_OK(p);
    MDP_BENCH_CALLBACK(p->core, MDP_BENCH_CB_OTHER);
    MDP_SEQ_HELD(seq, p->core);
    if (SUCCEEDED(status))
        mdp_clr_module(p, seq, module);
    return S_OK;
}

static HRESULT on_ModuleAttachedToAssembly(MDP_CB_THIS, ModuleID module, AssemblyID assembly)
{
    mdp_clr *p = SELF(self);
    CORE_OR_OK(p);
    MDP_BENCH_CALLBACK(p->core, MDP_BENCH_CB_OTHER);
    MDP_SEQ_HELD(seq, p->core);
    mdp_ev_module_assembly(p->core, seq, module, assembly);
    return S_OK;
}

/* ---- what the runtime is doing (core/activity.c) -------------------------- */

/* Each pair's begin and end on the thread concerned; the core ignores them
 * when activities are off or the thread is not sampled. */
#define ACTIVITY(name, params, act, begin)                                                         \
    static HRESULT on_##name params                                                                \
    {                                                                                              \
        mdp_clr *p = SELF(self);                                                                   \
        CORE_OR_OK(p);                                                                             \
        mdp_ev_activity(p->core, act, begin);                                                      \
        return S_OK;                                                                               \
    }
ACTIVITY(JITCompilationStarted, (MDP_CB_THIS, FunctionID fn, BOOL safe_to_block), MDP_ACT_JIT, 1)
ACTIVITY(DynamicMethodJITCompilationStarted,
         (MDP_CB_THIS, FunctionID fn, BOOL safe_to_block, const BYTE *il_header, ULONG il_len),
         MDP_ACT_JIT, 1)
ACTIVITY(ClassLoadStarted, (MDP_CB_THIS, ClassID cls), MDP_ACT_TYPELOAD, 1)
#undef ACTIVITY

/* GCs: the activity, and heap mode's gen2 GCs (heap.c) */
static HRESULT on_GarbageCollectionStarted(MDP_CB_THIS, int ngen, BOOL collected[],
                                           COR_PRF_GC_REASON reason)
{
    mdp_clr *p = SELF(self);
    CORE_OR_OK(p);
    mdp_ev_activity(p->core, MDP_ACT_GC, 1);
    if (p->cfg.modes & MDP_MODE_HEAP)
        mdp_clr_heap_gc_started(p, ngen, collected);
    return S_OK;
}

static HRESULT on_GarbageCollectionFinished(MDP_CB_THIS)
{
    mdp_clr *p = SELF(self);
    CORE_OR_OK(p);
    mdp_ev_activity(p->core, MDP_ACT_GC, 0);
    if (p->cfg.modes & MDP_MODE_HEAP)
        mdp_clr_heap_gc_finished(p);
    return S_OK;
}

/* The thread's exception activity, and in exceptions mode the throw with
 * its stack (events.c) */
static HRESULT on_ExceptionThrown(MDP_CB_THIS, ObjectID thrown)
{
    mdp_clr *p = SELF(self);
    CORE_OR_OK(p);
    mdp_ev_activity(p->core, MDP_ACT_EXCEPTION, 1);
    if (p->cfg.modes & MDP_MODE_EXCEPTIONS)
        mdp_clr_exception_thrown(p, thrown);
    return S_OK;
}

/* contention mode: the runtime's contention events (events.c); alloc
 * stacks: its sampled allocations (allocstack.c) */
static HRESULT on_EventPipeEventDelivered(MDP_CB_THIS, EVENTPIPE_PROVIDER provider, DWORD event_id,
                                          DWORD event_version, ULONG metadata_len,
                                          const BYTE *metadata, ULONG data_len, const BYTE *data,
                                          const GUID *activity, const GUID *related_activity,
                                          ThreadID thread, ULONG nframes, UINT_PTR frames[])
{
    mdp_clr *p = SELF(self);
    CORE_OR_OK(p);
    if ((p->cfg.modes & MDP_MODE_CONTENTION) || p->alloc_event)
        mdp_clr_eventpipe_event(p, event_id, event_version, data_len, data, thread, nframes,
                                frames);
    return S_OK;
}

/* ---- classes ------------------------------------------------------------ */

/* Only a count and the thread's activity. A class is learnt when something
 * names it (a sampled method's owning class or type argument, an
 * allocation's type), through the map's miss callback on the drain thread
 * (record.c, ops_miss), as after an attach. Recording each of a
 * compiler's ~28,000 class loads here cost ~3 us each, 87 ms of its CPU
 * (bench/profiler/README.md, "Classes and ReadyToRun methods learnt when
 * named"), for the few hundred classes its samples name. The runtime is
 * never asked about a dead class: a class unload drains every sample,
 * count and event first, under the drain lock that naming holds
 * (core/modules.c), and a live method's owning class and type arguments
 * are live. */
static HRESULT on_ClassLoadFinished(MDP_CB_THIS, ClassID cls, HRESULT status)
{
    mdp_clr *p = SELF(self);
    CORE_OR_OK(p);
    MDP_BENCH_CALLBACK(p->core, MDP_BENCH_CB_CLASS);
    if (SUCCEEDED(status))
        mdp_ev_class_loaded(p->core);
    mdp_ev_activity(p->core, MDP_ACT_TYPELOAD, 0);
    return S_OK;
}

/* ---- code ----------------------------------------------------------------- */

/* The function and the code versions the map does not have yet. A method's
 * first code is published after JITCompilationFinished returns (and a
 * ReadyToRun method's after its cached-function search): then the drain
 * thread's next tick records it. A tiered rejit's new version is there
 * already: recorded now, before it first runs, so that the handler can
 * unwind through it. */
static void function_and_code(mdp_clr *p, uint64_t seq, FunctionID fn)
{
    if (mdp_clr_function(p, seq, fn) == 0 && mdp_clr_code_fresh(p, seq, fn) == 0)
        mdp_clr_defer_code(p, fn, seq, 0);
}

static HRESULT on_JITCompilationFinished(MDP_CB_THIS, FunctionID fn, HRESULT status,
                                         BOOL safe_to_block)
{
    mdp_clr *p = SELF(self);
    CORE_OR_OK(p);
    MDP_BENCH_CALLBACK(p->core, MDP_BENCH_CB_JIT);
    MDP_SEQ_HELD(seq, p->core);
    if (SUCCEEDED(status))
        function_and_code(p, seq, fn);
    mdp_ev_activity(p->core, MDP_ACT_JIT, 0);
    return S_OK;
}

/* ReadyToRun code: not monitored (startup.c, event_mask). A precompiled
 * method is learnt, function and code, only when a sample lands in it:
 * the map's miss callback asks the runtime about the address
 * (GetFunctionFromIP3, record.c), and until then the handler unwinds
 * through it from the image's own function table (core/execmap.c). Most
 * ReadyToRun methods a process runs are never sampled: recording each
 * one's function here cost a compiler ~2.8 us a method, 51 ms of its CPU
 * (bench/profiler/README.md, "Classes and ReadyToRun methods learnt when
 * named"). */
static HRESULT on_JITCachedFunctionSearchFinished(MDP_CB_THIS, FunctionID fn,
                                                  COR_PRF_JIT_CACHE result)
{
    return S_OK;
}

static HRESULT on_JITCachedFunctionSearchStarted(MDP_CB_THIS, FunctionID fn, BOOL *use_cached)
{
    if (use_cached)
        *use_cached = 1;
    return S_OK;
}

static HRESULT on_JITInlining(MDP_CB_THIS, FunctionID caller, FunctionID callee,
                              BOOL *should_inline)
{
    if (should_inline)
        *should_inline = 1;
    return S_OK;
}

static HRESULT on_DynamicMethodJITCompilationFinished(MDP_CB_THIS, FunctionID fn, HRESULT status,
                                                      BOOL safe_to_block)
{
    mdp_clr *p = SELF(self);
    CORE_OR_OK(p);
    MDP_BENCH_CALLBACK(p->core, MDP_BENCH_CB_JIT);
    MDP_SEQ_HELD(seq, p->core);
    if (SUCCEEDED(status) && mdp_clr_dynamic_function(p, seq, fn) == 0)
        mdp_clr_code(p, seq, fn);
    mdp_ev_activity(p->core, MDP_ACT_JIT, 0);
    return S_OK;
}

/* ---- threads ------------------------------------------------------------- */

static HRESULT on_ThreadAssignedToOSThread(MDP_CB_THIS, ThreadID thread, DWORD os_thread)
{
    mdp_clr *p = SELF(self);
    CORE_OR_OK(p);
    mdp_ev_thread_start(p->core, thread, (int)os_thread);
    return S_OK;
}

static HRESULT on_ThreadNameChanged(MDP_CB_THIS, ThreadID thread, ULONG len, WCHAR name[])
{
    mdp_clr *p = SELF(self);
    CORE_OR_OK(p);
    char utf8[512];
    /* a name set to null comes as an empty one */
    mdp_utf16_to_utf8(utf8, sizeof utf8, name, name ? len : 0);
    mdp_ev_thread_name(p->core, thread, utf8);
    return S_OK;
}

static HRESULT on_ThreadDestroyed(MDP_CB_THIS, ThreadID thread)
{
    mdp_clr *p = SELF(self);
    CORE_OR_OK(p);
    mdp_ev_thread_end(p->core, thread);
    return S_OK;
}

/* ---- exceptions (calls mode) ---------------------------------------------- */

/* The exception's second pass reaches a frame: the frame that catches is
 * reached too (its catch clause then runs: ExceptionCatcherEnter) and goes
 * on; every other is left without a leave or tailcall hook
 * (coreclr/elt.c, core/calls.c). */
static HRESULT on_ExceptionUnwindFunctionEnter(MDP_CB_THIS, FunctionID fn)
{
    mdp_clr *p = SELF(self);
    CORE_OR_OK(p);
    mdp_calls_exception(p->core, fn, MDP_CALL_UNWIND);
    return S_OK;
}

static HRESULT on_ExceptionCatcherEnter(MDP_CB_THIS, FunctionID fn, ObjectID exception)
{
    mdp_clr *p = SELF(self);
    CORE_OR_OK(p);
    mdp_calls_exception(p->core, fn, MDP_CALL_CATCH);
    mdp_ev_activity(p->core, MDP_ACT_EXCEPTION, 0); /* dispatch is over: the catch runs */
    return S_OK;
}

/* ---- allocations ------------------------------------------------------------ */

static HRESULT on_ObjectAllocated(MDP_CB_THIS, ObjectID obj, ClassID cls)
{
    mdp_clr *p = SELF(self);
    CORE_OR_OK(p);
    SIZE_T size = 0;
    if (FAILED(p->info->lpVtbl->GetObjectSize2(p->info, obj, &size)))
        size = 0;
    mdp_alloc_count(p->core, cls, size);
    if (mdp_alloc_stack_due(p->core, size))
        mdp_clr_alloc_stack(p, cls, size); /* allocstack.c */
    return S_OK;
}

static HRESULT on_LoadAsNotificationOnly(MDP_CB_THIS, BOOL *notification_only)
{
    if (notification_only)
        *notification_only = 0;
    return S_OK;
}

/* ---- the vtable ------------------------------------------------------------ */

/* Every slot first gets its stub, then the handlers above replace theirs
 * (a later designated initializer wins, C11 6.7.9). */
#ifdef __clang__
#pragma clang diagnostic ignored "-Winitializer-overrides"
#else
#pragma GCC diagnostic ignored "-Woverride-init"
#endif
static const ICorProfilerCallbackVtbl vtbl = {
    .QueryInterface = cb_QueryInterface,
    .AddRef = cb_AddRef,
    .Release = cb_Release,
#define MDP_CB(ver, name, params) .name = stub_##name,
#include "coreclr/callback.def"
#undef MDP_CB
    .Initialize = on_Initialize,
    .Shutdown = on_Shutdown,
    .InitializeForAttach = on_InitializeForAttach,
    .ProfilerAttachComplete = on_ProfilerAttachComplete,
    .ProfilerDetachSucceeded = on_ProfilerDetachSucceeded,
    .ModuleLoadFinished = on_ModuleLoadFinished,
    .ModuleAttachedToAssembly = on_ModuleAttachedToAssembly,
    .ModuleUnloadStarted = on_ModuleUnloadStarted,
    .AssemblyUnloadStarted = on_AssemblyUnloadStarted,
    .AppDomainShutdownStarted = on_AppDomainShutdownStarted,
    .ClassLoadFinished = on_ClassLoadFinished,
    .ClassUnloadStarted = on_ClassUnloadStarted,
    .JITCompilationFinished = on_JITCompilationFinished,
    .JITCachedFunctionSearchStarted = on_JITCachedFunctionSearchStarted,
    .JITCachedFunctionSearchFinished = on_JITCachedFunctionSearchFinished,
    .JITInlining = on_JITInlining,
    .FunctionUnloadStarted = on_FunctionUnloadStarted,
    .DynamicMethodJITCompilationFinished = on_DynamicMethodJITCompilationFinished,
    .DynamicMethodUnloaded = on_DynamicMethodUnloaded,
    .ThreadAssignedToOSThread = on_ThreadAssignedToOSThread,
    .ThreadDestroyed = on_ThreadDestroyed,
    .ThreadNameChanged = on_ThreadNameChanged,
    .ObjectAllocated = on_ObjectAllocated,
    .ExceptionUnwindFunctionEnter = on_ExceptionUnwindFunctionEnter,
    .ExceptionCatcherEnter = on_ExceptionCatcherEnter,
    .JITCompilationStarted = on_JITCompilationStarted,
    .DynamicMethodJITCompilationStarted = on_DynamicMethodJITCompilationStarted,
    .ClassLoadStarted = on_ClassLoadStarted,
    .GarbageCollectionStarted = on_GarbageCollectionStarted,
    .GarbageCollectionFinished = on_GarbageCollectionFinished,
    .ExceptionThrown = on_ExceptionThrown,
    .EventPipeEventDelivered = on_EventPipeEventDelivered,
    .LoadAsNotificationOnly = on_LoadAsNotificationOnly,
};

void mdp_clr_forget(mdp_clr *p)
{
    /* The object is not freed: the runtime still releases its references
     * after the callback that ends it returns. A few hundred bytes per
     * attach session. */
    if (mdp_clr_self == p)
        mdp_clr_self = NULL;
}

mdp_clr *mdp_clr_create(void)
{
    mdp_clr *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->iface.lpVtbl = &vtbl;
    pthread_mutex_init(&p->pending_lock, NULL);
    atomic_store(&p->refs, 1);
    return p;
}
