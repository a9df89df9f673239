/* mdinspect batch: --folded, the folded stacks flame-graph tools read
 * (flamegraph.pl, speedscope, inferno): one line per record, frames from
 * the root to the leaf separated by ';', a space, the count. Frames are
 * names without source lines (so a method is one box), special and
 * unresolved frames in brackets; a ';' inside a name becomes ':'. A
 * throw's leaf is its exception type; a wait weighs its nanoseconds. Lines
 * are not merged: the tools add up equal stacks themselves, and the output
 * stays a stream. Lines without frames print nothing. */
#include "config.h"

#include "batch/batch.h"

static void name(mdb_output *o, mdb_logctx *lc, uint64_t lineno, const mdb_frame *f)
{
    char buf[MDB_TEXT_ROOM];
    uint32_t n, start = 0;
    const char *s =
        f->status == MDB_OK ? f->name : mdb_frame_text(f, lc, lineno, buf, sizeof buf, &n);
    if (f->status == MDB_OK)
        n = f->name_len;
    for (uint32_t i = 0; i < n; i++)
        if (s[i] == ';') {
            mdb_out(o, s + start, i - start);
            mdb_outc(o, ':');
            start = i + 1;
        }
    mdb_out(o, s + start, n - start);
}

void mdb_emit_folded(mdb_output *o, mdb_logctx *lc, const mdb_record *rec)
{
    if (rec->nframes == 0)
        return;
    for (size_t i = rec->nframes; i-- > 0;) {
        name(o, lc, rec->lineno, rec->frames[i]);
        if (i)
            mdb_outc(o, ';');
    }
    mdb_outc(o, ' ');
    mdb_outu(o, rec->kind == MDB_WAIT ? rec->bytes : rec->count); /* a wait's nanoseconds */
    mdb_outc(o, '\n');
}
