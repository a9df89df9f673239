/* Opening images and reading their headers, streams and identity, on real
 * framework assemblies and on the corpus of unusual files. */
#define _DEFAULT_SOURCE /* mkdtemp, mkstemp, truncate */
#include <check.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <talloc.h>
#include <unistd.h>

#include <mdtools/mdtools.h>

#include "padded.h"
#include "paths.h"
#include "walk.h"

static mdt_image *open_rel(void *ctx, const char *rel)
{
    char p[1024];
    mdt_image *img = NULL;
    char msg[512];
    int e = mdt_image_open_file(ctx, &img, src_path(p, sizeof p, rel), 0);
    ck_assert_msg(e == 0, "open %s: %s", rel, mdt_error_message(msg, sizeof msg));
    return img;
}

static const char *typedef_name(const mdt_image *img, uint32_t rid)
{
    mdt_row r;
    const char *s = NULL;
    ck_assert_int_eq(mdt_row_get(&r, img, MDT_TABLE_TypeDef, rid), 0);
    ck_assert_int_eq(mdt_row_string(&s, NULL, &r, MDT_COL_TypeDef_TypeName), 0);
    return s;
}

static bool has_warning(const mdt_image *img, const char *needle)
{
    for (size_t i = 0; i < mdt_image_warning_count(img); i++)
        if (strstr(mdt_image_warning(img, i), needle))
            return true;
    return false;
}

START_TEST(mscorlib_identity_and_token)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img;
    mdt_identity id;
    char buf[256];
    ck_assert_int_eq(mdt_image_open_file(ctx, &img, MONO_45_DIR "/mscorlib.dll", 0), 0);
    ck_assert_int_eq(mdt_image_kind(img), MDT_KIND_PE);
    ck_assert_int_eq(mdt_assembly_identity(&id, img), 0);
    ck_assert_str_eq(mdt_identity_format(buf, sizeof buf, &id),
                     "mscorlib, Version=4.0.0.0, Culture=neutral, PublicKeyToken=b77a5c561934e089");
    ck_assert_str_eq(mdt_image_md_info(img)->version, "v4.0.30319");
    ck_assert(mdt_table_rows(img, MDT_TABLE_TypeDef) > 2000);
    ck_assert_str_eq(typedef_name(img, 1), "<Module>");
    talloc_free(ctx);
}
END_TEST

START_TEST(last_stream_wins_in_compressed_metadata)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_rel(ctx, "data/corpus/asmresolver/HelloWorld.DoubleStringsStream.dll");
    ck_assert_str_eq(typedef_name(img, 2), "Class_2");
    ck_assert(has_warning(img, "duplicate stream #Strings"));
    talloc_free(ctx);
}
END_TEST

START_TEST(first_stream_wins_in_enc_metadata)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img =
        open_rel(ctx, "data/corpus/asmresolver/HelloWorld.DoubleStringsStream.EnC.dll");
    ck_assert(mdt_image_md_info(img)->enc);
    ck_assert_str_eq(typedef_name(img, 2), "Class_1");
    talloc_free(ctx);
}
END_TEST

START_TEST(double_guid_stream_mvid)
{
    void *ctx = talloc_new(NULL);
    uint8_t mvid[16];
    char g[37];
    mdt_image *a = open_rel(ctx, "data/corpus/asmresolver/HelloWorld.DoubleGuidStream.dll");
    mdt_image *b = open_rel(ctx, "data/corpus/asmresolver/HelloWorld.DoubleGuidStream.EnC.dll");
    ck_assert_int_eq(mdt_image_mvid(mvid, a), 0);
    ck_assert_str_eq(mdt_heap_guid_format(g, mvid), "e275e394-8b82-4cac-a38c-b3724b81ea05");
    ck_assert_int_eq(mdt_image_mvid(mvid, b), 0);
    ck_assert_str_eq(mdt_heap_guid_format(g, mvid), "06776c8f-44ee-4165-b0f7-2dbd127fe21b");
    talloc_free(ctx);
}
END_TEST

/* The GUID's text, written by hand (heaps.c), against printf's of the same
 * fields: Data1..Data3 little-endian as numbers, Data4 in order; every
 * byte value at every position, and a pattern that tells positions
 * apart. */
START_TEST(guid_text_equals_printf)
{
    for (unsigned v = 0; v < 256 + 16; v++) {
        uint8_t g[16];
        char got[37], want[37];
        for (int i = 0; i < 16; i++)
            g[i] = (uint8_t)(v < 256 ? v + (unsigned)i * 17u : (unsigned)i * 16u + (v - 256));
        snprintf(want, sizeof want, "%08x-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                 (unsigned)g[0] | (unsigned)g[1] << 8 | (unsigned)g[2] << 16 | (unsigned)g[3] << 24,
                 (unsigned)g[4] | (unsigned)g[5] << 8, (unsigned)g[6] | (unsigned)g[7] << 8, g[8],
                 g[9], g[10], g[11], g[12], g[13], g[14], g[15]);
        memset(got, 'x', sizeof got);
        ck_assert_ptr_eq(mdt_heap_guid_format(got, g), got);
        ck_assert_str_eq(got, want);
    }
}
END_TEST

static void us_ascii(const mdt_image *img, uint32_t idx, const char *want)
{
    const uint8_t *u;
    uint32_t n;
    int flag;
    char *s;
    ck_assert_int_eq(mdt_heap_us(&u, &n, &flag, img, idx), 0);
    ck_assert_int_eq(mdt_heap_utf16_to_utf8(NULL, &s, NULL, NULL, u, n), 0);
    ck_assert_str_eq(s, want);
    talloc_free(s);
}

START_TEST(double_user_strings)
{
    void *ctx = talloc_new(NULL);
    us_ascii(open_rel(ctx, "data/corpus/asmresolver/HelloWorld.DoubleUserStringsStream.dll"), 1,
             "Hello Mars!!");
    us_ascii(open_rel(ctx, "data/corpus/asmresolver/HelloWorld.DoubleUserStringsStream.EnC.dll"), 1,
             "Hello World!");
    us_ascii(open_rel(ctx, "data/corpus/dnfile/duplicate-stream.exe"), 1, "BBBBBBBB");
    us_ascii(open_rel(ctx, "data/corpus/dnfile/unknown-stream.exe"), 1, "AAAAAAAA");
    talloc_free(ctx);
}
END_TEST

START_TEST(schema_stream_switches_to_first_wins)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_rel(ctx, "data/corpus/asmresolver/HelloWorld.SchemaStream.exe");
    ck_assert(mdt_image_md_info(img)->enc);
    ck_assert_str_eq(typedef_name(img, 2), "Program");
    talloc_free(ctx);
}
END_TEST

START_TEST(lowercase_heaps)
{
    void *ctx = talloc_new(NULL);
    mdt_image *n =
        open_rel(ctx, "data/corpus/asmresolver/HelloWorld.LowerCaseHeapsNormalMetadata.exe");
    mdt_image *e = open_rel(ctx, "data/corpus/asmresolver/HelloWorld.LowerCaseHeapsWithEnC.exe");
    ck_assert(!mdt_image_md_info(n)->enc);
    ck_assert(has_warning(n, "unknown stream \"#schema\""));
    ck_assert_str_eq(typedef_name(n, 2), "Program");
    ck_assert(mdt_image_md_info(e)->enc);
    ck_assert_str_eq(typedef_name(e, 2), "Program");
    talloc_free(ctx);
}
END_TEST

START_TEST(jtd_makes_every_index_wide)
{
    void *ctx = talloc_new(NULL);
    const char *files[] = {"data/corpus/asmresolver/HelloWorld.JTDStream.exe",
                           "data/corpus/asmresolver/HelloWorld.LowercaseJTDStream.exe"};
    for (int i = 0; i < 2; i++) {
        mdt_image *img = open_rel(ctx, files[i]);
        ck_assert(mdt_image_md_info(img)->jtd);
        ck_assert_uint_eq(mdt_column_width(img, MDT_TABLE_TypeDef, MDT_COL_TypeDef_TypeName), 4);
        ck_assert_uint_eq(mdt_column_width(img, MDT_TABLE_TypeDef, MDT_COL_TypeDef_Extends), 4);
        ck_assert_str_eq(typedef_name(img, 2), "Program");
    }
    talloc_free(ctx);
}
END_TEST

START_TEST(extra_data_is_skipped)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_rel(ctx, "data/corpus/asmresolver/HelloWorld.TablesStream.ExtraData.exe");
    ck_assert(mdt_image_md_info(img)->has_extra_data);
    ck_assert_uint_eq(mdt_image_md_info(img)->extra_data, 12345678);
    ck_assert_str_eq(typedef_name(img, 2), "Program");
    talloc_free(ctx);
}
END_TEST

START_TEST(unsorted_table_found_by_scan)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_rel(ctx, "data/corpus/asmresolver/MetadataUnsortedTable.dll");
    mdt_find f;
    uint32_t rid;
    mdt_row r;
    ck_assert(!mdt_table_is_sorted(img, MDT_TABLE_ClassLayout));
    ck_assert(has_warning(img, "ClassLayout is not sorted"));
    ck_assert_str_eq(typedef_name(img, 4), "Size22");
    ck_assert_int_eq(mdt_find_init(&f, img, MDT_TABLE_ClassLayout, MDT_COL_ClassLayout_Parent, 4),
                     0);
    ck_assert_int_eq(mdt_find_next(&rid, &f), 0);
    ck_assert_uint_eq(rid, 3);
    ck_assert_int_eq(mdt_row_get(&r, img, MDT_TABLE_ClassLayout, rid), 0);
    ck_assert_uint_eq(mdt_row_raw(&r, MDT_COL_ClassLayout_ClassSize), 22);
    ck_assert_int_eq(mdt_find_next(&rid, &f), MDT_ITEROVER);
    talloc_free(ctx);
}
END_TEST

START_TEST(sorted_table_binary_search_matches_scan)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img;
    ck_assert_int_eq(mdt_image_open_file(ctx, &img, MONO_45_DIR "/mscorlib.dll", 0), 0);
    ck_assert(mdt_table_is_sorted(img, MDT_TABLE_CustomAttribute));
    uint32_t n = mdt_table_rows(img, MDT_TABLE_CustomAttribute);
    /* For a sample of keys: binary search finds exactly the rows a scan does. */
    for (uint32_t rid = 1; rid <= n; rid += 97) {
        mdt_row r;
        mdt_find f;
        uint32_t got, cnt = 0, want = 0;
        ck_assert_int_eq(mdt_row_get(&r, img, MDT_TABLE_CustomAttribute, rid), 0);
        uint32_t key = mdt_row_raw(&r, MDT_COL_CustomAttribute_Parent);
        for (uint32_t j = 1; j <= n; j++) {
            mdt_row q;
            mdt_row_get(&q, img, MDT_TABLE_CustomAttribute, j);
            want += mdt_row_raw(&q, MDT_COL_CustomAttribute_Parent) == key;
        }
        mdt_find_init(&f, img, MDT_TABLE_CustomAttribute, MDT_COL_CustomAttribute_Parent, key);
        ck_assert(!f.scan);
        while (mdt_find_next(&got, &f) == 0)
            cnt++;
        ck_assert_uint_eq(cnt, want);
    }
    talloc_free(ctx);
}
END_TEST

START_TEST(blob_index_zero_without_blob_heap)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_rel(ctx, "data/corpus/asmresolver/ForwarderLibrary.dll");
    mdt_identity id;
    ck_assert_int_eq(mdt_assembly_identity(&id, img), 0);
    ck_assert_ptr_null(id.public_key);
    ck_assert_int_eq(mdt_assemblyref_identity(&id, img, 1), 0);
    ck_assert_str_eq(id.name, "ActualLibrary");
    talloc_free(ctx);
}
END_TEST

START_TEST(native_pe_is_not_dotnet)
{
    char p[1024];
    mdt_image *img = NULL;
    char msg[512];
    int e = mdt_image_open_file(
        NULL, &img, src_path(p, sizeof p, "data/corpus/asmresolver/NativeHelloWorldC.x64.exe"), 0);
    ck_assert_int_eq(e, MDT_ENOTDOTNET);
    ck_assert_ptr_null(img);
    ck_assert_ptr_nonnull(strstr(mdt_error_message(msg, sizeof msg), "no CLI header"));
}
END_TEST

/* A fresh directory under $TMPDIR (or /tmp) for a test's files. */
static void temp_dir(char *dir, size_t n)
{
    snprintf(dir, n, "%s/mdt-kinds-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

/* A path from input may name a FIFO: open(2) would wait for a writer
 * forever. It is refused without being opened, read or mapped (issue 25). */
START_TEST(a_fifo_is_refused_not_waited_for)
{
    char dir[512], path[600], msg[512];
    mdt_image *img = NULL;
    temp_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/pipe.dll", dir);
    ck_assert_int_eq(mkfifo(path, 0600), 0);
    alarm(10); /* a hang fails the test instead of stalling the suite */
    ck_assert_int_eq(mdt_image_open_file(NULL, &img, path, 0), MDT_EIO);
    ck_assert_ptr_nonnull(
        strstr(mdt_error_message(msg, sizeof msg), "not a regular file (a FIFO)"));
    ck_assert_int_eq(mdt_image_open_file(NULL, &img, path, MDT_OPEN_MAP), MDT_EIO);
    alarm(0);
    ck_assert_ptr_null(img);
    unlink(path);
    ck_assert_int_eq(mdt_image_open_file(NULL, &img, dir, 0), MDT_EIO);
    ck_assert_ptr_nonnull(
        strstr(mdt_error_message(msg, sizeof msg), "not a regular file (a directory)"));
    ck_assert_int_eq(mdt_image_open_file(NULL, &img, "/dev/null", 0), MDT_EIO);
    ck_assert_ptr_nonnull(strstr(mdt_error_message(msg, sizeof msg), "not a regular file"));
    rmdir(dir);
}
END_TEST

static long max_rss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* A large file that is no image is refused from its headers, not read
 * whole first (a 2 GiB sparse file named in mdinspect batch's input cost
 * 2.1 GB of memory and 31 s, issue 25): `head` (n bytes) starts a sparse
 * 1 GiB file, opening it must fail with `code` and a message containing
 * `want` equal to the message of the same head opened from a buffer, and
 * the process may not grow by more than a few MiB. */
static void large_file_refused(const uint8_t *head, size_t n, int code, const char *want)
{
    char dir[512], path[600], msg[512], whole[512];
    mdt_image *img = NULL;
    int fd;
    long before;
    temp_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/big.dll", dir);
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, head, n), (ssize_t)n);
    ck_assert_int_eq(ftruncate(fd, (off_t)1 << 30), 0);
    close(fd);
    /* What parsing the head as a whole file says (names equal). */
    ck_assert_int_eq(mdt_image_open_buffer(NULL, &img, path, head, n, 0), code);
    mdt_error_message(whole, sizeof whole);
    before = max_rss_kb();
    ck_assert_int_eq(mdt_image_open_file(NULL, &img, path, 0), code);
    ck_assert_ptr_null(img);
    mdt_error_message(msg, sizeof msg);
    ck_assert_msg(max_rss_kb() - before < 16 * 1024, "reading a 1 GiB non-image grew by %ld KiB",
                  max_rss_kb() - before);
    ck_assert_ptr_nonnull(strstr(msg, want));
    ck_assert_str_eq(msg, whole);
    unlink(path);
    rmdir(dir);
}

START_TEST(a_large_file_that_is_no_image_is_not_read_whole)
{
    static const uint8_t zeros[64];
    uint8_t mz[256] = {'M', 'Z'};
    mz[60] = 0x80; /* e_lfanew, with no PE signature there */
    large_file_refused(zeros, sizeof zeros, MDT_ENOTDOTNET, "not a PE (MZ)");
    large_file_refused(mz, sizeof mz, MDT_ENOTDOTNET, "no PE signature at e_lfanew 0x80");
}
END_TEST

/* A native PE (no CLI data directory) is refused from its headers too:
 * the same message as for the whole file. */
START_TEST(a_large_native_pe_is_not_read_whole)
{
    char p[1024];
    uint8_t head[4096];
    FILE *f =
        fopen(src_path(p, sizeof p, "data/corpus/asmresolver/NativeHelloWorldC.x64.exe"), "rb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fread(head, 1, sizeof head, f), sizeof head);
    fclose(f);
    large_file_refused(head, sizeof head, MDT_ENOTDOTNET, "no CLI header");
}
END_TEST

/* mdt_error_message as errors.h describes it, from the record's fields, for
 * every buffer length: a NUL-terminated prefix of the whole line. */
static void check_errmsg_every_length(void)
{
    const mdt_errinfo *e = mdt_error_last();
    char want[1024], got[1024];
    size_t n = 0;
    if (e->file[0])
        n += (size_t)snprintf(want + n, sizeof want - n, "%s: ", e->file);
    if (e->region[0]) {
        n += (size_t)snprintf(want + n, sizeof want - n, "%s", e->region);
        if (e->row != UINT32_MAX)
            n += (size_t)snprintf(want + n, sizeof want - n, " row %u", e->row);
        if (e->column[0])
            n += (size_t)snprintf(want + n, sizeof want - n, " column %s", e->column);
        if (e->offset != UINT64_MAX)
            n += (size_t)snprintf(want + n, sizeof want - n, "%s+0x%llx",
                                  e->row != UINT32_MAX || e->column[0] ? " at " : "",
                                  (unsigned long long)e->offset);
        if (e->file_offset != UINT64_MAX)
            n += (size_t)snprintf(want + n, sizeof want - n, " (file 0x%llx)",
                                  (unsigned long long)e->file_offset);
        n += (size_t)snprintf(want + n, sizeof want - n, ": ");
    } else if (e->file_offset != UINT64_MAX) {
        n += (size_t)snprintf(want + n, sizeof want - n,
                              "file 0x%llx: ", (unsigned long long)e->file_offset);
    }
    snprintf(want + n, sizeof want - n, "%s", e->what[0] ? e->what : mdt_error_string(e->code));
    ck_assert_str_eq(mdt_error_message(got, sizeof got), want);
    for (size_t len = 1; len <= strlen(want) + 1; len++) {
        memset(got, 'x', sizeof got);
        ck_assert_ptr_eq(mdt_error_message(got, len), got);
        ck_assert_uint_eq(strlen(got), len - 1);
        ck_assert(strncmp(got, want, len - 1) == 0);
    }
    ck_assert_ptr_null(mdt_error_message(NULL, 10));
    ck_assert_ptr_eq(mdt_error_message(got, 0), got);
}

START_TEST(errmsg_is_cut_to_any_buffer)
{
    void *ctx = talloc_new(NULL);
    char p[1024];
    mdt_image *img = open_rel(ctx, "data/Everything.dll");
    mdt_row r;
    /* A located error: image, region, row. */
    ck_assert_int_ne(mdt_row_get(&r, img, MDT_TABLE_TypeDef, 0xFFFFFF), 0);
    ck_assert(mdt_error_last()->region[0] && mdt_error_last()->file[0]);
    check_errmsg_every_length();
    /* Row, column, offset and file offset (a case of tests/corrupt). */
    const char *name;
    img = open_rel(ctx, "tests/corrupt/cases/string-index-beyond-heap.bin");
    ck_assert_int_eq(mdt_row_get(&r, img, MDT_TABLE_TypeDef, 2), 0);
    ck_assert_int_eq(mdt_row_string(&name, NULL, &r, MDT_COL_TypeDef_TypeName), MDT_EBADIMAGE);
    ck_assert(mdt_error_last()->column[0] && mdt_error_last()->offset != UINT64_MAX &&
              mdt_error_last()->file_offset != UINT64_MAX);
    check_errmsg_every_length();
    /* A file offset and a message of its own. */
    ck_assert_int_eq(mdt_image_open_file(
                         ctx, &img,
                         src_path(p, sizeof p, "data/corpus/asmresolver/NativeHelloWorldC.x64.exe"),
                         0),
                     MDT_ENOTDOTNET);
    check_errmsg_every_length();
    talloc_free(ctx);
}
END_TEST

START_TEST(no_us_heap_gives_clear_error)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_rel(ctx, "data/corpus/asmresolver/HelloWorld_NoUSStream.exe");
    const uint8_t *u;
    uint32_t n;
    int flag;
    char msg[512];
    ck_assert_int_eq(mdt_heap_us(&u, &n, &flag, img, 1), MDT_ENOHEAP);
    ck_assert_ptr_nonnull(strstr(mdt_error_message(msg, sizeof msg), "no #US heap"));
    talloc_free(ctx);
}
END_TEST

START_TEST(portable_pdb_large_indices)
{
    void *ctx = talloc_new(NULL);
    mdt_image *big = open_rel(ctx, "data/corpus/asmresolver/LargeIndicesPdb.pdb");
    mdt_image *small = open_rel(ctx, "data/corpus/asmresolver/TheAnswer.pdb");
    ck_assert_int_eq(mdt_image_kind(big), MDT_KIND_METADATA);
    ck_assert(mdt_image_md_info(big)->has_pdb);
    ck_assert_str_eq(mdt_image_md_info(big)->version, "PDB v1.0");
    ck_assert_uint_eq(mdt_column_width(big, MDT_TABLE_CustomDebugInformation,
                                       MDT_COL_CustomDebugInformation_Parent),
                      4);
    ck_assert_uint_eq(mdt_column_width(small, MDT_TABLE_CustomDebugInformation,
                                       MDT_COL_CustomDebugInformation_Parent),
                      2);
    ck_assert_uint_eq(mdt_image_md_info(small)->pdb_entry_point, 0x06000004);
    talloc_free(ctx);
}
END_TEST

START_TEST(unaligned_metadata_reads)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_rel(ctx, "data/corpus/asmresolver/HelloWorld.UnalignedMetadata.exe");
    ck_assert_uint_eq(mdt_image_pe_info(img)->metadata.rva, 0x206D);
    ck_assert_str_eq(typedef_name(img, 2), "Program");
    talloc_free(ctx);
}
END_TEST

START_TEST(virtual_section_bytes_read_as_zero)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_rel(ctx, "data/corpus/asmresolver/HelloWorld.VirtualSegment.exe");
    uint8_t buf[4] = {1, 1, 1, 1};
    ck_assert_int_eq(mdt_image_read_rva(buf, 4, img, 0x8000), 0);
    ck_assert_int_eq(buf[0] | buf[1] | buf[2] | buf[3], 0);
    talloc_free(ctx);
}
END_TEST

START_TEST(mapped_dump_reads_like_the_file)
{
    void *ctx = talloc_new(NULL);
    char p[1024];
    mdt_image *flat = open_rel(ctx, "data/corpus/asmresolver/HelloWorld.exe");
    mdt_image *img, *bad = NULL;
    size_t len;
    FILE *f = fopen(src_path(p, sizeof p, "data/corpus/asmresolver/HelloWorld.dump"), "rb");
    ck_assert_ptr_nonnull(f);
    uint8_t *buf = talloc_size(ctx, 0x8000);
    len = fread(buf, 1, 0x8000, f);
    fclose(f);
    ck_assert_uint_eq(len, 0x7000);
    ck_assert_int_eq(mdt_image_open_mapped(ctx, &img, "dump", buf, len, 0), 0);
    ck_assert_int_eq(mdt_image_kind(img), MDT_KIND_PE_MAPPED);
    ck_assert(mdt_image_pe_info(img)->pe32plus);
    ck_assert_uint_eq(mdt_table_rows(img, MDT_TABLE_TypeRef),
                      mdt_table_rows(flat, MDT_TABLE_TypeRef));
    ck_assert_str_eq(typedef_name(img, 2), typedef_name(flat, 2));
    /* The same bytes as a flat file: located errors, no crash. */
    ck_assert_int_ne(mdt_image_open_buffer(ctx, &bad, "dump", buf, len, 0), 0);
    ck_assert_ptr_null(bad);
    talloc_free(ctx);
}
END_TEST

/* A temporary copy of a fixture; the caller unlinks it. */
static void copy_to_temp(const char *rel, char *tmp, size_t n)
{
    char p[1024];
    snprintf(tmp, n, "%s/mdt-trunc-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    int out = mkstemp(tmp);
    ck_assert_int_ge(out, 0);
    FILE *in = fopen(src_path(p, sizeof p, rel), "rb");
    ck_assert_ptr_nonnull(in);
    char buf[4096];
    size_t k;
    while ((k = fread(buf, 1, sizeof buf, in)) > 0)
        ck_assert_int_eq(write(out, buf, k), (ssize_t)k);
    fclose(in);
    close(out);
}

/* Issue 16: a file truncated while its image is open must not take the
 * process down. Opened with the default flags, the image holds its own
 * bytes: every row, cell and heap entry reads as before the truncation. */
START_TEST(truncated_file_reads_as_opened)
{
    void *ctx = talloc_new(NULL);
    char tmp[1024];
    mdt_image *img = NULL;
    walk_stats before, after;
    copy_to_temp("data/Everything.dll", tmp, sizeof tmp);
    ck_assert_int_eq(mdt_image_open_file(ctx, &img, tmp, 0), 0);
    ck_assert_int_eq(truncate(tmp, 0), 0);
    walk_image(img, &after);
    ck_assert_int_eq(unlink(tmp), 0);
    mdt_image *ref = open_rel(ctx, "data/Everything.dll");
    walk_image(ref, &before);
    ck_assert_uint_gt(after.cells, 1000);
    ck_assert_uint_eq(after.cells_ok, before.cells_ok);
    ck_assert_uint_eq(after.string_bytes, before.string_bytes);
    ck_assert_uint_eq(after.blob_bytes, before.blob_bytes);
    ck_assert_uint_eq(after.errors, 0);
    /* MDT_OPEN_COPY says the same for a file. */
    copy_to_temp("data/Everything.dll", tmp, sizeof tmp);
    ck_assert_int_eq(mdt_image_open_file(ctx, &img, tmp, MDT_OPEN_COPY), 0);
    ck_assert_int_eq(truncate(tmp, 0), 0);
    walk_image(img, &after);
    ck_assert_uint_eq(after.cells_ok, before.cells_ok);
    ck_assert_int_eq(unlink(tmp), 0);
    talloc_free(ctx);
}
END_TEST

/* The risk image.h states for MDT_OPEN_MAP is real: the same sequence on a
 * mapped file kills the process that reads (here a child). */
START_TEST(truncated_mapped_file_kills_the_reader)
{
    char tmp[1024];
    copy_to_temp("data/Everything.dll", tmp, sizeof tmp);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        mdt_image *img = NULL;
        walk_stats st;
        if (mdt_image_open_file(NULL, &img, tmp, MDT_OPEN_MAP) != 0 || truncate(tmp, 0) != 0)
            _exit(3);
        walk_image(img, &st);
        _exit(0);
    }
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    unlink(tmp);
    /* SIGBUS, or a sanitizer's report of it and a failing exit. */
    ck_assert_msg((WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS) ||
                      (WIFEXITED(status) && WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != 3),
                  "the reader of a truncated mapping survived (status 0x%x)", status);
}
END_TEST

START_TEST(open_flags_are_checked)
{
    char p[1024];
    mdt_image *img = (mdt_image *)p;
    uint8_t b[4] = {'B', 'S', 'J', 'B'};
    src_path(p, sizeof p, "data/Everything.dll");
    ck_assert_int_eq(mdt_image_open_file(NULL, &img, p, MDT_OPEN_COPY | MDT_OPEN_MAP), MDT_EINVAL);
    ck_assert_ptr_null(img);
    ck_assert_int_eq(mdt_image_open_file(NULL, &img, p, 1u << 7), MDT_EINVAL);
    ck_assert_int_eq(mdt_image_open_buffer(NULL, &img, "b", b, 4, MDT_OPEN_MAP), MDT_EINVAL);
    ck_assert_int_eq(mdt_image_open_mapped(NULL, &img, "b", b, 4, MDT_OPEN_MAP), MDT_EINVAL);
    ck_assert_int_eq(mdt_image_open_file(NULL, &img, p, MDT_OPEN_MAP), 0);
    size_t len;
    struct stat st;
    ck_assert_int_eq(stat(p, &st), 0);
    mdt_image_bytes(&len, img);
    ck_assert_uint_eq(len, (size_t)st.st_size);
    mdt_image_close(img);
}
END_TEST

/* --- MDT_OPEN_LAZY: reading a file on demand --- */

/* 512 KiB inserted before Everything.dll's second section: its headers,
 * CLI header, IL and metadata stay in the first 64 KiB chunk, .sdata,
 * .rsrc (the Win32 version resource) and .reloc move past 512 KiB. */
#define LAZY_PAD (512 * 1024)

/* Everything a reader may ask beyond the metadata, as one checksum-like
 * record, so that a lazily opened image can be compared with a read one. */
typedef struct beyond {
    size_t nres, nbodies, body_bytes;
    uint32_t body_sum, checksum, version_strings;
    uint8_t sdata[0x38];
} beyond;

static int read_beyond(beyond *b, const mdt_image *img, void *ctx)
{
    mdt_win32res *res;
    mdt_version_info *vi;
    int e;
    memset(b, 0, sizeof *b);
    if ((e = mdt_win32res_list(ctx, &res, &b->nres, img)) ||
        (e = mdt_version_info_read(ctx, &vi, img)) || (e = mdt_pe_checksum(&b->checksum, img)))
        return e;
    b->version_strings = (uint32_t)vi->nstrings;
    const mdt_section *sd = mdt_image_section(img, 1);
    if ((e = mdt_image_read_rva(b->sdata, sizeof b->sdata, img, sd->virtual_address)))
        return e;
    uint32_t n = mdt_table_rows(img, MDT_TABLE_MethodDef);
    for (uint32_t rid = 1; rid <= n; rid++) {
        mdt_il_body body;
        if (mdt_il_body_get(&body, img, MDT_TOKEN(MDT_TABLE_MethodDef, rid)) != 0)
            continue;
        b->nbodies++;
        b->body_bytes += body.code_size;
        for (uint32_t i = 0; i < body.code_size; i++)
            b->body_sum = b->body_sum * 31 + body.code[i];
    }
    return 0;
}

/* The same answers as reading the file at open: tables, bodies, Win32
 * resources, section data, the checksum over every byte. */
START_TEST(lazy_open_reads_like_the_default)
{
    void *ctx = talloc_new(NULL);
    char p[1024], tmp[1024], msg[512];
    mdt_image *read = NULL, *lazy = NULL;
    walk_stats ws_read, ws_lazy;
    beyond b_read, b_lazy;
    ck_assert_int_eq(
        padded_copy(src_path(p, sizeof p, "data/Everything.dll"), tmp, sizeof tmp, LAZY_PAD), 0);
    ck_assert_int_eq(mdt_image_open_file(ctx, &read, tmp, 0), 0);
    ck_assert_msg(mdt_image_open_file(ctx, &lazy, tmp, MDT_OPEN_LAZY) == 0, "%s",
                  mdt_error_message(msg, sizeof msg));
    walk_image(read, &ws_read);
    walk_image(lazy, &ws_lazy);
    ck_assert_uint_eq(ws_lazy.cells_ok, ws_read.cells_ok);
    ck_assert_uint_eq(ws_lazy.string_bytes, ws_read.string_bytes);
    ck_assert_uint_eq(ws_lazy.blob_bytes, ws_read.blob_bytes);
    ck_assert_uint_eq(ws_lazy.errors, ws_read.errors);
    ck_assert_int_eq(read_beyond(&b_read, read, ctx), 0);
    ck_assert_msg(read_beyond(&b_lazy, lazy, ctx) == 0, "%s", mdt_error_message(msg, sizeof msg));
    ck_assert_uint_gt(b_read.nres, 0);
    ck_assert_uint_gt(b_read.nbodies, 10);
    ck_assert_mem_eq(&b_lazy, &b_read, sizeof b_read);
    size_t n_read, n_lazy;
    const uint8_t *d_read = mdt_image_bytes(&n_read, read),
                  *d_lazy = mdt_image_bytes(&n_lazy, lazy);
    ck_assert_uint_eq(n_lazy, n_read);
    ck_assert_int_eq(memcmp(d_lazy, d_read, n_read), 0);
    unlink(tmp);
    talloc_free(ctx);
}
END_TEST

/* A file truncated after a lazy open: what open read (the metadata) reads
 * as before; the first read of anything else fails with MDT_EIO naming the
 * path and the file offset, and so does every later one, never SIGBUS nor
 * zeros taken for the file's bytes. */
START_TEST(lazy_file_truncated_after_open_gives_eio)
{
    void *ctx = talloc_new(NULL);
    char p[1024], tmp[1024], msg[512];
    mdt_image *img = NULL, *ref;
    walk_stats before, after;
    mdt_win32res *res;
    size_t n, len;
    uint32_t sum;
    uint8_t byte;
    static const off_t cuts[] = {0, 0x3c00 + LAZY_PAD / 2};
    ref = open_rel(ctx, "data/Everything.dll");
    walk_image(ref, &before);
    for (size_t k = 0; k < sizeof cuts / sizeof *cuts; k++) {
        ck_assert_int_eq(
            padded_copy(src_path(p, sizeof p, "data/Everything.dll"), tmp, sizeof tmp, LAZY_PAD),
            0);
        ck_assert_int_eq(mdt_image_open_file(ctx, &img, tmp, MDT_OPEN_LAZY), 0);
        ck_assert_int_eq(truncate(tmp, cuts[k]), 0);
        walk_image(img, &after);
        ck_assert_uint_eq(after.cells_ok, before.cells_ok);
        ck_assert_uint_eq(after.errors, 0);
        ck_assert_int_eq(mdt_win32res_list(ctx, &res, &n, img), MDT_EIO);
        mdt_error_message(msg, sizeof msg);
        ck_assert_msg(strstr(msg, tmp) && strstr(msg, "file 0x") && strstr(msg, "changed"), "%s",
                      msg);
        /* Still: the bytes were never read. */
        ck_assert_int_eq(
            mdt_image_read_rva(&byte, 1, img, mdt_image_section(img, 2)->virtual_address), MDT_EIO);
        ck_assert_int_eq(mdt_pe_checksum(&sum, img), MDT_EIO);
        mdt_image_bytes(&len, img);
        ck_assert_uint_lt(len, 0x3c00 + LAZY_PAD);
        ck_assert_uint_ge(len, 0x3c00); /* the first chunk: headers, IL, metadata */
        unlink(tmp);
    }
    talloc_free(ctx);
}
END_TEST

/* A file that grew, or was rewritten at the same size, since the open is
 * another file: its new bytes are not taken. */
START_TEST(lazy_file_changed_after_open_gives_eio)
{
    void *ctx = talloc_new(NULL);
    char p[1024], tmp[1024];
    mdt_image *img = NULL;
    mdt_win32res *res;
    size_t n;
    ck_assert_int_eq(
        padded_copy(src_path(p, sizeof p, "data/Everything.dll"), tmp, sizeof tmp, LAZY_PAD), 0);
    ck_assert_int_eq(mdt_image_open_file(ctx, &img, tmp, MDT_OPEN_LAZY), 0);
    struct stat st;
    ck_assert_int_eq(stat(tmp, &st), 0);
    ck_assert_int_eq(truncate(tmp, st.st_size + 4096), 0);
    ck_assert_int_eq(mdt_win32res_list(ctx, &res, &n, img), MDT_EIO);
    ck_assert_int_eq(truncate(tmp, st.st_size), 0); /* back to the size, not the same file */
    ck_assert_int_eq(mdt_win32res_list(ctx, &res, &n, img), MDT_EIO);
    unlink(tmp);
    talloc_free(ctx);
}
END_TEST

/* Past the descriptors the library keeps (64), an image read on demand
 * reopens its path for each read: it reads as the others while the path
 * names the same file, and gives MDT_EIO once it names another (a copy
 * renamed over it), even with the same bytes. */
START_TEST(lazy_images_past_the_kept_descriptors_reopen_their_path)
{
    void *ctx = talloc_new(NULL);
    char p[1024], tmp[1024], other[1024], msg[512];
    enum { N = 80 };
    mdt_image *imgs[N];
    beyond want, got;
    ck_assert_int_eq(
        padded_copy(src_path(p, sizeof p, "data/Everything.dll"), tmp, sizeof tmp, LAZY_PAD), 0);
    for (int i = 0; i < N; i++)
        ck_assert_int_eq(mdt_image_open_file(ctx, &imgs[i], tmp, MDT_OPEN_LAZY), 0);
    ck_assert_int_eq(read_beyond(&want, imgs[0], ctx), 0);
    ck_assert_msg(read_beyond(&got, imgs[N - 2], ctx) == 0, "%s",
                  mdt_error_message(msg, sizeof msg));
    ck_assert_mem_eq(&got, &want, sizeof want);
    ck_assert_int_eq(
        padded_copy(src_path(p, sizeof p, "data/Everything.dll"), other, sizeof other, LAZY_PAD),
        0);
    ck_assert_int_eq(rename(other, tmp), 0);
    mdt_win32res *res;
    size_t n;
    ck_assert_int_eq(mdt_win32res_list(ctx, &res, &n, imgs[N - 1]), MDT_EIO);
    mdt_error_message(msg, sizeof msg);
    ck_assert_msg(strstr(msg, tmp) && strstr(msg, "no longer names"), "%s", msg);
    /* An image that kept its descriptor still reads the file it opened. */
    ck_assert_int_eq(read_beyond(&got, imgs[1], ctx), 0);
    ck_assert_mem_eq(&got, &want, sizeof want);
    unlink(tmp);
    talloc_free(ctx);
}
END_TEST

START_TEST(lazy_flag_combinations)
{
    char p[1024];
    mdt_image *img = (mdt_image *)p;
    uint8_t b[4] = {'B', 'S', 'J', 'B'};
    src_path(p, sizeof p, "data/Everything.dll");
    ck_assert_int_eq(mdt_image_open_file(NULL, &img, p, MDT_OPEN_LAZY | MDT_OPEN_MAP), MDT_EINVAL);
    ck_assert_ptr_null(img);
    ck_assert_int_eq(mdt_image_open_buffer(NULL, &img, "b", b, 4, MDT_OPEN_LAZY), MDT_EINVAL);
    ck_assert_int_eq(mdt_image_open_mapped(NULL, &img, "b", b, 4, MDT_OPEN_LAZY), MDT_EINVAL);
    /* A small file is read whole: truncating it changes nothing. */
    char tmp[1024];
    copy_to_temp("data/Everything.dll", tmp, sizeof tmp);
    ck_assert_int_eq(mdt_image_open_file(NULL, &img, tmp, MDT_OPEN_LAZY | MDT_OPEN_COPY), 0);
    ck_assert_int_eq(truncate(tmp, 0), 0);
    uint32_t sum;
    ck_assert_int_eq(mdt_pe_checksum(&sum, img), 0);
    mdt_image_close(img);
    unlink(tmp);
}
END_TEST

START_TEST(mixed_mode_native_entry_point)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_rel(ctx, "data/corpus/dnfile/EmptyClass_x86.dll");
    const mdt_pe_info *pe = mdt_image_pe_info(img);
    ck_assert(pe->cli_flags & MDT_COMIMAGE_NATIVE_ENTRYPOINT);
    ck_assert_uint_eq(pe->entry_point, 0x1557);
    img = open_rel(ctx, "data/corpus/asmresolver/HelloWorld.ReadyToRun.dll");
    ck_assert_uint_ne(mdt_image_pe_info(img)->managed_native_header.rva, 0);
    talloc_free(ctx);
}
END_TEST

/* The column API returns exactly what the row API returns, cell by cell. */
static void columns_match_rows(const mdt_image *img)
{
    enum { RUN = 97 }; /* odd, so runs end mid-table */
    uint32_t raw[RUN], len[RUN];
    const char *str[RUN];
    const uint8_t *ptr[RUN];
    for (unsigned t = 0; t < MDT_TABLE_MAX; t++) {
        const mdt_table_schema *s = mdt_table_schema_get(t);
        uint32_t n = mdt_table_rows(img, t);
        if (!s)
            continue;
        for (unsigned c = 0; c < s->ncols; c++)
            for (uint32_t first = 1; first <= n; first += RUN) {
                uint32_t k = n - first + 1 < RUN ? n - first + 1 : RUN;
                ck_assert_int_eq(mdt_column_raw(raw, img, t, c, first, k), 0);
                int kind = s->cols[c].kind;
                if (kind == MDT_COLK_STR)
                    ck_assert_int_eq(mdt_column_strings(str, len, img, t, c, first, k), 0);
                if (kind == MDT_COLK_BLOB)
                    ck_assert_int_eq(mdt_column_blobs(ptr, len, img, t, c, first, k), 0);
                if (kind == MDT_COLK_GUID)
                    ck_assert_int_eq(mdt_column_guids(ptr, img, t, c, first, k), 0);
                for (uint32_t i = 0; i < k; i++) {
                    mdt_row r;
                    ck_assert_int_eq(mdt_row_get(&r, img, t, first + i), 0);
                    ck_assert_uint_eq(raw[i], mdt_row_raw(&r, c));
                    if (kind == MDT_COLK_STR) {
                        const char *v;
                        size_t l;
                        ck_assert_int_eq(mdt_row_string(&v, &l, &r, c), 0);
                        ck_assert_ptr_eq(v, str[i]);
                        ck_assert_uint_eq(l, len[i]);
                    } else if (kind == MDT_COLK_BLOB) {
                        const uint8_t *v;
                        uint32_t l;
                        ck_assert_int_eq(mdt_row_blob(&v, &l, &r, c), 0);
                        ck_assert_ptr_eq(v, ptr[i]);
                        ck_assert_uint_eq(l, len[i]);
                    } else if (kind == MDT_COLK_GUID) {
                        const uint8_t *v;
                        ck_assert_int_eq(mdt_row_guid(&v, &r, c), 0);
                        ck_assert_ptr_eq(v, ptr[i]);
                    }
                }
            }
    }
}

START_TEST(column_reads_equal_row_reads)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img;
    ck_assert_int_eq(mdt_image_open_file(ctx, &img, MONO_45_DIR "/System.dll", 0), 0);
    columns_match_rows(img);
    columns_match_rows(open_rel(ctx, "data/corpus/asmresolver/HelloWorld.JTDStream.exe"));
    columns_match_rows(open_rel(ctx, "data/corpus/asmresolver/LargeIndicesPdb.pdb"));
    columns_match_rows(open_rel(ctx, "data/corpus/asmresolver/ForwarderLibrary.dll"));
    talloc_free(ctx);
}
END_TEST

START_TEST(column_reads_check_range_and_kind)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_rel(ctx, "data/corpus/asmresolver/HelloWorld.exe");
    uint32_t raw[8], len[8];
    const char *str[8];
    uint32_t n = mdt_table_rows(img, MDT_TABLE_TypeRef);
    ck_assert_int_eq(mdt_column_raw(raw, img, MDT_TABLE_TypeRef, 0, 0, 1), MDT_ENOTFOUND);
    ck_assert_int_eq(mdt_column_raw(raw, img, MDT_TABLE_TypeRef, 0, n, 2), MDT_ENOTFOUND);
    ck_assert_int_eq(mdt_column_raw(raw, img, MDT_TABLE_TypeRef, 9, 1, 1), MDT_EINVAL);
    ck_assert_int_eq(
        mdt_column_strings(str, len, img, MDT_TABLE_TypeRef, MDT_COL_TypeRef_ResolutionScope, 1, 1),
        MDT_EINVAL);
    ck_assert_int_eq(mdt_column_raw(raw, img, MDT_TABLE_TypeRef, 0, n, 1), 0);
    ck_assert_int_eq(mdt_column_raw(raw, img, MDT_TABLE_TypeRef, 0, 1, 0), 0);
    talloc_free(ctx);
}
END_TEST

/* Walk each heap with mdt_heap_next from its start: every step lands on an
 * entry that reads, and the walk ends exactly at the heap's end. */
static void walk_to_end(const mdt_image *img, int heap, uint32_t *entries)
{
    uint32_t size = mdt_heap_size(img, heap), end = heap == MDT_HEAP_GUID ? size / 16 + 1 : size;
    uint32_t i = heap == MDT_HEAP_STRINGS ? 0 : 1, n = 0;
    while (i < end) {
        uint32_t next = 0;
        ck_assert_int_eq(mdt_heap_next(&next, img, heap, i), 0);
        ck_assert_uint_gt(next, i);
        i = next;
        n++;
    }
    ck_assert_uint_eq(i, end);
    *entries = n;
}

START_TEST(heap_walks_end_at_heap_ends)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_rel(ctx, "data/corpus/asmresolver/HelloWorld.exe");
    uint32_t n[4];
    for (int heap = MDT_HEAP_STRINGS; heap <= MDT_HEAP_GUID; heap++)
        walk_to_end(img, heap, &n[heap]);
    ck_assert_uint_eq(n[MDT_HEAP_GUID], 1); /* the MVID */
    ck_assert_uint_ge(n[MDT_HEAP_US], 1);   /* "Hello World!" (and padding) */
    ck_assert_uint_gt(n[MDT_HEAP_BLOB], 3);
    uint32_t next;
    ck_assert_int_eq(mdt_heap_next(&next, img, 7, 0), MDT_EINVAL);
    ck_assert_int_eq(mdt_heap_next(&next, img, MDT_HEAP_US, mdt_heap_size(img, MDT_HEAP_US)),
                     MDT_EBADIMAGE);
    ck_assert_int_eq(mdt_heap_next(&next, img, MDT_HEAP_GUID, 2), MDT_EBADIMAGE);
    talloc_free(ctx);
}
END_TEST

/* A length prefix longer than it needs to be (two bytes for a length below
 * 0x80) reads, and the walk steps over both bytes: deriving the step from
 * the length, as callers used to, would land one byte short. */
START_TEST(heap_walk_steps_over_long_length_prefix)
{
    void *ctx = talloc_new(NULL);
    char p[1024];
    FILE *f = fopen(src_path(p, sizeof p, "data/corpus/asmresolver/HelloWorld.exe"), "rb");
    ck_assert_ptr_nonnull(f);
    static uint8_t buf[1 << 16];
    size_t len = fread(buf, 1, sizeof buf, f);
    fclose(f);
    ck_assert_uint_lt(len, sizeof buf);
    mdt_image *img = NULL;
    ck_assert_int_eq(mdt_image_open_buffer(ctx, &img, "HelloWorld.exe", buf, len, 0), 0);
    const mdt_md_info *md = mdt_image_md_info(img);
    const mdt_stream_info *us = NULL;
    for (size_t i = 0; i < md->nstreams; i++)
        if (strcmp(mdt_image_stream(img, i)->name, "#US") == 0)
            us = mdt_image_stream(img, i);
    ck_assert_ptr_nonnull(us);
    uint8_t *h = buf + md->file_offset + us->offset;
    /* #US: 0, then one string: length byte, 24 bytes of "Hello World!",
     * flag; then at least one byte of zero padding to shift into. */
    uint32_t n0 = h[1];
    ck_assert_uint_eq(n0, 25);
    ck_assert_uint_lt(1 + 1 + n0, us->size);
    ck_assert_uint_eq(h[us->size - 1], 0);
    static uint8_t copy[1 << 16];
    memcpy(copy, buf, len);
    uint8_t *c = copy + md->file_offset + us->offset;
    memmove(c + 3, h + 2, us->size - 3);
    c[1] = 0x80; /* the same length, 25, in the two-byte form */
    c[2] = (uint8_t)n0;
    mdt_image *img2 = NULL;
    ck_assert_int_eq(mdt_image_open_buffer(ctx, &img2, "long-prefix", copy, len, 0), 0);
    us_ascii(img2, 1, "Hello World!");
    uint32_t next = 0, entries;
    ck_assert_int_eq(mdt_heap_next(&next, img2, MDT_HEAP_US, 1), 0);
    ck_assert_uint_eq(next, 1 + 2 + n0);
    walk_to_end(img2, MDT_HEAP_US, &entries);
    talloc_free(ctx);
}
END_TEST

MDT_TESTS_NEED_MONO

Suite *suite(void);
Suite *suite(void)
{
    Suite *s = suite_create("image");
    TCase *tc = tcase_create("image");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, mscorlib_identity_and_token);
    tcase_add_test(tc, lazy_open_reads_like_the_default);
    tcase_add_test(tc, lazy_file_truncated_after_open_gives_eio);
    tcase_add_test(tc, lazy_file_changed_after_open_gives_eio);
    tcase_add_test(tc, lazy_flag_combinations);
    tcase_add_test(tc, lazy_images_past_the_kept_descriptors_reopen_their_path);
    tcase_add_test(tc, last_stream_wins_in_compressed_metadata);
    tcase_add_test(tc, first_stream_wins_in_enc_metadata);
    tcase_add_test(tc, double_guid_stream_mvid);
    tcase_add_test(tc, guid_text_equals_printf);
    tcase_add_test(tc, double_user_strings);
    tcase_add_test(tc, heap_walks_end_at_heap_ends);
    tcase_add_test(tc, heap_walk_steps_over_long_length_prefix);
    tcase_add_test(tc, schema_stream_switches_to_first_wins);
    tcase_add_test(tc, lowercase_heaps);
    tcase_add_test(tc, jtd_makes_every_index_wide);
    tcase_add_test(tc, extra_data_is_skipped);
    tcase_add_test(tc, unsorted_table_found_by_scan);
    tcase_add_test(tc, sorted_table_binary_search_matches_scan);
    tcase_add_test(tc, blob_index_zero_without_blob_heap);
    tcase_add_test(tc, native_pe_is_not_dotnet);
    tcase_add_test(tc, a_fifo_is_refused_not_waited_for);
    tcase_add_test(tc, a_large_file_that_is_no_image_is_not_read_whole);
    tcase_add_test(tc, a_large_native_pe_is_not_read_whole);
    tcase_add_test(tc, no_us_heap_gives_clear_error);
    tcase_add_test(tc, portable_pdb_large_indices);
    tcase_add_test(tc, unaligned_metadata_reads);
    tcase_add_test(tc, virtual_section_bytes_read_as_zero);
    tcase_add_test(tc, mapped_dump_reads_like_the_file);
    tcase_add_test(tc, truncated_file_reads_as_opened);
    tcase_add_test(tc, truncated_mapped_file_kills_the_reader);
    tcase_add_test(tc, open_flags_are_checked);
    tcase_add_test(tc, mixed_mode_native_entry_point);
    tcase_add_test(tc, column_reads_equal_row_reads);
    tcase_add_test(tc, column_reads_check_range_and_kind);
    tcase_add_test(tc, errmsg_is_cut_to_any_buffer);
    suite_add_tcase(s, tc);
    return s;
}
