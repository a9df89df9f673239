/* The public resolve calls for TypeRefs, ExportedTypes and any reference
 * token (<mdtools/typeref.h>; ECMA-335 II.22.38, II.22.14): the arguments
 * checked, the answer taken from the view's cache when the options allow
 * (cache.c), else computed by the dispatcher (dispatch.c) and cached, and
 * the trace, if one is asked for, begun and ended around it (engine.c).
 * MemberRefs have their own call (memberref.c), which mdt_token_resolve
 * calls like the others. */
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
#include "typeref/modset_int.h"
#include "typeref/result_int.h"
#include "util/error.h"

static int check_rid(const struct mdt_modview *v, uint32_t mi, uint32_t token, unsigned table)
{
    const struct mdt_image *img = v->mods[mi]->img;
    if (MDT_TOKEN_TABLE(token) != table || !MDT_TOKEN_RID(token) ||
        (img && MDT_TOKEN_RID(token) > mdt_table_rows(img, table)))
        return mdt__fail_simple(MDT_EINVAL, "resolve: token 0x%08x is not a row of table 0x%02x",
                                token, table);
    return 0;
}

/* Module without metadata, or with a broken Module/Assembly row. */
static bool unusable(struct rc *c, uint32_t mi)
{
    if (!c->v->mods[mi]->img) {
        rc_fail(c, MDT_RES_NO_METADATA, mi, 0);
        return true;
    }
    return false;
}

/* An error: *out holds no answer. */
static int cleared(mdt_resolution *out, int e)
{
    memset(out, 0, sizeof *out);
    return e;
}

/* A TypeRef's or ExportedType's resolution once its row is known to be
 * there: through the module's cache slot when the options allow, else the
 * walk, whose answer the slot keeps. Unreadable rows on the way are
 * answers (bad-image), not failures of the call. Inline in both callers,
 * `exported` a constant there: as a call it added 1.4% to bench/typeref's
 * whole_run (callgrind), once per TypeRef resolved. */
static inline __attribute__((always_inline)) int resolve_row(struct rc *c, mdt_resolution *out,
                                                             const mdt_modview *view, uint32_t mi,
                                                             uint32_t token, bool exported)
{
    struct tr_centry *slot = NULL;
    uint64_t stamp = mdt__err_stamp();
    if (!unusable(c, mi)) {
        if (c->cacheable) {
            slot = tr_cache_slot(view, mi, token);
            if (tr_cache_read(slot, &c->r)) {
                tr_res_export(view, &c->r, out);
                return 0;
            }
        }
        if (exported)
            rc_exported(c, mi, MDT_TOKEN_RID(token));
        else
            rc_typeref(c, mi, MDT_TOKEN_RID(token));
        if (c->cacheable)
            tr_cache_write(slot, &c->r);
    }
    rc_end(c, out);
    if (c->trace_failed)
        return rc_error(c, mdt__fail_simple(MDT_ENOMEM, "out of memory for a trace"));
    mdt__err_back_to(stamp);
    return 0;
}

int mdt_typeref_resolve(void *mem_ctx, mdt_resolution *out, mdt_trace **trace,
                        const mdt_modview *view, uintptr_t module, uint32_t token,
                        const mdt_resolve_opts *opts)
{
    struct rc c;
    uint32_t mi;
    int e;
    if (tr_cache_export_fast(view, module, token, opts, trace, out, &mi))
        return 0;
    /* From here on every answer goes through tr_res_export, which writes
     * every field of *out; errors clear it here. */
    if ((e = rc_begin(&c, mem_ctx, trace, view, module, token, opts, &mi)))
        return cleared(out, e);
    if (MDT_TOKEN_TABLE(token) == MDT_TABLE_TypeDef) {
        if ((e = check_rid(view, mi, token, MDT_TABLE_TypeDef)))
            return cleared(out, rc_error(&c, e));
        rc_found(&c, mi, MDT_TOKEN_RID(token));
        rc_end(&c, out);
        return 0;
    }
    if ((e = check_rid(view, mi, token, MDT_TABLE_TypeRef)))
        return cleared(out, rc_error(&c, e));
    return resolve_row(&c, out, view, mi, token, false);
}

int mdt_exportedtype_resolve(void *mem_ctx, mdt_resolution *out, mdt_trace **trace,
                             const mdt_modview *view, uintptr_t module, uint32_t token,
                             const mdt_resolve_opts *opts)
{
    struct rc c;
    uint32_t mi;
    int e;
    if (tr_cache_export_fast(view, module, token, opts, trace, out, &mi))
        return 0;
    if ((e = rc_begin(&c, mem_ctx, trace, view, module, token, opts, &mi)))
        return cleared(out, e);
    if ((e = check_rid(view, mi, token, MDT_TABLE_ExportedType)))
        return cleared(out, rc_error(&c, e));
    return resolve_row(&c, out, view, mi, token, true);
}

int mdt_token_resolve(void *mem_ctx, mdt_resolution *out, mdt_trace **trace,
                      const mdt_modview *view, uintptr_t module, uint32_t token,
                      const mdt_resolve_opts *opts)
{
    uint32_t mi;
    if (tr_cache_export_fast(view, module, token, opts, trace, out, &mi))
        return 0;
    switch (MDT_TOKEN_TABLE(token)) {
    case MDT_TABLE_TypeRef:
    case MDT_TABLE_TypeDef:
        return mdt_typeref_resolve(mem_ctx, out, trace, view, module, token, opts);
    case MDT_TABLE_ExportedType:
        return mdt_exportedtype_resolve(mem_ctx, out, trace, view, module, token, opts);
    case MDT_TABLE_MemberRef:
        return mdt_memberref_resolve(mem_ctx, out, trace, view, module, token, opts);
    default:
        memset(out, 0, sizeof *out);
        if (trace)
            *trace = NULL;
        return mdt__fail_simple(MDT_EINVAL, "resolve: token 0x%08x is no reference", token);
    }
}

/* api-rename: off */
/* The old names (<mdtools/errors.h>, MDT_DEPRECATED_FOR), for programs
 * built against libmdtools 1:0:0. */
int mdt_resolve_token(void *mem_ctx, mdt_resolution *out, mdt_trace **trace,
                      const mdt_modview *view, uintptr_t module, uint32_t token,
                      const mdt_resolve_opts *opts)
{
    return mdt_token_resolve(mem_ctx, out, trace, view, module, token, opts);
}

int mdt_exported_resolve(void *mem_ctx, mdt_resolution *out, mdt_trace **trace,
                         const mdt_modview *view, uintptr_t module, uint32_t token,
                         const mdt_resolve_opts *opts)
{
    return mdt_exportedtype_resolve(mem_ctx, out, trace, view, module, token, opts);
}
/* api-rename: on */
