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
 *   resolve.c     one frame's text -> name, status, file:line (cached)
 *   record.c      one line -> a record (header, stats, comment, stack, call,
 *                 alloc, plain MVID or PATH line, malformed)
 *   emit_text.c, emit_json.c, emit_folded.c   streaming formats
 *   aggregate.c   --speedscope and --top (distinct stacks and methods)
 *   progress.c    records/s and ETA on a terminal
 *
 * Memory: caches hold what the input touched (modules, distinct frames),
 * never the input itself; the frame cache starts over when it exceeds
 * MDB_FRAME_CACHE_MAX entries, so even endless distinct junk stays bounded.
 * Not thread-safe: one mdb_ctx per thread. */
#ifndef MDINSPECT_BATCH_H
#define MDINSPECT_BATCH_H

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
} mdb_arena;

void mdb_arena_init(mdb_arena *a, void *ctx);
void *mdb_arena_alloc(mdb_arena *a, size_t n); /* 8-aligned; NULL when out of memory */
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
/* Store a value for a key that is not there. -1 when out of memory. */
int mdb_table_put(mdb_table *t, uint64_t hash, const void *key, size_t len, void *value);
void mdb_table_clear(mdb_table *t);

/* ------------------------------------------------------------------- io.c */

typedef struct mdb_input {
    int fd;
    char *buf;
    size_t cap, start, end;  /* unread bytes are buf[start, end) */
    bool eof, failed;
    uint64_t consumed;       /* bytes handed out as lines */
    uint64_t lineno;
} mdb_input;

/* The next line without its '\n' (and a trailing '\r'): 1 with *line and
 * *len set (the bytes stay valid until the next call), 0 at the end, -1 on
 * a read error. A line longer than MDB_MAX_LINE is cut (*cut set) and its
 * rest skipped. */
int mdb_input_line(mdb_input *in, const char **line, size_t *len, bool *cut);
int mdb_input_init(mdb_input *in, void *ctx, int fd);

typedef struct mdb_output {
    int fd;
    char *buf;
    size_t len, cap;
    bool failed;
} mdb_output;

int mdb_output_init(mdb_output *o, void *ctx, int fd);
void mdb_output_flush(mdb_output *o);
void mdb_out_slow(mdb_output *o, const void *p, size_t n);
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

typedef struct mdb_module {
    char *path;             /* as first named (arena) */
    uint8_t mvid[16];
    bool have_mvid;
    mdt_image *img;         /* NULL until opened, or when it failed */
    bool open_tried;
    char *open_error;       /* why it did not open */
    mdt_name_cache *names;
    mdt_pdb *pdb;
    bool pdb_tried;
    char **docs;            /* Document names, filled on use */
    const char *assembly;   /* simple name of its assembly ("" unknown) */
    const char *name;       /* Module row name */
    struct mdb_frame **frames[MDT_TABLE_MAX]; /* resolve.c: plain frames by table, row */
    uint32_t rows[MDT_TABLE_MAX];             /* entries of frames[t] less one */
} mdb_module;

typedef struct mdb_assemblies mdb_assemblies;

/* Where MVIDs are looked up: `paths` (directories or files), walked lazily
 * on the first MVID asked for; `index` (may be NULL) the on-disk index to
 * reuse and refresh. */
mdb_assemblies *mdb_assemblies_new(void *ctx, char **paths, size_t npaths, bool recursive,
                                   const char *index);
/* The module of an MVID (32 hex digits), or NULL when none of the
 * assemblies has it. */
mdb_module *mdb_module_by_mvid(mdb_assemblies *a, const uint8_t mvid[16]);
/* The module of a file named by the input (opened on first use); NULL
 * when no such file exists (errno set) or out of memory. */
mdb_module *mdb_module_by_path(mdb_assemblies *a, const char *path, size_t len);
/* Open a module's image (once); false when it does not open. */
bool mdb_module_open(mdb_assemblies *a, mdb_module *m);
/* The module's PDB, or NULL (looked for once). */
const mdt_pdb *mdb_module_pdb(mdb_module *m);
/* The name of a Document row of the module's PDB (cached), or NULL. */
const char *mdb_module_document(mdb_module *m, uint32_t doc);
/* The index could not be written or read: the message to warn with once,
 * or NULL. */
const char *mdb_assemblies_warning(mdb_assemblies *a);
/* MVID text (32 lower-case hex digits, doc/names.md) <-> the 16 bytes of
 * #GUID. */
bool mdb_parse_mvid(const char *s, size_t n, uint8_t mvid[16]);
void mdb_format_mvid(char out[33], const uint8_t mvid[16]);
/* For mdt_desc_parse. */
int mdb_mvid_lookup(void *payload, const mdt_image **img, const uint8_t mvid[16]);
/* Statistics for --verbose: files indexed, files opened to read an MVID. */
void mdb_assemblies_stats(const mdb_assemblies *a, size_t *indexed, size_t *scanned);

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
typedef struct mdb_frame {
    uint8_t status;        /* enum mdb_status */
    bool has_il;
    bool lasting;          /* kept by its module, never trimmed */
    const char *name;      /* full-style name; the special word; NULL when unresolved */
    uint32_t name_len;
    const char *detail;    /* unresolved: what went wrong (may be NULL) */
    mdb_module *mod;       /* NULL for special frames and unknown modules */
    uint32_t token;
    uint32_t il;
    const char *file;      /* source document, NULL when unknown */
    uint32_t line, column; /* 0 when unknown */
    const char *text;      /* text form: NAME or NAME (FILE:LINE) or [special] */
    uint32_t text_len;
    const char *json;      /* JSON members of the frame, without braces and without
                              the IL offset, which the record keeps (lazy) */
    uint32_t json_len;
    uint32_t id;           /* aggregate.c: interned id + 1 (0 = none yet) */
    uint32_t method_id;    /* aggregate.c: method (name) id + 1 */
} mdb_frame;

typedef struct mdb_resolver mdb_resolver;

mdb_resolver *mdb_resolver_new(void *ctx, mdb_assemblies *a);
/* A profiler-log frame: `mvid:token{..}<..>@il` or a special word; *il
 * and *has_il get its IL offset (frames are shared by every offset that
 * gives the same answer, so the offset travels with the record). */
const mdb_frame *mdb_resolve_logframe(mdb_resolver *r, const char *s, size_t n, uint32_t *il,
                                      bool *has_il);
/* An alloc record's type descriptor. */
const mdb_frame *mdb_resolve_type(mdb_resolver *r, const char *s, size_t n);
/* A plain line `MVID TOKEN [DESC...]` (fields separated by single spaces). */
const mdb_frame *mdb_resolve_plain_mvid(mdb_resolver *r, const char *s, size_t n);
/* A plain line `PATH TOKEN`. */
const mdb_frame *mdb_resolve_plain_path(mdb_resolver *r, const char *s, size_t n);
/* Between records: start the cache over when it holds too much (frames of
 * earlier records become invalid). */
void mdb_resolver_trim(mdb_resolver *r);
/* The JSON members of a frame (built on first use). */
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

/* ----------------------------------------------------------------- main.c */

/* `mdinspect batch ...`: argv[0] is "batch". Returns the exit status. */
int mdi_batch_main(int argc, char **argv);

#endif
