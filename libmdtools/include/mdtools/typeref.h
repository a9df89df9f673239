/* mdtools: resolving references (TypeRef, ExportedType, MemberRef) to their
 * definitions over the modules of a module set, deterministically, without
 * loading anything (ECMA-335 II.22.38 TypeRef, II.22.14 ExportedType,
 * II.22.25 MemberRef, II.6 assemblies; the order is in the rules below).
 *
 * Scopes of a TypeRef:
 * - AssemblyRef: bind the reference (below), then look in that assembly;
 * - TypeRef: a nested type; the enclosing reference is resolved first (any
 *   depth up to MDT_RESOLVE_MAX_NEST, scope cycles detected), then the
 *   nested type is found by name among the nested TypeDefs of the enclosing
 *   TypeDef in its defining module;
 * - ModuleRef: another module of the referencing module's assembly;
 * - Module: the referencing module itself;
 * - nil: the referencing module's own TypeDefs, then its assembly (manifest
 *   TypeDefs, then the manifest's ExportedType table), as the CLR does.
 *
 * Binding an AssemblyRef (R) from module F, in tiers; within a tier the
 * candidates are tried in the order given, and the first that defines or
 * forwards the type wins (a candidate that has neither is passed over):
 *   1. loaded assemblies with R's simple name, culture, public key token
 *      and exact version;
 *   2. same name, culture and token, higher version, nearest first;
 *   3. everything else that is loaded: (a) same name and culture with other
 *      versions or tokens, nearest version first (equal distance: the higher
 *      first; then registration order); then (b) any other loaded assembly
 *      that defines or forwards the type, in registration order (flag
 *      MDT_RES_AMBIGUOUS when more than one does).
 * Only assemblies F sees are candidates (see modset.h on AppDomains).
 * Simple names and cultures compare ASCII case-insensitively ("" and
 * "neutral" are the same culture), as the CLR's binder does.
 * - A reference without a public key token (a weak-name reference): the
 *   token is not a criterion (the CLR does not check it: .NET Framework
 *   binds weak references by simple name, CoreCLR never compares tokens),
 *   so tier 1 is name + culture + exact version with any token, tier 2 the
 *   higher versions.
 * - A retargetable reference (AssemblyRef flag 0x100, Portable/Compact
 *   Framework): its token and version name a platform, not a publisher; the
 *   runtime maps it to the platform's assembly of that name. Tier 1 needs
 *   the exact identity; otherwise any token of that name binds in tier 2
 *   (version equal or higher, nearest first) and lower versions in tier 3a.
 * Inside the chosen assembly: a top-level TypeDef of that namespace and name
 * in the manifest module; otherwise a top-level ExportedType row of that
 * name (nested ExportedType rows are only ever matched through their
 * enclosing row, never by name alone): Implementation File -> the module of
 * that name in the same assembly (its TypeDefId hint is checked, never
 * trusted); AssemblyRef -> a forwarder: R is bound again, from the
 * forwarding assembly. At most MDT_RESOLVE_MAX_HOPS forwarder hops
 * (`hop-limit` beyond), an assembly seen twice in one resolution is a
 * `cycle`. Nothing here recurses on input: every walk is an explicit loop
 * with a bound.
 *
 * When in doubt the answer is "unresolved", never a wrong type.
 *
 * Caching: results are cached in the view (per module and row) when no trace
 * is asked for and the options are the defaults; a warm lookup is a few
 * loads. The cache dies with the view's snapshot, so any change of the set
 * gives fresh answers.
 *
 * Thread safety: any number of threads may resolve on the same view at
 * once, each with its own mem_ctx (or NULL); see modset.h. */
#ifndef MDTOOLS_TYPEREF_H
#define MDTOOLS_TYPEREF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mdtools/errors.h>

#include <mdtools/modset.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Forwarder hops followed in one resolution, at most. */
#define MDT_RESOLVE_MAX_HOPS 16
/* Nesting depth of a TypeRef / ExportedType chain, at most. */
#define MDT_RESOLVE_MAX_NEST 64
/* Size of mdt_resolution.visited. */
#define MDT_RESOLVE_MAX_VISITED (MDT_RESOLVE_MAX_HOPS + 2)

/* Why a reference is unresolved. */
enum mdt_res_reason {
    MDT_RES_OK = 0,
    MDT_RES_NOT_LOADED,     /* "not-loaded": the assembly / module it names is not in the set */
    MDT_RES_NO_SUCH_TYPE,   /* "no-such-type": the assembly is there, the type is not */
    MDT_RES_CYCLE,          /* "cycle": forwarders (or scopes, nesting) loop */
    MDT_RES_HOP_LIMIT,      /* "hop-limit": a documented bound was reached */
    MDT_RES_NO_METADATA,    /* "no-metadata": the module it lands in has no image */
    MDT_RES_BAD_IMAGE,      /* "bad-image": a row on the way cannot be read */
    MDT_RES_NO_SUCH_MEMBER, /* "no-such-member" (MemberRefs): the type is there,
                               no member matches by name and signature (or
                               several do, with MDT_RES_AMBIGUOUS) */
    MDT_RES_RUNTIME         /* "runtime-provided" (MemberRefs): a method the
                               runtime provides for an array type (.ctor, Get,
                               Set, Address of T[], T[,], ...; II.14.2): no
                               metadata defines it, and none is missing */
};

/* Result flags. */
enum mdt_res_flags {
    MDT_RES_AMBIGUOUS = 1u << 0,     /* tier 3b: several assemblies had the type /
                                        several members matched */
    MDT_RES_HINT_MISMATCH = 1u << 1, /* an ExportedType TypeDefId hint named another row */
    MDT_RES_SIG_BY_NAME = 1u << 2,   /* MemberRef: some signature types were compared by
                                        name because they could not be resolved */
    MDT_RES_FROM_CACHE = 1u << 3,    /* answered from the view's cache */
    MDT_RES_OTHER_ASSEMBLY = 1u << 4 /* bound by name only (tier 3b) to an assembly
                                        whose simple name differs from the
                                        AssemblyRef's: the type found is not
                                        necessarily the one meant */
};

typedef struct mdt_resolution {
    bool resolved;
    uint8_t reason; /* enum mdt_res_reason; MDT_RES_OK when resolved */
    uint8_t tier;   /* worst binding tier used (1..3); 0: no AssemblyRef was bound */
    uint8_t flags;  /* enum mdt_res_flags */
    uint16_t hops;  /* forwarder hops followed */
    uint16_t nvisited;
    uintptr_t module; /* resolved: ID of the defining module */
    uint32_t token;   /* resolved: TypeDef, MethodDef or Field token in it */
    /* Assemblies visited, in order: the manifest module ID of the assembly
     * each binding chose (the first, then one per hop). */
    uintptr_t visited[MDT_RESOLVE_MAX_VISITED];
    /* Unresolved: the module and row where resolution stopped (e.g. the
     * AssemblyRef that bound nowhere, the ExportedType of a cycle, the
     * assembly that lacks the type: its manifest and 0). */
    uintptr_t where_module;
    uint32_t where_token;
    /* Unresolved: what was there instead, when anything: a type of that
     * name in a module the rules did not choose, or another version of the
     * assembly asked for (its manifest ID, token 0). */
    uintptr_t instead_module;
    uint32_t instead_token;
} mdt_resolution;

/* Trace: every candidate considered and why it was passed over. */
enum mdt_trace_kind {
    MDT_TRACE_STEP = 0,  /* what the resolver is doing (scope, nesting) */
    MDT_TRACE_CANDIDATE, /* an assembly considered for a binding, with its tier */
    MDT_TRACE_PASSED,    /* a candidate passed over, and why */
    MDT_TRACE_CHOSEN,    /* the candidate chosen */
    MDT_TRACE_HOP,       /* a forwarder followed */
    MDT_TRACE_RESULT     /* the outcome */
};

typedef struct mdt_trace_entry {
    int kind;         /* enum mdt_trace_kind */
    uintptr_t module; /* module concerned, 0 if none */
    uint32_t token;   /* row concerned, 0 if none */
    uint8_t tier;     /* CANDIDATE, CHOSEN: its tier */
    const char *text; /* one line for people */
} mdt_trace_entry;

typedef struct mdt_trace {
    size_t n;
    mdt_trace_entry *entries;
} mdt_trace;

enum mdt_resolve_flags {
    MDT_RESOLVE_STRICT = 1u << 0, /* tiers 1 and 2 only */
    MDT_RESOLVE_NOCACHE = 1u << 1 /* neither read nor fill the view's cache */
};

/* How to resolve. Start from MDT_RESOLVE_OPTS_INIT, then set what differs
 * (libgit2's pattern). `version` is as in mdt_name_opts (<mdtools/names.h>):
 * the layout the caller was built with, in what was the upper half of
 * `flags` in libmdtools 1:0:0 (0 there, and the same layout as version 1);
 * a version later than this library's is refused with MDT_EINVAL. */
#define MDT_RESOLVE_OPTS_VERSION 1

typedef struct mdt_resolve_opts {
    uint16_t flags;    /* enum mdt_resolve_flags */
    uint16_t version;  /* MDT_RESOLVE_OPTS_VERSION */
    unsigned max_hops; /* 0: MDT_RESOLVE_MAX_HOPS; larger values are clamped to it */
} mdt_resolve_opts;

/* No flags, the default bound on hops: what a NULL opts means. */
#define MDT_RESOLVE_OPTS_INIT                                                                      \
    {                                                                                              \
        0, MDT_RESOLVE_OPTS_VERSION, 0                                                             \
    }

/* Name of a reason: "resolved", "not-loaded", "no-such-type", "cycle",
 * "hop-limit", "no-metadata", "bad-image", "no-such-member",
 * "runtime-provided". Static. */
const char *mdt_resolution_reason_name(int reason);

/* Resolve a TypeRef (0x01) of module `module` to its TypeDef. A TypeDef
 * token (0x02) answers itself. `trace` may be NULL; otherwise *trace is
 * allocated under mem_ctx (which may be NULL for a new top-level context).
 * `opts` may be NULL. Returns 0 when *out holds an answer (resolved or not);
 * errors: MDT_ENOTFOUND (no such module ID in the view), MDT_EINVAL (token
 * of another table, a rid beyond the table, or opts of a later version),
 * MDT_ENOMEM. */
int mdt_typeref_resolve(void *mem_ctx, mdt_resolution *out, mdt_trace **trace,
                        const mdt_modview *view, uintptr_t module, uint32_t token,
                        const mdt_resolve_opts *opts);

/* Resolve an ExportedType row (0x27) to the TypeDef it finally stands for:
 * File -> the module of the assembly; forwarders followed as above; nested
 * rows through their enclosing rows. Same contract as mdt_typeref_resolve
 * (for a forwarder row, hops counts the row itself). Errors: MDT_ENOTFOUND
 * (no such module ID in the view), MDT_EINVAL (token of another table, or
 * a rid beyond the table), MDT_ENOMEM. */
int mdt_exportedtype_resolve(void *mem_ctx, mdt_resolution *out, mdt_trace **trace,
                             const mdt_modview *view, uintptr_t module, uint32_t token,
                             const mdt_resolve_opts *opts);

/* Resolve a MemberRef (0x0A) to the MethodDef or Field it names. The parent
 * (TypeRef, TypeDef, TypeSpec GENERICINST, ModuleRef for globals, MethodDef
 * for vararg call sites) gives the defining TypeDef; the member is found
 * there, or in its base types, by name and signature equivalence: calling
 * convention, generic arity, return and parameter types compared
 * structurally, named types by the TypeDef they resolve to (types that
 * resolve nowhere on both sides compare by assembly simple name and full
 * name, flag MDT_RES_SIG_BY_NAME), custom modifiers included, !N and !!N by
 * number; a vararg call site matches its definition by the part before
 * SENTINEL. tier/hops/visited describe the parent's resolution.
 * A method of an array TypeSpec that the runtime provides (.ctor, Get,
 * Set, Address with the array's rank of indexes) is unresolved with reason
 * MDT_RES_RUNTIME. When the parent was bound only by name to another
 * assembly (MDT_RES_OTHER_ASSEMBLY) and no member matches, the reason is
 * MDT_RES_NOT_LOADED (the assembly the reference names is not there),
 * with `where` the AssemblyRef and `instead` the TypeDef found by name,
 * rather than no-such-member of an assembly never meant. Errors as
 * mdt_typeref_resolve: MDT_ENOTFOUND (no such module ID), MDT_EINVAL,
 * MDT_ENOMEM. */
int mdt_memberref_resolve(void *mem_ctx, mdt_resolution *out, mdt_trace **trace,
                          const mdt_modview *view, uintptr_t module, uint32_t token,
                          const mdt_resolve_opts *opts);

/* Any of the above by the token's table. Errors: MDT_ENOTFOUND (no such
 * module ID), MDT_EINVAL (a token of another table, a rid beyond the
 * table), MDT_ENOMEM. */
int mdt_token_resolve(void *mem_ctx, mdt_resolution *out, mdt_trace **trace,
                      const mdt_modview *view, uintptr_t module, uint32_t token,
                      const mdt_resolve_opts *opts);

/* A type that extends or implements another (mdt_derived_types). */
typedef struct mdt_derived {
    uintptr_t module;        /* the module defining it */
    uint32_t token;          /* its TypeDef */
    uint32_t via;            /* the row naming its parent: its own TypeDef
                                (Extends) or an InterfaceImpl row */
    uintptr_t parent_module; /* the type it extends or implements: the one */
    uint32_t parent;         /* asked about, or (transitive) another result */
    uint16_t depth;          /* 1: directly; 2: through one other type; ... */
    bool interface;          /* it implements parent (InterfaceImpl) */
} mdt_derived;

enum mdt_derived_flags {
    MDT_DERIVED_ALL = 1u << 0 /* the transitive closure, not only the direct ones */
};

/* The types of the view that extend or implement TypeDef `type` of module
 * `module`: every TypeDef whose Extends or one of whose InterfaceImpl rows
 * names it, a TypeRef through mdt_typeref_resolve (forwarders followed), a
 * TypeSpec of a generic instantiation by its generic type (`class IntBox :
 * Box<int>` derives from `Box<T>`). With MDT_DERIVED_ALL, theirs too,
 * breadth first, each type once (the first path found; a cycle in damaged
 * metadata ends where it closes). *out (n entries, allocated under mem_ctx;
 * NULL when n is 0) is in that order: by depth, then by module in the
 * view's order and row. References that do not resolve, other TypeSpecs and
 * rows that do not read are left out. Errors: MDT_EINVAL (no view or
 * output, not a TypeDef token of a module with metadata), MDT_ENOTFOUND (no
 * such module in the view), MDT_ENOMEM. */
int mdt_derived_types(void *mem_ctx, mdt_derived **out, size_t *n, const mdt_modview *view,
                      uintptr_t module, uint32_t type, unsigned flags);

/* Where a reference starts, in its own module and without a module set:
 * the scope at the root of a TypeRef's ResolutionScope chain (an
 * AssemblyRef, a ModuleRef, the Module row 0x00000001, or 0 for a nil scope,
 * which defers to the ExportedType table); for a MemberRef, that of its
 * class (a generic instance through its generic type; a class defined in
 * this module gives 0x00000001; a TypeSpec that is no generic instance is
 * returned as is); for an ExportedType, the root of its Implementation
 * chain (AssemblyRef or File). Errors: MDT_EINVAL (not a TypeRef, MemberRef
 * or ExportedType), the located error of an unreadable row or signature
 * (MDT_ENOTFOUND for a row that does not exist, MDT_ETRUNC, MDT_EBADIMAGE,
 * MDT_ENOHEAP, MDT_EUNSUPPORTED), MDT_EBADIMAGE for a chain longer than 64
 * steps (a cycle). */
int mdt_token_scope(uint32_t *scope, const mdt_image *img, uint32_t token);

/* Which loaded assembly an AssemblyRef (0x23) of `module` binds to, without
 * a type in mind: the first candidate of tiers 1, 2, 3a. *manifest is the
 * manifest module's ID and *tier 1..3; MDT_ENOTFOUND (with *manifest 0) when
 * nothing of that name is loaded, or no such module ID; MDT_EINVAL (not an
 * AssemblyRef token, or a module without metadata); MDT_EBADIMAGE (the
 * AssemblyRef row does not read: the error record says why). */
int mdt_assemblyref_bind(uintptr_t *manifest, int *tier, const mdt_modview *view, uintptr_t module,
                         uint32_t token);

/* api-rename: off */
/* The names these functions had in libmdtools 1:0:0, exported until the
 * next soname (each calls the function of its new name); a compiler warns
 * where one is used and names the new one (MDT_DEPRECATED_FOR,
 * <mdtools/errors.h>). tools/api-rename.py moves code to the new names;
 * MDT_NO_DEPRECATED leaves them undeclared. */
#ifndef MDT_NO_DEPRECATED
MDT_DEPRECATED_FOR(mdt_token_resolve)
int mdt_resolve_token(void *mem_ctx, mdt_resolution *out, mdt_trace **trace,
                      const mdt_modview *view, uintptr_t module, uint32_t token,
                      const mdt_resolve_opts *opts);
MDT_DEPRECATED_FOR(mdt_exportedtype_resolve)
int mdt_exported_resolve(void *mem_ctx, mdt_resolution *out, mdt_trace **trace,
                         const mdt_modview *view, uintptr_t module, uint32_t token,
                         const mdt_resolve_opts *opts);
MDT_DEPRECATED_FOR(mdt_resolution_reason_name) const char *mdt_res_reason_name(int reason);
MDT_DEPRECATED_FOR(mdt_token_scope)
int mdt_ref_scope(uint32_t *scope, const mdt_image *img, uint32_t token);
#endif /* MDT_NO_DEPRECATED */
/* api-rename: on */

#ifdef __cplusplus
}
#endif
#endif
