/* Starting and ending a profiling session inside CoreCLR: Initialize (the
 * profiler loaded at startup through CORECLR_ENABLE_PROFILING) and
 * InitializeForAttach (loaded into a running process over the diagnostics
 * IPC), the event mask of each mode, Shutdown, which completes the log
 * (end=exit), and the end of an attached session: the core completes the
 * log (end=detach) and asks the runtime to detach
 * (RequestProfilerDetach); once no thread is inside the profiler the
 * runtime says ProfilerDetachSucceeded, and the core is freed there, so
 * that the next attach (the runtime reloads the same shared object, kept
 * mapped, or loads another copy) starts from nothing.
 *
 * The settings come from the MDPROFILE_* environment at startup and from
 * the attach request's client data on attach (core/config.c). A refusal
 * says why to the launcher (core/channel.h), never on the host's stderr. */
#define _GNU_SOURCE
#include "config.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/channel.h"
#include "coreclr/clr.h"

#define INFO(p) ((p)->info->lpVtbl)

/* The runtime only says "profiler failed to initialize"; say why, to the
 * launcher (before there is a core, hence a log, to say it in). */
static void complain(mdp_clr *p, const char *fmt, const char *detail)
{
    char text[1024], enc[3 * 1024], msg[MDP_CHANNEL_MAX];
    snprintf(text, sizeof text, fmt, detail);
    mdp_pct_escape(enc, sizeof enc, text, strlen(text));
    int n = snprintf(msg, sizeof msg, "note %d %s", (int)getpid(), enc);
    const char *to = p->cfg.notify[0] ? p->cfg.notify : getenv("MDPROFILE_NOTIFY");
    if (to && n > 0)
        mdp_channel_send_once(to, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
}

static int query_info(mdp_clr *p, IUnknown *unk)
{
    for (int level = 15; level >= 1; level--) {
        void *out = NULL;
        if (SUCCEEDED(
                unk->lpVtbl->QueryInterface(unk, &mdp_IID_ICorProfilerInfo[level - 1], &out)) &&
            out) {
            p->info = out;
            p->info_level = level;
            return level;
        }
    }
    return 0;
}

static void runtime_version(mdp_clr *p, char *buf, size_t len)
{
    USHORT major = 0, minor = 0, build = 0, qfe = 0;
    snprintf(buf, len, "unknown");
    if (SUCCEEDED(INFO(p)->GetRuntimeInformation(p->info, NULL, NULL, &major, &minor, &build, &qfe,
                                                 0, NULL, NULL))) {
        snprintf(buf, len, "%u.%u.%u", major, minor, build);
        p->runtime_major = major;
    }
}

/* Keep this shared object mapped for the life of the process: the SIGPROF
 * handler and the sampler's slots must outlive a detach, after which the
 * runtime unloads the profiler while a queued signal may still arrive. */
static void pin_self(void)
{
    Dl_info di;
    if (dladdr((void *)mdp_clr_initialize, &di) && di.dli_fname)
        dlopen(di.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}

static DWORD event_mask(mdp_clr *p, DWORD *high)
{
    DWORD low = COR_PRF_MONITOR_MODULE_LOADS | COR_PRF_MONITOR_ASSEMBLY_LOADS |
                COR_PRF_MONITOR_APPDOMAIN_LOADS | COR_PRF_MONITOR_CLASS_LOADS |
                COR_PRF_MONITOR_JIT_COMPILATION | COR_PRF_MONITOR_THREADS;
    *high = 0;
    /* no COR_PRF_MONITOR_CACHE_SEARCHES: ReadyToRun methods are learnt
     * when sampled (callback.c) */
    if (!p->attach) {
        /* not allowed after attach */
        low |= COR_PRF_MONITOR_FUNCTION_UNLOADS;
        *high |= COR_PRF_HIGH_MONITOR_DYNAMIC_FUNCTION_UNLOADS;
    }
    if ((p->cfg.modes & MDP_MODES_SAMPLED) && p->cfg.activities) {
        /* what the runtime is doing per thread (core/activity.c): JIT and
         * class loads are monitored already; GCs without the costs of
         * COR_PRF_MONITOR_GC (which turns concurrent GC off); exceptions
         * only when asked: the runtime then calls the profiler for every
         * frame an exception passes, 20-30% of an exception-heavy
         * program's throughput (bench/profiler/README.md) */
        *high |= COR_PRF_HIGH_BASIC_GC;
        if (p->cfg.activities >= 2)
            low |= COR_PRF_MONITOR_EXCEPTIONS;
    }
    if (p->cfg.modes & MDP_MODE_CALLS)
        mdp_clr_elt_setup(p, &low, high);
    if ((p->cfg.modes & MDP_MODE_ALLOC) && !p->alloc_event)
        /* every allocation on the runtime's slow path, to call us */
        low |= COR_PRF_MONITOR_OBJECT_ALLOCATED | COR_PRF_ENABLE_OBJECT_ALLOCATED;
    if (p->cfg.modes & MDP_MODE_EXCEPTIONS)
        /* the same bit as the exception activity's (--exceptions): one
         * ExceptionThrown per throw, which marks the thread and records
         * the throw, never counted twice */
        low |= COR_PRF_MONITOR_EXCEPTIONS | COR_PRF_ENABLE_STACK_SNAPSHOT;
    if (p->cfg.modes & MDP_MODE_CONTENTION) {
        /* the runtime's contention events, walked on the waiting thread */
        *high |= COR_PRF_HIGH_MONITOR_EVENT_PIPE;
        low |= COR_PRF_ENABLE_STACK_SNAPSHOT;
    }
    if (p->cfg.modes & MDP_MODE_HEAP)
        *high |= COR_PRF_HIGH_BASIC_GC; /* gen2 GCs, for the heap walks (heap.c) */
    if ((p->cfg.modes & MDP_MODE_ALLOC) && p->cfg.alloc_sample)
        low |= COR_PRF_ENABLE_STACK_SNAPSHOT; /* alloc stacks (allocstack.c) */
    if (p->alloc_event)
        /* alloc stacks from the runtime's sampled allocations: no
         * ObjectAllocated, the allocations keep their fast path */
        *high |= COR_PRF_HIGH_MONITOR_EVENT_PIPE;
    return low;
}

static HRESULT initialize(mdp_clr *p, IUnknown *info_unk, const void *client_data, UINT client_len,
                          int attach)
{
    char err[512] = "";
    p->attach = attach;
    mdp_config_default(&p->cfg);
    if (attach) {
        if (client_data && client_len &&
            mdp_config_parse(&p->cfg, client_data, client_len, err, sizeof err) != 0) {
            complain(p, "bad attach settings: %s", err);
            return E_INVALIDARG;
        }
    } else if (mdp_config_from_env(&p->cfg, err, sizeof err) != 0) {
        complain(p, "%s", err);
        return E_INVALIDARG;
    }
    if (!info_unk || query_info(p, info_unk) < MDP_MIN_INFO) {
        complain(p, "%s",
                 "the runtime is too old: it offers no ICorProfilerInfo9 (.NET Core 3.0 or later "
                 "is needed)");
        return E_FAIL;
    }
    if (attach && (p->cfg.modes & ~(unsigned)MDP_MODES_ATTACH)) {
        char names[96] = "?";
        mdp_mode_format(p->cfg.modes & ~(unsigned)MDP_MODES_ATTACH, names, sizeof names);
        complain(p,
                 "mode %s needs the profiler from the start: the runtime grants its callbacks only "
                 "at startup",
                 names);
        return E_INVALIDARG;
    }
    pin_self();
    char version[64];
    runtime_version(p, version, sizeof version);
    mdp_runtime_ops ops = mdp_clr_ops;
    ops.payload = p;
    if (attach)
        /* the attaching mdprofile waits for this process's log */
        p->cfg.first_pid = (int)getpid();
    if (mdp_core_new(&p->core, &p->cfg, &ops, version, attach, err, sizeof err) != 0) {
        complain(p, "cannot start: %s", err);
        return E_FAIL;
    }
    mdp_log(p->core, "%s runtime %s, ICorProfilerInfo%d, modes %#x",
            attach ? "attached to" : "loaded by", version, p->info_level, p->cfg.modes);
    if (mdp_clr_alloc_event_choose(p))
        mdp_alloc_stacks_use_event(p->core, MDP_CLR_ALLOC_SAMPLED_MEAN);
    DWORD high = 0, low = event_mask(p, &high);
    HRESULT hr = INFO(p)->SetEventMask2(p->info, low, high);
    if (FAILED(hr)) {
        mdp_note(p->core, "the runtime refused the event mask %#x/%#x: %#x", (unsigned)low,
                 (unsigned)high, (unsigned)hr);
        mdp_core_finish(p->core, "refused");
        mdp_core_free(p->core);
        p->core = NULL;
        return hr;
    }
    if ((p->cfg.modes & MDP_MODE_CALLS) && FAILED(hr = mdp_clr_elt_hooks(p))) {
        mdp_note(p->core, "the runtime refused the enter hooks: %#x", (unsigned)hr);
        mdp_core_finish(p->core, "refused");
        mdp_core_free(p->core);
        p->core = NULL;
        return hr;
    }
    if (FAILED(hr = mdp_clr_eventpipe_start(p))) {
        if (!(p->cfg.modes & MDP_MODE_CONTENTION)) {
            /* alloc stacks alone: back to ObjectAllocated (the event mask
             * may still change inside Initialize) */
            p->alloc_event = 0;
            mdp_alloc_stacks_use_event(p->core, 0);
            low = event_mask(p, &high);
            hr = INFO(p)->SetEventMask2(p->info, low, high);
            if (SUCCEEDED(hr))
                mdp_note(p->core, "alloc stacks from ObjectAllocated instead");
        }
        if (FAILED(hr)) {
            mdp_core_finish(p->core, "refused");
            mdp_core_free(p->core);
            p->core = NULL;
            return hr;
        }
    }
    if (!attach)
        /* the startup thread runs Main */
        mdp_ev_thread_start(p->core, 0, (int)syscall(SYS_gettid));
    return S_OK;
}

HRESULT mdp_clr_initialize(mdp_clr *p, IUnknown *info_unk, const void *client_data, UINT client_len,
                           int attach)
{
    HRESULT hr = initialize(p, info_unk, client_data, client_len, attach);
    if (FAILED(hr))
        /* the runtime lets this object go: the next attach makes a new one */
        mdp_clr_forget(p);
    return hr;
}

HRESULT mdp_clr_attach_complete(mdp_clr *p)
{
    if (p->core)
        mdp_clr_catch_up(p);
    return S_OK;
}

HRESULT mdp_clr_shutdown(mdp_clr *p)
{
    if (p->core)
        mdp_core_finish(p->core, "exit");
    atomic_store(&p->shut_down, 1);
    return S_OK;
}

/* No thread is inside the profiler any more (the runtime waited for
 * that), none of the core's own are left (the drain thread is joined, the
 * handlers quiesced by mdp_core_free), and the ICorProfilerInfo may not be
 * used: free the core and forget this object, so that the next attach
 * makes a new one. The object itself stays allocated: the runtime
 * releases it after this returns. */
HRESULT mdp_clr_detached(mdp_clr *p)
{
    atomic_store(&p->shut_down, 1);
    mdp_core *core = p->core;
    p->core = NULL;
    if (core)
        mdp_core_detached(core);
    mdp_clr_forget(p);
    return S_OK;
}
