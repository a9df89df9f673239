/* Opening files named by input (util/file.h, and <mdtools/file.h> for the
 * clients: one implementation for both). A path from input may name
 * anything: open(2) of a FIFO blocks until a writer comes (forever, for a
 * tool reading a list of paths), open(2) of a device may act on it (a tape
 * rewinds, a terminal becomes the controlling one). So the path is
 * examined first and only a regular file is opened, with O_NONBLOCK in
 * case the path was swapped for a FIFO in between, and fstat(2) checks
 * that what was opened is still a regular file. */
#define _DEFAULT_SOURCE /* O_CLOEXEC, pread */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <talloc.h>
#include <unistd.h>

#include <mdtools/file.h>

#include "util/error.h"
#include "util/file.h"

int mdt__open_regular(const char *path, struct stat *st)
{
    int fd, flags;
    if (stat(path, st) != 0)
        return -1;
    if (!S_ISREG(st->st_mode))
        return MDT_FILE_NOT_REGULAR;
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return -1;
    if (fstat(fd, st) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    if (!S_ISREG(st->st_mode)) {
        close(fd);
        return MDT_FILE_NOT_REGULAR;
    }
    /* Reads of a regular file do not block anyway; clear the flag so that
     * nothing later depends on it. */
    if ((flags = fcntl(fd, F_GETFL)) >= 0)
        (void)fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    return fd;
}

long long mdt__read_at(int fd, void *buf, size_t n, unsigned long long off)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, (char *)buf + got, n - got, (off_t)(off + got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (long long)got;
}

const char *mdt_file_kind(unsigned mode)
{
    return S_ISREG(mode)    ? "a regular file"
           : S_ISDIR(mode)  ? "a directory"
           : S_ISFIFO(mode) ? "a FIFO"
           : S_ISCHR(mode)  ? "a character device"
           : S_ISBLK(mode)  ? "a block device"
           : S_ISSOCK(mode) ? "a socket"
           : S_ISLNK(mode)  ? "a symbolic link"
                            : "not a regular file";
}

static int fail_path(int code, const char *path, const char *fmt, const char *why)
{
    mdt_place at = MDT_PLACE_NONE;
    at.file = path;
    return mdt__fail(code, at, fmt, why);
}

int mdt_file_open(const char *path, struct stat *st)
{
    struct stat own;
    int fd;
    if (!path || !*path)
        return mdt__fail_simple(MDT_EINVAL, "mdt_file_open: no path");
    if (!st)
        st = &own;
    fd = mdt__open_regular(path, st);
    if (fd == MDT_FILE_NOT_REGULAR)
        return fail_path(MDT_EUNSUPPORTED, path, "not a regular file (%s)",
                         mdt_file_kind(st->st_mode));
    if (fd < 0) {
        int saved = errno;
        int code = saved == ENOENT || saved == ENOTDIR ? MDT_ENOTFOUND : MDT_EIO;
        fail_path(code, path, "cannot open: %s", strerror(saved));
        errno = saved;
        return code;
    }
    return fd;
}

long long mdt_file_read_at(int fd, void *buf, size_t n, unsigned long long off)
{
    return mdt__read_at(fd, buf, n, off);
}

int mdt_file_read(void *mem_ctx, char **out, size_t *len, const char *path, size_t max)
{
    struct stat st;
    char *buf;
    long long got;
    int fd;
    if (!out)
        return mdt__fail_simple(MDT_EINVAL, "mdt_file_read: no output");
    *out = NULL;
    if ((fd = mdt_file_open(path, &st)) < 0)
        return fd;
    if ((unsigned long long)st.st_size > max) {
        char why[96];
        close(fd);
        snprintf(why, sizeof why, "%llu bytes, more than the %zu it may have",
                 (unsigned long long)st.st_size, max);
        return fail_path(MDT_EUNSUPPORTED, path, "%s", why);
    }
    if (!(buf = talloc_array(mem_ctx, char, (size_t)st.st_size + 1))) {
        close(fd);
        return mdt__fail_simple(MDT_ENOMEM, "%s: out of memory", path);
    }
    /* One byte more than the size said: a file that grew since is refused
     * rather than cut without a word. */
    got = mdt__read_at(fd, buf, (size_t)st.st_size + 1, 0);
    if (got < 0 || (unsigned long long)got > (unsigned long long)st.st_size) {
        int saved = errno;
        close(fd);
        talloc_free(buf);
        if (got < 0)
            return fail_path(MDT_EIO, path, "cannot read: %s", strerror(saved));
        return fail_path(MDT_EUNSUPPORTED, path, "%s", "grew while it was read");
    }
    close(fd);
    buf[got] = '\0';
    *out = buf;
    if (len)
        *len = (size_t)got;
    return 0;
}
