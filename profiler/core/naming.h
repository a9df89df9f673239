/* Private to profiler/core: the functions of the naming unit (codemap.c, frames.c): code versions
 * and their IL maps, a frame's text. Included by the files of this unit and of the units above it
 * (profiler/core/README.md); struct mdp_core is in base.h, the unit's own state in naming_state.h.
 */
#ifndef MDP_NAMING_H
#define MDP_NAMING_H

#include <stddef.h>
#include <stdint.h>

#include <mdtools/idmap_code.h>

#include "core/base.h"

#define MDP_MAX_TARGS 64u /* type arguments of one generic */

/* A code region of one code version. */
struct mdp_region {
    uintptr_t start;
    size_t size;
    uintptr_t version; /* start of the version's first region */
    size_t base;       /* offset of this region in the version's code */
    uint64_t serial;   /* distinguishes code placed at a reused address (codemap.c) */
    uintptr_t fn;      /* the function incarnation it belongs to */
    uint64_t fn_gen;
};

struct mdp_ilmap {
    size_t n;
    struct mdp_il_entry e[];
};

/* A function incarnation as the log names it. */
struct mdp_frame {
    int kind;
    int wait;    /* wall mode: a known managed wait (wall.c), 0 none */
    char *text;  /* "mvid:0x06......{..}<..>" or the special word */
    char *debug; /* in-process name, "?" when it could not be built */
};

/* codemap.c: the unit's state (core->naming, naming_state.h): 0, or -1
 * out of memory; freed with every code version, IL map and frame text it
 * holds (drain_lock held). */
int mdp_naming_new(mdp_core *core);
void mdp_naming_free(mdp_core *core);

/* frames.c: with drain_lock held */
const struct mdp_frame *mdp_frame_get(mdp_core *core, uintptr_t fn, uint64_t gen);
/* A managed frame's text at one address: the incarnation's text and the
 * address's IL offset ("...@0x1c"), len bytes; frame is the incarnation's
 * (kind, debug name). Cached per (ip, gen); NULL when out of memory. */
struct mdp_ipname {
    uintptr_t fn;
    int final; /* 0: the IL offset could not be known yet (no region): named again */
    int kind;  /* frame->kind, here so that a frame seen before reads one entry */
    const struct mdp_frame *frame;
    size_t len;
    char text[];
};
const struct mdp_ipname *mdp_frame_at(mdp_core *core, uintptr_t ip, uintptr_t fn, uint64_t gen);
/* Drop the cached texts of addresses (code may have moved). */
void mdp_frames_forget_texts(mdp_core *core);
/* Wall mode: the known wait (wall.c, 0 none) that the call at `ip` of
 * (fn, gen) calls, read from the method's IL at the call site's offset
 * (a wait the JIT inlined into its caller has no frame of its own);
 * cached per site. */
int mdp_frame_call_wait(mdp_core *core, uintptr_t ip, uintptr_t fn, uint64_t gen);
/* Classify an address no function range covered at sample time; may fill
 * *fn, *gen when the code turns out to be managed. */
int mdp_frame_classify_ip(mdp_core *core, uintptr_t ip, uintptr_t *fn, uint64_t *gen);
/* "@0x..." IL offset suffix for ip in (fn, gen), or "". 1 when that is
 * final, 0 when the code's region is not known yet (it may be later). */
int mdp_frame_il(mdp_core *core, uintptr_t ip, uintptr_t fn, uint64_t gen, char *buf, size_t len);
/* Descriptor text of a class, after fetching what the map lacks. */
int mdp_class_desc(mdp_core *core, uintptr_t cls, char *buf, size_t len);
/* Drop what an unload may make stale (unload events, drain_lock held):
 * the kinds of addresses no code covered, wall mode's wait sites, the
 * classes' descriptor texts. */
void mdp_frames_forget_ips(mdp_core *core);
/* A copy with TAB, newline and backslash escaped (malloc), or NULL. */
char *mdp_escape_name(const char *s);
void mdp_frames_free(mdp_core *core);
extern const char *const mdp_frame_kind_text[FK_COUNT];

/* codemap.c */
/* The region of the map's code range r (a range the map's ip lookup
 * found), into *out: 0, or -1 while that is not known yet. */
int mdp_code_region_get(mdp_core *core, const mdt_idmap_code_range *r, struct mdp_region *out);
/* The IL map of a version (cached; drain_lock held), NULL if none. */
const struct mdp_ilmap *mdp_code_ilmap(mdp_core *core, const struct mdp_region *r);
void mdp_code_forget_ilmaps(mdp_core *core);
void mdp_code_free(mdp_core *core);

/* frames.c */
void mdp_mvid_hex(char out[33], const uint8_t mvid[16]);

#endif
