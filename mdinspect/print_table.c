/* mdinspect's printer, tables: a text list's rows laid out in columns
 * (numbers right-aligned, the widths of earlier chunks carried over, cut
 * with an ellipsis to a terminal's width), each line assembled in one
 * buffer and written with one fwrite. */
#include "config.h"

#include <string.h>

#include <talloc.h>

#include "print_int.h"

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

void pt_render_table(mdi_printer *p, struct table *t, int indent)
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
            size_t w = pt_display_width(t->rows[r][c]);
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
        if (pt_display_width(t->head[c]) > width[c])
            width[c] = pt_display_width(t->head[c]);
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
            ln_cell(p, t->head[c], pt_display_width(t->head[c]), width[c], t->right[c], c + 1 == n,
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
                    c + 1 == n && !t->span[r], pt_value_color(t->rows[r][c]));
        }
        if (t->span[r]) {
            const char *sgr = pt_value_color(t->span[r]);
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
