/* mdinspect: reference resolution over the open modules, shared by
 * `resolve`, `typerefs`, `memberrefs`, `unresolved`, `exported` and `refs`.
 *
 * The open modules form one module set (<mdtools/modset.h>), each module
 * registered under its number #N, in opening order, all in the shared
 * AppDomain. The set is built on first use and kept in the state's caches,
 * so it is dropped, and rebuilt on the next use, whenever a module is
 * opened or closed. Resolution results are cached by the library in the
 * set's view. */
#ifndef MDINSPECT_RESOLVE_H
#define MDINSPECT_RESOLVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mdtools/attr.h>
#include <mdtools/typeref.h>

#include "state.h"

/* A view of the set of open modules: release it with mdt_modview_release.
 * NULL after reporting (out of memory). */
mdt_modview *mdi_view(mdi_state *st);

/* The simple name of the assembly whose manifest module has ID `manifest`,
 * else that module's name; "?" when the view lacks it. Borrowed from the
 * view. */
const char *mdi_view_asm_name(const mdt_modview *v, uintptr_t manifest);

/* How output names a module of the view: its path as opened (unique),
 * else its name; "?" when the view lacks it. */
const char *mdi_view_module_label(const mdt_modview *v, uintptr_t id);

/* The AssemblyRef a reference finally names through its scope chain
 * (TypeRef scopes, a MemberRef's TypeRef parent, an ExportedType's
 * enclosing rows), or 0 when it names none. */
uint32_t mdi_ref_assemblyref(const mdt_image *img, uint32_t token);

/* The name of a reference in the session's style, under mem; NULL with
 * the reason in msg. */
char *mdi_ref_name(const mdi_state *st, void *mem, const mdt_image *img, uint32_t token, char *msg,
                   size_t len);

/* The fields every resolution result prints, in a list item or a record:
 * status, reason, assembly, version, def_module, def_token, tier, hops,
 * path, other_assembly. `img`/`token` are the reference (for the assembly
 * it asks for when unresolved). `compact`: text shows one "resolves to"
 * column (the summary below) instead, JSON the same fields. A result bound
 * by name only to an assembly the reference does not name
 * (MDT_RES_OTHER_ASSEMBLY) has its assembly marked in text with
 * MDI_OTHER_MARK; returns whether it was, so the caller can print
 * MDI_OTHER_LEGEND once. */
bool mdi_print_resolution(mdi_state *st, const mdt_modview *v, const mdt_image *img, uint32_t token,
                          const mdt_resolution *r, bool compact);

#define MDI_OTHER_MARK "*"
#define MDI_OTHER_LEGEND                                                                           \
    "* found by name only (tier 3) in an assembly other than the one the reference names, "        \
    "which is not open"
/* Text only: the legend, as a line of its own, when `marked`. */
void mdi_other_legend(mdi_state *st, bool marked);

/* "tier 1, 3 hops: Hop0 > Hop1" style summary of where a result went,
 * under mem (for one-column displays such as `exported`); a tier-3 result
 * in another assembly says so. */
char *mdi_resolution_summary(void *mem, const mdt_modview *v, const mdt_resolution *r);

/* The enum resolver of <mdtools/attr.h> over the open modules (payload:
 * the mdi_state): a TypeRef is resolved to its TypeDef with
 * mdt_typeref_resolve; a serialized name ("Ns.E+F, Asm, Version=...") is
 * looked up by name among the TypeDefs of the open modules, those of the
 * named assembly first. MDT_ENOTFOUND when no open module defines it (the
 * decoder then reports "unknown enum size"). */
int mdi_enum_resolver(void *payload, mdt_enum_info *out, const mdt_image *img, uint32_t token,
                      const char *name);

/* `typerefs` and `memberrefs`: every TypeRef or MemberRef of the current
 * module (all open modules with `all`), with its result. */
int mdi_list_refs(mdi_state *st, unsigned table, bool all);

#endif
