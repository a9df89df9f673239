/* The diagnostics IPC wire format: the 20-byte header, the AttachProfiler
 * request, OK/Error replies and the ProcessInfo/ProcessInfo2 payloads
 * (dotnet/diagnostics documentation/design-docs/ipc-protocol.md: "Headers",
 * "Payloads", "AttachProfiler", "ProcessInfo", "ProcessInfo2", "Errors").
 * All numbers are little-endian and read or written byte by byte at their
 * offsets, never through struct overlays. Replies are untrusted: a small
 * cursor checks every read as `n > len - pos` so the check cannot overflow,
 * and a failed read does not advance. (libmdtools' reader does the same for
 * images but is private to the library; this code uses only the public API.) */
#include "config.h"

#include <string.h>

#include "core/hex.h"
#include "ipc_int.h"

/* ---- writing ------------------------------------------------------------ */

static void put_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v & 0xFF);
    p[1] = (uint8_t)(v >> 8);
}

static void put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

void mdp__ipc_put_header(uint8_t *buf, uint16_t size, uint8_t command_set, uint8_t command_id)
{
    memcpy(buf, MDP_IPC_MAGIC, MDP_IPC_MAGIC_LEN); /* copies the NUL too */
    put_u16(buf + 14, size);
    buf[16] = command_set;
    buf[17] = command_id;
    put_u16(buf + 18, 0); /* reserved, must be 0 in V1 */
}

int mdp__ipc_parse_clsid(uint8_t guid[16], const char *text, char *err, size_t errlen)
{
    /* Text form: 8-4-4-4-12 hex digits; the first three groups are
     * numbers (Data1..Data3), the last two are Data4's bytes in order. */
    static const int group_len[5] = {8, 4, 4, 4, 12};
    uint8_t digits[32];
    size_t n = 0;
    const char *p = text;
    bool braced;

    if (!text)
        return mdp__ipc_fail(err, errlen, MDT_EINVAL, "no CLSID given");
    braced = *p == '{';
    if (braced)
        p++;
    for (int g = 0; g < 5; g++) {
        if (g > 0 && *p++ != '-')
            goto bad;
        for (int i = 0; i < group_len[g]; i++) {
            int v = mdp_hexval(*p++);
            if (v < 0)
                goto bad;
            digits[n++] = (uint8_t)v;
        }
    }
    if (braced && *p++ != '}')
        goto bad;
    if (*p != '\0')
        goto bad;

    /* Data1: digits 0..7, Data2: 8..11, Data3: 12..15, stored little-endian. */
    for (int i = 0; i < 4; i++)
        guid[3 - i] = (uint8_t)(digits[2 * i] << 4 | digits[2 * i + 1]);
    for (int i = 0; i < 2; i++) {
        guid[5 - i] = (uint8_t)(digits[8 + 2 * i] << 4 | digits[9 + 2 * i]);
        guid[7 - i] = (uint8_t)(digits[12 + 2 * i] << 4 | digits[13 + 2 * i]);
    }
    for (int i = 0; i < 8; i++)
        guid[8 + i] = (uint8_t)(digits[16 + 2 * i] << 4 | digits[17 + 2 * i]);
    return 0;
bad:
    return mdp__ipc_fail(err, errlen, MDT_EINVAL,
                         "malformed CLSID \"%.60s\": expected "
                         "{xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx} with hex digits",
                         text);
}

int mdp__ipc_encode_attach(TALLOC_CTX *mem_ctx, uint8_t **msg, size_t *len,
                           uint32_t attach_timeout_ms, const char *clsid, const char *profiler_path,
                           const void *client_data, uint32_t client_data_len, char *err,
                           size_t errlen)
{
    uint8_t guid[16];
    size_t units, bad_at, total, at;
    uint8_t *buf;
    int rc;

    *msg = NULL;
    *len = 0;
    rc = mdp__ipc_parse_clsid(guid, clsid, err, errlen);
    if (rc)
        return rc;
    if (!profiler_path || !*profiler_path)
        return mdp__ipc_fail(err, errlen, MDT_EINVAL, "no profiler path given");
    if (client_data_len && !client_data)
        return mdp__ipc_fail(err, errlen, MDT_EINVAL, "client data length %u without data",
                             (unsigned)client_data_len);
    rc = mdp__utf16le_encode(NULL, 0, &units, &bad_at, profiler_path);
    if (rc)
        return mdp__ipc_fail(err, errlen, MDT_EINVAL,
                             "profiler path is not valid UTF-8 (byte %zu of \"%.200s\")", bad_at,
                             profiler_path);

    /* header, attach timeout, CLSID, path (length in units incl. NUL, then
     * the units), client data (length, bytes). Sizes are bounded by the
     * checks below before anything can wrap. */
    if (units > MDP_IPC_MAX_MESSAGE || client_data_len > MDP_IPC_MAX_MESSAGE)
        goto too_big;
    total = MDP_IPC_HEADER_LEN + 4 + 16 + 4 + 2 * (units + 1) + 4 + client_data_len;
    if (total > MDP_IPC_MAX_MESSAGE)
        goto too_big;

    buf = talloc_zero_size(mem_ctx, total);
    if (!buf)
        return mdp__ipc_fail(err, errlen, MDT_ENOMEM, "out of memory for a %zu-byte request",
                             total);
    mdp__ipc_put_header(buf, (uint16_t)total, MDP_IPC_SET_PROFILER, MDP_IPC_PROFILER_ATTACH);
    at = MDP_IPC_HEADER_LEN;
    put_u32(buf + at, attach_timeout_ms);
    at += 4;
    memcpy(buf + at, guid, 16);
    at += 16;
    put_u32(buf + at, (uint32_t)(units + 1));
    at += 4;
    rc = mdp__utf16le_encode(buf + at, 2 * units, &units, &bad_at, profiler_path);
    if (rc) { /* cannot happen: the first pass counted the same string */
        talloc_free(buf);
        return mdp__ipc_fail(err, errlen, MDT_EINVAL, "profiler path changed while encoding");
    }
    at += 2 * (units + 1); /* the terminator is already zero */
    put_u32(buf + at, client_data_len);
    at += 4;
    if (client_data_len)
        memcpy(buf + at, client_data, client_data_len);
    *msg = buf;
    *len = total;
    return 0;
too_big:
    return mdp__ipc_fail(err, errlen, MDT_EINVAL,
                         "attach request too large: profiler path of %zu UTF-16 units and %u "
                         "bytes of client data exceed the protocol's 65535-byte message",
                         units, (unsigned)client_data_len);
}

/* ---- reading ------------------------------------------------------------ */

typedef struct cursor {
    const uint8_t *p;
    size_t len, pos;
} cursor;

static bool take(cursor *c, size_t n, const uint8_t **at)
{
    if (n > c->len - c->pos)
        return false;
    *at = c->p + c->pos;
    c->pos += n;
    return true;
}

static bool get_u32(cursor *c, uint32_t *v)
{
    const uint8_t *b;
    if (!take(c, 4, &b))
        return false;
    *v = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    return true;
}

static bool get_u64(cursor *c, uint64_t *v)
{
    uint32_t lo, hi;
    size_t save = c->pos;
    if (!get_u32(c, &lo) || !get_u32(c, &hi)) {
        c->pos = save;
        return false;
    }
    *v = (uint64_t)hi << 32 | lo;
    return true;
}

int mdp__ipc_parse_header(mdp_ipc_reply *out, const uint8_t hdr[MDP_IPC_HEADER_LEN], char *err,
                          size_t errlen)
{
    uint16_t size = (uint16_t)(hdr[14] | hdr[15] << 8);

    if (memcmp(hdr, MDP_IPC_MAGIC, MDP_IPC_MAGIC_LEN) != 0)
        return mdp__ipc_fail(
            err, errlen, MDT_EBADIMAGE,
            "reply is not a diagnostics IPC message (magic %02x %02x %02x %02x..., "
            "expected \"DOTNET_IPC_V1\")",
            hdr[0], hdr[1], hdr[2], hdr[3]);
    if (size < MDP_IPC_HEADER_LEN)
        return mdp__ipc_fail(err, errlen, MDT_EBADIMAGE,
                             "reply header declares %u bytes, less than the 20-byte header",
                             (unsigned)size);
    /* The reserved field (must be 0 in V1) is not checked: it carries no
     * meaning for this client, and a future runtime may use it. */
    out->size = size;
    out->command_set = hdr[16];
    out->command_id = hdr[17];
    return 0;
}

int mdp__ipc_reply_hresult(uint32_t *hresult, bool *is_error, const mdp_ipc_reply *reply, char *err,
                           size_t errlen)
{
    cursor c = {reply->payload, reply->payload_len, 0};

    *hresult = 0;
    *is_error = false;
    if (reply->command_set != MDP_IPC_SET_SERVER ||
        (reply->command_id != MDP_IPC_SERVER_OK && reply->command_id != MDP_IPC_SERVER_ERROR))
        return mdp__ipc_fail(err, errlen, MDT_EBADIMAGE,
                             "reply command 0x%02X%02X is neither OK (0xFF00) nor Error (0xFFFF)",
                             reply->command_set, reply->command_id);
    *is_error = reply->command_id == MDP_IPC_SERVER_ERROR;
    if (!*is_error && reply->payload_len == 0)
        return 0; /* the generic OK message */
    /* The runtime sends a 32-bit HRESULT; the protocol document's example
     * shows 8 bytes, so a longer payload is accepted and its rest ignored. */
    if (!get_u32(&c, hresult))
        return mdp__ipc_fail(err, errlen, MDT_EBADIMAGE,
                             "%s reply has a %zu-byte payload, too short for an HRESULT",
                             *is_error ? "Error" : "OK", reply->payload_len);
    return 0;
}

/* A protocol string: uint32 count of UTF-16 units including the NUL (or 0
 * for an empty string), then the units; the last must be 0. Converted into
 * out[cap]; *cut set when it did not fit. */
static int get_string(cursor *c, char *out, size_t cap, int *cut, const char *what, char *err,
                      size_t errlen)
{
    uint32_t count;
    const uint8_t *units = NULL;
    size_t at = c->pos;

    out[0] = '\0';
    if (!get_u32(c, &count))
        return mdp__ipc_fail(err, errlen, MDT_ETRUNC,
                             "ProcessInfo payload ends at byte %zu, before the length of %s", at,
                             what);
    if (count == 0)
        return 0;
    if (count > (c->len - c->pos) / 2) {
        c->pos = at;
        return mdp__ipc_fail(err, errlen, MDT_ETRUNC,
                             "ProcessInfo %s at byte %zu declares %u UTF-16 units, but only %zu "
                             "bytes follow",
                             what, at, (unsigned)count, c->len - c->pos - 4);
    }
    if (!take(c, 2 * (size_t)count, &units))
        return MDT_ETRUNC; /* cannot happen: checked above */
    if (units[2 * (count - 1)] != 0 || units[2 * (count - 1) + 1] != 0)
        return mdp__ipc_fail(err, errlen, MDT_EBADIMAGE,
                             "ProcessInfo %s at byte %zu is not NUL-terminated", what, at);
    if (!mdp__utf16le_decode(out, cap, units, count))
        *cut = 1;
    return 0;
}

int mdp__ipc_parse_process_info(mdp_ipc_procinfo *info, const uint8_t *payload, size_t len,
                                int version, char *err, size_t errlen)
{
    cursor c = {payload, len, 0};
    const uint8_t *cookie;
    int rc;

    memset(info, 0, sizeof *info);
    info->info_command = version;
    /* Wire order (as the runtime writes it and the managed client reads
     * it): pid, runtime cookie, command line, OS, architecture; then, for
     * ProcessInfo2, entrypoint assembly name and CLR product version. */
    if (!get_u64(&c, &info->pid) || !take(&c, 16, &cookie))
        return mdp__ipc_fail(err, errlen, MDT_ETRUNC,
                             "ProcessInfo payload of %zu bytes is shorter than pid and runtime "
                             "cookie (24 bytes)",
                             len);
    memcpy(info->runtime_cookie, cookie, 16);
    if ((rc = get_string(&c, info->command_line, sizeof info->command_line, &info->truncated,
                         "command line", err, errlen)) ||
        (rc =
             get_string(&c, info->os, sizeof info->os, &info->truncated, "OS name", err, errlen)) ||
        (rc = get_string(&c, info->arch, sizeof info->arch, &info->truncated, "architecture", err,
                         errlen)))
        return rc;
    if (version >= 2 &&
        ((rc = get_string(&c, info->entrypoint_assembly, sizeof info->entrypoint_assembly,
                          &info->truncated, "entrypoint assembly name", err, errlen)) ||
         (rc = get_string(&c, info->clr_version, sizeof info->clr_version, &info->truncated,
                          "CLR product version", err, errlen))))
        return rc;
    /* Bytes after the known fields are tolerated: a newer runtime may
     * append fields, as ProcessInfo2 appended to ProcessInfo. */
    return 0;
}
