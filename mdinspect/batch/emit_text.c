/* mdinspect batch: the text format, one output line per input line, so
 * that `paste`, `join` and line numbers keep working:
 *   plain line     NAME, or NAME (FILE:LINE)
 *   stack, call    KIND COUNT, then each frame after a TAB (leaf first);
 *                  a format-2 call: call COUNT LEAVES TAILCALLS UNWINDS
 *   alloc          alloc COUNT BYTES, TAB, the type
 *   frames         [native], [unknown:unmapped], [truncated] (special frames),
 *                  [unresolved: REASON], [unresolved: unknown MVID (NAME VERSION)]
 *                  when a #module line named the module not found
 *   header, #stats, comments and blank lines: as they are
 *   malformed      [malformed line N: WHY] */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "batch/batch.h"

const char *mdb_frame_text_named(const mdb_frame *f, mdb_logctx *lc, uint64_t lineno, char *buf,
                                 size_t size, uint32_t *len)
{
    const char *name;
    uint32_t n;
    if ((name = mdb_logctx_module_name(lc, f->unknown_mvid, lineno, &n)) && (size_t)n + 32 < size) {
        int k = snprintf(buf, size, "[unresolved: unknown MVID (%s)]", name);
        if (k > 0 && (size_t)k < size) {
            *len = (uint32_t)k;
            return buf;
        }
    }
    *len = f->text_len;
    return f->text;
}

static const char *const kinds[] = {
    [MDB_STACK] = "stack", [MDB_CALL] = "call",     [MDB_ALLOC] = "alloc", [MDB_THROW] = "throw",
    [MDB_WAIT] = "wait",   [MDB_ASTACK] = "astack", [MDB_HEAP] = "heap"};

void mdb_emit_text(mdb_output *o, mdb_logctx *lc, const mdb_record *rec)
{
    char buf[MDB_TEXT_ROOM];
    const char *t;
    uint32_t n;
    switch (rec->kind) {
    case MDB_BLANK:
    case MDB_HEADER:
    case MDB_STATS:
    case MDB_MODULE:
    case MDB_COMMENT: mdb_out(o, rec->line, rec->len); break;
    case MDB_MALFORMED:
        mdb_outs(o, "[malformed line ");
        mdb_outu(o, rec->lineno);
        mdb_outs(o, ": ");
        mdb_outs(o, rec->why);
        mdb_outc(o, ']');
        break;
    case MDB_PLAIN:
        t = mdb_frame_text(rec->frames[0], lc, rec->lineno, buf, sizeof buf, &n);
        mdb_out(o, t, n);
        break;
    default:
        mdb_outs(o, kinds[rec->kind]);
        mdb_outc(o, ' ');
        mdb_outu(o, rec->count);
        if (rec->kind == MDB_ALLOC || rec->kind == MDB_WAIT || rec->kind == MDB_ASTACK ||
            rec->kind == MDB_HEAP) {
            mdb_outc(o, ' ');
            mdb_outu(o, rec->bytes);
        }
        if (rec->kind == MDB_HEAP) {
            mdb_outc(o, ' ');
            mdb_outu(o, rec->gc);
            mdb_outc(o, ' ');
            mdb_outu(o, rec->ms);
        }
        if (rec->threaded) { /* format 4: as the log says them */
            mdb_outc(o, ' ');
            mdb_outu(o, rec->tid);
            mdb_outc(o, ' ');
            mdb_outu(o, rec->slice);
        }
        if (rec->exits) {
            mdb_outc(o, ' ');
            mdb_outu(o, rec->leaves);
            mdb_outc(o, ' ');
            mdb_outu(o, rec->tailcalls);
            mdb_outc(o, ' ');
            mdb_outu(o, rec->unwinds);
        }
        for (size_t i = 0; i < rec->nframes; i++) {
            mdb_outc(o, '\t');
            t = mdb_frame_text(rec->frames[i], lc, rec->lineno, buf, sizeof buf, &n);
            mdb_out(o, t, n);
        }
    }
    mdb_outc(o, '\n');
}
