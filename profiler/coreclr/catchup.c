/* Attach catch-up: a profiler attached to a running process learns what
 * was loaded before it came (ProfilerAttachComplete), following "CLR V4:
 * Profiler Attach Part 2: Ok, now what?":
 *
 *   - one sequence number is taken *before* the enumerations start, and
 *     every item they yield carries it; callbacks that run meanwhile take
 *     newer ones, so the map lets an event beat an enumeration item that
 *     was generated before it (a module unloaded during the enumeration is
 *     not brought back by it; repeats are harmless);
 *   - modules (EnumModules) and JIT-compiled functions with their code
 *     (EnumJITedFunctions2) are enumerated; classes are not: they are found
 *     lazily through the map's miss callback, on the drain thread, when a
 *     sampled frame needs one; so is precompiled (ReadyToRun) code, which
 *     no enumeration lists, through GetFunctionFromIP3 on a sampled address;
 *   - the runtime's threads (EnumThreads) get their CPU-time timers; their
 *     stack bounds are found from their first samples. */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>

#include "coreclr/clr.h"

#define INFO(p) ((p)->info->lpVtbl)

int mdp_clr_catch_up(mdp_clr *p);

int mdp_clr_catch_up(mdp_clr *p)
{
    uint64_t seq = mdp_seq(p->core); /* before any enumeration is generated */
    size_t modules = 0, functions = 0, threads = 0;

    ICorProfilerModuleEnum *me = NULL;
    if (SUCCEEDED(INFO(p)->EnumModules(p->info, &me)) && me) {
        ModuleID ids[64];
        ULONG n = 0;
        while (SUCCEEDED(me->lpVtbl->Next(me, 64, ids, &n)) && n > 0) {
            for (ULONG i = 0; i < n && i < 64; i++)
                if (mdp_clr_module(p, seq, ids[i]) == 0)
                    modules++;
            if (n < 64)
                break;
        }
        me->lpVtbl->Release(me);
    }

    ICorProfilerFunctionEnum *fe = NULL;
    if (SUCCEEDED(INFO(p)->EnumJITedFunctions2(p->info, &fe)) && fe) {
        COR_PRF_FUNCTION fns[64];
        ULONG n = 0;
        while (SUCCEEDED(fe->lpVtbl->Next(fe, 64, fns, &n)) && n > 0) {
            for (ULONG i = 0; i < n && i < 64; i++)
                if (mdp_clr_function(p, seq, fns[i].functionId) == 0 &&
                    mdp_clr_code(p, seq, fns[i].functionId) == 0)
                    functions++;
            if (n < 64)
                break;
        }
        fe->lpVtbl->Release(fe);
    }

    ICorProfilerThreadEnum *te = NULL;
    if (SUCCEEDED(INFO(p)->EnumThreads(p->info, &te)) && te) {
        ThreadID ids[64];
        ULONG n = 0;
        while (SUCCEEDED(te->lpVtbl->Next(te, 64, ids, &n)) && n > 0) {
            for (ULONG i = 0; i < n && i < 64; i++) {
                DWORD tid = 0;
                if (SUCCEEDED(INFO(p)->GetThreadInfo(p->info, ids[i], &tid)) && tid &&
                    mdp_ev_thread_start(p->core, ids[i], (int)tid) == 0)
                    threads++;
            }
            if (n < 64)
                break;
        }
        te->lpVtbl->Release(te);
    }
    mdp_log(p->core, "attach catch-up: %zu modules, %zu functions, %zu threads", modules, functions,
            threads);
    return 0;
}
