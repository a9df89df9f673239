/* Signatures printed straight from their blobs (ECMA-335 II.23.2), the
 * way SRM's SignatureDecoder hands each element to its provider: no tree
 * is built, each element is checked and printed as it is read. It prints
 * what almost every signature holds (the full style; MethodDefSig,
 * MethodRefSig, PropertySig and FieldSig with the default calling
 * convention, TypeSpec and MethodSpec blobs; primitives, classes and value
 * types, pointers, byrefs, vectors, generic parameters and instantiations)
 * with the text members.c and typetree.c print for the tree, and checks
 * every byte the decoder (decode.c) checks. Anything else (custom
 * modifiers, general arrays, function pointers, other calling conventions
 * and vararg sentinels, locals, another style), and any check or print
 * that fails, is left to the tree: the output goes back to where it was
 * and the failures recorded meanwhile are forgotten, so the tree path
 * prints the same text or records the same located error as before. The
 * tree cost a third of the instructions a signature name took (bench/
 * README.md, issue 28, branch sig6). */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <mdtools/names.h>
#include <mdtools/sig.h>
#include <mdtools/tables.h>

#include "generics/fmt_int.h"
#include "generics/gen_int.h"
#include "util/error.h"
#include "util/strbuf.h"

/* Nesting followed here; deeper blobs (the decoder allows
 * MDT_SIG_MAX_DEPTH) go to the tree. */
#define TEXT_MAX_DEPTH 32

struct text {
    struct fmt *f;
    const struct mdt_image *img;
    const uint8_t *p, *end; /* the blob's bytes not yet read */
    unsigned depth;
    uint32_t rows[3]; /* TypeDef, TypeRef, TypeSpec */
};

/* The primitive element types' names in the full style, plain and
 * friendly (typetree.c's prim_name), with their lengths; padded to a fixed
 * size, copied whole where the output has room (no call to memcpy). */
struct word {
    char s[23];
    uint8_t n;
};
#define W(s)                                                                                       \
    {                                                                                              \
        s, sizeof s - 1                                                                            \
    }
static const struct word full_words[MDT_ELEMENT_TYPE_OBJECT + 1] = {
    [MDT_ELEMENT_TYPE_VOID] = W("System.Void"),
    [MDT_ELEMENT_TYPE_BOOLEAN] = W("System.Boolean"),
    [MDT_ELEMENT_TYPE_CHAR] = W("System.Char"),
    [MDT_ELEMENT_TYPE_I1] = W("System.SByte"),
    [MDT_ELEMENT_TYPE_U1] = W("System.Byte"),
    [MDT_ELEMENT_TYPE_I2] = W("System.Int16"),
    [MDT_ELEMENT_TYPE_U2] = W("System.UInt16"),
    [MDT_ELEMENT_TYPE_I4] = W("System.Int32"),
    [MDT_ELEMENT_TYPE_U4] = W("System.UInt32"),
    [MDT_ELEMENT_TYPE_I8] = W("System.Int64"),
    [MDT_ELEMENT_TYPE_U8] = W("System.UInt64"),
    [MDT_ELEMENT_TYPE_R4] = W("System.Single"),
    [MDT_ELEMENT_TYPE_R8] = W("System.Double"),
    [MDT_ELEMENT_TYPE_STRING] = W("System.String"),
    [MDT_ELEMENT_TYPE_TYPEDBYREF] = W("System.TypedReference"),
    [MDT_ELEMENT_TYPE_I] = W("System.IntPtr"),
    [MDT_ELEMENT_TYPE_U] = W("System.UIntPtr"),
    [MDT_ELEMENT_TYPE_OBJECT] = W("System.Object")};
static const struct word cs_words[MDT_ELEMENT_TYPE_OBJECT + 1] = {
    [MDT_ELEMENT_TYPE_VOID] = W("void"),
    [MDT_ELEMENT_TYPE_BOOLEAN] = W("bool"),
    [MDT_ELEMENT_TYPE_CHAR] = W("char"),
    [MDT_ELEMENT_TYPE_I1] = W("sbyte"),
    [MDT_ELEMENT_TYPE_U1] = W("byte"),
    [MDT_ELEMENT_TYPE_I2] = W("short"),
    [MDT_ELEMENT_TYPE_U2] = W("ushort"),
    [MDT_ELEMENT_TYPE_I4] = W("int"),
    [MDT_ELEMENT_TYPE_U4] = W("uint"),
    [MDT_ELEMENT_TYPE_I8] = W("long"),
    [MDT_ELEMENT_TYPE_U8] = W("ulong"),
    [MDT_ELEMENT_TYPE_R4] = W("float"),
    [MDT_ELEMENT_TYPE_R8] = W("double"),
    [MDT_ELEMENT_TYPE_STRING] = W("string"),
    [MDT_ELEMENT_TYPE_TYPEDBYREF] = W("TypedReference"),
    [MDT_ELEMENT_TYPE_I] = W("nint"),
    [MDT_ELEMENT_TYPE_U] = W("nuint"),
    [MDT_ELEMENT_TYPE_OBJECT] = W("object")};
#undef W

/* II.23.2 compressed unsigned integer; false where rd_compressed fails. */
static inline bool read_u(struct text *t, uint32_t *v)
{
    const uint8_t *p = t->p;
    size_t left = (size_t)(t->end - p);
    if (!left)
        return false;
    if (!(p[0] & 0x80)) {
        *v = p[0];
        t->p = p + 1;
        return true;
    }
    if ((p[0] & 0xC0) == 0x80) {
        if (left < 2)
            return false;
        *v = (uint32_t)(p[0] & 0x3F) << 8 | p[1];
        t->p = p + 2;
        return true;
    }
    if ((p[0] & 0xE0) == 0xC0) {
        if (left < 4)
            return false;
        *v = (uint32_t)(p[0] & 0x1F) << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
        t->p = p + 4;
        return true;
    }
    return false;
}

/* A count of items of at least a byte each (decode.c's read_count). */
static inline bool read_count(struct text *t, uint32_t *n)
{
    return read_u(t, n) && *n <= (size_t)(t->end - t->p);
}

/* II.23.2.8 TypeDefOrRefOrSpecEncoded, a row of its table. */
static inline bool read_typedeforref(struct text *t, uint32_t *token)
{
    static const uint8_t tables[3] = {MDT_TABLE_TypeDef, MDT_TABLE_TypeRef, MDT_TABLE_TypeSpec};
    uint32_t v, tag, rid;
    if (!read_u(t, &v))
        return false;
    tag = v & 3;
    rid = v >> 2;
    if (tag == 3 || rid == 0 || rid > t->rows[tag])
        return false;
    *token = (uint32_t)tables[tag] << 24 | rid;
    return true;
}

/* A TypeDef, TypeRef or TypeSpec as fmt_token prints it; a cached name
 * copied here without the call. */
static inline bool put_token(struct text *t, uint32_t token, int kind, bool own)
{
    struct fmt *f = t->f;
    const mdt_name_cache *c = f->cache;
    uint32_t rid = token & 0xFFFFFF;
    if (f->out.failed) /* fmt_type prints nothing more */
        return true;
    if (!f->home) /* as fmt_token does first */
        f->home = t->img;
    if (c && c->img == t->img) {
        const struct cached *slot = NULL;
        if (token >> 24 == MDT_TABLE_TypeDef)
            slot = rid <= c->ntd ? &c->td[rid] : NULL;
        else if (token >> 24 == MDT_TABLE_TypeRef)
            slot = rid <= c->ntr ? &c->tr[rid] : NULL;
        if (slot && slot->s) {
            sb_add(&f->out, slot->s, own ? slot->len : slot->bare);
            return true;
        }
    }
    return fmt_token(f, t->img, token, kind, own) == 0;
}

/* `!3`, `!!0`, or what the caller's generic context makes of it. */
static bool put_generic_param(struct text *t, uint8_t kind, uint32_t number)
{
    struct fmt *f = t->f;
    if (f->out.failed)
        return true;
    if (f->g) { /* substituted or named: typetree.c's business */
        mdt_type node = {0};
        node.kind = kind;
        node.number = number;
        node.img = t->img;
        return fmt_type(f, &node) == 0;
    }
    sb_add(&f->out, "!!", kind == MDT_ELEMENT_TYPE_MVAR ? 2 : 1);
    fmt_put_u32(&f->out, number);
    return true;
}

static bool put_type_node(struct text *t, uint8_t b);

/* Type (II.23.2.12) without custom modifiers. A primitive, the most common
 * element, inline at the caller; the rest in put_type_node. */
static inline bool put_type(struct text *t)
{
    sb *out = &t->f->out;
    uint8_t b;
    if (t->p == t->end)
        return false;
    b = *t->p++;
    if (b <= MDT_ELEMENT_TYPE_OBJECT && full_words[b].n) {
        const struct word *w = (t->f->flags & MDT_NAME_FRIENDLY) ? &cs_words[b] : &full_words[b];
        if (sizeof w->s < out->cap - out->len && !out->failed) {
            memcpy(out->buf + out->len, w->s, sizeof w->s);
            out->len += w->n;
            out->buf[out->len] = '\0';
        } else {
            sb_add(out, w->s, w->n);
        }
        return true;
    }
    return put_type_node(t, b);
}

/* The element types that are not primitives; b is read. */
static bool put_type_node(struct text *t, uint8_t b)
{
    sb *out = &t->f->out;
    uint32_t token, n;
    bool ok = false;
    if (++t->depth > TEXT_MAX_DEPTH)
        return false;
    switch (b) {
    case MDT_ELEMENT_TYPE_PTR:
    case MDT_ELEMENT_TYPE_BYREF:
    case MDT_ELEMENT_TYPE_SZARRAY:
        if ((ok = put_type(t))) {
            if (b == MDT_ELEMENT_TYPE_SZARRAY)
                sb_add(out, "[]", 2);
            else
                sb_addc(out, b == MDT_ELEMENT_TYPE_PTR ? '*' : '&');
        }
        break;
    case MDT_ELEMENT_TYPE_VALUETYPE:
    case MDT_ELEMENT_TYPE_CLASS:
        ok = read_typedeforref(t, &token) && put_token(t, token, b, true);
        break;
    case MDT_ELEMENT_TYPE_VAR:
    case MDT_ELEMENT_TYPE_MVAR: ok = read_u(t, &n) && put_generic_param(t, b, n); break;
    case MDT_ELEMENT_TYPE_GENERICINST: {
        uint8_t k;
        if (t->p == t->end)
            break;
        k = *t->p++;
        if ((k != MDT_ELEMENT_TYPE_CLASS && k != MDT_ELEMENT_TYPE_VALUETYPE) ||
            !read_typedeforref(t, &token) || !read_count(t, &n) || n == 0 ||
            !put_token(t, token, k, false))
            break;
        sb_addc(out, '<');
        ok = true;
        for (uint32_t i = 0; i < n && ok; i++) {
            if (i)
                sb_addc(out, ',');
            ok = put_type(t);
        }
        sb_addc(out, '>');
        break;
    }
    default: break; /* the tree's: modifiers, ARRAY, FNPTR, INTERNAL, errors */
    }
    t->depth--;
    return ok;
}

/* II.23.2.1-3, 5 after the first byte, with the default calling
 * convention (or a property's): members.c's method_sig. */
static bool put_method(struct text *t, uint8_t first)
{
    sb *out = &t->f->out;
    uint32_t gen = 0, n;
    if (++t->depth > TEXT_MAX_DEPTH)
        return false;
    if ((first & MDT_CC_GENERIC) && !read_u(t, &gen))
        return false;
    if (!read_count(t, &n))
        return false;
    if (first & MDT_CC_HASTHIS)
        sb_add(out, "instance ", 9);
    if (first & MDT_CC_EXPLICITTHIS)
        sb_add(out, "explicit ", 9);
    if (first & MDT_CC_GENERIC) {
        sb_add(out, "generic<", 8);
        fmt_put_u32(out, gen);
        sb_add(out, "> ", 2);
    }
    if (!put_type(t))
        return false;
    sb_addc(out, '(');
    for (uint32_t i = 0; i < n; i++) {
        if (t->p < t->end && *t->p == MDT_ELEMENT_TYPE_SENTINEL)
            return false;
        if (i)
            sb_addc(out, ',');
        if (!put_type(t))
            return false;
    }
    sb_addc(out, ')');
    t->depth--;
    return true;
}

static bool put_sig(struct text *t, int kind)
{
    uint8_t first;
    uint32_t n;
    if (kind == MDT_SIG_TYPESPEC)
        return put_type(t);
    if (kind == MDT_SIG_LOCALS || t->p == t->end)
        return false;
    first = *t->p++;
    switch (kind) {
    case MDT_SIG_METHOD: return (first & MDT_CC_MASK) == MDT_CC_DEFAULT && put_method(t, first);
    case MDT_SIG_PROPERTY: return (first & MDT_CC_MASK) == MDT_CC_PROPERTY && put_method(t, first);
    case MDT_SIG_FIELD: return (first & MDT_CC_MASK) == MDT_CC_FIELD && put_type(t);
    case MDT_SIG_METHODSPEC: {
        bool ok = true;
        if (first != MDT_CC_GENERICINST || !read_count(t, &n) || n == 0)
            return false;
        sb_addc(&t->f->out, '<');
        for (uint32_t i = 0; i < n && ok; i++) {
            if (i)
                sb_addc(&t->f->out, ',');
            ok = put_type(t);
        }
        sb_addc(&t->f->out, '>');
        return ok;
    }
    default: return false;
    }
}

int fmt_sig_text(struct fmt *f, const struct mdt_image *img, uint32_t token, int kind,
                 const uint8_t *blob, uint32_t len)
{
    uint64_t stamp = mdt__err_stamp();
    size_t start = f->out.len;
    uint32_t index;
    struct text t;
    if (f->style != MDT_STYLE_FULL || f->out.failed)
        return FMT_TEXT_TREE;
    if (token && mdt__sig_blob(img, token, &kind, &blob, &len, &index) != 0) {
        mdt__err_back_to(stamp);
        return FMT_TEXT_TREE;
    }
    t.f = f;
    t.img = img;
    t.p = blob;
    t.end = blob + len;
    t.depth = 0;
    t.rows[0] = mdt_table_rows(img, MDT_TABLE_TypeDef);
    t.rows[1] = mdt_table_rows(img, MDT_TABLE_TypeRef);
    t.rows[2] = mdt_table_rows(img, MDT_TABLE_TypeSpec);
    if (put_sig(&t, kind))
        return FMT_TEXT_DONE;
    /* Back to where the tree starts: its text, its failure. */
    f->out.failed = f->out.too_long = false;
    if (f->out.buf) {
        f->out.len = start;
        f->out.buf[start] = '\0';
    }
    mdt__err_back_to(stamp);
    return FMT_TEXT_TREE;
}
