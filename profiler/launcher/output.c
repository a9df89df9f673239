/* The launcher's file checks: finding the profiler library, and the log
 * path checked before the program starts, so that an unwritable -o fails
 * at once with its errno instead of after the whole run. The launcher
 * never reads a log that is not a regular file (a device such as
 * /dev/full made it spin forever reading it back), and reads only the
 * ends of one: the header line and the last line. */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "launcher/launch.h"

int mdl_find_profiler(char *out, size_t len)
{
    const char *env = getenv("MDPROFILE_PROFILER");
    if (env && *env) {
        snprintf(out, len, "%s", env);
        return access(out, R_OK) == 0 ? 0 : -1;
    }
    char self[PATH_MAX - 32];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = 0;
        char *slash = strrchr(self, '/');
        if (slash) {
            *slash = 0;
            /* a libtool wrapper runs the binary from .libs/ already */
            snprintf(out, len, "%s/.libs/libmdprofile.so", self);
            if (access(out, R_OK) == 0)
                return 0;
            snprintf(out, len, "%s/libmdprofile.so", self);
            if (access(out, R_OK) == 0)
                return 0;
        }
    }
    snprintf(out, len, "%s/libmdprofile.so", MDP_PKGLIBDIR);
    return access(out, R_OK) == 0 ? 0 : -1;
}

int mdl_absolute(char *out, size_t len, const char *path)
{
    if (path[0] == '/')
        return snprintf(out, len, "%s", path) < (int)len ? 0 : -1;
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd))
        return -1;
    return snprintf(out, len, "%s/%s", cwd, path) < (int)len ? 0 : -1;
}

int mdl_output_check(const char *path, char *err, size_t errlen)
{
    const char *slash = strrchr(path, '/');
    const char *pp = strstr(path, "%p");
    if (pp && slash && pp < slash) {
        snprintf(err, errlen, "%s: %%p may appear in the log's file name only", path);
        return -1;
    }
    if (pp) {
        /* each process names its own file: check the folder instead */
        char dir[PATH_MAX], probe[PATH_MAX + 64];
        snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 0, path);
        if (!dir[0])
            snprintf(dir, sizeof dir, "/");
        struct stat st;
        if (stat(dir, &st) != 0) {
            snprintf(err, errlen, "cannot write the log %s: %s: %s", path, dir, strerror(errno));
            return -1;
        }
        if (!S_ISDIR(st.st_mode)) {
            snprintf(err, errlen, "cannot write the log %s: %s is not a directory", path, dir);
            return -1;
        }
        snprintf(probe, sizeof probe, "%s/.mdprofile-check.%d", dir, (int)getpid());
        int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0) {
            snprintf(err, errlen, "cannot write the log %s: cannot create files in %s: %s", path,
                     dir, strerror(errno));
            return -1;
        }
        close(fd);
        unlink(probe);
        return 0;
    }
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "cannot write the log %s: not a regular file (%s)", path,
                 S_ISDIR(st.st_mode)    ? "a directory"
                 : S_ISCHR(st.st_mode)  ? "a character device"
                 : S_ISFIFO(st.st_mode) ? "a FIFO"
                 : S_ISSOCK(st.st_mode) ? "a socket"
                                        : "not a file");
        return -1;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0644);
    if (fd < 0) {
        snprintf(err, errlen, "cannot write the log %s: %s", path, strerror(errno));
        return -1;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        snprintf(err, errlen, "cannot write the log %s: not a regular file", path);
        return -1;
    }
    close(fd);
    return 0;
}

int mdl_log_state(const char *path, char *end, size_t endlen)
{
    if (endlen)
        end[0] = 0;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return -1;
    }
    char head[16] = "";
    ssize_t n = pread(fd, head, sizeof head - 1, 0);
    int state = 0;
    /* format 1 (alloc), 2 (a calls-mode log), 3 or 4 (a sample log, with
     * threads and time slices since 4: doc/profile-log.md) */
    if (n >= 13 && memcmp(head, "#mdprofile ", 11) == 0 && head[11] >= '1' && head[11] <= '4' &&
        head[12] == ' ')
        state = 1;
    if (state && st.st_size > 0) {
        /* the last line, from the last 8 KiB (a #stats line is shorter) */
        char tail[8193];
        off_t from = st.st_size > 8192 ? st.st_size - 8192 : 0;
        ssize_t m = pread(fd, tail, (size_t)(st.st_size - from), from);
        if (m > 0 && tail[m - 1] == '\n') {
            tail[m - 1] = 0;
            char *last = strrchr(tail, '\n');
            last = last ? last + 1 : (from == 0 ? tail : NULL);
            if (last && strncmp(last, "#stats ", 7) == 0) {
                state = 2;
                const char *e = strstr(last, " end=");
                if (e && endlen) {
                    e += 5;
                    size_t k = strcspn(e, " ");
                    snprintf(end, endlen, "%.*s", (int)k, e);
                }
            }
        }
    }
    close(fd);
    return state;
}

void mdl_output_unused(const char *path)
{
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0)
        unlink(path);
}
