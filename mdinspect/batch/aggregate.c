/* mdinspect batch: the formats that need the whole input before they can
 * print: --speedscope (speedscope's file format: shared frames, and
 * "sampled" profiles) and --top N (the methods with the most exclusive and
 * inclusive counts, over every process); --pprof hands its records to
 * pprof.c. Frames and stacks are interned by
 * their text in tables of their own, so memory follows the distinct
 * frames and stacks, not the number of records, and the resolver's cache
 * may start over without harm.
 *
 * The writers are apart: agg_speedscope.c (--speedscope) and agg_top.c
 * (--top), on the structures of aggregate_int.h.
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

#include "batch/aggregate_int.h"

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
void mdb_aggregate_write(mdb_aggregate *g, mdb_output *o)
{
    if (g->pprof)
        mdb_pprof_write(g->pprof, o);
    else if (g->format == MDB_SPEEDSCOPE)
        mdb_agg_speedscope(g, o);
    else
        mdb_agg_top(g, o);
}
