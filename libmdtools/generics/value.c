/* Printing values stored in blobs (Constant rows, ECMA-335 II.22.9; custom
 * attribute arguments, II.23.3) exactly: integers in decimal, floating
 * point, decimals and 128-bit integers as value_num.c writes them, strings
 * and chars with C escapes, and
 * custom-attribute values as C# writes them (enum members, typeof(...),
 * array initializers, casts on boxed values). Serialized System.Type names
 * (reflection syntax, II.23.3) are turned into the full style of doc/names.md. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <talloc.h>

#include <mdtools/attr.h>
#include <mdtools/heaps.h>
#include <mdtools/members.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>
#include <mdtools/value.h>

#include "generics/gen_int.h"
#include "generics/opts_int.h"

#define MAX_TYPENAME_DEPTH 64

/* --- strings --- */

static void put_escaped(sb *out, const char *s, size_t len, char quote)
{
    sb_addc(out, quote);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '\\': sb_adds(out, "\\\\"); break;
        case '\n': sb_adds(out, "\\n"); break;
        case '\r': sb_adds(out, "\\r"); break;
        case '\t': sb_adds(out, "\\t"); break;
        case '\0': sb_adds(out, "\\0"); break;
        default:
            if (c == (unsigned char)quote)
                sb_addf(out, "\\%c", quote);
            else if (c < 0x20 || c == 0x7f)
                sb_addf(out, "\\u%04x", c);
            else
                sb_addc(out, (char)c);
        }
    }
    sb_addc(out, quote);
}

static void put_char(sb *out, uint32_t c)
{
    char u[8];
    size_t n = 0;
    if (c < 0x20 || c == 0x7f || (c >= 0xD800 && c <= 0xDFFF)) {
        switch (c) {
        case '\n': sb_adds(out, "'\\n'"); return;
        case '\r': sb_adds(out, "'\\r'"); return;
        case '\t': sb_adds(out, "'\\t'"); return;
        case '\0': sb_adds(out, "'\\0'"); return;
        default: sb_addf(out, "'\\u%04x'", c); return;
        }
    }
    if (c < 0x80) {
        u[n++] = (char)c;
    } else if (c < 0x800) {
        u[n++] = (char)(0xC0 | c >> 6);
        u[n++] = (char)(0x80 | (c & 0x3F));
    } else {
        u[n++] = (char)(0xE0 | c >> 12);
        u[n++] = (char)(0x80 | (c >> 6 & 0x3F));
        u[n++] = (char)(0x80 | (c & 0x3F));
    }
    put_escaped(out, u, n, '\'');
}

/* --- type names --- */

static const char *kind_name(unsigned kind, bool friendly)
{
    switch (kind) {
    case MDT_VALUE_BOOLEAN: return friendly ? "bool" : "System.Boolean";
    case MDT_VALUE_CHAR: return friendly ? "char" : "System.Char";
    case MDT_VALUE_I1: return friendly ? "sbyte" : "System.SByte";
    case MDT_VALUE_U1: return friendly ? "byte" : "System.Byte";
    case MDT_VALUE_I2: return friendly ? "short" : "System.Int16";
    case MDT_VALUE_U2: return friendly ? "ushort" : "System.UInt16";
    case MDT_VALUE_I4: return friendly ? "int" : "System.Int32";
    case MDT_VALUE_U4: return friendly ? "uint" : "System.UInt32";
    case MDT_VALUE_I8: return friendly ? "long" : "System.Int64";
    case MDT_VALUE_U8: return friendly ? "ulong" : "System.UInt64";
    case MDT_VALUE_R4: return friendly ? "float" : "System.Single";
    case MDT_VALUE_R8: return friendly ? "double" : "System.Double";
    case MDT_VALUE_STRING: return friendly ? "string" : "System.String";
    case MDT_VALUE_CLASS: return friendly ? "object" : "System.Object";
    case MDT_VALUE_BOXED: return friendly ? "object" : "System.Object";
    case MDT_VALUE_TYPE: return friendly ? "Type" : "System.Type";
    case MDT_VALUE_DECIMAL: return friendly ? "decimal" : "System.Decimal";
    default: return NULL;
    }
}

/* A full-style name shortened for the friendly option: the namespace of the
 * outermost type dropped. */
static void put_short(sb *out, const char *full)
{
    const char *plus = strchr(full, '+');
    const char *end = plus ? plus : full + strlen(full);
    const char *dot = NULL;
    for (const char *p = full; p < end; p++)
        if (*p == '.')
            dot = p;
    sb_adds(out, dot ? dot + 1 : full);
}

static void put_value_type(sb *out, const mdt_value_type *t, bool friendly)
{
    unsigned depth = 0;
    while (t->kind == MDT_VALUE_SZARRAY && t->elem && depth < MAX_TYPENAME_DEPTH) {
        t = t->elem;
        depth++;
    }
    if (t->kind == MDT_VALUE_ENUM) {
        if (friendly)
            put_short(out, t->enum_name ? t->enum_name : "?");
        else
            sb_adds(out, t->enum_name ? t->enum_name : "?");
    } else {
        const char *n = kind_name(t->kind, friendly);
        sb_adds(out, n ? n : "?");
    }
    while (depth--)
        sb_adds(out, "[]");
}

/* Serialized type names (II.23.3: the reflection syntax of
 * Type.AssemblyQualifiedName) into the full style of doc/names.md: assembly
 * names dropped, `1 arities removed, generic arguments in <...>; an unbound
 * generic type keeps its arity as commas (`Dictionary<,>`). */
struct tn {
    const char *p, *end;
    sb *out;
    bool friendly;
    unsigned depth;
};

static bool tn_special(char c)
{
    return c == ',' || c == '+' || c == '[' || c == ']' || c == '&' || c == '*';
}

/* One simple name (escapes removed) into buf; returns its generic arity. */
static int tn_simple(struct tn *t, sb *buf, unsigned *arity)
{
    const char *start = t->p;
    while (t->p < t->end && !tn_special(*t->p)) {
        if (*t->p == '\\') {
            if (++t->p == t->end)
                return -1;
        }
        sb_addc(buf, *t->p++);
    }
    if (t->p == start)
        return -1;
    *arity = 0;
    const char *tick = buf->buf ? strrchr(buf->buf, '`') : NULL;
    if (tick && tick[1]) {
        unsigned n = 0;
        const char *q = tick + 1;
        for (; *q >= '0' && *q <= '9'; q++)
            if ((n = n * 10 + (unsigned)(*q - '0')) > 1000)
                n = 1000; /* no more commas than that for an unbound type */
        if (!*q) {
            *arity = n;
            sb_cut(buf, (size_t)(tick - buf->buf));
        }
    }
    return 0;
}

static int tn_type(struct tn *t, bool allow_assembly);

static void tn_skip_ws(struct tn *t)
{
    while (t->p < t->end && *t->p == ' ')
        t->p++;
}

/* Skip an assembly name up to the ']' closing a bracketed argument (or the
 * end). Assembly names contain no unescaped ']'. */
static void tn_skip_assembly(struct tn *t)
{
    while (t->p < t->end && *t->p != ']') {
        if (*t->p == '\\' && t->p + 1 < t->end)
            t->p++;
        t->p++;
    }
}

static const char *tn_keyword(const char *full)
{
    static const char *const map[][2] = {
        {"System.Boolean", "bool"},    {"System.Char", "char"},     {"System.SByte", "sbyte"},
        {"System.Byte", "byte"},       {"System.Int16", "short"},   {"System.UInt16", "ushort"},
        {"System.Int32", "int"},       {"System.UInt32", "uint"},   {"System.Int64", "long"},
        {"System.UInt64", "ulong"},    {"System.Single", "float"},  {"System.Double", "double"},
        {"System.String", "string"},   {"System.Object", "object"}, {"System.Void", "void"},
        {"System.Decimal", "decimal"}, {"System.IntPtr", "nint"},   {"System.UIntPtr", "nuint"}};
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (!strcmp(map[i][0], full))
            return map[i][1];
    return NULL;
}

static int tn_type(struct tn *t, bool allow_assembly)
{
    unsigned arity_total = 0, arity;
    sb name;
    int e = 0;
    if (++t->depth > MAX_TYPENAME_DEPTH)
        return -1;
    sb_init(&name, NULL);
    for (bool first = true;; first = false) {
        if (!first)
            sb_addc(&name, '+');
        sb seg;
        sb_init(&seg, NULL);
        if (tn_simple(t, &seg, &arity) || seg.failed) {
            sb_discard(&seg);
            sb_discard(&name);
            return -1;
        }
        sb_add(&name, seg.buf, seg.len);
        sb_discard(&seg);
        arity_total += arity;
        if (t->p < t->end && *t->p == '+') {
            t->p++;
            continue;
        }
        break;
    }
    if (name.failed) {
        sb_discard(&name);
        return -1;
    }
    /* The name, then its generic arguments. */
    const char *kw = t->friendly ? tn_keyword(name.buf) : NULL;
    if (kw)
        sb_adds(t->out, kw);
    else if (t->friendly)
        put_short(t->out, name.buf);
    else
        sb_add(t->out, name.buf, name.len);
    sb_discard(&name);
    bool have_args = false;
    if (t->p < t->end && *t->p == '[' && t->p + 1 < t->end && t->p[1] != ']' && t->p[1] != ',' &&
        t->p[1] != '*') {
        t->p++;
        sb_addc(t->out, '<');
        for (unsigned i = 0;; i++) {
            if (i)
                sb_addc(t->out, ',');
            tn_skip_ws(t);
            if (t->p < t->end && *t->p == '[') {
                t->p++;
                if ((e = tn_type(t, true)))
                    return e;
                if (t->p >= t->end || *t->p != ']')
                    return -1;
                t->p++;
            } else if ((e = tn_type(t, false))) {
                return e;
            }
            if (t->p < t->end && *t->p == ',') {
                t->p++;
                continue;
            }
            if (t->p < t->end && *t->p == ']') {
                t->p++;
                break;
            }
            return -1;
        }
        sb_addc(t->out, '>');
        have_args = true;
    }
    if (!have_args && arity_total) {
        sb_addc(t->out, '<');
        for (unsigned i = 1; i < arity_total; i++)
            sb_addc(t->out, ',');
        sb_addc(t->out, '>');
    }
    /* Suffixes: [] [*] [,,] * & */
    while (t->p < t->end) {
        if (*t->p == '*' || *t->p == '&') {
            sb_addc(t->out, *t->p++);
        } else if (*t->p == '[' && t->p + 1 < t->end &&
                   (t->p[1] == ']' || t->p[1] == ',' || t->p[1] == '*')) {
            const char *q = t->p + 1;
            if (*q == '*' && q + 1 < t->end && q[1] == ']') {
                sb_adds(t->out, "[*]");
                t->p = q + 2;
                continue;
            }
            while (q < t->end && *q == ',')
                q++;
            if (q >= t->end || *q != ']')
                return -1;
            sb_add(t->out, t->p, (size_t)(q - t->p + 1));
            t->p = q + 1;
        } else {
            break;
        }
    }
    t->depth--;
    /* A comma: the next generic argument, or an assembly name to skip. */
    if (t->p < t->end && *t->p == ',' && allow_assembly)
        tn_skip_assembly(t);
    return 0;
}

/* typeof(...) of a serialized name; when it does not parse, the name as
 * stored. */
static void put_typeof(sb *out, const char *s, size_t len, const mdt_name_opts *o)
{
    sb_adds(out, "typeof(");
    if (o && o->style == MDT_STYLE_REFLECTION) {
        sb_add(out, s, len);
    } else {
        sb tmp;
        sb_init(&tmp, NULL);
        struct tn t = {s, s + len, &tmp, o && (o->flags & MDT_NAME_FRIENDLY), 0};
        if (tn_type(&t, true) == 0 && t.p == t.end && !tmp.failed && tmp.buf)
            sb_add(out, tmp.buf, tmp.len);
        else
            sb_add(out, s, len);
        sb_discard(&tmp);
    }
    sb_addc(out, ')');
}

int mdt__reflection_to_full(void *mem_ctx, char **out, const char *s, size_t len)
{
    sb tmp;
    sb_init(&tmp, mem_ctx);
    struct tn t = {s, s + len, &tmp, false, 0};
    if (tn_type(&t, true) != 0 || t.p != t.end || tmp.failed || !tmp.buf) {
        sb_discard(&tmp);
        sb_init(&tmp, mem_ctx);
        sb_add(&tmp, s, len);
    }
    return sb_finish(&tmp, out);
}

/* --- enums --- */

/* Name of the literal field of enum (img, td) whose value has these bits. */
static const char *enum_member(const mdt_image *img, uint32_t td, uint64_t bits, unsigned size)
{
    mdt_members it = MDT_MEMBERS_INIT;
    uint32_t tok;
    int e;
    if (mdt_members_init(&it, img, MDT_TOKEN(MDT_TABLE_TypeDef, td & 0xFFFFFF), MDT_MEMBERS_FIELDS))
        return NULL;
    while ((e = mdt_members_next(&tok, NULL, &it)) != MDT_ITEROVER) {
        uint32_t key, crid;
        mdt_row f, c;
        const char *name;
        const uint8_t *blob;
        uint32_t len;
        mdt_find fi;
        if (e || mdt_row_get(&f, img, MDT_TABLE_Field, MDT_TOKEN_RID(tok)))
            continue;
        if ((mdt_row_raw(&f, MDT_COL_Field_Flags) & 0x50) != 0x50) /* static literal */
            continue;
        if (mdt_coded_encode(&key, MDT_CI_HasConstant, tok) ||
            mdt_find_init(&fi, img, MDT_TABLE_Constant, MDT_COL_Constant_Parent, key) ||
            mdt_find_next(&crid, &fi) || mdt_row_get(&c, img, MDT_TABLE_Constant, crid) ||
            mdt_row_blob(&blob, &len, &c, MDT_COL_Constant_Value))
            continue;
        if (len < size)
            continue;
        uint64_t v = 0;
        for (unsigned i = 0; i < size; i++)
            v |= (uint64_t)blob[i] << (8 * i);
        if (v == bits && mdt_row_string(&name, NULL, &f, MDT_COL_Field_Name) == 0)
            return name;
    }
    return NULL;
}

static bool is_signed_kind(unsigned kind)
{
    return kind == MDT_VALUE_I1 || kind == MDT_VALUE_I2 || kind == MDT_VALUE_I4 ||
           kind == MDT_VALUE_I8;
}

/* --- values --- */

static int put_value(sb *out, const mdt_value *v, const mdt_name_opts *o, unsigned depth);

static void put_number(sb *out, unsigned kind, const mdt_value *v)
{
    char buf[32];
    switch (kind) {
    case MDT_VALUE_BOOLEAN:
        if (v->u <= 1)
            sb_adds(out, v->u ? "true" : "false");
        else
            sb_addf(out, "(System.Boolean)%llu", (unsigned long long)v->u);
        break;
    case MDT_VALUE_CHAR: put_char(out, (uint32_t)v->u); break;
    case MDT_VALUE_R4: sb_adds(out, mdt_value_r4_format(buf, (float)v->r)); break;
    case MDT_VALUE_R8: sb_adds(out, mdt_value_r8_format(buf, v->r)); break;
    default:
        if (is_signed_kind(kind))
            sb_addf(out, "%lld", (long long)v->i);
        else
            sb_addf(out, "%llu", (unsigned long long)v->u);
    }
}

static int put_value(sb *out, const mdt_value *v, const mdt_name_opts *o, unsigned depth)
{
    bool friendly = o && (o->flags & MDT_NAME_FRIENDLY);
    const mdt_value_type *t = v->type;
    int e = 0;
    if (!t)
        return mdt__fail_simple(MDT_EINVAL, "value without a type");
    if (depth > MAX_TYPENAME_DEPTH)
        return mdt__fail_simple(MDT_EINVAL, "values nested too deeply to print");
    switch (t->kind) {
    MDT__CASE_PRIMITIVE:
        put_number(out, t->kind, v);
        break;
    case MDT_VALUE_STRING:
        if (v->null)
            sb_adds(out, "null");
        else
            put_escaped(out, v->str, v->len, '"');
        break;
    case MDT_VALUE_CLASS: sb_adds(out, "null"); break;
    case MDT_VALUE_TYPE:
        if (v->null)
            sb_adds(out, "null");
        else
            put_typeof(out, v->str, v->len, o);
        break;
    case MDT_VALUE_ENUM: {
        const char *member = NULL, *name = t->enum_name ? t->enum_name : "?";
        /* an underlying kind outside its contract names no member */
        if (t->enum_img && t->enum_typedef && mdt__value_size(t->underlying))
            member =
                enum_member(t->enum_img, t->enum_typedef, v->u, mdt__value_size(t->underlying));
        if (!member)
            sb_addc(out, '(');
        if (friendly)
            put_short(out, name);
        else
            sb_adds(out, name);
        if (member) {
            sb_addf(out, ".%s", member);
        } else {
            sb_addc(out, ')');
            put_number(out, t->underlying, v);
        }
        break;
    }
    case MDT_VALUE_BOXED: {
        const mdt_value *b = v->boxed;
        if (!b || !b->type)
            return mdt__fail_simple(MDT_EINVAL, "boxed value without content");
        unsigned k = b->type->kind;
        if (k <= MDT_VALUE_R8 && k != MDT_VALUE_BOOLEAN) {
            sb_addf(out, "(%s)", kind_name(k, friendly));
            put_number(out, k, b);
        } else if (k == MDT_VALUE_STRING && b->null) {
            sb_adds(out, "null"); /* how compilers write a null object */
        } else if (k == MDT_VALUE_TYPE && b->null) {
            sb_addf(out, "(%s)null", kind_name(k, friendly));
        } else {
            e = put_value(out, b, o, depth + 1);
        }
        break;
    }
    case MDT_VALUE_SZARRAY:
        if (v->null) {
            sb_adds(out, "null");
            break;
        }
        sb_adds(out, "new ");
        if (t->elem)
            put_value_type(out, t->elem, friendly);
        sb_adds(out, v->count ? "[] { " : "[0]");
        for (uint32_t i = 0; i < v->count && !e; i++) {
            if (i)
                sb_adds(out, ", ");
            e = put_value(out, &v->elems[i], o, depth + 1);
        }
        if (v->count)
            sb_adds(out, " }");
        break;
    case MDT_VALUE_DECIMAL: {
        char *s;
        if ((e = mdt_decimal_format(NULL, &s, &v->dec)))
            return e;
        sb_adds(out, s);
        talloc_free(s);
        break;
    }
    default: return mdt__fail_simple(MDT_EINVAL, "value of unknown kind 0x%02x", t->kind);
    }
    return e;
}

int mdt__put_value(sb *out, const mdt_value *v, const mdt_name_opts *o)
{
    return put_value(out, v, o, 0);
}

int mdt_value_format(void *mem_ctx, char **out, const mdt_value *v, const mdt_name_opts *o)
{
    sb s;
    int e;
    if ((e = gen_opts_check(o, "mdt_value_format")))
        return e;
    sb_init(&s, mem_ctx);
    if ((e = put_value(&s, v, o, 0))) {
        sb_discard(&s);
        return e;
    }
    return sb_finish(&s, out);
}
