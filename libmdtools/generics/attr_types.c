/* The types of custom attribute arguments (ECMA-335 II.23.3), the first
 * half of the decoder in attr.c: a constructor parameter's type from its
 * signature (II.23.2.1-2), a named argument's or boxed value's
 * FieldOrPropType from the blob, and the SerStrings both read. Enums are
 * stored as their underlying integer: its size comes from the enum's
 * TypeDef (the instance field `value__`, II.14.3) when this image defines
 * it, else from the caller's resolver, else the decode stops with
 * "unknown enum size". Every byte read is checked and every failure names
 * the blob and the offset inside it. */
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

#include "generics/attr_int.h"

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
            return mdt__attr_nomem();
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
        return mdt__attr_nomem();
    return ask_resolver(d, t, 0, name);
}

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
        return (*out = new_vtype(d, MDT_VALUE_TYPE)) ? 0 : mdt__attr_nomem();
    if (mdt__type_is(d->img, token, "System", "Object"))
        return (*out = new_vtype(d, MDT_VALUE_BOXED)) ? 0 : mdt__attr_nomem();
    if (mdt__type_is(d->img, token, "System", "String"))
        return (*out = new_vtype(d, MDT_VALUE_STRING)) ? 0 : mdt__attr_nomem();
    for (size_t i = 0; i < sizeof prims / sizeof prims[0]; i++)
        if (kind == MDT_ELEMENT_TYPE_VALUETYPE &&
            mdt__type_is(d->img, token, "System", prims[i].name))
            return (*out = new_vtype(d, prims[i].kind)) ? 0 : mdt__attr_nomem();
    if (!(t = new_vtype(d, MDT_VALUE_ENUM)))
        return mdt__attr_nomem();
    *out = t;
    return enum_by_token(d, t, token);
}

/* The value type of a constructor parameter (II.23.3: simple types,
 * string, System.Type, System.Object, enums, SZARRAY of those). */
int mdt__attr_type_of_sig(struct ad *d, const mdt_type *st, mdt_value_type **out)
{
    mdt_value_type *t;
    int e;
    if (++d->depth > MDT_SIG_MAX_DEPTH)
        return rd_fail(&d->r, MDT_EBADIMAGE, "parameter types nested deeper than %u",
                       MDT_SIG_MAX_DEPTH);
    switch (st->kind) {
    MDT__CASE_PRIMITIVE:
    case MDT_ELEMENT_TYPE_STRING:
        e = (*out = new_vtype(d, st->kind)) ? 0 : mdt__attr_nomem();
        break;
    case MDT_ELEMENT_TYPE_OBJECT:
        e = (*out = new_vtype(d, MDT_VALUE_BOXED)) ? 0 : mdt__attr_nomem();
        break;
    case MDT_ELEMENT_TYPE_SZARRAY:
        if (!(t = new_vtype(d, MDT_VALUE_SZARRAY)))
            e = mdt__attr_nomem();
        else if (!(e = mdt__attr_type_of_sig(d, st->elem, (mdt_value_type **)&t->elem)))
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
            e = mdt__attr_type_of_sig(d, saved[st->number], out);
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
int mdt__attr_type_of_blob(struct ad *d, mdt_value_type **out)
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
    MDT__CASE_PRIMITIVE:
    case MDT_VALUE_STRING:
    case MDT_VALUE_TYPE:
    case MDT_VALUE_BOXED: e = (*out = new_vtype(d, b)) ? 0 : mdt__attr_nomem(); break;
    case MDT_VALUE_SZARRAY:
        if (!(t = new_vtype(d, MDT_VALUE_SZARRAY)))
            e = mdt__attr_nomem();
        else if (!(e = mdt__attr_type_of_blob(d, (mdt_value_type **)&t->elem)))
            *out = t;
        break;
    case MDT_VALUE_ENUM: {
        const char *s;
        size_t len;
        bool null;
        if ((e = mdt__attr_read_serstring(d, &s, &len, &null, "enum type name")))
            break;
        if (null || !len) {
            d->r.pos = at + 1;
            e = rd_fail(&d->r, MDT_EBADIMAGE, "enum type name is %s", null ? "null" : "empty");
            break;
        }
        if (!(t = new_vtype(d, MDT_VALUE_ENUM))) {
            e = mdt__attr_nomem();
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

/* II.23.3 SerString: 0xFF for null, else a compressed length and UTF-8. */
int mdt__attr_read_serstring(struct ad *d, const char **s, size_t *len, bool *null,
                             const char *what)
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
        return mdt__attr_nomem();
    /* talloc_strndup stops at a NUL; keep the bytes as stored. */
    if (strlen(c) != n) {
        c = talloc_realloc(d->ctx, c, char, n + 1);
        if (!c)
            return mdt__attr_nomem();
        memcpy(c, p, n);
        c[n] = '\0';
    }
    *s = c;
    *len = n;
    return 0;
}

/* api-rename: off */
/* The old names (<mdtools/errors.h>, MDT_DEPRECATED_FOR), for programs
 * built against libmdtools 1:0:0. */
int mdt_enum_underlying(uint8_t *elem_type, const mdt_image *img, uint32_t typedef_token)
{
    return mdt_typedef_enum_underlying(elem_type, img, typedef_token);
}
/* api-rename: on */
