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
 * another mode.
 *
 * This file sums the records; pprof_write.c writes the file. */
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

/* ------------------------------------------------------------ the modes */

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

void mdb_pprof_cpu_values(const mdb_proc *proc, const mdb_record *rec, int64_t *v)
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
/* Sized by its rows: a count other than pprof_int.h's MDB_PPROF_NMODES
 * conflicts with the declaration there. */
const struct mode_row mdb_pprof_modes[] = {
    {"sample",
     MDB_STACK,
     {{"samples", "count"}, {"cpu", "nanoseconds"}},
     2,
     "cpu",
     "nanoseconds",
     mdb_pprof_cpu_values,
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
     mdb_pprof_cpu_values,
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

static int mode_of(const mdb_proc *proc, int kind)
{
    int any = -1;
    for (unsigned i = 0; i < MDB_PPROF_NMODES; i++) {
        if (mdb_pprof_modes[i].kind != kind)
            continue;
        if (mdb_proc_has_mode(proc, mdb_pprof_modes[i].mode))
            return (int)i;
        if (any < 0)
            any = (int)i;
    }
    return any;
}

/* ------------------------------------------------------------ the tables */

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

bool mdb_pprof_str(mdb_pprof *p, const char *s, int64_t *idx)
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
        if (!mdb_pprof_str(p, f->mod->path ? f->mod->path : "", &m.filename) ||
            !mdb_pprof_str(p, f->mod->have_mvid ? mvid : "", &m.build_id))
            return false;
    } else if (f->status == MDB_UNKNOWN_MVID && f->unknown_mvid) {
        mdb_format_mvid(mvid, f->unknown_mvid);
        if (!mdb_pprof_str(p, "[unknown MVID]", &m.filename) ||
            !mdb_pprof_str(p, mvid, &m.build_id))
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
        (f->status == MDB_OK && f->file && !mdb_pprof_str(p, f->file, &fn.filename)))
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
    mdb_pprof_modes[mode].values(proc, rec, v);
    if (!p->seen[mode]) {
        p->seen[mode] = true;
        if (!p->first)
            p->first = proc;
    }
    if (mdb_pprof_modes[mode].values == mdb_pprof_cpu_values) {
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
    for (unsigned t = 0; t < mdb_pprof_modes[mode].ntypes; t++) /* saturating sums */
        s->v[t] = v[t] > INT64_MAX - s->v[t] ? INT64_MAX : s->v[t] + v[t];
    return true;
}
