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

#endif
