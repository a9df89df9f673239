/* mdinspect batch: one frame's text to what it names. A frame is a
 * profiler-log frame (`mvid:token{class args}<method args>@il`, or a
 * special word; doc/profile-log.md), an alloc record's type descriptor (or a
 * special word, for a type the profiler could not describe), or
 * a plain line (`MVID TOKEN [DESC...]`, `PATH TOKEN`). The answer (full-style
 * name of doc/names.md, status, source file and line from the module's
 * portable PDB, and the text and JSON forms the emitters print; in a JSON
 * run also the metadata name of a type or member, made with the name by
 * the library's mdt_token_metadata_name, as the shell's) is cached
 * by the frame's exact text, so a frame met again costs one hash lookup.
 * Failures are answers too (status and detail), cached the same way.
 *
 * One resolver per thread: its caches, arenas and name caches are its own.
 * The frames of plain rows are shared through their module (one array of
 * atomic pointers per table): the first thread to name a row publishes its
 * frame with a compare-and-swap, and a frame never changes once published
 * (its JSON form is made before, when the run wants JSON). Two threads that
 * name the same row at once make the same frame; the loser's copy stays in
 * its arena unused. */

#define _GNU_SOURCE /* memrchr */
#include "config.h"

#include <inttypes.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <talloc.h>

#include <mdtools/members.h>

#include "batch/batch.h"
#include "batch/native.h"
#include "batch/parse.h"
#include "batch/plain.h"
#include "common/naming.h"

enum { K_LOG, K_TYPE, K_MVID, K_PATH, K_IL, K_COUNT };

#define NAME_ROOM 4096 /* names longer than this take the slow way */

/* A thread's type name caches of one module: full style, and as stored
 * (metadata names, made in JSON runs only). */
struct modnames {
    mdt_name_cache *full, *stored;
};

struct mdb_resolver {
    mdb_assemblies *a;
    mdb_modcache *mods;
    bool want_json;      /* make each frame's JSON form (and metadata name) with the frame */
    unsigned name_flags; /* of names (not metadata names): --signatures */
    bool want_il;        /* --il: frames with an IL offset show the instruction */
    uint32_t insn_len;   /* of insn: the instruction of the frame being finished */
    char insn[1024];
    struct modnames *names; /* by module id: this thread's type names */
    uint32_t nnames;
    mdb_table cache[K_COUNT];
    size_t n;           /* entries cached (native.c's too) since the last start over */
    mdb_budget *budget; /* NULL: unbounded */
    bool over;          /* the thread's share is full: start over between records */
    size_t names_bytes; /* the type name caches, as last measured */
    uint64_t resets;
    void *namectx;             /* where the type name caches live (freed on start over) */
    mdb_arena arena;           /* frames cached by text: trimmed */
    mdb_arena lasting;         /* frames kept by their module (valid rows): never trimmed */
    mdb_arena *cur;            /* where new frames and their strings go */
    mdb_output scratch;        /* builds text and JSON forms (fd -1: never written) */
    char name[4096];           /* a name when the arena has no room; a metadata name */
    mdb_native_cache *natives; /* native frames (native.c) */
    uint64_t lineno;           /* of the record being resolved */
};

static const char *const status_text[] = {
    [MDB_OK] = "ok",
    [MDB_SPECIAL] = "special",
    [MDB_UNKNOWN_MVID] = "unknown MVID",
    [MDB_UNKNOWN_FILE] = "unknown file",
    [MDB_NO_SUCH_ROW] = "no such row",
    [MDB_BAD_TOKEN] = "bad token",
    [MDB_BAD_DESCRIPTOR] = "bad descriptor",
    [MDB_BAD_FRAME] = "bad frame",
    [MDB_BAD_METADATA] = "bad metadata",
};

const char *mdb_status_text(int status)
{
    return status_text[status];
}

mdb_resolver *mdb_resolver_new(void *ctx, mdb_assemblies *a, bool want_json, mdb_budget *budget)
{
    mdb_resolver *r = talloc_zero(ctx, mdb_resolver);
    if (!r)
        return NULL;
    r->a = a;
    r->want_json = want_json;
    r->budget = budget;
    mdb_arena_init(&r->arena, r);
    mdb_arena_init(&r->lasting, r);
    r->lasting.huge = true;
    if (budget)
        r->lasting.shared = &budget->kept;
    if (!(r->namectx = talloc_new(r))) {
        talloc_free(r);
        return NULL;
    }
    r->cur = &r->arena;
    for (int k = 0; k < K_COUNT; k++)
        if (mdb_table_init(&r->cache[k], r, 1024)) { /* grown as needed */
            talloc_free(r);
            return NULL;
        }
    if (!r->arena.ctx || !r->lasting.ctx || !(r->mods = mdb_modcache_new(r, a)) ||
        !(r->natives = mdb_native_cache_new(r, want_json)) || mdb_output_init(&r->scratch, r, -1)) {
        talloc_free(r);
        return NULL;
    }
    return r;
}

void mdb_resolver_use_natives(mdb_resolver *r, mdb_natives *n)
{
    mdb_native_cache_use(r->natives, n);
}

void mdb_resolver_set_line(mdb_resolver *r, uint64_t lineno)
{
    r->lineno = lineno;
}

const char *mdb_resolver_native_warning(mdb_resolver *r)
{
    return mdb_native_warning(r->natives);
}

void mdb_resolver_trim(mdb_resolver *r)
{
    if (r->over)
        mdb_resolver_forget(r);
}

void mdb_resolver_set_signatures(mdb_resolver *r, bool on)
{
    r->name_flags = on ? MDI_NAME_SIGNATURES : 0; /* as the shell's `set signatures on` */
}

void mdb_resolver_set_il(mdb_resolver *r, bool on)
{
    r->want_il = on;
}

uint64_t mdb_resolver_resets(const mdb_resolver *r)
{
    return r->resets;
}

/* Everything cached by text, and the type names: made again as needed.
 * The tables shrink back (a table sized for millions of entries would
 * otherwise stay that large). */
void mdb_resolver_forget(mdb_resolver *r)
{
    mdb_native_forget(r->natives);
    for (int k = 0; k < K_COUNT; k++)
        if (mdb_table_reset(&r->cache[k]))
            mdb_table_clear(&r->cache[k]); /* no memory for new slots: keep the old */
    mdb_arena_reset(&r->arena);
    talloc_free_children(r->namectx);
    if (r->names)
        memset(r->names, 0, r->nnames * sizeof *r->names);
    r->n = 0;
    r->names_bytes = 0;
    r->over = false;
    r->resets++;
}

/* The bytes this thread's caches hold against its share of the budget:
 * looked at every 256 new entries (the type name caches, a walk of their
 * talloc tree, every 16384). */
static void count_bytes(mdb_resolver *r)
{
    size_t b;
    if (!r->budget || (r->n & 255))
        return;
    if (!(r->n & 16383))
        r->names_bytes = talloc_total_size(r->namectx);
    b = r->arena.bytes + r->names_bytes + mdb_native_bytes(r->natives);
    for (int k = 0; k < K_COUNT; k++)
        b += mdb_table_bytes(&r->cache[k]);
    r->over = b > r->budget->thread_max;
}

/* ------------------------------------------------------------ small parsers */

/* Tables whose rows have names (mdt_token_name). */
static bool names_something(unsigned table)
{
    switch (table) {
    case MDT_TABLE_Module:
    case MDT_TABLE_TypeRef:
    case MDT_TABLE_TypeDef:
    case MDT_TABLE_Field:
    case MDT_TABLE_MethodDef:
    case MDT_TABLE_MemberRef:
    case MDT_TABLE_Event:
    case MDT_TABLE_Property:
    case MDT_TABLE_ModuleRef:
    case MDT_TABLE_TypeSpec:
    case MDT_TABLE_Assembly:
    case MDT_TABLE_AssemblyRef:
    case MDT_TABLE_File:
    case MDT_TABLE_ExportedType:
    case MDT_TABLE_MethodSpec: return true;
    default: return false;
    }
}

/* Split `s` at commas outside <...> into at most `max` pieces. Returns the
 * number, or -1 when there are more or a piece is empty. */
static int split_args(const char *s, size_t n, char sep, const char **pieces, size_t *lens, int max)
{
    int k = 0, depth = 0;
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && s[i] == '<')
            depth++;
        else if (i < n && s[i] == '>')
            depth--;
        else if (i == n || (s[i] == sep && depth == 0)) {
            if (k == max || i == start)
                return -1;
            pieces[k] = s + start;
            lens[k++] = i - start;
            start = i + 1;
        }
    }
    return k;
}

/* --------------------------------------------------------------- building */

static mdb_frame *new_frame(mdb_resolver *r, int status)
{
    mdb_frame *f = mdb_arena_alloc(r->cur, sizeof *f);
    if (f) {
        memset(f, 0, sizeof *f);
        f->status = (uint8_t)status;
        f->lasting = r->cur == &r->lasting;
    }
    return f;
}

static const char *keep(mdb_resolver *r, const char *s, size_t n, uint32_t *len)
{
    if (len)
        *len = (uint32_t)n;
    return mdb_arena_strndup(r->cur, s, n);
}

/* The last library error, as the detail of an unresolved frame. Paths in
 * it are cut to their file names: a module's path is the spelling the
 * input used first, which differs between the parts of a split input, and
 * the answer for a line must not depend on the lines before it. */
static const char *last_error(mdb_resolver *r)
{
    char msg[600], out[600];
    size_t o = 0;
    mdt_error_message(msg, sizeof msg);
    mdt_error_clear();
    for (const char *p = msg; *p && o + 1 < sizeof out;) {
        /* a word containing '/' keeps what follows its last '/' */
        size_t w = strcspn(p, " :,()");
        const char *slash = memrchr(p, '/', w);
        const char *from = slash ? slash + 1 : p;
        size_t k = (size_t)(p + w - from);
        if (k > sizeof out - 1 - o)
            k = sizeof out - 1 - o;
        memcpy(out + o, from, k);
        o += k;
        p += w;
        if (*p && o + 1 < sizeof out)
            out[o++] = *p++;
    }
    return keep(r, out, o, NULL);
}

static void json_form(mdb_resolver *r, const mdb_frame *f);

const char mdb_no_meta[] = "";

/* A resolved frame's metadata name from s (NULL: it could not be made),
 * sharing the name's bytes when they are the same. */
static void set_meta(mdb_resolver *r, mdb_frame *f, const char *s)
{
    uint32_t len;
    if (!s) {
        f->meta = mdb_no_meta;
        mdt_error_clear();
        return;
    }
    len = (uint32_t)strlen(s);
    if (len == f->name_len && memcmp(s, f->name, len) == 0)
        f->meta = f->name;
    else if (!(f->meta = keep(r, s, len, NULL)))
        f->meta = mdb_no_meta;
}

/* The text form: NAME, NAME (FILE:LINE), [special], [unresolved: why];
 * with --il and an IL offset, ` | IL_0042: INSTRUCTION` after a resolved
 * frame's name and line (`IL_0042: ?` when the offset holds none). */
static void state_text(mdb_output *o, const char *s, size_t n);

static void text_form(mdb_resolver *r, mdb_frame *f)
{
    mdb_output *o = &r->scratch;
    bool il = r->want_il && f->has_il && f->status == MDB_OK;
    o->len = 0;
    o->failed = false;
    if (f->status == MDB_OK && !f->file && !il) {
        f->text = f->name; /* the same bytes: no copy */
        f->text_len = f->name_len;
        return;
    }
    if (f->status == MDB_OK) {
        mdb_out(o, f->name, f->name_len);
        if (f->file) {
            mdb_outs(o, " (");
            mdb_outs(o, f->file);
            mdb_outc(o, ':');
            mdb_outu(o, f->line);
            mdb_outc(o, ')');
        }
        if (il) {
            mdb_outs(o, " | ");
            if (r->insn_len) {
                mdb_out(o, r->insn, r->insn_len);
            } else {
                char at[16];
                snprintf(at, sizeof at, "IL_%04" PRIx32 ": ?", f->il);
                mdb_outs(o, at);
            }
        }
    } else if (f->status == MDB_SPECIAL) {
        mdb_outc(o, '[');
        if (f->name_len > 6 && memcmp(f->name, "state:", 6) == 0)
            state_text(o, f->name + 6, f->name_len - 6);
        else
            mdb_out(o, f->name, f->name_len);
        mdb_outc(o, ']');
    } else {
        mdb_outs(o, "[unresolved: ");
        mdb_outs(o, mdb_status_text(f->status));
        mdb_outc(o, ']');
    }
    if (o->failed)
        o->len = 0;
    f->text = keep(r, o->buf, o->len, &f->text_len);
}

/* A frame's text form, and its JSON form when the run wants JSON: made
 * before the frame is shared, never after. */
static void finish(mdb_resolver *r, mdb_frame *f)
{
    r->insn_len = 0;
    if (r->want_il && f->has_il && f->status == MDB_OK &&
        MDT_TOKEN_TABLE(f->token) == MDT_TABLE_MethodDef)
        r->insn_len = (uint32_t)mdb_il_text(r->insn, sizeof r->insn, f->mod->img, f->token, f->il);
    text_form(r, f);
    if (r->want_json) {
        json_form(r, f);
        f->json = keep(r, r->scratch.buf, r->scratch.len, &f->json_len);
    }
}

/* Source line of a MethodDef frame from the module's PDB, when it has one:
 * the point covering the IL offset, or the method's first line. */
static void add_line(mdb_resolver *r, mdb_frame *f)
{
    const mdt_pdb *pdb;
    mdt_seqpoint sp;
    int e;
    if (MDT_TOKEN_TABLE(f->token) != MDT_TABLE_MethodDef || !(pdb = f->mod->pdb))
        return;
    e = f->has_il ? mdt_pdb_lookup(&sp, pdb, f->token, f->il)
                  : mdt_pdb_method_start(&sp, pdb, f->token);
    mdt_error_clear();
    if (e || sp.hidden)
        return;
    if ((f->file = mdb_module_document(r->lasting.ctx, f->mod, sp.document))) {
        f->line = sp.start_line;
        f->column = sp.start_column;
    }
}

/* Parse n descriptors (space- or comma-separated pieces already split). */
static int parse_descs(mdb_resolver *r, void *tmp, const char **p, const size_t *l, int n,
                       const mdt_desc **out)
{
    for (int i = 0; i < n; i++) {
        mdt_desc *d;
        int e = mdt_desc_parse(tmp, &d, p[i], l[i], mdb_mvid_lookup, r->a);
        if (e)
            return e;
        out[i] = d;
    }
    return 0;
}

static uint32_t generic_params(const mdt_image *img, uint32_t owner)
{
    uint32_t key, rid, n = 0;
    mdt_find fi;
    if (mdt_coded_encode(&key, MDT_CI_TypeOrMethodDef, owner) ||
        mdt_find_init(&fi, img, MDT_TABLE_GenericParam, MDT_COL_GenericParam_Owner, key))
        return 0;
    while (mdt_find_next(&rid, &fi) == 0 && n < 0xFFFF)
        n++;
    mdt_error_clear();
    return n;
}

/* This thread's cache of the type names of a module, in full style or
 * (`stored`) as metadata stores them (NULL when out of memory: names are
 * then made without it). Inlined: a call cost the text path 0.2% more
 * instructions. */
static inline __attribute__((always_inline)) mdt_name_cache *names_of(mdb_resolver *r,
                                                                      mdb_module *m, bool stored)
{
    mdt_name_cache **c;
    if (m->id >= r->nnames) {
        uint32_t n = m->id + 64;
        struct modnames *a = talloc_realloc(r, r->names, struct modnames, n);
        if (!a)
            return NULL;
        memset(a + r->nnames, 0, (n - r->nnames) * sizeof *a);
        r->names = a;
        r->nnames = n;
    }
    c = stored ? &r->names[m->id].stored : &r->names[m->id].full;
    if (!*c && mdt_name_cache_new(r->namectx, c, m->img, MDT_STYLE_FULL,
                                  stored ? MDT_NAME_METADATA : r->name_flags) != 0)
        mdt_error_clear();
    return *c;
}

/* A JSON run's metadata name of a resolved frame's token (out of line:
 * the text path has no use for it). */
static void stored_name(mdb_resolver *r, mdb_frame *f) __attribute__((noinline));
static void stored_name(mdb_resolver *r, mdb_frame *f)
{
    mdt_name_cache *c = names_of(r, f->mod, true);
    char *s = NULL;
    int e = mdt_token_metadata_name_buf(r->name, sizeof r->name, NULL, f->mod->img, f->token, c);
    if (e == MDT_ETRUNC) {
        mdt_error_clear();
        e = mdt_token_metadata_name(NULL, &s, f->mod->img, f->token, c);
    }
    set_meta(r, f, e ? NULL : s ? s : r->name);
    talloc_free(s);
}

static void name_inst(mdb_resolver *r, mdb_frame *f, const char **cls, const size_t *clsl, int ncls,
                      const char **meth, const size_t *methl, int nmeth) __attribute__((noinline));

/* Name a token of an open module, with type arguments when given: for a
 * TypeDef all of them are the type's; for a MethodDef the first ones (as
 * many as its type has generic parameters, unless `split` says) are the
 * class's, the rest the method's. */
static void name_token(mdb_resolver *r, mdb_frame *f, const char **cls, const size_t *clsl,
                       int ncls, const char **meth, const size_t *methl, int nmeth)
{
    const mdt_image *img = f->mod->img;
    unsigned table = MDT_TOKEN_TABLE(f->token);
    uint32_t rid = MDT_TOKEN_RID(f->token);
    if (!names_something(table)) {
        f->status = MDB_BAD_TOKEN;
        f->detail = "the table names nothing";
        return;
    }
    if (rid == 0 || rid > mdt_table_rows(img, table)) {
        f->status = MDB_NO_SUCH_ROW;
        return;
    }
    if (ncls + nmeth == 0) {
        mdt_name_opts o = {MDT_STYLE_FULL, r->name_flags, MDT_NAME_OPTS_VERSION, NULL,
                           names_of(r, f->mod, false)};
        size_t len;
        /* straight into the arena: most names are short, and copying each
         * of hundreds of thousands cost more than reserving room */
        char *room = mdb_arena_room(r->cur, NAME_ROOM);
        int e = room ? mdt_token_name_buf(room, NAME_ROOM, &len, img, f->token, &o)
                     : mdt_token_name_buf(r->name, sizeof r->name, &len, img, f->token, &o);
        if (e == 0) {
            if (room) {
                f->name = mdb_arena_alloc(r->cur, len + 1); /* the room's start */
                f->name_len = (uint32_t)len;
            } else {
                f->name = keep(r, r->name, len, &f->name_len);
            }
        } else if (e == MDT_ETRUNC) {
            char *s;
            mdt_error_clear();
            if (mdt_token_name(NULL, &s, img, f->token, &o) == 0) {
                f->name = keep(r, s, strlen(s), &f->name_len);
                talloc_free(s);
            } else {
                f->status = MDB_BAD_METADATA;
                f->detail = last_error(r);
            }
        } else {
            f->status = MDB_BAD_METADATA;
            f->detail = last_error(r);
        }
        if (r->want_json && f->status == MDB_OK && mdt_token_is_type_or_member(f->token))
            stored_name(r, f);
        return;
    }
    if (table != MDT_TABLE_TypeDef && table != MDT_TABLE_MethodDef) {
        f->status = MDB_BAD_DESCRIPTOR;
        f->detail = "type arguments are for TypeDef and MethodDef tokens only";
        return;
    }
    name_inst(r, f, cls, clsl, ncls, meth, methl, nmeth);
}

/* A TypeDef or MethodDef instantiated by descriptors (out of line: rare,
 * and inline its arrays cost every plain name 0.2% more instructions). */
static void name_inst(mdb_resolver *r, mdb_frame *f, const char **cls, const size_t *clsl, int ncls,
                      const char **meth, const size_t *methl, int nmeth)
{
    static const mdt_name_opts stored = {MDT_STYLE_FULL, MDT_NAME_METADATA, MDT_NAME_OPTS_VERSION,
                                         NULL, NULL};
    const mdt_image *img = f->mod->img;
    unsigned table = MDT_TOKEN_TABLE(f->token);
    void *tmp = talloc_new(NULL);
    const mdt_desc *args[2 * MDB_MAX_FRAMES];
    char *s, *ms;
    int e = parse_descs(r, tmp, cls, clsl, ncls, args);
    if (!e)
        e = parse_descs(r, tmp, meth, methl, nmeth, args + ncls);
    if (!e && table == MDT_TABLE_TypeDef && nmeth)
        e = MDT_EINVAL;
    if (!e) {
        mdt_name_opts o = {MDT_STYLE_FULL, r->name_flags, MDT_NAME_OPTS_VERSION, NULL, NULL};
        e = mdt_inst_name(tmp, &s, img, f->token, (uint32_t)ncls, args, (uint32_t)nmeth,
                          args + ncls, &o);
    }
    if (e) {
        f->status = e == MDT_ENOTFOUND && strstr(mdt_error_last()->what, "MVID")
                        ? MDB_UNKNOWN_MVID
                        : MDB_BAD_DESCRIPTOR;
        f->detail = last_error(r);
    } else {
        f->name = keep(r, s, strlen(s), &f->name_len);
        /* The instantiation as stored: the descriptors' types too. */
        if (r->want_json)
            set_meta(r, f,
                     mdt_inst_name(tmp, &ms, img, f->token, (uint32_t)ncls, args, (uint32_t)nmeth,
                                   args + ncls, &stored) == 0
                         ? ms
                         : NULL);
    }
    talloc_free(tmp);
}

static const mdb_frame *cached(mdb_resolver *r, int k, const char *s, size_t n, uint64_t *h)
{
    *h = mdb_hash(s, n);
    return mdb_table_get(&r->cache[k], *h, s, n);
}

static const mdb_frame *store(mdb_resolver *r, int k, const char *s, size_t n, uint64_t h,
                              mdb_frame *f)
{
    static mdb_frame nomem = {.status = MDB_BAD_FRAME,
                              .detail = "out of memory",
                              .text = "[unresolved: out of memory]",
                              .text_len = 27};
    if (!f)
        return &nomem;
    finish(r, f);
    if (mdb_table_put(&r->cache[k], h, s, n, f) == 0)
        r->n++;
    count_bytes(r);
    return f;
}

/* The frame of a plain line without type arguments naming a row that
 * exists: kept by the module in an array by table and row, so a line met
 * again costs the module lookup and one load, and nothing is stored per
 * distinct line. NULL when the token names no row (the caller caches that
 * answer by the line's text). */
static const mdb_frame *new_plain_frame(mdb_resolver *r, mdb_module *m, uint32_t token)
    __attribute__((noinline));
static const mdb_frame *new_plain_frame(mdb_resolver *r, mdb_module *m, uint32_t token)
{
    unsigned table = MDT_TOKEN_TABLE(token);
    uint32_t rid = MDT_TOKEN_RID(token), rows;
    mdb_rowframes *a = atomic_load_explicit(&m->frames[table], memory_order_acquire), *none = NULL;
    mdb_frame *f, *old = NULL;
    if (!names_something(table) || rid == 0 || rid > (rows = mdt_table_rows(m->img, table)))
        return NULL;
    /* The modules' share of the budget is full: the frame is made and
     * cached by the line's text instead, in the thread's own caches. */
    if (r->budget &&
        atomic_load_explicit(&r->budget->kept, memory_order_relaxed) >= r->budget->kept_max)
        return NULL;
    if (!a) {
        size_t size = sizeof *a + ((size_t)rows + 1) * sizeof a->f[0];
        if (!(a = mdb_arena_alloc(&r->lasting, size)))
            return NULL;
        memset(a, 0, size);
        a->rows = rows;
        if (!atomic_compare_exchange_strong_explicit(&m->frames[table], &none, a,
                                                     memory_order_acq_rel, memory_order_acquire))
            a = none; /* another thread's array (ours stays in the arena) */
    }
    r->cur = &r->lasting;
    if ((f = new_frame(r, MDB_OK))) {
        f->mod = m;
        f->token = token;
        name_token(r, f, NULL, NULL, 0, NULL, NULL, 0);
        if (f->status == MDB_OK)
            add_line(r, f);
        finish(r, f);
        if (!atomic_compare_exchange_strong_explicit(&a->f[rid], &old, f, memory_order_acq_rel,
                                                     memory_order_acquire))
            f = old; /* the same frame, named by another thread */
    }
    r->cur = &r->arena;
    return f;
}

static inline const mdb_frame *plain_frame(mdb_resolver *r, mdb_module *m, uint32_t token)
{
    const mdb_frame *f = mdb_kept_frame(m, token); /* the hot path: two loads */
    return f ? f : MDT_TOKEN_TABLE(token) < MDT_TABLE_MAX ? new_plain_frame(r, m, token) : NULL;
}

/* The module of a line, opened (once); NULL when it does not open. */
static inline bool opened(mdb_resolver *r, mdb_module *m)
{
    return mdb_module_opened(r->a, m);
}

/* ---------------------------------------------------------------- frames */

static const char *const specials[] = {"native",    "unmanaged", "dynamic", "stub",
                                       "truncated", "unknown",   "state"};

/* A special frame (doc/profile-log.md): one of the words, or "unknown:"
 * and a reason, or "state:" and a wall-mode thread state. Stack and call
 * frames may be special, and so may an alloc record's type, when the
 * profiler could not describe it. */
static bool special(const char *s, size_t n)
{
    for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++) {
        size_t k = strlen(specials[i]);
        if (n >= k && memcmp(s, specials[i], k) == 0 &&
            ((n == k && i != 6) || (i >= 5 && n > k + 1 && s[k] == ':')))
            return true;
    }
    return false;
}

/* A wall-mode state frame's text (doc/profile-log.md, "Wall time"): the
 * words a reader expects, `[waiting: Monitor.Wait]`; a state this reader
 * does not know is printed as the log says it. */
static void state_text(mdb_output *o, const char *s, size_t n)
{
    static const struct {
        const char *log, *text;
    } states[] = {{"running", "running"},
                  {"sleeping", "sleeping"},
                  {"native", "in native code"},
                  {"syscall", "blocked in syscall"}};
    for (size_t i = 0; i < sizeof states / sizeof states[0]; i++)
        if (strlen(states[i].log) == n && memcmp(s, states[i].log, n) == 0) {
            mdb_outs(o, states[i].text);
            return;
        }
    if (n > 8 && memcmp(s, "waiting:", 8) == 0) {
        mdb_outs(o, "waiting: ");
        mdb_out(o, s + 8, n - 8);
        return;
    }
    mdb_out(o, s, n);
}

/* The MVID a frame whose module was not found names: the first MVID of
 * its text (`MVID:` in a frame or descriptor, `MVID ` of a plain line)
 * whose module is not found, copied to the arena; NULL when none is. */
static const uint8_t *unknown_mvid(mdb_resolver *r, const char *s, size_t n)
{
    uint8_t mvid[16], *copy;
    for (size_t i = 0; i + 33 <= n; i++) {
        if ((s[i + 32] != ':' && s[i + 32] != ' ') ||
            (i > 0 && s[i - 1] != ',' && s[i - 1] != '{' && s[i - 1] != '<' && s[i - 1] != ' '))
            continue;
        if (!mdb_parse_mvid(s + i, 32, mvid))
            continue;
        if (!mdb_modcache_mvid(r->mods, mvid)) {
            if ((copy = mdb_arena_alloc(r->cur, 16)))
                memcpy(copy, mvid, 16);
            return copy;
        }
        i += 32;
    }
    return NULL;
}

/* f becomes the special frame s, cached under cache k. */
static const mdb_frame *store_special(mdb_resolver *r, int k, const char *s, size_t n, uint64_t h,
                                      mdb_frame *f)
{
    f->status = MDB_SPECIAL;
    f->name = keep(r, s, n, &f->name_len);
    return store(r, k, s, n, h, f);
}

/* A method frame at an IL offset of a module with a PDB: the method's
 * frame with the line of that offset, cached by (method frame, offset). */
static const mdb_frame *line_frame(mdb_resolver *r, const mdb_frame *base, uint32_t il)
{
    struct {
        const mdb_frame *base;
        uint64_t il;
    } key = {base, il};
    uint64_t h = mdb_hash(&key, sizeof key);
    const mdb_frame *c = mdb_table_get(&r->cache[K_IL], h, &key, sizeof key);
    mdb_frame *f;
    if (c)
        return c;
    if (!(f = new_frame(r, MDB_OK)))
        return base;
    *f = *base;
    f->lasting = false;
    f->has_il = true;
    f->il = il;
    f->file = NULL;
    f->line = f->column = 0;
    f->json = NULL;
    add_line(r, f);
    finish(r, f);
    if (mdb_table_put(&r->cache[K_IL], h, &key, sizeof key, f) == 0)
        r->n++;
    count_bytes(r);
    return f;
}

const mdb_frame *mdb_resolve_logframe(mdb_resolver *r, const char *s, size_t n, uint32_t *ilp,
                                      bool *has_ilp)
{
    uint64_t h;
    const mdb_frame *c;
    const char *at;
    mdb_frame *f;
    /* The common frame, `mvid:0xTTTTTTTT[@0xIL]` without type arguments:
     * the method's frame kept by its module, and for a module with a PDB
     * the line of the offset. (An offset that reads is hex digits: its '@'
     * is the last.) */
    if (n >= 43 && s[32] == ':' &&
        (n == 43 || (s[43] == '@' && mdb_parse_hex32(s + 44, n - 44, false, ilp)))) {
        uint8_t mvid[16];
        uint32_t tok;
        mdb_module *m;
        *has_ilp = n > 43;
        if (mdb_parse_mvid(s, 32, mvid) && mdb_parse_hex32(s + 33, 10, true, &tok) &&
            MDT_TOKEN_TABLE(tok) == MDT_TABLE_MethodDef && (m = mdb_modcache_mvid(r->mods, mvid)) &&
            opened(r, m) && (c = plain_frame(r, m, tok)))
            return *has_ilp && (m->pdb || r->want_il) && c->status == MDB_OK
                       ? line_frame(r, c, *ilp)
                       : c;
    }
    if (mdb_is_native_frame(s, n)) { /* native.c: its own cache, by line */
        size_t had = mdb_native_count(r->natives);
        *has_ilp = false;
        c = mdb_native_resolve(r->natives, s, n, r->lineno);
        if (mdb_native_count(r->natives) != had) { /* counted against the budget too */
            r->n++;
            count_bytes(r);
        }
        return c;
    }
    at = memrchr(s, '@', n);
    *has_ilp = at && mdb_parse_hex32(at + 1, n - (size_t)(at + 1 - s), false, ilp);
    if ((c = cached(r, K_LOG, s, n, &h)))
        return c;
    if (!(f = new_frame(r, MDB_OK)))
        return store(r, K_LOG, s, n, h, f);
    if (special(s, n))
        return store_special(r, K_LOG, s, n, h, f);
    /* mvid ":" token ["{" descs "}"] ["<" descs ">"] ["@" ilofs] */
    uint8_t mvid[16];
    const char *cls[MDB_MAX_FRAMES], *meth[MDB_MAX_FRAMES];
    size_t clsl[MDB_MAX_FRAMES], methl[MDB_MAX_FRAMES], pos = 43;
    int ncls = 0, nmeth = 0;
    if (n < 43 || s[32] != ':' || !mdb_parse_mvid(s, 32, mvid)) {
        f->status = MDB_BAD_FRAME;
        f->detail = "not MVID:TOKEN nor a special frame";
        return store(r, K_LOG, s, n, h, f);
    }
    if (!mdb_parse_hex32(s + 33, 10, true, &f->token)) {
        f->status = MDB_BAD_TOKEN;
        return store(r, K_LOG, s, n, h, f);
    }
    if (pos < n && s[pos] == '{') {
        const char *end = memchr(s + pos, '}', n - pos);
        if (!end || (ncls = split_args(s + pos + 1, (size_t)(end - s) - pos - 1, ',', cls, clsl,
                                       MDB_MAX_FRAMES)) < 0)
            goto bad;
        pos = (size_t)(end - s) + 1;
    }
    if (pos < n && s[pos] == '<') {
        size_t i = pos;
        int depth = 0;
        for (; i < n; i++)
            if (s[i] == '<')
                depth++;
            else if (s[i] == '>' && --depth == 0)
                break;
        if (i == n ||
            (nmeth = split_args(s + pos + 1, i - pos - 1, ',', meth, methl, MDB_MAX_FRAMES)) < 0)
            goto bad;
        pos = i + 1;
    }
    if (pos < n && s[pos] == '@') {
        if (!mdb_parse_hex32(s + pos + 1, n - pos - 1, false, &f->il))
            goto bad;
        f->has_il = true;
        pos = n;
    }
    if (pos != n)
        goto bad;
    if (MDT_TOKEN_TABLE(f->token) != MDT_TABLE_MethodDef) {
        f->status = MDB_BAD_TOKEN;
        f->detail = "a frame's token is a MethodDef";
        return store(r, K_LOG, s, n, h, f);
    }
    if (!(f->mod = mdb_modcache_mvid(r->mods, mvid)) || !opened(r, f->mod)) {
        f->status = MDB_UNKNOWN_MVID;
        f->detail = f->mod ? f->mod->open_error : NULL;
        f->unknown_mvid = f->mod ? NULL : unknown_mvid(r, s, n);
        f->mod = NULL;
        return store(r, K_LOG, s, n, h, f);
    }
    name_token(r, f, cls, clsl, ncls, meth, methl, nmeth);
    if (f->status == MDB_OK)
        add_line(r, f);
    else if (f->status == MDB_UNKNOWN_MVID) /* a type argument's */
        f->unknown_mvid = unknown_mvid(r, s, n);
    return store(r, K_LOG, s, n, h, f);
bad:
    f->status = MDB_BAD_FRAME;
    f->detail = "unbalanced or empty type arguments, or a bad IL offset";
    return store(r, K_LOG, s, n, h, f);
}

const mdb_frame *mdb_resolve_type(mdb_resolver *r, const char *s, size_t n)
{
    uint64_t h;
    const mdb_frame *c = cached(r, K_TYPE, s, n, &h);
    mdb_frame *f;
    void *tmp;
    mdt_desc *d;
    const mdt_type *t;
    char *name, *ms;
    int e;
    if (c)
        return c;
    if (!(f = new_frame(r, MDB_OK)))
        return store(r, K_TYPE, s, n, h, f);
    if (special(s, n))
        return store_special(r, K_TYPE, s, n, h, f);
    if (!(tmp = talloc_new(NULL)))
        return store(r, K_TYPE, s, n, h, f);
    e = mdt_desc_parse(tmp, &d, s, n, mdb_mvid_lookup, r->a);
    if (e == MDT_ENOTFOUND && strstr(mdt_error_last()->what, "MVID")) {
        f->status = MDB_UNKNOWN_MVID;
        f->unknown_mvid = unknown_mvid(r, s, n);
    } else if (e || (e = mdt_desc_to_type(tmp, &t, d)) != 0 ||
               (e = mdt_type_name(tmp, &name, t, NULL)) != 0)
        f->status = MDB_BAD_DESCRIPTOR;
    if (e) {
        f->detail = last_error(r);
    } else {
        static const mdt_name_opts stored = {MDT_STYLE_FULL, MDT_NAME_METADATA,
                                             MDT_NAME_OPTS_VERSION, NULL, NULL};
        f->name = keep(r, name, strlen(name), &f->name_len);
        if (r->want_json)
            set_meta(r, f, mdt_type_name(tmp, &ms, t, &stored) == 0 ? ms : NULL);
        if (d->kind == MDT_DESC_TYPEDEF) {
            f->token = d->token;
            uint8_t mvid[16];
            if (mdt_image_mvid(mvid, d->img) == 0)
                f->mod = mdb_modcache_mvid(r->mods, mvid);
        }
    }
    talloc_free(tmp);
    return store(r, K_TYPE, s, n, h, f);
}

/* Fields of a plain line separated by single spaces. */
static int fields(const char *s, size_t n, const char **p, size_t *l, int max)
{
    return split_args(s, n, ' ', p, l, max);
}

const mdb_frame *mdb_resolve_plain_mvid(mdb_resolver *r, const char *s, size_t n,
                                        const uint8_t mvid[16])
{
    uint64_t h;
    const mdb_frame *c;
    const char *p[MDB_MAX_FRAMES + 2];
    size_t l[MDB_MAX_FRAMES + 2];
    mdb_frame *f;
    uint32_t token;
    mdb_module *m;
    int nf;
    /* MVID TOKEN naming a row that exists: the module's frame (a token
     * that reads holds no space: the line has no descriptors) */
    if (n > 33 && mdb_parse_hex32(s + 33, n - 33, false, &token) &&
        (m = mdb_modcache_mvid(r->mods, mvid)) && opened(r, m) && (c = plain_frame(r, m, token)))
        return c;
    if ((c = cached(r, K_MVID, s, n, &h)))
        return c;
    if (!(f = new_frame(r, MDB_OK)))
        return store(r, K_MVID, s, n, h, f);
    nf = fields(s, n, p, l, MDB_MAX_FRAMES + 2);
    if (nf < 2 || l[0] != 32) {
        f->status = MDB_BAD_FRAME;
        f->detail = "not MVID TOKEN [DESCRIPTOR...]";
        return store(r, K_MVID, s, n, h, f);
    }
    if (!mdb_parse_hex32(p[1], l[1], false, &f->token)) {
        f->status = MDB_BAD_TOKEN;
        return store(r, K_MVID, s, n, h, f);
    }
    if (!(f->mod = mdb_modcache_mvid(r->mods, mvid)) || !opened(r, f->mod)) {
        f->status = MDB_UNKNOWN_MVID;
        f->detail = f->mod ? f->mod->open_error : NULL;
        f->unknown_mvid = f->mod ? NULL : unknown_mvid(r, s, n);
        f->mod = NULL;
        return store(r, K_MVID, s, n, h, f);
    }
    int nargs = nf - 2, ncls = nargs;
    if (nargs && MDT_TOKEN_TABLE(f->token) == MDT_TABLE_MethodDef) {
        uint32_t owner = 0;
        if (mdt_member_owner(&owner, f->mod->img, f->token) == 0 && owner)
            ncls = (int)generic_params(f->mod->img, owner);
        mdt_error_clear();
        if (ncls > nargs)
            ncls = nargs;
    }
    name_token(r, f, p + 2, l + 2, ncls, p + 2 + ncls, l + 2 + ncls, nargs - ncls);
    if (f->status == MDB_OK)
        add_line(r, f);
    else if (f->status == MDB_UNKNOWN_MVID) /* a descriptor's */
        f->unknown_mvid = unknown_mvid(r, s, n);
    return store(r, K_MVID, s, n, h, f);
}

const mdb_frame *mdb_resolve_plain_path(mdb_resolver *r, const char *s, size_t n)
{
    uint64_t h;
    const char *sp;
    const mdb_frame *c;
    mdb_module *m = NULL;
    mdb_frame *f;
    uint32_t token = 0;
    bool tok_ok;
    /* The common line ends in a space and a token of 8 digits, which holds
     * no space: that space is the last. */
    if (n > 11 && s[n - 11] == ' ' && mdb_parse_hex32(s + n - 10, 10, false, &token)) {
        sp = s + n - 11;
        tok_ok = true;
    } else {
        sp = memrchr(s, ' ', n);
        tok_ok = sp && sp != s && mdb_parse_hex32(sp + 1, n - (size_t)(sp + 1 - s), false, &token);
    }
    if (tok_ok && (m = mdb_modcache_path(r->mods, s, (size_t)(sp - s))) && opened(r, m) &&
        (c = plain_frame(r, m, token)))
        return c;
    /* every other answer is cached by the line's text */
    if ((c = cached(r, K_PATH, s, n, &h)))
        return c;
    if (!(f = new_frame(r, MDB_OK)))
        return store(r, K_PATH, s, n, h, f);
    f->token = token;
    if (!sp || sp == s) {
        f->status = MDB_BAD_FRAME;
        f->detail = "not PATH TOKEN";
    } else if (!tok_ok) {
        f->status = MDB_BAD_TOKEN;
    } else if (!m || !m->img) {
        f->status = MDB_UNKNOWN_FILE;
        f->detail = m ? m->open_error : keep(r, strerror(errno), strlen(strerror(errno)), NULL);
    } else {
        f->mod = m;
        name_token(r, f, NULL, NULL, 0, NULL, NULL, 0);
        if (f->status == MDB_OK) /* a row's frame the module did not keep */
            add_line(r, f);
    }
    return store(r, K_PATH, s, n, h, f);
}

const mdb_frame *mdb_resolve_plain_row(mdb_resolver *r, mdb_module *m, uint32_t token)
{
    mdb_resolver_trim(r); /* as before any line mdb_record_parse is given */
    return plain_frame(r, m, token);
}

const mdb_modcache *mdb_resolver_modcache(const mdb_resolver *r)
{
    return r->mods;
}

/* ------------------------------------------------------------------ JSON */

static void member_str(mdb_output *o, const char *key, const char *v, size_t n)
{
    mdb_outc(o, '"');
    mdb_outs(o, key);
    mdb_outs(o, "\":");
    mdb_out_json_string(o, v, n);
}

/* The JSON members of a frame, in the scratch buffer. */
static void json_form(mdb_resolver *r, const mdb_frame *f)
{
    mdb_output *o = &r->scratch;
    char tok[11];
    o->len = 0;
    o->failed = false;
    if (f->status == MDB_SPECIAL) {
        const char *colon = memchr(f->name, ':', f->name_len);
        size_t k = colon ? (size_t)(colon - f->name) : f->name_len;
        member_str(o, "status", f->name, k);
        if (colon) {
            mdb_outc(o, ',');
            member_str(o, "reason", colon + 1, f->name_len - k - 1);
        }
    } else {
        if (f->status == MDB_OK) {
            member_str(o, "name", f->name, f->name_len);
            mdb_outc(o, ',');
            if (f->meta == mdb_no_meta) {
                mdb_outs(o, "\"metadata_name\":null,");
            } else if (f->meta) {
                member_str(o, "metadata_name", f->meta, strlen(f->meta));
                mdb_outc(o, ',');
            }
        }
        member_str(o, "status", mdb_status_text(f->status), strlen(mdb_status_text(f->status)));
        if (f->status != MDB_OK && f->detail) {
            mdb_outc(o, ',');
            member_str(o, "detail", f->detail, strlen(f->detail));
        }
        if (f->status == MDB_UNKNOWN_MVID && f->unknown_mvid) {
            char mv[33];
            mdb_format_mvid(mv, f->unknown_mvid);
            mdb_outc(o, ',');
            member_str(o, "unknown_mvid", mv, 32);
        }
        if (f->mod) {
            char mv[33];
            mdb_outc(o, ',');
            member_str(o, "assembly", f->mod->assembly, strlen(f->mod->assembly));
            mdb_outc(o, ',');
            member_str(o, "module", f->mod->name, strlen(f->mod->name));
            if (f->mod->have_mvid) {
                mdb_format_mvid(mv, f->mod->mvid);
                mdb_outc(o, ',');
                member_str(o, "mvid", mv, 32);
            }
        }
        if (f->token) {
            tok[0] = '0';
            tok[1] = 'x';
            for (int i = 0; i < 8; i++) /* not snprintf: once per frame, it showed */
                tok[2 + i] = "0123456789abcdef"[f->token >> (28 - 4 * i) & 15];
            mdb_outc(o, ',');
            member_str(o, "token", tok, 10);
        }
        if (f->file) {
            mdb_outc(o, ',');
            member_str(o, "file", f->file, strlen(f->file));
            mdb_outs(o, ",\"line\":");
            mdb_outu(o, f->line);
            mdb_outs(o, ",\"column\":");
            mdb_outu(o, f->column);
        }
        if (r->want_il && f->has_il && f->status == MDB_OK) {
            mdb_outc(o, ',');
            if (r->insn_len)
                member_str(o, "il", r->insn, r->insn_len);
            else
                mdb_outs(o, "\"il\":null");
        }
    }
    if (o->failed) { /* a name too long for the scratch buffer */
        o->len = 0;
        o->failed = false;
        member_str(o, "status", "bad metadata", 12);
    }
}

void mdb_frame_json(mdb_resolver *r, const mdb_frame *f, const char **json, uint32_t *len)
{
    if (f->json) {
        *json = f->json;
        *len = f->json_len;
        return;
    }
    /* A frame made before the run wanted JSON (never, in mdinspect), or
     * the frame that says "out of memory": made again each time. */
    r->insn_len = 0;
    json_form(r, f);
    *json = r->scratch.buf;
    *len = (uint32_t)r->scratch.len;
}
