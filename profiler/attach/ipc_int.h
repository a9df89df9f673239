/* Private parts of the attach client shared by its files (and its unit
 * tests): the wire format (wire.c), UTF-16LE conversion (utf16.c), socket
 * discovery (discover.c), the transport with one deadline (transport.c).
 * Names with the mdp__ prefix are internal. */
#ifndef MDP_ATTACH_IPC_INT_H
#define MDP_ATTACH_IPC_INT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <talloc.h>

#include "ipc.h"

/* ---- wire format (dotnet/diagnostics ipc-protocol.md) ------------------- */

#define MDP_IPC_MAGIC "DOTNET_IPC_V1" /* 13 characters + NUL = 14 bytes */
#define MDP_IPC_MAGIC_LEN 14u
#define MDP_IPC_HEADER_LEN 20u
#define MDP_IPC_MAX_MESSAGE 65535u /* the header's size field is 16-bit */

enum {
    MDP_IPC_SET_PROFILER = 0x03,
    MDP_IPC_SET_PROCESS = 0x04,
    MDP_IPC_SET_SERVER = 0xFF,
};
enum {
    MDP_IPC_PROFILER_ATTACH = 0x01,
    MDP_IPC_PROCESS_INFO = 0x00,
    MDP_IPC_PROCESS_INFO2 = 0x04,
    MDP_IPC_SERVER_OK = 0x00,
    MDP_IPC_SERVER_ERROR = 0xFF,
};

/* HRESULTs the client interprets (corerror.h / the diagnostics server). */
#define MDP_HR_UNKNOWN_COMMAND 0x80131385u /* CORDIAGIPC_E_UNKNOWN_COMMAND */
#define MDP_HR_NOTSUPPORTED 0x80131515u    /* COR_E_NOTSUPPORTED */
#define MDP_HR_FAILED(hr) (((hr)&0x80000000u) != 0)

/* A reply: the header fields and the payload (talloc child of the caller's
 * context, payload_len bytes, NULL when empty). */
typedef struct mdp_ipc_reply {
    uint8_t command_set;
    uint8_t command_id;
    uint16_t size;
    uint8_t *payload;
    size_t payload_len;
    bool timed_out; /* set by mdp__ipc_transact when the deadline passed */
} mdp_ipc_reply;

/* Write a 20-byte header for a message of `size` bytes in total. */
void mdp__ipc_put_header(uint8_t *buf, uint16_t size, uint8_t command_set, uint8_t command_id);

/* Check a received header: magic, size >= 20. Fills the reply's header
 * fields. MDT_EBADIMAGE with a message otherwise. */
int mdp__ipc_parse_header(mdp_ipc_reply *out, const uint8_t hdr[MDP_IPC_HEADER_LEN], char *err,
                          size_t errlen);

/* Parse "{xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx}" (braces optional) into the
 * 16 bytes of a GUID as the runtime reads it: Data1 (32-bit), Data2, Data3
 * (16-bit) little-endian, then Data4's 8 bytes in order. */
int mdp__ipc_parse_clsid(uint8_t guid[16], const char *text, char *err, size_t errlen);

/* The AttachProfiler request (header + payload) in a new talloc buffer.
 * MDT_EINVAL (message) for a bad CLSID or path or when it exceeds 64 KiB. */
int mdp__ipc_encode_attach(TALLOC_CTX *mem_ctx, uint8_t **msg, size_t *len,
                           uint32_t attach_timeout_ms, const char *clsid, const char *profiler_path,
                           const void *client_data, uint32_t client_data_len, char *err,
                           size_t errlen);

/* The HRESULT of an OK or Error reply: the first 4 payload bytes (an OK
 * reply without payload counts as S_OK). MDT_EBADIMAGE when the reply is
 * neither or the payload is too short. *is_error tells which. */
int mdp__ipc_reply_hresult(uint32_t *hresult, bool *is_error, const mdp_ipc_reply *reply, char *err,
                           size_t errlen);

/* Parse a ProcessInfo (version 1) or ProcessInfo2 (version 2) payload. */
int mdp__ipc_parse_process_info(mdp_ipc_procinfo *info, const uint8_t *payload, size_t len,
                                int version, char *err, size_t errlen);

/* ---- UTF-8 <-> UTF-16LE (utf16.c) ---------------------------------------- */

/* Encode NUL-terminated UTF-8 `s` as UTF-16LE code units into out[cap]
 * bytes (out may be NULL to count only). *units gets the number of code
 * units (without terminator). Invalid UTF-8 (overlong forms, surrogates,
 * code points above U+10FFFF, truncated sequences): MDT_EINVAL with the byte
 * offset in *bad_at. Too small a buffer: MDT_EINVAL, *bad_at = SIZE_MAX. */
int mdp__utf16le_encode(uint8_t *out, size_t cap, size_t *units, size_t *bad_at, const char *s);

/* Decode n_units UTF-16LE code units at `in` into NUL-terminated UTF-8 in
 * out[cap] (cap >= 1). Stops at a NUL unit. A lone surrogate becomes U+FFFD.
 * Returns true when everything fit, false when the output was cut at a
 * character boundary. */
bool mdp__utf16le_decode(char *out, size_t cap, const uint8_t *in, size_t n_units);

/* ---- /proc (discover.c) ---------------------------------------------------- */

/* The state letter of process pid from /proc/pid/stat ('R', 'S', 'T' for
 * stopped, 'Z', ...), 0 when unknown. */
char mdp__ipc_proc_state(int pid);

/* ---- transport (transport.c) --------------------------------------------- */

/* The time on CLOCK_MONOTONIC in nanoseconds (deadlines are in this unit). */
uint64_t mdp__ipc_now_ns(void);

/* Send msg[len] on the non-blocking socket fd before the deadline, with
 * MSG_NOSIGNAL (a closed peer gives MDT_EIO, never SIGPIPE). `path` names
 * the socket in messages. */
int mdp__ipc_send_all(int fd, const uint8_t *msg, size_t len, uint64_t deadline_ns,
                      const char *path, char *err, size_t errlen);

/* Read exactly n bytes from the non-blocking socket fd unless the peer
 * closes first (return 0 with *got < n) or the deadline passes (MDT_EIO,
 * *timed_out set) or reading fails (MDT_EIO). */
int mdp__ipc_recv_all(int fd, uint8_t *buf, size_t n, size_t *got, bool *timed_out,
                      uint64_t deadline_ns, const char *path, char *err, size_t errlen);

/* Connect to socket_path, send msg[len], read one reply (header, then
 * header.size - 20 payload bytes) into *reply (payload a child of mem_ctx),
 * all before deadline_ns. Messages name the socket and the cause: permission
 * denied (with owner and caller uid), stale socket, no reply in time,
 * connection closed (MDT_ETRUNC when it closes mid-reply), bad header. */
int mdp__ipc_transact(TALLOC_CTX *mem_ctx, mdp_ipc_reply *reply, const char *socket_path,
                      const uint8_t *msg, size_t len, uint64_t deadline_ns, char *err,
                      size_t errlen);

/* ---- messages ------------------------------------------------------------ */

/* Format a message into err[errlen] (either may be NULL/0) and return code. */
static inline int mdp__ipc_fail(char *err, size_t errlen, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static inline int mdp__ipc_fail(char *err, size_t errlen, int code, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return code;
}

#endif
