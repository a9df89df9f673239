/* mdinspect batch: the formats that need the whole input before they can
 * print: --speedscope (speedscope's file format: shared frames, and
 * "sampled" profiles) and --top N (the methods with the most exclusive and
 * inclusive counts, over every process); --pprof hands its records to
 * pprof.c. Frames and stacks are interned by
 * their text in tables of their own, so memory follows the distinct
 * frames and stacks, not the number of records, and the resolver's cache
 * may start over without harm.
 *
 * --speedscope: a log of format 4 (records with their thread and time
 * slice) gives one profile per thread, "NAME (tid N)", in milliseconds:
 * its stacks in time order (slice by slice, each slice's stacks in the
 * order the log gave them), weighted by count x the sampling period, with
 * an empty sample for the time between the thread's busy slices, so that
 * speedscope's "Time Order" view puts every slice where it happened. The
 * records of older logs (no thread) give one profile per process, its
 * distinct stacks weighted by their counts, as before.
 *
 * --top labels its numbers with what the records count: samples (stack),
 * calls (call), objects and bytes (alloc, with a table by bytes too).
 * Sampled allocation stacks (astack) get a section of their own after
 * the exact alloc tables (their counts are estimates, never summed with
 * exact ones): who allocates, per type and allocating method (the frame
 * after the type, what PerfView's GC Heap Alloc Stacks shows under a
 * type), by bytes, then each method by the bytes allocated below it
 * (inclusive); --type NAME keeps one type's (filter.c). Heap records
 * (snapshots of the live heap after gen2 GCs) get one more section per
 * process: its last snapshot by bytes, and each type's growth since its
 * first.
 *
 * The per-record facts a further output needs (pprof labels) are in
 * struct stack: its profile (process, thread), slice and weight. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <talloc.h>

#include "batch/batch.h"

struct sframe { /* a frame of the speedscope file, or a method of --top */
    const char *name;
    uint32_t name_len;
    const char *file;
    uint32_t line, column;
    uint64_t self, total;   /* --top: exclusive and inclusive counts */
    uint64_t bself, btotal; /* --top: the same in bytes (alloc records) */
    uint64_t stamp;         /* --top: last record counted in total */
    /* --top, astack records: a "TYPE <- METHOD" pair's objects and bytes
     * (aself, abself), a method's below it on the stacks (atotal,
     * abtotal), the last astack record counted in those */
    uint64_t aself, abself, atotal, abtotal, astamp;
};

/* A distinct stack of a profile (and slice): the unit --speedscope writes. */
struct stack {
    uint32_t n;
    uint32_t profile; /* its profile (a process, or a thread of one) */
    uint64_t slice;   /* its time slice (0 in a profile without threads) */
    uint64_t seq;     /* order of its first record */
    uint64_t weight;  /* the records' counts summed */
    uint32_t ids[];   /* [0] the profile, [1..2] the slice, then the frames root first */
};
#define HEAD 3 /* words of ids[] before the frames */

struct profile { /* --speedscope: a process, or a thread of one, that has records */
    const mdb_proc *proc;
    bool threaded; /* format 4: one thread */
    uint64_t tid;
    uint64_t total;
    int kind; /* MDB_THROW, MDB_WAIT, MDB_ASTACK: a process's throws, waits or sampled
               * allocations; else samples */
};

struct profile_key {
    uint32_t proc;
    uint32_t threaded; /* 1 a thread's samples; 0 a process's (2 its throws, 3 its waits) */
    uint64_t tid;
};

/* --top, heap records: a type of a process in its first and last
 * snapshots (GC numbers), and each process's first and last. */
struct heap_type {
    uint32_t proc; /* index into heap_procs */
    const char *name;
    uint32_t name_len;
    uint64_t first_gc, fcount, fbytes, last_gc, lcount, lbytes;
};
struct heap_proc {
    const mdb_proc *proc;
    uint64_t first_gc, first_ms, last_gc, last_ms;
};

struct mdb_aggregate {
    int format;
    mdb_pprof *pprof; /* --pprof: the profile (pprof.c) does the rest */
    unsigned top;
    mdb_table frames; /* key text -> id + 1 (as a pointer-sized integer) */
    struct sframe *f;
    size_t nf, capf;
    mdb_table stacks; /* ids -> struct stack */
    struct stack **s;
    size_t ns, caps;
    mdb_arena arena;
    uint64_t total, bytes, records;
    uint64_t atotal, abytes, arecords; /* astack records: estimates, apart */
    mdb_table heap;                    /* (process, type) -> heap_type + 1 */
    struct heap_type *ht;
    size_t nht, capht;
    struct heap_proc *hp;
    size_t nhp, caphp;
    unsigned kinds; /* 1 << kind of every record summed */
    struct profile *p;
    uint32_t np, capp;
    mdb_table profiles; /* struct profile_key -> profile + 1 */
    mdb_logctx *lc;     /* the thread names, at the end */
    double from_ms;     /* --from: where the threads' timelines start */
};

mdb_aggregate *mdb_aggregate_new(void *ctx, int format, unsigned top, double from_s)
{
    mdb_aggregate *g = talloc_zero(ctx, mdb_aggregate);
    if (!g)
        return NULL;
    g->format = format;
    g->top = top;
    g->from_ms = from_s > 0 ? from_s * 1000.0 : 0.0;
    mdb_arena_init(&g->arena, g);
    if ((format == MDB_PPROF && !(g->pprof = mdb_pprof_new(g))) ||
        mdb_table_init(&g->frames, g, 1024) || mdb_table_init(&g->stacks, g, 1024) ||
        mdb_table_init(&g->profiles, g, 64) || mdb_table_init(&g->heap, g, 64) || !g->arena.ctx) {
        talloc_free(g);
        return NULL;
    }
    return g;
}

static bool intern_name(mdb_aggregate *g, const char *key, uint32_t klen, const char *name,
                        uint32_t nlen, const mdb_frame *f, uint32_t *id);

/* The id of a frame: for --top the method (its name alone), for speedscope
 * the name with its source line. */
static bool intern(mdb_aggregate *g, mdb_logctx *lc, uint64_t lineno, const mdb_frame *f,
                   uint32_t *id)
{
    char buf[MDB_TEXT_ROOM];
    uint32_t nlen;
    const char *name =
        f->status == MDB_OK ? f->name : mdb_frame_text(f, lc, lineno, buf, sizeof buf, &nlen);
    if (f->status == MDB_OK)
        nlen = f->name_len;
    const char *key = f->status == MDB_OK && g->format == MDB_SPEEDSCOPE ? f->text : name;
    uint32_t klen = f->status == MDB_OK && g->format == MDB_SPEEDSCOPE ? f->text_len : nlen;
    return intern_name(g, key, klen, name, nlen, f, id);
}

/* The id of an entry by its key (a frame's text or name, or --top's "TYPE
 * <- METHOD"), made with `name` (and f's source line, for speedscope) on
 * first sight. */
static bool intern_name(mdb_aggregate *g, const char *key, uint32_t klen, const char *name,
                        uint32_t nlen, const mdb_frame *f, uint32_t *id)
{
    uint64_t h = mdb_hash(key, klen);
    uintptr_t v = (uintptr_t)mdb_table_get(&g->frames, h, key, klen);
    struct sframe *s;
    if (v) {
        *id = (uint32_t)(v - 1);
        return true;
    }
    if (g->nf == g->capf) {
        size_t cap = g->capf ? g->capf * 2 : 1024;
        struct sframe *nf = talloc_realloc(g, g->f, struct sframe, cap);
        if (!nf)
            return false;
        g->f = nf;
        g->capf = cap;
    }
    s = &g->f[g->nf];
    memset(s, 0, sizeof *s);
    if (!(s->name = mdb_arena_strndup(&g->arena, name, nlen)))
        return false;
    s->name_len = nlen;
    if (f && f->file && g->format == MDB_SPEEDSCOPE) {
        if (!(s->file = mdb_arena_strndup(&g->arena, f->file, strlen(f->file))))
            return false;
        s->line = f->line;
        s->column = f->column;
    }
    if (mdb_table_put(&g->frames, h, key, klen, (void *)(uintptr_t)(g->nf + 1)))
        return false;
    *id = (uint32_t)g->nf++;
    return true;
}

/* The speedscope profile of a record: its thread's (format 4) or its
 * process's, made on its first record. */
static bool profile(mdb_aggregate *g, const mdb_proc *proc, const mdb_record *rec, uint32_t *id)
{
    /* throws and waits are not CPU time at the rate: a profile of the
     * process each, weighted by count (throws) or nanoseconds (waits) */
    bool events = rec->kind == MDB_THROW || rec->kind == MDB_WAIT ||
                  (rec->kind == MDB_ASTACK && rec->threaded);
    bool threaded = rec->threaded && !events;
    struct profile_key k = {proc->index,
                            rec->kind == MDB_THROW    ? 2u
                            : rec->kind == MDB_WAIT   ? 3u
                            : rec->kind == MDB_ASTACK ? (events ? 4u : 0u)
                                                      : threaded,
                            threaded ? rec->tid : 0};
    uint64_t h = mdb_hash(&k, sizeof k);
    uintptr_t v = (uintptr_t)mdb_table_get(&g->profiles, h, &k, sizeof k);
    if (v) {
        *id = (uint32_t)(v - 1);
        return true;
    }
    if (g->np == g->capp) {
        uint32_t cap = g->capp ? 2 * g->capp : 8;
        struct profile *a = talloc_realloc(g, g->p, struct profile, cap);
        if (!a)
            return false;
        g->p = a;
        g->capp = cap;
    }
    g->p[g->np] = (struct profile){proc, threaded, k.tid, 0, events ? rec->kind : MDB_STACK};
    if (mdb_table_put(&g->profiles, h, &k, sizeof k, (void *)(uintptr_t)(g->np + 1)))
        return false;
    *id = g->np++;
    return true;
}

/* A frame's name as --top shows it: a method without its source line. */
static const char *top_name(mdb_logctx *lc, uint64_t lineno, const mdb_frame *f, char *buf,
                            size_t size, uint32_t *len)
{
    if (f->status == MDB_OK) {
        *len = f->name_len;
        return f->name;
    }
    return mdb_frame_text(f, lc, lineno, buf, size, len);
}

/* --top, an astack record: its "TYPE <- METHOD" pair (the method that
 * allocated: the frame after the type), and every method on its stack. */
static bool top_astack(mdb_aggregate *g, mdb_logctx *lc, const mdb_record *rec)
{
    char tbuf[MDB_TEXT_ROOM], mbuf[MDB_TEXT_ROOM], pair[2 * MDB_TEXT_ROOM + 8];
    uint32_t tn, mn, id;
    const char *t = top_name(lc, rec->lineno, rec->frames[0], tbuf, sizeof tbuf, &tn);
    const char *m = "[no managed frame]";
    mn = (uint32_t)strlen(m);
    if (rec->nframes > 1)
        m = top_name(lc, rec->lineno, rec->frames[1], mbuf, sizeof mbuf, &mn);
    int k = snprintf(pair, sizeof pair, "%.*s <- %.*s", (int)tn, t, (int)mn, m);
    uint32_t pn = k < 0 ? 0 : (size_t)k < sizeof pair ? (uint32_t)k : (uint32_t)sizeof pair - 1;
    g->kinds |= 1u << MDB_ASTACK;
    g->arecords++;
    g->atotal += rec->count;
    g->abytes += rec->bytes;
    /* a pair's key starts with a byte no frame name has, so that it is
     * never a method's own entry */
    char key[sizeof pair + 1];
    key[0] = '\001';
    memcpy(key + 1, pair, pn);
    if (!intern_name(g, key, pn + 1, pair, pn, NULL, &id))
        return false;
    g->f[id].aself += rec->count;
    g->f[id].abself += rec->bytes;
    for (size_t i = 1; i < rec->nframes; i++) {
        if (!intern(g, lc, rec->lineno, rec->frames[i], &id))
            return false;
        struct sframe *s = &g->f[id];
        if (s->astamp != g->arecords) { /* recursion counts once */
            s->astamp = g->arecords;
            s->atotal += rec->count;
            s->abtotal += rec->bytes;
        }
    }
    return true;
}

/* --top, a heap record: into its type's first or last snapshot (a later
 * GC starts the last one over; an earlier one the first). */
static bool top_heap(mdb_aggregate *g, mdb_logctx *lc, const mdb_proc *proc, const mdb_record *rec)
{
    char buf[MDB_TEXT_ROOM], key[MDB_TEXT_ROOM + 8];
    uint32_t n, pi;
    const char *name = top_name(lc, rec->lineno, rec->frames[0], buf, sizeof buf, &n);
    g->kinds |= 1u << MDB_HEAP;
    for (pi = 0; pi < g->nhp && g->hp[pi].proc != proc; pi++)
        ;
    if (pi == g->nhp) {
        if (g->nhp == g->caphp) {
            size_t cap = g->caphp ? 2 * g->caphp : 4;
            struct heap_proc *a = talloc_realloc(g, g->hp, struct heap_proc, cap);
            if (!a)
                return false;
            g->hp = a;
            g->caphp = cap;
        }
        g->hp[g->nhp++] = (struct heap_proc){proc, rec->gc, rec->ms, rec->gc, rec->ms};
    }
    struct heap_proc *hp = &g->hp[pi];
    if (rec->gc < hp->first_gc) {
        hp->first_gc = rec->gc;
        hp->first_ms = rec->ms;
    }
    if (rec->gc > hp->last_gc) {
        hp->last_gc = rec->gc;
        hp->last_ms = rec->ms;
    }
    memcpy(key, &pi, sizeof pi);
    memcpy(key + sizeof pi, name, n);
    uint64_t h = mdb_hash(key, n + sizeof pi);
    uintptr_t v = (uintptr_t)mdb_table_get(&g->heap, h, key, n + sizeof pi);
    struct heap_type *t;
    if (!v) {
        if (g->nht == g->capht) {
            size_t cap = g->capht ? 2 * g->capht : 256;
            struct heap_type *a = talloc_realloc(g, g->ht, struct heap_type, cap);
            if (!a)
                return false;
            g->ht = a;
            g->capht = cap;
        }
        t = &g->ht[g->nht];
        memset(t, 0, sizeof *t);
        t->proc = pi;
        if (!(t->name = mdb_arena_strndup(&g->arena, name, n)))
            return false;
        t->name_len = n;
        t->first_gc = t->last_gc = rec->gc;
        if (mdb_table_put(&g->heap, h, key, n + sizeof pi, (void *)(uintptr_t)(++g->nht)))
            return false;
    } else {
        t = &g->ht[v - 1];
    }
    if (rec->gc < t->first_gc) {
        t->first_gc = rec->gc;
        t->fcount = t->fbytes = 0;
    }
    if (rec->gc == t->first_gc) {
        t->fcount += rec->count;
        t->fbytes += rec->bytes;
    }
    if (rec->gc > t->last_gc) {
        t->last_gc = rec->gc;
        t->lcount = t->lbytes = 0;
    }
    if (rec->gc == t->last_gc) {
        t->lcount += rec->count;
        t->lbytes += rec->bytes;
    }
    return true;
}

bool mdb_aggregate_add(mdb_aggregate *g, mdb_logctx *lc, const mdb_proc *proc,
                       const mdb_record *rec)
{
    uint32_t ids[MDB_MAX_FRAMES + HEAD], prof = 0;
    size_t n = rec->nframes;
    if (g->pprof)
        return mdb_pprof_add(g->pprof, lc, proc, rec);
    if (n == 0)
        return true;
    g->lc = lc;
    if (g->format == MDB_TOP && rec->kind == MDB_ASTACK)
        return top_astack(g, lc, rec);
    if (g->format == MDB_TOP && rec->kind == MDB_HEAP)
        return top_heap(g, lc, proc, rec);
    g->records++;
    g->total += rec->count;
    g->bytes += rec->bytes;
    g->kinds |= 1u << rec->kind;
    /* a speedscope stack's weight: a wait's nanoseconds, else the count */
    uint64_t weight = rec->kind == MDB_WAIT ? rec->bytes : rec->count;
    if (g->format == MDB_SPEEDSCOPE) {
        if (!profile(g, proc, rec, &prof))
            return false;
        g->p[prof].total += weight;
    }
    for (size_t i = 0; i < n; i++) /* root first */
        if (!intern(g, lc, rec->lineno, rec->frames[i], &ids[HEAD - 1 + n - i]))
            return false;
    if (g->format == MDB_TOP) {
        g->f[ids[HEAD - 1 + n]].self += rec->count;
        g->f[ids[HEAD - 1 + n]].bself += rec->bytes;
        for (size_t i = HEAD; i < HEAD + n; i++) {
            struct sframe *s = &g->f[ids[i]];
            if (s->stamp != g->records) { /* recursion counts once */
                s->stamp = g->records;
                s->total += rec->count;
                s->btotal += rec->bytes;
            }
        }
        return true;
    }
    /* a stack of each profile and slice apart */
    uint64_t slice = g->p[prof].threaded ? rec->slice : 0;
    ids[0] = prof;
    ids[1] = (uint32_t)slice;
    ids[2] = (uint32_t)(slice >> 32);
    size_t words = n + HEAD;
    uint64_t h = mdb_hash(ids, words * sizeof ids[0]);
    struct stack *st = mdb_table_get(&g->stacks, h, ids, words * sizeof ids[0]);
    if (st) {
        st->weight += weight;
        return true;
    }
    if (g->ns == g->caps) {
        size_t cap = g->caps ? g->caps * 2 : 1024;
        struct stack **ns = talloc_realloc(g, g->s, struct stack *, cap);
        if (!ns)
            return false;
        g->s = ns;
        g->caps = cap;
    }
    if (!(st = mdb_arena_alloc(&g->arena, sizeof *st + words * sizeof ids[0])))
        return false;
    st->n = (uint32_t)n;
    st->profile = prof;
    st->slice = slice;
    st->seq = g->ns;
    st->weight = weight;
    memcpy(st->ids, ids, words * sizeof ids[0]);
    if (mdb_table_put(&g->stacks, h, ids, words * sizeof ids[0], st))
        return false;
    g->s[g->ns++] = st;
    return true;
}

/* A process's profile: "pid 4242: dotnet app.dll", "pid 4242", and for
 * lines before any header (or a header without a pid) "mdinspect batch".
 * A thread's: "NAME (tid N)" or "tid N", after "pid P: " when the input
 * holds several processes. */
static void profile_name(mdb_aggregate *g, mdb_output *o, const struct profile *pr, bool procs)
{
    char b[2 * MDB_TEXT_ROOM];
    int k = 0;
    const mdb_proc *proc = pr->proc;
    if (pr->threaded) {
        mdb_thread_name t;
        if (procs && proc->has_pid)
            k = snprintf(b, sizeof b, "pid %llu: ", (unsigned long long)proc->pid);
        if (mdb_logctx_thread(g->lc, proc, pr->tid, UINT64_MAX, &t) && t.name)
            k += snprintf(b + k, sizeof b - (size_t)k, "%.*s (tid %llu)", (int)t.name_len, t.name,
                          (unsigned long long)pr->tid);
        else
            k += snprintf(b + k, sizeof b - (size_t)k, "tid %llu", (unsigned long long)pr->tid);
    } else if (!proc->has_pid)
        k = snprintf(b, sizeof b, proc->index ? "process %u" : "mdinspect batch",
                     (unsigned)proc->index);
    else if (proc->cmd)
        k = snprintf(b, sizeof b, "pid %llu: %s", (unsigned long long)proc->pid, proc->cmd);
    else
        k = snprintf(b, sizeof b, "pid %llu", (unsigned long long)proc->pid);
    if (pr->kind != MDB_STACK && k >= 0 && (size_t)k < sizeof b)
        k += snprintf(b + k, sizeof b - (size_t)k,
                      pr->kind == MDB_THROW    ? " (throws)"
                      : pr->kind == MDB_ASTACK ? " (allocations)"
                                               : " (waits)");
    mdb_out_json_string(o, b, k < 0 ? 0 : (size_t)k < sizeof b ? (size_t)k : sizeof b - 1);
}

static void outd(mdb_output *o, double v)
{
    char b[40];
    snprintf(b, sizeof b, "%.10g", v);
    mdb_outs(o, b);
}

/* Stacks by profile, then time (slice, then first record). */
static int by_time(const void *a, const void *b)
{
    const struct stack *x = *(struct stack *const *)a, *y = *(struct stack *const *)b;
    if (x->profile != y->profile)
        return x->profile < y->profile ? -1 : 1;
    if (x->slice != y->slice)
        return x->slice < y->slice ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Profiles by process, then thread ID. */
static const struct profile *prof_base;
static int by_thread(const void *a, const void *b)
{
    const struct profile *x = &prof_base[*(const uint32_t *)a],
                         *y = &prof_base[*(const uint32_t *)b];
    if (x->proc->index != y->proc->index)
        return x->proc->index < y->proc->index ? -1 : 1;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    return x->threaded - y->threaded;
}

/* One profile's samples and weights: stacks [from, to) of the time order. */
static void samples(mdb_aggregate *g, mdb_output *o, const struct profile *pr, struct stack **v,
                    size_t from, size_t to)
{
    double period = pr->threaded ? 1000.0 / (double)(pr->proc->rate ? pr->proc->rate : 1000) : 1.0;
    double slice_ms = (double)pr->proc->slice_ms, cursor = pr->threaded ? g->from_ms : 0.0;
    double start = cursor;
    bool first = true;
    /* samples: an empty one before a slice that starts after the time so
     * far (the thread was idle, or not born) */
    mdb_outs(o, ",\n\"samples\":[");
    for (size_t i = from; i < to; i++) {
        double at = (double)v[i]->slice * slice_ms;
        if (pr->threaded && at > cursor) {
            mdb_outs(o, first ? "[]" : ",[]");
            first = false;
            cursor = at;
        }
        mdb_outs(o, first ? "[" : ",[");
        first = false;
        for (uint32_t k = HEAD; k < HEAD + v[i]->n; k++) {
            if (k > HEAD)
                mdb_outc(o, ',');
            mdb_outu(o, v[i]->ids[k]);
        }
        mdb_outc(o, ']');
        cursor += (double)v[i]->weight * period;
    }
    mdb_outs(o, "],\n\"weights\":[");
    first = true;
    cursor = start;
    for (size_t i = from; i < to; i++) {
        double at = (double)v[i]->slice * slice_ms;
        if (!first)
            mdb_outc(o, ',');
        if (pr->threaded && at > cursor) {
            outd(o, at - cursor);
            mdb_outc(o, ',');
            cursor = at;
        }
        first = false;
        if (pr->threaded)
            outd(o, (double)v[i]->weight * period);
        else
            mdb_outu(o, v[i]->weight);
        cursor += (double)v[i]->weight * period;
    }
    mdb_outs(o, "]");
}

/* The profile's endValue: where its samples end. */
static double end_of(mdb_aggregate *g, const struct profile *pr, struct stack **v, size_t from,
                     size_t to)
{
    double period = pr->threaded ? 1000.0 / (double)(pr->proc->rate ? pr->proc->rate : 1000) : 1.0;
    double cursor = pr->threaded ? g->from_ms : 0.0;
    for (size_t i = from; i < to; i++) {
        double at = (double)v[i]->slice * (double)pr->proc->slice_ms;
        if (pr->threaded && at > cursor)
            cursor = at;
        cursor += (double)v[i]->weight * period;
    }
    return cursor;
}

static void speedscope(mdb_aggregate *g, mdb_output *o)
{
    struct stack **v = talloc_array(g, struct stack *, g->ns ? g->ns : 1);
    size_t *at = talloc_zero_array(g, size_t, g->np + 1);
    uint32_t *order = talloc_array(g, uint32_t, g->np ? g->np : 1);
    bool procs = false;
    if (!v || !at || !order) {
        o->failed = true;
        return;
    }
    if (g->ns) /* none: a log cut before its first record (g->s is NULL) */
        memcpy(v, g->s, g->ns * sizeof *v);
    qsort(v, g->ns, sizeof *v, by_time);
    for (size_t i = 0; i < g->ns; i++) /* where each profile's stacks end */
        at[v[i]->profile + 1] = i + 1;
    for (uint32_t p = 1; p <= g->np; p++)
        if (at[p] < at[p - 1])
            at[p] = at[p - 1];
    for (uint32_t p = 0; p < g->np; p++) {
        order[p] = p;
        procs |= g->p[p].proc != g->p[0].proc;
    }
    prof_base = g->p;
    qsort(order, g->np, sizeof *order, by_thread);
    mdb_outs(o, "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
                "\"exporter\":\"mdinspect batch (mdtools " PACKAGE_VERSION ")\","
                "\"name\":\"mdinspect batch\",\"activeProfileIndex\":0,"
                "\"shared\":{\"frames\":[");
    for (size_t i = 0; i < g->nf; i++) {
        const struct sframe *s = &g->f[i];
        mdb_outs(o, i ? ",{\"name\":" : "\n{\"name\":");
        mdb_out_json_string(o, s->name, s->name_len);
        if (s->file) {
            mdb_outs(o, ",\"file\":");
            mdb_out_json_string(o, s->file, strlen(s->file));
            mdb_outs(o, ",\"line\":");
            mdb_outu(o, s->line);
            mdb_outs(o, ",\"col\":");
            mdb_outu(o, s->column);
        }
        mdb_outc(o, '}');
    }
    mdb_outs(o, "]},\n\"profiles\":[");
    for (uint32_t k = 0; k < g->np; k++) {
        uint32_t p = order[k];
        const struct profile *pr = &g->p[p];
        size_t from = at[p], to = at[p + 1];
        mdb_outs(o, k ? ",\n{\"type\":\"sampled\",\"name\":" : "{\"type\":\"sampled\",\"name\":");
        profile_name(g, o, pr, procs);
        if (pr->threaded) {
            mdb_outs(o, ",\"unit\":\"milliseconds\",\"startValue\":");
            outd(o, g->from_ms);
            mdb_outs(o, ",\"endValue\":");
            outd(o, end_of(g, pr, v, from, to));
        } else {
            mdb_outs(o, pr->kind == MDB_WAIT
                            ? ",\"unit\":\"nanoseconds\",\"startValue\":0,\"endValue\":"
                            : ",\"unit\":\"none\",\"startValue\":0,\"endValue\":");
            mdb_outu(o, pr->total);
        }
        samples(g, o, pr, v, from, to);
        mdb_outc(o, '}');
    }
    if (g->np == 0) /* no records: one empty profile, as the format wants one */
        mdb_outs(o, "{\"type\":\"sampled\",\"name\":\"mdinspect batch\",\"unit\":\"none\","
                    "\"startValue\":0,\"endValue\":0,\n\"samples\":[],\n\"weights\":[]}");
    mdb_outs(o, "]}\n");
    talloc_free(v);
    talloc_free(at);
    talloc_free(order);
}

static const struct sframe *sort_base;
static int by_self(const void *a, const void *b)
{
    const struct sframe *x = &sort_base[*(const uint32_t *)a],
                        *y = &sort_base[*(const uint32_t *)b];
    if (x->self != y->self)
        return x->self < y->self ? 1 : -1;
    return x < y ? -1 : 1;
}
static int by_total(const void *a, const void *b)
{
    const struct sframe *x = &sort_base[*(const uint32_t *)a],
                        *y = &sort_base[*(const uint32_t *)b];
    if (x->total != y->total)
        return x->total < y->total ? 1 : -1;
    return x < y ? -1 : 1;
}

static void percent(mdb_output *o, uint64_t v, uint64_t total)
{
    char b[16];
    snprintf(b, sizeof b, "%6.2f%%", total ? 100.0 * (double)v / (double)total : 0.0);
    mdb_outs(o, b);
}

static void column(mdb_output *o, uint64_t v)
{
    char b[24];
    snprintf(b, sizeof b, "%14llu", (unsigned long long)v);
    mdb_outs(o, b);
}

static int by_bytes(const void *a, const void *b)
{
    const struct sframe *x = &sort_base[*(const uint32_t *)a],
                        *y = &sort_base[*(const uint32_t *)b];
    if (x->bself != y->bself)
        return x->bself < y->bself ? 1 : -1;
    return x < y ? -1 : 1;
}

/* What the records counted, as --top names it: one word for one kind of
 * record, "count" for a mix (logs of several modes concatenated). */
static const char *unit(const mdb_aggregate *g)
{
    switch (g->kinds & ~(1u << MDB_ASTACK | 1u << MDB_HEAP)) {
    case 1u << MDB_STACK: return "samples";
    case 1u << MDB_CALL: return "calls";
    case 1u << MDB_ALLOC: return "objects";
    case 1u << MDB_THROW: return "throws";
    case 1u << MDB_WAIT: return "waits";
    default: return "count";
    }
}

/* A right-aligned column head of width w. */
static void head(mdb_output *o, const char *s, int w)
{
    char b[128];
    snprintf(b, sizeof b, "%*s", w, s);
    mdb_outs(o, b);
}

static void table(mdb_aggregate *g, mdb_output *o, uint32_t *order, size_t nf, bool self)
{
    size_t n = nf < g->top ? nf : g->top;
    char b[96];
    const char *u = unit(g);
    if (g->kinds == 1u << MDB_STACK)
        snprintf(b, sizeof b,
                 self ? "by exclusive %s (the method itself was running):\n"
                      : "by inclusive %s (the method was on the stack):\n",
                 u);
    else
        snprintf(b, sizeof b,
                 self ? "by exclusive %s (the frame itself):\n"
                      : "by inclusive %s (the frame on the stack):\n",
                 u);
    mdb_outs(o, b);
    snprintf(b, sizeof b, "excl. %s", u);
    head(o, b, 14);
    mdb_outs(o, "        %");
    snprintf(b, sizeof b, "incl. %s", u);
    head(o, b, 14);
    mdb_outs(o, "        %  method\n");
    for (size_t i = 0; i < n; i++) {
        const struct sframe *s = &g->f[order[i]];
        column(o, s->self);
        mdb_outc(o, ' ');
        percent(o, s->self, g->total);
        column(o, s->total);
        mdb_outc(o, ' ');
        percent(o, s->total, g->total);
        mdb_outs(o, "  ");
        mdb_out(o, s->name, s->name_len);
        mdb_outc(o, '\n');
    }
}

/* Alloc records: a type each, counted in objects and bytes. */
static void alloc_table(mdb_aggregate *g, mdb_output *o, uint32_t *order, size_t nf, bool objects)
{
    size_t n = nf < g->top ? nf : g->top;
    mdb_outs(o, objects ? "by objects allocated:\n" : "by bytes allocated:\n");
    mdb_outs(o, "       objects        %          bytes        %  type\n");
    for (size_t i = 0; i < n; i++) {
        const struct sframe *s = &g->f[order[i]];
        column(o, s->self);
        mdb_outc(o, ' ');
        percent(o, s->self, g->total);
        column(o, s->bself);
        mdb_outc(o, ' ');
        percent(o, s->bself, g->bytes);
        mdb_outs(o, "  ");
        mdb_out(o, s->name, s->name_len);
        mdb_outc(o, '\n');
    }
}

/* nanoseconds as milliseconds with three decimals, right-aligned in a
 * column of 18 (width 0: as they are) */
static void out_ms(mdb_output *o, uint64_t ns, int width)
{
    char b[48];
    snprintf(b, sizeof b, "%*llu.%03llu", width ? width - 4 : 0,
             (unsigned long long)(ns / 1000000u), (unsigned long long)(ns / 1000u % 1000u));
    mdb_outs(o, b);
}

static void column_ms(mdb_output *o, uint64_t ns)
{
    out_ms(o, ns, 18);
}

static int by_btotal(const void *a, const void *b)
{
    const struct sframe *x = &sort_base[*(const uint32_t *)a],
                        *y = &sort_base[*(const uint32_t *)b];
    if (x->btotal != y->btotal)
        return x->btotal < y->btotal ? 1 : -1;
    return x < y ? -1 : 1;
}

/* Wait records: the time a frame waited itself (exclusive: where the
 * waiting thread blocked) or with it on the stack (inclusive), and how
 * many waits that was. */
static void wait_table(mdb_aggregate *g, mdb_output *o, uint32_t *order, size_t nf, bool self)
{
    size_t n = nf < g->top ? nf : g->top;
    mdb_outs(o, self ? "by exclusive wait time (the frame itself waited for a lock):\n"
                     : "by inclusive wait time (the frame was on the waiting stack):\n");
    mdb_outs(o, self ? "   excl. waits        %      excl. wait ms        %  method\n"
                     : "   incl. waits        %      incl. wait ms        %  method\n");
    for (size_t i = 0; i < n; i++) {
        const struct sframe *s = &g->f[order[i]];
        column(o, self ? s->self : s->total);
        mdb_outc(o, ' ');
        percent(o, self ? s->self : s->total, g->total);
        column_ms(o, self ? s->bself : s->btotal);
        mdb_outc(o, ' ');
        percent(o, self ? s->bself : s->btotal, g->bytes);
        mdb_outs(o, "  ");
        mdb_out(o, s->name, s->name_len);
        mdb_outc(o, '\n');
    }
}

static int by_abself(const void *a, const void *b)
{
    const struct sframe *x = &sort_base[*(const uint32_t *)a],
                        *y = &sort_base[*(const uint32_t *)b];
    if (x->abself != y->abself)
        return x->abself < y->abself ? 1 : -1;
    return x < y ? -1 : 1;
}
static int by_abtotal(const void *a, const void *b)
{
    const struct sframe *x = &sort_base[*(const uint32_t *)a],
                        *y = &sort_base[*(const uint32_t *)b];
    if (x->abtotal != y->abtotal)
        return x->abtotal < y->abtotal ? 1 : -1;
    return x < y ? -1 : 1;
}

/* astack records: estimates from sampled stacks, by bytes. */
static void astack_table(mdb_aggregate *g, mdb_output *o, uint32_t *order, size_t nf, bool pairs)
{
    size_t n = nf < g->top ? nf : g->top;
    mdb_outs(o, pairs ? "by bytes allocated, per type and allocating method:\n"
                      : "by inclusive bytes (the method on the allocating stack):\n");
    mdb_outs(o, pairs ? "         bytes        %        objects        %  type <- method\n"
                      : "         bytes        %        objects        %  method\n");
    for (size_t i = 0; i < n; i++) {
        const struct sframe *s = &g->f[order[i]];
        uint64_t b = pairs ? s->abself : s->abtotal, c = pairs ? s->aself : s->atotal;
        column(o, b);
        mdb_outc(o, ' ');
        percent(o, b, g->abytes);
        column(o, c);
        mdb_outc(o, ' ');
        percent(o, c, g->atotal);
        mdb_outs(o, "  ");
        mdb_out(o, s->name, s->name_len);
        mdb_outc(o, '\n');
    }
}

static void astack_section(mdb_aggregate *g, mdb_output *o, uint32_t *order)
{
    size_t n = 0;
    mdb_outs(o, "allocation stacks (sampled: estimated) ");
    mdb_outu(o, g->atotal);
    mdb_outs(o, " objects (");
    mdb_outu(o, g->abytes);
    mdb_outs(o, " bytes) in ");
    mdb_outu(o, g->arecords);
    mdb_outs(o, " records\n\n");
    for (size_t i = 0; i < g->nf; i++)
        if (g->f[i].aself)
            order[n++] = (uint32_t)i;
    sort_base = g->f;
    qsort(order, n, sizeof *order, by_abself);
    astack_table(g, o, order, n, true);
    mdb_outc(o, '\n');
    n = 0;
    for (size_t i = 0; i < g->nf; i++)
        if (g->f[i].atotal)
            order[n++] = (uint32_t)i;
    qsort(order, n, sizeof *order, by_abtotal);
    astack_table(g, o, order, n, false);
}

static const struct heap_type *heap_base;
static int by_live_bytes(const void *a, const void *b)
{
    const struct heap_type *x = &heap_base[*(const uint32_t *)a],
                           *y = &heap_base[*(const uint32_t *)b];
    if (x->lbytes != y->lbytes)
        return x->lbytes < y->lbytes ? 1 : -1;
    return x < y ? -1 : 1;
}

static void signed_column(mdb_output *o, uint64_t now, uint64_t then)
{
    char b[32];
    snprintf(b, sizeof b, "%+15lld",
             now >= then ? (long long)(now - then) : -(long long)(then - now));
    mdb_outs(o, b);
}

/* Heap records: each process's last snapshot, by bytes, with each type's
 * growth since its first. */
static void heap_section(mdb_aggregate *g, mdb_output *o)
{
    uint32_t *order = talloc_array(g, uint32_t, g->nht ? g->nht : 1);
    if (!order) {
        o->failed = true;
        return;
    }
    for (size_t pi = 0; pi < g->nhp; pi++) {
        const struct heap_proc *hp = &g->hp[pi];
        uint64_t objs = 0, bytes = 0;
        size_t n = 0;
        char b[256];
        for (size_t i = 0; i < g->nht; i++) {
            const struct heap_type *t = &g->ht[i];
            if (t->proc != pi)
                continue;
            order[n++] = (uint32_t)i;
            if (t->last_gc == hp->last_gc) {
                objs += t->lcount;
                bytes += t->lbytes;
            }
        }
        if (pi)
            mdb_outc(o, '\n');
        snprintf(b, sizeof b, "live heap after gen2 GC %llu (at %.3f s): %llu objects (%llu bytes)",
                 (unsigned long long)hp->last_gc, (double)hp->last_ms / 1000.0,
                 (unsigned long long)objs, (unsigned long long)bytes);
        mdb_outs(o, b);
        if (hp->proc && hp->proc->has_pid) {
            mdb_outs(o, " of pid ");
            mdb_outu(o, hp->proc->pid);
        }
        snprintf(b, sizeof b, "; growth since GC %llu (at %.3f s)\n\n",
                 (unsigned long long)hp->first_gc, (double)hp->first_ms / 1000.0);
        mdb_outs(o, b);
        mdb_outs(o, "         bytes        %        objects   growth bytes growth objects  type\n");
        /* a type absent from the last snapshot has none left; from the
         * first, it grew from none */
        for (size_t i = 0; i < n; i++) {
            struct heap_type *t = &g->ht[order[i]];
            if (t->last_gc != hp->last_gc)
                t->lcount = t->lbytes = 0;
            if (t->first_gc != hp->first_gc)
                t->fcount = t->fbytes = 0;
        }
        heap_base = g->ht;
        qsort(order, n, sizeof *order, by_live_bytes);
        for (size_t i = 0; i < n && i < g->top; i++) {
            const struct heap_type *t = &g->ht[order[i]];
            column(o, t->lbytes);
            mdb_outc(o, ' ');
            percent(o, t->lbytes, bytes);
            column(o, t->lcount);
            signed_column(o, t->lbytes, t->fbytes);
            signed_column(o, t->lcount, t->fcount);
            mdb_outs(o, "  ");
            mdb_out(o, t->name, t->name_len);
            mdb_outc(o, '\n');
        }
    }
    talloc_free(order);
}

static void top(mdb_aggregate *g, mdb_output *o)
{
    uint32_t *order = talloc_array(g, uint32_t, g->nf ? g->nf : 1);
    unsigned kinds = g->kinds & ~(1u << MDB_ASTACK | 1u << MDB_HEAP);
    bool alloc = kinds == 1u << MDB_ALLOC;
    size_t nf = 0;
    if (!order) {
        o->failed = true;
        return;
    }
    if (!kinds && g->kinds) {
        /* sampled allocation stacks, heap snapshots: no exact table */
        if (g->kinds & 1u << MDB_ASTACK)
            astack_section(g, o, order);
        if ((g->kinds & 1u << MDB_ASTACK) && (g->kinds & 1u << MDB_HEAP))
            mdb_outc(o, '\n');
        if (g->kinds & 1u << MDB_HEAP)
            heap_section(g, o);
        talloc_free(order);
        return;
    }
    /* the entries the records counted (not those of astack records alone) */
    for (size_t i = 0; i < g->nf; i++)
        if (g->f[i].total || g->f[i].self)
            order[nf++] = (uint32_t)i;
    if (!strcmp(unit(g), "count")) { /* several kinds of record */
        mdb_outs(o, "total count ");
        mdb_outu(o, g->total);
    } else {
        mdb_outs(o, "total ");
        mdb_outu(o, g->total);
        mdb_outc(o, ' ');
        mdb_outs(o, unit(g));
    }
    if (alloc) {
        mdb_outs(o, " (");
        mdb_outu(o, g->bytes);
        mdb_outs(o, " bytes)");
    }
    if (g->kinds == 1u << MDB_WAIT) {
        mdb_outs(o, " (");
        out_ms(o, g->bytes, 0);
        mdb_outs(o, " ms)");
    }
    mdb_outs(o, " in ");
    mdb_outu(o, g->records);
    mdb_outs(o, " records, ");
    mdb_outu(o, nf);
    mdb_outs(o, alloc ? " distinct types\n\n" : " distinct methods\n\n");
    sort_base = g->f;
    if (kinds == 1u << MDB_WAIT) {
        qsort(order, nf, sizeof *order, by_bytes);
        wait_table(g, o, order, nf, true);
        mdb_outc(o, '\n');
        qsort(order, nf, sizeof *order, by_btotal);
        wait_table(g, o, order, nf, false);
        talloc_free(order);
        return;
    }
    qsort(order, nf, sizeof *order, by_self);
    if (alloc)
        alloc_table(g, o, order, nf, true);
    else
        table(g, o, order, nf, true);
    mdb_outc(o, '\n');
    qsort(order, nf, sizeof *order, alloc ? by_bytes : by_total);
    if (alloc)
        alloc_table(g, o, order, nf, false);
    else
        table(g, o, order, nf, false);
    if (g->kinds & 1u << MDB_ASTACK) {
        mdb_outc(o, '\n');
        astack_section(g, o, order);
    }
    if (g->kinds & 1u << MDB_HEAP) {
        mdb_outc(o, '\n');
        heap_section(g, o);
    }
    talloc_free(order);
}

void mdb_aggregate_write(mdb_aggregate *g, mdb_output *o)
{
    if (g->pprof)
        mdb_pprof_write(g->pprof, o);
    else if (g->format == MDB_SPEEDSCOPE)
        speedscope(g, o);
    else
        top(g, o);
}
