/* mdinspect batch: native frames (doc/profile-log.md, Frames) named from
 * the ELF files they lie in.
 *
 * A frame `native:NAME:BUILDID+0xOFF[!ACTIVITY]` carries its file's name,
 * build-id and the offset (an address in the file's own virtual
 * addresses); the log's `#elf NAME:BUILDID PATH` line says where the file
 * was. The file is found at PATH when it exists here and has that
 * build-id, else as a separate debug file by build-id in the debug
 * folders (DIR/.build-id/xx/rest.debug); its symbols (elfsyms.c) name the
 * offset: .symtab, else the debug file's, else .dynsym. A file of another
 * build is not used, and said once on standard error. The text form is
 * `NAME!SYMBOL`, or `NAME+0xOFF` when no symbol covers the offset, after
 * `[ACTIVITY] ` when the runtime was doing something (a GC, JIT, ...);
 * a plain `native` is `[native]` (`[gc]` with an activity).
 *
 * The `#elf` lines are registered by the thread that reads the input
 * (mdb_natives_scan) before the threads resolve the block; a frame on
 * line L uses the first `#elf` line of its key before L, so the output is
 * the same whichever thread resolves which block. Files are opened once
 * per key, under the registry's lock; their symbol tables are read-only
 * afterwards. Each thread caches frames by text, remembering whether the
 * answer came with an `#elf` line (final) or without one (asked again
 * when a later line might have one). */

#define _GNU_SOURCE /* memrchr */
#include "config.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <talloc.h>
#include <unistd.h>

#include "batch/native.h"

#define MAX_KEY 1024u   /* bytes of NAME:BUILDID */
#define MAX_KEYS 65536u /* distinct NAME:BUILDID a run keeps */

/* --------------------------------------------------------------- registry */

struct key_state {
    uint64_t first_line; /* of its first #elf line; UINT64_MAX: none yet */
    char *path;          /* that line's path */
    bool tried_path, tried_dbg;
    mdb_elfsyms *file; /* PATH, when it has the frame's build-id */
    mdb_elfsyms *dbg;  /* the debug file of the build-id */
    char *why;         /* what went wrong with PATH (NULL: nothing) */
    bool warn;         /* why is worth a warning (once) */
};

struct mdb_natives {
    pthread_mutex_t lock;
    mdb_table keys; /* NAME:BUILDID -> struct key_state */
    char **dirs;
    size_t ndirs;
    void *ctx;
};

static int natives_free(mdb_natives *n)
{
    pthread_mutex_destroy(&n->lock);
    return 0;
}

mdb_natives *mdb_natives_new(void *ctx, char **dirs, size_t ndirs)
{
    static char *standard[] = {"/usr/lib/debug"};
    mdb_natives *n = talloc_zero(ctx, mdb_natives);
    if (!n || mdb_table_init(&n->keys, n, 64)) {
        talloc_free(n);
        return NULL;
    }
    pthread_mutex_init(&n->lock, NULL);
    talloc_set_destructor(n, natives_free);
    n->dirs = ndirs ? dirs : standard;
    n->ndirs = ndirs ? ndirs : 1;
    n->ctx = n;
    return n;
}

/* The state of a key (made when new); lock held. */
static struct key_state *state(mdb_natives *n, const char *key, size_t len)
{
    uint64_t h = mdb_hash(key, len);
    struct key_state *k = mdb_table_get(&n->keys, h, key, len);
    if (k || n->keys.n >= MAX_KEYS)
        return k; /* endless distinct keys (junk) stay bounded: unnamed */
    if (!(k = talloc_zero(n, struct key_state)) || mdb_table_put(&n->keys, h, key, len, k)) {
        talloc_free(k);
        return NULL;
    }
    k->first_line = UINT64_MAX;
    return k;
}

static int unhex(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* %XX decoded into a new string. */
static char *decode(void *ctx, const char *s, size_t n)
{
    char *out = talloc_size(ctx, n + 1);
    size_t o = 0;
    if (!out)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        int a, b;
        if (s[i] == '%' && i + 2 < n && (a = unhex(s[i + 1])) >= 0 && (b = unhex(s[i + 2])) >= 0) {
            out[o++] = (char)(a << 4 | b);
            i += 2;
        } else {
            out[o++] = s[i];
        }
    }
    out[o] = 0;
    return out;
}

/* `#elf KEY PATH` */
static void elf_line(mdb_natives *n, const char *s, size_t len, uint64_t lineno)
{
    const char *key = s + 5, *end = s + len, *sp = memchr(key, ' ', (size_t)(end - key));
    if (!sp || sp == key || (size_t)(sp - key) > MAX_KEY || sp + 1 >= end)
        return; /* not one we can use: its frames stay unnamed */
    pthread_mutex_lock(&n->lock);
    struct key_state *k = state(n, key, (size_t)(sp - key));
    if (k && k->first_line == UINT64_MAX && (k->path = decode(k, sp + 1, (size_t)(end - sp - 1))))
        k->first_line = lineno;
    pthread_mutex_unlock(&n->lock);
}

void mdb_natives_scan(mdb_natives *n, const mdb_block *b, const char *hash)
{
    if (!n || b->single || !hash)
        return; /* a single block is a line too long to be one */
    /* Only a line that starts "#elf " counts: each '#' of the block is
     * looked at (none in most logs' frame lines), as mdb_logctx_scan does,
     * not each line. This runs on the thread that reads the input, which
     * no other thread can help (issue 28): line by line it took 58
     * instructions a line, a tenth of the whole per-line cost. */
    const char *p = b->buf, *end = b->buf + b->len - b->tail, *q = hash;
    uint64_t lineno = b->first_lineno;
    for (; q; q = p < end ? memchr(p, '#', (size_t)(end - p)) : NULL) {
        const char *ls = q;
        while (ls > p && ls[-1] != '\n')
            ls--;
        lineno += mdb_count_newlines(p, (size_t)(ls - p));
        const char *nl = memchr(q, '\n', (size_t)(end - q));
        size_t len = (size_t)((nl ? nl : end) - ls);
        if (len && ls[len - 1] == '\r')
            len--;
        if (q == ls && len > 5 && memcmp(ls, "#elf ", 5) == 0)
            elf_line(n, ls, len, lineno);
        if (!nl)
            break;
        p = nl + 1;
        lineno++;
    }
}

/* The debug file of a build-id, from the first folder that has it. */
static void try_dbg(mdb_natives *n, struct key_state *k, const char *id)
{
    k->tried_dbg = true;
    size_t idlen = strlen(id);
    if (idlen < 4)
        return;
    for (size_t i = 0; i < n->ndirs && !k->dbg; i++) {
        char *path = talloc_asprintf(NULL, "%s/.build-id/%.2s/%s.debug", n->dirs[i], id, id + 2);
        mdb_elfsyms *s;
        char err[256];
        if (path && access(path, F_OK) == 0 &&
            mdb_elfsyms_open(k, &s, path, err, sizeof err) == 0) {
            if (strcmp(mdb_elfsyms_build_id(s), id) == 0)
                k->dbg = s;
            else
                talloc_free(s);
        }
        talloc_free(path);
    }
}

static void try_path(struct key_state *k, const char *id)
{
    mdb_elfsyms *s;
    char err[256];
    k->tried_path = true;
    if (mdb_elfsyms_open(k, &s, k->path, err, sizeof err) != 0) {
        k->why = talloc_asprintf(k, "%s: %s", k->path, err);
        k->warn = access(k->path, F_OK) == 0; /* there, but not readable as ELF */
        return;
    }
    if (strcmp(mdb_elfsyms_build_id(s), id) != 0) {
        k->why = talloc_asprintf(k, "%s is another build (build-id %s, the log's %s)", k->path,
                                 mdb_elfsyms_build_id(s)[0] ? mdb_elfsyms_build_id(s) : "none",
                                 id[0] ? id : "none");
        k->warn = true;
        talloc_free(s);
        return;
    }
    k->file = s;
}

/* What a frame of `key` on line `lineno` is named from. */
struct answer {
    mdb_elfsyms *file, *dbg;
    const char *why;
    const char *warning; /* to say once */
    bool final;          /* no later #elf line can change it */
};

static void lookup(mdb_natives *n, const char *key, size_t keylen, const char *id, uint64_t lineno,
                   struct answer *a)
{
    memset(a, 0, sizeof *a);
    if (!n)
        return;
    pthread_mutex_lock(&n->lock);
    struct key_state *k = keylen <= MAX_KEY ? state(n, key, keylen) : NULL;
    if (k) {
        bool visible = k->first_line < lineno;
        if (visible && !k->tried_path)
            try_path(k, id);
        if (!k->tried_dbg)
            try_dbg(n, k, id);
        a->dbg = k->dbg;
        a->final = visible || key[0] == '['; /* [vdso]: never a file */
        if (visible) {
            a->file = k->file;
            a->why = k->why;
            if (k->warn) {
                a->warning = k->why;
                k->warn = false;
            }
        }
    }
    pthread_mutex_unlock(&n->lock);
}

/* ------------------------------------------------------------ the frames */

struct held {
    mdb_frame *f;
    bool final;
};

struct mdb_native_cache {
    mdb_natives *n;
    bool want_json;
    mdb_table frames; /* text -> struct held */
    mdb_arena arena;
    size_t count;
    mdb_output scratch;
    char *warning, *last_warning;
};

mdb_native_cache *mdb_native_cache_new(void *ctx, bool want_json)
{
    mdb_native_cache *c = talloc_zero(ctx, mdb_native_cache);
    if (!c)
        return NULL;
    c->want_json = want_json;
    mdb_arena_init(&c->arena, c);
    if (!c->arena.ctx || mdb_table_init(&c->frames, c, 256) ||
        mdb_output_init(&c->scratch, c, -1)) {
        talloc_free(c);
        return NULL;
    }
    return c;
}

void mdb_native_cache_use(mdb_native_cache *c, mdb_natives *n)
{
    c->n = n;
}

size_t mdb_native_bytes(const mdb_native_cache *c)
{
    return c->arena.bytes + mdb_table_bytes(&c->frames);
}

size_t mdb_native_count(const mdb_native_cache *c)
{
    return c->count;
}

void mdb_native_forget(mdb_native_cache *c)
{
    if (mdb_table_reset(&c->frames))
        mdb_table_clear(&c->frames); /* no memory for new slots: keep the old */
    mdb_arena_reset(&c->arena);
    c->count = 0;
}

const char *mdb_native_warning(mdb_native_cache *c)
{
    /* kept until the next call (the caller prints it first) */
    talloc_free(c->last_warning);
    c->last_warning = c->warning;
    c->warning = NULL;
    return c->last_warning;
}

/* The parts of a frame's text. */
struct parts {
    const char *name, *id, *act; /* name == NULL: a plain `native` */
    size_t name_len, id_len, act_len;
    uint64_t off;
};

static bool hexdigits(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return false;
    return true;
}

/* native [":" NAME ":" BUILDID "+0x" OFF] ["!" ACTIVITY], read from the
 * right: a NAME may hold '+' (libstdc++) but never ':' nor '!' (%XX). */
static bool split(const char *s, size_t n, struct parts *p)
{
    memset(p, 0, sizeof *p);
    const char *bang = memrchr(s, '!', n);
    if (bang) {
        p->act = bang + 1;
        p->act_len = n - (size_t)(p->act - s);
        if (!p->act_len || p->act_len > 32)
            return false;
        for (size_t i = 0; i < p->act_len; i++)
            if (!((p->act[i] >= 'a' && p->act[i] <= 'z') || p->act[i] == '-'))
                return false;
        n = (size_t)(bang - s);
    }
    if (n == 6)
        return true;
    if (n < 7 || s[6] != ':')
        return false;
    const char *plus = memrchr(s, '+', n), *colon;
    if (!plus || plus < s + 7 || (size_t)(s + n - plus) < 4 || (size_t)(s + n - plus) > 19 ||
        plus[1] != '0' || plus[2] != 'x' || !hexdigits(plus + 3, (size_t)(s + n - plus - 3)))
        return false;
    for (const char *d = plus + 3; d < s + n; d++)
        p->off = p->off << 4 | (uint64_t)unhex(*d);
    colon = memrchr(s + 7, ':', (size_t)(plus - s - 7));
    if (!colon || colon == s + 7 || !hexdigits(colon + 1, (size_t)(plus - colon - 1)) ||
        (plus - colon - 1) % 2)
        return false;
    p->name = s + 7;
    p->name_len = (size_t)(colon - p->name);
    p->id = colon + 1;
    p->id_len = (size_t)(plus - p->id);
    return true;
}

static void json_member(mdb_output *o, const char *key, const char *v, size_t n)
{
    mdb_outs(o, ",\"");
    mdb_outs(o, key);
    mdb_outs(o, "\":");
    mdb_out_json_string(o, v, n);
}

static const mdb_frame *bad(mdb_native_cache *c, mdb_frame *f)
{
    static mdb_frame nomem = {.status = MDB_BAD_FRAME,
                              .detail = "out of memory",
                              .text = "[unresolved: bad frame]",
                              .text_len = 23,
                              .json = "\"status\":\"bad frame\",\"detail\":\"out of memory\"",
                              .json_len = 46};
    if (!f)
        return &nomem;
    f->status = MDB_BAD_FRAME;
    f->detail = "a native frame is native[:NAME:BUILDID+0xOFFSET][!ACTIVITY]";
    f->text = "[unresolved: bad frame]";
    f->text_len = 23;
    mdb_output *o = &c->scratch;
    o->len = 0;
    o->failed = false;
    mdb_outs(o, "\"status\":\"bad frame\"");
    json_member(o, "detail", f->detail, strlen(f->detail));
    f->json = o->failed ? NULL : mdb_arena_strndup(&c->arena, o->buf, o->len);
    f->json_len = f->json ? (uint32_t)o->len : 0;
    return f;
}

static mdb_frame *make(mdb_native_cache *c, const char *s, size_t n, uint64_t lineno, bool *final)
{
    struct parts p;
    mdb_frame *f = mdb_arena_alloc(&c->arena, sizeof *f);
    if (!f)
        return NULL;
    memset(f, 0, sizeof *f);
    *final = true;
    if (!split(s, n, &p))
        return (mdb_frame *)bad(c, f);
    struct answer a = {0};
    const char *sym = NULL;
    char id[130], offhex[24];
    int offlen = snprintf(offhex, sizeof offhex, "0x%" PRIx64, p.off);
    if (p.name) {
        memcpy(id, p.id, p.id_len < sizeof id ? p.id_len : 0);
        id[p.id_len < sizeof id ? p.id_len : 0] = 0;
        lookup(c->n, p.name, (size_t)(p.id + p.id_len - p.name), id, lineno, &a);
        *final = a.final;
        if (a.file && mdb_elfsyms_has_symtab(a.file))
            sym = mdb_elfsyms_lookup(a.file, p.off);
        else if (a.dbg && (sym = mdb_elfsyms_lookup(a.dbg, p.off)))
            ;
        else if (a.file)
            sym = mdb_elfsyms_lookup(a.file, p.off);
        if (a.warning) /* several in one record: one line each */
            c->warning = talloc_asprintf(
                c, "%s%s%.*s: %s: its frames are not named from it", c->warning ? c->warning : "",
                c->warning ? "\n" MDB_PROGNAME " batch: " : "", (int)p.name_len, p.name, a.warning);
    }
    /* the text form */
    mdb_output *o = &c->scratch;
    o->len = 0;
    o->failed = false;
    if (p.act) {
        mdb_outc(o, '[');
        mdb_out(o, p.act, p.act_len);
        mdb_outc(o, ']');
        if (p.name)
            mdb_outc(o, ' ');
    } else if (!p.name) {
        mdb_outs(o, "[native]");
    }
    if (p.name) {
        mdb_out(o, p.name, p.name_len);
        if (sym) {
            mdb_outc(o, '!');
            mdb_outs(o, sym);
        } else {
            mdb_outc(o, '+');
            mdb_out(o, offhex, (size_t)offlen);
        }
    }
    if (o->failed || !(f->text = mdb_arena_strndup(&c->arena, o->buf, o->len)))
        return (mdb_frame *)bad(c, NULL);
    f->status = MDB_SPECIAL;
    f->text_len = (uint32_t)o->len;
    f->name = f->text;
    f->name_len = f->text_len;
    if (!c->want_json)
        return f;
    /* the JSON members */
    o->len = 0;
    mdb_outs(o, "\"status\":\"native\"");
    if (p.name) {
        char *module = decode(NULL, p.name, p.name_len);
        if (module)
            json_member(o, "module", module, strlen(module));
        talloc_free(module);
        json_member(o, "build_id", p.id, p.id_len);
        json_member(o, "offset", offhex, (size_t)offlen);
    }
    if (sym || p.act)
        json_member(o, "name", f->text, f->text_len);
    if (sym)
        json_member(o, "symbol", sym, strlen(sym));
    if (p.act)
        json_member(o, "activity", p.act, p.act_len);
    if (a.why)
        json_member(o, "detail", a.why, strlen(a.why));
    if (o->failed || !(f->json = mdb_arena_strndup(&c->arena, o->buf, o->len)))
        return (mdb_frame *)bad(c, NULL);
    f->json_len = (uint32_t)o->len;
    return f;
}

const mdb_frame *mdb_native_resolve(mdb_native_cache *c, const char *s, size_t n, uint64_t lineno)
{
    uint64_t h = mdb_hash(s, n);
    struct held *held = mdb_table_get(&c->frames, h, s, n);
    bool final;
    if (held && held->final)
        return held->f;
    if (held && c->n) {
        /* made without an #elf line: still none before this line? */
        struct parts p;
        struct answer a;
        char id[130];
        if (split(s, n, &p) && p.name && p.id_len < sizeof id) {
            memcpy(id, p.id, p.id_len);
            id[p.id_len] = 0;
            lookup(c->n, p.name, (size_t)(p.id + p.id_len - p.name), id, lineno, &a);
            if (!a.final)
                return held->f;
        }
    }
    mdb_frame *f = make(c, s, n, lineno, &final);
    if (!f)
        return bad(c, NULL);
    if (held) {
        held->f = f;
        held->final = final;
    } else if ((held = mdb_arena_alloc(&c->arena, sizeof *held))) {
        held->f = f;
        held->final = final;
        if (mdb_table_put(&c->frames, h, s, n, held) == 0)
            c->count++;
    }
    return f;
}
