/* mdtools: the module set, the world that reference resolution looks at
 * (nothing outside it exists for resolution).
 *
 * A module set holds modules keyed by a caller-chosen ID (in a profiler: the
 * runtime's ModuleID; offline: anything unique, e.g. 1, 2, 3), each with its
 * image (or none: dynamic / RefEmit modules), an AppDomain tag, an optional
 * name and path, and the assembly identity of its manifest (ECMA-335 II.6,
 * II.22.2), computed once when the module is added. Nothing is ever loaded
 * or searched on disk: resolution sees exactly the modules registered here.
 *
 * Multi-module assemblies (II.6.5, II.22.19 File): a manifest module (one
 * with an Assembly row) and its .netmodules form one assembly. A module
 * without an Assembly row belongs to the manifest given at add time
 * (desc.manifest) or, when that is 0, to the first manifest in registration
 * order, in a visible AppDomain (see below), whose File table has a row
 * naming it (File.Name compared with the module's name, ASCII
 * case-insensitively, as Windows file names are).
 *
 * AppDomains. Tag 0 (MDT_APPDOMAIN_SHARED) is the shared domain: modules
 * tagged 0 are visible from every domain. A module tagged X sees modules
 * tagged X and modules tagged 0; resolution from a module only ever binds to
 * modules it sees. Offline, tag everything 0.
 *
 * Views (snapshots). Readers never see a set being changed: they acquire a
 * view, an immutable snapshot of the set (modules in registration order, the
 * ID index, the assembly-name index, the result caches), use it, and release
 * it. Writers (add, remove, reclaim) serialize on a mutex inside the set,
 * build a new snapshot and publish it atomically; a snapshot is reclaimed
 * once no reader holds it (memory of a released snapshot is given back by
 * the next writer call or by mdt_modset_reclaim()), also while readers
 * acquire views without pause: the snapshots a set holds are the ones
 * readers hold plus at most two. To keep that bound a writer may wait a
 * moment for readers that are inside mdt_modset_acquire() (a few
 * instructions); readers never wait. Caches of resolution results belong
 * to a snapshot, so any change of the set invalidates them.
 *
 * Thread safety, exactly:
 * - mdt_modset_acquire, mdt_modview_release, and every mdt_modview_* call
 *   may run on any number of threads at once, concurrently with writers.
 *   They never block and never call talloc. mdt_modview_release is a single
 *   atomic decrement (async-signal-safe). Resolution calls (typeref.h) on a
 *   view are safe concurrently as long as each thread passes its own talloc
 *   context (or NULL).
 * - mdt_modset_add, mdt_modset_remove and mdt_modset_reclaim may be called
 *   from several threads (they serialize on the set's mutex), but they use
 *   talloc on the set's context: no other thread may allocate on or free
 *   the talloc tree the set belongs to (its parent and siblings) while they
 *   run.
 * - mdt_modset_new and freeing the set (talloc_free) are not concurrent with
 *   anything, and every view must have been released before the set is
 *   freed.
 *
 * Ownership: the set is a talloc child of the mem_ctx given to
 * mdt_modset_new. Images are borrowed by default (they must outlive the
 * module's removal and every view that contains it, i.e. until the next
 * writer call after the last such view was released); with
 * MDT_MODSET_OWN_IMAGE the set takes the image (talloc_steal) and frees it
 * when that moment comes. talloc is not thread-safe, and the steal changes
 * the image's old parent as well as the set: while the writer call that
 * takes an image runs, no other thread may allocate on, free or steal
 * anything in the talloc tree the image was in (its parent, its siblings,
 * the image itself) or the set's tree. Afterwards the image is the set's:
 * the caller must not free or steal it, and reads it only through a view
 * that contains it (or while it knows no writer call can reclaim it). The
 * writer call or mdt_modset_reclaim() that frees it is under the same rule
 * for the set's tree. Strings in mdt_module_info are borrowed from the
 * view (names, paths) or the image (identity) and live as long as the view. */
#ifndef MDTOOLS_MODSET_H
#define MDTOOLS_MODSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mdtools/assembly.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mdt_image mdt_image;
typedef struct mdt_modset mdt_modset;
typedef struct mdt_modview mdt_modview;
struct mdt_idmap; /* idmap.h */

#define MDT_APPDOMAIN_SHARED ((uintptr_t)0)

/* What mdt_modset_add registers. */
typedef struct mdt_module_desc {
    uintptr_t id;           /* caller-chosen, non-zero, unique in the set */
    const mdt_image *image; /* NULL: a module without metadata (dynamic) */
    uintptr_t appdomain;    /* AppDomain tag; MDT_APPDOMAIN_SHARED = 0 */
    const char *name;       /* module name (copied); NULL: the Module row's
                               Name, or the path's last component */
    const char *path;       /* where it came from (copied), may be NULL */
    uintptr_t manifest;     /* for a .netmodule: ID of its assembly's manifest
                               module; 0: found by File name (see above) */
} mdt_module_desc;

enum mdt_modset_add_flags {
    MDT_MODSET_OWN_IMAGE = 1u << 0 /* the set takes ownership of the image */
};

/* A module as a view sees it. */
typedef struct mdt_module_info {
    uintptr_t id;
    const mdt_image *image; /* NULL: no metadata */
    uintptr_t appdomain;
    const char *name;      /* never NULL ("" when unknown) */
    const char *path;      /* NULL when not given */
    size_t index;          /* position in the view (registration order) */
    bool is_manifest;      /* has an Assembly row: identity is valid */
    bool bad_image;        /* its Module/Assembly row could not be read */
    mdt_identity identity; /* of the assembly it declares (manifests only) */
    uintptr_t manifest;    /* ID of the manifest module of its assembly
                              (its own ID for a manifest), 0 when unknown */
} mdt_module_info;

/* New, empty set under mem_ctx. Errors: MDT_ENOMEM. */
int mdt_modset_new(void *mem_ctx, mdt_modset **out);

/* Register a module. Reads the image's Module and Assembly rows once (an
 * image whose rows cannot be read is still registered, flagged bad_image:
 * lookups into it answer `bad-image`). Errors: MDT_EINVAL (id 0, or an ID
 * already present: the set is unchanged), MDT_ENOMEM. */
int mdt_modset_add(mdt_modset *set, const mdt_module_desc *desc, unsigned flags);

/* Register n modules at once, as one change of the set (one new snapshot:
 * registering a whole directory this way costs one snapshot build instead
 * of n). All or nothing: on failure the set is unchanged. Errors as
 * mdt_modset_add: MDT_EINVAL (also for two equal IDs among descs),
 * MDT_ENOMEM. */
int mdt_modset_add_many(mdt_modset *set, const mdt_module_desc *descs, size_t n, unsigned flags);

/* Remove the modules whose IDs are in `remove` and register `add`, as one
 * change of the set (one snapshot): a module can be replaced without a
 * snapshot in which it is missing. All or nothing. Errors: MDT_ENOTFOUND
 * (an ID to remove is not registered), MDT_EINVAL (an ID removed twice, an
 * added ID that is 0, repeated, or registered and not removed),
 * MDT_ENOMEM. */
int mdt_modset_update(mdt_modset *set, const uintptr_t *remove, size_t nremove,
                      const mdt_module_desc *add, size_t nadd, unsigned flags);

/* Make the set mirror the live modules of a profiler's runtime-ID map
 * (idmap.h), so that resolution sees exactly the modules the runtime has
 * loaded, under their ModuleIDs: every live module of the map is in the set
 * with its image, AppDomain and path; a module the map no longer has, or
 * whose image, AppDomain or path changed, leaves the set (or is replaced),
 * in one change. Modules sharing an assembly tag in the map are grouped
 * under the one that has an Assembly row (its .netmodules). Cheap when
 * nothing changed since the last call (mdt_idmap_module_changes()).
 * The set then belongs to the mirror: modules added to it by other calls
 * are removed by the next mirror. Images stay the caller's (borrowed, see
 * above): keep an unloaded module's image until the next writer call after
 * the last view that shows it was released.
 * Thread-safety: a writer call of the set, and it takes the map's writer
 * mutex while it reads the map (never the other way round). Errors:
 * MDT_EINVAL, MDT_ENOMEM (the set is unchanged). */
int mdt_modset_mirror(mdt_modset *set, struct mdt_idmap *map);

/* Unregister a module (views acquired before keep seeing it).
 * Errors: MDT_ENOTFOUND, MDT_EINVAL (no set), MDT_ENOMEM (the new snapshot;
 * the set is unchanged). */
int mdt_modset_remove(mdt_modset *set, uintptr_t id);

/* Free what released views and removed modules no longer need (writers do
 * this too). Returns the number of snapshots still held by readers. */
size_t mdt_modset_reclaim(mdt_modset *set);

/* Number of changes so far (add/remove); the generation of a fresh view. */
uint64_t mdt_modset_generation(mdt_modset *set);

/* Take a reference on the current snapshot. Never fails, never blocks, never
 * returns NULL once the set exists (an empty set has an empty view). */
mdt_modview *mdt_modset_acquire(mdt_modset *set);
/* Drop it. NULL is fine. Async-signal-safe. */
void mdt_modview_release(mdt_modview *view);

/* Generation of the set this view shows (caches are keyed by it). */
uint64_t mdt_modview_generation(const mdt_modview *view);
/* Number of modules (all AppDomains). */
size_t mdt_modview_count(const mdt_modview *view);
/* Module at position i in registration order. Errors: MDT_ENOTFOUND (the
 * readers of a view touch no error record). */
int mdt_modview_module(mdt_module_info *out, const mdt_modview *view, size_t i);
/* Module by ID. Errors: MDT_ENOTFOUND. Constant time. */
int mdt_modview_lookup(mdt_module_info *out, const mdt_modview *view, uintptr_t id);
/* Iterate, in registration order, the modules tagged `appdomain` (and, with
 * include_shared, those tagged 0). Start with *pos = 0; returns
 * MDT_ITEROVER at the end. */
int mdt_modview_next(mdt_module_info *out, const mdt_modview *view, uintptr_t appdomain,
                     bool include_shared, size_t *pos);

#ifdef __cplusplus
}
#endif
#endif
