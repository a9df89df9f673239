/* mdinspect's name index: TypeDef keys (ECMA-335 II.22.37 TypeDef,
 * II.22.32 NestedClass) sorted for lookup and completion, and name
 * arguments (`Type`, `Type::member`, tokens). The members of a type and its
 * kind are the library's (<mdtools/members.h>). */

#define _GNU_SOURCE /* FNM_CASEFOLD */
#include "config.h"

#include <ctype.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <talloc.h>

#include <mdtools/errors.h>
#include <mdtools/names.h>
#include <mdtools/members.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>

#include "cmd.h"
#include "index.h"

#define MAX_NEST 64

/* ---- the type index ---- */

/* Key of TypeDef rid: the enclosing chain (cycles and depth capped), then
 * "ns.name" of the outermost type and "+name" of each nested one. */
static char *type_key(void *mem, const mdt_image *img, uint32_t rid, uint32_t *nslen)
{
    uint32_t chain[MAX_NEST];
    unsigned n = 0;
    char *key = talloc_strdup(mem, "");
    for (uint32_t t = MDT_TOKEN(MDT_TABLE_TypeDef, rid); t;) {
        for (unsigned i = 0; i < n; i++)
            if (chain[i] == t)
                goto bad;
        if (n == MAX_NEST)
            goto bad;
        chain[n++] = t;
        if (mdt_typedef_enclosing(&t, img, t))
            goto bad;
        if (MDT_TOKEN_TABLE(t) != MDT_TABLE_TypeDef)
            t = 0;
    }
    for (unsigned i = n; key && i-- > 0;) {
        mdt_row r;
        const char *name, *ns;
        size_t len, nsl;
        if (mdt_row_get(&r, img, MDT_TABLE_TypeDef, MDT_TOKEN_RID(chain[i])) ||
            mdt_row_string(&name, &len, &r, MDT_COL_TypeDef_TypeName) ||
            mdt_row_string(&ns, &nsl, &r, MDT_COL_TypeDef_TypeNamespace))
            goto bad;
        if (i == n - 1) {
            *nslen = (uint32_t)nsl;
            if (nsl)
                key = talloc_asprintf_append_buffer(key, "%.*s.", (int)nsl, ns);
        } else {
            key = talloc_strdup_append_buffer(key, "+");
        }
        if (key)
            key = talloc_strndup_append_buffer(key, name, len);
    }
    return key;
bad:
    talloc_free(key);
    mdt_error_clear();
    return NULL;
}

/* Natural order: runs of digits compare by value (`=12` before `=1000`,
 * ``Func`2`` before ``Func`10``), everything else byte by byte; equal
 * values of different spellings (`07`, `7`) by length, so the order is
 * total. */
int mdi_natural_cmp(const char *a, const char *b)
{
    for (;;) {
        size_t i = 0, j, la, lb, za, zb;
        /* The common prefix, byte by byte (most keys share a namespace). */
        while (a[i] && a[i] == b[i])
            i++;
        if (a[i] == b[i])
            return 0;
        /* Back to the start of a run of digits the difference is in. */
        j = i;
        while (j > 0 && isdigit((unsigned char)a[j - 1]))
            j--;
        if (!isdigit((unsigned char)a[j]) || !isdigit((unsigned char)b[j]))
            return (unsigned char)a[i] < (unsigned char)b[i] ? -1 : 1;
        a += j;
        b += j;
        for (za = 0; a[za] == '0' && isdigit((unsigned char)a[za + 1]); za++)
            ;
        for (zb = 0; b[zb] == '0' && isdigit((unsigned char)b[zb + 1]); zb++)
            ;
        for (la = za; isdigit((unsigned char)a[la]); la++)
            ;
        for (lb = zb; isdigit((unsigned char)b[lb]); lb++)
            ;
        if (la - za != lb - zb) /* more digits, a larger number */
            return la - za < lb - zb ? -1 : 1;
        int c = memcmp(a + za, b + zb, la - za);
        if (c)
            return c < 0 ? -1 : 1;
        if (za != zb) /* the same value: fewer leading zeros first */
            return za < zb ? -1 : 1;
        a += la;
        b += lb;
    }
}

static int by_key(const void *a, const void *b)
{
    const mdi_typeent *x = a, *y = b;
    /* Without digits on one side no digit run can compare by value. */
    int c = x->digits && y->digits ? mdi_natural_cmp(x->key, y->key) : strcmp(x->key, y->key);
    return c ? c : (x->token > y->token) - (x->token < y->token);
}

const mdi_index *mdi_index_of(mdi_module *m)
{
    mdi_index *ix;
    uint32_t n;
    if (m->index)
        return m->index;
    /* Sized by the rows that are there: those declared past the tables
     * stream are counted as unreadable. */
    n = mdt_table_rows_present(m->img, MDT_TABLE_TypeDef);
    ix = talloc_zero(m, mdi_index);
    if (!ix || !(ix->types = talloc_array(ix, mdi_typeent, n ? n : 1))) {
        talloc_free(ix);
        return NULL;
    }
    ix->nbad = mdt_table_rows(m->img, MDT_TABLE_TypeDef) - n;
    for (uint32_t rid = 1; rid <= n; rid++) {
        mdi_typeent *t = &ix->types[ix->ntypes];
        char *key = type_key(ix->types, m->img, rid, &t->nslen);
        if (!key) {
            ix->nbad++;
            continue;
        }
        t->token = MDT_TOKEN(MDT_TABLE_TypeDef, rid);
        t->key = key;
        t->keylen = (uint32_t)strlen(key);
        t->digits = strpbrk(key, "0123456789") != NULL;
        ix->ntypes++;
    }
    qsort(ix->types, ix->ntypes, sizeof ix->types[0], by_key);
    m->index = ix;
    return ix;
}

uint32_t mdi_index_find(mdi_module *m, const char *key)
{
    const mdi_index *ix = mdi_index_of(m);
    size_t lo = 0, hi = ix ? ix->ntypes : 0;
    /* The index is sorted by mdi_natural_cmp, a total order: bisect. */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = mdi_natural_cmp(ix->types[mid].key, key);
        if (c == 0) {
            while (mid > 0 && strcmp(ix->types[mid - 1].key, key) == 0)
                mid--; /* the first of equal keys: the lowest token */
            return ix->types[mid].token;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

size_t mdi_key_simple(const mdi_typeent *t)
{
    const char *plus = strrchr(t->key, '+');
    if (plus && (uint32_t)(plus - t->key) > t->nslen)
        return (size_t)(plus - t->key) + 1;
    return t->nslen ? t->nslen + 1 : 0;
}

/* `s` (len bytes) without arity suffixes: "A`1+B`2" -> "A+B". */
static char *strip_arity(void *mem, const char *s, size_t len)
{
    char *out = talloc_array(mem, char, len + 1);
    size_t o = 0;
    if (!out)
        return NULL;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '`') {
            size_t j = i + 1;
            while (j < len && isdigit((unsigned char)s[j]))
                j++;
            if (j > i + 1 && (j == len || s[j] == '+')) {
                i = j - 1;
                continue;
            }
        }
        out[o++] = s[i];
    }
    out[o] = '\0';
    return out;
}

/* What a user typed for a type, taken apart: the name without a trailing
 * parameter list and arity suffixes (`bare`, '/' read as '+'), and the
 * number of parameters a list gives (`Dictionary<TKey,TValue>`,
 * `Dictionary<,>`: 2), or -1 without one. */
struct wanted {
    const char *text;
    char *exact; /* text with '/' as '+' */
    char *bare;
    int nparams;
};

/* C#'s keywords for the built-in types, as a user of the language types
 * them (`type int`). */
static const char *const cs_alias[][2] = {
    {"bool", "System.Boolean"},    {"byte", "System.Byte"},     {"sbyte", "System.SByte"},
    {"char", "System.Char"},       {"short", "System.Int16"},   {"ushort", "System.UInt16"},
    {"int", "System.Int32"},       {"uint", "System.UInt32"},   {"long", "System.Int64"},
    {"ulong", "System.UInt64"},    {"float", "System.Single"},  {"double", "System.Double"},
    {"decimal", "System.Decimal"}, {"string", "System.String"}, {"object", "System.Object"},
    {"nint", "System.IntPtr"},     {"nuint", "System.UIntPtr"}, {"void", "System.Void"},
};

/* C#'s form of a nested type, `Dictionary<TKey,TValue>.Enumerator`: a '.'
 * after a closing '>' (outside any list) joins nested names as '+' does,
 * and the parameter lists of the enclosing types are counted and dropped,
 * so the name reads `Dictionary+Enumerator` with its lists' total. A name
 * without such a '.' is returned as it was. */
static char *cs_nested(void *mem, const char *text, int *nparams_inner)
{
    size_t len = strlen(text), o = 0;
    int depth = 0, outer = 0, n = 0;
    bool joined = false;
    char *out = talloc_array(mem, char, len + 1);
    *nparams_inner = 0;
    if (!out)
        return NULL;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (c == '<' && depth++ == 0)
            n = 1;
        if (depth == 0 && c == '.' && i > 0 && text[i - 1] == '>') {
            /* the list just closed belonged to an enclosing type */
            size_t lt = o;
            int d = 0;
            while (lt > 0) {
                lt--;
                if (out[lt] == '>')
                    d++;
                else if (out[lt] == '<' && --d == 0)
                    break;
            }
            o = lt;
            outer += n;
            out[o++] = '+';
            joined = true;
            continue;
        }
        if (depth == 1 && c == ',')
            n++;
        if (c == '>' && depth > 0)
            depth--;
        out[o++] = c;
    }
    out[o] = '\0';
    *nparams_inner = outer;
    return joined ? out : talloc_strdup(mem, text);
}

static void wanted_init(void *mem, struct wanted *w, const char *text)
{
    const char *lt;
    size_t len;
    int outer = 0;
    for (size_t i = 0; i < sizeof cs_alias / sizeof cs_alias[0]; i++)
        if (strcmp(text, cs_alias[i][0]) == 0)
            text = cs_alias[i][1];
    text = cs_nested(mem, text, &outer);
    if (!text)
        text = "";
    lt = strchr(text, '<');
    len = strlen(text);
    w->text = text;
    w->exact = talloc_strdup(mem, text);
    for (char *c = w->exact; c && *c; c++)
        if (*c == '/')
            *c = '+';
    w->nparams = outer ? outer : -1;
    if (lt && len > 1 && text[len - 1] == '>') {
        int depth = 0, n = 1;
        for (const char *c = lt; *c; c++) {
            if (*c == '<')
                depth++;
            else if (*c == '>')
                depth--;
            else if (*c == ',' && depth == 1)
                n++;
        }
        if (depth == 0) {
            w->nparams = n + outer;
            len = (size_t)(lt - text);
        }
    }
    w->bare = w->exact ? strip_arity(mem, w->exact, len) : NULL;
}

/* Total arity a key's suffixes state (``Outer`1+Inner`2``: 3). */
static int key_arity(const char *key, size_t len)
{
    int n = 0;
    for (size_t i = 0; i < len; i++) {
        if (key[i] != '`')
            continue;
        size_t j = i + 1;
        int a = 0;
        while (j < len && isdigit((unsigned char)key[j]) && a < 100000)
            a = a * 10 + (key[j++] - '0');
        if (j > i + 1 && (j == len || key[j] == '+'))
            n += a;
    }
    return n;
}

/* Pass `pass` of the lookup rules on one type (see index.h). */
static bool type_hit(mdi_module *m, const mdi_typeent *t, const struct wanted *w, int pass,
                     void *tmp)
{
    char *k;
    bool hit = false;
    if (pass == 0)
        return w->exact && strcmp(t->key, w->exact) == 0;
    k = strip_arity(tmp, t->key, t->keylen);
    if (!k || !w->bare)
        return false;
    const char *shortname = t->nslen && t->nslen < strlen(k) ? k + t->nslen + 1 : k;
    switch (pass) {
    case 1: /* as the commands print it: full or friendly style, or `<,>` */
        if (w->nparams >= 0 && strcmp(k, w->bare) == 0) {
            mdt_name_opts full = {MDT_STYLE_FULL, 0, MDT_NAME_OPTS_VERSION, NULL, NULL};
            char *printed = NULL;
            size_t nparams = 0;
            mdt_generic_params(NULL, NULL, &nparams, m->img, t->token); /* counted */
            if (mdt_token_name(tmp, &printed, m->img, t->token, &full) == 0 &&
                strcmp(printed, w->exact) == 0)
                hit = true;
            else if ((int)nparams == w->nparams || key_arity(t->key, t->keylen) == w->nparams)
                hit = true; /* the same name and number of parameters */
            mdt_error_clear();
        }
        break;
    case 2: /* arity left out */ hit = w->nparams < 0 && strcmp(k, w->bare) == 0; break;
    case 3: /* without the namespace, exactly (`Action`, ``Action`1``) */
        hit = w->exact && strcmp(t->key + (t->nslen ? t->nslen + 1 : 0), w->exact) == 0;
        break;
    case 4: /* without the namespace, arity left out or as printed */
        hit = strcmp(shortname, w->bare) == 0 &&
              (w->nparams < 0 || key_arity(t->key, t->keylen) == w->nparams);
        break;
    case 5: /* any case, with or without the namespace */
        hit = (strcasecmp(k, w->bare) == 0 || strcasecmp(shortname, w->bare) == 0) &&
              (w->nparams < 0 || key_arity(t->key, t->keylen) == w->nparams);
        break;
    default: { /* a nested type by its innermost names (`KeyCollection`,
                * `Generic<T>.Leaf<U>`), or in C#'s form with '.' for '+'
                * (`Middle.Inner`, `Everything.Outer.Middle`) */
        char *b = talloc_strdup(tmp, w->bare), *kk = talloc_strdup(tmp, k);
        if (!b || !kk)
            break;
        for (char *c = b; *c; c++)
            if (*c == '.')
                *c = '+';
        for (char *c = kk; *c; c++)
            if (*c == '.')
                *c = '+';
        size_t sl = strlen(shortname), bl = strlen(b);
        bool inner =
            sl > bl && shortname[sl - bl - 1] == '+' && strcmp(shortname + sl - bl, b) == 0;
        bool whole = strchr(shortname, '+') && (strcmp(shortname, b) == 0 || strcmp(kk, b) == 0);
        hit = (inner || whole) && (w->nparams < 0 || key_arity(t->key, t->keylen) == w->nparams);
        break;
    }
    }
    return hit;
}

#define NPASSES 7

uint32_t *mdi_types_named(void *mem, mdi_module *m, const char *name, size_t *n)
{
    const mdi_index *ix = mdi_index_of(m);
    void *tmp = talloc_new(mem);
    struct wanted w;
    uint32_t *out = NULL;
    *n = 0;
    if (!ix || !tmp)
        goto done;
    wanted_init(tmp, &w, name);
    out = talloc_array(mem, uint32_t, ix->ntypes ? ix->ntypes : 1);
    for (int pass = 0; out && pass < NPASSES && !*n; pass++)
        for (size_t i = 0; i < ix->ntypes; i++) {
            void *scratch = talloc_new(tmp);
            if (type_hit(m, &ix->types[i], &w, pass, scratch))
                out[(*n)++] = ix->types[i].token;
            talloc_free(scratch);
        }
done:
    if (!*n) {
        talloc_free(out);
        out = NULL;
    }
    talloc_free(tmp);
    return out;
}

size_t mdi_types_everywhere(mdi_state *st, void *mem, const char *name, mdi_module ***mods,
                            uint32_t **toks)
{
    void *tmp = talloc_new(mem);
    struct wanted w;
    size_t n = 0;
    *mods = NULL;
    *toks = NULL;
    if (!tmp)
        return 0;
    wanted_init(tmp, &w, name);
    /* Pass by pass over every module: an exact name anywhere beats a
     * looser match somewhere else. */
    for (int pass = 0; pass < NPASSES && !n; pass++)
        for (size_t k = 0; k < st->nmods; k++) {
            mdi_module *m = st->mods[k];
            const mdi_index *ix = mdi_index_of(m);
            for (size_t i = 0; ix && i < ix->ntypes; i++) {
                void *scratch = talloc_new(tmp);
                bool hit = type_hit(m, &ix->types[i], &w, pass, scratch);
                talloc_free(scratch);
                if (!hit)
                    continue;
                mdi_module **nm = talloc_realloc(mem, *mods, mdi_module *, n + 1);
                uint32_t *nt = nm ? talloc_realloc(mem, *toks, uint32_t, n + 1) : NULL;
                if (nm)
                    *mods = nm;
                if (!nt)
                    break;
                *toks = nt;
                nm[n] = m;
                nt[n++] = ix->types[i].token;
            }
        }
    talloc_free(tmp);
    return n;
}

/* ---- kinds ---- */

const char *mdi_kind_name(const mdt_image *img, uint32_t type)
{
    mdt_type_kind k;
    if (mdt_typedef_kind(&k, img, type))
        mdt_error_clear(); /* a class when it does not read */
    return mdt_type_kind_name(k);
}

bool mdi_type_matches(const mdi_typeent *t, const char *glob)
{
    char bare[1024];
    const char *simple = t->key + mdi_key_simple(t), *bs, *bsimple;
    size_t o = 0;
    /* The key without arity suffixes, into bare. */
    for (size_t i = 0; i < t->keylen && o + 1 < sizeof bare; i++) {
        if (t->key[i] == '`') {
            size_t j = i + 1;
            while (j < t->keylen && isdigit((unsigned char)t->key[j]))
                j++;
            if (j > i + 1 && (j == t->keylen || t->key[j] == '+')) {
                i = j - 1;
                continue;
            }
        }
        bare[o++] = t->key[i];
    }
    bare[o] = '\0';
    if (mdi_glob(glob, t->key) || mdi_glob(glob, bare))
        return true;
    if (strpbrk(glob, ".+"))
        return false;
    bs = strrchr(bare, '+');
    bsimple = bs && (size_t)(bs - bare) > t->nslen ? bs + 1
              : t->nslen && t->nslen < o           ? bare + t->nslen + 1
                                                   : bare;
    return mdi_glob(glob, simple) || mdi_glob(glob, bsimple);
}

/* ---- globs ---- */

bool mdi_has_glob(const char *pattern)
{
    return strpbrk(pattern, "*?[") != NULL;
}

bool mdi_glob(const char *pattern, const char *s)
{
    int flags = 0;
    for (const char *c = pattern; *c; c++)
        if (isupper((unsigned char)*c))
            goto match;
    flags = FNM_CASEFOLD;
match:
    return fnmatch(pattern, s, flags) == 0;
}
