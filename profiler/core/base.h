/* Private to profiler/core: the bottom of its stack of units (README.md).
 * struct mdp_core (what every unit reads, the base's and the sampler's
 * state, and a pointer to each other unit's state, which that unit
 * defines: README.md, "State") with the types and limits every unit
 * shares, and the functions of the base unit (maps.c, state.c, logfile.c,
 * notes.c); hash.h, ring.h, unwind.h, channel.h and native.h are the base
 * unit's other headers. Each unit above has its own header (sampler.h,
 * naming.h, aggregate.h, drain.h, modes.h, log.h, lifetime.h) that
 * includes this one.
 *
 * Locks, innermost last; none is ever taken in the signal handler:
 *   drain   (recursive) serializes draining, the frame cache, the records
 *           and the IL maps; unload events hold it while they drain and
 *           apply the unload, so no sample is named after its code died.
 *           Draining may call the adapter (miss callbacks), whose events
 *           take the leaf locks below.
 *   mods    the module side table (leaf; its holder may wait for handlers
 *           to leave, mdp_exec_publish: handlers take no lock).
 *   code    code regions -> code versions (leaf).
 *   threads the sampler's slot allocation and the threads' names; its
 *           holder may add a note (notes_lock, a leaf). */
#ifndef MDP_BASE_H
#define MDP_BASE_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include <mdtools/assembly.h>
#include <mdtools/image.h>

#include "core/core.h"
#include "core/hash.h"
#include "core/ring.h"
#include "core/unwind.h"

#define MDP_MAX_THREADS 4096u     /* sampler slots (threads alive at once) */
#define MDP_RING_WORDS (1u << 14) /* 128 KiB of samples per thread */
#define MDP_DRAIN_MS 20u          /* drain period (default) */
/* drain.c: a drain thread whose passes find the rings nearly empty doubles
 * its period up to this (a process that waits costs ~3 wakeups a second,
 * not 50); a ring half full wakes it at once (mdp_drain_poke). */
#define MDP_DRAIN_MAX_MS 320u
#define MDP_MAX_DEPTH 255u /* frames per sample (the log's limit) */
/* Pseudo IDs, below any address the runtime hands out (the zero page):
 * primitive classes (mdp_ev_prim_class) and their module. */
#define MDP_PRIM_CLASS_BASE 0x100u
#define MDP_PRIM_MODULE 0x17u

/* A sample in a ring: a header word, the time it was taken
 * (CLOCK_MONOTONIC_COARSE in ns, when MDP_SAMPLE_HAVE_TIME), the
 * interrupted stack pointer when the thread's stack bounds are not known
 * yet, the thread's state in wall mode (MDP_SAMPLE_WALL), then (ip,
 * function, gen) per frame, leaf first. */
#define MDP_SAMPLE_MAGIC 0x5a4dull
#define MDP_SAMPLE_HAVE_SP 0x01u   /* a stack-pointer word follows the header */
#define MDP_SAMPLE_CUT 0x02u       /* the walk stopped at the depth limit */
#define MDP_SAMPLE_HAVE_TIME 0x04u /* a time word follows the header (the handler's: always) */
#define MDP_SAMPLE_WALL                                                                            \
    0x08u /* wall mode: a state word (wall.c) follows the time and stack pointer */
/* flags bits 4-7: what the runtime was doing on the thread (native.h) */
#define MDP_SAMPLE_ACT(flags) (((flags) >> 4) & 15u)
/* weight: timer periods the sample stands for (1 + the timer's overrun) */
#define MDP_SAMPLE_HDR(nframes, flags, weight)                                                     \
    (MDP_SAMPLE_MAGIC << 48 | (uint64_t)(weight) << 16 | (uint64_t)(flags) << 8 | (nframes))

enum { SLOT_FREE = 0, SLOT_ACTIVE = 1, SLOT_RETIRED = 2 };

/* The handler's walk cache (sampler.c), one per slot: what a walk learnt
 * of a return address, the map's answer for it and its method's unwind
 * step, valid while the map's code counters say so. Direct-mapped, a cache
 * line an entry, mapped beside the slot's ring when the slot is first
 * taken and cleared at each registration: the handler only reads and
 * overwrites entries, never allocates. */
#define MDP_WCACHE_ENTRIES 512u
struct mdp_wentry {
    uintptr_t ip;    /* the address looked up (a return address - 1); 0: empty */
    uint64_t epoch;  /* mdt_idmap_code_removals() (fn set) or _changes() (fn 0), even */
    uintptr_t fn;    /* FunctionID; 0: the map has no range there */
    uint64_t gen;    /* its generation */
    uintptr_t start; /* the range */
    uint64_t size;
    mdp_unwind_step step; /* fn set: its prolog's step (kind 0: not decoded yet) */
} __attribute__((aligned(64)));
/* The entries the thread's last walk used, in order: the next walk
 * prefetches them all at its start, so that their cache misses (the
 * thread ran 1-4 ms of its own work since) overlap instead of coming one
 * per frame, each behind the previous frame's stack read (a thread's
 * callers change little from one sample to the next). Prefetching the
 * stack and the ring's lines as well was slower (bench/profiler/README.md,
 * "the handler's cold walk"). */
#define MDP_WCACHE_LAST 64u
struct mdp_wcache {
    struct mdp_wentry e[MDP_WCACHE_ENTRIES];
    uint16_t last[MDP_WCACHE_LAST];
    unsigned nlast;
    /* the map's code counters at the last walk: a walk uses the cache only
     * when the removals have not moved since, and keeps misses only when
     * the changes have not (sampler.c: while code comes and goes, every
     * entry would be filled in vain) */
    uint64_t seen_removals, seen_changes;
};

struct mdp_slot {
    _Atomic int state;
    _Atomic int busy; /* handlers inside (Dekker with state) */
    _Atomic int tid;
    _Atomic uintptr_t stack_lo, stack_hi; /* 0: not known yet */
    uintptr_t runtime_thread;
    timer_t timer;
    int has_timer;
    /* perfclock.c: the thread's perf_events clock, its fd + 1 (0: none),
     * the thread's CPU time (ns) the samples so far stand for (the
     * handler's), the periods samples stood for beyond one each, signals
     * that came before a whole period (no sample) */
    _Atomic int perf_fd;
    uint64_t perf_last;
    _Atomic uint64_t perf_extra, perf_short;
    uint32_t perf_every; /* periods between its signals: 1, more for a moved thread */
    /* drain.c, perfclock.c (the drain thread alone): the signals and
     * periods drained from the thread since its window last started, to
     * move a thread its timer comes seldom to (mdp_perf_move_sparse) */
    uint64_t win_signals, win_periods;
    unsigned retired_cycles;
    mdp_ring ring;
    uint64_t *ringbuf;
    struct mdp_wcache *wcache; /* sampler.c; NULL: walks look everything up */
    _Atomic uint64_t samples, drops, stray;
    _Atomic uint64_t wall_seen; /* wall.c: the wall tick of the thread's last sample */
    /* activity.c: what the runtime is doing on the thread (the handler reads
     * them; the thread writes act_stack and act_exc, act_gc and act_role
     * change under threads_lock) */
    _Atomic uint32_t act_stack; /* nested activities, 4 bits a level, innermost low */
    unsigned act_depth;         /* levels pushed (the thread's own) */
    _Atomic unsigned act_gc, act_exc, act_role;
#ifdef MDP_BENCH_CLOCK
    /* bench builds only (bench/profiler/README.md, "The handler's cost"):
     * TSC ticks and CPU time spent in take_sample, its calls, frames it
     * recorded */
    _Atomic uint64_t bench_ticks, bench_cpu_ns, bench_calls, bench_frames;
#endif
};

/* What the core knows of a module beyond the map. */
/* core/maps.c: the readable memory of the image whose load address is
 * base (the mapping holding it, then the module file's own mappings that
 * follow it without a break, across the PROT_NONE gaps of a loader
 * layout; loaded, a loader layout in anonymous memory: the anonymous
 * mappings that follow, up to the header's SizeOfImage), at most max
 * ranges, adjacent ones merged; the first starts at base. 0 when base is
 * not readable. exec (NULL: not wanted) gets the readable and executable
 * ones among them (from the file, or from such a loader layout: never
 * other anonymous memory), at most max, adjacent ones merged, their
 * number in *nexec.
 * Asks /proc/self/maps (PROCMAP_QUERY where the kernel has it, else its
 * text): never from a signal handler. */
#define MDP_MAX_IMAGE_RANGES 128u /* the header page and up to 96 sections */
size_t mdp_image_ranges(const void *base, int loaded, mdt_mem_range *out, size_t max,
                        mdt_mem_range *exec, size_t *nexec);
/* The read-write mappings holding addrs[0..n) (sorted ascending; a
 * thread's stack pointer): lo[i] and hi[i], 0 where none holds addrs[i].
 * One pass over /proc/self/maps whichever way it is read (maps.c). */
void mdp_rw_mappings_at(const uintptr_t *addrs, size_t n, uintptr_t *lo, uintptr_t *hi);
/* Tests: read /proc/self/maps as text even where the kernel answers
 * PROCMAP_QUERY (maps.c), as older kernels make it. */
void mdp_maps_text_only(int on);

struct mdp_module {
    uintptr_t id;
    const void *base;
    char *path;
    unsigned flags;
    void *ctx; /* talloc context of the image (NULL: no image) */
    mdt_image *image;
    mdt_identity identity; /* borrowed from the image: only while the module lives */
    int has_identity;
    char *name; /* the assembly's name (malloc): its #module line, after an unload too */
    uint16_t version[4];
    uint8_t mvid[16];
    int corelib;
    uint32_t prim_tokens[24]; /* corelib: TypeDef of each primitive, 0 absent */
    uint8_t prim_codes[24];
    mdt_mem_range *exec; /* the image's executable mappings (malloc), nexec of them */
    size_t nexec;
    /* its ReadyToRun RuntimeFunctions section in the image (checked to lie
     * in a readable range): nrf (begin, end, unwind) RVA triples, sorted */
    const uint32_t *rf;
    uint32_t nrf;
    /* its ReadyToRun debug info (codemap.c: opened on the drain thread at
     * the first IL map of its code, a talloc context of its own, freed with
     * the module), and whether that was tried */
    struct mdt_r2r_debug *r2r_debug;
    int r2r_debug_tried;
    /* its ReadyToRun entry points by code (codemap.c: opened on the drain
     * thread at the first miss in its code, freed with the module), and
     * whether that was tried */
    struct mdt_r2r_methods *r2r_methods;
    int r2r_methods_tried;
    unsigned r2r_misses; /* misses in its code before that (MDP_R2R_OPEN_AFTER) */
};

enum mdp_frame_kind {
    FK_MANAGED = 0,
    FK_NATIVE,
    FK_DYNAMIC,
    FK_STUB,
    FK_UNMAPPED,
    FK_UNLOADED,
    FK_NOMVID,
    FK_COUNT
};

/* The #stats counters (records.c writes them): the drain, the modes and
 * the lifetime add to them, drain_lock held. In struct mdp_core itself
 * (core->stats), not behind a pointer: the drain counts every frame, and
 * a pointer's load there cost it 2 instructions a frame (0.5%). */
struct mdp_stats {
    uint64_t samples, signals, late, frames, kind[FK_COUNT], cut, drops_other;
    uint64_t unwalked; /* samples of the leaf alone: the thread's stack bounds were not known */
    uint64_t native_module;            /* native frames named by an ELF object */
    uint64_t act[16];                  /* samples by activity (native.h) */
    uint64_t heap_walks, heap_walk_ns; /* heap.c */
    /* codemap.c: code versions' IL maps read from the mapped image, asked
     * of the runtime, and (ilmaps=check) the two compared, with the CPU
     * time of each way */
    uint64_t ilmap_image, ilmap_runtime, ilmap_agree, ilmap_disagree;
    uint64_t ilmap_image_ns, ilmap_runtime_ns;
    /* codemap.c: sampled addresses nobody reported (the map's misses)
     * named from a ReadyToRun image's entry points, named by the runtime,
     * and (ilmaps=check) the two compared, with the CPU time of each way */
    uint64_t r2rname_image, r2rname_runtime, r2rname_agree, r2rname_disagree;
    uint64_t r2rname_image_ns, r2rname_runtime_ns, r2rname_open_ns;
    unsigned drain_cycles;        /* the drain thread's passes (drainloop.c) */
    _Atomic uint64_t class_loads; /* classes the runtime loaded (modules.c, any thread) */
#ifdef MDP_BENCH_CLOCK
    /* bench builds only: the TSC when the core started (to convert ticks
     * to ns), what two back-to-back reads of the thread's CPU clock measure
     * (ns, to subtract per handler call), the drain thread's CPU time and
     * the part of it spent in mdp_drain_all */
    uint64_t bench_tsc0;
    double bench_clock_ns;
    _Atomic uint64_t bench_drain_ns, bench_drain_all_ns, bench_drain_minflt;
    /* the load callbacks' CPU time and calls by kind (core.h, MDP_BENCH_CALLBACK) */
    _Atomic uint64_t bench_cb_ns[MDP_BENCH_CB_N], bench_cb_calls[MDP_BENCH_CB_N];
    /* the drain's naming (frames.c, codemap.c; drain_lock): addresses
     * whose frame text was built (not found in the cache), incarnations
     * named, the address texts dropped whole (code replaced, or the cap),
     * frames no range covered at sample time that the drain classified,
     * IL maps that came unsorted */
    uint64_t bench_ipname_new, bench_frame_new, bench_ipname_flush, bench_classify,
        bench_ilmap_unsorted;
#endif
};

/* Each unit's own state, behind a pointer to a structure that unit
 * defines (README.md, "State"): base.h names them without showing them. */
struct mdp_exec_table; /* sampler.h: the handler's executable ranges */
struct mdp_naming;     /* naming_state.h: code versions, IL maps, frame caches */
struct mdp_aggregate;  /* aggregate.c: the record tables */
struct mdp_drain;      /* drain.c */
struct mdp_thread_reg; /* threadnames.c */
struct mdp_calls;      /* modes: calls.c, alloc.c, events.c, allocstack.c */
struct mdp_alloc;
struct mdp_events;
struct mdp_allocstack;
struct mdp_writer; /* log_state.h: the log writer */
struct mdp_life;   /* lifetime.h: the drain thread, seqs held, retirement */

/* The log file (logfile.c). Written in pieces by the drain thread: what
 * ends at `end` stays; a tentative #stats line (after a termination
 * signal) starts at stats_at and is overwritten by the next write. */
struct mdp_logfile {
    int fd; /* -1: none (it could not be opened, or it is closed) */
    char path[4200];
    uint64_t end;     /* bytes that stay */
    int64_t stats_at; /* offset of a tentative #stats line, or -1 */
    uint64_t size;    /* the file's size as the last write left it */
    int failed_errno; /* the first write error (reported once), 0 none */
    unsigned failures;
};

#define MDP_NOTES_MAX 65536u /* bytes of `#` lines waiting for the next write */

/* The core: what every unit reads (settings, the runtime's calls, the
 * map, the clock, the process, the module side table, the locks), the
 * base unit's state (the log file, the notes, the launcher's channel, the
 * ELF objects, the drain thread's wake-ups), the sampler's (the handler
 * reads it), and a pointer to each other unit's state. */
struct mdp_core {
    mdp_config cfg;
    mdp_runtime_ops ops;
    _Atomic int ops_live; /* 0 after the runtime is gone: no more calls into it */
    mdt_idmap *map;
    int pid, ppid;
    char cmd[1100]; /* the command line, percent-encoded (header, channel) */
    struct timespec start_mono;
    _Atomic int finished;

    pthread_mutex_t drain_lock;
    struct mdp_stats stats; /* drain_lock */

    /* the module side table (state.c reads it, modules.c fills it): live
     * modules by ID, and those unloaded (their #module lines) */
    pthread_mutex_t mods_lock;
    mdp_pmap modules; /* id -> struct mdp_module */
    struct mdp_module **graveyard;
    size_t ngraveyard, graveyard_cap;

    /* state.c: the drain thread's wake-ups. drain_seq is the futex word it
     * waits on (bumped by every wake); drain_napping is 1 while it waits and
     * may be woken early, drain_poked says work came that wants the base
     * period back. */
    _Atomic uint32_t drain_seq;
    _Atomic int drain_napping, drain_poked;
    _Atomic int drain_tid; /* threads.c, wall.c: the drain thread is not sampled */

    /* base: the log file (logfile.c), diagnostics (notes.c: from any
     * thread), the launcher (channel.h), native frames' ELF objects
     * (elfmap.c, drain_lock) */
    struct mdp_logfile log;
    pthread_mutex_t notes_lock;
    char *notes; /* pending `# ...\n` lines (malloc), notes_len bytes */
    size_t notes_len;
    uint64_t notes_dropped;
    int channel; /* socket to the launcher, -1 none */
    struct mdp_elfmap *elf;

    /* sampler */
    struct mdp_slot *slots;
    pthread_mutex_t threads_lock;
    _Atomic uint64_t threads_seen;
    int sampling;
    /* sample mode's CPU clock (perfclock.c): what new threads get
     * (MDP_CLOCK_PERF or MDP_CLOCK_TIMER), perf_user when the event counts
     * user time only, its period in ns, why the timer (a perf clock
     * refused: ""), the cap on fds, the fds open, threads beyond the cap,
     * threads that got each clock */
    int clock, perf_user;
    int perf_ok; /* perf_event_open works here (asked unless --clock timer) */
    uint64_t perf_period;
    char clock_why[160];
    unsigned perf_cap;
    _Atomic unsigned perf_open;
    _Atomic uint64_t perf_capped, perf_threads, timer_threads;
    _Atomic uint64_t perf_moved; /* threads moved from a seldom timer (perfclock.c) */
    int sparse_noted;            /* the note of a timer that came seldom, written (perfclock.c) */
    int move_noted;              /* the note of threads moved to the perf clock, written */
    struct mdp_exec_table
        *_Atomic exec; /* written under mods_lock, read by the handler (execmap.c) */
    /* wall mode (wall.c): ticks of 1/rate s since the start (the wall
     * thread writes, the handler reads), the wall thread's TID (not
     * sampled) and its state */
    _Atomic uint64_t wall_ticks;
    _Atomic int wall_tid;
    struct mdp_wall *wall;
#define MDP_GC_SLOTS 8u
    struct mdp_slot *gc_slots[MDP_GC_SLOTS]; /* activity.c: threads collecting (threads_lock) */
    _Atomic uint64_t act_serial;             /* activity.c: this core among the process's */
    unsigned ngc_slots;
    struct mdp_thread_reg *threads; /* threadnames.c: the threads the log names (threads_lock) */

    /* the units above */
    struct mdp_naming *naming;
    struct mdp_aggregate *agg;
    struct mdp_drain *drain;
    struct mdp_calls *calls;
    struct mdp_alloc *alloc;
    struct mdp_events *events;         /* events.c: throws and waits */
    struct mdp_allocstack *allocstack; /* allocstack.c: alloc mode's sampled stacks */
    struct mdp_writer *writer;
    struct mdp_life *life;
};

/* state.c: the module side table (modules.c) */
struct mdp_module *mdp_module_get(mdp_core *core, uintptr_t id); /* mods_lock held */

/* state.c: wake the drain thread now (a stop, a termination signal's write).
 * Async-signal-safe: an atomic add and a futex system call. */
void mdp_drain_wake(mdp_core *core);
/* Work came that the drain should not leave for a long period (a ring half
 * full, code to record at the next tick): back to the base period, and
 * woken now if it was waiting longer. Async-signal-safe, no lock, no
 * allocation; a system call only when the drain was waiting. */
void mdp_drain_poke(mdp_core *core);

/* logfile.c: the log's name and file. */
/* Open the log this process writes (cfg.output with %p replaced by the
 * pid; a process other than the first writes NAME.PID.EXT beside it and
 * never opens another's log: O_EXCL). 0, or -1 with a message. */
int mdp_logfile_open(mdp_core *core, char *err, size_t errlen);
/* Write len bytes, of which the first `keep` stay and the rest is a
 * tentative #stats line. drain_lock held. 0 or -1 (reported once). */
int mdp_logfile_write(mdp_core *core, const char *buf, size_t len, size_t keep);
void mdp_logfile_close(mdp_core *core);

/* notes.c: diagnostics. A note goes into the log (a `#` line, at the next
 * write) and to the launcher; mdp_log's verbose lines into the log only. */
void mdp_notes_add(mdp_core *core, const char *text);
/* The same with "#" alone before the text: a line of its own kind
 * ("thread ..." is written "#thread ..."). */
void mdp_notes_add_raw(mdp_core *core, const char *text);

/* notes.c */
/* The pending notes, moved out (malloc, *len bytes), or NULL. */
char *mdp_notes_take(mdp_core *core, size_t *len);
/* Put lines taken back in front (a write failed); takes ownership. */
void mdp_notes_restore(mdp_core *core, char *lines, size_t len);
void mdp_notes_free(mdp_core *core);
/* Send a channel message "WHAT PID REST" (REST as given). */
void mdp_channel_tell(mdp_core *core, const char *what, const char *rest);

/* state.c */
uint64_t mdp_elapsed_ms(const mdp_core *core);
/* A CLOCK_MONOTONIC(_COARSE) time in ns as ms since the core started (0
 * for a time before it). */
uint64_t mdp_mono_to_ms(const mdp_core *core, uint64_t mono_ns);
int mdp_ops_live(mdp_core *core);

#endif
