/* The drain: empties every thread's sample ring, turns each sample into the
 * log's portable frames and adds it to the aggregated records (identical
 * stacks are counted once with their number).
 *
 * It runs on its own thread every MDP_DRAIN_MS, and synchronously inside
 * every unload event (mdp_ev_*_unload, which hold drain_lock across the
 * drain and the unload), so a sample is always named by the map as it was
 * when the sample was taken: frames of a collectible assembly's code sampled
 * before its unload keep the plug-in's names, and its addresses reused
 * afterwards never get them. Frames that no range covered at sample time
 * are classified here (native code, a stub, or managed code the map had not
 * seen yet, learnt through the miss callback). It also fills in the stack
 * bounds of threads registered from elsewhere (from the mapping that holds
 * a sampled stack pointer). The drain thread that calls it every period
 * (drainloop.c) and the events that queue stacks (events.c, through
 * the drain's events function, mdp_drain_set_events) are above it
 * (README.md). */
#define _GNU_SOURCE
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/base.h"
#include "core/growbuf.h"
#include "core/native.h"
#include "core/sampler.h"
#include "core/naming.h"
#include "core/aggregate.h"
#include "core/drain.h"

/* The unit's state (core->drain). */
struct mdp_drain {
    /* What mdp_drain_all drains besides the rings, from a unit above it
     * (events.c's queue of throws and waits); set by core.c. */
    void (*events)(mdp_core *core);
    /* The most a ring held at a drain, in 64ths of it, since the drain
     * thread last looked (drain_lock). */
    uint64_t fill;
};

int mdp_drain_new(mdp_core *core)
{
    return (core->drain = calloc(1, sizeof *core->drain)) ? 0 : -1;
}

void mdp_drain_free(mdp_core *core)
{
    free(core->drain);
    core->drain = NULL;
}

void mdp_drain_set_events(mdp_core *core, void (*events)(mdp_core *core))
{
    core->drain->events = events;
}

uint64_t mdp_drain_take_fill(mdp_core *core)
{
    uint64_t fill = core->drain->fill;
    core->drain->fill = 0;
    return fill;
}

/* v in decimal at out (20 bytes at most), its length: a sample's head
 * with snprintf was ~1,000 instructions, a tenth of a whole sample's
 * naming once frames were cached. */
static size_t put_u64(char *out, uint64_t v)
{
    char tmp[20];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    return n;
}

static struct mdp_growbuf key, dbg;

/* A sample's frames while it is named (drain_lock held: one at a time). */
struct fr {
    uintptr_t ip, fn;
    uint64_t gen;
    int kind;
    size_t elf_len; /* > 0: a native frame of an ELF object, its text in elf */
    char elf[256];
};
static struct fr frs[MDP_MAX_DEPTH];

/* Wall mode: the state of a sample (doc/profile-log.md, "Wall time") from
 * its state word (the handler's: in a system call or not) and its frames
 * (frs[0..n), kinds known): in a system call, the nearest known managed
 * wait among the first managed frames from the leaf names it (or, for the
 * nearest one, the wait its IL calls at the frame's offset: inlined into
 * it); else the
 * leaf's kind says running (managed) or native. Why not /proc: wall.c. */
static const char *wall_state(mdp_core *core, uint64_t word, unsigned n)
{
    if (!(word & MDP_WALL_SYSCALL))
        return n && frs[0].kind == FK_MANAGED ? "state:running" : "state:native";
    for (unsigned i = 0, managed = 0; i < n && managed < 8; i++) {
        if (frs[i].kind != FK_MANAGED)
            continue;
        managed++;
        const struct mdp_frame *fr = mdp_frame_get(core, frs[i].fn, frs[i].gen);
        const char *st = fr ? mdp_wall_wait_state(fr->wait) : NULL;
        /* the nearest managed frame may have inlined the wait: its call
         * site in the IL says (frames.c) */
        if (!st && fr && fr->kind == FK_MANAGED && managed == 1 && i > 0)
            st = mdp_wall_wait_state(mdp_frame_call_wait(core, frs[i].ip, frs[i].fn, frs[i].gen));
        if (st) {
            static char buf[64];
            snprintf(buf, sizeof buf, "state:%s", st);
            return buf;
        }
    }
    return "state:syscall";
}

static void drain_slot(mdp_core *core, struct mdp_slot *t)
{
    for (;;) {
        uint64_t avail = mdp_ring_avail(&t->ring);
        if (avail == 0)
            return;
        uint64_t hdr = mdp_ring_peek(&t->ring, 0);
        unsigned n = (unsigned)(hdr & 0xff), flags = (unsigned)(hdr >> 8) & 0xff;
        uint64_t weight = (hdr >> 16) & 0xffffffffu;
        /* the stack pointer's word and the state's, when there are */
        uint64_t sp_at = 1 + !!(flags & MDP_SAMPLE_HAVE_TIME);
        uint64_t state_at = sp_at + !!(flags & MDP_SAMPLE_HAVE_SP);
        uint64_t at = state_at + !!(flags & MDP_SAMPLE_WALL);
        uint64_t words = at + 3ull * n;
        if (hdr >> 48 != MDP_SAMPLE_MAGIC || n == 0 || words > avail) {
            /* cannot happen with a sound producer; drop the ring's content */
            mdp_ring_consume(&t->ring, avail);
            return;
        }
        if ((flags & MDP_SAMPLE_HAVE_SP) && !atomic_load(&t->stack_lo)) {
            uintptr_t sp = (uintptr_t)mdp_ring_peek(&t->ring, sp_at), lo, hi;
            mdp_rw_mappings_at(&sp, 1, &lo, &hi);
            if (hi) {
                atomic_store(&t->stack_hi, hi);
                atomic_store(&t->stack_lo, lo);
            }
        }
        if (core->cfg.verbose >= 2 && core->stats.signals < 200) {
            /* MDPROFILE_VERBOSE=2: the first samples as the handler saw
             * them, into the log (never the host's stderr) */
            char line[900];
            size_t l = (size_t)snprintf(line, sizeof line,
                                        "sample %" PRIu64 " tid %d:", core->stats.signals,
                                        atomic_load(&t->tid));
            for (unsigned i = 0; i < n && l + 40 < sizeof line; i++)
                l += (size_t)snprintf(line + l, sizeof line - l, " %#" PRIx64 "/%#" PRIx64,
                                      mdp_ring_peek(&t->ring, at + 3 * i),
                                      mdp_ring_peek(&t->ring, at + 3 * i + 1));
            mdp_notes_add(core, line);
        }
        mdp_growbuf_reset(&key);
        mdp_growbuf_reset(&dbg);
        int bad = 0;
        {
            /* the record's thread and time slice come first in its key
             * (doc/profile-log.md, format 4): a record is one stack's count
             * within one slice of one thread */
            char head[48];
            uint64_t ms = (flags & MDP_SAMPLE_HAVE_TIME)
                              ? mdp_mono_to_ms(core, mdp_ring_peek(&t->ring, 1))
                              : mdp_elapsed_ms(core); /* a sample without its time: now */
            int tid = atomic_load(&t->tid);
            size_t hl = 0;
            if (tid < 0) /* never from the kernel; kept as snprintf wrote it */
                head[hl++] = '-';
            hl += put_u64(head + hl, tid < 0 ? -(uint64_t)tid : (uint64_t)tid);
            head[hl++] = ' ';
            hl += put_u64(head + hl, ms / core->cfg.slice_ms);
            head[hl++] = ' ';
            if (mdp_growbuf_put(&key, head, hl))
                bad = 1;
        }
        /* first what each frame is, then the leaf side's activity, then the
         * texts: the native frames from the leaf up to the first other one
         * carry what the runtime was doing (native.h), or `stub` when they
         * were called from a runtime stub */
        unsigned nnative = 0;
        for (unsigned i = 0; i < n; i++) {
            struct fr *f = &frs[i];
            f->ip = (uintptr_t)mdp_ring_peek(&t->ring, at + 3 * i);
            f->fn = (uintptr_t)mdp_ring_peek(&t->ring, at + 3 * i + 1);
            f->gen = mdp_ring_peek(&t->ring, at + 3 * i + 2);
            f->kind = FK_MANAGED;
            f->elf_len = 0;
            if (!f->fn) {
                if ((f->elf_len = mdp_elf_frame(core, f->ip, f->elf, sizeof f->elf)))
                    f->kind = FK_NATIVE;
                else
                    f->kind = mdp_frame_classify_ip(core, f->ip, &f->fn, &f->gen);
                if (f->kind == FK_MANAGED)
                    core->stats.late += weight; /* managed code the map learnt after the sample */
            }
            if (f->kind == FK_NATIVE && nnative == i)
                nnative++;
        }
        unsigned act = MDP_SAMPLE_ACT(flags);
        /* the runtime's own code called from a stub (the prestub, virtual
         * dispatch resolution): not a P/Invoke's target called from its IL
         * stub, which is the program's native time; off with the other
         * activities (--no-activities) */
        if (!act && core->cfg.activities && nnative && nnative < n &&
            frs[nnative].kind == FK_STUB &&
            !strncmp(frs[nnative - 1].elf, "native:libcoreclr.so:", 21))
            act = MDP_ACT_STUB;
        if (!nnative)
            act = 0;
        core->stats.act[act] += weight;
        if (flags & MDP_SAMPLE_WALL) {
            /* wall mode: the thread's state is the leaf (wall.c) */
            const char *st = wall_state(core, mdp_ring_peek(&t->ring, state_at), n);
            if (mdp_growbuf_put(&key, st, strlen(st)) || mdp_growbuf_put(&key, " ", 1) ||
                (core->cfg.debug_names &&
                 (mdp_growbuf_put(&dbg, st, strlen(st)) || mdp_growbuf_put(&dbg, "\t", 1))))
                bad = 1;
        }
        for (unsigned i = 0; i < n && !bad; i++) {
            struct fr *f = &frs[i];
            int kind = f->kind;
            const char *text, *debug;
            size_t textlen;
            if (kind == FK_MANAGED) {
                /* the text at this address, IL offset included (frames.c) */
                const struct mdp_ipname *e = mdp_frame_at(core, f->ip, f->fn, f->gen);
                if (!e) {
                    kind = FK_UNMAPPED;
                    text = debug = mdp_frame_kind_text[kind];
                    textlen = strlen(text);
                } else {
                    kind = e->kind;
                    text = e->text;
                    textlen = e->len;
                    /* the incarnation itself only with --debug-names: a
                     * cache line fewer a frame */
                    debug = !core->cfg.debug_names ? text
                            : e->frame->debug      ? e->frame->debug
                                                   : e->frame->text;
                }
            } else if (f->elf_len) {
                text = debug = f->elf;
                textlen = f->elf_len;
                core->stats.native_module += weight;
            } else {
                text = debug = mdp_frame_kind_text[kind];
                textlen = strlen(text);
            }
            core->stats.kind[kind] += weight;
            core->stats.frames += weight;
            if ((i && mdp_growbuf_put(&key, " ", 1)) || mdp_growbuf_put(&key, text, textlen))
                bad = 1;
            if (act && i < nnative &&
                (mdp_growbuf_put(&key, "!", 1) ||
                 mdp_growbuf_put(&key, mdp_activity_text[act], strlen(mdp_activity_text[act]))))
                bad = 1;
            if (core->cfg.debug_names && ((i && mdp_growbuf_put(&dbg, "\t", 1)) ||
                                          mdp_growbuf_put(&dbg, debug, strlen(debug))))
                bad = 1;
        }
        if ((flags & MDP_SAMPLE_CUT) && !bad) {
            /* the stack goes on past the depth limit: say so at its root
             * (within the log's 255 frames, in place of the last one) */
            if (n + !!(flags & MDP_SAMPLE_WALL) >= MDP_MAX_DEPTH) {
                char *sp = strrchr(key.s, ' ');
                key.len = sp ? (size_t)(sp - key.s) : 0;
                if (core->cfg.debug_names && (sp = strrchr(dbg.s, '\t')))
                    dbg.len = (size_t)(sp - dbg.s);
            }
            if (mdp_growbuf_put(&key, " truncated", 10) ||
                (core->cfg.debug_names && mdp_growbuf_put(&dbg, "\ttruncated", 10)))
                bad = 1;
            core->stats.cut += weight;
        }
        mdp_ring_consume(&t->ring, words);
        core->stats.signals++;
        core->stats.samples += weight;
        if (!(flags & MDP_SAMPLE_WALL)) {
            t->win_signals++;
            t->win_periods += weight;
        }
        if (flags & MDP_SAMPLE_HAVE_SP)
            core->stats.unwalked += weight; /* the leaf alone: no stack bounds yet */
        if (!bad)
            mdp_record_add(core, MDP_REC_STACK, key.s, key.len, weight, 0,
                           core->cfg.debug_names ? dbg.s : NULL);
    }
}

void mdp_drain_all(mdp_core *core)
{
    if (core->drain->events) /* throws and waits (events.c, a unit above) */
        core->drain->events(core);
    if (!core->slots)
        return;
    mdp_elf_pass(core);
    for (unsigned i = 0, used = mdp_slots_used(); i < used; i++) {
        struct mdp_slot *t = &core->slots[i];
        if (atomic_load(&t->state) != SLOT_FREE) {
            /* in 64ths of the ring */
            uint64_t fill = mdp_ring_avail(&t->ring) * 64 / (t->ring.mask + 1);
            if (fill > core->drain->fill)
                core->drain->fill = fill;
            drain_slot(core, t);
        }
    }
}

void mdp_drain_buffers_free(void)
{
    free(key.s);
    free(dbg.s);
    memset(&key, 0, sizeof key);
    memset(&dbg, 0, sizeof dbg);
}
