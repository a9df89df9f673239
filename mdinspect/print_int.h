/* mdinspect's printer, inside: the state the files of the printer share
 * (print.h is what commands see). print.c keeps the printer and its frames
 * (records, objects, lists, items), print_values.c the value calls,
 * print_text.c the text blocks, print_table.c the tables of text lists,
 * print_json.c the JSON Lines. Not for the rest of mdinspect. */
#ifndef MDINSPECT_PRINT_INT_H
#define MDINSPECT_PRINT_INT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <talloc.h>

#include "print.h"

enum frame_kind { F_RECORD, F_OBJECT, F_LIST, F_ITEM };

/* Text: one line of a block, or a table. */
enum line_kind { L_KV, L_TEXT, L_TABLE };

struct table {
    size_t ncols;
    char **head;  /* labels of the first item's cells */
    bool *right;  /* right-align this column (numbers) */
    char ***rows; /* rows[r][c], NULL past a short row */
    size_t *rowlen;
    char **span; /* text after a row's cells, outside the columns, or NULL */
    size_t nrows;
    size_t *carry; /* column widths of the chunks already written */
    size_t ncarry;
    bool head_done; /* the header was written with the first chunk */
};

/* A top-level list is written every CHUNK_ROWS rows, so a long dump neither
 * waits for its last row nor holds every row in memory: columns are as
 * wide as the widest cell so far (a later chunk may widen them). */
#define CHUNK_ROWS 4096

struct line {
    enum line_kind kind;
    int indent;
    char *label;  /* L_KV: "" for an unlabelled value */
    char *value;  /* L_KV, L_TEXT */
    bool hide;    /* L_KV header of a list that ended empty with no text */
    bool caption; /* L_TEXT caption of a top-level list */
    bool done;    /* written with an earlier chunk of its block */
    struct table *table;
};

struct frame {
    enum frame_kind kind;
    bool notext, nojson;
    bool top;          /* record, list or item at top level */
    unsigned flags;    /* list flags */
    int indent;        /* text indent of children */
    bool jopen;        /* JSON: its object or array is open in the buffer */
    bool jarray;       /* JSON: that container is an array */
    bool jmore;        /* JSON: the container has a member already */
    bool jshare;       /* JSON: a scalar item, whose values go into its list's array */
    unsigned jid;      /* JSON: which container this is, for mdi_note() */
    size_t table_line; /* F_LIST: index of its table line */
    size_t head_line;  /* F_LIST nested: its "label:" line, or SIZE_MAX */
    char *empty;       /* F_LIST: text for no items */
    size_t items;
};

#define MAX_DEPTH 16

struct mdi_printer {
    FILE *out;
    enum mdi_format fmt;
    bool failed;
    bool headings;
    bool color;               /* text: ANSI colours (a terminal) */
    char *file;               /* current file, or NULL */
    bool heading_due;         /* text: print the file heading before the next block */
    bool printed;             /* anything written yet */
    bool block_after_heading; /* a block has been written since the heading */
    bool continued;           /* the block being built was partly written */

    struct frame st[MAX_DEPTH];
    int depth;

    /* The block being built (text) / the record being built (JSON). */
    void *blk; /* talloc context of the block, freed when written */
    struct line *lines;
    size_t nlines;
    bool jroot; /* JSON: a top-level record or item is open in jb */
    char *jb;   /* JSON: the record being built */
    size_t jlen, jcap;
    unsigned jids; /* JSON: containers opened so far */

    /* Text: a table line being assembled. */
    char *line;
    size_t linelen, linecap;
    char *arena; /* text of the block's values (arena_alloc) */
    size_t arena_left;
    size_t max_width; /* cap table lines to this many columns; 0: no cap */

    /* The value just written, for mdi_note(). */
    enum { LAST_NONE, LAST_LINE, LAST_CELL } last;
    size_t last_line, last_row, last_cell;
    unsigned last_obj; /* JSON: jid of the object the value went into; 0 none */
};

/* Colours: bold for headings, captions and table headers, red for values
 * that could not be read. */
#define SGR_BOLD "\033[1m"
#define SGR_ERROR "\033[31m"
#define SGR_OFF "\033[0m"

/* Text or JSON; whether the innermost frame writes text / JSON. */
static inline bool pr_text(const mdi_printer *p)
{
    return p->fmt == MDI_FMT_TEXT;
}

static inline struct frame *pr_top(mdi_printer *p)
{
    return p->depth ? &p->st[p->depth - 1] : NULL;
}

static inline bool pr_text_on(mdi_printer *p)
{
    struct frame *f = pr_top(p);
    return pr_text(p) && !p->failed && !(f && f->notext);
}

static inline bool pr_json_on(mdi_printer *p)
{
    struct frame *f = pr_top(p);
    return !pr_text(p) && !p->failed && !(f && f->nojson);
}

/* print.c: a top-level block ends (text written, JSON record closed). */
void pr_block_end(mdi_printer *p);

/* print_text.c's small calls that the table and text printers make per
 * cell, inline here: as calls across files they cost the table printer
 * about 1% of `find *` over a framework (bench/README.md, issue 29). */
#define ARENA_CHUNK (64 * 1024)

/* The number of leading bytes of s[0..len) that are printable ASCII
 * (0x20-0x7e), eight at a time: most of what is printed. */
static inline size_t pt_printable_prefix(const char *s, size_t len)
{
    const uint64_t ones = 0x0101010101010101u, high = 0x8080808080808080u;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        /* A byte below 0x20, at or above 0x7f: the word fails. */
        if (((w - 0x20 * ones) | (w + 0x01 * ones) | w) & high)
            break;
    }
    while (i < len && (unsigned char)s[i] >= 0x20 && (unsigned char)s[i] < 0x7F)
        i++;
    return i;
}

static inline size_t pt_display_width(const char *s)
{
    size_t len = strlen(s), i = pt_printable_prefix(s, len), w = i;
    for (s += i; *s; s++)
        if (((unsigned char)*s & 0xC0) != 0x80)
            w++;
    return w;
}

static inline char *pt_arena_alloc(mdi_printer *p, size_t n)
{
    char *r;
    if (n > p->arena_left) {
        size_t sz = n > ARENA_CHUNK ? n : ARENA_CHUNK;
        char *c = p->blk ? talloc_size(p->blk, sz) : NULL;
        if (!c) {
            p->failed = true;
            return NULL;
        }
        p->arena = c;
        p->arena_left = sz;
    }
    r = p->arena;
    p->arena += n;
    p->arena_left -= n;
    return r;
}

static inline const char *pt_value_color(const char *s)
{
    return strncmp(s, "<error: ", 8) == 0 ? SGR_ERROR : NULL;
}

/* print_text.c: widths and colours of cells, the block's arena of value
 * text (freed with the block), its lines, and a list item's cells. */
void pt_arena_reset(mdi_printer *p);
char *pt_arena_strndup(mdi_printer *p, const char *s, size_t n);
char *pt_arena_vprintf(mdi_printer *p, const char *fmt, va_list ap);
char *pt_arena_printf(mdi_printer *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
char *pt_arena_text(mdi_printer *p, const char *s, size_t len, bool quoted);
void pr_block_begin(mdi_printer *p);
void pt_separate(mdi_printer *p);
struct line *pt_add_line(mdi_printer *p, enum line_kind kind, int indent);
void pt_render_text(mdi_printer *p);
void pt_flush_chunk(mdi_printer *p, struct frame *list);
struct table *pt_item_table(mdi_printer *p);
void pt_text_put(mdi_printer *p, const char *label, char *s, bool right);

/* print_table.c: a table's rows, in columns. */
void pt_render_table(mdi_printer *p, struct table *t, int indent);

/* print_json.c: the record being built (pj_put and the values under it
 * write nothing after an error), members of the innermost container
 * (pj_member: false when that container is not written), containers
 * opened and closed with their frames, and the top-level record. */
void pj_put(mdi_printer *p, const void *s, size_t n);
void pj_raw(mdi_printer *p, const char *s);
void pj_string(mdi_printer *p, const char *s, size_t n);
void pj_str0(mdi_printer *p, const char *s);
void pj_uint(mdi_printer *p, uint64_t v);
void pj_int(mdi_printer *p, int64_t v);
void pj_token(mdi_printer *p, uint32_t token);
void pj_real(mdi_printer *p, double v);
void pj_error(mdi_printer *p, const char *msg);
struct frame *pj_container(mdi_printer *p);
bool pj_member(mdi_printer *p, const char *key);
void pj_nest(mdi_printer *p, const char *key, bool array);
void pj_close(mdi_printer *p, struct frame *f);
void pj_record_open(mdi_printer *p, struct frame *f);
void pj_record_close(mdi_printer *p);

#endif
