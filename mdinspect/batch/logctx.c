/* mdinspect batch: what the lines of a log say about the lines after them
 * (doc/profile-log.md): a `#mdprofile` header starts a process (its pid,
 * command, and the folders to search: `framework=`, `frameworks=`,
 * `folders=`, and the single-file bundles `bundles=`; later `#frameworks`,
 * `#folders` and `#bundles` lines add some), `#stats` closes it,
 * `#module MVID NAME VERSION` names a module for the frames that do not
 * resolve, `#thread TID ...` names a thread of the records after it. Everything else in batch
 * reads a line alone; these lines are read one block at a time in input
 * order (mdb_logctx_scan: by the main thread as it reads a pipe, by the
 * worker that read a range of a file in the range's turn, run.c; in both
 * before any thread resolves the block), which records in the block where each process starts, so
 * that every thread agrees on the process of a line whatever order the
 * blocks are resolved in.
 *
 * What a log names is untrusted: folders are taken only when absolute and
 * existing directories here, at most MAX_FOLDERS of them; processes,
 * module names and their strings are capped (MAX_PROCS, MAX_MODNAMES,
 * MAX_TEXT), so a hostile log costs bounded memory here.
 *
 * Module names are shared: the main thread adds them, threads resolving
 * lines read them (under a read-write lock, only for frames whose module
 * was not found). A name is seen by the lines after its `#module` line
 * only (each entry keeps its line number), so the output does not depend
 * on how far the main thread has read ahead.
 *
 * A header's and a #stats line's fields are read in logctx_header.c (what
 * the two files share: logctx_int.h). */

#define _GNU_SOURCE /* memrchr */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <talloc.h>
#include <time.h>

#include "batch/batch.h"
#include "batch/parse.h"
#include "batch/logctx_int.h"

static int destroy(mdb_logctx *lc)
{
    pthread_rwlock_destroy(&lc->lock);
    return 0;
}

mdb_logctx *mdb_logctx_new(void *ctx, mdb_assemblies *a, bool folders_on)
{
    mdb_logctx *lc = talloc_zero(ctx, mdb_logctx);
    if (!lc)
        return NULL;
    if (pthread_rwlock_init(&lc->lock, NULL) != 0) {
        talloc_free(lc);
        return NULL;
    }
    talloc_set_destructor(lc, destroy);
    lc->ctx = lc;
    lc->a = a;
    lc->folders_on = folders_on;
    lc->cur = &lc->none;
    lc->none.slice_ms = 1000;
    mdb_arena_init(&lc->arena, lc);
    if (!lc->arena.ctx || mdb_table_init(&lc->folders, lc, 16) ||
        mdb_table_init(&lc->modnames, lc, 64) || mdb_table_init(&lc->threads, lc, 64)) {
        talloc_free(lc);
        return NULL;
    }
    return lc;
}

const mdb_proc *mdb_logctx_none(const mdb_logctx *lc)
{
    return &lc->none;
}

/* `#module MVID NAME VERSION`: NAME %XX-escaped, VERSION a.b.c.d. */
static void module_line(mdb_logctx *lc, const char *s, size_t n, uint64_t lineno)
{
    uint8_t mvid[16];
    const char *name, *ver;
    size_t nlen, vlen, len;
    struct modname *m;
    char *dec;
    uint64_t h;
    if (n < 8 + 33 + 1 || s[7] != ' ' || s[40] != ' ' || !mdb_parse_mvid(s + 8, 32, mvid) ||
        lc->nmodnames >= MAX_MODNAMES)
        return;
    name = s + 41;
    if (!(ver = memrchr(name, ' ', (size_t)(s + n - name))) || ver == name)
        return;
    nlen = (size_t)(ver - name);
    vlen = (size_t)(s + n - ++ver);
    if (vlen == 0 || vlen > 23 || strspn(ver, "0123456789.") < vlen)
        return;
    h = mdb_hash(mvid, 16);
    pthread_rwlock_rdlock(&lc->lock);
    bool known = mdb_table_get(&lc->modnames, h, mvid, 16) != NULL;
    pthread_rwlock_unlock(&lc->lock);
    if (known)
        return; /* the first line naming it wins (the lines after it see it) */
    if (!(dec = mdb_lc_unescape(&lc->arena, name, nlen, MAX_TEXT, &len)))
        return;
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)dec[i] < 0x20 || dec[i] == 0x7f)
            dec[i] = '?';
    if (!(m = mdb_arena_alloc(&lc->arena, sizeof *m + len + 1 + vlen + 1)))
        return;
    m->lineno = lineno;
    memcpy(m->text, dec, len);
    m->text[len] = ' ';
    memcpy(m->text + len + 1, ver, vlen);
    m->len = (uint32_t)(len + 1 + vlen);
    m->text[m->len] = '\0';
    pthread_rwlock_wrlock(&lc->lock);
    if (mdb_table_put(&lc->modnames, h, mvid, 16, m) == 0)
        lc->nmodnames++;
    pthread_rwlock_unlock(&lc->lock);
}

const char *mdb_logctx_module_name(mdb_logctx *lc, const uint8_t mvid[16], uint64_t lineno,
                                   uint32_t *len)
{
    const struct modname *m;
    if (!lc)
        return NULL;
    pthread_rwlock_rdlock(&lc->lock);
    m = mdb_table_get(&lc->modnames, mdb_hash(mvid, 16), mvid, 16);
    pthread_rwlock_unlock(&lc->lock);
    if (!m || m->lineno >= lineno)
        return NULL;
    *len = m->len;
    return m->text;
}

/* ------------------------------------------------------------- threads */

struct thread_key {
    uint32_t proc;
    uint32_t pad;
    uint64_t tid;
};

/* A %XX-escaped value for a name to show: control bytes as '?'. */
static const char *shown(mdb_logctx *lc, const char *v, size_t vn, uint32_t *len)
{
    size_t n;
    char *d = mdb_lc_unescape(&lc->arena, v, vn, MAX_TEXT, &n);
    if (!d)
        return NULL;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)d[i] < 0x20 || d[i] == 0x7f)
            d[i] = '?';
    *len = (uint32_t)n;
    return d;
}

/* `#thread TID KEY=VALUE...` (doc/profile-log.md, format 4): a thread's
 * name (`name=`), its kernel name (`os=`); other keys are for later
 * formats. A line that does not read (no TID, a field without `=`) is
 * skipped: the records carry their TID anyway. */
static void thread_line(mdb_logctx *lc, const char *s, size_t n, uint64_t lineno)
{
    const char *end = s + n, *p = s + 8, *sp;
    struct thread_key k = {lc->cur->index, 0, 0};
    struct thread_line *t;
    uint64_t h;
    if (n < 9 || s[7] != ' ' || lc->nthreadlines >= MAX_THREADLINES)
        return;
    sp = memchr(p, ' ', (size_t)(end - p));
    if (!mdb_lc_decimal(p, (size_t)((sp ? sp : end) - p), &k.tid) || k.tid == 0)
        return;
    if (!(t = mdb_arena_alloc(&lc->arena, sizeof *t)))
        return;
    memset(t, 0, sizeof *t);
    t->lineno = lineno;
    while (sp && sp < end) {
        const char *f = sp + 1, *eq;
        sp = memchr(f, ' ', (size_t)(end - f));
        size_t fn = (size_t)((sp ? sp : end) - f);
        if (!(eq = memchr(f, '=', fn)))
            return;
        size_t kn = (size_t)(eq - f), vn = fn - kn - 1;
        if (kn == 4 && memcmp(f, "name", 4) == 0 && vn)
            t->n.name = shown(lc, eq + 1, vn, &t->n.name_len);
        else if (kn == 2 && memcmp(f, "os", 2) == 0 && vn)
            t->n.os = shown(lc, eq + 1, vn, &t->n.os_len);
    }
    if (!t->n.name && t->n.os) {
        t->n.name = t->n.os;
        t->n.name_len = t->n.os_len;
    }
    h = mdb_hash(&k, sizeof k);
    pthread_rwlock_wrlock(&lc->lock);
    const mdb_slot *slot = mdb_table_slot(&lc->threads, h, &k, sizeof k);
    if (slot) {
        t->older = slot->value;
        ((mdb_slot *)slot)->value = t;
        lc->nthreadlines++;
    } else if (mdb_table_put(&lc->threads, h, &k, sizeof k, t) == 0) {
        lc->nthreadlines++;
    }
    pthread_rwlock_unlock(&lc->lock);
}

bool mdb_logctx_thread(mdb_logctx *lc, const mdb_proc *proc, uint64_t tid, uint64_t lineno,
                       mdb_thread_name *out)
{
    struct thread_key k = {proc ? proc->index : 0, 0, tid};
    const struct thread_line *t;
    memset(out, 0, sizeof *out);
    if (!lc)
        return false;
    pthread_rwlock_rdlock(&lc->lock);
    t = mdb_table_get(&lc->threads, mdb_hash(&k, sizeof k), &k, sizeof k);
    while (t && t->lineno >= lineno)
        t = t->older;
    pthread_rwlock_unlock(&lc->lock);
    if (!t)
        return false;
    *out = t->n;
    return true;
}

/* ---------------------------------------------------------------- blocks */

static bool word(const char *s, size_t n, const char *w)
{
    size_t k = strlen(w);
    return n >= k && memcmp(s, w, k) == 0 && (n == k || s[k] == ' ' || s[k] == '\t');
}

static int add_event(mdb_block *b, uint64_t lineno, mdb_proc *p, bool split)
{
    if (b->nev == b->capev) {
        size_t cap = b->capev ? 2 * b->capev : 16;
        mdb_event *e = talloc_realloc(b->ctx, b->ev, mdb_event, cap);
        if (!e)
            return -1;
        b->ev = e;
        b->capev = cap;
    }
    b->ev[b->nev].lineno = lineno;
    b->ev[b->nev].proc = p;
    b->ev[b->nev].split = split;
    b->nev++;
    return 0;
}

/* One line that holds a '#' at q. */
static int scan_line(mdb_logctx *lc, mdb_block *b, const char *s, size_t n, const char *q,
                     uint64_t lineno)
{
    const char *h = q, *end = s + n;
    mdb_proc *p;
    if (n && s[n - 1] == '\r')
        n--, end--;
    /* the first "#mdprofile" of the line that is a header's start */
    while (h && !word(h, (size_t)(end - h), "#mdprofile")) {
        h = h + 1 < end ? memchr(h + 1, '#', (size_t)(end - h - 1)) : NULL;
    }
    if (h == s) {
        p = mdb_lc_new_proc(lc, s, n, lineno);
        return p ? add_event(b, lineno, p, false) : 0;
    }
    if (h && mdb_log_line(s, (size_t)(h - s))) {
        /* a log cut inside a line, and the next one appended to it */
        p = mdb_lc_new_proc(lc, h, (size_t)(end - h), lineno);
        return add_event(b, lineno, p ? p : lc->cur, true);
    }
    if (q == s && word(s, n, "#stats")) {
        lc->cur->stats = true;
        mdb_lc_stats_line(lc->cur, s, n);
    } else if (q == s && word(s, n, "#module"))
        module_line(lc, s, n, lineno);
    else if (q == s && word(s, n, "#thread"))
        thread_line(lc, s, n, lineno);
    else if (q == s && n > 12 && word(s, n, "#frameworks"))
        mdb_lc_folders(lc, s + 12, n - 12, false); /* folders first seen after the header */
    else if (q == s && n > 9 && word(s, n, "#folders"))
        mdb_lc_folders(lc, s + 9, n - 9, false);
    else if (q == s && n > 9 && word(s, n, "#bundles"))
        mdb_lc_folders(lc, s + 9, n - 9, true);
    return 0;
}

int mdb_logctx_scan(mdb_logctx *lc, mdb_block *b, const char *hash)
{
    /* (a range's last line without a newline is the input's end, never a
     * header: b->tail) */
    const char *p = b->buf, *end = b->buf + b->len - b->tail, *q = hash;
    uint64_t lineno = b->first_lineno;
    b->proc = lc->cur;
    b->nev = 0;
    /* a line the input ends inside (or one too long to keep) is reported
     * as such, never taken for a header */
    if (b->single)
        return lc->npending > 0;
    for (; q; q = p < end ? memchr(p, '#', (size_t)(end - p)) : NULL) {
        const char *ls = q, *le;
        while (ls > p && ls[-1] != '\n')
            ls--;
        lineno += mdb_count_newlines(p, (size_t)(ls - p));
        le = memchr(q, '\n', (size_t)(end - q));
        if (!le)
            le = end;
        if (scan_line(lc, b, ls, (size_t)(le - ls), q, lineno) < 0)
            return -1;
        p = le < end ? le + 1 : end;
        lineno++;
    }
    return lc->npending > 0;
}

void mdb_logctx_commit(mdb_logctx *lc)
{
    for (size_t i = 0; i < lc->npending; i++)
        mdb_assemblies_add_folder(lc->a, lc->pending[i]);
    lc->npending = 0;
}

const mdb_proc *mdb_logctx_procs(const mdb_logctx *lc)
{
    return lc->first;
}

uint64_t mdb_logctx_report(const mdb_logctx *lc, FILE *f, bool pid_only, uint64_t pid)
{
    uint64_t n = 0;
    for (const mdb_proc *p = lc->first; p; p = p->next) {
        if (p->stats || (pid_only && !(p->has_pid && p->pid == pid)))
            continue;
        if (++n > MAX_REPORTED)
            continue;
        fprintf(f, MDB_PROGNAME " batch: ");
        if (p->has_pid)
            fprintf(f, "the log of process %llu", (unsigned long long)p->pid);
        else
            fprintf(f, "the log");
        fprintf(f,
                " (header at line %llu) has no #stats line: it was cut short (the "
                "process was killed, or the file cut), and its last record may be "
                "partial\n",
                (unsigned long long)p->lineno);
    }
    if (n > MAX_REPORTED)
        fprintf(f, MDB_PROGNAME " batch: ... and %llu more logs without #stats\n",
                (unsigned long long)(n - MAX_REPORTED));
    if (lc->procs_full)
        fprintf(f,
                MDB_PROGNAME " batch: more than %u processes: the lines of the later ones "
                             "were counted as the last one's\n",
                MAX_PROCS);
    return n;
}

bool mdb_proc_has_mode(const mdb_proc *proc, const char *word)
{
    size_t n = strlen(word);
    for (const char *m = proc->mode; *m;) {
        const char *e = strchr(m, ',');
        size_t len = e ? (size_t)(e - m) : strlen(m);
        if (len == n && memcmp(m, word, n) == 0)
            return true;
        if (!e)
            break;
        m = e + 1;
    }
    return false;
}
