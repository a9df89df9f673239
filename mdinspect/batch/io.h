/* mdinspect batch, io.c: the input read a block of whole lines at a time
 * and the buffered output, with the JSON string writer of the JSON
 * formats (batch.h lists the pieces of batch). */
#ifndef MDINSPECT_BATCH_IO_H
#define MDINSPECT_BATCH_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define MDB_BLOCK (64u * 1024) /* bytes of input read for a thread at a time */

/* Whole lines of the input: the unit of work of a run's threads (run.c).
 * Usually many lines, each ending in '\n'; or, when `single`, one line
 * without it: the last line of the input when it has no newline, or a
 * line of MDB_MAX_LINE bytes or more, whose bytes are not kept (`cut`).
 * A block read from a range of a regular file (mdb_read_range) is never
 * `single`: its last line may instead be one without a newline (`tail`
 * bytes, the end of the input) or one too long to keep (`last_long`: its
 * bytes replaced by a lone '\n'), so a block holds all the lines that
 * start in its range. */
struct mdb_proc;

/* A line of a block where a process starts (logctx.c). */
typedef struct mdb_event {
    uint64_t lineno;
    struct mdb_proc *proc; /* the process of this line and those after it */
    bool split;            /* the line is a log cut short, the header follows */
} mdb_event;

typedef struct mdb_block {
    void *ctx; /* where mem lives (grown for a long line) */
    char *mem; /* the allocation, cap bytes; buf lies in it */
    char *buf; /* the first line (mem, or past a range's skipped bytes) */
    size_t len, cap;
    size_t tail;           /* the last line's bytes when it has no newline (ranges) */
    bool last_long;        /* the last line is MDB_MAX_LINE or more, cut (ranges) */
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
/* The lines of a block, counted. */
uint64_t mdb_block_lines(const mdb_block *b);

/* How a range read ended (mdb_read_range). */
typedef struct mdb_range_end {
    uint64_t eof;    /* where the input ended, when it did (UINT64_MAX: not met) */
    int err;         /* errno of a failed pread (0: none) */
    uint64_t err_at; /* the offset it failed at */
} mdb_range_end;

/* The lines of a regular file that start in [start, end) (offsets from
 * `base`, where the input starts) into b, read with pread(2): a line
 * belongs to the range it starts in, so the range skips to just past the
 * first newline at or after start - 1 (unless start is 0) and reads past
 * end to finish its last line, at most MDB_MAX_LINE bytes of it (a longer
 * one is cut: `last_long`). end - start is at most MDB_MAX_LINE, so only a
 * range's last line can be that long. 0 with b filled (maybe with no line
 * at all), -1 on a read error (e->err) or out of memory (e->err 0). */
int mdb_read_range(mdb_block *b, int fd, uint64_t base, uint64_t start, uint64_t end,
                   mdb_range_end *e);

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

#endif
