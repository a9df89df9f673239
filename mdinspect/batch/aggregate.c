/* mdinspect batch: the formats that need the whole input before they can
 * print: --speedscope (speedscope's file format: shared frames, one
 * "sampled" profile whose samples are the distinct stacks, root first,
 * weighted by their counts) and --top N (the methods with the most
 * exclusive and inclusive counts). Frames and stacks are interned by their
 * text in tables of their own, so memory follows the distinct frames and
 * stacks, not the number of records, and the resolver's cache may start
 * over without harm. */
#include "config.h"

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
    uint64_t weight;
    uint32_t ids[];
};

struct mdb_aggregate {
    int format;
    unsigned top;
    mdb_table frames;  /* key text -> id + 1 (as a pointer-sized integer) */
    struct sframe *f;
    size_t nf, capf;
    mdb_table stacks;  /* ids -> struct stack */
    struct stack **s;
    size_t ns, caps;
    mdb_arena arena;
    uint64_t total, records;
};

mdb_aggregate *mdb_aggregate_new(void *ctx, int format, unsigned top)
{
    mdb_aggregate *g = talloc_zero(ctx, mdb_aggregate);
    if (!g)
        return NULL;
    g->format = format;
    g->top = top;
    mdb_arena_init(&g->arena, g);
    if (mdb_table_init(&g->frames, g, 1024) || mdb_table_init(&g->stacks, g, 1024) ||
        !g->arena.ctx) {
        talloc_free(g);
        return NULL;
    }
    return g;
}

/* The id of a frame: for --top the method (its name alone), for speedscope
 * the name with its source line. */
static bool intern(mdb_aggregate *g, const mdb_frame *f, uint32_t *id)
{
    const char *name = f->status == MDB_OK ? f->name : f->text;
    uint32_t nlen = f->status == MDB_OK ? f->name_len : f->text_len;
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

bool mdb_aggregate_add(mdb_aggregate *g, const mdb_record *rec)
{
    uint32_t ids[MDB_MAX_FRAMES];
    size_t n = rec->nframes;
    if (n == 0)
        return true;
    g->records++;
    g->total += rec->count;
    for (size_t i = 0; i < n; i++)
        if (!intern(g, rec->frames[i], &ids[n - 1 - i])) /* root first */
            return false;
    if (g->format == MDB_TOP) {
        g->f[ids[n - 1]].self += rec->count;
        for (size_t i = 0; i < n; i++) {
            struct sframe *s = &g->f[ids[i]];
            if (s->stamp != g->records) { /* recursion counts once */
                s->stamp = g->records;
                s->total += rec->count;
            }
        }
        return true;
    }
    uint64_t h = mdb_hash(ids, n * sizeof ids[0]);
    struct stack *st = mdb_table_get(&g->stacks, h, ids, n * sizeof ids[0]);
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
    if (!(st = mdb_arena_alloc(&g->arena, sizeof *st + n * sizeof ids[0])))
        return false;
    st->n = (uint32_t)n;
    st->weight = rec->count;
    memcpy(st->ids, ids, n * sizeof ids[0]);
    if (mdb_table_put(&g->stacks, h, ids, n * sizeof ids[0], st))
        return false;
    g->s[g->ns++] = st;
    return true;
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
    mdb_outs(o, "]},\n\"profiles\":[{\"type\":\"sampled\",\"name\":\"mdinspect batch\","
                "\"unit\":\"none\",\"startValue\":0,\"endValue\":");
    mdb_outu(o, g->total);
    mdb_outs(o, ",\n\"samples\":[");
    for (size_t i = 0; i < g->ns; i++) {
        mdb_outs(o, i ? ",[" : "[");
        for (uint32_t k = 0; k < g->s[i]->n; k++) {
            if (k)
                mdb_outc(o, ',');
            mdb_outu(o, g->s[i]->ids[k]);
        }
        mdb_outc(o, ']');
    }
    mdb_outs(o, "],\n\"weights\":[");
    for (size_t i = 0; i < g->ns; i++) {
        if (i)
            mdb_outc(o, ',');
        mdb_outu(o, g->s[i]->weight);
    }
    mdb_outs(o, "]}]}\n");
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
    if (g->format == MDB_SPEEDSCOPE)
        speedscope(g, o);
    else
        top(g, o);
}
