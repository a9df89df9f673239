/* mdinspect batch: the formats that need the whole input before they can
 * print: --speedscope (speedscope's file format: shared frames, one
 * "sampled" profile per process of the input whose samples are its
 * distinct stacks, root first, weighted by their counts) and --top N (the
 * methods with the most exclusive and inclusive counts, over every
 * process); --pprof hands its records to pprof.c. Frames and stacks are
 * interned by their text in tables of their own, so memory follows the
 * distinct frames and stacks, not the number of records, and the
 * resolver's cache may start over without harm. */
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
    uint64_t self, total; /* --top: exclusive and inclusive counts */
    uint64_t stamp;       /* --top: last record counted in total */
};

struct stack {
    uint32_t n;
    uint32_t profile;     /* --speedscope: its process's profile */
    uint64_t weight;
    uint32_t ids[];       /* [0]: the profile, then the frames */
};

struct profile {          /* --speedscope: a process that has records */
    const mdb_proc *proc;
    uint64_t total;
};

struct mdb_aggregate {
    int format;
    mdb_pprof *pprof;  /* --pprof: the profile (pprof.c) does the rest */
    unsigned top;
    mdb_table frames;  /* key text -> id + 1 (as a pointer-sized integer) */
    struct sframe *f;
    size_t nf, capf;
    mdb_table stacks;  /* ids -> struct stack */
    struct stack **s;
    size_t ns, caps;
    mdb_arena arena;
    uint64_t total, records;
    struct profile *p;
    uint32_t np, capp;
    uint32_t *profile_of; /* by process index: profile + 1 (0: none yet) */
    uint32_t capof;
};

mdb_aggregate *mdb_aggregate_new(void *ctx, int format, unsigned top)
{
    mdb_aggregate *g = talloc_zero(ctx, mdb_aggregate);
    if (!g)
        return NULL;
    g->format = format;
    g->top = top;
    mdb_arena_init(&g->arena, g);
    if ((format == MDB_PPROF && !(g->pprof = mdb_pprof_new(g))) ||mdb_table_init(&g->frames, g, 1024) || mdb_table_init(&g->stacks, g, 1024) ||
        !g->arena.ctx) {
        talloc_free(g);
        return NULL;
    }
    return g;
}

/* The id of a frame: for --top the method (its name alone), for speedscope
 * the name with its source line. */
static bool intern(mdb_aggregate *g, mdb_logctx *lc, uint64_t lineno, const mdb_frame *f,
                   uint32_t *id)
{
    char buf[MDB_TEXT_ROOM];
    uint32_t nlen;
    const char *name = f->status == MDB_OK ? f->name
                                           : mdb_frame_text(f, lc, lineno, buf, sizeof buf, &nlen);
    if (f->status == MDB_OK)
        nlen = f->name_len;
    const char *key = f->status == MDB_OK && g->format == MDB_SPEEDSCOPE ? f->text : name;
    uint32_t klen = f->status == MDB_OK && g->format == MDB_SPEEDSCOPE ? f->text_len : nlen;
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
    if (f->file && g->format == MDB_SPEEDSCOPE) {
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

/* The speedscope profile of a process, made on its first record. */
static bool profile(mdb_aggregate *g, const mdb_proc *proc, uint32_t *id)
{
    uint32_t k = proc->index;
    if (k >= g->capof) {
        uint32_t cap = k + 1 > 2 * g->capof ? k + 1 : 2 * g->capof;
        uint32_t *a = talloc_realloc(g, g->profile_of, uint32_t, cap);
        if (!a)
            return false;
        memset(a + g->capof, 0, (cap - g->capof) * sizeof *a);
        g->profile_of = a;
        g->capof = cap;
    }
    if (!g->profile_of[k]) {
        if (g->np == g->capp) {
            uint32_t cap = g->capp ? 2 * g->capp : 8;
            struct profile *a = talloc_realloc(g, g->p, struct profile, cap);
            if (!a)
                return false;
            g->p = a;
            g->capp = cap;
        }
        g->p[g->np].proc = proc;
        g->p[g->np].total = 0;
        g->profile_of[k] = ++g->np;
    }
    *id = g->profile_of[k] - 1;
    return true;
}

bool mdb_aggregate_add(mdb_aggregate *g, mdb_logctx *lc, const mdb_proc *proc,
                       const mdb_record *rec)
{
    uint32_t ids[MDB_MAX_FRAMES + 1], prof = 0;
    size_t n = rec->nframes;
    if (g->pprof)
        return mdb_pprof_add(g->pprof, lc, proc, rec);
    if (n == 0)
        return true;
    g->records++;
    g->total += rec->count;
    if (g->format == MDB_SPEEDSCOPE) {
        if (!profile(g, proc, &prof))
            return false;
        g->p[prof].total += rec->count;
    }
    for (size_t i = 0; i < n; i++)
        if (!intern(g, lc, rec->lineno, rec->frames[i], &ids[n - i])) /* root first */
            return false;
    if (g->format == MDB_TOP) {
        g->f[ids[n]].self += rec->count;
        for (size_t i = 1; i <= n; i++) {
            struct sframe *s = &g->f[ids[i]];
            if (s->stamp != g->records) { /* recursion counts once */
                s->stamp = g->records;
                s->total += rec->count;
            }
        }
        return true;
    }
    ids[0] = prof; /* a stack of each process apart */
    uint64_t h = mdb_hash(ids, (n + 1) * sizeof ids[0]);
    struct stack *st = mdb_table_get(&g->stacks, h, ids, (n + 1) * sizeof ids[0]);
    if (st) {
        st->weight += rec->count;
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
    if (!(st = mdb_arena_alloc(&g->arena, sizeof *st + (n + 1) * sizeof ids[0])))
        return false;
    st->n = (uint32_t)n;
    st->profile = prof;
    st->weight = rec->count;
    memcpy(st->ids, ids, (n + 1) * sizeof ids[0]);
    if (mdb_table_put(&g->stacks, h, ids, (n + 1) * sizeof ids[0], st))
        return false;
    g->s[g->ns++] = st;
    return true;
}

/* A process's profile: "pid 4242: dotnet app.dll", "pid 4242", and for
 * lines before any header (or a header without a pid) "mdinspect batch". */
static void profile_name(mdb_output *o, const mdb_proc *proc)
{
    char b[MDB_TEXT_ROOM];
    int k;
    if (!proc->has_pid)
        k = snprintf(b, sizeof b, proc->index ? "process %u" : "mdinspect batch",
                     (unsigned)proc->index);
    else if (proc->cmd)
        k = snprintf(b, sizeof b, "pid %llu: %s", (unsigned long long)proc->pid, proc->cmd);
    else
        k = snprintf(b, sizeof b, "pid %llu", (unsigned long long)proc->pid);
    mdb_out_json_string(o, b, k < 0 ? 0 : (size_t)k < sizeof b ? (size_t)k : sizeof b - 1);
}

static void speedscope(mdb_aggregate *g, mdb_output *o)
{
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
    for (uint32_t p = 0; p < g->np; p++) {
        const mdb_proc *proc = g->p[p].proc;
        bool first = true;
        mdb_outs(o, p ? ",\n{\"type\":\"sampled\",\"name\":" : "{\"type\":\"sampled\",\"name\":");
        profile_name(o, proc);
        mdb_outs(o, ",\"unit\":\"none\",\"startValue\":0,\"endValue\":");
        mdb_outu(o, g->p[p].total);
        mdb_outs(o, ",\n\"samples\":[");
        for (size_t i = 0; i < g->ns; i++) {
            if (g->s[i]->profile != p)
                continue;
            mdb_outs(o, first ? "[" : ",[");
            first = false;
            for (uint32_t k = 1; k <= g->s[i]->n; k++) {
                if (k > 1)
                    mdb_outc(o, ',');
                mdb_outu(o, g->s[i]->ids[k]);
            }
            mdb_outc(o, ']');
        }
        mdb_outs(o, "],\n\"weights\":[");
        first = true;
        for (size_t i = 0; i < g->ns; i++) {
            if (g->s[i]->profile != p)
                continue;
            if (!first)
                mdb_outc(o, ',');
            first = false;
            mdb_outu(o, g->s[i]->weight);
        }
        mdb_outs(o, "]}");
    }
    if (g->np == 0) /* no records: one empty profile, as the format wants one */
        mdb_outs(o, "{\"type\":\"sampled\",\"name\":\"mdinspect batch\",\"unit\":\"none\","
                    "\"startValue\":0,\"endValue\":0,\n\"samples\":[],\n\"weights\":[]}");
    mdb_outs(o, "]}\n");
}

static const struct sframe *sort_base;
static int by_self(const void *a, const void *b)
{
    const struct sframe *x = &sort_base[*(const uint32_t *)a], *y = &sort_base[*(const uint32_t *)b];
    if (x->self != y->self)
        return x->self < y->self ? 1 : -1;
    return x < y ? -1 : 1;
}
static int by_total(const void *a, const void *b)
{
    const struct sframe *x = &sort_base[*(const uint32_t *)a], *y = &sort_base[*(const uint32_t *)b];
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
    snprintf(b, sizeof b, "%12llu", (unsigned long long)v);
    mdb_outs(o, b);
}

static void table(mdb_aggregate *g, mdb_output *o, uint32_t *order, bool self)
{
    size_t n = g->nf < g->top ? g->nf : g->top;
    mdb_outs(o, self ? "by exclusive count (the method itself was running):\n"
                     : "by inclusive count (the method was on the stack):\n");
    mdb_outs(o, "   exclusive        %   inclusive        %  method\n");
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

static void top(mdb_aggregate *g, mdb_output *o)
{
    uint32_t *order = talloc_array(g, uint32_t, g->nf ? g->nf : 1);
    if (!order) {
        o->failed = true;
        return;
    }
    mdb_outs(o, "total count ");
    mdb_outu(o, g->total);
    mdb_outs(o, " in ");
    mdb_outu(o, g->records);
    mdb_outs(o, " records, ");
    mdb_outu(o, g->nf);
    mdb_outs(o, " distinct methods\n\n");
    for (size_t i = 0; i < g->nf; i++)
        order[i] = (uint32_t)i;
    sort_base = g->f;
    qsort(order, g->nf, sizeof *order, by_self);
    table(g, o, order, true);
    mdb_outc(o, '\n');
    qsort(order, g->nf, sizeof *order, by_total);
    table(g, o, order, false);
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
