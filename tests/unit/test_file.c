/* <mdtools/file.h> against what a path from input may name: a regular file
 * (opened, read whole, read at offsets), a FIFO with no writer (refused at
 * once: the test would hang if open(2) were reached), a directory, a
 * character device, a symbolic link to a FIFO, nothing at all, a file
 * over the caller's bound; each failure with its code and a message naming
 * the path. */
#define _DEFAULT_SOURCE /* S_IFBLK, S_IFCHR, S_IFDIR, S_IFIFO, S_IFLNK */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <talloc.h>
#include <unistd.h>

#include <mdtools/errors.h>
#include <mdtools/file.h>

static char dir[64];

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/mdt-file-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

static const char *in_dir(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", dir, name);
    return buf;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    ck_assert_int_eq(fclose(f), 0);
}

/* The failure's message names the path and says WHAT. */
static void failed_with(int got, int code, const char *path, const char *what)
{
    char msg[512];
    ck_assert_int_eq(got, code);
    mdt_error_message(msg, sizeof msg);
    ck_assert_msg(strstr(msg, path) && strstr(msg, what), "message \"%s\" lacks \"%s\"", msg, what);
}

START_TEST(regular_file_opens_and_reads)
{
    char p[128], buf[8], *text = NULL;
    size_t len = 0;
    struct stat st;
    void *ctx = talloc_new(NULL);
    write_file(in_dir(p, sizeof p, "a.txt"), "hello, file\n");
    int fd = mdt_file_open(p, &st);
    ck_assert_int_ge(fd, 0);
    ck_assert(S_ISREG(st.st_mode));
    ck_assert_int_eq(st.st_size, 12);
    ck_assert_int_eq(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
    ck_assert_int_ne(fcntl(fd, F_GETFD) & FD_CLOEXEC, 0);
    ck_assert_int_eq(mdt_file_read_at(fd, buf, 5, 7), 5);
    ck_assert_int_eq(memcmp(buf, "file\n", 5), 0);
    ck_assert_int_eq(mdt_file_read_at(fd, buf, sizeof buf, 10), 2); /* short at the end */
    ck_assert_int_eq(mdt_file_read_at(fd, buf, sizeof buf, 100), 0);
    close(fd);
    ck_assert_int_eq(mdt_file_read_at(fd, buf, 1, 0), -1);
    ck_assert_int_eq(errno, EBADF);

    ck_assert_int_eq(mdt_file_read(ctx, &text, &len, p, 12), 0);
    ck_assert_str_eq(text, "hello, file\n");
    ck_assert_uint_eq(len, 12);
    ck_assert_ptr_eq(talloc_parent(text), ctx);
    failed_with(mdt_file_read(ctx, &text, &len, p, 11), MDT_EUNSUPPORTED, p, "more than the 11");
    ck_assert_ptr_null(text);
    talloc_free(ctx);
}
END_TEST

START_TEST(fifo_is_refused_without_blocking)
{
    char p[128], l[128], *text = (char *)"x";
    struct stat st;
    ck_assert_int_eq(mkfifo(in_dir(p, sizeof p, "pipe.dll"), 0600), 0);
    failed_with(mdt_file_open(p, &st), MDT_EUNSUPPORTED, p, "not a regular file (a FIFO)");
    ck_assert(S_ISFIFO(st.st_mode));
    ck_assert_int_eq(symlink(p, in_dir(l, sizeof l, "link.dll")), 0);
    failed_with(mdt_file_open(l, NULL), MDT_EUNSUPPORTED, l, "a FIFO");
    failed_with(mdt_file_read(NULL, &text, NULL, l, 1 << 20), MDT_EUNSUPPORTED, l, "a FIFO");
    ck_assert_ptr_null(text);
}
END_TEST

START_TEST(directory_device_and_nothing)
{
    char p[128];
    struct stat st;
    failed_with(mdt_file_open(dir, &st), MDT_EUNSUPPORTED, dir, "(a directory)");
    failed_with(mdt_file_open("/dev/null", &st), MDT_EUNSUPPORTED, "/dev/null",
                "a character device");
    failed_with(mdt_file_open(in_dir(p, sizeof p, "absent"), &st), MDT_ENOTFOUND, p, "cannot open");
    ck_assert_int_eq(errno, ENOENT);
    failed_with(mdt_file_open(in_dir(p, sizeof p, "absent/below"), &st), MDT_ENOTFOUND, p,
                "cannot open");
    ck_assert_int_eq(mdt_file_open(NULL, &st), MDT_EINVAL);
    ck_assert_int_eq(mdt_file_open("", &st), MDT_EINVAL);
    ck_assert_int_eq(mdt_file_read(NULL, NULL, NULL, "/dev/null", 1), MDT_EINVAL);
}
END_TEST

START_TEST(unreadable_file_is_eio)
{
    char p[128];
    if (geteuid() == 0)
        return; /* root reads anything: nothing to check */
    write_file(in_dir(p, sizeof p, "secret"), "x");
    ck_assert_int_eq(chmod(p, 0), 0);
    failed_with(mdt_file_open(p, NULL), MDT_EIO, p, "Permission denied");
    ck_assert_int_eq(errno, EACCES);
}
END_TEST

START_TEST(kinds_are_named)
{
    ck_assert_str_eq(mdt_file_kind(S_IFREG | 0644), "a regular file");
    ck_assert_str_eq(mdt_file_kind(S_IFDIR), "a directory");
    ck_assert_str_eq(mdt_file_kind(S_IFIFO), "a FIFO");
    ck_assert_str_eq(mdt_file_kind(S_IFCHR), "a character device");
    ck_assert_str_eq(mdt_file_kind(S_IFBLK), "a block device");
    ck_assert_str_eq(mdt_file_kind(S_IFSOCK), "a socket");
    ck_assert_str_eq(mdt_file_kind(S_IFLNK), "a symbolic link");
    ck_assert_str_eq(mdt_file_kind(0), "not a regular file");
}
END_TEST

Suite *suite(void);
Suite *suite(void)
{
    Suite *s = suite_create("file");
    TCase *tc = tcase_create("open");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, regular_file_opens_and_reads);
    tcase_add_test(tc, fifo_is_refused_without_blocking);
    tcase_add_test(tc, directory_device_and_nothing);
    tcase_add_test(tc, unreadable_file_is_eio);
    tcase_add_test(tc, kinds_are_named);
    suite_add_tcase(s, tc);
    return s;
}
