/* Webcil images (dotnet/runtime docs/design/mono/webcil.md): bare payloads of
 * versions 0 and 1 and the WebAssembly wrapper must read like the PE they
 * were made from; malformed ones must fail with a located error. Inputs are
 * built here in memory from a PE fixture, plus the checked-in fixtures of
 * data/webcil/ (made by data/tools/webcil-pack.py). */
#include <check.h>
#include <stdio.h>
#include <string.h>
#include <talloc.h>

#include <mdtools/mdtools.h>

#include "paths.h"

#define SOURCE_PE "data/corpus/asmresolver/HelloWorld.exe"

/* ------------------------------------------------------------ byte helpers */

static uint16_t get16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}
static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static void set16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static void set32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

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
static void put8(void *ctx, struct buf *b, uint8_t v)
{
    put(ctx, b, &v, 1);
}
/* ULEB128, padded with continuation bytes to `width` bytes if width > 0
 * (the wasm format allows such non-minimal encodings). */
static void put_uleb(void *ctx, struct buf *b, uint32_t v, int width)
{
    int i = 0;
    do {
        uint8_t byte = v & 0x7F;
        v >>= 7;
        i++;
        if (v || i < width)
            byte |= 0x80;
        put8(ctx, b, byte);
    } while (v || i < width);
}

static uint8_t *load(void *ctx, const char *rel, size_t *len)
{
    char p[1024];
    FILE *f = fopen(src_path(p, sizeof p, rel), "rb");
    ck_assert_msg(f != NULL, "cannot open %s", p);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *d = talloc_size(ctx, (size_t)n + 1);
    ck_assert_uint_eq(fread(d, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return d;
}

/* ------------------------------------------------------ PE -> Webcil bytes */

/* A Webcil payload of `major` made from PE bytes: the header, one 16-byte
 * entry per PE section, and the sections' raw bytes (packed for version 0,
 * at 16-byte aligned offsets for version 1). */
static uint8_t *make_webcil(void *ctx, const uint8_t *pe, size_t pe_len, unsigned major,
                            size_t *out_len)
{
    uint32_t lfanew = get32(pe + 0x3C);
    const uint8_t *coff = pe + lfanew + 4;
    uint16_t nsec = get16(coff + 2), opt_size = get16(coff + 16);
    const uint8_t *opt = coff + 20;
    const uint8_t *dirs = opt + (get16(opt) == 0x10B ? 96 : 112);
    const uint8_t *sec = opt + opt_size;
    size_t hsize = major ? 32 : 28;
    size_t pos = hsize + 16u * nsec;
    size_t placed[16];
    uint16_t reloc_index = 0;
    ck_assert_uint_le(nsec, 16);
    for (uint16_t i = 0; i < nsec; i++) {
        const uint8_t *s = sec + 40 * i;
        if (major)
            pos = (pos + 15) & ~(size_t)15;
        placed[i] = pos;
        pos += get32(s + 16);
        if (get32(dirs + 40) && get32(dirs + 40) >= get32(s + 12) &&
            get32(dirs + 40) - get32(s + 12) < get32(s + 8))
            reloc_index = (uint16_t)(i + 1);
    }
    uint8_t *w = talloc_zero_size(ctx, pos);
    memcpy(w, "WbIL", 4);
    set16(w + 4, (uint16_t)major);
    set16(w + 8, nsec);
    set16(w + 10, major ? reloc_index : 0);
    set32(w + 12, get32(dirs + 112)); /* CLI header: data directory 14 */
    set32(w + 16, get32(dirs + 116));
    set32(w + 20, get32(dirs + 48)); /* debug: data directory 6 */
    set32(w + 24, get32(dirs + 52));
    for (uint16_t i = 0; i < nsec; i++) {
        const uint8_t *s = sec + 40 * i;
        uint8_t *h = w + hsize + 16 * i;
        set32(h, get32(s + 8));
        set32(h + 4, get32(s + 12));
        set32(h + 8, get32(s + 16));
        set32(h + 12, (uint32_t)placed[i]);
        ck_assert_uint_le((uint64_t)get32(s + 20) + get32(s + 16), pe_len);
        memcpy(w + placed[i], pe + get32(s + 20), get32(s + 16));
    }
    *out_len = pos;
    return w;
}

/* The wrapper, as webcil.md lays it out around a payload. */
struct wasm_opts {
    bool v1_sizes;       /* segment 0 = payloadSize, tableSize */
    int leb_width;       /* pad every LEB128 to this many bytes (0: minimal) */
    bool active;         /* segment 1 as an active segment (i32.const 0) */
    unsigned nseg;       /* segments in the data section (2 unless testing) */
    bool no_data;        /* leave the data section out */
    uint32_t size_delta; /* added to payloadSize in segment 0 */
};

static uint8_t *make_wasm(void *ctx, const uint8_t *pl, size_t pl_len, const struct wasm_opts *o,
                          size_t *out_len, size_t *payload_off)
{
    for (int pad = 0; pad < 4; pad++) {
        struct buf m = {NULL, 0}, seg = {NULL, 0}, data = {NULL, 0};
        unsigned nseg = o->nseg ? o->nseg : 2;
        put(ctx, &m, "\0asm\1\0\0\0", 8);
        /* A custom section before, so the walk must skip something. */
        put8(ctx, &m, 0);
        put_uleb(ctx, &m, 8, o->leb_width);
        put(ctx, &m, "\3mdtpfx\0", 8);
        put8(ctx, &m, 12); /* data count */
        put_uleb(ctx, &m, 1, o->leb_width);
        put8(ctx, &m, (uint8_t)nseg);
        put_uleb(ctx, &seg, nseg, o->leb_width);
        uint8_t sizes[8] = {0};
        set32(sizes, (uint32_t)pl_len + o->size_delta);
        set32(sizes + 4, 1);
        size_t s0 = (o->v1_sizes ? 8 : 4) + (size_t)pad;
        put8(ctx, &seg, 1);
        put_uleb(ctx, &seg, (uint32_t)s0, o->leb_width);
        put(ctx, &seg, sizes, o->v1_sizes ? 8 : 4);
        put(ctx, &seg, "\0\0\0", (size_t)pad);
        size_t seg1_at = 0;
        if (nseg >= 2) {
            if (o->active)
                put(ctx, &seg, "\0\x41\0\x0b", 4); /* active, i32.const 0, end */
            else
                put8(ctx, &seg, 1);
            put_uleb(ctx, &seg, (uint32_t)pl_len, o->leb_width);
            seg1_at = seg.n;
            put(ctx, &seg, pl, pl_len);
        }
        put8(ctx, &data, 11);
        put_uleb(ctx, &data, (uint32_t)seg.n, o->leb_width);
        size_t off = m.n + data.n + seg1_at;
        if (!o->no_data) {
            put(ctx, &m, data.p, data.n);
            put(ctx, &m, seg.p, seg.n);
        }
        /* A custom section after, as the version 1 wrapper has. */
        put8(ctx, &m, 0);
        put_uleb(ctx, &m, 5, o->leb_width);
        put(ctx, &m, "\4name", 5);
        if (off % 4 == 0 || o->no_data || nseg < 2) {
            *out_len = m.n;
            *payload_off = off;
            return m.p;
        }
    }
    ck_abort_msg("cannot align the payload");
    return NULL;
}

/* --------------------------------------------------------------- checking */

static const char *str_col(const mdt_image *img, unsigned table, uint32_t rid, unsigned col)
{
    mdt_row r;
    const char *s = NULL;
    ck_assert_int_eq(mdt_row_get(&r, img, table, rid), 0);
    ck_assert_int_eq(mdt_row_string(&s, NULL, &r, col), 0);
    return s;
}

/* `w` reads like the PE `pe`: headers, sections, debug entries, tables. */
static void same_as_pe(const mdt_image *w, const mdt_image *pe)
{
    const mdt_pe_info *a = mdt_image_pe_info(w), *b = mdt_image_pe_info(pe);
    ck_assert_uint_eq(a->nsections, b->nsections);
    ck_assert_uint_eq(mdt_image_section_count(w), mdt_image_section_count(pe));
    for (size_t i = 0; i < mdt_image_section_count(w); i++) {
        const mdt_section *s = mdt_image_section(w, i), *t = mdt_image_section(pe, i);
        ck_assert_uint_eq(s->virtual_address, t->virtual_address);
        ck_assert_uint_eq(s->virtual_size, t->virtual_size);
        ck_assert_uint_eq(s->raw_size, t->raw_size);
    }
    ck_assert_uint_eq(a->cli_major, b->cli_major);
    ck_assert_uint_eq(a->cli_flags, b->cli_flags);
    ck_assert_uint_eq(a->entry_point, b->entry_point);
    ck_assert_uint_eq(a->metadata.rva, b->metadata.rva);
    ck_assert_uint_eq(a->metadata.size, b->metadata.size);
    ck_assert_uint_eq(a->debug_dir.rva, b->debug_dir.rva);
    ck_assert_uint_eq(a->ndebug, b->ndebug);
    for (size_t i = 0; i < a->ndebug; i++) {
        const mdt_debug_entry *d = mdt_image_debug_entry(w, i), *e = mdt_image_debug_entry(pe, i);
        ck_assert_uint_eq(d->type, e->type);
        ck_assert_int_eq(d->has_codeview, e->has_codeview);
        if (e->pdb_path)
            ck_assert_str_eq(d->pdb_path, e->pdb_path);
    }
    ck_assert_str_eq(mdt_image_md_info(w)->version, mdt_image_md_info(pe)->version);
    for (unsigned t = 0; t < MDT_TABLE_MAX; t++)
        ck_assert_uint_eq(mdt_table_rows(w, t), mdt_table_rows(pe, t));
    uint32_t n = mdt_table_rows(pe, MDT_TABLE_TypeDef);
    ck_assert_uint_gt(n, 1);
    for (uint32_t rid = 1; rid <= n; rid++) {
        ck_assert_str_eq(str_col(w, MDT_TABLE_TypeDef, rid, MDT_COL_TypeDef_TypeName),
                         str_col(pe, MDT_TABLE_TypeDef, rid, MDT_COL_TypeDef_TypeName));
        ck_assert_str_eq(str_col(w, MDT_TABLE_TypeDef, rid, MDT_COL_TypeDef_TypeNamespace),
                         str_col(pe, MDT_TABLE_TypeDef, rid, MDT_COL_TypeDef_TypeNamespace));
    }
    /* The metadata root sits where the RVA says, and reads the same. */
    const uint8_t *p, *q;
    ck_assert_int_eq(mdt_image_rva(&p, w, a->metadata.rva, 4), 0);
    ck_assert_int_eq(mdt_image_rva(&q, pe, b->metadata.rva, 4), 0);
    ck_assert_int_eq(memcmp(p, "BSJB", 4), 0);
    ck_assert_int_eq(memcmp(p, q, 4), 0);
}

static mdt_image *open_pe(void *ctx, const char *rel)
{
    size_t len;
    mdt_image *img = NULL;
    char msg[512];
    uint8_t *d = load(ctx, rel, &len);
    int e = mdt_image_open_buffer(ctx, &img, rel, d, len, 0);
    ck_assert_msg(e == 0, "open %s: %s", rel, mdt_error_message(msg, sizeof msg));
    return img;
}

static mdt_image *open_ok(void *ctx, const uint8_t *d, size_t len, const char *name)
{
    mdt_image *img = NULL;
    char msg[512];
    int e = mdt_image_open_buffer(ctx, &img, name, d, len, 0);
    ck_assert_msg(e == 0, "open %s: %s", name, mdt_error_message(msg, sizeof msg));
    return img;
}

/* Opening fails with `code` and a message containing `needle`. */
static void open_fails(const uint8_t *d, size_t len, int code, const char *needle)
{
    mdt_image *img = NULL;
    char msg[512];
    int e = mdt_image_open_buffer(NULL, &img, "bad", d, len, 0);
    mdt_error_message(msg, sizeof msg);
    ck_assert_msg(e == code, "expected %d (%s), got %d: %s", code, mdt_error_string(code), e, msg);
    ck_assert_ptr_null(img);
    ck_assert_msg(strstr(msg, needle) != NULL, "message \"%s\" lacks \"%s\"", msg, needle);
}

static bool has_warning(const mdt_image *img, const char *needle)
{
    for (size_t i = 0; i < mdt_image_warning_count(img); i++)
        if (strstr(mdt_image_warning(img, i), needle))
            return true;
    return false;
}

/* A payload from the source PE; the caller may damage it. */
static uint8_t *payload(void *ctx, unsigned major, size_t *len)
{
    size_t pe_len;
    uint8_t *pe = load(ctx, SOURCE_PE, &pe_len);
    return make_webcil(ctx, pe, pe_len, major, len);
}

/* ------------------------------------------------------------ good inputs */

START_TEST(v0_payload_reads_like_its_pe)
{
    void *ctx = talloc_new(NULL);
    size_t len;
    uint8_t *w = payload(ctx, 0, &len);
    mdt_image *pe = open_pe(ctx, SOURCE_PE);
    mdt_image *img = open_ok(ctx, w, len, "v0");
    ck_assert_int_eq(mdt_image_kind(img), MDT_KIND_WEBCIL);
    ck_assert_uint_gt(mdt_image_pe_info(pe)->ndebug, 0); /* the debug path is exercised */
    same_as_pe(img, pe);
    ck_assert_str_eq(mdt_image_section(img, 0)->name, "#1");
    ck_assert_uint_eq(mdt_image_warning_count(img), 0);
    /* Raw pointers are payload offsets: first section right after the table. */
    ck_assert_uint_eq(mdt_image_section(img, 0)->raw_pointer, 28 + 16 * 3);
    talloc_free(ctx);
}
END_TEST

START_TEST(v1_payload_reads_like_its_pe)
{
    void *ctx = talloc_new(NULL);
    size_t len;
    uint8_t *w = payload(ctx, 1, &len);
    mdt_image *pe = open_pe(ctx, SOURCE_PE);
    set32(w + 28, 0xDEADBEEF); /* TableBase: filled by the host, ignored here */
    mdt_image *img = open_ok(ctx, w, len, "v1");
    ck_assert_int_eq(mdt_image_kind(img), MDT_KIND_WEBCIL);
    same_as_pe(img, pe);
    ck_assert_uint_eq(mdt_image_section(img, 0)->raw_pointer, 32 + 16 * 3);
    /* Reserved0 names the base relocation section. */
    ck_assert_uint_eq(get16(w + 10), 3);
    ck_assert_str_eq(mdt_image_section(img, 2)->name, ".reloc");
    ck_assert_uint_eq(mdt_image_warning_count(img), 0);
    talloc_free(ctx);
}
END_TEST

START_TEST(wasm_wrapper_reads_like_its_pe)
{
    void *ctx = talloc_new(NULL);
    mdt_image *pe = open_pe(ctx, SOURCE_PE);
    for (unsigned major = 0; major <= 1; major++) {
        size_t len, mlen, off;
        uint8_t *w = payload(ctx, major, &len);
        struct wasm_opts o = {.v1_sizes = major == 1};
        uint8_t *m = make_wasm(ctx, w, len, &o, &mlen, &off);
        mdt_image *img = open_ok(ctx, m, mlen, "wrapped");
        uint64_t fo, po;
        ck_assert_int_eq(mdt_image_kind(img), MDT_KIND_WASM);
        same_as_pe(img, pe);
        /* RVAs map into the module at the payload's offset. */
        uint32_t md = mdt_image_pe_info(img)->metadata.rva;
        ck_assert_int_eq(mdt_image_rva_to_offset(&fo, img, md), 0);
        ck_assert_int_eq(mdt_image_rva_to_offset(&po, open_ok(ctx, w, len, "bare"), md), 0);
        ck_assert_uint_eq(fo, off + po);
        ck_assert_uint_eq(mdt_image_warning_count(img), 0);
    }
    talloc_free(ctx);
}
END_TEST

START_TEST(wasm_long_leb128_and_active_segment_accepted)
{
    void *ctx = talloc_new(NULL);
    mdt_image *pe = open_pe(ctx, SOURCE_PE);
    size_t len, mlen, off;
    uint8_t *w = payload(ctx, 1, &len);
    struct wasm_opts o = {.v1_sizes = true, .leb_width = 5, .active = true};
    uint8_t *m = make_wasm(ctx, w, len, &o, &mlen, &off);
    same_as_pe(open_ok(ctx, m, mlen, "padded"), pe);
    talloc_free(ctx);
}
END_TEST

START_TEST(odd_but_readable_payloads_warn)
{
    void *ctx = talloc_new(NULL);
    size_t len, mlen, off;
    uint8_t *w = payload(ctx, 0, &len);
    set16(w + 6, 1); /* version 0.1 */
    mdt_image *img = open_ok(ctx, w, len, "v0.1");
    ck_assert(has_warning(img, "minor version is not 0"));
    /* Version 1 sections belong on 16-byte boundaries; .reloc moved off one still reads. */
    w = payload(ctx, 1, &len);
    set32(w + 32 + 32 + 12, get32(w + 32 + 32 + 12) - 4);
    img = open_ok(ctx, w, len, "v1 unaligned");
    ck_assert(has_warning(img, "Webcil section 3: raw data at payload offset"));
    /* Segment 1 longer than the payload size it is announced with. */
    struct wasm_opts o = {.size_delta = (uint32_t)-16};
    w = payload(ctx, 0, &len);
    w = talloc_realloc(ctx, w, uint8_t, len + 16);
    memset(w + len, 0, 16);
    uint8_t *m = make_wasm(ctx, w, len + 16, &o, &mlen, &off);
    img = open_ok(ctx, m, mlen, "short size");
    ck_assert(has_warning(img, "after the"));
    talloc_free(ctx);
}
END_TEST

/* The fixtures made by data/tools/webcil-pack.py from data/sample/Hello.exe. */
START_TEST(fixture_files_read_like_their_pe)
{
    static const struct {
        const char *file;
        int kind;
        uint64_t payload_at; /* data/webcil/README.md */
        uint32_t first_raw;
    } fx[] = {
        {"data/webcil/Hello.v0.webcil", MDT_KIND_WEBCIL, 0, 0x4C},
        {"data/webcil/Hello.v1.webcil", MDT_KIND_WEBCIL, 0, 0x50},
        {"data/webcil/Hello.wasm", MDT_KIND_WASM, 152, 0x4C},
        {"data/webcil/Hello.v1.wasm", MDT_KIND_WASM, 304, 0x50},
    };
    void *ctx = talloc_new(NULL);
    mdt_image *pe = open_pe(ctx, "data/sample/Hello.exe");
    for (size_t i = 0; i < sizeof fx / sizeof fx[0]; i++) {
        char p[1024];
        char msg[512];
        mdt_image *img = NULL;
        uint64_t fo;
        int e = mdt_image_open_file(ctx, &img, src_path(p, sizeof p, fx[i].file), 0);
        ck_assert_msg(e == 0, "%s: %s", fx[i].file, mdt_error_message(msg, sizeof msg));
        ck_assert_int_eq(mdt_image_kind(img), fx[i].kind);
        same_as_pe(img, pe);
        ck_assert_uint_eq(mdt_table_rows(img, MDT_TABLE_TypeDef), 2);
        ck_assert_str_eq(str_col(img, MDT_TABLE_TypeDef, 2, MDT_COL_TypeDef_TypeName), "Program");
        ck_assert_uint_eq(mdt_image_section(img, 0)->raw_pointer, fx[i].first_raw);
        ck_assert_int_eq(mdt_image_rva_to_offset(&fo, img, 0x2008), 0);
        ck_assert_uint_eq(fo, fx[i].payload_at + fx[i].first_raw + 8);
    }
    talloc_free(ctx);
}
END_TEST

/* ----------------------------------------------------------- bad payloads */

START_TEST(unknown_major_version_is_unsupported)
{
    void *ctx = talloc_new(NULL);
    size_t len;
    uint8_t *w = payload(ctx, 1, &len);
    set16(w + 4, 2);
    open_fails(w, len, MDT_EUNSUPPORTED, "Webcil version 2.0 is not supported");
    open_fails(w, len, MDT_EUNSUPPORTED, "Webcil payload+0x4 (file 0x4)");
    talloc_free(ctx);
}
END_TEST

START_TEST(truncated_header)
{
    open_fails((const uint8_t *)"WbIL\0\0\0\0\3\0\0\0\x08\x20\0\0", 16, MDT_ETRUNC,
               "Webcil header: need 28 bytes, 16 left");
    /* Version 1 needs TableBase too. */
    uint8_t h[28] = "WbIL\1";
    open_fails(h, sizeof h, MDT_ETRUNC, "TableBase");
}
END_TEST

START_TEST(too_many_sections)
{
    void *ctx = talloc_new(NULL);
    size_t len;
    uint8_t *w = payload(ctx, 0, &len);
    set16(w + 8, 97);
    open_fails(w, len, MDT_EBADIMAGE, "97 sections (the loader allows at most 96)");
    talloc_free(ctx);
}
END_TEST

START_TEST(truncated_section_table)
{
    void *ctx = talloc_new(NULL);
    size_t len;
    uint8_t *w = payload(ctx, 0, &len);
    open_fails(w, 28 + 16 + 8, MDT_ETRUNC, "section table: need 48 bytes, 24 left");
    talloc_free(ctx);
}
END_TEST

START_TEST(overlapping_sections)
{
    void *ctx = talloc_new(NULL);
    size_t len;
    uint8_t *w = payload(ctx, 0, &len);
    /* Section 2 starts inside section 1. */
    set32(w + 28 + 16 + 4, get32(w + 28 + 4) + 0x10);
    open_fails(w, len, MDT_EBADIMAGE, "sections 1 and 2 overlap");
    /* Section 2 before section 1. */
    set32(w + 28 + 16 + 4, get32(w + 28 + 4) - 0x1000);
    open_fails(w, len, MDT_EBADIMAGE, "sections 1 and 2 are out of order");
    talloc_free(ctx);
}
END_TEST

START_TEST(section_wrapping_address_space)
{
    void *ctx = talloc_new(NULL);
    size_t len;
    uint8_t *w = payload(ctx, 0, &len);
    set32(w + 28 + 32 + 4, 0xFFFFFFF8); /* section 3, 12 bytes long */
    open_fails(w, len, MDT_EBADIMAGE, "section 3 wraps the 32-bit address space");
    talloc_free(ctx);
}
END_TEST

START_TEST(section_data_past_payload)
{
    void *ctx = talloc_new(NULL);
    size_t len;
    uint8_t *w = payload(ctx, 0, &len);
    open_fails(w, len - 1, MDT_ETRUNC, "section 3: raw data");
    open_fails(w, len - 1, MDT_ETRUNC, "runs past the end of the Webcil payload");
    talloc_free(ctx);
}
END_TEST

START_TEST(cli_rva_outside_sections)
{
    void *ctx = talloc_new(NULL);
    size_t len;
    uint8_t *w = payload(ctx, 0, &len);
    set32(w + 12, 0x00100000);
    open_fails(w, len, MDT_ENOTFOUND, "CLI header: RVA 0x100000 is in no section");
    set32(w + 12, 0);
    open_fails(w, len, MDT_ENOTDOTNET, "no CLI header (PeCliHeaderRva is 0)");
    talloc_free(ctx);
}
END_TEST

START_TEST(reloc_index_out_of_range)
{
    void *ctx = talloc_new(NULL);
    size_t len;
    uint8_t *w = payload(ctx, 1, &len);
    set16(w + 10, 4);
    open_fails(w, len, MDT_EBADIMAGE, "relocation section index 4, but there are 3 sections");
    talloc_free(ctx);
}
END_TEST

/* -------------------------------------------------------- bad wrappers */

#define WASM_HEAD "\0asm\1\0\0\0"

START_TEST(wasm_truncated_leb128)
{
    /* Custom section whose size LEB128 ends mid-way. */
    static const uint8_t m[] = WASM_HEAD "\0\x80\x80";
    open_fails(m, sizeof m - 1, MDT_ETRUNC, "section size: LEB128 truncated after 2 byte(s)");
    open_fails(m, sizeof m - 1, MDT_ETRUNC, "wasm module+0x9 (file 0x9)");
}
END_TEST

START_TEST(wasm_overlong_leb128)
{
    static const uint8_t six[] = WASM_HEAD "\0\x80\x80\x80\x80\x80\x00";
    static const uint8_t big[] = WASM_HEAD "\0\xff\xff\xff\xff\x1f";
    open_fails(six, sizeof six - 1, MDT_EBADIMAGE, "LEB128 longer than 5 bytes or above 32 bits");
    open_fails(big, sizeof big - 1, MDT_EBADIMAGE, "5th byte 0x1f");
}
END_TEST

START_TEST(wasm_section_size_past_end)
{
    static const uint8_t m[] = WASM_HEAD "\x0b\x10\2\1\4";
    open_fails(m, sizeof m - 1, MDT_ETRUNC,
               "section id 11 at 0x8: size 0x10 runs past the end of the module (0x3 bytes "
               "left)");
}
END_TEST

START_TEST(wasm_without_payload)
{
    void *ctx = talloc_new(NULL);
    size_t len, mlen, off;
    uint8_t *w = payload(ctx, 0, &len);
    struct wasm_opts none = {.no_data = true}, one = {.nseg = 1};
    uint8_t *m = make_wasm(ctx, w, len, &none, &mlen, &off);
    open_fails(m, mlen, MDT_EBADIMAGE, "no data section, so no Webcil payload");
    m = make_wasm(ctx, w, len, &one, &mlen, &off);
    open_fails(m, mlen, MDT_EBADIMAGE, "no Webcil payload: the data section has 1 segment(s)");
    /* A plain module: just the header. */
    open_fails((const uint8_t *)WASM_HEAD, 8, MDT_EBADIMAGE, "no data section");
    talloc_free(ctx);
}
END_TEST

START_TEST(wasm_payload_size_mismatch)
{
    void *ctx = talloc_new(NULL);
    size_t len, mlen, off;
    uint8_t *w = payload(ctx, 0, &len);
    struct wasm_opts o = {.size_delta = 1};
    uint8_t *m = make_wasm(ctx, w, len, &o, &mlen, &off);
    open_fails(m, mlen, MDT_ETRUNC, "exceeds data segment 1");
    open_fails(m, mlen, MDT_ETRUNC, "wasm data segment 0+0x0");
    talloc_free(ctx);
}
END_TEST

START_TEST(wasm_bad_payload_is_located_in_the_module)
{
    void *ctx = talloc_new(NULL);
    size_t len, mlen, off;
    char want[64];
    uint8_t *w = payload(ctx, 0, &len);
    struct wasm_opts o = {0};
    uint8_t *m = make_wasm(ctx, w, len, &o, &mlen, &off);
    set16(m + off + 4, 7);
    open_fails(m, mlen, MDT_EUNSUPPORTED, "Webcil version 7.0");
    /* Offsets are the payload's, and the file offset the module's. */
    snprintf(want, sizeof want, "Webcil payload+0x4 (file 0x%zx)", off + 4);
    open_fails(m, mlen, MDT_EUNSUPPORTED, want);
    ck_assert_uint_eq(mdt_error_last()->file_offset, off + 4);
    set16(m + off + 4, 0);
    memcpy(m + off, "MZ\0\0", 4);
    open_fails(m, mlen, MDT_EBADIMAGE, "Webcil payload does not start with \"WbIL\"");
    talloc_free(ctx);
}
END_TEST

START_TEST(wasm_bad_header_and_sections)
{
    static const uint8_t v2[] = "\0asm\2\0\0\0";
    static const uint8_t id[] = WASM_HEAD "\x0e\0";
    static const uint8_t two[] = WASM_HEAD "\x0b\1\0\x0b\1\0";
    static const uint8_t kind[] = WASM_HEAD "\x0b\4\2\3\0\0";
    open_fails(v2, sizeof v2 - 1, MDT_EUNSUPPORTED, "WebAssembly binary version 2");
    open_fails(id, sizeof id - 1, MDT_EBADIMAGE, "unknown WebAssembly section id 14");
    open_fails(two, sizeof two - 1, MDT_EBADIMAGE, "second data section");
    open_fails(kind, sizeof kind - 1, MDT_EBADIMAGE, "data segment 0: unknown segment kind 3");
}
END_TEST

Suite *suite(void);
Suite *suite(void)
{
    Suite *s = suite_create("webcil");
    TCase *good = tcase_create("good");
    TCase *bad = tcase_create("bad");
    tcase_add_test(good, v0_payload_reads_like_its_pe);
    tcase_add_test(good, v1_payload_reads_like_its_pe);
    tcase_add_test(good, wasm_wrapper_reads_like_its_pe);
    tcase_add_test(good, wasm_long_leb128_and_active_segment_accepted);
    tcase_add_test(good, odd_but_readable_payloads_warn);
    tcase_add_test(good, fixture_files_read_like_their_pe);
    tcase_add_test(bad, unknown_major_version_is_unsupported);
    tcase_add_test(bad, truncated_header);
    tcase_add_test(bad, too_many_sections);
    tcase_add_test(bad, truncated_section_table);
    tcase_add_test(bad, overlapping_sections);
    tcase_add_test(bad, section_wrapping_address_space);
    tcase_add_test(bad, section_data_past_payload);
    tcase_add_test(bad, cli_rva_outside_sections);
    tcase_add_test(bad, reloc_index_out_of_range);
    tcase_add_test(bad, wasm_truncated_leb128);
    tcase_add_test(bad, wasm_overlong_leb128);
    tcase_add_test(bad, wasm_section_size_past_end);
    tcase_add_test(bad, wasm_without_payload);
    tcase_add_test(bad, wasm_payload_size_mismatch);
    tcase_add_test(bad, wasm_bad_payload_is_located_in_the_module);
    tcase_add_test(bad, wasm_bad_header_and_sections);
    suite_add_tcase(s, good);
    suite_add_tcase(s, bad);
    return s;
}
