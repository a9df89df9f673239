/* mdinspect batch: --pprof, the profile format of pprof (profile.proto
 * beside this file), gzipped, which `go tool pprof`, Pyroscope and Grafana
 * read. Records are summed as they come into samples (one per distinct
 * stack of a process and mode), each frame a Location with its source
 * line, each method or type a Function named exactly as the other formats
 * name it (system_name: the frame as the log wrote it, without its IL
 * offset), each module a Mapping (a managed module's file with its MVID as
 * build-id; a native frame's ELF file with its GNU build-id). Strings,
 * functions, mappings, locations and samples are interned in hash tables,
 * so memory follows what is distinct, never the number of records.
 *
 * The encoding is protobuf-c's (generated from profile.proto by protoc-c
 * at build time): the issue asked for a well-kept library rather than a
 * hand-written encoder, and protobuf-c is packaged everywhere, small and
 * C. The file is written as a series of Profile messages, each holding a
 * slice of the repeated fields (protobuf concatenation merges messages,
 * appending repeated fields in order): so the whole profile is never built
 * as one message, only a slice of it at a time, and it streams through
 * zlib's gzip deflate to the output.
 *
 * Sample types come from the mode of each record's log (`modes` below:
 * one row per mode); a profile of several modes (logs of different modes
 * concatenated) has the columns of each, zero where a sample is of
 * another mode. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <talloc.h>
#include <zlib.h>

#include "batch/batch.h"
#include "batch/native.h"
#include "mdinspect/batch/profile.pb-c.h"

#define MAX_TYPES 4 /* sample types of one mode */
#define CHUNK 4096  /* items of one Profile message written at a time */

/* ------------------------------------------------------------ the modes */

typedef void values_fn(const mdb_proc *proc, const mdb_record *rec, int64_t *v);

/* What a log's mode measures. A record takes the row of its log's
 * `mode=` and its kind, else the first row of its kind (a log without a
 * header). A new mode (wall, exceptions, contention) is one row here. */
struct mode_row {
    const char *mode; /* the header's mode= word */
    int kind;         /* the record kind it writes */
    struct {
        const char *type, *unit;
    } types[MAX_TYPES];
    unsigned ntypes;
    const char *period_type, *period_unit;
    values_fn *values;
    const char *preferred; /* the type pprof shows first (default_sample_type) */
};

static int64_t sat(uint64_t v)
{
    return v > INT64_MAX ? INT64_MAX : (int64_t)v;
}

/* count x the period of 1/rate s in ns, saturated; 0 when the rate is
 * unknown (the profile then says so in a comment). */
static int64_t times_period(uint64_t count, uint64_t rate)
{
    if (!rate)
        return 0;
    unsigned __int128 ns = (unsigned __int128)count * 1000000000u / rate;
    return ns > INT64_MAX ? INT64_MAX : (int64_t)ns;
}

static void cpu_values(const mdb_proc *proc, const mdb_record *rec, int64_t *v)
{
    v[0] = sat(rec->count);
    v[1] = times_period(rec->count, proc->rate);
}

static void count_values(const mdb_proc *proc, const mdb_record *rec, int64_t *v)
{
    (void)proc;
    v[0] = sat(rec->count);
}

static void alloc_values(const mdb_proc *proc, const mdb_record *rec, int64_t *v)
{
    (void)proc;
    v[0] = sat(rec->count);
    v[1] = sat(rec->bytes);
}

static void wait_values(const mdb_proc *proc, const mdb_record *rec, int64_t *v)
{
    (void)proc;
    v[0] = sat(rec->count);
    v[1] = sat(rec->bytes); /* a wait record's nanoseconds */
}

/* A throw's exception type is its leaf location (its record's first
 * frame): a flame graph (pprof's, Pyroscope's, Grafana's) draws frames,
 * not labels, so the type is seen in every view, under the method that
 * threw it; a label would need a filter to be seen at all. */
static const struct mode_row modes[] = {
    {"sample",
     MDB_STACK,
     {{"samples", "count"}, {"cpu", "nanoseconds"}},
     2,
     "cpu",
     "nanoseconds",
     cpu_values,
     "cpu"},
    {"calls", MDB_CALL, {{"calls", "count"}}, 1, "calls", "count", count_values, "calls"},
    {"alloc",
     MDB_ALLOC,
     {{"alloc_objects", "count"}, {"alloc_space", "bytes"}},
     2,
     "space",
     "bytes",
     alloc_values,
     "alloc_space"},
    /* wall mode: counts in periods of 1/rate s of wall time, as sample
     * mode's are of CPU time (doc/profile-log.md, "Wall time") */
    {"wall",
     MDB_STACK,
     {{"samples", "count"}, {"wall", "nanoseconds"}},
     2,
     "wall",
     "nanoseconds",
     cpu_values,
     "wall"},
    {"exceptions",
     MDB_THROW,
     {{"exceptions", "count"}},
     1,
     "exceptions",
     "count",
     count_values,
     "exceptions"},
    {"contention",
     MDB_WAIT,
     {{"contentions", "count"}, {"contention", "nanoseconds"}},
     2,
     "contentions",
     "count",
     wait_values,
     "contention"},
    /* sampled allocation stacks (alloc mode with --alloc-sample): the
     * type as the leaf, its allocating stack above; the counts are the
     * log's estimates (doc/profile-log.md), in the columns go tool pprof
     * users know from Go's heap profiles */
    {"alloc",
     MDB_ASTACK,
     {{"alloc_objects", "count"}, {"alloc_space", "bytes"}},
     2,
     "space",
     "bytes",
     alloc_values,
     "alloc_space"},
    /* the live heap (heap mode): each process's last snapshot (write_all
     * leaves out the earlier ones), as Go's inuse columns */
    {"heap",
     MDB_HEAP,
     {{"inuse_objects", "count"}, {"inuse_space", "bytes"}},
     2,
     "space",
     "bytes",
     alloc_values,
     "inuse_space"},
};
#define NMODES (sizeof modes / sizeof modes[0])

static int mode_of(const mdb_proc *proc, int kind)
{
    int any = -1;
    for (unsigned i = 0; i < NMODES; i++) {
        if (modes[i].kind != kind)
            continue;
        if (mdb_proc_has_mode(proc, modes[i].mode))
            return (int)i;
        if (any < 0)
            any = (int)i;
    }
    return any;
}

/* ------------------------------------------------------------ the tables */

struct func { /* also its key, but start_line */
    int64_t name, system_name, filename;
    int64_t start_line;
};

struct mapping {
    int64_t filename, build_id;
};

struct loc { /* also its key */
    uint64_t func, mapping, address;
    int64_t line;
};

struct sample {
    const mdb_proc *proc;
    bool threaded; /* a format-4 record's: tid and slice labels */
    uint32_t slice;
    uint64_t tid;
    uint32_t mode;
    uint32_t n;
    uint64_t gc; /* a heap record's GC (0 for others) */
    int64_t v[MAX_TYPES];
    const uint32_t *locs; /* leaf first: the table's copy of the key's */
};

/* The key of a sample: its mode, its labels' source, then its locations. */
struct sample_key {
    uint32_t mode;
    uint32_t proc; /* the process's index: the "pid" label */
    /* Records of a thread and a time slice (format 4): a sample is one
     * stack of one thread in one slice; write_all() labels it "tid" (num),
     * "thread" (str: its name, when the log named the thread) and "slice"
     * (num, num_unit "milliseconds": the slice's start since the
     * process's). 0 for records without. */
    uint32_t threaded, slice;
    uint64_t tid;
    uint64_t gc;                   /* heap records: the GC of the snapshot */
    uint32_t locs[MDB_MAX_FRAMES]; /* location ids (fewer than 2^32: each is an
                                      entry of an array in memory) */
};

struct mdb_pprof {
    mdb_arena arena;
    mdb_table strings, funcs, maps, locs, samples;
    mdb_table known; /* a resolved frame's text -> its location id */
    struct pstr {
        const char *s;
        size_t len;
    } * str; /* by index: the table's copies */
    size_t nstr, capstr;
    struct func *fn;
    size_t nfn, capfn;
    struct mapping *mp;
    size_t nmp, capmp;
    struct loc *lc;
    size_t nlc, caplc;
    struct sample **s;
    size_t ns, caps;
    bool seen[NMODES];
    uint64_t rate;         /* the rate of the first sample log, */
    bool rates_differ;     /* ... unless they differ */
    bool rate_unknown;     /* a sample log without rate= */
    const mdb_proc *first; /* the first process with records */
    mdb_logctx *logs;      /* the threads' names (#thread lines) */
};

/* Grow an array of `size`-byte items to hold one more. */
static bool grow(void *ctx, void **a, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return true;
    size_t c = *cap ? *cap * 2 : 256;
    void *b = talloc_realloc_size(ctx, *a, c * size);
    if (!b)
        return false;
    *a = b;
    *cap = c;
    return true;
}

mdb_pprof *mdb_pprof_new(void *ctx)
{
    mdb_pprof *p = talloc_zero(ctx, mdb_pprof);
    int64_t empty;
    if (!p)
        return NULL;
    mdb_arena_init(&p->arena, p);
    if (!p->arena.ctx || mdb_table_init(&p->strings, p, 1024) ||
        mdb_table_init(&p->funcs, p, 1024) || mdb_table_init(&p->maps, p, 64) ||
        mdb_table_init(&p->locs, p, 1024) || mdb_table_init(&p->samples, p, 1024) ||
        mdb_table_init(&p->known, p, 1024) || !mdb_pprof_string(p, "", 0, &empty)) {
        talloc_free(p);
        return NULL;
    }
    return p;
}

/* The index of a string in the string table ("" is 0). */
bool mdb_pprof_string(mdb_pprof *p, const char *s, size_t n, int64_t *idx)
{
    uint64_t h = mdb_hash(s, n);
    const mdb_slot *sl = mdb_table_slot(&p->strings, h, s, n);
    if (sl) {
        *idx = (int64_t)(uintptr_t)sl->value - 1;
        return true;
    }
    if (n > UINT32_MAX || !grow(p, (void **)&p->str, &p->capstr, p->nstr, sizeof *p->str))
        return false;
    if (mdb_table_put(&p->strings, h, s, n, (void *)(uintptr_t)(p->nstr + 1)) ||
        !(sl = mdb_table_slot(&p->strings, h, s, n)))
        return false;
    p->str[p->nstr].s = sl->key; /* the table's copy stays put */
    p->str[p->nstr].len = n;
    *idx = (int64_t)p->nstr++;
    return true;
}

static bool str(mdb_pprof *p, const char *s, int64_t *idx)
{
    return mdb_pprof_string(p, s, strlen(s), idx);
}

/* Look a fixed-size key up; put `n + 1` for it when absent (*added). */
static bool intern(mdb_table *t, const void *key, size_t len, size_t n, uint64_t *id, bool *added)
{
    uint64_t h = mdb_hash(key, len);
    uintptr_t v = (uintptr_t)mdb_table_get(t, h, key, len);
    *added = !v;
    if (v) {
        *id = v;
        return true;
    }
    if (mdb_table_put(t, h, key, len, (void *)(uintptr_t)(n + 1)))
        return false;
    *id = n + 1;
    return true;
}

/* ------------------------------------------------------------ one frame */

/* The frames' text as the log wrote them: the last fields of the record
 * (before a TAB), leaf first; false when they are not all there. */
static bool frame_fields(const mdb_record *rec, const char **field, size_t *len)
{
    const char *s = rec->line, *end = s + rec->len, *tab = memchr(s, '\t', rec->len), *q;
    if (tab)
        end = tab;
    for (size_t k = rec->nframes; k-- > 0;) { /* the root is the last field */
        q = end;
        while (q > s && q[-1] != ' ')
            q--;
        if (q == s)
            return false;
        field[k] = q;
        len[k] = (size_t)(end - q);
        end = q - 1;
    }
    return true;
}

/* The module a frame lies in: a managed module (file, MVID), a module
 * not found (its MVID), a native frame's ELF file (name, build-id, and
 * the offset as the address); 0 for the other special frames. */
static bool mapping_of(mdb_pprof *p, const mdb_frame *f, const char *sys, size_t slen, uint64_t *id,
                       uint64_t *address)
{
    struct mapping m = {0};
    char mvid[33];
    bool added;
    *id = 0;
    *address = 0;
    if (f->mod) {
        mdb_format_mvid(mvid, f->mod->mvid);
        if (!str(p, f->mod->path ? f->mod->path : "", &m.filename) ||
            !str(p, f->mod->have_mvid ? mvid : "", &m.build_id))
            return false;
    } else if (f->status == MDB_UNKNOWN_MVID && f->unknown_mvid) {
        mdb_format_mvid(mvid, f->unknown_mvid);
        if (!str(p, "[unknown MVID]", &m.filename) || !str(p, mvid, &m.build_id))
            return false;
    } else if (sys && slen > 7 && memcmp(sys, "native:", 7) == 0) {
        /* native:NAME:BUILDID+0xOFF[!ACTIVITY]: the offset after the last
         * '+', the build-id after the last ':' before it (the log's rule) */
        const char *end = sys + slen, *bang = memchr(sys, '!', slen), *plus, *colon;
        if (bang)
            end = bang;
        for (plus = end; plus > sys && plus[-1] != '+'; plus--)
            ;
        if (plus <= sys + 7)
            return true;
        for (colon = plus - 1; colon > sys + 7 && colon[-1] != ':'; colon--)
            ;
        if (colon <= sys + 7)
            return true;
        if (end - plus > 2 && plus[0] == '0' && plus[1] == 'x') {
            uint64_t a = 0;
            const char *q;
            for (q = plus + 2; q < end && a >> 60 == 0; q++) {
                unsigned c = (unsigned char)*q, d;
                if (c - '0' < 10)
                    d = c - '0';
                else if (c - 'a' < 6)
                    d = c - 'a' + 10;
                else
                    break;
                a = a << 4 | d;
            }
            if (q == end)
                *address = a;
        }
        if (!mdb_pprof_string(p, sys + 7, (size_t)(colon - 1 - (sys + 7)), &m.filename) ||
            !mdb_pprof_string(p, colon, (size_t)(plus - 1 - colon), &m.build_id))
            return false;
    } else {
        return true;
    }
    if (!intern(&p->maps, &m, sizeof m, p->nmp, id, &added))
        return false;
    if (added) {
        if (!grow(p, (void **)&p->mp, &p->capmp, p->nmp, sizeof *p->mp))
            return false;
        p->mp[p->nmp++] = m;
    }
    return true;
}

/* Where a method's source starts (its first sequence point) when that is
 * in the document of the frame's line; 0 otherwise (a function is one
 * name in one file for pprof, and a method may span files). */
static int64_t start_line(const mdb_frame *f)
{
    mdt_seqpoint sp;
    const mdt_pdb *pdb;
    int e;
    if (f->status != MDB_OK || !f->file || !f->mod || !(pdb = f->mod->pdb) || !f->mod->docs ||
        MDT_TOKEN_TABLE(f->token) != MDT_TABLE_MethodDef)
        return 0;
    e = mdt_pdb_method_start(&sp, pdb, f->token);
    mdt_error_clear();
    if (e || sp.hidden || sp.document == 0 || sp.document > mdt_pdb_document_count(pdb))
        return 0;
    /* the frame's document name is the module's, made once (assemblies.c) */
    return atomic_load_explicit(&f->mod->docs[sp.document], memory_order_acquire) == f->file
               ? sp.start_line
               : 0;
}

/* The location of frame i of a record, whose text in the log is sys (slen
 * bytes; NULL when it could not be found). */
static bool location(mdb_pprof *p, mdb_logctx *lc, const mdb_record *rec, size_t i, const char *sys,
                     size_t slen, uint64_t *id)
{
    const mdb_frame *f = rec->frames[i];
    char buf[MDB_TEXT_ROOM];
    uint32_t nlen;
    const char *name =
        f->status == MDB_OK ? f->name : mdb_frame_text(f, lc, rec->lineno, buf, sizeof buf, &nlen);
    uint64_t h = 0;
    size_t full = slen; /* with the IL offset */
    struct func fn = {0};
    struct loc l = {0};
    bool added;
    /* a resolved frame's text always gives the same location (unresolved
     * ones may resolve later: a header names more folders, an #elf line
     * comes): one lookup by the text, IL offset included */
    if (sys && f->status == MDB_OK) {
        uintptr_t v;
        h = mdb_hash(sys, slen);
        if ((v = (uintptr_t)mdb_table_get(&p->known, h, sys, slen))) {
            *id = v;
            return true;
        }
    }
    if (f->status == MDB_OK)
        nlen = f->name_len;
    if (sys && rec->has_il[i] && !mdb_is_native_frame(sys, slen)) {
        /* the IL offset is the location's; a frame unread keeps its text */
        const char *at = memchr(sys, '@', slen);
        if (at)
            slen = (size_t)(at - sys);
    }
    if (!mdb_pprof_string(p, name, nlen, &fn.name) ||
        !mdb_pprof_string(p, sys ? sys : name, sys ? slen : nlen, &fn.system_name) ||
        (f->status == MDB_OK && f->file && !str(p, f->file, &fn.filename)))
        return false;
    if (!intern(&p->funcs, &fn, offsetof(struct func, start_line), p->nfn, &l.func, &added))
        return false;
    if (added) {
        fn.start_line = start_line(f);
        if (!grow(p, (void **)&p->fn, &p->capfn, p->nfn, sizeof *p->fn))
            return false;
        p->fn[p->nfn++] = fn;
    }
    if (!mapping_of(p, f, sys, slen, &l.mapping, &l.address))
        return false;
    l.line = f->status == MDB_OK && f->file ? f->line : 0;
    if (!intern(&p->locs, &l, sizeof l, p->nlc, id, &added))
        return false;
    if (added) {
        if (!grow(p, (void **)&p->lc, &p->caplc, p->nlc, sizeof *p->lc))
            return false;
        p->lc[p->nlc++] = l;
    }
    if (h && mdb_table_put(&p->known, h, sys, full, (void *)(uintptr_t)*id))
        return false;
    return true;
}

/* ------------------------------------------------------------ records */

bool mdb_pprof_add(mdb_pprof *p, mdb_logctx *lc, const mdb_proc *proc, const mdb_record *rec)
{
    struct sample_key k;
    const char *field[MDB_MAX_FRAMES];
    size_t flen[MDB_MAX_FRAMES];
    struct sample *s;
    int64_t v[MAX_TYPES] = {0};
    int mode;
    size_t n = rec->nframes, klen;
    if (n == 0 ||
        (rec->kind != MDB_STACK && rec->kind != MDB_CALL && rec->kind != MDB_ALLOC &&
         rec->kind != MDB_THROW && rec->kind != MDB_WAIT && rec->kind != MDB_ASTACK &&
         rec->kind != MDB_HEAP) ||
        (mode = mode_of(proc, rec->kind)) < 0)
        return true;
    /* a log with sampled allocation stacks: its astack records fill the
     * alloc columns; its exact per-type counts (alloc records) would count
     * the same allocations again, and stay --top's */
    if (rec->kind == MDB_ALLOC && proc->alloc_sample)
        return true;
    memset(&k, 0, sizeof k);
    k.mode = (uint32_t)mode;
    k.proc = proc->index;
    k.gc = rec->kind == MDB_HEAP ? rec->gc : 0;
    if (rec->threaded) { /* stack, throw and wait records of format 4 */
        k.threaded = 1;
        k.tid = rec->tid;
        k.slice = rec->slice > UINT32_MAX ? UINT32_MAX : (uint32_t)rec->slice;
    }
    p->logs = lc;
    bool fields = frame_fields(rec, field, flen);
    for (size_t i = 0; i < n; i++) {
        uint64_t id;
        if (!location(p, lc, rec, i, fields ? field[i] : NULL, fields ? flen[i] : 0, &id) ||
            id > UINT32_MAX)
            return false;
        k.locs[i] = (uint32_t)id;
    }
    modes[mode].values(proc, rec, v);
    if (!p->seen[mode]) {
        p->seen[mode] = true;
        if (!p->first)
            p->first = proc;
    }
    if (modes[mode].values == cpu_values) {
        if (!proc->rate)
            p->rate_unknown = true;
        else if (!p->rate)
            p->rate = proc->rate;
        else if (p->rate != proc->rate)
            p->rates_differ = true;
    }
    klen = offsetof(struct sample_key, locs) + n * sizeof k.locs[0];
    uint64_t h = mdb_hash(&k, klen);
    s = mdb_table_get(&p->samples, h, &k, klen);
    if (!s) {
        const mdb_slot *sl;
        if (!grow(p, (void **)&p->s, &p->caps, p->ns, sizeof *p->s) ||
            !(s = mdb_arena_alloc(&p->arena, sizeof *s)) ||
            mdb_table_put(&p->samples, h, &k, klen, s) ||
            !(sl = mdb_table_slot(&p->samples, h, &k, klen)))
            return false;
        memset(s->v, 0, sizeof s->v);
        s->proc = proc;
        s->threaded = k.threaded != 0;
        s->tid = k.tid;
        s->slice = k.slice;
        s->mode = (uint32_t)mode;
        s->gc = k.gc;
        s->n = (uint32_t)n;
        s->locs = (const uint32_t *)(const void *)(sl->key + offsetof(struct sample_key, locs));
        p->s[p->ns++] = s;
    }
    for (unsigned t = 0; t < modes[mode].ntypes; t++) /* saturating sums */
        s->v[t] = v[t] > INT64_MAX - s->v[t] ? INT64_MAX : s->v[t] + v[t];
    return true;
}

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
    const char *type[NMODES * MAX_TYPES], *unit[NMODES * MAX_TYPES];
    unsigned col[NMODES][MAX_TYPES];
};

static void columns(const mdb_pprof *p, struct columns *c)
{
    bool any = false;
    c->n = 0;
    for (unsigned m = 0; m < NMODES; m++)
        any |= p->seen[m];
    for (unsigned m = 0; m < NMODES; m++) {
        /* nothing counted: the columns of the first log's mode, or CPU */
        if (!(p->seen[m] || (!any && m == 0)))
            continue;
        for (unsigned t = 0; t < modes[m].ntypes; t++) {
            unsigned k;
            for (k = 0; k < c->n; k++)
                if (!strcmp(c->type[k], modes[m].types[t].type) &&
                    !strcmp(c->unit[k], modes[m].types[t].unit))
                    break;
            if (k == c->n) {
                c->type[k] = modes[m].types[t].type;
                c->unit[k] = modes[m].types[t].unit;
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
    while (first_mode < NMODES - 1 && !p->seen[first_mode] && p->first)
        first_mode++; /* the first mode with records (none: sample's) */

    /* the header: sample types, period, times */
    Perftools__Profiles__ValueType *vt = talloc_array(tmp, Perftools__Profiles__ValueType, c.n + 1);
    Perftools__Profiles__ValueType **vtp = talloc_array(tmp, Perftools__Profiles__ValueType *, c.n);
    if (!vt || !vtp)
        return false;
    for (unsigned k = 0; k < c.n; k++) {
        perftools__profiles__value_type__init(&vt[k]);
        if (!str(p, c.type[k], &vt[k].type) || !str(p, c.unit[k], &vt[k].unit))
            return false;
        vtp[k] = &vt[k];
    }
    m.n_sample_type = c.n;
    m.sample_type = vtp;
    perftools__profiles__value_type__init(&vt[c.n]);
    if (!str(p, modes[first_mode].period_type, &vt[c.n].type) ||
        !str(p, modes[first_mode].period_unit, &vt[c.n].unit) ||
        !str(p, modes[first_mode].preferred, &m.default_sample_type) || !str(p, "pid", &pid_key) ||
        !str(p, "tid", &tid_key) || !str(p, "thread", &thread_key) ||
        !str(p, "slice", &slice_key) || !str(p, "milliseconds", &ms))
        return false;
    m.period_type = &vt[c.n];
    if (modes[first_mode].values == cpu_values)
        m.period = p->rate && !p->rates_differ ? (int64_t)(1000000000u / p->rate) : 0;
    else
        m.period = 1;
    if (p->rate_unknown || p->rates_differ) {
        if (!str(p,
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
            for (unsigned k = 0; k < modes[s->mode].ntypes; k++)
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
