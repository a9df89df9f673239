/* mdinspect batch: what the three parts of the formats that need the
 * whole input share (aggregate.c collects the records, agg_speedscope.c
 * writes --speedscope, agg_top.c writes --top): the interned frames and
 * stacks, the profiles (a process, or a thread of one) and the live-heap
 * snapshots. Private to those three files. */
#ifndef MDB_AGGREGATE_INT_H
#define MDB_AGGREGATE_INT_H

#include "batch/batch.h"

struct sframe { /* a frame of the speedscope file, or a method of --top */
    const char *name;
    uint32_t name_len;
    const char *file;
    uint32_t line, column;
    uint64_t self, total;   /* --top: exclusive and inclusive counts */
    uint64_t bself, btotal; /* --top: the same in bytes (alloc records) */
    uint64_t stamp;         /* --top: last record counted in total */
    /* --top, astack records: a "TYPE <- METHOD" pair's objects and bytes
     * (aself, abself), a method's below it on the stacks (atotal,
     * abtotal), the last astack record counted in those */
    uint64_t aself, abself, atotal, abtotal, astamp;
};

/* A distinct stack of a profile (and slice): the unit --speedscope writes. */
struct stack {
    uint32_t n;
    uint32_t profile; /* its profile (a process, or a thread of one) */
    uint64_t slice;   /* its time slice (0 in a profile without threads) */
    uint64_t seq;     /* order of its first record */
    uint64_t weight;  /* the records' counts summed */
    uint32_t ids[];   /* [0] the profile, [1..2] the slice, then the frames root first */
};
#define HEAD 3 /* words of ids[] before the frames */

struct profile { /* --speedscope: a process, or a thread of one, that has records */
    const mdb_proc *proc;
    bool threaded; /* format 4: one thread */
    uint64_t tid;
    uint64_t total;
    int kind; /* MDB_THROW, MDB_WAIT, MDB_ASTACK: a process's throws, waits or sampled
               * allocations; else samples */
};

struct profile_key {
    uint32_t proc;
    uint32_t threaded; /* 1 a thread's samples; 0 a process's (2 its throws, 3 its waits) */
    uint64_t tid;
};

/* --top, heap records: a type of a process in its first and last
 * snapshots (GC numbers), and each process's first and last. */
struct heap_type {
    uint32_t proc; /* index into heap_procs */
    const char *name;
    uint32_t name_len;
    uint64_t first_gc, fcount, fbytes, last_gc, lcount, lbytes;
};
struct heap_proc {
    const mdb_proc *proc;
    uint64_t first_gc, first_ms, last_gc, last_ms;
};

struct mdb_aggregate {
    int format;
    mdb_pprof *pprof; /* --pprof: the profile (pprof.c) does the rest */
    unsigned top;
    mdb_table frames; /* key text -> id + 1 (as a pointer-sized integer) */
    struct sframe *f;
    size_t nf, capf;
    mdb_table stacks; /* ids -> struct stack */
    struct stack **s;
    size_t ns, caps;
    mdb_arena arena;
    uint64_t total, bytes, records;
    uint64_t atotal, abytes, arecords; /* astack records: estimates, apart */
    mdb_table heap;                    /* (process, type) -> heap_type + 1 */
    struct heap_type *ht;
    size_t nht, capht;
    struct heap_proc *hp;
    size_t nhp, caphp;
    unsigned kinds; /* 1 << kind of every record summed */
    struct profile *p;
    uint32_t np, capp;
    mdb_table profiles; /* struct profile_key -> profile + 1 */
    mdb_logctx *lc;     /* the thread names, at the end */
    double from_ms;     /* --from: where the threads' timelines start */
};

/* agg_speedscope.c: the speedscope file of everything collected. */
void mdb_agg_speedscope(mdb_aggregate *g, mdb_output *o);
/* agg_top.c: the --top tables of everything collected. */
void mdb_agg_top(mdb_aggregate *g, mdb_output *o);

#endif
