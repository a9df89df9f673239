/* libFuzzer harness for mdinspect batch's line parser (record.c) and frame
 * resolver (resolve.c): the input is cut into lines at '\n', each parsed
 * as `mdinspect batch` parses an input line (an mdprofile log's header,
 * #stats, #module, stack, call and alloc records with their frames,
 * descriptors, IL offsets and TAB debug names, plain `MVID TOKEN
 * [DESC...]` and `PATH TOKEN` lines) and written in the text, JSON and
 * folded formats. Frames resolve against the fixtures of data/ and
 * data/pdb (so type arguments, PDB lines and metadata names are reached).
 * The first byte chooses how the last line ends (with a newline, at the
 * end of the input, or followed by another log's header), whether the
 * resolver makes JSON forms, and whether methods are named with their
 * signatures (--signatures). Oracles besides the sanitizers: every line
 * prints exactly one text line and one JSON line (no newline inside), a
 * record's frames are within bounds and non-NULL, and a malformed line
 * says why. Built for libFuzzer with --enable-fuzzing and always as a
 * replayer (tests/fuzz/replay.c) that `make check` runs over
 * tests/batch/corpus/batchline/. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <talloc.h>

#include "batch/batch.h"
#include "batch/native.h"
#include "paths.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct {
    void *ctx;
    mdb_assemblies *a;
    mdb_logctx *lc;
    mdb_resolver *r[4]; /* text, JSON; with --signatures: text, JSON */
    mdb_record *rec;
    mdb_output out;
    mdb_budget budget;
    bool spilled;
    mdb_natives *natives;
} S;

static void spill(mdb_output *o)
{
    S.spilled = true; /* a record longer than the buffer: dropped */
    (void)o;
}

static void setup(void)
{
    static char dirs[2][1024];
    static char *paths[2];
    if (S.ctx)
        return;
    S.ctx = talloc_new(NULL);
    /* small: the caches start over often, and memory stays bounded */
    mdb_budget_init(&S.budget, (size_t)8 << 20, 2);
    paths[0] = (char *)src_path(dirs[0], sizeof dirs[0], "data/pdb");
    paths[1] = (char *)src_path(dirs[1], sizeof dirs[1], "data");
    if (!S.ctx || !(S.a = mdb_assemblies_new(S.ctx, paths, 2, false, NULL)) ||
        !(S.lc = mdb_logctx_new(S.ctx, S.a, false)) ||
        !(S.r[0] = mdb_resolver_new(S.ctx, S.a, false, &S.budget)) ||
        !(S.r[1] = mdb_resolver_new(S.ctx, S.a, true, &S.budget)) ||
        !(S.r[2] = mdb_resolver_new(S.ctx, S.a, false, &S.budget)) ||
        !(S.r[3] = mdb_resolver_new(S.ctx, S.a, true, &S.budget)) ||
        !(S.rec = talloc(S.ctx, mdb_record)) || mdb_output_init(&S.out, S.ctx, -1)) {
        fprintf(stderr, "fuzz_batchline: out of memory setting up\n");
        abort();
    }
    S.out.spill = spill;
    /* native frames (native.c): no #elf line reaches a line resolver, so
     * they go the build-id way, in a debug folder of the tree's (no file
     * of the machine's is read) */
    static char dbg[1024];
    static char *dbgs[1];
    dbgs[0] = (char *)src_path(dbg, sizeof dbg, "data/pdb");
    if (!(S.natives = mdb_natives_new(S.ctx, dbgs, 1)))
        abort();
    for (int i = 0; i < 4; i++)
        mdb_resolver_use_natives(S.r[i], S.natives);
    mdb_resolver_set_signatures(S.r[2], true);
    mdb_resolver_set_signatures(S.r[3], true);
}

/* What the emitter wrote for one line: one line, ending in its newline. */
static void one_line(const char *what, const mdb_record *rec)
{
    const char *nl = memchr(S.out.buf, '\n', S.out.len);
    if (!S.spilled && (!nl || nl != S.out.buf + S.out.len - 1)) {
        fprintf(stderr, "%s of line %llu (kind %d) is not one line: %.*s\n", what,
                (unsigned long long)rec->lineno, rec->kind, (int)S.out.len, S.out.buf);
        abort();
    }
    S.out.len = 0;
    S.spilled = false;
}

static void parse_line(mdb_resolver *r, const char *s, size_t n, uint64_t lineno, int ending)
{
    mdb_record *rec = S.rec;
    const mdb_proc *proc = mdb_logctx_none(S.lc);
    mdb_resolver_trim(r);
    mdb_record_parse(r, rec, s, n, lineno, ending);
    if (rec->nframes > MDB_MAX_FRAMES || (rec->kind == MDB_MALFORMED && !rec->why)) {
        fprintf(stderr, "line %llu: %zu frames, kind %d\n", (unsigned long long)lineno,
                rec->nframes, rec->kind);
        abort();
    }
    for (size_t i = 0; i < rec->nframes; i++)
        if (!rec->frames[i] || !rec->frames[i]->text) {
            fprintf(stderr, "line %llu: frame %zu is NULL or has no text\n",
                    (unsigned long long)lineno, i);
            abort();
        }
    S.out.len = 0;
    S.spilled = false;
    mdb_emit_text(&S.out, S.lc, rec);
    one_line("the text", rec);
    mdb_emit_json(&S.out, r, S.lc, proc, rec);
    one_line("the JSON", rec);
    mdb_emit_folded(&S.out, S.lc, rec);
    S.out.len = 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const int endings[] = {MDB_LINE_ENDED, MDB_LINE_UNENDED, MDB_LINE_SPLIT, MDB_LINE_LONG};
    const char *p, *end;
    uint64_t lineno = 1;
    mdb_resolver *r;
    int last;
    if (size < 1 || size > MDB_MAX_LINE)
        return 0;
    setup();
    r = S.r[(data[0] >> 7) | ((data[0] >> 5) & 2)];
    last = endings[data[0] & 3];
    p = (const char *)data + 1;
    end = (const char *)data + size;
    while (p <= end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = (size_t)((nl ? nl : end) - p);
        if (!nl && n == 0)
            break;
        if (n && p[n - 1] == '\r')
            n--;
        parse_line(r, p, n, lineno++, nl ? MDB_LINE_ENDED : last);
        p = nl ? nl + 1 : end + 1;
    }
    return 0;
}
