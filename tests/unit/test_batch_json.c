/* mdinspect's one JSON writer (mdinspect/common/json.c, RFC 8259 sections
 * 6 and 7), which batch --json (through batch/io.c) and the shell's -j
 * printer put every string and number through: fixed cases for each rule;
 * a hundred thousand random byte strings (printable ASCII, quotes,
 * backslashes, control bytes, every byte above 0x7F, well-formed and
 * broken UTF-8 sequences) against a byte-at-a-time reading of the rules:
 * '"' and '\' escaped, \b \f \n \r \t for those controls and the other
 * control bytes as \u00XX, a well-formed UTF-8 sequence (Unicode 15,
 * table 3-7) copied, any other byte as U+FFFD; the same strings through
 * output buffers of a few bytes (a string cut across flushes); and
 * numbers against jansson's json_dumps, which the shell printed with
 * before (its output kept the same bytes). */
#include <check.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <talloc.h>

#include "batch/batch.h"
#include "common/json.h"

/* The length of the well-formed sequence at s by table 3-7's rows, or 0. */
static size_t ref_seq(const unsigned char *s, size_t n)
{
    static const struct {
        unsigned char lo0, hi0, lo1, hi1;
        size_t k;
    } rows[] = {
        {0x00, 0x7F, 0, 0, 1},       {0xC2, 0xDF, 0x80, 0xBF, 2}, {0xE0, 0xE0, 0xA0, 0xBF, 3},
        {0xE1, 0xEC, 0x80, 0xBF, 3}, {0xED, 0xED, 0x80, 0x9F, 3}, {0xEE, 0xEF, 0x80, 0xBF, 3},
        {0xF0, 0xF0, 0x90, 0xBF, 4}, {0xF1, 0xF3, 0x80, 0xBF, 4}, {0xF4, 0xF4, 0x80, 0x8F, 4},
    };
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        if (s[0] < rows[r].lo0 || s[0] > rows[r].hi0)
            continue;
        if (rows[r].k > n)
            return 0;
        if (rows[r].k > 1 && (s[1] < rows[r].lo1 || s[1] > rows[r].hi1))
            return 0;
        for (size_t i = 2; i < rows[r].k; i++)
            if (s[i] < 0x80 || s[i] > 0xBF)
                return 0;
        return rows[r].k;
    }
    return 0;
}

static char *ref_json(void *mem, const unsigned char *s, size_t n)
{
    char *out = talloc_strdup(mem, "\"");
    for (size_t i = 0; i < n;) {
        size_t k;
        if (s[i] == '"' || s[i] == '\\') {
            out = talloc_asprintf_append(out, "\\%c", s[i]);
            i++;
        } else if (s[i] < 0x20) {
            const char *sf = s[i] == '\b'   ? "b"
                             : s[i] == '\f' ? "f"
                             : s[i] == '\n' ? "n"
                             : s[i] == '\r' ? "r"
                             : s[i] == '\t' ? "t"
                                            : NULL;
            out = sf ? talloc_asprintf_append(out, "\\%s", sf)
                     : talloc_asprintf_append(out, "\\u%04X", s[i]);
            i++;
        } else if ((k = ref_seq(s + i, n - i)) == 0) {
            out = talloc_strdup_append(out, "\xEF\xBF\xBD");
            i++;
        } else {
            out = talloc_strndup_append(out, (const char *)s + i, k);
            i += k;
        }
    }
    return talloc_strdup_append(out, "\"");
}

/* What mdb_out_json_string writes for s, as a string. */
static char *got_json(void *mem, const char *s, size_t n)
{
    mdb_output o;
    ck_assert_int_eq(mdb_output_init(&o, mem, -1), 0);
    mdb_out_json_string(&o, s, n);
    ck_assert(!o.failed);
    return talloc_strndup(mem, o.buf, o.len);
}

/* An output buffer of `cap` bytes whose flushes append to a string: a
 * string cut across flushes at every place. */
static void collect(mdb_output *o)
{
    char **acc = o->arg;
    *acc = talloc_strndup_append_buffer(*acc, o->buf, o->len);
}

static char *got_json_small(void *mem, const char *s, size_t n, size_t cap)
{
    mdb_output o;
    char *acc = talloc_strdup(mem, "");
    ck_assert_int_eq(mdb_output_init(&o, mem, -1), 0);
    o.cap = cap;
    o.spill = collect;
    o.arg = &acc;
    mdb_out_json_string(&o, s, n);
    mdb_output_flush(&o);
    ck_assert(!o.failed);
    return acc;
}

static void same(void *mem, const char *s, size_t n)
{
    char *want = ref_json(mem, (const unsigned char *)s, n), *got = got_json(mem, s, n);
    ck_assert_msg(strcmp(want, got) == 0, "input of %zu bytes: want %s, got %s", n, want, got);
    if (n % 4 == 1) { /* a quarter of them: enough cuts, a quarter of the time */
        got = got_json_small(mem, s, n, MDI_JSON_ESCAPE_MAX + n % 7);
        ck_assert_msg(strcmp(want, got) == 0, "input of %zu bytes, small buffer: want %s, got %s",
                      n, want, got);
    }
}

START_TEST(escapes_quotes_backslashes_and_control_bytes)
{
    void *mem = talloc_new(NULL);
    ck_assert_str_eq(got_json(mem, "Ns.List`1::Add", 14), "\"Ns.List`1::Add\"");
    ck_assert_str_eq(got_json(mem, "a\"b\\c", 5), "\"a\\\"b\\\\c\"");
    ck_assert_str_eq(got_json(mem, "\x01\n\x1f\x7f", 4), "\"\\u0001\\n\\u001F\x7f\"");
    ck_assert_str_eq(got_json(mem, "\b\f\r\t", 4), "\"\\b\\f\\r\\t\"");
    ck_assert_str_eq(got_json(mem, "", 0), "\"\"");
    ck_assert_str_eq(got_json(mem, "x\0y", 3), "\"x\\u0000y\"");
    talloc_free(mem);
}
END_TEST

START_TEST(copies_utf8_and_replaces_what_is_not)
{
    void *mem = talloc_new(NULL);
    /* é, €, U+10348: copied */
    ck_assert_str_eq(got_json(mem, "\xC3\xA9\xE2\x82\xAC\xF0\x90\x8D\x88", 9),
                     "\"\xC3\xA9\xE2\x82\xAC\xF0\x90\x8D\x88\"");
    /* a lone continuation byte, an overlong '/', a surrogate, past
     * U+10FFFF, a sequence cut short by the end: U+FFFD per bad byte */
    ck_assert_str_eq(got_json(mem, "a\x80z", 3), "\"a\xEF\xBF\xBDz\"");
    ck_assert_str_eq(got_json(mem, "\xC0\xAF", 2), "\"\xEF\xBF\xBD\xEF\xBF\xBD\"");
    ck_assert_str_eq(got_json(mem, "\xED\xA0\x80", 3), "\"\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\"");
    ck_assert_str_eq(got_json(mem, "\xF4\x90\x80\x80", 4),
                     "\"\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\"");
    ck_assert_str_eq(got_json(mem, "ok\xE2\x82", 4), "\"ok\xEF\xBF\xBD\xEF\xBF\xBD\"");
    talloc_free(mem);
}
END_TEST

START_TEST(random_strings_match_the_rules)
{
    /* bytes that matter to the rules, and plain ones between them */
    static const unsigned char pick[] = {'a',  'Z',  '.',  '`',  '<',  '>',  '"',  '\\', ' ',
                                         0x00, 0x01, 0x1F, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0,
                                         0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1, 0xEC, 0xED,
                                         0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF};
    void *mem = talloc_new(NULL);
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (int t = 0; t < 100000; t++) {
        unsigned char s[64];
        void *tmp = talloc_new(mem);
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        size_t n = (size_t)(x % sizeof s);
        for (size_t i = 0; i < n; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            /* half the time any byte, else one of those above */
            s[i] = (x >> 40) & 1 ? (unsigned char)(x >> 8) : pick[(x >> 16) % sizeof pick];
        }
        same(tmp, (const char *)s, n);
        talloc_free(tmp);
    }
    talloc_free(mem);
}
END_TEST

/* A number as jansson printed it (json_dumps, JSON_COMPACT). */
static void same_number(json_t *j, const char *got, size_t n)
{
    char *want = json_dumps(j, JSON_ENCODE_ANY | JSON_COMPACT);
    ck_assert_ptr_nonnull(want);
    ck_assert_msg(strlen(want) == n && memcmp(want, got, n) == 0, "want %s, got %.*s", want, (int)n,
                  got);
    free(want);
    json_decref(j);
}

START_TEST(numbers_are_written_as_jansson_wrote_them)
{
    static const double fixed[] = {0.1,
                                   1.0,
                                   -0.0,
                                   1e20,
                                   1e-7,
                                   1e16,
                                   1e17,
                                   2.5,
                                   100,
                                   1e300,
                                   5e-324,
                                   -1e-300,
                                   3.14159,
                                   0.3,
                                   1.5e-5,
                                   1e21,
                                   123456789012345678.0};
    uint64_t x = 0x2545F4914F6CDD1Dull;
    char b[MDI_JSON_NUMBER_MAX];
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        same_number(json_real(fixed[i]), b, mdi_json_real(b, fixed[i]));
    for (int t = 0; t < 20000; t++) {
        double d;
        int64_t v;
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        memcpy(&d, &x, sizeof d);
        if (d == d && d - d == 0) /* finite: JSON has no others */
            same_number(json_real(d), b, mdi_json_real(b, d));
        /* short decimals too, and every magnitude of integer */
        d = (double)(int64_t)(x % 2000001) / 1000.0 - 1000.0;
        same_number(json_real(d), b, mdi_json_real(b, d));
        v = (int64_t)x >> (x % 63);
        same_number(json_integer(v), b, mdi_json_int(b, v));
        if (v >= 0)
            same_number(json_integer(v), b, mdi_json_uint(b, (uint64_t)v));
    }
    same_number(json_integer(INT64_MIN), b, mdi_json_int(b, INT64_MIN));
    same_number(json_integer(INT64_MAX), b, mdi_json_uint(b, INT64_MAX));
    same_number(json_integer(0), b, mdi_json_uint(b, 0));
    ck_assert_uint_eq(mdi_json_token(b, 0x0a00001f), 10);
    ck_assert(memcmp(b, "0x0a00001f", 10) == 0);
}
END_TEST

Suite *suite(void);
Suite *suite(void)
{
    Suite *s = suite_create("batch_json");
    TCase *tc = tcase_create("json_string");
    tcase_set_timeout(tc, 600); /* under the sanitizers on a loaded machine */
    tcase_add_test(tc, escapes_quotes_backslashes_and_control_bytes);
    tcase_add_test(tc, copies_utf8_and_replaces_what_is_not);
    tcase_add_test(tc, random_strings_match_the_rules);
    tcase_add_test(tc, numbers_are_written_as_jansson_wrote_them);
    suite_add_tcase(s, tc);
    return s;
}
