/* mdinspect's printer: one description of the output, rendered as aligned
 * text or as JSON Lines (see print.h for the model). This file keeps the
 * printer and the frames of what is being printed (records, objects,
 * lists, items), and hands each to the text layout (print_text.c,
 * print_table.c) or to the JSON writer (print_json.c); the value calls are
 * in print_values.c.
 *
 * Text is buffered one top-level block at a time (a record, or a whole
 * top-level list) so that values and table columns can be aligned once the
 * widest entry is known; JSON is streamed into a buffer as the values come
 * and written when its top-level record or item ends. */
#include "config.h"

#include <assert.h>
#include <string.h>

#include <talloc.h>

#include "print_int.h"

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

static struct frame *push(mdi_printer *p, enum frame_kind kind)
{
    struct frame *parent = pr_top(p), *f;
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

void pr_block_end(mdi_printer *p)
{
    if (pr_text(p)) {
        if (!p->failed && p->nlines) {
            if (!p->continued)
                pt_separate(p);
            pt_render_text(p);
            p->printed = true;
            p->block_after_heading = true;
        }
    } else {
        pj_record_close(p);
    }
    talloc_free(p->blk);
    p->blk = NULL;
    pt_arena_reset(p);
    p->lines = NULL;
    p->nlines = 0;
    p->continued = false;
    p->last = LAST_NONE;
    p->last_obj = 0;
}

void mdi_record_begin(mdi_printer *p)
{
    struct frame *f;
    assert(p->depth == 0); /* records are top-level; nest objects */
    pr_block_begin(p);
    f = push(p, F_RECORD);
    f->top = true;
    if (!pr_text(p))
        pj_record_open(p, f);
}

void mdi_record_end(mdi_printer *p)
{
    assert(p->depth == 1 && pr_top(p)->kind == F_RECORD);
    p->depth--;
    pr_block_end(p);
}

void mdi_object_begin(mdi_printer *p, const char *key, const char *label)
{
    struct frame *f;
    assert(p->depth > 0 && pr_top(p)->kind != F_LIST); /* objects live in records and items */
    f = push(p, F_OBJECT);
    if (!label)
        f->notext = true;
    if (!key)
        f->nojson = true;
    if (!pr_text(p) && !f->nojson)
        pj_nest(p, key, false);
    if (pr_text_on(p) && label && label[0]) {
        struct line *l = pt_add_line(p, L_KV, f->indent);
        if (l) {
            l->label = talloc_strdup(p->blk, label);
            l->value = talloc_strdup(p->blk, "");
        }
        f->indent += 2;
    }
}

void mdi_object_end(mdi_printer *p)
{
    assert(p->depth > 0 && pr_top(p)->kind == F_OBJECT);
    pj_close(p, pr_top(p));
    p->depth--;
}

void mdi_list_begin(mdi_printer *p, const char *key, const char *label, const char *empty,
                    unsigned flags)
{
    struct frame *parent = pr_top(p), *f;
    struct line *l;
    if (!parent)
        pr_block_begin(p);
    assert(!parent || parent->kind != F_LIST);
    f = push(p, F_LIST);
    f->top = !parent;
    f->flags = flags;
    if (!label)
        f->notext = true;
    if (!key && parent)
        f->nojson = true;
    if (!pr_text(p) && !f->nojson && parent)
        pj_nest(p, key, true);
    if (!pr_text_on(p))
        return;
    f->empty = empty ? talloc_strdup(p->blk, empty) : NULL;
    if (label[0]) {
        if (f->top) {
            /* A caption, with the table indented under it. */
            l = pt_add_line(p, L_TEXT, f->indent);
            if (l) {
                l->value = talloc_strdup(p->blk, label);
                l->caption = true;
            }
            f->indent += 2;
        } else {
            f->head_line = p->nlines;
            l = pt_add_line(p, L_KV, f->indent);
            if (l) {
                l->label = talloc_strdup(p->blk, label);
                l->value = talloc_strdup(p->blk, "");
            }
            f->indent += 2;
        }
    }
    f->table_line = p->nlines;
    l = pt_add_line(p, L_TABLE, f->indent);
    if (l) {
        l->table = talloc_zero(p->blk, struct table);
        if (!l->table)
            p->failed = true;
    }
}

void mdi_list_end(mdi_printer *p)
{
    struct frame *f = pr_top(p);
    assert(f && f->kind == F_LIST);
    if (pr_text_on(p) && f->items == 0) {
        if (f->head_line != SIZE_MAX && f->head_line < p->nlines) {
            struct line *h = &p->lines[f->head_line];
            if (f->empty)
                h->value = f->empty;
            else
                h->hide = true;
        } else if (f->empty) {
            struct line *l = pt_add_line(p, L_TEXT, f->indent);
            if (l)
                l->value = f->empty;
        }
    }
    pj_close(p, f);
    p->depth--;
    if (f->top)
        pr_block_end(p);
}

void mdi_list_flush(mdi_printer *p)
{
    struct frame *f = pr_top(p);
    if (pr_text(p) && f && f->kind == F_LIST && f->top && !f->notext && f->items &&
        f->table_line < p->nlines && p->lines[f->table_line].table &&
        p->lines[f->table_line].table->nrows)
        pt_flush_chunk(p, f);
    mdi_printer_flush(p);
}

void mdi_item_begin(mdi_printer *p)
{
    struct frame *list = pr_top(p), *f;
    assert(list && list->kind == F_LIST);
    list->items++;
    f = push(p, F_ITEM);
    f->flags = list->flags;
    f->top = list->top;
    /* Scalars need an array to go into: at top level items are objects. */
    if (!pr_text(p) && !f->nojson && (!(list->flags & MDI_LIST_SCALARS) || list->top)) {
        if (list->top)
            pj_record_open(p, f);
        else
            pj_nest(p, NULL, false);
    } else if (!pr_text(p)) {
        f->jshare = true; /* scalars go straight into the array */
    }
    if (pr_text_on(p) && list->table_line < p->nlines) {
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
    struct frame *f = pr_top(p);
    assert(f && f->kind == F_ITEM);
    if (!pr_text(p) && !f->jshare && !f->top)
        pj_close(p, f);
    p->depth--;
    if (f->top && !pr_text(p)) {
        pj_record_close(p);
    } else if (f->top && pr_text(p) && !f->notext) {
        struct frame *list = pr_top(p);
        struct table *t = list->table_line < p->nlines ? p->lines[list->table_line].table : NULL;
        if (t && t->nrows >= CHUNK_ROWS)
            pt_flush_chunk(p, list);
    }
}
