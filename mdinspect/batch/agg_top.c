/* mdinspect batch --top N: the methods with the most exclusive and
 * inclusive counts over every process, labelled with what the records
 * count (samples, calls, throws, waits and wait time, objects and bytes),
 * then the sampled allocation stacks' section (type <- method, and each
 * method's bytes below it) and each process's live heap (its last
 * snapshot by bytes, and each type's growth since its first), from what
 * aggregate.c collected (the rule is in aggregate.c's opening comment). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <talloc.h>

#include "batch/aggregate_int.h"

/* the frames the comparators of qsort() below look into */
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

void mdb_agg_top(mdb_aggregate *g, mdb_output *o)
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
