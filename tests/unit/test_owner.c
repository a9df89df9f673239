/* The owner index of list runs (libmdtools/md/runs.c) on metadata built
 * here, large enough for what real files rarely have: more than 65535
 * TypeDef rows (4-byte holders instead of 2), runs whose starts go down
 * (runs that would overlap, unreadable runs), a truncated tail. Each
 * answer of mdt_member_owner and mdt_token_owner, and each row's run from
 * mdt_row_range, is checked against a plain reading of ECMA-335 II.22.37
 * (a row's run ends where the next row's starts) with the library's one
 * rule for damaged columns (a run begins no lower than the runs before it
 * end, so no method is in two runs), computed here one row at a time. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <talloc.h>

#include <mdtools/mdtools.h>

static void put16(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
    put16(p, v & 0xFFFF);
    put16(p + 2, v >> 16);
}

/* Column widths of the two tables for these row counts (II.24.2.6):
 * TypeDef is Flags 4, TypeName 2, TypeNamespace 2, Extends (TypeDefOrRef:
 * 2 bytes up to 2^14 rows), FieldList 2 (no Field rows), MethodList (2
 * bytes up to 65535 MethodDef rows); MethodDef is RVA 4, ImplFlags 2,
 * Flags 2, Name 2, Signature 2, ParamList 2. */
struct shape {
    uint32_t ntypes, nmethods;
    unsigned ext_w, list_w, td_size;
};

static struct shape shape_of(uint32_t ntypes, uint32_t nmethods)
{
    struct shape s = {ntypes, nmethods, ntypes < (1u << 14) ? 2 : 4, nmethods < 65536 ? 2 : 4, 0};
    s.td_size = 4 + 2 + 2 + s.ext_w + 2 + s.list_w;
    return s;
}

/* A raw metadata blob (BSJB, one #~ stream) with TypeDef rows whose
 * MethodList starts are starts[0..ntypes-1], and nmethods MethodDef rows;
 * `cut` bytes are taken off the end of the MethodDef table (0: none). */
static uint8_t *build(void *ctx, size_t *len, const uint32_t *starts, struct shape s, size_t cut)
{
    size_t tables = 24 + 2 * 4 + (size_t)s.ntypes * s.td_size + (size_t)s.nmethods * 14;
    size_t stream = (tables + 3) & ~(size_t)3, head = 16 + 12 + 4 + 8 + 4;
    uint8_t *b = talloc_zero_array(ctx, uint8_t, head + stream);
    uint8_t *t = b + head, *row;
    memcpy(b, "BSJB", 4);
    put16(b + 4, 1);
    put16(b + 6, 1);
    put32(b + 12, 12);
    memcpy(b + 16, "v4.0.30319", 10);
    put16(b + 30, 1);                        /* one stream */
    put32(b + 32, (uint32_t)head);           /* its offset */
    put32(b + 36, (uint32_t)(tables - cut)); /* its size */
    memcpy(b + 40, "#~", 3);
    t[4] = 2; /* version 2.0 */
    t[7] = 1;
    put32(t + 8, 1u << MDT_TABLE_TypeDef | 1u << MDT_TABLE_MethodDef);
    put32(t + 24, s.ntypes);
    put32(t + 28, s.nmethods);
    row = t + 32;
    for (uint32_t r = 0; r < s.ntypes; r++, row += s.td_size) {
        uint8_t *ml = row + 4 + 2 + 2 + s.ext_w + 2;
        put16(row + 4 + 2 + 2 + s.ext_w, 1); /* FieldList: an empty run */
        if (s.list_w == 2)
            put16(ml, starts[r]);
        else
            put32(ml, starts[r]);
    }
    *len = head + tables - cut;
    return b;
}

/* The run of TypeDef row r by the letter of the rule: [start, end) of
 * ECMA-335 when readable (start in 1..limit, the next start between it and
 * limit), begun no lower than floor, where the readable runs of the rows
 * before it end (libmdtools/md/runs.c), so that runs never overlap; 0:
 * unreadable. *end_out: its end. */
static int expected_run(const uint32_t *starts, struct shape s, uint32_t r, uint32_t floor,
                        uint32_t *first, uint32_t *count, uint32_t *end_out)
{
    uint32_t limit = s.nmethods + 1;
    uint32_t start = starts[r - 1], end = r < s.ntypes ? starts[r] : limit;
    if (start == 0 || start > limit || end > limit || end < start)
        return 0;
    if (start < floor)
        start = floor;
    *first = start;
    *count = end > start ? end - start : 0;
    *end_out = end;
    return 1;
}

/* The owner of each method: the row whose run holds it. Runs that
 * overlapped would let a later row claim a method again: it must not. */
static uint32_t *expected_owners(const uint32_t *starts, struct shape s)
{
    uint32_t *own = calloc((size_t)s.nmethods + 2, sizeof *own), floor = 0;
    ck_assert_ptr_nonnull(own);
    for (uint32_t r = 1; r <= s.ntypes; r++) {
        uint32_t first, count, end;
        if (!expected_run(starts, s, r, floor, &first, &count, &end))
            continue;
        if (end > floor)
            floor = end;
        for (uint32_t m = first; m < first + count; m++) {
            if (own[m])
                ck_abort_msg("method %u in the runs of rows %u and %u", m, own[m], r);
            own[m] = r;
        }
    }
    return own;
}

/* mdt_token_name_prefetch (generics/prefetch.c) on every method and on
 * tokens it cannot follow (rid 0, past the table or the readable rows,
 * another table, a NULL image), both steps, before and after the owner
 * index is built, with no cache and with one: it reads the same rows and
 * index as the owner queries (ASan: nothing outside them), and never
 * records an error. */
static void prefetch_round(const mdt_image *img, uint32_t nmethods, const mdt_name_cache *c)
{
    static const uint32_t odd[] = {MDT_TOKEN(MDT_TABLE_MethodDef, 0),
                                   MDT_TOKEN(MDT_TABLE_MethodDef, 0xFFFFFF),
                                   MDT_TOKEN(MDT_TABLE_Field, 1),
                                   MDT_TOKEN(MDT_TABLE_TypeDef, 1),
                                   MDT_TOKEN(MDT_TABLE_Param, 1),
                                   0xFFFFFFFF,
                                   0};
    for (unsigned step = 0; step < 3; step++) {
        for (uint32_t m = 1; m <= nmethods + 2; m++)
            mdt_token_name_prefetch(img, MDT_TOKEN(MDT_TABLE_MethodDef, m), c, step);
        for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++)
            mdt_token_name_prefetch(img, odd[i], c, step);
        mdt_token_name_prefetch(NULL, MDT_TOKEN(MDT_TABLE_MethodDef, 1), c, step);
    }
    ck_assert_int_eq(mdt_error_last()->code, MDT_OK);
}

static void prefetch_all(const mdt_image *img, uint32_t nmethods)
{
    mdt_name_cache *c = NULL;
    uint32_t owner;
    mdt_error_clear();
    prefetch_round(img, nmethods, NULL); /* the index not built yet */
    if (nmethods)
        ck_assert_int_eq(mdt_member_owner(&owner, img, MDT_TOKEN(MDT_TABLE_MethodDef, 1)), 0);
    ck_assert_int_eq(mdt_name_cache_new(NULL, &c, img, MDT_STYLE_FULL, 0), 0);
    prefetch_round(img, nmethods, NULL);
    prefetch_round(img, nmethods, c);
    talloc_free(c);
}

static void check_owners(const uint32_t *starts, uint32_t ntypes, uint32_t nmethods,
                         uint32_t cut_rows)
{
    void *ctx = talloc_new(NULL);
    struct shape s = shape_of(ntypes, nmethods);
    size_t len;
    uint8_t *b = build(ctx, &len, starts, s, (size_t)cut_rows * 14);
    uint32_t *own = expected_owners(starts, s);
    mdt_image *img;
    ck_assert_int_eq(mdt_image_open_buffer(ctx, &img, "owners", b, len, 0), 0);
    ck_assert_uint_eq(mdt_table_rows(img, MDT_TABLE_TypeDef), ntypes);
    ck_assert_uint_eq(mdt_table_rows(img, MDT_TABLE_MethodDef), nmethods);
    prefetch_all(img, nmethods);
    /* Backwards, so the first query is for the last method (cut or not:
     * the TypeDef rows still say who owns it). */
    for (uint32_t m = nmethods; m >= 1; m--) {
        uint32_t got = 0xFFFFFFFF, via = 0xFFFFFFFF;
        ck_assert_int_eq(mdt_member_owner(&got, img, MDT_TOKEN(MDT_TABLE_MethodDef, m)), 0);
        ck_assert_int_eq(mdt_token_owner(&via, img, MDT_TOKEN(MDT_TABLE_MethodDef, m)), 0);
        if (got != (own[m] ? MDT_TOKEN(MDT_TABLE_TypeDef, own[m]) : 0u))
            ck_abort_msg("method %u: owner 0x%08x, want TypeDef %u", m, got, own[m]);
        ck_assert_uint_eq(got, via);
    }
    /* Every row's run as mdt_row_range gives it: the rule's, holding the
     * methods it owns; all runs together hold each method at most once. */
    uint64_t held = 0;
    for (uint32_t r = 1, floor = 0; r <= ntypes; r++) {
        uint32_t first = 0, count = 0, want_first = 0, want_count = 0, end = 0;
        mdt_row row;
        ck_assert_int_eq(mdt_row_get(&row, img, MDT_TABLE_TypeDef, r), 0);
        int ok = mdt_row_range(&first, &count, &row, MDT_COL_TypeDef_MethodList) == 0;
        int want = expected_run(starts, s, r, floor, &want_first, &want_count, &end);
        if (want && end > floor)
            floor = end;
        if (ok != want)
            ck_abort_msg("TypeDef %u: mdt_row_range %s", r, ok ? "answers" : "fails");
        if (!ok)
            continue;
        if (first != want_first || count != want_count)
            ck_abort_msg("TypeDef %u: run [%u, +%u), want [%u, +%u)", r, first, count, want_first,
                         want_count);
        for (uint32_t m = first; m < first + count && m <= nmethods; m++)
            if (own[m] != r)
                ck_abort_msg("TypeDef %u: its run holds method %u, owned by %u", r, m, own[m]);
        held += count;
    }
    ck_assert_uint_le(held, (uint64_t)nmethods);
    free(own);
    talloc_free(ctx);
}

/* 70000 types: every third one has no methods, the others one or two. */
static uint32_t *many_types(uint32_t ntypes, uint32_t *nmethods)
{
    uint32_t *starts = malloc(ntypes * sizeof *starts), next = 1;
    ck_assert_ptr_nonnull(starts);
    for (uint32_t r = 0; r < ntypes; r++) {
        starts[r] = next;
        next += r % 3 == 0 ? 0 : r % 3 == 1 ? 1 : 2;
    }
    *nmethods = next - 1;
    return starts;
}

START_TEST(owners_past_65535_types_use_wide_holders)
{
    uint32_t nmethods, *starts = many_types(70000, &nmethods);
    ck_assert_uint_gt(nmethods, 65535);
    check_owners(starts, 70000, nmethods, 0);
    free(starts);
}
END_TEST

START_TEST(owners_of_narrow_holders)
{
    uint32_t nmethods, *starts = many_types(3000, &nmethods);
    check_owners(starts, 3000, nmethods, 0);
    free(starts);
}
END_TEST

/* Starts that go down: type 66001 starts again at method 5, so its run
 * reaches up to type 66002's start and overlaps the runs of earlier types,
 * which keep their methods; type 66500's start is past the table (its run
 * and the one before it are unreadable); type 67000 starts at 0. */
START_TEST(owners_where_starts_go_down)
{
    uint32_t nmethods, *starts = many_types(70000, &nmethods);
    starts[66000] = 5;
    starts[66499] = nmethods + 7;
    starts[66999] = 0;
    check_owners(starts, 70000, nmethods, 0);
    /* the same with narrow holders */
    free(starts);
    starts = many_types(3000, &nmethods);
    starts[2000] = 5;
    starts[2500] = nmethods + 7;
    check_owners(starts, 3000, nmethods, 0);
    free(starts);
}
END_TEST

/* Starts alternating 1 and past the last method (tests/fuzz's
 * list-not-monotonic.bin, scaled): each odd row's run would be every
 * method, and a walk over every type's methods rows x methods steps (25
 * million here, 10^9 for a 1 MB file). Only the first row owns methods;
 * check_owners checks that all runs together hold each method once. */
START_TEST(runs_never_overlap_where_starts_alternate)
{
    uint32_t ntypes = 10000, nmethods = 5000;
    uint32_t *starts = malloc(ntypes * sizeof *starts);
    ck_assert_ptr_nonnull(starts);
    for (uint32_t r = 0; r < ntypes; r++)
        starts[r] = r % 2 ? nmethods + 1 : 1;
    check_owners(starts, ntypes, nmethods, 0);
    /* Row 1 unreadable (5, then 2): it raises no floor, and row 2 (2,
     * then 8) keeps its whole run [2, 8). */
    starts[0] = 5, starts[1] = 2, starts[2] = 8;
    check_owners(starts, ntypes, nmethods, 0);
    /* Row 1 [50, 60); row 2 unreadable (60, then 10); row 3 (10, then
     * 70) begins where row 1's run ends: [60, 70). Methods 10-49, which
     * row 1's run passed over, have no owner (not row 3's, overlapping). */
    starts[0] = 50, starts[1] = 60, starts[2] = 10, starts[3] = 70;
    check_owners(starts, ntypes, nmethods, 0);
    free(starts);
}
END_TEST

/* A MethodDef table whose last rows are not in the file: past the index
 * (sized by the readable rows), owners are found by searching TypeDef. */
START_TEST(owners_of_a_truncated_method_table)
{
    uint32_t nmethods, *starts = many_types(70000, &nmethods);
    check_owners(starts, 70000, nmethods, 1000);
    free(starts);
}
END_TEST

/* TypeDef declared with no rows: its layout has no base to read from, and
 * the index's check that FieldList or MethodList ascends must not form a
 * pointer from it (UBSan: NULL + 0 at md/tables.c, through
 * mdt_member_owner, issue 25). Every member has no owner. */
START_TEST(owners_with_no_typedef_rows)
{
    check_owners(NULL, 0, 5, 0);
    check_owners(NULL, 0, 5, 3);
}
END_TEST

Suite *suite(void);
Suite *suite(void)
{
    Suite *s = suite_create("owner");
    TCase *tc = tcase_create("owner");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, owners_past_65535_types_use_wide_holders);
    tcase_add_test(tc, owners_of_narrow_holders);
    tcase_add_test(tc, owners_where_starts_go_down);
    tcase_add_test(tc, runs_never_overlap_where_starts_alternate);
    tcase_add_test(tc, owners_of_a_truncated_method_table);
    tcase_add_test(tc, owners_with_no_typedef_rows);
    suite_add_tcase(s, tc);
    return s;
}
