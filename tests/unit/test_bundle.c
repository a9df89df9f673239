/* Single-file bundles (<mdtools/bundle.h>): bundles of versions 1, 2 and 6
 * built here in memory as .NET's bundler lays them out (a host holding the
 * signature and the header's offset, the files, the header, the manifest),
 * with a PE fixture stored as is and deflated, must list their files and
 * open each assembly as the file it was made from; damaged ones (cut
 * anywhere, offsets past the end, a string too long, a stream that does
 * not inflate) must fail with a located error and never read outside. A
 * real bundle written by `dotnet publish` is read by
 * tests/profiler/singlefile.sh. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <talloc.h>
#include <unistd.h>
#include <zlib.h>

#include <mdtools/mdtools.h>

#include "paths.h"

#define SOURCE_PE "data/corpus/asmresolver/HelloWorld.exe"

static const uint8_t sig[32] = {0x8b, 0x12, 0x02, 0xb9, 0x6a, 0x61, 0x20, 0x38, 0x72, 0x7b, 0x93,
                                0x02, 0x14, 0xd7, 0xa0, 0x32, 0x13, 0xf5, 0xb9, 0xe6, 0xef, 0xae,
                                0x33, 0x18, 0xee, 0x3b, 0x2d, 0xce, 0x24, 0xb3, 0x6a, 0xae};

struct buf {
    uint8_t *p;
    size_t n;
};

static void put(void *ctx, struct buf *b, const void *data, size_t n)
{
    b->p = talloc_realloc(ctx, b->p, uint8_t, b->n + n + 1);
    ck_assert_ptr_nonnull(b->p);
    if (n)
        memcpy(b->p + b->n, data, n);
    b->n += n;
}
static void put_le(void *ctx, struct buf *b, uint64_t v, int bytes)
{
    uint8_t t[8];
    for (int i = 0; i < bytes; i++)
        t[i] = (uint8_t)(v >> (8 * i));
    put(ctx, b, t, (size_t)bytes);
}
/* BinaryWriter's string: the length in 7-bit groups, then the bytes. */
static void put_str(void *ctx, struct buf *b, const char *s)
{
    size_t n = strlen(s);
    do {
        uint8_t c = (uint8_t)(n & 0x7f);
        n >>= 7;
        if (n)
            c |= 0x80;
        put(ctx, b, &c, 1);
    } while (n);
    put(ctx, b, s, strlen(s));
}

static uint8_t *read_fixture(void *ctx, const char *rel, size_t *len)
{
    char path[4096];
    src_path(path, sizeof path, rel);
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "%s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *p = talloc_size(ctx, (size_t)n);
    ck_assert_uint_eq(fread(p, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return p;
}

static uint8_t *deflate_raw(void *ctx, const uint8_t *in, size_t n, size_t *outn)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    ck_assert_int_eq(deflateInit2(&z, 9, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
    size_t cap = deflateBound(&z, (uLong)n);
    uint8_t *out = talloc_size(ctx, cap);
    z.next_in = (Bytef *)in;
    z.avail_in = (uInt)n;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    ck_assert_int_eq(deflate(&z, Z_FINISH), Z_STREAM_END);
    *outn = z.total_out;
    deflateEnd(&z);
    return out;
}

/* A bundle of `major` holding the PE stored as is ("app/App.dll"), deflated
 * (version 6: "Lib.dll") and a JSON file; *header gets the header's
 * offset, *manifest the first entry's. */
static struct buf make_bundle(void *ctx, unsigned major, size_t *header, size_t *manifest)
{
    size_t pelen, zlen = 0;
    uint8_t *pe = read_fixture(ctx, SOURCE_PE, &pelen);
    uint8_t *z = deflate_raw(ctx, pe, pelen, &zlen);
    static const char json[] = "{\"runtimeOptions\":{}}";
    struct buf b = {NULL, 0};
    /* the host: an ELF's magic and bytes, the header's offset (patched
     * below), the signature */
    put(ctx, &b,
        "\x7f"
        "ELF",
        4);
    for (int i = 4; i < 100; i++)
        put_le(ctx, &b, (uint64_t)(i * 37 + 11), 1);
    size_t slot = b.n;
    put_le(ctx, &b, 0, 8);
    put(ctx, &b, sig, sizeof sig);
    put(ctx, &b, "host code", 9);
    size_t at_pe = b.n;
    put(ctx, &b, pe, pelen);
    size_t at_z = b.n;
    if (major >= 6)
        put(ctx, &b, z, zlen);
    size_t at_json = b.n;
    put(ctx, &b, json, sizeof json - 1);
    *header = b.n;
    unsigned files = major >= 6 ? 3 : 2;
    put_le(ctx, &b, major, 4);
    put_le(ctx, &b, 0, 4);
    put_le(ctx, &b, files, 4);
    put_str(ctx, &b, "AbCdEf123456");
    if (major >= 2) {
        put_le(ctx, &b, 0, 8);
        put_le(ctx, &b, 0, 8);
        put_le(ctx, &b, at_json, 8);
        put_le(ctx, &b, sizeof json - 1, 8);
        put_le(ctx, &b, 0, 8);
    }
    *manifest = b.n;
    put_le(ctx, &b, at_pe, 8);
    put_le(ctx, &b, pelen, 8);
    if (major >= 6)
        put_le(ctx, &b, 0, 8);
    put_le(ctx, &b, 1, 1);
    put_str(ctx, &b, "app/App.dll");
    if (major >= 6) {
        put_le(ctx, &b, at_z, 8);
        put_le(ctx, &b, pelen, 8);
        put_le(ctx, &b, zlen, 8);
        put_le(ctx, &b, 1, 1);
        put_str(ctx, &b, "Lib.dll");
    }
    put_le(ctx, &b, at_json, 8);
    put_le(ctx, &b, sizeof json - 1, 8);
    if (major >= 6)
        put_le(ctx, &b, 0, 8);
    put_le(ctx, &b, 4, 1);
    put_str(ctx, &b, "App.runtimeconfig.json");
    for (int i = 0; i < 8; i++)
        b.p[slot + (size_t)i] = (uint8_t)(*header >> (8 * i));
    return b;
}

static void mvid_of_fixture(uint8_t mvid[16])
{
    mdt_image *img;
    char path[4096];
    src_path(path, sizeof path, SOURCE_PE);
    ck_assert_int_eq(mdt_image_open_file(NULL, &img, path, 0), 0);
    ck_assert_int_eq(mdt_image_mvid(mvid, img), 0);
    talloc_free(img);
}

static const char *message(void)
{
    static char m[1024];
    return mdt_error_message(m, sizeof m);
}

START_TEST(test_versions_list_and_open)
{
    static const unsigned majors[] = {1, 2, 6};
    uint8_t want[16], got[16];
    mvid_of_fixture(want);
    for (size_t v = 0; v < 3; v++) {
        void *ctx = talloc_new(NULL);
        size_t header, manifest;
        struct buf b = make_bundle(ctx, majors[v], &header, &manifest);
        mdt_bundle *bu;
        ck_assert_msg(mdt_bundle_open_buffer(ctx, &bu, "app", b.p, b.n, 0) == 0, "v%u: %s",
                      majors[v], message());
        mdt_bundle_info in;
        ck_assert_int_eq(mdt_bundle_info_get(&in, bu), 0);
        ck_assert_uint_eq(in.major, majors[v]);
        ck_assert_str_eq(in.id, "AbCdEf123456");
        ck_assert_uint_eq(in.header_offset, header);
        ck_assert_uint_eq(in.files, majors[v] >= 6 ? 3 : 2);
        mdt_bundle_entry e;
        ck_assert_int_eq(mdt_bundle_entry_get(&e, bu, 0), 0);
        ck_assert_str_eq(e.path, "app/App.dll");
        ck_assert_uint_eq(e.type, MDT_BUNDLE_ASSEMBLY);
        ck_assert_uint_eq(e.compressed_size, 0);
        ck_assert_int_eq(mdt_bundle_entry_get(&e, bu, in.files - 1), 0);
        ck_assert_str_eq(e.path, "App.runtimeconfig.json");
        ck_assert_uint_eq(e.type, MDT_BUNDLE_RUNTIMECONFIG_JSON);
        ck_assert_int_eq(mdt_bundle_entry_get(&e, bu, in.files), MDT_ENOTFOUND);
        for (size_t i = 0; i + 1 < in.files; i++) {
            mdt_image *img;
            ck_assert_msg(mdt_bundle_open_image(ctx, &img, bu, i, 0) == 0, "v%u file %zu: %s",
                          majors[v], i, message());
            ck_assert_int_eq(mdt_image_mvid(got, img), 0);
            ck_assert_mem_eq(got, want, 16);
            ck_assert_ptr_nonnull(
                strstr(mdt_image_name(img), i ? "app!Lib.dll" : "app!app/App.dll"));
            talloc_free(img);
        }
        /* the JSON is no image */
        mdt_image *img;
        ck_assert_int_eq(mdt_bundle_open_image(ctx, &img, bu, in.files - 1, 0), MDT_ENOTDOTNET);
        talloc_free(ctx);
    }
}
END_TEST

/* A compressed file's image outlives the bundle (it owns its bytes); a
 * stored one is copied with MDT_OPEN_COPY; bytes of a file come inflated. */
START_TEST(test_ownership)
{
    void *ctx = talloc_new(NULL);
    size_t header, manifest;
    struct buf b = make_bundle(ctx, 6, &header, &manifest);
    mdt_bundle *bu;
    mdt_image *zimg, *cimg;
    uint8_t want[16], got[16];
    mvid_of_fixture(want);
    ck_assert_int_eq(mdt_bundle_open_buffer(NULL, &bu, "app", b.p, b.n, MDT_OPEN_COPY), 0);
    ck_assert_int_eq(mdt_bundle_open_image(ctx, &zimg, bu, 1, 0), 0);
    ck_assert_int_eq(mdt_bundle_open_image(ctx, &cimg, bu, 0, MDT_OPEN_COPY), 0);
    const uint8_t *data;
    size_t len;
    void *owned;
    ck_assert_int_eq(mdt_bundle_entry_bytes(ctx, &data, &len, &owned, bu, 1), 0);
    ck_assert_ptr_nonnull(owned);
    size_t pelen;
    uint8_t *pe = read_fixture(ctx, SOURCE_PE, &pelen);
    ck_assert_uint_eq(len, pelen);
    ck_assert_mem_eq(data, pe, pelen);
    ck_assert_int_eq(mdt_bundle_entry_bytes(ctx, &data, &len, &owned, bu, 0), 0);
    ck_assert_ptr_null(owned);
    talloc_free(bu);
    memset(b.p, 0xee, b.n); /* neither image reads the caller's bytes */
    ck_assert_int_eq(mdt_image_mvid(got, zimg), 0);
    ck_assert_mem_eq(got, want, 16);
    ck_assert_int_eq(mdt_image_mvid(got, cimg), 0);
    ck_assert_mem_eq(got, want, 16);
    talloc_free(ctx);
}
END_TEST

/* mdt_bundle_open_file reads the file on demand: a file cut after the open
 * gives MDT_EIO for what is gone; a file that is no bundle, or a host
 * without one, is MDT_ENOTDOTNET. */
START_TEST(test_file_and_not_bundles)
{
    void *ctx = talloc_new(NULL);
    size_t header, manifest;
    struct buf b = make_bundle(ctx, 6, &header, &manifest);
    char path[4096];
    snprintf(path, sizeof path, "%s/mdt-bundle-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, b.p, b.n), (ssize_t)b.n);
    close(fd);
    mdt_bundle *bu;
    ck_assert_msg(mdt_bundle_open_file(ctx, &bu, path) == 0, "%s", message());
    mdt_image *img;
    uint8_t want[16], got[16];
    mvid_of_fixture(want);
    for (size_t i = 0; i < 2; i++) {
        ck_assert_int_eq(mdt_bundle_open_image(ctx, &img, bu, i, 0), 0);
        ck_assert_int_eq(mdt_image_mvid(got, img), 0);
        ck_assert_mem_eq(got, want, 16);
        talloc_free(img);
    }
    ck_assert_int_eq(truncate(path, (off_t)header - 10), 0); /* the JSON and the manifest go */
    ck_assert_int_eq(mdt_bundle_open_image(ctx, &img, bu, 0, 0), 0); /* still there */
    talloc_free(img);
    const uint8_t *data;
    size_t len;
    void *owned;
    ck_assert_int_eq(mdt_bundle_entry_bytes(ctx, &data, &len, &owned, bu, 2), MDT_EIO);
    ck_assert_ptr_nonnull(strstr(message(), "changed since it was opened"));
    talloc_free(bu);
    ck_assert_int_eq(mdt_bundle_open_file(ctx, &bu, path), MDT_ETRUNC); /* header past the end */
    unlink(path);
    char fixture[4096];
    src_path(fixture, sizeof fixture, SOURCE_PE);
    ck_assert_int_eq(mdt_bundle_open_file(ctx, &bu, fixture), MDT_ENOTDOTNET);
    ck_assert_ptr_nonnull(strstr(message(), "no bundle signature"));
    ck_assert_int_eq(mdt_bundle_open_file(ctx, &bu, "/nonexistent/app"), MDT_EIO);
    ck_assert_int_eq(mdt_bundle_open_file(ctx, &bu, "/dev/null"), MDT_EIO);
    /* not an executable: said from its first bytes */
    b.p[0] = 'X';
    ck_assert_int_eq(mdt_bundle_open_buffer(ctx, &bu, "app", b.p, b.n, 0), MDT_ENOTDOTNET);
    ck_assert_ptr_nonnull(strstr(message(), "not an executable"));
    b.p[0] = 0x7f;
    /* a host that carries no bundle: offset 0 before the signature */
    memset(b.p + 100, 0, 8);
    ck_assert_int_eq(mdt_bundle_open_buffer(ctx, &bu, "app", b.p, b.n, 0), MDT_ENOTDOTNET);
    ck_assert_ptr_nonnull(strstr(message(), "carries no bundle"));
    ck_assert_int_eq(mdt_bundle_open_buffer(ctx, &bu, "app", b.p, 0, 0), MDT_ENOTDOTNET);
    ck_assert_int_eq(mdt_bundle_open_buffer(ctx, NULL, "app", b.p, b.n, 0), MDT_EINVAL);
    ck_assert_int_eq(mdt_bundle_open_buffer(ctx, &bu, "app", b.p, b.n, 0x80), MDT_EINVAL);
    talloc_free(ctx);
}
END_TEST

/* Cut at every byte from the header on: an error, never a read outside
 * (ASan watches the copy, which ends where the cut is). */
START_TEST(test_cut_anywhere)
{
    void *ctx = talloc_new(NULL);
    size_t header, manifest;
    struct buf b = make_bundle(ctx, 6, &header, &manifest);
    for (size_t n = header; n < b.n; n++) {
        uint8_t *cut = malloc(n);
        memcpy(cut, b.p, n);
        mdt_bundle *bu;
        int r = mdt_bundle_open_buffer(ctx, &bu, "cut", cut, n, 0);
        ck_assert_msg(r == MDT_ETRUNC, "cut at %zu of %zu: %d %s", n, b.n, r, message());
        free(cut);
    }
    talloc_free(ctx);
}
END_TEST

static void set_le(uint8_t *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* Damaged headers and manifests: each refused, located, saying what. */
START_TEST(test_damaged)
{
    void *ctx = talloc_new(NULL);
    size_t header, manifest;
    struct buf good = make_bundle(ctx, 6, &header, &manifest);
    struct {
        const char *what;
        size_t at;
        uint64_t value;
        int bytes;
        int code;
        const char *says;
    } cases[] = {
        {"header offset past the end", 100, 0xffffffffull, 8, MDT_ETRUNC, "past the end"},
        {"header offset inside the host", 100, 20, 8, MDT_ETRUNC, "inside the host"},
        {"major version 3", 0, 3, 4, MDT_EUNSUPPORTED, "bundle version 3.0"},
        {"a count no manifest holds", 8, 1000, 4, MDT_ETRUNC, "1000 files"},
        {"a count past the limit", 8, 0x7fffffff, 4, MDT_EBADIMAGE, "files"},
        {"a file past the end", 0, 0x7fffffffffull, 8, MDT_ETRUNC, "run past the end"},
        {"a negative size", 8, 0xffffffffffffffffull, 8, MDT_EBADIMAGE, "negative"},
        {"a compressed size past the end", 16, 0x10000000ull, 8, MDT_ETRUNC, "run past"},
        {"a path 5000 bytes long", 25, 0x2788, 2, MDT_EBADIMAGE, "5000 bytes"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        uint8_t *p = talloc_memdup(ctx, good.p, good.n);
        size_t base = k < 2 ? 0 : k < 5 ? header : manifest;
        set_le(p + base + cases[k].at, cases[k].value, cases[k].bytes);
        mdt_bundle *bu;
        int r = mdt_bundle_open_buffer(ctx, &bu, "bad", p, good.n, 0);
        const char *m = message();
        ck_assert_msg(r == cases[k].code && strstr(m, cases[k].says) && strstr(m, "bad"),
                      "%s: %d %s", cases[k].what, r, m);
    }
    /* a NUL in a path; a string length in six 7-bit groups */
    uint8_t *p = talloc_memdup(ctx, good.p, good.n);
    p[manifest + 26] = 0;
    mdt_bundle *bu;
    ck_assert_int_eq(mdt_bundle_open_buffer(ctx, &bu, "bad", p, good.n, 0), MDT_EBADIMAGE);
    ck_assert_ptr_nonnull(strstr(message(), "NUL"));
    p = talloc_memdup(ctx, good.p, good.n);
    memset(p + header + 12, 0xff, 5);
    ck_assert_int_eq(mdt_bundle_open_buffer(ctx, &bu, "bad", p, good.n, 0), MDT_EBADIMAGE);
    ck_assert_ptr_nonnull(strstr(message(), "more than 32 bits"));
    /* a deflated file damaged, or claiming more bytes than it inflates to */
    mdt_bundle_entry e;
    for (int twist = 0; twist < 3; twist++) {
        p = talloc_memdup(ctx, good.p, good.n);
        ck_assert_int_eq(mdt_bundle_open_buffer(ctx, &bu, "bad", p, good.n, 0), 0);
        ck_assert_int_eq(mdt_bundle_entry_get(&e, bu, 1), 0);
        talloc_free(bu);
        size_t ze = manifest + 8 + 8 + 8 + 1 + 1 + strlen("app/App.dll");
        if (twist == 0)
            memset(p + e.offset + e.compressed_size / 2, 0x5a, 64); /* garbage mid-stream */
        else
            set_le(p + ze + 8, e.size + (twist == 1 ? 1 : -1), 8); /* size one more, one less */
        ck_assert_int_eq(mdt_bundle_open_buffer(ctx, &bu, "bad", p, good.n, 0), 0);
        mdt_image *img;
        int r = mdt_bundle_open_image(ctx, &img, bu, 1, 0);
        ck_assert_msg(r == MDT_EBADIMAGE && strstr(message(), "Lib.dll"), "twist %d: %d %s", twist,
                      r, message());
        talloc_free(bu);
    }
    talloc_free(ctx);
}
END_TEST

Suite *suite(void);
Suite *suite(void)
{
    Suite *s = suite_create("bundle");
    TCase *t = tcase_create("bundle");
    tcase_add_test(t, test_versions_list_and_open);
    tcase_add_test(t, test_ownership);
    tcase_add_test(t, test_file_and_not_bundles);
    tcase_add_test(t, test_cut_anywhere);
    tcase_add_test(t, test_damaged);
    suite_add_tcase(s, t);
    return s;
}
