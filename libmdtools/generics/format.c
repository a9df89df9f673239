/* Printing types, members and signatures in the styles of NAMES.md: FULL
 * (canonical), REFLECTION (Type.ToString()), IL (ILAsm), with the FRIENDLY
 * option. Names come from the TypeDef/TypeRef rows of the image each type
 * node belongs to. Nesting chains and resolution-scope chains are followed
 * with a depth cap and cycle detection; TypeSpecs referring to themselves,
 * directly or through other TypeSpecs, are reported as cycles. */
#include "config.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <talloc.h>

#include <mdtools/assembly.h>
#include <mdtools/heaps.h>
#include <mdtools/names.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>

#include "generics/gen_int.h"
#include "image/image_int.h"
#include "util/reader.h"
#include "util/strbuf.h"

#define MAX_NEST 64      /* enclosing types / TypeRef scopes followed */
#define MAX_TYPESPEC 16  /* TypeSpecs expanded inside one another */

/* The output: a caller's buffer (fixed: truncation fails the call) or a
 * stack buffer that moves to a talloc block when it outgrows it. The common
 * path is a bounds check and a memcpy. */
struct wr {
    char *buf;
    size_t len, cap;
    void *ctx;     /* talloc parent when growable, else NULL (fixed) */
    bool heap;     /* buf is a talloc block */
    int failed;    /* out of memory, or a fixed buffer overflowed */
    int too_long;  /* past MAX_NAME_LEN */
};

/* No real name comes near this; TypeSpecs that refer to each other several
 * times each could expand exponentially, and this bounds the work. */
#define MAX_NAME_LEN ((size_t)1 << 20)

static void w_grow_add(struct wr *w, const char *s, size_t n)
{
    if (w->failed)
        return;
    if (!w->ctx) {
        size_t room = w->cap - w->len - 1;
        memcpy(w->buf + w->len, s, room);
        w->len += room;
        w->buf[w->len] = '\0';
        w->failed = 1;
        return;
    }
    if (n > MAX_NAME_LEN - w->len) {
        w->failed = w->too_long = 1;
        return;
    }
    size_t cap = w->cap * 2;
    while (cap - w->len <= n)
        cap *= 2;
    char *b = w->heap ? talloc_realloc(w->ctx, w->buf, char, cap) : talloc_array(w->ctx, char, cap);
    if (!b) {
        w->failed = 1;
        return;
    }
    if (!w->heap)
        memcpy(b, w->buf, w->len + 1);
    w->buf = b;
    w->cap = cap;
    w->heap = true;
    memcpy(w->buf + w->len, s, n);
    w->len += n;
    w->buf[w->len] = '\0';
}

static inline void w_add(struct wr *w, const char *s, size_t n)
{
    if (n < w->cap - w->len) {
        memcpy(w->buf + w->len, s, n);
        w->len += n;
        w->buf[w->len] = '\0';
        return;
    }
    w_grow_add(w, s, n);
}

static inline void w_adds(struct wr *w, const char *s)
{
    w_add(w, s, strlen(s));
}

static inline void w_addc(struct wr *w, char c)
{
    w_add(w, &c, 1);
}

static void w_addf(struct wr *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void w_addf(struct wr *w, const char *fmt, ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof small) {
        w_add(w, small, (size_t)n);
        return;
    }
    char *big = talloc_array(NULL, char, (size_t)n + 1);
    if (!big) {
        w->failed = 1;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    w_add(w, big, (size_t)n);
    talloc_free(big);
}

struct cached {
    const char *s;               /* NULL until built */
    uint32_t len;
    uint32_t bare;               /* length without a generic parameter list */
};

struct mdt_name_cache {
    const struct mdt_image *img;
    int style;
    unsigned flags;
    uint32_t ntd, ntr;
    struct cached *td, *tr;      /* by rid, [0] unused */
};

int mdt_name_cache_new(void *mem_ctx, mdt_name_cache **out, const mdt_image *img, int style,
                       unsigned flags)
{
    mdt_name_cache *c = talloc_zero(mem_ctx, mdt_name_cache);
    if (!c)
        return mdt__fail_simple(MDT_ENOMEM, "out of memory");
    c->img = img;
    c->style = style;
    c->flags = flags;
    /* Rows present, not declared: memory bounded by the input. */
    c->ntd = mdt_table_rows_present(img, MDT_TABLE_TypeDef);
    c->ntr = mdt_table_rows_present(img, MDT_TABLE_TypeRef);
    c->td = talloc_zero_array(c, struct cached, (size_t)c->ntd + 1);
    c->tr = talloc_zero_array(c, struct cached, (size_t)c->ntr + 1);
    if (!c->td || !c->tr) {
        talloc_free(c);
        return mdt__fail_simple(MDT_ENOMEM, "out of memory");
    }
    *out = c;
    return 0;
}

struct fmt {
    struct wr out;
    mdt_name_cache *cache;           /* usable for this style, or NULL */
    void *tmp;                       /* scratch for decoded TypeSpecs */
    int style;
    unsigned flags;
    const mdt_generic_context *g;
    const struct mdt_image *ts_img[MAX_TYPESPEC];
    uint32_t ts_stack[MAX_TYPESPEC]; /* TypeSpecs being printed */
    unsigned ts_depth;
    unsigned depth;
    const struct mdt_image *home;    /* image of the first name printed: IL
                                        style scopes TypeDefs of other images */
    uint32_t arity;                  /* arity suffixes of the TypeDef/TypeRef
                                        segments just printed, summed */
};

static int put_type(struct fmt *f, const mdt_type *t);

static int too_long(void)
{
    return mdt__fail_simple(MDT_EBADIMAGE, "name longer than %zu bytes (TypeSpecs expanding "
                                           "into each other?)", MAX_NAME_LEN);
}

/* Scratch space for decoded TypeSpecs, made on first use. */
static void *scratch(struct fmt *f)
{
    if (!f->tmp)
        f->tmp = talloc_new(NULL);
    return f->tmp;
}
static int put_token(struct fmt *f, const struct mdt_image *img, uint32_t token, int kind,
                     bool own);
static int put_method_sig(struct fmt *f, const mdt_method_sig *m);

static int bad(const struct mdt_image *img, const char *region, uint32_t row, const char *fmt,
               uint32_t a, uint32_t b)
{
    mdt_place pl = MDT_PLACE_NONE;
    pl.img = img;
    pl.region = region;
    pl.row = row;
    return mdt__fail(MDT_EBADIMAGE, pl, fmt, a, b);
}

/* --- names of rows --- */

static const char *prim_name(int style, unsigned flags, unsigned kind)
{
    static const char *const full[] = {
        [MDT_ELEMENT_TYPE_VOID] = "System.Void",       [MDT_ELEMENT_TYPE_BOOLEAN] = "System.Boolean",
        [MDT_ELEMENT_TYPE_CHAR] = "System.Char",       [MDT_ELEMENT_TYPE_I1] = "System.SByte",
        [MDT_ELEMENT_TYPE_U1] = "System.Byte",         [MDT_ELEMENT_TYPE_I2] = "System.Int16",
        [MDT_ELEMENT_TYPE_U2] = "System.UInt16",       [MDT_ELEMENT_TYPE_I4] = "System.Int32",
        [MDT_ELEMENT_TYPE_U4] = "System.UInt32",       [MDT_ELEMENT_TYPE_I8] = "System.Int64",
        [MDT_ELEMENT_TYPE_U8] = "System.UInt64",       [MDT_ELEMENT_TYPE_R4] = "System.Single",
        [MDT_ELEMENT_TYPE_R8] = "System.Double",       [MDT_ELEMENT_TYPE_STRING] = "System.String",
        [MDT_ELEMENT_TYPE_TYPEDBYREF] = "System.TypedReference",
        [MDT_ELEMENT_TYPE_I] = "System.IntPtr",        [MDT_ELEMENT_TYPE_U] = "System.UIntPtr",
        [MDT_ELEMENT_TYPE_OBJECT] = "System.Object"};
    static const char *const cs[] = {
        [MDT_ELEMENT_TYPE_VOID] = "void",     [MDT_ELEMENT_TYPE_BOOLEAN] = "bool",
        [MDT_ELEMENT_TYPE_CHAR] = "char",     [MDT_ELEMENT_TYPE_I1] = "sbyte",
        [MDT_ELEMENT_TYPE_U1] = "byte",       [MDT_ELEMENT_TYPE_I2] = "short",
        [MDT_ELEMENT_TYPE_U2] = "ushort",     [MDT_ELEMENT_TYPE_I4] = "int",
        [MDT_ELEMENT_TYPE_U4] = "uint",       [MDT_ELEMENT_TYPE_I8] = "long",
        [MDT_ELEMENT_TYPE_U8] = "ulong",      [MDT_ELEMENT_TYPE_R4] = "float",
        [MDT_ELEMENT_TYPE_R8] = "double",     [MDT_ELEMENT_TYPE_STRING] = "string",
        [MDT_ELEMENT_TYPE_TYPEDBYREF] = "TypedReference",
        [MDT_ELEMENT_TYPE_I] = "nint",        [MDT_ELEMENT_TYPE_U] = "nuint",
        [MDT_ELEMENT_TYPE_OBJECT] = "object"};
    static const char *const il[] = {
        [MDT_ELEMENT_TYPE_VOID] = "void",            [MDT_ELEMENT_TYPE_BOOLEAN] = "bool",
        [MDT_ELEMENT_TYPE_CHAR] = "char",            [MDT_ELEMENT_TYPE_I1] = "int8",
        [MDT_ELEMENT_TYPE_U1] = "unsigned int8",     [MDT_ELEMENT_TYPE_I2] = "int16",
        [MDT_ELEMENT_TYPE_U2] = "unsigned int16",    [MDT_ELEMENT_TYPE_I4] = "int32",
        [MDT_ELEMENT_TYPE_U4] = "unsigned int32",    [MDT_ELEMENT_TYPE_I8] = "int64",
        [MDT_ELEMENT_TYPE_U8] = "unsigned int64",    [MDT_ELEMENT_TYPE_R4] = "float32",
        [MDT_ELEMENT_TYPE_R8] = "float64",           [MDT_ELEMENT_TYPE_STRING] = "string",
        [MDT_ELEMENT_TYPE_TYPEDBYREF] = "typedref",  [MDT_ELEMENT_TYPE_I] = "native int",
        [MDT_ELEMENT_TYPE_U] = "native unsigned int", [MDT_ELEMENT_TYPE_OBJECT] = "object"};
    if (kind > MDT_ELEMENT_TYPE_OBJECT)
        return NULL;
    if (style == MDT_STYLE_IL)
        return il[kind];
    if (flags & MDT_NAME_FRIENDLY)
        return cs[kind];
    return full[kind];
}

/* The generic arity a simple name's suffix states (`` `2 ``), or 0 when it
 * has none: a backtick, then 1 to 65535 without leading zeros (the
 * GenericParam Number column is 2 bytes), at the end of the name. *stem is
 * the length of the name without the suffix. */
static uint32_t arity_suffix(const char *name, size_t len, size_t *stem)
{
    const char *tick = NULL;
    uint32_t n = 0;
    *stem = len;
    for (size_t i = len; i-- > 0 && !tick;)
        if (name[i] == '`')
            tick = name + i;
    if (!tick || tick + 1 == name + len || tick[1] == '0')
        return 0;
    for (const char *p = tick + 1; p < name + len; p++) {
        if (*p < '0' || *p > '9' || (n = n * 10 + (uint32_t)(*p - '0')) > 0xFFFF)
            return 0;
    }
    *stem = (size_t)(tick - name);
    return n;
}

/* Whether this style strips arity suffixes and names generic parameters
 * instead (the full style, friendly or not; not its metadata form). */
static bool plain_generics(const struct fmt *f)
{
    return f->style == MDT_STYLE_FULL && !(f->flags & MDT_NAME_METADATA);
}

/* A simple name as this style prints it: arity suffix dropped in the full
 * style (and counted in f->arity), reflection's escapes. */
static void put_simple(struct fmt *f, const char *name, size_t len)
{
    if (plain_generics(f)) {
        size_t stem;
        uint32_t n = arity_suffix(name, len, &stem);
        /* Capped: a list past MAX_NAME_LEN fails anyway. */
        f->arity = n > MAX_NAME_LEN - f->arity ? (uint32_t)MAX_NAME_LEN : f->arity + n;
        w_add(&f->out, name, stem);
        return;
    }
    if (f->style == MDT_STYLE_REFLECTION) {
        for (size_t i = 0; i < len; i++) {
            if (strchr("\\,+&*[]", name[i]))
                w_addc(&f->out, '\\');
            w_addc(&f->out, name[i]);
        }
        return;
    }
    w_add(&f->out, name, len);
}

static void put_segment(struct fmt *f, const char *ns, size_t nslen, const char *name,
                        size_t len, bool outermost)
{
    if (nslen && outermost && !(f->flags & MDT_NAME_FRIENDLY)) {
        w_add(&f->out, ns, nslen);
        w_addc(&f->out, '.');
    }
    put_simple(f, name, len);
}

int mdt_typedef_enclosing(const mdt_image *img, uint32_t token, uint32_t *enclosing)
{
    mdt_find fi;
    uint32_t rid;
    mdt_row r;
    int e;
    *enclosing = 0;
    /* NestedClass keys on the row alone: another table's token with a
     * nested TypeDef's row must not read as that TypeDef. */
    if (MDT_TOKEN_TABLE(token) != MDT_TABLE_TypeDef || !MDT_TOKEN_RID(token))
        return mdt__fail_simple(MDT_EINVAL, "0x%08x is not a TypeDef token", token);
    if (MDT_TOKEN_RID(token) > mdt_table_rows(img, MDT_TABLE_TypeDef))
        return mdt_row_get(&r, img, MDT_TABLE_TypeDef, MDT_TOKEN_RID(token));
    if (!mdt_table_rows(img, MDT_TABLE_NestedClass))
        return 0;
    if ((e = mdt_find_init(&fi, img, MDT_TABLE_NestedClass, MDT_COL_NestedClass_NestedClass,
                           token & 0x00FFFFFFu)))
        return e;
    if (mdt_find_next(&rid, &fi) != 0)
        return 0;
    if ((e = mdt_row_get(&r, img, MDT_TABLE_NestedClass, rid)) ||
        (e = mdt_row_token(enclosing, &r, MDT_COL_NestedClass_EnclosingClass)))
        return e;
    return 0;
}

bool mdt__type_is(const struct mdt_image *img, uint32_t token, const char *ns, const char *name)
{
    unsigned table = MDT_TOKEN_TABLE(token);
    mdt_row r;
    const char *n, *s;
    if (table != MDT_TABLE_TypeDef && table != MDT_TABLE_TypeRef)
        return false;
    if (mdt_row_get(&r, img, table, MDT_TOKEN_RID(token)) ||
        mdt_row_string(&n, NULL, &r,
                       table == MDT_TABLE_TypeDef ? MDT_COL_TypeDef_TypeName
                                                  : MDT_COL_TypeRef_TypeName) ||
        mdt_row_string(&s, NULL, &r,
                       table == MDT_TABLE_TypeDef ? MDT_COL_TypeDef_TypeNamespace
                                                  : MDT_COL_TypeRef_TypeNamespace)) {
        mdt__err_forget_one();
        return false;
    }
    if (strcmp(n, name) || strcmp(s, ns))
        return false;
    if (table == MDT_TABLE_TypeRef) { /* not nested in another TypeRef */
        uint32_t scope;
        if (mdt_row_token(&scope, &r, MDT_COL_TypeRef_ResolutionScope)) {
            mdt__err_forget_one();
            return false;
        }
        return MDT_TOKEN_TABLE(scope) != MDT_TABLE_TypeRef;
    }
    uint32_t enc;
    if (mdt_typedef_enclosing(img, token, &enc)) {
        mdt__err_forget_one(); /* it records one failure */
        return false;
    }
    return enc == 0;
}

/* One '+'-separated segment of a reflection name, unescaped, into buf. */
static size_t unescape_segment(const char *s, size_t len, size_t *pos, char *buf, size_t cap)
{
    size_t o = 0;
    bool over = false;
    while (*pos < len && s[*pos] != '+') {
        if (s[*pos] == '\\' && *pos + 1 < len)
            (*pos)++;
        if (o + 1 < cap)
            buf[o++] = s[*pos];
        else
            over = true;
        (*pos)++;
    }
    buf[o] = '\0';
    return over ? SIZE_MAX : o; /* no TypeDef name is that long */
}

int mdt_typedef_by_name(const mdt_image *img, const char *name, size_t len, uint32_t *token)
{
    char seg[1024];
    size_t pos = 0;
    uint32_t cur = 0, n = mdt_table_rows_present(img, MDT_TABLE_TypeDef);
    for (unsigned level = 0; level < MAX_NEST; level++) {
        size_t sl = unescape_segment(name, len, &pos, seg, sizeof seg);
        uint32_t found = 0;
        for (uint32_t i = 1; i <= n && !found && sl != SIZE_MAX; i++) {
            mdt_row r;
            const char *rn, *rs;
            size_t rnl, rsl;
            uint32_t enc;
            if (mdt_row_get(&r, img, MDT_TABLE_TypeDef, i) ||
                mdt_row_string(&rn, &rnl, &r, MDT_COL_TypeDef_TypeName) ||
                mdt_row_string(&rs, &rsl, &r, MDT_COL_TypeDef_TypeNamespace)) {
                mdt__err_forget_one(); /* a row that does not read is not the one */
                continue;
            }
            /* "ns.name", or "name" for an empty namespace, must be the segment. */
            if (rsl ? !(rsl + 1 + rnl == sl && !memcmp(seg, rs, rsl) && seg[rsl] == '.' &&
                        !memcmp(seg + rsl + 1, rn, rnl))
                    : !(rnl == sl && !memcmp(seg, rn, rnl)))
                continue;
            if (mdt_typedef_enclosing(img, MDT_TOKEN(MDT_TABLE_TypeDef, i), &enc))
                mdt__err_forget_one(); /* it records one failure */
            else if (enc == cur)
                found = MDT_TOKEN(MDT_TABLE_TypeDef, i);
        }
        if (!found)
            break;
        cur = found;
        if (pos >= len) {
            *token = cur;
            return 0;
        }
        pos++; /* the '+' */
    }
    return mdt__fail_simple(MDT_ENOTFOUND, "no TypeDef named %.*s", (int)(len > 200 ? 200 : len),
                            name);
}

static const char *nest_sep(const struct fmt *f)
{
    return f->style == MDT_STYLE_IL ? "/" : "+";
}

/* The cache slot for a TypeDef or TypeRef of img, or NULL. */
static struct cached *cache_slot(struct fmt *f, const struct mdt_image *img, uint32_t token)
{
    mdt_name_cache *c = f->cache;
    uint32_t rid = token & 0xFFFFFF;
    if (!c || c->img != img)
        return NULL;
    if (token >> 24 == MDT_TABLE_TypeDef)
        return rid && rid <= c->ntd ? &c->td[rid] : NULL;
    return rid && rid <= c->ntr ? &c->tr[rid] : NULL;
}

/* Keep what was printed since `start` as the slot's name; its first
 * `bare` bytes are the name without a parameter list. */
static void cache_store(struct fmt *f, struct cached *slot, size_t start, size_t bare)
{
    if (!slot || f->out.failed || f->out.len - start > UINT32_MAX)
        return;
    char *s = talloc_strndup(f->cache, f->out.buf + start, f->out.len - start);
    if (s) {
        slot->s = s;
        slot->len = (uint32_t)(f->out.len - start);
        slot->bare = (uint32_t)bare;
    }
}

/* Forget what was printed after `len` bytes. */
static void w_cut(struct wr *w, size_t len)
{
    if (w->failed || len > w->len)
        return;
    w->len = len;
    w->buf[len] = '\0';
}

#define MAX_SORTED_PARAMS 64 /* parameter lists put in Number order; longer ones in row order */

/* "<,,>": `arity` parameters without names. */
static void put_arity_params(struct fmt *f, uint32_t arity)
{
    if (!arity)
        return;
    w_addc(&f->out, '<');
    for (uint32_t i = 1; i < arity && !f->out.failed; i++)
        w_addc(&f->out, ',');
    w_addc(&f->out, '>');
}

/* The parameter list of a generic TypeDef named on its own: the names of
 * its GenericParam rows (II.22.20) in Number order, `<TKey,TValue>`; from
 * its arity suffixes (`arity`) when it has no such rows. An unreadable
 * GenericParam table degrades to the arity form, never to an error. */
static void put_typedef_params(struct fmt *f, const struct mdt_image *img, uint32_t token,
                               uint32_t arity)
{
    uint32_t key, rid, rids[MAX_SORTED_PARAMS], nums[MAX_SORTED_PARAMS];
    unsigned n = 0;
    bool many = false;
    mdt_find fi;
    if (!mdt_table_rows(img, MDT_TABLE_GenericParam) ||
        mdt_coded_encode(&key, MDT_CI_TypeOrMethodDef, token) ||
        mdt_find_init(&fi, img, MDT_TABLE_GenericParam, MDT_COL_GenericParam_Owner, key)) {
        put_arity_params(f, arity);
        return;
    }
    while (mdt_find_next(&rid, &fi) == 0) {
        mdt_row r;
        if (n == MAX_SORTED_PARAMS) {
            many = true;
            break;
        }
        if (mdt_row_get(&r, img, MDT_TABLE_GenericParam, rid))
            continue;
        /* Insertion by Number: a sorted table keeps them so already. */
        uint32_t num = mdt_row_raw(&r, MDT_COL_GenericParam_Number);
        unsigned j = n++;
        for (; j > 0 && nums[j - 1] > num; j--) {
            nums[j] = nums[j - 1];
            rids[j] = rids[j - 1];
        }
        nums[j] = num;
        rids[j] = rid;
    }
    if (!n) {
        put_arity_params(f, arity);
        return;
    }
    if (many) /* a very long list: row order, in a second pass */
        mdt_find_init(&fi, img, MDT_TABLE_GenericParam, MDT_COL_GenericParam_Owner, key);
    w_addc(&f->out, '<');
    for (unsigned i = 0; !f->out.failed; i++) {
        mdt_row r;
        const char *name;
        size_t len;
        if (many ? mdt_find_next(&rid, &fi) != 0 : i == n)
            break;
        if (i)
            w_addc(&f->out, ',');
        if (mdt_row_get(&r, img, MDT_TABLE_GenericParam, many ? rid : rids[i]) == 0 &&
            mdt_row_string(&name, &len, &r, MDT_COL_GenericParam_Name) == 0)
            w_add(&f->out, name, len);
        else
            mdt__err_forget_one(); /* a name that does not read is left out */
    }
    w_addc(&f->out, '>');
}

static int put_typedef_uncached(struct fmt *f, const struct mdt_image *img, uint32_t token);
static int put_typeref_uncached(struct fmt *f, const struct mdt_image *img, uint32_t token);

/* A TypeDef or TypeRef. `own`: named on its own, not as the generic type
 * of an instantiation, so a generic one shows its parameters in the full
 * style (doc/names.md): `Dictionary<TKey,TValue>`, or `Dictionary<,>` from
 * the arity suffixes of a TypeRef. The cache keeps that form and the
 * length of the name without it. */
static int put_named(struct fmt *f, const struct mdt_image *img, uint32_t token, bool own)
{
    struct cached *slot = cache_slot(f, img, token);
    bool typedef_ = token >> 24 == MDT_TABLE_TypeDef;
    size_t start = f->out.len, bare;
    int e;
    if (slot && slot->s) {
        w_add(&f->out, slot->s, own ? slot->len : slot->bare);
        return 0;
    }
    f->arity = 0;
    if ((e = typedef_ ? put_typedef_uncached(f, img, token) : put_typeref_uncached(f, img, token)))
        return e;
    bare = f->out.len - start;
    if (!plain_generics(f)) { /* no parameter list in this style */
        cache_store(f, slot, start, bare);
        return 0;
    }
    if (!own && !slot)
        return 0;
    if (typedef_)
        put_typedef_params(f, img, token, f->arity);
    else
        put_arity_params(f, f->arity);
    cache_store(f, slot, start, bare);
    if (!own)
        w_cut(&f->out, start + bare);
    return 0;
}

/* Rows chain[n-1] (outermost) .. chain[0] of `table` as nested segments. */
static int put_chain(struct fmt *f, const struct mdt_image *img, unsigned table,
                     const uint32_t *chain, unsigned n, unsigned name_col, unsigned ns_col)
{
    for (unsigned i = n; i-- > 0;) {
        mdt_row r;
        const char *name, *ns;
        size_t len, nslen;
        int e;
        if ((e = mdt_row_get(&r, img, table, chain[i] & 0xFFFFFF)) ||
            (e = mdt_row_string(&name, &len, &r, name_col)) ||
            (e = mdt_row_string(&ns, &nslen, &r, ns_col)))
            return e;
        put_segment(f, ns, nslen, name, len, i == n - 1);
        if (i)
            w_adds(&f->out, nest_sep(f));
    }
    return 0;
}

static int put_typedef_uncached(struct fmt *f, const struct mdt_image *img, uint32_t token)
{
    uint32_t chain[MAX_NEST];
    unsigned n = 0;
    int e;
    for (uint32_t t = token; t;) {
        for (unsigned i = 0; i < n; i++)
            if (chain[i] == t)
                return bad(img, "NestedClass", UINT32_MAX,
                           "nesting cycle: TypeDef %u encloses itself (via TypeDef %u)",
                           t & 0xFFFFFF, chain[n - 1] & 0xFFFFFF);
        if (n == MAX_NEST)
            return bad(img, "NestedClass", UINT32_MAX, "types nested deeper than %u (TypeDef %u)",
                       MAX_NEST, token & 0xFFFFFF);
        chain[n++] = t;
        if ((e = mdt_typedef_enclosing(img, t, &t)))
            return e;
        if (t >> 24 != MDT_TABLE_TypeDef)
            t = 0;
    }
    if (f->style == MDT_STYLE_IL && f->home && f->home != img) {
        /* A runtime instantiation mixes modules: say where this one is. */
        mdt_identity id;
        uint64_t mark = mdt__err_mark();
        if (mdt_assembly_identity(&id, img) == 0) {
            w_addf(&f->out, "[%s]", id.name);
        } else {
            mdt__err_forget(mark);
            w_addf(&f->out, "[.module %s]", mdt_image_name(img));
        }
    }
    return put_chain(f, img, MDT_TABLE_TypeDef, chain, n, MDT_COL_TypeDef_TypeName,
                     MDT_COL_TypeDef_TypeNamespace);
}

/* IL prefix for a TypeRef's outermost scope: [Assembly] or [.module X]. */
static int put_il_scope(struct fmt *f, const struct mdt_image *img, uint32_t scope)
{
    mdt_row r;
    const char *name;
    int e;
    switch (scope >> 24) {
    case MDT_TABLE_AssemblyRef:
        if ((e = mdt_row_get(&r, img, MDT_TABLE_AssemblyRef, scope & 0xFFFFFF)) ||
            (e = mdt_row_string(&name, NULL, &r, MDT_COL_AssemblyRef_Name)))
            return e;
        w_addf(&f->out, "[%s]", name);
        return 0;
    case MDT_TABLE_ModuleRef:
        if ((e = mdt_row_get(&r, img, MDT_TABLE_ModuleRef, scope & 0xFFFFFF)) ||
            (e = mdt_row_string(&name, NULL, &r, MDT_COL_ModuleRef_Name)))
            return e;
        w_addf(&f->out, "[.module %s]", name);
        return 0;
    default:
        return 0;
    }
}

static int put_typeref_uncached(struct fmt *f, const struct mdt_image *img, uint32_t token)
{
    uint32_t chain[MAX_NEST], scope = 0;
    mdt_row rows[MAX_NEST];
    unsigned n = 0;
    int e;
    for (uint32_t t = token; t >> 24 == MDT_TABLE_TypeRef && (t & 0xFFFFFF);) {
        mdt_row *r = &rows[n];
        for (unsigned i = 0; i < n; i++)
            if (chain[i] == t)
                return bad(img, "TypeRef", t & 0xFFFFFF,
                           "resolution scope cycle: TypeRef %u is its own scope (via %u)",
                           t & 0xFFFFFF, chain[n - 1] & 0xFFFFFF);
        if (n == MAX_NEST)
            return bad(img, "TypeRef", token & 0xFFFFFF,
                       "resolution scopes nested deeper than %u (TypeRef %u)", MAX_NEST,
                       token & 0xFFFFFF);
        chain[n++] = t;
        if ((e = mdt_row_get(r, img, MDT_TABLE_TypeRef, t & 0xFFFFFF)) ||
            (e = mdt_row_token(&scope, r, MDT_COL_TypeRef_ResolutionScope)))
            return e;
        t = scope;
    }
    if (f->style == MDT_STYLE_IL && (e = put_il_scope(f, img, scope)))
        return e;
    for (unsigned i = n; i-- > 0;) {
        const char *name, *ns;
        size_t len, nslen;
        if ((e = mdt_row_string(&name, &len, &rows[i], MDT_COL_TypeRef_TypeName)) ||
            (e = mdt_row_string(&ns, &nslen, &rows[i], MDT_COL_TypeRef_TypeNamespace)))
            return e;
        put_segment(f, ns, nslen, name, len, i == n - 1);
        if (i)
            w_adds(&f->out, nest_sep(f));
    }
    return 0;
}

static int put_typespec(struct fmt *f, const struct mdt_image *img, uint32_t token)
{
    mdt_sig s;
    int e;
    for (unsigned i = 0; i < f->ts_depth; i++)
        if (f->ts_stack[i] == token && f->ts_img[i] == img)
            return bad(img, "TypeSpec", token & 0xFFFFFF,
                       "TypeSpec %u refers to itself (through TypeSpec %u)", token & 0xFFFFFF,
                       f->ts_stack[f->ts_depth - 1] & 0xFFFFFF);
    if (f->ts_depth == MAX_TYPESPEC)
        return bad(img, "TypeSpec", token & 0xFFFFFF, "TypeSpecs nested deeper than %u (%u)",
                   MAX_TYPESPEC, token & 0xFFFFFF);
    /* A TypeSpec tree goes on the stack; only a huge one needs the heap. */
    uint64_t arena[256];
    if ((e = mdt_sig_of_token_buf(arena, sizeof arena, &s, img, token)) == MDT_ENOMEM) {
        if (!scratch(f))
            return mdt__fail_simple(MDT_ENOMEM, "out of memory");
        e = mdt_sig_of_token(f->tmp, &s, img, token);
    }
    if (e)
        return e;
    f->ts_img[f->ts_depth] = img;
    f->ts_stack[f->ts_depth++] = token;
    e = put_type(f, s.type);
    f->ts_depth--;
    return e;
}

/* A TypeDefOrRef(OrSpec) token; `kind` CLASS/VALUETYPE selects IL's prefix,
 * 0 prints none; `own` as for put_named. */
static int put_token(struct fmt *f, const struct mdt_image *img, uint32_t token, int kind,
                     bool own)
{
    if (!f->home)
        f->home = img;
    switch (token >> 24) {
    case MDT_TABLE_TypeDef:
    case MDT_TABLE_TypeRef:
        if (f->style == MDT_STYLE_IL && kind)
            w_adds(&f->out, kind == MDT_ELEMENT_TYPE_VALUETYPE ? "valuetype " : "class ");
        return put_named(f, img, token, own);
    case MDT_TABLE_TypeSpec:
        return put_typespec(f, img, token);
    default:
        return mdt__fail_simple(MDT_EINVAL, "token 0x%08x is not a type", token);
    }
}

/* --- types --- */

static int put_generic_param(struct fmt *f, const mdt_type *t)
{
    bool method = t->kind == MDT_ELEMENT_TYPE_MVAR;
    const mdt_generic_context *g = f->g;
    if (g) {
        uint32_t n = method ? g->nmethod_args : g->ntype_args;
        const mdt_type *const *args = method ? g->method_args : g->type_args;
        if (args && t->number < n) {
            /* Arguments are closed with respect to this context. */
            const mdt_generic_context *saved = f->g;
            f->g = NULL;
            int e = put_type(f, args[t->number]);
            f->g = saved;
            return e;
        }
        uint32_t owner = method ? g->method_owner : g->type_owner;
        if ((f->flags & MDT_NAME_PARAM_NAMES) && owner && g->img) {
            uint32_t key;
            mdt_find fi;
            uint32_t rid;
            if (mdt_coded_encode(&key, MDT_CI_TypeOrMethodDef, owner) == 0 &&
                mdt_find_init(&fi, g->img, MDT_TABLE_GenericParam, MDT_COL_GenericParam_Owner,
                              key) == 0) {
                while (mdt_find_next(&rid, &fi) == 0) {
                    mdt_row r;
                    const char *name;
                    if (mdt_row_get(&r, g->img, MDT_TABLE_GenericParam, rid) == 0 &&
                        mdt_row_raw(&r, MDT_COL_GenericParam_Number) == t->number &&
                        mdt_row_string(&name, NULL, &r, MDT_COL_GenericParam_Name) == 0) {
                        /* ILAsm names a parameter !T / !!T (II.23.2.12). */
                        if (f->style == MDT_STYLE_IL)
                            w_adds(&f->out, method ? "!!" : "!");
                        w_adds(&f->out, name);
                        return 0;
                    }
                }
            }
        }
    }
    char num[16];
    int n = 0;
    uint32_t v = t->number;
    do
        num[sizeof num - 1 - n++] = (char)('0' + v % 10);
    while ((v /= 10));
    w_adds(&f->out, method ? "!!" : "!");
    w_add(&f->out, num + sizeof num - n, (size_t)n);
    return 0;
}

static void put_array_shape(struct fmt *f, const mdt_array_shape *s)
{
    if (f->style == MDT_STYLE_REFLECTION) {
        if (s->rank == 1)
            w_adds(&f->out, "[*]");
        else {
            w_addc(&f->out, '[');
            for (uint32_t i = 1; i < s->rank; i++)
                w_addc(&f->out, ',');
            w_addc(&f->out, ']');
        }
        return;
    }
    w_addc(&f->out, '[');
    if (s->rank == 1 && s->nsizes == 0 && s->nlobounds == 0 && f->style == MDT_STYLE_FULL)
        w_addc(&f->out, '*');
    for (uint32_t i = 0; i < s->rank; i++) {
        bool has_size = i < s->nsizes, has_lo = i < s->nlobounds;
        if (i)
            w_addc(&f->out, ',');
        if (has_lo && has_size)
            w_addf(&f->out, "%d...%lld", s->lobounds[i],
                    (long long)s->lobounds[i] + (long long)s->sizes[i] - 1);
        else if (has_lo)
            w_addf(&f->out, "%d...", s->lobounds[i]);
        else if (has_size)
            w_addf(&f->out, "%u", s->sizes[i]);
        else if (s->rank == 1 && f->style == MDT_STYLE_IL)
            w_adds(&f->out, "...");
    }
    w_addc(&f->out, ']');
    if (f->style == MDT_STYLE_FULL && (s->nsizes > s->rank || s->nlobounds > s->rank)) {
        w_adds(&f->out, "{sizes=");
        for (uint32_t i = 0; i < s->nsizes; i++)
            w_addf(&f->out, "%s%u", i ? "," : "", s->sizes[i]);
        w_adds(&f->out, ";lo=");
        for (uint32_t i = 0; i < s->nlobounds; i++)
            w_addf(&f->out, "%s%d", i ? "," : "", s->lobounds[i]);
        w_addc(&f->out, '}');
    }
}

static const char *cc_word(unsigned cc, char *buf, size_t n)
{
    switch (cc) {
    case MDT_CC_DEFAULT: return NULL;
    case MDT_CC_C: return "unmanaged[Cdecl]";
    case MDT_CC_STDCALL: return "unmanaged[Stdcall]";
    case MDT_CC_THISCALL: return "unmanaged[Thiscall]";
    case MDT_CC_FASTCALL: return "unmanaged[Fastcall]";
    case MDT_CC_VARARG: return "vararg";
    case MDT_CC_UNMANAGED: return "unmanaged";
    default: snprintf(buf, n, "callconv(%u)", cc); return buf;
    }
}

static const char *cc_word_il(unsigned cc, char *buf, size_t n)
{
    switch (cc) {
    case MDT_CC_DEFAULT: return NULL;
    case MDT_CC_C: return "unmanaged cdecl";
    case MDT_CC_STDCALL: return "unmanaged stdcall";
    case MDT_CC_THISCALL: return "unmanaged thiscall";
    case MDT_CC_FASTCALL: return "unmanaged fastcall";
    case MDT_CC_VARARG: return "vararg";
    case MDT_CC_UNMANAGED: return "unmanaged";
    default: snprintf(buf, n, "callconv(%u)", cc); return buf;
    }
}

static int put_params(struct fmt *f, const mdt_method_sig *m, const char *sep)
{
    int e = 0;
    for (uint32_t i = 0; i < m->nparams && !e; i++) {
        if (i)
            w_adds(&f->out, sep);
        if (i == m->sentinel) {
            w_adds(&f->out, "...");
            w_adds(&f->out, sep);
        }
        e = put_type(f, m->params[i]);
    }
    if (!e && m->sentinel != UINT32_MAX && m->sentinel >= m->nparams) {
        if (m->nparams)
            w_adds(&f->out, sep);
        w_adds(&f->out, "...");
    }
    return e;
}

static int put_fnptr(struct fmt *f, const mdt_method_sig *m)
{
    char buf[24];
    const char *w;
    int e;
    if (f->style == MDT_STYLE_REFLECTION) {
        w_adds(&f->out, "System.IntPtr");
        return 0;
    }
    if (f->style == MDT_STYLE_IL) {
        w_adds(&f->out, "method ");
        if (m->callconv & MDT_CC_HASTHIS)
            w_adds(&f->out, "instance ");
        if (m->callconv & MDT_CC_EXPLICITTHIS)
            w_adds(&f->out, "explicit ");
        if ((w = cc_word_il(m->callconv & MDT_CC_MASK, buf, sizeof buf)))
            w_addf(&f->out, "%s ", w);
        if ((e = put_type(f, m->ret)))
            return e;
        w_adds(&f->out, " *(");
        if ((e = put_params(f, m, ", ")))
            return e;
        w_addc(&f->out, ')');
        return 0;
    }
    w_adds(&f->out, "delegate*");
    if (m->callconv & MDT_CC_HASTHIS)
        w_adds(&f->out, " instance");
    if (m->callconv & MDT_CC_EXPLICITTHIS)
        w_adds(&f->out, " explicit");
    if ((w = cc_word(m->callconv & MDT_CC_MASK, buf, sizeof buf)))
        w_addf(&f->out, " %s", w);
    w_addc(&f->out, '<');
    if ((e = put_params(f, m, ",")))
        return e;
    if (m->nparams || m->sentinel != UINT32_MAX)
        w_addc(&f->out, ',');
    if ((e = put_type(f, m->ret)))
        return e;
    w_addc(&f->out, '>');
    return 0;
}

static int put_mods(struct fmt *f, const mdt_type *t)
{
    if (f->style == MDT_STYLE_REFLECTION)
        return 0;
    for (uint16_t i = 0; i < t->nmods; i++) {
        int e;
        w_adds(&f->out, t->mods[i].required ? " modreq(" : " modopt(");
        if ((e = put_token(f, t->img, t->mods[i].token, 0, true)))
            return e;
        w_addc(&f->out, ')');
    }
    return 0;
}

static int put_type(struct fmt *f, const mdt_type *t)
{
    int e = 0;
    if (!t)
        return mdt__fail_simple(MDT_EINVAL, "NULL type");
    if (f->out.failed) /* stop expanding once the name cannot be built */
        return f->out.too_long ? too_long() : 0; /* finish() reports it */
    if (++f->depth > 4 * MDT_SIG_MAX_DEPTH) {
        f->depth--;
        return mdt__fail_simple(MDT_EBADIMAGE, "type nested too deeply to print");
    }
    const char *prim;
    switch (t->kind) {
    case MDT_ELEMENT_TYPE_CLASS:
    case MDT_ELEMENT_TYPE_VALUETYPE:
        e = put_token(f, t->img, t->token, t->kind, true);
        break;
    case MDT_ELEMENT_TYPE_PTR:
    case MDT_ELEMENT_TYPE_BYREF:
    case MDT_ELEMENT_TYPE_SZARRAY:
        if (!(e = put_type(f, t->elem)))
            w_adds(&f->out, t->kind == MDT_ELEMENT_TYPE_PTR     ? "*"
                             : t->kind == MDT_ELEMENT_TYPE_BYREF ? "&"
                                                                 : "[]");
        break;
    case MDT_ELEMENT_TYPE_ARRAY:
        if (!(e = put_type(f, t->elem)))
            put_array_shape(f, t->shape);
        break;
    case MDT_ELEMENT_TYPE_VAR:
    case MDT_ELEMENT_TYPE_MVAR:
        e = put_generic_param(f, t);
        break;
    case MDT_ELEMENT_TYPE_GENERICINST: {
        const char *open = f->style == MDT_STYLE_REFLECTION ? "[" : "<";
        const char *close = f->style == MDT_STYLE_REFLECTION ? "]" : ">";
        const char *sep = f->style == MDT_STYLE_IL ? ", " : ",";
        if ((e = put_token(f, t->elem->img, t->elem->token, t->elem->kind, false)))
            break;
        w_adds(&f->out, open);
        for (uint32_t i = 0; i < t->nargs && !e; i++) {
            if (i)
                w_adds(&f->out, sep);
            e = put_type(f, t->args[i]);
        }
        w_adds(&f->out, close);
        break;
    }
    case MDT_ELEMENT_TYPE_FNPTR:
        e = put_fnptr(f, t->method);
        break;
    case MDT_ELEMENT_TYPE_INTERNAL:
        w_addf(&f->out, "<internal 0x%llx>", (unsigned long long)t->internal);
        break;
    case MDT_ELEMENT_TYPE_CANON:
        w_adds(&f->out, (f->flags & MDT_NAME_FRIENDLY) ? "__Canon" : "System.__Canon");
        break;
    default:
        if ((prim = prim_name(f->style, f->flags, t->kind)))
            w_adds(&f->out, prim);
        else
            e = mdt__fail_simple(MDT_EINVAL, "element type 0x%02x has no name", t->kind);
    }
    if (!e)
        e = put_mods(f, t);
    f->depth--;
    return e;
}

static int put_method_sig(struct fmt *f, const mdt_method_sig *m)
{
    char buf[24];
    const char *w;
    bool il = f->style == MDT_STYLE_IL;
    int e;
    if (m->callconv & MDT_CC_HASTHIS)
        w_adds(&f->out, "instance ");
    if (m->callconv & MDT_CC_EXPLICITTHIS)
        w_adds(&f->out, "explicit ");
    if ((m->callconv & MDT_CC_MASK) != MDT_CC_PROPERTY &&
        (w = (il ? cc_word_il : cc_word)(m->callconv & MDT_CC_MASK, buf, sizeof buf)))
        w_addf(&f->out, "%s ", w);
    if ((m->callconv & MDT_CC_GENERIC) && !il)
        w_addf(&f->out, "generic<%u> ", m->gen_count);
    if ((e = put_type(f, m->ret)))
        return e;
    /* ILAsm states a generic method's arity where its name would go
     * (II.15.4.1, genArity: `<[N]>`). */
    if ((m->callconv & MDT_CC_GENERIC) && il)
        w_addf(&f->out, " <[%u]>", m->gen_count);
    w_addc(&f->out, '(');
    if ((e = put_params(f, m, il ? ", " : ",")))
        return e;
    w_addc(&f->out, ')');
    return 0;
}

/* --- entry points --- */

#define STACK_OUT 512 /* most names fit: one allocation, of the exact size */

static void init(struct fmt *f, char *buf, size_t cap, void *mem_ctx, const mdt_name_opts *o)
{
    f->out.buf = buf;
    f->out.cap = cap;
    f->out.len = 0;
    f->out.ctx = mem_ctx;
    f->out.heap = false;
    f->out.failed = 0;
    f->out.too_long = 0;
    buf[0] = '\0';
    f->tmp = NULL;
    f->style = o ? o->style : MDT_STYLE_FULL;
    f->flags = o ? o->flags : 0;
    f->g = o ? o->gctx : NULL;
    f->cache = o && o->cache && o->cache->style == f->style && o->cache->flags == f->flags &&
                       f->style != MDT_STYLE_IL
                   ? o->cache
                   : NULL;
    f->ts_depth = 0;
    f->depth = 0;
    f->home = NULL;
}

/* talloc front end: the name under mem_ctx. */
static int finish(struct fmt *f, int e, char **out)
{
    talloc_free(f->tmp);
    if (!e && f->out.failed)
        e = f->out.too_long ? too_long()
                            : mdt__fail_simple(MDT_ENOMEM, "out of memory building a name");
    if (e) {
        if (f->out.heap)
            talloc_free(f->out.buf);
        return e;
    }
    if (f->out.heap) {
        *out = f->out.buf;
        return 0;
    }
    if (!(*out = talloc_memdup(f->out.ctx, f->out.buf, f->out.len + 1)))
        return mdt__fail_simple(MDT_ENOMEM, "out of memory building a name");
    talloc_set_name_const(*out, "char");
    return 0;
}

/* Buffer front end: the name in the caller's buffer. */
static int finish_buf(struct fmt *f, int e, size_t *len)
{
    talloc_free(f->tmp);
    if (len)
        *len = f->out.len;
    if (!e && f->out.failed)
        e = mdt__fail_simple(MDT_ETRUNC, "name longer than the %zu-byte buffer", f->out.cap);
    return e;
}

static int sig_body(struct fmt *f, const mdt_sig *s)
{
    int e = 0;
    switch (s->kind) {
    case MDT_SIG_METHOD:
    case MDT_SIG_PROPERTY:
        return put_method_sig(f, s->method);
    case MDT_SIG_FIELD:
    case MDT_SIG_TYPESPEC:
        return put_type(f, s->type);
    case MDT_SIG_LOCALS:
        w_addc(&f->out, '(');
        for (uint32_t i = 0; i < s->locals->count && !e; i++) {
            if (i)
                w_adds(&f->out, f->style == MDT_STYLE_IL ? ", " : ",");
            e = put_type(f, s->locals->locals[i].type);
            if (s->locals->locals[i].pinned && f->style != MDT_STYLE_REFLECTION)
                w_adds(&f->out, " pinned");
        }
        w_addc(&f->out, ')');
        return e;
    case MDT_SIG_METHODSPEC:
        w_addc(&f->out, f->style == MDT_STYLE_REFLECTION ? '[' : '<');
        for (uint32_t i = 0; i < s->nargs && !e; i++) {
            if (i)
                w_adds(&f->out, f->style == MDT_STYLE_IL ? ", " : ",");
            e = put_type(f, s->args[i]);
        }
        w_addc(&f->out, f->style == MDT_STYLE_REFLECTION ? ']' : '>');
        return e;
    default:
        return mdt__fail_simple(MDT_EINVAL, "unknown signature kind %d", s->kind);
    }
}

static int token_body(struct fmt *f, const mdt_image *img, uint32_t token);

int mdt_type_name(void *mem_ctx, char **out, const mdt_type *t, const mdt_name_opts *o)
{
    struct fmt f;
    char buf[STACK_OUT];
    init(&f, buf, sizeof buf, mem_ctx, o);
    return finish(&f, put_type(&f, t), out);
}

int mdt_sig_name(void *mem_ctx, char **out, const mdt_sig *s, const mdt_name_opts *o)
{
    struct fmt f;
    char buf[STACK_OUT];
    init(&f, buf, sizeof buf, mem_ctx, o);
    return finish(&f, sig_body(&f, s), out);
}

int mdt_token_name(void *mem_ctx, char **out, const mdt_image *img, uint32_t token,
                   const mdt_name_opts *o)
{
    struct fmt f;
    char buf[STACK_OUT];
    init(&f, buf, sizeof buf, mem_ctx, o);
    return finish(&f, token_body(&f, img, token), out);
}

int mdt_type_name_buf(char *buf, size_t size, size_t *len, const mdt_type *t,
                      const mdt_name_opts *o)
{
    struct fmt f;
    if (!buf || !size)
        return mdt__fail_simple(MDT_EINVAL, "no buffer for the name");
    init(&f, buf, size, NULL, o);
    return finish_buf(&f, put_type(&f, t), len);
}

int mdt_sig_name_buf(char *buf, size_t size, size_t *len, const mdt_sig *s,
                     const mdt_name_opts *o)
{
    struct fmt f;
    if (!buf || !size)
        return mdt__fail_simple(MDT_EINVAL, "no buffer for the name");
    init(&f, buf, size, NULL, o);
    return finish_buf(&f, sig_body(&f, s), len);
}

int mdt_token_name_buf(char *buf, size_t size, size_t *len, const mdt_image *img,
                       uint32_t token, const mdt_name_opts *o)
{
    struct fmt f;
    if (!buf || !size)
        return mdt__fail_simple(MDT_EINVAL, "no buffer for the name");
    init(&f, buf, size, NULL, o);
    return finish_buf(&f, token_body(&f, img, token), len);
}

static int put_member(struct fmt *f, const struct mdt_image *img, uint32_t token);

static int put_parent_and_name(struct fmt *f, const struct mdt_image *img, uint32_t parent,
                               const char *name)
{
    int e = 0;
    if (parent) {
        switch (parent >> 24) {
        case MDT_TABLE_ModuleRef: {
            mdt_row r;
            const char *mod;
            if ((e = mdt_row_get(&r, img, MDT_TABLE_ModuleRef, parent & 0xFFFFFF)) ||
                (e = mdt_row_string(&mod, NULL, &r, MDT_COL_ModuleRef_Name)))
                return e;
            w_addf(&f->out, "[module %s]", mod);
            break;
        }
        case MDT_TABLE_MethodDef: { /* vararg call site: the method's owner */
            uint32_t owner;
            if ((e = mdt_member_owner(&owner, img, parent)))
                return e;
            if (owner)
                e = put_token(f, img, owner, 0, true);
            break;
        }
        default:
            e = put_token(f, img, parent, 0, true);
        }
        if (e)
            return e;
        w_adds(&f->out, "::");
    }
    w_adds(&f->out, name);
    return 0;
}

static int put_member(struct fmt *f, const struct mdt_image *img, uint32_t token)
{
    unsigned table = token >> 24;
    uint32_t rid = token & 0xFFFFFF, parent = 0;
    mdt_row r;
    const char *name = NULL;
    int e;
    if ((e = mdt_row_get(&r, img, table, rid)))
        return e;
    switch (table) {
    case MDT_TABLE_MethodDef:
        if ((e = mdt_row_string(&name, NULL, &r, MDT_COL_MethodDef_Name)) ||
            (e = mdt_member_owner(&parent, img, token)))
            return e;
        break;
    case MDT_TABLE_Field:
        if ((e = mdt_row_string(&name, NULL, &r, MDT_COL_Field_Name)) ||
            (e = mdt_member_owner(&parent, img, token)))
            return e;
        break;
    case MDT_TABLE_MemberRef:
        if ((e = mdt_row_string(&name, NULL, &r, MDT_COL_MemberRef_Name)) ||
            (e = mdt_row_token(&parent, &r, MDT_COL_MemberRef_Class)))
            return e;
        if ((parent & 0xFFFFFF) == 0)
            parent = 0;
        break;
    case MDT_TABLE_Property:
    case MDT_TABLE_Event:
        if ((e = mdt_row_string(&name, NULL, &r,
                                table == MDT_TABLE_Property ? MDT_COL_Property_Name
                                                            : MDT_COL_Event_Name)) ||
            (e = mdt_token_owner(&parent, img, token)))
            return e;
        break;
    case MDT_TABLE_MethodSpec: {
        uint32_t method;
        mdt_sig s;
        if ((e = mdt_row_token(&method, &r, MDT_COL_MethodSpec_Method)))
            return e;
        if ((method & 0xFFFFFF) == 0)
            return bad(img, "MethodSpec", rid, "MethodSpec %u has a nil method (row %u)", rid, rid);
        uint64_t arena[256];
        if ((e = put_member(f, img, method)))
            return e;
        if ((e = mdt_sig_of_token_buf(arena, sizeof arena, &s, img, token)) == MDT_ENOMEM) {
            if (!scratch(f))
                return mdt__fail_simple(MDT_ENOMEM, "out of memory");
            e = mdt_sig_of_token(f->tmp, &s, img, token);
        }
        if (e)
            return e;
        w_addc(&f->out, f->style == MDT_STYLE_REFLECTION ? '[' : '<');
        for (uint32_t i = 0; i < s.nargs && !e; i++) {
            if (i)
                w_adds(&f->out, f->style == MDT_STYLE_IL ? ", " : ",");
            e = put_type(f, s.args[i]);
        }
        w_addc(&f->out, f->style == MDT_STYLE_REFLECTION ? ']' : '>');
        return e;
    }
    default:
        return mdt__fail_simple(MDT_EINVAL, "token 0x%08x is not a member", token);
    }
    return put_parent_and_name(f, img, parent, name);
}

/* An ExportedType's name: its Implementation chain through enclosing
 * ExportedType rows gives the nesting (II.22.14), outermost first. */
static int put_exported(struct fmt *f, const mdt_image *img, uint32_t token)
{
    uint32_t chain[MAX_NEST];
    unsigned n = 0;
    int e;
    for (uint32_t t = token; t;) {
        mdt_row r;
        for (unsigned i = 0; i < n; i++)
            if (chain[i] == t)
                return bad(img, "ExportedType", t & 0xFFFFFF,
                           "nesting cycle: ExportedType %u encloses itself (via ExportedType %u)",
                           t & 0xFFFFFF, chain[n - 1] & 0xFFFFFF);
        if (n == MAX_NEST)
            return bad(img, "ExportedType", token & 0xFFFFFF,
                       "types nested deeper than %u (ExportedType %u)", MAX_NEST,
                       token & 0xFFFFFF);
        chain[n++] = t;
        if ((e = mdt_row_get(&r, img, MDT_TABLE_ExportedType, t & 0xFFFFFF)) ||
            (e = mdt_row_token(&t, &r, MDT_COL_ExportedType_Implementation)))
            return e;
        if (t >> 24 != MDT_TABLE_ExportedType || !(t & 0xFFFFFF))
            t = 0;
    }
    f->arity = 0;
    if ((e = put_chain(f, img, MDT_TABLE_ExportedType, chain, n, MDT_COL_ExportedType_TypeName,
                       MDT_COL_ExportedType_TypeNamespace)))
        return e;
    /* Named on its own, like a TypeRef: the arity suffixes tell the list. */
    if (plain_generics(f))
        put_arity_params(f, f->arity);
    return 0;
}

/* A portable PDB Document's name (Portable PDB format, Document Name
 * Blob): a separator, one UTF-8 character or byte 0 for none, then one or
 * more parts, each a compressed #Blob index of a UTF-8 string (0: empty),
 * joined by the separator: `/src/app/Program.cs`. */
static int put_document(struct fmt *f, const mdt_image *img, uint32_t token)
{
    const uint8_t *blob, *sep = NULL;
    uint32_t len, bi;
    uint8_t lead;
    size_t seplen = 0;
    char region[40];
    mdt_row r;
    int e;
    if ((e = mdt_row_get(&r, img, MDT_TABLE_Document, token & 0xFFFFFF)) ||
        (e = mdt_row_blob(&blob, &len, &r, MDT_COL_Document_Name)))
        return e;
    bi = mdt_row_raw(&r, MDT_COL_Document_Name);
    rd d = mdt__blob_reader(img, region, blob, len, bi);
    if ((e = rd_need(&d, 1, "document name separator")))
        return e;
    lead = d.base[d.pos];
    seplen = !lead ? 0 : lead < 0x80 ? 1 : lead >= 0xC2 && lead <= 0xDF ? 2
           : lead >= 0xE0 && lead <= 0xEF ? 3 : lead >= 0xF0 && lead <= 0xF4 ? 4 : SIZE_MAX;
    if (seplen == SIZE_MAX)
        return rd_fail(&d, MDT_EBADIMAGE, "document name separator 0x%02x is not UTF-8", lead);
    if ((e = rd_bytes(&d, &sep, seplen ? seplen : 1, "document name separator")))
        return e;
    if (!rd_left(&d))
        return rd_fail(&d, MDT_EBADIMAGE, "document name without a part");
    for (bool first = true; rd_left(&d) && !f->out.failed; first = false) {
        const uint8_t *part;
        uint32_t idx, plen;
        if ((e = rd_compressed(&d, &idx, "document name part")))
            return e;
        if (!first)
            w_add(&f->out, (const char *)sep, seplen);
        if (!idx)
            continue;
        if ((e = mdt_heap_blob(&part, &plen, img, idx)))
            return e;
        w_add(&f->out, (const char *)part, plen);
    }
    return 0;
}

static int token_body(struct fmt *f, const mdt_image *img, uint32_t token)
{
    int e = 0;
    mdt_row r;
    const char *name;
    switch (token >> 24) {
    case MDT_TABLE_TypeDef:
    case MDT_TABLE_TypeRef:
    case MDT_TABLE_TypeSpec:
        if ((token & 0xFFFFFF) == 0 || (token & 0xFFFFFF) > mdt_table_rows(img, token >> 24))
            e = mdt_row_get(&r, img, token >> 24, token & 0xFFFFFF);
        else
            e = put_token(f, img, token, 0, true);
        break;
    case MDT_TABLE_MethodDef:
    case MDT_TABLE_Field:
    case MDT_TABLE_MemberRef:
    case MDT_TABLE_MethodSpec:
    case MDT_TABLE_Property:
    case MDT_TABLE_Event:
        e = put_member(f, img, token);
        break;
    case MDT_TABLE_ModuleRef:
        if (!(e = mdt_row_get(&r, img, MDT_TABLE_ModuleRef, token & 0xFFFFFF)) &&
            !(e = mdt_row_string(&name, NULL, &r, MDT_COL_ModuleRef_Name)))
            w_addf(&f->out, "[module %s]", name);
        break;
    case MDT_TABLE_Module:
        if (!(e = mdt_row_get(&r, img, MDT_TABLE_Module, token & 0xFFFFFF)) &&
            !(e = mdt_row_string(&name, NULL, &r, MDT_COL_Module_Name)))
            w_addf(&f->out, "[module %s]", name);
        break;
    case MDT_TABLE_Assembly: {
        mdt_identity id;
        char buf[512];
        if (!(e = mdt_row_get(&r, img, MDT_TABLE_Assembly, token & 0xFFFFFF)) &&
            !(e = mdt_assembly_identity(&id, img)))
            w_adds(&f->out, mdt_identity_format(buf, sizeof buf, &id));
        break;
    }
    case MDT_TABLE_ExportedType:
        e = put_exported(f, img, token);
        break;
    case MDT_TABLE_AssemblyRef: {
        mdt_identity id;
        char buf[512];
        if (!(e = mdt_assemblyref_identity(&id, img, token & 0xFFFFFF)))
            w_adds(&f->out, mdt_identity_format(buf, sizeof buf, &id));
        break;
    }
    case MDT_TABLE_Document:
        e = put_document(f, img, token);
        break;
    case MDT_TABLE_File:
        if (!(e = mdt_row_get(&r, img, MDT_TABLE_File, token & 0xFFFFFF)) &&
            !(e = mdt_row_string(&name, NULL, &r, MDT_COL_File_Name)))
            w_adds(&f->out, name);
        break;
    default:
        e = mdt__fail_simple(MDT_EINVAL, "token 0x%08x has no name", token);
    }
    return e;
}
