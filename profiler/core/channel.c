/* The side channel between the profiler and mdprofile (channel.h):
 * datagrams on abstract Unix sockets, and the percent-encoding that paths
 * and commands share with the log's header.
 *
 * Abstract names (a leading NUL in sun_path, written "@..." here) need no
 * file: nothing is left behind when the launcher dies, and a profiled
 * process that changed its working directory, its root or its mount
 * namespace still reaches the launcher (those stay in one network
 * namespace). The profiler's end never blocks: the socket is non-blocking
 * and a full queue loses the message; the launcher reads the sender's
 * credentials from the kernel and ignores strangers. */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "core/channel.h"
#include "core/hex.h"

size_t mdp_pct_escape(char *out, size_t cap, const char *in, size_t n)
{
    size_t o = 0;
    if (cap == 0)
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)in[i];
        if (c <= 0x20 || c == 0x7f || c == '%') {
            if (o + 3 >= cap)
                break;
            out[o++] = '%';
            o = (size_t)(mdp_hex_put_as(out + o, c, 2, MDP_HEX_UPPER) - out);
        } else {
            if (o + 1 >= cap)
                break;
            out[o++] = (char)c;
        }
    }
    out[o] = 0;
    return o;
}

size_t mdp_pct_unescape(char *out, size_t cap, const char *in, size_t n)
{
    size_t o = 0;
    if (cap == 0)
        return 0;
    for (size_t i = 0; i < n && o + 1 < cap; i++) {
        int h, l;
        if (in[i] == '%' && i + 2 < n && (h = mdp_hexval(in[i + 1])) >= 0 &&
            (l = mdp_hexval(in[i + 2])) >= 0) {
            out[o++] = (char)(h << 4 | l);
            i += 2;
        } else {
            out[o++] = in[i];
        }
    }
    out[o] = 0;
    return o;
}

/* "@name" as an abstract address. */
static int make_addr(struct sockaddr_un *a, socklen_t *len, const char *name)
{
    size_t n = strlen(name);
    if (n < 2 || name[0] != '@' || n > sizeof a->sun_path)
        return -1;
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    memcpy(a->sun_path + 1, name + 1, n - 1);
    *len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
    return 0;
}

int mdp_channel_connect(const char *name)
{
    struct sockaddr_un a;
    socklen_t alen;
    if (!name || make_addr(&a, &alen, name) != 0)
        return -1;
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -1;
    /* an address of our own (autobind: the kernel picks an abstract
     * name), so that the launcher can answer ("stop") */
    struct sockaddr_un self = {.sun_family = AF_UNIX};
    if (bind(fd, (struct sockaddr *)&self, sizeof(sa_family_t)) != 0 ||
        connect(fd, (struct sockaddr *)&a, alen) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

int mdp_channel_send(int fd, const char *msg, size_t len)
{
    if (fd < 0 || len > MDP_CHANNEL_MAX)
        return -1;
    ssize_t r;
    do
        r = send(fd, msg, len, MSG_DONTWAIT | MSG_NOSIGNAL);
    while (r < 0 && errno == EINTR);
    return r == (ssize_t)len ? 0 : -1;
}

size_t mdp_channel_poll(int fd, char *buf, size_t cap)
{
    if (fd < 0 || cap < 2)
        return 0;
    ssize_t r = recv(fd, buf, cap - 1, MSG_DONTWAIT);
    if (r <= 0)
        return 0;
    buf[r] = 0;
    return (size_t)r;
}

void mdp_channel_send_once(const char *name, const char *msg, size_t len)
{
    int fd = mdp_channel_connect(name);
    if (fd >= 0) {
        mdp_channel_send(fd, msg, len);
        close(fd);
    }
}

int mdp_channel_listen(char *name, size_t cap)
{
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof one);
    /* a big receive queue: many processes may start at once (a build) */
    int size = 1 << 20;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    for (int tries = 0; tries < 16; tries++) {
        unsigned rnd =
            (unsigned)(ts.tv_nsec ^ (ts.tv_sec << 7)) * 2654435761u + (unsigned)tries * 40503u;
        if (snprintf(name, cap, "@mdprofile.%d.%08x", (int)getpid(), rnd) >= (int)cap)
            break;
        struct sockaddr_un a;
        socklen_t alen;
        if (make_addr(&a, &alen, name) != 0)
            break;
        if (bind(fd, (struct sockaddr *)&a, alen) == 0)
            return fd;
        if (errno != EADDRINUSE)
            break;
    }
    int e = errno;
    close(fd);
    errno = e;
    return -1;
}

ssize_t mdp_channel_recv(int fd, char *buf, size_t cap, int timeout_ms, pid_t *pid, uid_t *uid,
                         void *from, unsigned *fromlen)
{
    struct pollfd p = {fd, POLLIN, 0};
    int r = poll(&p, 1, timeout_ms);
    if (r < 0)
        return errno == EINTR ? 0 : -1;
    if (r == 0 || cap < 2)
        return 0;
    struct iovec iov = {buf, cap - 1};
    union {
        struct cmsghdr h;
        char b[CMSG_SPACE(sizeof(struct ucred))];
    } ctl;
    struct sockaddr_un sa;
    struct msghdr m = {.msg_name = &sa,
                       .msg_namelen = sizeof sa,
                       .msg_iov = &iov,
                       .msg_iovlen = 1,
                       .msg_control = ctl.b,
                       .msg_controllen = sizeof ctl.b};
    ssize_t n = recvmsg(fd, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (n < 0)
        return errno == EAGAIN || errno == EINTR ? 0 : -1;
    buf[n] = 0;
    *pid = -1;
    *uid = (uid_t)-1;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS &&
            c->cmsg_len >= CMSG_LEN(sizeof(struct ucred))) {
            struct ucred cr;
            memcpy(&cr, CMSG_DATA(c), sizeof cr);
            *pid = cr.pid;
            *uid = cr.uid;
        }
    if (from && fromlen) {
        unsigned l = m.msg_namelen < sizeof sa ? m.msg_namelen : (unsigned)sizeof sa;
        memcpy(from, &sa, l);
        *fromlen = l;
    }
    return n;
}

int mdp_channel_reply(int fd, const void *to, unsigned tolen, const char *msg, size_t len)
{
    ssize_t r = sendto(fd, msg, len, MSG_DONTWAIT | MSG_NOSIGNAL, (const struct sockaddr *)to,
                       (socklen_t)tolen);
    return r == (ssize_t)len ? 0 : -1;
}
