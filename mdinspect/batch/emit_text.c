/* mdinspect batch: the text format, one output line per input line, so
 * that `paste`, `join` and line numbers keep working:
 *   plain line     NAME, or NAME (FILE:LINE)
 *   stack, call    KIND COUNT, then each frame after a TAB (leaf first);
 *                  a format-2 call: call COUNT LEAVES TAILCALLS UNWINDS
 *   alloc          alloc COUNT BYTES, TAB, the type
 *   frames         [native], [unknown:unmapped] (special frames),
 *                  [unresolved: REASON]
 *   header, #stats, comments and blank lines: as they are
 *   malformed      [malformed line N: WHY] */
#include "config.h"

#include "batch/batch.h"

static const char *const kinds[] = {[MDB_STACK] = "stack", [MDB_CALL] = "call",
                                    [MDB_ALLOC] = "alloc"};

void mdb_emit_text(mdb_output *o, const mdb_record *rec)
{
    switch (rec->kind) {
    case MDB_BLANK:
    case MDB_HEADER:
    case MDB_STATS:
    case MDB_COMMENT:
        mdb_out(o, rec->line, rec->len);
        break;
    case MDB_MALFORMED:
        mdb_outs(o, "[malformed line ");
        mdb_outu(o, rec->lineno);
        mdb_outs(o, ": ");
        mdb_outs(o, rec->why);
        mdb_outc(o, ']');
        break;
    case MDB_PLAIN:
        mdb_out(o, rec->frames[0]->text, rec->frames[0]->text_len);
        break;
    default:
        mdb_outs(o, kinds[rec->kind]);
        mdb_outc(o, ' ');
        mdb_outu(o, rec->count);
        if (rec->kind == MDB_ALLOC) {
            mdb_outc(o, ' ');
            mdb_outu(o, rec->bytes);
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
            mdb_out(o, rec->frames[i]->text, rec->frames[i]->text_len);
        }
    }
    mdb_outc(o, '\n');
}
