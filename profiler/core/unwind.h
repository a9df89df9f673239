/* Finding the caller of a managed frame on x86-64 without the runtime's
 * unwind data: from the method's prolog and epilog instructions.
 *
 * CoreCLR's JIT does not keep a frame pointer in every method: optimized
 * code often uses an RSP-based frame (`push rax` or `sub rsp, N`, callee-
 * saved pushes, no `mov rbp, rsp`), and a plain frame-pointer walk then
 * skips the caller of every such method. Its prologs are regular, though:
 * pushes of callee-saved registers (push rbp first when RBP is the frame
 * pointer), `sub rsp, imm`, and `mov rbp, rsp` or `lea rbp, [rsp+disp]`
 * establishing RBP so that [rbp] is the saved RBP and [rbp+8] the return
 * address. Decoding that much tells where the return address lies:
 *   - RBP frame: at rbp + 8, the caller's RBP at rbp;
 *   - RSP frame of size F (pushes and the sub): at sp + F, and RBP is the
 *     caller's (or was pushed, and is read back from its slot);
 * for a frame interrupted in its prolog or epilog (only a sampled leaf can
 * be), by what the instructions executed so far or still to run do to RSP.
 * Anything else is "do not know": the sampler falls back to the frame
 * pointer chain for that frame.
 *
 * Everything here is async-signal-safe: no allocation, no lock, reads of
 * code inside [code, code + size) and of stack words inside [lo, hi) only. */
#ifndef MDP_UNWIND_H
#define MDP_UNWIND_H

#include <stddef.h>
#include <stdint.h>

/* The signal handler's code (sampler.c, this file's walk, the map's
 * lookup): GCC puts hot functions together (.text.hot), so a walk that
 * finds them cold (the thread ran 1-4 ms of its own code since the last
 * signal) misses on fewer code pages and lines. */
#define MDP_HOT __attribute__((hot))

/* The word of a sampled thread's stack at `a` (8-aligned and inside the
 * stack: the caller checked). The handler reads words of frames that are
 * not its own and belong to no object: under AddressSanitizer the words
 * of an instrumented frame's redzones are poisoned, though mapped, and a
 * thread sampled inside one of the sanitizer's interceptors (every malloc
 * and memcpy of the runtime goes through them; they keep no frame record)
 * leaves RBP where a frame-pointer step reads such words. A checked load
 * there aborts the host with a report (a compiler profiled in CI's ASan
 * build, once). So there the load is left unchecked, in a function of its
 * own (GCC and Clang never inline one whose sanitizing differs);
 * elsewhere it is a plain load. */
#if defined(__SANITIZE_ADDRESS__)
#define MDP_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MDP_ASAN 1
#endif
#endif
#ifdef MDP_ASAN
uintptr_t mdp_stack_word(uintptr_t a);
#else
static inline uintptr_t mdp_stack_word(uintptr_t a)
{
    return *(const uintptr_t *)a;
}
#endif

typedef struct mdp_uw {
    uintptr_t ip; /* the frame's instruction pointer (a return address for callers) */
    uintptr_t sp; /* its stack pointer (for a caller: just above the return address) */
    uintptr_t fp; /* RBP as the frame sees it */
} mdp_uw;

/* How a method's prolog builds its frame. */
typedef struct mdp_prolog {
    int framed;            /* 1: RBP frame; 0: RSP frame */
    int osr;               /* 1: an on-stack-replacement method version (below) */
    uint32_t size;         /* RSP frame: bytes between the return address and RSP in the body */
    int rbp_slot;          /* RSP frame that pushes RBP: its slot as bytes below the
                              return address slot (8, 16, ...); 0 when not pushed */
    int32_t rbp_above_sp;  /* RBP frame: RBP - RSP once the setup has run, when the
                             decoder knows it (`lea rbp, [rsp+disp]` ends the setup:
                             disp); -1 otherwise (`mov rbp, rsp` may be followed by
                             `sub rsp`) */
    uint32_t end;          /* offset of the first instruction after the frame setup */
    uint32_t n;            /* instructions decoded (setup only) */
    uint32_t at[16];       /* offset of each setup instruction */
    uint32_t sp_after[16]; /* bytes pushed/subtracted once instruction i has run */
} mdp_prolog;

/* Decode the frame setup at the start of a method's code (code[0..size)).
 * Returns 0, or -1 when the start is not a prolog this decoder knows
 * (including a first instruction that sets nothing up). */
int mdp_prolog_decode(mdp_prolog *p, const uint8_t *code, size_t size);

/* The caller of frame `f` of a managed method whose code region is
 * [code, code + size) (f->ip inside it). `leaf`: f was interrupted anywhere
 * (a sampled leaf); otherwise f->ip is a return site inside the body.
 * [lo, hi) bounds the stack. Returns 0 when the frame is not understood,
 * else *caller filled (its ip is the raw return address) and
 *   1  computed from the prolog (the caller should check the address),
 *   2  read from an RBP frame record,
 *   3  an OSR method version: its own frame record holds the RBP its tier-0
 *      frame saved (caller->fp) next to no return address that means
 *      anything; the tier-0 frame record, which holds the same RBP and the
 *      real return address, lies somewhere above f->fp: the caller scans
 *      for it (caller->ip is 0).
 * On-stack replacement: CoreCLR's OSR code takes over a running tier-0
 * frame; its prolog starts `mov rax, [rbp]; push rax` or `push rax;
 * mov rbp, rsp`, copying the tier-0 frame's saved RBP into a frame record
 * of its own whose return-address slot is stale stack. */
int mdp_unwind_managed(mdp_uw *caller, const mdp_uw *f, const uint8_t *code, size_t size, int leaf,
                       uintptr_t lo, uintptr_t hi);

/* What a method's prolog says about its frames stopped at a call (every
 * caller's frame): the step mdp_unwind_managed() takes for them, kept so
 * that a walk need not decode the prolog again (sampler.c's walk cache).
 * It depends only on the method's code. */
typedef struct mdp_unwind_step {
    uint32_t kind;     /* MDP_STEP_*; 0: not decoded yet */
    uint32_t rbp_slot; /* MDP_STEP_RSP: the prolog's rbp_slot (0: RBP not pushed) */
    uint32_t size;     /* MDP_STEP_RSP: the frame's size (mdp_prolog.size) */
} mdp_unwind_step;
enum { MDP_STEP_NONE = 1, MDP_STEP_OSR, MDP_STEP_RBP, MDP_STEP_RSP };

/* The step for the method whose code is [code, code + size): MDP_STEP_NONE
 * when its prolog is not one the decoder knows. */
void mdp_unwind_step_of(mdp_unwind_step *s, const uint8_t *code, size_t size);

/* mdp_unwind_managed() for a frame that is not the leaf, from the method's
 * step (mdp_unwind_step_of) and its range [start, start + size) instead
 * of its code: the same answer, without reading the code. */
int mdp_unwind_caller(mdp_uw *caller, const mdp_uw *f, const mdp_unwind_step *s, uintptr_t start,
                      size_t size, uintptr_t lo, uintptr_t hi);

/* The tier-0 frame record under an OSR method version, from the tier-0
 * code's prolog. CoreCLR enters OSR code from the patchpoint helper with
 * RSP one word below the tier-0 frame's RSP (the word holds the return
 * address of the patchpoint call, into the tier-0 code), and the OSR
 * prolog pushes its frame record right below: so the tier-0 frame's RSP is
 * osr_fp + 16, and a tier-0 prolog `push rbp; sub rsp, N; lea rbp,
 * [rsp+disp]` puts the tier-0 frame record at that RSP + disp. A scan for
 * a word equal to the saved RBP is not enough: the tier-0 frame's own
 * slots may hold stale frame records of earlier OSR calls made from the
 * same caller, with the same saved RBP and a return address into another
 * method. `t0code`/`t0size`: the tier-0 code (the region the OSR frame's
 * return-address slot points into); `saved`: the RBP the OSR frame record
 * holds. Returns the record's address when the prolog says where it is and
 * it holds `saved`, inside [lo, hi); 0 otherwise (the caller may scan). */
uintptr_t mdp_osr_tier0_record(uintptr_t osr_fp, uintptr_t saved, const uint8_t *t0code,
                               size_t t0size, uintptr_t lo, uintptr_t hi);

/* Whether the `before` bytes that end at `ret` (ret[-before..-1], all
 * readable; at most 8 are read) end with a call instruction, as a return
 * address's do: `call rel32` (E8), or `call r/m64` (FF /2, an optional REX
 * prefix, any ModRM/SIB/displacement form: the `call [rip+disp32]` of
 * ReadyToRun code's indirection cells, `call reg`, `call [reg+disp]`). A
 * plausibility check for an address that no method range vouches for:
 * a function pointer, or stale data, seldom follows a call; a stale return
 * address does, so it does not replace the checks that the stack moves up. */
int mdp_follows_call(const uint8_t *ret, size_t before);

#endif
