/* The dispatcher (dispatch.c), as the public calls (resolve.c) and
 * MemberRef resolution (memberref.c) use it: a TypeRef or ExportedType
 * row resolved into a resolution in progress, by the kind of its scope. */
#ifndef MDT_TYPEREF_DISPATCH_INT_H
#define MDT_TYPEREF_DISPATCH_INT_H

#include <stdint.h>

#include "typeref/engine_int.h"
#include "typeref/modset_int.h"
#include "typeref/result_int.h"

/* A namespace and name, borrowed from an image's #Strings heap. */
struct nm {
    const char *ns, *name;
};

/* Resolve TypeRef rid of module mi into c->r. */
void rc_typeref(struct rc *c, uint32_t mi, uint32_t rid);
/* Resolve ExportedType rid of (manifest) module mi into c->r. */
void rc_exported(struct rc *c, uint32_t mi, uint32_t rid);
/* The module a ModuleRef token of module mi names, within mi's assembly,
 * or TR_NONE (c->r then says why). */
uint32_t rc_moduleref(struct rc *c, uint32_t mi, uint32_t modref);
/* Resolve a TypeDef/TypeRef token of module mi to (module index, TypeDef
 * rid) through the view's cache, without a trace and with the default
 * options. Returns 0 with *r filled (resolved or not), or MDT_EINVAL for
 * another token or a row out of range (without a message). */
int tr_resolve_type(const struct mdt_modview *v, uint32_t mi, uint32_t token, struct tr_res *r);

#endif
