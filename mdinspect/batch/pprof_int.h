/* What the two halves of --pprof share (pprof.c sums the records into
 * interned tables; pprof_write.c writes them as gzipped Profile messages):
 * the modes' sample types and the tables. */
#ifndef MDINSPECT_BATCH_PPROF_INT_H
#define MDINSPECT_BATCH_PPROF_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "batch/batch.h"

#define MAX_TYPES 4 /* sample types of one mode */
#define CHUNK 4096  /* items of one Profile message written at a time */

/* ------------------------------------------------------------ the modes */

typedef void values_fn(const mdb_proc *proc, const mdb_record *rec, int64_t *v);

/* What a log's mode measures. A record takes the row of its log's
 * `mode=` and its kind, else the first row of its kind (a log without a
 * header). A new mode (wall, exceptions, contention) is one row of
 * mdb_pprof_modes (pprof.c) and one more in MDB_PPROF_NMODES. */
struct mode_row {
    const char *mode; /* the header's mode= word */
    int kind;         /* the record kind it writes */
    struct {
        const char *type, *unit;
    } types[MAX_TYPES];
    unsigned ntypes;
    const char *period_type, *period_unit;
    values_fn *values;
    const char *preferred; /* the type pprof shows first (default_sample_type) */
};

/* Rows of mdb_pprof_modes. */
#define MDB_PPROF_NMODES 8
extern const struct mode_row mdb_pprof_modes[MDB_PPROF_NMODES];
/* The values of a sample log's record: samples and cpu nanoseconds. */
void mdb_pprof_cpu_values(const mdb_proc *proc, const mdb_record *rec, int64_t *v);

struct func { /* also its key, but start_line */
    int64_t name, system_name, filename;
    int64_t start_line;
};

struct mapping {
    int64_t filename, build_id;
};

struct loc { /* also its key */
    uint64_t func, mapping, address;
    int64_t line;
};

struct sample {
    const mdb_proc *proc;
    bool threaded; /* a format-4 record's: tid and slice labels */
    uint32_t slice;
    uint64_t tid;
    uint32_t mode;
    uint32_t n;
    uint64_t gc; /* a heap record's GC (0 for others) */
    int64_t v[MAX_TYPES];
    const uint32_t *locs; /* leaf first: the table's copy of the key's */
};

/* The key of a sample: its mode, its labels' source, then its locations. */
struct sample_key {
    uint32_t mode;
    uint32_t proc; /* the process's index: the "pid" label */
    /* Records of a thread and a time slice (format 4): a sample is one
     * stack of one thread in one slice; write_all() labels it "tid" (num),
     * "thread" (str: its name, when the log named the thread) and "slice"
     * (num, num_unit "milliseconds": the slice's start since the
     * process's). 0 for records without. */
    uint32_t threaded, slice;
    uint64_t tid;
    uint64_t gc;                   /* heap records: the GC of the snapshot */
    uint32_t locs[MDB_MAX_FRAMES]; /* location ids (fewer than 2^32: each is an
                                      entry of an array in memory) */
};

struct mdb_pprof {
    mdb_arena arena;
    mdb_table strings, funcs, maps, locs, samples;
    mdb_table known; /* a resolved frame's text -> its location id */
    struct pstr {
        const char *s;
        size_t len;
    } * str; /* by index: the table's copies */
    size_t nstr, capstr;
    struct func *fn;
    size_t nfn, capfn;
    struct mapping *mp;
    size_t nmp, capmp;
    struct loc *lc;
    size_t nlc, caplc;
    struct sample **s;
    size_t ns, caps;
    bool seen[MDB_PPROF_NMODES];
    uint64_t rate;         /* the rate of the first sample log, */
    bool rates_differ;     /* ... unless they differ */
    bool rate_unknown;     /* a sample log without rate= */
    const mdb_proc *first; /* the first process with records */
    mdb_logctx *logs;      /* the threads' names (#thread lines) */
};

/* The index of a NUL-terminated string in the string table. */
bool mdb_pprof_str(mdb_pprof *p, const char *s, int64_t *idx);

#endif
