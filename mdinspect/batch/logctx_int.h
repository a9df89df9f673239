/* mdinspect batch: what the two files of the log context share (batch.h
 * has its interface): logctx.c scans blocks for the `#` lines, keeps the
 * processes, #module names and #thread lines; logctx_header.c reads a
 * header and a #stats line. The caps bound what a hostile log costs. */
#ifndef MDINSPECT_BATCH_LOGCTX_INT_H
#define MDINSPECT_BATCH_LOGCTX_INT_H

#include <pthread.h>

#include "batch/batch.h"

#define MAX_PROCS (1u << 20)       /* processes of one input */
#define MAX_FOLDERS 256            /* folders taken from headers */
#define MAX_MODNAMES (1u << 18)    /* modules named by #module lines */
#define MAX_TEXT 256               /* bytes kept of a command or module name */
#define MAX_REPORTED 100           /* logs without #stats named one by one */
#define MAX_THREADLINES (1u << 20) /* #thread lines kept, all processes */

struct modname {
    uint64_t lineno;
    uint32_t len;
    char text[]; /* "NAME VERSION" */
};

/* What one #thread line said (a list per thread of a process, newest
 * first). */
struct thread_line {
    struct thread_line *older;
    uint64_t lineno;
    mdb_thread_name n;
};

struct mdb_logctx {
    void *ctx;
    mdb_assemblies *a;
    bool folders_on;
    /* one thread at a time: the one that scans (run.c) */
    mdb_proc none; /* the lines before any header */
    mdb_proc *cur, *first;
    uint32_t nprocs;
    bool procs_full;
    mdb_table folders; /* folders met in headers (taken or not) */
    size_t nfolders;
    char **pending; /* folders to add before the block that named them */
    size_t npending, cappending;
    mdb_arena arena;
    /* shared */
    pthread_rwlock_t lock;
    mdb_table modnames; /* 16 bytes -> struct modname */
    size_t nmodnames;
    mdb_table threads; /* (process index, tid) -> struct thread_line, newest */
    size_t nthreadlines;
};

/* logctx_header.c: the process a header line starts, its fields read, now
 * the current one (NULL when MAX_PROCS are kept, or out of memory). */
mdb_proc *mdb_lc_new_proc(mdb_logctx *lc, const char *s, size_t n, uint64_t lineno);
/* A #stats line's fields into the process it closes. */
void mdb_lc_stats_line(mdb_proc *p, const char *s, size_t n);
/* A comma-separated list of folders (`frameworks=`, `folders=`,
 * `#frameworks`, `#folders`), or with `files` of single-file bundles
 * (`bundles=`, `#bundles`), each taken or not as a header's. */
void mdb_lc_folders(mdb_logctx *lc, const char *v, size_t vn, bool files);
/* A %XX-escaped value decoded into the arena (at most `max` bytes of it),
 * *len its length (NULL when out of memory). */
char *mdb_lc_unescape(mdb_arena *ar, const char *s, size_t n, size_t max, size_t *len);
/* A decimal number of at most 18 digits. */
bool mdb_lc_decimal(const char *s, size_t n, uint64_t *v);

#endif
