/* calls mode in CoreCLR: the enter hook of every JIT-compiled method.
 *
 * FunctionIDMapper2 is asked once per function as the JIT decides to hook
 * it; it records the function and hands back the address of the function's
 * counter (core/calls.c) as the "client ID" the hook then receives.
 *
 * Two hooks, chosen with MDPROFILE_ELT (mdprofile --elt):
 *   fast (default)  SetEnterLeaveFunctionHooks3: the JIT calls the hook
 *                   directly from the method's prolog and saves no
 *                   register for it, so it is two instructions of assembly,
 *                   `lock incq (%r14); ret`, that touch nothing but the
 *                   counter and the flags. On Unix x64 the JIT keeps the
 *                   method's arguments in their registers across the call
 *                   and passes the client ID in R14 (the caller's stack
 *                   pointer in R15), not in RDI: seen in the debugger,
 *                   and the exact counts of tests/profiler/calls.sh hold;
 *   slow            SetEnterLeaveFunctionHooks3WithInfo: the JIT calls the
 *                   runtime's stub, which saves the argument registers and
 *                   calls a plain C function (per-thread counters).
 * bench/profiler/README.md has their cost. Only enters are hooked: the log
 * counts calls (doc/profile-log.md, `call` records). Inlined methods have
 * no hook (their calls are not counted), ReadyToRun code is not used while
 * hooks are on (the runtime JIT-compiles everything). */
#include "config.h"

#include <inttypes.h>

#include "coreclr/clr.h"

#define INFO(p) ((p)->info->lpVtbl)

/* The fast hook: R14 holds the client ID, the counter's address. */
__asm__(".text\n"
        ".p2align 4\n"
        ".hidden mdp_elt_enter_fast\n"
        ".type mdp_elt_enter_fast, @function\n"
        "mdp_elt_enter_fast:\n"
        "    lock incq (%r14)\n"
        "    ret\n"
        ".size mdp_elt_enter_fast, .-mdp_elt_enter_fast\n");
void mdp_elt_enter_fast(FunctionIDOrClientID id);

static void enter_slow(FunctionIDOrClientID id, COR_PRF_ELT_INFO elt)
{
    mdp_clr *p = mdp_clr_self;
    if (p && p->core)
        mdp_calls_enter(p->core, (uint64_t *)id.clientID);
}

static UINT_PTR mapper(FunctionID fn, void *client, BOOL *hook)
{
    mdp_clr *p = client;
    *hook = 0;
    if (!p || !p->core)
        return fn;
    uint64_t seq = mdp_seq(p->core);
    if (mdp_clr_function(p, seq, fn) != 0)
        return fn;
    uint64_t *counter = mdp_calls_counter(p->core, fn);
    if (!counter)
        return fn;
    *hook = 1;
    return (UINT_PTR)counter;
}

void mdp_clr_elt_setup(mdp_clr *p, DWORD *low, DWORD *high);
void mdp_clr_elt_setup(mdp_clr *p, DWORD *low, DWORD *high)
{
    *low |= COR_PRF_MONITOR_ENTERLEAVE;
    /* the WithInfo hooks are refused (CORPROF_E_INCONSISTENT_WITH_FLAGS)
     * unless one of the info flags is on: frame info is the cheapest */
    if (p->cfg.elt_slow)
        *low |= COR_PRF_ENABLE_FRAME_INFO;
}

/* After the event mask is set (hooks may only be set in Initialize). */
HRESULT mdp_clr_elt_hooks(mdp_clr *p);
HRESULT mdp_clr_elt_hooks(mdp_clr *p)
{
    HRESULT hr = INFO(p)->SetFunctionIDMapper2(p->info, mapper, p);
    if (FAILED(hr))
        return hr;
    if (p->cfg.elt_slow)
        return INFO(p)->SetEnterLeaveFunctionHooks3WithInfo(p->info, enter_slow, NULL, NULL);
    return INFO(p)->SetEnterLeaveFunctionHooks3(p->info, mdp_elt_enter_fast, NULL, NULL);
}
