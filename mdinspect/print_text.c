/* mdinspect's printer, text: the escaping of names and strings for a
 * terminal, the lines of a block ("label: value" aligned per group, a
 * caption, a table) built in a per-block arena and written when the block
 * ends, or a chunk at a time for a long list, and a list item's cells. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <talloc.h>

#include "common/utf8.h"
#include "print_int.h"

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

void pt_arena_reset(mdi_printer *p)
{
    p->arena = NULL;
    p->arena_left = 0;
}

char *pt_arena_strndup(mdi_printer *p, const char *s, size_t n)
{
    char *r = pt_arena_alloc(p, n + 1);
    if (r) {
        memcpy(r, s, n);
        r[n] = '\0';
    }
    return r;
}

char *pt_arena_vprintf(mdi_printer *p, const char *fmt, va_list ap)
{
    char small[256];
    va_list again;
    int n;
    va_copy(again, ap);
    n = vsnprintf(small, sizeof small, fmt, ap);
    if (n < 0 || (size_t)n < sizeof small) {
        va_end(again);
        return n < 0 ? NULL : pt_arena_strndup(p, small, (size_t)n);
    }
    {
        char *r = pt_arena_alloc(p, (size_t)n + 1);
        if (r)
            vsnprintf(r, (size_t)n + 1, fmt, again);
        va_end(again);
        return r;
    }
}

char *pt_arena_printf(mdi_printer *p, const char *fmt, ...)
{
    va_list ap;
    char *r;
    va_start(ap, fmt);
    r = pt_arena_vprintf(p, fmt, ap);
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
    r = pt_arena_strndup(p, e, strlen(e));
    talloc_free(e);
    return r;
}

/* Printable ASCII needs no escaping: the common case, without mdi_escape. */
char *pt_arena_text(mdi_printer *p, const char *s, size_t len, bool quoted)
{
    return !quoted && pt_printable_prefix(s, len) == len ? pt_arena_strndup(p, s, len)
                                                         : arena_escape(p, s, len, quoted);
}

void pr_block_begin(mdi_printer *p)
{
    p->blk = talloc_new(p);
    pt_arena_reset(p);
    if (!p->blk)
        p->failed = true;
    p->lines = NULL;
    p->nlines = 0;
    p->last = LAST_NONE;
    p->last_obj = 0;
}

/* Before a text block: the file heading when due, else the blank line that
 * separates blocks. */
void pt_separate(mdi_printer *p)
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

struct line *pt_add_line(mdi_printer *p, enum line_kind kind, int indent)
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

/* Write the text block: "label: value" lines aligned per indent level. */
void pt_render_text(mdi_printer *p)
{
    size_t width[MAX_DEPTH + 1] = {0};
    size_t i;
    for (i = 0; i < p->nlines; i++) {
        const struct line *l = &p->lines[i];
        int lvl = l->indent / 2;
        if (l->done || l->kind != L_KV || !l->label[0] || !l->value[0] || lvl > MAX_DEPTH)
            continue;
        if (pt_display_width(l->label) + 1 > width[lvl])
            width[lvl] = pt_display_width(l->label) + 1;
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
                    size_t w = pt_display_width(l->label) + 1;
                    size_t want = lvl <= MAX_DEPTH ? width[lvl] : w;
                    for (; w < want; w++)
                        fputc(' ', p->out);
                    fputc(' ', p->out);
                }
            }
            put_colored(p, pt_value_color(l->value), l->value);
            fputc('\n', p->out);
            break;
        case L_TEXT:
            put_indent(p->out, l->indent);
            put_colored(p, l->caption ? SGR_BOLD : NULL, l->value);
            fputc('\n', p->out);
            break;
        case L_TABLE: pt_render_table(p, l->table, l->indent); break;
        }
    }
}

/* Write what a long top-level list has so far and start a new chunk: keep
 * the lines (the caption, written now, is marked done), the table's header
 * and widths and the list's empty text; free the rows. */
void pt_flush_chunk(mdi_printer *p, struct frame *list)
{
    struct table *t;
    void *nb;
    if (p->failed || list->table_line >= p->nlines || !(t = p->lines[list->table_line].table))
        return;
    if (!p->continued)
        pt_separate(p);
    pt_render_text(p);
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
    pt_arena_reset(p);
    t->rows = NULL;
    t->rowlen = NULL;
    t->span = NULL;
    t->nrows = 0;
    p->last = LAST_NONE;
}

/* The table of the list an item belongs to. */
struct table *pt_item_table(mdi_printer *p)
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
void pt_text_put(mdi_printer *p, const char *label, char *s, bool right)
{
    struct frame *f = pr_top(p);
    if (!s) {
        p->failed = true;
        return;
    }
    if (f && f->kind == F_ITEM) {
        struct table *t = pt_item_table(p);
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
        struct line *l = pt_add_line(p, f ? L_KV : L_TEXT, f ? f->indent : 0);
        if (!l)
            return;
        l->label = talloc_strdup(p->blk, label);
        l->value = s;
        p->last = LAST_LINE;
        p->last_line = p->nlines - 1;
    }
}
