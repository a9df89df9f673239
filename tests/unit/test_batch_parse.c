/* mdinspect/batch/parse.h, the SSE2 and word-at-a-time readers of hex
 * tokens and MVIDs (this file is built twice, the second time with
 * MDB_NO_SSE2), against a byte-at-a-time reading of the same rules: every
 * byte value at every position of a field, every length of a token, and a
 * million random fields drawn from digits, letters of both cases and the
 * bytes next to them ('/', ':', '@', '`', 'G', 'g', 0x80, 0xFF, ...);
 * mdb_find, the short memchr, against memchr; and lines.h's cutter (a
 * block's lines by a mask of 64 bytes' newlines) against memchr, on blocks
 * allocated to their exact length (a sanitized build sees any read past). */
#include <check.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "batch/parse.h"
#include "batch/lines.h"

/* The rules, one byte at a time. */
static int ref_digit(unsigned c, bool anycase)
{
    if (c >= '0' && c <= '9')
        return (int)(c - '0');
    if (c >= 'a' && c <= 'f')
        return (int)(c - 'a' + 10);
    if (anycase && c >= 'A' && c <= 'F')
        return (int)(c - 'A' + 10);
    return -1;
}

static bool ref_hex32(const char *s, size_t n, bool strict, uint32_t *v)
{
    uint32_t x = 0;
    if (n < 3 || n > 10 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X') || (strict && n != 10))
        return false;
    for (size_t i = 2; i < n; i++) {
        int d = ref_digit((unsigned char)s[i], true);
        if (d < 0)
            return false;
        x = x << 4 | (uint32_t)d;
    }
    *v = x;
    return true;
}

static bool ref_mvid(const char *s, size_t n, uint8_t mvid[16])
{
    static const int order[16] = {3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15};
    uint8_t b[16];
    if (n != 32)
        return false;
    for (int i = 0; i < 16; i++) {
        int hi = ref_digit((unsigned char)s[2 * i], false);
        int lo = ref_digit((unsigned char)s[2 * i + 1], false);
        if (hi < 0 || lo < 0)
            return false;
        b[i] = (uint8_t)(hi << 4 | lo);
    }
    for (int i = 0; i < 16; i++)
        mvid[i] = b[order[i]];
    return true;
}

static void agree_hex32(const char *s, size_t n, bool strict)
{
    uint32_t a = 0xDEADBEEF, b = 0xDEADBEEF;
    bool ra = mdb_parse_hex32(s, n, strict, &a), rb = ref_hex32(s, n, strict, &b);
    if (ra != rb || (ra && a != b))
        ck_abort_msg("hex32 \"%.*s\" (%zu bytes, strict %d): %d 0x%08x, want %d 0x%08x", (int)n, s,
                     n, strict, ra, a, rb, b);
}

static void agree_mvid(const char *s)
{
    uint8_t a[16], b[16];
    bool ra = mdb_parse_mvid(s, 32, a), rb = ref_mvid(s, 32, b);
    if (ra != rb || (ra && memcmp(a, b, 16) != 0))
        ck_abort_msg("mvid \"%.32s\": %d, want %d", s, ra, rb);
}

START_TEST(every_byte_at_every_position)
{
    char tok[11] = "0x06a1B2c3", mv[33] = "0123456789abcdef0123456789abcdef";
    for (size_t pos = 0; pos < 10; pos++)
        for (unsigned c = 0; c < 256; c++) {
            char t[11];
            memcpy(t, tok, sizeof t);
            t[pos] = (char)c;
            agree_hex32(t, 10, true);
            agree_hex32(t, 10, false);
        }
    for (size_t pos = 0; pos < 32; pos++)
        for (unsigned c = 0; c < 256; c++) {
            char m[33];
            memcpy(m, mv, sizeof m);
            m[pos] = (char)c;
            agree_mvid(m);
        }
}
END_TEST

START_TEST(every_length)
{
    char t[16] = "0x0123456789abc";
    for (size_t n = 0; n <= 12; n++) {
        agree_hex32(t, n, false);
        agree_hex32(t, n, true);
    }
}
END_TEST

START_TEST(random_fields)
{
    static const char pool[] = "0123456789abcdefABCDEFxX/:@`Gg \x7f\x80\xff";
    unsigned seed = 12345;
    char buf[40];
    for (int k = 0; k < 1000000; k++) {
        size_t n = (size_t)(rand_r(&seed) % 11) + 2;
        /* mostly well-formed, so both answers are often "yes" */
        for (size_t i = 0; i < sizeof buf; i++)
            buf[i] = rand_r(&seed) % 4 ? "0123456789abcdef"[rand_r(&seed) % 16]
                                       : pool[rand_r(&seed) % (sizeof pool - 1)];
        if (k % 2) {
            buf[0] = '0';
            buf[1] = k % 4 == 1 ? 'x' : 'X';
        }
        agree_hex32(buf, n, false);
        agree_hex32(buf, 10, true);
        agree_mvid(buf);
    }
}
END_TEST

/* mdb_find against memchr: every length up to 100, the byte at every
 * place or nowhere, in a buffer fenced so that a read past the end shows
 * (ASan, or a wrong answer: the fence holds the byte looked for). */
START_TEST(find_is_memchr)
{
    char buf[128];
    for (size_t n = 0; n <= 100; n++)
        for (size_t at = 0; at <= n; at++) {
            memset(buf, 'a', sizeof buf);
            buf[n] = '\n'; /* just past the end: must not be found */
            if (at < n)
                buf[at] = '\n';
            const char *want = memchr(buf, '\n', n), *got = mdb_find(buf, buf + n, '\n');
            if (want != got)
                ck_abort_msg("n %zu, at %zu: %td, want %td", n, at, got ? got - buf : -1,
                             want ? want - buf : -1);
        }
}
END_TEST

/* Every newline the cutter hands out is memchr's next one, in order, then
 * the block's end; blocks of every length up to 300 bytes (the last window
 * short or full), newlines sparse, dense, at the edges of windows. */
START_TEST(cutter_is_memchr)
{
    srand(7);
    for (size_t len = 0; len <= 300; len++)
        for (int density = 0; density < 5; density++) {
            char *b = malloc(len ? len : 1);
            struct mdb_cutter c;
            const char *p, *end = b + len;
            ck_assert_ptr_nonnull(b);
            for (size_t i = 0; i < len; i++)
                b[i] = density == 4 ? (i % 64 == 63 || i % 64 == 0 ? '\n' : 'x')
                       : rand() % (1 << (2 * density + 1)) == 0 ? '\n'
                                                                : (char)('a' + rand() % 26);
            mdb_cutter_init(&c, b, len);
            for (p = b;;) {
                const char *want = len && p < end ? memchr(p, '\n', (size_t)(end - p)) : NULL;
                const char *got = mdb_next_newline(&c);
                if (!want) {
                    ck_assert_ptr_eq(got, end);
                    break;
                }
                ck_assert_ptr_eq(got, want);
                p = want + 1;
            }
            free(b);
        }
}
END_TEST

Suite *suite(void);
Suite *suite(void)
{
    Suite *s = suite_create("batch_parse");
    TCase *tc = tcase_create("batch_parse");
    tcase_add_test(tc, every_byte_at_every_position);
    tcase_add_test(tc, every_length);
    tcase_add_test(tc, random_fields);
    tcase_add_test(tc, find_is_memchr);
    tcase_add_test(tc, cutter_is_memchr);
    suite_add_tcase(s, tc);
    return s;
}
