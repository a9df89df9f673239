/* mdinspect's printer: one description of the output, rendered as aligned
 * text or as JSON Lines through jansson (see print.h for the model).
 *
 * Text is buffered one top-level block at a time (a record, or a whole
 * top-level list) so that values and table columns can be aligned once the
 * widest entry is known; JSON objects are built with jansson and written
 * when their top-level record or item ends. */
#include "config.h"

#include <assert.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include <jansson.h>
#include <talloc.h>

#include <mdtools/heaps.h>

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
    json_t *json;      /* object or array (borrowed from the tree) */
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
    json_t *root;

    /* Text: a table line being assembled. */
    char *line;
    size_t linelen, linecap;
    char *arena; /* text of the block's values (arena_alloc) */
    size_t arena_left;
    size_t max_width; /* cap table lines to this many columns; 0: no cap */

    /* The value just written, for mdi_note(). */
    enum { LAST_NONE, LAST_LINE, LAST_CELL } last;
    size_t last_line, last_row, last_cell;
    json_t *last_obj;
};

/* ---- UTF-8 and escaping ---- */

/* Length of the well-formed UTF-8 sequence at s (1..4), or 0. */
static size_t utf8_seq(const unsigned char *s, size_t len, uint32_t *cp)
{
    uint32_t c;
    size_t n, i;
    if (!len)
        return 0;
    if (s[0] < 0x80) {
        *cp = s[0];
        return 1;
    }
    if (s[0] >= 0xC2 && s[0] <= 0xDF)
        n = 2, c = s[0] & 0x1F;
    else if (s[0] >= 0xE0 && s[0] <= 0xEF)
        n = 3, c = s[0] & 0x0F;
    else if (s[0] >= 0xF0 && s[0] <= 0xF4)
        n = 4, c = s[0] & 0x07;
    else
        return 0;
    if (n > len)
        return 0;
    for (i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        c = c << 6 | (s[i] & 0x3F);
    }
    if ((n == 3 && c < 0x800) || (n == 4 && (c < 0x10000 || c > 0x10FFFF)) ||
        (c >= 0xD800 && c <= 0xDFFF))
        return 0;
    *cp = c;
    return n;
}

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
        size_t n = utf8_seq(u + i, len - i, &cp);
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

/* A JSON string of s[0..len): bytes that are not UTF-8 become U+FFFD. */
static json_t *json_lossy(const char *s, size_t len)
{
    const unsigned char *u = (const unsigned char *)s;
    char *buf;
    size_t i = 0, o = 0;
    json_t *j;
    for (i = 0; i < len;) {
        uint32_t cp;
        size_t n = utf8_seq(u + i, len - i, &cp);
        if (n == 0)
            break;
        i += n;
    }
    if (i == len)
        return json_stringn(s, len);
    buf = talloc_array(NULL, char, len * 3 + 1);
    if (!buf)
        return NULL;
    for (i = 0; i < len;) {
        uint32_t cp;
        size_t n = utf8_seq(u + i, len - i, &cp);
        if (n == 0) {
            memcpy(buf + o, "\xEF\xBF\xBD", 3);
            o += 3;
            i++;
        } else {
            memcpy(buf + o, u + i, n);
            o += n;
            i += n;
        }
    }
    j = json_stringn(buf, o);
    talloc_free(buf);
    return j;
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

static int destroy_printer(mdi_printer *p)
{
    if (p->root)
        json_decref(p->root);
    return 0;
}

mdi_printer *mdi_printer_new(void *mem_ctx, FILE *out, enum mdi_format fmt)
{
    mdi_printer *p = talloc_zero(mem_ctx, mdi_printer);
    if (!p)
        return NULL;
    p->out = out;
    p->fmt = fmt;
    p->headings = true;
    talloc_set_destructor(p, destroy_printer);
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
    p->last_obj = NULL;
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

static void write_json(mdi_printer *p, json_t *obj)
{
    if (!obj)
        return;
    if (!p->failed) {
        if (json_dumpf(obj, p->out, JSON_COMPACT) != 0)
            p->failed = true;
        fputc('\n', p->out);
    }
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
    } else if (p->root) {
        write_json(p, p->root);
        json_decref(p->root);
        p->root = NULL;
    }
    talloc_free(p->blk);
    p->blk = NULL;
    arena_reset(p);
    p->lines = NULL;
    p->nlines = 0;
    p->continued = false;
    p->last = LAST_NONE;
    p->last_obj = NULL;
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

/* A new JSON object for a top-level record or item: "file" first. */
static json_t *json_record(mdi_printer *p)
{
    json_t *o = json_object();
    if (!o) {
        p->failed = true;
        return NULL;
    }
    if (p->file)
        json_object_set_new(o, "file", json_lossy(p->file, strlen(p->file)));
    return o;
}

void mdi_record_begin(mdi_printer *p)
{
    struct frame *f;
    assert(p->depth == 0); /* records are top-level; nest objects */
    block_begin(p);
    f = push(p, F_RECORD);
    f->top = true;
    if (!text(p)) {
        p->root = json_record(p);
        f->json = p->root;
    }
}

void mdi_record_end(mdi_printer *p)
{
    assert(p->depth == 1 && top(p)->kind == F_RECORD);
    p->depth--;
    block_end(p);
}

/* Attach a new JSON value to the innermost container. Takes the reference. */
static void json_attach(mdi_printer *p, const char *key, json_t *v)
{
    struct frame *f = top(p);
    if (!v) {
        p->failed = true;
        return;
    }
    if (!f || !f->json) {
        json_decref(v);
        return;
    }
    if (json_is_array(f->json)) {
        json_array_append_new(f->json, v);
        p->last_obj = NULL;
    } else {
        json_object_set_new(f->json, key ? key : "value", v);
        p->last_obj = f->json;
    }
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
    if (!text(p) && !f->nojson) {
        json_t *o = json_object();
        if (!o) {
            p->failed = true;
            return;
        }
        p->depth--; /* attach to the parent */
        json_attach(p, key, json_incref(o));
        p->depth++;
        f->json = o;
        json_decref(o); /* the tree holds it */
    }
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
    if (!text(p) && !f->nojson && parent) {
        json_t *a = json_array();
        p->depth--;
        json_attach(p, key, json_incref(a));
        p->depth++;
        f->json = a;
        json_decref(a);
    }
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
        if (list->top) {
            p->root = json_record(p);
            f->json = p->root;
        } else {
            json_t *o = json_object();
            p->depth--;
            json_attach(p, NULL, json_incref(o));
            p->depth++;
            f->json = o;
            json_decref(o);
        }
    } else if (!text(p)) {
        f->json = list->json; /* scalars go straight into the array */
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
    p->depth--;
    if (f->top && !text(p) && p->root) {
        write_json(p, p->root);
        json_decref(p->root);
        p->root = NULL;
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
    p->last_obj = NULL;
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
 * by the caller) and the JSON value (built only in JSON mode). */
#define VALUE(p, key, label, TEXT_EXPR, RIGHT, JSON_EXPR)                                          \
    do {                                                                                           \
        bool own_ = value_begin(p);                                                                \
        if (label && text_on(p))                                                                   \
            text_put(p, label, TEXT_EXPR, RIGHT);                                                  \
        else if (json_on(p))                                                                       \
            json_attach(p, key, JSON_EXPR);                                                        \
        value_end(p, own_);                                                                        \
    } while (0)

static json_t *json_u64(uint64_t v)
{
    if (v > (uint64_t)INT64_MAX) {
        char b[24];
        snprintf(b, sizeof b, "0x%" PRIx64, v);
        return json_string(b);
    }
    return json_integer((json_int_t)v);
}

static json_t *json_tok(uint32_t tok)
{
    char b[16];
    snprintf(b, sizeof b, "0x%08" PRIx32, tok);
    return json_string(b);
}

void mdi_str(mdi_printer *p, const char *key, const char *label, const char *s)
{
    VALUE(p, key, label, s ? arena_text(p, s, strlen(s), false) : arena_strndup(p, "-", 1), false,
          s ? json_lossy(s, strlen(s)) : json_null());
}

void mdi_quoted(mdi_printer *p, const char *key, const char *label, const char *s, size_t len)
{
    VALUE(p, key, label, arena_text(p, s, len, true), false, json_lossy(s, len));
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
    VALUE(p, key, label, uint_text(p, v), true, json_u64(v));
}

void mdi_int(mdi_printer *p, const char *key, const char *label, int64_t v)
{
    VALUE(p, key, label, arena_printf(p, "%" PRId64, v), true, json_integer((json_int_t)v));
}

/* JSON has no NaN or infinities: those are the strings JavaScript's
 * Number() reads back. */
void mdi_real(mdi_printer *p, const char *key, const char *label, double v, const char *text)
{
    VALUE(p, key, label, arena_strndup(p, text, strlen(text)), true,
          isnan(v)   ? json_string("NaN")
          : isinf(v) ? json_string(v < 0 ? "-Infinity" : "Infinity")
                     : json_real(v));
}

void mdi_hex(mdi_printer *p, const char *key, const char *label, uint64_t v, int digits)
{
    VALUE(p, key, label, arena_printf(p, "0x%0*" PRIx64, digits, v), false, json_u64(v));
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
    VALUE(p, key, label, token_text(p, token), false, json_tok(token));
}

void mdi_bool(mdi_printer *p, const char *key, const char *label, bool v)
{
    VALUE(p, key, label, arena_strndup(p, v ? "yes" : "no", v ? 3 : 2), false, json_boolean(v));
}

void mdi_guid(mdi_printer *p, const char *key, const char *label, const uint8_t *guid)
{
    char b[37];
    if (guid)
        mdt_heap_guid_format(b, guid);
    VALUE(p, key, label, talloc_strdup(p->blk, guid ? b : "nil"), false,
          guid ? json_string(b) : json_null());
}

void mdi_none(mdi_printer *p, const char *key, const char *label, const char *txt)
{
    bool own = value_begin(p);
    if (label && txt && text_on(p))
        text_put(p, label, arena_strndup(p, txt, strlen(txt)), false);
    else if (json_on(p))
        json_attach(p, key, json_null());
    value_end(p, own);
}

void mdi_error(mdi_printer *p, const char *key, const char *label, const char *msg)
{
    json_t *e = NULL;
    if (json_on(p)) {
        e = json_object();
        if (e)
            json_object_set_new(e, "error", json_lossy(msg, strlen(msg)));
    }
    VALUE(p, key, label,
          talloc_asprintf(p->blk, "<error: %s>", mdi_escape(p->blk, msg, strlen(msg), false)),
          false, e);
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
    } else if (json_on(p)) {
        json_t *e = json_object();
        if (e)
            json_object_set_new(e, "error", json_lossy(msg, strlen(msg)));
        json_attach(p, key, e);
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
    } else if (json_on(p)) {
        json_t *a = json_array();
        char *nk = talloc_asprintf(p->blk ? p->blk : (void *)p, "%s_names", key);
        json_attach(p, key, json_integer(v));
        for (const mdi_flagname *n = names; a && n->name; n++) {
            if (!mdi_flag_set(v, n))
                continue;
            json_array_append_new(a, json_string(n->name));
            rest &= ~(n->mask ? n->mask : n->bit);
        }
        for (int b = 0; a && b < 32; b++)
            if (rest & (1u << b)) {
                char hb[12];
                snprintf(hb, sizeof hb, "0x%" PRIx32, 1u << b);
                json_array_append_new(a, json_string(hb));
            }
        if (nk)
            json_attach(p, nk, a);
        else
            json_decref(a);
        talloc_free(nk);
    }
    value_end(p, own);
}

void mdi_blob(mdi_printer *p, const char *key, const char *label, uint32_t offset, uint32_t len)
{
    json_t *o = NULL;
    if (json_on(p) && (o = json_object())) {
        json_object_set_new(o, "offset", json_integer(offset));
        json_object_set_new(o, "length", json_integer(len));
    }
    VALUE(p, key, label, talloc_asprintf(p->blk, "blob@0x%" PRIx32 "[%" PRIu32 "]", offset, len),
          false, o);
}

void mdi_range(mdi_printer *p, const char *key, const char *label, uint32_t first, uint32_t end)
{
    json_t *o = NULL;
    if (json_on(p) && (o = json_object())) {
        json_object_set_new(o, "first", json_tok(first));
        json_object_set_new(o, "end", json_tok(end));
    }
    VALUE(p, key, label, talloc_asprintf(p->blk, "0x%08" PRIx32 "..0x%08" PRIx32, first, end),
          false, o);
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
        json_object_set_new(p->last_obj, key, json_lossy(s, strlen(s)));
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
