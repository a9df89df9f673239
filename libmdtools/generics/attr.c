/* Custom attribute blobs (ECMA-335 II.23.3) decoded into value trees, and
 * printed as C# writes attributes. The constructor's signature (MethodDef
 * or MemberRef, II.23.2.1-2) gives the types of the fixed arguments; named
 * arguments carry their own FieldOrPropType. Enums are stored as their
 * underlying integer: its size comes from the enum's TypeDef (the instance
 * field `value__`, II.14.3) when this image defines it, else from the
 * caller's resolver, else the decode stops with "unknown enum size".
 *
 * The blob is untrusted: the prolog is checked, counts are checked against
 * the bytes left before allocating, nesting is capped, and every failure
 * names the blob and the offset inside it. */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <talloc.h>

#include <mdtools/attr.h>
#include <mdtools/assembly.h>
#include <mdtools/names.h>
#include <mdtools/nesting.h>
#include <mdtools/sig.h>
#include <mdtools/members.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>

#include "generics/gen_int.h"
#include "generics/opts_int.h"

struct ad {
    void *ctx;
    const struct mdt_image *img;
    rd r;
    unsigned depth;
    uint32_t ngargs; /* type arguments of a generic attribute type */
    const mdt_type *const *gargs;
    mdt_enum_resolver resolver;
    void *payload;
    const char *asm_name; /* this image's assembly name, or NULL */
};

static int nomem(void)
{
    return mdt__fail_simple(MDT_ENOMEM, "out of memory decoding a custom attribute");
}

static bool is_enum_underlying(unsigned k)
{
    return k == MDT_ELEMENT_TYPE_BOOLEAN || k == MDT_ELEMENT_TYPE_CHAR ||
           (k >= MDT_ELEMENT_TYPE_I1 && k <= MDT_ELEMENT_TYPE_U8);
}

int mdt_typedef_enum_underlying(uint8_t *elem_type, const mdt_image *img, uint32_t td)
{
    mdt_members it = MDT_MEMBERS_INIT;
    uint32_t tok;
    int e;
    if (MDT_TOKEN_TABLE(td) != MDT_TABLE_TypeDef)
        return mdt__fail_simple(MDT_EINVAL, "token 0x%08x is not a TypeDef", td);
    if ((e = mdt_members_init(&it, img, td, MDT_MEMBERS_FIELDS)))
        return e;
    for (;;) {
        mdt_row f;
        int n = mdt_members_next(&tok, NULL, &it);
        if (n && n != MDT_ITEROVER)
            return n;
        if (n)
            break;
        if ((e = mdt_row_get(&f, img, MDT_TABLE_Field, MDT_TOKEN_RID(tok))))
            return e;
        if (mdt_row_raw(&f, MDT_COL_Field_Flags) & 0x10) /* static: a member, not the value */
            continue;
        void *tmp = talloc_new(NULL);
        mdt_sig s;
        if (!tmp)
            return nomem();
        e = mdt_sig_of_token(tmp, &s, img, tok);
        uint8_t kind = e ? 0 : s.type->kind;
        talloc_free(tmp);
        if (e)
            return e;
        if (!is_enum_underlying(kind))
            break;
        *elem_type = kind;
        return 0;
    }
    mdt_place pl = MDT_PLACE_NONE;
    pl.file = mdt_image_name(img);
    pl.region = "TypeDef";
    pl.row = MDT_TOKEN_RID(td);
    return mdt__fail(MDT_ENOTFOUND, pl, "TypeDef %u is not an enum (no integer instance field)",
                     MDT_TOKEN_RID(td));
}

/* --- types of arguments --- */

static mdt_value_type *new_vtype(struct ad *d, uint8_t kind)
{
    mdt_value_type *t = talloc_zero(d->ctx, mdt_value_type);
    if (t)
        t->kind = kind;
    return t;
}

static int unknown_enum(struct ad *d, const char *name)
{
    return rd_fail(&d->r, MDT_EUNRESOLVED, "unknown enum size for %s", name);
}

/* Fill an ENUM type from what a resolver (or this image) says. */
static int enum_from_info(struct ad *d, mdt_value_type *t, const mdt_enum_info *info)
{
    if (info->def_img) {
        int e = mdt_typedef_enum_underlying(&t->underlying, info->def_img, info->def_typedef);
        if (e)
            return e;
        t->enum_img = info->def_img;
        t->enum_typedef = info->def_typedef;
        return 0;
    }
    if (!is_enum_underlying(info->underlying))
        return rd_fail(&d->r, MDT_EINVAL, "enum resolver gave element type 0x%02x for %s",
                       info->underlying, t->enum_name);
    t->underlying = info->underlying;
    return 0;
}

static int ask_resolver(struct ad *d, mdt_value_type *t, uint32_t token, const char *name)
{
    mdt_enum_info info = {0};
    int e;
    if (!d->resolver)
        return unknown_enum(d, t->enum_name);
    e = d->resolver(d->payload, &info, d->img, token, name);
    if (e == MDT_ENOTFOUND)
        return unknown_enum(d, t->enum_name);
    if (e)
        return e;
    return enum_from_info(d, t, &info);
}

/* Does a TypeRef's outermost scope denote this image's own assembly or
 * module? */
static bool typeref_is_local(struct ad *d, uint32_t token)
{
    for (unsigned hops = 0; hops < 64 && MDT_TOKEN_TABLE(token) == MDT_TABLE_TypeRef; hops++) {
        mdt_row r;
        if (mdt_row_get(&r, d->img, MDT_TABLE_TypeRef, MDT_TOKEN_RID(token)) ||
            mdt_row_token(&token, &r, MDT_COL_TypeRef_ResolutionScope))
            return false;
    }
    switch (MDT_TOKEN_TABLE(token)) {
    case MDT_TABLE_Module: return true;
    case MDT_TABLE_AssemblyRef: {
        mdt_identity id;
        return d->asm_name && mdt_assemblyref_identity(&id, d->img, MDT_TOKEN_RID(token)) == 0 &&
               !strcmp(id.name, d->asm_name);
    }
    default: return false;
    }
}

/* An enum named by a TypeDef or TypeRef token of the constructor's
 * signature. */
static int enum_by_token(struct ad *d, mdt_value_type *t, uint32_t token)
{
    mdt_name_opts full = {MDT_STYLE_FULL, 0, MDT_NAME_OPTS_VERSION, NULL, NULL};
    char *name;
    int e;
    if ((e = mdt_token_name(d->ctx, &name, d->img, token, &full)))
        return e;
    t->kind = MDT_VALUE_ENUM;
    t->enum_name = name;
    if (MDT_TOKEN_TABLE(token) == MDT_TABLE_TypeDef) {
        if ((e = mdt_typedef_enum_underlying(&t->underlying, d->img, token)))
            return e == MDT_ENOTFOUND
                       ? rd_fail(&d->r, MDT_EUNSUPPORTED,
                                 "constructor parameter of type %s (a value type, not an enum)",
                                 name)
                       : e;
        t->enum_img = d->img;
        t->enum_typedef = token;
        return 0;
    }
    if (MDT_TOKEN_TABLE(token) == MDT_TABLE_TypeRef && typeref_is_local(d, token)) {
        char *refl;
        mdt_name_opts ro = {MDT_STYLE_REFLECTION, 0, MDT_NAME_OPTS_VERSION, NULL, NULL};
        uint32_t td;
        if (mdt_token_name(d->ctx, &refl, d->img, token, &ro) == 0 &&
            mdt_typedef_by_name(&td, d->img, refl, strlen(refl)) == 0) {
            mdt_enum_info info = {d->img, td, 0};
            return enum_from_info(d, t, &info);
        }
    }
    if (MDT_TOKEN_TABLE(token) != MDT_TABLE_TypeRef)
        return rd_fail(&d->r, MDT_EUNSUPPORTED, "constructor parameter of type %s", name);
    return ask_resolver(d, t, token, name);
}

/* An enum named in the blob (FieldOrPropType 0x55): a serialized type name,
 * assembly-qualified unless the enum is in this assembly (or corlib). */
static int enum_by_name(struct ad *d, mdt_value_type *t, const char *s, size_t len)
{
    size_t n = 0;
    unsigned brackets = 0;
    int e;
    char *full;
    /* The type part ends at the first comma outside brackets. */
    for (; n < len; n++) {
        if (s[n] == '\\' && n + 1 < len)
            n++;
        else if (s[n] == '[')
            brackets++;
        else if (s[n] == ']' && brackets)
            brackets--;
        else if (s[n] == ',' && !brackets)
            break;
    }
    if ((e = mdt__reflection_to_full(d->ctx, &full, s, len)))
        return e;
    t->kind = MDT_VALUE_ENUM;
    t->enum_name = full;
    bool local = n == len;
    if (!local && d->asm_name) {
        size_t a = n + 1, b;
        while (a < len && s[a] == ' ')
            a++;
        for (b = a; b < len && s[b] != ','; b++)
            ;
        while (b > a && s[b - 1] == ' ')
            b--;
        local = b - a == strlen(d->asm_name) && !memcmp(s + a, d->asm_name, b - a);
    }
    uint32_t td;
    if (mdt_typedef_by_name(&td, d->img, s, n) == 0) {
        mdt_enum_info info = {d->img, td, 0};
        if (local || n == len)
            return enum_from_info(d, t, &info);
    }
    char *name = talloc_strndup(d->ctx, s, len);
    if (!name)
        return nomem();
    return ask_resolver(d, t, 0, name);
}

static int type_of_sig(struct ad *d, const mdt_type *st, mdt_value_type **out);

static int type_of_token(struct ad *d, uint8_t kind, uint32_t token, mdt_value_type **out)
{
    static const struct {
        const char *name;
        uint8_t kind;
    } prims[] = {
        {"Boolean", MDT_VALUE_BOOLEAN}, {"Char", MDT_VALUE_CHAR}, {"SByte", MDT_VALUE_I1},
        {"Byte", MDT_VALUE_U1},         {"Int16", MDT_VALUE_I2},  {"UInt16", MDT_VALUE_U2},
        {"Int32", MDT_VALUE_I4},        {"UInt32", MDT_VALUE_U4}, {"Int64", MDT_VALUE_I8},
        {"UInt64", MDT_VALUE_U8},       {"Single", MDT_VALUE_R4}, {"Double", MDT_VALUE_R8}};
    mdt_value_type *t;
    if (MDT_TOKEN_TABLE(token) == MDT_TABLE_TypeSpec)
        return rd_fail(&d->r, MDT_EUNSUPPORTED,
                       "constructor parameter of a constructed type (TypeSpec %u)",
                       MDT_TOKEN_RID(token));
    if (mdt__type_is(d->img, token, "System", "Type"))
        return (*out = new_vtype(d, MDT_VALUE_TYPE)) ? 0 : nomem();
    if (mdt__type_is(d->img, token, "System", "Object"))
        return (*out = new_vtype(d, MDT_VALUE_BOXED)) ? 0 : nomem();
    if (mdt__type_is(d->img, token, "System", "String"))
        return (*out = new_vtype(d, MDT_VALUE_STRING)) ? 0 : nomem();
    for (size_t i = 0; i < sizeof prims / sizeof prims[0]; i++)
        if (kind == MDT_ELEMENT_TYPE_VALUETYPE &&
            mdt__type_is(d->img, token, "System", prims[i].name))
            return (*out = new_vtype(d, prims[i].kind)) ? 0 : nomem();
    if (!(t = new_vtype(d, MDT_VALUE_ENUM)))
        return nomem();
    *out = t;
    return enum_by_token(d, t, token);
}

/* The value type of a constructor parameter (II.23.3: simple types,
 * string, System.Type, System.Object, enums, SZARRAY of those). */
static int type_of_sig(struct ad *d, const mdt_type *st, mdt_value_type **out)
{
    mdt_value_type *t;
    int e;
    if (++d->depth > MDT_SIG_MAX_DEPTH)
        return rd_fail(&d->r, MDT_EBADIMAGE, "parameter types nested deeper than %u",
                       MDT_SIG_MAX_DEPTH);
    switch (st->kind) {
    case MDT_ELEMENT_TYPE_BOOLEAN:
    case MDT_ELEMENT_TYPE_CHAR:
    case MDT_ELEMENT_TYPE_I1:
    case MDT_ELEMENT_TYPE_U1:
    case MDT_ELEMENT_TYPE_I2:
    case MDT_ELEMENT_TYPE_U2:
    case MDT_ELEMENT_TYPE_I4:
    case MDT_ELEMENT_TYPE_U4:
    case MDT_ELEMENT_TYPE_I8:
    case MDT_ELEMENT_TYPE_U8:
    case MDT_ELEMENT_TYPE_R4:
    case MDT_ELEMENT_TYPE_R8:
    case MDT_ELEMENT_TYPE_STRING: e = (*out = new_vtype(d, st->kind)) ? 0 : nomem(); break;
    case MDT_ELEMENT_TYPE_OBJECT: e = (*out = new_vtype(d, MDT_VALUE_BOXED)) ? 0 : nomem(); break;
    case MDT_ELEMENT_TYPE_SZARRAY:
        if (!(t = new_vtype(d, MDT_VALUE_SZARRAY)))
            e = nomem();
        else if (!(e = type_of_sig(d, st->elem, (mdt_value_type **)&t->elem)))
            *out = t;
        break;
    case MDT_ELEMENT_TYPE_CLASS:
    case MDT_ELEMENT_TYPE_VALUETYPE: e = type_of_token(d, st->kind, st->token, out); break;
    case MDT_ELEMENT_TYPE_VAR:
        if (st->number < d->ngargs) {
            const mdt_type *const *saved = d->gargs;
            uint32_t nsaved = d->ngargs;
            d->gargs = NULL; /* arguments are closed */
            d->ngargs = 0;
            e = type_of_sig(d, saved[st->number], out);
            d->gargs = saved;
            d->ngargs = nsaved;
            break;
        }
        /* fall through */
    default: {
        char *n = NULL;
        mdt_type_name(d->ctx, &n, st, NULL);
        e = rd_fail(&d->r, MDT_EUNSUPPORTED,
                    "constructor parameter of type %s cannot be a custom attribute argument",
                    n ? n : "?");
    }
    }
    d->depth--;
    return e;
}

/* II.23.3 FieldOrPropType of a named argument or boxed value. */
static int read_serstring(struct ad *d, const char **s, size_t *len, bool *null, const char *what);

static int type_of_blob(struct ad *d, mdt_value_type **out)
{
    uint8_t b;
    mdt_value_type *t;
    int e;
    size_t at = d->r.pos;
    if (++d->depth > MDT_SIG_MAX_DEPTH)
        return rd_fail(&d->r, MDT_EBADIMAGE, "types nested deeper than %u", MDT_SIG_MAX_DEPTH);
    if ((e = rd_u8(&d->r, &b, "FieldOrPropType")))
        return e;
    switch (b) {
    case MDT_VALUE_BOOLEAN:
    case MDT_VALUE_CHAR:
    case MDT_VALUE_I1:
    case MDT_VALUE_U1:
    case MDT_VALUE_I2:
    case MDT_VALUE_U2:
    case MDT_VALUE_I4:
    case MDT_VALUE_U4:
    case MDT_VALUE_I8:
    case MDT_VALUE_U8:
    case MDT_VALUE_R4:
    case MDT_VALUE_R8:
    case MDT_VALUE_STRING:
    case MDT_VALUE_TYPE:
    case MDT_VALUE_BOXED: e = (*out = new_vtype(d, b)) ? 0 : nomem(); break;
    case MDT_VALUE_SZARRAY:
        if (!(t = new_vtype(d, MDT_VALUE_SZARRAY)))
            e = nomem();
        else if (!(e = type_of_blob(d, (mdt_value_type **)&t->elem)))
            *out = t;
        break;
    case MDT_VALUE_ENUM: {
        const char *s;
        size_t len;
        bool null;
        if ((e = read_serstring(d, &s, &len, &null, "enum type name")))
            break;
        if (null || !len) {
            d->r.pos = at + 1;
            e = rd_fail(&d->r, MDT_EBADIMAGE, "enum type name is %s", null ? "null" : "empty");
            break;
        }
        if (!(t = new_vtype(d, MDT_VALUE_ENUM))) {
            e = nomem();
            break;
        }
        if (!(e = enum_by_name(d, t, s, len)))
            *out = t;
        break;
    }
    default: d->r.pos = at; e = rd_fail(&d->r, MDT_EBADIMAGE, "0x%02x is not a FieldOrPropType", b);
    }
    d->depth--;
    return e;
}

/* --- values --- */

/* II.23.3 SerString: 0xFF for null, else a compressed length and UTF-8. */
static int read_serstring(struct ad *d, const char **s, size_t *len, bool *null, const char *what)
{
    uint8_t b;
    uint32_t n;
    const uint8_t *p;
    int e;
    *null = false;
    if ((e = rd_need(&d->r, 1, what)))
        return e;
    b = d->r.base[d->r.pos];
    if (b == 0xFF) {
        d->r.pos++;
        *null = true;
        *s = NULL;
        *len = 0;
        return 0;
    }
    size_t at = d->r.pos;
    if ((e = rd_compressed(&d->r, &n, what)))
        return e;
    if (n > rd_left(&d->r)) {
        size_t left = rd_left(&d->r);
        d->r.pos = at;
        return rd_fail(&d->r, MDT_ETRUNC, "%s of %u bytes, only %zu left", what, n, left);
    }
    rd_bytes(&d->r, &p, n, what);
    char *c = talloc_strndup(d->ctx, (const char *)p, n);
    if (!c)
        return nomem();
    /* talloc_strndup stops at a NUL; keep the bytes as stored. */
    if (strlen(c) != n) {
        c = talloc_realloc(d->ctx, c, char, n + 1);
        if (!c)
            return nomem();
        memcpy(c, p, n);
        c[n] = '\0';
    }
    *s = c;
    *len = n;
    return 0;
}

static unsigned size_of(unsigned kind)
{
    switch (kind) {
    case MDT_VALUE_BOOLEAN:
    case MDT_VALUE_I1:
    case MDT_VALUE_U1: return 1;
    case MDT_VALUE_CHAR:
    case MDT_VALUE_I2:
    case MDT_VALUE_U2: return 2;
    case MDT_VALUE_I4:
    case MDT_VALUE_U4:
    case MDT_VALUE_R4: return 4;
    default: return 8;
    }
}

static int read_number(struct ad *d, mdt_value *v, unsigned kind)
{
    unsigned size = size_of(kind);
    const uint8_t *p;
    int e;
    if ((e = rd_bytes(&d->r, &p, size, "value")))
        return e;
    uint64_t bits = 0;
    for (unsigned i = 0; i < size; i++)
        bits |= (uint64_t)p[i] << (8 * i);
    v->u = bits;
    v->i = (int64_t)bits;
    if (kind == MDT_VALUE_R4) {
        float f;
        uint32_t b32 = (uint32_t)bits;
        memcpy(&f, &b32, sizeof f);
        v->r = f;
    } else if (kind == MDT_VALUE_R8) {
        memcpy(&v->r, &bits, sizeof v->r);
    } else if ((kind == MDT_VALUE_I1 || kind == MDT_VALUE_I2 || kind == MDT_VALUE_I4) &&
               (bits >> (8 * size - 1) & 1)) {
        v->i = (int64_t)(bits | ~(((uint64_t)1 << (8 * size)) - 1));
    }
    return 0;
}

static int read_value(struct ad *d, const mdt_value_type *t, mdt_value *v)
{
    int e = 0;
    if (++d->depth > MDT_SIG_MAX_DEPTH)
        return rd_fail(&d->r, MDT_EBADIMAGE, "values nested deeper than %u", MDT_SIG_MAX_DEPTH);
    v->type = t;
    switch (t->kind) {
    case MDT_VALUE_BOOLEAN:
    case MDT_VALUE_CHAR:
    case MDT_VALUE_I1:
    case MDT_VALUE_U1:
    case MDT_VALUE_I2:
    case MDT_VALUE_U2:
    case MDT_VALUE_I4:
    case MDT_VALUE_U4:
    case MDT_VALUE_I8:
    case MDT_VALUE_U8:
    case MDT_VALUE_R4:
    case MDT_VALUE_R8: e = read_number(d, v, t->kind); break;
    case MDT_VALUE_ENUM: e = read_number(d, v, t->underlying); break;
    case MDT_VALUE_STRING:
    case MDT_VALUE_TYPE:
        e = read_serstring(d, &v->str, &v->len, &v->null,
                           t->kind == MDT_VALUE_STRING ? "string" : "type name");
        break;
    case MDT_VALUE_BOXED: {
        mdt_value *b;
        mdt_value_type *bt;
        size_t at = d->r.pos;
        if ((e = type_of_blob(d, &bt)))
            break;
        if (bt->kind == MDT_VALUE_BOXED) {
            d->r.pos = at;
            e = rd_fail(&d->r, MDT_EBADIMAGE, "boxed object inside a boxed object");
            break;
        }
        if (!(b = talloc_zero(d->ctx, mdt_value))) {
            e = nomem();
            break;
        }
        if (!(e = read_value(d, bt, b)))
            v->boxed = b;
        break;
    }
    case MDT_VALUE_SZARRAY: {
        uint32_t n;
        size_t at = d->r.pos;
        if ((e = rd_u32(&d->r, &n, "array length")))
            break;
        if (n == UINT32_MAX) {
            v->null = true;
            break;
        }
        /* Every element takes at least one byte. */
        if (n > rd_left(&d->r)) {
            size_t left = rd_left(&d->r);
            d->r.pos = at;
            e = rd_fail(&d->r, MDT_EBADIMAGE, "array length %u exceeds the %zu bytes left", n,
                        left);
            break;
        }
        mdt_value *el = talloc_zero_array(d->ctx, mdt_value, n ? n : 1);
        if (!el) {
            e = nomem();
            break;
        }
        for (uint32_t i = 0; i < n && !e; i++)
            e = read_value(d, t->elem, &el[i]);
        v->count = n;
        v->elems = el;
        break;
    }
    default: e = rd_fail(&d->r, MDT_EINVAL, "value of kind 0x%02x", t->kind);
    }
    d->depth--;
    return e;
}

/* --- entry points --- */

/* The type whose constructor `ctor` is. */
static int ctor_parent(const mdt_image *img, uint32_t ctor, uint32_t *type)
{
    mdt_row r;
    int e;
    if (MDT_TOKEN_TABLE(ctor) == MDT_TABLE_MethodDef)
        return mdt_member_owner(type, img, ctor);
    if ((e = mdt_row_get(&r, img, MDT_TABLE_MemberRef, MDT_TOKEN_RID(ctor))) ||
        (e = mdt_row_token(type, &r, MDT_COL_MemberRef_Class)))
        return e;
    switch (MDT_TOKEN_TABLE(*type)) {
    case MDT_TABLE_TypeDef:
    case MDT_TABLE_TypeRef:
    case MDT_TABLE_TypeSpec: return 0;
    default: {
        mdt_place pl = MDT_PLACE_NONE;
        pl.file = mdt_image_name(img);
        pl.region = "MemberRef";
        pl.row = MDT_TOKEN_RID(ctor);
        return mdt__fail(MDT_EBADIMAGE, pl, "attribute constructor's parent 0x%08x is not a type",
                         *type);
    }
    }
}

int mdt_attr_decode(void *mem_ctx, mdt_attr *out, const mdt_image *img, uint32_t ctor,
                    const uint8_t *blob, uint32_t len, uint32_t blob_index,
                    mdt_enum_resolver resolver, void *payload)
{
    struct ad d = {0};
    char region[40];
    mdt_sig sig;
    mdt_row arow;
    uint16_t prolog, nnamed;
    int e;
    memset(out, 0, sizeof *out);
    if (MDT_TOKEN_TABLE(ctor) != MDT_TABLE_MethodDef &&
        MDT_TOKEN_TABLE(ctor) != MDT_TABLE_MemberRef)
        return mdt__fail_simple(MDT_EINVAL,
                                "attribute constructor 0x%08x is not a MethodDef or "
                                "MemberRef",
                                ctor);
    void *tmp = talloc_new(mem_ctx);
    uint64_t stamp;
    if (!tmp)
        return nomem();
    /* Rows the decoder could not read on its way (the assembly's name, an
     * enum looked up by name) are not failures of a decode that succeeds. */
    stamp = mdt__err_stamp();
    d.ctx = tmp;
    d.img = img;
    d.resolver = resolver;
    d.payload = payload;
    d.r = mdt__blob_reader(img, region, blob, len, blob_index);
    /* Only the simple name: the whole identity would hash the public key
     * (SHA-1) for every attribute. */
    if (mdt_table_rows(img, MDT_TABLE_Assembly) &&
        mdt_row_get(&arow, img, MDT_TABLE_Assembly, 1) == 0)
        mdt_row_string(&d.asm_name, NULL, &arow, MDT_COL_Assembly_Name);
    out->img = img;
    out->ctor = ctor;
    if ((e = ctor_parent(img, ctor, &out->type)) || (e = mdt_sig_of_token(tmp, &sig, img, ctor)))
        goto fail;
    if (sig.kind != MDT_SIG_METHOD) {
        e = mdt__fail_simple(MDT_EBADIMAGE, "attribute constructor 0x%08x has no method signature",
                             ctor);
        goto fail;
    }
    if (MDT_TOKEN_TABLE(out->type) == MDT_TABLE_TypeSpec) {
        mdt_sig ts;
        if ((e = mdt_sig_of_token(tmp, &ts, img, out->type)))
            goto fail;
        if (ts.type->kind == MDT_ELEMENT_TYPE_GENERICINST) {
            d.ngargs = ts.type->nargs;
            d.gargs = ts.type->args;
        }
    }
    if ((e = rd_u16(&d.r, &prolog, "prolog")))
        goto fail;
    if (prolog != 0x0001) {
        d.r.pos = 0;
        e = rd_fail(&d.r, MDT_EBADIMAGE, "custom attribute prolog is 0x%04x, not 0x0001", prolog);
        goto fail;
    }
    const mdt_method_sig *m = sig.method;
    mdt_value *fixed = talloc_zero_array(tmp, mdt_value, m->nparams ? m->nparams : 1);
    if (!fixed) {
        e = nomem();
        goto fail;
    }
    for (uint32_t i = 0; i < m->nparams; i++) {
        mdt_value_type *t;
        if ((e = type_of_sig(&d, m->params[i], &t)) || (e = read_value(&d, t, &fixed[i])))
            goto fail;
    }
    out->nfixed = m->nparams;
    out->fixed = fixed;
    if ((e = rd_u16(&d.r, &nnamed, "named argument count")))
        goto fail;
    /* Each named argument takes at least four bytes. */
    if (nnamed > rd_left(&d.r) / 4) {
        d.r.pos -= 2;
        e = rd_fail(&d.r, MDT_EBADIMAGE,
                    "named argument count %u exceeds what the %zu bytes left "
                    "can hold",
                    nnamed, rd_left(&d.r) - 2);
        goto fail;
    }
    mdt_named_arg *named = talloc_zero_array(tmp, mdt_named_arg, nnamed ? nnamed : 1);
    if (!named) {
        e = nomem();
        goto fail;
    }
    for (uint32_t i = 0; i < nnamed; i++) {
        uint8_t kind;
        mdt_value_type *t;
        bool null;
        size_t nlen;
        if ((e = rd_u8(&d.r, &kind, "named argument kind")))
            goto fail;
        if (kind != 0x53 && kind != 0x54) {
            d.r.pos--;
            e = rd_fail(&d.r, MDT_EBADIMAGE,
                        "named argument kind 0x%02x is neither FIELD (0x53) nor PROPERTY (0x54)",
                        kind);
            goto fail;
        }
        named[i].property = kind == 0x54;
        if ((e = type_of_blob(&d, &t)) ||
            (e = read_serstring(&d, &named[i].name, &nlen, &null, "named argument name")))
            goto fail;
        if (null) {
            d.r.pos--;
            e = rd_fail(&d.r, MDT_EBADIMAGE, "named argument name is null");
            goto fail;
        }
        if ((e = read_value(&d, t, &named[i].value)))
            goto fail;
    }
    out->nnamed = nnamed;
    out->named = named;
    mdt__err_back_to(stamp);
    return 0;
fail:
    talloc_free(tmp);
    memset(out, 0, sizeof *out);
    return e;
}

int mdt_attr_of_row(void *mem_ctx, mdt_attr *out, const mdt_image *img, uint32_t rid,
                    mdt_enum_resolver resolver, void *payload)
{
    mdt_row r;
    uint32_t ctor;
    const uint8_t *blob;
    uint32_t len;
    int e;
    memset(out, 0, sizeof *out);
    if ((e = mdt_row_get(&r, img, MDT_TABLE_CustomAttribute, rid)) ||
        (e = mdt_row_token(&ctor, &r, MDT_COL_CustomAttribute_Type)) ||
        (e = mdt_row_blob(&blob, &len, &r, MDT_COL_CustomAttribute_Value)))
        return e;
    return mdt_attr_decode(mem_ctx, out, img, ctor, blob, len,
                           mdt_row_raw(&r, MDT_COL_CustomAttribute_Value), resolver, payload);
}

int mdt_attr_decimal(mdt_decimal *out, const mdt_attr *a)
{
    if (!mdt__type_is(a->img, a->type, "System.Runtime.CompilerServices",
                      "DecimalConstantAttribute") ||
        a->nfixed != 5)
        return mdt__fail_simple(MDT_EINVAL, "not a DecimalConstantAttribute(byte, byte, uint, "
                                            "uint, uint)");
    for (int i = 0; i < 5; i++) {
        unsigned k = a->fixed[i].type->kind;
        if (i < 2 ? k != MDT_VALUE_U1 : k != MDT_VALUE_U4 && k != MDT_VALUE_I4)
            return mdt__fail_simple(MDT_EINVAL,
                                    "DecimalConstantAttribute argument %d has "
                                    "element type 0x%02x",
                                    i + 1, k);
    }
    out->scale = (uint8_t)a->fixed[0].u;
    out->negative = a->fixed[1].u != 0;
    out->hi = (uint32_t)a->fixed[2].u;
    out->mid = (uint32_t)a->fixed[3].u;
    out->lo = (uint32_t)a->fixed[4].u;
    if (out->scale > 28) {
        mdt_place pl = MDT_PLACE_NONE;
        pl.file = mdt_image_name(a->img);
        pl.region = "CustomAttribute";
        return mdt__fail(MDT_EBADIMAGE, pl, "DecimalConstantAttribute scale %u exceeds 28",
                         out->scale);
    }
    return 0;
}

int mdt_attr_format(void *mem_ctx, char **out, const mdt_attr *a, const mdt_name_opts *o)
{
    bool friendly = o && (o->flags & MDT_NAME_FRIENDLY);
    mdt_name_opts no = {o ? o->style : MDT_STYLE_FULL, o ? o->flags : 0, MDT_NAME_OPTS_VERSION,
                        NULL, NULL};
    char *name;
    sb s;
    int e;
    if ((e = gen_opts_check(o, "mdt_attr_format")))
        return e;
    if ((e = mdt_token_name(NULL, &name, a->img, a->type, &no)))
        return e;
    sb_init(&s, mem_ctx);
    sb_addc(&s, '[');
    size_t n = strlen(name);
    if (friendly && n > 9 && !strcmp(name + n - 9, "Attribute"))
        n -= 9;
    sb_add(&s, name, n);
    talloc_free(name);
    if (a->nfixed || a->nnamed) {
        sb_addc(&s, '(');
        for (uint32_t i = 0; i < a->nfixed && !e; i++) {
            if (i)
                sb_adds(&s, ", ");
            e = mdt__put_value(&s, &a->fixed[i], o);
        }
        for (uint32_t i = 0; i < a->nnamed && !e; i++) {
            if (i || a->nfixed)
                sb_adds(&s, ", ");
            sb_addf(&s, "%s = ", a->named[i].name);
            e = mdt__put_value(&s, &a->named[i].value, o);
        }
        sb_addc(&s, ')');
    }
    sb_addc(&s, ']');
    if (e) {
        sb_discard(&s);
        return e;
    }
    return sb_finish(&s, out);
}

/* api-rename: off */
/* The old names (<mdtools/errors.h>, MDT_DEPRECATED_FOR), for programs
 * built against libmdtools 1:0:0. */
int mdt_enum_underlying(uint8_t *elem_type, const mdt_image *img, uint32_t typedef_token)
{
    return mdt_typedef_enum_underlying(elem_type, img, typedef_token);
}
/* api-rename: on */
