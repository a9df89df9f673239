/* Portable PDBs (<mdtools/pdb.h>): finding the PDB of an assembly (beside
 * it, embedded and inflated with zlib), decoding sequence points, hidden
 * points and document changes, IL offset -> line lookups and document
 * names, against data/pdb/ (built by data/build-pdb.sh from
 * data/src/pdb/Lines.cs). The source marks every line where a method has a
 * visible sequence point with `//@NAME`; the decoded points must land on
 * exactly those lines. Damaged inputs are made here from the fixtures. */
#define _DEFAULT_SOURCE /* mkdtemp, mkstemp */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <talloc.h>
#include <unistd.h>

#include <mdtools/mdtools.h>

#include "paths.h"

#define SIDE "data/pdb/Lines.dll"
#define EMBEDDED "data/pdb/LinesEmbedded.dll"
#define SOURCE "data/src/pdb/Lines.cs"

static mdt_image *open_img(void *ctx, const char *rel)
{
    char path[1024];
    mdt_image *img;
    ck_assert_int_eq(mdt_image_open_file(ctx, &img, src_path(path, sizeof path, rel), 0), 0);
    return img;
}

static mdt_pdb *open_pdb(void *ctx, const mdt_image *img)
{
    mdt_pdb *pdb;
    char msg[512];
    int r = mdt_pdb_open(ctx, &pdb, img, NULL, 0);
    ck_assert_msg(r == 0, "mdt_pdb_open: %s", mdt_error_message(msg, sizeof msg));
    return pdb;
}

static uint32_t method_named(const mdt_image *img, const char *name)
{
    for (uint32_t rid = 1; rid <= mdt_table_rows(img, MDT_TABLE_MethodDef); rid++) {
        mdt_row row;
        const char *s;
        size_t len;
        ck_assert_int_eq(mdt_row_get(&row, img, MDT_TABLE_MethodDef, rid), 0);
        ck_assert_int_eq(mdt_row_string(&s, &len, &row, MDT_COL_MethodDef_Name), 0);
        if (strcmp(s, name) == 0)
            return MDT_TOKEN(MDT_TABLE_MethodDef, rid);
    }
    ck_abort_msg("no method %s", name);
    return 0;
}

/* Whether line `line` of the source carries the mark //@name. */
static bool marked(char **lines, size_t nlines, uint32_t line, const char *name)
{
    const char *p;
    size_t n = strlen(name);
    if (line == 0 || line > nlines)
        return false;
    for (p = strstr(lines[line - 1], "@"); p; p = strstr(p + 1, "@"))
        if (strncmp(p + 1, name, n) == 0 &&
            (p[1 + n] == '\0' || p[1 + n] == ' ' || p[1 + n] == '\n'))
            return true;
    return false;
}

static char **read_source(void *ctx, size_t *n)
{
    char path[1024], buf[512];
    char **lines = NULL;
    FILE *f = fopen(src_path(path, sizeof path, SOURCE), "r");
    ck_assert_ptr_nonnull(f);
    *n = 0;
    while (fgets(buf, sizeof buf, f)) {
        /* the file's own comments (which mention the mark) hold no marks */
        const char *code = buf + strspn(buf, " ");
        lines = talloc_realloc(ctx, lines, char *, *n + 1);
        lines[(*n)++] = talloc_strdup(lines, strncmp(code, "//", 2) == 0 ? "\n" : buf);
    }
    fclose(f);
    return lines;
}

/* Every visible point of every method in Lines.cs is on a line marked for
 * that method, and every mark has a point. */
static void check_marks(const char *rel)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_img(ctx, rel);
    mdt_pdb *pdb = open_pdb(ctx, img);
    size_t nlines, nmarks = 0, seen = 0;
    char **lines = read_source(ctx, &nlines);
    for (size_t i = 0; i < nlines; i++)
        for (const char *p = strstr(lines[i], "//@"); p; p = strstr(p + 1, " @"))
            nmarks++;
    for (uint32_t rid = 1; rid <= mdt_table_rows(img, MDT_TABLE_MethodDef); rid++) {
        mdt_row row;
        const char *name;
        size_t len;
        mdt_seqpoint_iter it;
        mdt_seqpoint sp;
        int r;
        ck_assert_int_eq(mdt_row_get(&row, img, MDT_TABLE_MethodDef, rid), 0);
        ck_assert_int_eq(mdt_row_string(&name, &len, &row, MDT_COL_MethodDef_Name), 0);
        ck_assert_int_eq(mdt_seqpoints_init(&it, pdb, rid), 0);
        while ((r = mdt_seqpoints_next(&sp, &it)) == 0) {
            char doc[256];
            ck_assert_int_eq(mdt_pdb_document_name_buf(doc, sizeof doc, NULL, pdb, sp.document), 0);
            if (sp.hidden || strcmp(doc, "/_/src/pdb/Lines.cs") != 0)
                continue;
            ck_assert_msg(marked(lines, nlines, sp.start_line, name),
                          "%s: point at line %u of %s is not marked", rel, sp.start_line, name);
            seen++;
        }
        ck_assert_int_eq(r, MDT_ITEROVER);
    }
    /* Lines with several points of one method (the `for` line of Loop has
     * three) count once as marks: count distinct (line, method) instead. */
    size_t distinct = 0;
    for (size_t i = 0; i < nlines; i++)
        for (const char *p = strstr(lines[i], "//@"); p; p = strstr(p + 1, " @")) {
            const char *nm = p[0] == '/' ? p + 3 : p + 2;
            char name[64];
            size_t k = strcspn(nm, " \n");
            bool found = false;
            snprintf(name, sizeof name, "%.*s", (int)k, nm);
            uint32_t tok = method_named(img, name);
            mdt_seqpoint_iter it;
            mdt_seqpoint sp;
            ck_assert_int_eq(mdt_seqpoints_init(&it, pdb, tok), 0);
            while (mdt_seqpoints_next(&sp, &it) == 0)
                if (!sp.hidden && sp.start_line == i + 1)
                    found = true;
            ck_assert_msg(found, "%s: line %zu is marked for %s but has no point", rel, i + 1,
                          name);
            distinct++;
        }
    ck_assert_uint_eq(distinct, nmarks);
    ck_assert_uint_ge(seen, nmarks);
    talloc_free(ctx);
}

START_TEST(points_of_side_by_side_pdb_match_the_source)
{
    check_marks(SIDE);
}
END_TEST

START_TEST(points_of_embedded_pdb_match_the_source)
{
    check_marks(EMBEDDED);
}
END_TEST

START_TEST(side_by_side_and_embedded_are_found_and_named)
{
    void *ctx = talloc_new(NULL);
    mdt_pdb *a = open_pdb(ctx, open_img(ctx, SIDE));
    mdt_pdb *b = open_pdb(ctx, open_img(ctx, EMBEDDED));
    const char *pa = mdt_pdb_path(a), *pb = mdt_pdb_path(b);
    ck_assert_int_eq(mdt_pdb_source(a), MDT_PDB_FILE);
    ck_assert_int_eq(mdt_pdb_source(b), MDT_PDB_EMBEDDED);
    ck_assert_str_eq(pa + strlen(pa) - strlen("pdb/Lines.pdb"), "pdb/Lines.pdb");
    ck_assert_str_eq(pb + strlen(pb) - strlen("LinesEmbedded.dll!embedded"),
                     "LinesEmbedded.dll!embedded");
    ck_assert(mdt_image_md_info(mdt_pdb_image(b))->has_pdb);
    talloc_free(ctx);
}
END_TEST

START_TEST(a_method_spanning_two_documents_changes_document)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_img(ctx, SIDE);
    mdt_pdb *pdb = open_pdb(ctx, img);
    mdt_seqpoint sp;
    char *doc;
    uint32_t tok = method_named(img, "TwoFiles");
    /* `y += 1;` is under `#line 100 "Other.cs"` */
    ck_assert_int_eq(mdt_pdb_lookup(&sp, pdb, tok, 0x5), 0);
    ck_assert_uint_eq(sp.start_line, 100);
    ck_assert_uint_eq(sp.start_column, 13);
    ck_assert_int_eq(mdt_pdb_document_name(ctx, &doc, pdb, sp.document), 0);
    ck_assert_str_eq(doc, "/_/src/pdb/Other.cs");
    ck_assert_int_eq(mdt_pdb_lookup(&sp, pdb, tok, 0x9), 0);
    ck_assert_uint_eq(sp.start_line, 35);
    ck_assert_int_eq(mdt_pdb_document_name(ctx, &doc, pdb, sp.document), 0);
    ck_assert_str_eq(doc, "/_/src/pdb/Lines.cs");
    talloc_free(ctx);
}
END_TEST

START_TEST(lookup_takes_the_last_point_at_or_before_the_offset)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_img(ctx, EMBEDDED);
    mdt_pdb *pdb = open_pdb(ctx, img);
    mdt_seqpoint sp;
    uint32_t add = method_named(img, "Add"), hidden = method_named(img, "Hidden");
    static const uint32_t want[] = {14, 15, 15, 15, 15, 16, 16, 16, 16, 17, 17};
    for (uint32_t il = 0; il < sizeof want / sizeof want[0]; il++) {
        ck_assert_int_eq(mdt_pdb_lookup(&sp, pdb, add, il), 0);
        ck_assert_uint_eq(sp.start_line, want[il]);
    }
    ck_assert_uint_eq(sp.end_column, 10);
    /* `#line hidden`: IL 1..5 is a hidden point, 6 the next statement */
    ck_assert_int_eq(mdt_pdb_lookup(&sp, pdb, hidden, 3), 0);
    ck_assert(sp.hidden);
    ck_assert_uint_eq(sp.start_line, MDT_PDB_HIDDEN_LINE);
    ck_assert_int_eq(mdt_pdb_lookup(&sp, pdb, hidden, 6), 0);
    ck_assert(!sp.hidden);
    ck_assert_uint_eq(sp.start_line, 43);
    /* the constructor of a class has no source: no point */
    ck_assert_int_eq(mdt_pdb_lookup(&sp, pdb, method_named(img, "Echo") + 1, 0), MDT_ENOTFOUND);
    talloc_free(ctx);
}
END_TEST

START_TEST(method_start_skips_hidden_points)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_img(ctx, SIDE);
    mdt_pdb *pdb = open_pdb(ctx, img);
    mdt_seqpoint sp;
    /* Adder begins with the hidden closure allocation at IL 0 */
    ck_assert_int_eq(mdt_pdb_lookup(&sp, pdb, method_named(img, "Adder"), 0), 0);
    ck_assert(sp.hidden);
    ck_assert_int_eq(mdt_pdb_method_start(&sp, pdb, method_named(img, "Adder")), 0);
    ck_assert_uint_eq(sp.start_line, 47);
    ck_assert_uint_eq(sp.il_offset, 0xd);
    ck_assert_int_eq(mdt_pdb_method_start(&sp, pdb, method_named(img, "<Adder>b__0")), 0);
    ck_assert_uint_eq(sp.start_line, 48);
    ck_assert_uint_eq(sp.start_column, 25);
    talloc_free(ctx);
}
END_TEST

START_TEST(a_pdb_of_another_build_is_refused)
{
    void *ctx = talloc_new(NULL);
    char path[1024];
    mdt_pdb *pdb;
    mdt_image *other = open_img(ctx, EMBEDDED);
    src_path(path, sizeof path, "data/pdb/Lines.pdb");
    ck_assert_int_eq(mdt_pdb_open_file(ctx, &pdb, path, other), MDT_ENOTFOUND);
    ck_assert_ptr_nonnull(strstr(mdt_error_last()->what, "does not match"));
    ck_assert_int_eq(mdt_pdb_open_file(ctx, &pdb, path, NULL), 0);
    ck_assert_int_eq(mdt_pdb_open_file(ctx, &pdb, path, open_img(ctx, SIDE)), 0);
    talloc_free(ctx);
}
END_TEST

START_TEST(no_pdb_is_not_found)
{
    void *ctx = talloc_new(NULL);
    mdt_pdb *pdb;
    ck_assert_int_eq(mdt_pdb_open(ctx, &pdb, open_img(ctx, "data/Everything.dll"), NULL, 0),
                     MDT_ENOTFOUND);
    talloc_free(ctx);
}
END_TEST

/* A copy of a fixture's bytes. */
static uint8_t *slurp(void *ctx, const char *rel, size_t *n)
{
    char path[1024];
    FILE *f = fopen(src_path(path, sizeof path, rel), "rb");
    uint8_t *b;
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    b = talloc_size(ctx, *n);
    ck_assert_uint_eq(fread(b, 1, *n, f), *n);
    fclose(f);
    return b;
}

static size_t find_bytes(const uint8_t *b, size_t n, const char *what, size_t wn)
{
    for (size_t i = 0; i + wn <= n; i++)
        if (memcmp(b + i, what, wn) == 0)
            return i;
    ck_abort_msg("not found");
    return 0;
}

START_TEST(damaged_embedded_data_fails_with_zlib_reason)
{
    void *ctx = talloc_new(NULL);
    size_t n, at;
    uint8_t *b = slurp(ctx, EMBEDDED, &n);
    mdt_image *img;
    mdt_pdb *pdb;
    at = find_bytes(b, n, "MPDB", 4);
    /* claim one byte more than the stream inflates to */
    b[at + 4]++;
    ck_assert_int_eq(mdt_image_open_buffer(ctx, &img, "damaged", b, n, 0), 0);
    ck_assert_int_eq(mdt_pdb_open(ctx, &pdb, img, NULL, 0), MDT_EBADIMAGE);
    ck_assert_ptr_nonnull(strstr(mdt_error_last()->what, "does not inflate"));
    b[at + 4]--;
    /* a broken deflate block type */
    b[at + 8] = 0xFF;
    ck_assert_int_eq(mdt_pdb_open(ctx, &pdb, img, NULL, 0), MDT_EBADIMAGE);
    /* no signature */
    b[at] = 'X';
    ck_assert_int_eq(mdt_pdb_open(ctx, &pdb, img, NULL, 0), MDT_EBADIMAGE);
    ck_assert_ptr_nonnull(strstr(mdt_error_last()->what, "MPDB"));
    talloc_free(ctx);
}
END_TEST

static char *write_tmp(void *ctx, const uint8_t *b, size_t n)
{
    char *path = talloc_strdup(ctx, "/tmp/mdt-test-pdb.XXXXXX");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, b, n), (ssize_t)n);
    close(fd);
    return path;
}

START_TEST(damaged_sequence_points_fail_for_their_method_alone)
{
    void *ctx = talloc_new(NULL);
    size_t n;
    uint8_t *b = slurp(ctx, "data/pdb/Lines.pdb", &n);
    char *path = write_tmp(ctx, b, n);
    mdt_image *img = open_img(ctx, SIDE);
    mdt_pdb *pdb;
    mdt_row row;
    const uint8_t *blob;
    uint32_t len;
    mdt_seqpoint_iter it;
    mdt_seqpoint sp;
    uint32_t add = method_named(img, "Add"), loop = method_named(img, "Loop");
    int r;
    ck_assert_int_eq(mdt_pdb_open_file(ctx, &pdb, path, NULL), 0);
    ck_assert_int_eq(
        mdt_row_get(&row, mdt_pdb_image(pdb), MDT_TABLE_MethodDebugInformation, MDT_TOKEN_RID(add)),
        0);
    ck_assert_int_eq(mdt_row_blob(&blob, &len, &row, MDT_COL_MethodDebugInformation_SequencePoints),
                     0);
    /* Add's blob: LocalSignature, then the first point (IL 0, 0 lines, 1
     * column, line 14, column 9), then the second point's IL delta 1.
     * Make that delta 0 followed by document 9 (there are 4). */
    size_t off = (size_t)(blob - mdt_image_bytes(&(size_t){0}, mdt_pdb_image(pdb)));
    ck_assert_uint_eq(blob[1], 0x00);
    ck_assert_uint_eq(blob[4], 14);
    b[off + 6] = 0;
    b[off + 7] = 9;
    unlink(path);
    path = write_tmp(ctx, b, n);
    ck_assert_int_eq(mdt_pdb_open_file(ctx, &pdb, path, NULL), 0);
    unlink(path);
    ck_assert_int_eq(mdt_seqpoints_init(&it, pdb, add), 0);
    ck_assert_int_eq(mdt_seqpoints_next(&sp, &it), 0);
    ck_assert_uint_eq(sp.start_line, 14);
    r = mdt_seqpoints_next(&sp, &it);
    ck_assert_int_eq(r, MDT_EBADIMAGE);
    ck_assert_str_eq(mdt_error_last()->region, "MethodDebugInformation");
    ck_assert_uint_eq(mdt_error_last()->row, MDT_TOKEN_RID(add));
    ck_assert_ptr_nonnull(strstr(mdt_error_last()->what, "document row 9"));
    ck_assert_int_eq(mdt_seqpoints_next(&sp, &it), MDT_ITEROVER);
    /* the next method still reads */
    ck_assert_int_eq(mdt_pdb_lookup(&sp, pdb, loop, 0x19), 0);
    ck_assert_uint_eq(sp.start_line, 26);
    (void)len;
    talloc_free(ctx);
}
END_TEST

START_TEST(a_windows_pdb_is_unsupported)
{
    void *ctx = talloc_new(NULL);
    static const char msf[] = "Microsoft C/C++ MSF 7.00\r\n\x1a"
                              "DS\0\0\0";
    char *path = write_tmp(ctx, (const uint8_t *)msf, sizeof msf);
    mdt_pdb *pdb;
    ck_assert_int_eq(mdt_pdb_open_file(ctx, &pdb, path, NULL), MDT_EUNSUPPORTED);
    unlink(path);
    talloc_free(ctx);
}
END_TEST

/* A FIFO named like the PDB beside an assembly (or named by its CodeView
 * entry) is refused, not opened: open(2) would wait for a writer forever
 * (issue 25). */
START_TEST(a_fifo_beside_the_assembly_is_refused)
{
    void *ctx = talloc_new(NULL);
    char dir[512], dll[600], fifo[600];
    size_t n;
    uint8_t *b;
    FILE *f;
    mdt_image *img;
    mdt_pdb *pdb = NULL;
    snprintf(dir, sizeof dir, "%s/mdt-pdb-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    b = slurp(ctx, SIDE, &n);
    snprintf(dll, sizeof dll, "%s/Lines.dll", dir);
    snprintf(fifo, sizeof fifo, "%s/Lines.pdb", dir);
    ck_assert_ptr_nonnull(f = fopen(dll, "wb"));
    ck_assert_uint_eq(fwrite(b, 1, n, f), n);
    fclose(f);
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    ck_assert_int_eq(mdt_image_open_file(ctx, &img, dll, 0), 0);
    alarm(10); /* a hang fails the test */
    ck_assert_int_eq(mdt_pdb_open(ctx, &pdb, img, dll, 0), MDT_EIO);
    ck_assert_ptr_nonnull(strstr(mdt_error_last()->what, "not a regular file"));
    ck_assert_int_eq(mdt_pdb_open_file(ctx, &pdb, fifo, NULL), MDT_EIO);
    alarm(0);
    ck_assert_ptr_null(pdb);
    unlink(fifo);
    unlink(dll);
    rmdir(dir);
    talloc_free(ctx);
}
END_TEST

START_TEST(document_names_into_buffers)
{
    void *ctx = talloc_new(NULL);
    mdt_pdb *pdb = open_pdb(ctx, open_img(ctx, SIDE));
    char small[8], big[64];
    size_t len = 0;
    ck_assert_uint_eq(mdt_pdb_document_count(pdb), 4);
    ck_assert_int_eq(mdt_pdb_document_name_buf(small, sizeof small, &len, pdb, 1), MDT_ETRUNC);
    ck_assert_uint_eq(len, strlen("/_/src/pdb/Lines.cs"));
    ck_assert_str_eq(small, "/_/src/");
    /* No buffer at all: only the length. */
    len = 0;
    ck_assert_int_eq(mdt_pdb_document_name_buf(NULL, 0, &len, pdb, 1), MDT_ETRUNC);
    ck_assert_uint_eq(len, strlen("/_/src/pdb/Lines.cs"));
    ck_assert_int_eq(mdt_pdb_document_name_buf(big, sizeof big, &len, pdb, 1), 0);
    ck_assert_str_eq(big, "/_/src/pdb/Lines.cs");
    ck_assert_int_eq(mdt_pdb_document_name_buf(big, sizeof big, &len, pdb, 5), MDT_ENOTFOUND);
    ck_assert_int_eq(mdt_pdb_document_name_buf(big, sizeof big, &len, pdb, 0), MDT_ENOTFOUND);
    talloc_free(ctx);
}
END_TEST

Suite *suite(void);
Suite *suite(void)
{
    Suite *s = suite_create("pdb");
    TCase *tc = tcase_create("pdb");
    tcase_add_test(tc, points_of_side_by_side_pdb_match_the_source);
    tcase_add_test(tc, points_of_embedded_pdb_match_the_source);
    tcase_add_test(tc, side_by_side_and_embedded_are_found_and_named);
    tcase_add_test(tc, a_method_spanning_two_documents_changes_document);
    tcase_add_test(tc, lookup_takes_the_last_point_at_or_before_the_offset);
    tcase_add_test(tc, method_start_skips_hidden_points);
    tcase_add_test(tc, a_pdb_of_another_build_is_refused);
    tcase_add_test(tc, no_pdb_is_not_found);
    tcase_add_test(tc, damaged_embedded_data_fails_with_zlib_reason);
    tcase_add_test(tc, damaged_sequence_points_fail_for_their_method_alone);
    tcase_add_test(tc, a_windows_pdb_is_unsupported);
    tcase_add_test(tc, a_fifo_beside_the_assembly_is_refused);
    tcase_add_test(tc, document_names_into_buffers);
    suite_add_tcase(s, tc);
    return s;
}
