/* mdprofile attach client: the CoreCLR diagnostics IPC protocol, client side.
 *
 * A running CoreCLR (.NET Core 3.0 and later) listens on a Unix domain socket
 * `$TMPDIR/dotnet-diagnostic-{pid}-{key}-socket` (TMPDIR of the *target*,
 * /tmp when unset; key = the process start time in clock ticks since boot,
 * field 22 of /proc/{pid}/stat). A client connects, sends one message
 * (20-byte header "DOTNET_IPC_V1\0", size, command set, command id,
 * reserved, then a command payload) and reads one reply (command set 0xFF:
 * id 0x00 = OK, id 0xFF = Error carrying an HRESULT). These functions send
 * the Profiler/AttachProfiler command (0x0301) and the Process/ProcessInfo2
 * (0x0404) and ProcessInfo (0x0400) commands. The protocol is public:
 * dotnet/diagnostics documentation/design-docs/ipc-protocol.md. doc/attach.md
 * tells users what the errors mean and what to do.
 *
 * Errors: every function returns 0 or a negative MDT_E... code from
 * <mdtools/errors.h> and, when err is not NULL, writes a one-line message
 * (at most errlen bytes, NUL-terminated) naming the cause:
 *   MDT_EINVAL       bad argument (pid <= 0, malformed CLSID, profiler path
 *                    empty, not UTF-8 or too long for one message)
 *   MDT_ENOTFOUND    no such process, or no diagnostics socket for it (not a
 *                    .NET process, DOTNET_EnableDiagnostics=0, runtime older
 *                    than .NET Core 3.0, other TMPDIR or mount namespace the
 *                    caller cannot see), or a stale socket nobody listens on
 *   MDT_EIO          permission denied (the socket belongs to another user),
 *                    no reply within the timeout, connection closed before
 *                    the request was read, or the runtime refused: then
 *                    *hresult holds its failure HRESULT (high bit set) and
 *                    the message names it, e.g. 0x8013136A
 *                    CORPROF_E_PROFILER_ALREADY_ACTIVE
 *   MDT_ETRUNC       the reply ended before its header or its declared size
 *   MDT_EBADIMAGE    the reply breaks the protocol (magic, size, command
 *                    set, payload layout)
 *   MDT_EUNSUPPORTED the runtime is too old or was built without the command
 *                    (Error reply CORDIAGIPC_E_UNKNOWN_COMMAND or
 *                    E_NOTSUPPORTED); the message adds the runtime version
 *                    when the runtime can tell it
 *
 * Safety: every byte read from the socket is untrusted and parsed with
 * bounds checks; connect, write and read share one deadline (poll), so a
 * runtime that never answers costs at most timeout_ms; writes use
 * MSG_NOSIGNAL, so a peer that closes cannot kill the caller with SIGPIPE.
 * The functions keep no global state, are thread-safe, block the calling
 * thread, allocate only temporarily (talloc, freed before return) and must
 * not be called from a signal handler. Link with $(TALLOC_LIBS). */
#ifndef MDP_ATTACH_IPC_H
#define MDP_ATTACH_IPC_H

#include <stddef.h>
#include <stdint.h>

#include <mdtools/errors.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A reasonable timeout for interactive use: attach loads a shared object and
 * runs the profiler's InitializeForAttach before the runtime answers. */
#define MDP_IPC_DEFAULT_TIMEOUT_MS 10000u

/* Ask the runtime of process `pid` (diagnostics IPC, AttachProfiler
 * command) to load the profiler at `profiler_path` with CLSID `clsid`
 * (text form "{xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx}", braces optional,
 * hex digits in either case), passing `client_data` (may be NULL/0) to
 * InitializeForAttach. Waits up to timeout_ms. Returns 0 when the runtime
 * accepted (its HRESULT in *hresult), or a negative MDT_E... code with a
 * message naming the cause (no diagnostics socket for pid, permission
 * denied / wrong user, runtime refused with HRESULT 0x..., runtime too old,
 * timeout).
 *
 * profiler_path is UTF-8; the runtime opens it in the target's mount
 * namespace. A relative path is made absolute against the caller's working
 * directory (the target's differs). The runtime is asked to give up waiting
 * for a background GC after three quarters of timeout_ms, so that its own
 * answer (CORPROF_E_TIMEOUT_WAITING_FOR_CONCURRENT_GC) arrives in time.
 * client_data_len is limited by the 64 KiB message size (with the path).
 * *hresult (may be NULL) is 0 unless the runtime answered: then it holds the
 * runtime's HRESULT (S_OK on success, the failure on refusal). timeout_ms 0
 * means MDP_IPC_DEFAULT_TIMEOUT_MS. err may be NULL; 1024 bytes hold every
 * message (longer ones are cut). */
int mdp_ipc_attach(int pid, const char *clsid, const char *profiler_path, const void *client_data,
                   uint32_t client_data_len, uint32_t timeout_ms, uint32_t *hresult, char *err,
                   size_t errlen);

/* mdp_ipc_attach on a known socket (tests, or a socket found by other
 * means); no discovery, no /proc lookups. */
int mdp_ipc_attach_socket(const char *socket_path, const char *clsid, const char *profiler_path,
                          const void *client_data, uint32_t client_data_len, uint32_t timeout_ms,
                          uint32_t *hresult, char *err, size_t errlen);

/* What ProcessInfo2 (.NET 6 and later) or ProcessInfo (.NET 5) tells about
 * the target. Strings are UTF-8 (converted from the wire's UTF-16LE; broken
 * surrogates become U+FFFD), NUL-terminated, empty when the runtime did not
 * send them; a string longer than its field is cut at a character boundary
 * and sets `truncated`. */
typedef struct mdp_ipc_procinfo {
    uint64_t pid;                  /* in the target's own PID namespace */
    uint8_t runtime_cookie[16];    /* GUID bytes as sent (unique per runtime instance) */
    char command_line[4096];       /* "/full/path/to/argv0 argv1 ..." */
    char os[32];                   /* "Linux", "macOS", "Windows", "Unknown" */
    char arch[32];                 /* "x64", "arm64", "x86", "arm32", ... */
    char entrypoint_assembly[256]; /* ProcessInfo2 only: e.g. "Waiter" */
    char clr_version[128];         /* ProcessInfo2 only: e.g. "10.0.12+<commit>" */
    int info_command;              /* 2: answered ProcessInfo2, 1: only ProcessInfo */
    int truncated;                 /* nonzero when a string was cut */
} mdp_ipc_procinfo;

/* Ask the runtime of process `pid` for its process information: first
 * ProcessInfo2, then (runtime too old for it) ProcessInfo on a second
 * connection. timeout_ms bounds the whole call. A runtime older than .NET 5
 * answers neither: MDT_EUNSUPPORTED. *info is filled only on success. */
int mdp_ipc_process_info(int pid, uint32_t timeout_ms, mdp_ipc_procinfo *info, char *err,
                         size_t errlen);

/* mdp_ipc_process_info on a known socket. */
int mdp_ipc_process_info_socket(const char *socket_path, uint32_t timeout_ms,
                                mdp_ipc_procinfo *info, char *err, size_t errlen);

/* Find the diagnostics socket of process `pid` without connecting. Looks in
 * the target's TMPDIR (read from /proc/pid/environ when permitted, /tmp
 * otherwise; through /proc/pid/root when the target lives in another mount
 * namespace, with its PID from that namespace), then the caller's TMPDIR,
 * then /tmp. Among dotnet-diagnostic-{pid}-{key}-socket entries (sockets
 * only, owned by the process's user) it takes the one whose key equals the
 * process start time, else the newest (stale sockets of an earlier process
 * with the same pid keep older times). Writes the path (NUL-terminated) to
 * path[pathlen]. Fails with MDT_ENOTFOUND and a diagnosis (no such process,
 * zombie, not CoreCLR, diagnostics disabled, where it looked). */
int mdp_ipc_find_socket(int pid, char *path, size_t pathlen, char *err, size_t errlen);

/* Symbolic name of an HRESULT the runtime may answer with (diagnostics
 * server and profiler attach codes, common COM codes), e.g.
 * "CORPROF_E_PROFILER_ALREADY_ACTIVE"; NULL when unknown. */
const char *mdp_ipc_hresult_name(uint32_t hr);

/* One-line explanation of a known HRESULT for users; NULL when unknown. */
const char *mdp_ipc_hresult_text(uint32_t hr);

#ifdef __cplusplus
}
#endif
#endif
