/* ipcclient: drive the attach client (profiler/attach/ipc.h) from the
 * command line, for the tests in tests/attach/ and for people checking
 * what a process's runtime answers.
 *
 *   ipcclient [-t MS] find PID
 *   ipcclient [-t MS] info (PID | -s SOCKET)
 *   ipcclient [-t MS] attach (PID | -s SOCKET) CLSID PROFILER_PATH [CLIENT_DATA]
 *
 * Results go to stdout as "key: value" lines, always ending with
 * "result: CODE hresult=0xXXXXXXXX" (CODE is MDT_OK or the MDT_E... name);
 * the error message goes to stderr as "ipcclient: ...". Exit status 0 on
 * success, 1 on failure, 2 on a usage error. CLIENT_DATA is passed as its
 * bytes, without a terminator. */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc.h"

static const char *code_name(int rc)
{
    switch (rc) {
    case MDT_OK: return "MDT_OK";
    case MDT_ENOMEM: return "MDT_ENOMEM";
    case MDT_EINVAL: return "MDT_EINVAL";
    case MDT_EIO: return "MDT_EIO";
    case MDT_EBADIMAGE: return "MDT_EBADIMAGE";
    case MDT_ETRUNC: return "MDT_ETRUNC";
    case MDT_ENOTFOUND: return "MDT_ENOTFOUND";
    case MDT_EUNSUPPORTED: return "MDT_EUNSUPPORTED";
    default: return "MDT_E?";
    }
}

static int usage(void)
{
    fputs("usage: ipcclient [-t MS] find PID\n"
          "       ipcclient [-t MS] info (PID | -s SOCKET)\n"
          "       ipcclient [-t MS] attach (PID | -s SOCKET) CLSID PROFILER_PATH [CLIENT_DATA]\n",
          stderr);
    return 2;
}

static int finish(int rc, uint32_t hr, const char *err)
{
    if (rc)
        fprintf(stderr, "ipcclient: %s\n", err);
    printf("result: %s hresult=0x%08X\n", code_name(rc), (unsigned)hr);
    return rc ? 1 : 0;
}

/* Parse "PID" or "-s SOCKET" at argv[*i]; advances *i. */
static bool target(char **argv, int argc, int *i, int *pid, const char **sock)
{
    char *end;
    long v;

    *pid = 0;
    *sock = NULL;
    if (*i >= argc)
        return false;
    if (strcmp(argv[*i], "-s") == 0) {
        if (*i + 1 >= argc)
            return false;
        *sock = argv[*i + 1];
        *i += 2;
        return true;
    }
    v = strtol(argv[*i], &end, 10);
    if (*end || v <= 0 || v > 0x7fffffff)
        return false;
    *pid = (int)v;
    (*i)++;
    return true;
}

int main(int argc, char **argv)
{
    char err[2048] = "";
    uint32_t timeout = MDP_IPC_DEFAULT_TIMEOUT_MS, hr = 0;
    const char *sock, *cmd;
    int i = 1, pid, rc;

    if (i + 1 < argc && strcmp(argv[i], "-t") == 0) {
        timeout = (uint32_t)strtoul(argv[i + 1], NULL, 10);
        i += 2;
    }
    if (i >= argc)
        return usage();
    cmd = argv[i++];

    if (strcmp(cmd, "find") == 0) {
        char path[4096];
        if (!target(argv, argc, &i, &pid, &sock) || sock || i != argc)
            return usage();
        rc = mdp_ipc_find_socket(pid, path, sizeof path, err, sizeof err);
        if (rc == 0)
            printf("socket: %s\n", path);
        return finish(rc, 0, err);
    }
    if (strcmp(cmd, "info") == 0) {
        mdp_ipc_procinfo info;
        if (!target(argv, argc, &i, &pid, &sock) || i != argc)
            return usage();
        rc = sock ? mdp_ipc_process_info_socket(sock, timeout, &info, err, sizeof err)
                  : mdp_ipc_process_info(pid, timeout, &info, err, sizeof err);
        if (rc == 0) {
            const uint8_t *c = info.runtime_cookie;
            printf("pid: %llu\n", (unsigned long long)info.pid);
            printf("command: %s\n", info.info_command >= 2 ? "ProcessInfo2" : "ProcessInfo");
            printf("clr_version: %s\n", info.clr_version);
            printf("os: %s\n", info.os);
            printf("arch: %s\n", info.arch);
            printf("entrypoint: %s\n", info.entrypoint_assembly);
            printf("command_line: %s\n", info.command_line);
            printf("cookie: %02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
                   "%02x%02x%02x%02x%02x%02x\n",
                   c[3], c[2], c[1], c[0], c[5], c[4], c[7], c[6], c[8], c[9], c[10], c[11], c[12],
                   c[13], c[14], c[15]);
            printf("truncated: %s\n", info.truncated ? "yes" : "no");
        }
        return finish(rc, 0, err);
    }
    if (strcmp(cmd, "attach") == 0) {
        const char *clsid, *path, *data = NULL;
        if (!target(argv, argc, &i, &pid, &sock) || argc - i < 2 || argc - i > 3)
            return usage();
        clsid = argv[i];
        path = argv[i + 1];
        if (argc - i == 3)
            data = argv[i + 2];
        rc = sock
                 ? mdp_ipc_attach_socket(sock, clsid, path, data, data ? (uint32_t)strlen(data) : 0,
                                         timeout, &hr, err, sizeof err)
                 : mdp_ipc_attach(pid, clsid, path, data, data ? (uint32_t)strlen(data) : 0,
                                  timeout, &hr, err, sizeof err);
        if (rc == 0)
            printf("attached: %s\n", path);
        return finish(rc, hr, err);
    }
    return usage();
}
