/* Caller of a managed frame from its prolog and epilog (see unwind.h).
 * x86-64 encodings decoded (Intel SDM vol. 2):
 *   50+r / 41 50+r      push r64            58+r / 41 58+r   pop r64
 *   48 83 EC ib         sub rsp, imm8       48 81 EC id      sub rsp, imm32
 *   48 83 C4 ib         add rsp, imm8       48 81 C4 id      add rsp, imm32
 *   48 89 E5 / 48 8B EC mov rbp, rsp
 *   48 8D 6C 24 db      lea rbp, [rsp+disp8]
 *   48 8D AC 24 dd      lea rbp, [rsp+disp32]
 *   C5 F8 77            vzeroupper          C3               ret
 *   E8 cd               call rel32          [REX] FF /2      call r/m64
 * Nothing else is assumed; an instruction outside this list ends a prolog,
 * and in an epilog means "not in an epilog". */
#include "config.h"

#include <string.h>

#include "core/unwind.h"

static int32_t s32(const uint8_t *p)
{
    return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                     (uint32_t)p[3] << 24);
}

/* One instruction of the small set at code[0..avail): its length and its
 * effect; 0 when it is not one of them. */
enum insn { I_NONE, I_PUSH, I_POP, I_SUB, I_ADD, I_MOVRBP, I_LEARBP, I_VZU, I_RET };

MDP_HOT static int decode1(const uint8_t *c, size_t avail, int *kind, int *reg, int32_t *imm)
{
    *reg = -1;
    *imm = 0;
    if (avail >= 1 && c[0] >= 0x50 && c[0] <= 0x57) {
        *kind = I_PUSH;
        *reg = c[0] - 0x50;
        return 1;
    }
    if (avail >= 1 && c[0] >= 0x58 && c[0] <= 0x5f) {
        *kind = I_POP;
        *reg = c[0] - 0x58;
        return 1;
    }
    if (avail >= 1 && c[0] == 0xc3) {
        *kind = I_RET;
        return 1;
    }
    if (avail >= 2 && c[0] == 0x41 && c[1] >= 0x50 && c[1] <= 0x57) {
        *kind = I_PUSH;
        *reg = 8 + c[1] - 0x50;
        return 2;
    }
    if (avail >= 2 && c[0] == 0x41 && c[1] >= 0x58 && c[1] <= 0x5f) {
        *kind = I_POP;
        *reg = 8 + c[1] - 0x58;
        return 2;
    }
    if (avail >= 3 && c[0] == 0xc5 && c[1] == 0xf8 && c[2] == 0x77) {
        *kind = I_VZU;
        return 3;
    }
    if (avail >= 3 && c[0] == 0x48 &&
        ((c[1] == 0x89 && c[2] == 0xe5) || (c[1] == 0x8b && c[2] == 0xec))) {
        *kind = I_MOVRBP;
        return 3;
    }
    if (avail >= 4 && c[0] == 0x48 && c[1] == 0x83 && (c[2] == 0xec || c[2] == 0xc4)) {
        *kind = c[2] == 0xec ? I_SUB : I_ADD;
        *imm = (int8_t)c[3];
        return 4;
    }
    if (avail >= 7 && c[0] == 0x48 && c[1] == 0x81 && (c[2] == 0xec || c[2] == 0xc4)) {
        *kind = c[2] == 0xec ? I_SUB : I_ADD;
        *imm = s32(c + 3);
        return 7;
    }
    if (avail >= 5 && c[0] == 0x48 && c[1] == 0x8d && c[2] == 0x6c && c[3] == 0x24) {
        *kind = I_LEARBP;
        *imm = (int8_t)c[4];
        return 5;
    }
    if (avail >= 8 && c[0] == 0x48 && c[1] == 0x8d && c[2] == 0xac && c[3] == 0x24) {
        *kind = I_LEARBP;
        *imm = s32(c + 4);
        return 8;
    }
    *kind = I_NONE;
    return 0;
}

MDP_HOT int mdp_prolog_decode(mdp_prolog *p, const uint8_t *code, size_t size)
{
    memset(p, 0, sizeof *p);
    p->rbp_above_sp = -1;
    /* OSR prologs: mov rax, [rbp]; push rax  /  push rax; mov rbp, rsp */
    static const uint8_t osr_a[] = {0x48, 0x8b, 0x45, 0x00, 0x50};
    static const uint8_t osr_b[] = {0x50, 0x48, 0x89, 0xe5};
    static const uint8_t osr_c[] = {0x50, 0x48, 0x8b, 0xec};
    if ((size >= sizeof osr_a && memcmp(code, osr_a, sizeof osr_a) == 0) ||
        (size >= sizeof osr_b && memcmp(code, osr_b, sizeof osr_b) == 0) ||
        (size >= sizeof osr_c && memcmp(code, osr_c, sizeof osr_c) == 0)) {
        p->osr = 1;
        p->framed = 1;
        /* The rest of the setup (sub rsp, spills with long encodings this
         * decoder does not model) ends when RBP is set: find that
         * instruction's bytes in the first 96. Before it, the frame is not
         * understood. */
        p->end = (uint32_t)size;
        for (uint32_t i = 0; i + 3 <= size && i < 96; i++) {
            const uint8_t *c = code + i;
            size_t left = size - i;
            if (left >= 5 && c[0] == 0x48 && c[1] == 0x8d && c[2] == 0x6c && c[3] == 0x24) {
                p->end = i + 5;
                break;
            }
            if (left >= 8 && c[0] == 0x48 && c[1] == 0x8d && c[2] == 0xac && c[3] == 0x24) {
                p->end = i + 8;
                break;
            }
            if (c[0] == 0x48 &&
                ((c[1] == 0x89 && c[2] == 0xe5) || (c[1] == 0x8b && c[2] == 0xec))) {
                p->end = i + 3;
                break;
            }
        }
        return 0;
    }
    uint32_t off = 0, pushed = 0, rbp_depth = 0;
    while (p->n < 16 && off < size) {
        int kind, reg;
        int32_t imm;
        int len = decode1(code + off, size - off, &kind, &reg, &imm);
        if (kind == I_PUSH) {
            pushed += 8;
            if (reg == 5)
                rbp_depth = pushed;
        } else if (kind == I_SUB) {
            if (imm <= 0 || (uint32_t)imm > (1u << 20))
                return -1;
            pushed += (uint32_t)imm;
        } else if (kind == I_MOVRBP || kind == I_LEARBP) {
            /* RBP must end up at the slot where the caller's RBP was pushed:
             * then [rbp] is that RBP and [rbp + 8] the return address. */
            int32_t disp = kind == I_LEARBP ? imm : 0;
            if (!rbp_depth || disp < 0 || (int64_t)pushed - disp != (int64_t)rbp_depth)
                return -1;
            p->at[p->n] = off;
            p->sp_after[p->n] = pushed;
            p->n++;
            p->framed = 1;
            p->end = off + (uint32_t)len;
            if (kind == I_LEARBP)
                p->rbp_above_sp = disp;
            return 0;
        } else if (kind != I_VZU) {
            break;
        }
        p->at[p->n] = off;
        p->sp_after[p->n] = pushed;
        p->n++;
        off += (uint32_t)len;
    }
    if (p->n == 16 && off < size)
        return -1; /* an unusually long prolog: not sure where it ends */
    if (p->n == 0)
        /* Not a prolog this decoder knows (an OSR method's starts with
         * mov rax, [rbp]), or a method that never moves RSP: which of the
         * two cannot be told from its first instruction. */
        return -1;
    p->end = off;
    p->size = pushed;
    p->rbp_slot = (int)rbp_depth;
    return 0;
}

#ifdef MDP_ASAN
__attribute__((no_sanitize_address, noinline)) uintptr_t mdp_stack_word(uintptr_t a)
{
    return *(const uintptr_t *)a;
}
#endif

static int read_word(uintptr_t a, uintptr_t lo, uintptr_t hi, uintptr_t *w)
{
    if (a < lo || a > hi - 8 || (a & 7))
        return -1;
    *w = mdp_stack_word(a);
    return 0;
}

/* From `ip` to a ret through epilog instructions only: add rsp, pops. */
MDP_HOT static int in_epilog(const uint8_t *c, size_t avail, uint32_t *adj, int *rbp_at)
{
    uint32_t a = 0, off = 0;
    *rbp_at = -1;
    for (int i = 0; i < 12 && off < avail; i++) {
        int kind, reg;
        int32_t imm;
        int len = decode1(c + off, avail - off, &kind, &reg, &imm);
        switch (kind) {
        case I_RET: *adj = a; return 1;
        case I_POP:
            if (reg == 5)
                *rbp_at = (int)a;
            a += 8;
            break;
        case I_ADD:
            if (imm <= 0 || (uint32_t)imm > (1u << 20))
                return 0;
            a += (uint32_t)imm;
            break;
        case I_VZU: break;
        default: return 0;
        }
        off += (uint32_t)len;
    }
    return 0;
}

/* A decoded prolog's step for frames past its setup (an RSP frame is at
 * most 16 instructions of at most 2^20 bytes each: it fits 32 bits). */
MDP_HOT static void step_from(mdp_unwind_step *s, const mdp_prolog *p)
{
    memset(s, 0, sizeof *s);
    if (p->osr) {
        s->kind = MDP_STEP_OSR;
    } else if (p->framed) {
        s->kind = MDP_STEP_RBP;
    } else {
        s->kind = MDP_STEP_RSP;
        s->size = p->size;
        s->rbp_slot = (uint32_t)p->rbp_slot;
    }
}

/* The caller of f, a frame past its prolog's setup, from the step. */
MDP_HOT static int from_step(mdp_uw *caller, const mdp_uw *f, const mdp_unwind_step *s,
                             uintptr_t lo, uintptr_t hi)
{
    uintptr_t ret, rbp;
    switch (s->kind) {
    case MDP_STEP_OSR:
        if (f->fp < f->sp || read_word(f->fp, lo, hi, &rbp))
            return 0;
        *caller = (mdp_uw){0, f->fp + 16, rbp};
        return 3;
    case MDP_STEP_RBP:
        if (f->fp < f->sp || read_word(f->fp + 8, lo, hi, &ret) || read_word(f->fp, lo, hi, &rbp))
            return 0;
        *caller = (mdp_uw){ret, f->fp + 16, rbp};
        return 2;
    case MDP_STEP_RSP:
        if (read_word(f->sp + s->size, lo, hi, &ret))
            return 0;
        rbp = f->fp;
        if (s->rbp_slot && read_word(f->sp + s->size - s->rbp_slot, lo, hi, &rbp))
            return 0;
        *caller = (mdp_uw){ret, f->sp + s->size + 8, rbp};
        return 1;
    default: return 0;
    }
}

MDP_HOT int mdp_unwind_managed(mdp_uw *caller, const mdp_uw *f, const uint8_t *code, size_t size,
                               int leaf, uintptr_t lo, uintptr_t hi)
{
    uintptr_t start = (uintptr_t)code;
    if (f->ip < start || f->ip - start >= size)
        return 0;
    uint32_t off = (uint32_t)(f->ip - start);
    uintptr_t ret, rbp;
    if (leaf) {
        uint32_t adj;
        int rbp_at;
        if (in_epilog(code + off, size - off, &adj, &rbp_at)) {
            if (read_word(f->sp + adj, lo, hi, &ret))
                return 0;
            rbp = f->fp;
            if (rbp_at >= 0 && read_word(f->sp + (uint32_t)rbp_at, lo, hi, &rbp))
                return 0;
            *caller = (mdp_uw){ret, f->sp + adj + 8, rbp};
            return 1;
        }
    }
    mdp_prolog p;
    int decoded = mdp_prolog_decode(&p, code, size) == 0;
    /* OSR code is jumped to from the patchpoint helper, not called: in its
     * prolog, its first instruction included, the word at RSP is the
     * patchpoint call's return into the tier-0 frame of the same
     * invocation (which would show the method twice) and RBP is still that
     * frame's: not understood here, so the frame-pointer chain gives the
     * tier-0 frame's caller */
    if (decoded && p.osr && leaf && off < p.end)
        return 0;
    if (leaf && off == 0) {
        /* nothing has run yet: the return address is where the call put it */
        if (read_word(f->sp, lo, hi, &ret))
            return 0;
        *caller = (mdp_uw){ret, f->sp + 8, f->fp};
        return 1;
    }
    if (!decoded)
        return 0;
    if (leaf && off < p.end) {
        /* stopped inside the prolog: undo what has run */
        uint32_t done = 0;
        int boundary = off == 0;
        for (uint32_t i = 0; i < p.n; i++) {
            if (p.at[i] < off)
                done = p.sp_after[i];
            if (p.at[i] == off)
                boundary = 1;
        }
        if (!boundary || read_word(f->sp + done, lo, hi, &ret))
            return 0;
        *caller = (mdp_uw){ret, f->sp + done + 8, f->fp};
        return 1;
    }
    mdp_unwind_step s;
    step_from(&s, &p);
    return from_step(caller, f, &s, lo, hi);
}

MDP_HOT void mdp_unwind_step_of(mdp_unwind_step *s, const uint8_t *code, size_t size)
{
    mdp_prolog p;
    if (mdp_prolog_decode(&p, code, size) != 0) {
        memset(s, 0, sizeof *s);
        s->kind = MDP_STEP_NONE;
        return;
    }
    step_from(s, &p);
}

MDP_HOT int mdp_unwind_caller(mdp_uw *caller, const mdp_uw *f, const mdp_unwind_step *s,
                              uintptr_t start, size_t size, uintptr_t lo, uintptr_t hi)
{
    if (f->ip < start || f->ip - start >= size || s->kind == MDP_STEP_NONE)
        return 0;
    return from_step(caller, f, s, lo, hi);
}

uintptr_t mdp_osr_tier0_record(uintptr_t osr_fp, uintptr_t saved, const uint8_t *t0code,
                               size_t t0size, uintptr_t lo, uintptr_t hi)
{
    mdp_prolog p;
    uintptr_t w;
    if (mdp_prolog_decode(&p, t0code, t0size) != 0 || !p.framed || p.osr || p.rbp_above_sp < 0)
        return 0;
    uintptr_t rec = osr_fp + 16 + (uint32_t)p.rbp_above_sp;
    if (rec < osr_fp || rec > hi - 16 || read_word(rec, lo, hi, &w) || w != saved)
        return 0;
    return rec;
}

/* The length of a `call` at c when it is one and fits in avail bytes, else 0. */
static size_t call_len(const uint8_t *c, size_t avail)
{
    if (avail >= 5 && c[0] == 0xe8)
        return 5;
    size_t n = avail >= 1 && (c[0] & 0xf0) == 0x40 ? 1 : 0; /* REX */
    if (n + 2 > avail || c[n] != 0xff || ((c[n + 1] >> 3) & 7) != 2)
        return 0;
    unsigned mod = c[n + 1] >> 6, rm = c[n + 1] & 7;
    n += 2;
    if (mod == 3)
        return n;
    if (rm == 4) { /* a SIB byte; base 101 with mod 00: disp32, no base */
        if (n + 1 > avail)
            return 0;
        if (mod == 0 && (c[n] & 7) == 5)
            n += 4;
        n++;
    } else if (mod == 0 && rm == 5) {
        n += 4; /* [rip + disp32] */
    }
    n += mod == 1 ? 1 : mod == 2 ? 4 : 0;
    return n <= avail ? n : 0;
}

int mdp_follows_call(const uint8_t *ret, size_t before)
{
    for (size_t len = 2; len <= 8 && len <= before; len++)
        if (call_len(ret - len, len) == len)
            return 1;
    return 0;
}
