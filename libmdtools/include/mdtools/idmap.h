/* mdtools: runtime-ID maps for profilers (ModuleID, ClassID, FunctionID,
 * code ranges) with exact unload and attach semantics.
 *
 * A profiler learns runtime IDs from callbacks (ModuleLoadFinished,
 * ClassLoadFinished, JITCompilationFinished, ...) or from enumerations
 * (EnumModules, EnumJITedFunctions) and records here what each ID stands for:
 * module -> image, MVID, AppDomain, assembly; class -> (module, TypeDef, type
 * arguments) or an array/pointer/byref shape; function -> (module, MethodDef,
 * owning class, method type arguments); code range -> function. It can then
 * go back from tokens to IDs without asking the runtime (which may load
 * types), and name any ID in a signal handler.
 *
 * Sequence numbers. Every event carries a caller-supplied sequence number
 * `seq` (1 <= seq < 2^63, from one increasing counter: take it on entry to
 * the callback, or use mdt_idmap_next_seq()). Items of an enumeration carry
 * the seq taken just *before* the enumeration was generated. For each ID the
 * newest information wins: a load or unload whose seq is older than what the
 * map already knows about that ID is ignored (MDT_IDMAP_SUPERSEDED), and so
 * is an item that names a module, class, AppDomain or assembly unloaded at or
 * after its seq. Repeats are harmless (MDT_IDMAP_DUPLICATE). Unloads of IDs
 * never seen leave a small tombstone so that a late, older enumeration item
 * cannot bring them back; mdt_idmap_retire() drops tombstones older than a
 * watermark.
 *
 * The attach rules, from "CLR V4: Profiler Attach Part 2" (an ID is
 * present from its LoadFinished to its UnloadStarted; an event wins over
 * an enumeration generated before it; an ID may be reported twice):
 * - an unload at t ends the incarnation of the unloaded ID and,
 *   recursively, of every record that names it (contained in it, or built
 *   on it as owning class or type argument) and was created at or before
 *   t, whatever that record's own seq, with their code ranges: nothing
 *   contained in a module, class, AppDomain or assembly outlives its
 *   UnloadStarted. A load of such a record applied with a seq above t (a
 *   duplicate) says what its ID stood for after the unload: the record
 *   goes on as a new incarnation (gen = that newest seq) with the code
 *   ranges added since that load, as if the unload had come first and
 *   the load after it; the old generation and its other ranges never
 *   answer again. A record created after t is untouched. An unload older
 *   than the incarnation the map knows is remembered, so that items older
 *   than it that name the ID are refused;
 * - an item refused because something it names was unloaded at u >= its
 *   seq described a thing that died in that unload: its ID is unloaded at
 *   u too (a tombstone, or the end of an older incarnation), so the other
 *   items of the same enumeration that name it are refused as well, in
 *   whichever order they come (when the named ID was unloaded more than
 *   once since, the map knows only the last unload, and refuses items up
 *   to it: an ID left unknown, never a dead one answered);
 * - code ranges have rules of their own on top of these (which code_add
 *   wins, code tombstones): <mdtools/idmap_code.h>;
 * - a load with the same content is a duplicate; it fills in fields the
 *   record lacks (a zero prim, a missing owning class, module path, MVID,
 *   AppDomain, assembly, identity), keeping the incarnation. A field that
 *   differs from a known non-zero value, prim included, is other content:
 *   newer, it starts a new incarnation; older, it is refused.
 *
 * Generations. Each incarnation of an ID has a generation (the seq of the
 * event that created it) reported by every lookup. A caller that stores an ID
 * for later (a sample buffer) stores (ID, gen) and passes gen back: a lookup
 * with gen != 0 answers only for that incarnation, so a stale ID never
 * answers even when the runtime reuses its address. gen == 0 means "whatever
 * the ID is now".
 *
 * Unloads. A module unload, AppDomain shutdown or (collectible) assembly
 * unload invalidates every ID recorded as contained in it, directly or
 * through type arguments and owning classes, when the *UnloadStarted /
 * AppDomainShutdownStarted event is applied. Lookups that start after the
 * call returns never answer for them; mdt_idmap_synchronize() waits until
 * lookups that overlapped the call have finished.
 *
 * Concurrency. Writers (the load/unload/retire calls) may run on any threads;
 * they are serialized by a mutex inside the map and must never be called
 * from a signal handler. Readers (lookups, finds, describe) never block,
 * never allocate, never lock and run in a bounded number of steps; those
 * marked "async-signal-safe: yes" may be called from a signal handler,
 * including one that interrupted a writer on the same thread. Memory a
 * reader may still see is freed only after every reader that could see it
 * has left (see libmdtools/tokens/README.md). A thread's first lookup takes
 * it a reader slot (a few atomic operations, still async-signal-safe; the
 * library uses no static TLS, so it loads with dlopen() whatever TLS the
 * process has used, and lookups touch no thread-local storage, so a
 * handler never makes the dynamic loader allocate);
 * writers use membarrier(2) where the kernel has it so that lookups need no
 * atomic read-modify-write or fence (MDT_IDMAP_FENCED=1 in the environment
 * at mdt_idmap_new() selects the fenced readers used without it). A lookup
 * must not be left by longjmp()/siglongjmp() from a signal handler: writers
 * would wait for it forever.
 *
 * Return values. Lookups return 0 or a negative MDT_E... code (MDT_ENOTFOUND
 * for unknown, dead, or other-generation IDs). Writers return a
 * non-negative enum mdt_idmap_outcome, or a negative MDT_E... code; test
 * `< 0` for failure. Lookups never touch the per-thread error record;
 * writers fill it on failure. */
#ifndef MDTOOLS_IDMAP_H
#define MDTOOLS_IDMAP_H

#include <stddef.h>
#include <stdint.h>

#include <mdtools/errors.h>

#ifdef __cplusplus
extern "C" {
#endif

struct mdt_image;
struct mdt_identity;
struct mdt_name_opts;

/* The map. Opaque. */
typedef struct mdt_idmap mdt_idmap;

/* What a writer call did (all are success). */
enum mdt_idmap_outcome {
    MDT_IDMAP_APPLIED = 0,   /* the map changed */
    MDT_IDMAP_DUPLICATE = 1, /* the map already knew this (a repeat) */
    MDT_IDMAP_SUPERSEDED = 2 /* ignored: the map holds newer information */
};

/* Kinds of ID, for the miss callback. */
enum mdt_idmap_kind {
    MDT_IDMAP_MODULE = 1,
    MDT_IDMAP_CLASS = 2,
    MDT_IDMAP_FUNCTION = 3,
    MDT_IDMAP_IP = 4 /* "id" is an instruction pointer */
};

/* What a ClassID stands for. */
enum mdt_idmap_shape {
    MDT_IDMAP_SHAPE_TYPEDEF = 0, /* (module, TypeDef[, type arguments]) */
    MDT_IDMAP_SHAPE_SZARRAY = 1, /* T[]: args[0] is T */
    MDT_IDMAP_SHAPE_ARRAY = 2,   /* T[rank]: args[0] is T */
    MDT_IDMAP_SHAPE_PTR = 3,     /* T*: args[0] is T */
    MDT_IDMAP_SHAPE_BYREF = 4,   /* T&: args[0] is T */
    MDT_IDMAP_SHAPE_UNKNOWN = 7  /* describe only: an ID the map does not know */
};

/* `prim` of a class: 0, an ECMA-335 element type (II.23.1.16: 0x01 VOID ...
 * 0x0e STRING, 0x16 TYPEDBYREF, 0x18 I, 0x19 U, 0x1c OBJECT) when the caller
 * knows the class is that primitive, or MDT_IDMAP_PRIM_CANON for
 * System.__Canon. Used only for naming. */
#define MDT_IDMAP_PRIM_NONE 0x00u
#define MDT_IDMAP_PRIM_CANON 0xffu

/* Module record. On load: everything is copied except `image` and
 * `identity`, which are borrowed and must outlive the module's unload. On
 * lookup: filled from the map, `path` is set to NULL (copy it out with
 * mdt_idmap_module_path()), `gen` is the generation. */
typedef struct mdt_idmap_module_info {
    const struct mdt_image *image;       /* NULL for a dynamic module / not opened */
    const char *path;                    /* NULL or "" when unknown */
    uint8_t mvid[16];                    /* GUID bytes as in #GUID; zero = unknown */
    uintptr_t appdomain;                 /* AppDomainID, 0 = unknown */
    uintptr_t assembly;                  /* AssemblyID, 0 = unknown */
    const struct mdt_identity *identity; /* assembly identity, may be NULL */
    uint64_t gen;                        /* output only */
} mdt_idmap_module_info;

/* Class record. For TYPEDEF: module, token (a TypeDef), nargs type
 * arguments (ClassIDs) in args. For the other shapes: args[0] (nargs == 1) is
 * the element ClassID, rank is the ARRAY rank (1..65535), module and token are
 * 0 or whatever the runtime reported. On lookup `args` points at the
 * caller's buffer and `nargs` is the true count. */
typedef struct mdt_idmap_class_info {
    uintptr_t module;
    uint32_t token;
    uint8_t shape; /* enum mdt_idmap_shape */
    uint8_t prim;  /* MDT_IDMAP_PRIM_NONE, an element type, or _CANON */
    uint16_t rank;
    uint32_t nargs;
    const uintptr_t *args;
    uint64_t gen; /* output only */
} mdt_idmap_class_info;

/* Function record: the MethodDef of `module`, the owning ClassID (0 when not
 * known, e.g. shared generic code without frame info) and the *method* type
 * arguments (class type arguments live in the owning class). */
typedef struct mdt_idmap_function_info {
    uintptr_t module;
    uint32_t token;
    uintptr_t class_id;
    uint32_t nargs;
    const uintptr_t *args;
    uint64_t gen; /* output only */
} mdt_idmap_function_info;

/* A FunctionID described in one read (mdt_idmap_function_describe): the
 * function's record, its module's and its owning class's, as one reader
 * section saw them, consistent with each other. What the map does not know is marked, not an error:
 * module_gen 0 (module unknown: image NULL, mvid zero), class_gen 0 (no
 * owning class, or one the map does not know: class_shape
 * MDT_IDMAP_SHAPE_UNKNOWN). Type arguments go into the caller's buffer,
 * the method's first: args = args_buf, class_args = args_buf + min(nargs,
 * args_cap), at most args_cap in all; nargs and class_nargs are the true
 * counts. */
typedef struct mdt_idmap_function_desc {
    uint64_t gen;                  /* the function's incarnation */
    uint32_t token;                /* its MethodDef */
    uint32_t nargs;                /* method type arguments (true count) */
    const uintptr_t *args;         /* ... in the caller's buffer */
    uintptr_t module;              /* ModuleID */
    uint64_t module_gen;           /* 0: the module is not known */
    const struct mdt_image *image; /* of module, NULL if none / unknown */
    uint8_t mvid[16];              /* of module, zero if unknown */
    uintptr_t class_id;            /* owning ClassID, 0 when not known */
    uint64_t class_gen;            /* 0: no owning class known */
    uint32_t class_token;          /* the class's TypeDef (0 if unknown) */
    uint8_t class_shape;           /* enum mdt_idmap_shape */
    uint32_t class_nargs;          /* class type arguments (true count) */
    const uintptr_t *class_args;   /* ... in the caller's buffer, after args */
} mdt_idmap_function_desc;

/* One node of a described type, in pre-order: a node is followed by the
 * subtrees of its `nargs` type arguments (for shapes: the element). For the
 * generics formatter: TYPEDEF nodes name (image, token) and carry the MVID;
 * prim/canon say when a primitive or System.__Canon name applies; UNKNOWN
 * nodes are ClassIDs the map does not know (print the ID). */
typedef struct mdt_idmap_type_node {
    uintptr_t class_id;
    uint64_t gen;
    uint8_t shape; /* enum mdt_idmap_shape */
    uint8_t prim;
    uint16_t rank;
    uint32_t nargs;
    uintptr_t module;
    uint32_t token;
    const struct mdt_image *image; /* of module, NULL if none/unknown */
    uint8_t mvid[16];              /* of module, zero if unknown */
} mdt_idmap_type_node;

/* Lazy catch-up. Called by the *_fetch() lookups (never by the signal-safe
 * ones) when an ID is not in the map: the profiler asks the runtime about
 * `id` (of `kind`; for MDT_IDMAP_IP, the function containing that address),
 * inserts what it learns with the usual writer calls (a fresh seq) and
 * returns 0, or returns a negative code when it could not. Called with no
 * lock of the map held; a *_fetch() made inside the callback does not call
 * it again. */
typedef int (*mdt_idmap_miss_fn)(void *payload, mdt_idmap *map, int kind, uintptr_t id);

/* Creation options; all fields may be zero. */
typedef struct mdt_idmap_options {
    size_t modules;   /* expected number of modules (sizing hint) */
    size_t classes;   /* expected number of classes */
    size_t functions; /* expected number of functions */
    mdt_idmap_miss_fn miss;
    void *miss_payload;
} mdt_idmap_options;

/* mdt_idmap_set_flags(): keep no reverse index of functions, for a caller
 * that never calls mdt_idmap_function_find() (which then fails with
 * MDT_EUNSUPPORTED): a function load then spares the index's lines and
 * the map 4 bytes per function. */
#define MDT_IDMAP_NO_FUNCTION_FIND 1u

/* Counters and memory use, for tests and benchmarks. */
typedef struct mdt_idmap_stats {
    size_t modules_live, classes_live, functions_live, ranges;
    size_t modules_dead, classes_dead, functions_dead; /* tombstones */
    size_t class_slot_size, function_slot_size;        /* bytes per table slot */
    size_t bytes_tables;  /* forward tables, all slots (empty included) */
    size_t bytes_index;   /* reverse and TypeDef-presence indexes */
    size_t bytes_args;    /* out-of-line type-argument arrays and paths */
    size_t bytes_ranges;  /* code-range leaves and the index above them */
    size_t bytes_writer;  /* writer-only: dependents, history, newer seqs, module
                           * handles, retired list, code tombstones */
    size_t bytes_retired; /* unlinked, waiting for readers to leave */
    uint64_t grace_periods;
    /* Breakdown: bytes_index = bytes_reverse + bytes_presence; bytes_writer
     * = bytes_deps + bytes_history + the rest (newer seqs, module handles,
     * the retired list's own array, code tombstones at 24 bytes a piece). */
    size_t bytes_reverse;  /* reverse indexes (classes and functions) */
    size_t bytes_presence; /* TypeDef presence (generic TypeDefs) */
    size_t bytes_deps;     /* dependents (packed runs and the recent entries) */
    size_t bytes_history;  /* unload history of IDs without a record */
    size_t bytes_map;      /* the map object (per-thread reader slots, locks) */
} mdt_idmap_stats;

/* ---- Lifetime --------------------------------------------------------- */

/* Create a map. `opts` may be NULL. *out is set on success. The map uses
 * malloc/free (not talloc: it is shared between threads); tables of 8 MiB
 * or more are 2 MiB-aligned and advised MADV_HUGEPAGE, which spares
 * lookups most TLB misses where transparent huge pages are enabled.
 * Errors: MDT_EINVAL (out NULL), MDT_ENOMEM.
 * Thread-safety: any thread. Async-signal-safe: no. */
int mdt_idmap_new(mdt_idmap **out, const mdt_idmap_options *opts);

/* Free the map and everything it owns. No other call on the map may be in
 * progress or follow. NULL is ignored.
 * Async-signal-safe: no. */
void mdt_idmap_free(mdt_idmap *map);

/* Leave out what `flags` names (MDT_IDMAP_NO_FUNCTION_FIND), for the map's
 * life; 0 changes nothing. A flag set stays set. Call it before the first
 * function is recorded. (A function, not a member of mdt_idmap_options: a
 * program built when the options had no flags keeps working.) Errors:
 * MDT_EINVAL (map NULL, a flag this library does not know, or a function
 * already recorded), MDT_ENOMEM (never, today).
 * Thread-safety: a writer call. Async-signal-safe: no. */
int mdt_idmap_set_flags(mdt_idmap *map, unsigned flags);

/* Set or clear (fn NULL) the miss callback. Does nothing when called from
 * an mdt_idmap_module_each() callback (the error record says so).
 * Thread-safety: a writer call. Async-signal-safe: no. */
void mdt_idmap_set_miss(mdt_idmap *map, mdt_idmap_miss_fn fn, void *payload);

/* The next value of the map's own sequence counter (1, 2, ...), for callers
 * that do not keep one. Lock-free.
 * Thread-safety: any thread. Async-signal-safe: yes. */
uint64_t mdt_idmap_next_seq(mdt_idmap *map);

/* ---- Writers: modules, AppDomains, assemblies ------------------------- */
/* All writer calls: thread-safety: any thread, serialized internally;
 * async-signal-safe: no (they lock a mutex and allocate). Errors:
 * MDT_EINVAL (id 0, NULL info, seq 0 or >= 2^63, bad shape; or the calling
 * thread holds the map's mutex, i.e. the call comes from an
 * mdt_idmap_module_each() callback: detected, never a deadlock),
 * MDT_ENOMEM (the record is unchanged; an index may lack it). */

/* ModuleLoadFinished (or an EnumModules item, with the enumeration's seq).
 * A load that conflicts with a live record (different MVID, image,
 * AppDomain, assembly or identity) and is newer replaces it as a new
 * incarnation, invalidating what the old one contained. Rejected
 * (SUPERSEDED) when the module, its AppDomain or its assembly was unloaded
 * at or after `seq`.
 * Errors: MDT_EINVAL, MDT_ENOMEM (as for every writer call, above).
 * Thread-safety: writer (serialized). Async-signal-safe: no. */
int mdt_idmap_module_load(mdt_idmap *map, uintptr_t module_id, const mdt_idmap_module_info *info,
                          uint64_t seq);

/* ModuleUnloadStarted: the module and every class and function contained in
 * it become unknown (those loaded again after `seq` go on as new
 * incarnations: the attach rules above). Cost: proportional to the records that name the
 * module, except for a module holding at least 1/8 of the class and
 * function slots, whose unload scans both tables once (libmdtools/tokens/
 * README.md, "Dependents").
 * Errors: MDT_EINVAL, MDT_ENOMEM (as for every writer call, above).
 * Thread-safety: writer (serialized). Async-signal-safe: no. */
int mdt_idmap_module_unload(mdt_idmap *map, uintptr_t module_id, uint64_t seq);

/* AppDomainShutdownStarted: every module of that AppDomain is unloaded.
 * Errors: MDT_EINVAL, MDT_ENOMEM (as for every writer call, above).
 * Thread-safety: writer (serialized). Async-signal-safe: no. */
int mdt_idmap_appdomain_shutdown(mdt_idmap *map, uintptr_t appdomain, uint64_t seq);

/* AssemblyUnloadStarted (collectible assemblies): every module of that
 * assembly is unloaded.
 * Errors: MDT_EINVAL, MDT_ENOMEM (as for every writer call, above).
 * Thread-safety: writer (serialized). Async-signal-safe: no. */
int mdt_idmap_assembly_unload(mdt_idmap *map, uintptr_t assembly, uint64_t seq);

/* ---- Writers: classes, functions -------------------------------------- */
/* (Code ranges, their writers and the lookup by instruction pointer:
 * <mdtools/idmap_code.h>, which this header includes at its end.) */

/* ClassLoadFinished / GetClassIDInfo2 answer. `info->args` (nargs ClassIDs)
 * is copied. Rejected (SUPERSEDED) when its module or a type argument was
 * unloaded at or after `seq` (the class then counts as unloaded with it).
 * A prim given for a record without one is filled in; a different non-zero
 * prim is a different class. Type arguments the map does not know are kept
 * as IDs: their own unload takes this class along, but the unload of their
 * (unknown) module cannot.
 * Errors: MDT_EINVAL, MDT_ENOMEM (as for every writer call, above).
 * Thread-safety: writer (serialized). Async-signal-safe: no. */
int mdt_idmap_class_load(mdt_idmap *map, uintptr_t class_id, const mdt_idmap_class_info *info,
                         uint64_t seq);

/* ClassUnloadStarted: the class, functions owned by it and classes using it
 * as a type argument or element become unknown (those loaded again after
 * `seq` go on as new incarnations: the attach rules above).
 * Errors: MDT_EINVAL, MDT_ENOMEM (as for every writer call, above).
 * Thread-safety: writer (serialized). Async-signal-safe: no. */
int mdt_idmap_class_unload(mdt_idmap *map, uintptr_t class_id, uint64_t seq);

/* JITCompilationFinished / EnumJITedFunctions item / GetFunctionInfo2
 * answer. A later load with class_id filled in completes an earlier one with
 * 0. Rejected when its module, owning class or a type argument was unloaded
 * at or after `seq`.
 * Errors: MDT_EINVAL, MDT_ENOMEM (as for every writer call, above).
 * Thread-safety: writer (serialized). Async-signal-safe: no. */
int mdt_idmap_function_load(mdt_idmap *map, uintptr_t function_id,
                            const mdt_idmap_function_info *info, uint64_t seq);

/* FunctionUnloadStarted: the function and its code ranges become unknown
 * (a load of it after `seq` makes it a new incarnation with the ranges
 * added since that load: the attach rules above).
 * Errors: MDT_EINVAL, MDT_ENOMEM (as for every writer call, above).
 * Thread-safety: writer (serialized). Async-signal-safe: no. */
int mdt_idmap_function_unload(mdt_idmap *map, uintptr_t function_id, uint64_t seq);

/* ---- Writers: housekeeping --------------------------------------------- */

/* Wait until every lookup that started before this call has finished, then
 * free memory unlinked before it. After mdt_idmap_module_unload() +
 * mdt_idmap_synchronize(), no thread is still reading an answer about the
 * unloaded IDs from the map. Does nothing when called from an
 * mdt_idmap_module_each() callback (the error record says so).
 * Thread-safety: a writer call. Async-signal-safe: no (it waits). */
void mdt_idmap_synchronize(mdt_idmap *map);

/* The caller promises that no event or enumeration item with seq < `below`
 * will come any more (e.g. attach catch-up is over and every callback that
 * took a smaller seq has returned). Tombstones and history older than it are
 * dropped; later calls with seq < below are SUPERSEDED. Returns the number
 * of record tombstones dropped (modules, classes, functions; code
 * tombstones are dropped too, uncounted), or MDT_ENOMEM, or MDT_EINVAL (as
 * for every writer call).
 * Thread-safety: writer (serialized). Async-signal-safe: no. */
int mdt_idmap_retire(mdt_idmap *map, uint64_t below);

/* Fill *out. Thread-safety: a writer call. Async-signal-safe: no. */
void mdt_idmap_stats_get(mdt_idmap_stats *out, mdt_idmap *map);

/* ---- Readers ------------------------------------------------------------ */
/* All readers: thread-safety: any thread, concurrently with writers; they
 * never block, allocate or lock, and take a bounded number of steps. A
 * lookup racing with a change of the same ID answers either the state before
 * or after it (or MDT_ENOTFOUND while that ID is being rewritten). `gen` is 0
 * for "the current incarnation" or a generation from an earlier answer. */

/* Module by ModuleID. Errors: MDT_ENOTFOUND, MDT_EINVAL (out NULL).
 * Async-signal-safe: yes. */
int mdt_idmap_module_lookup(mdt_idmap_module_info *out, const mdt_idmap *map, uintptr_t module_id,
                            uint64_t gen);

/* Copy the module's path (NUL-terminated, cut to len - 1 bytes) into buf.
 * Returns the full length, or MDT_ENOTFOUND / MDT_EINVAL.
 * Async-signal-safe: yes. */
int mdt_idmap_module_path(char *buf, size_t len, const mdt_idmap *map, uintptr_t module_id,
                          uint64_t gen);

/* How many times module records have changed so far (a load applied, a
 * field filled in, a module gone by any unload). A mirror of the modules
 * (mdt_modset_mirror() in modset.h) compares it with the value it last saw
 * to skip work when nothing changed.
 * Async-signal-safe: yes. */
uint64_t mdt_idmap_module_changes(const mdt_idmap *map);

/* Called by mdt_idmap_module_each() for one live module; `info->path` is
 * NULL, `path` is the module's path or NULL; both live only during the
 * call. A non-zero return stops the walk. */
typedef int (*mdt_idmap_module_visit_fn)(void *payload, uintptr_t module_id,
                                         const mdt_idmap_module_info *info, const char *path);

/* Call fn for every live module, in no particular order, with the writer
 * mutex held: the walk sees one consistent state, and *changes (may be
 * NULL) is set to the mdt_idmap_module_changes() value of that state.
 * Lookups from fn are fine. What would take the mutex again on this thread
 * is detected (the mutex knows its owner) and refused instead of waiting
 * forever: writer calls and mdt_idmap_module_each() return MDT_EINVAL, a
 * *_fetch() that misses returns MDT_EINVAL without calling the miss
 * callback, mdt_idmap_set_miss(), mdt_idmap_synchronize() and
 * mdt_idmap_stats_get() do nothing (stats read as zero). Returns 0, fn's
 * non-zero return, or MDT_EINVAL (map or fn NULL, or called from fn).
 * Thread-safety: a writer call. Async-signal-safe: no. */
int mdt_idmap_module_each(uint64_t *changes, mdt_idmap *map, mdt_idmap_module_visit_fn fn,
                          void *payload);

/* Class by ClassID. Up to args_cap type arguments are copied to args_buf
 * (may be NULL with args_cap 0); out->args = args_buf, out->nargs = the true
 * count. Errors: MDT_ENOTFOUND, MDT_EINVAL. Async-signal-safe: yes. */
int mdt_idmap_class_lookup(mdt_idmap_class_info *out, uintptr_t *args_buf, uint32_t args_cap,
                           const mdt_idmap *map, uintptr_t class_id, uint64_t gen);

/* Function by FunctionID; arguments as for mdt_idmap_class_lookup().
 * Errors: MDT_ENOTFOUND, MDT_EINVAL. Async-signal-safe: yes. */
int mdt_idmap_function_lookup(mdt_idmap_function_info *out, uintptr_t *args_buf, uint32_t args_cap,
                              const mdt_idmap *map, uintptr_t function_id, uint64_t gen);

/* What one FunctionID stands for, with its module and owning class, in
 * one reader section (a profiler naming a frame reads once, not five
 * times): see mdt_idmap_function_desc. The three records agree: the
 * module and class answered are the incarnations the function named
 * while it lived (the function is read again after them; if it died
 * meanwhile, MDT_ENOTFOUND), a module or class unloaded meanwhile is
 * reported unknown. `gen` as for the lookups. args_buf may be NULL
 * with args_cap 0 (the counts are still set). The module's path is not
 * copied (mdt_idmap_module_path). Errors: MDT_ENOTFOUND (the function, of
 * that generation, is not known), MDT_EINVAL (out or map NULL, args_buf
 * NULL with args_cap > 0). Async-signal-safe: yes. */
int mdt_idmap_function_describe(mdt_idmap_function_desc *out, uintptr_t *args_buf,
                                uint32_t args_cap, const mdt_idmap *map, uintptr_t function_id,
                                uint64_t gen);

/* Reverse: the live ClassID for (module, TypeDef, type args) or for a shape
 * (module 0 or as loaded, shape, rank, args[0] = element). `key->gen` and
 * `key->prim` are ignored. *class_id and *gen (may be NULL) are set.
 * Errors: MDT_ENOTFOUND, MDT_EINVAL. Async-signal-safe: yes. */
int mdt_idmap_class_find(uintptr_t *class_id, uint64_t *gen, const mdt_idmap *map,
                         const mdt_idmap_class_info *key);

/* Reverse: the live FunctionID for (module, MethodDef, owning class, method
 * type args). The owning ClassID carries the class type arguments; use
 * mdt_idmap_class_find() for it first (key->class_id 0 finds functions
 * recorded without an owner). A function recorded with row 0 of the
 * MethodDef table (no metadata: a DynamicMethod, an IL stub) is never
 * found: all of them have the same key. Errors: MDT_ENOTFOUND,
 * MDT_EINVAL, MDT_EUNSUPPORTED (the map was made with
 * MDT_IDMAP_NO_FUNCTION_FIND). Async-signal-safe: yes. */
int mdt_idmap_function_find(uintptr_t *function_id, uint64_t *gen, const mdt_idmap *map,
                            const mdt_idmap_function_info *key);

/* Is some class of (module, TypeDef) known to be loaded, with any type
 * arguments? The guard before GetClassFromToken. Returns 1 (yes), 0 (no, or
 * not known), or MDT_EINVAL. Async-signal-safe: yes. */
int mdt_idmap_typedef_loaded(const mdt_idmap *map, uintptr_t module_id, uint32_t typedef_token);

/* Describe a ClassID as a tree of nodes (see mdt_idmap_type_node) for the
 * generics formatter: at most `cap` nodes are written, *count is set to the
 * number the whole tree needs (nesting is cut at 32 levels: deeper arguments
 * become UNKNOWN nodes). Errors: MDT_ENOTFOUND (the root is not known),
 * MDT_EUNSUPPORTED (the tree has more than 4096 nodes, which bounds a
 * signal handler's work: *count is then 4096 and the first min(cap, 4096)
 * nodes are written), MDT_EINVAL. Async-signal-safe: yes. */
int mdt_idmap_class_describe(mdt_idmap_type_node *nodes, size_t cap, size_t *count,
                             const mdt_idmap *map, uintptr_t class_id, uint64_t gen);

/* Write the portable descriptor of doc/names.md ("mvid:0xTOKEN<...>", primitive
 * names for classes marked prim, "__Canon", "T[]", "T[N]", "T*", "T&") into
 * buf (NUL-terminated, cut to len - 1 bytes). Returns the full length (as
 * snprintf does, at most INT32_MAX), or MDT_ENOTFOUND when the class, a
 * type argument or a module's MVID is not known, MDT_EUNSUPPORTED past 32
 * levels of nesting or 4096 nodes, MDT_EINVAL. Async-signal-safe: yes. */
int mdt_idmap_class_descriptor(char *buf, size_t len, const mdt_idmap *map, uintptr_t class_id,
                               uint64_t gen);

/* ---- Names (not async-signal-safe: they allocate) ---------------------- */

/* The name of a ClassID through the generics formatter (<mdtools/names.h>),
 * e.g. `System.Collections.Generic.List<System.__Canon>`; its module and its
 * type arguments' modules must have images. The string is allocated under
 * mem_ctx. `gen` 0 means the current incarnation. Errors: MDT_ENOTFOUND
 * (an ID is not known, or a module has no image), MDT_EINVAL, MDT_ENOMEM,
 * and those of naming the types in the images (mdt_type_name):
 * MDT_EBADIMAGE, MDT_ETRUNC, MDT_ENOHEAP, MDT_EUNSUPPORTED.
 * Not async-signal-safe. */
int mdt_idmap_class_name(void *mem_ctx, char **out, const mdt_idmap *map, uintptr_t class_id,
                         uint64_t gen, const struct mdt_name_opts *opts);
/* The name of a FunctionID: its MethodDef instantiated with the owning
 * class's and its own type arguments, e.g.
 * `MyClass<System.Int32>::Foo<System.Single>`; without a known owning class
 * the method prints uninstantiated. Errors as mdt_idmap_class_name:
 * MDT_ENOTFOUND, MDT_EINVAL, MDT_ENOMEM, MDT_EBADIMAGE, MDT_ETRUNC,
 * MDT_ENOHEAP, MDT_EUNSUPPORTED. Not async-signal-safe. */
int mdt_idmap_function_name(void *mem_ctx, char **out, const mdt_idmap *map, uintptr_t function_id,
                            uint64_t gen, const struct mdt_name_opts *opts);

/* ---- Readers with lazy catch-up --------------------------------------- */
/* As the lookups above (gen 0), but on a miss call the miss callback once
 * and look again. A miss on a thread that holds the map's mutex (inside an
 * mdt_idmap_module_each() callback, where the callback's writer calls could
 * never lock it) returns MDT_EINVAL and calls nothing. Errors: MDT_ENOTFOUND
 * (not known, also after the callback), MDT_EINVAL. Async-signal-safe: NO
 * (the callback calls the runtime and the writers). Thread-safety: any
 * thread. */
int mdt_idmap_module_fetch(mdt_idmap_module_info *out, mdt_idmap *map, uintptr_t module_id);
int mdt_idmap_class_fetch(mdt_idmap_class_info *out, uintptr_t *args_buf, uint32_t args_cap,
                          mdt_idmap *map, uintptr_t class_id);
int mdt_idmap_function_fetch(mdt_idmap_function_info *out, uintptr_t *args_buf, uint32_t args_cap,
                             mdt_idmap *map, uintptr_t function_id);

#ifdef __cplusplus
}
#endif

/* The code ranges' part of the API, for callers that include this header
 * only (it includes this one first). */
#include <mdtools/idmap_code.h>
#endif
