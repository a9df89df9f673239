/* Signature blobs to type trees (ECMA-335 II.23.2): MethodDefSig,
 * MethodRefSig (SENTINEL, vararg parameters), StandAloneMethodSig,
 * FieldSig, PropertySig, LocalVarSig, TypeSpec and MethodSpec blobs.
 *
 * The blob is untrusted: recursion is capped at MDT_SIG_MAX_DEPTH, every
 * count is checked against the bytes left before anything is allocated
 * (each element needs at least one byte), every token is checked against
 * its table, and a failure names the blob and the offset inside it. */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <talloc.h>

#include <mdtools/sig.h>
#include <mdtools/tables.h>

#include "image/image_int.h"

struct dec {
    void *ctx;
    const struct mdt_image *img;
    rd r;
    unsigned depth;
    char region[40];
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

/* A count of items that each take at least one byte. */
static int read_count(struct dec *d, uint32_t *n, const char *what)
{
    int e = rd_compressed(&d->r, n, what);
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
    int e = rd_compressed(&d->r, &u, what);
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
    int e = rd_compressed(&d->r, &v, "TypeDefOrRefOrSpec");
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

static mdt_type *new_type(struct dec *d, uint8_t kind)
{
    mdt_type *t = talloc_zero(d->ctx, mdt_type);
    if (t) {
        t->kind = kind;
        t->img = d->img;
    }
    return t;
}

static int parse_type(struct dec *d, const mdt_type **out);
static int parse_method(struct dec *d, mdt_method_sig **out, uint8_t first);

/* Custom modifiers before a type: collected, then attached to it. */
static int parse_mods(struct dec *d, mdt_cmod **mods, uint16_t *n)
{
    uint8_t b;
    *mods = NULL;
    *n = 0;
    while (peek(d, &b) == 0 && (b == MDT_ELEMENT_TYPE_CMOD_REQD || b == MDT_ELEMENT_TYPE_CMOD_OPT)) {
        uint32_t tok;
        int e;
        d->r.pos++;
        if ((e = read_typedeforref(d, &tok)))
            return e;
        if (*n == UINT16_MAX)
            return rd_fail(&d->r, MDT_EBADIMAGE, "more than %u custom modifiers", UINT16_MAX);
        mdt_cmod *m = talloc_realloc(d->ctx, *mods, mdt_cmod, *n + 1u);
        if (!m)
            return nomem();
        m[*n].required = b == MDT_ELEMENT_TYPE_CMOD_REQD;
        m[*n].token = tok;
        *mods = m;
        (*n)++;
    }
    return 0;
}

static int parse_shape(struct dec *d, mdt_array_shape **out)
{
    mdt_array_shape *s = talloc_zero(d->ctx, mdt_array_shape);
    int e;
    if (!s)
        return nomem();
    if ((e = rd_compressed(&d->r, &s->rank, "array rank")))
        return e;
    if (s->rank == 0)
        return rd_fail(&d->r, MDT_EBADIMAGE, "ARRAY with rank 0");
    if ((e = read_count(d, &s->nsizes, "array size count")))
        return e;
    uint32_t *sizes = talloc_array(s, uint32_t, s->nsizes ? s->nsizes : 1);
    if (!sizes)
        return nomem();
    for (uint32_t i = 0; i < s->nsizes; i++)
        if ((e = rd_compressed(&d->r, &sizes[i], "array size")))
            return e;
    if ((e = read_count(d, &s->nlobounds, "array lower bound count")))
        return e;
    int32_t *lo = talloc_array(s, int32_t, s->nlobounds ? s->nlobounds : 1);
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
    case MDT_ELEMENT_TYPE_VOID: case MDT_ELEMENT_TYPE_BOOLEAN: case MDT_ELEMENT_TYPE_CHAR:
    case MDT_ELEMENT_TYPE_I1: case MDT_ELEMENT_TYPE_U1: case MDT_ELEMENT_TYPE_I2:
    case MDT_ELEMENT_TYPE_U2: case MDT_ELEMENT_TYPE_I4: case MDT_ELEMENT_TYPE_U4:
    case MDT_ELEMENT_TYPE_I8: case MDT_ELEMENT_TYPE_U8: case MDT_ELEMENT_TYPE_R4:
    case MDT_ELEMENT_TYPE_R8: case MDT_ELEMENT_TYPE_STRING: case MDT_ELEMENT_TYPE_OBJECT:
    case MDT_ELEMENT_TYPE_TYPEDBYREF: case MDT_ELEMENT_TYPE_I: case MDT_ELEMENT_TYPE_U:
        break;
    case MDT_ELEMENT_TYPE_PTR: case MDT_ELEMENT_TYPE_BYREF: case MDT_ELEMENT_TYPE_SZARRAY:
        e = parse_type(d, &t->elem);
        break;
    case MDT_ELEMENT_TYPE_VALUETYPE: case MDT_ELEMENT_TYPE_CLASS:
        e = read_typedeforref(d, &t->token);
        break;
    case MDT_ELEMENT_TYPE_VAR: case MDT_ELEMENT_TYPE_MVAR:
        e = rd_compressed(&d->r, &t->number, "generic parameter number");
        break;
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
        const mdt_type **args = talloc_array(t, const mdt_type *, t->nargs);
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
        const struct mdt_image *img = d->img;
        if (img->pe.pe32plus || img->kind == MDT_KIND_METADATA)
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
    default:
        d->r.pos = at;
        return rd_fail(&d->r, MDT_EBADIMAGE, "unknown element type 0x%02x", b);
    }
    if (e)
        return e;
    *out = t;
    return 0;
}

/* [CustomMod]* Type */
static int parse_type(struct dec *d, const mdt_type **out)
{
    mdt_cmod *mods;
    uint16_t n;
    mdt_type *t = NULL;
    int e;
    if (++d->depth > MDT_SIG_MAX_DEPTH)
        return rd_fail(&d->r, MDT_EBADIMAGE, "types nested deeper than %u", MDT_SIG_MAX_DEPTH);
    if (!(e = parse_mods(d, &mods, &n)) && !(e = parse_type_inner(d, &t))) {
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
    mdt_method_sig *m = talloc_zero(d->ctx, mdt_method_sig);
    uint32_t n;
    int e;
    if (!m)
        return nomem();
    if (++d->depth > MDT_SIG_MAX_DEPTH)
        return rd_fail(&d->r, MDT_EBADIMAGE, "signatures nested deeper than %u",
                       MDT_SIG_MAX_DEPTH);
    m->callconv = first;
    m->sentinel = UINT32_MAX;
    if ((first & MDT_CC_GENERIC) && (e = rd_compressed(&d->r, &m->gen_count, "generic count")))
        return e;
    if ((e = read_count(d, &n, "parameter count")))
        return e;
    if ((e = parse_type(d, &m->ret)))
        return e;
    const mdt_type **params = talloc_array(m, const mdt_type *, n ? n : 1);
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
    m->nparams = n;
    m->params = params;
    d->depth--;
    *out = m;
    return 0;
}

static int parse_locals(struct dec *d, mdt_locals **out)
{
    mdt_locals *l = talloc_zero(d->ctx, mdt_locals);
    uint32_t n;
    int e;
    if (!l)
        return nomem();
    if ((e = read_count(d, &n, "local count")))
        return e;
    mdt_local *v = talloc_zero_array(l, mdt_local, n ? n : 1);
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
                mdt_cmod *all = talloc_realloc(d->ctx, mods, mdt_cmod, nmods + nmore);
                if (!all)
                    return nomem();
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
            mdt_cmod *all = talloc_realloc(d->ctx, mods, mdt_cmod, nmods + tt->nmods);
            if (!all || (uint32_t)nmods + tt->nmods > UINT16_MAX)
                return all ? rd_fail(&d->r, MDT_EBADIMAGE, "too many custom modifiers") : nomem();
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

int mdt_sig_decode(void *mem_ctx, mdt_sig *out, const mdt_image *img, int kind,
                   const uint8_t *blob, uint32_t len, uint32_t blob_index)
{
    struct dec d = {0};
    void *tmp = talloc_new(mem_ctx);
    uint8_t first;
    int e;
    if (!tmp)
        return nomem();
    memset(out, 0, sizeof *out);
    d.ctx = tmp;
    d.img = img;
    snprintf(d.region, sizeof d.region, "#Blob[0x%x]", blob_index);
    uint64_t foff = UINT64_MAX;
    if (img->blob.present && blob >= img->blob.base && blob <= img->blob.base + img->blob.size)
        foff = img->mdi.file_offset + img->blob.offset + (uint64_t)(blob - img->blob.base);
    d.r = rd_make(img, d.region, blob, len, foff);
    out->kind = kind;
    switch (kind) {
    case MDT_SIG_TYPESPEC:
        e = parse_type(&d, &out->type);
        break;
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
        const mdt_type **args = talloc_array(tmp, const mdt_type *, n);
        if (!args)
            return talloc_free(tmp), nomem();
        for (uint32_t i = 0; i < n && !e; i++)
            e = parse_type(&d, &args[i]);
        out->nargs = n;
        out->args = args;
        break;
    }
    default:
        e = mdt__fail_simple(MDT_EINVAL, "unknown signature kind %d", kind);
    }
    if (e) {
        talloc_free(tmp);
        memset(out, 0, sizeof *out);
        return e;
    }
    /* The tree lives under one context: hand it to the caller. */
    talloc_steal(mem_ctx, tmp);
    return 0;
}

int mdt_sig_of_token(void *mem_ctx, mdt_sig *out, const mdt_image *img, uint32_t token)
{
    unsigned table = token >> 24, col;
    int kind;
    mdt_row r;
    const uint8_t *blob;
    uint32_t len;
    int e;
    switch (table) {
    case MDT_TABLE_MethodDef: col = MDT_COL_MethodDef_Signature; kind = MDT_SIG_METHOD; break;
    case MDT_TABLE_MemberRef: col = MDT_COL_MemberRef_Signature; kind = -1; break;
    case MDT_TABLE_Field: col = MDT_COL_Field_Signature; kind = MDT_SIG_FIELD; break;
    case MDT_TABLE_Property: col = MDT_COL_Property_Type; kind = MDT_SIG_PROPERTY; break;
    case MDT_TABLE_StandAloneSig: col = MDT_COL_StandAloneSig_Signature; kind = -1; break;
    case MDT_TABLE_TypeSpec: col = MDT_COL_TypeSpec_Signature; kind = MDT_SIG_TYPESPEC; break;
    case MDT_TABLE_MethodSpec:
        col = MDT_COL_MethodSpec_Instantiation;
        kind = MDT_SIG_METHODSPEC;
        break;
    default:
        return mdt__fail_simple(MDT_EINVAL, "token 0x%08x carries no signature", token);
    }
    if ((e = mdt_row_get(&r, img, table, token & 0x00FFFFFFu)) ||
        (e = mdt_row_blob(&r, col, &blob, &len)))
        return e;
    if (kind < 0) {
        if (len == 0) {
            mdt_place pl = MDT_PLACE_NONE;
            pl.img = img;
            pl.region = mdt_table_schema_get(table)->name;
            pl.row = token & 0x00FFFFFFu;
            return mdt__fail(MDT_EBADIMAGE, pl, "empty signature blob");
        }
        if (table == MDT_TABLE_MemberRef)
            kind = (blob[0] & MDT_CC_MASK) == MDT_CC_FIELD ? MDT_SIG_FIELD : MDT_SIG_METHOD;
        else
            kind = blob[0] == MDT_CC_LOCAL_SIG ? MDT_SIG_LOCALS : MDT_SIG_METHOD;
    }
    return mdt_sig_decode(mem_ctx, out, img, kind, blob, len, mdt_row_raw(&r, col));
}
