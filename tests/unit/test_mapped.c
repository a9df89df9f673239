/* Images laid out by a loader whose readable memory has holes, opened with
 * mdt_image_open_mapped_ranges (ECMA-335 II.25: RVAs are offsets from the
 * load address). Real assemblies (the data/ fixtures, the Mono framework)
 * are laid out as CoreCLR's loader on Linux lays out a ReadyToRun image
 * (tests/common/layout.h: each section at its RVA, the gaps PROT_NONE) and
 * must read exactly as the flat file does, every cell and heap entry; the
 * API's contract on ranges and arguments; a tables stream ending where the
 * readable memory ends. Damaged headers pointing into the gaps are in the
 * corrupt-input suite (tests/corrupt, the mapped-* cases); the .NET
 * shared framework's ReadyToRun images in test_mapped_r2r. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <talloc.h>
#include <unistd.h>

#include <mdtools/mdtools.h>

#include "imgcmp.h"
#include "layout.h"
#include "paths.h"
#include "walk.h"

#define HELLO "data/corpus/asmresolver/HelloWorld.exe"

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> 8 * i);
}

START_TEST(fixtures_read_alike_laid_out_with_holes)
{
    char p[1024];
    char why[1024];
    imgcmp_tally t = {0};
    ck_assert_msg(imgcmp_tree(src_path(p, sizeof p, "data"), &t, why, sizeof why) == 0, "%s", why);
    imgcmp_report("data/", &t);
    ck_assert_uint_eq(t.differ, 0);
    /* data/ holds 150-odd PE files; most open flat. */
    ck_assert_uint_ge(t.same, 100);
    ck_assert_uint_ge(t.with_holes, t.same - t.same / 10);
    ck_assert_uint_ge(t.r2r, 1); /* data/corpus/asmresolver/HelloWorld.ReadyToRun.dll */
}
END_TEST

START_TEST(mono_framework_reads_alike_laid_out_with_holes)
{
    char why[1024];
    imgcmp_tally t = {0};
    ck_assert_msg(imgcmp_tree(MONO_45_DIR, &t, why, sizeof why) == 0, "%s", why);
    imgcmp_report(MONO_45_DIR, &t);
    ck_assert_uint_eq(t.differ, 0);
    ck_assert_uint_ge(t.same, 200); /* 135 assemblies and 134 facades */
    ck_assert_uint_eq(t.flat_fails, 0);
    ck_assert_uint_ge(t.with_holes, t.same - t.same / 10);
}
END_TEST

/* HelloWorld laid out; the flat open beside it. */
struct hello {
    void *ctx;
    uint8_t *bytes;
    size_t len;
    loader_layout l;
    mdt_image *flat;
};

static void hello_open(struct hello *h)
{
    char p[1024];
    h->ctx = talloc_new(NULL);
    h->bytes = layout_read_file(src_path(p, sizeof p, HELLO), &h->len);
    ck_assert_ptr_nonnull(h->bytes);
    ck_assert_int_eq(mdt_image_open_buffer(h->ctx, &h->flat, "flat", h->bytes, h->len, 0), 0);
    ck_assert_int_eq(layout_make(&h->l, h->bytes, h->len), 0);
    /* header page, .text, .rsrc, .reloc: four readable ranges, gaps between */
    ck_assert_uint_eq(h->l.nranges, 4);
}

static void hello_close(struct hello *h)
{
    talloc_free(h->ctx);
    layout_free(&h->l);
    free(h->bytes);
}

START_TEST(copy_outlives_the_layout)
{
    struct hello h;
    mdt_image *img;
    char why[400];
    hello_open(&h);
    ck_assert_int_eq(mdt_image_open_mapped_ranges(h.ctx, &img, "copy", h.l.base, h.l.ranges,
                                                  h.l.nranges, MDT_OPEN_COPY),
                     0);
    layout_free(&h.l); /* the loader unmaps: a copy does not care */
    ck_assert_msg(imgcmp(h.flat, img, NULL, why, sizeof why) == 0, "%s", why);
    /* The gaps stay unreadable in the copy too. */
    const uint8_t *p;
    ck_assert_int_eq(mdt_image_rva(&p, img, 0x3000, 1), MDT_ETRUNC);
    hello_close(&h);
}
END_TEST

START_TEST(reads_of_a_gap_fail_with_the_rva)
{
    struct hello h;
    mdt_image *img;
    const uint8_t *p;
    uint8_t buf[16];
    char m[400];
    hello_open(&h);
    ck_assert_int_eq(
        mdt_image_open_mapped_ranges(h.ctx, &img, "holes", h.l.base, h.l.ranges, h.l.nranges, 0),
        0);
    ck_assert_int_eq(mdt_image_kind(img), MDT_KIND_PE_MAPPED);
    /* .text (RVA 0x2000, 0x694 bytes) is readable to its page end. */
    ck_assert_int_eq(mdt_image_rva(&p, img, 0x2ff0, 0x10), 0);
    ck_assert_ptr_eq(p, h.l.base + 0x2ff0);
    ck_assert_int_eq(mdt_image_rva(&p, img, 0x2ff0, 0x11), MDT_ETRUNC);
    ck_assert_str_eq(mdt_error_message(m, sizeof m),
                     "holes: RVA+0x2ff0: read: 0x11 bytes at RVA 0x2ff0 run past the readable "
                     "memory, which ends at RVA 0x3000");
    ck_assert_int_eq(mdt_image_read_rva(buf, 1, img, 0x3000), MDT_ETRUNC);
    ck_assert_str_eq(mdt_error_message(m, sizeof m),
                     "holes: RVA+0x3000: read: RVA 0x3000 is not in memory declared readable (the "
                     "mapped image has 4 readable ranges)");
    ck_assert_int_eq(mdt_image_rva(&p, img, 0x1000, 0), 0); /* empty, at the header page's end */
    ck_assert_int_eq(mdt_image_rva(&p, img, 0xffffff00, 0x100), MDT_ETRUNC);
    /* The flat file has the same RVA in no section. */
    ck_assert_int_eq(mdt_image_rva(&p, h.flat, 0x3000, 1), MDT_ENOTFOUND);
    /* mdt_image_bytes gives the headers' range, never the gaps. */
    size_t n;
    ck_assert_ptr_eq(mdt_image_bytes(&n, img), h.l.base);
    ck_assert_uint_eq(n, 0x1000);
    hello_close(&h);
}
END_TEST

/* Ranges in any order, overlapping, adjacent, reaching beyond the image or
 * starting below it, and unrelated memory, read as their union. */
START_TEST(ranges_are_taken_as_a_set)
{
    struct hello h;
    mdt_image *img;
    char why[400];
    hello_open(&h);
    static int unrelated;
    mdt_mem_range r[8];
    size_t n = 0;
    for (size_t i = h.l.nranges; i-- > 0;)
        r[n++] = h.l.ranges[i];                          /* descending */
    r[n++] = (mdt_mem_range){h.l.ranges[1].start, 0x10}; /* inside another */
    r[n++] = (mdt_mem_range){h.l.base, 0x800};           /* overlapping the first */
    r[n++] = (mdt_mem_range){&unrelated, sizeof unrelated};
    r[n++] = (mdt_mem_range){h.l.ranges[3].start, 0}; /* empty */
    ck_assert_int_eq(mdt_image_open_mapped_ranges(h.ctx, &img, "set", h.l.base, r, n, 0), 0);
    ck_assert_msg(imgcmp(h.flat, img, NULL, why, sizeof why) == 0, "%s", why);
    /* Adjacent ranges are one: the header page given as two halves. */
    mdt_mem_range halves[5] = {{h.l.base, 0x800}, {h.l.base + 0x800, 0x800}};
    memcpy(halves + 2, h.l.ranges + 1, 3 * sizeof *halves);
    ck_assert_int_eq(mdt_image_open_mapped_ranges(h.ctx, &img, "halves", h.l.base, halves, 5, 0),
                     0);
    ck_assert_msg(imgcmp(h.flat, img, NULL, why, sizeof why) == 0, "%s", why);
    hello_close(&h);
}
END_TEST

START_TEST(arguments_are_checked)
{
    struct hello h;
    mdt_image *img = (mdt_image *)&h;
    hello_open(&h);
    const mdt_mem_range *r = h.l.ranges;
    size_t n = h.l.nranges;
    ck_assert_int_eq(mdt_image_open_mapped_ranges(h.ctx, NULL, "x", h.l.base, r, n, 0), MDT_EINVAL);
    ck_assert_int_eq(mdt_image_open_mapped_ranges(h.ctx, &img, "x", NULL, r, n, 0), MDT_EINVAL);
    ck_assert_ptr_null(img);
    ck_assert_int_eq(mdt_image_open_mapped_ranges(h.ctx, &img, "x", h.l.base, NULL, n, 0),
                     MDT_EINVAL);
    ck_assert_int_eq(mdt_image_open_mapped_ranges(h.ctx, &img, "x", h.l.base, r, n, MDT_OPEN_MAP),
                     MDT_EINVAL);
    /* The base must be readable: no ranges, or none holding it. */
    ck_assert_int_eq(mdt_image_open_mapped_ranges(h.ctx, &img, "x", h.l.base, NULL, 0, 0),
                     MDT_EINVAL);
    ck_assert_int_eq(mdt_image_open_mapped_ranges(h.ctx, &img, "x", h.l.base, r + 1, n - 1, 0),
                     MDT_EINVAL);
    ck_assert_ptr_null(img);
    /* Headers beyond the range holding the base: the section table would
     * run into the gap after a 0x100-byte header range. */
    mdt_mem_range shrunk[4];
    memcpy(shrunk, r, sizeof shrunk);
    shrunk[0].len = 0x100;
    ck_assert_int_eq(mdt_image_open_mapped_ranges(h.ctx, &img, "x", h.l.base, shrunk, 4, 0),
                     MDT_ETRUNC);
    ck_assert_ptr_null(img);
    hello_close(&h);
}
END_TEST

/* The tables stream last in the metadata, its rows ending exactly where the
 * readable memory ends. The inline cell readers read 4 bytes and drop what
 * is not the cell, so at open the rows must be copied with padding (the 3
 * bytes after them are a gap); reading them in place would fault on the
 * guard page. */
START_TEST(tables_ending_at_the_readable_end)
{
    struct hello h;
    hello_open(&h);
    const mdt_md_info *mi = mdt_image_md_info(h.flat);
    const mdt_pe_info *pe = mdt_image_pe_info(h.flat);
    const uint8_t *md;
    ck_assert_int_eq(mdt_image_rva(&md, h.flat, pe->metadata.rva, pe->metadata.size), 0);

    /* Where the rows end in #~: header, row counts, rows. */
    uint32_t rows_len = 24 + (mi->has_extra_data ? 4 : 0);
    for (unsigned t = 0; t < MDT_TABLE_MAX; t++)
        if (mi->valid >> t & 1)
            rows_len += 4 + mdt_table_rows(h.flat, t) * mdt_table_row_size(h.flat, t);
    /* New metadata: the root and stream headers as they are, then the heaps,
     * then #~ cut at its rows' end (II.24.2.1: the version string's padded
     * length is stored at +12; II.24.2.2: a stream header is offset, size
     * and the name NUL-padded to 4). */
    uint8_t *nmd = talloc_zero_size(h.ctx, pe->metadata.size + rows_len);
    uint32_t vlen = md[12] | md[13] << 8 | (uint32_t)md[14] << 16 | (uint32_t)md[15] << 24;
    uint32_t hdr_at = 16 + vlen + 4, hdr_end = hdr_at, ts_hdr = 0;
    const mdt_stream_info *ts = NULL;
    for (size_t i = 0; i < mi->nstreams; i++)
        hdr_end += 8 + (((uint32_t)strlen(mdt_image_stream(h.flat, i)->name) + 4) & ~3u);
    memcpy(nmd, md, hdr_end);
    uint32_t at = hdr_end;
    for (size_t i = 0; i < mi->nstreams; i++) {
        const mdt_stream_info *s = mdt_image_stream(h.flat, i);
        if (strcmp(s->name, "#~") == 0) {
            ts_hdr = hdr_at;
            ts = s;
        } else {
            memcpy(nmd + at, md + s->offset, s->size);
            put32(nmd + hdr_at, at);
            at += (s->size + 3) & ~3u;
        }
        hdr_at += 8 + (((uint32_t)strlen(s->name) + 4) & ~3u);
    }
    ck_assert_ptr_nonnull(ts);
    memcpy(nmd + at, md + ts->offset, rows_len);
    put32(nmd + ts_hdr, at);
    put32(nmd + ts_hdr + 4, rows_len);
    uint32_t md_len = at + rows_len;

    /* Memory: the header page (CLI directory redirected, no debug
     * directory), the CLI header at RVA 0x1000, the metadata ending at a
     * page end, a guard page after it. */
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    ck_assert_uint_eq(pg, 0x1000);
    size_t md_pages = (md_len + pg - 1) / pg, len = (2 + md_pages) * pg;
    uint8_t *map = mmap(NULL, len + pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert_ptr_ne(map, MAP_FAILED);
    ck_assert_int_eq(mprotect(map + len, pg, PROT_NONE), 0);
    memcpy(map, h.bytes, h.len < pg ? h.len : pg);
    uint32_t lfanew = map[0x3c] | map[0x3d] << 8;
    uint8_t *dirs = map + lfanew + 24 + (pe->pe32plus ? 112 : 96);
    memset(dirs + 6 * 8, 0, 8);
    uint32_t md_rva = (uint32_t)(len - md_len);
    uint8_t cli[72] = {72, 0, 0, 0, 2, 0, 5, 0};
    put32(dirs + 14 * 8, 0x1000);
    put32(dirs + 14 * 8 + 4, sizeof cli);
    put32(cli + 8, md_rva);
    put32(cli + 12, md_len);
    cli[16] = 1; /* ILONLY */
    memcpy(map + 0x1000, cli, sizeof cli);
    memcpy(map + md_rva, nmd, md_len);
    ck_assert_int_eq(mprotect(map, len, PROT_READ), 0);

    mdt_image *img;
    mdt_mem_range all = {map, len};
    char m[400];
    ck_assert_msg(mdt_image_open_mapped_ranges(h.ctx, &img, "end", map, &all, 1, 0) == 0, "%s",
                  mdt_error_message(m, sizeof m));
    /* Every cell as in the file: the last row's last cell is the one whose
     * 4-byte read would cross into the guard page. */
    walk_stats ws;
    for (unsigned t = 0; t < MDT_TABLE_MAX; t++) {
        uint32_t n = mdt_table_rows(img, t);
        const mdt_table_schema *s = mdt_table_schema_get(t);
        ck_assert_uint_eq(n, mdt_table_rows(h.flat, t));
        for (uint32_t rid = 1; s && rid <= n; rid++) {
            mdt_row a, b;
            ck_assert_int_eq(mdt_row_get(&a, img, t, rid), 0);
            ck_assert_int_eq(mdt_row_get(&b, h.flat, t, rid), 0);
            for (unsigned c = 0; c < s->ncols; c++)
                ck_assert_uint_eq(mdt_row_raw(&a, c), mdt_row_raw(&b, c));
        }
    }
    walk_image(img, &ws);
    ck_assert_uint_eq(ws.errors, 0);
    hello_close(&h); /* the image before the memory it borrows */
    munmap(map, len + pg);
}
END_TEST

Suite *suite(void);
Suite *suite(void)
{
    Suite *s = suite_create("mapped");
    TCase *tc = tcase_create("mapped");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, fixtures_read_alike_laid_out_with_holes);
    tcase_add_test(tc, mono_framework_reads_alike_laid_out_with_holes);
    tcase_add_test(tc, copy_outlives_the_layout);
    tcase_add_test(tc, reads_of_a_gap_fail_with_the_rva);
    tcase_add_test(tc, ranges_are_taken_as_a_set);
    tcase_add_test(tc, arguments_are_checked);
    tcase_add_test(tc, tables_ending_at_the_readable_end);
    suite_add_tcase(s, tc);
    return s;
}
