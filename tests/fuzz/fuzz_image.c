/* libFuzzer harness over opening an image and reading all of it through the
 * public API (ECMA-335 II.24, II.25): the input is opened as a file layout,
 * as a loader-mapped layout, laid out as a loader lays it out with the gaps
 * between sections unreadable (tests/common/layout.c; a read of a gap
 * faults) and, when it holds "BSJB", as a raw metadata blob starting
 * there. Each image that opens is walked completely (every
 * row, cell, range and heap entry; tests/common/walk.c), then its streams,
 * sections, debug entries, user strings, key lookups, column-at-a-time
 * reads and assembly identities are read. Besides the sanitizers, oracles
 * abort when range columns yield more rows than the image holds, a lookup
 * disagrees with a scan, a column, whole-row or run read disagrees with the
 * per-cell accessors, an inline accessor disagrees with its out-of-line
 * slow path, a user string disagrees with its length prefix, an allocation
 * outlives the image under the caller's context, an image or a name cache
 * grows far larger than its input, or mdt_coded_decode() makes a token of
 * a row that has none (walk_guest_check). Built for libFuzzer with
 * --enable-fuzzing, and
 * always as a plain replayer (replay.c) that `make check` runs over
 * tests/fuzz/corpus/image/. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <talloc.h>

#include <mdtools/mdtools.h>

#include "layout.h"
#include "rowruns.h"
#include "walk.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Results are folded in here so nothing is optimised away. */
static volatile uint64_t sink;

/* Turning an error into a message must work for every failure. */
static void touch_error(void)
{
    char msg[512];
    sink += strlen(mdt_error_message(msg, sizeof msg));
}

static void touch_headers(const mdt_image *img)
{
    const mdt_md_info *mi = mdt_image_md_info(img);
    const mdt_pe_info *pe = mdt_image_pe_info(img);
    size_t len;

    sink += strlen(mdt_image_name(img)) + strlen(mdt_image_kind_name(mdt_image_kind(img)));
    sink += (uintptr_t)mdt_image_bytes(&len, img) + len;
    for (size_t i = 0; i < mdt_image_warning_count(img); i++)
        sink += strlen(mdt_image_warning(img, i));
    sink += mdt_image_warning(img, mdt_image_warning_count(img)) == NULL;
    if (mi->version)
        sink += strlen(mi->version);
    for (size_t i = 0; i < mi->nstreams; i++) {
        const mdt_stream_info *s = mdt_image_stream(img, i);
        sink += strlen(s->name) + s->offset + s->size + s->used;
    }
    sink += mdt_image_stream(img, mi->nstreams) == NULL;
    for (size_t i = 0; i < pe->ndebug; i++) {
        const mdt_debug_entry *d = mdt_image_debug_entry(img, i);
        sink += d->type + d->size + d->has_codeview;
        if (d->pdb_path)
            sink += strlen(d->pdb_path);
    }
    sink += mdt_image_debug_entry(img, pe->ndebug) == NULL;
}

/* Every section from its start: the first bytes (zero-filled past the raw
 * data), the pointer and file-offset views, and the bytes that straddle its
 * end. */
static void touch_sections(const mdt_image *img)
{
    static uint8_t buf[4096];
    size_t n = mdt_image_section_count(img);
    const mdt_pe_info *pe = mdt_image_pe_info(img);
    const uint8_t *p;
    uint64_t off;

    for (size_t i = 0; i < n; i++) {
        const mdt_section *s = mdt_image_section(img, i);
        uint32_t span = s->virtual_size ? s->virtual_size : s->raw_size;
        uint32_t want = span < sizeof buf ? span : (uint32_t)sizeof buf;
        sink += strlen(s->name);
        if (mdt_image_read_rva(buf, want, img, s->virtual_address) == 0)
            sink += want ? buf[0] + buf[want - 1] : 0;
        else
            touch_error();
        if (mdt_image_rva(&p, img, s->virtual_address, 1) == 0)
            sink += *p;
        else
            touch_error();
        if (mdt_image_rva_to_offset(&off, img, s->virtual_address) == 0)
            sink += off;
        else
            touch_error();
        if (span >= 8 && mdt_image_read_rva(buf, 16, img, s->virtual_address + span - 8) != 0)
            touch_error();
    }
    sink += mdt_image_section(img, n) == NULL;
    if (pe->metadata.rva && mdt_image_rva(&p, img, pe->metadata.rva, pe->metadata.size) == 0)
        sink += p[0];
    if (mdt_image_read_rva(buf, 64, img, 0) != 0)
        touch_error();
}

/* The bytes of the #US heap the image chose, found through the public
 * stream table, or NULL. */
static const uint8_t *us_heap_bytes(const mdt_image *img)
{
    const mdt_md_info *mi = mdt_image_md_info(img);
    size_t len;
    const uint8_t *bytes = mdt_image_bytes(&len, img), *p;
    for (size_t i = 0; i < mi->nstreams; i++) {
        const mdt_stream_info *s = mdt_image_stream(img, i);
        if (!s->used || strcasecmp(s->name, "#US") != 0)
            continue;
        /* A loader layout's bytes are the headers only: go by RVA. */
        if (mdt_image_kind(img) == MDT_KIND_PE_MAPPED)
            return mdt_image_rva(&p, img, (uint32_t)mi->file_offset + s->offset, s->size) == 0
                       ? p
                       : NULL;
        if (mi->file_offset + s->offset + s->size <= len)
            return bytes + mi->file_offset + s->offset;
    }
    return NULL;
}

/* Every user string, converted to UTF-8 as a printer would. Each string's
 * length prefix is decoded here too, so a non-minimal prefix is skipped
 * correctly, and the pointer the library returns must follow it. */
static void touch_user_strings(void *ctx, const mdt_image *img)
{
    uint32_t size = mdt_heap_size(img, MDT_HEAP_US);
    const uint8_t *heap = us_heap_bytes(img);
    if (size && !heap)
        abort();
    for (uint32_t off = 1; off < size;) {
        const uint8_t *u;
        uint32_t n, blen;
        unsigned used;
        int flag, replaced;
        char *s;
        size_t slen;
        if (mdt_heap_us(&u, &n, &flag, img, off)) {
            touch_error();
            break;
        }
        if (mdt_heap_decode_compressed_u32(&blen, &used, heap + off, size - off) != 0 ||
            u != heap + off + used || n != blen / 2 || (flag >= 0) != (blen % 2))
            abort();
        if (mdt_heap_utf16_to_utf8(ctx, &s, &slen, &replaced, u, n) == 0) {
            sink += slen + (size_t)replaced + (uint8_t)s[slen];
            talloc_free(s);
        }
        off += used + blen;
    }
    /* Heap edges: index 0, the last byte, one past the end. */
    const char *str;
    const uint8_t *p;
    uint32_t blen;
    for (int h = MDT_HEAP_STRINGS; h <= MDT_HEAP_GUID; h++) {
        uint32_t hs = mdt_heap_size(img, h);
        uint32_t idx[] = {0, 1, hs ? hs - 1 : 0, hs, hs + 1, UINT32_MAX};
        for (size_t i = 0; i < sizeof idx / sizeof idx[0]; i++) {
            int e = 0, flag;
            switch (h) {
            case MDT_HEAP_STRINGS: e = mdt_heap_string(&str, NULL, img, idx[i]); break;
            case MDT_HEAP_US: e = mdt_heap_us(&p, &blen, &flag, img, idx[i]); break;
            case MDT_HEAP_BLOB: e = mdt_heap_blob(&p, &blen, img, idx[i]); break;
            case MDT_HEAP_GUID: e = mdt_heap_guid(&p, img, idx[i]); break;
            }
            if (e)
                touch_error();
        }
    }
}

/* Rows 1..n of `table` whose bytes are readable. */
static uint32_t readable_rows(const mdt_image *img, unsigned table)
{
    uint32_t n = mdt_table_rows(img, table), lo = 0, hi = n;
    mdt_row r;
    while (lo < hi) { /* readable rows are a prefix of the table */
        uint32_t mid = lo + (hi - lo + 1) / 2;
        if (mdt_row_get(&r, img, table, mid) == 0)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* mdt_find over each table's key column (its spec sort column, else column
 * 0) for a few keys; the answers must be exactly the rows a scan finds. */
static void touch_find(const mdt_image *img)
{
    for (unsigned t = 0; t < MDT_TABLE_MAX; t++) {
        const mdt_table_schema *s = mdt_table_schema_get(t);
        if (!s)
            continue;
        sink += mdt_table_row_size(img, t) + mdt_table_is_sorted(img, t);
        for (unsigned c = 0; c <= s->ncols; c++)
            sink += mdt_column_width(img, t, c);
        uint32_t avail = readable_rows(img, t);
        if (avail != mdt_table_rows_present(img, t))
            abort();
        unsigned col = s->sort_col >= 0 ? (unsigned)s->sort_col : 0;
        uint32_t keys[6] = {0, 1, UINT32_MAX, 0, 0, 0};
        mdt_row r;
        if (avail) {
            if (mdt_row_get(&r, img, t, 1) == 0)
                keys[3] = mdt_row_raw(&r, col);
            if (mdt_row_get(&r, img, t, avail / 2 + 1) == 0)
                keys[4] = mdt_row_raw(&r, col);
            if (mdt_row_get(&r, img, t, avail) == 0)
                keys[5] = mdt_row_raw(&r, col);
        }
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
            mdt_find f;
            uint32_t rid, found = 0, expect = 0;
            if (mdt_find_init(&f, img, t, col, keys[k]) != 0)
                abort();
            while (mdt_find_next(&rid, &f) == 0) {
                if (++found > avail || mdt_row_get(&r, img, t, rid) != 0 ||
                    mdt_row_raw(&r, col) != keys[k])
                    abort();
            }
            for (uint32_t i = 1; i <= avail; i++)
                if (mdt_row_get(&r, img, t, i) == 0 && mdt_row_raw(&r, col) == keys[k])
                    expect++;
            if (found != expect)
                abort();
        }
    }
}

/* The Ptr table that may stand between a run and its table in #- metadata. */
static unsigned ptr_table_of(unsigned table)
{
    switch (table) {
    case MDT_TABLE_Field: return MDT_TABLE_FieldPtr;
    case MDT_TABLE_MethodDef: return MDT_TABLE_MethodPtr;
    case MDT_TABLE_Param: return MDT_TABLE_ParamPtr;
    case MDT_TABLE_Event: return MDT_TABLE_EventPtr;
    case MDT_TABLE_Property: return MDT_TABLE_PropertyPtr;
    default: return MDT_NOTABLE;
    }
}

/* All the runs of a column together can yield no more items than the
 * rows this image really holds, whatever row counts its headers declare:
 * runs never overlap, even where a column's values go down (md/runs.c),
 * so walking every row's run is linear. Each run is followed to its first
 * failing item. */
static void touch_ranges(const mdt_image *img)
{
    for (unsigned t = 0; t < MDT_TABLE_MAX; t++) {
        const mdt_table_schema *s = mdt_table_schema_get(t);
        if (!s || !mdt_table_rows(img, t))
            continue;
        uint32_t avail = readable_rows(img, t);
        if (avail != mdt_table_rows_present(img, t))
            abort();
        for (unsigned c = 0; c < s->ncols; c++) {
            unsigned target = s->cols[c].target, ptr = ptr_table_of(target);
            uint64_t cap, total = 0;
            if (s->cols[c].kind != MDT_COLK_LIST)
                continue;
            cap = readable_rows(img, target);
            if (ptr != MDT_NOTABLE)
                cap += readable_rows(img, ptr);
            for (uint32_t rid = 1; rid <= avail; rid++) {
                mdt_row r;
                uint32_t first, count, item;
                if (mdt_row_get(&r, img, t, rid) != 0)
                    abort();
                if (mdt_row_range(&first, &count, &r, c) != 0) {
                    touch_error();
                    continue;
                }
                for (uint32_t i = 0; i < count; i++) {
                    if (mdt_range_item(&item, img, target, first + i) != 0) {
                        touch_error();
                        break;
                    }
                    if (total++ >= cap || item == 0)
                        abort();
                }
            }
        }
    }
}

/* One column of rows [first, first + n) read at once must give what the
 * per-cell accessors give, failed cells included. */
static void check_column_run(const mdt_image *img, unsigned t, unsigned col, uint32_t first,
                             uint32_t n, uint32_t *raw, const char **str, const uint8_t **ptr,
                             uint32_t *len)
{
    const mdt_column_schema *cs = &mdt_table_schema_get(t)->cols[col];
    int bad = 0, got;
    mdt_row r;
    if (mdt_column_raw(raw, img, t, col, first, n) != 0)
        abort();
    switch (cs->kind) {
    case MDT_COLK_STR: got = mdt_column_strings(str, len, img, t, col, first, n); break;
    case MDT_COLK_BLOB: got = mdt_column_blobs(ptr, len, img, t, col, first, n); break;
    case MDT_COLK_GUID: got = mdt_column_guids(ptr, img, t, col, first, n); break;
    default: got = 0;
    }
    if (got < 0)
        abort();
    for (uint32_t i = 0; i < n; i++) {
        const char *s1;
        size_t l1;
        const uint8_t *p1;
        uint32_t b1;
        if (mdt_row_get(&r, img, t, first + i) != 0 || mdt_row_raw(&r, col) != raw[i])
            abort();
        switch (cs->kind) {
        case MDT_COLK_STR:
            if (mdt_row_string(&s1, &l1, &r, col) != 0) {
                bad++;
                if (str[i] || len[i])
                    abort();
            } else if (str[i] != s1 || len[i] != l1) {
                abort();
            }
            break;
        case MDT_COLK_BLOB:
            if (mdt_row_blob(&p1, &b1, &r, col) != 0) {
                bad++;
                if (ptr[i] || len[i])
                    abort();
            } else if (!ptr[i] || len[i] != b1 || (b1 && memcmp(ptr[i], p1, b1) != 0)) {
                abort();
            }
            break;
        case MDT_COLK_GUID:
            if (mdt_row_guid(&p1, &r, col) != 0) {
                bad++;
                if (ptr[i])
                    abort();
            } else if (ptr[i] != p1) {
                abort();
            }
            break;
        }
    }
    if (got != bad)
        abort();
}

/* A row read whole (mdt_row_cells) must give what the inline per-cell
 * readers give, and those what their out-of-line slow paths (which check
 * everything from scratch) give: same values, same pointers, same
 * failures. */
static void check_row_cells(const mdt_image *img, unsigned t, uint32_t rid)
{
    const mdt_table_schema *s = mdt_table_schema_get(t);
    mdt_cell cells[MDT_LAYOUT_COLS];
    mdt_row r;
    int bad = 0, got;
    if (mdt_row_get(&r, img, t, rid) != 0)
        abort();
    got = mdt_row_cells(cells, &r);
    for (unsigned c = 0; c < s->ncols; c++) {
        const char *s1 = NULL, *s2 = NULL;
        size_t l1 = 0, l2 = 0;
        const uint8_t *p1 = NULL, *p2 = NULL;
        uint32_t b1 = 0, b2 = 0;
        int e1 = 0, e2 = 0;
        if (cells[c].value != mdt_row_raw(&r, c))
            abort();
        switch (s->cols[c].kind) {
        case MDT_COLK_STR:
            e1 = mdt_row_string(&s1, &l1, &r, c);
            e2 = mdt_row_string_slow(&s2, &l2, &r, c);
            p1 = (const uint8_t *)s1;
            p2 = (const uint8_t *)s2;
            b1 = (uint32_t)l1;
            b2 = (uint32_t)l2;
            break;
        case MDT_COLK_BLOB:
            e1 = mdt_row_blob(&p1, &b1, &r, c);
            e2 = mdt_row_blob_slow(&p2, &b2, &r, c);
            break;
        case MDT_COLK_GUID:
            e1 = mdt_row_guid(&p1, &r, c);
            e2 = mdt_row_guid_slow(&p2, &r, c);
            b1 = b2 = p1 ? 16 : 0;
            break;
        default:
            if (cells[c].ptr || cells[c].len)
                abort();
            continue;
        }
        if (e1 != e2 || (!e1 && (p1 != p2 || b1 != b2)))
            abort();
        if (e1) {
            bad++;
            p1 = NULL;
            b1 = 0;
        }
        if (cells[c].ptr != p1 || cells[c].len != b1)
            abort();
    }
    if (got != bad)
        abort();
}

/* The column-at-a-time readers over every column: the whole readable run,
 * then short runs so every tail of the unrolled loops is taken, then the
 * edges (an empty run, a run past the readable rows). */
static void touch_columns(const mdt_image *img)
{
    for (unsigned t = 0; t < MDT_TABLE_MAX; t++) {
        const mdt_table_schema *s = mdt_table_schema_get(t);
        uint32_t avail, rows = mdt_table_rows(img, t);
        if (!s || !rows)
            continue;
        avail = readable_rows(img, t);
        size_t n = avail ? avail : 1;
        uint32_t *raw = malloc(n * sizeof *raw), *len = malloc(n * sizeof *len);
        const char **str = malloc(n * sizeof *str);
        const uint8_t **ptr = malloc(n * sizeof *ptr);
        if (!raw || !len || !str || !ptr)
            abort();
        for (unsigned c = 0; c < s->ncols; c++) {
            if (avail)
                check_column_run(img, t, c, 1, avail, raw, str, ptr, len);
            for (uint32_t first = 1; first <= avail && first <= 9; first++)
                for (uint32_t k = 1; k <= 7 && first - 1 + k <= avail; k++)
                    check_column_run(img, t, c, first, k, raw, str, ptr, len);
            if (mdt_column_raw(raw, img, t, c, 1, 0) != 0)
                abort();
            if (mdt_column_raw(raw, img, t, c, avail + 1, 1) == 0 ||
                mdt_column_raw(raw, img, t, c, 0, 1) == 0 ||
                mdt_column_raw(raw, img, t, c, 1, rows + 1) == 0)
                abort();
            touch_error();
        }
        if (mdt_column_raw(raw, img, t, s->ncols, 1, 1) == 0)
            abort();
        for (uint32_t rid = 1; rid <= avail; rid++)
            check_row_cells(img, t, rid);
        touch_error();
        free(raw);
        free(len);
        free(str);
        free(ptr);
    }
}

/* Runs of whole rows (mdt_rows_cells) against the per-cell accessors:
 * runs of 3 rows (the unrolled loops' tails), whole tables, and the runs
 * past the readable rows that must be refused (tests/common/rowruns.c). */
static void check_row_runs(const mdt_image *img)
{
    rowruns_stats st = {0, 0, 0, 0};
    char why[1024];
    if (rowruns_check(img, 3, &st, why, sizeof why) != 0 ||
        rowruns_check(img, 0, &st, why, sizeof why) != 0) {
        fprintf(stderr, "run read: %s\n", why);
        abort();
    }
    sink += st.cells;
    touch_error();
}

static void touch_identity(const mdt_image *img)
{
    mdt_identity id;
    char buf[512];
    uint8_t mvid[16];
    if (mdt_assembly_identity(&id, img) == 0)
        sink += strlen(mdt_identity_format(buf, sizeof buf, &id));
    else
        touch_error();
    uint32_t n = mdt_table_rows(img, MDT_TABLE_AssemblyRef);
    for (uint32_t i = 1; i <= n; i++) {
        if (mdt_assemblyref_identity(&id, img, i) == 0) {
            sink += strlen(mdt_identity_format(buf, sizeof buf, &id));
        } else {
            touch_error();
            if (mdt_error_last()->code == MDT_ETRUNC)
                break; /* the rest of the table is beyond the stream */
        }
    }
    if (mdt_image_mvid(mvid, img) == 0)
        sink += mvid[0];
}

static void check_image(void *ctx, const mdt_image *img, size_t input_size)
{
    walk_stats st;
    touch_ranges(img); /* first: it stops a runaway run that the walk would follow */
    /* walk_image() tries every declared AssemblyRef row even after the
     * table runs out of stream, one failing call per row: with up to
     * 0xFFFFFF declared rows that is a harness hang, not a library bug. */
    uint32_t refs = mdt_table_rows(img, MDT_TABLE_AssemblyRef);
    if (refs - readable_rows(img, MDT_TABLE_AssemblyRef) <= 4096) {
        walk_image(img, &st);
        sink += st.rows + st.cells + st.errors;
    }
    touch_headers(img);
    touch_sections(img);
    touch_user_strings(ctx, img);
    touch_find(img);
    touch_columns(img);
    check_row_runs(img);
    touch_identity(img);
    char why[300];
    if (walk_guest_check(img, why, sizeof why)) {
        fprintf(stderr, "guest check: %s\n", why);
        abort();
    }
    /* What an image keeps (names, warnings, stream and section tables) is
     * bounded; it must not grow with the row counts a header declares. */
    if (talloc_total_size(img) > 1024 * 1024 + 2 * input_size)
        abort();
}

/* Open one way, check, close; nothing may stay behind under ctx. */
static void open_one(void *ctx, const uint8_t *data, size_t size, int how)
{
    mdt_image *img = NULL;
    loader_layout l = {0};
    int e;
    switch (how) {
    case 0: e = mdt_image_open_buffer(ctx, &img, "fuzz", data, size, 0); break;
    case 1: e = mdt_image_open_mapped(ctx, &img, "fuzz.mapped", data, size, MDT_OPEN_COPY); break;
    case 3:
        if (layout_make(&l, data, size) != 0)
            return;
        e = mdt_image_open_mapped_ranges(ctx, &img, "fuzz.laid-out", l.base, l.ranges, l.nranges,
                                         0);
        break;
    default: e = mdt_image_open_buffer(ctx, &img, NULL, data, size, 0); break;
    }
    if (e) {
        if (img != NULL || e > 0)
            abort();
        touch_error();
    } else {
        check_image(ctx, img, size);
        mdt_image_close(img);
    }
    layout_free(&l);
    if (talloc_total_blocks(ctx) != 1)
        abort();
    mdt_error_clear();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    void *ctx = talloc_new(NULL);
    if (!ctx)
        return 0;
    open_one(ctx, data, size, 0);
    open_one(ctx, data, size, 1);
    open_one(ctx, data, size, 3);
    for (size_t i = 0; i + 4 <= size; i++) {
        if (memcmp(data + i, "BSJB", 4) == 0) {
            if (i > 0) /* at 0 the file-layout open already read it */
                open_one(ctx, data + i, size - i, 2);
            break;
        }
    }
    talloc_free(ctx);
    return 0;
}
