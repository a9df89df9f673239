/* Constant table values (II.22.9), decimals and 128-bit integers (GMP),
 * and exact floating-point text. Facts from data/README.md. */
#include <float.h>
#include <math.h>

#include "gtest.h"

static char *value_text(void *ctx, const mdt_value *v)
{
    char *s, msg[512];
    ck_assert_msg(mdt_value_format(ctx, &s, v, NULL) == 0, "%s",
                  mdt_error_message(msg, sizeof msg));
    return s;
}

START_TEST(every_constant_of_everything)
{
    static const struct {
        uint8_t type;
        uint32_t parent;
        const char *text;
    } want[34] = {
        {0x05, 0x04000002, "1"},
        {0x05, 0x04000003, "2"},
        {0x05, 0x04000004, "4"},
        {0x0A, 0x04000006, "0"},
        {0x0A, 0x04000007, "1"},
        {0x0A, 0x04000008, "2"},
        {0x0A, 0x04000009, "3"},
        {0x0A, 0x0400000A, "-9223372036854775808"},
        {0x08, 0x0800003D, "5"},
        {0x02, 0x0400003E, "true"},
        {0x0E, 0x0800003E, "\"def\""},
        {0x03, 0x0400003F, "'x'"},
        {0x05, 0x0800003F, "4"},
        {0x04, 0x04000040, "-8"},
        {0x12, 0x08000040, "null"},
        {0x05, 0x04000041, "200"},
        {0x0D, 0x08000041, "1.25"},
        {0x06, 0x04000042, "-1000"},
        {0x07, 0x04000043, "60000"},
        {0x03, 0x08000043, "'q'"},
        {0x08, 0x04000044, "-100000"},
        {0x0A, 0x08000044, "-1"},
        {0x09, 0x04000045, "4000000000"},
        {0x0A, 0x04000046, "-9223372036854775808"},
        {0x08, 0x08000046, "7"},
        {0x0B, 0x04000047, "18446744073709551615"},
        {0x0C, 0x04000048, "1.5"},
        {0x0D, 0x04000049, "-2.25"},
        {0x0E, 0x0400004A, "\"const string\""},
        {0x0E, 0x0400004B, "\"\""},
        {0x12, 0x0400004C, "null"},
        {0x12, 0x0400004D, "null"},
        {0x05, 0x0400004E, "4"},
        {0x08, 0x04000055, "0"},
    };
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_rel(ctx, "data/Everything.dll");
    ck_assert_uint_eq(mdt_table_rows(img, MDT_TABLE_Constant), 34);
    for (uint32_t i = 0; i < 34; i++) {
        mdt_value v, byparent;
        char msg[512];
        ck_assert_msg(mdt_constant_of_row(ctx, &v, img, i + 1) == 0, "row %u: %s", i + 1,
                      mdt_error_message(msg, sizeof msg));
        ck_assert_uint_eq(v.type->kind, want[i].type);
        ck_assert_str_eq(value_text(ctx, &v), want[i].text);
        ck_assert_int_eq(mdt_value_default(ctx, &byparent, img, want[i].parent), 0);
        ck_assert_str_eq(value_text(ctx, &byparent), want[i].text);
    }
    /* Typed access: U8 max, I8 min, R4, the UTF-16 string. */
    mdt_value v;
    ck_assert_int_eq(mdt_constant_of_row(ctx, &v, img, 26), 0);
    ck_assert(v.u == UINT64_MAX);
    ck_assert_int_eq(mdt_constant_of_row(ctx, &v, img, 24), 0);
    ck_assert(v.i == INT64_MIN);
    ck_assert_int_eq(mdt_constant_of_row(ctx, &v, img, 21), 0);
    ck_assert(v.i == -100000 && v.u == 0xfffe7960u);
    ck_assert_int_eq(mdt_constant_of_row(ctx, &v, img, 27), 0);
    ck_assert(v.r == 1.5);
    ck_assert_int_eq(mdt_constant_of_row(ctx, &v, img, 29), 0);
    ck_assert_str_eq(v.str, "const string");
    ck_assert_uint_eq(v.len, 12);
    ck_assert_int_eq(mdt_constant_of_row(ctx, &v, img, 31), 0);
    ck_assert(v.null);
    talloc_free(ctx);
}
END_TEST

START_TEST(decimal_constants_from_attributes)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_rel(ctx, "data/Everything.dll");
    mdt_value v;
    mdt_attr a;
    mdt_decimal d;
    /* Consts::Dec = 12.34m: no Constant row, CustomAttribute 37. */
    ck_assert_int_eq(mdt_value_default(ctx, &v, img, 0x0400004F), 0);
    ck_assert_uint_eq(v.type->kind, MDT_VALUE_DECIMAL);
    ck_assert_str_eq(value_text(ctx, &v), "12.34");
    ck_assert_int_eq(mdt_attr_of_row(ctx, &a, img, 37, NULL, NULL), 0);
    ck_assert_int_eq(mdt_attr_decimal(&d, &a), 0);
    ck_assert_uint_eq(d.scale, 2);
    ck_assert_uint_eq(d.lo, 1234);
    ck_assert(!d.negative);
    /* Calls::Defaults's `m` = 1.5m (Param 0x08000042, CustomAttribute 32). */
    ck_assert_int_eq(mdt_value_default(ctx, &v, img, 0x08000042), 0);
    ck_assert_str_eq(value_text(ctx, &v), "1.5");
    /* A field without a default value; an attribute that is no decimal. */
    ck_assert_int_eq(mdt_value_default(ctx, &v, img, 0x04000050), MDT_ENOTFOUND);
    ck_assert_int_eq(mdt_attr_of_row(ctx, &a, img, 38, NULL, NULL), 0);
    ck_assert_int_eq(mdt_attr_decimal(&d, &a), MDT_EINVAL);
    talloc_free(ctx);
}
END_TEST

START_TEST(decimal_text_is_exact)
{
    static const struct {
        mdt_decimal d;
        const char *text;
    } cases[] = {
        {{0, false, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF}, "79228162514264337593543950335"},
        {{0, true, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF}, "-79228162514264337593543950335"},
        {{28, true, 0x204FCE5E, 0x3E250261, 0x10000001}, "-1.0000000000000000000000000001"},
        {{28, false, 0, 0, 1}, "0.0000000000000000000000000001"},
        {{28, false, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF}, "7.9228162514264337593543950335"},
        {{2, false, 0, 0, 1234}, "12.34"},
        {{3, false, 0, 0, 1500}, "1.500"},
        {{2, false, 0, 0, 0}, "0.00"},
        {{0, false, 0, 0, 0}, "0"},
        {{1, true, 0, 0, 5}, "-0.5"},
    };
    void *ctx = talloc_new(NULL);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *s;
        ck_assert_int_eq(mdt_decimal_format(ctx, &s, &cases[i].d), 0);
        ck_assert_str_eq(s, cases[i].text);
    }
    mdt_decimal bad = {29, false, 0, 0, 1};
    char *s;
    ck_assert_int_eq(mdt_decimal_format(ctx, &s, &bad), MDT_EINVAL);
    talloc_free(ctx);
}
END_TEST

START_TEST(int128_text_is_exact)
{
    void *ctx = talloc_new(NULL);
    uint8_t b[16];
    char *s;
    memset(b, 0xFF, 16);
    ck_assert_int_eq(mdt_value_int128_format(ctx, &s, b, false), 0);
    ck_assert_str_eq(s, "340282366920938463463374607431768211455");
    ck_assert_int_eq(mdt_value_int128_format(ctx, &s, b, true), 0);
    ck_assert_str_eq(s, "-1");
    b[15] = 0x7F;
    ck_assert_int_eq(mdt_value_int128_format(ctx, &s, b, true), 0);
    ck_assert_str_eq(s, "170141183460469231731687303715884105727");
    memset(b, 0, 16);
    b[15] = 0x80;
    ck_assert_int_eq(mdt_value_int128_format(ctx, &s, b, true), 0);
    ck_assert_str_eq(s, "-170141183460469231731687303715884105728");
    ck_assert_int_eq(mdt_value_int128_format(ctx, &s, b, false), 0);
    ck_assert_str_eq(s, "170141183460469231731687303715884105728");
    memset(b, 0, 16);
    b[8] = 1; /* 2^64 */
    ck_assert_int_eq(mdt_value_int128_format(ctx, &s, b, true), 0);
    ck_assert_str_eq(s, "18446744073709551616");
    memset(b, 0, 16);
    ck_assert_int_eq(mdt_value_int128_format(ctx, &s, b, true), 0);
    ck_assert_str_eq(s, "0");
    talloc_free(ctx);
}
END_TEST

START_TEST(floating_point_text_round_trips)
{
    char buf[32];
    ck_assert_str_eq(mdt_value_r8_format(buf, 0.1), "0.1");
    ck_assert_str_eq(mdt_value_r8_format(buf, 1.0 / 3), "0.3333333333333333");
    ck_assert_str_eq(mdt_value_r8_format(buf, DBL_MAX), "1.7976931348623157e+308");
    ck_assert_str_eq(mdt_value_r8_format(buf, 5e-324), "5e-324");
    ck_assert_str_eq(mdt_value_r8_format(buf, -2.25), "-2.25");
    ck_assert_str_eq(mdt_value_r8_format(buf, NAN), "NaN");
    ck_assert_str_eq(mdt_value_r8_format(buf, INFINITY), "Infinity");
    ck_assert_str_eq(mdt_value_r8_format(buf, -INFINITY), "-Infinity");
    ck_assert_str_eq(mdt_value_r8_format(buf, -0.0), "-0");
    ck_assert_str_eq(mdt_value_r8_format(buf, 0.0), "0");
    ck_assert_str_eq(mdt_value_r4_format(buf, 0.1f), "0.1");
    ck_assert_str_eq(mdt_value_r4_format(buf, FLT_MAX), "3.4028235e+38");
    ck_assert_str_eq(mdt_value_r4_format(buf, 16777217.0f), "16777216");
    ck_assert_str_eq(mdt_value_r4_format(buf, NAN), "NaN");
    ck_assert_str_eq(mdt_value_r4_format(buf, -INFINITY), "-Infinity");
    /* Every printed double reads back to the same bits. */
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (int i = 0; i < 20000; i++) {
        double d, back;
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        memcpy(&d, &x, sizeof d);
        if (isnan(d))
            continue;
        back = strtod(mdt_value_r8_format(buf, d), NULL);
        ck_assert_msg(memcmp(&back, &d, sizeof d) == 0, "%s", buf);
    }
}
END_TEST

START_TEST(constant_blobs_decode_every_type_and_reject_short_ones)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_rel(ctx, "data/Everything.dll");
    static const struct {
        uint8_t type;
        uint8_t blob[10];
        uint32_t len;
        const char *text;
    } ok[] = {
        {0x02, {0x00}, 1, "false"},
        {0x03, {0x0A, 0x00}, 2, "'\\n'"},
        {0x03, {0xE9, 0x00}, 2, "'\xc3\xa9'"},
        {0x04, {0x80}, 1, "-128"},
        {0x06, {0x00, 0x80}, 2, "-32768"},
        {0x09, {0xFF, 0xFF, 0xFF, 0xFF}, 4, "4294967295"},
        {0x0C, {0x00, 0x00, 0xC0, 0x7F}, 4, "NaN"},
        {0x0C, {0x00, 0x00, 0x80, 0xFF}, 4, "-Infinity"},
        {0x0D, {0x9A, 0x99, 0x99, 0x99, 0x99, 0x99, 0xB9, 0x3F}, 8, "0.1"},
        {0x0D, {0, 0, 0, 0, 0, 0, 0xF0, 0x7F}, 8, "Infinity"},
        {0x0E, {'a', 0, '"', 0, 0x3D, 0xD8, 0x00, 0xDE}, 8, "\"a\\\"\xf0\x9f\x98\x80\""},
        {0x0E, {0x00, 0x00}, 2, "\"\\0\""},
        {0x08, {1, 0, 0, 0, 0xEE}, 5, "1"}, /* bytes beyond the value are ignored */
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        mdt_value v;
        char msg[512];
        ck_assert_msg(mdt_constant_decode(ctx, &v, img, ok[i].type, ok[i].blob, ok[i].len, 0) == 0,
                      "case %zu: %s", i, mdt_error_message(msg, sizeof msg));
        ck_assert_str_eq(value_text(ctx, &v), ok[i].text);
    }
    static const struct {
        uint8_t type;
        uint8_t blob[8];
        uint32_t len;
        int code;
        const char *msg;
    } bad[] = {
        {0x08, {1, 2, 3}, 3, MDT_ETRUNC, "need 4 bytes, 3 left"},
        {0x0D, {0}, 0, MDT_ETRUNC, "need 8 bytes, 0 left"},
        {0x0E, {'a', 0, 'b'}, 3, MDT_EBADIMAGE, "odd length 3"},
        {0x12, {1, 0, 0, 0}, 4, MDT_EBADIMAGE, "must be null"},
        {0x1C, {0, 0, 0, 0}, 4, MDT_EBADIMAGE, "element type 0x1c"},
        {0x01, {0}, 0, MDT_EBADIMAGE, "element type 0x01"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        mdt_value v;
        char msg[512];
        int e = mdt_constant_decode(ctx, &v, img, bad[i].type, bad[i].blob, bad[i].len, 0x42);
        ck_assert_msg(e == bad[i].code, "case %zu: %d", i, e);
        mdt_error_message(msg, sizeof msg);
        ck_assert_msg(strstr(msg, bad[i].msg) && strstr(msg, "#Blob[0x42]"), "case %zu: %s", i,
                      msg);
    }
    talloc_free(ctx);
}
END_TEST

START_TEST(empty_constant_blob_is_a_located_error)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_rel(ctx, "data/corpus/asmresolver/ConstantZeroValueColumn.exe");
    mdt_value v;
    char msg[512];
    ck_assert_int_eq(mdt_constant_of_row(ctx, &v, img, 1), MDT_ETRUNC);
    mdt_error_message(msg, sizeof msg);
    ck_assert_msg(strstr(msg, "Constant row 1") && strstr(msg, "need 4 bytes, 0 left"), "%s", msg);
    ck_assert_int_eq(mdt_value_default(ctx, &v, img, 0x04000001), MDT_ETRUNC);
    /* The rest of the image still reads. */
    ck_assert_str_eq(name_of(ctx, img, 0x04000001, MDT_STYLE_FULL),
                     name_of(ctx, img, 0x04000001, MDT_STYLE_FULL));
    ck_assert_int_eq(mdt_constant_of_row(ctx, &v, img, 2), MDT_ENOTFOUND);
    talloc_free(ctx);
}
END_TEST

Suite *suite(void);
Suite *suite(void)
{
    Suite *s = suite_create("values");
    TCase *tc = tcase_create("values");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, every_constant_of_everything);
    tcase_add_test(tc, decimal_constants_from_attributes);
    tcase_add_test(tc, decimal_text_is_exact);
    tcase_add_test(tc, int128_text_is_exact);
    tcase_add_test(tc, floating_point_text_round_trips);
    tcase_add_test(tc, constant_blobs_decode_every_type_and_reject_short_ones);
    tcase_add_test(tc, empty_constant_blob_is_a_located_error);
    suite_add_tcase(s, tc);
    return s;
}
