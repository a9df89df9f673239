/* Native time named: the ELF objects native frames lie in (elfmap.c) and
 * what the runtime is doing on a thread when it is sampled (activity.c).
 * Internal to the core (base.h has the slot and the core; sampler.h the
 * functions of activity.c and threads.c). */
#ifndef MDP_NATIVE_H
#define MDP_NATIVE_H

#include <stddef.h>
#include <stdint.h>

typedef struct mdp_core mdp_core;
struct mdp_slot;

/* ---- activities --------------------------------------------------------- */

/* What a thread's runtime is doing (a 4-bit code, in the sample header's
 * flags: MDP_SAMPLE_ACT). The order is the log's and batch's. */
enum mdp_activity {
    MDP_ACT_NONE = 0,
    MDP_ACT_GC,        /* a garbage collection, on the thread doing it */
    MDP_ACT_JIT,       /* JIT compilation */
    MDP_ACT_TYPELOAD,  /* loading a type */
    MDP_ACT_EXCEPTION, /* dispatching an exception (thrown, not caught yet) */
    MDP_ACT_STUB,      /* native code called from a runtime stub (drain.c) */
    MDP_ACT_COUNT
};

/* Nested begin/end pairs (JIT inside a type load, ...) of the calling
 * thread: begin pushes, end pops. Kept in a word of the thread's sampler
 * slot that its handler reads (mdp_slot_activity). Levels past the word's
 * eight are counted and popped without showing. */
#define MDP_ACT_DEPTH 8u

/* ---- ELF objects -------------------------------------------------------- */

/* Per core (drain_lock held for every call but free). */
struct mdp_elfmap;

/* A new drain pass begins: the next lookup checks once whether the
 * loader's list of objects changed (dl_iterate_phdr's counters). */
void mdp_elf_pass(mdp_core *core);
/* The frame text of a native address, `native:NAME:BUILDID+0xOFF`
 * (doc/profile-log.md), into buf (NUL-terminated); returns its length, or
 * 0 when ip lies in no loaded ELF object's executable segment (or buf is
 * too small). The object is marked used: its #elf line is owed. */
size_t mdp_elf_frame(mdp_core *core, uintptr_t ip, char *buf, size_t len);
/* The `#elf NAME:BUILDID PATH` lines (malloc, *len bytes; NULL when there
 * are none) of every object a frame used that the log has not named yet,
 * for the write being made (records.c); mdp_elf_announced then says
 * whether that write reached the log: written, they are not said again;
 * not, the next write says them again. */
char *mdp_elf_announce(mdp_core *core, size_t *len);
void mdp_elf_announced(mdp_core *core, int written);
void mdp_elf_free(mdp_core *core);

#endif
