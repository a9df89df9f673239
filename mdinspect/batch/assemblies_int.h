/* mdinspect batch: what the two files of the modules share (assemblies.h
 * has their interface): assemblies.c finds and opens modules by path and by
 * MVID, assemblies_index.c walks the folders for MVIDs and keeps the
 * on-disk index. Everything here is under the assemblies' lock. */
#ifndef MDINSPECT_BATCH_ASSEMBLIES_INT_H
#define MDINSPECT_BATCH_ASSEMBLIES_INT_H

#include <stdio.h>
#include <sys/stat.h>

#include "batch/batch.h"

struct mdb_assemblies {
    void *ctx;
    pthread_mutex_t lock;
    uint32_t nmodules;
    char **paths; /* the user's, then those log headers name */
    size_t npaths, nuser, cappaths;
    size_t nwalked; /* paths[0, nwalked) are walked (in order: the first
                       file with an MVID wins) */
    bool recursive;
    bool walking_log; /* a log's folder: no subfolders, no warnings */
    const char *index;
    bool index_read;
    mdb_table by_path; /* path as written -> module */
    mdb_table by_mvid; /* 16 bytes -> module */
    mdb_table by_file; /* dev, inode -> module */
    mdb_table old;     /* the index read from disk: path -> struct entry */
    mdb_table dirs;    /* directories walked (dev, inode), against loops */
    mdb_table bundles; /* single-file apps PATH TOKEN lines named: path -> mdt_bundle */
    size_t nbundles;
    mdb_arena arena;
    bool changed;
    size_t nindexed, nscanned;
    FILE *newindex;
    char *newindex_path;
};

struct entry {
    uint8_t mvid[16];
    uint64_t size;
    int64_t mtime_ns;
    bool seen;
};

struct fileid {
    uint64_t dev, ino;
};

/* assemblies.c: a warning kept for this thread (the first one only), with
 * an error number or a reason. */
void mdb_asm_warn(mdb_assemblies *a, const char *fmt, const char *arg, int err);
void mdb_asm_warn2(mdb_assemblies *a, const char *fmt, const char *arg, const char *why);
/* The module of a file (by path, and by device and inode: one module for
 * every spelling of a file); NULL when out of memory. */
mdb_module *mdb_asm_module_for(mdb_assemblies *a, const char *path, size_t len,
                               const struct stat *st);
/* m has this MVID (the first module with an MVID keeps it). */
void mdb_asm_add_mvid(mdb_assemblies *a, mdb_module *m, const uint8_t mvid[16]);

/* assemblies_index.c: walk the paths not walked yet, in order (reading the
 * index first, the first time). */
void mdb_asm_walk_more(mdb_assemblies *a);

#endif
