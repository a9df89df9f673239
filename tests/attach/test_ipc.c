/* Unit tests of the attach client (profiler/attach) without a runtime:
 * UTF-8/UTF-16LE conversion, CLSID layout, the AttachProfiler request bytes
 * and their size limits, reply and ProcessInfo parsing (every truncation of
 * a valid payload, oversized counts, missing terminators), socket discovery
 * for this process (start-time key, newest fallback, names and file types
 * that do not count), and fake servers on a Unix socket that answer with
 * garbage, truncated replies, Error replies, a byte at a time, or nothing,
 * which must all end in clean errors within the timeout. Writing to a peer
 * that has closed must not raise SIGPIPE (SIGPIPE keeps its default action
 * here, so a regression kills the test). */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ipc_int.h"

#define TESTPROF_CLSID "{8B2C0D4E-5A61-4F7B-9C3D-2E1F0A9B8C7D}"
static const uint8_t testprof_guid[16] = {0x4E, 0x0D, 0x2C, 0x8B, 0x61, 0x5A, 0x7B, 0x4F,
                                          0x9C, 0x3D, 0x2E, 0x1F, 0x0A, 0x9B, 0x8C, 0x7D};

/* ---- UTF-16 -------------------------------------------------------------- */

START_TEST(utf16_encodes_bmp_and_supplementary)
{
    /* "a/é€😀": 1-, 2-, 3- and 4-byte UTF-8; the last is a surrogate pair */
    const char *s = "a/\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80";
    const uint8_t want[] = {'a', 0, '/', 0, 0xE9, 0x00, 0xAC, 0x20, 0x3D, 0xD8, 0x00, 0xDE};
    uint8_t out[32];
    size_t units, bad;

    ck_assert_int_eq(mdp__utf16le_encode(NULL, 0, &units, &bad, s), 0);
    ck_assert_uint_eq(units, 6);
    ck_assert_int_eq(mdp__utf16le_encode(out, sizeof out, &units, &bad, s), 0);
    ck_assert_uint_eq(units, 6);
    ck_assert_mem_eq(out, want, sizeof want);
}
END_TEST

START_TEST(utf16_rejects_ill_formed_utf8_with_offset)
{
    static const struct {
        const char *s;
        size_t bad_at;
    } cases[] = {
        {"\x80", 0},                 /* lone continuation byte */
        {"a\xC0\x80", 1},            /* overlong NUL */
        {"ab\xC1\xBF", 2},           /* overlong 2-byte */
        {"\xE0\x9F\xBF", 0},         /* overlong 3-byte */
        {"x\xF0\x8F\xBF\xBF", 1},    /* overlong 4-byte */
        {"\xED\xA0\x80", 0},         /* encoded surrogate U+D800 */
        {"\xF4\x90\x80\x80", 0},     /* above U+10FFFF */
        {"ab\xE2\x82", 2},           /* truncated at the end */
        {"\xE2\x82x", 0},            /* truncated before ASCII */
        {"\xF8\x88\x80\x80\x80", 0}, /* 5-byte form */
        {"ok\xFF", 2},               /* never valid */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t units = 99, bad = 99;
        uint8_t out[16];
        ck_assert_msg(mdp__utf16le_encode(NULL, 0, &units, &bad, cases[i].s) == MDT_EINVAL,
                      "case %zu accepted", i);
        ck_assert_uint_eq(bad, cases[i].bad_at);
        ck_assert_int_eq(mdp__utf16le_encode(out, sizeof out, &units, &bad, cases[i].s),
                         MDT_EINVAL);
    }
}
END_TEST

START_TEST(utf16_encode_respects_buffer)
{
    uint8_t out[6] = {0};
    size_t units, bad;
    ck_assert_int_eq(mdp__utf16le_encode(out, 6, &units, &bad, "abc"), 0);
    ck_assert_int_eq(mdp__utf16le_encode(out, 6, &units, &bad, "abcd"), MDT_EINVAL);
    ck_assert_uint_eq(bad, SIZE_MAX);
    /* a surrogate pair does not fit in the last unit */
    ck_assert_int_eq(mdp__utf16le_encode(out, 6, &units, &bad, "ab\xF0\x9F\x98\x80"), MDT_EINVAL);
}
END_TEST

START_TEST(utf16_decode_replaces_lone_surrogates)
{
    /* pair, lone high before 'x', lone low, lone high at the end */
    const uint8_t in[] = {0x3D, 0xD8, 0x00, 0xDE, 0x00, 0xD8, 'x', 0, 0x00, 0xDC, 0x01, 0xD8};
    char out[64];
    ck_assert(mdp__utf16le_decode(out, sizeof out, in, 6));
    ck_assert_str_eq(out, "\xF0\x9F\x98\x80\xEF\xBF\xBDx\xEF\xBF\xBD\xEF\xBF\xBD");
}
END_TEST

START_TEST(utf16_decode_stops_at_nul_and_cuts_at_boundary)
{
    const uint8_t in[] = {'a', 0, 0xAC, 0x20, 'b', 0, 0, 0, 'c', 0};
    char out[16];
    ck_assert(mdp__utf16le_decode(out, sizeof out, in, 5));
    ck_assert_str_eq(out, "a\xE2\x82\xAC"
                          "b");
    /* 4 bytes of room: "a" fits, the 3-byte euro sign does not (1+3 = 4
     * leaves no room for the terminator) */
    ck_assert(!mdp__utf16le_decode(out, 4, in, 5));
    ck_assert_str_eq(out, "a");
    ck_assert(!mdp__utf16le_decode(out, 1, in, 5));
    ck_assert_str_eq(out, "");
}
END_TEST

/* ---- CLSID and request --------------------------------------------------- */

START_TEST(clsid_text_to_guid_bytes)
{
    uint8_t g[16];
    char err[256];
    ck_assert_int_eq(mdp__ipc_parse_clsid(g, TESTPROF_CLSID, err, sizeof err), 0);
    ck_assert_mem_eq(g, testprof_guid, 16);
    memset(g, 0, sizeof g);
    ck_assert_int_eq(
        mdp__ipc_parse_clsid(g, "8b2c0d4e-5a61-4f7b-9c3d-2e1f0a9b8c7d", err, sizeof err), 0);
    ck_assert_mem_eq(g, testprof_guid, 16);
}
END_TEST

START_TEST(clsid_malformed_rejected)
{
    static const char *bad[] = {
        "",
        "{8B2C0D4E-5A61-4F7B-9C3D-2E1F0A9B8C7D",
        "8B2C0D4E-5A61-4F7B-9C3D-2E1F0A9B8C7D}",
        "{8B2C0D4E-5A61-4F7B-9C3D-2E1F0A9B8C7D}x",
        "{8B2C0D4E5A61-4F7B-9C3D-2E1F0A9B8C7D}",
        "{8B2C0D4-E5A61-4F7B-9C3D-2E1F0A9B8C7D}",
        "{8B2C0D4E-5A61-4F7B-9C3D-2E1F0A9B8C7}",
        "{8B2C0D4G-5A61-4F7B-9C3D-2E1F0A9B8C7D}",
        "{8B2C0D4E-5A61-4F7B-9C3D-2E1F0A9B8C7D0}",
    };
    uint8_t g[16];
    char err[256] = "";
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_msg(mdp__ipc_parse_clsid(g, bad[i], err, sizeof err) == MDT_EINVAL,
                      "accepted \"%s\"", bad[i]);
        ck_assert_ptr_nonnull(strstr(err, "malformed CLSID"));
    }
    ck_assert_int_eq(mdp__ipc_parse_clsid(g, NULL, err, sizeof err), MDT_EINVAL);
}
END_TEST

START_TEST(attach_request_bytes)
{
    const uint8_t want[] = {
        'D',  'O',  'T',  'N',  'E',  'T',  '_',  'I',  'P',  'C',  '_',  'V',  '1',  0, /* magic */
        56,   0,                                                                         /* size */
        0x03, 0x01, 0,    0, /* Profiler / AttachProfiler, reserved */
        0xE8, 0x03, 0,    0, /* attach timeout 1000 ms */
        0x4E, 0x0D, 0x2C, 0x8B, 0x61, 0x5A, 0x7B, 0x4F, 0x9C, 0x3D, 0x2E, 0x1F, 0x0A, 0x9B,
        0x8C, 0x7D,                                              /* CLSID */
        3,    0,    0,    0,    '/',  0,    'p',  0,    0,    0, /* "/p" with NUL */
        2,    0,    0,    0,    'x',  'y',                       /* client data */
    };
    TALLOC_CTX *ctx = talloc_new(NULL);
    uint8_t *msg;
    size_t len;
    char err[256];

    ck_assert_int_eq(mdp__ipc_encode_attach(ctx, &msg, &len, 1000, TESTPROF_CLSID, "/p", "xy", 2,
                                            err, sizeof err),
                     0);
    ck_assert_uint_eq(len, sizeof want);
    ck_assert_mem_eq(msg, want, sizeof want);
    /* no client data: a zero length and nothing after it */
    ck_assert_int_eq(mdp__ipc_encode_attach(ctx, &msg, &len, 1000, TESTPROF_CLSID, "/p", NULL, 0,
                                            err, sizeof err),
                     0);
    ck_assert_uint_eq(len, sizeof want - 2);
    ck_assert_uint_eq(msg[14], sizeof want - 2);
    ck_assert_mem_eq(msg + len - 4, "\0\0\0\0", 4);
    talloc_free(ctx);
}
END_TEST

START_TEST(attach_request_size_limits)
{
    TALLOC_CTX *ctx = talloc_new(NULL);
    char *path = talloc_size(ctx, 40000);
    static uint8_t data[65535];
    uint8_t *msg;
    size_t len;
    char err[512];

    /* 20 + 4 + 16 + 4 + 2 * (units + 1) + 4 = 50 + 2 * units <= 65535 */
    memset(path, 'a', 32742);
    path[0] = '/';
    path[32742] = '\0';
    ck_assert_int_eq(
        mdp__ipc_encode_attach(ctx, &msg, &len, 1, TESTPROF_CLSID, path, NULL, 0, err, sizeof err),
        0);
    ck_assert_uint_eq(len, 65534);
    ck_assert_uint_eq(msg[14] | msg[15] << 8, 65534);
    path[32742] = 'a';
    path[32743] = '\0';
    ck_assert_int_eq(
        mdp__ipc_encode_attach(ctx, &msg, &len, 1, TESTPROF_CLSID, path, NULL, 0, err, sizeof err),
        MDT_EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "too large"));
    ck_assert_int_eq(mdp__ipc_encode_attach(ctx, &msg, &len, 1, TESTPROF_CLSID, "/p", data,
                                            sizeof data, err, sizeof err),
                     MDT_EINVAL);
    ck_assert_int_eq(
        mdp__ipc_encode_attach(ctx, &msg, &len, 1, TESTPROF_CLSID, "/p", NULL, 3, err, sizeof err),
        MDT_EINVAL);
    ck_assert_int_eq(mdp__ipc_encode_attach(ctx, &msg, &len, 1, TESTPROF_CLSID, "/p\xC0\x80", NULL,
                                            0, err, sizeof err),
                     MDT_EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "not valid UTF-8 (byte 2"));
    ck_assert_int_eq(
        mdp__ipc_encode_attach(ctx, &msg, &len, 1, TESTPROF_CLSID, "", NULL, 0, err, sizeof err),
        MDT_EINVAL);
    talloc_free(ctx);
}
END_TEST

/* ---- replies ------------------------------------------------------------- */

/* A reply message: header + payload, into buf; returns its length. */
static size_t make_msg(uint8_t *buf, uint8_t set, uint8_t id, const void *payload, size_t n)
{
    mdp__ipc_put_header(buf, (uint16_t)(MDP_IPC_HEADER_LEN + n), set, id);
    if (n)
        memcpy(buf + MDP_IPC_HEADER_LEN, payload, n);
    return MDP_IPC_HEADER_LEN + n;
}

static size_t make_hr_msg(uint8_t *buf, uint8_t id, uint32_t hr)
{
    uint8_t p[4] = {(uint8_t)hr, (uint8_t)(hr >> 8), (uint8_t)(hr >> 16), (uint8_t)(hr >> 24)};
    return make_msg(buf, MDP_IPC_SET_SERVER, id, p, 4);
}

START_TEST(header_checks)
{
    uint8_t h[MDP_IPC_HEADER_LEN];
    mdp_ipc_reply r;
    char err[256];

    mdp__ipc_put_header(h, 24, 0xFF, 0x00);
    ck_assert_int_eq(mdp__ipc_parse_header(&r, h, err, sizeof err), 0);
    ck_assert_uint_eq(r.size, 24);
    ck_assert_uint_eq(r.command_set, 0xFF);
    h[13] = 'x'; /* the magic's NUL belongs to it */
    ck_assert_int_eq(mdp__ipc_parse_header(&r, h, err, sizeof err), MDT_EBADIMAGE);
    mdp__ipc_put_header(h, 19, 0xFF, 0x00);
    ck_assert_int_eq(mdp__ipc_parse_header(&r, h, err, sizeof err), MDT_EBADIMAGE);
    ck_assert_ptr_nonnull(strstr(err, "less than the 20-byte header"));
}
END_TEST

START_TEST(reply_hresult_forms)
{
    uint8_t p[8] = {0x6A, 0x13, 0x13, 0x80, 1, 2, 3, 4};
    mdp_ipc_reply r = {.command_set = 0xFF, .command_id = 0x00};
    uint32_t hr;
    bool is_error;
    char err[256];

    ck_assert_int_eq(mdp__ipc_reply_hresult(&hr, &is_error, &r, err, sizeof err), 0);
    ck_assert(!is_error);
    ck_assert_uint_eq(hr, 0);
    r.command_id = 0xFF;
    r.payload = p;
    r.payload_len = 4;
    ck_assert_int_eq(mdp__ipc_reply_hresult(&hr, &is_error, &r, err, sizeof err), 0);
    ck_assert(is_error);
    ck_assert_uint_eq(hr, 0x8013136Au);
    r.payload_len = 8; /* the protocol document's 8-byte example */
    ck_assert_int_eq(mdp__ipc_reply_hresult(&hr, &is_error, &r, err, sizeof err), 0);
    ck_assert_uint_eq(hr, 0x8013136Au);
    r.payload_len = 3;
    ck_assert_int_eq(mdp__ipc_reply_hresult(&hr, &is_error, &r, err, sizeof err), MDT_EBADIMAGE);
    r.payload_len = 0;
    ck_assert_int_eq(mdp__ipc_reply_hresult(&hr, &is_error, &r, err, sizeof err), MDT_EBADIMAGE);
    r.command_set = 0x03;
    r.command_id = 0x01;
    r.payload_len = 4;
    ck_assert_int_eq(mdp__ipc_reply_hresult(&hr, &is_error, &r, err, sizeof err), MDT_EBADIMAGE);
    ck_assert_ptr_nonnull(strstr(err, "0x0301 is neither OK"));
}
END_TEST

static size_t put_string(uint8_t *p, const char *s)
{
    size_t units, bad, n = strlen(s);
    p[0] = (uint8_t)(n + 1);
    p[1] = (uint8_t)((n + 1) >> 8);
    p[2] = p[3] = 0;
    mdp__utf16le_encode(p + 4, 2 * n, &units, &bad, s);
    p[4 + 2 * n] = p[5 + 2 * n] = 0;
    return 4 + 2 * (n + 1);
}

/* A ProcessInfo2 payload: pid 4242, cookie 0..15, five strings. */
static size_t make_info2(uint8_t *p, const char *cmdline, const char *version)
{
    size_t at = 0;
    uint64_t pid = 4242;
    for (int i = 0; i < 8; i++)
        p[at++] = (uint8_t)(pid >> (8 * i));
    for (int i = 0; i < 16; i++)
        p[at++] = (uint8_t)i;
    at += put_string(p + at, cmdline);
    at += put_string(p + at, "Linux");
    at += put_string(p + at, "x64");
    at += put_string(p + at, "Waiter");
    at += put_string(p + at, version);
    return at;
}

START_TEST(process_info2_parsed)
{
    uint8_t p[512];
    size_t n = make_info2(p, "/usr/bin/dotnet Waiter.dll", "10.0.12+abc");
    mdp_ipc_procinfo info;
    char err[256];

    ck_assert_int_eq(mdp__ipc_parse_process_info(&info, p, n, 2, err, sizeof err), 0);
    ck_assert_uint_eq(info.pid, 4242);
    ck_assert_uint_eq(info.runtime_cookie[15], 15);
    ck_assert_str_eq(info.command_line, "/usr/bin/dotnet Waiter.dll");
    ck_assert_str_eq(info.os, "Linux");
    ck_assert_str_eq(info.arch, "x64");
    ck_assert_str_eq(info.entrypoint_assembly, "Waiter");
    ck_assert_str_eq(info.clr_version, "10.0.12+abc");
    ck_assert_int_eq(info.info_command, 2);
    ck_assert_int_eq(info.truncated, 0);
    /* read as ProcessInfo (v1): the last two strings are extra bytes */
    ck_assert_int_eq(mdp__ipc_parse_process_info(&info, p, n, 1, err, sizeof err), 0);
    ck_assert_str_eq(info.clr_version, "");
    /* trailing bytes of a newer runtime are tolerated */
    p[n] = 0xAA;
    ck_assert_int_eq(mdp__ipc_parse_process_info(&info, p, n + 1, 2, err, sizeof err), 0);
}
END_TEST

START_TEST(process_info_every_truncation_fails)
{
    uint8_t p[512];
    size_t n = make_info2(p, "/usr/bin/dotnet Waiter.dll", "10.0.12");
    mdp_ipc_procinfo info;
    char err[256];

    /* each prefix in its own allocation, so ASan sees any read past it */
    for (size_t len = 0; len < n; len++) {
        uint8_t *copy = malloc(len ? len : 1);
        int rc;
        memcpy(copy, p, len);
        rc = mdp__ipc_parse_process_info(&info, copy, len, 2, err, sizeof err);
        ck_assert_msg(rc == MDT_ETRUNC || rc == MDT_EBADIMAGE, "prefix %zu of %zu gave %d", len, n,
                      rc);
        free(copy);
    }
}
END_TEST

START_TEST(process_info_bad_strings)
{
    uint8_t p[512];
    size_t n = make_info2(p, "abc", "1");
    mdp_ipc_procinfo info;
    char err[256];

    /* command line count at offset 24: huge, then 2^31, then one too many */
    const uint32_t counts[] = {0xFFFFFFFFu, 0x80000000u, 5};
    for (size_t i = 0; i < 3; i++) {
        uint8_t q[512];
        memcpy(q, p, n);
        for (int b = 0; b < 4; b++)
            q[24 + b] = (uint8_t)(counts[i] >> (8 * b));
        if (i == 2) /* 5 units would run past a payload cut after them */
            ck_assert_int_eq(mdp__ipc_parse_process_info(&info, q, 24 + 4 + 8, 2, err, sizeof err),
                             MDT_ETRUNC);
        else
            ck_assert_int_eq(mdp__ipc_parse_process_info(&info, q, n, 2, err, sizeof err),
                             MDT_ETRUNC);
    }
    /* no terminating NUL unit */
    p[24 + 4 + 6] = 'z';
    ck_assert_int_eq(mdp__ipc_parse_process_info(&info, p, n, 2, err, sizeof err), MDT_EBADIMAGE);
    ck_assert_ptr_nonnull(strstr(err, "not NUL-terminated"));
}
END_TEST

/* Random damage to a valid payload (fixed seed): every outcome is a code,
 * never a crash or a read past the buffer (ASan build), and what parses
 * has terminated strings. */
START_TEST(process_info_random_damage)
{
    uint8_t p[512];
    size_t n = make_info2(p, "/usr/bin/dotnet /srv/app/Waiter.dll --flag", "10.0.12+abc");
    uint32_t seed = 12345;
    mdp_ipc_procinfo info;
    char err[256];
    int ok = 0;

    for (int iter = 0; iter < 20000; iter++) {
        size_t len = n;
        uint8_t *copy;
        int rc;

        seed = seed * 1103515245u + 12345u;
        if (seed >> 30 == 0)
            len = (seed >> 8) % n;
        copy = malloc(len ? len : 1);
        memcpy(copy, p, len);
        for (int k = (int)(seed >> 28) % 4 + 1; k > 0 && len; k--) {
            seed = seed * 1103515245u + 12345u;
            copy[(seed >> 8) % len] = (uint8_t)(seed >> 24);
        }
        rc = mdp__ipc_parse_process_info(&info, copy, len, 2, err, sizeof err);
        ck_assert_msg(rc == 0 || rc == MDT_ETRUNC || rc == MDT_EBADIMAGE, "iteration %d: %d", iter,
                      rc);
        if (rc == 0) {
            ok++;
            ck_assert_uint_lt(strlen(info.command_line), sizeof info.command_line);
            ck_assert_uint_lt(strlen(info.os), sizeof info.os);
            ck_assert_uint_lt(strlen(info.arch), sizeof info.arch);
            ck_assert_uint_lt(strlen(info.entrypoint_assembly), sizeof info.entrypoint_assembly);
            ck_assert_uint_lt(strlen(info.clr_version), sizeof info.clr_version);
        }
        free(copy);
    }
    /* damage inside string bodies leaves a parseable payload: both
     * outcomes must have been exercised */
    ck_assert_int_gt(ok, 100);
    ck_assert_int_lt(ok, 19900);
}
END_TEST

START_TEST(process_info_long_string_cut)
{
    static uint8_t p[20000];
    char *cmd = malloc(6000);
    mdp_ipc_procinfo info;
    char err[256];
    size_t n;

    memset(cmd, 'c', 5999);
    cmd[5999] = '\0';
    n = make_info2(p, cmd, "10.0.1");
    ck_assert_int_eq(mdp__ipc_parse_process_info(&info, p, n, 2, err, sizeof err), 0);
    ck_assert_int_eq(info.truncated, 1);
    ck_assert_uint_eq(strlen(info.command_line), sizeof info.command_line - 1);
    ck_assert_str_eq(info.clr_version, "10.0.1");
    free(cmd);
}
END_TEST

/* ---- fake servers -------------------------------------------------------- */

enum action {
    REPLY,        /* read the request, write the reply, close */
    REPLY_SLOWLY, /* read the request, write the reply a byte per 100 ms */
    SILENT,       /* read the request, keep the connection open, say nothing */
    CLOSE_AT_ONCE /* close right after accept, reading nothing */
};

typedef struct turn {
    enum action action;
    uint8_t reply[1024];
    size_t reply_len;
} turn;

typedef struct fake {
    char dir[128];
    char path[256];
    int lfd;
    int stop[2]; /* a pipe: closing its write end releases SILENT turns */
    bool accept, joined;
    turn turns[3];
    int nturns;
    uint8_t request[3][70000];
    size_t request_len[3];
    pthread_t thread;
} fake;

static unsigned long long own_starttime(void)
{
    char buf[1024], *p;
    FILE *f = fopen("/proc/self/stat", "r");
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    p = strrchr(buf, ')') + 2;
    for (int field = 3; field < 22; field++)
        p = strchr(p, ' ') + 1;
    return strtoull(p, NULL, 10);
}

/* A scratch directory, made this process's TMPDIR for discovery. */
static void make_dir(char dir[128])
{
    snprintf(dir, 128, "/tmp/mdp-ipc-test.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    setenv("TMPDIR", dir, 1);
}

static void bind_socket_backlog(const char *path, int *fd_out, int backlog)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(fd, 0);
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    ck_assert_int_eq(listen(fd, backlog), 0);
    if (fd_out)
        *fd_out = fd;
    else
        close(fd); /* leaves a stale socket file */
}

static void bind_socket(const char *path, int *fd_out)
{
    bind_socket_backlog(path, fd_out, 8);
}

static bool read_full(int fd, uint8_t *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r <= 0)
            return false;
        got += (size_t)r;
    }
    return true;
}

static void *serve(void *arg)
{
    fake *f = arg;
    for (int t = 0; t < f->nturns; t++) {
        turn *tu = &f->turns[t];
        struct pollfd pf = {.fd = f->lfd, .events = POLLIN};
        uint8_t *req = f->request[t];
        int c;

        if (poll(&pf, 1, 10000) != 1)
            return NULL; /* the client gave up: nothing to serve */
        c = accept(f->lfd, NULL, NULL);
        if (c < 0)
            return NULL;
        if (tu->action != CLOSE_AT_ONCE && read_full(c, req, MDP_IPC_HEADER_LEN)) {
            size_t size = (size_t)(req[14] | req[15] << 8);
            if (size > MDP_IPC_HEADER_LEN &&
                read_full(c, req + MDP_IPC_HEADER_LEN, size - MDP_IPC_HEADER_LEN))
                f->request_len[t] = size;
            else if (size == MDP_IPC_HEADER_LEN)
                f->request_len[t] = size;
        }
        /* MSG_NOSIGNAL: the client may be gone (it timed out) */
        if (tu->action == REPLY) {
            if (tu->reply_len && send(c, tu->reply, tu->reply_len, MSG_NOSIGNAL) < 0)
                perror("fake send");
        } else if (tu->action == REPLY_SLOWLY) {
            for (size_t i = 0; i < tu->reply_len; i++) {
                if (send(c, tu->reply + i, 1, MSG_NOSIGNAL) < 0)
                    break;
                usleep(100000);
            }
        } else if (tu->action == SILENT) {
            char b;
            while (read(f->stop[0], &b, 1) < 0 && errno == EINTR)
                ;
        }
        close(c);
    }
    return NULL;
}

/* A fake runtime for this process: its socket carries our pid and start
 * time, so discovery finds it too. accept=false: it never accepts. */
static fake *fake_start(bool accept)
{
    fake *f = calloc(1, sizeof *f);
    make_dir(f->dir);
    snprintf(f->path, sizeof f->path, "%s/dotnet-diagnostic-%d-%llu-socket", f->dir, (int)getpid(),
             own_starttime());
    bind_socket(f->path, &f->lfd);
    ck_assert_int_eq(pipe(f->stop), 0);
    f->accept = accept;
    return f;
}

static void fake_run(fake *f)
{
    if (f->accept)
        ck_assert_int_eq(pthread_create(&f->thread, NULL, serve, f), 0);
}

/* Wait for the server to finish its turns (the client is done). */
static void fake_join(fake *f)
{
    if (f->accept && !f->joined)
        pthread_join(f->thread, NULL);
    f->joined = true;
}

static void fake_stop(fake *f)
{
    close(f->stop[1]);
    fake_join(f);
    close(f->stop[0]);
    close(f->lfd);
    unlink(f->path);
    rmdir(f->dir);
    free(f);
}

static turn *add_turn(fake *f, enum action a)
{
    turn *t = &f->turns[f->nturns++];
    t->action = a;
    return t;
}

/* A turn answering OK with a ProcessInfo2 payload. */
static void add_info_turn(fake *f, const char *cmdline, const char *version)
{
    uint8_t payload[512];
    turn *t = add_turn(f, REPLY);
    t->reply_len = make_msg(t->reply, MDP_IPC_SET_SERVER, MDP_IPC_SERVER_OK, payload,
                            make_info2(payload, cmdline, version));
}

/* A turn answering Error with `hr`. */
static void add_error_turn(fake *f, uint32_t hr)
{
    turn *t = add_turn(f, REPLY);
    t->reply_len = make_hr_msg(t->reply, MDP_IPC_SERVER_ERROR, hr);
}

static long elapsed_ms(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (t1.tv_sec - t0->tv_sec) * 1000 + (t1.tv_nsec - t0->tv_nsec) / 1000000;
}

static int attach_fake(fake *f, uint32_t timeout, uint32_t *hr, char *err, size_t errlen)
{
    return mdp_ipc_attach_socket(f->path, TESTPROF_CLSID, "/opt/prof/libprof.so", "hello", 5,
                                 timeout, hr, err, errlen);
}

START_TEST(fake_accepts_attach_and_sees_the_request)
{
    fake *f = fake_start(true);
    turn *t = add_turn(f, REPLY);
    TALLOC_CTX *ctx = talloc_new(NULL);
    uint8_t *want;
    size_t want_len;
    uint32_t hr = 1;
    char err[1024] = "";

    t->reply_len = make_hr_msg(t->reply, MDP_IPC_SERVER_OK, 0);
    fake_run(f);
    ck_assert_msg(attach_fake(f, 5000, &hr, err, sizeof err) == 0, "%s", err);
    ck_assert_uint_eq(hr, 0);
    fake_join(f);
    /* the request the server saw is the encoding with 3/4 of the timeout */
    ck_assert_int_eq(mdp__ipc_encode_attach(ctx, &want, &want_len, 5000 / 4 * 3 + 1, TESTPROF_CLSID,
                                            "/opt/prof/libprof.so", "hello", 5, err, sizeof err),
                     0);
    ck_assert_uint_eq(f->request_len[0], want_len);
    ck_assert_mem_eq(f->request[0], want, want_len);
    ck_assert_mem_eq(f->request[0] + 24, testprof_guid, 16);
    fake_stop(f);
    talloc_free(ctx);
}
END_TEST

/* The runtime answers the attach with `hr` in an OK or Error reply. */
static void expect_refusal(uint8_t reply_id, uint32_t hr, const char *phrase)
{
    fake *f = fake_start(true);
    turn *t = add_turn(f, REPLY);
    uint32_t got = 0;
    char err[1024] = "";

    t->reply_len = make_hr_msg(t->reply, reply_id, hr);
    fake_run(f);
    ck_assert_int_eq(attach_fake(f, 5000, &got, err, sizeof err), MDT_EIO);
    ck_assert_uint_eq(got, hr);
    ck_assert_msg(strstr(err, phrase) != NULL, "message \"%s\" lacks \"%s\"", err, phrase);
    fake_stop(f);
}

START_TEST(fake_refuses_with_hresult)
{
    expect_refusal(MDP_IPC_SERVER_ERROR, 0x8013136Au,
                   "the runtime refused: HRESULT 0x8013136A (CORPROF_E_PROFILER_ALREADY_ACTIVE");
}
END_TEST

START_TEST(fake_ok_with_failure_hresult_is_refusal)
{
    expect_refusal(MDP_IPC_SERVER_OK, 0x80004005u,
                   "the runtime refused: HRESULT 0x80004005 (E_FAIL");
}
END_TEST

START_TEST(fake_unknown_command_is_runtime_too_old)
{
    fake *f = fake_start(true);
    uint32_t hr = 0;
    char err[1024] = "";
    add_error_turn(f, MDP_HR_UNKNOWN_COMMAND);
    add_error_turn(f, MDP_HR_UNKNOWN_COMMAND); /* the version query */
    fake_run(f);
    ck_assert_int_eq(attach_fake(f, 5000, &hr, err, sizeof err), MDT_EUNSUPPORTED);
    ck_assert_uint_eq(hr, MDP_HR_UNKNOWN_COMMAND);
    ck_assert_ptr_nonnull(strstr(err, "runtime too old (older than .NET 6"));
    ck_assert_ptr_nonnull(strstr(err, "CORDIAGIPC_E_UNKNOWN_COMMAND"));
    fake_stop(f);
}
END_TEST

START_TEST(fake_notsupported_names_runtime_version)
{
    fake *f = fake_start(true);
    uint32_t hr = 0;
    char err[1024] = "";
    add_error_turn(f, MDP_HR_NOTSUPPORTED);
    add_info_turn(f, "app", "8.0.5-aot");
    fake_run(f);
    ck_assert_int_eq(attach_fake(f, 5000, &hr, err, sizeof err), MDT_EUNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(err, "runtime built without profiler attach (runtime 8.0.5-aot)"));
    /* the second connection asked ProcessInfo2 */
    ck_assert_uint_eq(f->request[1][16], MDP_IPC_SET_PROCESS);
    ck_assert_uint_eq(f->request[1][17], MDP_IPC_PROCESS_INFO2);
    fake_stop(f);
}
END_TEST

/* A bad reply to an attach: the code and a phrase of the message. */
static void expect_bad_reply(const uint8_t *reply, size_t len, int code, const char *phrase)
{
    fake *f = fake_start(true);
    turn *t = add_turn(f, REPLY);
    uint32_t hr = 7;
    char err[1024] = "";
    if (len)
        memcpy(t->reply, reply, len);
    t->reply_len = len;
    fake_run(f);
    ck_assert_int_eq(attach_fake(f, 3000, &hr, err, sizeof err), code);
    ck_assert_uint_eq(hr, 0);
    ck_assert_msg(strstr(err, phrase) != NULL, "message \"%s\" lacks \"%s\"", err, phrase);
    fake_stop(f);
}

START_TEST(fake_garbage_reply)
{
    uint8_t junk[64];
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (uint8_t)(i * 37 + 11);
    expect_bad_reply(junk, sizeof junk, MDT_EBADIMAGE, "not a diagnostics IPC message");
}
END_TEST

START_TEST(fake_truncated_header)
{
    uint8_t m[64];
    make_hr_msg(m, MDP_IPC_SERVER_OK, 0);
    expect_bad_reply(m, 10, MDT_ETRUNC, "after 10 bytes of the 20-byte header");
}
END_TEST

START_TEST(fake_truncated_payload)
{
    uint8_t m[64];
    make_hr_msg(m, MDP_IPC_SERVER_OK, 0);
    expect_bad_reply(m, 22, MDT_ETRUNC, "header declares 24 bytes, connection closed after 22");
}
END_TEST

START_TEST(fake_size_below_header)
{
    uint8_t m[64];
    make_hr_msg(m, MDP_IPC_SERVER_OK, 0);
    m[14] = 5;
    expect_bad_reply(m, 24, MDT_EBADIMAGE, "declares 5 bytes");
}
END_TEST

START_TEST(fake_wrong_command_set)
{
    uint8_t m[64];
    size_t n = make_hr_msg(m, 0x01, 0);
    m[16] = 0x03;
    expect_bad_reply(m, n, MDT_EBADIMAGE, "neither OK");
}
END_TEST

START_TEST(fake_error_reply_with_success_hresult)
{
    uint8_t m[64];
    size_t n = make_hr_msg(m, MDP_IPC_SERVER_ERROR, 0);
    expect_bad_reply(m, n, MDT_EBADIMAGE, "Error reply carrying the success HRESULT");
}
END_TEST

START_TEST(fake_closes_without_reply)
{
    expect_bad_reply(NULL, 0, MDT_ETRUNC, "closed the connection");
}
END_TEST

START_TEST(fake_huge_declared_size_then_close)
{
    uint8_t m[64];
    make_hr_msg(m, MDP_IPC_SERVER_OK, 0);
    m[14] = 0xFF;
    m[15] = 0xFF;
    expect_bad_reply(m, 24, MDT_ETRUNC, "header declares 65535 bytes");
}
END_TEST

/* Nobody answers: the call returns within the timeout (plus slack for a
 * loaded or sanitized build), never hangs. */
static void expect_timeout(fake *f, uint32_t timeout)
{
    struct timespec t0;
    uint32_t hr = 7;
    char err[1024] = "";
    long ms;
    int rc;

    fake_run(f);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    rc = attach_fake(f, timeout, &hr, err, sizeof err);
    ms = elapsed_ms(&t0);
    ck_assert_int_eq(rc, MDT_EIO);
    ck_assert_uint_eq(hr, 0);
    ck_assert_msg(strstr(err, "no answer within") != NULL, "%s", err);
    ck_assert_msg(ms >= (long)timeout - 5 && ms < (long)timeout + 1500, "took %ld ms", ms);
    fake_stop(f);
}

START_TEST(fake_silent_times_out)
{
    fake *f = fake_start(true);
    add_turn(f, SILENT);
    expect_timeout(f, 300);
}
END_TEST

START_TEST(fake_never_accepts_times_out)
{
    expect_timeout(fake_start(false), 300);
}
END_TEST

START_TEST(fake_trickle_bounded_by_one_deadline)
{
    fake *f = fake_start(true);
    turn *t = add_turn(f, REPLY_SLOWLY);
    /* 24 bytes at 100 ms each: 2.4 s, far beyond the 500 ms timeout, yet
     * every single read would finish in time */
    t->reply_len = make_hr_msg(t->reply, MDP_IPC_SERVER_OK, 0);
    expect_timeout(f, 500);
}
END_TEST

/* A socket path longer than sun_path (108 bytes) is reached through an
 * O_PATH descriptor of its directory. */
START_TEST(long_socket_path_reached)
{
    char dir[] = "/tmp/mdp-ipc-test.XXXXXX", longdir[512], path[600], err[1024] = "";
    fake *f;
    mdp_ipc_procinfo info;
    int here;

    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(longdir, sizeof longdir, "%s/%0120d", dir, 7);
    ck_assert_int_eq(mkdir(longdir, 0700), 0);
    snprintf(path, sizeof path, "%s/dotnet-diagnostic-1-2-socket", longdir);
    ck_assert_uint_gt(strlen(path), sizeof((struct sockaddr_un *)0)->sun_path);
    /* bind by a relative name from inside the directory */
    here = open(".", O_RDONLY | O_DIRECTORY);
    ck_assert_int_eq(chdir(longdir), 0);
    f = fake_start(true);
    close(f->lfd);
    unlink(f->path);
    bind_socket("dotnet-diagnostic-1-2-socket", &f->lfd);
    ck_assert_int_eq(fchdir(here), 0);
    close(here);
    add_info_turn(f, "app", "10.0.12");
    fake_run(f);
    ck_assert_msg(mdp_ipc_process_info_socket(path, 3000, &info, err, sizeof err) == 0, "%s", err);
    ck_assert_str_eq(info.clr_version, "10.0.12");
    fake_stop(f);
    unlink(path);
    rmdir(longdir);
    rmdir(dir);
}
END_TEST

/* A listener whose backlog is full refuses connects with EAGAIN; the client
 * retries until its deadline instead of failing at once or hanging. */
START_TEST(full_backlog_retried_until_deadline)
{
    char dir[] = "/tmp/mdp-ipc-test.XXXXXX", path[64], err[1024] = "";
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    mdp_ipc_procinfo info;
    struct timespec t0;
    int lfd, fill[64], nfill = 0, rc;
    long ms;

    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/s", dir);
    bind_socket_backlog(path, &lfd, 0);
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
    while (nfill < 64) {
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
        if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
            ck_assert_int_eq(errno, EAGAIN);
            close(fd);
            break;
        }
        fill[nfill++] = fd;
    }
    ck_assert_int_lt(nfill, 64);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    rc = mdp_ipc_process_info_socket(path, 300, &info, err, sizeof err);
    ms = elapsed_ms(&t0);
    ck_assert_int_eq(rc, MDT_EIO);
    ck_assert_msg(strstr(err, "did not accept a connection") != NULL, "%s", err);
    ck_assert_msg(ms >= 295 && ms < 1800, "took %ld ms", ms);
    while (nfill > 0)
        close(fill[--nfill]);
    close(lfd);
    unlink(path);
    rmdir(dir);
}
END_TEST

START_TEST(closed_peer_gives_error_not_sigpipe)
{
    int sv[2];
    uint8_t msg[4096] = {0};
    char err[512] = "";

    signal(SIGPIPE, SIG_DFL);
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
    close(sv[1]);
    ck_assert_int_eq(mdp__ipc_send_all(sv[0], msg, sizeof msg, mdp__ipc_now_ns() + 1000000000u,
                                       "pair", err, sizeof err),
                     MDT_EIO);
    ck_assert_ptr_nonnull(strstr(err, "closed the connection"));
    close(sv[0]);
}
END_TEST

START_TEST(stale_socket_nobody_listens)
{
    char dir[] = "/tmp/mdp-ipc-test.XXXXXX", path[256], err[1024] = "";
    mdp_ipc_procinfo info;

    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/s", dir);
    bind_socket(path, NULL);
    ck_assert_int_eq(mdp_ipc_process_info_socket(path, 1000, &info, err, sizeof err),
                     MDT_ENOTFOUND);
    ck_assert_ptr_nonnull(strstr(err, "nobody listens"));
    unlink(path);
    ck_assert_int_eq(mdp_ipc_process_info_socket(path, 1000, &info, err, sizeof err),
                     MDT_ENOTFOUND);
    ck_assert_ptr_nonnull(strstr(err, "does not exist"));
    rmdir(dir);
}
END_TEST

/* ---- discovery and ProcessInfo by pid ------------------------------------ */

START_TEST(process_info_by_pid_through_discovery)
{
    fake *f = fake_start(true);
    mdp_ipc_procinfo info;
    char err[1024] = "";

    add_info_turn(f, "/usr/bin/dotnet x.dll", "10.0.12");
    fake_run(f);
    ck_assert_msg(mdp_ipc_process_info(getpid(), 3000, &info, err, sizeof err) == 0, "%s", err);
    ck_assert_str_eq(info.clr_version, "10.0.12");
    ck_assert_uint_eq(f->request_len[0], MDP_IPC_HEADER_LEN);
    ck_assert_uint_eq(f->request[0][17], MDP_IPC_PROCESS_INFO2);
    fake_stop(f);
}
END_TEST

START_TEST(process_info_falls_back_to_v1)
{
    fake *f = fake_start(true);
    mdp_ipc_procinfo info;
    char err[1024] = "";

    add_error_turn(f, MDP_HR_UNKNOWN_COMMAND);
    add_info_turn(f, "/usr/bin/dotnet x.dll", "ignored");
    fake_run(f);
    ck_assert_msg(mdp_ipc_process_info(getpid(), 3000, &info, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(info.info_command, 1);
    ck_assert_str_eq(info.command_line, "/usr/bin/dotnet x.dll");
    ck_assert_str_eq(info.clr_version, "");
    ck_assert_uint_eq(f->request[1][17], MDP_IPC_PROCESS_INFO);
    fake_stop(f);
}
END_TEST

START_TEST(process_info_neither_command_is_too_old)
{
    fake *f = fake_start(true);
    mdp_ipc_procinfo info;
    char err[1024] = "";
    add_error_turn(f, MDP_HR_UNKNOWN_COMMAND);
    add_error_turn(f, MDP_HR_UNKNOWN_COMMAND);
    fake_run(f);
    ck_assert_int_eq(mdp_ipc_process_info(getpid(), 3000, &info, err, sizeof err),
                     MDT_EUNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(err, "runtime too old"));
    fake_stop(f);
}
END_TEST

static void touch_at(const char *path, time_t when)
{
    struct timeval tv[2] = {{when, 0}, {when, 0}};
    ck_assert_int_eq(utimes(path, tv), 0);
}

START_TEST(discovery_prefers_start_time_then_newest)
{
    char dir[128];
    char exact[256], other[256], newer[256], found[512], err[1024] = "";
    unsigned long long key = own_starttime();
    time_t now = time(NULL);

    make_dir(dir);
    snprintf(exact, sizeof exact, "%s/dotnet-diagnostic-%d-%llu-socket", dir, (int)getpid(), key);
    snprintf(other, sizeof other, "%s/dotnet-diagnostic-%d-%llu-socket", dir, (int)getpid(),
             key + 1000);
    snprintf(newer, sizeof newer, "%s/dotnet-diagnostic-%d-%llu-socket", dir, (int)getpid(),
             key + 2000);
    bind_socket(exact, NULL);
    bind_socket(other, NULL);
    bind_socket(newer, NULL);
    touch_at(exact, now - 300);
    touch_at(other, now - 100);
    touch_at(newer, now + 100);
    ck_assert_int_eq(mdp_ipc_find_socket(getpid(), found, sizeof found, err, sizeof err), 0);
    ck_assert_str_eq(found, exact);
    unlink(exact);
    ck_assert_int_eq(mdp_ipc_find_socket(getpid(), found, sizeof found, err, sizeof err), 0);
    ck_assert_str_eq(found, newer);
    /* the path must fit the caller's buffer */
    ck_assert_int_eq(mdp_ipc_find_socket(getpid(), found, 10, err, sizeof err), MDT_EINVAL);
    unlink(other);
    unlink(newer);
    rmdir(dir);
}
END_TEST

START_TEST(discovery_ignores_lookalikes)
{
    char dir[128];
    char p[512], found[512], err[2048] = "";
    const char *names[] = {"dotnet-diagnostic-%d--socket", "dotnet-diagnostic-%d-12-socketx",
                           "dotnet-diagnostic-%dx-12-socket", "dotnet-diagnostic-%d-12",
                           "dotnet-diagnostic-1%d-12-socket"};
    int fd;

    make_dir(dir);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char name[128];
        snprintf(name, sizeof name, names[i], (int)getpid());
        snprintf(p, sizeof p, "%s/%s", dir, name);
        bind_socket(p, NULL);
    }
    /* the right name, but a regular file */
    snprintf(p, sizeof p, "%s/dotnet-diagnostic-%d-%llu-socket", dir, (int)getpid(),
             own_starttime());
    fd = open(p, O_CREAT | O_WRONLY, 0600);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert_int_eq(mdp_ipc_find_socket(getpid(), found, sizeof found, err, sizeof err),
                     MDT_ENOTFOUND);
    ck_assert_msg(strstr(err, "is not a socket (ignored)") != NULL, "%s", err);
    ck_assert_msg(strstr(err, "libcoreclr.so is not mapped") != NULL, "%s", err);
    ck_assert_msg(strstr(err, dir) != NULL, "%s", err);
    /* clean up everything in the directory */
    unlink(p);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char name[128];
        snprintf(name, sizeof name, names[i], (int)getpid());
        snprintf(p, sizeof p, "%s/%s", dir, name);
        unlink(p);
    }
    ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

START_TEST(discovery_bad_pids)
{
    char found[512], err[1024] = "";
    ck_assert_int_eq(mdp_ipc_find_socket(0, found, sizeof found, err, sizeof err), MDT_EINVAL);
    ck_assert_int_eq(mdp_ipc_find_socket(-5, found, sizeof found, err, sizeof err), MDT_EINVAL);
    ck_assert_int_eq(mdp_ipc_find_socket(0x7ffffffe, found, sizeof found, err, sizeof err),
                     MDT_ENOTFOUND);
    ck_assert_ptr_nonnull(strstr(err, "no process with pid"));
    /* attach reports a bad CLSID before looking for the process */
    ck_assert_int_eq(mdp_ipc_attach(0x7ffffffe, "nope", "/p", NULL, 0, 100, NULL, err, sizeof err),
                     MDT_EINVAL);
    /* err may be NULL */
    ck_assert_int_eq(mdp_ipc_attach(0x7ffffffe, TESTPROF_CLSID, "/p", NULL, 0, 100, NULL, NULL, 0),
                     MDT_ENOTFOUND);
}
END_TEST

typedef struct held_thread {
    long tid;
    int gate[2]; /* the thread waits until the write end is closed */
} held_thread;

static void *hold(void *arg)
{
    held_thread *h = arg;
    char b;
    __atomic_store_n(&h->tid, (long)syscall(SYS_gettid), __ATOMIC_RELEASE);
    while (read(h->gate[0], &b, 1) < 0 && errno == EINTR)
        ;
    return NULL;
}

START_TEST(discovery_names_thread_ids)
{
    held_thread h = {0};
    pthread_t th;
    char found[512], err[1024] = "", want[128];

    ck_assert_int_eq(pipe(h.gate), 0);
    ck_assert_int_eq(pthread_create(&th, NULL, hold, &h), 0);
    while (__atomic_load_n(&h.tid, __ATOMIC_ACQUIRE) == 0)
        usleep(1000);
    ck_assert_int_eq(mdp_ipc_find_socket((int)h.tid, found, sizeof found, err, sizeof err),
                     MDT_ENOTFOUND);
    snprintf(want, sizeof want, "%ld is a thread of process %d", h.tid, (int)getpid());
    ck_assert_msg(strstr(err, want) != NULL, "%s", err);
    close(h.gate[1]);
    pthread_join(th, NULL);
    close(h.gate[0]);
}
END_TEST

START_TEST(hresult_names)
{
    ck_assert_str_eq(mdp_ipc_hresult_name(0x8013136Au), "CORPROF_E_PROFILER_ALREADY_ACTIVE");
    ck_assert_str_eq(mdp_ipc_hresult_name(0x80131385u), "CORDIAGIPC_E_UNKNOWN_COMMAND");
    ck_assert_ptr_null(mdp_ipc_hresult_name(0x12345678u));
    ck_assert_ptr_null(mdp_ipc_hresult_text(0x12345678u));
}
END_TEST

Suite *suite(void);
Suite *suite(void)
{
    Suite *s = suite_create("attach-ipc");
    TCase *w = tcase_create("wire");
    TCase *f = tcase_create("fake-server");
    TCase *d = tcase_create("discovery");

    tcase_add_test(w, utf16_encodes_bmp_and_supplementary);
    tcase_add_test(w, utf16_rejects_ill_formed_utf8_with_offset);
    tcase_add_test(w, utf16_encode_respects_buffer);
    tcase_add_test(w, utf16_decode_replaces_lone_surrogates);
    tcase_add_test(w, utf16_decode_stops_at_nul_and_cuts_at_boundary);
    tcase_add_test(w, clsid_text_to_guid_bytes);
    tcase_add_test(w, clsid_malformed_rejected);
    tcase_add_test(w, attach_request_bytes);
    tcase_add_test(w, attach_request_size_limits);
    tcase_add_test(w, header_checks);
    tcase_add_test(w, reply_hresult_forms);
    tcase_add_test(w, process_info2_parsed);
    tcase_add_test(w, process_info_every_truncation_fails);
    tcase_add_test(w, process_info_bad_strings);
    tcase_add_test(w, process_info_random_damage);
    tcase_add_test(w, process_info_long_string_cut);
    tcase_add_test(w, hresult_names);
    suite_add_tcase(s, w);

    tcase_add_test(f, fake_accepts_attach_and_sees_the_request);
    tcase_add_test(f, fake_refuses_with_hresult);
    tcase_add_test(f, fake_ok_with_failure_hresult_is_refusal);
    tcase_add_test(f, fake_unknown_command_is_runtime_too_old);
    tcase_add_test(f, fake_notsupported_names_runtime_version);
    tcase_add_test(f, fake_garbage_reply);
    tcase_add_test(f, fake_truncated_header);
    tcase_add_test(f, fake_truncated_payload);
    tcase_add_test(f, fake_size_below_header);
    tcase_add_test(f, fake_wrong_command_set);
    tcase_add_test(f, fake_error_reply_with_success_hresult);
    tcase_add_test(f, fake_closes_without_reply);
    tcase_add_test(f, fake_huge_declared_size_then_close);
    tcase_add_test(f, fake_silent_times_out);
    tcase_add_test(f, fake_never_accepts_times_out);
    tcase_add_test(f, fake_trickle_bounded_by_one_deadline);
    tcase_add_test(f, long_socket_path_reached);
    tcase_add_test(f, full_backlog_retried_until_deadline);
    tcase_add_test(f, closed_peer_gives_error_not_sigpipe);
    tcase_add_test(f, stale_socket_nobody_listens);
    tcase_set_timeout(f, 30);
    suite_add_tcase(s, f);

    tcase_add_test(d, process_info_by_pid_through_discovery);
    tcase_add_test(d, process_info_falls_back_to_v1);
    tcase_add_test(d, process_info_neither_command_is_too_old);
    tcase_add_test(d, discovery_prefers_start_time_then_newest);
    tcase_add_test(d, discovery_ignores_lookalikes);
    tcase_add_test(d, discovery_bad_pids);
    tcase_add_test(d, discovery_names_thread_ids);
    suite_add_tcase(s, d);
    return s;
}
