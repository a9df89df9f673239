/* mdinspect batch --pprof, the file (pprof.c sums the records): the
 * interned tables written as a series of Profile messages (profile.proto),
 * each a slice of the repeated fields, through protobuf-c and zlib's gzip
 * deflate to the output, so the whole profile is never built as one
 * message. The columns of the sample types are those of every mode seen;
 * heap samples keep only each process's last GC; threads are labelled
 * with their names from the log. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <talloc.h>
#include <zlib.h>

#include "batch/batch.h"
#include "batch/native.h"
#include "batch/pprof_int.h"
#include "mdinspect/batch/profile.pb-c.h"

/* ------------------------------------------------------------ the file */

/* protobuf-c's output buffer, deflated to the output as it comes. */
struct gz {
    ProtobufCBuffer base;
    z_stream z;
    mdb_output *o;
    bool failed;
};

static void gz_write(struct gz *g, const uint8_t *data, size_t len, int flush)
{
    uint8_t out[16384];
    do {
        /* zlib counts in uInt: hand it at most 1 GiB at a time */
        size_t take = len > (1u << 30) ? (1u << 30) : len;
        g->z.next_in = (Bytef *)(uintptr_t)data;
        g->z.avail_in = (uInt)take;
        data += take;
        len -= take;
        int f = len ? Z_NO_FLUSH : flush, r;
        do {
            g->z.next_out = out;
            g->z.avail_out = sizeof out;
            r = deflate(&g->z, f);
            if (r == Z_STREAM_ERROR) {
                g->failed = true;
                return;
            }
            mdb_out(g->o, out, sizeof out - g->z.avail_out);
        } while (g->z.avail_out == 0);
        if (f == Z_FINISH && r != Z_STREAM_END)
            g->failed = true;
    } while (len);
}

static void gz_append(ProtobufCBuffer *b, size_t len, const uint8_t *data)
{
    struct gz *g = (struct gz *)b;
    if (!g->failed && len)
        gz_write(g, data, len, Z_NO_FLUSH);
}

/* One Profile message of the file (a slice of the whole). */
static void put(struct gz *g, const Perftools__Profiles__Profile *m)
{
    protobuf_c_message_pack_to_buffer(&m->base, &g->base);
}

/* The columns: the sample types of every mode that has records, a type
 * shared by two modes once; col[mode][t] is where mode's type t goes. */
struct columns {
    unsigned n;
    const char *type[MDB_PPROF_NMODES * MAX_TYPES], *unit[MDB_PPROF_NMODES * MAX_TYPES];
    unsigned col[MDB_PPROF_NMODES][MAX_TYPES];
};

static void columns(const mdb_pprof *p, struct columns *c)
{
    bool any = false;
    c->n = 0;
    for (unsigned m = 0; m < MDB_PPROF_NMODES; m++)
        any |= p->seen[m];
    for (unsigned m = 0; m < MDB_PPROF_NMODES; m++) {
        /* nothing counted: the columns of the first log's mode, or CPU */
        if (!(p->seen[m] || (!any && m == 0)))
            continue;
        for (unsigned t = 0; t < mdb_pprof_modes[m].ntypes; t++) {
            unsigned k;
            for (k = 0; k < c->n; k++)
                if (!strcmp(c->type[k], mdb_pprof_modes[m].types[t].type) &&
                    !strcmp(c->unit[k], mdb_pprof_modes[m].types[t].unit))
                    break;
            if (k == c->n) {
                c->type[k] = mdb_pprof_modes[m].types[t].type;
                c->unit[k] = mdb_pprof_modes[m].types[t].unit;
                c->n++;
            }
            c->col[m][t] = k;
        }
    }
}

/* Start and duration over every process with records. */
static void times(const mdb_pprof *p, int64_t *start, int64_t *duration)
{
    int64_t lo = INT64_MAX, hi = INT64_MIN, longest = 0;
    bool all_start = true;
    *start = *duration = 0;
    for (size_t i = 0; i < p->ns; i++) {
        const mdb_proc *q = p->s[i]->proc;
        int64_t d = q->has_duration && q->duration_ms < (uint64_t)INT64_MAX / 1000000
                        ? (int64_t)q->duration_ms * 1000000
                        : 0;
        if (d > longest)
            longest = d;
        if (!q->has_start) {
            all_start = false;
            continue;
        }
        if (q->start_ns < lo)
            lo = q->start_ns;
        if (q->start_ns > INT64_MAX - d)
            continue;
        if (q->start_ns + d > hi)
            hi = q->start_ns + d;
    }
    if (lo != INT64_MAX)
        *start = lo;
    *duration = all_start && lo != INT64_MAX && hi > lo ? hi - lo : longest;
}

/* Everything but the samples and the string table: interned strings come
 * first, the table goes last. */
static bool write_all(mdb_pprof *p, struct gz *g, void *tmp)
{
    Perftools__Profiles__Profile m = PERFTOOLS__PROFILES__PROFILE__INIT;
    struct columns c;
    int64_t pid_key = 0, tid_key = 0, thread_key = 0, slice_key = 0, ms = 0, comment = 0;
    unsigned first_mode = 0;
    columns(p, &c);
    while (first_mode < MDB_PPROF_NMODES - 1 && !p->seen[first_mode] && p->first)
        first_mode++; /* the first mode with records (none: sample's) */

    /* the header: sample types, period, times */
    Perftools__Profiles__ValueType *vt = talloc_array(tmp, Perftools__Profiles__ValueType, c.n + 1);
    Perftools__Profiles__ValueType **vtp = talloc_array(tmp, Perftools__Profiles__ValueType *, c.n);
    if (!vt || !vtp)
        return false;
    for (unsigned k = 0; k < c.n; k++) {
        perftools__profiles__value_type__init(&vt[k]);
        if (!mdb_pprof_str(p, c.type[k], &vt[k].type) || !mdb_pprof_str(p, c.unit[k], &vt[k].unit))
            return false;
        vtp[k] = &vt[k];
    }
    m.n_sample_type = c.n;
    m.sample_type = vtp;
    perftools__profiles__value_type__init(&vt[c.n]);
    if (!mdb_pprof_str(p, mdb_pprof_modes[first_mode].period_type, &vt[c.n].type) ||
        !mdb_pprof_str(p, mdb_pprof_modes[first_mode].period_unit, &vt[c.n].unit) ||
        !mdb_pprof_str(p, mdb_pprof_modes[first_mode].preferred, &m.default_sample_type) ||
        !mdb_pprof_str(p, "pid", &pid_key) || !mdb_pprof_str(p, "tid", &tid_key) ||
        !mdb_pprof_str(p, "thread", &thread_key) || !mdb_pprof_str(p, "slice", &slice_key) ||
        !mdb_pprof_str(p, "milliseconds", &ms))
        return false;
    m.period_type = &vt[c.n];
    if (mdb_pprof_modes[first_mode].values == mdb_pprof_cpu_values)
        m.period = p->rate && !p->rates_differ ? (int64_t)(1000000000u / p->rate) : 0;
    else
        m.period = 1;
    if (p->rate_unknown || p->rates_differ) {
        if (!mdb_pprof_str(p,
                           p->rate_unknown ? "a sample log without rate=: its cpu nanoseconds are 0"
                                           : "sample logs of different rates: each sample's cpu "
                                             "nanoseconds use its own log's rate; period is 0",
                           &comment))
            return false;
        m.n_comment = 1;
        m.comment = &comment;
    }
    times(p, &m.time_nanos, &m.duration_nanos);
    put(g, &m);

    /* heap snapshots: each process's last one alone (a heap of several
     * GCs summed is no heap) */
    {
        uint32_t nproc = 0;
        for (size_t i = 0; i < p->ns; i++)
            if (p->s[i]->gc && p->s[i]->proc->index >= nproc)
                nproc = p->s[i]->proc->index + 1;
        uint64_t *last = nproc ? talloc_zero_array(tmp, uint64_t, nproc) : NULL;
        if (nproc && !last)
            return false;
        for (size_t i = 0; i < p->ns; i++)
            if (p->s[i]->gc && p->s[i]->gc > last[p->s[i]->proc->index])
                last[p->s[i]->proc->index] = p->s[i]->gc;
        size_t keep = 0;
        for (size_t i = 0; i < p->ns; i++)
            if (!p->s[i]->gc || p->s[i]->gc == last[p->s[i]->proc->index])
                p->s[keep++] = p->s[i];
        p->ns = keep;
    }

    /* the samples, CHUNK at a time */
    for (size_t i = 0; i < p->ns; i += CHUNK) {
        size_t n = p->ns - i < CHUNK ? p->ns - i : CHUNK;
        void *t = talloc_new(tmp);
        Perftools__Profiles__Profile part = PERFTOOLS__PROFILES__PROFILE__INIT;
        Perftools__Profiles__Sample *sm = talloc_array(t, Perftools__Profiles__Sample, n);
        Perftools__Profiles__Sample **smp = talloc_array(t, Perftools__Profiles__Sample *, n);
        Perftools__Profiles__Label *lb = talloc_array(t, Perftools__Profiles__Label, n * 4);
        Perftools__Profiles__Label **lbp = talloc_array(t, Perftools__Profiles__Label *, n * 4);
        int64_t *vals = talloc_array(t, int64_t, n * (c.n ? c.n : 1));
        uint64_t *ids;
        size_t nids = 0;
        for (size_t j = 0; j < n; j++)
            nids += p->s[i + j]->n;
        ids = talloc_array(t, uint64_t, nids ? nids : 1);
        nids = 0;
        if (!t || !sm || !smp || !lb || !lbp || !vals || !ids) {
            talloc_free(t);
            return false;
        }
        for (size_t j = 0; j < n; j++) {
            const struct sample *s = p->s[i + j];
            perftools__profiles__sample__init(&sm[j]);
            sm[j].n_location_id = s->n;
            sm[j].location_id = ids + nids;
            for (uint32_t q = 0; q < s->n; q++)
                ids[nids++] = s->locs[q];
            sm[j].n_value = c.n;
            sm[j].value = vals + j * c.n;
            memset(sm[j].value, 0, c.n * sizeof *vals);
            for (unsigned k = 0; k < mdb_pprof_modes[s->mode].ntypes; k++)
                sm[j].value[c.col[s->mode][k]] = s->v[k];
            /* labels: the process; a format-4 record's thread and slice */
            Perftools__Profiles__Label *l = lb + 4 * j, **lp = lbp + 4 * j;
            size_t nl = 0;
            if (s->proc->has_pid && s->proc->pid <= INT64_MAX) {
                perftools__profiles__label__init(&l[nl]);
                l[nl].key = pid_key;
                l[nl].num = (int64_t)s->proc->pid;
                nl++;
            }
            if (s->threaded) {
                mdb_thread_name tn;
                perftools__profiles__label__init(&l[nl]);
                l[nl].key = tid_key;
                l[nl].num = s->tid > INT64_MAX ? INT64_MAX : (int64_t)s->tid;
                nl++;
                /* the thread's last name in the log: a label per sample
                 * would otherwise split one thread by its renames */
                if (mdb_logctx_thread(p->logs, s->proc, s->tid, UINT64_MAX, &tn) && tn.name) {
                    perftools__profiles__label__init(&l[nl]);
                    l[nl].key = thread_key;
                    if (!mdb_pprof_string(p, tn.name, tn.name_len, &l[nl].str)) {
                        talloc_free(t);
                        return false;
                    }
                    nl++;
                }
                perftools__profiles__label__init(&l[nl]);
                l[nl].key = slice_key;
                l[nl].num =
                    (int64_t)s->slice * (int64_t)(s->proc->slice_ms ? s->proc->slice_ms : 1000);
                l[nl].num_unit = ms;
                nl++;
            }
            for (size_t q = 0; q < nl; q++)
                lp[q] = &l[q];
            sm[j].n_label = nl;
            sm[j].label = nl ? lp : NULL;
            smp[j] = &sm[j];
        }
        part.n_sample = n;
        part.sample = smp;
        put(g, &part);
        talloc_free(t);
    }

    /* mappings (all: they are few; a file with has_* so that pprof does not
     * try to symbolize what is named already) */
    {
        Perftools__Profiles__Profile part = PERFTOOLS__PROFILES__PROFILE__INIT;
        Perftools__Profiles__Mapping *mp =
            talloc_array(tmp, Perftools__Profiles__Mapping, p->nmp + 1);
        Perftools__Profiles__Mapping **mpp =
            talloc_array(tmp, Perftools__Profiles__Mapping *, p->nmp + 1);
        if (!mp || !mpp)
            return false;
        for (size_t j = 0; j < p->nmp; j++) {
            perftools__profiles__mapping__init(&mp[j]);
            mp[j].id = j + 1;
            mp[j].filename = p->mp[j].filename;
            mp[j].build_id = p->mp[j].build_id;
            mp[j].has_functions = true;
            mp[j].has_filenames = true;
            mp[j].has_line_numbers = true;
            mpp[j] = &mp[j];
        }
        part.n_mapping = p->nmp;
        part.mapping = mpp;
        put(g, &part);
    }

    /* locations, CHUNK at a time */
    for (size_t i = 0; i < p->nlc; i += CHUNK) {
        size_t n = p->nlc - i < CHUNK ? p->nlc - i : CHUNK;
        void *t = talloc_new(tmp);
        Perftools__Profiles__Profile part = PERFTOOLS__PROFILES__PROFILE__INIT;
        Perftools__Profiles__Location *l = talloc_array(t, Perftools__Profiles__Location, n);
        Perftools__Profiles__Location **lp = talloc_array(t, Perftools__Profiles__Location *, n);
        Perftools__Profiles__Line *ln = talloc_array(t, Perftools__Profiles__Line, n);
        Perftools__Profiles__Line **lnp = talloc_array(t, Perftools__Profiles__Line *, n);
        if (!t || !l || !lp || !ln || !lnp) {
            talloc_free(t);
            return false;
        }
        for (size_t j = 0; j < n; j++) {
            const struct loc *x = &p->lc[i + j];
            perftools__profiles__location__init(&l[j]);
            perftools__profiles__line__init(&ln[j]);
            l[j].id = i + j + 1;
            l[j].mapping_id = x->mapping;
            l[j].address = x->address;
            ln[j].function_id = x->func;
            ln[j].line = x->line;
            lnp[j] = &ln[j];
            l[j].n_line = 1;
            l[j].line = &lnp[j];
            lp[j] = &l[j];
        }
        part.n_location = n;
        part.location = lp;
        put(g, &part);
        talloc_free(t);
    }

    /* functions, CHUNK at a time */
    for (size_t i = 0; i < p->nfn; i += CHUNK) {
        size_t n = p->nfn - i < CHUNK ? p->nfn - i : CHUNK;
        void *t = talloc_new(tmp);
        Perftools__Profiles__Profile part = PERFTOOLS__PROFILES__PROFILE__INIT;
        Perftools__Profiles__Function *f = talloc_array(t, Perftools__Profiles__Function, n);
        Perftools__Profiles__Function **fp = talloc_array(t, Perftools__Profiles__Function *, n);
        if (!t || !f || !fp) {
            talloc_free(t);
            return false;
        }
        for (size_t j = 0; j < n; j++) {
            perftools__profiles__function__init(&f[j]);
            f[j].id = i + j + 1;
            f[j].name = p->fn[i + j].name;
            f[j].system_name = p->fn[i + j].system_name;
            f[j].filename = p->fn[i + j].filename;
            f[j].start_line = p->fn[i + j].start_line;
            fp[j] = &f[j];
        }
        part.n_function = n;
        part.function = fp;
        put(g, &part);
        talloc_free(t);
    }

    /* the string table, in index order, CHUNK at a time; protobuf-c packs
     * NUL-terminated strings: a name holding a NUL byte is cut there (names
     * come from metadata, where NUL ends a string anyway) */
    for (size_t i = 0; i < p->nstr; i += CHUNK) {
        size_t n = p->nstr - i < CHUNK ? p->nstr - i : CHUNK;
        void *t = talloc_new(tmp);
        Perftools__Profiles__Profile part = PERFTOOLS__PROFILES__PROFILE__INIT;
        char **sv = talloc_array(t, char *, n);
        if (!t || !sv) {
            talloc_free(t);
            return false;
        }
        for (size_t j = 0; j < n; j++)
            if (!(sv[j] = talloc_strndup(sv, p->str[i + j].s, p->str[i + j].len))) {
                talloc_free(t);
                return false;
            }
        part.n_string_table = n;
        part.string_table = sv;
        put(g, &part);
        talloc_free(t);
    }
    return !g->failed;
}

void mdb_pprof_write(mdb_pprof *p, mdb_output *o)
{
    struct gz g;
    void *tmp = talloc_new(p);
    memset(&g, 0, sizeof g);
    g.base.append = gz_append;
    g.o = o;
    /* 15 + 16: a gzip header and trailer (pprof reads gzip) */
    if (!tmp || deflateInit2(&g.z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        talloc_free(tmp);
        o->failed = true;
        return;
    }
    if (!write_all(p, &g, tmp))
        g.failed = true;
    else
        gz_write(&g, NULL, 0, Z_FINISH);
    deflateEnd(&g.z);
    talloc_free(tmp);
    if (g.failed)
        o->failed = true;
}
