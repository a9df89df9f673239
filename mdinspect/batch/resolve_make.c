/* mdinspect batch, the resolver (resolve_int.h): a frame made. A token of
 * an open module named by the library (mdt_token_name_buf straight into
 * the arena, through this thread's type name caches of the module; with
 * type arguments, mdt_inst_name), the source line of a MethodDef from the
 * module's portable PDB, and the text form the emitters print (the JSON
 * form too in a JSON run, resolve_json.c). The frames of rows that exist
 * are kept by their module and shared by the threads (resolve.c says how);
 * the path from a line met for the first time to its named frame stays in
 * this one file, so the compiler inlines it as it did when it was one
 * file with the rest. */

#define _GNU_SOURCE /* memrchr */
#include "config.h"

#include <inttypes.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <talloc.h>

#include <mdtools/members.h>

#include "batch/resolve_int.h"

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

mdb_frame *mdb_res_new_frame(mdb_resolver *r, int status)
{
    mdb_frame *f = mdb_arena_alloc(r->cur, sizeof *f);
    if (f) {
        memset(f, 0, sizeof *f);
        f->status = (uint8_t)status;
        f->lasting = r->cur == &r->lasting;
    }
    return f;
}

const char *mdb_res_keep(mdb_resolver *r, const char *s, size_t n, uint32_t *len)
{
    if (len)
        *len = (uint32_t)n;
    return mdb_arena_strndup(r->cur, s, n);
}

/* The last library error, as the detail of an unresolved frame. Paths in
 * it are cut to their file names: a module's path is the spelling the
 * input used first, which differs between the parts of a split input, and
 * the answer for a line must not depend on the lines before it. */
const char *mdb_res_last_error(mdb_resolver *r)
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
    return mdb_res_keep(r, out, o, NULL);
}

const char mdb_no_meta[] = "";

/* A resolved frame's metadata name from s (NULL: it could not be made),
 * sharing the name's bytes when they are the same. */
void mdb_res_set_meta(mdb_resolver *r, mdb_frame *f, const char *s)
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
    else if (!(f->meta = mdb_res_keep(r, s, len, NULL)))
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
    f->text = mdb_res_keep(r, o->buf, o->len, &f->text_len);
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

/* A frame's text form, and its JSON form when the run wants JSON: made
 * before the frame is shared, never after. */
void mdb_res_finish(mdb_resolver *r, mdb_frame *f)
{
    r->insn_len = 0;
    if (r->want_il && f->has_il && f->status == MDB_OK &&
        MDT_TOKEN_TABLE(f->token) == MDT_TABLE_MethodDef)
        r->insn_len = (uint32_t)mdb_il_text(r->insn, sizeof r->insn, f->mod->img, f->token, f->il);
    text_form(r, f);
    if (r->want_json) {
        mdb_res_json_form(r, f);
        f->json = mdb_res_keep(r, r->scratch.buf, r->scratch.len, &f->json_len);
    }
}

/* Source line of a MethodDef frame from the module's PDB, when it has one:
 * the point covering the IL offset, or the method's first line. */
void mdb_res_add_line(mdb_resolver *r, mdb_frame *f)
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
    mdb_res_set_meta(r, f, e ? NULL : s ? s : r->name);
    talloc_free(s);
}

static void name_inst(mdb_resolver *r, mdb_frame *f, const char **cls, const size_t *clsl, int ncls,
                      const char **meth, const size_t *methl, int nmeth) __attribute__((noinline));

/* Name a token of an open module, with type arguments when given: for a
 * TypeDef all of them are the type's; for a MethodDef the first ones (as
 * many as its type has generic parameters, unless `split` says) are the
 * class's, the rest the method's. */
void mdb_res_name_token(mdb_resolver *r, mdb_frame *f, const char **cls, const size_t *clsl,
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
                f->name = mdb_res_keep(r, r->name, len, &f->name_len);
            }
        } else if (e == MDT_ETRUNC) {
            char *s;
            mdt_error_clear();
            if (mdt_token_name(NULL, &s, img, f->token, &o) == 0) {
                f->name = mdb_res_keep(r, s, strlen(s), &f->name_len);
                talloc_free(s);
            } else {
                f->status = MDB_BAD_METADATA;
                f->detail = mdb_res_last_error(r);
            }
        } else {
            f->status = MDB_BAD_METADATA;
            f->detail = mdb_res_last_error(r);
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
        f->detail = mdb_res_last_error(r);
    } else {
        f->name = mdb_res_keep(r, s, strlen(s), &f->name_len);
        /* The instantiation as stored: the descriptors' types too. */
        if (r->want_json)
            mdb_res_set_meta(r, f,
                             mdt_inst_name(tmp, &ms, img, f->token, (uint32_t)ncls, args,
                                           (uint32_t)nmeth, args + ncls, &stored) == 0
                                 ? ms
                                 : NULL);
    }
    talloc_free(tmp);
}

/* The frame of a plain line without type arguments naming a row that
 * exists: kept by the module in an array by table and row, so a line met
 * again costs the module lookup and one load, and nothing is stored per
 * distinct line. NULL when the token names no row (the caller caches that
 * answer by the line's text). */
const mdb_frame *mdb_res_new_plain_frame(mdb_resolver *r, mdb_module *m, uint32_t token)
    __attribute__((noinline));
const mdb_frame *mdb_res_new_plain_frame(mdb_resolver *r, mdb_module *m, uint32_t token)
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
    if ((f = mdb_res_new_frame(r, MDB_OK))) {
        f->mod = m;
        f->token = token;
        mdb_res_name_token(r, f, NULL, NULL, 0, NULL, NULL, 0);
        if (f->status == MDB_OK)
            mdb_res_add_line(r, f);
        mdb_res_finish(r, f);
        if (!atomic_compare_exchange_strong_explicit(&a->f[rid], &old, f, memory_order_acq_rel,
                                                     memory_order_acquire))
            f = old; /* the same frame, named by another thread */
    }
    r->cur = &r->arena;
    return f;
}

const mdb_frame *mdb_resolve_plain_row(mdb_resolver *r, mdb_module *m, uint32_t token)
{
    mdb_resolver_trim(r); /* as before any line mdb_record_parse is given */
    return mdb_res_plain_frame(r, m, token);
}
