/* mdinspect batch, the processes of the input (logctx_int.h): a log's
 * header (`#mdprofile` and its fields: pid, command, mode, rate, slice,
 * start, the folders to search) and `#stats` line read into the
 * process they start and close, with the escapes and numbers the `#` lines
 * share. Folders are taken only when absolute and existing directories
 * here, at most MAX_FOLDERS of them, and searched from the block that
 * names them on (mdb_logctx_commit). */
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

static int hexval(int c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* A %XX-escaped value, decoded into the arena (at most `max` bytes of it);
 * *len its length. A '%' not followed by two hex digits stands for itself.
 * NULL when out of memory. */
char *mdb_lc_unescape(mdb_arena *ar, const char *s, size_t n, size_t max, size_t *len)
{
    char *d = mdb_arena_alloc(ar, (n < max ? n : max) + 1);
    size_t o = 0;
    if (!d)
        return NULL;
    for (size_t i = 0; i < n && o < max; i++) {
        int h, l;
        if (s[i] == '%' && i + 2 < n && (h = hexval((unsigned char)s[i + 1])) >= 0 &&
            (l = hexval((unsigned char)s[i + 2])) >= 0) {
            d[o++] = (char)(h << 4 | l);
            i += 2;
        } else {
            d[o++] = s[i];
        }
    }
    d[o] = '\0';
    *len = o;
    return d;
}

/* A decimal number of at most 18 digits. */
bool mdb_lc_decimal(const char *s, size_t n, uint64_t *v)
{
    uint64_t x = 0;
    if (n == 0 || n > 18)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        x = x * 10 + (uint64_t)(s[i] - '0');
    }
    *v = x;
    return true;
}

/* ------------------------------------------------------------- headers */

/* A folder a header names (with `files`, a single-file bundle): kept for
 * the block's commit when it is new, absolute and an existing directory
 * (a regular file) here. */
static void folder(mdb_logctx *lc, const char *s, size_t n, bool files)
{
    size_t len;
    char *path;
    struct stat st;
    uint64_t h;
    if (!lc->folders_on || n == 0 || n > 4096 || lc->nfolders >= MAX_FOLDERS)
        return;
    h = mdb_hash(s, n);
    if (mdb_table_get(&lc->folders, h, s, n))
        return; /* met before (taken or not) */
    if (mdb_table_put(&lc->folders, h, s, n, lc))
        return;
    lc->nfolders++;
    if (!(path = mdb_lc_unescape(&lc->arena, s, n, 4096, &len)) || path[0] != '/' ||
        strlen(path) != len || stat(path, &st) != 0 ||
        !(files ? S_ISREG(st.st_mode) : S_ISDIR(st.st_mode)))
        return; /* not here (another machine's), or not a folder (file) */
    if (lc->npending == lc->cappending) {
        size_t cap = lc->cappending ? 2 * lc->cappending : 8;
        char **p = talloc_realloc(lc, lc->pending, char *, cap);
        if (!p)
            return;
        lc->pending = p;
        lc->cappending = cap;
    }
    lc->pending[lc->npending++] = path;
}

/* A comma-separated list of folders: `frameworks=`, `folders=`,
 * `#frameworks` and `#folders`; of files with `files`: `bundles=` and
 * `#bundles`. */
void mdb_lc_folders(mdb_logctx *lc, const char *v, size_t vn, bool files)
{
    const char *q = v, *vend = v + vn;
    while (q < vend) {
        const char *c = memchr(q, ',', (size_t)(vend - q));
        folder(lc, q, (size_t)((c ? c : vend) - q), files);
        q = c ? c + 1 : vend;
    }
}

/* `start=`: UTC time as ISO 8601 `YYYY-MM-DDTHH:MM:SSZ`, exactly, to ns
 * since the epoch; false for anything else (the time is then unknown). */
static bool iso_time(const char *s, size_t n, int64_t *ns)
{
    static const char shape[] = "dddd-dd-ddTdd:dd:ddZ";
    struct tm tm = {0};
    int f[6] = {0}, k = 0;
    time_t t;
    if (n != sizeof shape - 1)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (shape[i] == 'd' ? (s[i] < '0' || s[i] > '9') : s[i] != shape[i])
            return false;
        if (shape[i] == 'd')
            f[k] = f[k] * 10 + (s[i] - '0');
        else
            k++;
    }
    if (f[1] < 1 || f[1] > 12 || f[2] < 1 || f[2] > 31 || f[3] > 23 || f[4] > 59 || f[5] > 60)
        return false;
    tm.tm_year = f[0] - 1900;
    tm.tm_mon = f[1] - 1;
    tm.tm_mday = f[2];
    tm.tm_hour = f[3];
    tm.tm_min = f[4];
    tm.tm_sec = f[5];
    t = timegm(&tm);
    if (t == (time_t)-1 || t < 0 || t > INT64_MAX / 1000000000)
        return false;
    *ns = (int64_t)t * 1000000000;
    return true;
}

/* `duration_ms=` of a #stats line. */
void mdb_lc_stats_line(mdb_proc *p, const char *s, size_t n)
{
    const char *end = s + n, *k = s;
    while ((k = memchr(k, ' ', (size_t)(end - k))) != NULL) {
        const char *v, *sp;
        k++;
        sp = memchr(k, ' ', (size_t)(end - k));
        if (!sp)
            sp = end;
        if ((size_t)(sp - k) > 12 && memcmp(k, "duration_ms=", 12) == 0) {
            v = k + 12;
            p->has_duration = mdb_lc_decimal(v, (size_t)(sp - v), &p->duration_ms);
        }
        k = sp;
    }
}

/* The keys of a header line (`#mdprofile FORMAT key=value...`). */
static void header(mdb_logctx *lc, mdb_proc *p, const char *s, size_t n)
{
    const char *end = s + n, *f = memchr(s, ' ', n);
    while (f && f < end) {
        const char *k = f + 1, *sp = memchr(k, ' ', (size_t)(end - k));
        size_t kn = (size_t)((sp ? sp : end) - k);
        const char *eq = memchr(k, '=', kn);
        f = sp;
        if (!eq)
            continue;
        size_t keylen = (size_t)(eq - k), vn = kn - keylen - 1;
        const char *v = eq + 1;
        if (keylen == 3 && memcmp(k, "pid", 3) == 0) {
            p->has_pid = mdb_lc_decimal(v, vn, &p->pid);
        } else if (keylen == 3 && memcmp(k, "cmd", 3) == 0) {
            size_t len;
            char *c = mdb_lc_unescape(&lc->arena, v, vn, MAX_TEXT, &len);
            if (c) {
                for (size_t i = 0; i < len; i++) /* a name to show: no control bytes */
                    if ((unsigned char)c[i] < 0x20 || c[i] == 0x7f)
                        c[i] = '?';
                p->cmd = c;
            }
        } else if (keylen == 4 && memcmp(k, "mode", 4) == 0) {
            if (vn < sizeof p->mode) { /* a longer list holds no mode we know */
                memcpy(p->mode, v, vn);
                p->mode[vn] = '\0';
            }
        } else if (keylen == 4 && memcmp(k, "rate", 4) == 0) {
            uint64_t x;
            if (mdb_lc_decimal(v, vn, &x) && x >= 1 && x <= 1000000000)
                p->rate = x;
        } else if (keylen == 5 && memcmp(k, "slice", 5) == 0) {
            uint64_t x;
            if (mdb_lc_decimal(v, vn, &x) && x >= 1 && x <= 86400000)
                p->slice_ms = x;
        } else if (keylen == 12 && memcmp(k, "alloc_sample", 12) == 0) {
            uint64_t x;
            if (mdb_lc_decimal(v, vn, &x))
                p->alloc_sample = x;
        } else if (keylen == 5 && memcmp(k, "start", 5) == 0) {
            p->has_start = iso_time(v, vn, &p->start_ns);
        } else if (keylen == 9 && memcmp(k, "framework", 9) == 0) {
            folder(lc, v, vn, false);
        } else if ((keylen == 10 && memcmp(k, "frameworks", 10) == 0) ||
                   (keylen == 7 && memcmp(k, "folders", 7) == 0)) {
            mdb_lc_folders(lc, v, vn, false);
        } else if (keylen == 7 && memcmp(k, "bundles", 7) == 0) {
            mdb_lc_folders(lc, v, vn, true);
        }
    }
}

/* A new process from its header line; NULL past MAX_PROCS (or out of
 * memory): the lines stay with the process before. */
mdb_proc *mdb_lc_new_proc(mdb_logctx *lc, const char *s, size_t n, uint64_t lineno)
{
    mdb_proc *p;
    if (lc->nprocs >= MAX_PROCS) {
        lc->procs_full = true;
        return NULL;
    }
    if (!(p = mdb_arena_alloc(&lc->arena, sizeof *p)))
        return NULL;
    memset(p, 0, sizeof *p);
    p->index = ++lc->nprocs;
    p->lineno = lineno;
    p->slice_ms = 1000;
    header(lc, p, s, n);
    if (!lc->first)
        lc->first = p;
    else
        lc->cur->next = p;
    lc->cur = p;
    return p;
}
