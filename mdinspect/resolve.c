/* mdinspect: the module set of the open modules and the printing of
 * resolution results (ECMA-335 II.22.38 TypeRef, II.22.14 ExportedType,
 * II.22.25 MemberRef, resolved by <mdtools/typeref.h>). See resolve.h. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <talloc.h>

#include <mdtools/assembly.h>
#include <mdtools/errors.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>

#include "cmd.h"
#include "index.h"
#include "resolve.h"

#define CACHE_KEY "resolve.modset"

mdt_modview *mdi_view(mdi_state *st)
{
    mdt_modset *set = mdi_cache_get(st, CACHE_KEY);
    if (!set) {
        void *tmp = talloc_new(st);
        mdt_module_desc *d = tmp ? talloc_zero_array(tmp, mdt_module_desc, st->nmods + 1) : NULL;
        if (!d || mdt_modset_new(tmp, &set)) {
            talloc_free(tmp);
            mdi_fail(st, "out of memory");
            return NULL;
        }
        for (size_t i = 0; i < st->nmods; i++) {
            d[i].id = st->mods[i]->id;
            d[i].image = st->mods[i]->img;
            d[i].appdomain = MDT_APPDOMAIN_SHARED;
            d[i].name = st->mods[i]->name;
            d[i].path = st->mods[i]->path;
        }
        if (st->nmods && mdt_modset_add_many(set, d, st->nmods, 0)) {
            talloc_free(tmp);
            mdi_report_lib(st, "module set");
            return NULL;
        }
        if (!mdi_cache_put(st, CACHE_KEY, set)) {
            talloc_free(tmp);
            mdi_fail(st, "out of memory");
            return NULL;
        }
        talloc_free(tmp);
    }
    return mdt_modset_acquire(set);
}

const char *mdi_view_asm_name(const mdt_modview *v, uintptr_t manifest)
{
    mdt_module_info mi;
    if (mdt_modview_lookup(&mi, v, manifest))
        return "?";
    if (mi.is_manifest && mi.identity.name)
        return mi.identity.name;
    return mi.name;
}

const char *mdi_view_module_label(const mdt_modview *v, uintptr_t id)
{
    mdt_module_info mi;
    if (mdt_modview_lookup(&mi, v, id))
        return "?";
    return mi.path ? mi.path : mi.name;
}

uint32_t mdi_ref_assemblyref(const mdt_image *img, uint32_t token)
{
    uint32_t scope;
    if (mdt_token_scope(&scope, img, token) || MDT_TOKEN_TABLE(scope) != MDT_TABLE_AssemblyRef) {
        mdt_error_clear();
        return 0;
    }
    return scope;
}

char *mdi_ref_name(const mdi_state *st, void *mem, const mdt_image *img, uint32_t token, char *msg,
                   size_t len)
{
    char *s = mdi_name(st, mem, img, token);
    if (!s)
        mdi_errmsg_here(msg, len);
    mdt_error_clear();
    return s;
}

/* The assembly names of r->visited, in order. */
static void print_path(mdi_printer *p, const mdt_modview *v, const mdt_resolution *r, bool compact)
{
    /* Text: "A > B > C" in a buffer (a listing prints one per row); names
     * past its end are left out, marked "...". */
    char text[1024];
    size_t len = 0;
    bool json = mdi_printer_format(p) == MDI_FMT_JSON;
    mdi_list_begin(p, "path", NULL, NULL, MDI_LIST_SCALARS);
    for (unsigned i = 0; i < r->nvisited && i < MDT_RESOLVE_MAX_VISITED; i++) {
        const char *n = mdi_view_asm_name(v, r->visited[i]);
        size_t nl = strlen(n);
        if (json) {
            mdi_item_begin(p);
            mdi_str(p, "name", NULL, n);
            mdi_item_end(p);
        } else if (len + nl + 8 < sizeof text) {
            if (i)
                memcpy(text + len, " > ", 3), len += 3;
            memcpy(text + len, n, nl);
            len += nl;
        } else if (len + 4 < sizeof text) {
            memcpy(text + len, "...", 3), len += 3;
            break;
        }
    }
    mdi_list_end(p);
    text[len] = '\0';
    if (!compact && !json)
        mdi_str(p, NULL, "path", len ? text : "-");
}

/* Text labels, or none (JSON only) in compact mode. */
#define L(label) (compact ? NULL : (label))

static void print_identity(mdi_printer *p, const mdt_identity *id, bool compact, bool mark)
{
    /* A listing prints the same few versions thousands of times. */
    static uint16_t last[4] = {UINT16_MAX, UINT16_MAX, UINT16_MAX, UINT16_MAX};
    static char buf[32];
    mdi_str(p, "assembly", mark ? NULL : L("assembly"), id->name);
    if (mark && !compact)
        mdi_textf(p, "assembly", "%s%s", id->name, MDI_OTHER_MARK);
    if (memcmp(last, id->version, sizeof last) != 0) {
        snprintf(buf, sizeof buf, "%u.%u.%u.%u", id->version[0], id->version[1], id->version[2],
                 id->version[3]);
        memcpy(last, id->version, sizeof last);
    }
    mdi_str(p, "version", L("version"), buf);
}

void mdi_other_legend(mdi_state *st, bool marked)
{
    if (marked)
        mdi_textf(st->out, NULL, "%s", MDI_OTHER_LEGEND);
}

bool mdi_print_resolution(mdi_state *st, const mdt_modview *v, const mdt_image *img, uint32_t token,
                          const mdt_resolution *r, bool compact)
{
    bool other = (r->flags & MDT_RES_OTHER_ASSEMBLY) != 0;
    mdi_printer *p = st->out;
    mdt_module_info mi, man;
    bool have_def = r->resolved && mdt_modview_lookup(&mi, v, r->module) == 0;

    if (compact) {
        char *summary = mdi_resolution_summary(p, v, r);
        mdi_textf(p, "resolves to", "%s", summary ? summary : "?");
        talloc_free(summary);
    }

    mdi_str(p, "status", NULL, r->resolved ? "resolved" : "unresolved");
    mdi_bool(p, "other_assembly", NULL, other);
    if (r->resolved)
        mdi_none(p, "reason", L("result"), compact ? NULL : "resolved");
    else
        mdi_str(p, "reason", L("result"), mdt_resolution_reason_name(r->reason));
    if (have_def && mdt_modview_lookup(&man, v, mi.manifest) == 0 && man.is_manifest) {
        print_identity(p, &man.identity, compact, other);
    } else {
        /* Unresolved (or a module of no known assembly): the assembly the
         * reference asks for. */
        uint32_t ar = r->resolved ? 0 : mdi_ref_assemblyref(img, token);
        mdt_identity id;
        if (ar && mdt_assemblyref_identity(&id, img, MDT_TOKEN_RID(ar)) == 0) {
            print_identity(p, &id, compact, false);
        } else {
            mdi_none(p, "assembly", L("assembly"), "-");
            mdi_none(p, "version", L("version"), "-");
        }
        mdt_error_clear();
    }
    if (have_def) {
        mdi_str(p, "def_module", L("defined in"), mi.path ? mi.path : mi.name);
        mdi_token(p, "def_token", L("def token"), r->token);
    } else {
        mdi_none(p, "def_module", L("defined in"), "-");
        mdi_none(p, "def_token", L("def token"), "-");
    }
    mdi_uint(p, "tier", L("tier"), r->tier);
    mdi_uint(p, "hops", L("hops"), r->hops);
    print_path(p, v, r, compact);
    return other && r->resolved; /* the mark was shown */
}

char *mdi_resolution_summary(void *mem, const mdt_modview *v, const mdt_resolution *r)
{
    char *s;
    mdt_module_info mi;
    if (r->resolved && mdt_modview_lookup(&mi, v, r->module) == 0)
        s = talloc_asprintf(mem, "%s 0x%08" PRIx32 ", tier %u%s, %u hop%s",
                            mi.path ? mi.path : mi.name, r->token, r->tier,
                            r->flags & MDT_RES_OTHER_ASSEMBLY ? MDI_OTHER_MARK : "", r->hops,
                            r->hops == 1 ? "" : "s");
    else
        s = talloc_asprintf(mem, "unresolved: %s", mdt_resolution_reason_name(r->reason));
    for (unsigned i = 0; s && i < r->nvisited && i < MDT_RESOLVE_MAX_VISITED; i++)
        s = talloc_asprintf_append(s, "%s%s", i ? " > " : " (",
                                   mdi_view_asm_name(v, r->visited[i]));
    if (s && r->nvisited)
        s = talloc_strdup_append(s, ")");
    return s;
}

/* The scope of a TypeRef or the parent of a MemberRef, by name: `[Name]`
 * for an AssemblyRef, `[this module]` for the Module row, the name
 * otherwise (a ModuleRef prints `[module X]`); NULL for a nil scope;
 * *err set when it could not be read. `memo`, when given, keeps TypeSpec
 * parents' names by rid (a talloc array of the TypeSpec rows + 1). */
static char *scope_name(const mdi_state *st, void *mem, const mdt_image *img, uint32_t token,
                        char *msg, size_t len, bool *err, char **memo)
{
    mdt_row row;
    uint32_t scope;
    unsigned col = MDT_TOKEN_TABLE(token) == MDT_TABLE_TypeRef ? MDT_COL_TypeRef_ResolutionScope
                                                               : MDT_COL_MemberRef_Class;
    char *s = NULL;
    *err = false;
    if (mdt_row_get(&row, img, MDT_TOKEN_TABLE(token), MDT_TOKEN_RID(token)) ||
        mdt_row_token(&scope, &row, col)) {
        *err = true;
        mdi_cell_error(msg, len);
        mdt_error_clear();
        return NULL;
    }
    if (!MDT_TOKEN_RID(scope))
        return NULL;
    if (MDT_TOKEN_TABLE(scope) == MDT_TABLE_AssemblyRef) {
        mdt_identity id;
        if (mdt_assemblyref_identity(&id, img, MDT_TOKEN_RID(scope)) == 0)
            s = talloc_asprintf(mem, "[%s]", id.name);
    } else if (MDT_TOKEN_TABLE(scope) == MDT_TABLE_Module) {
        s = talloc_strdup(mem, "[this module]");
    } else if (memo && MDT_TOKEN_TABLE(scope) == MDT_TABLE_TypeSpec &&
               MDT_TOKEN_RID(scope) <= talloc_array_length(memo) - 1) {
        /* Members of one generic instance share their parent's name. */
        char **slot = &memo[MDT_TOKEN_RID(scope)];
        if (!*slot)
            *slot = mdi_name(st, memo, img, scope);
        s = *slot ? talloc_strdup(mem, *slot) : NULL;
    } else {
        s = mdi_name(st, mem, img, scope);
    }
    if (!s) {
        *err = true;
        mdi_errmsg_here(msg, len);
    }
    mdt_error_clear();
    return s;
}

/* A MemberRef's name from its parent's, already formed for the parent
 * column: `Parent::name` as the formatter writes it, without forming the
 * parent (often a TypeSpec) twice. NULL where they differ (the parent is a
 * MethodDef: a vararg call site names the method's type) or on error. */
static char *member_name_from(void *mem, const mdt_image *img, uint32_t tok, const char *parent)
{
    mdt_row r;
    uint32_t cls;
    const char *name;
    size_t len;
    if (mdt_row_get(&r, img, MDT_TABLE_MemberRef, MDT_TOKEN_RID(tok)) ||
        mdt_row_token(&cls, &r, MDT_COL_MemberRef_Class) ||
        mdt_row_string(&name, &len, &r, MDT_COL_MemberRef_Name) ||
        (MDT_TOKEN_RID(cls) && (!parent || MDT_TOKEN_TABLE(cls) == MDT_TABLE_MethodDef))) {
        mdt_error_clear();
        return NULL;
    }
    if (!parent)
        return talloc_strndup(mem, name, len);
    size_t pl = strlen(parent);
    char *s = talloc_size(mem, pl + 2 + len + 1); /* no printf: one per row */
    if (s) {
        memcpy(s, parent, pl);
        memcpy(s + pl, "::", 2);
        memcpy(s + pl + 2, name, len);
        s[pl + 2 + len] = '\0';
    }
    return s;
}

int mdi_list_refs(mdi_state *st, unsigned table, bool all)
{
    mdi_printer *p = st->out;
    mdt_modview *v = mdi_view(st);
    mdi_module *cur = mdi_current(st);
    const char *what = table == MDT_TABLE_TypeRef ? "type" : "member";
    char **memo = NULL;
    bool marked = false;
    int bad = 0;

    if (!v)
        return MDI_FAIL;
    for (size_t i = 0; i < st->nmods && !mdi_interrupted(st); i++) {
        mdi_module *m = st->mods[i];
        const mdt_image *img = m->img;
        uint32_t n;
        char caption[80];
        if (!all && m != cur)
            continue;
        n = mdt_table_rows(img, table);
        mdi_about(st, m);
        snprintf(caption, sizeof caption, "%" PRIu32 " %s reference%s", n, what, n == 1 ? "" : "s");
        mdi_list_begin(p, NULL, caption, NULL, 0);
        marked = false;
        memo =
            table == MDT_TABLE_MemberRef
                ? talloc_zero_array(st, char *, mdt_table_rows_present(img, MDT_TABLE_TypeSpec) + 1)
                : NULL;
        for (uint32_t rid = 1; rid <= mdt_table_rows_present(img, table) && !mdi_interrupted(st);
             rid++) {
            uint32_t tok = MDT_TOKEN(table, rid);
            void *tmp = talloc_new(p);
            mdt_resolution r;
            char msg[400], *s;
            bool err;
            mdi_item_begin(p);
            mdi_str(p, "module", all ? "module" : NULL, m->path);
            mdi_token(p, "token", "token", tok);
            char *sc = scope_name(st, tmp, img, tok, msg, sizeof msg, &err, memo);
            if (err) {
                mdi_error(p, "scope", table == MDT_TABLE_TypeRef ? "scope" : "parent", msg);
                bad++;
            } else if (sc)
                mdi_str(p, "scope", table == MDT_TABLE_TypeRef ? "scope" : "parent", sc);
            else
                mdi_none(p, "scope", table == MDT_TABLE_TypeRef ? "scope" : "parent", "nil");
            s = table == MDT_TABLE_MemberRef && !err ? member_name_from(tmp, img, tok, sc) : NULL;
            if (!s)
                s = mdi_ref_name(st, tmp, img, tok, msg, sizeof msg);
            if (s)
                mdi_str(p, "name", "name", s);
            else {
                mdi_error(p, "name", "name", msg);
                bad++;
            }
            mdi_metadata_name(st, NULL, img, tok);
            if (table == MDT_TABLE_MemberRef) {
                /* Overloads differ here only. */
                s = mdi_sig_text(st, tmp, img, tok);
                if (s)
                    mdi_str(p, "signature", "signature", s);
                else {
                    mdi_error(p, "signature", "signature", mdi_errmsg_here(msg, sizeof msg));
                    bad++;
                }
                mdt_error_clear();
            }
            if (mdt_token_resolve(tmp, &r, NULL, v, m->id, tok, NULL) == 0)
                marked |= mdi_print_resolution(st, v, img, tok, &r, false);
            else {
                mdi_item_error(p, "error", mdi_errmsg_here(msg, sizeof msg));
                bad++;
            }
            mdt_error_clear();
            mdi_item_end(p);
            talloc_free(tmp);
        }
        if (!mdi_interrupted(st) && mdi_rows_missing(st, img, table))
            bad++;
        mdi_list_end(p);
        mdi_other_legend(st, marked);
        talloc_free(memo);
    }
    mdi_about(st, cur);
    mdt_modview_release(v);
    if (bad)
        return mdi_fail(st, "%d field%s could not be read", bad, bad == 1 ? "" : "s");
    return MDI_OK;
}

/* The module of the session with ID `id` (its #N), or NULL. */
static mdi_module *module_by_id(mdi_state *st, uintptr_t id)
{
    for (size_t i = 0; i < st->nmods; i++)
        if (st->mods[i]->id == id)
            return st->mods[i];
    return NULL;
}

/* The module of the session holding `img`, or NULL. */
static const mdi_module *module_of(const mdi_state *st, const mdt_image *img)
{
    for (size_t i = 0; i < st->nmods; i++)
        if (st->mods[i]->img == img)
            return st->mods[i];
    return NULL;
}

/* Whether the module's assembly is called `asm_name` (len bytes). */
static bool in_assembly(const mdt_modview *v, uintptr_t id, const char *asm_name, size_t len)
{
    mdt_module_info mi, man;
    if (mdt_modview_lookup(&mi, v, id) || !mi.manifest ||
        mdt_modview_lookup(&man, v, mi.manifest) || !man.is_manifest || !man.identity.name)
        return false;
    return strlen(man.identity.name) == len && strncasecmp(man.identity.name, asm_name, len) == 0;
}

int mdi_enum_resolver(void *payload, mdt_enum_info *out, const mdt_image *img, uint32_t token,
                      const char *name)
{
    mdi_state *st = payload;
    mdt_modview *v;
    mdt_module_info mi;
    int rc = MDT_ENOTFOUND;

    if (token) {
        const mdi_module *m = module_of(st, img);
        mdt_resolution r;
        if (!m || !(v = mdi_view(st)))
            return MDT_ENOTFOUND;
        if (mdt_typeref_resolve(NULL, &r, NULL, v, m->id, token, NULL) == 0 && r.resolved &&
            MDT_TOKEN_TABLE(r.token) == MDT_TABLE_TypeDef &&
            mdt_modview_lookup(&mi, v, r.module) == 0 && mi.image) {
            out->def_img = mi.image;
            out->def_typedef = r.token;
            rc = 0;
        }
        mdt_error_clear();
        mdt_modview_release(v);
        return rc;
    }

    /* A serialized name: the type part ends at the first ',' not escaped
     * by '\'; the assembly's simple name follows it. */
    size_t tlen = 0, alen = 0;
    const char *asm_name = NULL;
    while (name[tlen] && name[tlen] != ',')
        tlen += name[tlen] == '\\' && name[tlen + 1] ? 2 : 1;
    if (name[tlen] == ',') {
        asm_name = name + tlen + 1;
        while (*asm_name == ' ')
            asm_name++;
        while (asm_name[alen] && asm_name[alen] != ',' && asm_name[alen] != ' ')
            alen++;
    }
    while (tlen && name[tlen - 1] == ' ')
        tlen--;
    /* The index key: escapes removed ('+' nests, as in the key). A name
     * with an escaped '+' cannot be told from nesting: the library's scan
     * (mdt_typedef_by_name) reads it instead. */
    char key[1024];
    size_t klen = 0;
    bool plain = true;
    for (size_t i = 0; i < tlen && plain; i++) {
        if (name[i] == '\\' && i + 1 < tlen) {
            i++;
            plain = name[i] != '+';
        }
        if (klen + 1 >= sizeof key)
            plain = false;
        else
            key[klen++] = name[i];
    }
    key[klen] = '\0';
    if (!(v = mdi_view(st)))
        return MDT_ENOTFOUND;
    /* Pass 0: the named assembly (when named); pass 1: any open module. */
    for (int pass = asm_name ? 0 : 1; pass < 2 && rc; pass++) {
        size_t pos = 0;
        while (rc && mdt_modview_next(&mi, v, MDT_APPDOMAIN_SHARED, true, &pos) == 0) {
            uint32_t td;
            if (!mi.image || (pass == 0 && !in_assembly(v, mi.id, asm_name, alen)))
                continue;
            if (plain) {
                mdi_module *m = module_by_id(st, mi.id);
                if (m && (td = mdi_index_find(m, key)) != 0) {
                    out->def_img = mi.image;
                    out->def_typedef = td;
                    rc = 0;
                }
            } else if (mdt_typedef_by_name(&td, mi.image, name, tlen) == 0) {
                out->def_img = mi.image;
                out->def_typedef = td;
                rc = 0;
            }
        }
    }
    mdt_error_clear();
    mdt_modview_release(v);
    return rc;
}
