/* mdinspect batch: --thread NAME|TID, --from S, --to S: the records that
 * --top, --folded and --speedscope keep. A format-4 stack record says its
 * thread (the kernel's ID) and its time slice (doc/profile-log.md); the
 * thread's names come from the process's `#thread` lines before the record
 * (logctx.c), the slice's length from the header's `slice=`. Records that
 * say neither (calls and alloc records, logs before format 4) are left
 * out while a filter is on: nothing says they match.
 *
 * --type NAME keeps the alloc, astack and heap records (doc/profile-log.md)
 * whose type batch names NAME (exactly as its outputs print it): with
 * astack records, --top then says who allocates that type. Combined with
 * --thread, --from or --to it keeps nothing (alloc stacks carry no
 * thread or slice). */
#include "config.h"

#include <string.h>

#include "batch/batch.h"

static bool same(const char *a, uint32_t n, const char *b)
{
    return a && strlen(b) == n && memcmp(a, b, n) == 0;
}

bool mdb_filter_keep(const mdb_filter *f, mdb_logctx *lc, const mdb_proc *proc,
                     const mdb_record *rec)
{
    if (f->type) {
        char buf[MDB_TEXT_ROOM];
        uint32_t n;
        const char *t;
        if ((rec->kind != MDB_ALLOC && rec->kind != MDB_ASTACK && rec->kind != MDB_HEAP &&
             rec->kind != MDB_THROW) ||
            !rec->nframes)
            return false;
        t = mdb_frame_text(rec->frames[0], lc, rec->lineno, buf, sizeof buf, &n);
        if (!same(t, n, f->type))
            return false;
    }
    if (f->type && !f->thread && !f->has_from && !f->has_to)
        return true;
    if (!rec->threaded) /* stack, throw and wait records of format 4 */
        return false;
    if (f->thread && !(f->has_tid && rec->tid == f->tid)) {
        mdb_thread_name t;
        if (!mdb_logctx_thread(lc, proc, rec->tid, rec->lineno, &t) ||
            !(same(t.name, t.name_len, f->thread) || same(t.os, t.os_len, f->thread)))
            return false;
    }
    if (f->has_from || f->has_to) {
        /* the slice's start in seconds (a double: an absurd slice of 18
         * digits stays a number, and is out of any sane range) */
        double start = (double)rec->slice * (double)(proc ? proc->slice_ms : 1000) / 1000.0;
        if ((f->has_from && start < f->from) || (f->has_to && start >= f->to))
            return false;
    }
    return true;
}
