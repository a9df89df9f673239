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
 *   files.c       opening what the input names: regular files only, never blocking,
 *                 images mapped after their first bytes are checked
 *   assemblies.c  modules by path and by MVID (the on-disk index), lazy opens
 *   modcache.c    per-thread caches in front of those lookups
 *   parse.h       hex tokens and MVIDs read a register at a time
 *   resolve.c     one frame's text -> name, status, file:line (cached)
 *   ilinsn.c      --il: the instruction at a frame's IL offset (<mdtools/il.h>)
 *   record.c      one line -> a record (header, stats, comment, stack, call,
 *                 alloc, plain MVID or PATH line, malformed)
 *   logctx.c      the processes of the input (headers, #stats), the folders
 *                 headers name, #module names: read by the main thread
 *   emit_text.c, emit_json.c, emit_folded.c   streaming formats
 *   aggregate.c   --speedscope and --top (distinct stacks and methods)
 *   progress.c    records/s and ETA on a terminal
 *   run.c         blocks of lines resolved by threads, written in order
 *   native.c      native frames named from ELF files (#elf lines, debug
 *                 files by build-id); elfsyms.c, one file's symbols (native.h)
 *
 * Memory: caches hold what the input touched (modules, distinct frames),
 * never the input itself, within a budget in bytes for all threads
 * together (mdb_budget, --cache-mb): a thread's caches start over when its
 * share is full, and modules stop keeping new frames when theirs is, so
 * even endless distinct junk stays bounded.
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
#define MDB_MAX_FRAMES 255      /* frames of one record (doc/profile-log.md) */
#define MDB_MAX_LINE (1u << 20) /* longer input lines are malformed */

enum mdb_format { MDB_TEXT, MDB_JSON, MDB_FOLDED, MDB_SPEEDSCOPE, MDB_TOP, MDB_PPROF };

/* ---------------------------------------------------------------- table.c */

/* A bump allocator for strings and cached records: chunks under one talloc
 * context, never freed one by one (mdb_arena_reset frees them all). */
typedef struct mdb_arena {
    void *ctx;
    char *p;
    size_t left;
    bool huge;              /* chunks of a huge page each (the frames a run keeps) */
    size_t bytes;           /* bytes of its chunks */
    _Atomic size_t *shared; /* when not NULL: also counts its chunks' bytes here */
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
/* Empty the table and give back its memory (its slots shrink to the size
 * it started with). -1 when out of memory (the table is then unusable). */
int mdb_table_reset(mdb_table *t);
/* The bytes a table holds: its slots and its keys. */
size_t mdb_table_bytes(const mdb_table *t);

/* How much the caches of a run may hold (mdinspect(1), --cache-mb): half
 * for the frames modules keep (shared by the threads), half for the
 * threads' own caches (frames cached by their text, type names), which
 * each thread starts over when its share is full. */
typedef struct mdb_budget {
    size_t total;
    size_t kept_max;     /* frames kept by modules, all threads together */
    _Atomic size_t kept; /* ... held now (chunks of the threads' arenas) */
    size_t thread_max;   /* each thread's own caches */
} mdb_budget;

/* The default: 1/8 of the memory this process may use (the machine's, or
 * its cgroup's limit when lower), between 64 MiB and 4 GiB. */
size_t mdb_default_cache_bytes(void);
void mdb_budget_init(mdb_budget *b, size_t total, unsigned threads);

/* ------------------------------------------------------------------- io.c */

#define MDB_BLOCK (64u * 1024) /* bytes of input read for a thread at a time */

/* Whole lines of the input: the unit of work of a run's threads (run.c).
 * Usually many lines, each ending in '\n'; or, when `single`, one line
 * without it: the last line of the input when it has no newline, or a
 * line of MDB_MAX_LINE bytes or more, whose bytes are not kept (`cut`). */
struct mdb_proc;

/* A line of a block where a process starts (logctx.c). */
typedef struct mdb_event {
    uint64_t lineno;
    struct mdb_proc *proc; /* the process of this line and those after it */
    bool split;            /* the line is a log cut short, the header follows */
} mdb_event;

typedef struct mdb_block {
    void *ctx; /* where buf lives (grown for a long line) */
    char *buf;
    size_t len, cap;
    uint64_t first_lineno; /* the number of its first line (run.c sets it: block_base) */
    uint64_t nlines;       /* its lines, when `counted` */
    bool counted;          /* a single line is; run.c counts the others' */
    bool single, cut;
    struct mdb_proc *proc; /* the process of its first line (logctx.c) */
    mdb_event *ev;         /* where other processes start in it, by line */
    size_t nev, capev;
} mdb_block;

/* Reads blocks of the input (io.c). */
typedef struct mdb_reader {
    int fd;
    void *ctx;
    bool eof;
    char *carry; /* the start of a line the last block did not end */
    size_t carry_len, carry_cap;
    uint64_t consumed; /* bytes handed out */
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

/* ---------------------------------------------------------------- files.c */

struct stat;
/* Open a path for reading only when it is a regular file (mdt_file_open(3):
 * a FIFO or a device never blocks the run); the descriptor, or -1 with why
 * (whylen bytes) saying why not, in batch's words. */
int mdb_open_regular(const char *path, struct stat *st, char *why, size_t whylen);
/* Open the image of a file: refused unless a regular file whose first
 * bytes are an image's; mapped, so that only what the library reads of it
 * is read. 0, or -1 with why. */
int mdb_image_open(void *ctx, mdt_image **out, const char *path, char *why, size_t whylen);
/* A module's portable PDB, embedded or beside `path` (the CodeView entry's
 * file name in its folder, then the path with `.pdb`), each file checked
 * as mdb_open_regular does before the library reads it. 0, or -1. */
int mdb_pdb_open(void *ctx, mdt_pdb **out, const mdt_image *img, const char *path);
/* A regular file of at most `max` bytes, read whole and NUL-terminated;
 * NULL with why. */
char *mdb_read_small_file(void *ctx, const char *path, size_t max, size_t *len, char *why,
                          size_t whylen);

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
/* The same, from the cache alone: NULL when it does not hold the key. */
mdb_module *mdb_modcache_peek_path(const mdb_modcache *c, const char *path, size_t len);
mdb_module *mdb_modcache_peek_mvid(const mdb_modcache *c, const uint8_t mvid[16]);

/* -------------------------------------------------------------- resolve.c */

enum mdb_status {
    MDB_OK = 0,
    MDB_SPECIAL,        /* native, unmanaged, dynamic, stub, unknown:REASON */
    MDB_UNKNOWN_MVID,   /* "unknown MVID" */
    MDB_UNKNOWN_FILE,   /* "unknown file": a PATH that does not open */
    MDB_NO_SUCH_ROW,    /* "no such row" */
    MDB_BAD_TOKEN,      /* "bad token" */
    MDB_BAD_DESCRIPTOR, /* "bad descriptor" */
    MDB_BAD_FRAME,      /* "bad frame": unreadable frame text */
    MDB_BAD_METADATA    /* "bad metadata": the row exists but its name does not read */
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
    mdb_module *mod;  /* NULL for special frames and unknown modules */
    const char *file; /* source document, NULL when unknown */
    uint32_t token;
    uint32_t il;
    uint32_t line, column; /* 0 when unknown */
    uint32_t id;           /* aggregate.c: interned id + 1 (0 = none yet) */
    uint32_t method_id;    /* aggregate.c: method (name) id + 1 */
    bool has_il;
    bool lasting; /* kept by its module, never trimmed */
    uint32_t json_len;
    const char *json; /* JSON members of the frame, without braces and without
                         the IL offset, which the record keeps (made with
                         the frame when the run prints JSON) */
    union {
        const char *name;            /* full-style name; the special word */
        const uint8_t *unknown_mvid; /* MDB_UNKNOWN_MVID: the 16 bytes of the MVID not
                                        found, or NULL (other unresolved frames: NULL) */
    };
    uint32_t name_len;
    uint32_t text_len;
    const char *text; /* text form: NAME or NAME (FILE:LINE) or [special] */
    uint8_t status;   /* enum mdb_status */
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
 * their JSON form when made); its caches stay within `budget` (shared by
 * the run's resolvers; NULL: unbounded). */
mdb_resolver *mdb_resolver_new(void *ctx, mdb_assemblies *a, bool want_json, mdb_budget *budget);
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
/* Between records: start the cache over when it holds more than the
 * thread's share of the budget (frames of earlier records become invalid). */
void mdb_resolver_trim(mdb_resolver *r);
/* --signatures: methods named with their parameter types (before the
 * first frame is resolved). */
void mdb_resolver_set_signatures(mdb_resolver *r, bool on);
/* --il: a frame with an IL offset also shows the instruction there (text
 * and JSON runs; before the first frame is resolved). */
void mdb_resolver_set_il(mdb_resolver *r, bool on);
/* ilinsn.c: the instruction of MethodDef `method` of img that holds IL
 * offset `il`, as `IL_0040: call ...` (full style) in buf; its length, 0
 * when there is none (no body, past the code, damaged: the library's
 * error cleared). */
size_t mdb_il_text(char *buf, size_t size, const mdt_image *img, uint32_t method, uint32_t il);
/* How many times this resolver started its caches over. */
uint64_t mdb_resolver_resets(const mdb_resolver *r);
/* Start the cache over now (folders were added: frames of modules not
 * found may be found). */
void mdb_resolver_forget(mdb_resolver *r);
/* The JSON members of a frame (valid until the resolver's next call). */
void mdb_frame_json(mdb_resolver *r, const mdb_frame *f, const char **json, uint32_t *len);

/* --------------------------------------------------------------- record.c */

enum mdb_kind {
    MDB_BLANK,
    MDB_HEADER,
    MDB_STATS,
    MDB_MODULE, /* #module MVID NAME VERSION */
    MDB_COMMENT,
    MDB_MALFORMED,
    MDB_PLAIN,
    MDB_STACK,
    MDB_CALL,
    MDB_ALLOC,
    MDB_THROW,  /* throw COUNT TID SLICE TYPE FRAMES: frames[0] is the type */
    MDB_WAIT,   /* wait COUNT NANOS TID SLICE FRAMES: bytes holds the nanoseconds */
    MDB_ASTACK, /* a sampled allocation: its type, then its stack */
    MDB_HEAP    /* live objects of a type after a gen2 GC */
};

typedef struct mdb_record {
    int kind;
    uint64_t count, bytes; /* bytes: an alloc record's; a wait record's nanoseconds */
    bool exits;            /* a format-2 call record: the three below are set */
    bool threaded;         /* a format-4 stack record: tid and slice are set */
    uint64_t tid, slice;   /* its thread (the kernel's ID) and time slice */
    uint64_t gc, ms;       /* a heap record: the GC's number, the walk's time (ms) */
    uint64_t leaves, tailcalls, unwinds;
    const char *line; /* the input line (borrowed) */
    size_t len;
    uint64_t lineno;
    const char *why; /* MDB_MALFORMED: what is wrong (static or arena) */
    size_t nframes;
    const mdb_frame *frames[MDB_MAX_FRAMES]; /* leaf first */
    uint32_t il[MDB_MAX_FRAMES];             /* IL offset of each frame ... */
    bool has_il[MDB_MAX_FRAMES];             /* ... when the log gave one */
    bool unresolved;                         /* some frame is unresolved */
} mdb_record;

/* How an input line ended: with a newline; not at all, being MDB_MAX_LINE
 * bytes or more (its bytes are not kept); or at the end of the input,
 * without a newline (a log line is then cut short). */
enum mdb_line_end {
    MDB_LINE_ENDED,
    MDB_LINE_LONG,
    MDB_LINE_UNENDED,
    MDB_LINE_SPLIT /* a log line cut short, another log's header after it */
};

/* Whether a line is one an mdprofile log holds, or the start of one (a
 * record keyword cut short). */
bool mdb_log_line(const char *s, size_t n);

/* Parse one line (without its newline and a CR before it) into rec,
 * resolving its frames through r. `ending` is an enum mdb_line_end. */
void mdb_record_parse(mdb_resolver *r, mdb_record *rec, const char *line, size_t len,
                      uint64_t lineno, int ending);

/* ---------------------------------------------------------------- emitters */

/* ----------------------------------------------------------------- logctx.c */

/* A process of the input: the lines from its header to the next header. */
typedef struct mdb_proc {
    struct mdb_proc *next;
    uint32_t index;  /* 1, 2, ... in input order; 0: lines before any header */
    uint64_t lineno; /* of its header */
    bool has_pid;
    uint64_t pid;
    const char *cmd;   /* `cmd=` decoded (control bytes as '?'), or NULL */
    uint64_t slice_ms; /* `slice=` (a record's time slice in ms), 1000 when absent */
    bool stats;        /* its #stats line was read (main thread) */
    /* what --pprof says of the profile (pprof.c): from the header, */
    char mode[96]; /* `mode=`: a comma list (sample, calls, alloc, ...), "" when absent */
    uint64_t rate; /* `rate=` in Hz (1 to 10^9), 0 when absent: --speedscope
                    * then weighs a sample 1 ms (1000 Hz), --pprof says so */
    bool has_start;
    int64_t start_ns;      /* `start=` as ns since the epoch (UTC) */
    uint64_t alloc_sample; /* `alloc_sample=`: an alloc log with sampled stacks (astack
                            * records), 0 when absent */
    /* and from the #stats line */
    bool has_duration;
    uint64_t duration_ms; /* `duration_ms=` */
} mdb_proc;

typedef struct mdb_logctx mdb_logctx;

/* `folders_on`: search the folders headers name (framework=, frameworks=). */
mdb_logctx *mdb_logctx_new(void *ctx, mdb_assemblies *a, bool folders_on);
/* The pseudo-process of the lines before any header. */
const mdb_proc *mdb_logctx_none(const mdb_logctx *lc);
/* Main thread, each block in input order before it is resolved: note
 * where processes start (b->proc, b->ev), #stats and #module lines.
 * `hash` is the block's first '#' (memchr), NULL when it has none; when it
 * has one, b->first_lineno must be set. 1 when a header named folders not
 * searched yet: the caller lets every earlier block finish, then calls
 * mdb_logctx_commit (so a line never sees a folder named after it, however
 * many threads run). 0, or -1 when out of memory. */
int mdb_logctx_scan(mdb_logctx *lc, mdb_block *b, const char *hash);
void mdb_logctx_commit(mdb_logctx *lc);
/* The name and version a #module line before line `lineno` gave the
 * module of an MVID ("System.Linq 10.0.0.0"), or NULL. Any thread. */
const char *mdb_logctx_module_name(mdb_logctx *lc, const uint8_t mvid[16], uint64_t lineno,
                                   uint32_t *len);
/* What the last `#thread TID ...` line of a process before line `lineno`
 * said of a thread: its name (`name=`, else `os=`; NULL when none or no
 * line), its kernel name (`os=`, or NULL). Any thread; UINT64_MAX: the
 * last line of all. */
typedef struct mdb_thread_name {
    const char *name, *os;
    uint32_t name_len, os_len;
} mdb_thread_name;
bool mdb_logctx_thread(mdb_logctx *lc, const mdb_proc *proc, uint64_t tid, uint64_t lineno,
                       mdb_thread_name *out);
/* Whether a process's `mode=` list holds `word` (a log of `--mode
 * sample,exceptions` holds "sample" and "exceptions"). */
bool mdb_proc_has_mode(const mdb_proc *proc, const char *word);
/* The processes, in input order (NULL: no header). */
const mdb_proc *mdb_logctx_procs(const mdb_logctx *lc);
/* Warn on f about each process whose log has no #stats (of the process
 * `pid` alone when pid_only); how many. */
uint64_t mdb_logctx_report(const mdb_logctx *lc, FILE *f, bool pid_only, uint64_t pid);

/* ---------------------------------------------------------------- emitters */

/* A frame's text form as printed for a record at line `lineno`: f->text,
 * or for a frame whose module was not found and that a #module line
 * named, `[unresolved: unknown MVID (NAME VERSION)]` in buf. */
const char *mdb_frame_text_named(const mdb_frame *f, mdb_logctx *lc, uint64_t lineno, char *buf,
                                 size_t size, uint32_t *len); /* emit_text.c: the rare case */
static inline const char *mdb_frame_text(const mdb_frame *f, mdb_logctx *lc, uint64_t lineno,
                                         char *buf, size_t size, uint32_t *len)
{
    if (__builtin_expect(f->status == MDB_UNKNOWN_MVID, 0) && f->unknown_mvid)
        return mdb_frame_text_named(f, lc, lineno, buf, size, len);
    *len = f->text_len;
    return f->text;
}
#define MDB_TEXT_ROOM 384 /* a #module name (256 bytes at most) and the words around it */

void mdb_emit_text(mdb_output *o, mdb_logctx *lc, const mdb_record *rec);
void mdb_emit_json(mdb_output *o, mdb_resolver *r, mdb_logctx *lc, const mdb_proc *proc,
                   const mdb_record *rec);
void mdb_emit_folded(mdb_output *o, mdb_logctx *lc, const mdb_record *rec);

/* --thread, --from, --to (run.c): which records --top, --folded and
 * --speedscope keep. Records without a thread and slice (other kinds,
 * logs before format 4) are left out while a filter is on. */
typedef struct mdb_filter {
    bool on;
    const char *thread; /* a name (name= or os=) or a TID; NULL: any */
    bool has_tid;
    uint64_t tid; /* `thread` as a number */
    bool has_from, has_to;
    double from, to;  /* seconds since the process's start: a slice is kept when
                         its start lies in [from, to) */
    const char *type; /* --type: alloc and astack records of this type only */
} mdb_filter;
bool mdb_filter_keep(const mdb_filter *f, mdb_logctx *lc, const mdb_proc *proc,
                     const mdb_record *rec);

typedef struct mdb_aggregate mdb_aggregate;
/* from_s: --from in seconds (0 none), where the threads' timelines start */
mdb_aggregate *mdb_aggregate_new(void *ctx, int format, unsigned top, double from_s);
/* false when out of memory */
bool mdb_aggregate_add(mdb_aggregate *g, mdb_logctx *lc, const mdb_proc *proc,
                       const mdb_record *rec);
void mdb_aggregate_write(mdb_aggregate *g, mdb_output *o);

/* pprof.c: --pprof (through mdb_aggregate_*: records come in input order). */
typedef struct mdb_pprof mdb_pprof;
mdb_pprof *mdb_pprof_new(void *ctx);
/* false when out of memory */
bool mdb_pprof_add(mdb_pprof *p, mdb_logctx *lc, const mdb_proc *proc, const mdb_record *rec);
/* The index of a string in the profile's string table; false when out of
 * memory. */
bool mdb_pprof_string(mdb_pprof *p, const char *s, size_t n, int64_t *idx);
/* The gzipped profile to o (o->failed set when it could not be made). */
void mdb_pprof_write(mdb_pprof *p, mdb_output *o);

/* ------------------------------------------------------------- progress.c */

typedef struct mdb_progress mdb_progress;
/* NULL when stderr is not a terminal (or `on` is false). */
mdb_progress *mdb_progress_new(void *ctx, bool on, int input_fd);
void mdb_progress_tick(mdb_progress *p, uint64_t records, uint64_t consumed);
void mdb_progress_done(mdb_progress *p, uint64_t records);

/* ------------------------------------------------------------------ run.c */

typedef struct mdb_run_opts {
    int in_fd, out_fd, err_fd; /* standard input, output and error by default */
    int format;
    mdb_logctx *lc;
    bool pid_only; /* --pid: only the lines of the process `pid` */
    uint64_t pid;
    unsigned threads;            /* threads that resolve; 1: the main thread alone
                                    (required for --speedscope and --top) */
    mdb_aggregate *agg;          /* --speedscope, --top */
    mdb_progress *prog;          /* may be NULL */
    struct mdb_natives *natives; /* the #elf lines and ELF files (native.h); may be NULL */
    mdb_budget *budget;          /* may be NULL (unbounded) */
    bool signatures;             /* --signatures */
    bool il;                     /* --il */
    mdb_filter filter;           /* --thread, --from, --to */
} mdb_run_opts;

typedef struct mdb_run_result {
    uint64_t records, unresolved;
    uint64_t resets; /* times a thread started its caches over */
    bool read_error, write_error, nomem;
} mdb_run_result;

/* Resolve the input to the output (and the error output for what the
 * format has no room for), in input order. What the threads cached (the
 * frames modules keep), the blocks and their buffers go under ctx. */
void mdb_run(void *ctx, mdb_assemblies *a, const mdb_run_opts *o, mdb_run_result *res);
/* The CPUs this process may run on. */
unsigned mdb_cpus(void);

/* ----------------------------------------------------------------- main.c */

/* Exit statuses, added up (as fsck(8) does): */
#define MDB_EXIT_UNRESOLVED 1 /* a line did not resolve, was malformed, or I/O failed */
#define MDB_EXIT_USAGE 2
#define MDB_EXIT_CUT 4 /* a log has no #stats line: cut short */

/* `mdinspect batch ...`: argv[0] is "batch". Returns the exit status. */
int mdi_batch_main(int argc, char **argv);

#endif
