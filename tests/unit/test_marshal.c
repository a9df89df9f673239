/* mdt_marshal_text on data/Marshal.dll and Everything.dll: each field's and
 * parameter's marshalling descriptor as ILDasm 10 writes it (up to spaces),
 * and damaged copies of the blobs (cut short, bytes past the end, a native
 * type no one defines, an array of arrays) refused with a located error;
 * mdt_ilasm_string, the ILAsm quoted strings it shares with mdinspect. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <talloc.h>

#include <mdtools/mdtools.h>

#include "paths.h"

static uint8_t *slurp(void *ctx, const char *rel, size_t *len)
{
    char p[1024];
    FILE *f = fopen(src_path(p, sizeof p, rel), "rb");
    ck_assert_msg(f != NULL, "cannot open %s", p);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = talloc_size(ctx, (size_t)n);
    ck_assert_int_eq(fread(b, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return b;
}

static mdt_image *open_buf(void *ctx, const uint8_t *b, size_t n)
{
    mdt_image *img = NULL;
    char msg[512];
    ck_assert_msg(mdt_image_open_buffer(ctx, &img, "Marshal.dll", b, n, 0) == 0, "%s",
                  mdt_error_message(msg, sizeof msg));
    return img;
}

/* The field named `name` of the module. */
static uint32_t field(const mdt_image *img, const char *name)
{
    uint32_t n = mdt_table_rows(img, MDT_TABLE_Field);
    for (uint32_t rid = 1; rid <= n; rid++) {
        mdt_row r;
        const char *s;
        if (mdt_row_get(&r, img, MDT_TABLE_Field, rid) == 0 &&
            mdt_row_string(&s, NULL, &r, MDT_COL_Field_Name) == 0 && strcmp(s, name) == 0)
            return MDT_TOKEN(MDT_TABLE_Field, rid);
    }
    ck_abort_msg("no field %s", name);
    return 0;
}

static char *text(void *ctx, const mdt_image *img, uint32_t tok)
{
    char *s = NULL, msg[512];
    int e = mdt_marshal_text(ctx, &s, img, tok);
    ck_assert_msg(e == 0, "0x%08x: %s", tok, mdt_error_message(msg, sizeof msg));
    return s;
}

/* ILDasm 10.0's text for each field of Marshal.Fields (its spaces after
 * `marshal(` and before `)` of interfaces dropped; it spells NATIVE_TYPE_UINT
 * `uint`, which ILAsm also reads as `unsigned int`). */
static const char *const fields[][2] = {
    {"B", "bool"},
    {"I1", "int8"},
    {"U1", "unsigned int8"},
    {"I2", "int16"},
    {"U2", "unsigned int16"},
    {"I4", "int32"},
    {"U4", "unsigned int32"},
    {"I8", "int64"},
    {"U8", "unsigned int64"},
    {"R4", "float32"},
    {"R8", "float64"},
    {"Cy", "currency"},
    {"Bstr", "bstr"},
    {"Lpstr", "lpstr"},
    {"Lpwstr", "lpwstr"},
    {"Lptstr", "lptstr"},
    {"Fixed", "fixed sysstring [32]"},
    {"Unk", "iunknown"},
    {"Disp", "idispatch"},
    {"Struct", "struct"},
    {"Intf", "interface"},
    {"SafeBstr", "safearray bstr"},
    {"SafeInt", "safearray int32"},
    {"SafeVariant", "safearray variant"},
    {"SafeBare", "safearray"},
    {"FixedBare", "fixed array [8]"},
    {"Int", "int"},
    {"UInt", "unsigned int"},
    {"ByValStr", "byvalstr"},
    {"AnsiBstr", "ansi bstr"},
    {"Tbstr", "tbstr"},
    {"VarBool", "variant bool"},
    {"Func", "method"},
    {"LpStruct", "lpstruct"},
    {"Err", "error"},
    {"Custom", "custom (\"Marshal.Custom, Marshal\", \"cookie\")"},
};

START_TEST(every_field_as_ildasm_writes_it)
{
    void *ctx = talloc_new(NULL);
    size_t n;
    uint8_t *b = slurp(ctx, "data/Marshal.dll", &n);
    mdt_image *img = open_buf(ctx, b, n);
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        ck_assert_str_eq(text(ctx, img, field(img, fields[i][0])), fields[i][1]);
    talloc_free(ctx);
}
END_TEST

/* Parameters, return values (sequence 0) and arrays' sizes, in Param row
 * order: Strlen(s), Flagged(ret, a..e), Wide(ret, o, u), Fast(s). */
START_TEST(parameters_and_return_values)
{
    static const char *const want[] = {
        "lpstr", "bool",   "int32[]", "int32[10]", "int32[+ 0]",     "int32[10 + 1]",
        "[]",    "lpwstr", "as any",  "iunknown",  "safearray bstr",
    };
    void *ctx = talloc_new(NULL);
    size_t n;
    uint8_t *b = slurp(ctx, "data/Marshal.dll", &n);
    mdt_image *img = open_buf(ctx, b, n);
    ck_assert_uint_eq(mdt_table_rows(img, MDT_TABLE_Param), 11);
    for (uint32_t rid = 1; rid <= 11; rid++)
        ck_assert_str_eq(text(ctx, img, MDT_TOKEN(MDT_TABLE_Param, rid)), want[rid - 1]);
    /* Everything.dll's, from mcs: a fixed array with its element type */
    uint8_t *e = slurp(ctx, "data/Everything.dll", &n);
    mdt_image *ev = open_buf(ctx, e, n);
    ck_assert_str_eq(text(ctx, ev, field(ev, "Values")), "fixed array [4] int32");
    ck_assert_str_eq(text(ctx, ev, field(ev, "Name")), "fixed sysstring [32]");
    talloc_free(ctx);
}
END_TEST

START_TEST(bad_arguments_and_no_descriptor)
{
    void *ctx = talloc_new(NULL);
    size_t n;
    char *s = (char *)"x";
    uint8_t *b = slurp(ctx, "data/Marshal.dll", &n);
    mdt_image *img = open_buf(ctx, b, n);
    ck_assert_int_eq(mdt_marshal_text(ctx, NULL, img, MDT_TOKEN(MDT_TABLE_Field, 1)), MDT_EINVAL);
    ck_assert_int_eq(mdt_marshal_text(ctx, &s, NULL, MDT_TOKEN(MDT_TABLE_Field, 1)), MDT_EINVAL);
    ck_assert_ptr_null(s);
    ck_assert_int_eq(mdt_marshal_text(ctx, &s, img, MDT_TOKEN(MDT_TABLE_TypeDef, 1)), MDT_EINVAL);
    /* a field without one (Everything.dll's first field is not marshalled) */
    uint8_t *e = slurp(ctx, "data/Everything.dll", &n);
    mdt_image *ev = open_buf(ctx, e, n);
    ck_assert_int_eq(mdt_marshal_text(ctx, &s, ev, MDT_TOKEN(MDT_TABLE_Field, 1)), MDT_ENOTFOUND);
    talloc_free(ctx);
}
END_TEST

/* " and \ escaped, control bytes (NUL included: the length counts) in
 * octal, UTF-8 and printable bytes as they are; no string only when empty. */
START_TEST(ilasm_strings_quote_and_escape)
{
    void *ctx = talloc_new(NULL);
    char *s = NULL;
    const char in[] = "a\"b\\c\n\x7f\x01\0d\xc3\xa9 'x'";
    ck_assert_int_eq(mdt_ilasm_string(ctx, &s, in, sizeof in - 1), 0);
    ck_assert_str_eq(s, "\"a\\\"b\\\\c\\012\\177\\001\\000d\xc3\xa9 'x'\"");
    ck_assert_int_eq(mdt_ilasm_string(ctx, &s, NULL, 0), 0);
    ck_assert_str_eq(s, "\"\"");
    ck_assert_int_eq(mdt_ilasm_string(ctx, NULL, "x", 1), MDT_EINVAL);
    ck_assert_int_eq(mdt_ilasm_string(ctx, &s, NULL, 1), MDT_EINVAL);
    ck_assert_ptr_null(s);
    talloc_free(ctx);
}
END_TEST

/* A copy of Marshal.dll whose descriptor of field `name` is changed by
 * `edit` (given the blob's length byte and the blob); the result and the
 * error code. */
static int damaged(void *ctx, const char *name, void (*edit)(uint8_t *lenbyte, uint8_t *blob),
                   char **out, char *msg, size_t msglen)
{
    size_t n;
    uint8_t *b = slurp(ctx, "data/Marshal.dll", &n);
    mdt_image *img = open_buf(ctx, b, n);
    uint32_t tok = field(img, name), key, rid, len;
    mdt_find fi;
    mdt_row r;
    const uint8_t *blob;
    ck_assert_int_eq(mdt_coded_encode(&key, MDT_CI_HasFieldMarshal, tok), 0);
    ck_assert_int_eq(
        mdt_find_init(&fi, img, MDT_TABLE_FieldMarshal, MDT_COL_FieldMarshal_Parent, key), 0);
    ck_assert_int_eq(mdt_find_next(&rid, &fi), 0);
    ck_assert_int_eq(mdt_row_get(&r, img, MDT_TABLE_FieldMarshal, rid), 0);
    ck_assert_int_eq(mdt_row_blob(&blob, &len, &r, MDT_COL_FieldMarshal_NativeType), 0);
    /* the image reads the buffer in place: the blob is at the same offset in a copy */
    uint8_t *copy = talloc_memdup(ctx, b, n);
    size_t off = (size_t)(blob - b);
    ck_assert(off > 0 && off + len <= n && len < 0x80);
    edit(copy + off - 1, copy + off);
    mdt_image *bad = open_buf(ctx, copy, n);
    int e = mdt_marshal_text(ctx, out, bad, tok);
    mdt_error_message(msg, msglen);
    return e;
}

static void cut_size(uint8_t *lenbyte, uint8_t *blob)
{
    (void)blob;
    *lenbyte = 1;
}
static void longer(uint8_t *lenbyte, uint8_t *blob)
{
    (void)blob;
    *lenbyte += 1;
}
static void undefined_type(uint8_t *lenbyte, uint8_t *blob)
{
    (void)lenbyte;
    blob[0] = 0x01;
}
static void top_max(uint8_t *lenbyte, uint8_t *blob)
{
    (void)lenbyte;
    blob[0] = 0x50;
}
static void nested_array(uint8_t *lenbyte, uint8_t *blob)
{
    *lenbyte = 2;
    blob[0] = 0x2a;
    blob[1] = 0x2a;
}
static void cut_custom(uint8_t *lenbyte, uint8_t *blob)
{
    (void)blob;
    *lenbyte = 5;
}
static void control_in_custom(uint8_t *lenbyte, uint8_t *blob)
{
    (void)lenbyte;
    blob[4] = 0x07;
}

START_TEST(damaged_descriptors_are_located_errors)
{
    void *ctx = talloc_new(NULL);
    char *s = NULL, msg[512];
    static const struct {
        const char *field;
        void (*edit)(uint8_t *, uint8_t *);
        int code;
        const char *says;
    } cases[] = {
        {"Fixed", cut_size, MDT_ETRUNC, "fixed string size"},
        {"B", longer, MDT_EBADIMAGE, "after the marshalling descriptor"},
        {"B", undefined_type, MDT_EUNSUPPORTED, "native type 0x01"},
        {"B", top_max, MDT_EBADIMAGE, "native type MAX"},
        {"Fixed", nested_array, MDT_EBADIMAGE, "array of arrays"},
        {"Custom", cut_custom, MDT_ETRUNC, "custom marshaler"},
        {"Custom", control_in_custom, MDT_EUNSUPPORTED, "control byte"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int e = damaged(ctx, cases[i].field, cases[i].edit, &s, msg, sizeof msg);
        ck_assert_msg(e == cases[i].code, "case %zu: %d (%s)", i, e, msg);
        ck_assert_ptr_null(s);
        ck_assert_msg(strstr(msg, cases[i].says) && strstr(msg, "#Blob"), "case %zu: %s", i, msg);
    }
    talloc_free(ctx);
}
END_TEST

Suite *suite(void);
Suite *suite(void)
{
    Suite *s = suite_create("marshal");
    TCase *tc = tcase_create("marshal");
    tcase_add_test(tc, every_field_as_ildasm_writes_it);
    tcase_add_test(tc, parameters_and_return_values);
    tcase_add_test(tc, bad_arguments_and_no_descriptor);
    tcase_add_test(tc, damaged_descriptors_are_located_errors);
    tcase_add_test(tc, ilasm_strings_quote_and_escape);
    suite_add_tcase(s, tc);
    return s;
}
