/* The transport of the diagnostics IPC on Linux: one Unix domain stream
 * connection per command (ipc-protocol.md, "Transport", "General Flow"):
 * connect, write the request, read one reply. Connect, write and read share
 * one absolute deadline on CLOCK_MONOTONIC and wait with poll(2) on a
 * non-blocking socket, so a runtime that accepts and never answers (stopped,
 * busy, or a fake) costs at most the caller's timeout. Writes use
 * MSG_NOSIGNAL: a peer that closes early yields EPIPE, not SIGPIPE. */
#define _GNU_SOURCE /* O_PATH */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ipc_int.h"

uint64_t mdp__ipc_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Milliseconds left before the deadline, rounded up; 0 when it has passed. */
static int left_ms(uint64_t deadline_ns)
{
    uint64_t now = mdp__ipc_now_ns();
    uint64_t ms;
    if (now >= deadline_ns)
        return 0;
    ms = (deadline_ns - now + 999999u) / 1000000u;
    return ms > INT_MAX ? INT_MAX : (int)ms;
}

/* Wait until fd is ready for `events`: 1 ready (or hung up / in error, which
 * the next call reports), 0 deadline passed, -1 poll failed (errno). */
static int wait_fd(int fd, short events, uint64_t deadline_ns)
{
    for (;;) {
        struct pollfd p = {.fd = fd, .events = events};
        int ms = left_ms(deadline_ns);
        int r = poll(&p, 1, ms);
        if (r > 0)
            return 1;
        if (r < 0 && errno != EINTR)
            return -1;
        if (r == 0 && ms == 0)
            return 0;
    }
}

static void sleep_ms(int ms)
{
    struct timespec ts = {0, (long)ms * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* Fill sa with path; a path longer than sun_path (108 bytes) is reached
 * through an O_PATH descriptor of its directory, /proc/self/fd/N/name,
 * which only works when that form is short enough. *dirfd is -1 or the
 * descriptor to close after connect. */
static int make_address(struct sockaddr_un *sa, int *dirfd, const char *path, char *err,
                        size_t errlen)
{
    const char *slash;
    char dir[PATH_MAX];
    int n;

    memset(sa, 0, sizeof *sa);
    sa->sun_family = AF_UNIX;
    *dirfd = -1;
    if (strlen(path) < sizeof sa->sun_path) {
        memcpy(sa->sun_path, path, strlen(path) + 1);
        return 0;
    }
    slash = strrchr(path, '/');
    if (!slash || (size_t)(slash - path) >= sizeof dir)
        goto too_long;
    memcpy(dir, path, (size_t)(slash - path));
    dir[slash - path] = '\0';
    *dirfd = open(dir[0] ? dir : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (*dirfd < 0)
        goto too_long;
    n = snprintf(sa->sun_path, sizeof sa->sun_path, "/proc/self/fd/%d/%s", *dirfd, slash + 1);
    if (n < 0 || (size_t)n >= sizeof sa->sun_path) {
        close(*dirfd);
        *dirfd = -1;
        goto too_long;
    }
    return 0;
too_long:
    return mdp__ipc_fail(err, errlen, MDT_EINVAL,
                         "socket path %.300s is too long for a Unix socket address", path);
}

static int connect_error(int e, const char *path, char *err, size_t errlen)
{
    struct stat st;

    switch (e) {
    case EACCES:
    case EPERM:
        if (stat(path, &st) == 0)
            return mdp__ipc_fail(err, errlen, MDT_EIO,
                                 "permission denied connecting to %s (socket owned by uid %u, "
                                 "mode %03o; you are uid %u): attach as the user who runs the "
                                 "process, or as root",
                                 path, (unsigned)st.st_uid, (unsigned)(st.st_mode & 0777),
                                 (unsigned)geteuid());
        return mdp__ipc_fail(err, errlen, MDT_EIO,
                             "permission denied connecting to %s (you are uid %u): attach as the "
                             "user who runs the process, or as root",
                             path, (unsigned)geteuid());
    case ENOENT:
        return mdp__ipc_fail(err, errlen, MDT_ENOTFOUND,
                             "%s does not exist (any more): has the process exited?", path);
    case ECONNREFUSED:
        return mdp__ipc_fail(err, errlen, MDT_ENOTFOUND,
                             "nobody listens on %s: a stale socket left by a process that exited "
                             "(or not a socket)",
                             path);
    default:
        return mdp__ipc_fail(err, errlen, MDT_EIO, "cannot connect to %s: %s", path, strerror(e));
    }
}

static int connect_by_deadline(int *out, const char *path, uint64_t deadline_ns, char *err,
                               size_t errlen)
{
    struct sockaddr_un sa;
    int dirfd, fd, rc, e = 0;

    *out = -1;
    rc = make_address(&sa, &dirfd, path, err, errlen);
    if (rc)
        return rc;
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        e = errno;
        if (dirfd >= 0)
            close(dirfd);
        return mdp__ipc_fail(err, errlen, MDT_EIO, "cannot create a Unix socket: %s", strerror(e));
    }
    for (;;) {
        if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0) {
            e = 0;
            break;
        }
        e = errno;
        if (e == EINTR)
            continue;
        if (e == EAGAIN) {
            /* The listener's backlog is full: a Unix socket cannot be
             * polled for that, so retry until the deadline. */
            int ms = left_ms(deadline_ns);
            if (ms == 0)
                break;
            sleep_ms(ms < 5 ? ms : 5);
            continue;
        }
        if (e == EINPROGRESS) { /* not expected for AF_UNIX, but allowed */
            socklen_t sl = sizeof e;
            int w = wait_fd(fd, POLLOUT, deadline_ns);
            if (w == 0)
                e = EAGAIN;
            else if (w < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &sl) != 0)
                e = errno;
        }
        break;
    }
    if (dirfd >= 0)
        close(dirfd);
    if (e == 0) {
        *out = fd;
        return 0;
    }
    close(fd);
    if (e == EAGAIN)
        return mdp__ipc_fail(err, errlen, MDT_EIO,
                             "timed out: the runtime did not accept a connection on %s", path);
    return connect_error(e, path, err, errlen);
}

int mdp__ipc_send_all(int fd, const uint8_t *msg, size_t len, uint64_t deadline_ns,
                      const char *path, char *err, size_t errlen)
{
    size_t sent = 0;

    while (sent < len) {
        ssize_t n = send(fd, msg + sent, len - sent, MSG_NOSIGNAL);
        if (n > 0) {
            sent += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            int w = wait_fd(fd, POLLOUT, deadline_ns);
            if (w == 1)
                continue;
            if (w == 0)
                return mdp__ipc_fail(err, errlen, MDT_EIO,
                                     "timed out sending the request on %s (%zu of %zu bytes "
                                     "taken): the runtime is not reading",
                                     path, sent, len);
        }
        if (n < 0 && (errno == EPIPE || errno == ECONNRESET))
            return mdp__ipc_fail(err, errlen, MDT_EIO,
                                 "the runtime closed the connection on %s before reading the "
                                 "request (%zu of %zu bytes sent)",
                                 path, sent, len);
        return mdp__ipc_fail(err, errlen, MDT_EIO, "cannot send the request on %s: %s", path,
                             strerror(errno));
    }
    return 0;
}

int mdp__ipc_recv_all(int fd, uint8_t *buf, size_t n, size_t *got, bool *timed_out,
                      uint64_t deadline_ns, const char *path, char *err, size_t errlen)
{
    *got = 0;
    while (*got < n) {
        ssize_t r = recv(fd, buf + *got, n - *got, 0);
        if (r > 0) {
            *got += (size_t)r;
            continue;
        }
        if (r == 0)
            return 0;
        if (errno == EINTR)
            continue;
        if (errno == ECONNRESET)
            return 0;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            int w = wait_fd(fd, POLLIN, deadline_ns);
            if (w == 1)
                continue;
            if (w == 0) {
                *timed_out = true;
                return mdp__ipc_fail(err, errlen, MDT_EIO,
                                     "timed out waiting for the reply on %s (%zu bytes received)",
                                     path, *got);
            }
        }
        return mdp__ipc_fail(err, errlen, MDT_EIO, "cannot read the reply on %s: %s", path,
                             strerror(errno));
    }
    return 0;
}

int mdp__ipc_transact(TALLOC_CTX *mem_ctx, mdp_ipc_reply *reply, const char *socket_path,
                      const uint8_t *msg, size_t len, uint64_t deadline_ns, char *err,
                      size_t errlen)
{
    uint8_t hdr[MDP_IPC_HEADER_LEN];
    size_t got;
    int fd, rc;

    memset(reply, 0, sizeof *reply);
    rc = connect_by_deadline(&fd, socket_path, deadline_ns, err, errlen);
    if (rc) {
        reply->timed_out = rc == MDT_EIO && left_ms(deadline_ns) == 0;
        return rc;
    }
    rc = mdp__ipc_send_all(fd, msg, len, deadline_ns, socket_path, err, errlen);
    if (rc) {
        reply->timed_out = left_ms(deadline_ns) == 0;
        goto out;
    }
    rc = mdp__ipc_recv_all(fd, hdr, sizeof hdr, &got, &reply->timed_out, deadline_ns, socket_path,
                           err, errlen);
    if (rc)
        goto out;
    if (got < sizeof hdr) {
        rc = got == 0 ? mdp__ipc_fail(err, errlen, MDT_ETRUNC,
                                      "the runtime closed the connection on %s without a reply",
                                      socket_path)
                      : mdp__ipc_fail(err, errlen, MDT_ETRUNC,
                                      "reply on %s truncated: connection closed after %zu bytes "
                                      "of the 20-byte header",
                                      socket_path, got);
        goto out;
    }
    rc = mdp__ipc_parse_header(reply, hdr, err, errlen);
    if (rc)
        goto out;
    reply->payload_len = reply->size - MDP_IPC_HEADER_LEN;
    if (reply->payload_len) {
        reply->payload = talloc_size(mem_ctx, reply->payload_len);
        if (!reply->payload) {
            rc = mdp__ipc_fail(err, errlen, MDT_ENOMEM, "out of memory for a %zu-byte reply",
                               reply->payload_len);
            goto out;
        }
        rc = mdp__ipc_recv_all(fd, reply->payload, reply->payload_len, &got, &reply->timed_out,
                               deadline_ns, socket_path, err, errlen);
        if (rc == 0 && got < reply->payload_len)
            rc =
                mdp__ipc_fail(err, errlen, MDT_ETRUNC,
                              "reply on %s truncated: header declares %u bytes, connection "
                              "closed after %zu",
                              socket_path, (unsigned)reply->size, (size_t)MDP_IPC_HEADER_LEN + got);
        if (rc) {
            talloc_free(reply->payload);
            reply->payload = NULL;
        }
    }
out:
    close(fd);
    return rc;
}
