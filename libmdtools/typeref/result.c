/* Answers handed out: the resolver's answer (struct tr_res, module
 * indexes of one view) written into the public mdt_resolution (module
 * IDs), and the names of the reasons an answer gives (<mdtools/typeref.h>). */
#include "config.h"

#include <string.h>

#include <mdtools/typeref.h>

#include "typeref/modset_int.h"
#include "typeref/result_int.h"

void tr_res_export(const struct mdt_modview *v, const struct tr_res *r, mdt_resolution *out)
{
    unsigned i;
    out->resolved = r->resolved;
    out->reason = r->reason;
    out->tier = r->tier;
    out->flags = r->flags;
    out->hops = r->hops;
    out->nvisited = r->nvisited;
    out->module = r->resolved ? tr_view_id(v, r->module) : 0;
    out->token = r->resolved ? r->token : 0;
    memset(out->visited, 0, sizeof out->visited);
    for (i = 0; i < r->nvisited && i < MDT_RESOLVE_MAX_VISITED; i++)
        out->visited[i] = tr_view_id(v, r->visited[i]);
    out->where_module = tr_view_id(v, r->where_module);
    out->where_token = r->where_token;
    out->instead_module = tr_view_id(v, r->instead_module);
    out->instead_token = r->instead_token;
}

const char *mdt_resolution_reason_name(int reason)
{
    switch (reason) {
    case MDT_RES_OK: return "resolved";
    case MDT_RES_NOT_LOADED: return "not-loaded";
    case MDT_RES_NO_SUCH_TYPE: return "no-such-type";
    case MDT_RES_CYCLE: return "cycle";
    case MDT_RES_HOP_LIMIT: return "hop-limit";
    case MDT_RES_NO_METADATA: return "no-metadata";
    case MDT_RES_BAD_IMAGE: return "bad-image";
    case MDT_RES_NO_SUCH_MEMBER: return "no-such-member";
    case MDT_RES_RUNTIME: return "runtime-provided";
    default: return "unknown";
    }
}

/* api-rename: off */
/* The old names (<mdtools/errors.h>, MDT_DEPRECATED_FOR), for programs
 * built against libmdtools 1:0:0. */
const char *mdt_res_reason_name(int reason)
{
    return mdt_resolution_reason_name(reason);
}
/* api-rename: on */
