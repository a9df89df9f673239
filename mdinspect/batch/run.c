/* mdinspect batch: the run. The main thread reads the input in blocks of
 * whole lines (io.c) and writes the output; worker threads resolve the
 * blocks, each into the output buffer of its block. Blocks are written in
 * the order they were read, so the output is the one a single thread
 * makes, line for line: one output line per input line, in input order.
 *
 * Blocks travel through a ring of slots, numbered by their sequence in the
 * input: the main thread fills free slots and queues them, a worker takes
 * the oldest queued block, the main thread waits for the oldest unwritten
 * block to be done and writes it. A slot belongs to one thread at a time
 * and changes hands under the run's lock, so its buffers need no other
 * guard; each slot and each worker has its own talloc tree (talloc is
 * safe across threads only on separate trees). A block whose output
 * outgrows its buffer (a line naming thousands of frames) waits for its
 * turn and writes what it has (spill), so memory stays bounded by the
 * slots, not by the input.
 *
 * With one thread (one CPU, --threads 1, or the formats that sum the
 * input: --speedscope and --top) the main thread resolves each block
 * itself, through the same code, and no thread is started.
 *
 * A regular file is read by the workers themselves (work_ranges): the
 * kernel's copy of the input into the blocks was most of the main
 * thread's time, the part of the run no other thread could share
 * (bench/README.md, issue 28, branches batch7 and batchio). The file is
 * cut into ranges of 128 KiB (RANGE; MDINSPECT_BATCH_RANGE for tests),
 * range N at byte N x RANGE from where the input starts; a worker
 * takes the next range while a slot is free (the same bound on memory as
 * blocks), reads the lines that start in it with pread (mdb_read_range:
 * a line belongs to the range it starts in), and then waits for its turn
 * to read the range's `#` lines (scan_range, in input order, the scan
 * turn `scan_seq`): the process of a line (logctx.c), its #module and
 * #elf lines and the folders a header adds all depend on the lines before
 * it, and the ranges before have been scanned when a range's turn comes,
 * so each block's process, events and line numbers (block_base) are what
 * the main thread's scan made of the same bytes. Most ranges hold no '#'
 * (looked for before the turn) and their turn passes at once. A header that adds folders waits, in
 * its turn, for every earlier block to be written, as the main thread did. The main thread then
 * only writes the blocks in order. A pipe or a terminal has no offsets: the main thread reads it as
 * above. A file that grows while read is read on to its new end (has_bytes); one that shrinks ends
 * the run at the block that met its new end, with an error naming the byte (write_oldest, main.c).
 */

#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <talloc.h>
#include <unistd.h>

#include "batch/batch.h"
#include "batch/native.h"
#include "batch/parse.h"
#include "batch/lines.h"
#include "batch/plain.h"

enum { FREE, QUEUED, DONE };

struct slot {
    void *ctx; /* the slot's own talloc tree */
    mdb_block in;
    mdb_output out, err; /* standard output and error of the block */
    uint64_t seq;
    uint64_t records, unresolved;
    uint64_t consumed; /* input bytes up to the block's end (progress) */
    bool nomem;
    /* ranges: the read failed (rend says how), the input ended before
     * the range did while it had more bytes before (shrank) */
    bool rerr, shrank;
    mdb_range_end rend;
    pthread_cond_t scan; /* ranges: its scan turn has come (work_ranges) */
    int state;
    /* Line numbers (block_base), under the run's lock: `first` is the
     * number of the block's first line once `based`; `pins` counts the
     * threads counting the block's lines for a later block's sake (its
     * buffer is not reused before they are done). */
    uint64_t first;
    bool based;
    unsigned pins;
    struct run *run;
};

struct worker {
    void *ctx; /* the worker's own talloc tree */
    mdb_resolver *res;
    const mdb_modcache *mods; /* res's module caches (mdb_peek_plain) */
    unsigned folders;         /* the run's `folders` its caches were made with */
    mdb_record *rec;
    pthread_t tid;
    bool started;
    struct run *run;
};

struct run {
    const mdb_run_opts *o;
    mdb_assemblies *a;
    pthread_mutex_t lock;
    pthread_cond_t queued, done, turn;
    struct slot *slots;
    unsigned nslots;
    uint64_t next_read, next_take, next_write; /* sequence numbers */
    uint64_t base_seq, base_line;              /* blocks before base_seq hold base_line lines */
    bool end;                                  /* no block will be queued any more */
    bool alone; /* no worker: the main thread resolves, and counts lines as it goes */
    int out_fd, err_fd;
    unsigned folders; /* how many times headers added folders (under lock) */
    /* Ranges of a regular file, read by the workers (work_ranges). */
    bool ranges;
    int in_fd;
    uint64_t base;     /* where the input starts in the file */
    uint64_t size;     /* its bytes after base, as last seen (fstat) */
    uint64_t range;    /* bytes of a range */
    uint64_t scan_seq; /* the range whose `#` lines are read next */
};

/* Write a slot's output to the real file (the caller has the turn). */
static void put(mdb_output *o, int fd)
{
    mdb_output real = {.fd = fd};
    mdb_write(&real, o->buf, o->len);
    if (real.failed)
        o->failed = true;
    o->len = 0;
}

/* A block's output is full: wait until every earlier block is written,
 * then write it (the main thread waits for this block meanwhile). */
static void spill(mdb_output *o)
{
    struct slot *sl = o->arg;
    struct run *run = sl->run;
    pthread_mutex_lock(&run->lock);
    while (run->next_write != sl->seq)
        pthread_cond_wait(&run->turn, &run->lock);
    pthread_mutex_unlock(&run->lock);
    put(&sl->err, run->err_fd);
    put(&sl->out, run->out_fd);
}

static void err_line(mdb_output *o, const char *a, const char *b)
{
    mdb_outs(o, MDB_PROGNAME " batch: ");
    mdb_outs(o, a);
    mdb_outs(o, b);
    mdb_outc(o, '\n');
}

/* A record to the block's outputs, in the run's format. */
static void put_record(struct worker *w, struct slot *sl, const mdb_proc *proc,
                       const mdb_record *rec)
{
    const mdb_run_opts *o = w->run->o;
    const char *warning;
    /* --thread, --from, --to: a record left out counts for nothing */
    if (o->filter.on && rec->kind != MDB_MALFORMED &&
        !mdb_filter_keep(&o->filter, o->lc, proc, rec))
        return;
    /* a log with sampled allocation stacks: the flame graphs take its
     * astack records, not its exact per-type counts too (the same
     * allocations twice); --top shows both, apart (pprof.c: --pprof) */
    if ((o->format == MDB_FOLDED || o->format == MDB_SPEEDSCOPE) && rec->kind == MDB_ALLOC &&
        proc && proc->alloc_sample)
        return;
    /* heap records are snapshots, one per gen2 GC: summed they would say
     * nothing; --top and --pprof show the last (aggregate.c, pprof.c) */
    if ((o->format == MDB_FOLDED || o->format == MDB_SPEEDSCOPE) && rec->kind == MDB_HEAP)
        return;
    sl->records++;
    if (rec->unresolved)
        sl->unresolved++;
    switch (o->format) {
    case MDB_TEXT: mdb_emit_text(&sl->out, o->lc, rec); break;
    case MDB_JSON: mdb_emit_json(&sl->out, w->res, o->lc, proc, rec); break;
    default:
        if (rec->kind == MDB_MALFORMED) {
            char num[48];
            snprintf(num, sizeof num, "malformed line %llu: ", (unsigned long long)rec->lineno);
            err_line(&sl->err, num, rec->why);
        }
        if (o->format == MDB_FOLDED)
            mdb_emit_folded(&sl->out, o->lc, rec);
        else if (!mdb_aggregate_add(o->agg, o->lc, proc, rec))
            sl->nomem = true;
    }
    if (mdb_assemblies_has_warning(w->run->a) && (warning = mdb_assemblies_warning(w->run->a)))
        err_line(&sl->err, warning, "");
    if ((warning = mdb_resolver_native_warning(w->res)))
        err_line(&sl->err, warning, "");
}

static void line(struct worker *w, struct slot *sl, const mdb_proc *proc, const char *s, size_t n,
                 uint64_t lineno, int ending)
{
    mdb_resolver_trim(w->res);
    mdb_record_parse(w->res, w->rec, s, n, lineno, ending);
    put_record(w, sl, proc, w->rec);
}

/* A plain line whose frame mdb_peek_plain found (or mdb_resolve_plain_row
 * made): the record mdb_record_parse would make of it, in a format other
 * than text (resolve_block writes text itself). */
static void plain_line(struct worker *w, struct slot *sl, const mdb_proc *proc, const char *s,
                       size_t n, uint64_t lineno, const mdb_frame *f)
{
    mdb_record *rec = w->rec;
    /* (no warning to look for: finding a kept frame, or making a row's
     * frame in a module already open, calls nothing that could make one) */
    rec->kind = MDB_PLAIN;
    rec->line = s;
    rec->len = n;
    rec->lineno = lineno;
    rec->count = 1;
    rec->bytes = 0;
    rec->why = NULL;
    rec->nframes = 1;
    rec->frames[0] = f;
    rec->has_il[0] = false;
    rec->unresolved = f->status != MDB_OK && f->status != MDB_SPECIAL;
    put_record(w, sl, proc, rec);
}

/* The number of block `seq`'s first line, the run's lock held (released
 * while counting). Lines are counted by the threads that resolve the
 * blocks, not by the one that reads them: counting was a quarter of that
 * thread's work, and what it does alone bounds the run (Amdahl; bench/
 * README.md, issue 28). A block's first line is known once every earlier
 * block is counted; an earlier block whose thread has not counted it yet
 * (it took the block and waits for a CPU) is counted here too rather than
 * waited for: the same number twice, and nobody stalls. The caller owns
 * block `seq` (it read it, or took it from the queue), so every earlier
 * block is read and its slot not yet reused. */
static uint64_t block_base(struct run *run, uint64_t seq)
{
    struct slot *own = &run->slots[seq % run->nslots];
    while (!own->based) {
        struct slot *sl = &run->slots[run->base_seq % run->nslots];
        if (!sl->based) {
            sl->first = run->base_line + 1;
            sl->based = true;
        }
        if (run->base_seq == seq)
            break;
        if (!sl->in.counted) {
            uint64_t n;
            sl->pins++;
            pthread_mutex_unlock(&run->lock);
            n = mdb_block_lines(&sl->in);
            pthread_mutex_lock(&run->lock);
            if (--sl->pins == 0)
                pthread_cond_broadcast(&run->done); /* write_oldest may wait for it */
            if (!sl->in.counted) {
                sl->in.nlines = n;
                sl->in.counted = true;
            }
            continue; /* base_seq may have moved meanwhile */
        }
        run->base_line += sl->in.nlines;
        run->base_seq++;
    }
    return own->first;
}

/* A written block's slot is free again (the run's lock held): first no
 * later block may need its line count (block_base reads the slot at
 * base_seq), and no thread still counts its lines. */
static void retire(struct run *run, struct slot *sl)
{
    if (!sl->in.counted) { /* alone, and its loop stopped short (resolve_block) */
        sl->in.nlines = mdb_block_lines(&sl->in);
        sl->in.counted = true;
    }
    if (run->base_seq == sl->seq) { /* counted: it was resolved (prepare) */
        run->base_line += sl->in.nlines;
        run->base_seq++;
    }
    while (sl->pins)
        pthread_cond_wait(&run->done, &run->lock);
    sl->state = FREE;
}

/* Before resolving a block (the run's lock held, released while
 * counting): its lines counted (by the loop itself when alone), its first
 * line's number. */
static void prepare(struct run *run, struct slot *sl)
{
    /* Alone, the block's own loop counts its lines (resolve_block): no
     * other block needs them before it is done. */
    if (!sl->in.counted && !run->alone) {
        uint64_t n;
        pthread_mutex_unlock(&run->lock);
        n = mdb_block_lines(&sl->in);
        pthread_mutex_lock(&run->lock);
        if (!sl->in.counted) {
            sl->in.nlines = n;
            sl->in.counted = true;
        }
    }
    sl->in.first_lineno = block_base(run, sl->seq);
}

#define AHEAD 16 /* lines looked at before the first of them is written */

/* Resolve the lines of a block into its outputs. Lines are taken AHEAD at
 * a time: first each plain line whose module this thread met asks for the
 * row's frame (mdb_peek_plain, which changes nothing), then every line is
 * resolved and written in order; the frames of the first pass arrive from
 * memory together instead of one line after another. A plain line whose
 * module is met but whose row is not has its frame made at once
 * (mdb_resolve_plain_row), without the line's parse; any other line goes
 * through mdb_record_parse. What naming such a row reads first (its row,
 * its name, its owner's name) is asked for in the same two passes
 * (mdt_token_name_prefetch, step 0 in the first, step 1 before the second):
 * the printer waited for each from memory in turn, 0.82x the wall time of
 * 10^6 lines on one thread with them asked for (bench/README.md, issue 28,
 * branch batch7). */
static void resolve_block(struct worker *w, struct slot *sl)
{
    const mdb_block *b = &sl->in;
    const mdb_run_opts *o = w->run->o;
    /* A range's last line when it is not an ordinary one (mdb_read_range)
     * is left out of the loop and written after it, as a single block's
     * line is: a check in the loop cost 12 instructions a line. */
    const size_t odd = b->last_long ? 1 : b->tail;
    const char *p = b->buf, *end = b->buf + b->len - odd;
    uint64_t lineno = b->first_lineno;
    const mdb_proc *proc = b->proc;
    size_t ev = 0;
    /* the line of the next process start (none: never met) */
    uint64_t next_ev = b->nev ? b->ev[0].lineno : UINT64_MAX;
    const bool pid_only = o->pid_only, text = o->format == MDB_TEXT;
    uint64_t records = 0, unresolved = 0; /* of the plain lines written here */
    struct mdb_cutter cut;
    struct {
        const char *s;
        size_t n;
        const mdb_frame *f;
        mdb_module *m; /* the module of a plain line, when met open */
        uint32_t tok;
    } g[AHEAD];
    sl->records = sl->unresolved = 0;
    sl->nomem = false;
    if (w->folders != w->run->folders) {
        /* headers added folders: answers "unknown MVID" may have changed */
        mdb_resolver_forget(w->res);
        w->folders = w->run->folders;
    }
    if (b->single) {
        size_t n = b->len;
        if (n && b->buf[n - 1] == '\r')
            n--;
        if (!o->pid_only || (proc->has_pid && proc->pid == o->pid))
            line(w, sl, proc, b->buf, n, lineno, b->cut ? MDB_LINE_LONG : MDB_LINE_UNENDED);
        return;
    }
    mdb_cutter_init(&cut, b->buf, b->len - odd);
    while (p < end && !sl->out.failed && !sl->nomem) {
        unsigned k = 0, nfresh = 0;
        uint8_t fresh[AHEAD]; /* lines whose row's frame is made here */
        for (; k < AHEAD && p < end; k++) {
            const char *nl = mdb_next_newline(&cut), *s = p;
            size_t n = (size_t)(nl - p);
            p = nl < end ? nl + 1 : end;
            if (n && s[n - 1] == '\r')
                n--;
            g[k].s = s;
            g[k].n = n;
            g[k].m = NULL;
            g[k].f = n ? mdb_peek_plain(w->mods, s, n, &g[k].m, &g[k].tok) : NULL;
            if (!g[k].f && g[k].m) {
                mdb_resolver_prefetch(w->res, g[k].m, g[k].tok, 0);
                fresh[nfresh++] = (uint8_t)k;
            }
        }
        for (unsigned i = 0; i < nfresh; i++)
            mdb_resolver_prefetch(w->res, g[fresh[i]].m, g[fresh[i]].tok, 1);
        for (unsigned i = 0; i < k; i++, lineno++) {
            int ending = MDB_LINE_ENDED;
            const mdb_proc *lp = proc; /* the line's process */
            const mdb_frame *f = g[i].f;
            if (__builtin_expect(lineno == next_ev, 0)) { /* a process starts */
                proc = b->ev[ev].proc;
                if (b->ev[ev++].split) /* the cut line is the process's before */
                    ending = MDB_LINE_SPLIT;
                else
                    lp = proc;
                next_ev = ev < b->nev ? b->ev[ev].lineno : UINT64_MAX;
                if (ending != MDB_LINE_ENDED) {
                    f = NULL;
                    g[i].m = NULL;
                }
            }
            if (__builtin_expect(pid_only, 0) && !(lp->has_pid && lp->pid == o->pid))
                continue;
            if (!f && !(g[i].m && (f = mdb_resolve_plain_row(w->res, g[i].m, g[i].tok)))) {
                line(w, sl, lp, g[i].s, g[i].n, lineno, ending);
            } else if (text) { /* what mdb_emit_text would write */
                records++;
                unresolved += f->status != MDB_OK && f->status != MDB_SPECIAL;
                mdb_out_line(&sl->out, f->text, f->text_len);
            } else {
                plain_line(w, sl, lp, g[i].s, g[i].n, lineno, f);
            }
        }
    }
    if (odd && p >= end && !sl->out.failed && !sl->nomem) {
        /* never a process's start: the scans skip it */
        size_t n = b->last_long ? 0 : b->tail;
        if (n && end[n - 1] == '\r')
            n--;
        if (!pid_only || (proc->has_pid && proc->pid == o->pid))
            line(w, sl, proc, end, n, lineno, b->last_long ? MDB_LINE_LONG : MDB_LINE_UNENDED);
        lineno++;
    }
    sl->records += records;
    sl->unresolved += unresolved;
    /* alone: the lines are counted here, not before (prepare) */
    if (w->run->alone && !sl->in.counted && p >= end) {
        sl->in.nlines = lineno - b->first_lineno;
        sl->in.counted = true;
    }
}

/* No block is read after those read already (the run's lock held): the
 * threads that wait for a block to resolve (queued) or for their turn to
 * read a range (turn) are woken to see it. */
static void end_reading(struct run *run)
{
    run->end = true;
    pthread_cond_broadcast(&run->queued);
    pthread_cond_broadcast(&run->turn);
}

/* The run stops (an output failed, a block ran out of memory; the main
 * thread, the run's lock held): reading ends, and the blocks read already
 * are resolved and retired, unwritten. */
static void stop_unwritten(struct run *run)
{
    end_reading(run);
    while (run->next_write < run->next_read) {
        struct slot *q = &run->slots[run->next_write % run->nslots];
        while (q->state != DONE)
            pthread_cond_wait(&run->done, &run->lock);
        retire(run, q);
        run->next_write++;
        pthread_cond_broadcast(&run->turn);
    }
}

static void *work_ranges(struct worker *w);

static void *work(void *arg)
{
    struct worker *w = arg;
    struct run *run = w->run;
    if (run->ranges)
        return work_ranges(w);
    pthread_mutex_lock(&run->lock);
    for (;;) {
        while (run->next_take == run->next_read && !run->end)
            pthread_cond_wait(&run->queued, &run->lock);
        if (run->next_take == run->next_read)
            break; /* the end, and nothing left */
        struct slot *sl = &run->slots[run->next_take++ % run->nslots];
        prepare(run, sl);
        pthread_mutex_unlock(&run->lock);
        resolve_block(w, sl);
        pthread_mutex_lock(&run->lock);
        sl->state = DONE;
        pthread_cond_broadcast(&run->done);
    }
    pthread_mutex_unlock(&run->lock);
    return NULL;
}

/* Whether the input has bytes at `start` (the run's lock held): a file
 * that grew since it was last looked at is read on, as a pipe would be. */
static bool has_bytes(struct run *run, uint64_t start)
{
    struct stat st;
    if (start < run->size)
        return true;
    if (fstat(run->in_fd, &st) == 0 && st.st_size > 0 && (uint64_t)st.st_size > run->base)
        run->size = (uint64_t)st.st_size - run->base;
    return start < run->size;
}

/* The `#` lines of a range just read (hash: its first '#', or NULL), in
 * input order (the caller has the scan turn, not the lock): what logctx.c and native.c learn from
 * them holds for the lines after them, and a block's process is the one the ranges before it left
 * current. */
static void scan_range(struct run *run, struct slot *sl, const char *hash)
{
    const mdb_run_opts *o = run->o;
    int f;
    if (hash) {
        pthread_mutex_lock(&run->lock);
        sl->in.first_lineno = block_base(run, sl->seq);
        pthread_mutex_unlock(&run->lock);
        mdb_natives_scan(o->natives, &sl->in, hash);
    }
    if ((f = mdb_logctx_scan(o->lc, &sl->in, hash)) < 0) {
        sl->nomem = true;
        return;
    }
    if (f > 0) {
        /* Folders a header names are searched from the block that names
         * them on: every earlier block is written first (later ones are
         * not scanned yet, so none is being resolved). */
        pthread_mutex_lock(&run->lock);
        while (run->next_write != sl->seq)
            pthread_cond_wait(&run->turn, &run->lock);
        mdb_logctx_commit(o->lc);
        run->folders++;
        pthread_mutex_unlock(&run->lock);
    }
}

/* A worker of a regular file: it takes the next range, reads it itself
 * (mdb_read_range: the copies out of the page cache run side by side, no
 * longer on one thread), looks for a '#' in it, waits for the ranges
 * before it to have their '#' lines read, reads its own (scan_range:
 * nothing to read in most ranges, so the turn passes at once), then
 * counts and resolves its lines as a worker of blocks does. */
static void *work_ranges(struct worker *w)
{
    struct run *run = w->run;
    pthread_mutex_lock(&run->lock);
    for (;;) {
        while (!run->end && run->next_read - run->next_write >= run->nslots)
            pthread_cond_wait(&run->turn, &run->lock);
        if (run->end)
            break;
        uint64_t seq = run->next_read, start = seq * run->range, expect;
        if (!has_bytes(run, start)) {
            end_reading(run);
            break;
        }
        expect = run->size;
        struct slot *sl = &run->slots[seq % run->nslots];
        sl->seq = seq;
        sl->based = false;
        sl->state = QUEUED;
        sl->records = sl->unresolved = 0;
        sl->nomem = sl->rerr = sl->shrank = false;
        sl->consumed = start + run->range < expect ? start + run->range : expect;
        run->next_read++;
        pthread_cond_broadcast(&run->queued); /* the writer waits for it */
        pthread_mutex_unlock(&run->lock);

        const char *hash = NULL; /* its first '#', looked for before its turn */
        if (mdb_read_range(&sl->in, run->in_fd, run->base, start, start + run->range, &sl->rend) <
            0) {
            sl->rerr = sl->rend.err != 0;
            sl->nomem = !sl->rerr;
        } else {
            /* the input ended before the range's end, where it had bytes */
            sl->shrank = sl->rend.eof < start + run->range && sl->rend.eof < expect;
            hash = memchr(sl->in.buf, '#', sl->in.len - sl->in.tail);
        }
        pthread_mutex_lock(&run->lock);
        while (run->scan_seq != seq)
            pthread_cond_wait(&sl->scan, &run->lock);
        pthread_mutex_unlock(&run->lock);
        if (!sl->rerr && !sl->nomem)
            scan_range(run, sl, hash);
        pthread_mutex_lock(&run->lock);
        run->scan_seq++;
        /* the next range's worker, if it waits (each waits on its own
         * slot's condition: a broadcast would wake every worker a turn) */
        pthread_cond_signal(&run->slots[(seq + 1) % run->nslots].scan);
        if (sl->rerr || sl->nomem || sl->shrank) {
            /* no range after it is read (nor written: write_oldest) */
            end_reading(run);
        }
        if (!sl->rerr && !sl->nomem) {
            prepare(run, sl);
            pthread_mutex_unlock(&run->lock);
            resolve_block(w, sl);
            pthread_mutex_lock(&run->lock);
        }
        sl->state = DONE;
        /* The writer waits for the oldest unwritten block only, and
         * writes every later one already done without waiting: waking it
         * for those was most of its time (bench/README.md, issue 28,
         * branch batchio). */
        if (seq == run->next_write)
            pthread_cond_broadcast(&run->done);
    }
    pthread_mutex_unlock(&run->lock);
    return NULL;
}

static bool worker_init(struct worker *w, struct run *run)
{
    memset(w, 0, sizeof *w);
    w->run = run;
    if (!(w->ctx = talloc_new(NULL)) ||
        !(w->res = mdb_resolver_new(w->ctx, run->a, run->o->format == MDB_JSON, run->o->budget)) ||
        !(w->rec = talloc(w->ctx, mdb_record)))
        return false;
    w->mods = mdb_resolver_modcache(w->res);
    mdb_resolver_use_natives(w->res, run->o->natives);
    mdb_resolver_set_signatures(w->res, run->o->signatures);
    mdb_resolver_set_il(w->res, run->o->il);
    return true;
}

static bool slot_init(struct slot *sl, struct run *run)
{
    memset(sl, 0, sizeof *sl);
    sl->run = run;
    pthread_cond_init(&sl->scan, NULL);
    if (!(sl->ctx = talloc_new(NULL)) || mdb_block_init(&sl->in, sl->ctx) ||
        mdb_output_init(&sl->out, sl->ctx, -1) || mdb_output_init(&sl->err, sl->ctx, -1))
        return false;
    /* the buffers' size is the bound of a block's memory */
    sl->out.spill = sl->err.spill = spill;
    sl->out.arg = sl->err.arg = sl;
    return true;
}

/* Write the oldest block when it is done (the run's lock held, released
 * while writing). false when the run must stop: an output failed, or the
 * block ran out of memory. */
static bool write_oldest(struct run *run, mdb_run_result *res)
{
    struct slot *sl = &run->slots[run->next_write % run->nslots];
    while (sl->state != DONE)
        pthread_cond_wait(&run->done, &run->lock);
    pthread_mutex_unlock(&run->lock);
    /* Standard error first, as when it went out at once and the output
     * waited in its buffer. */
    put(&sl->err, run->err_fd);
    put(&sl->out, run->out_fd);
    res->records += sl->records;
    res->unresolved += sl->unresolved;
    mdb_progress_tick(run->o->prog, res->records, sl->consumed);
    pthread_mutex_lock(&run->lock);
    retire(run, sl);
    run->next_write++;
    pthread_cond_broadcast(&run->turn);
    res->write_error |= sl->out.failed;
    res->nomem |= sl->nomem;
    if (sl->rerr) {
        res->read_error = true;
        res->read_errno = sl->rend.err;
        res->read_at = sl->rend.err_at;
    } else if (sl->shrank) {
        res->read_error = true;
        res->shrank = true;
        res->read_at = sl->rend.eof;
    }
    return !(sl->out.failed || sl->err.failed || sl->nomem || sl->rerr || sl->shrank);
}

/* Bytes of a range: RANGE, or MDINSPECT_BATCH_RANGE (for tests: a few
 * bytes make small inputs meet every edge of a range), at most half of
 * MDB_MAX_LINE so that only a range's last line can be too long. */
/* Twice a block: the writer is woken once a range, and its wake-ups were
 * most of what it did (1.8-2.0% of the CPU of a -t 2 run to /dev/null
 * against 3.1-3.6% with 64 KiB: bench/README.md, issue 28, branch
 * batchio); a range's names (~156 KiB of PATH TOKEN lines) still fit the
 * 256 KiB output buffer, where 256 KiB ranges would spill. */
#define RANGE (2 * MDB_BLOCK)

static uint64_t range_bytes(void)
{
    const char *e = getenv("MDINSPECT_BATCH_RANGE");
    char *end;
    unsigned long long v;
    if (!e || !*e)
        return RANGE;
    errno = 0;
    v = strtoull(e, &end, 10);
    if (errno || *end || v == 0 || v > MDB_MAX_LINE / 2)
        return RANGE;
    return v;
}

/* Whether the workers read the input themselves: a regular file with
 * bytes left after where it is open at (pread needs an offset; a pipe or
 * a terminal is read by the main thread). A file that says it is empty
 * (those of /proc) is read the old way too. */
static bool use_ranges(struct run *run, int fd)
{
    struct stat st;
    off_t pos;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
        (pos = lseek(fd, 0, SEEK_CUR)) < 0 || pos >= st.st_size)
        return false;
    run->in_fd = fd;
    run->base = (uint64_t)pos;
    run->size = (uint64_t)(st.st_size - pos);
    run->range = range_bytes();
    return true;
}

unsigned mdb_cpus(void)
{
    cpu_set_t set;
    long n;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return (unsigned)CPU_COUNT(&set);
    n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
}

void mdb_run(void *ctx, mdb_assemblies *a, const mdb_run_opts *o, mdb_run_result *res)
{
    unsigned nworkers = o->threads > 1 ? o->threads : 0, started = 0;
    struct worker *w = talloc_zero_array(NULL, struct worker, nworkers ? nworkers : 1);
    struct run run = {
        .o = o, .a = a, .out_fd = o->out_fd, .err_fd = o->err_fd, .alone = nworkers == 0};
    mdb_reader in;
    void *in_ctx = talloc_new(NULL);
    bool ok = w && in_ctx && mdb_reader_init(&in, in_ctx, o->in_fd) == 0;
    memset(res, 0, sizeof *res);
    /* Enough slots that the workers find blocks queued while the main
     * thread writes. */
    run.nslots = nworkers ? 2 * nworkers + 2 : 1;
    run.slots = talloc_zero_array(NULL, struct slot, run.nslots);
    ok = ok && run.slots;
    for (unsigned i = 0; ok && i < run.nslots; i++)
        ok = slot_init(&run.slots[i], &run);
    for (unsigned i = 0; ok && i < (nworkers ? nworkers : 1); i++)
        ok = worker_init(&w[i], &run);
    pthread_mutex_init(&run.lock, NULL);
    pthread_cond_init(&run.queued, NULL);
    pthread_cond_init(&run.done, NULL);
    pthread_cond_init(&run.turn, NULL);
    run.ranges = ok && nworkers && use_ranges(&run, o->in_fd);
    for (unsigned i = 0; ok && i < nworkers; i++) {
        if (pthread_create(&w[i].tid, NULL, work, &w[i]) != 0)
            break; /* fewer workers (at least one is needed) */
        w[i].started = true;
        started++;
    }
    if (nworkers && !started)
        ok = false;
    if (!ok)
        res->nomem = true;

    pthread_mutex_lock(&run.lock);
    while (ok && run.ranges) {
        /* The workers read; this thread writes the blocks in order. */
        while (run.next_write == run.next_read && !run.end)
            pthread_cond_wait(&run.queued, &run.lock);
        if (run.next_write == run.next_read)
            break; /* the end, and everything read is written */
        if (!write_oldest(&run, res)) {
            stop_unwritten(&run);
            break;
        }
    }
    while (ok && !run.ranges) {
        bool stop = false;
        /* Queue blocks while slots are free and the input lasts. */
        while (!run.end && run.next_read - run.next_write < run.nslots) {
            struct slot *sl = &run.slots[run.next_read % run.nslots];
            sl->seq = run.next_read; /* its turn to be written (spill) */
            sl->based = false;
            pthread_mutex_unlock(&run.lock);
            int r = mdb_read_block(&in, &sl->in), f = 0, rerrno = errno;
            sl->consumed = in.consumed;
            /* Only a block with a '#' has header lines (logctx.c, native.c),
             * whose line numbers must be known here; most blocks have none,
             * and this thread then counts nothing (block_base). */
            const char *hash = r > 0 && !sl->in.single ? memchr(sl->in.buf, '#', sl->in.len) : NULL;
            if (hash) {
                pthread_mutex_lock(&run.lock);
                sl->in.first_lineno = block_base(&run, sl->seq);
                pthread_mutex_unlock(&run.lock);
                /* its #elf lines, before any thread resolves it (native.c) */
                mdb_natives_scan(o->natives, &sl->in, hash);
            }
            if (r > 0 && (f = mdb_logctx_scan(o->lc, &sl->in, hash)) < 0)
                r = -2; /* out of memory */
            pthread_mutex_lock(&run.lock);
            if (f > 0) {
                /* Folders a header names are searched from the block that
                 * names them on: every earlier block is resolved (and
                 * written: a block that spills waits for its turn) first. */
                while (!stop && run.next_write < run.next_read)
                    stop = !write_oldest(&run, res);
                mdb_logctx_commit(o->lc);
                run.folders++;
                if (stop)
                    break;
            }
            if (r > 0 && !nworkers) { /* alone: resolve it here */
                prepare(&run, sl);
                pthread_mutex_unlock(&run.lock);
                resolve_block(&w[0], sl);
                pthread_mutex_lock(&run.lock);
                sl->state = DONE;
            }
            if (r <= 0) {
                res->read_error = r == -1;
                res->read_errno = r == -1 ? rerrno : 0;
                res->read_at = in.consumed;
                res->nomem |= r == -2;
                end_reading(&run);
                break;
            }
            run.next_read++;
            if (nworkers) {
                sl->state = QUEUED;
                pthread_cond_signal(&run.queued);
            }
        }
        if (!stop && run.next_write == run.next_read)
            break; /* everything read is written */
        if (stop || !write_oldest(&run, res)) {
            stop_unwritten(&run);
            break;
        }
    }
    end_reading(&run);
    pthread_mutex_unlock(&run.lock);
    for (unsigned i = 0; w && i < nworkers; i++)
        if (w[i].started)
            pthread_join(w[i].tid, NULL);

    if (run.ranges && !res->read_error)
        lseek(o->in_fd, 0, SEEK_END); /* where reading it to its end leaves it */
    pthread_cond_destroy(&run.turn);
    pthread_cond_destroy(&run.done);
    pthread_cond_destroy(&run.queued);
    pthread_mutex_destroy(&run.lock);
    /* Frames live in the workers' arenas and are shared through the
     * modules: they go with the caller's context, as the modules do. So
     * do the slots and the reader: the caller frees all of it at once, or
     * leaves it to the process's exit (main.c, mdb_exit_free). */
    for (unsigned i = 0; w && i < (nworkers ? nworkers : 1); i++) {
        if (w[i].res)
            res->resets += mdb_resolver_resets(w[i].res);
        talloc_steal(ctx, w[i].ctx);
    }
    for (unsigned i = 0; run.slots && i < run.nslots; i++) {
        pthread_cond_destroy(&run.slots[i].scan);
        talloc_steal(ctx, run.slots[i].ctx);
    }
    talloc_steal(ctx, run.slots);
    talloc_steal(ctx, w);
    talloc_steal(ctx, in_ctx);
}
