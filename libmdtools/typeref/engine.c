/* The resolution engine: one resolution in progress (struct rc, its
 * answer, its trace) and the search for a top-level type among assemblies
 * (ECMA-335 II.22.14 ExportedType, II.6.5 multi-module assemblies, II.6.8
 * type forwarders); the rules are in <mdtools/typeref.h>. The dispatcher
 * (dispatch.c) decides from a reference's scope where to start; the engine
 * binds an AssemblyRef through the tiers of bind.c, trying each candidate
 * in order, looks in the chosen assembly (its manifest's TypeDefs, then
 * its ExportedType rows: File -> a module of the assembly, AssemblyRef ->
 * a forwarder) and follows forwarders, binding again from each forwarding
 * assembly.
 *
 * Every walk is a loop with a bound: at most max_hops forwarder hops
 * (`hop-limit` beyond), and every assembly entered is remembered in the
 * answer's `visited` list, so that entering one again is a `cycle`. Nothing
 * here allocates unless a trace is asked for: its entries and texts hang off
 * the trace, under the caller's talloc context, and the texts are only
 * formatted when there is a trace (NOTE). */
#include "config.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <talloc.h>

#include <mdtools/assembly.h>
#include <mdtools/errors.h>
#include <mdtools/image.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>
#include <mdtools/typeref.h>

#include "typeref/bind_int.h"
#include "typeref/engine_int.h"
#include "typeref/index_int.h"
#include "typeref/modset_int.h"
#include "typeref/result_int.h"
#include "util/error.h"

/* ---- answer and trace ---------------------------------------------------- */

void rc_note(struct rc *c, int kind, uint32_t mi, uint32_t token, int tier, const char *fmt, ...)
{
    va_list ap;
    char *text;
    if (!c->trace || c->trace_failed)
        return;
    if (c->trace->n == c->tcap) {
        size_t cap = c->tcap ? 2 * c->tcap : 16;
        mdt_trace_entry *e = talloc_realloc(c->trace, c->trace->entries, mdt_trace_entry, cap);
        if (!e) {
            c->trace_failed = true;
            return;
        }
        c->trace->entries = e;
        c->tcap = cap;
    }
    va_start(ap, fmt);
    text = talloc_vasprintf(c->trace, fmt, ap);
    va_end(ap);
    if (!text) {
        c->trace_failed = true;
        return;
    }
    c->trace->entries[c->trace->n++] =
        (mdt_trace_entry){kind, tr_view_id(c->v, mi), token, (uint8_t)tier, text};
}

/* "Name 1.2.3.4" of a manifest, or the module name. */
const char *rc_asm(const struct rc *c, uint32_t mi, char *buf, size_t len)
{
    const struct tr_mod *m = c->v->mods[mi];
    if (m->manifest)
        snprintf(buf, len, "%s %u.%u.%u.%u", m->ident.name, m->ident.version[0],
                 m->ident.version[1], m->ident.version[2], m->ident.version[3]);
    else
        snprintf(buf, len, "module %s", m->name);
    return buf;
}

void rc_full_name(char *buf, size_t len, const char *ns, const char *name)
{
    snprintf(buf, len, "%s%s%s", ns, *ns ? "." : "", name);
}

void rc_fail(struct rc *c, int reason, uint32_t where_mi, uint32_t where_token)
{
    c->r.resolved = false;
    c->r.reason = (uint8_t)reason;
    c->r.where_module = where_mi;
    c->r.where_token = where_token;
}

static bool visited(const struct rc *c, uint32_t a)
{
    for (unsigned i = 0; i < c->r.nvisited; i++)
        if (c->r.visited[i] == a)
            return true;
    return false;
}

void rc_instead_type(struct rc *c, uint32_t from, const struct tr_key *k)
{
    for (uint32_t j = 0; j < c->v->n; j++) {
        struct tr_mod *m = c->v->mods[j];
        uint32_t rid;
        if (!tr_visible(c->v, from, j) || !m->img || !tr_may_define(m, k))
            continue;
        if ((rid = tr_find_typedef(m, k))) {
            c->r.instead_module = j;
            c->r.instead_token = MDT_TOKEN(MDT_TABLE_TypeDef, rid);
            return;
        }
    }
}

/* ---- inside one assembly ------------------------------------------------- */

enum { L_FOUND, L_FORWARD, L_ABSENT, L_FAIL };

struct look {
    uint32_t mi, rid;       /* FOUND */
    uint32_t from, ref, et; /* FORWARD: manifest index, AssemblyRef rid, ExportedType rid */
};

/* The type ns.name in the module of assembly `a` that an ExportedType row
 * with a File implementation names. */
static int via_file(struct rc *c, uint32_t a, uint32_t et, uint32_t file, uint32_t hint,
                    const struct tr_key *k, struct look *lk)
{
    const char *ns = k->ns, *name = k->name;
    const struct mdt_image *img = c->v->mods[a]->img;
    char fn[512];
    mdt_row r;
    const char *fname;
    uint32_t mf, rid;
    const struct tr_htab *x;
    uint32_t ettok = MDT_TOKEN(MDT_TABLE_ExportedType, et);
    fn[0] = '\0'; /* filled (and read) only for a trace */
    if (c->trace)
        rc_full_name(fn, sizeof fn, ns, name);
    if (mdt_row_get(&r, img, MDT_TABLE_File, MDT_TOKEN_RID(file)) ||
        mdt_row_string(&fname, NULL, &r, MDT_COL_File_Name)) {
        rc_fail(c, MDT_RES_BAD_IMAGE, a, ettok);
        NOTE(c, MDT_TRACE_STEP, a, ettok, 0, "ExportedType %s: unreadable File row", fn);
        return L_FAIL;
    }
    mf = tr_assembly_module(c->v, a, fname);
    if (mf == TR_NONE) {
        rc_fail(c, MDT_RES_NOT_LOADED, a, ettok);
        NOTE(c, MDT_TRACE_STEP, a, ettok, 0, "%s is exported from file %s, which is not loaded", fn,
             fname);
        return L_FAIL;
    }
    if (!c->v->mods[mf]->img) {
        rc_fail(c, MDT_RES_NO_METADATA, mf, 0);
        NOTE(c, MDT_TRACE_STEP, mf, 0, 0, "module %s has no metadata", fname);
        return L_FAIL;
    }
    if (!(x = tr_idx_typedefs(c->v->mods[mf])) || !(rid = tr_htab_find(c->v->mods[mf], x, k))) {
        rc_fail(c, x ? MDT_RES_NO_SUCH_TYPE : MDT_RES_BAD_IMAGE, mf, 0);
        NOTE(c, MDT_TRACE_STEP, mf, ettok, 0, "module %s does not define %s", fname, fn);
        return L_FAIL;
    }
    if (hint && hint != MDT_TOKEN(MDT_TABLE_TypeDef, rid)) {
        c->r.flags |= MDT_RES_HINT_MISMATCH;
        NOTE(c, MDT_TRACE_STEP, a, ettok, 0,
             "TypeDefId hint 0x%08x does not name %s (TypeDef 0x%08x in %s): hint ignored", hint,
             fn, MDT_TOKEN(MDT_TABLE_TypeDef, rid), fname);
    }
    NOTE(c, MDT_TRACE_STEP, mf, MDT_TOKEN(MDT_TABLE_TypeDef, rid), 0, "%s exported through File %s",
         fn, fname);
    lk->mi = mf;
    lk->rid = rid;
    return L_FOUND;
}

/* Look for top-level ns.name in assembly a (manifest index). */
static int in_assembly(struct rc *c, uint32_t a, const struct tr_key *k, struct look *lk)
{
    struct tr_mod *m = c->v->mods[a];
    const struct tr_htab *x;
    uint32_t rid, et;
    if (!m->img) {
        rc_fail(c, MDT_RES_NO_METADATA, a, 0);
        return L_FAIL;
    }
    if (m->bad || !(x = tr_idx_typedefs(m))) {
        rc_fail(c, MDT_RES_BAD_IMAGE, a, 0);
        return L_FAIL;
    }
    if ((rid = tr_htab_find(m, x, k))) {
        lk->mi = a;
        lk->rid = rid;
        return L_FOUND;
    }
    if (!(x = tr_idx_exported(m))) {
        rc_fail(c, MDT_RES_BAD_IMAGE, a, 0);
        return L_FAIL;
    }
    if (!(et = tr_htab_find(m, x, k)))
        return L_ABSENT;
    mdt_row r;
    uint32_t impl, hint;
    uint32_t ettok = MDT_TOKEN(MDT_TABLE_ExportedType, et);
    if (mdt_row_get(&r, m->img, MDT_TABLE_ExportedType, et) ||
        mdt_row_token(&impl, &r, MDT_COL_ExportedType_Implementation)) {
        rc_fail(c, MDT_RES_BAD_IMAGE, a, ettok);
        return L_FAIL;
    }
    hint = mdt_row_raw(&r, MDT_COL_ExportedType_TypeDefId);
    if (MDT_TOKEN_RID(impl) && MDT_TOKEN_TABLE(impl) == MDT_TABLE_File)
        return via_file(c, a, et, impl, hint, k, lk);
    if (MDT_TOKEN_RID(impl) && MDT_TOKEN_TABLE(impl) == MDT_TABLE_AssemblyRef) {
        lk->from = a;
        lk->ref = MDT_TOKEN_RID(impl);
        lk->et = et;
        return L_FORWARD;
    }
    rc_fail(c, MDT_RES_BAD_IMAGE, a, ettok);
    NOTE(c, MDT_TRACE_STEP, a, ettok, 0, "ExportedType row %u has no usable Implementation", et);
    return L_FAIL;
}

/* ---- binding and forwarders --------------------------------------------- */

/* Bind AssemblyRef `ref` of module `from` and look for ns.name there.
 * Returns L_FOUND, L_FORWARD or L_FAIL. */
static int bind_find(struct rc *c, uint32_t from, uint32_t ref, const struct tr_key *k,
                     struct look *lk)
{
    const char *ns = k->ns, *name = k->name;
    const struct mdt_modview *v = c->v;
    mdt_identity id;
    struct tr_cand cands[TR_MAX_CANDS];
    char an[300], fn[512], idbuf[400];
    uint32_t reftok = MDT_TOKEN(MDT_TABLE_AssemblyRef, ref);
    size_t n, tried = 0;
    int first_absent = -1;
    fn[0] = '\0'; /* filled (and read) only for a trace */
    if (c->trace)
        rc_full_name(fn, sizeof fn, ns, name);
    if (tr_bind_candidates(v, from, ref, cands, &n) ||
        (c->trace && mdt_assemblyref_identity(&id, v->mods[from]->img, ref))) {
        rc_fail(c, MDT_RES_BAD_IMAGE, from, reftok);
        NOTE(c, MDT_TRACE_STEP, from, reftok, 0, "AssemblyRef row %u cannot be read", ref);
        return L_FAIL;
    }
    NOTE(c, MDT_TRACE_STEP, from, reftok, 0, "bind %s%s for %s",
         mdt_identity_format(idbuf, sizeof idbuf, &id),
         id.flags & MDT_AFL_RETARGETABLE ? ", Retargetable=Yes" : "", fn);
    for (size_t i = 0; i < n; i++) {
        struct tr_cand *cd = &cands[i];
        int rv;
        if (cd->tier == 3 && (c->flags & MDT_RESOLVE_STRICT)) {
            NOTE(c, MDT_TRACE_PASSED, cd->mi, 0, 3, "%s: tier 3, not tried (strict)",
                 rc_asm(c, cd->mi, an, sizeof an));
            continue;
        }
        tried++;
        NOTE(c, MDT_TRACE_CANDIDATE, cd->mi, 0, cd->tier, "candidate %s (tier %u)",
             rc_asm(c, cd->mi, an, sizeof an), cd->tier);
        if (visited(c, cd->mi)) {
            rc_fail(c, MDT_RES_CYCLE, from, reftok);
            NOTE(c, MDT_TRACE_RESULT, cd->mi, 0, cd->tier,
                 "%s was visited before in this resolution: forwarder cycle",
                 rc_asm(c, cd->mi, an, sizeof an));
            return L_FAIL;
        }
        rv = in_assembly(c, cd->mi, k, lk);
        if (rv == L_ABSENT) {
            if (first_absent < 0)
                first_absent = (int)cd->mi;
            NOTE(c, MDT_TRACE_PASSED, cd->mi, 0, cd->tier, "%s has no type %s",
                 rc_asm(c, cd->mi, an, sizeof an), fn);
            continue;
        }
        if (cd->tier > c->r.tier)
            c->r.tier = cd->tier;
        rc_visit(c, cd->mi);
        if (rv != L_FAIL)
            NOTE(c, MDT_TRACE_CHOSEN, cd->mi, 0, cd->tier, "chose %s (tier %u)",
                 rc_asm(c, cd->mi, an, sizeof an), cd->tier);
        return rv;
    }
    if (!(c->flags & MDT_RESOLVE_STRICT)) {
        /* Tier 3b: any other assembly that defines or forwards the type. */
        uint32_t chosen = TR_NONE;
        unsigned count = 0;
        for (uint32_t j = tr_bind_other(v, from, k, cands, n, c->r.visited, c->r.nvisited, 0);
             j != TR_NONE;
             j = tr_bind_other(v, from, k, cands, n, c->r.visited, c->r.nvisited, j + 1)) {
            if (chosen == TR_NONE)
                chosen = j;
            else
                NOTE(c, MDT_TRACE_PASSED, j, 0, 3, "%s also has %s (tier 3b, later in order)",
                     rc_asm(c, j, an, sizeof an), fn);
            count++;
        }
        if (chosen != TR_NONE) {
            int rv;
            if (count > 1)
                c->r.flags |= MDT_RES_AMBIGUOUS;
            /* Only a tier-3 candidate of the reference's own name (3a) is
             * in n; this one has another name. */
            c->r.flags |= MDT_RES_OTHER_ASSEMBLY;
            c->r.tier = 3;
            NOTE(c, MDT_TRACE_CANDIDATE, chosen, 0, 3, "candidate %s (tier 3b: has %s)",
                 rc_asm(c, chosen, an, sizeof an), fn);
            rv = in_assembly(c, chosen, k, lk);
            rc_visit(c, chosen);
            if (rv == L_ABSENT) { /* cannot happen: tr_bind_other said it has it */
                rc_fail(c, MDT_RES_BAD_IMAGE, chosen, 0);
                return L_FAIL;
            }
            if (rv != L_FAIL)
                NOTE(c, MDT_TRACE_CHOSEN, chosen, 0, 3, "chose %s (tier 3b)",
                     rc_asm(c, chosen, an, sizeof an));
            return rv;
        }
    }
    if (!c->trace && mdt_assemblyref_identity(&id, v->mods[from]->img, ref)) {
        rc_fail(c, MDT_RES_BAD_IMAGE, from, reftok);
        return L_FAIL;
    }
    if (tried) {
        rc_fail(c, MDT_RES_NO_SUCH_TYPE, first_absent >= 0 ? (uint32_t)first_absent : from,
                first_absent >= 0 ? 0 : reftok);
        rc_instead_type(c, from, k);
        NOTE(c, MDT_TRACE_RESULT, c->r.where_module, 0, 0, "no loaded %s has %s", id.name, fn);
    } else {
        rc_fail(c, MDT_RES_NOT_LOADED, from, reftok);
        /* Instead: another assembly of that name (other culture, domain, or
         * a tier-3 version under STRICT). */
        if (n)
            c->r.instead_module = cands[0].mi;
        else
            for (uint32_t j = 0; j < v->n; j++)
                if (v->mods[j]->manifest && v->mods[j]->ident.name &&
                    !tr_ascii_casecmp(v->mods[j]->ident.name, id.name)) {
                    c->r.instead_module = j;
                    break;
                }
        NOTE(c, MDT_TRACE_RESULT, from, reftok, 0, "no assembly %s is loaded", id.name);
    }
    return L_FAIL;
}

/* Follow forwarders from a FORWARD answer until the type is found or not. */
static int follow(struct rc *c, struct look *lk, const struct tr_key *k)
{
    const char *ns = k->ns, *name = k->name;
    char an[300];
    for (;;) {
        int rv;
        uint32_t ettok = MDT_TOKEN(MDT_TABLE_ExportedType, lk->et);
        if (c->r.hops >= c->max_hops) {
            rc_fail(c, MDT_RES_HOP_LIMIT, lk->from, ettok);
            NOTE(c, MDT_TRACE_RESULT, lk->from, ettok, 0, "more than %u forwarder hops",
                 c->max_hops);
            return L_FAIL;
        }
        c->r.hops++;
        NOTE(c, MDT_TRACE_HOP, lk->from, ettok, 0, "%s forwards %s%s%s (hop %u)",
             rc_asm(c, lk->from, an, sizeof an), ns, *ns ? "." : "", name, c->r.hops);
        rv = bind_find(c, lk->from, lk->ref, k, lk);
        if (rv != L_FORWARD)
            return rv;
    }
}

int rc_assemblyref(struct rc *c, uint32_t from, uint32_t ref, const struct tr_key *k, uint32_t *mi,
                   uint32_t *rid)
{
    struct look lk;
    int rv = bind_find(c, from, ref, k, &lk);
    if (rv == L_FORWARD)
        rv = follow(c, &lk, k);
    if (rv != L_FOUND)
        return -1;
    *mi = lk.mi;
    *rid = lk.rid;
    return 0;
}

/* ---- what the dispatcher asks ------------------------------------------- */

int rc_assembly(struct rc *c, uint32_t a, const struct tr_key *k, uint32_t *mi, uint32_t *rid)
{
    struct look lk;
    int rv;
    rc_visit(c, a);
    rv = in_assembly(c, a, k, &lk);
    if (rv == L_FORWARD)
        rv = follow(c, &lk, k);
    if (rv == L_ABSENT)
        return 1;
    if (rv != L_FOUND)
        return -1;
    *mi = lk.mi;
    *rid = lk.rid;
    return 0;
}

int rc_via_file(struct rc *c, uint32_t a, uint32_t et, uint32_t file, uint32_t hint,
                const struct tr_key *k, uint32_t *mi, uint32_t *rid)
{
    struct look lk;
    if (via_file(c, a, et, file, hint, k, &lk) != L_FOUND)
        return -1;
    *mi = lk.mi;
    *rid = lk.rid;
    return 0;
}

int rc_forward(struct rc *c, uint32_t from, uint32_t ref, uint32_t et, const struct tr_key *k,
               uint32_t *mi, uint32_t *rid)
{
    struct look lk = {.from = from, .ref = ref, .et = et};
    if (follow(c, &lk, k) != L_FOUND)
        return -1;
    *mi = lk.mi;
    *rid = lk.rid;
    return 0;
}

/* ---- a resolution's life ------------------------------------------------ */

int rc_begin(struct rc *c, void *mem_ctx, mdt_trace **trace, const struct mdt_modview *v,
             uintptr_t module, uint32_t token, const mdt_resolve_opts *opts, uint32_t *mi)
{
    uint32_t known = *mi;
    c->v = v;
    c->trace = NULL;
    c->trace_out = NULL;
    c->tcap = 0;
    c->trace_failed = false;
    tr_res_init(&c->r);
    c->flags = opts ? opts->flags : 0;
    c->max_hops = opts && opts->max_hops && opts->max_hops < MDT_RESOLVE_MAX_HOPS
                      ? opts->max_hops
                      : MDT_RESOLVE_MAX_HOPS;
    c->cacheable = !trace && !(c->flags & (MDT_RESOLVE_NOCACHE | MDT_RESOLVE_STRICT)) &&
                   c->max_hops == MDT_RESOLVE_MAX_HOPS;
    if (trace)
        *trace = NULL;
    if (MDT__OPTS_CHECK(opts, MDT_RESOLVE_OPTS_VERSION, "resolve", "mdt_resolve_opts"))
        return MDT_EINVAL;
    if (!v)
        return mdt__fail_simple(MDT_EINVAL, "resolve: no view");
    if ((*mi = known != TR_NONE ? known : tr_view_find(v, module)) == TR_NONE)
        return mdt__fail_simple(MDT_ENOTFOUND, "resolve: no module %#jx in the view",
                                (uintmax_t)module);
    if (trace) {
        c->trace = talloc_zero(mem_ctx, mdt_trace);
        if (!c->trace)
            return mdt__fail_simple(MDT_ENOMEM, "out of memory for a trace");
        *trace = c->trace;
        c->trace_out = trace;
    }
    return 0;
}

int rc_error(struct rc *c, int e)
{
    if (c->trace) {
        talloc_free(c->trace);
        c->trace = NULL;
        *c->trace_out = NULL;
    }
    return e;
}

void rc_end(struct rc *c, mdt_resolution *out)
{
    if (c->trace) {
        char an[300];
        if (c->r.resolved)
            NOTE(c, MDT_TRACE_RESULT, c->r.module, c->r.token, c->r.tier,
                 "resolved: TypeDef/member 0x%08x in %s, tier %u, %u hop(s)", c->r.token,
                 rc_asm(c, c->r.module, an, sizeof an), c->r.tier, c->r.hops);
        else
            NOTE(c, MDT_TRACE_RESULT, c->r.where_module, c->r.where_token, 0, "unresolved: %s",
                 mdt_resolution_reason_name(c->r.reason));
    }
    tr_res_export(c->v, &c->r, out);
}
