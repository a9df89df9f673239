/* TEMPORARY stand-in for the diagnostics-IPC client of branch `attach`
 * (profiler/attach/ipc.c, written by another engineer; see ipc_stub.h):
 * just enough of the AttachProfiler command of dotnet/diagnostics' IPC
 * protocol to develop and test the profiler's attach catch-up. Its errors
 * are terse; the real client names the causes. Delete on merge. */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <glob.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <mdtools/errors.h>

#include "ipc_stub.h"

static void put16(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
}

static void put32(unsigned char *p, uint32_t v)
{
    put16(p, v);
    put16(p + 2, v >> 16);
}

static int hexv(int c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                          : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

int mdp_ipc_attach(int pid, const char *clsid, const char *profiler_path, const void *client_data,
                   uint32_t client_data_len, uint32_t timeout_ms, uint32_t *hresult, char *err,
                   size_t errlen)
{
    /* CLSID text to GUID bytes (Data1..3 little-endian, Data4 as is) */
    unsigned char g[16], raw[16];
    size_t nb = 0;
    for (const char *c = clsid; *c && nb < 16; c++) {
        if (hexv(*c) < 0)
            continue;
        if (hexv(c[1]) < 0)
            break;
        raw[nb++] = (unsigned char)(hexv(c[0]) << 4 | hexv(c[1]));
        c++;
    }
    if (nb != 16) {
        snprintf(err, errlen, "bad CLSID %s", clsid);
        return MDT_EINVAL;
    }
    g[0] = raw[3], g[1] = raw[2], g[2] = raw[1], g[3] = raw[0], g[4] = raw[5], g[5] = raw[4];
    g[6] = raw[7], g[7] = raw[6];
    memcpy(g + 8, raw + 8, 8);

    const char *tmp = getenv("TMPDIR");
    char pattern[512];
    snprintf(pattern, sizeof pattern, "%s/dotnet-diagnostic-%d-*-socket", tmp && *tmp ? tmp : "/tmp",
             pid);
    glob_t gl;
    if (glob(pattern, 0, NULL, &gl) != 0 || gl.gl_pathc == 0) {
        snprintf(err, errlen, "no diagnostics socket for process %d (%s)", pid, pattern);
        return MDT_ENOTFOUND;
    }
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", gl.gl_pathv[gl.gl_pathc - 1]);
    globfree(&gl);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        snprintf(err, errlen, "cannot connect to %s: %s", sa.sun_path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return MDT_EIO;
    }
    size_t plen = strlen(profiler_path) + 1;
    size_t size = 20 + 4 + 16 + 4 + 2 * plen + 4 + client_data_len;
    unsigned char msg[20 + 4 + 16 + 4 + 2 * 4096 + 4 + 8192];
    if (plen > 4096 || client_data_len > 8192) {
        close(fd);
        snprintf(err, errlen, "path or client data too long");
        return MDT_EINVAL;
    }
    memset(msg, 0, 20);
    memcpy(msg, "DOTNET_IPC_V1", 13);
    put16(msg + 14, (uint32_t)size);
    msg[16] = 0x03; /* profiler command set */
    msg[17] = 0x01; /* AttachProfiler */
    unsigned char *p = msg + 20;
    put32(p, timeout_ms), p += 4;
    memcpy(p, g, 16), p += 16;
    put32(p, (uint32_t)plen), p += 4;
    for (size_t i = 0; i < plen; i++, p += 2)
        put16(p, (unsigned char)profiler_path[i]);
    put32(p, client_data_len), p += 4;
    if (client_data_len)
        memcpy(p, client_data, client_data_len);
    if (write(fd, msg, size) != (ssize_t)size) {
        snprintf(err, errlen, "cannot send the request: %s", strerror(errno));
        close(fd);
        return MDT_EIO;
    }
    unsigned char resp[24];
    size_t got = 0;
    struct pollfd pf = {fd, POLLIN, 0};
    while (got < sizeof resp && poll(&pf, 1, (int)timeout_ms + 1000) > 0) {
        ssize_t n = read(fd, resp + got, sizeof resp - got);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    if (got < 24) {
        snprintf(err, errlen, "no answer from the runtime");
        return MDT_EIO;
    }
    *hresult = (uint32_t)resp[20] | (uint32_t)resp[21] << 8 | (uint32_t)resp[22] << 16 |
               (uint32_t)resp[23] << 24;
    if (resp[16] == 0xff && resp[17] == 0xff) {
        snprintf(err, errlen, "runtime refused with HRESULT 0x%08x", *hresult);
        return MDT_EIO;
    }
    return 0;
}
