/* The commands of the attach client: AttachProfiler (Profiler command set
 * 0x03, id 0x01) and ProcessInfo2 / ProcessInfo (Process command set 0x04,
 * ids 0x04 / 0x00), each on its own connection (ipc-protocol.md, "Profiler
 * Commands", "Process Commands", "Errors"). This file turns the runtime's
 * answers into the MDT_E... codes and one-line messages of ipc.h: what was
 * refused and why (the HRESULT's name and meaning), a runtime too old for
 * the command (with its version when it can tell), a silent runtime (and
 * whether the process is stopped). */
#define _DEFAULT_SOURCE /* PATH_MAX */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ipc_int.h"

static uint64_t deadline_after(uint32_t timeout_ms)
{
    return mdp__ipc_now_ns() + (uint64_t)timeout_ms * 1000000u;
}

/* "HRESULT 0x8013136A (CORPROF_E_PROFILER_ALREADY_ACTIVE: a profiler is
 * already loaded in this process)" */
static const char *describe_hr(char *buf, size_t n, uint32_t hr)
{
    const char *name = mdp_ipc_hresult_name(hr), *text = mdp_ipc_hresult_text(hr);
    if (name)
        snprintf(buf, n, "HRESULT 0x%08X (%s: %s)", (unsigned)hr, name, text);
    else
        snprintf(buf, n, "HRESULT 0x%08X", (unsigned)hr);
    return buf;
}

/* "process 1234" or "the runtime on SOCKET" for messages. */
static const char *target_name(char *buf, size_t n, int pid, const char *socket_path)
{
    if (pid > 0)
        snprintf(buf, n, "process %d", pid);
    else
        snprintf(buf, n, "the runtime on %s", socket_path);
    return buf;
}

/* Wrap a transport failure with the target and, after a timeout, a hint. */
static int transport_failed(int rc, const mdp_ipc_reply *reply, int pid, const char *what,
                            uint32_t timeout_ms, const char *socket_path, const char *why,
                            char *err, size_t errlen)
{
    char name[PATH_MAX + 32];
    const char *hint = "";

    target_name(name, sizeof name, pid, socket_path);
    if (reply->timed_out) {
        char state = pid > 0 ? mdp__ipc_proc_state(pid) : 0;
        hint = state == 'T' || state == 't'
                   ? "; the process is stopped (SIGSTOP or a debugger): resume it"
                   : "; the runtime may be busy (or hung), or the profiler's "
                     "InitializeForAttach still running: retry with a longer timeout";
        return mdp__ipc_fail(err, errlen, rc, "%s, %s: no answer within %u ms: %s%s", what, name,
                             (unsigned)timeout_ms, why, hint);
    }
    return mdp__ipc_fail(err, errlen, rc, "%s, %s: %s", what, name, why);
}

static bool is_error_reply(const mdp_ipc_reply *r)
{
    return r->command_set == MDP_IPC_SET_SERVER && r->command_id == MDP_IPC_SERVER_ERROR;
}

/* One Process command (ProcessInfo2 or ProcessInfo) on its own connection.
 * *hr_out gets the HRESULT of an Error reply (0 otherwise). */
static int query_info(mdp_ipc_procinfo *info, uint32_t *hr_out, const char *socket_path, int pid,
                      int version, uint64_t deadline_ns, uint32_t timeout_ms, char *err,
                      size_t errlen)
{
    uint8_t msg[MDP_IPC_HEADER_LEN];
    const char *what = version >= 2 ? "ProcessInfo2" : "ProcessInfo";
    char why[PATH_MAX + 512], name[PATH_MAX + 32], hrtext[256];
    TALLOC_CTX *tmp = talloc_new(NULL);
    mdp_ipc_reply reply;
    mdp_ipc_procinfo parsed;
    int rc;

    *hr_out = 0;
    if (!tmp)
        return mdp__ipc_fail(err, errlen, MDT_ENOMEM, "out of memory");
    mdp__ipc_put_header(msg, MDP_IPC_HEADER_LEN, MDP_IPC_SET_PROCESS,
                        version >= 2 ? MDP_IPC_PROCESS_INFO2 : MDP_IPC_PROCESS_INFO);
    rc = mdp__ipc_transact(tmp, &reply, socket_path, msg, sizeof msg, deadline_ns, why, sizeof why);
    if (rc) {
        rc = transport_failed(rc, &reply, pid, what, timeout_ms, socket_path, why, err, errlen);
    } else if (is_error_reply(&reply)) {
        bool is_error;
        rc = mdp__ipc_reply_hresult(hr_out, &is_error, &reply, why, sizeof why);
        if (rc)
            rc = mdp__ipc_fail(err, errlen, rc, "%s, %s: %s", what,
                               target_name(name, sizeof name, pid, socket_path), why);
        else
            rc = mdp__ipc_fail(err, errlen, MDT_EIO, "%s, %s: the runtime answered %s", what,
                               target_name(name, sizeof name, pid, socket_path),
                               describe_hr(hrtext, sizeof hrtext, *hr_out));
    } else if (reply.command_set != MDP_IPC_SET_SERVER || reply.command_id != MDP_IPC_SERVER_OK) {
        rc = mdp__ipc_fail(err, errlen, MDT_EBADIMAGE,
                           "%s, %s: reply command 0x%02X%02X is neither OK (0xFF00) nor Error "
                           "(0xFFFF)",
                           what, target_name(name, sizeof name, pid, socket_path),
                           reply.command_set, reply.command_id);
    } else {
        rc = mdp__ipc_parse_process_info(&parsed, reply.payload, reply.payload_len, version, why,
                                         sizeof why);
        if (rc)
            rc = mdp__ipc_fail(err, errlen, rc, "%s, %s: %s", what,
                               target_name(name, sizeof name, pid, socket_path), why);
        else
            *info = parsed;
    }
    talloc_free(tmp);
    return rc;
}

static int process_info_at(const char *socket_path, int pid, uint64_t deadline_ns,
                           uint32_t timeout_ms, mdp_ipc_procinfo *info, char *err, size_t errlen)
{
    uint32_t hr;
    char name[PATH_MAX + 32];
    int rc = query_info(info, &hr, socket_path, pid, 2, deadline_ns, timeout_ms, err, errlen);

    if (rc == 0 || hr != MDP_HR_UNKNOWN_COMMAND)
        return rc;
    /* .NET 5 knows ProcessInfo but not ProcessInfo2 (added in .NET 6). */
    rc = query_info(info, &hr, socket_path, pid, 1, deadline_ns, timeout_ms, err, errlen);
    if (rc && hr == MDP_HR_UNKNOWN_COMMAND)
        return mdp__ipc_fail(err, errlen, MDT_EUNSUPPORTED,
                             "%s: runtime too old: it knows neither ProcessInfo2 (.NET 6) nor "
                             "ProcessInfo (.NET 5); it is a .NET Core 3.x runtime",
                             target_name(name, sizeof name, pid, socket_path));
    return rc;
}

int mdp_ipc_process_info_socket(const char *socket_path, uint32_t timeout_ms,
                                mdp_ipc_procinfo *info, char *err, size_t errlen)
{
    if (!socket_path || !info)
        return mdp__ipc_fail(err, errlen, MDT_EINVAL, "no socket path or no result buffer");
    if (timeout_ms == 0)
        timeout_ms = MDP_IPC_DEFAULT_TIMEOUT_MS;
    return process_info_at(socket_path, 0, deadline_after(timeout_ms), timeout_ms, info, err,
                           errlen);
}

int mdp_ipc_process_info(int pid, uint32_t timeout_ms, mdp_ipc_procinfo *info, char *err,
                         size_t errlen)
{
    char path[PATH_MAX];
    uint64_t deadline;
    int rc;

    if (!info)
        return mdp__ipc_fail(err, errlen, MDT_EINVAL, "no result buffer");
    if (timeout_ms == 0)
        timeout_ms = MDP_IPC_DEFAULT_TIMEOUT_MS;
    deadline = deadline_after(timeout_ms);
    rc = mdp_ipc_find_socket(pid, path, sizeof path, err, errlen);
    if (rc)
        return rc;
    return process_info_at(path, pid, deadline, timeout_ms, info, err, errlen);
}

/* "; note: /x/y.so does not exist as process 1234 sees it" when the path is
 * missing (checked through /proc/pid/root when that is readable). */
static void path_note(char *buf, size_t n, int pid, const char *path)
{
    char seen[PATH_MAX + 64];
    struct stat st;
    bool via_root = false;

    buf[0] = '\0';
    if (pid > 0) {
        snprintf(seen, sizeof seen, "/proc/%d/root", pid);
        via_root = access(seen, X_OK) == 0;
    }
    if (via_root)
        snprintf(seen, sizeof seen, "/proc/%d/root%s", pid, path);
    else
        snprintf(seen, sizeof seen, "%s", path);
    if (stat(seen, &st) != 0 && errno == ENOENT)
        snprintf(buf, n, "; note: %s does not exist%s", path,
                 via_root ? " as the target sees it" : "");
}

static int attach_at(const char *socket_path, int pid, const char *clsid, const char *profiler_path,
                     const void *client_data, uint32_t client_data_len, uint64_t deadline_ns,
                     uint32_t timeout_ms, uint32_t *hresult, char *err, size_t errlen)
{
    TALLOC_CTX *tmp = talloc_new(NULL);
    char why[PATH_MAX + 512], name[PATH_MAX + 32], hrtext[256], note[PATH_MAX + 64];
    const char *path = profiler_path;
    mdp_ipc_reply reply;
    uint8_t *msg;
    size_t len;
    uint32_t hr = 0;
    bool is_error;
    int rc;

    if (!tmp)
        return mdp__ipc_fail(err, errlen, MDT_ENOMEM, "out of memory");
    /* The runtime opens the path with its own working directory. */
    if (profiler_path && *profiler_path && profiler_path[0] != '/') {
        char cwd[PATH_MAX];
        if (!getcwd(cwd, sizeof cwd)) {
            rc = mdp__ipc_fail(err, errlen, MDT_EINVAL,
                               "relative profiler path %s and no working directory: %s",
                               profiler_path, strerror(errno));
            goto out;
        }
        path = talloc_asprintf(tmp, "%s/%s", cwd, profiler_path);
        if (!path) {
            rc = mdp__ipc_fail(err, errlen, MDT_ENOMEM, "out of memory");
            goto out;
        }
    }
    /* The attach timeout only bounds the runtime's wait for a background
     * GC; three quarters of ours leave time for its answer to arrive. */
    rc = mdp__ipc_encode_attach(tmp, &msg, &len, timeout_ms / 4 * 3 + 1, clsid, path, client_data,
                                client_data_len, err, errlen);
    if (rc)
        goto out;
    rc = mdp__ipc_transact(tmp, &reply, socket_path, msg, len, deadline_ns, why, sizeof why);
    if (rc) {
        rc = transport_failed(rc, &reply, pid, "attach", timeout_ms, socket_path, why, err, errlen);
        goto out;
    }
    rc = mdp__ipc_reply_hresult(&hr, &is_error, &reply, why, sizeof why);
    if (rc) {
        rc = mdp__ipc_fail(err, errlen, rc, "attach, %s: %s",
                           target_name(name, sizeof name, pid, socket_path), why);
        goto out;
    }
    target_name(name, sizeof name, pid, socket_path);
    if (is_error && !MDP_HR_FAILED(hr)) {
        rc = mdp__ipc_fail(err, errlen, MDT_EBADIMAGE,
                           "attach, %s: Error reply carrying the success HRESULT 0x%08X", name,
                           (unsigned)hr);
        goto out;
    }
    if (hresult)
        *hresult = hr;
    if (!MDP_HR_FAILED(hr))
        goto out; /* accepted (OK reply with a success HRESULT) */
    if (hr == MDP_HR_UNKNOWN_COMMAND || hr == MDP_HR_NOTSUPPORTED) {
        mdp_ipc_procinfo info;
        uint32_t ihr;
        char version[192] = "";
        if (query_info(&info, &ihr, socket_path, pid, 2, deadline_ns, timeout_ms, NULL, 0) == 0)
            snprintf(version, sizeof version, " (runtime %s)", info.clr_version);
        else if (ihr == MDP_HR_UNKNOWN_COMMAND)
            snprintf(version, sizeof version, " (older than .NET 6: no ProcessInfo2 either)");
        rc = mdp__ipc_fail(err, errlen, MDT_EUNSUPPORTED,
                           "attach, %s: %s%s: %s; profiler attach needs a CoreCLR runtime of "
                           ".NET Core 3.0 or later built with attach support",
                           name,
                           hr == MDP_HR_UNKNOWN_COMMAND ? "runtime too old"
                                                        : "runtime built without profiler attach",
                           version, describe_hr(hrtext, sizeof hrtext, hr));
        goto out;
    }
    path_note(note, sizeof note, pid, path);
    rc = mdp__ipc_fail(err, errlen, MDT_EIO, "attach, %s: the runtime refused: %s%s", name,
                       describe_hr(hrtext, sizeof hrtext, hr), note);
out:
    talloc_free(tmp);
    return rc;
}

int mdp_ipc_attach_socket(const char *socket_path, const char *clsid, const char *profiler_path,
                          const void *client_data, uint32_t client_data_len, uint32_t timeout_ms,
                          uint32_t *hresult, char *err, size_t errlen)
{
    if (hresult)
        *hresult = 0;
    if (!socket_path)
        return mdp__ipc_fail(err, errlen, MDT_EINVAL, "no socket path");
    if (timeout_ms == 0)
        timeout_ms = MDP_IPC_DEFAULT_TIMEOUT_MS;
    return attach_at(socket_path, 0, clsid, profiler_path, client_data, client_data_len,
                     deadline_after(timeout_ms), timeout_ms, hresult, err, errlen);
}

int mdp_ipc_attach(int pid, const char *clsid, const char *profiler_path, const void *client_data,
                   uint32_t client_data_len, uint32_t timeout_ms, uint32_t *hresult, char *err,
                   size_t errlen)
{
    char path[PATH_MAX];
    uint8_t guid[16];
    uint64_t deadline;
    int rc;

    if (hresult)
        *hresult = 0;
    if (timeout_ms == 0)
        timeout_ms = MDP_IPC_DEFAULT_TIMEOUT_MS;
    deadline = deadline_after(timeout_ms);
    /* Report a bad argument before looking for the process. */
    rc = mdp__ipc_parse_clsid(guid, clsid, err, errlen);
    if (rc)
        return rc;
    if (!profiler_path || !*profiler_path)
        return mdp__ipc_fail(err, errlen, MDT_EINVAL, "no profiler path given");
    rc = mdp_ipc_find_socket(pid, path, sizeof path, err, errlen);
    if (rc)
        return rc;
    return attach_at(path, pid, clsid, profiler_path, client_data, client_data_len, deadline,
                     timeout_ms, hresult, err, errlen);
}
