/* The profiler core's lifetime: creating the map, the sampler and the drain
 * thread, the sequence counter, finishing (stop sampling, drain, write the
 * log exactly once) and freeing. */
#define _GNU_SOURCE
#include "config.h"

#ifdef MDP_BENCH_CLOCK
#include <x86intrin.h>
#endif

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mdtools/errors.h>

#include "core/base.h"
#include "core/channel.h"
#include "core/native.h"
#include "core/sampler.h"
#include "core/naming.h"
#include "core/aggregate.h"
#include "core/drain.h"
#include "core/modes.h"
#include "core/log.h"
#include "core/lifetime.h"

static int on_miss(void *payload, mdt_idmap *map, int kind, uintptr_t id)
{
    mdp_core *core = payload;
    if (!mdp_ops_live(core) || !core->ops.miss)
        return MDT_ENOTFOUND;
    return core->ops.miss(core->ops.payload, kind, id);
}

/* The units' states (mdp_core_new makes them first; any may be NULL). */
static void free_units(mdp_core *core)
{
    mdp_thread_names_free(core);
    mdp_writer_free(core);
    mdp_drain_free(core);
    mdp_aggregate_free(core);
    mdp_naming_free(core);
    free(core->life);
    core->life = NULL;
}

void mdp_core_drain_soon(mdp_core *core)
{
    if (core)
        mdp_drain_poke(core);
}

int mdp_core_new(mdp_core **out, const mdp_config *cfg, const mdp_runtime_ops *ops,
                 const char *runtime, int attach, char *err, size_t errlen)
{
    *out = NULL;
    mdp_core *core = calloc(1, sizeof *core);
    if (!core) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    core->cfg = *cfg;
    if (ops)
        core->ops = *ops;
    atomic_store(&core->ops_live, 1);
    core->pid = (int)getpid();
    core->ppid = (int)getppid();
    clock_gettime(CLOCK_MONOTONIC, &core->start_mono);
    /* each unit's state (README.md, "State") */
    if (!(core->life = calloc(1, sizeof *core->life)) || mdp_naming_new(core) != 0 ||
        mdp_aggregate_new(core) != 0 || mdp_drain_new(core) != 0 ||
        mdp_writer_new(core, runtime, attach) != 0 || mdp_thread_names_new(core) != 0) {
        snprintf(err, errlen, "out of memory");
        free_units(core);
        free(core);
        return -1;
    }
#ifdef MDP_BENCH_CLOCK
    core->stats.bench_tsc0 = __rdtsc();
    {
        struct timespec a, b;
        uint64_t sum = 0;
        for (int i = 0; i < 1000; i++) {
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
            sum += (uint64_t)((b.tv_sec - a.tv_sec) * 1000000000L + b.tv_nsec - a.tv_nsec);
        }
        core->stats.bench_clock_ns = (double)sum / 1000.0;
    }
#endif
    pthread_mutexattr_t ma;
    pthread_mutexattr_init(&ma);
    pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&core->drain_lock, &ma);
    pthread_mutexattr_destroy(&ma);
    pthread_mutex_init(&core->mods_lock, NULL);
    pthread_mutex_init(&core->threads_lock, NULL);
    pthread_mutex_init(&core->notes_lock, NULL);
    core->channel = cfg->notify[0] ? mdp_channel_connect(cfg->notify) : -1;
    mdp_read_cmdline(core->cmd, sizeof core->cmd);
    if (mdp_logfile_open(core, err, errlen) != 0) {
        char enc[1024];
        mdp_pct_escape(enc, sizeof enc, err, strlen(err));
        mdp_channel_tell(core, "note", enc);
        if (core->channel >= 0)
            close(core->channel);
        free_units(core);
        free(core);
        return -1;
    }
    {
        /* the launcher lists every log it saw written */
        char path[MDP_CHANNEL_MAX / 2], msg[MDP_CHANNEL_MAX];
        mdp_pct_escape(path, sizeof path, core->log.path, strlen(core->log.path));
        snprintf(msg, sizeof msg, "%d %.4000s %.1100s", core->ppid, path,
                 core->cmd[0] ? core->cmd : "?");
        mdp_channel_tell(core, "log", msg);
    }

    /* Sized for what a process records now that classes and ReadyToRun
     * methods are learnt when named (a compiler's map: ~1,200 classes,
     * ~14,000 functions); the tables grow past that. The former hints,
     * 16,384 and 65,536, were for every class and method loaded: creating
     * the map cost each process ~2.7 ms, and a compiler's map 18.5 ms in
     * all against 15.6 now (bench/idmap/README.md, "sizing hints"). */
    mdt_idmap_options o = {
        .modules = 256, .classes = 2048, .functions = 16384, .miss = on_miss, .miss_payload = core};
    /* the profiler never looks functions up by content: their loads spare
     * the reverse index (bench/idmap/README.md, branch fnload) */
    if (mdt_idmap_new(&core->map, &o) != 0 ||
        mdt_idmap_set_flags(core->map, MDT_IDMAP_NO_FUNCTION_FIND) != 0) {
        mdt_idmap_free(core->map);
        core->map = NULL;
        snprintf(err, errlen, "cannot create the runtime-ID map");
        mdp_logfile_close(core);
        if (core->channel >= 0)
            close(core->channel);
        free_units(core);
        free(core);
        return -1;
    }
    int e = 0;
    if (cfg->modes & MDP_MODES_SAMPLED)
        e = mdp_sampler_init(core, err, errlen);
    if (e == 0 && (cfg->modes & MDP_MODE_CALLS))
        e = mdp_calls_init(core);
    if (e == 0 && (cfg->modes & MDP_MODE_ALLOC))
        e = mdp_alloc_init(core);
    /* the wall thread first: its TID is known before the drain thread's
     * first scan of the threads (threads.c) could take it for another */
    if (e == 0 && mdp_wall_mode(core))
        e = mdp_wall_start(core, err, errlen);
    mdp_drain_set_events(core, mdp_events_drain); /* a unit above the drain (README.md) */
    if (e == 0 && (cfg->modes & (MDP_MODE_EXCEPTIONS | MDP_MODE_CONTENTION)))
        e = mdp_events_init(core);
    if (e == 0)
        e = mdp_drain_start(core, err, errlen);
    if (e != 0) {
        if (!err[0])
            snprintf(err, errlen, "out of memory");
        mdp_core_free(core);
        return -1;
    }
    mdp_termsig_attach(core);
    *out = core;
    return 0;
}

int mdp_core_finish(mdp_core *core, const char *end)
{
    int zero = 0;
    if (!core || !atomic_compare_exchange_strong(&core->finished, &zero, 1))
        return 0;
    mdp_wall_stop(core); /* no more signals, then no more timers */
    mdp_sampler_stop(core);
    mdp_sampler_quiesce(core);
    pthread_mutex_lock(&core->drain_lock);
    mdp_drain_all(core);
    mdp_calls_flush(core);
    mdp_alloc_flush(core);
    /* a termination signal came first: the process ends because of it,
     * whether the runtime shut down cleanly or the session ended */
    int sig = mdp_term_signal(core);
    if (sig)
        snprintf(core->life->end_reason, sizeof core->life->end_reason, "signal:%s",
                 mdp_signal_name(sig));
    else
        snprintf(core->life->end_reason, sizeof core->life->end_reason, "%s", end ? end : "exit");
    int r = mdp_log_flush(core, core->life->end_reason, 1);
    if (r != 0 && core->log.fd >= 0)
        r = mdp_log_flush(core, core->life->end_reason,
                          1); /* once more: the pending part was kept */
    mdp_logfile_close(core);
    pthread_mutex_unlock(&core->drain_lock);
    if (r == 0) {
        char path[MDP_CHANNEL_MAX / 2], msg[MDP_CHANNEL_MAX];
        mdp_pct_escape(path, sizeof path, core->log.path, strlen(core->log.path));
        snprintf(msg, sizeof msg, "%s %.4000s", core->life->end_reason, path);
        mdp_channel_tell(core, "end", msg);
    }
    mdp_drain_stop(core);
    if (core->ops.done && mdp_ops_live(core))
        core->ops.done(core->ops.payload);
    return r;
}

void mdp_core_detached(mdp_core *core)
{
    if (!core)
        return;
    mdp_channel_tell(core, "detached", "");
    mdp_core_free(core);
}

void mdp_core_free(mdp_core *core)
{
    if (!core)
        return;
    atomic_store(&core->ops_live, 0);
    mdp_termsig_detach(core);
    int zero = 0;
    if (atomic_compare_exchange_strong(&core->finished, &zero, 1)) {
        /* nobody finishes this core now: stop its signals here */
        mdp_wall_stop(core);
        mdp_sampler_stop(core);
    }
    mdp_drain_stop(core);
    /* a finish running on the drain thread stops the wall thread itself:
     * free it only once that thread has returned (two joins of one thread
     * are undefined; TSan saw the finish's stop race this free) */
    mdp_drain_join(core);
    mdp_wall_free(core);
    mdp_sampler_free(core);
    mdp_sampler_quiesce(core);
    pthread_mutex_lock(&core->drain_lock);
    mdp_naming_free(core);
    mdp_calls_free(core);
    mdp_alloc_free(core);
    mdp_events_free(core);
    pthread_mutex_unlock(&core->drain_lock);
    mdt_idmap_free(core->map);
    mdp_exec_free(core);
    mdp_elf_free(core);
    mdp_modules_free(core);
    mdp_drain_buffers_free();
    mdp_logfile_close(core);
    mdp_notes_free(core);
    if (core->channel >= 0)
        close(core->channel);
    pthread_mutex_destroy(&core->notes_lock);
    free_units(core);
    /* core->slots stay mapped: see sampler.c */
    free(core);
}

#ifdef MDP_BENCH_CLOCK
static uint64_t thread_cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

mdp_bench_span mdp_bench_span_start(mdp_core *core, unsigned kind)
{
    return (mdp_bench_span){core, kind < MDP_BENCH_CB_N ? kind : MDP_BENCH_CB_OTHER,
                            thread_cpu_ns()};
}

void mdp_bench_span_end(mdp_bench_span *s)
{
    if (!s->core)
        return;
    atomic_fetch_add(&s->core->stats.bench_cb_ns[s->kind], thread_cpu_ns() - s->t0);
    atomic_fetch_add(&s->core->stats.bench_cb_calls[s->kind], 1);
}
#endif
