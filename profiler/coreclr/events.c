/* The exceptions and contention modes in CoreCLR: the events and the
 * stacks the runtime gives, handed to the core (core/events.c).
 *
 * Exceptions: ExceptionThrown (COR_PRF_MONITOR_EXCEPTIONS) comes on the
 * throwing thread during the first pass, before any handler runs; the
 * throwing thread's managed stack is walked from inside the callback with
 * DoStackSnapshot on the current thread (COR_PRF_ENABLE_STACK_SNAPSHOT;
 * a synchronous walk of the calling thread is always allowed), and the
 * exception's class comes from GetClassFromObject. The runtime's own
 * dispatch frames (System.Private.CoreLib's System.Runtime.EH, which
 * raises the notification since .NET 9's managed exception handling) are
 * left to the core to name: they sit on the leaf side of the throw site.
 *
 * Contention: the profiling API has no contention callback
 * (ICorProfilerCallback..11). The runtime's own events do: an in-process
 * EventPipe session (ICorProfilerInfo12::EventPipeStartSession) on
 * Microsoft-Windows-DotNETRuntime with the contention keyword (0x4000) at
 * the informational level delivers ContentionStart (81) and ContentionStop
 * (91) to ICorProfilerCallback10::EventPipeEventDelivered
 * (COR_PRF_HIGH_MONITOR_EVENT_PIPE). A profiler's session is synchronous:
 * the runtime calls the callback from the thread that writes the event,
 * with the stack EventPipe walked for it (the event's managed frames,
 * innermost first). ContentionStop_V1 (.NET 8 and later) carries the wait
 * in nanoseconds (ContentionFlags u8, ClrInstanceID u16, DurationNs
 * double: 11 bytes, packed) and is written by the thread that waited,
 * once it holds the lock, so its stack is the waiting thread's at the
 * lock. A payload shorter than that is ignored, never read past. */
#define _GNU_SOURCE
#include "config.h"

#include <string.h>

#include "coreclr/clr.h"

#define INFO(p) ((p)->info->lpVtbl)

#define MDP_CLR_RUNTIME_PROVIDER "Microsoft-Windows-DotNETRuntime"
#define MDP_CLR_CONTENTION_KEYWORD 0x4000u
#define MDP_CLR_CONTENTION_STOP 91u

struct snap {
    uintptr_t ips[MDP_CLR_MAX_FRAMES];
    unsigned n, max;
    int cut;
};

static HRESULT on_frame(FunctionID fn, UINT_PTR ip, COR_PRF_FRAME_INFO frame, ULONG32 context_len,
                        BYTE context[], void *client)
{
    (void)frame;
    (void)context_len;
    (void)context;
    struct snap *s = client;
    if (!fn || ip < 4096)
        return S_OK; /* a block of native frames: the walk gives no address for it */
    if (s->n == s->max) {
        s->cut = 1;
        return E_FAIL; /* deep enough: stop the walk */
    }
    /* every frame is a caller here (the runtime called the profiler):
     * the address before the return address lies in the call */
    s->ips[s->n++] = ip - 1;
    return S_OK;
}

void mdp_clr_exception_thrown(mdp_clr *p, ObjectID thrown)
{
    ClassID cls = 0;
    if (!thrown || FAILED(INFO(p)->GetClassFromObject(p->info, thrown, &cls)))
        cls = 0;
    struct snap s;
    s.n = 0;
    s.cut = 0;
    s.max = p->cfg.max_depth < MDP_CLR_MAX_FRAMES ? p->cfg.max_depth : MDP_CLR_MAX_FRAMES;
    /* thread 0: the current one, walked synchronously */
    HRESULT hr = INFO(p)->DoStackSnapshot(p->info, 0, (void *)on_frame, COR_PRF_SNAPSHOT_DEFAULT,
                                          &s, NULL, 0);
    if (FAILED(hr) && !s.cut && !s.n)
        mdp_log(p->core, "DoStackSnapshot in ExceptionThrown: %#x", (unsigned)hr);
    mdp_ev_stack_event(p->core, MDP_EVENT_THROW, cls, 0, s.ips, s.n, s.cut);
}

HRESULT mdp_clr_eventpipe_start(mdp_clr *p)
{
    UINT64 keywords = 0;
    if (p->cfg.modes & MDP_MODE_CONTENTION)
        keywords |= MDP_CLR_CONTENTION_KEYWORD;
    if (p->alloc_event)
        keywords |= MDP_CLR_ALLOC_SAMPLED_KEYWORD; /* allocstack.c */
    if (!keywords)
        return S_OK;
    if (p->info_level < 12) {
        mdp_note(
            p->core,
            "contention mode needs ICorProfilerInfo12 (.NET 5 or later); this runtime offers %d",
            p->info_level);
        return E_NOTIMPL;
    }
    WCHAR name[64];
    mdp_utf8_to_utf16(name, 64, MDP_CLR_RUNTIME_PROVIDER);
    /* one session, one provider: both keywords at the informational level */
    COR_PRF_EVENTPIPE_PROVIDER_CONFIG cfg = {name, keywords, 4 /* informational */, NULL};
    EVENTPIPE_SESSION session = 0;
    HRESULT hr = INFO(p)->EventPipeStartSession(p->info, 1, &cfg, 0, &session);
    if (FAILED(hr))
        mdp_note(p->core, "the runtime refused the EventPipe session for %s events: %#x",
                 p->cfg.modes & MDP_MODE_CONTENTION ? "contention" : "allocation", (unsigned)hr);
    else
        p->session = session;
    return hr;
}

void mdp_clr_eventpipe_event(mdp_clr *p, DWORD id, DWORD version, ULONG len, const BYTE *data,
                             ThreadID thread, ULONG nframes, const UINT_PTR *frames)
{
    if (id == MDP_CLR_ALLOC_SAMPLED && p->alloc_event) {
        mdp_clr_alloc_sampled(p, version, len, data, thread); /* allocstack.c */
        return;
    }
    if (!(p->cfg.modes & MDP_MODE_CONTENTION) || id != MDP_CLR_CONTENTION_STOP || version < 1 ||
        len < 11 || !data)
        return;
    double ns;
    memcpy(&ns, data + 3, sizeof ns); /* little-endian, as the runtime wrote it */
    if (!(ns >= 0) || ns > 1e18)
        ns = 0; /* NaN or absurd: a wait of unknown length still counts once */
    uintptr_t ips[MDP_CLR_MAX_FRAMES];
    unsigned n = 0,
             max = p->cfg.max_depth < MDP_CLR_MAX_FRAMES ? p->cfg.max_depth : MDP_CLR_MAX_FRAMES;
    int cut = 0;
    for (ULONG i = 0; frames && i < nframes; i++) {
        if (frames[i] < 4096)
            continue;
        if (n == max) {
            cut = 1;
            break;
        }
        ips[n++] = (uintptr_t)frames[i] - 1;
    }
    if (!n && !cut) {
        /* .NET 10 delivers the runtime's events to a profiler's session
         * without their stack (nframes 0, and event thread 0: the thread
         * that writes the event, ep_session_write_event's caller): walk
         * it here, which is the waiting thread's (a thread named is
         * checked to be this one; tests/profiler/contention.sh checks the
         * stack and the thread) */
        ThreadID self = 0;
        if (thread && (FAILED(INFO(p)->GetCurrentThreadID(p->info, &self)) || self != thread)) {
            /* never seen: the wait is counted without a stack rather
             * than with another thread's */
            mdp_log(p->core, "ContentionStop of thread %#lx delivered on %#lx",
                    (unsigned long)thread, (unsigned long)self);
        } else {
            struct snap s;
            s.n = 0;
            s.cut = 0;
            s.max = max;
            HRESULT hr = INFO(p)->DoStackSnapshot(p->info, 0, (void *)on_frame,
                                                  COR_PRF_SNAPSHOT_DEFAULT, &s, NULL, 0);
            if (FAILED(hr) && !s.n && !s.cut)
                mdp_log(p->core, "DoStackSnapshot in ContentionStop: %#x", (unsigned)hr);
            mdp_ev_stack_event(p->core, MDP_EVENT_WAIT, 0, (uint64_t)ns, s.ips, s.n, s.cut);
            return;
        }
    }
    mdp_ev_stack_event(p->core, MDP_EVENT_WAIT, 0, (uint64_t)ns, ips, n, cut);
}
