/* mdinspect's printer: one description of the output, rendered as aligned
 * text or as JSON Lines (see print.h for the model).
 *
 * Text is buffered one top-level block at a time (a record, or a whole
 * top-level list) so that values and table columns can be aligned once the
 * widest entry is known; JSON is streamed into a buffer as the values come
 * (common/json.h writes each value, the same way as batch's emitters) and
 * written when its top-level record or item ends. */
#include "config.h"

#include <assert.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include <talloc.h>

#include <mdtools/heaps.h>

#include "common/json.h"
#include "common/utf8.h"
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

/* ---- UTF-8 and escaping ---- */

char *mdi_escape(void *mem_ctx, const char *s, size_t len, bool quoted)
{
    const unsigned char *u = (const unsigned char *)s;
    char *buf;
    size_t i = 0, o = 0;
    /* Most names are printable ASCII: copied as they are. */
    if (!quoted) {
        while (i < len && u[i] >= 0x20 && u[i] < 0x7F)
            i++;
        if (i == len)
            return talloc_strndup(mem_ctx, s, len);
        i = 0;
    }
    /* Worst case: every byte becomes "\xNN" (4 bytes). */
    buf = talloc_array(mem_ctx, char, len * 4 + 3);
    if (!buf)
        return NULL;
    if (quoted)
        buf[o++] = '"';
    while (i < len) {
        uint32_t cp = 0;
        size_t n = mdi_utf8_seq(u + i, len - i, &cp);
        if (n == 0) {
            o += (size_t)sprintf(buf + o, "\\x%02x", u[i]);
            i++;
            continue;
        }
        if (quoted && (cp == '"' || cp == '\\')) {
            buf[o++] = '\\';
            buf[o++] = (char)cp;
        } else if (cp == '\n' && quoted) {
            buf[o++] = '\\', buf[o++] = 'n';
        } else if (cp == '\t' && quoted) {
            buf[o++] = '\\', buf[o++] = 't';
        } else if (cp == '\r' && quoted) {
            buf[o++] = '\\', buf[o++] = 'r';
        } else if (cp < 0x20 || cp == 0x7F) {
            o += (size_t)sprintf(buf + o, "\\x%02x", (unsigned)cp);
        } else if (cp >= 0x80 && cp <= 0x9F) {
            /* C1 controls: 2 bytes in, "\u0085" (6) out, still within 4x. */
            o += (size_t)sprintf(buf + o, "\\u%04x", (unsigned)cp);
        } else {
            memcpy(buf + o, u + i, n);
            o += n;
        }
        i += n;
    }
    if (quoted)
        buf[o++] = '"';
    buf[o] = '\0';
    return buf;
}

/* The number of leading bytes of s[0..len) that are printable ASCII
 * (0x20-0x7e), eight at a time: most of what is printed. */
static size_t printable_prefix(const char *s, size_t len)
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

static size_t display_width(const char *s)
{
    size_t len = strlen(s), i = printable_prefix(s, len), w = i;
    for (s += i; *s; s++)
        if (((unsigned char)*s & 0xC0) != 0x80)
            w++;
    return w;
}

/* ---- printer ---- */

mdi_printer *mdi_printer_new(void *mem_ctx, FILE *out, enum mdi_format fmt)
{
    mdi_printer *p = talloc_zero(mem_ctx, mdi_printer);
    if (!p)
        return NULL;
    p->out = out;
    p->fmt = fmt;
    p->headings = true;
    return p;
}

enum mdi_format mdi_printer_format(const mdi_printer *p)
{
    return p->fmt;
}

void mdi_printer_set_format(mdi_printer *p, enum mdi_format fmt)
{
    assert(p->depth == 0);
    p->fmt = fmt;
}

void mdi_printer_set_color(mdi_printer *p, bool on)
{
    p->color = on;
}

FILE *mdi_printer_output(const mdi_printer *p)
{
    return p->out;
}

void mdi_printer_set_output(mdi_printer *p, FILE *out)
{
    assert(p->depth == 0);
    p->out = out;
}

void mdi_printer_reset(mdi_printer *p)
{
    assert(p->depth == 0);
    p->failed = false;
    clearerr(p->out);
    p->printed = false;
}

void mdi_printer_set_max_width(mdi_printer *p, size_t columns)
{
    p->max_width = columns;
}

void mdi_printer_set_headings(mdi_printer *p, bool on)
{
    p->headings = on;
}

void mdi_printer_set_file(mdi_printer *p, const char *path)
{
    if (path && p->file && strcmp(path, p->file) == 0)
        return; /* the same file: no new heading */
    /* Text: a block being built keeps the heading it started under (a
     * list over several modules names each in a column); JSON records
     * each take the file current when they end. */
    if (p->fmt == MDI_FMT_TEXT && p->depth > 0)
        return;
    talloc_free(p->file);
    p->file = NULL;
    p->heading_due = false;
    if (path) {
        p->file = talloc_strdup(p, path);
        if (!p->file)
            p->failed = true;
        p->heading_due = p->headings;
    }
}

void mdi_printer_flush(mdi_printer *p)
{
    if (fflush(p->out) != 0)
        p->failed = true;
}

bool mdi_printer_failed(const mdi_printer *p)
{
    return p->failed || ferror(p->out);
}

static bool text(const mdi_printer *p)
{
    return p->fmt == MDI_FMT_TEXT;
}

static struct frame *top(mdi_printer *p)
{
    return p->depth ? &p->st[p->depth - 1] : NULL;
}

static bool text_on(mdi_printer *p)
{
    struct frame *f = top(p);
    return text(p) && !p->failed && !(f && f->notext);
}

static bool json_on(mdi_printer *p)
{
    struct frame *f = top(p);
    return !text(p) && !p->failed && !(f && f->nojson);
}

static struct frame *push(mdi_printer *p, enum frame_kind kind)
{
    struct frame *parent = top(p), *f;
    assert(p->depth < MAX_DEPTH);
    f = &p->st[p->depth++];
    memset(f, 0, sizeof *f);
    f->kind = kind;
    f->head_line = SIZE_MAX;
    if (parent) {
        f->notext = parent->notext;
        f->nojson = parent->nojson;
        f->indent = parent->indent;
    }
    return f;
}

/* Colours: bold for headings, captions and table headers, red for values
 * that could not be read. */
#define SGR_BOLD "\033[1m"
#define SGR_ERROR "\033[31m"
#define SGR_OFF "\033[0m"

static void put_colored(mdi_printer *p, const char *sgr, const char *s)
{
    if (p->color && sgr)
        fputs(sgr, p->out);
    fputs(s, p->out);
    if (p->color && sgr)
        fputs(SGR_OFF, p->out);
}

/* Start a top-level block: a fresh talloc context for its text lines. */
/* The text of a block's values comes from a bump arena in chunks under
 * the block: thousands of small strings, written together and freed
 * together, without a talloc header and a malloc each. */
#define ARENA_CHUNK (64 * 1024)

static void arena_reset(mdi_printer *p)
{
    p->arena = NULL;
    p->arena_left = 0;
}

static char *arena_alloc(mdi_printer *p, size_t n)
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

static char *arena_strndup(mdi_printer *p, const char *s, size_t n)
{
    char *r = arena_alloc(p, n + 1);
    if (r) {
        memcpy(r, s, n);
        r[n] = '\0';
    }
    return r;
}

static char *arena_vprintf(mdi_printer *p, const char *fmt, va_list ap)
{
    char small[256];
    va_list again;
    int n;
    va_copy(again, ap);
    n = vsnprintf(small, sizeof small, fmt, ap);
    if (n < 0 || (size_t)n < sizeof small) {
        va_end(again);
        return n < 0 ? NULL : arena_strndup(p, small, (size_t)n);
    }
    {
        char *r = arena_alloc(p, (size_t)n + 1);
        if (r)
            vsnprintf(r, (size_t)n + 1, fmt, again);
        va_end(again);
        return r;
    }
}

static char *arena_printf(mdi_printer *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static char *arena_printf(mdi_printer *p, const char *fmt, ...)
{
    va_list ap;
    char *r;
    va_start(ap, fmt);
    r = arena_vprintf(p, fmt, ap);
    va_end(ap);
    return r;
}

/* mdi_escape into the arena: room for the worst case, the rest given back. */
static char *arena_escape(mdi_printer *p, const char *s, size_t len, bool quoted)
{
    char *e = mdi_escape(NULL, s, len, quoted), *r;
    if (!e) {
        p->failed = true;
        return NULL;
    }
    r = arena_strndup(p, e, strlen(e));
    talloc_free(e);
    return r;
}

/* Printable ASCII needs no escaping: the common case, without mdi_escape. */
static char *arena_text(mdi_printer *p, const char *s, size_t len, bool quoted)
{
    return !quoted && printable_prefix(s, len) == len ? arena_strndup(p, s, len)
                                                      : arena_escape(p, s, len, quoted);
}

static void block_begin(mdi_printer *p)
{
    p->blk = talloc_new(p);
    arena_reset(p);
    if (!p->blk)
        p->failed = true;
    p->lines = NULL;
    p->nlines = 0;
    p->last = LAST_NONE;
    p->last_obj = 0;
}

/* Before a text block: the file heading when due, else the blank line that
 * separates blocks. */
static void separate(mdi_printer *p)
{
    if (p->heading_due && p->file) {
        char *h = mdi_escape(p->blk, p->file, strlen(p->file), false);
        if (p->printed)
            fputc('\n', p->out);
        put_colored(p, SGR_BOLD, h ? h : "?");
        fputs(":\n", p->out);
        p->heading_due = false;
        p->printed = true;
        p->block_after_heading = false;
        return;
    }
    if (p->printed && (p->block_after_heading || !p->headings || !p->file))
        fputc('\n', p->out);
}

static struct line *add_line(mdi_printer *p, enum line_kind kind, int indent)
{
    struct line *nl;
    if (p->failed)
        return NULL;
    nl = talloc_realloc(p->blk, p->lines, struct line, p->nlines + 1);
    if (!nl) {
        p->failed = true;
        return NULL;
    }
    p->lines = nl;
    nl = &p->lines[p->nlines++];
    memset(nl, 0, sizeof *nl);
    nl->kind = kind;
    nl->indent = indent;
    return nl;
}

/* n blanks, a buffer at a time (a table is mostly padding). */
static void put_blanks(FILE *out, size_t n)
{
    static const char blanks[64] =
        "                                                                ";
    while (n) {
        size_t k = n < sizeof blanks ? n : sizeof blanks;
        fwrite(blanks, 1, k, out);
        n -= k;
    }
}

static void put_indent(FILE *out, int n)
{
    if (n > 0)
        put_blanks(out, (size_t)n);
}

static const char *value_color(const char *s)
{
    return strncmp(s, "<error: ", 8) == 0 ? SGR_ERROR : NULL;
}

/* ---- tables ---- */

/* A line of a table is assembled in p->line and written with one fwrite:
 * most of a long list is cells and padding. */
static void ln_add(mdi_printer *p, const char *s, size_t n)
{
    if (p->linelen + n + 1 > p->linecap) {
        size_t cap = p->linecap ? p->linecap : 256;
        char *nb;
        while (cap < p->linelen + n + 1)
            cap *= 2;
        if (!(nb = talloc_realloc(p, p->line, char, cap))) {
            p->failed = true;
            return;
        }
        p->line = nb;
        p->linecap = cap;
    }
    memcpy(p->line + p->linelen, s, n);
    p->linelen += n;
}

static void ln_blanks(mdi_printer *p, size_t n)
{
    static const char blanks[64] =
        "                                                                ";
    while (n) {
        size_t k = n < sizeof blanks ? n : sizeof blanks;
        ln_add(p, blanks, k);
        n -= k;
    }
}

static void ln_end(mdi_printer *p)
{
    ln_add(p, "\n", 1);
    if (!p->failed && fwrite(p->line, 1, p->linelen, p->out) != p->linelen)
        p->failed = true;
    p->linelen = 0;
}

/* The first bytes of s that take `w` columns (UTF-8 sequences whole). */
static size_t prefix_bytes(const char *s, size_t w)
{
    size_t i = 0;
    for (size_t cols = 0; s[i]; i++) {
        if (((unsigned char)s[i] & 0xC0) != 0x80) {
            if (cols == w)
                break;
            cols++;
        }
    }
    return i;
}

#define ELLIPSIS "\xe2\x80\xa6" /* U+2026, one column */

/* A cell padded to `width` columns (right-aligned for numbers), cut with
 * an ellipsis when it is wider (`sw` is its width); the last cell of a
 * line is not padded. */
static void ln_cell(mdi_printer *p, const char *s, size_t sw, size_t width, bool right, bool last,
                    const char *sgr)
{
    size_t n = strlen(s);
    bool cut = sw > width;
    if (right && sw < width)
        ln_blanks(p, width - sw);
    if (p->color && sgr)
        ln_add(p, sgr, strlen(sgr));
    if (cut) {
        ln_add(p, s, width ? prefix_bytes(s, width - 1) : 0);
        if (width)
            ln_add(p, ELLIPSIS, sizeof ELLIPSIS - 1);
    } else {
        ln_add(p, s, n);
    }
    if (p->color && sgr)
        ln_add(p, SGR_OFF, sizeof SGR_OFF - 1);
    if (!right && !last && sw < width)
        ln_blanks(p, width - sw);
}

/* With a width limit (a terminal), narrow the widest columns until a line
 * fits: the columns are cut to one width X, the largest that fits, but
 * not below a floor that keeps every column readable. */
static void fit_widths(const mdi_printer *p, size_t *width, size_t ncols, int indent)
{
    size_t total = (size_t)indent + (ncols ? 2 * (ncols - 1) : 0), lo = 0, hi = 0;
    enum { FLOOR = 12 };
    if (!p->max_width || !ncols)
        return;
    for (size_t c = 0; c < ncols; c++) {
        total += width[c];
        if (width[c] > hi)
            hi = width[c];
    }
    if (total <= p->max_width)
        return;
    /* The largest X with sum(min(width, max(X, FLOOR))) fitting. */
    lo = FLOOR;
    while (lo < hi) {
        size_t x = (lo + hi + 1) / 2, sum = (size_t)indent + 2 * (ncols - 1);
        for (size_t c = 0; c < ncols; c++)
            sum += width[c] < x ? width[c] : x;
        if (sum <= p->max_width)
            lo = x;
        else
            hi = x - 1;
    }
    for (size_t c = 0; c < ncols; c++)
        if (width[c] > lo)
            width[c] = lo;
}

static void render_table(mdi_printer *p, struct table *t, int indent)
{
    size_t *width = talloc_zero_array(t, size_t, t->ncols ? t->ncols : 1);
    /* Each cell's width, measured once. */
    uint32_t *cw = talloc_array(t, uint32_t, t->nrows * (t->ncols ? t->ncols : 1) + 1);
    bool header = false;
    size_t c, r, ncols = t->ncols;
    if (!width || !cw) {
        p->failed = true;
        return;
    }
    for (c = 0; c < t->ncarry && c < ncols; c++)
        width[c] = t->carry[c];
    for (r = 0; r < t->nrows; r++)
        for (c = 0; c < t->rowlen[r] && c < ncols; c++) {
            size_t w = display_width(t->rows[r][c]);
            cw[r * ncols + c] = (uint32_t)w;
            if (w > width[c])
                width[c] = w;
        }
    /* Leave out trailing columns without a value in any row (their header
     * alone says nothing), so lines never end in blanks. */
    while (ncols > 0 && width[ncols - 1] == 0)
        ncols--;
    for (c = 0; c < ncols; c++) {
        if (t->head[c][0])
            header = true;
        if (display_width(t->head[c]) > width[c])
            width[c] = display_width(t->head[c]);
    }
    fit_widths(p, width, ncols, indent);
    if (t->head_done)
        header = false;
    t->head_done = true;
    talloc_free(t->carry);
    t->carry = width;
    t->ncarry = ncols;
    if (header) {
        size_t n = ncols;
        while (n > 0 && !t->head[n - 1][0])
            n--;
        ln_blanks(p, (size_t)(indent > 0 ? indent : 0));
        for (c = 0; c < n; c++) {
            if (c)
                ln_add(p, "  ", 2);
            ln_cell(p, t->head[c], display_width(t->head[c]), width[c], t->right[c], c + 1 == n,
                    SGR_BOLD);
        }
        ln_end(p);
    }
    for (r = 0; r < t->nrows; r++) {
        size_t n = t->rowlen[r] < ncols ? t->rowlen[r] : ncols;
        /* The last non-empty cell ends the line. */
        while (n > 0 && !t->rows[r][n - 1][0])
            n--;
        ln_blanks(p, (size_t)(indent > 0 ? indent : 0));
        for (c = 0; c < n; c++) {
            if (c)
                ln_add(p, "  ", 2);
            ln_cell(p, t->rows[r][c], cw[r * t->ncols + c], width[c], t->right[c],
                    c + 1 == n && !t->span[r], value_color(t->rows[r][c]));
        }
        if (t->span[r]) {
            const char *sgr = value_color(t->span[r]);
            if (n)
                ln_add(p, "  ", 2);
            if (p->color && sgr)
                ln_add(p, sgr, strlen(sgr));
            ln_add(p, t->span[r], strlen(t->span[r]));
            if (p->color && sgr)
                ln_add(p, SGR_OFF, sizeof SGR_OFF - 1);
        }
        ln_end(p);
    }
    talloc_free(cw);
}

/* Write the text block: "label: value" lines aligned per indent level. */
static void render_text(mdi_printer *p)
{
    size_t width[MAX_DEPTH + 1] = {0};
    size_t i;
    for (i = 0; i < p->nlines; i++) {
        const struct line *l = &p->lines[i];
        int lvl = l->indent / 2;
        if (l->done || l->kind != L_KV || !l->label[0] || !l->value[0] || lvl > MAX_DEPTH)
            continue;
        if (display_width(l->label) + 1 > width[lvl])
            width[lvl] = display_width(l->label) + 1;
    }
    for (i = 0; i < p->nlines; i++) {
        const struct line *l = &p->lines[i];
        int lvl = l->indent / 2;
        if (l->done)
            continue;
        switch (l->kind) {
        case L_KV:
            if (l->hide)
                break;
            put_indent(p->out, l->indent);
            if (l->label[0]) {
                fputs(l->label, p->out);
                fputc(':', p->out);
                if (l->value[0]) {
                    size_t w = display_width(l->label) + 1;
                    size_t want = lvl <= MAX_DEPTH ? width[lvl] : w;
                    for (; w < want; w++)
                        fputc(' ', p->out);
                    fputc(' ', p->out);
                }
            }
            put_colored(p, value_color(l->value), l->value);
            fputc('\n', p->out);
            break;
        case L_TEXT:
            put_indent(p->out, l->indent);
            put_colored(p, l->caption ? SGR_BOLD : NULL, l->value);
            fputc('\n', p->out);
            break;
        case L_TABLE: render_table(p, l->table, l->indent); break;
        }
    }
}

/* ---- JSON ---- */

/* The record being built grows in p->jb; it is written with one fwrite
 * when its top-level record or item ends, or not at all after an error.
 * Room for n more bytes; false (and the printer failed) without it. */
static bool jreserve(mdi_printer *p, size_t n)
{
    size_t cap;
    char *nb;
    if (p->failed)
        return false;
    if (n <= p->jcap - p->jlen)
        return true;
    if (n > SIZE_MAX / 4 - p->jlen) {
        p->failed = true;
        return false;
    }
    for (cap = p->jcap ? p->jcap : 4096; n > cap - p->jlen;)
        cap *= 2;
    if (!(nb = talloc_realloc(p, p->jb, char, cap))) {
        p->failed = true;
        return false;
    }
    p->jb = nb;
    p->jcap = cap;
    return true;
}

static void jput(mdi_printer *p, const void *s, size_t n)
{
    if (!jreserve(p, n))
        return;
    memcpy(p->jb + p->jlen, s, n);
    p->jlen += n;
}

static void jraw(mdi_printer *p, const char *s)
{
    jput(p, s, strlen(s));
}

/* A JSON string: room for the worst case, then common/json.h's escaping
 * straight into the buffer. */
static void jstring(mdi_printer *p, const char *s, size_t n)
{
    size_t used;
    if (n > SIZE_MAX / 8 || !jreserve(p, n * MDI_JSON_ESCAPE_MAX + 2)) {
        p->failed = true;
        return;
    }
    p->jb[p->jlen++] = '"';
    p->jlen += mdi_json_escape(p->jb + p->jlen, p->jcap - p->jlen, s, n, &used);
    p->jb[p->jlen++] = '"';
}

static void jstr0(mdi_printer *p, const char *s)
{
    if (s)
        jstring(p, s, strlen(s));
    else
        jraw(p, "null");
}

/* Integers past INT64_MAX as the string "0x...", as they were printed
 * with jansson (whose integers are signed). */
static void juint(mdi_printer *p, uint64_t v)
{
    char b[MDI_JSON_NUMBER_MAX];
    if (v > (uint64_t)INT64_MAX) {
        int n = snprintf(b, sizeof b, "0x%" PRIx64, v);
        jstring(p, b, (size_t)n);
        return;
    }
    jput(p, b, mdi_json_uint(b, v));
}

static void jint(mdi_printer *p, int64_t v)
{
    char b[MDI_JSON_NUMBER_MAX];
    jput(p, b, mdi_json_int(b, v));
}

static void jtoken(mdi_printer *p, uint32_t token)
{
    char b[12];
    b[0] = '"';
    mdi_json_token(b + 1, token);
    b[11] = '"';
    jput(p, b, sizeof b);
}

/* A real; NaN and infinities as mdi_real() says. */
static void jreal(mdi_printer *p, double v)
{
    char b[MDI_JSON_NUMBER_MAX];
    if (isnan(v))
        jraw(p, "\"NaN\"");
    else if (isinf(v))
        jraw(p, v < 0 ? "\"-Infinity\"" : "\"Infinity\"");
    else
        jput(p, b, mdi_json_real(b, v));
}

/* A value that could not be read: {"error": msg}. */
static void jerror(mdi_printer *p, const char *msg)
{
    jraw(p, "{\"error\":");
    jstr0(p, msg);
    jput(p, "}", 1);
}

/* The container values go into: a scalar item's is its list's array. */
static struct frame *jcontainer(mdi_printer *p)
{
    struct frame *f = top(p);
    if (f && f->jshare && p->depth >= 2)
        f = &p->st[p->depth - 2];
    return f;
}

/* Start a member of the innermost container: the comma, and in an object
 * the key (NULL: "value"). False when the container is not written (no
 * JSON for it): then the value is not either. */
static bool jmember(mdi_printer *p, const char *key)
{
    struct frame *f = jcontainer(p);
    if (!f || !f->jopen || p->failed)
        return false;
    if (f->jmore)
        jput(p, ",", 1);
    f->jmore = true;
    if (f->jarray) {
        p->last_obj = 0;
        return true;
    }
    key = key ? key : "value";
    jstring(p, key, strlen(key));
    jput(p, ":", 1);
    p->last_obj = f->jid;
    return !p->failed;
}

static void jmark_open(mdi_printer *p, struct frame *f, bool array)
{
    jput(p, array ? "[" : "{", 1);
    f->jopen = true;
    f->jarray = array;
    f->jmore = false;
    f->jid = ++p->jids ? p->jids : ++p->jids; /* never 0: "none" */
}

/* The frame on top opens its object or array as a member of its parent. */
static void jnest(mdi_printer *p, const char *key, bool array)
{
    struct frame *f = top(p);
    bool ok;
    p->depth--;
    ok = jmember(p, key);
    p->depth++;
    if (ok)
        jmark_open(p, f, array);
}

static void jclose(mdi_printer *p, struct frame *f)
{
    if (f->jopen)
        jput(p, f->jarray ? "]" : "}", 1);
    f->jopen = false;
}

/* A top-level record or item: a fresh line, "file" first. */
static void jrecord_open(mdi_printer *p, struct frame *f)
{
    p->jlen = 0;
    p->jroot = true;
    jmark_open(p, f, false);
    if (p->file) {
        jraw(p, "\"file\":");
        jstring(p, p->file, strlen(p->file));
        f->jmore = true;
    }
}

static void jrecord_close(mdi_printer *p)
{
    if (!p->jroot)
        return;
    p->jroot = false;
    jput(p, "}\n", 2);
    if (!p->failed && fwrite(p->jb, 1, p->jlen, p->out) != p->jlen)
        p->failed = true;
    p->jlen = 0;
}

static void block_end(mdi_printer *p)
{
    if (text(p)) {
        if (!p->failed && p->nlines) {
            if (!p->continued)
                separate(p);
            render_text(p);
            p->printed = true;
            p->block_after_heading = true;
        }
    } else {
        jrecord_close(p);
    }
    talloc_free(p->blk);
    p->blk = NULL;
    arena_reset(p);
    p->lines = NULL;
    p->nlines = 0;
    p->continued = false;
    p->last = LAST_NONE;
    p->last_obj = 0;
}

/* Write what a long top-level list has so far and start a new chunk: keep
 * the lines (the caption, written now, is marked done), the table's header
 * and widths and the list's empty text; free the rows. */
static void flush_chunk(mdi_printer *p, struct frame *list)
{
    struct table *t;
    void *nb;
    if (p->failed || list->table_line >= p->nlines || !(t = p->lines[list->table_line].table))
        return;
    if (!p->continued)
        separate(p);
    render_text(p);
    p->printed = true;
    p->block_after_heading = true;
    p->continued = true;
    if (!(nb = talloc_new(p))) {
        p->failed = true;
        return;
    }
    talloc_steal(nb, p->lines);
    for (size_t i = 0; i < p->nlines; i++)
        if (i != list->table_line)
            p->lines[i].done = true;
    talloc_steal(nb, t);
    for (size_t c = 0; c < t->ncols; c++)
        talloc_steal(nb, t->head[c]);
    talloc_steal(nb, t->head);
    talloc_steal(nb, t->right);
    if (list->empty)
        talloc_steal(nb, list->empty);
    talloc_free(p->blk);
    p->blk = nb;
    arena_reset(p);
    t->rows = NULL;
    t->rowlen = NULL;
    t->span = NULL;
    t->nrows = 0;
    p->last = LAST_NONE;
}

void mdi_record_begin(mdi_printer *p)
{
    struct frame *f;
    assert(p->depth == 0); /* records are top-level; nest objects */
    block_begin(p);
    f = push(p, F_RECORD);
    f->top = true;
    if (!text(p))
        jrecord_open(p, f);
}

void mdi_record_end(mdi_printer *p)
{
    assert(p->depth == 1 && top(p)->kind == F_RECORD);
    p->depth--;
    block_end(p);
}

void mdi_object_begin(mdi_printer *p, const char *key, const char *label)
{
    struct frame *f;
    assert(p->depth > 0 && top(p)->kind != F_LIST); /* objects live in records and items */
    f = push(p, F_OBJECT);
    if (!label)
        f->notext = true;
    if (!key)
        f->nojson = true;
    if (!text(p) && !f->nojson)
        jnest(p, key, false);
    if (text_on(p) && label && label[0]) {
        struct line *l = add_line(p, L_KV, f->indent);
        if (l) {
            l->label = talloc_strdup(p->blk, label);
            l->value = talloc_strdup(p->blk, "");
        }
        f->indent += 2;
    }
}

void mdi_object_end(mdi_printer *p)
{
    assert(p->depth > 0 && top(p)->kind == F_OBJECT);
    jclose(p, top(p));
    p->depth--;
}

void mdi_list_begin(mdi_printer *p, const char *key, const char *label, const char *empty,
                    unsigned flags)
{
    struct frame *parent = top(p), *f;
    struct line *l;
    if (!parent)
        block_begin(p);
    assert(!parent || parent->kind != F_LIST);
    f = push(p, F_LIST);
    f->top = !parent;
    f->flags = flags;
    if (!label)
        f->notext = true;
    if (!key && parent)
        f->nojson = true;
    if (!text(p) && !f->nojson && parent)
        jnest(p, key, true);
    if (!text_on(p))
        return;
    f->empty = empty ? talloc_strdup(p->blk, empty) : NULL;
    if (label[0]) {
        if (f->top) {
            /* A caption, with the table indented under it. */
            l = add_line(p, L_TEXT, f->indent);
            if (l) {
                l->value = talloc_strdup(p->blk, label);
                l->caption = true;
            }
            f->indent += 2;
        } else {
            f->head_line = p->nlines;
            l = add_line(p, L_KV, f->indent);
            if (l) {
                l->label = talloc_strdup(p->blk, label);
                l->value = talloc_strdup(p->blk, "");
            }
            f->indent += 2;
        }
    }
    f->table_line = p->nlines;
    l = add_line(p, L_TABLE, f->indent);
    if (l) {
        l->table = talloc_zero(p->blk, struct table);
        if (!l->table)
            p->failed = true;
    }
}

void mdi_list_end(mdi_printer *p)
{
    struct frame *f = top(p);
    assert(f && f->kind == F_LIST);
    if (text_on(p) && f->items == 0) {
        if (f->head_line != SIZE_MAX && f->head_line < p->nlines) {
            struct line *h = &p->lines[f->head_line];
            if (f->empty)
                h->value = f->empty;
            else
                h->hide = true;
        } else if (f->empty) {
            struct line *l = add_line(p, L_TEXT, f->indent);
            if (l)
                l->value = f->empty;
        }
    }
    jclose(p, f);
    p->depth--;
    if (f->top)
        block_end(p);
}

void mdi_list_flush(mdi_printer *p)
{
    struct frame *f = top(p);
    if (text(p) && f && f->kind == F_LIST && f->top && !f->notext && f->items &&
        f->table_line < p->nlines && p->lines[f->table_line].table &&
        p->lines[f->table_line].table->nrows)
        flush_chunk(p, f);
    mdi_printer_flush(p);
}

void mdi_item_begin(mdi_printer *p)
{
    struct frame *list = top(p), *f;
    assert(list && list->kind == F_LIST);
    list->items++;
    f = push(p, F_ITEM);
    f->flags = list->flags;
    f->top = list->top;
    /* Scalars need an array to go into: at top level items are objects. */
    if (!text(p) && !f->nojson && (!(list->flags & MDI_LIST_SCALARS) || list->top)) {
        if (list->top)
            jrecord_open(p, f);
        else
            jnest(p, NULL, false);
    } else if (!text(p)) {
        f->jshare = true; /* scalars go straight into the array */
    }
    if (text_on(p) && list->table_line < p->nlines) {
        struct table *t = p->lines[list->table_line].table;
        /* Grown by doubling: a chunk holds thousands of rows. */
        size_t cap = t && t->rows ? talloc_array_length(t->rows) : 0;
        size_t want = t && t->nrows < cap ? cap : cap ? 2 * cap : 64;
        char ***nr =
            t ? (want == cap ? t->rows : talloc_realloc(p->blk, t->rows, char **, want)) : NULL;
        size_t *nl =
            nr ? (want == cap ? t->rowlen : talloc_realloc(p->blk, t->rowlen, size_t, want)) : NULL;
        char **ns =
            nl ? (want == cap ? t->span : talloc_realloc(p->blk, t->span, char *, want)) : NULL;
        if (nr)
            t->rows = nr;
        if (nl)
            t->rowlen = nl;
        if (!ns) {
            p->failed = true;
            return;
        }
        t->span = ns;
        t->rows[t->nrows] = NULL;
        t->rowlen[t->nrows] = 0;
        t->span[t->nrows] = NULL;
        t->nrows++;
    }
}

void mdi_item_end(mdi_printer *p)
{
    struct frame *f = top(p);
    assert(f && f->kind == F_ITEM);
    if (!text(p) && !f->jshare && !f->top)
        jclose(p, f);
    p->depth--;
    if (f->top && !text(p)) {
        jrecord_close(p);
    } else if (f->top && text(p) && !f->notext) {
        struct frame *list = top(p);
        struct table *t = list->table_line < p->nlines ? p->lines[list->table_line].table : NULL;
        if (t && t->nrows >= CHUNK_ROWS)
            flush_chunk(p, list);
    }
}

/* The table of the list an item belongs to. */
static struct table *item_table(mdi_printer *p)
{
    struct frame *list;
    if (p->depth < 2)
        return NULL;
    list = &p->st[p->depth - 2];
    if (list->kind != F_LIST || list->table_line >= p->nlines)
        return NULL;
    return p->lines[list->table_line].table;
}

/* Add a text value (taking `s`, allocated under p->blk or NULL on failure). */
static void text_put(mdi_printer *p, const char *label, char *s, bool right)
{
    struct frame *f = top(p);
    if (!s) {
        p->failed = true;
        return;
    }
    if (f && f->kind == F_ITEM) {
        struct table *t = item_table(p);
        size_t r, c;
        char **nc;
        if (!t || !t->nrows)
            return;
        r = t->nrows - 1;
        c = t->rowlen[r];
        if (c >= t->ncols) {
            char **nh = talloc_realloc(p->blk, t->head, char *, c + 1);
            bool *nrt = nh ? talloc_realloc(p->blk, t->right, bool, c + 1) : NULL;
            if (!nrt) {
                p->failed = true;
                return;
            }
            t->head = nh;
            t->right = nrt;
            t->head[c] = talloc_strdup(p->blk, label);
            t->right[c] = right;
            t->ncols = c + 1;
        }
        nc = t->rows[r];
        if (!nc || c >= talloc_array_length(nc)) /* room for the columns seen so far */
            nc = talloc_realloc(p->blk, nc, char *, c + 1 > t->ncols ? c + 1 : t->ncols);
        if (!nc) {
            p->failed = true;
            return;
        }
        t->rows[r] = nc;
        nc[c] = s;
        t->rowlen[r] = c + 1;
        p->last = LAST_CELL;
        p->last_row = r;
        p->last_cell = c;
        return;
    }
    {
        struct line *l = add_line(p, f ? L_KV : L_TEXT, f ? f->indent : 0);
        if (!l)
            return;
        l->label = talloc_strdup(p->blk, label);
        l->value = s;
        p->last = LAST_LINE;
        p->last_line = p->nlines - 1;
    }
}

/* Every value starts here: mdi_note() applies to this value only, and a
 * value outside any record becomes a record of its own. */
static bool value_begin(mdi_printer *p)
{
    p->last = LAST_NONE;
    p->last_obj = 0;
    if (p->depth)
        return false;
    mdi_record_begin(p);
    return true;
}

static void value_end(mdi_printer *p, bool own)
{
    if (own)
        mdi_record_end(p);
}

/* The common path of every value: the text (formatted only in text mode,
 * by the caller) and the JSON value (written only in JSON mode, after its
 * key). */
#define VALUE(p, key, label, TEXT_EXPR, RIGHT, JSON_STMT)                                          \
    do {                                                                                           \
        bool own_ = value_begin(p);                                                                \
        if (label && text_on(p))                                                                   \
            text_put(p, label, TEXT_EXPR, RIGHT);                                                  \
        else if (json_on(p) && jmember(p, key))                                                    \
            JSON_STMT;                                                                             \
        value_end(p, own_);                                                                        \
    } while (0)

void mdi_str(mdi_printer *p, const char *key, const char *label, const char *s)
{
    VALUE(p, key, label, s ? arena_text(p, s, strlen(s), false) : arena_strndup(p, "-", 1), false,
          jstr0(p, s));
}

void mdi_quoted(mdi_printer *p, const char *key, const char *label, const char *s, size_t len)
{
    VALUE(p, key, label, arena_text(p, s, len, true), false, jstring(p, s, len));
}

/* Decimal without printf: counts fill whole columns of long tables. */
static char *uint_text(mdi_printer *p, uint64_t v)
{
    char digits[24];
    size_t n = 0;
    do
        digits[sizeof digits - ++n] = (char)('0' + v % 10);
    while ((v /= 10));
    return arena_strndup(p, digits + sizeof digits - n, n);
}

void mdi_uint(mdi_printer *p, const char *key, const char *label, uint64_t v)
{
    VALUE(p, key, label, uint_text(p, v), true, juint(p, v));
}

void mdi_int(mdi_printer *p, const char *key, const char *label, int64_t v)
{
    VALUE(p, key, label, arena_printf(p, "%" PRId64, v), true, jint(p, v));
}

/* JSON has no NaN or infinities: those are the strings JavaScript's
 * Number() reads back. */
void mdi_real(mdi_printer *p, const char *key, const char *label, double v, const char *text)
{
    VALUE(p, key, label, arena_strndup(p, text, strlen(text)), true, jreal(p, v));
}

void mdi_hex(mdi_printer *p, const char *key, const char *label, uint64_t v, int digits)
{
    VALUE(p, key, label, arena_printf(p, "0x%0*" PRIx64, digits, v), false, juint(p, v));
}

/* "0xTTRRRRRR" without printf: tokens fill most tables. */
static char *token_text(mdi_printer *p, uint32_t token)
{
    static const char hex[] = "0123456789abcdef";
    char *s = arena_alloc(p, 11);
    if (!s)
        return NULL;
    s[0] = '0';
    s[1] = 'x';
    for (int i = 0; i < 8; i++)
        s[2 + i] = hex[(token >> (28 - 4 * i)) & 0xF];
    s[10] = '\0';
    return s;
}

void mdi_token(mdi_printer *p, const char *key, const char *label, uint32_t token)
{
    VALUE(p, key, label, token_text(p, token), false, jtoken(p, token));
}

void mdi_bool(mdi_printer *p, const char *key, const char *label, bool v)
{
    VALUE(p, key, label, arena_strndup(p, v ? "yes" : "no", v ? 3 : 2), false,
          jraw(p, v ? "true" : "false"));
}

void mdi_guid(mdi_printer *p, const char *key, const char *label, const uint8_t *guid)
{
    char b[37];
    if (guid)
        mdt_guid_format(b, guid);
    VALUE(p, key, label, talloc_strdup(p->blk, guid ? b : "nil"), false, jstr0(p, guid ? b : NULL));
}

void mdi_none(mdi_printer *p, const char *key, const char *label, const char *txt)
{
    bool own = value_begin(p);
    if (label && txt && text_on(p))
        text_put(p, label, arena_strndup(p, txt, strlen(txt)), false);
    else if (json_on(p) && jmember(p, key))
        jraw(p, "null");
    value_end(p, own);
}

void mdi_error(mdi_printer *p, const char *key, const char *label, const char *msg)
{
    VALUE(p, key, label,
          talloc_asprintf(p->blk, "<error: %s>", mdi_escape(p->blk, msg, strlen(msg), false)),
          false, jerror(p, msg));
}

void mdi_item_error(mdi_printer *p, const char *key, const char *msg)
{
    struct frame *f = top(p);
    assert(f && f->kind == F_ITEM);
    if (text_on(p)) {
        struct table *t = item_table(p);
        if (t && t->nrows) {
            t->span[t->nrows - 1] =
                talloc_asprintf(p->blk, "<error: %s>", mdi_escape(p->blk, msg, strlen(msg), false));
            if (!t->span[t->nrows - 1])
                p->failed = true;
        }
    } else if (json_on(p) && jmember(p, key)) {
        jerror(p, msg);
    }
}

bool mdi_flag_set(uint32_t v, const mdi_flagname *n)
{
    return n->mask ? (v & n->mask) == n->bit : (v & n->bit) != 0;
}

void mdi_flags(mdi_printer *p, const char *key, const char *label, uint32_t v,
               const mdi_flagname *names)
{
    uint32_t rest = v;
    bool own = value_begin(p);
    if (label && text_on(p)) {
        /* Names, not hex: "Public, BeforeFieldInit"; bits without a name
         * as hex after them; "none" for 0 without a name. */
        char *s = talloc_strdup(p->blk, "");
        for (const mdi_flagname *n = names; s && n->name; n++) {
            if (!mdi_flag_set(v, n))
                continue;
            s = talloc_asprintf_append(s, "%s%s", s[0] ? ", " : "", n->name);
            rest &= ~(n->mask ? n->mask : n->bit);
        }
        if (s && rest)
            s = talloc_asprintf_append(s, "%s0x%" PRIx32, s[0] ? ", " : "", rest);
        if (s && !s[0])
            s = talloc_strdup_append(s, "none");
        text_put(p, label, s, false);
    } else if (json_on(p) && jmember(p, key)) {
        /* `key` as a number, then `key`_names: the names, unknown bits
         * as "0x..." */
        char nk[128];
        bool more = false;
        jint(p, v);
        snprintf(nk, sizeof nk, "%s_names", key ? key : "value");
        if (jmember(p, nk)) {
            jput(p, "[", 1);
            for (const mdi_flagname *n = names; n->name; n++) {
                if (!mdi_flag_set(v, n))
                    continue;
                if (more)
                    jput(p, ",", 1);
                more = true;
                jstr0(p, n->name);
                rest &= ~(n->mask ? n->mask : n->bit);
            }
            for (int b = 0; b < 32; b++)
                if (rest & (1u << b)) {
                    char hb[12];
                    int k = snprintf(hb, sizeof hb, "0x%" PRIx32, 1u << b);
                    if (more)
                        jput(p, ",", 1);
                    more = true;
                    jstring(p, hb, (size_t)k);
                }
            jput(p, "]", 1);
        }
    }
    value_end(p, own);
}

void mdi_blob(mdi_printer *p, const char *key, const char *label, uint32_t offset, uint32_t len)
{
    VALUE(p, key, label, talloc_asprintf(p->blk, "blob@0x%" PRIx32 "[%" PRIu32 "]", offset, len),
          false,
          (jraw(p, "{\"offset\":"), jint(p, offset), jraw(p, ",\"length\":"), jint(p, len),
           jput(p, "}", 1)));
}

void mdi_range(mdi_printer *p, const char *key, const char *label, uint32_t first, uint32_t end)
{
    VALUE(p, key, label, talloc_asprintf(p->blk, "0x%08" PRIx32 "..0x%08" PRIx32, first, end),
          false,
          (jraw(p, "{\"first\":"), jtoken(p, first), jraw(p, ",\"end\":"), jtoken(p, end),
           jput(p, "}", 1)));
}

void mdi_note(mdi_printer *p, const char *key, const char *fmt, ...)
{
    va_list ap;
    char *s;
    if (p->failed)
        return;
    va_start(ap, fmt);
    s = talloc_vasprintf(p->blk ? p->blk : (void *)p, fmt, ap);
    va_end(ap);
    if (!s) {
        p->failed = true;
        return;
    }
    if (text(p)) {
        char **slot = NULL;
        if (p->last == LAST_LINE && p->last_line < p->nlines) {
            slot = &p->lines[p->last_line].value;
        } else if (p->last == LAST_CELL) {
            struct table *t = item_table(p);
            if (t && p->last_row < t->nrows && p->last_cell < t->rowlen[p->last_row])
                slot = &t->rows[p->last_row][p->last_cell];
        }
        if (slot) {
            char *e = mdi_escape(p->blk, s, strlen(s), false);
            *slot = e ? talloc_asprintf(p->blk, "%s (%s)", *slot, e) : NULL;
            if (!*slot)
                p->failed = true;
        }
    } else if (key && p->last_obj) {
        /* a member after the value's, in the same object (still open:
         * a note comes right after its value) */
        struct frame *f = jcontainer(p);
        if (f && f->jopen && !f->jarray && f->jid == p->last_obj && jmember(p, key))
            jstr0(p, s);
    }
    talloc_free(s);
}

void mdi_textf(mdi_printer *p, const char *label, const char *fmt, ...)
{
    va_list ap;
    if (!text(p) || p->failed)
        return;
    if (!p->depth) {
        /* A line of its own at top level. */
        char *s;
        block_begin(p);
        va_start(ap, fmt);
        s = talloc_vasprintf(p->blk, fmt, ap);
        va_end(ap);
        if (s) {
            struct line *l = add_line(p, L_TEXT, 0);
            if (l)
                l->value = s;
        } else {
            p->failed = true;
        }
        block_end(p);
        return;
    }
    if (label && text_on(p)) {
        char *s;
        va_start(ap, fmt);
        s = arena_vprintf(p, fmt, ap);
        va_end(ap);
        text_put(p, label, s, false);
    }
}
