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

/* Every item of an ICorProfiler*Enum, 64 at a time, then Release it. */
#define FOR_EACH(e, type, item, body)                                                              \
    do {                                                                                           \
        type items_[64];                                                                           \
        ULONG n_ = 0;                                                                              \
        while (SUCCEEDED((e)->lpVtbl->Next((e), 64, items_, &n_)) && n_ > 0) {                     \
            for (ULONG i_ = 0; i_ < n_ && i_ < 64; i_++) {                                         \
                type item = items_[i_];                                                            \
                body                                                                               \
            }                                                                                      \
            if (n_ < 64)                                                                           \
                break;                                                                             \
        }                                                                                          \
        (e)->lpVtbl->Release(e);                                                                   \
    } while (0)

int mdp_clr_catch_up(mdp_clr *p)
{
    MDP_SEQ_HELD(seq, p->core); /* before any enumeration is generated */
    size_t modules = 0, functions = 0, threads = 0;

    ICorProfilerModuleEnum *me = NULL;
    if (SUCCEEDED(INFO(p)->EnumModules(p->info, &me)) && me)
        FOR_EACH(me, ModuleID, id, {
            if (mdp_clr_module(p, seq, id) == 0)
                modules++;
        });

    ICorProfilerFunctionEnum *fe = NULL;
    if (SUCCEEDED(INFO(p)->EnumJITedFunctions2(p->info, &fe)) && fe)
        FOR_EACH(fe, COR_PRF_FUNCTION, f, {
            if (mdp_clr_function(p, seq, f.functionId) == 0 &&
                mdp_clr_code(p, seq, f.functionId) == 0)
                functions++;
        });

    ICorProfilerThreadEnum *te = NULL;
    if (SUCCEEDED(INFO(p)->EnumThreads(p->info, &te)) && te)
        FOR_EACH(te, ThreadID, t, {
            DWORD tid = 0;
            if (SUCCEEDED(INFO(p)->GetThreadInfo(p->info, t, &tid)) && tid &&
                mdp_ev_thread_start(p->core, t, (int)tid) == 0)
                threads++;
        });
    mdp_log(p->core, "attach catch-up: %zu modules, %zu functions, %zu threads", modules, functions,
            threads);
    return 0;
}
