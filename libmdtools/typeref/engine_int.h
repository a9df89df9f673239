/* One resolution in progress, shared by resolve.c and memberref.c. */
#ifndef MDT_TYPEREF_ENGINE_INT_H
#define MDT_TYPEREF_ENGINE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mdtools/typeref.h>

#include "typeref/index_int.h"
#include "typeref/modset_int.h"
#include "typeref/result_int.h"

struct nm {
    const char *ns, *name;
};

struct rc {
    const struct mdt_modview *v;
    mdt_trace *trace;   /* NULL: no trace */
    mdt_trace **trace_out;
    size_t tcap;
    bool trace_failed;
    bool cacheable;
    unsigned flags;     /* enum mdt_resolve_flags */
    unsigned max_hops;
    struct tr_res r;
};

void rc_note(struct rc *c, int kind, uint32_t mi, uint32_t token, int tier, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
/* rc_note only when a trace is wanted: its arguments are not even computed
 * otherwise. */
#define NOTE(c, ...)                                                                   \
    do {                                                                               \
        if ((c)->trace)                                                                \
            rc_note((c), __VA_ARGS__);                                                 \
    } while (0)

void rc_fail(struct rc *c, int reason, uint32_t where_mi, uint32_t where_token);
const char *rc_asm(const struct rc *c, uint32_t mi, char *buf, size_t len);
/* *mi: in, the module's index if known (from tr_cache_export_fast) or
 * TR_NONE; out, the module's index. */
int rc_begin(struct rc *c, void *mem_ctx, mdt_trace **trace, const struct mdt_modview *v,
             uintptr_t module, uint32_t token, const mdt_resolve_opts *opts, uint32_t *mi);
void rc_end(struct rc *c, mdt_resolution *out);
/* Give up with error e: drop the trace (nothing stays on the caller's context). */
int rc_error(struct rc *c, int e);
int rc_assemblyref(struct rc *c, uint32_t from, uint32_t ref, const struct tr_key *k,
                   uint32_t *mi, uint32_t *rid);
void rc_typeref(struct rc *c, uint32_t mi, uint32_t rid);
uint32_t rc_moduleref(struct rc *c, uint32_t mi, uint32_t modref);
/* Resolve a TypeDef/TypeRef token of module mi to (module index, TypeDef
 * rid) through the view's cache. Returns 0 with *r filled (resolved or not),
 * or a negative code for bad arguments. */
int tr_resolve_type(const struct mdt_modview *v, uint32_t mi, uint32_t token, struct tr_res *r);

#endif
