/* mdprofile core: the runtime-independent half of the profiler.
 *
 * A runtime adapter (profiler/coreclr/ for CoreCLR; a Mono adapter would be
 * another) turns the runtime's callbacks into the events below. The core
 * keeps the runtime-ID maps of libmdtools (<mdtools/idmap.h>), opens each
 * module's image where the loader put it, runs the CPU-time sampler and its
 * drain thread, counts calls and allocations, and writes the log of
 * doc/profile-log.md, in which every frame is a module MVID plus metadata
 * tokens and portable type-argument descriptors: nothing a runtime ID.
 *
 * Sequence numbers: an adapter takes mdp_seq() on entry to every callback,
 * before it asks the runtime anything, and passes it to the event; an
 * enumeration (attach catch-up) takes one seq before it starts and passes
 * that for each item. The maps then let the newest information win
 * ("CLR V4: Profiler Attach Part 2").
 *
 * Threads: events may come from any thread, concurrently. None may be sent
 * from a signal handler. The sampler's handler is the only code of the core
 * that runs in a signal handler; it allocates nothing, takes no lock and
 * calls only async-signal-safe lookups of the map. */
#ifndef MDP_CORE_H
#define MDP_CORE_H

#include <stddef.h>
#include <stdint.h>

#include <mdtools/idmap.h>

/* What to profile: a set of these bits (`--mode sample,exceptions`).
 * sample and wall exclude each other (one timer per thread); calls
 * excludes the rest (its enter hooks dwarf what they would measure). */
enum mdp_mode {
    MDP_MODE_SAMPLE = 1u << 0,     /* CPU-time stack samples */
    MDP_MODE_CALLS = 1u << 1,      /* exact call counts (enter hooks) */
    MDP_MODE_ALLOC = 1u << 2,      /* allocations per type */
    MDP_MODE_EXCEPTIONS = 1u << 3, /* thrown exceptions per (type, stack) */
    MDP_MODE_WALL = 1u << 4,       /* wall-time stack samples with thread states */
    MDP_MODE_CONTENTION = 1u << 5, /* waits on managed locks */
    MDP_MODE_HEAP = 1u << 6,       /* live objects per type after gen2 GCs */
};
/* The modes whose stacks the sampler's signal handler takes (one per thread). */
#define MDP_MODES_SAMPLED (MDP_MODE_SAMPLE | MDP_MODE_WALL)
/* The modes this build implements; a name outside it is refused. */
#define MDP_MODES_BUILT                                                                            \
    (MDP_MODE_SAMPLE | MDP_MODE_CALLS | MDP_MODE_ALLOC | MDP_MODE_WALL | MDP_MODE_EXCEPTIONS |     \
     MDP_MODE_CONTENTION | MDP_MODE_HEAP)
/* The modes a profiler attached to a running process can have: the
 * runtime grants enter hooks and allocation callbacks only at startup. */
#define MDP_MODES_ATTACH (MDP_MODE_SAMPLE | MDP_MODE_WALL)

/* Parse a comma list of mode names (sample, calls, alloc, exceptions, wall,
 * contention, heap), len bytes, into *modes. Returns 0, or -1 with a
 * message in err naming the word for an unknown or unbuilt mode, an empty
 * list or a combination that cannot run. */
int mdp_mode_parse(const char *text, size_t len, unsigned *modes, char *err, size_t errlen);
/* The comma list of `modes`, in the order above, into buf. Returns its
 * length, or -1 when buf is too small. */
int mdp_mode_format(unsigned modes, char *buf, size_t len);

/* Settings. From the environment at startup (mdp_config_from_env) or from
 * the attach request's client data (mdp_config_parse); doc/mdprofile.1
 * lists both. */
typedef struct mdp_config {
    unsigned modes;       /* a set of enum mdp_mode */
    unsigned rate;        /* samples per second of thread CPU time (1..100000) */
    unsigned slice_ms;    /* sample records: the time slice, ms since the start (1000) */
    unsigned max_depth;   /* frames per sample (1..255) */
    char output[4096];    /* log path; "" = mdprofile.PID.log in the cwd */
    int debug_names;      /* add the in-process names to every record */
    unsigned duration_ms; /* 0 = until the process ends */
    unsigned max_samples; /* attach: end once this many samples are counted (0 = no limit) */
    int elt_slow;         /* calls mode: WithInfo C hooks instead of the asm ones */
    int verbose;          /* diagnostics as `#` lines of the log (1), and raw samples (2) */
    unsigned drain_ms; /* drain period (tests lengthen it to make unload-time draining visible) */
    unsigned flush_ms; /* how often the log gets what was aggregated since the last write */
    int first_pid;     /* the launcher's child: the process that writes `output` itself (0: none) */
    char notify[108];  /* the launcher's socket (channel.h), "" none */
    int activities;    /* track per thread: 0 nothing, 1 GC, JIT and type loads (default),
                        * 2 exceptions too (the runtime's exception events cost) */
    int all_threads;   /* sample every thread of the process, not only the runtime's (default 1) */
    unsigned
        wall_budget; /* wall mode: signals a second at most (MDP_WALL_BUDGET; 0 counts as it) */
#define MDP_WALL_BUDGET 2000u
    unsigned alloc_sample; /* alloc mode: a stack per this many bytes allocated per thread, on
                            * average (524288); 0 none */
    int alloc_path;        /* alloc stacks: MDP_ALLOC_PATH_AUTO (the runtime's AllocationSampled
                            * event where it has one) or MDP_ALLOC_PATH_CALLBACK (ObjectAllocated) */
#define MDP_ALLOC_PATH_AUTO 0
#define MDP_ALLOC_PATH_CALLBACK 1
    int ilmaps; /* where ReadyToRun code's IL maps come from (codemap.c): the mapped image,
                 * falling back to the runtime (image, the default), the runtime alone
                 * (runtime), or both, compared and counted in #stats (check) */
#define MDP_ILMAPS_IMAGE 0
#define MDP_ILMAPS_RUNTIME 1
#define MDP_ILMAPS_CHECK 2
    int r2rnames; /* who names a sampled ReadyToRun address that no callback reported
                   * (coreclr/record.c): the runtime (MDP_R2RNAMES_RUNTIME, the default: on a
                   * `dotnet build` it costs less), or the image's entry points first
                   * (MDP_R2RNAMES_IMAGE, codemap.c); ilmaps=check asks both either way */
#define MDP_R2RNAMES_RUNTIME 0
#define MDP_R2RNAMES_IMAGE 1
    int clock; /* sample mode's CPU clock: MDP_CLOCK_ADAPTIVE (the default: the
                * CPU-time timer, a thread it serves badly moved to perf_events
                * where the kernel allows it), MDP_CLOCK_TIMER (the timer only),
                * MDP_CLOCK_AUTO (perf_events where the kernel allows it, else the
                * timer), MDP_CLOCK_PERF (that or no sampling) (perfclock.c) */
#define MDP_CLOCK_AUTO 0
#define MDP_CLOCK_PERF 1
#define MDP_CLOCK_TIMER 2
#define MDP_CLOCK_ADAPTIVE 3
} mdp_config;

void mdp_config_default(mdp_config *cfg);
/* The text of a clock setting (MDP_CLOCK_*), as --clock and clock= take it. */
const char *mdp_clock_setting(int clock);
/* Read MDPROFILE_MODE, _RATE, _DEPTH, _OUTPUT, _DEBUG_NAMES, _DURATION,
 * _SAMPLES, _ELT, _VERBOSE, _DRAIN_MS, _FLUSH_MS, _FIRST_PID, _NOTIFY,
 * _ACTIVITIES, _THREADS, _SLICE, _WALL_BUDGET, _ALLOC_SAMPLE, _ALLOC_PATH, _ILMAPS, _R2RNAMES,
 * _CLOCK. Returns 0, or -1 with a message in err for a bad value. */
int mdp_config_from_env(mdp_config *cfg, char *err, size_t errlen);
/* Parse "key=value;key=value" (the same keys in lower case: mode, rate,
 * depth, output, debug_names, duration, samples, elt, verbose, drain_ms,
 * flush_ms, first_pid, notify, activities, threads, slice, wall_budget, alloc_sample,
 * alloc_path, ilmaps, r2rnames, clock), `len` bytes; output, when present,
 * comes last and runs to the end. */
int mdp_config_parse(mdp_config *cfg, const char *text, size_t len, char *err, size_t errlen);
/* The text form mdp_config_parse reads, into buf. Returns its length or -1
 * when buf is too small. */
int mdp_config_format(const mdp_config *cfg, char *buf, size_t len);

/* Log names (logname.c). path with every "%p" replaced by pid; -1 when
 * longer than cap - 1. */
int mdp_log_expand(char *out, size_t cap, const char *path, int pid);
/* The name a process other than the first writes: path with ".PID" before
 * the extension of its last component (".PID.N" for n > 0; ".N" for a
 * pid < 0: a name that holds the pid already); -1 when too long. */
int mdp_log_sibling_name(char *out, size_t cap, const char *path, int pid, unsigned n);

typedef struct mdp_core mdp_core;

#define MDP_IL_NO_MAPPING 0xffffffffu
#define MDP_IL_PROLOG 0xfffffffeu
#define MDP_IL_EPILOG 0xfffffffdu
struct mdp_il_entry {
    uint32_t il, start, end;
};

/* What the core may ask the adapter, always from a normal thread (the drain
 * thread or an event's thread), never from the signal handler. */
typedef struct mdp_runtime_ops {
    /* The map's miss callback: learn `id` of `kind` (enum mdt_idmap_kind;
     * for MDT_IDMAP_IP the function whose code holds that address) and send
     * the events. 0 or negative. */
    int (*miss)(void *payload, int kind, uintptr_t id);
    /* The IL-to-native map of the code version starting at `code_start`:
     * up to cap entries (il is the IL offset or one of the MDP_IL_* values;
     * start and end are native offsets from code_start, counted across the
     * version's regions in order). Returns the number of entries the map
     * has (may exceed cap: call again with more room), or negative. */
    int (*il_map)(void *payload, uintptr_t code_start, struct mdp_il_entry *out, size_t cap);
    /* Called by the drain thread every period, before it drains, with no
     * lock of the core held: the adapter's deferred work. May be NULL. */
    void (*tick)(void *payload);
    /* The log is complete (an attached session ended, or the process
     * ends): the adapter may detach. Called on the thread that finished
     * the core (the drain thread for an attached session). May be NULL. */
    void (*done)(void *payload);
    void *payload;
} mdp_runtime_ops;

/* Create the core: the map, the sampler's signal handler (sample mode), the
 * drain thread. `runtime` names the runtime for the log header ("10.0.12"),
 * `attach` is 1 on attach. Errors: negative, with a message in err. */
int mdp_core_new(mdp_core **out, const mdp_config *cfg, const mdp_runtime_ops *ops,
                 const char *runtime, int attach, char *err, size_t errlen);
/* Stop sampling, drain, write what is left and the closing #stats line
 * saying end=END ("exit": the runtime shut down; "detach": an attached
 * session ended; a termination signal seen before overrides it with
 * "signal:NAME"), close the log and tell the launcher (once; later calls
 * do nothing); 0, or negative when the last write failed. The core stays
 * usable for events (they are then ignored) until mdp_core_free. */
int mdp_core_finish(mdp_core *core, const char *end);
void mdp_core_free(mdp_core *core);
/* The runtime has let an attached profiler go (after mdp_core_finish):
 * tell the launcher, then free the core (mdp_core_free). */
void mdp_core_detached(mdp_core *core);
/* A diagnostic for the user (printf format): into the log as a `#` line
 * and to the mdprofile that launched or attached the profiler; never on
 * the host's standard output or error. Not from a signal handler. */
void mdp_note(mdp_core *core, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

const mdp_config *mdp_core_config(const mdp_core *core);
mdt_idmap *mdp_core_map(mdp_core *core);
uint64_t mdp_seq(mdp_core *core);
/* A seq held while it is in use (seqs.c): mdp_seq_take() takes one and
 * publishes it until mdp_seq_release(), so that the map's tombstones are
 * retired only below every seq a callback may still apply. MDP_SEQ_HELD
 * declares `var` (the seq) held until the end of the enclosing block.
 * Lock-free; a NULL core gives seq 0. Never from a signal handler. */
typedef struct mdp_seq_hold {
    mdp_core *core;
    int slot;
    uint64_t seq;
} mdp_seq_hold;
mdp_seq_hold mdp_seq_take(mdp_core *core);
void mdp_seq_release(mdp_seq_hold *h);
#define MDP_SEQ_HELD(var, core)                                                                    \
    mdp_seq_hold var##_hold __attribute__((cleanup(mdp_seq_release))) = mdp_seq_take(core);        \
    uint64_t var = var##_hold.seq
/* Bench builds only (-DMDP_BENCH_CLOCK, bench/profiler/README.md): the
 * thread CPU time the runtime's load callbacks spend in the profiler, by
 * kind, written to #stats as bench.cb_KIND_ns and bench.cb_KIND_calls.
 * MDP_BENCH_CALLBACK(core, kind) charges the rest of the enclosing block
 * (declared before MDP_SEQ_HELD, it also covers the seq's release). */
enum mdp_bench_cb {
    MDP_BENCH_CB_CLASS,
    MDP_BENCH_CB_JIT,
    MDP_BENCH_CB_R2R, /* none since ReadyToRun searches are not monitored: kept so that
                       * cost.py reads older builds and new ones alike */
    MDP_BENCH_CB_OTHER,
    MDP_BENCH_CB_N
};
#ifdef MDP_BENCH_CLOCK
typedef struct mdp_bench_span {
    mdp_core *core;
    unsigned kind;
    uint64_t t0;
} mdp_bench_span;
mdp_bench_span mdp_bench_span_start(mdp_core *core, unsigned kind);
void mdp_bench_span_end(mdp_bench_span *s);
#define MDP_BENCH_CALLBACK(core, kind)                                                             \
    mdp_bench_span mdp_bench_span_ __attribute__((cleanup(mdp_bench_span_end))) =                  \
        mdp_bench_span_start((core), (kind))
#else
#define MDP_BENCH_CALLBACK(core, kind) ((void)0)
#endif
/* The oldest seq still in use: under every held seq and `floor` (the
 * adapter's oldest deferred one; 0: none), 1 while a taker could not
 * publish its own. */
uint64_t mdp_seq_watermark(mdp_core *core, uint64_t floor);
/* Drop the map's tombstones below the watermark (mdt_idmap_retire) when
 * unloads happened since the last time: at once after 4096, else at most
 * every 10 s and only when the tombstones are an eighth of the live
 * records or more (force: now). Drain thread (the adapter's tick). The number
 * dropped, 0, or negative (the map's error). */
int mdp_core_retire(mdp_core *core, uint64_t floor, int force);
/* The adapter has work for the drain thread's next tick (code to record
 * once the runtime publishes it): the drain keeps its base period, and
 * comes now if it was waiting out a longer one (an idle process's).
 * Cheap: two atomics, a system call only when the drain was waiting. */
void mdp_core_drain_soon(mdp_core *core);
/* Diagnostics into the log (`#` lines) when MDPROFILE_VERBOSE is set
 * (printf format); never on the host's standard error. */
void mdp_log(const mdp_core *core, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- Events ----------------------------------------------------------- */

enum mdp_module_flags {
    MDP_MODULE_DYNAMIC = 1u << 0,     /* Reflection.Emit: no image, frames "dynamic" */
    MDP_MODULE_FLAT = 1u << 1,        /* the image lies as in the file */
    MDP_MODULE_RESOURCE = 1u << 2,    /* no metadata */
    MDP_MODULE_COLLECTIBLE = 1u << 3, /* may unload (collectible AssemblyLoadContext) */
    MDP_MODULE_STUBS = 1u << 4        /* pseudo module of runtime stubs: frames "stub" */
};

typedef struct mdp_module_desc {
    const void *base; /* where the loader put the image (NULL: none) */
    const char *path; /* UTF-8, may be "" */
    unsigned flags;   /* enum mdp_module_flags */
    uintptr_t assembly;
    uintptr_t appdomain;
} mdp_module_desc;

/* A module finished loading: open its image in place (a mapped image, or the
 * flat file layout; never a second copy of the file) and record it. */
int mdp_ev_module_load(mdp_core *core, uint64_t seq, uintptr_t module, const mdp_module_desc *d);
/* The module's assembly became known (ModuleAttachedToAssembly). */
int mdp_ev_module_assembly(mdp_core *core, uint64_t seq, uintptr_t module, uintptr_t assembly);
/* Unloads: pending samples are drained first, so frames sampled before the
 * unload keep their names and nothing sampled after it gets them. */
int mdp_ev_module_unload(mdp_core *core, uint64_t seq, uintptr_t module);
int mdp_ev_assembly_unload(mdp_core *core, uint64_t seq, uintptr_t assembly);
int mdp_ev_appdomain_shutdown(mdp_core *core, uint64_t seq, uintptr_t appdomain);

/* ClassLoadFinished (or a lazily fetched class). `info` as for
 * mdt_idmap_class_load; prim is filled in by the core for the core
 * library's primitives and System.__Canon. */
int mdp_ev_class_load(mdp_core *core, uint64_t seq, uintptr_t cls,
                      const mdt_idmap_class_info *info);
int mdp_ev_class_unload(mdp_core *core, uint64_t seq, uintptr_t cls);
/* A class the runtime loaded, counted (#stats classes.loaded): the
 * adapter learns it only when something names it. Any thread. */
void mdp_ev_class_loaded(mdp_core *core);
/* A ClassID standing for a primitive the runtime names by its element type
 * only (an array's element without a ClassID): recorded once, never a valid
 * pointer. `elem` is an ECMA-335 element type (0x01..0x1c). Returns the ID,
 * or 0 for an element type that is not a primitive. */
uintptr_t mdp_ev_prim_class(mdp_core *core, uint64_t seq, unsigned elem);

int mdp_ev_function_load(mdp_core *core, uint64_t seq, uintptr_t fn,
                         const mdt_idmap_function_info *info);
int mdp_ev_function_unload(mdp_core *core, uint64_t seq, uintptr_t fn);

/* One code version of a live function: its regions (the first is the one
 * starting at the version's entry; IL-to-native offsets count across the
 * regions in this order). */
typedef struct mdp_code_region {
    uintptr_t start;
    size_t size;
} mdp_code_region;
int mdp_ev_code(mdp_core *core, uint64_t seq, uintptr_t fn, const mdp_code_region *regions,
                size_t nregions);

/* A sampled address nobody reported, in a module's ReadyToRun code
 * (codemap.c): the non-generic method whose code holds it, from the
 * image's entry points, without the runtime. fn is a pseudo FunctionID,
 * odd (the runtime's are MethodDesc pointers, 8-aligned), never passed to
 * the runtime; start and size span the method's runtime functions (its
 * main function and funclets). The drain thread only (drain_lock held: the
 * image lives while it is). */
typedef struct mdp_r2r_name {
    uintptr_t fn, module;
    uint32_t token;
    uintptr_t start;
    size_t size;
} mdp_r2r_name;
#define MDP_PSEUDO_FUNCTION(fn) (((fn)&1u) != 0)
/* 0 with *out set, or -1: not in ReadyToRun code of a live module,
 * generic code, or the image says nothing usable (ask the runtime). */
int mdp_code_r2r_name(mdp_core *core, uintptr_t ip, mdp_r2r_name *out);
/* Enter a name found so into the map: the function and its code; then
 * the map names ip without the runtime. 0, or < 0 (MDT_E*). t0: the
 * thread's CPU clock (CLOCK_THREAD_CPUTIME_ID, ns) when the naming began,
 * for #stats. */
int mdp_code_r2r_enter(mdp_core *core, uint64_t seq, const mdp_r2r_name *n, uint64_t t0);
/* A miss named by the runtime, ns of CPU time; with img (ilmaps=check:
 * the image's answer, found in img_ns), compared with what the runtime's
 * answer put in the map for ip, and counted in #stats. */
void mdp_code_r2r_runtime(mdp_core *core, uintptr_t ip, uint64_t ns, const mdp_r2r_name *img,
                          uint64_t img_ns);

/* A runtime thread started (tid = the kernel's thread ID) or ended. When the
 * call runs on that very thread, its stack bounds are read here; otherwise
 * the sampler learns them from its first sample. */
int mdp_ev_thread_start(mdp_core *core, uintptr_t runtime_thread, int tid);
int mdp_ev_thread_end(mdp_core *core, uintptr_t runtime_thread);
/* The runtime named a thread (UTF-8; Thread.Name): said in the log's
 * #thread lines (sample mode), whether the thread has started or not. */
void mdp_ev_thread_name(mdp_core *core, uintptr_t runtime_thread, const char *name);

/* What the runtime does on the calling thread begins or ends (`act` an
 * enum mdp_activity of core/native.h: GC, JIT, type load, exception):
 * its native frames sampled meanwhile carry it. JIT and type loads nest
 * (begin and end in pairs on the thread); an exception begins when thrown
 * and ends when a catch clause takes it; a GC begins on the thread that
 * collects and may end on another. Does nothing when cfg.activities is 0
 * or the thread is not sampled. Never from a signal handler. */
void mdp_ev_activity(mdp_core *core, unsigned act, int begin);

/* ---- calls mode ---------------------------------------------------------- */

/* The words of a function's counter: how often it was entered, and left by
 * returning, by a tail call, and what the exceptions did: the runtime's
 * unwind pass visits every frame it passes, the one that catches included
 * (MDP_CALL_UNWIND), and a frame that catches (MDP_CALL_CATCH) is not
 * left: unwound = UNWIND - CATCH. */
enum {
    MDP_CALL_ENTER,
    MDP_CALL_LEAVE,
    MDP_CALL_TAILCALL,
    MDP_CALL_UNWIND,
    MDP_CALL_CATCH,
    MDP_CALL_WORDS
};

/* A counter for function `fn` (created on first use): MDP_CALL_WORDS words,
 * counter[MDP_CALL_ENTER] the word an enter hook increments atomically,
 * counter[MDP_CALL_LEAVE] a leave hook's, counter[MDP_CALL_TAILCALL] a
 * tailcall hook's. NULL when out of counters (counted as a drop). Takes a
 * lock: for the runtime's FunctionIDMapper, not for hooks. */
uint64_t *mdp_calls_counter(mdp_core *core, uintptr_t fn);
/* The per-thread slow-path hook body: count an event `what` (MDP_CALL_ENTER,
 * _LEAVE or _TAILCALL) of the function whose counter mdp_calls_counter
 * returned, in the calling thread's own array (allocated on its first
 * call). */
void mdp_calls_count(mdp_core *core, uint64_t *counter, int what);
/* The exception's unwind pass reaches a frame of function `fn`
 * (MDP_CALL_UNWIND), or a catch clause of `fn` takes the exception
 * (MDP_CALL_CATCH: the frame is not left). Counted only for a function that
 * has a counter; takes a lock. */
void mdp_calls_exception(mdp_core *core, uintptr_t fn, int what);

/* ---- exceptions and contention modes (events.c) -------------------------- */

enum mdp_event_kind { MDP_EVENT_THROW, MDP_EVENT_WAIT };

/* An event on the calling thread, with that thread's stack: a throw
 * (`cls` the exception object's ClassID, 0 unknown) or a wait on a
 * managed lock that lasted `value` nanoseconds. `ips` holds n code
 * addresses, leaf first, each inside its frame's code (a caller's return
 * address minus one); `cut` says the stack went on past them. Copied;
 * named by the drain. Any thread but a signal handler's. */
void mdp_ev_stack_event(mdp_core *core, int kind, uintptr_t cls, uint64_t value,
                        const uintptr_t *ips, unsigned n, int cut);

/* ---- alloc mode ---------------------------------------------------------- */

/* One allocation of `bytes` bytes of class `cls`, on the calling thread. */
void mdp_alloc_count(mdp_core *core, uintptr_t cls, uint64_t bytes);
/* ---- heap mode ----------------------------------------------------------- */

/* The objects of one class on the heap (heap mode). */
struct mdp_heap_count {
    uintptr_t cls;
    uint64_t count, bytes;
};
/* A walk of the heap after gen2 GC number `gc` (GCs since the start, 1 the
 * first) found these classes; it took walk_ns (the runtime suspended).
 * Written as `heap` records of that GC and the time now (heap.c). Any
 * thread but a signal handler; takes drain_lock. */
void mdp_heap_snapshot(mdp_core *core, uint64_t gc, uint64_t walk_ns,
                       const struct mdp_heap_count *v, size_t n);

/* Whether this allocation of `bytes` bytes on the calling thread is one to
 * take the stack of (--alloc-sample: a per-thread countdown of random byte
 * intervals, allocstack.c). No lock, no system call but at a thread's
 * first call. 0 when alloc stacks are off. */
int mdp_alloc_stack_due(mdp_core *core, uint64_t bytes);
/* The stack of a sampled allocation (after mdp_alloc_stack_due said 1, on
 * the same thread): its class and size, and n frames leaf first, each a
 * return address and the FunctionID of the code holding it (0: not managed
 * code, left out). Takes the thread's own lock; allocates. */
void mdp_alloc_stack_add(mdp_core *core, uintptr_t cls, uint64_t bytes, const uintptr_t *ips,
                         const uintptr_t *fns, unsigned n);

/* The allocation stacks come from the runtime's own sampled allocations
 * (CoreCLR 10's AllocationSampled event: a Bernoulli trial per byte of
 * probability 1/runtime_mean) instead of mdp_alloc_stack_due: said before
 * the first event, at startup. The core keeps one in alloc_sample /
 * runtime_mean of them (all when alloc_sample is smaller: the runtime's
 * mean is used, and the log says so). Returns the mean the log's estimates
 * are for. A runtime_mean of 0 goes back to the callback path. */
uint64_t mdp_alloc_stacks_use_event(mdp_core *core, uint64_t runtime_mean);
/* One of the runtime's sampled allocations on the calling thread (size
 * bytes): whether to keep it (a thread-local draw, no lock; counts the
 * event). 0 when alloc stacks are off or not on the event path. */
int mdp_alloc_event_keep(mdp_core *core, uint64_t size);

#endif
