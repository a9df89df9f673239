/* The incremental log writer (doc/profile-log.md): the aggregated records
 * (aggregate.c) written out.
 *
 * Records are keyed by their frames' text and hold what was counted since
 * the last write. Every flush_ms (and at once after a termination signal,
 * then after every drain) the drain thread appends them to the log,
 * sorted by count (then text, so equal runs give equal logs): the header
 * first (once, at the first write, when the core library and the
 * frameworks the program starts with are loaded), #frameworks and
 * #folders lines for module folders first seen after it, the pending
 * diagnostics (`#` lines), an #elf line for every ELF object the write's
 * native frames lie in that the log has not named yet (elfmap.c), and
 * before each record a #module line for every module it names that the
 * log has not described yet. What a write announces (#elf, #module,
 * #frameworks, #folders) counts as said
 * only when the write succeeded: a failed write is undone (logfile.c) and
 * the next one says it again, before the records that need it. The same
 * stack may so appear in several writes: readers sum the records. Only a
 * clean end (the runtime's Shutdown, the end of an attached session)
 * writes the closing #stats; after a termination signal each write ends
 * with a tentative one that the next write replaces. A log without #stats
 * was cut short: the process was killed, and the log holds what was
 * written before.
 *
 * A sample record's key starts with its thread and time slice (drain.c):
 * a record is one stack's count within one slice of one thread, and a
 * slice that spans two writes is in both (readers sum). The #thread lines
 * that name the threads are notes (threadnames.c), written before the
 * records of the same write.
 *
 * A calls-mode record counts enters and the three kinds of exit. A write
 * keeps back the enters of calls that have not left yet (count = exits),
 * so that every record has no more exits than enters; the last write
 * gives the rest. The header's format number (header.c) says what the
 * log may hold beyond format 1: a calls-mode log is format 2 (its call
 * records carry their leaves, tail calls and unwinds), a sample log format
 * 4 (native frames name their ELF file after its #elf line, and may carry
 * an activity, since format 3; records carry their thread and time slice,
 * with #thread lines, since format 4); a log of alloc mode alone holds
 * none of those and says format 1. A log of several modes (`--mode
 * sample,alloc`) holds the records of each, each line saying its kind. */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base.h"
#include "core/channel.h"
#include "core/native.h"
#include "core/sampler.h"
#include "core/aggregate.h"
#include "core/modes.h"
#include "core/log.h"
#include "core/log_state.h"

#ifdef MDP_BENCH_CLOCK
#include <sys/resource.h>
#include <time.h>
#include <x86intrin.h>
#endif

struct rec_ref {
    const char *key;
    struct mdp_record *rec;
    enum mdp_rec_kind kind;
};

struct collect {
    struct rec_ref *v;
    size_t n;
    enum mdp_rec_kind kind; /* of the map being collected */
};

static void collect_one(void *payload, const char *key, void *val)
{
    struct collect *c = payload;
    c->v[c->n++] = (struct rec_ref){key, val, c->kind};
}

/* Kind by kind, each the most counted first. */
static int by_count(const void *a, const void *b)
{
    const struct rec_ref *x = a, *y = b;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    if (x->rec->count != y->rec->count)
        return x->rec->count > y->rec->count ? -1 : 1;
    return strcmp(x->key, y->key);
}

const struct mdp_rec_desc mdp_rec_kinds[MDP_REC_NKINDS] = {
    [MDP_REC_STACK] = {"stack", 0, "tid slice", MDP_MODES_SAMPLED, 4},
    [MDP_REC_CALL] = {"call", MDP_RECF_EXITS, "leaves tailcalls unwinds", MDP_MODE_CALLS, 2},
    [MDP_REC_ALLOC] = {"alloc", MDP_RECF_BYTES, "bytes", MDP_MODE_ALLOC, 1},
    [MDP_REC_THROW] = {"throw", 0, "tid slice", MDP_MODE_EXCEPTIONS, 4},
    [MDP_REC_WAIT] = {"wait", MDP_RECF_BYTES, "nanos tid slice", MDP_MODE_CONTENTION, 4},
    [MDP_REC_ASTACK] = {"astack", MDP_RECF_BYTES, "bytes tid slice", MDP_MODE_ALLOC, 4},
    [MDP_REC_HEAP] = {"heap", MDP_RECF_BYTES, "bytes gc ms", MDP_MODE_HEAP, 4},
};

struct out {
    char *s;
    size_t len, cap;
    int bad;
};

/* The largest write's buffer kept for the next write (a csc log's writes
 * are a few hundred KB); a larger one is freed after its write. */
#define MDP_LOG_BUF_KEEP (2u << 20)

static void put(struct out *o, const char *s, size_t n)
{
    if (o->bad)
        return;
    if (o->len + n + 1 > o->cap) {
        size_t cap = o->cap ? o->cap * 2 : 65536;
        while (cap < o->len + n + 1)
            cap *= 2;
        char *p = realloc(o->s, cap);
        if (!p) {
            o->bad = 1;
            return;
        }
        o->s = p;
        o->cap = cap;
    }
    memcpy(o->s + o->len, s, n);
    o->len += n;
}

static void putf(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(struct out *o, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n > 0)
        put(o, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

static int is_hex(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

/* MVIDs the current write describes (committed to core->writer->described when
 * the write succeeds), in order and as a set. */
struct newmods {
    char (*v)[33];
    size_t n, cap;
    mdp_smap set;
    /* MVIDs this write found described or describes itself, by a hash of
     * their first digits: a write's records name a few dozen modules
     * thousands of times, and each lookup in the two tables (a hash of the
     * 32 digits, a compare in a cold bucket) costs more than this compare
     * (TSC probe, 4 builds each: module_lines' median ticks a record 0.4x
     * in a compiler's writes, 0.9x in MSBuild's; bench/profiler/README.md) */
    char seen[64][32];
};

static int described(mdp_core *core, const struct newmods *nm, const char *mvid)
{
    return mdp_smap_get(&core->writer->described, mvid, 32) || mdp_smap_get(&nm->set, mvid, 32);
}

/* #module lines for the modules `key` names (a frame's or a type
 * argument's "MVID:0x0...") that are not described yet. An MVID is the 32
 * hex digits before a ':' followed by "0x" that start the key or follow
 * neither a hex digit nor a ':' (a native frame's build-id ends in '+'):
 * found from the colons (memchr) rather than tried at every byte, which
 * was 0.5% of a `dotnet build`'s CPU on its 3.5 KB stacks; a frame of the
 * same module as the one before it is not looked up again. */
static void module_lines(mdp_core *core, struct out *o, struct newmods *nm, const char *key)
{
    size_t len = strlen(key);
    const char *end = key + len, *last = NULL;
    for (const char *c = key; (c = memchr(c, ':', (size_t)(end - c))); c++) {
        size_t i = (size_t)(c - key);
        if (i < 32 || end - c < 3 || c[1] != '0' || c[2] != 'x')
            continue;
        const char *mvid = c - 32;
        if (i > 32 && (is_hex(mvid[-1]) || mvid[-1] == ':'))
            continue;
        if (last && memcmp(last, mvid, 32) == 0)
            continue;
        size_t k = 0;
        while (k < 32 && is_hex(mvid[k]))
            k++;
        if (k < 32)
            continue;
        last = mvid;
        uint64_t h;
        memcpy(&h, mvid, sizeof h);
        char *seen = nm->seen[(h * UINT64_C(0x9e3779b97f4a7c15)) >> 58];
        if (memcmp(seen, mvid, 32) == 0)
            continue;
        if (described(core, nm, mvid)) {
            memcpy(seen, mvid, 32);
            continue;
        }
        char what[600];
        if (mdp_module_describe(core, mvid, what, sizeof what) != 0)
            continue;
        if (nm->n == nm->cap) {
            size_t cap = nm->cap ? 2 * nm->cap : 64;
            void *p = realloc(nm->v, cap * sizeof *nm->v);
            if (!p) {
                o->bad = 1;
                return;
            }
            nm->v = p;
            nm->cap = cap;
        }
        if (mdp_smap_put(&nm->set, mvid, 32, (void *)1) != 0) {
            o->bad = 1;
            return;
        }
        memcpy(nm->v[nm->n], mvid, 32);
        nm->v[nm->n++][32] = 0;
        memcpy(seen, mvid, 32);
        putf(o, "#module %.32s %s\n", mvid, what);
    }
}

/* Sample logs name native frames (format 3). */
static int mode_has_native(const mdp_core *core)
{
    return (core->cfg.modes & MDP_MODES_SAMPLED) != 0;
}

static void stats_line(mdp_core *core, struct out *o, uint64_t records, const char *end)
{
    uint64_t drops = 0;
    if (core->slots)
        for (unsigned i = 0, used = mdp_slots_used(); i < used; i++)
            drops += atomic_load(&core->slots[i].drops);
    drops += core->stats.drops_other;
    const uint64_t *k = core->stats.kind;
    uint64_t unknown = k[FK_UNMAPPED] + k[FK_UNLOADED] + k[FK_NOMVID];
    putf(o,
         "#stats samples=%" PRIu64 " records=%" PRIu64 " frames=%" PRIu64 " managed=%" PRIu64
         " native=%" PRIu64 " dynamic=%" PRIu64 " stub=%" PRIu64 " unknown=%" PRIu64
         " unknown.unmapped=%" PRIu64 " unknown.unloaded=%" PRIu64 " unknown.nomvid=%" PRIu64,
         core->stats.samples, records, core->stats.frames, k[FK_MANAGED], k[FK_NATIVE],
         k[FK_DYNAMIC], k[FK_STUB], unknown, k[FK_UNMAPPED], k[FK_UNLOADED], k[FK_NOMVID]);
    putf(o,
         " drops=%" PRIu64 " threads=%" PRIu64 " duration_ms=%" PRIu64 " signals=%" PRIu64
         " late=%" PRIu64 " unwalked=%" PRIu64 " drains=%u",
         drops, (uint64_t)atomic_load(&core->threads_seen), mdp_elapsed_ms(core),
         core->stats.signals, core->stats.late, core->stats.unwalked, core->stats.drain_cycles);
    /* the classes the runtime loaded, and the classes and functions the
     * map holds: a class is learnt only when something names it
     * (coreclr/callback.c), a ReadyToRun method only when sampled */
    mdt_idmap_stats ms;
    mdt_idmap_stats_get(&ms, core->map);
    putf(o, " classes.loaded=%" PRIu64 " classes.known=%zu functions.known=%zu",
         (uint64_t)atomic_load(&core->stats.class_loads), ms.classes_live, ms.functions_live);
    /* IL maps of code versions: read from ReadyToRun images, asked of the
     * runtime (codemap.c); ilmaps=check adds how the two compared and the
     * CPU time of each way (us) */
    putf(o, " ilmaps.image=%" PRIu64 " ilmaps.runtime=%" PRIu64, core->stats.ilmap_image,
         core->stats.ilmap_runtime);
    if (core->cfg.ilmaps == MDP_ILMAPS_CHECK)
        putf(o,
             " ilmaps.agree=%" PRIu64 " ilmaps.disagree=%" PRIu64 " ilmaps.image_us=%" PRIu64
             " ilmaps.runtime_us=%" PRIu64,
             core->stats.ilmap_agree, core->stats.ilmap_disagree,
             core->stats.ilmap_image_ns / 1000u, core->stats.ilmap_runtime_ns / 1000u);
    if ((core->cfg.modes & MDP_MODE_SAMPLE) && core->slots) {
        /* sample mode's CPU clocks (perfclock.c): threads that got each,
         * threads beyond the cap on perf fds, the periods perf samples
         * stood for beyond one each (signals lost or, perf_user, periods
         * that ended in the kernel), perf signals before a whole period
         * (no sample: the task clock ahead of the CPU clock) */
        uint64_t extra = 0, short_ = 0;
        for (unsigned i = 0, used = mdp_slots_used(); i < used; i++) {
            extra += atomic_load(&core->slots[i].perf_extra);
            short_ += atomic_load(&core->slots[i].perf_short);
        }
        putf(o,
             " clock.perf=%" PRIu64 " clock.timer=%" PRIu64 " clock.capped=%" PRIu64
             " clock.extra=%" PRIu64 " clock.short=%" PRIu64 " clock.moved=%" PRIu64,
             (uint64_t)atomic_load(&core->perf_threads),
             (uint64_t)atomic_load(&core->timer_threads), (uint64_t)atomic_load(&core->perf_capped),
             extra, short_, (uint64_t)atomic_load(&core->perf_moved));
    }
    /* sampled addresses nobody reported, where the image names them
     * (r2rnames=image, or ilmaps=check: both ways): named from a ReadyToRun
     * image's entry points, named by the runtime (codemap.c), the CPU time
     * of each way (us); ilmaps=check adds how the two compared. Otherwise
     * the image is never asked: the keys would be zeros. */
    if (core->cfg.r2rnames == MDP_R2RNAMES_IMAGE || core->cfg.ilmaps == MDP_ILMAPS_CHECK)
        putf(o,
             " r2rnames.image=%" PRIu64 " r2rnames.runtime=%" PRIu64 " r2rnames.image_us=%" PRIu64
             " r2rnames.runtime_us=%" PRIu64 " r2rnames.open_us=%" PRIu64,
             core->stats.r2rname_image, core->stats.r2rname_runtime,
             core->stats.r2rname_image_ns / 1000u, core->stats.r2rname_runtime_ns / 1000u,
             core->stats.r2rname_open_ns / 1000u);
    if (core->cfg.ilmaps == MDP_ILMAPS_CHECK)
        putf(o, " r2rnames.agree=%" PRIu64 " r2rnames.disagree=%" PRIu64, core->stats.r2rname_agree,
             core->stats.r2rname_disagree);
    if (mdp_wall_mode(core)) {
        char wall[96];
        mdp_wall_stats(core, wall, sizeof wall);
        put(o, wall, strlen(wall));
    }
    if (core->events) { /* exceptions and contention modes (events.c) */
        char ev[160];
        mdp_events_stats(core, ev, sizeof ev);
        put(o, ev, strlen(ev));
    }
    if (core->cfg.modes & MDP_MODE_HEAP)
        /* heap mode: the walks after gen2 GCs, and what they cost (the
         * runtime suspended) */
        putf(o, " heap.walks=%" PRIu64 " heap.walk_ms=%" PRIu64, core->stats.heap_walks,
             core->stats.heap_walk_ns / 1000000u);
    if (core->allocstack) {
        /* alloc stacks: how many allocations were sampled, and dropped
         * (no memory, or more than a thread keeps between two writes) */
        uint64_t sampled, dropped, events;
        mdp_alloc_stacks_stats(core, &sampled, &dropped, &events);
        putf(o, " alloc.samples=%" PRIu64 " alloc.dropped=%" PRIu64, sampled, dropped);
        if (events != UINT64_MAX)
            /* the event path: the runtime's sampled allocations delivered */
            putf(o, " alloc.events=%" PRIu64, events);
    }
    if (core->alloc)
        /* ObjectAllocated callbacks (0 on the event path: not enabled) */
        putf(o, " alloc.callbacks=%" PRIu64, mdp_alloc_callbacks(core));
    if (mode_has_native(core)) {
        char native[512];
        mdp_native_stats(core->stats.native_module, core->stats.act, native, sizeof native);
        put(o, native, strlen(native));
    }
#ifdef MDP_BENCH_CLOCK
    /* bench builds only (bench/profiler/README.md, "The handler's cost"):
     * the handler's TSC ticks, CPU time, calls and frames over every slot,
     * what two back-to-back reads of the CPU clock measure, the TSC's ticks
     * per microsecond since the core started, the drain thread's CPU time
     * (all of it, and in mdp_drain_all) and the process's (all threads) so
     * far, the drain thread's page faults */
    uint64_t ticks = 0, cpu = 0, calls = 0, bframes = 0;
    if (core->slots)
        for (unsigned i = 0, used = mdp_slots_used(); i < used; i++) {
            ticks += atomic_load(&core->slots[i].bench_ticks);
            cpu += atomic_load(&core->slots[i].bench_cpu_ns);
            calls += atomic_load(&core->slots[i].bench_calls);
            bframes += atomic_load(&core->slots[i].bench_frames);
        }
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    int64_t us = (int64_t)(now.tv_sec - core->start_mono.tv_sec) * 1000000 +
                 (now.tv_nsec - core->start_mono.tv_nsec) / 1000;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    uint64_t proc_us = (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000u +
                       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
    putf(o,
         " bench.handler_ticks=%" PRIu64 " bench.handler_cpu_ns=%" PRIu64 " bench.clock_ns=%.1f"
         " bench.handler_calls=%" PRIu64 " bench.handler_frames=%" PRIu64
         " bench.tsc_per_us=%.3f bench.drain_ns=%" PRIu64 " bench.drain_all_ns=%" PRIu64
         " bench.process_cpu_us=%" PRIu64 " bench.drain_minflt=%" PRIu64
         " bench.ipname_new=%" PRIu64 " bench.frame_new=%" PRIu64 " bench.ipname_flush=%" PRIu64
         " bench.classify=%" PRIu64 " bench.ilmap_unsorted=%" PRIu64,
         ticks, cpu, core->stats.bench_clock_ns, calls, bframes,
         us > 0 ? (double)(__rdtsc() - core->stats.bench_tsc0) / (double)us : 0.0,
         (uint64_t)atomic_load(&core->stats.bench_drain_ns),
         (uint64_t)atomic_load(&core->stats.bench_drain_all_ns), proc_us,
         (uint64_t)atomic_load(&core->stats.bench_drain_minflt), core->stats.bench_ipname_new,
         core->stats.bench_frame_new, core->stats.bench_ipname_flush, core->stats.bench_classify,
         core->stats.bench_ilmap_unsorted);
    static const char *const cb_kind[MDP_BENCH_CB_N] = {"class", "jit", "r2r", "other"};
    for (unsigned i = 0; i < MDP_BENCH_CB_N; i++)
        putf(o, " bench.cb_%s_ns=%" PRIu64 " bench.cb_%s_calls=%" PRIu64, cb_kind[i],
             (uint64_t)atomic_load(&core->stats.bench_cb_ns[i]), cb_kind[i],
             (uint64_t)atomic_load(&core->stats.bench_cb_calls[i]));
#endif
    /* end= last: how the process ended, the line's conclusion */
    putf(o, " truncated=%" PRIu64 " end=%s\n", core->stats.cut, end);
}

/* The exits of a call record that a write may give now (calls mode). */
static uint64_t call_exits(const struct mdp_record *r)
{
    return r->exits[0] + r->exits[1] + (r->exits[2] - r->caught);
}

/* Records that still count something go into the new table; the others
 * are freed. */
static void keep_pending(void *payload, const char *key, void *val)
{
    mdp_smap *map = payload;
    struct mdp_record *r = val;
    if (r->count && mdp_smap_put(map, key, strlen(key), r) == 0)
        return;
    free(r->debug);
    free(r);
}

int mdp_log_flush(mdp_core *core, const char *end, int final)
{
    if (core->log.fd < 0)
        return -1;
    size_t nrec = 0;
    for (unsigned k = 0; k < MDP_REC_NKINDS; k++)
        nrec += mdp_records_table(core, k)->n;
    /* the last write's buffer (its pages already touched) */
    struct out o = {core->writer->buf, 0, core->writer->buf_cap, 0};
    core->writer->buf = NULL;
    core->writer->buf_cap = 0;
    struct newmods nm = {0};
    mdp_smap_init(&nm.set);
    if (!core->writer->header_written) {
        char *h = mdp_header_line(core);
        if (!h) {
            free(o.s);
            return -1;
        }
        put(&o, h, strlen(h));
        put(&o, "\n", 1);
        free(h);
    } else {
        /* folders first seen after the header was written */
        size_t flen = 0;
        char *folders = mdp_folders_announce(core, &flen);
        if (folders)
            put(&o, folders, flen);
        free(folders);
    }
    /* threads first seen or renamed since the last write: their #thread
     * lines go before the records (threadnames.c) */
    mdp_threads_name_scan(core, 1);
    if (end)
        mdp_perf_sparse_note(core); /* a note, before the notes are taken */
    size_t nlen = 0;
    char *notes = mdp_notes_take(core, &nlen);
    if (notes)
        put(&o, notes, nlen);
    /* the files of the native frames in the records below */
    size_t elen = 0;
    char *elf = mdp_elf_announce(core, &elen);
    if (elf)
        put(&o, elf, elen);
    free(elf);

    struct collect c = {calloc(nrec ? nrec : 1, sizeof *c.v), 0, 0};
    if (!c.v) {
        free(o.s);
        mdp_folders_announced(core, 0);
        if (notes)
            mdp_notes_restore(core, notes, nlen);
        mdp_elf_announced(core, 0);
        return -1;
    }
    for (c.kind = 0; c.kind < MDP_REC_NKINDS; c.kind++)
        mdp_smap_each(mdp_records_table(core, c.kind), collect_one, &c);
    qsort(c.v, c.n, sizeof *c.v, by_count);
    uint64_t written = 0;
    for (size_t i = 0; i < c.n && !o.bad; i++) {
        const struct mdp_record *r = c.v[i].rec;
        enum mdp_rec_kind kind = c.v[i].kind;
        /* a call record keeps the enters of calls that have not left yet */
        uint64_t count = kind == MDP_REC_CALL && !final ? call_exits(r) : r->count;
        if (count == 0)
            continue;
        module_lines(core, &o, &nm, c.v[i].key);
        const struct mdp_rec_desc *d = &mdp_rec_kinds[kind];
        putf(&o, "%s %" PRIu64, d->word, count);
        if (d->fields & MDP_RECF_BYTES) /* bytes; a wait's nanoseconds */
            putf(&o, " %" PRIu64, r->bytes);
        if (d->fields & MDP_RECF_EXITS)
            putf(&o, " %" PRIu64 " %" PRIu64 " %" PRIu64, r->exits[0], r->exits[1],
                 r->exits[2] - r->caught);
        put(&o, " ", 1);
        put(&o, c.v[i].key, strlen(c.v[i].key));
        if (core->cfg.debug_names && r->debug) {
            put(&o, "\t", 1);
            put(&o, r->debug, strlen(r->debug));
        }
        put(&o, "\n", 1);
        written++;
    }
    size_t keep = o.len;
    if (end)
        stats_line(core, &o, core->writer->stat_records + written, end);
    int rc = -1;
    if (!o.bad && mdp_logfile_write(core, o.s, o.len, keep) == 0) {
        rc = 0;
        core->writer->header_written = 1;
        core->writer->stat_records += written;
        for (size_t i = 0; i < nm.n; i++)
            mdp_smap_put(&core->writer->described, nm.v[i], 32, (void *)1);
        mdp_elf_announced(core, 1);
        mdp_folders_announced(core, 1);
        /* what was written is gone; a call record keeps the enters of calls
         * that have not left yet */
        for (size_t i = 0; i < c.n; i++) {
            struct mdp_record *r = c.v[i].rec;
            if (c.v[i].kind == MDP_REC_CALL && !final) {
                r->count -= call_exits(r);
                r->exits[0] = r->exits[1] = r->exits[2] = r->caught = 0;
            } else {
                r->count = 0;
            }
        }
        for (unsigned k = 0; k < MDP_REC_NKINDS; k++) {
            mdp_smap *table = mdp_records_table(core, k), old = *table;
            mdp_smap_init(table);
            mdp_smap_each(&old, keep_pending, table);
            mdp_smap_free(&old);
        }
    } else {
        mdp_folders_announced(core, 0);
        mdp_elf_announced(core, 0); /* the next write names the files again */
        /* the notes wait for the next write, before what came meanwhile */
        if (notes)
            mdp_notes_restore(core, notes, nlen);
        notes = NULL;
    }
    free(notes);
    free(c.v);
    free(nm.v);
    mdp_smap_free(&nm.set);
    if (o.cap <= MDP_LOG_BUF_KEEP) {
        core->writer->buf = o.s;
        core->writer->buf_cap = o.cap;
    } else {
        free(o.s);
    }
    core->writer->last_flush_ms = mdp_elapsed_ms(core);
    return rc;
}

/* Messages from the launcher (attach): "stop" ends the session. */
static void poll_channel(mdp_core *core)
{
    char buf[256];
    size_t n;
    while ((n = mdp_channel_poll(core->channel, buf, sizeof buf)) > 0)
        if (n >= 4 && memcmp(buf, "stop", 4) == 0)
            atomic_store(&core->writer->stop_requested, 1);
}

void mdp_log_tick(mdp_core *core)
{
    poll_channel(core);
    uint64_t req = atomic_load(&core->writer->flush_req);
    int sig = atomic_load(&core->writer->term_signal);
    int due = mdp_elapsed_ms(core) - core->writer->last_flush_ms >= core->cfg.flush_ms;
    if (!due && !sig && req == atomic_load(&core->writer->flush_done))
        return;
    mdp_calls_flush(core);
    mdp_alloc_flush(core);
    if (sig) {
        char end[32];
        snprintf(end, sizeof end, "signal:%s", mdp_signal_name(sig));
        mdp_log_flush(core, end, 0);
    } else {
        mdp_log_flush(core, NULL, 0);
    }
    atomic_store(&core->writer->flush_done, req);
}

int mdp_stop_requested(const mdp_core *core)
{
    return atomic_load(&core->writer->stop_requested);
}

int mdp_writer_new(mdp_core *core, const char *runtime, int attach)
{
    struct mdp_writer *w = calloc(1, sizeof *w);
    if (!w)
        return -1;
    snprintf(w->runtime, sizeof w->runtime, "%s", runtime ? runtime : "");
    for (char *p = w->runtime; *p; p++)
        if (*p == ' ' || *p == '\t' || *p == '\n')
            *p = '_';
    w->attach = attach;
    time(&w->start_wall);
    mdp_smap_init(&w->described);
    core->writer = w;
    return 0;
}

void mdp_writer_free(mdp_core *core)
{
    struct mdp_writer *w = core->writer;
    if (!w)
        return;
    mdp_smap_free(&w->described);
    free(w->buf);
    mdp_folders_free(core);
    free(w);
    core->writer = NULL;
}
