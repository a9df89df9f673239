/* Portable type-argument descriptors as text (doc/names.md), both ways:
 * "mvid:0xTOKEN<...>" with the primitives of II.23.1.16 by name
 * (`I4`, `STRING`), `__Canon`, and the shapes `T[]`, `T[N]`, `T*`, `T&`.
 * Text is untrusted: parsing is bounded, nesting is capped, and a failure
 * says at which column it stopped. The descriptors themselves, and what
 * they become, are descriptor.c's. */
#include "config.h"

#include <stdbool.h>
#include <string.h>
#include <talloc.h>

#include <mdtools/assembly.h>
#include <mdtools/descriptor.h>
#include <mdtools/image.h>
#include <mdtools/sig.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>

#include "generics/desc_int.h"
#include "util/error.h"
#include "util/strbuf.h"

#define MAX_RANK MDT_SIG_MAX_RANK

static int nomem(void)
{
    return mdt__fail_simple(MDT_ENOMEM, "out of memory");
}

static const struct {
    const char *name;
    uint8_t et;
} prims[] = {
    {"I1", MDT_ELEMENT_TYPE_I1},         {"U1", MDT_ELEMENT_TYPE_U1},
    {"I2", MDT_ELEMENT_TYPE_I2},         {"U2", MDT_ELEMENT_TYPE_U2},
    {"I4", MDT_ELEMENT_TYPE_I4},         {"U4", MDT_ELEMENT_TYPE_U4},
    {"I8", MDT_ELEMENT_TYPE_I8},         {"U8", MDT_ELEMENT_TYPE_U8},
    {"R4", MDT_ELEMENT_TYPE_R4},         {"R8", MDT_ELEMENT_TYPE_R8},
    {"I", MDT_ELEMENT_TYPE_I},           {"U", MDT_ELEMENT_TYPE_U},
    {"CHAR", MDT_ELEMENT_TYPE_CHAR},     {"BOOLEAN", MDT_ELEMENT_TYPE_BOOLEAN},
    {"STRING", MDT_ELEMENT_TYPE_STRING}, {"OBJECT", MDT_ELEMENT_TYPE_OBJECT},
    {"VOID", MDT_ELEMENT_TYPE_VOID},     {"TYPEDBYREF", MDT_ELEMENT_TYPE_TYPEDBYREF},
};

const char *mdt__desc_prim_name(uint8_t et)
{
    for (size_t i = 0; i < sizeof prims / sizeof prims[0]; i++)
        if (prims[i].et == et)
            return prims[i].name;
    return NULL;
}

struct dp {
    void *ctx;
    const char *s;
    size_t len, pos;
    mdt_mvid_lookup lookup;
    void *payload;
};

static int dp_fail(const struct dp *p, int code, const char *what)
{
    mdt_place pl = MDT_PLACE_NONE;
    pl.region = "descriptor";
    pl.offset = p->pos;
    return mdt__fail(code, pl, "column %zu: %s", p->pos + 1, what);
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static bool is_word(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

static int parse_desc(struct dp *p, mdt_desc **out, unsigned depth);

static int parse_ref(struct dp *p, mdt_desc *d, unsigned depth)
{
    uint8_t mvid[16];
    uint8_t raw[16];
    const mdt_image *img = NULL;
    int e;
    for (int i = 0; i < 16; i++)
        raw[i] = (uint8_t)(hexval(p->s[p->pos + 2 * i]) << 4 | hexval(p->s[p->pos + 2 * i + 1]));
    /* Canonical text order to #GUID byte order: Data1..3 are little-endian. */
    mvid[0] = raw[3], mvid[1] = raw[2], mvid[2] = raw[1], mvid[3] = raw[0];
    mvid[4] = raw[5], mvid[5] = raw[4], mvid[6] = raw[7], mvid[7] = raw[6];
    memcpy(mvid + 8, raw + 8, 8);
    size_t mvid_at = p->pos;
    p->pos += 33; /* 32 digits and ':' */
    if (p->len - p->pos < 10 || p->s[p->pos] != '0' || (p->s[p->pos + 1] | 0x20) != 'x')
        return dp_fail(p, MDT_EINVAL, "expected a token 0x followed by 8 hex digits");
    size_t tok_at = p->pos;
    p->pos += 2;
    uint32_t token = 0;
    for (int i = 0; i < 8; i++, p->pos++) {
        int h = hexval(p->s[p->pos]);
        if (h < 0)
            return dp_fail(p, MDT_EINVAL, "expected a hex digit in the token");
        token = token << 4 | (uint32_t)h;
    }
    if (p->pos < p->len && is_word(p->s[p->pos]))
        return dp_fail(p, MDT_EINVAL, "token longer than 8 hex digits");
    if (!p->lookup) {
        p->pos = mvid_at;
        return dp_fail(p, MDT_ENOTFOUND, "no MVID lookup given");
    }
    if ((e = p->lookup(p->payload, &img, mvid)) || !img) {
        p->pos = mvid_at;
        return dp_fail(p, e && e != MDT_ENOTFOUND ? e : MDT_ENOTFOUND, "unknown MVID");
    }
    if (MDT_TOKEN_TABLE(token) != MDT_TABLE_TypeDef || MDT_TOKEN_RID(token) == 0) {
        p->pos = tok_at;
        return dp_fail(p, MDT_EINVAL, "token is not a TypeDef (0x02......)");
    }
    if (MDT_TOKEN_RID(token) > mdt_table_rows(img, MDT_TABLE_TypeDef)) {
        p->pos = tok_at;
        return dp_fail(p, MDT_ENOTFOUND, "TypeDef row beyond the module's TypeDef table");
    }
    d->kind = MDT_DESC_TYPEDEF;
    d->img = img;
    d->token = token;
    if (p->pos < p->len && p->s[p->pos] == '<') {
        mdt_desc **args = NULL;
        uint32_t n = 0;
        p->pos++;
        for (;;) {
            mdt_desc *a;
            if ((e = parse_desc(p, &a, depth + 1)))
                return e;
            mdt_desc **more = talloc_realloc(p->ctx, args, mdt_desc *, n + 1);
            if (!more)
                return nomem();
            args = more;
            args[n++] = a;
            if (p->pos < p->len && p->s[p->pos] == ',') {
                p->pos++;
                continue;
            }
            if (p->pos < p->len && p->s[p->pos] == '>') {
                p->pos++;
                break;
            }
            return dp_fail(p, MDT_EINVAL, "expected ',' or '>'");
        }
        d->nargs = n;
        d->args = (const mdt_desc *const *)args;
    }
    return 0;
}

static int parse_desc(struct dp *p, mdt_desc **out, unsigned depth)
{
    mdt_desc *d;
    int e;
    if (depth > MDT_SIG_MAX_DEPTH)
        return dp_fail(p, MDT_EINVAL, "descriptor nested too deeply");
    if (!(d = talloc_zero(p->ctx, mdt_desc)))
        return nomem();
    size_t start = p->pos, end = p->pos;
    while (end < p->len && is_word(p->s[end]))
        end++;
    size_t n = end - start;
    if (n == 32 && end < p->len && p->s[end] == ':') {
        for (size_t i = start; i < end; i++)
            if (hexval(p->s[i]) < 0) {
                p->pos = i;
                return dp_fail(p, MDT_EINVAL, "expected a hex digit in the MVID");
            }
        if ((e = parse_ref(p, d, depth)))
            return e;
    } else if (n == 7 && !memcmp(p->s + start, "__Canon", 7)) {
        d->kind = MDT_DESC_CANON;
        p->pos = end;
    } else {
        for (size_t i = 0; i < sizeof prims / sizeof prims[0] && !d->kind; i++)
            if (strlen(prims[i].name) == n && !memcmp(prims[i].name, p->s + start, n)) {
                d->kind = MDT_DESC_PRIM;
                d->prim = prims[i].et;
            }
        if (!d->kind)
            return dp_fail(p, MDT_EINVAL,
                           n ? "unknown primitive (expected I1..U8, R4, R8, I, U, CHAR, BOOLEAN, "
                               "STRING, OBJECT, VOID, TYPEDBYREF, __Canon or MVID:TOKEN)"
                             : "expected a type descriptor");
        p->pos = end;
    }
    /* Suffixes, each one more level of nesting. */
    while (p->pos < p->len) {
        char c = p->s[p->pos];
        mdt_desc *w;
        if (c != '[' && c != '*' && c != '&')
            break;
        if (++depth > MDT_SIG_MAX_DEPTH)
            return dp_fail(p, MDT_EINVAL, "descriptor nested too deeply");
        if (!(w = talloc_zero(p->ctx, mdt_desc)))
            return nomem();
        w->elem = d;
        if (c == '*' || c == '&') {
            w->kind = c == '*' ? MDT_DESC_PTR : MDT_DESC_BYREF;
            p->pos++;
        } else if (p->pos + 1 < p->len && p->s[p->pos + 1] == ']') {
            w->kind = MDT_DESC_SZARRAY;
            p->pos += 2;
        } else {
            uint32_t rank = 0;
            size_t digits = 0;
            p->pos++;
            while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9' && digits < 3) {
                rank = rank * 10 + (uint32_t)(p->s[p->pos++] - '0');
                digits++;
            }
            if (!digits || rank < 1 || rank > MAX_RANK) {
                if (digits)
                    p->pos -= digits;
                return dp_fail(p, MDT_EINVAL, "expected ']' or an array rank 1..32");
            }
            if (p->pos >= p->len || p->s[p->pos] != ']')
                return dp_fail(p, MDT_EINVAL, "expected ']' after the array rank");
            p->pos++;
            w->kind = MDT_DESC_ARRAY;
            w->rank = rank;
        }
        d = w;
    }
    *out = d;
    return 0;
}

int mdt_desc_parse(void *mem_ctx, mdt_desc **out, const char *text, size_t len,
                   mdt_mvid_lookup lookup, void *payload)
{
    void *tmp = talloc_new(mem_ctx);
    struct dp p = {tmp, text, len, 0, lookup, payload};
    int e;
    *out = NULL;
    if (!tmp)
        return nomem();
    if (!(e = parse_desc(&p, out, 0)) && p.pos != len)
        e = dp_fail(&p, MDT_EINVAL, "unexpected text after the descriptor");
    if (e) {
        talloc_free(tmp);
        *out = NULL;
    }
    return e;
}

static int format_desc(sb *b, const mdt_desc *d, unsigned depth)
{
    int e;
    if (depth > MDT_SIG_MAX_DEPTH)
        return mdt__fail_simple(MDT_EINVAL, "descriptor nested deeper than %u", MDT_SIG_MAX_DEPTH);
    switch (d->kind) {
    case MDT_DESC_PRIM: {
        const char *t = mdt__desc_prim_name(d->prim);
        if (!t)
            return mdt__fail_simple(MDT_EINVAL, "element type 0x%02x is not a primitive", d->prim);
        sb_adds(b, t);
        return 0;
    }
    case MDT_DESC_CANON: sb_adds(b, "__Canon"); return 0;
    case MDT_DESC_TYPEDEF: {
        uint8_t g[16];
        if ((e = mdt__desc_check_typedef(d->img, d->token)) || (e = mdt_image_mvid(g, d->img)))
            return e;
        sb_addf(b, "%02x%02x%02x%02x%02x%02x%02x%02x", g[3], g[2], g[1], g[0], g[5], g[4], g[7],
                g[6]);
        for (int i = 8; i < 16; i++)
            sb_addf(b, "%02x", g[i]);
        sb_addf(b, ":0x%08x", d->token);
        if (d->nargs) {
            sb_addc(b, '<');
            for (uint32_t i = 0; i < d->nargs; i++) {
                if (i)
                    sb_addc(b, ',');
                if (!d->args || !d->args[i])
                    return mdt__fail_simple(MDT_EINVAL, "type argument %u is missing", i);
                if ((e = format_desc(b, d->args[i], depth + 1)))
                    return e;
            }
            sb_addc(b, '>');
        }
        return 0;
    }
    case MDT_DESC_SZARRAY:
    case MDT_DESC_ARRAY:
    case MDT_DESC_PTR:
    case MDT_DESC_BYREF:
        if (!d->elem)
            return mdt__fail_simple(MDT_EINVAL, "array, pointer or byref descriptor without an "
                                                "element");
        if ((e = format_desc(b, d->elem, depth + 1)))
            return e;
        if (d->kind == MDT_DESC_SZARRAY)
            sb_adds(b, "[]");
        else if (d->kind == MDT_DESC_PTR)
            sb_addc(b, '*');
        else if (d->kind == MDT_DESC_BYREF)
            sb_addc(b, '&');
        else if (d->rank < 1 || d->rank > MAX_RANK)
            return mdt__fail_simple(MDT_EINVAL, "array rank %u is not 1..%u", d->rank, MAX_RANK);
        else
            sb_addf(b, "[%u]", d->rank);
        return 0;
    default: return mdt__fail_simple(MDT_EINVAL, "descriptor of unknown kind %u", d->kind);
    }
}

int mdt_desc_format(void *mem_ctx, char **out, const mdt_desc *d)
{
    sb b;
    int e;
    sb_init(&b, mem_ctx);
    if ((e = format_desc(&b, d, 0))) {
        sb_discard(&b);
        return e;
    }
    return sb_finish(&b, out);
}
