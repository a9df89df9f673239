/* The dispatcher: a reference resolved by the kind of scope it names
 * (ECMA-335 II.22.38 TypeRef ResolutionScope, II.22.14 ExportedType
 * Implementation; the rules are in <mdtools/typeref.h>). A TypeRef nested
 * in TypeRefs is resolved outermost first, then walked down by name among
 * the nested TypeDefs (II.22.32); the outermost one's scope is Module (this
 * module), ModuleRef (another module of this assembly, II.6.5), AssemblyRef
 * (bound and searched by the engine, engine.c) or nil (this module, then
 * its assembly, as the CLR does). An ExportedType, nested in others or not,
 * is resolved through its outermost row's Implementation: File or
 * AssemblyRef (a forwarder). The nesting chains are walked in loops bounded
 * by MDT_RESOLVE_MAX_NEST, rows remembered to detect cycles. MemberRef
 * resolution asks here for the types its parents and signatures name
 * (tr_resolve_type: through the view's cache, without a trace). */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <mdtools/errors.h>
#include <mdtools/image.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>
#include <mdtools/typeref.h>

#include "typeref/cache_int.h"
#include "typeref/dispatch_int.h"
#include "typeref/engine_int.h"
#include "typeref/index_int.h"
#include "typeref/modset_int.h"
#include "typeref/result_int.h"

/* Top-level ns.name in the current assembly of module mi (nil scope). */
static int nil_scope(struct rc *c, uint32_t mi, const struct tr_key *k, uint32_t *dmi,
                     uint32_t *rid)
{
    const struct mdt_modview *v = c->v;
    const char *ns = k->ns, *name = k->name;
    uint32_t a = v->asm_of[mi];
    char fn[512];
    int rv;
    fn[0] = '\0'; /* filled (and read) only for a trace */
    if (c->trace)
        rc_full_name(fn, sizeof fn, ns, name);
    NOTE(c, MDT_TRACE_STEP, mi, 0, 0, "nil scope: %s in this module, then this assembly", fn);
    if ((*rid = tr_find_typedef(v->mods[mi], k))) {
        *dmi = mi;
        return 0;
    }
    if (a == TR_NONE) {
        rc_fail(c, MDT_RES_NO_SUCH_TYPE, mi, 0);
        rc_instead_type(c, mi, k);
        NOTE(c, MDT_TRACE_RESULT, mi, 0, 0, "module has no %s and its manifest is not loaded", fn);
        return -1;
    }
    if ((rv = rc_assembly(c, a, k, dmi, rid)) > 0) {
        rc_fail(c, MDT_RES_NO_SUCH_TYPE, a, 0);
        rc_instead_type(c, mi, k);
        NOTE(c, MDT_TRACE_RESULT, a, 0, 0, "this assembly has no %s", fn);
        return -1;
    }
    return rv;
}

/* Walk down nested names[depth-2 .. 0] from (mi, rid). */
static int descend(struct rc *c, const struct mdt_image *src, struct nm *names, unsigned depth,
                   uint32_t mi, uint32_t rid)
{
    for (unsigned k = depth - 1; k-- > 0;) {
        struct tr_key nk;
        tr_key_init(&nk, src, names[k].ns, names[k].name);
        uint32_t inner = tr_find_nested(c->v->mods[mi], rid, &nk);
        if (!inner) {
            char fn[512];
            fn[0] = '\0'; /* filled (and read) only for a trace */
            if (c->trace)
                rc_full_name(fn, sizeof fn, names[k].ns, names[k].name);
            rc_fail(c, MDT_RES_NO_SUCH_TYPE, mi, MDT_TOKEN(MDT_TABLE_TypeDef, rid));
            NOTE(c, MDT_TRACE_RESULT, mi, MDT_TOKEN(MDT_TABLE_TypeDef, rid), 0,
                 "TypeDef 0x%08x has no nested type %s", MDT_TOKEN(MDT_TABLE_TypeDef, rid), fn);
            return -1;
        }
        rid = inner;
    }
    rc_found(c, mi, rid);
    return 0;
}

uint32_t rc_moduleref(struct rc *c, uint32_t mi, uint32_t modref)
{
    const struct mdt_image *img = c->v->mods[mi]->img;
    mdt_row r;
    const char *mname;
    uint32_t a = c->v->asm_of[mi], dmi;
    if (mdt_row_get(&r, img, MDT_TABLE_ModuleRef, MDT_TOKEN_RID(modref)) ||
        mdt_row_string(&mname, NULL, &r, MDT_COL_ModuleRef_Name)) {
        rc_fail(c, MDT_RES_BAD_IMAGE, mi, modref);
        return TR_NONE;
    }
    NOTE(c, MDT_TRACE_STEP, mi, modref, 0, "scope ModuleRef %s: a module of this assembly", mname);
    dmi = !tr_ascii_casecmp(c->v->mods[mi]->name, mname) ? mi
          : a == TR_NONE                                 ? TR_NONE
                                                         : tr_assembly_module(c->v, a, mname);
    if (dmi == TR_NONE) {
        rc_fail(c, MDT_RES_NOT_LOADED, mi, modref);
        NOTE(c, MDT_TRACE_RESULT, mi, modref, 0, "module %s of this assembly is not loaded", mname);
        return TR_NONE;
    }
    if (!c->v->mods[dmi]->img) {
        rc_fail(c, MDT_RES_NO_METADATA, dmi, 0);
        NOTE(c, MDT_TRACE_RESULT, dmi, 0, 0, "module %s has no metadata", mname);
        return TR_NONE;
    }
    return dmi;
}

void rc_typeref(struct rc *c, uint32_t mi, uint32_t rid)
{
    const struct mdt_image *img = c->v->mods[mi]->img;
    struct nm names[MDT_RESOLVE_MAX_NEST];
    uint32_t rows[MDT_RESOLVE_MAX_NEST];
    unsigned depth = 0;
    uint32_t scope = 0, t = rid, dmi, drid;
    char fn[512];
    fn[0] = '\0'; /* filled (and read) only for a trace */
    for (;;) {
        for (unsigned i = 0; i < depth; i++)
            if (rows[i] == t) {
                rc_fail(c, MDT_RES_CYCLE, mi, MDT_TOKEN(MDT_TABLE_TypeRef, t));
                NOTE(c, MDT_TRACE_RESULT, mi, MDT_TOKEN(MDT_TABLE_TypeRef, t), 0,
                     "TypeRef %u is its own enclosing scope (scope cycle)", t);
                return;
            }
        if (depth == MDT_RESOLVE_MAX_NEST) {
            rc_fail(c, MDT_RES_HOP_LIMIT, mi, MDT_TOKEN(MDT_TABLE_TypeRef, t));
            NOTE(c, MDT_TRACE_RESULT, mi, MDT_TOKEN(MDT_TABLE_TypeRef, t), 0,
                 "TypeRefs nested deeper than %u", MDT_RESOLVE_MAX_NEST);
            return;
        }
        if (tr_typeref_row(img, t, &scope, &names[depth].ns, &names[depth].name)) {
            rc_fail(c, MDT_RES_BAD_IMAGE, mi, MDT_TOKEN(MDT_TABLE_TypeRef, t));
            NOTE(c, MDT_TRACE_RESULT, mi, MDT_TOKEN(MDT_TABLE_TypeRef, t), 0,
                 "TypeRef row %u cannot be read", t);
            return;
        }
        rows[depth++] = t;
        if (MDT_TOKEN_TABLE(scope) != MDT_TABLE_TypeRef || !MDT_TOKEN_RID(scope))
            break;
        t = MDT_TOKEN_RID(scope);
    }
    const char *ns = names[depth - 1].ns, *name = names[depth - 1].name;
    struct tr_key key;
    tr_key_init(&key, img, ns, name);
    if (c->trace)
        rc_full_name(fn, sizeof fn, ns, name);
    if (depth > 1)
        NOTE(c, MDT_TRACE_STEP, mi, MDT_TOKEN(MDT_TABLE_TypeRef, rows[depth - 1]), 0,
             "nested %u deep: resolve the outermost %s first", depth - 1, fn);
    if (!MDT_TOKEN_RID(scope)) {
        if (nil_scope(c, mi, &key, &dmi, &drid))
            return;
    } else {
        switch (MDT_TOKEN_TABLE(scope)) {
        case MDT_TABLE_Module:
            NOTE(c, MDT_TRACE_STEP, mi, scope, 0, "scope Module: %s in this module", fn);
            if (!(drid = tr_find_typedef(c->v->mods[mi], &key))) {
                rc_fail(c, MDT_RES_NO_SUCH_TYPE, mi, scope);
                rc_instead_type(c, mi, &key);
                NOTE(c, MDT_TRACE_RESULT, mi, scope, 0, "this module has no %s", fn);
                return;
            }
            dmi = mi;
            break;
        case MDT_TABLE_ModuleRef:
            if ((dmi = rc_moduleref(c, mi, scope)) == TR_NONE)
                return;
            if (!(drid = tr_find_typedef(c->v->mods[dmi], &key))) {
                rc_fail(c, MDT_RES_NO_SUCH_TYPE, dmi, 0);
                rc_instead_type(c, mi, &key);
                NOTE(c, MDT_TRACE_RESULT, dmi, 0, 0, "module %s has no %s", c->v->mods[dmi]->name,
                     fn);
                return;
            }
            break;
        case MDT_TABLE_AssemblyRef:
            if (rc_assemblyref(c, mi, MDT_TOKEN_RID(scope), &key, &dmi, &drid))
                return;
            break;
        default:
            rc_fail(c, MDT_RES_BAD_IMAGE, mi, MDT_TOKEN(MDT_TABLE_TypeRef, rows[depth - 1]));
            return;
        }
    }
    descend(c, img, names, depth, dmi, drid);
}

void rc_exported(struct rc *c, uint32_t mi, uint32_t rid)
{
    const struct mdt_image *img = c->v->mods[mi]->img;
    struct nm names[MDT_RESOLVE_MAX_NEST];
    uint32_t rows[MDT_RESOLVE_MAX_NEST];
    unsigned depth = 0;
    uint32_t impl = 0, hint = 0, t = rid, a = c->v->asm_of[mi], dmi, drid;
    for (;;) {
        mdt_row r;
        uint32_t tok = MDT_TOKEN(MDT_TABLE_ExportedType, t);
        for (unsigned i = 0; i < depth; i++)
            if (rows[i] == t) {
                rc_fail(c, MDT_RES_CYCLE, mi, tok);
                NOTE(c, MDT_TRACE_RESULT, mi, tok, 0, "ExportedType %u encloses itself", t);
                return;
            }
        if (depth == MDT_RESOLVE_MAX_NEST) {
            rc_fail(c, MDT_RES_HOP_LIMIT, mi, tok);
            return;
        }
        if (mdt_row_get(&r, img, MDT_TABLE_ExportedType, t) ||
            mdt_row_token(&impl, &r, MDT_COL_ExportedType_Implementation) ||
            mdt_row_string(&names[depth].name, NULL, &r, MDT_COL_ExportedType_TypeName) ||
            mdt_row_string(&names[depth].ns, NULL, &r, MDT_COL_ExportedType_TypeNamespace)) {
            rc_fail(c, MDT_RES_BAD_IMAGE, mi, tok);
            return;
        }
        hint = mdt_row_raw(&r, MDT_COL_ExportedType_TypeDefId);
        rows[depth++] = t;
        if (MDT_TOKEN_TABLE(impl) != MDT_TABLE_ExportedType || !MDT_TOKEN_RID(impl))
            break;
        t = MDT_TOKEN_RID(impl);
    }
    struct tr_key key;
    tr_key_init(&key, img, names[depth - 1].ns, names[depth - 1].name);
    if (a == TR_NONE)
        a = mi;
    rc_visit(c, a);
    if (MDT_TOKEN_RID(impl) && MDT_TOKEN_TABLE(impl) == MDT_TABLE_File) {
        if (rc_via_file(c, a, rows[depth - 1], impl, hint, &key, &dmi, &drid))
            return;
    } else if (MDT_TOKEN_RID(impl) && MDT_TOKEN_TABLE(impl) == MDT_TABLE_AssemblyRef) {
        if (rc_forward(c, mi, MDT_TOKEN_RID(impl), rows[depth - 1], &key, &dmi, &drid))
            return;
    } else {
        rc_fail(c, MDT_RES_BAD_IMAGE, mi, MDT_TOKEN(MDT_TABLE_ExportedType, rows[depth - 1]));
        return;
    }
    descend(c, img, names, depth, dmi, drid);
}

int tr_resolve_type(const struct mdt_modview *v, uint32_t mi, uint32_t token, struct tr_res *r)
{
    struct rc c;
    struct tr_centry *slot;
    memset(&c, 0, sizeof c);
    tr_res_init(&c.r);
    c.v = v;
    c.max_hops = MDT_RESOLVE_MAX_HOPS;
    if (MDT_TOKEN_TABLE(token) == MDT_TABLE_TypeDef && MDT_TOKEN_RID(token)) {
        rc_found(&c, mi, MDT_TOKEN_RID(token));
        *r = c.r;
        return 0;
    }
    if (MDT_TOKEN_TABLE(token) != MDT_TABLE_TypeRef || !v->mods[mi]->img || !MDT_TOKEN_RID(token) ||
        MDT_TOKEN_RID(token) > mdt_table_rows(v->mods[mi]->img, MDT_TABLE_TypeRef))
        return MDT_EINVAL;
    slot = tr_cache_slot(v, mi, token);
    if (tr_cache_read(slot, r))
        return 0;
    rc_typeref(&c, mi, MDT_TOKEN_RID(token));
    tr_cache_write(slot, &c.r);
    *r = c.r;
    return 0;
}
