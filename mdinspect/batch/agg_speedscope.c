/* mdinspect batch --speedscope: speedscope's file format (shared frames
 * and "sampled" profiles) from what aggregate.c collected: one profile per
 * thread of a format-4 log, in milliseconds and in time order, with an
 * empty sample between a thread's busy slices; one per process for older
 * logs and for a process's throws, waits and sampled allocations (the
 * rule is in aggregate.c's opening comment). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <talloc.h>

#include "batch/aggregate_int.h"

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

void mdb_agg_speedscope(mdb_aggregate *g, mdb_output *o)
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
