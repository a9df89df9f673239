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
 *   assemblies.c  modules by path and by MVID, lazy opens; assemblies_index.c
 *                 the folders walked for MVIDs, the on-disk index
 *   modcache.c    per-thread caches in front of those lookups
 *   parse.h       hex tokens and MVIDs read a register at a time
 *   plain.h       a plain line met again: module caches, kept frames, the peek
 *   lines.h       a block cut into lines, a frame's line written (run.c's loop)
 *   resolve.c     one frame's text -> name, status, file:line (cached); with
 *                 resolve_make.c (a frame named), resolve_lines.c (a frame's
 *                 text read), resolve_json.c (its JSON form): resolve_int.h
 *   ilinsn.c      --il: the instruction at a frame's IL offset (<mdtools/il.h>)
 *   record.c      one line -> a record (header, stats, comment, stack, call,
 *                 alloc, plain MVID or PATH line, malformed)
 *   logctx.c      the processes of the input (headers, #stats), the folders
 *                 headers name, #module names: read by the main thread;
 *                 logctx_header.c reads a header's and #stats' fields
 *   emit_text.c, emit_json.c, emit_folded.c   streaming formats
 *   aggregate.c   --speedscope and --top (distinct stacks and methods)
 *   pprof.c       --pprof: records summed into interned tables (pprof_int.h),
 *                 pprof_write.c writes them as gzipped profile.proto
 *   progress.c    records/s and ETA on a terminal
 *   run.c         blocks of lines resolved by threads, written in order
 *   native.c      native frames named from ELF files (#elf lines, debug
 *                 files by build-id); elfsyms.c, one file's symbols (native.h)
 *
 * The declarations of table.c, io.c, files.c, assemblies.c and modcache.c
 * are in table.h, io.h, files.h and assemblies.h (included here); those of
 * the others below, one section a file.
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

#include "batch/table.h"
#include "batch/io.h"
#include "batch/files.h"
#include "batch/assemblies.h"

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
/* plain.h: the frame of a plain line met again (mdb_peek_plain), inlined. */
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

/* `folders_on`: search the folders headers name (framework=, frameworks=,
 * folders=) and later lines add (#frameworks, #folders). */
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

/* pprof.c, pprof_write.c: --pprof (through mdb_aggregate_*: records come in
 * input order). */
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
    int read_errno;   /* of a failed read (0: none) */
    uint64_t read_at; /* where in the input it failed, or where it ended when it shrank */
    bool shrank;      /* a regular file ended before the size it had while read */
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
