/* mdinspect batch, the resolver (resolve_int.h): what a frame's text
 * says. A profiler-log frame (`mvid:token{class args}<method args>@il`,
 * or a special word; doc/profile-log.md), an alloc record's type
 * descriptor, a plain line (`MVID TOKEN [DESC...]`, `PATH TOKEN`): each
 * read, its module found, and the frame made (resolve_make.c) or taken
 * from a cache (resolve.c). */

#define _GNU_SOURCE /* memrchr */
#include "config.h"

#include <inttypes.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <talloc.h>

#include <mdtools/members.h>

#include "batch/resolve_int.h"

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

/* The module of a line, opened (once); NULL when it does not open. */
static inline bool opened(mdb_resolver *r, mdb_module *m)
{
    return mdb_module_opened(r->a, m);
}

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
    if (!(f = mdb_res_new_frame(r, MDB_OK)))
        return base;
    *f = *base;
    f->lasting = false;
    f->has_il = true;
    f->il = il;
    f->file = NULL;
    f->line = f->column = 0;
    f->json = NULL;
    mdb_res_add_line(r, f);
    mdb_res_finish(r, f);
    if (mdb_table_put(&r->cache[K_IL], h, &key, sizeof key, f) == 0)
        r->n++;
    mdb_res_count_bytes(r);
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
            opened(r, m) && (c = mdb_res_plain_frame(r, m, tok)))
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
            mdb_res_count_bytes(r);
        }
        return c;
    }
    at = memrchr(s, '@', n);
    *has_ilp = at && mdb_parse_hex32(at + 1, n - (size_t)(at + 1 - s), false, ilp);
    if ((c = mdb_res_cached(r, K_LOG, s, n, &h)))
        return c;
    if (!(f = mdb_res_new_frame(r, MDB_OK)))
        return mdb_res_store(r, K_LOG, s, n, h, f);
    if (special(s, n))
        return mdb_res_store_special(r, K_LOG, s, n, h, f);
    /* mvid ":" token ["{" descs "}"] ["<" descs ">"] ["@" ilofs] */
    uint8_t mvid[16];
    const char *cls[MDB_MAX_FRAMES], *meth[MDB_MAX_FRAMES];
    size_t clsl[MDB_MAX_FRAMES], methl[MDB_MAX_FRAMES], pos = 43;
    int ncls = 0, nmeth = 0;
    if (n < 43 || s[32] != ':' || !mdb_parse_mvid(s, 32, mvid)) {
        f->status = MDB_BAD_FRAME;
        f->detail = "not MVID:TOKEN nor a special frame";
        return mdb_res_store(r, K_LOG, s, n, h, f);
    }
    if (!mdb_parse_hex32(s + 33, 10, true, &f->token)) {
        f->status = MDB_BAD_TOKEN;
        return mdb_res_store(r, K_LOG, s, n, h, f);
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
        return mdb_res_store(r, K_LOG, s, n, h, f);
    }
    if (!(f->mod = mdb_modcache_mvid(r->mods, mvid)) || !opened(r, f->mod)) {
        f->status = MDB_UNKNOWN_MVID;
        f->detail = f->mod ? f->mod->open_error : NULL;
        f->unknown_mvid = f->mod ? NULL : unknown_mvid(r, s, n);
        f->mod = NULL;
        return mdb_res_store(r, K_LOG, s, n, h, f);
    }
    mdb_res_name_token(r, f, cls, clsl, ncls, meth, methl, nmeth);
    if (f->status == MDB_OK)
        mdb_res_add_line(r, f);
    else if (f->status == MDB_UNKNOWN_MVID) /* a type argument's */
        f->unknown_mvid = unknown_mvid(r, s, n);
    return mdb_res_store(r, K_LOG, s, n, h, f);
bad:
    f->status = MDB_BAD_FRAME;
    f->detail = "unbalanced or empty type arguments, or a bad IL offset";
    return mdb_res_store(r, K_LOG, s, n, h, f);
}

const mdb_frame *mdb_resolve_type(mdb_resolver *r, const char *s, size_t n)
{
    uint64_t h;
    const mdb_frame *c = mdb_res_cached(r, K_TYPE, s, n, &h);
    mdb_frame *f;
    void *tmp;
    mdt_desc *d;
    const mdt_type *t;
    char *name, *ms;
    int e;
    if (c)
        return c;
    if (!(f = mdb_res_new_frame(r, MDB_OK)))
        return mdb_res_store(r, K_TYPE, s, n, h, f);
    if (special(s, n))
        return mdb_res_store_special(r, K_TYPE, s, n, h, f);
    if (!(tmp = talloc_new(NULL)))
        return mdb_res_store(r, K_TYPE, s, n, h, f);
    e = mdt_desc_parse(tmp, &d, s, n, mdb_mvid_lookup, r->a);
    if (e == MDT_ENOTFOUND && strstr(mdt_error_last()->what, "MVID")) {
        f->status = MDB_UNKNOWN_MVID;
        f->unknown_mvid = unknown_mvid(r, s, n);
    } else if (e || (e = mdt_desc_to_type(tmp, &t, d)) != 0 ||
               (e = mdt_type_name(tmp, &name, t, NULL)) != 0)
        f->status = MDB_BAD_DESCRIPTOR;
    if (e) {
        f->detail = mdb_res_last_error(r);
    } else {
        static const mdt_name_opts stored = {MDT_STYLE_FULL, MDT_NAME_METADATA,
                                             MDT_NAME_OPTS_VERSION, NULL, NULL};
        f->name = mdb_res_keep(r, name, strlen(name), &f->name_len);
        if (r->want_json)
            mdb_res_set_meta(r, f, mdt_type_name(tmp, &ms, t, &stored) == 0 ? ms : NULL);
        if (d->kind == MDT_DESC_TYPEDEF) {
            f->token = d->token;
            uint8_t mvid[16];
            if (mdt_image_mvid(mvid, d->img) == 0)
                f->mod = mdb_modcache_mvid(r->mods, mvid);
        }
    }
    talloc_free(tmp);
    return mdb_res_store(r, K_TYPE, s, n, h, f);
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
        (m = mdb_modcache_mvid(r->mods, mvid)) && opened(r, m) &&
        (c = mdb_res_plain_frame(r, m, token)))
        return c;
    if ((c = mdb_res_cached(r, K_MVID, s, n, &h)))
        return c;
    if (!(f = mdb_res_new_frame(r, MDB_OK)))
        return mdb_res_store(r, K_MVID, s, n, h, f);
    nf = fields(s, n, p, l, MDB_MAX_FRAMES + 2);
    if (nf < 2 || l[0] != 32) {
        f->status = MDB_BAD_FRAME;
        f->detail = "not MVID TOKEN [DESCRIPTOR...]";
        return mdb_res_store(r, K_MVID, s, n, h, f);
    }
    if (!mdb_parse_hex32(p[1], l[1], false, &f->token)) {
        f->status = MDB_BAD_TOKEN;
        return mdb_res_store(r, K_MVID, s, n, h, f);
    }
    if (!(f->mod = mdb_modcache_mvid(r->mods, mvid)) || !opened(r, f->mod)) {
        f->status = MDB_UNKNOWN_MVID;
        f->detail = f->mod ? f->mod->open_error : NULL;
        f->unknown_mvid = f->mod ? NULL : unknown_mvid(r, s, n);
        f->mod = NULL;
        return mdb_res_store(r, K_MVID, s, n, h, f);
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
    mdb_res_name_token(r, f, p + 2, l + 2, ncls, p + 2 + ncls, l + 2 + ncls, nargs - ncls);
    if (f->status == MDB_OK)
        mdb_res_add_line(r, f);
    else if (f->status == MDB_UNKNOWN_MVID) /* a descriptor's */
        f->unknown_mvid = unknown_mvid(r, s, n);
    return mdb_res_store(r, K_MVID, s, n, h, f);
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
        (c = mdb_res_plain_frame(r, m, token)))
        return c;
    /* every other answer is cached by the line's text */
    if ((c = mdb_res_cached(r, K_PATH, s, n, &h)))
        return c;
    if (!(f = mdb_res_new_frame(r, MDB_OK)))
        return mdb_res_store(r, K_PATH, s, n, h, f);
    f->token = token;
    if (!sp || sp == s) {
        f->status = MDB_BAD_FRAME;
        f->detail = "not PATH TOKEN";
    } else if (!tok_ok) {
        f->status = MDB_BAD_TOKEN;
    } else if (!m || !m->img) {
        f->status = MDB_UNKNOWN_FILE;
        f->detail =
            m ? m->open_error : mdb_res_keep(r, strerror(errno), strlen(strerror(errno)), NULL);
    } else {
        f->mod = m;
        mdb_res_name_token(r, f, NULL, NULL, 0, NULL, NULL, 0);
        if (f->status == MDB_OK) /* a row's frame the module did not keep */
            mdb_res_add_line(r, f);
    }
    return mdb_res_store(r, K_PATH, s, n, h, f);
}
