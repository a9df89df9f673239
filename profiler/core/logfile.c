/* The log's file: which name this process writes, opening it without ever
 * taking another process's log, and writing it in pieces.
 *
 * Every .NET process started under `mdprofile -- CMD` inherits the
 * profiler's environment and the same output path. The first process (the
 * one the launcher started: MDPROFILE_FIRST_PID; on attach, the target)
 * writes the path itself; every other writes NAME.PID.EXT beside it,
 * created with O_EXCL (NAME.PID.N.EXT when that exists: a pid reused in a
 * long run), so no process truncates another's log. "%p" in the path
 * stands for the pid in every process. Without a launcher (the variables
 * set by hand) the path goes to the process that creates it.
 *
 * The file must be a regular file (opened with O_NONBLOCK, then fstat):
 * a FIFO or a device would block or fail the guest, and the log is
 * rewritten at its end (a tentative #stats line). Writes go at known
 * offsets (pwrite). A write that fails is undone (ftruncate back to what
 * was whole), reported once, and what it held stays pending for the next
 * write. RLIMIT_FSIZE is honoured before writing: a write past it would
 * send SIGXFSZ to the host, whose default action kills it. */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base.h"

/* Open path for writing, as a regular file. */
static int open_regular(const char *path, int flags, int *err)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | flags, 0644);
    if (fd < 0) {
        *err = errno;
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        *err = 0;
        close(fd);
        return -2;
    }
    return fd;
}

int mdp_logfile_open(mdp_core *core, char *err, size_t errlen)
{
    struct mdp_logfile *lf = &core->log;
    const char *want = core->cfg.output[0] ? core->cfg.output : "mdprofile.%p.log";
    char path[sizeof lf->path];
    lf->fd = -1;
    lf->stats_at = -1;
    if (mdp_log_expand(path, sizeof path, want, core->pid) != 0) {
        snprintf(err, errlen, "log path too long");
        return -1;
    }
    int first = core->cfg.first_pid == core->pid;
    int has_pid = strstr(want, "%p") != NULL;
    int e = 0, fd = -1;
    if (first) {
        fd = open_regular(path, O_CREAT | O_TRUNC, &e);
    } else if (core->cfg.first_pid == 0 || has_pid) {
        /* a name of its own (%p), or the first to create it (no launcher) */
        fd = open_regular(path, O_CREAT | O_EXCL, &e);
        if (fd == -1 && e != EEXIST)
            goto failed;
    }
    if (fd == -1 && !first) {
        /* a further process: NAME.PID.EXT beside the first's log (with %p,
         * NAME.PID.N.EXT: a pid reused in a long run) */
        char base[sizeof path];
        memcpy(base, path, sizeof base);
        for (unsigned n = has_pid ? 1 : 0; n < 100 && fd == -1; n++) {
            if (mdp_log_sibling_name(path, sizeof path, base, has_pid ? -1 : core->pid, n) != 0) {
                snprintf(err, errlen, "log path too long");
                return -1;
            }
            fd = open_regular(path, O_CREAT | O_EXCL, &e);
            if (fd == -1 && e != EEXIST)
                break;
        }
    }
failed:
    if (fd < 0) {
        if (fd == -2)
            snprintf(err, errlen, "cannot write the log %s: not a regular file", path);
        else
            snprintf(err, errlen, "cannot write the log %s: %s", path, strerror(e));
        return -1;
    }
    snprintf(lf->path, sizeof lf->path, "%s", path);
    lf->fd = fd;
    lf->end = lf->size = 0;
    return 0;
}

static int write_at(int fd, const char *buf, size_t len, off_t at)
{
    while (len) {
        ssize_t w = pwrite(fd, buf, len, at);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = EIO;
            return -1;
        }
        buf += w;
        len -= (size_t)w;
        at += w;
    }
    return 0;
}

int mdp_logfile_write(mdp_core *core, const char *buf, size_t len, size_t keep)
{
    struct mdp_logfile *lf = &core->log;
    if (lf->fd < 0)
        return -1;
    uint64_t at = lf->stats_at >= 0 ? (uint64_t)lf->stats_at : lf->end;
    struct rlimit rl;
    int e = 0;
    if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        at + len > (uint64_t)rl.rlim_cur)
        e = EFBIG; /* a write past the limit would raise SIGXFSZ in the host */
    else if (write_at(lf->fd, buf, len, (off_t)at) != 0)
        e = errno;
    if (e) {
        /* undo: the log ends with whole lines (what stays); the tentative
         * #stats goes, and what this write held stays pending */
        if (ftruncate(lf->fd, (off_t)lf->end) == 0)
            lf->size = lf->end;
        lf->stats_at = -1;
        if (!lf->failures++) {
            lf->failed_errno = e;
            mdp_note(core,
                     "cannot write the log %s: %s (what it holds is whole; the rest stays "
                     "pending and is written when it can be)",
                     lf->path, strerror(e));
        }
        return -1;
    }
    uint64_t size = at + len;
    /* an old tentative #stats line longer than what replaced it */
    if (lf->size > size && ftruncate(lf->fd, (off_t)size) != 0)
        size = lf->size;
    lf->end = at + keep;
    lf->stats_at = len > keep ? (int64_t)(at + keep) : -1;
    lf->size = size;
    return 0;
}

void mdp_logfile_close(mdp_core *core)
{
    if (core->log.fd >= 0)
        close(core->log.fd);
    core->log.fd = -1;
}
