/* Two opens of one assembly compared through the public API (imgcmp.h). */
#define _DEFAULT_SOURCE /* lstat */
#include <dirent.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <talloc.h>

#include "imgcmp.h"
#include "layout.h"
#include "walk.h"

struct cmp {
    int diffs;
    char *why;
    size_t whylen;
    imgcmp_stats *st;
};

static void differ(struct cmp *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void differ(struct cmp *c, const char *fmt, ...)
{
    if (c->diffs++ == 0 && c->whylen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->why, c->whylen, fmt, ap);
        va_end(ap);
    }
}

#define SAME(c, x, y, what)                                                                        \
    do {                                                                                           \
        if ((x) != (y))                                                                            \
            differ(c, "%s: 0x%llx against 0x%llx", what, (unsigned long long)(x),                  \
                   (unsigned long long)(y));                                                       \
    } while (0)

static int same_str(const char *x, const char *y)
{
    return (!x && !y) || (x && y && strcmp(x, y) == 0);
}

static void headers(struct cmp *c, const mdt_image *a, const mdt_image *b)
{
    const mdt_pe_info *p = mdt_image_pe_info(a), *q = mdt_image_pe_info(b);
    SAME(c, p->machine, q->machine, "Machine");
    SAME(c, p->characteristics, q->characteristics, "Characteristics");
    SAME(c, p->pe32plus, q->pe32plus, "PE32+");
    SAME(c, p->subsystem, q->subsystem, "Subsystem");
    SAME(c, p->dll_characteristics, q->dll_characteristics, "DllCharacteristics");
    SAME(c, p->image_base, q->image_base, "ImageBase");
    SAME(c, p->size_of_image, q->size_of_image, "SizeOfImage");
    SAME(c, p->size_of_headers, q->size_of_headers, "SizeOfHeaders");
    SAME(c, p->nsections, q->nsections, "NumberOfSections");
    SAME(c, p->cli_major, q->cli_major, "CLI major");
    SAME(c, p->cli_minor, q->cli_minor, "CLI minor");
    SAME(c, p->cli_flags, q->cli_flags, "CLI flags");
    SAME(c, p->entry_point, q->entry_point, "entry point");
    const mdt_data_dir *dp[] = {&p->metadata,
                                &p->resources,
                                &p->strong_name_signature,
                                &p->vtable_fixups,
                                &p->managed_native_header,
                                &p->debug_dir};
    const mdt_data_dir *dq[] = {&q->metadata,
                                &q->resources,
                                &q->strong_name_signature,
                                &q->vtable_fixups,
                                &q->managed_native_header,
                                &q->debug_dir};
    for (size_t i = 0; i < sizeof dp / sizeof dp[0]; i++) {
        SAME(c, dp[i]->rva, dq[i]->rva, "data directory RVA");
        SAME(c, dp[i]->size, dq[i]->size, "data directory size");
    }
    SAME(c, mdt_image_section_count(a), mdt_image_section_count(b), "sections");
    for (size_t i = 0; i < mdt_image_section_count(a) && i < mdt_image_section_count(b); i++) {
        const mdt_section *s = mdt_image_section(a, i), *t = mdt_image_section(b, i);
        if (memcmp(s, t, sizeof *s) != 0)
            differ(c, "section %zu (%s / %s)", i, s->name, t->name);
    }
    SAME(c, p->ndebug, q->ndebug, "debug entries");
    for (size_t i = 0; i < p->ndebug && i < q->ndebug; i++) {
        const mdt_debug_entry *d = mdt_image_debug_entry(a, i), *e = mdt_image_debug_entry(b, i);
        if (d->type != e->type || d->size != e->size || d->rva != e->rva ||
            d->file_pointer != e->file_pointer || d->has_codeview != e->has_codeview ||
            memcmp(d->pdb_guid, e->pdb_guid, 16) != 0 || d->pdb_age != e->pdb_age ||
            d->time_date_stamp != e->time_date_stamp || !same_str(d->pdb_path, e->pdb_path))
            differ(c, "debug entry %zu (type %u)", i, d->type);
    }
}

static void root(struct cmp *c, const mdt_image *a, const mdt_image *b)
{
    const mdt_md_info *m = mdt_image_md_info(a), *n = mdt_image_md_info(b);
    /* file_offset is a file offset in one and an RVA in the other. */
    if (m->major_version != n->major_version || m->minor_version != n->minor_version ||
        !same_str(m->version, n->version) || m->size != n->size || m->nstreams != n->nstreams ||
        m->enc != n->enc || m->jtd != n->jtd || m->has_pdb != n->has_pdb ||
        m->tables_major != n->tables_major || m->tables_minor != n->tables_minor ||
        m->heap_sizes != n->heap_sizes || m->has_extra_data != n->has_extra_data ||
        m->extra_data != n->extra_data || m->valid != n->valid || m->sorted != n->sorted)
        differ(c, "metadata root facts");
    for (size_t i = 0; i < m->nstreams && i < n->nstreams; i++)
        if (memcmp(mdt_image_stream(a, i), mdt_image_stream(b, i), sizeof(mdt_stream_info)) != 0)
            differ(c, "stream header %zu", i);
    /* The metadata bytes, every stream whole. */
    const mdt_pe_info *p = mdt_image_pe_info(a);
    const uint8_t *x, *y;
    if (mdt_image_rva(&x, a, p->metadata.rva, p->metadata.size) != 0 ||
        mdt_image_rva(&y, b, p->metadata.rva, p->metadata.size) != 0) {
        differ(c, "metadata at RVA 0x%x does not read in both", p->metadata.rva);
    } else if (memcmp(x, y, p->metadata.size) != 0) {
        differ(c, "metadata bytes");
    } else {
        c->st->md_bytes += p->metadata.size;
    }
}

static void cells(struct cmp *c, const mdt_image *a, const mdt_image *b)
{
    mdt_cell u[MDT_LAYOUT_COLS], v[MDT_LAYOUT_COLS];
    for (unsigned t = 0; t < MDT_TABLE_MAX; t++) {
        const mdt_table_schema *s = mdt_table_schema_get(t);
        uint32_t n = mdt_table_rows(a, t);
        SAME(c, n, mdt_table_rows(b, t), "rows");
        SAME(c, mdt_table_row_size(a, t), mdt_table_row_size(b, t), "row size");
        SAME(c, mdt_table_is_sorted(a, t), mdt_table_is_sorted(b, t), "sorted");
        for (uint32_t rid = 1; s && rid <= n && rid <= mdt_table_rows(b, t); rid++) {
            mdt_row r, q;
            int ea = mdt_row_get(&r, a, t, rid), eb = mdt_row_get(&q, b, t, rid);
            if (ea || eb) {
                SAME(c, ea, eb, "row_get");
                continue;
            }
            SAME(c, mdt_row_cells(u, &r), mdt_row_cells(v, &q), "failed cells");
            for (unsigned k = 0; k < s->ncols; k++) {
                c->st->cells++;
                if (u[k].value != v[k].value || u[k].len != v[k].len ||
                    (!u[k].ptr) != (!v[k].ptr) ||
                    (u[k].ptr && memcmp(u[k].ptr, v[k].ptr, u[k].len) != 0))
                    differ(c, "%s row %u column %s", s->name, rid, s->cols[k].name);
                uint8_t kind = s->cols[k].kind;
                if (kind == MDT_COLK_TAB || kind == MDT_COLK_LIST || kind == MDT_COLK_CODED) {
                    uint32_t x = 0, y = 0;
                    SAME(c, mdt_row_token(&x, &r, k), mdt_row_token(&y, &q, k), "token result");
                    SAME(c, x, y, "token");
                }
            }
        }
    }
}

/* Every entry of every heap, in the order mdt_heap_next walks them. */
static void heaps(struct cmp *c, const mdt_image *a, const mdt_image *b)
{
    static const int hs[] = {MDT_HEAP_STRINGS, MDT_HEAP_US, MDT_HEAP_BLOB, MDT_HEAP_GUID};
    for (size_t i = 0; i < sizeof hs / sizeof hs[0]; i++) {
        int h = hs[i];
        uint32_t size = mdt_heap_size(a, h);
        SAME(c, size, mdt_heap_size(b, h), "heap size");
        uint32_t end = h == MDT_HEAP_GUID ? size / 16 + 1 : size;
        for (uint32_t at = h == MDT_HEAP_STRINGS ? 0 : 1; at < end;) {
            const uint8_t *x = NULL, *y = NULL;
            uint32_t nx = 0, ny = 0, na = 0, nb = 0;
            size_t sx = 0, sy = 0;
            int fx = 0, fy = 0, ea, eb;
            switch (h) {
            case MDT_HEAP_STRINGS:
                ea = mdt_heap_string((const char **)&x, &sx, a, at);
                eb = mdt_heap_string((const char **)&y, &sy, b, at);
                nx = (uint32_t)sx, ny = (uint32_t)sy;
                break;
            case MDT_HEAP_US:
                ea = mdt_heap_us(&x, &nx, &fx, a, at);
                eb = mdt_heap_us(&y, &ny, &fy, b, at);
                nx *= 2, ny *= 2;
                break;
            case MDT_HEAP_BLOB:
                ea = mdt_heap_blob(&x, &nx, a, at);
                eb = mdt_heap_blob(&y, &ny, b, at);
                break;
            default:
                ea = mdt_heap_guid(&x, a, at);
                eb = mdt_heap_guid(&y, b, at);
                nx = ny = 16;
            }
            c->st->heap_entries++;
            if (ea != eb || nx != ny || fx != fy || (!ea && memcmp(x, y, nx) != 0))
                differ(c, "heap %d entry 0x%x", h, at);
            ea = mdt_heap_next(&na, a, h, at);
            eb = mdt_heap_next(&nb, b, h, at);
            if (ea || eb || na != nb) {
                SAME(c, na, nb, "heap walk");
                break; /* the next entry's start is unknown */
            }
            at = na;
        }
    }
}

/* About the file's bytes, not the image: a flat open only. */
static int file_warning(const char *w)
{
    return strstr(w, "runs past end of file") != NULL;
}

static void warnings(struct cmp *c, const mdt_image *a, const mdt_image *b)
{
    size_t i = 0, j = 0, na = mdt_image_warning_count(a), nb = mdt_image_warning_count(b);
    for (;;) {
        while (i < na && file_warning(mdt_image_warning(a, i)))
            i++;
        while (j < nb && file_warning(mdt_image_warning(b, j)))
            j++;
        if (i == na || j == nb)
            break;
        if (strcmp(mdt_image_warning(a, i), mdt_image_warning(b, j)) != 0)
            differ(c, "warning \"%s\" against \"%s\"", mdt_image_warning(a, i),
                   mdt_image_warning(b, j));
        i++, j++;
    }
    if (i != na || j != nb)
        differ(c, "warnings: %zu against %zu", na, nb);
}

int imgcmp(const mdt_image *a, const mdt_image *b, imgcmp_stats *st, char *why, size_t whylen)
{
    imgcmp_stats dummy;
    struct cmp c = {0, why, whylen, st ? st : &dummy};
    memset(c.st, 0, sizeof *c.st);
    if (whylen)
        why[0] = '\0';
    headers(&c, a, b);
    root(&c, a, b);
    cells(&c, a, b);
    heaps(&c, a, b);
    warnings(&c, a, b);
    mdt_error_clear();
    return c.diffs;
}

int imgcmp_file(const char *path, imgcmp_tally *t, char *why, size_t whylen)
{
    size_t len = 0;
    uint8_t *bytes = layout_read_file(path, &len);
    loader_layout l;
    mdt_image *flat = NULL, *mapped = NULL;
    char msg[512];
    int rc = 0;
    if (!bytes) {
        snprintf(why, whylen, "%s: cannot read", path);
        return -1;
    }
    if (len < 2 || bytes[0] != 'M' || bytes[1] != 'Z') {
        free(bytes);
        return 0;
    }
    t->pe++;
    void *ctx = talloc_new(NULL);
    int fe = mdt_image_open_buffer(ctx, &flat, path, bytes, len, 0);
    if (layout_make(&l, bytes, len) != 0) {
        if (fe == 0) {
            snprintf(why, whylen, "%s: opens flat, but its headers describe no layout", path);
            rc = -1;
        } else {
            t->flat_fails++;
        }
        goto out;
    }
    int me = mdt_image_open_mapped_ranges(ctx, &mapped, path, l.base, l.ranges, l.nranges, 0);
    if (fe != 0) {
        /* Damaged: only that nothing faults. */
        walk_stats ws;
        if (me == 0)
            walk_image(mapped, &ws);
        t->flat_fails++;
    } else if (me != 0) {
        snprintf(why, whylen,
                 "%s: opens flat, but not laid out (%zu ranges, %u sections, %u "
                 "skipped): %s",
                 path, l.nranges, l.sections, l.skipped, mdt_error_message(msg, sizeof msg));
        rc = -1;
    } else {
        imgcmp_stats st;
        char d[400];
        if (imgcmp(flat, mapped, &st, d, sizeof d) != 0) {
            snprintf(why, whylen, "%s: flat and laid out differ: %s", path, d);
            rc = -1;
        } else {
            t->same++;
            t->with_holes += l.nranges > 1;
            t->r2r += mdt_image_pe_info(flat)->managed_native_header.size != 0;
            t->st.cells += st.cells;
            t->st.heap_entries += st.heap_entries;
            t->st.md_bytes += st.md_bytes;
        }
    }
out:
    t->differ += rc != 0;
    talloc_free(ctx); /* the images before the memory they borrow */
    layout_free(&l);
    free(bytes);
    mdt_error_clear();
    return rc;
}

int imgcmp_tree(const char *dir, imgcmp_tally *t, char *why, size_t whylen)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int rc = 0;
    if (!d) {
        snprintf(why, whylen, "cannot open %s", dir);
        return -1;
    }
    while (rc == 0 && (e = readdir(d))) {
        char p[2048];
        struct stat st;
        bool link;
        if (e->d_name[0] == '.')
            continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (lstat(p, &st) != 0 || ((link = S_ISLNK(st.st_mode)) && stat(p, &st) != 0))
            continue;
        if (S_ISDIR(st.st_mode) && !link)
            rc = imgcmp_tree(p, t, why, whylen);
        else if (S_ISREG(st.st_mode))
            rc = imgcmp_file(p, t, why, whylen);
    }
    closedir(d);
    return rc;
}

void imgcmp_report(const char *what, const imgcmp_tally *t)
{
    fprintf(stderr,
            "%s: %u PE files, %u read alike laid out (%u with holes, %u ReadyToRun; %llu cells, "
            "%llu heap entries, %llu metadata bytes), %u damaged (laid out and walked)\n",
            what, t->pe, t->same, t->with_holes, t->r2r, (unsigned long long)t->st.cells,
            (unsigned long long)t->st.heap_entries, (unsigned long long)t->st.md_bytes,
            t->flat_fails);
}
