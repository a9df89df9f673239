/* MemberRef resolution (ECMA-335 II.22.25 MemberRef, II.23.2 signatures):
 * the parent gives the defining TypeDef (TypeRef resolved as in dispatch.c,
 * TypeSpec GENERICINST by its generic type, ModuleRef by the module's
 * <Module> type, MethodDef for vararg call sites); the member is the
 * MethodDef or Field of that TypeDef, or of its base types (constructors
 * excepted), whose name is equal and whose signature is equivalent.
 *
 * Equivalence (sigeq.c) is structural over the decoded trees: element types equal,
 * custom modifiers equal, VAR/MVAR by number (a MemberRef on Gen<int> says
 * !0 where the definition says !0), named types equal when they resolve to
 * the same TypeDef of the same module; when a named type resolves nowhere,
 * it is compared by name (both sides unresolved: assembly simple name and
 * full name; one side unresolved: full name), which the result flags. A
 * vararg call-site signature matches its definition by the part before
 * SENTINEL. Two matching members mean "unresolved" (AMBIGUOUS), never a
 * guess. The methods the runtime provides for arrays (II.14.2) are no
 * member of any metadata: `runtime-provided`. A member missing from a type
 * that was bound by name only to another assembly (tier 3b) is reported as
 * the reference's assembly not being loaded, not as a member missing from
 * an assembly it never named. Recursion follows the decoded trees, whose depth the decoder caps
 * (MDT_SIG_MAX_DEPTH); base-type walks are loops with a bound and a cycle
 * check. Decoded trees live under a temporary child of the caller's
 * context. */
#include "config.h"

#include <string.h>
#include <talloc.h>

#include <mdtools/errors.h>
#include <mdtools/heaps.h>
#include <mdtools/names.h>
#include <mdtools/nesting.h>
#include <mdtools/sig.h>
#include <mdtools/members.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>

#include "typeref/cache_int.h"
#include "typeref/dispatch_int.h"
#include "typeref/engine_int.h"
#include "typeref/modset_int.h"
#include "typeref/result_int.h"
#include "typeref/sigeq_int.h"
#include "util/reader.h"
#include "util/error.h"
#include "util/strbuf.h"

#define MAX_BASES 64

/* A signature decoded into a caller's arena (no allocation: the common
 * case), else under tmp (a large tree). */
static int sig_of(void *tmp, uint64_t *arena, size_t size, mdt_sig *out,
                  const struct mdt_image *img, uint32_t token)
{
    int e = mdt_sig_of_token_buf(arena, size, out, img, token);
    if (e == MDT_ENOMEM)
        e = mdt_sig_of_token(tmp, out, img, token);
    return e;
}

/* Whether member `m` of `table` (named `name`) has a signature equivalent
 * to the reference's; counts the matches, the first in *member. A member
 * that does not read is passed over, its failure forgotten back to `mark`
 * (the resolution is an answer, not a failure). */
static void consider(struct rc *c, void *tmp, uint32_t rmi, const mdt_sig *rsig, const char *name,
                     uint32_t dmi, unsigned table, uint32_t m, int *matches, uint32_t *member,
                     bool *by_name, uint64_t mark)
{
    const struct mdt_image *img = c->v->mods[dmi]->img;
    bool method = rsig->kind == MDT_SIG_METHOD;
    struct tr_sigeq k = {c->v, rmi, dmi, false};
    uint64_t arena[128];
    mdt_sig dsig;
    mdt_row r;
    bool eq;
    if (mdt_row_get(&r, img, table, m)) {
        mdt__err_forget(mark);
        return;
    }
    if (method && !tr_sigeq_head(&r, rsig->method)) {
        NOTE(c, MDT_TRACE_PASSED, dmi, MDT_TOKEN(table, m), 0, "%s 0x%08x: signature differs", name,
             MDT_TOKEN(table, m));
        return;
    }
    if (sig_of(tmp, arena, sizeof arena, &dsig, img, MDT_TOKEN(table, m)) ||
        dsig.kind != rsig->kind) {
        mdt__err_forget(mark);
        NOTE(c, MDT_TRACE_PASSED, dmi, MDT_TOKEN(table, m), 0, "%s 0x%08x: signature unreadable",
             name, MDT_TOKEN(table, m));
        return;
    }
    eq = method ? tr_sigeq_method(&k, rsig->method, dsig.method, true)
                : tr_sigeq_type(&k, rsig->type, dsig.type);
    if (!eq) {
        NOTE(c, MDT_TRACE_PASSED, dmi, MDT_TOKEN(table, m), 0, "%s 0x%08x: signature differs", name,
             MDT_TOKEN(table, m));
        return;
    }
    if (!(*matches)++)
        *member = MDT_TOKEN(table, m);
    *by_name |= k.by_name;
}

/* Search TypeDef rid of module dmi for members named `name` matching `rsig`.
 * Returns the number of matches (the first in *member), -1 when the type's
 * run cannot be read; members that do not read are passed over. */
static int search_type(struct rc *c, void *tmp, uint32_t rmi, const mdt_sig *rsig, const char *name,
                       uint32_t dmi, uint32_t rid, uint32_t *member, bool *by_name)
{
    const struct mdt_image *img = c->v->mods[dmi]->img;
    bool method = rsig->kind == MDT_SIG_METHOD;
    unsigned table = method ? MDT_TABLE_MethodDef : MDT_TABLE_Field;
    mdt_members it = MDT_MEMBERS_INIT;
    mdt_row tr;
    uint32_t first, count, m;
    uint64_t mark;
    int matches = 0, e;
    if (mdt_row_get(&tr, img, MDT_TABLE_TypeDef, rid) ||
        mdt_row_range(&first, &count, &tr,
                      method ? MDT_COL_TypeDef_MethodList : MDT_COL_TypeDef_FieldList) ||
        mdt_members_init(&it, img, MDT_TOKEN(MDT_TABLE_TypeDef, rid),
                         method ? MDT_MEMBERS_METHODS : MDT_MEMBERS_FIELDS))
        return -1;
    mark = mdt__err_mark();
    while ((e = mdt_members_next_named(&m, name, &it)) != MDT_ITEROVER) {
        if (e)
            mdt__err_forget(mark);
        else
            consider(c, tmp, rmi, rsig, name, dmi, table, MDT_TOKEN_RID(m), &matches, member,
                     by_name, mark);
    }
    return matches;
}

/* The TypeDef a type token of module mi stands for (TypeDef, TypeRef,
 * TypeSpec GENERICINST), resolved through the cache. */
static int base_of(struct rc *c, void *tmp, uint32_t mi, uint32_t rid, uint32_t *bmi,
                   uint32_t *brid)
{
    const struct mdt_image *img = c->v->mods[mi]->img;
    mdt_row r;
    uint32_t ext;
    struct tr_res res;
    if (mdt_row_get(&r, img, MDT_TABLE_TypeDef, rid) ||
        mdt_row_token(&ext, &r, MDT_COL_TypeDef_Extends) || !MDT_TOKEN_RID(ext))
        return -1;
    if (MDT_TOKEN_TABLE(ext) == MDT_TABLE_TypeSpec) {
        mdt_sig s;
        if (mdt_sig_of_token(tmp, &s, img, ext) || !s.type ||
            s.type->kind != MDT_ELEMENT_TYPE_GENERICINST || !s.type->elem)
            return -1;
        ext = s.type->elem->token;
    }
    if (tr_resolve_type(c->v, mi, ext, &res) || !res.resolved)
        return -1;
    *bmi = res.module;
    *brid = MDT_TOKEN_RID(res.token);
    return 0;
}

/* Whether `name` with signature `m` is a method the runtime provides for
 * arrays of element `t` (II.14.2: a constructor taking the rank's lengths,
 * or lower bounds and lengths, or for a vector of arrays the lengths of the
 * nested vectors too; Get with the rank's indexes; Set with the indexes and
 * the value; Address with the indexes, returning a managed pointer). */
static bool array_method(const mdt_type *t, const char *name, const mdt_method_sig *m)
{
    uint32_t rank;
    if (t->kind == MDT_ELEMENT_TYPE_SZARRAY)
        rank = 1;
    else if (t->kind == MDT_ELEMENT_TYPE_ARRAY && t->shape)
        rank = t->shape->rank;
    else
        return false;
    if (!m || !(m->callconv & MDT_CC_HASTHIS) || (m->callconv & MDT_CC_GENERIC) || !m->ret)
        return false;
    if (strcmp(name, ".ctor") == 0)
        return m->ret->kind == MDT_ELEMENT_TYPE_VOID && m->nparams >= rank &&
               (m->nparams == rank || m->nparams == 2 * rank ||
                t->kind == MDT_ELEMENT_TYPE_SZARRAY);
    if (strcmp(name, "Get") == 0)
        return m->nparams == rank && m->ret->kind != MDT_ELEMENT_TYPE_VOID;
    if (strcmp(name, "Set") == 0)
        return m->nparams == rank + 1 && m->ret->kind == MDT_ELEMENT_TYPE_VOID;
    if (strcmp(name, "Address") == 0)
        return m->nparams == rank && m->ret->kind == MDT_ELEMENT_TYPE_BYREF;
    return false;
}

/* No member matched in a type bound by name only to another assembly:
 * the assembly the reference names is not loaded. */
static bool other_assembly_missing(struct rc *c, uint32_t mi, uint32_t tok, uint32_t dmi,
                                   uint32_t drid, const char *name)
{
    uint32_t scope;
    if (!(c->r.flags & MDT_RES_OTHER_ASSEMBLY) ||
        mdt_token_scope(&scope, c->v->mods[mi]->img, tok) ||
        MDT_TOKEN_TABLE(scope) != MDT_TABLE_AssemblyRef)
        return false;
    rc_fail(c, MDT_RES_NOT_LOADED, mi, scope);
    c->r.instead_module = dmi;
    c->r.instead_token = MDT_TOKEN(MDT_TABLE_TypeDef, drid);
    NOTE(c, MDT_TRACE_RESULT, mi, scope, 0,
         "no member %s with that signature in the type found by name in another assembly: "
         "the assembly the reference names is not loaded",
         name);
    return true;
}

static void resolve_memberref(struct rc *c, void *tmp, uint32_t mi, uint32_t rid)
{
    uint64_t rarena[128]; /* the reference's signature, used throughout */
    const struct mdt_image *img = c->v->mods[mi]->img;
    uint32_t tok = MDT_TOKEN(MDT_TABLE_MemberRef, rid), parent, dmi = mi, drid = 0;
    const char *name;
    mdt_row r;
    mdt_sig rsig;
    if (mdt_row_get(&r, img, MDT_TABLE_MemberRef, rid) ||
        mdt_row_token(&parent, &r, MDT_COL_MemberRef_Class) ||
        mdt_row_string(&name, NULL, &r, MDT_COL_MemberRef_Name) ||
        sig_of(tmp, rarena, sizeof rarena, &rsig, img, tok) ||
        (rsig.kind != MDT_SIG_METHOD && rsig.kind != MDT_SIG_FIELD)) {
        rc_fail(c, MDT_RES_BAD_IMAGE, mi, tok);
        NOTE(c, MDT_TRACE_RESULT, mi, tok, 0, "MemberRef row %u or its signature cannot be read",
             rid);
        return;
    }
    NOTE(c, MDT_TRACE_STEP, mi, parent, 0, "member %s: find its parent 0x%08x", name, parent);
    switch (MDT_TOKEN_RID(parent) ? MDT_TOKEN_TABLE(parent) : MDT_NOTABLE) {
    case MDT_TABLE_TypeDef: drid = MDT_TOKEN_RID(parent); break;
    case MDT_TABLE_TypeRef:
        rc_typeref(c, mi, MDT_TOKEN_RID(parent));
        if (!c->r.resolved)
            return;
        dmi = c->r.module;
        drid = MDT_TOKEN_RID(c->r.token);
        c->r.resolved = false;
        break;
    case MDT_TABLE_TypeSpec: {
        mdt_sig ts;
        uint64_t tarena[128];
        if (sig_of(tmp, tarena, sizeof tarena, &ts, img, parent) || !ts.type) {
            rc_fail(c, MDT_RES_BAD_IMAGE, mi, parent);
            return;
        }
        if (rsig.kind == MDT_SIG_METHOD && array_method(ts.type, name, rsig.method)) {
            rc_fail(c, MDT_RES_RUNTIME, mi, parent);
            NOTE(c, MDT_TRACE_RESULT, mi, parent, 0,
                 "%s of an array type: the runtime provides it (II.14.2)", name);
            return;
        }
        if (ts.type->kind != MDT_ELEMENT_TYPE_GENERICINST || !ts.type->elem) {
            rc_fail(c, MDT_RES_NO_SUCH_MEMBER, mi, parent);
            NOTE(c, MDT_TRACE_RESULT, mi, parent, 0,
                 "%s is a member of a constructed type (array, pointer, ...): the runtime "
                 "provides it, no metadata defines it",
                 name);
            return;
        }
        uint32_t g = ts.type->elem->token;
        if (MDT_TOKEN_TABLE(g) == MDT_TABLE_TypeRef) {
            rc_typeref(c, mi, MDT_TOKEN_RID(g));
            if (!c->r.resolved)
                return;
            dmi = c->r.module;
            drid = MDT_TOKEN_RID(c->r.token);
            c->r.resolved = false;
        } else if (MDT_TOKEN_TABLE(g) == MDT_TABLE_TypeDef) {
            drid = MDT_TOKEN_RID(g);
        } else {
            rc_fail(c, MDT_RES_BAD_IMAGE, mi, parent);
            return;
        }
        break;
    }
    case MDT_TABLE_ModuleRef:
        if ((dmi = rc_moduleref(c, mi, parent)) == TR_NONE)
            return;
        drid = 1; /* <Module>: global functions and fields */
        break;
    case MDT_TABLE_MethodDef: {
        /* A vararg call site of a method of this module. */
        mdt_row mr;
        const char *mn;
        if (mdt_row_get(&mr, img, MDT_TABLE_MethodDef, MDT_TOKEN_RID(parent)) ||
            mdt_row_string(&mn, NULL, &mr, MDT_COL_MethodDef_Name)) {
            rc_fail(c, MDT_RES_BAD_IMAGE, mi, parent);
            return;
        }
        if (strcmp(mn, name)) {
            rc_fail(c, MDT_RES_NO_SUCH_MEMBER, mi, parent);
            NOTE(c, MDT_TRACE_RESULT, mi, parent, 0, "MethodDef parent is named %s, not %s", mn,
                 name);
            return;
        }
        c->r.resolved = true;
        c->r.reason = MDT_RES_OK;
        c->r.module = mi;
        c->r.token = parent;
        return;
    }
    default: rc_fail(c, MDT_RES_BAD_IMAGE, mi, tok); return;
    }
    if (!c->v->mods[dmi]->img) {
        rc_fail(c, MDT_RES_NO_METADATA, dmi, 0);
        return;
    }
    /* The type, then its bases (constructors are not inherited). */
    bool walk = strcmp(name, ".ctor") && strcmp(name, ".cctor");
    uint32_t seen_mi[MAX_BASES], seen_rid[MAX_BASES];
    for (unsigned depth = 0;; depth++) {
        uint32_t member = 0, bmi, brid;
        bool by_name = false;
        int n;
        for (unsigned i = 0; i < depth; i++)
            if (seen_mi[i] == dmi && seen_rid[i] == drid) {
                rc_fail(c, MDT_RES_CYCLE, dmi, MDT_TOKEN(MDT_TABLE_TypeDef, drid));
                NOTE(c, MDT_TRACE_RESULT, dmi, MDT_TOKEN(MDT_TABLE_TypeDef, drid), 0,
                     "base types loop");
                return;
            }
        if (depth == MAX_BASES) {
            rc_fail(c, MDT_RES_HOP_LIMIT, dmi, MDT_TOKEN(MDT_TABLE_TypeDef, drid));
            return;
        }
        seen_mi[depth] = dmi;
        seen_rid[depth] = drid;
        n = search_type(c, tmp, mi, &rsig, name, dmi, drid, &member, &by_name);
        if (n < 0) {
            rc_fail(c, MDT_RES_BAD_IMAGE, dmi, MDT_TOKEN(MDT_TABLE_TypeDef, drid));
            return;
        }
        if (n == 1) {
            c->r.resolved = true;
            c->r.reason = MDT_RES_OK;
            c->r.module = dmi;
            c->r.token = member;
            if (by_name)
                c->r.flags |= MDT_RES_SIG_BY_NAME;
            return;
        }
        if (n > 1) {
            if (other_assembly_missing(c, mi, tok, dmi, drid, name))
                return;
            c->r.flags |= MDT_RES_AMBIGUOUS;
            rc_fail(c, MDT_RES_NO_SUCH_MEMBER, dmi, MDT_TOKEN(MDT_TABLE_TypeDef, drid));
            NOTE(c, MDT_TRACE_RESULT, dmi, member, 0, "%d members named %s match", n, name);
            return;
        }
        if (!walk || base_of(c, tmp, dmi, drid, &bmi, &brid)) {
            if (other_assembly_missing(c, mi, tok, seen_mi[0], seen_rid[0], name))
                return;
            rc_fail(c, MDT_RES_NO_SUCH_MEMBER, seen_mi[0],
                    MDT_TOKEN(MDT_TABLE_TypeDef, seen_rid[0]));
            NOTE(c, MDT_TRACE_RESULT, seen_mi[0], MDT_TOKEN(MDT_TABLE_TypeDef, seen_rid[0]), 0,
                 "no member %s with that signature", name);
            return;
        }
        NOTE(c, MDT_TRACE_STEP, bmi, MDT_TOKEN(MDT_TABLE_TypeDef, brid), 0,
             "not in TypeDef 0x%08x: try its base type", MDT_TOKEN(MDT_TABLE_TypeDef, drid));
        dmi = bmi;
        drid = brid;
    }
}

int mdt_memberref_resolve(void *mem_ctx, mdt_resolution *out, mdt_trace **trace,
                          const mdt_modview *view, uintptr_t module, uint32_t token,
                          const mdt_resolve_opts *opts)
{
    struct rc c;
    uint32_t mi;
    int e;
    struct tr_centry *slot = NULL;
    void *tmp;
    uint64_t stamp;
    if (tr_cache_export_fast(view, module, token, opts, trace, out, &mi))
        return 0;
    memset(out, 0, sizeof *out);
    if ((e = rc_begin(&c, mem_ctx, trace, view, module, token, opts, &mi)))
        return e;
    if (MDT_TOKEN_TABLE(token) != MDT_TABLE_MemberRef || !MDT_TOKEN_RID(token) ||
        (view->mods[mi]->img &&
         MDT_TOKEN_RID(token) > mdt_table_rows(view->mods[mi]->img, MDT_TABLE_MemberRef)))
        return rc_error(&c, mdt__fail_simple(
                                MDT_EINVAL, "resolve: token 0x%08x is not a MemberRef row", token));
    if (!view->mods[mi]->img) {
        rc_fail(&c, MDT_RES_NO_METADATA, mi, 0);
        rc_end(&c, out);
        return 0;
    }
    /* Not resolve.c's resolve_row: the walk needs a temporary context,
     * made only on a cache miss, and its own check of the row above. */
    if (c.cacheable) {
        slot = tr_cache_slot(view, mi, token);
        if (tr_cache_read(slot, &c.r)) {
            tr_res_export(view, &c.r, out);
            return 0;
        }
    }
    if (!(tmp = talloc_new(mem_ctx)))
        return rc_error(&c, mdt__fail_simple(MDT_ENOMEM, "out of memory resolving a MemberRef"));
    /* Unreadable rows on the way are answers (bad-image, or a candidate
     * passed over), not failures of the call. */
    stamp = mdt__err_stamp();
    resolve_memberref(&c, tmp, mi, MDT_TOKEN_RID(token));
    talloc_free(tmp);
    if (c.cacheable)
        tr_cache_write(slot, &c.r);
    rc_end(&c, out);
    if (c.trace_failed)
        return rc_error(&c, mdt__fail_simple(MDT_ENOMEM, "out of memory for a trace"));
    mdt__err_back_to(stamp);
    return 0;
}
