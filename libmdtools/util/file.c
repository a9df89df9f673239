/* Opening files named by input (util/file.h). A path from input may name
 * anything: open(2) of a FIFO blocks until a writer comes (forever, for a
 * tool reading a list of paths), open(2) of a device may act on it (a tape
 * rewinds, a terminal becomes the controlling one). So the path is
 * examined first and only a regular file is opened, with O_NONBLOCK in
 * case the path was swapped for a FIFO in between, and fstat(2) checks
 * that what was opened is still a regular file. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <sys/stat.h>
#include <unistd.h>

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
