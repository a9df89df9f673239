/* mdinspect's arguments that name rows: a literal token (checked against
 * the current image), a type by name (in every open module, ambiguity
 * reported), `Type::member` (the members through <mdtools/members.h>), and
 * a command run once per token an argument names. The type lookups are
 * index.c's. */

#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <talloc.h>

#include <mdtools/errors.h>
#include <mdtools/heaps.h>
#include <mdtools/members.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>

#include "cmd.h"
#include "index.h"

static bool parse_token(const char *s, uint32_t *tok)
{
    char *end;
    unsigned long long v;
    if (s[0] != '0' || (s[1] != 'x' && s[1] != 'X') || !isxdigit((unsigned char)s[2]))
        return false;
    errno = 0;
    v = strtoull(s + 2, &end, 16);
    if (errno || *end || v > UINT32_MAX)
        return false;
    *tok = (uint32_t)v;
    return true;
}

/* A literal token that names a row (or a user string) of the image. */
static int check_token(mdi_state *st, const mdt_image *img, const char *text, uint32_t tok)
{
    unsigned table = MDT_TOKEN_TABLE(tok);
    uint32_t rid = MDT_TOKEN_RID(tok);
    const mdt_table_schema *s = mdt_table_schema_get(table);
    if (table == MDT_TOKEN_STRING) {
        const uint8_t *u;
        uint32_t units;
        int flag;
        if (mdt_heap_us(&u, &units, &flag, img, rid) != 0) {
            char msg[512];
            return mdi_fail(st, "%s: %s", text, mdi_errmsg_here(msg, sizeof msg));
        }
        return 0;
    }
    if (!s)
        return mdi_fail(st, "%s: no table has the id 0x%02x", text, table);
    if (rid == 0 || rid > mdt_table_rows(img, table))
        return mdi_fail(st, "%s: %s has %" PRIu32 " row%s, no row %" PRIu32, text, s->name,
                        mdt_table_rows(img, table), mdt_table_rows(img, table) == 1 ? "" : "s",
                        rid);
    return 0;
}

int mdi_arg_type(mdi_state *st, const char *text, mdi_module **mod, uint32_t *token)
{
    mdi_module *m = mdi_current(st), **mods, *pick = NULL;
    uint32_t *toks;
    size_t n, here = 0;
    *mod = m;
    if (parse_token(text, token)) {
        unsigned t = MDT_TOKEN_TABLE(*token);
        if (t != MDT_TABLE_TypeDef && t != MDT_TABLE_TypeRef && t != MDT_TABLE_TypeSpec)
            return mdi_fail(st, "%s is not a TypeDef, TypeRef or TypeSpec token", text);
        return check_token(st, m->img, text, *token);
    }
    n = mdi_types_everywhere(st, st, text, &mods, &toks);
    /* Several: the current module's, when it has exactly one. */
    for (size_t i = 0; i < n; i++)
        if (mods[i] == m) {
            here++;
            pick = mods[i];
            *token = toks[i];
        }
    if (n == 1 || here == 1) {
        if (n == 1) {
            pick = mods[0];
            *token = toks[0];
        }
        *mod = pick;
        talloc_free(mods);
        talloc_free(toks);
        return 0;
    }
    if (n == 0)
        return mdi_fail(st, "no open module defines a type '%s'", text);
    {
        char *list = talloc_strdup(mods, "");
        for (size_t i = 0; list && i < n && i < 20; i++) {
            char *name = mdi_name(st, list, mods[i]->img, toks[i]);
            list = talloc_asprintf_append(list, "%s#%u %s 0x%08" PRIx32 " %s", i ? ", " : "",
                                          mods[i]->id, mods[i]->name, toks[i], name ? name : "?");
        }
        if (list && n > 20)
            list = talloc_asprintf_append(list, ", and %zu more", n - 20);
        mdi_fail(st, "ambiguous type '%s': %s", text, list ? list : "");
        talloc_free(mods);
        talloc_free(toks);
        return MDI_FAIL;
    }
}

/* The tokens of the members of `type` named `want`; false when out of
 * memory. */
static bool collect_named(void *mem, const mdt_image *img, uint32_t type, const char *want,
                          uint32_t **toks, size_t *n)
{
    mdt_members it = MDT_MEMBERS_INIT;
    uint32_t tok, *t;
    int e;
    if (mdt_members_init(&it, img, type, MDT_MEMBERS_ALL) == 0)
        while ((e = mdt_members_next_named(&tok, want, &it)) != MDT_ITEROVER) {
            if (e)
                continue;
            if (!(t = talloc_realloc(mem, *toks, uint32_t, *n + 1)))
                return false;
            *toks = t;
            t[(*n)++] = tok;
        }
    mdt_error_clear();
    return true;
}

int mdi_arg_tokens(mdi_state *st, void *mem, const char *text, uint32_t **out, size_t *nout)
{
    mdi_module *m = mdi_current(st);
    const char *sep = strstr(text, "::");
    uint32_t tok, *types, *toks = NULL;
    size_t ntypes, n = 0;
    char *tname;
    const char *want;

    *out = NULL;
    *nout = 0;
    if (parse_token(text, &tok)) {
        if (check_token(st, m->img, text, tok))
            return MDI_FAIL;
        *out = talloc_array(mem, uint32_t, 1);
        if (!*out)
            return mdi_fail(st, "out of memory");
        (*out)[0] = tok;
        *nout = 1;
        return 0;
    }
    if (!sep) {
        *out = mdi_types_named(mem, m, text, nout);
        if (!*nout)
            return mdi_fail(st, "%s defines no type '%s'", m->name, text);
        return 0;
    }
    if (sep == text || !sep[2])
        return mdi_fail(st, "'%s': a type and a member go on both sides of '::'", text);
    tname = talloc_strndup(mem, text, (size_t)(sep - text));
    types = tname ? mdi_types_named(tname, m, tname, &ntypes) : NULL;
    if (!types) {
        mdi_fail(st, "%s defines no type '%s'", m->name, tname ? tname : "");
        talloc_free(tname);
        return MDI_FAIL;
    }
    want = sep + 2;
    for (size_t i = 0; i < ntypes; i++)
        if (!collect_named(mem, m->img, types[i], want, &toks, &n))
            break;
    talloc_free(tname);
    if (!n)
        return mdi_fail(st, "no member '%s' in %s", want, m->name);
    *out = toks;
    *nout = n;
    return 0;
}

int mdi_each_token(mdi_state *st, const char *text, int (*one)(mdi_state *st, uint32_t token))
{
    uint32_t *toks;
    size_t n;
    int status = MDI_OK;
    if (mdi_arg_tokens(st, st, text, &toks, &n))
        return MDI_FAIL;
    for (size_t i = 0; i < n && !mdi_interrupted(st); i++)
        if (one(st, toks[i]) != MDI_OK)
            status = MDI_FAIL;
    talloc_free(toks);
    return status;
}
