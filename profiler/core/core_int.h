/* Internals of the profiler core, shared by its files (see core.h).
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
#ifndef MDP_CORE_INT_H
#define MDP_CORE_INT_H

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

#define MDP_MAX_THREADS 4096u /* sampler slots (threads alive at once) */
/* sampler.c: the slots that were ever taken are [0, mdp_slots_used()); the
 * mark only grows (the slots outlive cores, for a re-attach). Every scan of
 * the slots stops there: a pass over all 4,096 slots' cache lines, twice
 * per drain pass, cost ~55 us, 50 passes a second, in any process
 * (bench/profiler/README.md). Read with acquire after threads_seen: a slot
 * made active below the mark published the mark first. */
unsigned mdp_slots_used(void);
/* Code that fills slots by hand (the benches under bench/profiler,
 * tests/profiler/test_core.c) counts slots [0, n) as taken with this. */
void mdp_slots_take(unsigned n);
#define MDP_RING_WORDS (1u << 14) /* 128 KiB of samples per thread */
#define MDP_DRAIN_MS 20u          /* drain period (default) */
/* drain.c: a drain thread whose passes find the rings nearly empty doubles
 * its period up to this (a process that waits costs ~3 wakeups a second,
 * not 50); a ring half full wakes it at once (mdp_drain_poke). */
#define MDP_DRAIN_MAX_MS 320u
#define MDP_MAX_TARGS 64u      /* type arguments of one generic */
#define MDP_MAX_DEPTH 255u     /* frames per sample (the log's limit) */
#define MDP_SEQ_SLOTS 64u      /* seqs held at once without overflow (seqs.c) */
#define MDP_RETIRE_BATCH 4096u /* unloads that trigger a retirement at once */
#define MDP_RETIRE_MS 10000u   /* else at most this often after an unload */
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

struct mdp_slot {
    _Atomic int state;
    _Atomic int busy; /* handlers inside (Dekker with state) */
    _Atomic int tid;
    _Atomic uintptr_t stack_lo, stack_hi; /* 0: not known yet */
    uintptr_t runtime_thread;
    timer_t timer;
    int has_timer;
    unsigned retired_cycles;
    mdp_ring ring;
    uint64_t *ringbuf;
    _Atomic uint64_t samples, drops, stray;
    _Atomic uint64_t wall_seen; /* wall.c: the wall tick of the thread's last sample */
    /* activity.c: what the runtime is doing on the thread (the handler reads
     * them; the thread writes act_stack and act_exc, act_gc and act_role
     * change under threads_lock) */
    _Atomic uint32_t act_stack; /* nested activities, 4 bits a level, innermost low */
    unsigned act_depth;         /* levels pushed (the thread's own) */
    _Atomic unsigned act_gc, act_exc, act_role;
    /* threadnames.c (threads_lock; the handler never reads them): the
     * runtime's name of the thread, the kernel's */
    char name[128];
    char os_name[16];
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
 * layout), at most max ranges, adjacent ones merged; the first starts at
 * base. 0 when base is not readable. exec (NULL: not wanted) gets the
 * readable and executable ones among them, from the file (never anonymous
 * memory), at most max, adjacent ones merged, their number in *nexec.
 * Reads /proc/self/maps with stdio: never from a signal handler. */
#define MDP_MAX_IMAGE_RANGES 128u /* the header page and up to 96 sections */
size_t mdp_image_ranges(const void *base, mdt_mem_range *out, size_t max, mdt_mem_range *exec,
                        size_t *nexec);

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
};

/* Executable ranges of the live modules' images, sorted (execmap.c), with
 * their module's ReadyToRun function table (rf NULL: none). */
struct mdp_exec_range {
    uintptr_t lo, hi;
    uintptr_t base;
    const uint32_t *rf;
    uint32_t nrf;
};
struct mdp_exec_table {
    size_t n;
    struct mdp_exec_range r[];
};

/* A code region of one code version. */
struct mdp_region {
    uintptr_t start;
    size_t size;
    uintptr_t version; /* start of the version's first region */
    size_t base;       /* offset of this region in the version's code */
    uint64_t serial;   /* distinguishes code placed at a reused address */
    uintptr_t fn;      /* the function incarnation it belongs to */
    uint64_t fn_gen;
};

struct mdp_ilmap {
    size_t n;
    struct mdp_il_entry e[];
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

/* A function incarnation as the log names it. */
struct mdp_frame {
    int kind;
    int wait;    /* wall mode: a known managed wait (wall.c), 0 none */
    char *text;  /* "mvid:0x06......{..}<..>" or the special word */
    char *debug; /* in-process name, "?" when it could not be built */
};

/* What a record counts; its log line starts with the kind's word
 * (records.c's record_words, doc/profile-log.md). A mode adds its kinds
 * here: each kind has a map of its own, so one stack counted as a sample
 * and as something else stays two records. */
enum mdp_rec_kind {
    MDP_REC_STACK, /* `stack`: sampled stacks (sample and wall modes) */
    MDP_REC_CALL,  /* `call`: calls of one function (calls mode) */
    MDP_REC_ALLOC, /* `alloc`: allocations of one type (alloc mode) */
    MDP_REC_THROW, /* `throw`: exceptions of one type thrown from one stack (exceptions mode) */
    MDP_REC_WAIT,  /* `wait`: waits on a managed lock from one stack, their nanoseconds (contention)
                    */
    MDP_REC_ASTACK, /* `astack`: sampled allocations of one type and stack (alloc mode) */
    MDP_REC_HEAP,   /* `heap`: live objects of one type after a gen2 GC (heap mode) */
    MDP_REC_NKINDS
};

/* One aggregated record. */
struct mdp_record {
    uint64_t count, bytes;
    uint64_t exits[3]; /* call records: leaves, tail calls, frames the unwind pass reached */
    uint64_t caught;   /* ... and of those, frames that caught the exception */
    char *debug;       /* TAB-separated names, NULL without --debug-names */
};

struct mdp_calls;
struct mdp_alloc;
struct mdp_events;
struct mdp_allocstack;

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

#define MDP_MAX_FRAMEWORKS 64u /* framework and SDK folders in the header */
#define MDP_NOTES_MAX 65536u   /* bytes of `#` lines waiting for the next write */

struct mdp_core {
    mdp_config cfg;
    mdp_runtime_ops ops;
    _Atomic int ops_live; /* 0 after the runtime is gone: no more calls into it */
    mdt_idmap *map;
    char runtime[64];
    int attach;
    int pid;
    time_t start_wall;
    struct timespec start_mono;
    _Atomic int finished;

    pthread_mutex_t mods_lock;
    mdp_pmap modules; /* id -> struct mdp_module */
    struct mdp_exec_table
        *_Atomic exec;    /* written under mods_lock, read by the handler (execmap.c) */
    char framework[4096]; /* folder of the core library's file, for the header; "" unknown */
    struct mdp_module **graveyard;
    size_t ngraveyard, graveyard_cap;

    pthread_mutex_t code_lock;
    mdp_pmap regions; /* start -> struct mdp_region */
    uint64_t region_serial;

    pthread_mutex_t drain_lock;
    mdp_pmap frames;        /* (function, gen) -> struct mdp_frame */
    mdp_pmap ipnames;       /* (ip, gen) -> struct mdp_ipname (frames.c) */
    uint64_t ipnames_epoch; /* code_epoch when ipnames was last valid */
    /* codemap.c: bumped when a region replaces another at its address */
    _Atomic uint64_t code_epoch;
    mdp_pmap ilmaps;     /* (version start, serial) -> struct mdp_ilmap */
    mdp_pmap ipkinds;    /* unattributed ip -> kind + 1 (cast) */
    mdp_pmap wait_sites; /* wall mode: (call site ip, gen) -> known wait + 1 (cast), frames.c */
    mdp_smap records[MDP_REC_NKINDS]; /* per kind: key text -> struct mdp_record */
    uint64_t stat_samples, stat_signals, stat_late, stat_frames, stat_kind[FK_COUNT], stat_cut,
        stat_drops_other;
    uint64_t
        stat_unwalked; /* samples of the leaf alone: the thread's stack bounds were not known */
    unsigned drain_cycles;
    /* drain.c: the drain thread's schedule. drain_seq is the futex word it
     * waits on (bumped by every wake); drain_napping is 1 while it waits and
     * may be woken early, drain_poked says work came that wants the base
     * period back; drain_fill is the most a ring held at a drain, in 64ths
     * of it (drain_lock), since the drain thread last looked. */
    _Atomic uint32_t drain_seq;
    /* seqs.c: the seqs callbacks hold (0 = free, 1 = taking one), the
     * takers that found no free slot, unloads applied; what the last
     * retirement used (drain thread) */
    _Atomic uint64_t seq_held[MDP_SEQ_SLOTS];
    _Atomic unsigned seq_next_slot;
    _Atomic uint64_t seq_overflow, unloads;
    uint64_t retire_below, retire_last_ms, retire_unloads, stat_retired;
    _Atomic int drain_napping, drain_poked;
    uint64_t drain_fill;
    /* What mdp_drain_all drains besides the rings, from a unit above it
     * (events.c's queue of throws and waits); set by core.c. */
    void (*drain_events)(mdp_core *core);
#ifdef MDP_BENCH_CLOCK
    /* bench builds only: the TSC when the core started (to convert ticks
     * to ns), what two back-to-back reads of the thread's CPU clock measure
     * (ns, to subtract per handler call), the drain thread's CPU time and
     * the part of it spent in mdp_drain_all */
    uint64_t bench_tsc0;
    double bench_clock_ns;
    _Atomic uint64_t bench_drain_ns, bench_drain_all_ns;
#endif

    /* sampler */
    struct mdp_slot *slots;
    pthread_mutex_t threads_lock;
    _Atomic uint64_t threads_seen;
    int sampling;

    pthread_t drain_thread;
    int drain_started;
    /* wall mode (wall.c): ticks of 1/rate s since the start (the wall
     * thread writes, the handler reads), the wall thread's TID (not
     * sampled) and its state */
    _Atomic uint64_t wall_ticks;
    _Atomic int wall_tid;
    struct mdp_wall *wall;
    _Atomic int drain_stop;

    struct mdp_calls *calls;
    struct mdp_alloc *alloc;
    struct mdp_events *events;                   /* events.c: throws and waits */
    struct mdp_allocstack *allocstack;           /* allocstack.c: alloc mode's sampled stacks */
    uint64_t stat_heap_walks, stat_heap_walk_ns; /* heap.c (drain_lock) */

    /* The incremental log (records.c, logfile.c). drain_lock serializes
     * writes; notes (diagnostics as `#` lines) come from any thread. */
    struct mdp_logfile log;
    int header_written;
    mdp_smap described;        /* MVIDs that have their #module line */
    size_t frameworks_written; /* folders in the header or a #frameworks line */
    uint64_t stat_records;     /* record lines written */
    uint64_t last_flush_ms;
    char cmd[1100]; /* the command line, percent-encoded (header, channel) */
    int ppid;
    pthread_mutex_t notes_lock;
    char *notes; /* pending `# ...\n` lines (malloc), notes_len bytes */
    size_t notes_len;
    uint64_t notes_dropped;
    /* framework and SDK folders of loaded modules (mods_lock) */
    char *frameworks[MDP_MAX_FRAMEWORKS];
    size_t nframeworks;

    /* termination signals (termsig.c) and the launcher (channel.h) */
    _Atomic int term_signal; /* the first SIGINT, SIGTERM or SIGHUP seen, 0 none */
    _Atomic uint64_t flush_req, flush_done;
    _Atomic int stop_requested; /* the attaching mdprofile said stop */
    int channel;                /* socket to the launcher, -1 none */
    char end_reason[32];

    /* Native frames named (native.h) */
    struct mdp_elfmap *elf; /* elfmap.c (drain_lock) */
#define MDP_GC_SLOTS 8u
    struct mdp_slot *gc_slots[MDP_GC_SLOTS]; /* activity.c: threads collecting (threads_lock) */
    _Atomic uint64_t act_serial;             /* activity.c: this core among the process's */
    _Atomic int drain_tid;                   /* threads.c: the drain thread is not sampled */
    unsigned ngc_slots;
    uint64_t stat_native_module; /* native frames named by an ELF object */
    uint64_t stat_act[16];       /* samples by activity (native.h) */
    mdp_pmap pending_names;      /* threadnames.c: runtime thread -> name (threads_lock) */
    /* threadnames.c, a log without the sampler (events only): runtime
     * thread -> TID, TID -> struct ev_thread (threads_lock) */
    mdp_pmap ev_tids, ev_threads;
};

/* state.c: the module side table (modules.c) */
struct mdp_module *mdp_module_get(mdp_core *core, uintptr_t id); /* mods_lock held */
/* modules.c */
void mdp_modules_free(mdp_core *core);

/* sampler.c */
int mdp_sampler_init(mdp_core *core, char *err, size_t errlen);
void mdp_sampler_stop(mdp_core *core);
void mdp_sampler_free(mdp_core *core);
/* Wait until no handler is inside any slot (each slot's `busy` seen 0 once
 * since the call began), so that memory unlinked before the call (with a
 * seq_cst store) is out of every handler's reach. 0, or -1 when a handler
 * stayed inside through a long wait (a stopped thread): then free nothing
 * it might read. Never from a handler. */
int mdp_sampler_quiesce(mdp_core *core);
/* mdp_ev_thread_start with the thread's stack bounds (0: to be found from
 * its first sample) and its role (native.h: MDP_ACT_GC for a GC thread). */
int mdp_sampler_thread_start(mdp_core *core, uintptr_t runtime_thread, int tid, uintptr_t lo,
                             uintptr_t hi, unsigned role);

/* execmap.c */
/* The ReadyToRun method whose code holds ip, from its image's
 * RuntimeFunctions table (a binary search; the entry must lie inside the
 * executable range that holds ip): *start and *size, 1; 0 when ip is in
 * no such method. Async-signal-safe, as mdp_exec_return_site. */
int mdp_exec_r2r_function(const mdp_core *core, uintptr_t ip, uintptr_t *start, size_t *size);
/* Rebuild the handler's table from the live modules' executable ranges
 * and publish it; frees the old one once no handler can read it (waits
 * for handlers). mods_lock held. 0, or -1 out of memory (then no table:
 * never one that may hold an unloaded image). */
int mdp_exec_publish(mdp_core *core);
/* Whether ret may be a return address in a module image's code that the
 * map may not know: its call's last byte lies in an executable range of a
 * live module's image and the bytes before it there decode as a call
 * (mdp_follows_call). Async-signal-safe: reads the published table and at
 * most 8 bytes of that range. */
int mdp_exec_return_site(const mdp_core *core, uintptr_t ret);
void mdp_exec_free(mdp_core *core);
/* The handler's view of the process (one profiler per process). */
extern mdp_core *_Atomic mdp_sampling_core;

/* drainloop.c: the drain thread */
int mdp_drain_start(mdp_core *core, char *err, size_t errlen);
/* Ask the drain thread to stop, and wait for it unless called on it. */
void mdp_drain_stop(mdp_core *core);
/* Wait for the drain thread to have ended (detached instead when called on
 * it). */
void mdp_drain_join(mdp_core *core);
/* drain.c: drain every ring now; the caller holds drain_lock. */
void mdp_drain_all(mdp_core *core);
/* state.c: wake the drain thread now (a stop, a termination signal's write).
 * Async-signal-safe: an atomic add and a futex system call. */
void mdp_drain_wake(mdp_core *core);
/* Work came that the drain should not leave for a long period (a ring half
 * full, code to record at the next tick): back to the base period, and
 * woken now if it was waiting longer. Async-signal-safe, no lock, no
 * allocation; a system call only when the drain was waiting. */
void mdp_drain_poke(mdp_core *core);

/* frames.c: with drain_lock held */
const struct mdp_frame *mdp_frame_get(mdp_core *core, uintptr_t fn, uint64_t gen);
/* A managed frame's text at one address: the incarnation's text and the
 * address's IL offset ("...@0x1c"), len bytes; frame is the incarnation's
 * (kind, debug name). Cached per (ip, gen); NULL when out of memory. */
struct mdp_ipname {
    uintptr_t fn;
    int final; /* 0: the IL offset could not be known yet (no region): named again */
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
void mdp_frames_forget_ips(mdp_core *core);
/* A copy with TAB, newline and backslash escaped (malloc), or NULL. */
char *mdp_escape_name(const char *s);
void mdp_frames_free(mdp_core *core);
extern const char *const mdp_frame_kind_text[FK_COUNT];

/* aggregate.c: with drain_lock held. Adds to the record of kind `kind`
 * and `key` (created with `debug` as its names); returns it, NULL when
 * out of memory. */
struct mdp_record *mdp_record_add(mdp_core *core, enum mdp_rec_kind kind, const char *key,
                                  size_t keylen, uint64_t count, uint64_t bytes, const char *debug);
/* records.c: append to the log what was aggregated since the last write (the header
 * first, once; the notes; each record after the #module lines of the
 * modules it names that the log has not described yet). With `end`, a
 * #stats line saying end=END follows: the last line of the log when
 * `final`, else tentative (the next write replaces it). drain_lock held.
 * 0, or -1 when the write failed (what it held stays pending). */
int mdp_log_flush(mdp_core *core, const char *end, int final);
/* The drain thread's turn after each drain (drain_lock held): a write
 * when one is due (every flush_ms, at once after a termination signal,
 * and then after every drain), messages from the launcher. */
void mdp_log_tick(mdp_core *core);
void mdp_records_free(mdp_core *core);

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

/* threadnames.c: #thread lines. A slot taken (threads_lock held) gets the
 * name the runtime gave its thread before it started; a thread ended
 * forgets such a name; every active slot whose kernel name is new (all:
 * or changed) is announced (drain thread). */
void mdp_thread_named_start(mdp_core *core, struct mdp_slot *t);
void mdp_thread_named_end(mdp_core *core, uintptr_t runtime_thread);
void mdp_threads_name_scan(mdp_core *core, int all);
/* Without the sampler (a log of event modes alone: exceptions,
 * contention, alloc stacks), the threads the runtime reports (TID and
 * runtime thread, threads_lock taken inside), and the calling thread's
 * #thread line, written once before its first event's record (and again
 * when the runtime renames it). Any thread but a signal handler's. */
void mdp_thread_ev_started(mdp_core *core, uintptr_t runtime_thread, int tid);
void mdp_thread_ev_ended(mdp_core *core, uintptr_t runtime_thread);
void mdp_thread_event_seen(mdp_core *core, int tid);
void mdp_thread_names_free(mdp_core *core);
/* The pending notes, moved out (malloc, *len bytes), or NULL. */
char *mdp_notes_take(mdp_core *core, size_t *len);
/* Put lines taken back in front (a write failed); takes ownership. */
void mdp_notes_restore(mdp_core *core, char *lines, size_t len);
void mdp_notes_free(mdp_core *core);
/* Send a channel message "WHAT PID REST" (REST as given). */
void mdp_channel_tell(mdp_core *core, const char *what, const char *rest);

/* termsig.c: SIGINT, SIGTERM and SIGHUP end a profile, they do not lose
 * it. Installed once per process (chained to the handlers before);
 * mdp_termsig_attach makes `core` the one they flush. */
void mdp_termsig_attach(mdp_core *core);
void mdp_termsig_detach(mdp_core *core);
const char *mdp_signal_name(int sig);

/* header.c */
/* The header line (without its newline) into a malloc'ed string. */
char *mdp_header_line(mdp_core *core);
/* Note a folder managed modules are loaded from, if it is a shared
 * framework's or the SDK's (mods_lock held). */
void mdp_frameworks_note(mdp_core *core, const char *module_path);
/* Whether a folder is a shared framework's (…/shared/NAME/VERSION), in
 * the SDK (…/sdk/VERSION…) or in a pack (…/packs/NAME/VERSION…). */
int mdp_framework_folder(const char *dir, size_t len);
/* "NAME VERSION" of the module with this MVID (32 hex digits), for its
 * #module line; -1 when no module has it. */
int mdp_module_describe(mdp_core *core, const char *mvid, char *out, size_t cap);
/* The process's command line, percent-encoded and cut at cap - 1 bytes
 * (with "..." then). */
void mdp_read_cmdline(char *out, size_t cap);

/* codemap.c */
/* Copy the region starting at `start` into *out; 0 or -1. */
int mdp_code_region_get(mdp_core *core, uintptr_t start, struct mdp_region *out);
/* The IL map of a version (cached; drain_lock held), NULL if none. */
const struct mdp_ilmap *mdp_code_ilmap(mdp_core *core, const struct mdp_region *r);
void mdp_code_forget_ilmaps(mdp_core *core);
void mdp_code_free(mdp_core *core);

/* wall.c: wall-clock mode. The wall thread signals the sampled threads
 * at the rate in wall time, within the signal budget (per second). */
#define MDP_WALL_SYSCALL 0x1u /* state word: the thread was in a system call */
int mdp_wall_start(mdp_core *core, char *err, size_t errlen);
void mdp_wall_stop(mdp_core *core);
void mdp_wall_free(mdp_core *core);
/* The current wall tick (handler: the sample's weight is the ticks since
 * the slot's wall_seen). */
uint64_t mdp_wall_now(const mdp_core *core);
/* In the handler: whether ip lies in an executable segment of a loaded
 * ELF object (the wall thread's table, refreshed about once a second). */
int mdp_wall_code_signal_safe(const mdp_core *core, uintptr_t ip);
/* In the handler: the state word of the interrupted context (a ucontext_t). */
uint64_t mdp_wall_state_signal_safe(const mdp_core *core, const void *uc);
/* The wait a managed method stands for (its `Class::Method` name), 0 none;
 * the state's text in the log ("waiting:Monitor.Wait"), NULL for 0. */
int mdp_wall_wait_of(const char *name);
const char *mdp_wall_wait_state(int wait);
/* " wall.sent=N wall.failed=N" for #stats, "" when not in wall mode. */
void mdp_wall_stats(const mdp_core *core, char *buf, size_t len);
/* Whether the core samples in wall time. */
int mdp_wall_mode(const mdp_core *core);

/* calls.c, alloc.c */
int mdp_calls_init(mdp_core *core);
void mdp_calls_flush(mdp_core *core); /* drain_lock held */
void mdp_calls_free(mdp_core *core);
int mdp_alloc_init(mdp_core *core);
void mdp_alloc_flush(mdp_core *core); /* drain_lock held */
/* ObjectAllocated callbacks counted so far (drain_lock held). */
uint64_t mdp_alloc_callbacks(mdp_core *core);
void mdp_alloc_free(mdp_core *core);
/* The text of an allocated type as alloc records name it (a descriptor in
 * desc, or a special frame's word: *kind says which), for class `cls` of
 * incarnation `gen` (0: any); with debug, its in-process name (malloc, or
 * NULL). drain_lock held. */
const char *mdp_alloc_type_text(mdp_core *core, uintptr_t cls, uint64_t gen, char *desc, size_t len,
                                int *kind, char **debug);
/* allocstack.c: alloc mode's sampled stacks (with cfg.alloc_sample) */
int mdp_alloc_stacks_init(mdp_core *core);
void mdp_alloc_stacks_flush(mdp_core *core); /* drain_lock held */
/* samples kept, dropped, and the runtime's events delivered (UINT64_MAX:
 * not on the event path) */
void mdp_alloc_stacks_stats(mdp_core *core, uint64_t *samples, uint64_t *dropped, uint64_t *events);
/* The header's alloc_sample=, alloc_path=, alloc_scale= (and
 * alloc_event_mean=) keys, each after a space, into buf; its length (0:
 * no alloc stacks). */
int mdp_alloc_stacks_describe(mdp_core *core, char *buf, size_t len);
void mdp_alloc_stacks_free(mdp_core *core);

/* events.c: the exceptions and contention modes' queue of stack events;
 * mdp_events_drain names them into records (drain_lock held). */
int mdp_events_init(mdp_core *core);
void mdp_events_drain(mdp_core *core);
void mdp_events_stats(const mdp_core *core, char *buf, size_t cap);
void mdp_events_free(mdp_core *core);

/* sampler.c: free retired slots, retire those of dead threads (drain_lock
 * held; check_alive about once a second). */
void mdp_sampler_housekeeping(mdp_core *core, int check_alive);
/* drain.c: the drain's per-process buffers, freed when the core goes. */
void mdp_drain_buffers_free(void);

/* misc */
void mdp_mvid_hex(char out[33], const uint8_t mvid[16]);
uint64_t mdp_elapsed_ms(const mdp_core *core);
/* A CLOCK_MONOTONIC(_COARSE) time in ns as ms since the core started (0
 * for a time before it). */
uint64_t mdp_mono_to_ms(const mdp_core *core, uint64_t mono_ns);
int mdp_ops_live(mdp_core *core);

#endif
