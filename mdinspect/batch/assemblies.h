/* mdinspect batch, assemblies.c and modcache.c: the modules the input
 * names, found by path or by MVID (the on-disk index, folders walked
 * lazily), opened once and shared by the threads of a run, with the
 * per-thread caches in front of those lookups (batch.h lists the pieces
 * of batch). */
#ifndef MDINSPECT_BATCH_ASSEMBLIES_H
#define MDINSPECT_BATCH_ASSEMBLIES_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mdtools/mdtools.h>

#include "batch/table.h"

/* The frames of a module's rows in one table (resolve.c): rows + 1 slots,
 * [0] unused, each NULL until a thread publishes the row's frame. */
typedef struct mdb_rowframes {
    uint32_t rows;
    struct mdb_frame *_Atomic f[];
} mdb_rowframes;

/* A module the input named. Modules are shared by the threads of a run:
 * what is set when the module is made or opened is written under the
 * assemblies' lock before `state` is published, and read afterwards
 * without it; the rest says how it is kept. */
typedef struct mdb_module {
    uint32_t id; /* 0, 1, ... in order of creation: per-thread data */
    char *path;  /* as first named (arena) */
    uint8_t mvid[16];
    bool have_mvid;
    _Atomic uint8_t state; /* MDB_MOD_UNTRIED, _OPEN, _FAILED (release/acquire) */
    mdt_image *img;        /* when open */
    char *open_error;      /* why it did not open */
    mdt_pdb *pdb;          /* its portable PDB, looked for at open, or NULL */
    char *_Atomic *docs;   /* Document names of the PDB, filled on use (CAS) */
    const char *assembly;  /* simple name of its assembly ("" unknown) */
    const char *name;      /* Module row name */
    mdb_rowframes *_Atomic frames[MDT_TABLE_MAX]; /* resolve.c: plain frames by table, row */
    /* a file of a single-file bundle ("BUNDLE!PATH"): opened from it */
    struct mdt_bundle *bundle;
    size_t bundle_entry;
} mdb_module;

enum { MDB_MOD_UNTRIED, MDB_MOD_OPEN, MDB_MOD_FAILED };

typedef struct mdb_assemblies mdb_assemblies;

/* Where MVIDs are looked up: `paths` (directories or files), walked lazily
 * on the first MVID asked for; `index` (may be NULL) the on-disk index to
 * reuse and refresh. */
mdb_assemblies *mdb_assemblies_new(void *ctx, char **paths, size_t npaths, bool recursive,
                                   const char *index);
/* The functions below may be called by any thread: they take the
 * assemblies' lock where they touch what is shared. */

/* The module of an MVID (32 hex digits), or NULL when none of the
 * assemblies has it. */
mdb_module *mdb_module_by_mvid(mdb_assemblies *a, const uint8_t mvid[16]);
/* The module of a file named by the input (opened on first use); NULL
 * when no such file exists (errno set) or out of memory. *key (when key is
 * not NULL) gets a lasting copy of the path. */
mdb_module *mdb_module_by_path(mdb_assemblies *a, const char *path, size_t len, const char **key);
/* Open a module's image and look for its PDB (once); false when it does
 * not open. */
bool mdb_module_open(mdb_assemblies *a, mdb_module *m);
static inline bool mdb_module_opened(mdb_assemblies *a, mdb_module *m)
{
    uint8_t st = atomic_load_explicit(&m->state, memory_order_acquire);
    return st == MDB_MOD_OPEN || (st == MDB_MOD_UNTRIED && mdb_module_open(a, m));
}
/* The name of a Document row of the module's PDB, or NULL. Names are made
 * once, under `ctx` (which must live as long as the module), by the first
 * thread that asks. */
const char *mdb_module_document(void *ctx, mdb_module *m, uint32_t doc);
/* The index could not be written or read, a folder not walked: the
 * message to warn with once, or NULL. A warning is kept for the thread
 * whose call caused it. */
const char *mdb_assemblies_warning(mdb_assemblies *a);
/* Whether a warning waits for this thread (a load: cheap enough for every
 * line). */
bool mdb_assemblies_has_warning(const mdb_assemblies *a);
/* The 16 bytes of #GUID as MVID text (32 lower-case hex digits,
 * doc/names.md; parse.h reads it). */
void mdb_format_mvid(char out[33], const uint8_t mvid[16]);
/* For mdt_desc_parse. */
int mdb_mvid_lookup(void *payload, const mdt_image **img, const uint8_t mvid[16]);
/* Search a folder too, after those given (a folder a log's header names:
 * walked without subfolders, at most 65536 of its entries, silently when
 * it cannot be read). */
void mdb_assemblies_add_folder(mdb_assemblies *a, const char *path);
/* At the end of the run: write the index (when anything changed). */
void mdb_assemblies_finish(mdb_assemblies *a);
/* Statistics for --verbose: files indexed, files opened to read an MVID. */
void mdb_assemblies_stats(const mdb_assemblies *a, size_t *indexed, size_t *scanned);

/* ------------------------------------------------------------- modcache.c */

/* Direct-mapped caches of the module of a path and of an MVID, in front of
 * mdb_module_by_path and mdb_module_by_mvid (one per thread). */
typedef struct mdb_modcache mdb_modcache;
mdb_modcache *mdb_modcache_new(void *ctx, mdb_assemblies *a);
mdb_module *mdb_modcache_path(mdb_modcache *c, const char *path, size_t len);
mdb_module *mdb_modcache_mvid(mdb_modcache *c, const uint8_t mvid[16]);
/* The same from the cache alone: plain.h (inlined where a line is met). */

#endif
