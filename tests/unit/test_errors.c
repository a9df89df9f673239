/* The per-thread error record (<mdtools/errors.h>) is "valid until the next
 * failing call": a call that succeeds leaves it as it found it, even when
 * the library met and handled a failure on its way (a row that does not
 * read is skipped, a signature too large for an arena is decoded again, a
 * generic parameter list that does not read degrades to `<,>`, an
 * unreadable row makes a resolution answer bad-image).
 *
 * Each test plants a failure with a message of its own, makes calls that
 * succeed, and checks after each that the record still describes the
 * planted failure. The calls go over every row of the fixtures, of the
 * resolution fixtures (forwarders, cycles, missing assemblies) as module
 * sets, and of every malformed input of tests/corrupt, which are what make
 * the library handle failures on the way to a success. */
#include <check.h>
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <talloc.h>

#include <mdtools/mdtools.h>

#include "paths.h"

/* The planted failure: opening bytes that are no image. */
static mdt_errinfo planted;

static void plant(void)
{
    mdt_image *img;
    int e = mdt_image_open_buffer(NULL, &img, "planted.bin", "not an image", 12, 0);
    ck_assert_int_eq(e, MDT_ENOTDOTNET);
    planted = *mdt_error_last();
    ck_assert_str_eq(planted.file, "planted.bin");
}

static bool same(const mdt_errinfo *a, const mdt_errinfo *b)
{
    return a->code == b->code && !strcmp(a->file, b->file) && !strcmp(a->region, b->region) &&
           !strcmp(a->column, b->column) && a->row == b->row && a->offset == b->offset &&
           a->file_offset == b->file_offset && !strcmp(a->what, b->what);
}

struct tally {
    unsigned long successes, failures;
};

/* In the test's log: how many calls each test made. */
static void report(const char *what, const struct tally *t)
{
    fprintf(stderr, "%s: %lu calls succeeded, %lu failed\n", what, t->successes, t->failures);
}

/* After a call: a success must have left the planted record; a failure
 * replaces it, so plant again. */
#define CHECK_CALL(t, call, what, ...)                                                             \
    do {                                                                                           \
        int r_ = (call);                                                                           \
        if (r_ == 0) {                                                                             \
            (t)->successes++;                                                                      \
            if (!same(mdt_error_last(), &planted)) {                                               \
                char m_[512];                                                                      \
                ck_abort_msg("%s: " what " succeeded and changed the record to \"%s\"", __func__,  \
                             __VA_ARGS__, mdt_error_message(m_, sizeof m_));                       \
            }                                                                                      \
        } else {                                                                                   \
            (t)->failures++;                                                                       \
            plant();                                                                               \
        }                                                                                          \
    } while (0)

/* Every call of the row API, naming API and value API on one row. */
static void calls_on_row(void *ctx, struct tally *t, const mdt_image *img, unsigned table,
                         uint32_t rid, mdt_name_cache *cache)
{
    const mdt_table_schema *s = mdt_table_schema_get(table);
    uint32_t token = MDT_TOKEN(table, rid), u32, u32b;
    mdt_row row;
    mdt_cell cells[MDT_LAYOUT_COLS];
    const char *str;
    const uint8_t *p;
    size_t len;
    char buf[256];
    char *name;
    mdt_sig sig;
    mdt_value v;
    mdt_attr a;
    uint64_t arena[64];
    static const int styles[] = {MDT_STYLE_FULL, MDT_STYLE_REFLECTION, MDT_STYLE_IL};

    CHECK_CALL(t, mdt_row_get(&row, img, table, rid), "row 0x%08x", token);
    if (mdt_row_get(&row, img, table, rid)) {
        plant();
        return;
    }
    for (unsigned c = 0; c < s->ncols; c++) {
        switch (s->cols[c].kind) {
        case MDT_COLK_STR:
            CHECK_CALL(t, mdt_row_string(&str, &len, &row, c), "string cell of 0x%08x", token);
            break;
        case MDT_COLK_BLOB:
            CHECK_CALL(t, mdt_row_blob(&p, &u32, &row, c), "blob cell of 0x%08x", token);
            break;
        case MDT_COLK_GUID:
            CHECK_CALL(t, mdt_row_guid(&p, &row, c), "GUID cell of 0x%08x", token);
            break;
        case MDT_COLK_LIST:
            CHECK_CALL(t, mdt_row_range(&u32, &u32b, &row, c), "range of 0x%08x", token);
            /* a list cell is a token too */
            __attribute__((fallthrough));
        case MDT_COLK_TAB:
        case MDT_COLK_CODED:
            CHECK_CALL(t, mdt_row_token(&u32, &row, c), "token cell of 0x%08x", token);
            break;
        default: break;
        }
    }
    CHECK_CALL(t, mdt_row_cells(cells, &row), "cells of 0x%08x", token);

    for (size_t i = 0; i < sizeof styles / sizeof styles[0]; i++) {
        mdt_name_opts o = {styles[i], MDT_NAME_PARAM_NAMES, MDT_NAME_OPTS_VERSION, NULL, NULL};
        CHECK_CALL(t, mdt_token_name(ctx, &name, img, token, &o), "name of 0x%08x", token);
        CHECK_CALL(t, mdt_token_name_buf(buf, sizeof buf, &len, img, token, &o),
                   "name of 0x%08x into a buffer", token);
    }
    if (cache) {
        mdt_name_opts o = {MDT_STYLE_FULL, 0, MDT_NAME_OPTS_VERSION, NULL, cache};
        CHECK_CALL(t, mdt_token_name(ctx, &name, img, token, &o), "cached name of 0x%08x", token);
    }
    CHECK_CALL(t, mdt_token_owner(&u32, img, token), "owner of 0x%08x", token);

    switch (table) {
    case MDT_TABLE_TypeDef: {
        mdt_name_opts o = {MDT_STYLE_REFLECTION, 0, MDT_NAME_OPTS_VERSION, NULL, NULL};
        uint8_t et;
        CHECK_CALL(t, mdt_typedef_enclosing(&u32, img, token), "enclosing of 0x%08x", token);
        CHECK_CALL(t, mdt_typedef_enum_underlying(&et, img, token), "enum of 0x%08x", token);
        if (mdt_token_name(ctx, &name, img, token, &o) == 0)
            CHECK_CALL(t, mdt_typedef_by_name(&u32, img, name, strlen(name)), "TypeDef named %s",
                       name);
        else
            plant();
        break;
    }
    case MDT_TABLE_MethodDef:
    case MDT_TABLE_Field:
    case MDT_TABLE_Param:
    case MDT_TABLE_Property:
        if (table != MDT_TABLE_Param && table != MDT_TABLE_Property)
            CHECK_CALL(t, mdt_member_owner(&u32, img, token), "owner of 0x%08x", token);
        CHECK_CALL(t, mdt_value_default(ctx, &v, img, token), "default of 0x%08x", token);
        break;
    case MDT_TABLE_Constant:
        CHECK_CALL(t, mdt_constant_of_row(ctx, &v, img, rid), "constant 0x%08x", token);
        break;
    case MDT_TABLE_CustomAttribute:
        CHECK_CALL(t, mdt_attr_of_row(ctx, &a, img, rid, NULL, NULL), "attribute 0x%08x", token);
        if (mdt_attr_of_row(ctx, &a, img, rid, NULL, NULL) == 0)
            CHECK_CALL(t, mdt_attr_format(ctx, &name, &a, NULL), "attribute 0x%08x as text", token);
        else
            plant();
        break;
    case MDT_TABLE_AssemblyRef: {
        mdt_identity id;
        CHECK_CALL(t, mdt_assemblyref_identity(&id, img, rid), "identity of 0x%08x", token);
        break;
    }
    case MDT_TABLE_TypeRef:
    case MDT_TABLE_MemberRef:
    case MDT_TABLE_ExportedType:
        CHECK_CALL(t, mdt_token_scope(&u32, img, token), "scope of 0x%08x", token);
        break;
    default: break;
    }
    switch (table) {
    case MDT_TABLE_MethodDef:
    case MDT_TABLE_MemberRef:
    case MDT_TABLE_Field:
    case MDT_TABLE_Property:
    case MDT_TABLE_StandAloneSig:
    case MDT_TABLE_TypeSpec:
    case MDT_TABLE_MethodSpec:
        CHECK_CALL(t, mdt_sig_of_token(ctx, &sig, img, token), "signature of 0x%08x", token);
        /* A small arena: large trees fail with MDT_ENOMEM, which callers
         * handle by decoding again under a talloc context. */
        CHECK_CALL(t, mdt_sig_of_token_buf(arena, sizeof arena, &sig, img, token),
                   "signature of 0x%08x into an arena", token);
        if (mdt_sig_of_token(ctx, &sig, img, token) == 0)
            CHECK_CALL(t, mdt_sig_name(ctx, &name, &sig, NULL), "signature of 0x%08x as text",
                       token);
        else
            plant();
        break;
    default: break;
    }
}

/* Every call on every row of an image, and the image-wide ones. */
static void calls_on_image(struct tally *t, const mdt_image *img)
{
    void *ctx = talloc_new(NULL);
    mdt_name_cache *cache = NULL;
    mdt_identity id;
    uint8_t mvid[16];
    CHECK_CALL(t, mdt_assembly_identity(&id, img), "identity of %s", mdt_image_name(img));
    CHECK_CALL(t, mdt_image_mvid(mvid, img), "MVID of %s", mdt_image_name(img));
    CHECK_CALL(t, mdt_name_cache_new(ctx, &cache, img, MDT_STYLE_FULL, 0), "name cache of %s",
               mdt_image_name(img));
    (void)mdt_image_warning_count(img);
    ck_assert(same(mdt_error_last(), &planted));
    for (unsigned table = 0; table < MDT_TABLE_MAX; table++) {
        uint32_t n = mdt_table_rows_present(img, table);
        if (!mdt_table_schema_get(table) || !mdt_table_schema_get(table)->name)
            continue;
        for (uint32_t rid = 1; rid <= n && rid <= 2000; rid++) {
            calls_on_row(ctx, t, img, table, rid, cache);
            talloc_free_children(ctx);
            cache = NULL;
            if (mdt_name_cache_new(ctx, &cache, img, MDT_STYLE_FULL, 0))
                plant();
        }
    }
    talloc_free(ctx);
}

/* Resolve every reference of every module of a set made of the images. */
static void calls_on_set(struct tally *t, mdt_image **imgs, size_t n)
{
    void *ctx = talloc_new(NULL);
    mdt_modset *set;
    mdt_modview *view;
    mdt_resolution res;
    mdt_trace *trace;
    ck_assert_int_eq(mdt_modset_new(ctx, &set), 0);
    for (size_t i = 0; i < n; i++) {
        mdt_module_desc d = {i + 1, imgs[i], 0, NULL, NULL, 0};
        CHECK_CALL(t, mdt_modset_add(set, &d, 0), "adding %s", mdt_image_name(imgs[i]));
    }
    view = mdt_modset_acquire(set);
    for (size_t i = 0; i < n; i++) {
        static const unsigned tables[] = {MDT_TABLE_TypeRef, MDT_TABLE_MemberRef,
                                          MDT_TABLE_ExportedType, MDT_TABLE_AssemblyRef};
        for (size_t k = 0; k < sizeof tables / sizeof tables[0]; k++) {
            uint32_t rows = mdt_table_rows_present(imgs[i], tables[k]);
            for (uint32_t rid = 1; rid <= rows && rid <= 2000; rid++) {
                uint32_t tok = MDT_TOKEN(tables[k], rid);
                if (tables[k] == MDT_TABLE_AssemblyRef) {
                    uintptr_t manifest;
                    int tier;
                    CHECK_CALL(t, mdt_assemblyref_bind(&manifest, &tier, view, i + 1, tok),
                               "binding 0x%08x", tok);
                    continue;
                }
                CHECK_CALL(t, mdt_token_resolve(ctx, &res, NULL, view, i + 1, tok, NULL),
                           "resolving 0x%08x", tok);
                mdt_resolve_opts nocache = {MDT_RESOLVE_NOCACHE, MDT_RESOLVE_OPTS_VERSION, 0};
                CHECK_CALL(t, mdt_token_resolve(ctx, &res, &trace, view, i + 1, tok, &nocache),
                           "resolving 0x%08x with a trace", tok);
            }
        }
    }
    mdt_modview_release(view);
    talloc_free(ctx);
}

/* Open every file of a folder (those that open), call everything on each,
 * and resolve over all of them as one set. */
static void calls_on_folder(struct tally *t, const char *rel)
{
    char dir[4096], path[4096 + 256];
    void *ctx = talloc_new(NULL);
    mdt_image **imgs = NULL;
    size_t n = 0;
    DIR *d = opendir(src_path(dir, sizeof dir, rel));
    struct dirent *de;
    ck_assert_msg(d != NULL, "%s is not there", dir);
    while ((de = readdir(d))) {
        mdt_image *img;
        if (de->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        if (mdt_image_open_file(ctx, &img, path, 0)) {
            plant();
            continue;
        }
        ck_assert_msg(same(mdt_error_last(), &planted), "opening %s changed the record", path);
        imgs = talloc_realloc(ctx, imgs, mdt_image *, n + 1);
        imgs[n++] = img;
    }
    closedir(d);
    for (size_t i = 0; i < n; i++)
        calls_on_image(t, imgs[i]);
    calls_on_set(t, imgs, n);
    talloc_free(ctx);
}

/* A fixture's bytes, to damage before opening them. */
static uint8_t *read_fixture(void *ctx, const char *rel, size_t *len)
{
    char path[4096];
    FILE *f = fopen(src_path(path, sizeof path, rel), "rb");
    uint8_t *bytes = talloc_array(ctx, uint8_t, 1 << 20);
    ck_assert_msg(f && bytes, "%s", path);
    *len = fread(bytes, 1, 1 << 20, f);
    fclose(f);
    ck_assert_uint_lt(*len, 1 << 20);
    return bytes;
}

/* Set a cell of a file's bytes: where it lies is read from an image opened
 * on them, which is closed before the bytes change. */
static void patch_cell(uint8_t *bytes, size_t len, unsigned table, uint32_t rid, unsigned col,
                       uint32_t value)
{
    mdt_image *img;
    mdt_row row;
    ck_assert_int_eq(mdt_image_open_buffer(NULL, &img, "patch", bytes, len, 0), 0);
    ck_assert_int_eq(mdt_row_get(&row, img, table, rid), 0);
    unsigned width = mdt_column_width(img, table, col);
    uint8_t *p = (uint8_t *)row.p + row.lay->off[col];
    ck_assert(p >= bytes && p + width <= bytes + len);
    mdt_image_close(img);
    for (unsigned i = 0; i < width; i++)
        p[i] = (uint8_t)(value >> (8 * i));
}

/* The TypeRef row of a fixture's bytes named ns.name. */
static uint32_t typeref_named(uint8_t *bytes, size_t len, const char *ns, const char *name)
{
    mdt_image *img;
    uint32_t found = 0;
    ck_assert_int_eq(mdt_image_open_buffer(NULL, &img, "find", bytes, len, 0), 0);
    for (uint32_t rid = 1; rid <= mdt_table_rows(img, MDT_TABLE_TypeRef) && !found; rid++) {
        mdt_row r;
        const char *n, *s;
        if (mdt_row_get(&r, img, MDT_TABLE_TypeRef, rid) == 0 &&
            mdt_row_string(&n, NULL, &r, MDT_COL_TypeRef_TypeName) == 0 &&
            mdt_row_string(&s, NULL, &r, MDT_COL_TypeRef_TypeNamespace) == 0 && !strcmp(n, name) &&
            !strcmp(s, ns))
            found = rid;
    }
    mdt_image_close(img);
    ck_assert_uint_ne(found, 0);
    return found;
}

/* Everything.dll with rows that do not read in the way of names, enums,
 * generic parameter lists, value types and default values: the TypeDef of
 * enum Color (row 2: its name and base type), the first generic
 * parameter's name, the resolution scope of the TypeRef System.ValueType,
 * and an attribute put before the DecimalConstantAttribute of a constant
 * (row 36, moved to the field of row 37, with a constructor tag that names
 * no table). Looking up a type by name passes over row 2, an attribute
 * with a Color argument looks it up, a generic type named with its
 * parameters leaves the name out (`<>`), a struct's descriptor asks
 * whether its base is System.ValueType, the constant's attribute is found
 * after row 36. */
START_TEST(handled_failures_in_names_keep_failure)
{
    struct tally t = {0, 0};
    void *ctx = talloc_new(NULL);
    size_t len;
    uint8_t *bytes = read_fixture(ctx, "data/Everything.dll", &len);
    mdt_image *img;
    patch_cell(bytes, len, MDT_TABLE_TypeDef, 2, MDT_COL_TypeDef_TypeName, 0xFFFF);
    patch_cell(bytes, len, MDT_TABLE_TypeDef, 2, MDT_COL_TypeDef_Extends, 3);
    patch_cell(bytes, len, MDT_TABLE_GenericParam, 1, MDT_COL_GenericParam_Name, 0xFFFF);
    patch_cell(bytes, len, MDT_TABLE_TypeRef, typeref_named(bytes, len, "System", "ValueType"),
               MDT_COL_TypeRef_ResolutionScope, 0xFFFF);
    {
        mdt_image *clean;
        mdt_row ca;
        ck_assert_int_eq(mdt_image_open_buffer(NULL, &clean, "clean", bytes, len, 0), 0);
        ck_assert_int_eq(mdt_row_get(&ca, clean, MDT_TABLE_CustomAttribute, 37), 0);
        uint32_t parent = mdt_row_raw(&ca, MDT_COL_CustomAttribute_Parent);
        mdt_image_close(clean);
        patch_cell(bytes, len, MDT_TABLE_CustomAttribute, 36, MDT_COL_CustomAttribute_Parent,
                   parent);
        patch_cell(bytes, len, MDT_TABLE_CustomAttribute, 36, MDT_COL_CustomAttribute_Type, 0);
    }
    plant();
    ck_assert_int_eq(mdt_image_open_buffer(ctx, &img, "Everything-damaged.dll", bytes, len, 0), 0);
    ck_assert(same(mdt_error_last(), &planted));
    calls_on_image(&t, img);
    for (uint32_t rid = 1; rid <= mdt_table_rows(img, MDT_TABLE_TypeDef); rid++) {
        mdt_desc d = {
            .kind = MDT_DESC_TYPEDEF, .img = img, .token = MDT_TOKEN(MDT_TABLE_TypeDef, rid)};
        const mdt_type *type;
        CHECK_CALL(&t, mdt_desc_to_type(ctx, &type, &d), "type of TypeDef %u", rid);
    }
    report("handled_failures_in_names_keep_failure", &t);
    ck_assert_uint_gt(t.successes, 1000);
    talloc_free(ctx);
}
END_TEST

/* A CodeView entry whose data is at an RVA in no section (and at no file
 * offset): open reads it through the RVA, fails, and says so in a warning. */
START_TEST(open_with_unreadable_codeview_keeps_failure)
{
    void *ctx = talloc_new(NULL);
    size_t len;
    uint8_t *bytes = read_fixture(ctx, "data/pdb/Lines.dll", &len);
    uint64_t off;
    mdt_image *img;
    ck_assert_int_eq(mdt_image_open_buffer(ctx, &img, "patch", bytes, len, 0), 0);
    ck_assert_uint_ge(mdt_image_pe_info(img)->ndebug, 1);
    ck_assert_uint_eq(mdt_image_debug_entry(img, 0)->type, 2); /* CodeView */
    ck_assert_int_eq(mdt_image_rva_to_offset(&off, img, mdt_image_pe_info(img)->debug_dir.rva), 0);
    mdt_image_close(img);
    ck_assert_uint_le(off + 28, len);
    memcpy(bytes + off + 20, "\x00\xff\xff\xff", 4); /* AddressOfRawData */
    memset(bytes + off + 24, 0, 4);                  /* PointerToRawData */
    plant();
    ck_assert_int_eq(mdt_image_open_buffer(ctx, &img, "Lines-codeview.dll", bytes, len, 0), 0);
    ck_assert(!mdt_image_debug_entry(img, 0)->has_codeview);
    ck_assert_uint_ge(mdt_image_warning_count(img), 1);
    ck_assert(same(mdt_error_last(), &planted));
    talloc_free(ctx);
}
END_TEST

/* A debug directory at an RVA in no section: open reads it through the
 * RVA, fails, warns, and opens the image without debug entries. */
START_TEST(open_with_unreadable_debug_directory_keeps_failure)
{
    void *ctx = talloc_new(NULL);
    size_t len;
    uint8_t *bytes = read_fixture(ctx, "data/pdb/Lines.dll", &len);
    mdt_image *img;
    ck_assert_int_eq(mdt_image_open_buffer(ctx, &img, "patch", bytes, len, 0), 0);
    uint32_t rva = mdt_image_pe_info(img)->debug_dir.rva;
    ck_assert_uint_ne(rva, 0);
    mdt_image_close(img);
    /* The data directory entry 6 (Debug, II.25.2.3.3) after the optional
     * header's standard and Windows fields (96 bytes in PE32, 112 in PE32+). */
    uint32_t lfanew = (uint32_t)bytes[0x3c] | (uint32_t)bytes[0x3d] << 8 |
                      (uint32_t)bytes[0x3e] << 16 | (uint32_t)bytes[0x3f] << 24;
    size_t opt = (size_t)lfanew + 24;
    size_t dir = opt + (bytes[opt] == 0x0b && bytes[opt + 1] == 0x02 ? 112 : 96) + 6 * 8;
    ck_assert_uint_le(dir + 8, len);
    ck_assert_uint_eq((uint32_t)bytes[dir] | (uint32_t)bytes[dir + 1] << 8 |
                          (uint32_t)bytes[dir + 2] << 16 | (uint32_t)bytes[dir + 3] << 24,
                      rva);
    memcpy(bytes + dir, "\x00\x00\xff\x7f", 4);
    plant();
    ck_assert_int_eq(mdt_image_open_buffer(ctx, &img, "Lines-debugdir.dll", bytes, len, 0), 0);
    ck_assert_uint_eq(mdt_image_pe_info(img)->ndebug, 0);
    ck_assert_uint_ge(mdt_image_warning_count(img), 1);
    ck_assert(same(mdt_error_last(), &planted));
    talloc_free(ctx);
}
END_TEST

/* A forwarder chain (Hop0 -> Hop1 -> Hop2 -> Hop3) whose middle assembly
 * names the next one by a name that does not read: resolving through it
 * answers bad-image. */
START_TEST(forwarders_through_damage_keep_failure)
{
    static const char *const files[] = {
        "data/resolve/chain/ChainClient.exe", "data/resolve/chain/Hop0.dll",
        "data/resolve/chain/Hop1.dll", "data/resolve/chain/Hop2.dll",
        "data/resolve/chain/Hop3.dll"};
    struct tally t = {0, 0};
    void *ctx = talloc_new(NULL);
    mdt_image *imgs[5];
    for (size_t i = 0; i < 5; i++) {
        size_t len;
        uint8_t *bytes = read_fixture(ctx, files[i], &len);
        if (i == 2)
            patch_cell(bytes, len, MDT_TABLE_AssemblyRef, 1, MDT_COL_AssemblyRef_Name, 0xFFFF);
        ck_assert_int_eq(mdt_image_open_buffer(ctx, &imgs[i], files[i], bytes, len, 0), 0);
    }
    plant();
    calls_on_set(&t, imgs, 5);
    report("forwarders_through_damage_keep_failure", &t);
    ck_assert_uint_gt(t.successes, 100);
    talloc_free(ctx);
}
END_TEST

/* IL names of an instantiation whose argument is defined in a .netmodule,
 * which has no assembly identity to print: `[.module MMPart.netmodule]`. */
START_TEST(instantiation_across_modules_keeps_failure)
{
    char path[4096];
    void *ctx = talloc_new(NULL);
    mdt_image *everything, *part;
    mdt_name_opts il = {MDT_STYLE_IL, 0, MDT_NAME_OPTS_VERSION, NULL, NULL};
    char *name;
    ck_assert_int_eq(mdt_image_open_file(ctx, &everything,
                                         src_path(path, sizeof path, "data/Everything.dll"), 0),
                     0);
    ck_assert_int_eq(
        mdt_image_open_file(ctx, &part,
                            src_path(path, sizeof path, "data/resolve/multi/MMPart.netmodule"), 0),
        0);
    mdt_desc arg = {.kind = MDT_DESC_TYPEDEF, .img = part, .token = 0x02000002};
    const mdt_desc *args[] = {&arg};
    plant();
    ck_assert_int_eq(mdt_inst_name(ctx, &name, everything, 0x02000007, 1, args, 0, NULL, &il), 0);
    ck_assert_ptr_nonnull(strstr(name, "[.module "));
    ck_assert(same(mdt_error_last(), &planted));
    talloc_free(ctx);
}
END_TEST

START_TEST(open_success_keeps_failure)
{
    char path[4096];
    mdt_image *img;
    plant();
    ck_assert_int_eq(
        mdt_image_open_file(NULL, &img, src_path(path, sizeof path, "data/Everything.dll"), 0), 0);
    ck_assert(same(mdt_error_last(), &planted));
    mdt_image_close(img);
}
END_TEST

START_TEST(calls_on_fixtures_keep_failure)
{
    struct tally t = {0, 0};
    plant();
    calls_on_folder(&t, "data");
    calls_on_folder(&t, "data/fwd");
    report("calls_on_fixtures_keep_failure", &t);
    ck_assert_uint_gt(t.successes, 10000);
}
END_TEST

START_TEST(resolution_keeps_failure)
{
    static const char *const dirs[] = {
        "data/resolve/chain", "data/resolve/cycle", "data/resolve/missing", "data/resolve/multi",
        "data/resolve/nest",  "data/resolve/nil",   "data/resolve/ver"};
    struct tally t = {0, 0};
    plant();
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
        calls_on_folder(&t, dirs[i]);
    report("resolution_keeps_failure", &t);
    ck_assert_uint_gt(t.successes, 1000);
}
END_TEST

/* The malformed inputs make the library handle failures on the way. */
START_TEST(calls_on_corrupt_inputs_keep_failure)
{
    struct tally t = {0, 0};
    plant();
    calls_on_folder(&t, "tests/corrupt/cases");
    report("calls_on_corrupt_inputs_keep_failure", &t);
    ck_assert_uint_gt(t.successes, 1000);
    ck_assert_uint_gt(t.failures, 100);
}
END_TEST

/* A failure between two successes is what the record then holds. */
START_TEST(failure_replaces_record)
{
    char path[4096];
    mdt_image *img;
    mdt_row row;
    plant();
    ck_assert_int_eq(
        mdt_image_open_file(NULL, &img, src_path(path, sizeof path, "data/Everything.dll"), 0), 0);
    ck_assert_int_eq(mdt_row_get(&row, img, MDT_TABLE_TypeDef, 0), MDT_ENOTFOUND);
    ck_assert_str_eq(mdt_error_last()->region, "TypeDef");
    ck_assert_int_eq(mdt_row_get(&row, img, MDT_TABLE_TypeDef, 1), 0);
    ck_assert_str_eq(mdt_error_last()->region, "TypeDef");
    ck_assert_int_eq(mdt_error_last()->code, MDT_ENOTFOUND);
    mdt_image_close(img);
}
END_TEST

/* Failures record what failed, also those that once did not. */
START_TEST(failures_record_their_cause)
{
    char path[4096];
    void *ctx = talloc_new(NULL);
    mdt_image *client;
    mdt_modset *set;
    mdt_modview *view;
    uint32_t rid;
    uintptr_t manifest;
    int tier;
    /* A table id that names no table: MDT_EINVAL, not a read past the
     * image's tables. */
    ck_assert_int_eq(
        mdt_image_open_file(ctx, &client,
                            src_path(path, sizeof path, "data/resolve/missing/GhostClient.exe"), 0),
        0);
    plant();
    ck_assert_int_eq(mdt_range_item(&rid, client, 0x50, 1), MDT_EINVAL);
    ck_assert_ptr_nonnull(strstr(mdt_error_last()->what, "no table with id 0x50"));
    ck_assert_ptr_null(mdt_table_schema_get(0x2D));
    ck_assert_int_eq(mdt_range_item(&rid, client, 0x2D, 1), MDT_EINVAL);
    /* An AssemblyRef nothing loaded is named as: MDT_ENOTFOUND, with its
     * name in the record (it used to leave the record as it was). */
    ck_assert_int_eq(mdt_modset_new(ctx, &set), 0);
    mdt_module_desc d = {1, client, 0, NULL, NULL, 0};
    ck_assert_int_eq(mdt_modset_add(set, &d, 0), 0);
    view = mdt_modset_acquire(set);
    int missing = 0;
    for (uint32_t i = 1; i <= mdt_table_rows(client, MDT_TABLE_AssemblyRef); i++) {
        plant();
        int e =
            mdt_assemblyref_bind(&manifest, &tier, view, 1, MDT_TOKEN(MDT_TABLE_AssemblyRef, i));
        if (e == MDT_ENOTFOUND) {
            missing++;
            ck_assert_int_eq(mdt_error_last()->code, MDT_ENOTFOUND);
            ck_assert_ptr_nonnull(strstr(mdt_error_last()->what, "no loaded assembly named"));
        }
    }
    ck_assert_int_gt(missing, 0);
    mdt_modview_release(view);
    talloc_free(ctx);
}
END_TEST

Suite *suite(void);

Suite *suite(void)
{
    Suite *s = suite_create("errors");
    TCase *tc = tcase_create("record");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, open_success_keeps_failure);
    tcase_add_test(tc, open_with_unreadable_codeview_keeps_failure);
    tcase_add_test(tc, open_with_unreadable_debug_directory_keeps_failure);
    tcase_add_test(tc, failure_replaces_record);
    tcase_add_test(tc, failures_record_their_cause);
    tcase_add_test(tc, calls_on_fixtures_keep_failure);
    tcase_add_test(tc, resolution_keeps_failure);
    tcase_add_test(tc, calls_on_corrupt_inputs_keep_failure);
    tcase_add_test(tc, handled_failures_in_names_keep_failure);
    tcase_add_test(tc, forwarders_through_damage_keep_failure);
    tcase_add_test(tc, instantiation_across_modules_keeps_failure);
    suite_add_tcase(s, tc);
    return s;
}
