/* The image and metadata layers against what the fixtures' sources say
 * (facts in data/README.md, read there from monodis and sn). */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <talloc.h>

#include <mdtools/mdtools.h>

#include "paths.h"

static mdt_image *open_rel(void *ctx, const char *rel)
{
    char p[1024], msg[512];
    mdt_image *img = NULL;
    ck_assert_msg(mdt_image_open_file(ctx, &img, src_path(p, sizeof p, rel), 0) == 0, "%s",
                  mdt_error_message(msg, sizeof msg));
    return img;
}

static const char *str_cell(const mdt_image *img, unsigned t, uint32_t rid, unsigned col)
{
    mdt_row r;
    const char *s;
    ck_assert_int_eq(mdt_row_get(&r, img, t, rid), 0);
    ck_assert_int_eq(mdt_row_string(&s, NULL, &r, col), 0);
    return s;
}

static char *hex(void *ctx, const uint8_t *p, uint32_t n)
{
    char *s = talloc_zero_size(ctx, n * 3 + 1);
    for (uint32_t i = 0; i < n; i++)
        sprintf(s + 3 * i, i + 1 < n ? "%02X " : "%02X", p[i]);
    return s;
}

START_TEST(hello_headers)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_rel(ctx, "data/sample/Hello.exe");
    const mdt_pe_info *pe = mdt_image_pe_info(img);
    ck_assert(!pe->pe32plus);
    ck_assert_uint_eq(mdt_image_section_count(img), 3);
    ck_assert_str_eq(mdt_image_section(img, 0)->name, ".text");
    ck_assert_uint_eq(mdt_image_section(img, 0)->virtual_address, 0x2000);
    ck_assert_str_eq(mdt_image_section(img, 1)->name, ".rsrc");
    ck_assert_uint_eq(mdt_image_section(img, 2)->virtual_address, 0x6000);
    ck_assert_uint_eq(pe->cli_flags, MDT_COMIMAGE_ILONLY);
    ck_assert_uint_eq(pe->entry_point, 0x06000001);
    ck_assert_uint_eq(pe->metadata.rva, 0x2060);
    ck_assert_uint_eq(pe->metadata.size, 576);
    const mdt_md_info *md = mdt_image_md_info(img);
    ck_assert_str_eq(md->version, "v4.0.30319");
    ck_assert_uint_eq(md->heap_sizes, 0);
    ck_assert_uint_eq(md->nstreams, 5);
    const char *names[] = {"#~", "#Strings", "#US", "#GUID", "#Blob"};
    for (size_t i = 0; i < 5; i++) {
        ck_assert_str_eq(mdt_image_stream(img, i)->name, names[i]);
        ck_assert(mdt_image_stream(img, i)->used);
    }
    ck_assert_uint_eq(mdt_image_warning_count(img), 0);
    talloc_free(ctx);
}
END_TEST

START_TEST(hello_rows)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_rel(ctx, "data/sample/Hello.exe");
    static const struct {
        unsigned t;
        uint32_t n;
    } counts[] = {
        {MDT_TABLE_Module, 1},          {MDT_TABLE_TypeRef, 3},  {MDT_TABLE_TypeDef, 2},
        {MDT_TABLE_MethodDef, 1},       {MDT_TABLE_Param, 1},    {MDT_TABLE_MemberRef, 2},
        {MDT_TABLE_CustomAttribute, 1}, {MDT_TABLE_Assembly, 1}, {MDT_TABLE_AssemblyRef, 1}};
    uint32_t total = 0;
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
        ck_assert_uint_eq(mdt_table_rows(img, counts[i].t), counts[i].n);
    for (unsigned t = 0; t < MDT_TABLE_MAX; t++)
        total += mdt_table_rows(img, t);
    ck_assert_uint_eq(total, 13);

    mdt_row r;
    uint32_t tok;
    ck_assert_str_eq(str_cell(img, MDT_TABLE_TypeDef, 2, MDT_COL_TypeDef_TypeName), "Program");
    ck_assert_str_eq(str_cell(img, MDT_TABLE_TypeDef, 2, MDT_COL_TypeDef_TypeNamespace), "Sample");
    ck_assert_int_eq(mdt_row_get(&r, img, MDT_TABLE_TypeDef, 2), 0);
    ck_assert_uint_eq(mdt_row_raw(&r, MDT_COL_TypeDef_Flags), 0x100181);
    ck_assert_int_eq(mdt_row_token(&tok, &r, MDT_COL_TypeDef_Extends), 0);
    ck_assert_uint_eq(tok, 0x01000002);
    ck_assert_str_eq(str_cell(img, MDT_TABLE_TypeRef, 2, MDT_COL_TypeRef_TypeName), "Object");
    ck_assert_str_eq(str_cell(img, MDT_TABLE_MethodDef, 1, MDT_COL_MethodDef_Name), "Main");
    ck_assert_str_eq(str_cell(img, MDT_TABLE_Param, 1, MDT_COL_Param_Name), "args");
    const uint8_t *b;
    uint32_t len;
    ck_assert_int_eq(mdt_row_get(&r, img, MDT_TABLE_MethodDef, 1), 0);
    ck_assert_int_eq(mdt_row_blob(&b, &len, &r, MDT_COL_MethodDef_Signature), 0);
    ck_assert_str_eq(hex(ctx, b, len), "00 01 08 1D 0E");
    uint32_t first, count;
    ck_assert_int_eq(mdt_row_range(&first, &count, &r, MDT_COL_MethodDef_ParamList), 0);
    ck_assert_uint_eq(first, 1);
    ck_assert_uint_eq(count, 1);
    const uint8_t *u;
    uint32_t n;
    int flag;
    char *s;
    ck_assert_int_eq(mdt_heap_us(&u, &n, &flag, img, 1), 0);
    ck_assert_int_eq(mdt_heap_utf16_to_utf8(ctx, &s, NULL, NULL, u, n), 0);
    ck_assert_str_eq(s, "Hello, metadata!");
    ck_assert_int_eq(flag, 0);
    talloc_free(ctx);
}
END_TEST

START_TEST(hello_identity_and_mvid)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_rel(ctx, "data/sample/Hello.exe");
    mdt_identity id;
    char buf[256], g[37];
    uint8_t mvid[16];
    ck_assert_int_eq(mdt_assembly_identity(&id, img), 0);
    ck_assert_str_eq(mdt_identity_format(buf, sizeof buf, &id),
                     "Hello, Version=0.0.0.0, Culture=neutral, PublicKeyToken=null");
    ck_assert_uint_eq(id.hash_alg, 0x8004);
    ck_assert_int_eq(mdt_image_mvid(mvid, img), 0);
    ck_assert_str_eq(mdt_heap_guid_format(g, mvid), "1aebbe3f-ff07-4cd3-b28e-26fad279ee8e");
    ck_assert_int_eq(mdt_assemblyref_identity(&id, img, 1), 0);
    ck_assert_str_eq(mdt_identity_format(buf, sizeof buf, &id),
                     "mscorlib, Version=4.0.0.0, Culture=neutral, PublicKeyToken=b77a5c561934e089");
    talloc_free(ctx);
}
END_TEST

static const struct {
    unsigned t;
    uint32_t n;
} everything_counts[] = {{MDT_TABLE_Module, 1},         {MDT_TABLE_TypeRef, 58},
                         {MDT_TABLE_TypeDef, 40},       {MDT_TABLE_Field, 103},
                         {MDT_TABLE_MethodDef, 93},     {MDT_TABLE_Param, 77},
                         {MDT_TABLE_InterfaceImpl, 4},  {MDT_TABLE_MemberRef, 59},
                         {MDT_TABLE_Constant, 34},      {MDT_TABLE_CustomAttribute, 47},
                         {MDT_TABLE_FieldMarshal, 7},   {MDT_TABLE_DeclSecurity, 3},
                         {MDT_TABLE_ClassLayout, 6},    {MDT_TABLE_FieldLayout, 3},
                         {MDT_TABLE_StandAloneSig, 12}, {MDT_TABLE_EventMap, 3},
                         {MDT_TABLE_Event, 5},          {MDT_TABLE_PropertyMap, 6},
                         {MDT_TABLE_Property, 11},      {MDT_TABLE_MethodSemantics, 27},
                         {MDT_TABLE_MethodImpl, 5},     {MDT_TABLE_ModuleRef, 2},
                         {MDT_TABLE_TypeSpec, 23},      {MDT_TABLE_ImplMap, 3},
                         {MDT_TABLE_FieldRVA, 2},       {MDT_TABLE_Assembly, 1},
                         {MDT_TABLE_AssemblyRef, 2},    {MDT_TABLE_ManifestResource, 1},
                         {MDT_TABLE_NestedClass, 12},   {MDT_TABLE_GenericParam, 21},
                         {MDT_TABLE_MethodSpec, 9},     {MDT_TABLE_GenericParamConstraint, 7}};

static void check_everything_tables(const mdt_image *img)
{
    uint32_t total = 0;
    for (size_t i = 0; i < sizeof everything_counts / sizeof everything_counts[0]; i++)
        ck_assert_msg(mdt_table_rows(img, everything_counts[i].t) == everything_counts[i].n,
                      "table %s", mdt_table_schema_get(everything_counts[i].t)->name);
    for (unsigned t = 0; t < MDT_TABLE_MAX; t++)
        total += mdt_table_rows(img, t);
    ck_assert_uint_eq(total, 687);
    ck_assert_uint_eq(mdt_image_md_info(img)->valid, 0x00001F093FB7FF57ull);
    ck_assert_uint_eq(mdt_image_md_info(img)->sorted, 0x000016003301FA00ull);
}

static void check_everything_identity(const mdt_image *img)
{
    mdt_identity id;
    char buf[256];
    ck_assert_int_eq(mdt_assembly_identity(&id, img), 0);
    ck_assert_str_eq(
        mdt_identity_format(buf, sizeof buf, &id),
        "Everything, Version=1.2.3.4, Culture=neutral, PublicKeyToken=6caac724c175405d");
    ck_assert_uint_eq(id.flags, MDT_AFL_PUBLICKEY);
    ck_assert_uint_eq(id.public_key_len, 160);
    ck_assert_int_eq(memcmp(id.public_key + 20, "RSA1", 4), 0);
}

START_TEST(everything_tables_and_identity)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_rel(ctx, "data/Everything.dll");
    check_everything_tables(img);
    check_everything_identity(img);
    const mdt_pe_info *pe = mdt_image_pe_info(img);
    ck_assert_uint_eq(pe->cli_flags, MDT_COMIMAGE_ILONLY | MDT_COMIMAGE_STRONGNAMESIGNED);
    ck_assert_uint_ne(pe->strong_name_signature.rva, 0);
    ck_assert_uint_eq(pe->strong_name_signature.size, 128); /* RSA 1024 */
    ck_assert_uint_eq(pe->entry_point, 0);
    ck_assert_uint_eq(pe->metadata.rva, 0x27A0);
    ck_assert_uint_eq(mdt_image_section_count(img), 4);
    ck_assert_str_eq(mdt_image_section(img, 1)->name, ".sdata");
    talloc_free(ctx);
}
END_TEST

START_TEST(raw_metadata_blob_matches_its_pe)
{
    void *ctx = talloc_new(NULL);
    mdt_image *raw = open_rel(ctx, "data/raw/Everything.md");
    size_t len;
    ck_assert_int_eq(mdt_image_kind(raw), MDT_KIND_METADATA);
    mdt_image_bytes(&len, raw);
    ck_assert_uint_eq(len, 12228);
    check_everything_tables(raw);
    check_everything_identity(raw);
    ck_assert_uint_eq(mdt_image_pe_info(raw)->metadata.rva, 0);
    talloc_free(ctx);
}
END_TEST

START_TEST(everything_layout_and_field_data)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_rel(ctx, "data/Everything.dll");
    /* Union::I, F, L at FieldLayout offsets 0, 0, 8. */
    static const uint32_t offs[] = {0, 0, 8};
    for (uint32_t k = 0; k < 3; k++) {
        mdt_find f;
        uint32_t rid;
        mdt_row r;
        ck_assert_int_eq(
            mdt_find_init(&f, img, MDT_TABLE_FieldLayout, MDT_COL_FieldLayout_Field, 0x16 + k), 0);
        ck_assert_int_eq(mdt_find_next(&rid, &f), 0);
        ck_assert_int_eq(mdt_row_get(&r, img, MDT_TABLE_FieldLayout, rid), 0);
        ck_assert_uint_eq(mdt_row_raw(&r, MDT_COL_FieldLayout_Offset), offs[k]);
    }
    /* FieldRVA data: primes 2..19 as int32 at RVA 0x6000. */
    uint8_t buf[32];
    static const int primes[] = {2, 3, 5, 7, 11, 13, 17, 19};
    ck_assert_int_eq(mdt_image_read_rva(buf, 32, img, 0x6000), 0);
    for (int i = 0; i < 8; i++)
        ck_assert_int_eq(buf[4 * i] | buf[4 * i + 1] << 8, primes[i]);
    /* TypeDef 37's MethodList is one past the last MethodDef: empty. */
    mdt_row r;
    uint32_t first, count;
    ck_assert_int_eq(mdt_row_get(&r, img, MDT_TABLE_TypeDef, 37), 0);
    ck_assert_int_eq(mdt_row_range(&first, &count, &r, MDT_COL_TypeDef_MethodList), 0);
    ck_assert_uint_eq(first, 94);
    ck_assert_uint_eq(count, 0);
    /* Nested three deep, full style. */
    char *s;
    ck_assert_int_eq(mdt_token_name(ctx, &s, img, 0x02000018, NULL), 0);
    ck_assert_str_eq(s, "Everything.Outer+Middle+Inner+Innermost");
    talloc_free(ctx);
}
END_TEST

/* mdt_token_metadata_name: the name as stored, for types and members only
 * (what mdinspect's JSON and batch --json print as metadata_name). */
START_TEST(everything_metadata_names)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_rel(ctx, "data/Everything.dll");
    mdt_name_cache *c;
    char *s, buf[64], tiny[8];
    size_t len;
    ck_assert_int_eq(mdt_token_metadata_name(ctx, &s, img, 0x02000009, NULL), 0);
    ck_assert_str_eq(s, "Everything.IConsumer`1");
    ck_assert_int_eq(mdt_name_cache_new(ctx, &c, img, MDT_STYLE_FULL, MDT_NAME_METADATA), 0);
    ck_assert_int_eq(mdt_token_metadata_name_buf(buf, sizeof buf, &len, img, 0x0200001d, c), 0);
    ck_assert_str_eq(buf, "Everything.Constrained`5");
    ck_assert_uint_eq(len, strlen(buf));
    ck_assert_int_eq(mdt_token_metadata_name_buf(tiny, sizeof tiny, &len, img, 0x0200001d, c),
                     MDT_ETRUNC);
    /* the same as the printer's own flag, member or type */
    for (uint32_t tok = 0x06000001; tok <= 0x06000008; tok++) {
        mdt_name_opts o = {MDT_STYLE_FULL, MDT_NAME_METADATA, MDT_NAME_OPTS_VERSION, NULL, NULL};
        char *want;
        ck_assert_int_eq(mdt_token_name(ctx, &want, img, tok, &o), 0);
        ck_assert_int_eq(mdt_token_metadata_name(ctx, &s, img, tok, NULL), 0);
        ck_assert_str_eq(s, want);
    }
    /* no metadata name: a nil token, an assembly, a module */
    ck_assert_int_eq(mdt_token_metadata_name(ctx, &s, img, 0x02000000, NULL), MDT_EINVAL);
    ck_assert_int_eq(mdt_token_metadata_name(ctx, &s, img, 0x20000001, NULL), MDT_EINVAL);
    ck_assert_int_eq(mdt_token_metadata_name_buf(buf, sizeof buf, NULL, img, 0x00000001, NULL),
                     MDT_EINVAL);
    ck_assert_int_eq(mdt_token_metadata_name(ctx, &s, img, 0x02ffffff, NULL), MDT_ENOTFOUND);
    mdt_error_clear();
    talloc_free(ctx);
}
END_TEST

START_TEST(netmodule_has_no_assembly_row)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_rel(ctx, "data/MultiPart.netmodule");
    mdt_identity id;
    char msg[512];
    ck_assert_int_eq(mdt_assembly_identity(&id, img), MDT_ENOTFOUND);
    ck_assert_ptr_nonnull(strstr(mdt_error_message(msg, sizeof msg), "no Assembly row"));
    ck_assert_uint_eq(mdt_table_rows(img, MDT_TABLE_TypeDef), 8);
    ck_assert_str_eq(str_cell(img, MDT_TABLE_TypeDef, 2, MDT_COL_TypeDef_TypeName), "Helper");
    img = open_rel(ctx, "data/MultiMain.dll");
    ck_assert_uint_eq(mdt_table_rows(img, MDT_TABLE_File), 2);
    ck_assert_uint_eq(mdt_table_rows(img, MDT_TABLE_ExportedType), 5);
    talloc_free(ctx);
}
END_TEST

START_TEST(forwarders_and_client_refs)
{
    void *ctx = talloc_new(NULL);
    mdt_image *lib = open_rel(ctx, "data/fwd/v2/Lib.dll");
    mdt_image *client = open_rel(ctx, "data/fwd/Client.exe");
    mdt_identity id;
    char buf[256];
    ck_assert_uint_eq(mdt_table_rows(lib, MDT_TABLE_ExportedType), 6);
    for (uint32_t i = 1; i <= mdt_table_rows(client, MDT_TABLE_AssemblyRef); i++) {
        ck_assert_int_eq(mdt_assemblyref_identity(&id, client, i), 0);
        if (!strcmp(id.name, "Lib"))
            ck_assert_str_eq(
                mdt_identity_format(buf, sizeof buf, &id),
                "Lib, Version=1.0.0.0, Culture=neutral, PublicKeyToken=6caac724c175405d");
    }
    /* Names of the forwarders, nested ones through their Implementation
     * chain, in the full and reflection styles; the module and assembly. */
    static const struct {
        uint32_t token;
        int style;
        const char *name;
    } names[] = {
        {0x27000001, MDT_STYLE_FULL, "Fwd.Widget"},
        {0x27000004, MDT_STYLE_FULL, "Fwd.Outer+Inner+Deeper"},
        {0x27000005, MDT_STYLE_FULL, "Fwd.Box<>"},
        {0x27000005, MDT_STYLE_REFLECTION, "Fwd.Box`1"},
        {0x00000001, MDT_STYLE_FULL, "[module Lib.dll]"},
        {0x20000001, MDT_STYLE_FULL,
         "Lib, Version=2.0.0.0, Culture=neutral, PublicKeyToken=6caac724c175405d"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        mdt_name_opts o = {.style = names[i].style};
        char *s = NULL;
        ck_assert_int_eq(mdt_token_name(ctx, &s, lib, names[i].token, &o), 0);
        ck_assert_str_eq(s, names[i].name);
    }
    char *s = NULL;
    ck_assert_int_eq(mdt_token_name(ctx, &s, lib, 0x27000007, NULL), MDT_ENOTFOUND);
    talloc_free(ctx);
}
END_TEST

START_TEST(buffer_and_copy_opens_match_file)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_rel(ctx, "data/Everything.dll"), *a, *b;
    size_t len;
    const uint8_t *bytes = mdt_image_bytes(&len, img);
    ck_assert_int_eq(mdt_image_open_buffer(ctx, &a, "borrowed", bytes, len, 0), 0);
    ck_assert_int_eq(mdt_image_open_buffer(ctx, &b, "copy", bytes, len, MDT_OPEN_COPY), 0);
    ck_assert_ptr_eq(mdt_image_bytes(NULL, a), bytes);
    ck_assert_ptr_ne(mdt_image_bytes(NULL, b), bytes);
    check_everything_tables(a);
    check_everything_tables(b);
    talloc_free(img); /* the copy must not depend on the mapping */
    check_everything_identity(b);
    talloc_free(ctx);
}
END_TEST

/* Owners of Everything.dll's rows, as its source declares them. */
START_TEST(everything_row_owners)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_rel(ctx, "data/Everything.dll");
    static const struct {
        uint32_t token, owner;
    } want[] = {
        {0x17000001, 0x02000004}, /* InfoAttribute::Text */
        {0x17000002, 0x02000006}, /* IShape::Name */
        {0x17000003, 0x0200000A}, /* Circle::Everything.IShape.Name */
        {0x17000004, 0x0200000A}, /* Circle::Radius */
        {0x14000001, 0x02000006}, /* IShape::Changed */
        {0x14000002, 0x0200000A}, /* Circle::Everything.IShape.Changed */
        {0x14000003, 0x0200000A}, /* Circle::Resized */
        {0x02000013, 0x02000012}, /* Primitives/ThreadStaticHolder */
        {0x02000012, 0},          /* not nested */
        {0x00000001, 0},          /* Module: no owner */
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        uint32_t o = 1;
        ck_assert_int_eq(mdt_token_owner(&o, img, want[i].token), 0);
        ck_assert_msg(o == want[i].owner, "owner of 0x%08x: 0x%08x, expected 0x%08x", want[i].token,
                      o, want[i].owner);
    }
    /* Param -> MethodDef -> TypeDef, and parent columns. */
    uint32_t o;
    for (uint32_t rid = 1; rid <= mdt_table_rows(img, MDT_TABLE_Param); rid++) {
        ck_assert_int_eq(mdt_token_owner(&o, img, MDT_TOKEN(MDT_TABLE_Param, rid)), 0);
        ck_assert_uint_eq(MDT_TOKEN_TABLE(o), MDT_TABLE_MethodDef);
    }
    ck_assert_int_eq(mdt_token_owner(&o, img, MDT_TOKEN(MDT_TABLE_GenericParam, 1)), 0);
    ck_assert(MDT_TOKEN_TABLE(o) == MDT_TABLE_TypeDef || MDT_TOKEN_TABLE(o) == MDT_TABLE_MethodDef);
    /* Rows that do not exist: a located error, not an owner. */
    ck_assert_int_eq(mdt_token_owner(&o, img, MDT_TOKEN(MDT_TABLE_Param, 9999)), MDT_ENOTFOUND);
    ck_assert_int_eq(mdt_token_owner(&o, img, MDT_TOKEN(MDT_TABLE_Event, 0)), MDT_ENOTFOUND);
    ck_assert_int_eq(mdt_token_owner(&o, NULL, 0x17000001), MDT_EINVAL);
    talloc_free(ctx);
}
END_TEST

/* The owner by a plain scan of every run: what the binary search must
 * agree with. */
static uint32_t scan_owner(const mdt_image *img, unsigned table, unsigned col, unsigned target,
                           uint32_t rid)
{
    for (uint32_t i = 1; i <= mdt_table_rows(img, table); i++) {
        mdt_row r;
        uint32_t first, count, item;
        if (mdt_row_get(&r, img, table, i) || mdt_row_range(&first, &count, &r, col))
            continue;
        for (uint32_t k = 0; k < count; k++)
            if (mdt_range_item(&item, img, target, first + k) == 0 && item == rid)
                return MDT_TOKEN(table, i);
    }
    return 0;
}

static size_t owners_agree_with_scan(const mdt_image *img, const char *file)
{
    static const struct {
        unsigned table, col, target;
    } runs[] = {
        {MDT_TABLE_TypeDef, MDT_COL_TypeDef_MethodList, MDT_TABLE_MethodDef},
        {MDT_TABLE_TypeDef, MDT_COL_TypeDef_FieldList, MDT_TABLE_Field},
        {MDT_TABLE_MethodDef, MDT_COL_MethodDef_ParamList, MDT_TABLE_Param},
        {MDT_TABLE_PropertyMap, MDT_COL_PropertyMap_PropertyList, MDT_TABLE_Property},
        {MDT_TABLE_EventMap, MDT_COL_EventMap_EventList, MDT_TABLE_Event},
    };
    size_t n = 0;
    for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++) {
        uint32_t rows = mdt_table_rows(img, runs[k].target);
        for (uint32_t rid = 1; rid <= rows && rid <= 20000; rid++) {
            uint32_t want = scan_owner(img, runs[k].table, runs[k].col, runs[k].target, rid), got;
            if (want && runs[k].table != MDT_TABLE_TypeDef &&
                runs[k].table != MDT_TABLE_MethodDef) {
                mdt_row r;
                ck_assert_int_eq(mdt_row_get(&r, img, runs[k].table, MDT_TOKEN_RID(want)), 0);
                ck_assert_int_eq(mdt_row_token(&want, &r,
                                               runs[k].table == MDT_TABLE_PropertyMap
                                                   ? MDT_COL_PropertyMap_Parent
                                                   : MDT_COL_EventMap_Parent),
                                 0);
            }
            if (mdt_token_owner(&got, img, MDT_TOKEN(runs[k].target, rid)) != 0)
                continue; /* an unreadable row: its error is tested elsewhere */
            ck_assert_msg(got == want, "%s: owner of 0x%08x is 0x%08x, a scan says 0x%08x", file,
                          MDT_TOKEN(runs[k].target, rid), got, want);
            n++;
        }
    }
    return n;
}

/* Every fixture and corpus file that opens, including uncompressed (#-)
 * metadata whose runs go through Ptr tables. */
START_TEST(row_owners_agree_with_a_scan)
{
    static const char *files[] = {
        "data/Everything.dll",      "data/Sigs.dll",    "data/MultiMain.dll",
        "data/MultiPart.netmodule", "data/MultiIL.dll", "data/sample/Hello.exe",
    };
    void *ctx = talloc_new(NULL);
    size_t rows = 0, with_ptr = 0;
    char dir[1024];
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        rows += owners_agree_with_scan(open_rel(ctx, files[i]), files[i]);
    DIR *d = opendir(src_path(dir, sizeof dir, "data/corpus/asmresolver"));
    ck_assert_ptr_nonnull(d);
    for (struct dirent *e; (e = readdir(d));) {
        char p[2048];
        mdt_image *img = NULL;
        if (e->d_name[0] == '.')
            continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (mdt_image_open_file(ctx, &img, p, 0) != 0)
            continue; /* the corpus holds images that must not open */
        rows += owners_agree_with_scan(img, e->d_name);
        with_ptr += mdt_table_rows(img, MDT_TABLE_MethodPtr) +
                        mdt_table_rows(img, MDT_TABLE_FieldPtr) +
                        mdt_table_rows(img, MDT_TABLE_ParamPtr) >
                    0;
    }
    closedir(d);
    /* #- metadata with a MethodPtr table (tests/corrupt/make-cases.py):
     * position 1 names MethodDef 2, position 2 a row that does not exist. */
    static const char *ptr_files[] = {"tests/corrupt/cases/methodptr-beyond.bin",
                                      "tests/corrupt/cases/methodptr-nil-entry.bin"};
    for (size_t i = 0; i < 2; i++) {
        mdt_image *img = open_rel(ctx, ptr_files[i]);
        uint32_t o;
        rows += owners_agree_with_scan(img, ptr_files[i]);
        with_ptr += mdt_table_rows(img, MDT_TABLE_MethodPtr) > 0;
        ck_assert_int_eq(mdt_token_owner(&o, img, 0x06000002), 0);
        ck_assert_uint_eq(o, 0x02000002); /* Program, through MethodPtr position 1 */
    }
    /* List starts that go down (tests/corrupt/cases.tsv): the owner is the
     * row whose run holds the member (a run begins no lower than the runs
     * before it end), from the index the first owner query builds
     * (md/runs.c). */
    static const char *backwards[] = {"tests/corrupt/cases/fieldlist-backwards.bin",
                                      "tests/corrupt/cases/methodlist-backwards.bin"};
    for (size_t i = 0; i < 2; i++) {
        mdt_image *img = open_rel(ctx, backwards[i]);
        bool warned = false;
        for (size_t k = 0; k < mdt_image_warning_count(img); k++)
            warned |= strstr(mdt_image_warning(img, k), "go down") != NULL;
        ck_assert_msg(warned, "%s: no warning about list starts", backwards[i]);
        rows += owners_agree_with_scan(img, backwards[i]);
    }
    fprintf(stderr, "row owners: %zu rows checked, %zu images with Ptr tables\n", rows, with_ptr);
    ck_assert_uint_gt(rows, 1000);
    ck_assert_uint_ge(with_ptr, 2);
    talloc_free(ctx);
}
END_TEST

Suite *suite(void);
Suite *suite(void)
{
    Suite *s = suite_create("fixtures");
    TCase *tc = tcase_create("fixtures");
    tcase_add_test(tc, hello_headers);
    tcase_add_test(tc, hello_rows);
    tcase_add_test(tc, hello_identity_and_mvid);
    tcase_add_test(tc, everything_tables_and_identity);
    tcase_add_test(tc, raw_metadata_blob_matches_its_pe);
    tcase_add_test(tc, everything_layout_and_field_data);
    tcase_add_test(tc, everything_metadata_names);
    tcase_add_test(tc, netmodule_has_no_assembly_row);
    tcase_add_test(tc, forwarders_and_client_refs);
    tcase_add_test(tc, buffer_and_copy_opens_match_file);
    tcase_add_test(tc, everything_row_owners);
    tcase_add_test(tc, row_owners_agree_with_a_scan);
    suite_add_tcase(s, tc);
    return s;
}
