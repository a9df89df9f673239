/* TypeDefs among the tables: the TypeDef enclosing a nested one (ECMA-335
 * II.22.32 NestedClass, a sorted table searched by its NestedClass
 * column), a TypeDef found by its nested reflection name (II.22.37
 * TypeDef rows, joined through NestedClass), and whether a TypeDef or TypeRef is a given
 * top-level type (the identity test the signature and attribute decoders
 * make for System.Enum, System.Type, ...). Only tables and heaps are read:
 * the name printers of generics/ and the resolver of typeref/ sit above. */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <mdtools/errors.h>
#include <mdtools/nesting.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>

#include "md/nesting_int.h"
#include "util/error.h"

#define MAX_NEST 64 /* nesting levels of a name followed */

int mdt_typedef_enclosing(uint32_t *enclosing, const mdt_image *img, uint32_t token)
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
    if (mdt_typedef_enclosing(&enc, img, token)) {
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

int mdt_typedef_by_name(uint32_t *token, const mdt_image *img, const char *name, size_t len)
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
            if (mdt_typedef_enclosing(&enc, img, MDT_TOKEN(MDT_TABLE_TypeDef, i)))
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
