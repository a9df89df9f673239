/* Signature blobs to type trees (ECMA-335 II.23.2): MethodDefSig,
 * MethodRefSig (SENTINEL, vararg parameters), StandAloneMethodSig,
 * FieldSig, PropertySig, LocalVarSig, TypeSpec and MethodSpec blobs.
 *
 * The blob is untrusted: recursion is capped at MDT_SIG_MAX_DEPTH, every
 * count is checked against the bytes left before anything is allocated
 * (each element needs at least one byte), every token is checked against
 * its table, and a failure names the blob and the offset inside it. A
 * token's blob is found in sigblob.c. */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <talloc.h>

#include <mdtools/sig.h>
#include <mdtools/tables.h>

#include "generics/gen_int.h"
#include "md/md_int.h"

struct dec {
    void *ctx;
    char *cur, *end; /* bump allocator inside ctx's blocks, or in a
                        caller's arena when ctx is NULL */
    bool arena_full;
    size_t arena_size;
    const struct mdt_image *img;
    rd r;
    unsigned depth;
};

static int nomem(void)
{
    return mdt__fail_simple(MDT_ENOMEM, "out of memory decoding a signature");
}

static int peek(struct dec *d, uint8_t *b)
{
    int e = rd_need(&d->r, 1, "signature");
    if (!e)
        *b = d->r.base[d->r.pos];
    return e;
}

/* II.23.2 compressed unsigned integer: the one-byte form inline (almost
 * every count, token and number in a signature), the rest out of line. */
static inline int read_u(struct dec *d, uint32_t *v, const char *what)
{
    if (d->r.pos < d->r.len && !(d->r.base[d->r.pos] & 0x80)) {
        *v = d->r.base[d->r.pos++];
        return 0;
    }
    return rd_compressed(&d->r, v, what);
}

/* The next byte without consuming it or recording a failure at the end. */
static inline bool next_is(const struct dec *d, uint8_t b)
{
    return rd_left(&d->r) > 0 && d->r.base[d->r.pos] == b;
}

/* A count of items that each take at least one byte. */
static int read_count(struct dec *d, uint32_t *n, const char *what)
{
    int e = read_u(d, n, what);
    if (e)
        return e;
    if (*n > rd_left(&d->r))
        return rd_fail(&d->r, MDT_EBADIMAGE, "%s %u exceeds the %zu bytes left", what, *n,
                       rd_left(&d->r));
    return 0;
}

/* II.23.2: signed compressed integer, sign in the low bit. */
static int read_signed(struct dec *d, int32_t *v, const char *what)
{
    size_t start = d->r.pos;
    uint32_t u;
    int e = read_u(d, &u, what);
    if (e)
        return e;
    size_t n = d->r.pos - start;
    int32_t mag = (int32_t)(u >> 1);
    if (u & 1)
        mag -= n == 1 ? 0x40 : n == 2 ? 0x2000 : 0x10000000;
    *v = mag;
    return 0;
}

/* II.23.2.8 TypeDefOrRefOrSpecEncoded, checked against the tables. */
static int read_typedeforref(struct dec *d, uint32_t *token)
{
    static const uint8_t tables[3] = {MDT_TABLE_TypeDef, MDT_TABLE_TypeRef, MDT_TABLE_TypeSpec};
    size_t at = d->r.pos;
    uint32_t v;
    int e = read_u(d, &v, "TypeDefOrRefOrSpec");
    if (e)
        return e;
    uint32_t tag = v & 3, rid = v >> 2;
    if (tag == 3) {
        d->r.pos = at;
        return rd_fail(&d->r, MDT_EBADIMAGE, "TypeDefOrRefOrSpec tag 3 is not valid (value 0x%x)",
                       v);
    }
    if (rid == 0 || rid > mdt_table_rows(d->img, tables[tag])) {
        d->r.pos = at;
        return rd_fail(&d->r, MDT_EBADIMAGE, "%s row %u does not exist (%u rows)",
                       mdt_table_schema_get(tables[tag])->name, rid,
                       mdt_table_rows(d->img, tables[tag]));
    }
    *token = (uint32_t)tables[tag] << 24 | rid;
    return 0;
}

/* Trees are carved from a few large blocks under one talloc context (one
 * allocation per signature in the common case): the nodes of a tree live
 * and die together. Every count was checked against the bytes left, so the
 * total is bounded by the blob's length. */
static void *dalloc_slow(struct dec *d, size_t need)
{
    if (!d->ctx) { /* a caller's fixed arena */
        d->arena_full = true;
        return NULL;
    }
    size_t chunk = need > 4096 ? need : 4096;
    char *c = talloc_size(d->ctx, chunk);
    if (!c)
        return NULL;
    d->cur = c + need;
    d->end = c + chunk;
    memset(c, 0, need);
    return c;
}

static inline void *dalloc(struct dec *d, size_t size, size_t n)
{
    if (n && size > SIZE_MAX / 2 / n)
        return NULL;
    size_t need = (size * (n ? n : 1) + 7) & ~(size_t)7;
    if (need > (size_t)(d->end - d->cur))
        return dalloc_slow(d, need);
    void *p = d->cur;
    d->cur += need;
    memset(p, 0, need);
    return p;
}

static mdt_type *new_type(struct dec *d, uint8_t kind)
{
    mdt_type *t = dalloc(d, sizeof *t, 1);
    if (t) {
        t->kind = kind;
        t->img = d->img;
    }
    return t;
}

static int parse_type(struct dec *d, const mdt_type **out);
static int parse_method(struct dec *d, mdt_method_sig **out, uint8_t first);

/* Custom modifiers before a type: counted, then read into one array. */
static int parse_mods(struct dec *d, mdt_cmod **mods, uint16_t *n)
{
    *mods = NULL;
    *n = 0;
    if (!(next_is(d, MDT_ELEMENT_TYPE_CMOD_REQD) || next_is(d, MDT_ELEMENT_TYPE_CMOD_OPT)))
        return 0;
    rd probe = d->r;
    uint32_t count = 0;
    while (probe.pos < probe.len && (probe.base[probe.pos] == MDT_ELEMENT_TYPE_CMOD_REQD ||
                                     probe.base[probe.pos] == MDT_ELEMENT_TYPE_CMOD_OPT)) {
        uint32_t v;
        probe.pos++;
        if (rd_compressed(&probe, &v, "TypeDefOrRefOrSpec"))
            break; /* read again below, with the error in place */
        count++;
    }
    if (count >= UINT16_MAX)
        return rd_fail(&d->r, MDT_EBADIMAGE, "more than %u custom modifiers", UINT16_MAX - 1);
    mdt_cmod *m = dalloc(d, sizeof *m, count + 1);
    if (!m)
        return nomem();
    for (uint32_t i = 0; i <= count; i++) {
        uint8_t b;
        uint32_t tok;
        int e;
        if (!(next_is(d, MDT_ELEMENT_TYPE_CMOD_REQD) || next_is(d, MDT_ELEMENT_TYPE_CMOD_OPT)))
            break;
        b = d->r.base[d->r.pos++];
        if ((e = read_typedeforref(d, &tok)))
            return e;
        m[i].required = b == MDT_ELEMENT_TYPE_CMOD_REQD;
        m[i].token = tok;
        (*n)++;
    }
    *mods = m;
    return 0;
}

static int parse_shape(struct dec *d, mdt_array_shape **out)
{
    mdt_array_shape *s = dalloc(d, sizeof *s, 1);
    int e;
    if (!s)
        return nomem();
    if ((e = read_u(d, &s->rank, "array rank")))
        return e;
    if (s->rank == 0)
        return rd_fail(&d->r, MDT_EBADIMAGE, "ARRAY with rank 0");
    /* The rank is not a count of bytes that follow: without a cap, a
     * four-byte blob could ask a printer for 2^29 dimensions. */
    if (s->rank > MDT_SIG_MAX_RANK)
        return rd_fail(&d->r, MDT_EUNSUPPORTED, "ARRAY with rank %u (more than %u)", s->rank,
                       MDT_SIG_MAX_RANK);
    if ((e = read_count(d, &s->nsizes, "array size count")))
        return e;
    uint32_t *sizes = dalloc(d, sizeof *sizes, s->nsizes);
    if (!sizes)
        return nomem();
    for (uint32_t i = 0; i < s->nsizes; i++)
        if ((e = read_u(d, &sizes[i], "array size")))
            return e;
    if ((e = read_count(d, &s->nlobounds, "array lower bound count")))
        return e;
    int32_t *lo = dalloc(d, sizeof *lo, s->nlobounds);
    if (!lo)
        return nomem();
    for (uint32_t i = 0; i < s->nlobounds; i++)
        if ((e = read_signed(d, &lo[i], "array lower bound")))
            return e;
    s->sizes = sizes;
    s->lobounds = lo;
    *out = s;
    return 0;
}

static int parse_type_inner(struct dec *d, mdt_type **out)
{
    uint8_t b;
    int e;
    size_t at = d->r.pos;
    if ((e = rd_u8(&d->r, &b, "element type")))
        return e;
    mdt_type *t = new_type(d, b);
    if (!t)
        return nomem();
    switch (b) {
    case MDT_ELEMENT_TYPE_VOID:
    MDT__CASE_PRIMITIVE:
    case MDT_ELEMENT_TYPE_STRING:
    case MDT_ELEMENT_TYPE_OBJECT:
    case MDT_ELEMENT_TYPE_TYPEDBYREF:
    case MDT_ELEMENT_TYPE_I:
    case MDT_ELEMENT_TYPE_U: break;
    case MDT_ELEMENT_TYPE_PTR:
    case MDT_ELEMENT_TYPE_BYREF:
    case MDT_ELEMENT_TYPE_SZARRAY: e = parse_type(d, &t->elem); break;
    case MDT_ELEMENT_TYPE_VALUETYPE:
    case MDT_ELEMENT_TYPE_CLASS: e = read_typedeforref(d, &t->token); break;
    case MDT_ELEMENT_TYPE_VAR:
    case MDT_ELEMENT_TYPE_MVAR: e = read_u(d, &t->number, "generic parameter number"); break;
    case MDT_ELEMENT_TYPE_ARRAY: {
        mdt_array_shape *s = NULL;
        if (!(e = parse_type(d, &t->elem)) && !(e = parse_shape(d, &s)))
            t->shape = s;
        break;
    }
    case MDT_ELEMENT_TYPE_GENERICINST: {
        uint8_t k;
        mdt_type *g;
        if ((e = rd_u8(&d->r, &k, "GENERICINST kind")))
            break;
        if (k != MDT_ELEMENT_TYPE_CLASS && k != MDT_ELEMENT_TYPE_VALUETYPE) {
            d->r.pos--;
            e = rd_fail(&d->r, MDT_EBADIMAGE,
                        "GENERICINST must be followed by CLASS or VALUETYPE, not 0x%02x", k);
            break;
        }
        if (!(g = new_type(d, k)))
            return nomem();
        if ((e = read_typedeforref(d, &g->token)))
            break;
        t->elem = g;
        if ((e = read_count(d, &t->nargs, "generic argument count")))
            break;
        if (t->nargs == 0) {
            e = rd_fail(&d->r, MDT_EBADIMAGE, "GENERICINST with no type arguments");
            break;
        }
        const mdt_type **args = dalloc(d, sizeof *args, t->nargs);
        if (!args)
            return nomem();
        for (uint32_t i = 0; i < t->nargs && !e; i++)
            e = parse_type(d, &args[i]);
        t->args = args;
        break;
    }
    case MDT_ELEMENT_TYPE_FNPTR: {
        uint8_t first;
        mdt_method_sig *m = NULL;
        if (!(e = rd_u8(&d->r, &first, "FNPTR calling convention")) &&
            !(e = parse_method(d, &m, first)))
            t->method = m;
        break;
    }
    case MDT_ELEMENT_TYPE_INTERNAL: {
        /* A pointer's size: the image's, 8 bytes in raw metadata. */
        if (mdt_image_pe_info(d->img)->pe32plus || mdt_image_kind(d->img) == MDT_KIND_METADATA)
            e = rd_u64(&d->r, &t->internal, "INTERNAL pointer");
        else {
            uint32_t v = 0;
            e = rd_u32(&d->r, &v, "INTERNAL pointer");
            t->internal = v;
        }
        break;
    }
    case MDT_ELEMENT_TYPE_SENTINEL:
        d->r.pos = at;
        return rd_fail(&d->r, MDT_EBADIMAGE, "SENTINEL outside a method's parameter list");
    case MDT_ELEMENT_TYPE_PINNED:
        d->r.pos = at;
        return rd_fail(&d->r, MDT_EBADIMAGE, "PINNED outside a local variable signature");
    default: d->r.pos = at; return rd_fail(&d->r, MDT_EBADIMAGE, "unknown element type 0x%02x", b);
    }
    if (e)
        return e;
    *out = t;
    return 0;
}

/* [CustomMod]* Type */
static int parse_type(struct dec *d, const mdt_type **out)
{
    mdt_cmod *mods = NULL;
    uint16_t n = 0;
    mdt_type *t = NULL;
    int e = 0;
    if (++d->depth > MDT_SIG_MAX_DEPTH)
        return rd_fail(&d->r, MDT_EBADIMAGE, "types nested deeper than %u", MDT_SIG_MAX_DEPTH);
    if (next_is(d, MDT_ELEMENT_TYPE_CMOD_REQD) || next_is(d, MDT_ELEMENT_TYPE_CMOD_OPT))
        e = parse_mods(d, &mods, &n);
    if (!e && !(e = parse_type_inner(d, &t))) {
        t->mods = mods;
        t->nmods = n;
        *out = t;
    }
    d->depth--;
    return e;
}

/* II.23.2.1-3: after the first byte (calling convention and flags). */
static int parse_method(struct dec *d, mdt_method_sig **out, uint8_t first)
{
    mdt_method_sig *m = dalloc(d, sizeof *m, 1);
    uint32_t n;
    int e;
    if (!m)
        return nomem();
    if (++d->depth > MDT_SIG_MAX_DEPTH)
        return rd_fail(&d->r, MDT_EBADIMAGE, "signatures nested deeper than %u", MDT_SIG_MAX_DEPTH);
    m->callconv = first;
    m->sentinel = UINT32_MAX;
    if ((first & MDT_CC_GENERIC) && (e = read_u(d, &m->gen_count, "generic count")))
        return e;
    if ((e = read_count(d, &n, "parameter count")))
        return e;
    if ((e = parse_type(d, &m->ret)))
        return e;
    const mdt_type **params = dalloc(d, sizeof *params, n);
    if (!params)
        return nomem();
    for (uint32_t i = 0; i < n; i++) {
        uint8_t b;
        if ((e = peek(d, &b)))
            return e;
        if (b == MDT_ELEMENT_TYPE_SENTINEL) {
            if (m->sentinel != UINT32_MAX)
                return rd_fail(&d->r, MDT_EBADIMAGE, "second SENTINEL in a parameter list");
            m->sentinel = i;
            d->r.pos++;
        }
        if ((e = parse_type(d, &params[i])))
            return e;
    }
    /* ilasm ends a vararg signature with no vararg parameters with a
     * SENTINEL not counted in the parameter count: `...` after the last. */
    if ((first & MDT_CC_MASK) == MDT_CC_VARARG && m->sentinel == UINT32_MAX &&
        next_is(d, MDT_ELEMENT_TYPE_SENTINEL)) {
        m->sentinel = n;
        d->r.pos++;
    }
    m->nparams = n;
    m->params = params;
    d->depth--;
    *out = m;
    return 0;
}

static int parse_locals(struct dec *d, mdt_locals **out)
{
    mdt_locals *l = dalloc(d, sizeof *l, 1);
    uint32_t n;
    int e;
    if (!l)
        return nomem();
    if ((e = read_count(d, &n, "local count")))
        return e;
    mdt_local *v = dalloc(d, sizeof *v, n);
    if (!v)
        return nomem();
    for (uint32_t i = 0; i < n; i++) {
        /* ([CustomMod] [PINNED])* [BYREF] Type: modifiers and PINNED may mix. */
        mdt_cmod *mods = NULL;
        uint16_t nmods = 0;
        uint8_t b;
        for (;;) {
            mdt_cmod *more;
            uint16_t nmore;
            if ((e = parse_mods(d, &more, &nmore)))
                return e;
            if (nmore) {
                if ((uint32_t)nmods + nmore > UINT16_MAX)
                    return rd_fail(&d->r, MDT_EBADIMAGE, "too many custom modifiers");
                mdt_cmod *all = dalloc(d, sizeof *all, (size_t)nmods + nmore);
                if (!all)
                    return nomem();
                if (nmods)
                    memcpy(all, mods, nmods * sizeof *mods);
                memcpy(all + nmods, more, nmore * sizeof *more);
                mods = all;
                nmods += nmore;
            }
            if ((e = peek(d, &b)))
                return e;
            if (b != MDT_ELEMENT_TYPE_PINNED)
                break;
            v[i].pinned = true;
            d->r.pos++;
        }
        const mdt_type *t;
        if ((e = parse_type(d, &t)))
            return e;
        if (nmods) { /* modifiers read here precede the type's own */
            mdt_type *tt = (mdt_type *)t;
            if ((uint32_t)nmods + tt->nmods > UINT16_MAX)
                return rd_fail(&d->r, MDT_EBADIMAGE, "too many custom modifiers");
            mdt_cmod *all = dalloc(d, sizeof *all, (size_t)nmods + tt->nmods);
            if (!all)
                return nomem();
            memcpy(all, mods, nmods * sizeof *mods);
            if (tt->nmods) /* tt->mods is NULL without modifiers */
                memcpy(all + nmods, tt->mods, tt->nmods * sizeof *all);
            tt->mods = all;
            tt->nmods = (uint16_t)(nmods + tt->nmods);
        }
        v[i].type = t;
    }
    l->count = n;
    l->locals = v;
    *out = l;
    return 0;
}

/* Decode with d's allocator set up; out is cleared on failure. */
static int decode(struct dec *dd, mdt_sig *out, const mdt_image *img, int kind, const uint8_t *blob,
                  uint32_t len, uint32_t blob_index)
{
#define d (*dd)
    uint8_t first;
    int e;
    memset(out, 0, sizeof *out);
    d.img = img;
    /* Named "#Blob[0x<index>]" only if something fails (see below). */
    d.r =
        rd_make(mdt__md(img)->name, "#Blob", blob, len, mdt__blob_file_offset(mdt__md(img), blob));
    out->kind = kind;
    switch (kind) {
    case MDT_SIG_TYPESPEC: e = parse_type(&d, &out->type); break;
    case MDT_SIG_FIELD:
        if (!(e = rd_u8(&d.r, &first, "field signature")) && (first & MDT_CC_MASK) != MDT_CC_FIELD)
            e = rd_fail(&d.r, MDT_EBADIMAGE, "field signature starts with 0x%02x, not 0x06", first);
        if (!e)
            e = parse_type(&d, &out->type);
        break;
    case MDT_SIG_METHOD:
    case MDT_SIG_PROPERTY: {
        mdt_method_sig *m = NULL;
        if ((e = rd_u8(&d.r, &first, "calling convention")))
            break;
        unsigned cc = first & MDT_CC_MASK;
        if (kind == MDT_SIG_PROPERTY ? cc != MDT_CC_PROPERTY
                                     : (cc > MDT_CC_VARARG && cc != MDT_CC_UNMANAGED)) {
            d.r.pos--;
            e = rd_fail(&d.r, MDT_EBADIMAGE, "0x%02x does not start a %s signature", first,
                        kind == MDT_SIG_PROPERTY ? "property" : "method");
            break;
        }
        if (!(e = parse_method(&d, &m, first)))
            out->method = m;
        break;
    }
    case MDT_SIG_LOCALS: {
        mdt_locals *l = NULL;
        if (!(e = rd_u8(&d.r, &first, "local signature")) && first != MDT_CC_LOCAL_SIG)
            e = rd_fail(&d.r, MDT_EBADIMAGE, "local signature starts with 0x%02x, not 0x07", first);
        if (!e && !(e = parse_locals(&d, &l)))
            out->locals = l;
        break;
    }
    case MDT_SIG_METHODSPEC: {
        uint32_t n;
        if (!(e = rd_u8(&d.r, &first, "MethodSpec")) && first != MDT_CC_GENERICINST)
            e = rd_fail(&d.r, MDT_EBADIMAGE, "MethodSpec blob starts with 0x%02x, not 0x0a", first);
        if (e || (e = read_count(&d, &n, "generic argument count")))
            break;
        if (n == 0) {
            e = rd_fail(&d.r, MDT_EBADIMAGE, "MethodSpec with no type arguments");
            break;
        }
        const mdt_type **args = dalloc(&d, sizeof *args, n);
        if (!args) {
            e = nomem();
            break;
        }
        for (uint32_t i = 0; i < n && !e; i++)
            e = parse_type(&d, &args[i]);
        out->nargs = n;
        out->args = args;
        break;
    }
    default: e = mdt__fail_simple(MDT_EINVAL, "unknown signature kind %d", kind);
    }
    if (e) {
        if (d.arena_full)
            e = mdt__fail_simple(MDT_ENOMEM, "signature tree larger than the %zu-byte arena",
                                 d.arena_size);
        else if (!strcmp(mdt_error_last()->region, "#Blob"))
            e = mdt__blob_fail_named(img, blob, len, blob_index);
        memset(out, 0, sizeof *out);
    }
    return e;
#undef d
}

int mdt_sig_decode(void *mem_ctx, mdt_sig *out, const mdt_image *img, int kind, const uint8_t *blob,
                   uint32_t len, uint32_t blob_index)
{
    struct dec d = {0};
    /* The context is also the first block of the bump allocator, sized
     * for typical trees of this blob length: the whole tree is usually
     * one allocation, freed with the context. */
    size_t first_block = 128 + (size_t)(len < 512 ? len : 512) * 32;
    void *tmp = talloc_size(mem_ctx, first_block);
    int e;
    if (!tmp) {
        memset(out, 0, sizeof *out);
        return nomem();
    }
    talloc_set_name_const(tmp, "mdt_sig");
    d.ctx = tmp;
    d.cur = tmp;
    d.end = (char *)tmp + first_block;
    if ((e = decode(&d, out, img, kind, blob, len, blob_index)))
        talloc_free(tmp);
    return e;
}

int mdt_sig_decode_buf(void *arena, size_t size, mdt_sig *out, const mdt_image *img, int kind,
                       const uint8_t *blob, uint32_t len, uint32_t blob_index)
{
    struct dec d;
    d.ctx = NULL;
    d.arena_full = false;
    d.depth = 0;
    /* Align the start; dalloc keeps 8-byte steps from there. */
    uintptr_t a = ((uintptr_t)arena + 7) & ~(uintptr_t)7;
    if (!arena || size < a - (uintptr_t)arena) {
        memset(out, 0, sizeof *out);
        return mdt__fail_simple(MDT_EINVAL, "no arena to decode into");
    }
    d.cur = (char *)a;
    d.end = (char *)arena + size;
    d.arena_size = size;
    return decode(&d, out, img, kind, blob, len, blob_index);
}
