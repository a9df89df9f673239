/* libFuzzer harness: the diagnostics IPC client's handling of a reply,
 * fed as if from a socket (issue 25).
 *
 * The input is what a peer answers: its first byte picks the question
 * (even: AttachProfiler, mdp_ipc_attach_socket; odd: ProcessInfo2 and, when
 * that is refused as unknown, ProcessInfo, mdp_ipc_process_info_socket),
 * the rest is sent as the reply, on every connection the client makes,
 * by a server thread on a Unix socket of this process, which then closes
 * the connection. So the whole client runs on it as it runs against a
 * runtime: the transport's reads (a header, then as much payload as it
 * declares, with a deadline), the header and payload parsers
 * (profiler/attach/wire.c), the Error and OK replies, the ProcessInfo
 * strings, the fallbacks and the messages. Besides the sanitizers, the
 * harness aborts when
 *   - a call fails without a message, or with one that is not a string
 *     within its buffer;
 *   - an accepted attach reports a failure HRESULT;
 *   - ProcessInfo answers with a string that is not NUL-terminated within
 *     its field, or says it came from another command than asked.
 * The server reads the request whole before it answers (as the runtime
 * does), so a reply never races its request. Inputs are at most 64 KiB
 * plus one byte (larger ones are cut): a message's size field is 16 bits. */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "ipc.h"

#define MAX_REPLY 65600u
#define CLSID "{1C49C441-593E-4870-856F-98DA7A9DEE94}"

static char dir[64], sock_path[108];
static int listen_fd = -1;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t reply[MAX_REPLY];
static size_t reply_len;

static int read_full(int fd, uint8_t *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        got += (size_t)r;
    }
    return 0;
}

static void *serve(void *arg)
{
    (void)arg;
    for (;;) {
        int fd = accept(listen_fd, NULL, NULL);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            return NULL;
        }
        /* the request, whole: header, then what its size says */
        uint8_t req[65536];
        if (read_full(fd, req, 20) == 0) {
            size_t size = (size_t)req[14] | (size_t)req[15] << 8;
            if (size > 20 && size <= sizeof req)
                read_full(fd, req + 20, size - 20);
            pthread_mutex_lock(&lock);
            size_t off = 0;
            while (off < reply_len) {
                ssize_t w = send(fd, reply + off, reply_len - off, MSG_NOSIGNAL);
                if (w < 0 && errno == EINTR)
                    continue;
                if (w <= 0)
                    break; /* the client stopped reading: fine */
                off += (size_t)w;
            }
            pthread_mutex_unlock(&lock);
        }
        close(fd);
    }
}

static void cleanup(void)
{
    if (sock_path[0])
        unlink(sock_path);
    if (dir[0])
        rmdir(dir);
}

static int setup(void)
{
    if (listen_fd >= 0)
        return 0;
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/mdpfuzzXXXXXX", tmp && strlen(tmp) < 40 ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        dir[0] = 0;
        return -1;
    }
    snprintf(sock_path, sizeof sock_path, "%s/s", dir);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", sock_path);
    listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listen_fd < 0 || bind(listen_fd, (struct sockaddr *)&a, sizeof a) != 0 ||
        listen(listen_fd, 16) != 0)
        return -1;
    atexit(cleanup);
    pthread_t t;
    if (pthread_create(&t, NULL, serve, NULL) != 0)
        return -1;
    pthread_detach(t);
    return 0;
}

/* A failure says why, in a string that fits (on success err is left as
 * it was). */
static void check_message(int rc, const char *err, size_t errlen)
{
    if (rc != 0 && (memchr(err, 0, errlen) == NULL || err[0] == 0 || err[0] == 'x'))
        abort();
}

static void check_string(const char *s, size_t cap)
{
    if (memchr(s, 0, cap) == NULL)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || setup() != 0)
        return 0;
    pthread_mutex_lock(&lock);
    reply_len = size - 1 > MAX_REPLY ? MAX_REPLY : size - 1;
    memcpy(reply, data + 1, reply_len);
    pthread_mutex_unlock(&lock);
    char err[1024];
    memset(err, 'x', sizeof err);
    if (data[0] % 2 == 0) {
        uint32_t hr = 0xdeadbeef;
        int rc = mdp_ipc_attach_socket(sock_path, CLSID, "/nonexistent/libmdprofile.so", "k=v", 3,
                                       500, &hr, err, sizeof err);
        check_message(rc, err, sizeof err);
        if (rc == 0 && (hr & 0x80000000u))
            abort(); /* accepted with a failure HRESULT */
    } else {
        mdp_ipc_procinfo info;
        memset(&info, 0x55, sizeof info);
        int rc = mdp_ipc_process_info_socket(sock_path, 500, &info, err, sizeof err);
        check_message(rc, err, sizeof err);
        if (rc == 0) {
            check_string(info.command_line, sizeof info.command_line);
            check_string(info.os, sizeof info.os);
            check_string(info.arch, sizeof info.arch);
            check_string(info.entrypoint_assembly, sizeof info.entrypoint_assembly);
            check_string(info.clr_version, sizeof info.clr_version);
            if (info.info_command != 1 && info.info_command != 2)
                abort();
        }
    }
    return 0;
}
