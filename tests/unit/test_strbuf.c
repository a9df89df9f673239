/* The library's string builder (libmdtools/util/strbuf.c), built into this
 * program with its sources: its three kinds of storage (a growing talloc
 * block, a caller's buffer that moves to a talloc block, a fixed caller's
 * buffer), the cut of a full fixed buffer, the length limit and the
 * failure reported once. The name printers rely on each of these: a name
 * cut in a caller's buffer is MDT_ETRUNC with the prefix kept, a long one
 * leaves the stack buffer whole, a runaway one stops at its limit. The
 * error record is this file's stand-in for util/error.c: the code and
 * message of the last failure. */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <talloc.h>

#include "util/error.h"
#include "util/strbuf.h"

static int last_code;
static char last_msg[256];

int mdt__fail_simple(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_msg, sizeof last_msg, fmt, ap);
    va_end(ap);
    return last_code = code;
}

/* n bytes of a pattern that shows where a byte came from. */
static char *pattern(void *ctx, size_t n)
{
    char *p = talloc_array(ctx, char, n + 1);
    for (size_t i = 0; i < n; i++)
        p[i] = (char)('a' + i % 26);
    p[n] = '\0';
    return p;
}

START_TEST(growing_builder_keeps_every_append)
{
    void *ctx = talloc_new(NULL);
    char *long_text = pattern(ctx, 5000), *out = NULL;
    sb s;
    sb_init(&s, ctx);
    sb_adds(&s, "Ns.");
    sb_addc(&s, 'T');
    sb_add(&s, "<xyz", 2);
    sb_addf(&s, "%u,%s>", 42u, "B");
    sb_adds(&s, long_text);
    ck_assert_int_eq(sb_finish(&s, &out), 0);
    ck_assert_ptr_eq(talloc_parent(out), ctx);
    ck_assert_uint_eq(strlen(out), 3 + 1 + 2 + 5 + 5000);
    ck_assert(strncmp(out, "Ns.T<x42,B>", 11) == 0);
    ck_assert_str_eq(out + 11, long_text);
    talloc_free(ctx);
}
END_TEST

START_TEST(empty_builder_finishes_as_empty_string)
{
    void *ctx = talloc_new(NULL);
    char *out = NULL, stack[8];
    sb s;
    sb_init(&s, ctx);
    ck_assert_int_eq(sb_finish(&s, &out), 0);
    ck_assert_str_eq(out, "");
    sb_init_stack(&s, ctx, stack, sizeof stack);
    ck_assert_int_eq(sb_finish(&s, &out), 0);
    ck_assert_str_eq(out, "");
    ck_assert_ptr_ne(out, stack);
    talloc_free(ctx);
}
END_TEST

/* Text that fits stays in the caller's buffer (no block until finish,
 * which copies it at its exact size); text that outgrows it moves to a
 * block, the first bytes included. */
START_TEST(stack_builder_moves_to_block_when_outgrown)
{
    void *ctx = talloc_new(NULL);
    char stack[16], *out = NULL, *expect = pattern(ctx, 40);
    sb s;
    sb_init_stack(&s, ctx, stack, sizeof stack);
    sb_add(&s, expect, 15);
    ck_assert_ptr_eq(s.buf, stack);
    ck_assert(!s.heap);
    ck_assert_int_eq(sb_finish(&s, &out), 0);
    ck_assert_ptr_ne(out, stack);
    ck_assert_uint_eq(talloc_get_size(out), 16);
    ck_assert(strncmp(out, expect, 15) == 0 && out[15] == '\0');

    sb_init_stack(&s, ctx, stack, sizeof stack);
    sb_add(&s, expect, 10);
    sb_add(&s, expect + 10, 30);
    ck_assert(s.heap);
    ck_assert_ptr_ne(s.buf, stack);
    ck_assert_int_eq(sb_finish(&s, &out), 0);
    ck_assert_str_eq(out, expect);
    talloc_free(ctx);
}
END_TEST

/* A fixed buffer keeps the prefix that fits, NUL-terminated, and fails;
 * later appends change nothing. */
START_TEST(fixed_builder_cuts_and_fails)
{
    char buf[8];
    sb s;
    sb_init_fixed(&s, buf, sizeof buf);
    sb_adds(&s, "abc");
    ck_assert(!s.failed);
    sb_adds(&s, "defghij");
    ck_assert(s.failed);
    ck_assert_str_eq(buf, "abcdefg");
    ck_assert_uint_eq(s.len, 7);
    sb_adds(&s, "k");
    sb_addf(&s, "%d", 1);
    ck_assert_str_eq(buf, "abcdefg");

    sb_init_fixed(&s, buf, sizeof buf);
    sb_adds(&s, "1234567");
    ck_assert(!s.failed); /* exactly full: 7 bytes and the NUL */
    sb_addc(&s, 'x');
    ck_assert(s.failed);
    ck_assert_str_eq(buf, "1234567");
}
END_TEST

START_TEST(fixed_builder_takes_long_formatted_text)
{
    void *ctx = talloc_new(NULL);
    char buf[400], *text = pattern(ctx, 600);
    sb s;
    sb_init_fixed(&s, buf, sizeof buf);
    sb_addf(&s, "<%s>", text);
    ck_assert(s.failed);
    ck_assert_uint_eq(s.len, sizeof buf - 1);
    ck_assert_int_eq(buf[0], '<');
    ck_assert(strncmp(buf + 1, text, sizeof buf - 2) == 0);
    talloc_free(ctx);
}
END_TEST

/* Growing past s->max fails as too long and keeps nothing more (the limit
 * is checked where the block grows: a bound on runaway work, not an exact
 * length); sb_finish frees what it had and reports MDT_ENOMEM. */
START_TEST(limit_fails_as_too_long)
{
    void *ctx = talloc_new(NULL);
    char stack[4], *out = NULL, *text = pattern(ctx, 300);
    sb s;
    sb_init_stack(&s, ctx, stack, sizeof stack);
    s.max = 100;
    sb_add(&s, text, 100);
    ck_assert(!s.failed);
    ck_assert(!s.too_long);
    sb_add(&s, text, s.cap - s.len); /* one byte too many for the block */
    ck_assert(s.failed && s.too_long);
    ck_assert_uint_eq(s.len, 100);
    sb_adds(&s, "x");
    size_t before = talloc_total_blocks(ctx);
    last_code = 0;
    ck_assert_int_eq(sb_finish(&s, &out), MDT_ENOMEM);
    ck_assert_int_eq(last_code, MDT_ENOMEM);
    ck_assert_str_eq(last_msg, "out of memory building a name");
    ck_assert_uint_eq(talloc_total_blocks(ctx), before - 1);
    talloc_free(ctx);
}
END_TEST

START_TEST(cut_forgets_the_tail)
{
    void *ctx = talloc_new(NULL);
    char *out = NULL;
    sb s;
    sb_init(&s, ctx);
    sb_adds(&s, "List`1");
    sb_cut(&s, 4);
    ck_assert_str_eq(s.buf, "List");
    sb_cut(&s, 10); /* past the end: nothing */
    sb_adds(&s, "<T>");
    ck_assert_int_eq(sb_finish(&s, &out), 0);
    ck_assert_str_eq(out, "List<T>");
    talloc_free(ctx);
}
END_TEST

START_TEST(discard_frees_and_empties)
{
    void *ctx = talloc_new(NULL);
    char stack[4], *out = NULL;
    sb s;
    size_t before = talloc_total_blocks(ctx);
    sb_init_stack(&s, ctx, stack, sizeof stack);
    sb_adds(&s, "longer than four");
    ck_assert_uint_eq(talloc_total_blocks(ctx), before + 1);
    sb_discard(&s);
    ck_assert_uint_eq(talloc_total_blocks(ctx), before);
    sb_adds(&s, "again");
    ck_assert_int_eq(sb_finish(&s, &out), 0);
    ck_assert_str_eq(out, "again");
    talloc_free(ctx);
}
END_TEST

Suite *suite(void);
Suite *suite(void)
{
    Suite *s = suite_create("strbuf");
    TCase *tc = tcase_create("builder");
    tcase_add_test(tc, growing_builder_keeps_every_append);
    tcase_add_test(tc, empty_builder_finishes_as_empty_string);
    tcase_add_test(tc, stack_builder_moves_to_block_when_outgrown);
    tcase_add_test(tc, fixed_builder_cuts_and_fails);
    tcase_add_test(tc, fixed_builder_takes_long_formatted_text);
    tcase_add_test(tc, limit_fails_as_too_long);
    tcase_add_test(tc, cut_forgets_the_tail);
    tcase_add_test(tc, discard_frees_and_empties);
    suite_add_tcase(s, tc);
    return s;
}
