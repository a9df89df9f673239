/* mdprofile --attach PID: load the profiler into a running process over
 * the runtime's diagnostics IPC, then wait until the session's log is
 * complete (or the process ended), as `dotnet-trace collect -p` does, so
 * that a script can use the log on the next line.
 *
 * How the launcher knows: the profiler reports on the channel
 * (core/channel.h) which log it writes ("log"), that the log is complete
 * ("end", sent after its #stats line is written) and that the runtime let
 * it go ("detached", from ProfilerDetachSucceeded). mdprofile waits for
 * "end", then for "detached" (at most MDL_DETACH_WAIT_MS: until then the
 * runtime refuses another attach), and exits 0. It stops waiting when the
 * process ends (its pid gone, or another process under that pid: the
 * start time differs); then the log file decides (complete when it ends
 * with #stats). A profiler that cannot reach the channel (another network
 * namespace) is waited for through its log file: polled until it ends
 * with #stats. With --duration the wait is bounded (the duration plus
 * MDL_GRACE_MS); SIGINT, SIGTERM or SIGHUP ask the profiler to end the
 * session now (a "stop" message) and a second one gives up waiting.
 *
 * A second attach while a session runs is refused by the runtime itself
 * (CORPROF_E_PROFILER_ALREADY_ACTIVE), which the message explains; while
 * a session detaches (CORPROF_E_PROFILER_DETACHING) the attach is retried
 * for MDL_DETACHING_RETRY_MS. */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "attach/ipc.h"
#include "core/channel.h"
#include "launcher/launch.h"

#define MDL_DETACH_WAIT_MS 30000u
#define MDL_GRACE_MS 60000u
#define MDL_DETACHING_RETRY_MS 15000u
#define MDL_CHANNEL_SILENT_MS 15000u
#define HR_ALREADY_ACTIVE 0x8013136Au
#define HR_DETACHING 0x80131367u

static volatile sig_atomic_t stops;

static void on_stop(int sig)
{
    stops++;
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Field 22 of /proc/PID/stat (start time in clock ticks), 0 when gone. */
static unsigned long long start_time(int pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = 0;
    char *p = strrchr(buf, ')');
    if (!p)
        return 0;
    /* after ") " come fields 3, 4, ...; the start time is field 22 */
    int f = 2;
    for (p++; *p && f < 21; p++)
        if (*p == ' ')
            f++;
    return strtoull(p, NULL, 10);
}

/* Whether this process and ours share a mount namespace (then the log's
 * path means the same file to both). */
static int same_mounts(int pid)
{
    char path[64];
    struct stat a, b;
    snprintf(path, sizeof path, "/proc/%d/ns/mnt", pid);
    return stat("/proc/self/ns/mnt", &a) == 0 && stat(path, &b) == 0 && a.st_ino == b.st_ino &&
           a.st_dev == b.st_dev;
}

int mdl_attach(const mdp_config *cfg, int pid)
{
    char so[PATH_MAX], err[PATH_MAX + 256];
    if (mdl_find_profiler(so, sizeof so) != 0) {
        fprintf(stderr, "mdprofile: cannot find the profiler library libmdprofile.so (set "
                        "MDPROFILE_PROFILER)\n");
        return 1;
    }
    mdp_config c = *cfg;
    char path[sizeof c.output], abs[sizeof c.output];
    if (mdl_absolute(abs, sizeof abs, c.output) != 0 ||
        mdp_log_expand(path, sizeof path, abs, pid) != 0) {
        fprintf(stderr, "mdprofile: log path too long\n");
        return 2;
    }
    snprintf(c.output, sizeof c.output, "%s", path);
    unsigned long long started = start_time(pid);
    if (started && same_mounts(pid) && mdl_output_check(c.output, err, sizeof err) != 0) {
        fprintf(stderr, "mdprofile: %s\n", err);
        return 2;
    }
    struct mdl_logs logs;
    if (mdl_logs_open(&logs) == 0)
        snprintf(c.notify, sizeof c.notify, "%s", logs.name);
    char data[8192];
    int n = mdp_config_format(&c, data, sizeof data);
    if (n < 0) {
        fprintf(stderr, "mdprofile: settings too long\n");
        mdl_logs_close(&logs);
        return 1;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);

    uint32_t hr = 0;
    int e;
    uint64_t t0 = now_ms();
    for (;;) {
        err[0] = 0;
        hr = 0;
        e = mdp_ipc_attach(pid, MDP_CLSID_STRING, so, data, (uint32_t)n, 10000, &hr, err,
                           sizeof err);
        /* the previous session is still leaving: the runtime says so */
        if (e == 0 || hr != HR_DETACHING || now_ms() - t0 > MDL_DETACHING_RETRY_MS || stops)
            break;
        usleep(200000);
    }
    if (e != 0 || hr != 0) {
        /* what the profiler said while it refused (bad settings, ...) */
        mdl_logs_read(&logs, 100);
        fprintf(stderr, "mdprofile: cannot attach to %d: %s\n", pid,
                err[0] ? err : "the runtime refused the profiler");
        if (hr == HR_ALREADY_ACTIVE)
            fprintf(stderr,
                    "mdprofile: a profiler is already loaded in %d: another mdprofile "
                    "--attach session (one at a time; attach again when it has ended) or "
                    "a profiler loaded at startup (CORECLR_ENABLE_PROFILING)\n",
                    pid);
        mdl_logs_close(&logs);
        return 1;
    }
    if (cfg->verbose)
        fprintf(stderr, "mdprofile: attached to %d; waiting for the log %s\n", pid, c.output);

    uint64_t attached = now_ms();
    uint64_t bound = c.duration_ms ? (uint64_t)c.duration_ms + MDL_GRACE_MS : 0;
    int asked = 0, gone = 0;
    uint64_t ended_at = 0;
    struct mdl_proc *p = NULL;
    char end[32] = "";
    for (;;) {
        mdl_logs_read(&logs, 200);
        p = mdl_logs_find(&logs, pid);
        uint64_t t = now_ms();
        if (p && p->end[0] && !ended_at)
            ended_at = t;
        if (p && p->end[0] && (p->detached || t - ended_at > MDL_DETACH_WAIT_MS)) {
            if (!p->detached)
                fprintf(stderr,
                        "mdprofile: the runtime of %d has not let the profiler go yet: "
                        "another attach is refused until it has\n",
                        pid);
            break;
        }
        if (start_time(pid) != started) {
            gone = 1;
            break;
        }
        /* no word on the channel: the log file says when it is complete */
        if ((!p || !p->path[0]) && t - attached > MDL_CHANNEL_SILENT_MS &&
            mdl_log_state(c.output, end, sizeof end) == 2)
            break;
        if (stops && !asked) {
            asked = 1;
            fprintf(stderr, "mdprofile: ending the session of %d (again to stop waiting)\n", pid);
            if (!p || !p->fromlen ||
                mdp_channel_reply(logs.fd, p->from, p->fromlen, "stop", 4) != 0)
                fprintf(stderr, "mdprofile: cannot reach the profiler in %d: its session goes on\n",
                        pid);
        } else if (stops > 1) {
            fprintf(stderr, "mdprofile: stopped waiting; the session of %d goes on\n", pid);
            mdl_logs_close(&logs);
            return 130;
        }
        if (bound && t - attached > bound) {
            fprintf(stderr, "mdprofile: no complete log from %d within %u s of its %u s session\n",
                    pid, (unsigned)(bound / 1000), c.duration_ms / 1000);
            mdl_logs_close(&logs);
            return 1;
        }
    }
    mdl_logs_read(&logs, 0);
    p = mdl_logs_find(&logs, pid);
    const char *log = p && p->path[0] ? p->path : c.output;
    int state = mdl_log_state(log, end, sizeof end);
    int complete = (p && p->end[0]) || state == 2;
    mdl_logs_list(&logs);
    if (!complete) {
        fprintf(stderr, "mdprofile: %d ended before the session's log %s was complete%s\n", pid,
                log, gone && state == 1 ? " (it holds what was written before)" : "");
        mdl_logs_close(&logs);
        return 1;
    }
    if (!p || !p->path[0])
        fprintf(stderr, "mdprofile: log %s: pid %d: complete (end=%s)\n", log, pid, end);
    mdl_logs_close(&logs);
    return 0;
}
