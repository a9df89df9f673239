/* calls mode in CoreCLR: the enter, leave and tailcall hooks of every
 * JIT-compiled method, and the exception unwinds.
 *
 * FunctionIDMapper2 is asked once per function as the JIT decides to hook
 * it; it records the function and hands back the address of the function's
 * counter (core/calls.c) as the "client ID" the hooks then receive.
 *
 * Two sets of hooks, chosen with MDPROFILE_ELT (mdprofile --elt):
 *   fast (default)  SetEnterLeaveFunctionHooks3: the JIT calls the hooks
 *                   directly from the method's code and saves no register
 *                   for them, so each is two instructions of assembly that
 *                   touch nothing but its counter word and the flags:
 *                   `lock incq (%r14)` (enter), `lock incq 8(%rdi)`
 *                   (leave), `lock incq 16(%rdi)` (tailcall), then `ret`.
 *                   On Unix x64 the JIT passes the enter hook the client
 *                   ID in R14 (the caller's stack pointer in R15), keeping
 *                   the method's arguments in their registers across the
 *                   call; the leave and tailcall hooks get it in RDI (the
 *                   return value is in RAX/RDX/XMM0/XMM1 then, which the
 *                   hooks do not touch), as the runtime's own stubs for
 *                   these calls take them (ProfileEnterNaked, ProfileLeave-
 *                   Naked, ProfileTailcallNaked in its amd64 asmhelpers);
 *                   the exact counts of tests/profiler/calls.sh hold;
 *   slow            SetEnterLeaveFunctionHooks3WithInfo: the JIT calls the
 *                   runtime's stubs, which save the argument and return
 *                   registers and call plain C functions (per-thread
 *                   counters).
 * bench/profiler/README.md has their cost. A method left by an exception
 * calls neither leave nor tailcall hook: ExceptionUnwindFunctionEnter
 * (COR_PRF_MONITOR_EXCEPTIONS) counts it as unwound. The log's `call`
 * records hold the four counts (doc/profile-log.md, format 2). Inlined
 * methods have no hooks (their calls are not counted), ReadyToRun code is
 * not used while hooks are on (the runtime JIT-compiles everything). */
#include "config.h"

#include <inttypes.h>

#include "coreclr/clr.h"

#define INFO(p) ((p)->info->lpVtbl)

/* The fast hooks: the counter's address (the client ID) is in R14 for the
 * enter hook, in RDI for the others; word offsets as MDP_CALL_*. */
#define FAST_HOOK(name, insn)                                                                      \
    ".p2align 4\n"                                                                                 \
    ".hidden " #name "\n"                                                                          \
    ".type " #name ", @function\n" #name ":\n"                                                     \
    "    lock incq " insn "\n"                                                                     \
    "    ret\n"                                                                                    \
    ".size " #name ", .-" #name "\n"
__asm__(".text\n" FAST_HOOK(mdp_elt_enter_fast, "(%r14)") FAST_HOOK(mdp_elt_leave_fast, "8(%rdi)")
            FAST_HOOK(mdp_elt_tailcall_fast, "16(%rdi)"));
void mdp_elt_enter_fast(FunctionIDOrClientID id);
void mdp_elt_leave_fast(FunctionIDOrClientID id);
void mdp_elt_tailcall_fast(FunctionIDOrClientID id);
_Static_assert(MDP_CALL_LEAVE == 1 && MDP_CALL_TAILCALL == 2, "the fast hooks' word offsets");

static void count_slow(FunctionIDOrClientID id, int what)
{
    mdp_clr *p = mdp_clr_self;
    if (p && p->core)
        mdp_calls_count(p->core, (uint64_t *)id.clientID, what);
}

static void enter_slow(FunctionIDOrClientID id, COR_PRF_ELT_INFO elt)
{
    count_slow(id, MDP_CALL_ENTER);
}

static void leave_slow(FunctionIDOrClientID id, COR_PRF_ELT_INFO elt)
{
    count_slow(id, MDP_CALL_LEAVE);
}

static void tailcall_slow(FunctionIDOrClientID id, COR_PRF_ELT_INFO elt)
{
    count_slow(id, MDP_CALL_TAILCALL);
}

static UINT_PTR mapper(FunctionID fn, void *client, BOOL *hook)
{
    mdp_clr *p = client;
    *hook = 0;
    if (!p || !p->core)
        return fn;
    MDP_SEQ_HELD(seq, p->core);
    if (mdp_clr_function(p, seq, fn) != 0)
        return fn;
    uint64_t *counter = mdp_calls_counter(p->core, fn);
    if (!counter)
        return fn;
    *hook = 1;
    return (UINT_PTR)counter;
}

void mdp_clr_elt_setup(mdp_clr *p, DWORD *low, DWORD *high)
{
    *low |= COR_PRF_MONITOR_ENTERLEAVE | COR_PRF_MONITOR_EXCEPTIONS;
    /* the WithInfo hooks are refused (CORPROF_E_INCONSISTENT_WITH_FLAGS)
     * unless one of the info flags is on: frame info is the cheapest */
    if (p->cfg.elt_slow)
        *low |= COR_PRF_ENABLE_FRAME_INFO;
}

/* After the event mask is set (hooks may only be set in Initialize). */
HRESULT mdp_clr_elt_hooks(mdp_clr *p)
{
    HRESULT hr = INFO(p)->SetFunctionIDMapper2(p->info, mapper, p);
    if (FAILED(hr))
        return hr;
    if (p->cfg.elt_slow)
        return INFO(p)->SetEnterLeaveFunctionHooks3WithInfo(p->info, enter_slow, leave_slow,
                                                            tailcall_slow);
    return INFO(p)->SetEnterLeaveFunctionHooks3(p->info, mdp_elt_enter_fast, mdp_elt_leave_fast,
                                                mdp_elt_tailcall_fast);
}
