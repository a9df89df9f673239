/* Private to profiler/core: the functions of the sampler unit (sampler.c, slots.c, execmap.c,
 * activity.c, wall.c, threads.c, threadnames.c): the thread slots and their rings, the SIGPROF
 * handler, the timers, wall mode, what the runtime is doing per thread, thread names. Included by
 * the files of this unit and of the units above it (profiler/core/README.md); struct mdp_core is in
 * base.h. */
#ifndef MDP_SAMPLER_H
#define MDP_SAMPLER_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "core/base.h"
#include "core/native.h"

/* Executable ranges of the live modules' images, sorted (execmap.c), with
 * their module's ReadyToRun function table (rf NULL: none). */
struct mdp_exec_range {
    uintptr_t lo, hi;
    uintptr_t base;
    const uint32_t *rf;
    uint32_t nrf;
    uintptr_t module; /* its ModuleID (the drain's naming from the image, codemap.c) */
};
struct mdp_exec_table {
    size_t n;
    struct mdp_exec_range r[];
};

/* The kernel's CPU clock of thread tid (what pthread_getcpuclockid returns,
 * built from the TID instead of a pthread_t, so that a thread registered
 * from another one can be timed or read): ~tid << 3 | PERTHREAD | SCHED,
 * the shift done unsigned. slots.c's CPU-time timers, perfclock.c's weight. */
static inline clockid_t mdp_thread_cpu_clock(int tid)
{
    return (clockid_t)((~(unsigned)tid << 3) | 6u);
}

/* slots.c: the slots that were ever taken are [0, mdp_slots_used()); the
 * mark only grows (the slots outlive cores, for a re-attach). Every scan of
 * the slots stops there: a pass over all 4,096 slots' cache lines, twice
 * per drain pass, cost ~55 us, 50 passes a second, in any process
 * (bench/profiler/README.md). Read with acquire after threads_seen: a slot
 * made active below the mark published the mark first. */
unsigned mdp_slots_used(void);
/* Code that fills slots by hand (the benches under bench/profiler,
 * tests/profiler/test_core.c) counts slots [0, n) as taken with this. */
void mdp_slots_take(unsigned n);
/* The slot's walk cache (base.h, struct mdp_wentry), emptied; mapped the
 * first time (then kept for the process's life, as the ring). A slot
 * without one (no memory) walks without it. Not from a handler; the slot
 * is not active (registration, or code that fills slots by hand). */
void mdp_slot_wcache_reset(struct mdp_slot *t);

/* sampler.c: install the handler, and make `core` the one it samples for */
int mdp_sampler_init(mdp_core *core, char *err, size_t errlen);
/* slots.c */
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

/* perfclock.c: sample mode's CPU clock on perf_events (a task-clock event
 * per thread whose overflow signals it). mdp_perf_choose, at the
 * sampler's start: what new threads get (core->clock), from the setting
 * and whether perf_event_open works here; -1 when --clock perf was asked
 * and it does not (core->clock_why says why; core->perf_ok whether perf
 * works, found out unless --clock timer asked for the timer alone).
 * mdp_perf_start (threads_lock
 * held): the slot's event, enabled, every `period` ns of the thread's CPU
 * (0: the rate's, where perf is the clock; else where perf works); 0, -1
 * (the thread gets the timer), -2 the same, the first thread beyond the
 * cap on fds (the caller says so once, after the lock).
 * mdp_perf_move_sparse (the drain thread, once a second, threads_lock
 * held): threads whose timer came seldom over their last 200 ms of CPU
 * time move to a perf clock (perfclock.c says when); it returns what
 * mdp_perf_move_note, called after the lock, says (0: nothing, as every
 * move but the first). mdp_perf_stop (threads_lock held): its fd
 * closed. In the handler: the slot of a signal's si_fd (its index + 1, 0 none) and a sample's
 * weight (the whole periods of the thread's CPU time since the slot's last sample; 0: not one yet,
 * no sample). mdp_perf_clock_name: the header's cpu_clock= word. mdp_perf_sparse_note, at the log's
 * end: a note when the timer gave far fewer stacks than the rate asked (a busy machine), once. */
int mdp_perf_choose(mdp_core *core);
int mdp_perf_start(mdp_core *core, struct mdp_slot *t, int tid, uint64_t period);
double mdp_perf_move_sparse(mdp_core *core);
void mdp_perf_move_note(mdp_core *core, double mean_ms);
void mdp_perf_stop(mdp_core *core, struct mdp_slot *t);
unsigned mdp_perf_slot_of_fd(int fd);
uint32_t mdp_perf_weight(const mdp_core *core, struct mdp_slot *t);
const char *mdp_perf_clock_name(const mdp_core *core);
void mdp_perf_sparse_note(mdp_core *core);

/* execmap.c */
/* The ReadyToRun method whose code holds ip, from its image's
 * RuntimeFunctions table (a binary search; the entry must lie inside the
 * executable range that holds ip): *start and *size, 1; 0 when ip is in
 * no such method. Async-signal-safe, as mdp_exec_return_site. */
int mdp_exec_r2r_function(const mdp_core *core, uintptr_t ip, uintptr_t *start, size_t *size);
/* The module whose image's executable mappings hold ip (1, *module set),
 * or 0. Not for the handler: mods_lock held (the table's writers hold it,
 * and free the old table only after the handlers have left it). */
int mdp_exec_module_of(const mdp_core *core, uintptr_t ip, uintptr_t *module);
/* Rebuild the handler's table from the live modules' executable ranges
 * and publish it; frees the old one once no handler can read it (waits
 * for handlers). mods_lock held. 0, or -1 out of memory (then no table:
 * never one that may hold an unloaded image). */
int mdp_exec_publish(mdp_core *core);
/* The same after the load of m, which replaced no module: the published
 * table and m's ranges, merged (no module looked up again). */
int mdp_exec_publish_add(mdp_core *core, const struct mdp_module *m);
/* Whether ret may be a return address in a module image's code that the
 * map may not know: its call's last byte lies in an executable range of a
 * live module's image and the bytes before it there decode as a call
 * (mdp_follows_call). Async-signal-safe: reads the published table and at
 * most 8 bytes of that range. */
int mdp_exec_return_site(const mdp_core *core, uintptr_t ret);
void mdp_exec_free(mdp_core *core);
/* The handler's view of the process (one profiler per process). */
extern mdp_core *_Atomic mdp_sampling_core;

/* threadnames.c: #thread lines, from one registry of the threads the log
 * names (core->threads): 0, or -1 out of memory. */
int mdp_thread_names_new(mdp_core *core);
/* A slot taken (threads_lock held) gets the
 * name the runtime gave its thread before it started; a thread ended
 * forgets such a name. The name scan (drain thread) reads the kernel's
 * name of every active slot's thread (all: a write's scan) or of those
 * started in its last few scans (the thread scan's, twice a second),
 * announces the names that changed and sets each thread's role by it
 * (activities on); a write's scan forgets threads no slot holds. */
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

/* sampler.c: free retired slots, retire those of dead threads (drain_lock
 * held; check_alive about once a second). */
void mdp_sampler_housekeeping(mdp_core *core, int check_alive);

/* activity.c, threads.c: what the runtime is doing on a thread (native.h has
 * the codes) and the threads it does not report */
extern const char *const mdp_activity_text[MDP_ACT_COUNT];

/* The activity the handler copies into a sample: the innermost pushed one,
 * else a GC or an exception in progress on the thread, else the thread's
 * role (a GC thread of the runtime's). Async-signal-safe: plain loads. */
unsigned mdp_slot_activity(const struct mdp_slot *t);

/* The sampler slot of the calling thread, or NULL (a thread the sampler
 * does not time, or sampling is off). Cached per thread; never from a
 * signal handler (thread-local storage). */
struct mdp_slot *mdp_self_slot(mdp_core *core);

/* The runtime's thread-name for GC worker threads (".NET Server GC",
 * ".NET BGC"): a slot of such a thread has MDP_ACT_GC as its role. */
unsigned mdp_thread_role(const char *comm);

/* ---- threads the runtime does not report (threads.c) --------------------- */

/* Time every thread of the process that has no sampler slot yet (the GC's
 * server and background threads, the host's and native libraries'
 * threads), except the drain thread, and give GC threads their role. A
 * thread is taken once its stack is known (blocked in a system call: its
 * stack pointer from /proc/self/task/TID/syscall); drain thread, drain_lock
 * held; does nothing when cfg.threads is 0. */
void mdp_threads_scan(mdp_core *core);

/* The #stats keys of native naming, " native.module=N act.gc=N ...", from
 * the counters (aggregate.h: native frames named by an ELF object, samples
 * by activity) into buf (NUL-terminated, cut at cap - 1 bytes). */
void mdp_native_stats(uint64_t native_module, const uint64_t act[16], char *buf, size_t cap);

#endif
