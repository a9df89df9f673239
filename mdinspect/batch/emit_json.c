/* mdinspect batch: --json, JSON Lines with one object per input line:
 *   {"kind":"stack","count":17,"frames":[{FRAME},...]}   (leaf first)
 *   {"kind":"stack","count":17,"tid":4242,"thread":"Worker-A","slice":3,"frames":[...]}
 *                                                      (format 4; "thread" null: no name)
 *   {"kind":"call","count":1000,FRAME...}
 *   {"kind":"call","count":12,"leaves":9,"tailcalls":0,"unwinds":3,FRAME...}  (format 2)
 *   {"kind":"alloc","count":12,"bytes":384,FRAME...}
 *   {"kind":"astack","count":16384,"bytes":524288,"type":{FRAME},"frames":[{FRAME},...]}
 *                                                      (a sampled allocation's stack, leaf first)
 *   {"kind":"heap","count":50000,"bytes":1600000,"gc":3,"ms":1048,FRAME...}
 *                                                      (live objects of a type after a gen2 GC)
 *   {"kind":"plain","count":1,FRAME...}
 *   {"kind":"header"|"stats",KEY:VALUE...}  (numbers where the value is one)
 *   {"kind":"comment","text":...}, {"kind":"blank"}
 *   {"kind":"malformed","line":N,"error":...}
 * with "pid" after "kind" in every object of a line of a process whose
 * header gave one (not in the header's own object: its keys hold it),
 * where FRAME is "name", "metadata_name" (a type's or member's, as stored:
 * doc/names.md), "status" ("ok", a special frame's word, or why it did not
 * resolve), "detail", "assembly", "module", "mvid", "token", "il_offset",
 * "file", "line", "column", each where known; a frame whose module (or a
 * type argument's) was not found has "unknown_mvid", and when a #module
 * line named that module "unknown_assembly" and "unknown_assembly_version". */

#define _GNU_SOURCE /* memrchr */
#include "config.h"

#include <string.h>
#include <stdio.h>

#include "batch/batch.h"

static const char *const kinds[] = {
    [MDB_STACK] = "stack", [MDB_CALL] = "call",     [MDB_ALLOC] = "alloc", [MDB_THROW] = "throw",
    [MDB_WAIT] = "wait",   [MDB_ASTACK] = "astack", [MDB_HEAP] = "heap",   [MDB_PLAIN] = "plain"};

static void frame(mdb_output *o, mdb_resolver *r, mdb_logctx *lc, const mdb_record *rec, size_t i)
{
    const mdb_frame *f = rec->frames[i];
    const char *j;
    uint32_t n;
    mdb_frame_json(r, f, &j, &n);
    mdb_out(o, j, n);
    if (__builtin_expect(f->status == MDB_UNKNOWN_MVID, 0) && f->unknown_mvid &&
        (j = mdb_logctx_module_name(lc, f->unknown_mvid, rec->lineno, &n))) {
        /* what a #module line said of the module not found: NAME VERSION */
        const char *sp = memrchr(j, ' ', n);
        mdb_outs(o, ",\"unknown_assembly\":");
        mdb_out_json_string(o, j, sp ? (size_t)(sp - j) : n);
        if (sp) {
            mdb_outs(o, ",\"unknown_assembly_version\":");
            mdb_out_json_string(o, sp + 1, (size_t)(j + n - sp - 1));
        }
    }
    if (rec->has_il[i]) {
        mdb_outs(o, ",\"il_offset\":");
        mdb_outu(o, rec->il[i]);
    }
}

static bool numeric(const char *s, size_t n)
{
    if (n == 0 || n > 18)
        return false;
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    return n == 1 || s[0] != '0';
}

/* `#word k=v k=v`: the header's first value (the format) as "format". */
static void keys(mdb_output *o, const char *s, size_t n)
{
    const char *end = s + n, *p = memchr(s, ' ', n);
    while (p && p < end) {
        const char *f = p + 1, *sp = memchr(f, ' ', (size_t)(end - f));
        size_t k = sp ? (size_t)(sp - f) : (size_t)(end - f);
        const char *eq = memchr(f, '=', k);
        if (k) {
            size_t kl = eq ? (size_t)(eq - f) : 6;
            const char *v = eq ? eq + 1 : f;
            size_t vl = eq ? k - kl - 1 : k;
            mdb_outc(o, ',');
            mdb_out_json_string(o, eq ? f : "format", kl);
            mdb_outc(o, ':');
            if (numeric(v, vl))
                mdb_out(o, v, vl);
            else
                mdb_out_json_string(o, v, vl);
        }
        p = sp;
    }
}

/* The process of a line (not for the header, whose keys say it). */
static void pid(mdb_output *o, const mdb_proc *proc)
{
    if (proc && proc->has_pid) {
        mdb_outs(o, ",\"pid\":");
        mdb_outu(o, proc->pid);
    }
}

/* `#module MVID NAME VERSION` as {"kind":"module","mvid":..,"name":..,
 * "version":..} (NAME as written, %XX escapes and all); another #module
 * line as the comment it is. */
static void module(mdb_output *o, const mdb_proc *proc, const char *s, size_t n)
{
    const char *name = s + 41, *ver = n > 41 ? memrchr(name, ' ', n - 41) : NULL;
    if (n < 44 || s[7] != ' ' || s[40] != ' ' || !ver || ver == name) {
        mdb_outs(o, "{\"kind\":\"comment\"");
        pid(o, proc);
        mdb_outs(o, ",\"text\":");
        mdb_out_json_string(o, s, n);
        return;
    }
    mdb_outs(o, "{\"kind\":\"module\"");
    pid(o, proc);
    mdb_outs(o, ",\"mvid\":");
    mdb_out_json_string(o, s + 8, 32);
    mdb_outs(o, ",\"name\":");
    mdb_out_json_string(o, name, (size_t)(ver - name));
    mdb_outs(o, ",\"version\":");
    mdb_out_json_string(o, ver + 1, (size_t)(s + n - ver - 1));
}

void mdb_emit_json(mdb_output *o, mdb_resolver *r, mdb_logctx *lc, const mdb_proc *proc,
                   const mdb_record *rec)
{
    switch (rec->kind) {
    case MDB_BLANK:
        mdb_outs(o, "{\"kind\":\"blank\"");
        pid(o, proc);
        break;
    case MDB_HEADER:
        mdb_outs(o, "{\"kind\":\"header\"");
        keys(o, rec->line, rec->len);
        break;
    case MDB_STATS:
        mdb_outs(o, "{\"kind\":\"stats\"");
        pid(o, proc);
        keys(o, rec->line, rec->len);
        break;
    case MDB_MODULE: module(o, proc, rec->line, rec->len); break;
    case MDB_COMMENT:
        mdb_outs(o, "{\"kind\":\"comment\"");
        pid(o, proc);
        mdb_outs(o, ",\"text\":");
        mdb_out_json_string(o, rec->line, rec->len);
        break;
    case MDB_MALFORMED:
        mdb_outs(o, "{\"kind\":\"malformed\"");
        pid(o, proc);
        mdb_outs(o, ",\"line\":");
        mdb_outu(o, rec->lineno);
        mdb_outs(o, ",\"error\":");
        mdb_out_json_string(o, rec->why, strlen(rec->why));
        break;
    default:
        mdb_outs(o, "{\"kind\":\"");
        mdb_outs(o, kinds[rec->kind]);
        mdb_outc(o, '"');
        pid(o, proc);
        mdb_outs(o, ",\"count\":");
        mdb_outu(o, rec->count);
        if (rec->kind == MDB_ALLOC || rec->kind == MDB_ASTACK || rec->kind == MDB_HEAP) {
            mdb_outs(o, ",\"bytes\":");
            mdb_outu(o, rec->bytes);
        }
        if (rec->kind == MDB_WAIT) {
            mdb_outs(o, ",\"nanoseconds\":");
            mdb_outu(o, rec->bytes);
        }
        if (rec->kind == MDB_HEAP) {
            mdb_outs(o, ",\"gc\":");
            mdb_outu(o, rec->gc);
            mdb_outs(o, ",\"ms\":");
            mdb_outu(o, rec->ms);
        }
        if (rec->threaded) {
            /* format 4: the thread (its name from the #thread lines before
             * the record, null when none said one) and the time slice */
            mdb_thread_name t;
            mdb_outs(o, ",\"tid\":");
            mdb_outu(o, rec->tid);
            mdb_outs(o, ",\"thread\":");
            if (mdb_logctx_thread(lc, proc, rec->tid, rec->lineno, &t) && t.name)
                mdb_out_json_string(o, t.name, t.name_len);
            else
                mdb_outs(o, "null");
            mdb_outs(o, ",\"slice\":");
            mdb_outu(o, rec->slice);
        }
        if (rec->exits) {
            mdb_outs(o, ",\"leaves\":");
            mdb_outu(o, rec->leaves);
            mdb_outs(o, ",\"tailcalls\":");
            mdb_outu(o, rec->tailcalls);
            mdb_outs(o, ",\"unwinds\":");
            mdb_outu(o, rec->unwinds);
        }
        if (rec->kind == MDB_STACK || rec->kind == MDB_THROW || rec->kind == MDB_WAIT ||
            rec->kind == MDB_ASTACK) {
            /* a throw's and an astack record's type, then the frames */
            size_t first = rec->kind == MDB_THROW || rec->kind == MDB_ASTACK;
            if (first) {
                mdb_outs(o, ",\"type\":{");
                frame(o, r, lc, rec, 0);
                mdb_outc(o, '}');
            }
            mdb_outs(o, ",\"frames\":[");
            for (size_t i = first; i < rec->nframes; i++) {
                mdb_outs(o, i > first ? ",{" : "{");
                frame(o, r, lc, rec, i);
                mdb_outc(o, '}');
            }
            mdb_outc(o, ']');
        } else {
            mdb_outc(o, ',');
            frame(o, r, lc, rec, 0);
        }
    }
    mdb_outs(o, "}\n");
}
