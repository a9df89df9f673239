/* The resolution engine (engine.c), as the dispatcher (dispatch.c), the
 * public calls (resolve.c) and MemberRef resolution (memberref.c) use it:
 * one resolution in progress and its life (begin, end, error), its answer
 * and trace, and the search for a top-level type from an AssemblyRef, an
 * assembly, an ExportedType's File or a forwarder. */
#ifndef MDT_TYPEREF_ENGINE_INT_H
#define MDT_TYPEREF_ENGINE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mdtools/tables.h>
#include <mdtools/token.h>
#include <mdtools/typeref.h>

#include "typeref/index_int.h"
#include "typeref/modset_int.h"
#include "typeref/result_int.h"

/* One resolution in progress. */
struct rc {
    const struct mdt_modview *v;
    mdt_trace *trace; /* NULL: no trace */
    mdt_trace **trace_out;
    size_t tcap;
    bool trace_failed;
    bool cacheable;
    unsigned flags; /* enum mdt_resolve_flags */
    unsigned max_hops;
    struct tr_res r;
};

/* ---- life ---------------------------------------------------------------- */

/* Begin a resolution of `token` of `module` with `opts` (NULL: defaults),
 * with a trace under mem_ctx when `trace` is not NULL (*trace is then the
 * trace, or NULL). *mi: in, the module's index if known (from
 * tr_cache_export_fast) or TR_NONE; out, the module's index. Errors:
 * MDT_EINVAL (no view), MDT_ENOTFOUND (no such module), MDT_ENOMEM. */
int rc_begin(struct rc *c, void *mem_ctx, mdt_trace **trace, const struct mdt_modview *v,
             uintptr_t module, uint32_t token, const mdt_resolve_opts *opts, uint32_t *mi);
/* End it: the trace's last line, and the answer into *out (every field). */
void rc_end(struct rc *c, mdt_resolution *out);
/* Give up with error e: drop the trace (nothing stays on the caller's context). */
int rc_error(struct rc *c, int e);

/* ---- answer and trace ---------------------------------------------------- */

/* Unresolved for `reason`, found wanting at (where_mi, where_token). */
void rc_fail(struct rc *c, int reason, uint32_t where_mi, uint32_t where_token);

/* Resolved to TypeDef rid of module mi. */
static inline void rc_found(struct rc *c, uint32_t mi, uint32_t rid)
{
    c->r.resolved = true;
    c->r.reason = MDT_RES_OK;
    c->r.module = mi;
    c->r.token = MDT_TOKEN(MDT_TABLE_TypeDef, rid);
}

/* Remember that this resolution entered assembly a (seeing it again is a
 * cycle); past MDT_RESOLVE_MAX_VISITED, assemblies are not remembered. */
static inline void rc_visit(struct rc *c, uint32_t a)
{
    if (c->r.nvisited < MDT_RESOLVE_MAX_VISITED)
        c->r.visited[c->r.nvisited++] = a;
}

/* "What was there instead" for a missing type: the first module of the view
 * (registration order) that module `from` sees and that defines k. */
void rc_instead_type(struct rc *c, uint32_t from, const struct tr_key *k);

void rc_note(struct rc *c, int kind, uint32_t mi, uint32_t token, int tier, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
/* rc_note only when a trace is wanted: its arguments are not even computed
 * otherwise. */
#define NOTE(c, ...)                                                                               \
    do {                                                                                           \
        if ((c)->trace)                                                                            \
            rc_note((c), __VA_ARGS__);                                                             \
    } while (0)
/* For trace texts: "Name 1.2.3.4" of a manifest, or "module name"; and
 * "Ns.Name". Both write into buf (len bytes, truncated) and the first
 * returns it. */
const char *rc_asm(const struct rc *c, uint32_t mi, char *buf, size_t len);
void rc_full_name(char *buf, size_t len, const char *ns, const char *name);

/* ---- the search ---------------------------------------------------------- */

/* Each finds top-level k and gives 0 with (*mi, *rid) its TypeDef, or -1
 * with c->r saying why not. */

/* Through AssemblyRef row `ref` of module `from`: bind, look, forward. */
int rc_assemblyref(struct rc *c, uint32_t from, uint32_t ref, const struct tr_key *k, uint32_t *mi,
                   uint32_t *rid);
/* In assembly a (a manifest index), following its forwarders; 1 (and c->r
 * untouched) when a neither defines nor forwards k. */
int rc_assembly(struct rc *c, uint32_t a, const struct tr_key *k, uint32_t *mi, uint32_t *rid);
/* Through ExportedType row et of assembly a, whose Implementation is File
 * token `file`, with TypeDefId `hint` (checked, never trusted). */
int rc_via_file(struct rc *c, uint32_t a, uint32_t et, uint32_t file, uint32_t hint,
                const struct tr_key *k, uint32_t *mi, uint32_t *rid);
/* Through ExportedType row et of module `from`, a forwarder to its
 * AssemblyRef row `ref`: a first hop, then as many as it takes. */
int rc_forward(struct rc *c, uint32_t from, uint32_t ref, uint32_t et, const struct tr_key *k,
               uint32_t *mi, uint32_t *rid);

#endif
