/* mdinspect batch: turning logged tokens into names, source lines and flame
 * graphs (mdinspect(1), BATCH RESOLUTION). The shared types of
 * mdinspect/batch/: a plain filter from standard input to standard output,
 * one input line at a time, with no state carried between lines except
 * caches (so it splits across processes with any line-based job runner).
 *
 * The pieces, one file each:
 *   main.c        options, the loop, exit status
 *   table.c       the hash table and the arena every cache uses
 *   io.c          block reads of the input, the buffered output
 *   assemblies.c  modules by path and by MVID (the on-disk index), lazy opens
 *   modcache.c    per-thread caches in front of those lookups
 *   parse.h       hex tokens and MVIDs read a register at a time
 *   resolve.c     one frame's text -> name, status, file:line (cached)
 *   record.c      one line -> a record (header, stats, comment, stack, call,
 *                 alloc, plain MVID or PATH line, malformed)
 *   emit_text.c, emit_json.c, emit_folded.c   streaming formats
 *   aggregate.c   --speedscope and --top (distinct stacks and methods)
 *   progress.c    records/s and ETA on a terminal
 *   run.c         blocks of lines resolved by threads, written in order
 *   native.c      native frames named from ELF files (#elf lines, debug
 *                 files by build-id); elfsyms.c, one file's symbols (native.h)
 *
 * Memory: caches hold what the input touched (modules, distinct frames),
 * never the input itself; the frame cache starts over when it exceeds
 * MDB_FRAME_CACHE_MAX entries, so even endless distinct junk stays bounded.
 * Threads: one resolver (its caches and arenas) per thread; modules and
 * what they keep are shared as assemblies.c and resolve.c say. */
#ifndef MDINSPECT_BATCH_H
#define MDINSPECT_BATCH_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <mdtools/mdtools.h>

#define MDB_PROGNAME "mdinspect"
#define MDB_MAX_FRAMES 255              /* frames of one record (doc/profile-log.md) */
#define MDB_FRAME_CACHE_MAX (1u << 22)  /* distinct frames cached before starting over */
#define MDB_MAX_LINE (1u << 20)         /* longer input lines are malformed */

enum mdb_format { MDB_TEXT, MDB_JSON, MDB_FOLDED, MDB_SPEEDSCOPE, MDB_TOP };

/* ---------------------------------------------------------------- table.c */

/* A bump allocator for strings and cached records: chunks under one talloc
 * context, never freed one by one (mdb_arena_reset frees them all). */
typedef struct mdb_arena {
    void *ctx;
    char *p;
    size_t left;
    bool huge;  /* chunks of a huge page each (the frames a run keeps) */
} mdb_arena;

void mdb_arena_init(mdb_arena *a, void *ctx);
void *mdb_arena_alloc(mdb_arena *a, size_t n); /* 8-aligned; NULL when out of memory */
/* Where the next allocation starts, with at least n bytes free there (n at
 * most 256 KiB): write into it, then allocate what was written. NULL when
 * out of memory. */
void *mdb_arena_room(mdb_arena *a, size_t n);
char *mdb_arena_strndup(mdb_arena *a, const char *s, size_t n);
void mdb_arena_reset(mdb_arena *a);

/* An open-addressing hash table of (key bytes -> value pointer); keys are
 * copied into the table's arena. */
typedef struct mdb_slot {
    uint64_t hash;
    const char *key;
    uint32_t len;
    void *value;
} mdb_slot;

typedef struct mdb_table {
    mdb_slot *slots;
    size_t mask, n;
    mdb_arena keys;
    void *ctx;
} mdb_table;

uint64_t mdb_hash(const void *key, size_t len);
int mdb_table_init(mdb_table *t, void *ctx, size_t size_hint);
/* The value stored for a key (hash from mdb_hash), or NULL. */
void *mdb_table_get(const mdb_table *t, uint64_t hash, const void *key, size_t len);
/* The slot of a key, or NULL; its copy of the key stays where it is until
 * mdb_table_clear, however the table grows. */
const mdb_slot *mdb_table_slot(const mdb_table *t, uint64_t hash, const void *key, size_t len);
/* Store a value for a key that is not there. -1 when out of memory. */
int mdb_table_put(mdb_table *t, uint64_t hash, const void *key, size_t len, void *value);
void mdb_table_clear(mdb_table *t);

/* ------------------------------------------------------------------- io.c */

#define MDB_BLOCK (64u * 1024) /* bytes of input read for a thread at a time */

/* Whole lines of the input: the unit of work of a run's threads (run.c).
 * Usually many lines, each ending in '\n'; or, when `single`, one line
 * without it: the last line of the input when it has no newline, or a
 * line of MDB_MAX_LINE bytes or more, whose bytes are not kept (`cut`). */
typedef struct mdb_block {
    void *ctx;               /* where buf lives (grown for a long line) */
    char *buf;
    size_t len, cap;
    uint64_t first_lineno;   /* the number of its first line */
    uint64_t nlines;
    bool single, cut;
} mdb_block;

/* Reads blocks of the input (io.c). */
typedef struct mdb_reader {
    int fd;
    void *ctx;
    bool eof;
    char *carry;             /* the start of a line the last block did not end */
    size_t carry_len, carry_cap;
    uint64_t lineno;         /* lines handed out */
    uint64_t consumed;       /* bytes handed out */
} mdb_reader;

int mdb_reader_init(mdb_reader *rd, void *ctx, int fd);
int mdb_block_init(mdb_block *b, void *ctx);
/* The next lines of the input into b: what one read(2) brings (up to
 * MDB_BLOCK bytes), cut after its last newline, reading on only while b
 * holds no whole line. 1 with lines, 0 at the end, -1 on a read error or
 * out of memory. */
int mdb_read_block(mdb_reader *rd, mdb_block *b);
uint64_t mdb_count_newlines(const char *s, size_t n);

/* Output gathered in a buffer. When full it is written to fd, or handed
 * to `spill` (run.c: a thread's block output waits for its turn). */
typedef struct mdb_output {
    int fd;
    char *buf;
    size_t len, cap;
    bool failed;
    void (*spill)(struct mdb_output *o); /* writes buf[0, len); NULL: write to fd */
    void *arg;                           /* for spill */
} mdb_output;

int mdb_output_init(mdb_output *o, void *ctx, int fd);
void mdb_output_flush(mdb_output *o);
void mdb_out_slow(mdb_output *o, const void *p, size_t n);
/* write(2) all of p to o->fd, setting o->failed on an error. */
void mdb_write(mdb_output *o, const void *p, size_t n);
static inline void mdb_out(mdb_output *o, const void *p, size_t n)
{
    if (n <= o->cap - o->len) {
        __builtin_memcpy(o->buf + o->len, p, n);
        o->len += n;
    } else {
        mdb_out_slow(o, p, n);
    }
}
static inline void mdb_outc(mdb_output *o, char c)
{
    mdb_out(o, &c, 1);
}
void mdb_outs(mdb_output *o, const char *s);
void mdb_outu(mdb_output *o, uint64_t v);
/* s as a JSON string (quotes included); bytes that are not UTF-8 become
 * U+FFFD. */
void mdb_out_json_string(mdb_output *o, const char *s, size_t n);

/* ----------------------------------------------------------- assemblies.c */

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
    uint32_t id;            /* 0, 1, ... in order of creation: per-thread data */
    char *path;             /* as first named (arena) */
    uint8_t mvid[16];
    bool have_mvid;
    _Atomic uint8_t state;  /* MDB_MOD_UNTRIED, _OPEN, _FAILED (release/acquire) */
    mdt_image *img;         /* when open */
    char *open_error;       /* why it did not open */
    mdt_pdb *pdb;           /* its portable PDB, looked for at open, or NULL */
    char *_Atomic *docs;    /* Document names of the PDB, filled on use (CAS) */
    const char *assembly;   /* simple name of its assembly ("" unknown) */
    const char *name;       /* Module row name */
    mdb_rowframes *_Atomic frames[MDT_TABLE_MAX]; /* resolve.c: plain frames by table, row */
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
/* Statistics for --verbose: files indexed, files opened to read an MVID. */
void mdb_assemblies_stats(const mdb_assemblies *a, size_t *indexed, size_t *scanned);

/* ------------------------------------------------------------- modcache.c */

/* Direct-mapped caches of the module of a path and of an MVID, in front of
 * mdb_module_by_path and mdb_module_by_mvid (one per thread). */
typedef struct mdb_modcache mdb_modcache;
mdb_modcache *mdb_modcache_new(void *ctx, mdb_assemblies *a);
mdb_module *mdb_modcache_path(mdb_modcache *c, const char *path, size_t len);
mdb_module *mdb_modcache_mvid(mdb_modcache *c, const uint8_t mvid[16]);
/* The same, from the cache alone: NULL when it does not hold the key. */
mdb_module *mdb_modcache_peek_path(const mdb_modcache *c, const char *path, size_t len);
mdb_module *mdb_modcache_peek_mvid(const mdb_modcache *c, const uint8_t mvid[16]);

/* -------------------------------------------------------------- resolve.c */

enum mdb_status {
    MDB_OK = 0,
    MDB_SPECIAL,          /* native, unmanaged, dynamic, stub, unknown:REASON */
    MDB_UNKNOWN_MVID,     /* "unknown MVID" */
    MDB_UNKNOWN_FILE,     /* "unknown file": a PATH that does not open */
    MDB_NO_SUCH_ROW,      /* "no such row" */
    MDB_BAD_TOKEN,        /* "bad token" */
    MDB_BAD_DESCRIPTOR,   /* "bad descriptor" */
    MDB_BAD_FRAME,        /* "bad frame": unreadable frame text */
    MDB_BAD_METADATA      /* "bad metadata": the row exists but its name does not read */
};

const char *mdb_status_text(int status);

/* A resolved frame, cached by its text. Strings live in the cache's arena. */
/* A resolved frame. The fields a line met again reads (status, text) come
 * last, next to the name, which its arena puts right after the frame: a
 * frame out of cache costs two adjacent cache lines (MDB_FRAME_HOT). */
typedef struct mdb_frame {
    union {                 /* by status (one field: frames stay 96 bytes in text runs) */
        const char *detail; /* unresolved: what went wrong (may be NULL) */
        const char *meta;   /* MDB_OK, JSON runs: the metadata name (doc/names.md) of a
                               frame that names a type or member (NULL otherwise; may be
                               `name` itself; mdb_no_meta when it could not be made) */
    };
    mdb_module *mod;       /* NULL for special frames and unknown modules */
    const char *file;      /* source document, NULL when unknown */
    uint32_t token;
    uint32_t il;
    uint32_t line, column; /* 0 when unknown */
    uint32_t id;           /* aggregate.c: interned id + 1 (0 = none yet) */
    uint32_t method_id;    /* aggregate.c: method (name) id + 1 */
    bool has_il;
    bool lasting;          /* kept by its module, never trimmed */
    uint32_t json_len;
    const char *json;      /* JSON members of the frame, without braces and without
                              the IL offset, which the record keeps (made with
                              the frame when the run prints JSON) */
    const char *name;      /* full-style name; the special word; NULL when unresolved */
    uint32_t name_len;
    uint32_t text_len;
    const char *text;      /* text form: NAME or NAME (FILE:LINE) or [special] */
    uint8_t status;        /* enum mdb_status */
} mdb_frame;

/* A frame's `meta` when its metadata name could not be made (JSON null). */
extern const char mdb_no_meta[];

/* Ask for the cache lines a frame met again is read from (MDB_FRAME_HOT). */
static inline void mdb_frame_prefetch(const mdb_frame *f)
{
    __builtin_prefetch((const char *)f + 64);
    __builtin_prefetch((const char *)f + 128);
}

typedef struct mdb_resolver mdb_resolver;

/* A resolver for one thread; `want_json`: the run prints JSON (frames get
 * their JSON form when made). */
mdb_resolver *mdb_resolver_new(void *ctx, mdb_assemblies *a, bool want_json);
/* A profiler-log frame: `mvid:token{..}<..>@il` or a special word; *il
 * and *has_il get its IL offset (frames are shared by every offset that
 * gives the same answer, so the offset travels with the record). */
const mdb_frame *mdb_resolve_logframe(mdb_resolver *r, const char *s, size_t n, uint32_t *il,
                                      bool *has_il);
/* An alloc record's type descriptor. */
const mdb_frame *mdb_resolve_type(mdb_resolver *r, const char *s, size_t n);
/* A plain line `MVID TOKEN [DESC...]` (fields separated by single spaces),
 * whose MVID the caller read already. */
const mdb_frame *mdb_resolve_plain_mvid(mdb_resolver *r, const char *s, size_t n,
                                        const uint8_t mvid[16]);
/* A plain line `PATH TOKEN`. */
const mdb_frame *mdb_resolve_plain_path(mdb_resolver *r, const char *s, size_t n);
/* The frame of a plain `PATH TOKEN` or `MVID TOKEN` line when this thread
 * met its module and another line named its row before, else NULL. Changes
 * nothing (no module is looked for or opened, no frame made) and does not
 * read the frame, only asks for it (mdb_frame_prefetch): run.c looks a few
 * lines ahead this way, so that their frames arrive from memory together. */
const mdb_frame *mdb_peek_plain(mdb_resolver *r, const char *s, size_t n);
/* Between records: start the cache over when it holds too much (frames of
 * earlier records become invalid). */
void mdb_resolver_trim(mdb_resolver *r);
/* The JSON members of a frame (valid until the resolver's next call). */
void mdb_frame_json(mdb_resolver *r, const mdb_frame *f, const char **json, uint32_t *len);

/* --------------------------------------------------------------- record.c */

enum mdb_kind {
    MDB_BLANK,
    MDB_HEADER,
    MDB_STATS,
    MDB_COMMENT,
    MDB_MALFORMED,
    MDB_PLAIN,
    MDB_STACK,
    MDB_CALL,
    MDB_ALLOC
};

typedef struct mdb_record {
    int kind;
    uint64_t count, bytes;
    bool exits;             /* a format-2 call record: the three below are set */
    uint64_t leaves, tailcalls, unwinds;
    const char *line;       /* the input line (borrowed) */
    size_t len;
    uint64_t lineno;
    const char *why;        /* MDB_MALFORMED: what is wrong (static or arena) */
    size_t nframes;
    const mdb_frame *frames[MDB_MAX_FRAMES]; /* leaf first */
    uint32_t il[MDB_MAX_FRAMES];             /* IL offset of each frame ... */
    bool has_il[MDB_MAX_FRAMES];             /* ... when the log gave one */
    bool unresolved;        /* some frame is unresolved */
} mdb_record;

void mdb_record_parse(mdb_resolver *r, mdb_record *rec, const char *line, size_t len,
                      uint64_t lineno, bool cut);

/* ---------------------------------------------------------------- emitters */

void mdb_emit_text(mdb_output *o, const mdb_record *rec);
void mdb_emit_json(mdb_output *o, mdb_resolver *r, const mdb_record *rec);
void mdb_emit_folded(mdb_output *o, const mdb_record *rec);

typedef struct mdb_aggregate mdb_aggregate;
mdb_aggregate *mdb_aggregate_new(void *ctx, int format, unsigned top);
/* false when out of memory */
bool mdb_aggregate_add(mdb_aggregate *g, const mdb_record *rec);
void mdb_aggregate_write(mdb_aggregate *g, mdb_output *o);

/* ------------------------------------------------------------- progress.c */

typedef struct mdb_progress mdb_progress;
/* NULL when stderr is not a terminal (or `on` is false). */
mdb_progress *mdb_progress_new(void *ctx, bool on, int input_fd);
void mdb_progress_tick(mdb_progress *p, uint64_t records, uint64_t consumed);
void mdb_progress_done(mdb_progress *p, uint64_t records);

/* ------------------------------------------------------------------ run.c */

typedef struct mdb_run_opts {
    int format;
    unsigned threads;       /* threads that resolve; 1: the main thread alone
                               (required for --speedscope and --top) */
    mdb_aggregate *agg;     /* --speedscope, --top */
    mdb_progress *prog;     /* may be NULL */
    struct mdb_natives *natives; /* the #elf lines and ELF files (native.h); may be NULL */
} mdb_run_opts;

typedef struct mdb_run_result {
    uint64_t records, unresolved;
    bool read_error, write_error, nomem;
} mdb_run_result;

/* Resolve standard input to standard output (and standard error for what
 * the format has no room for), in input order. What the threads cached
 * (the frames modules keep) goes under ctx. */
void mdb_run(void *ctx, mdb_assemblies *a, const mdb_run_opts *o, mdb_run_result *res);
/* The CPUs this process may run on. */
unsigned mdb_cpus(void);

/* ----------------------------------------------------------------- main.c */

/* `mdinspect batch ...`: argv[0] is "batch". Returns the exit status. */
int mdi_batch_main(int argc, char **argv);

#endif
