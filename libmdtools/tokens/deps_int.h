/* Dependents (deps.c): for each thing (module, class, AppDomain, assembly)
 * and each kind of record, the records that named it when they were
 * created, so that an unload can kill them (the cascade in lifetime.c)
 * without scanning the tables. An entry stands for "whatever record is in
 * this slot now, if it still names the thing": every walk checks. */
#ifndef MDT_TOKENS_DEPS_INT_H
#define MDT_TOKENS_DEPS_INT_H

#include <stddef.h>
#include <stdint.h>

#include "tokens/idmap_int.h"
#include "tokens/table_int.h"

/* At map creation (0 or MDT_ENOMEM) and destruction. */
int idm_deps_init(mdt_idmap *m);
void idm_deps_free(mdt_idmap *m);
/* List the record (kind, id) under (pkind, pid): 0 or MDT_ENOMEM. */
int idm_dep_push(mdt_idmap *m, int pkind, uintptr_t pid, int kind, uintptr_t id);
/* A record of `kind` stops naming (pk, pid): its entry went inert. */
void idm_dep_stale(mdt_idmap *m, int pk, uintptr_t pid, int kind);
/* Called for every record of kind ck listed under (pk, pid) that still
 * names it; a negative return stops the walk and is returned. */
typedef int (*idm_dep_visit)(mdt_idmap *m, int ck, struct idm_head *h, void *ctx);
int idm_deps_walk(mdt_idmap *m, int pk, uintptr_t pid, int ck, idm_dep_visit fn, void *ctx);
/* Table `kind` moves from old to n (idm_tab_publish). */
void idm_deps_remap(mdt_idmap *m, int kind, const struct idm_tab *old, const struct idm_tab *n);
/* Between writer calls, when m->deps_due says so: merge the recent store
 * when it has grown, drop the entries gone. At retire: drop every inert
 * entry. */
void idm_deps_settle(mdt_idmap *m);
void idm_deps_compact_all(mdt_idmap *m);
size_t idm_deps_bytes(const mdt_idmap *m);

#endif
