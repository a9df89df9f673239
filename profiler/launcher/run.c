/* mdprofile -- COMMAND: run a program with the profiler loaded at startup.
 *
 * The log path is checked first (output.c), then COMMAND runs with the
 * environment that makes CoreCLR load the profiler (CORECLR_*), the
 * profiler's settings (MDPROFILE_*), MDPROFILE_FIRST_PID (the pid of the
 * process the launcher started: it writes -o itself, every other .NET
 * process started under it writes NAME.PID.EXT beside it) and
 * MDPROFILE_NOTIFY (the channel the profilers report on).
 *
 * SIGINT, SIGTERM and SIGHUP sent to mdprofile go to the program, which
 * decides what they do (the .NET runtime shuts down; the profiler in it
 * completes its log). A signal the terminal sent (Ctrl-C, a hangup:
 * si_code SI_KERNEL) reached the whole foreground process group, the
 * program included: it is not sent a second time, which could kill a
 * program that is shutting down. A signal the launcher was started with
 * ignored (nohup, a background job) stays ignored, for it and the
 * program. The exit status is the program's (128 + the signal when a
 * signal killed it, as a shell says). */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launcher/launch.h"

static volatile pid_t child;
static volatile sig_atomic_t forwarded, from_terminal;
static const int fwd_signals[] = {SIGINT, SIGTERM, SIGHUP};
#define NFWD (sizeof fwd_signals / sizeof fwd_signals[0])

static void forward(int sig, siginfo_t *si, void *uc)
{
    int saved = errno;
    if (si && si->si_code == SI_KERNEL) {
        from_terminal++;
    } else if (child > 0) {
        kill(child, sig);
        forwarded++;
    }
    errno = saved;
}

static void set_env(const mdp_config *c, const char *so, const char *notify)
{
    char num[32], modes[96];
    setenv("CORECLR_ENABLE_PROFILING", "1", 1);
    setenv("CORECLR_PROFILER", MDP_CLSID_STRING, 1);
    setenv("CORECLR_PROFILER_PATH", so, 1);
    if (mdp_mode_format(c->modes, modes, sizeof modes) > 0)
        setenv("MDPROFILE_MODE", modes, 1);
    snprintf(num, sizeof num, "%u", c->rate);
    setenv("MDPROFILE_RATE", num, 1);
    snprintf(num, sizeof num, "%u", c->slice_ms);
    setenv("MDPROFILE_SLICE", num, 1);
    snprintf(num, sizeof num, "%u", c->max_depth);
    setenv("MDPROFILE_DEPTH", num, 1);
    snprintf(num, sizeof num, "%u", c->alloc_sample);
    setenv("MDPROFILE_ALLOC_SAMPLE", num, 1);
    setenv("MDPROFILE_ALLOC_PATH", c->alloc_path == MDP_ALLOC_PATH_CALLBACK ? "callback" : "auto",
           1);
    setenv("MDPROFILE_OUTPUT", c->output, 1);
    setenv("MDPROFILE_DEBUG_NAMES", c->debug_names ? "1" : "0", 1);
    setenv("MDPROFILE_ELT", c->elt_slow ? "slow" : "fast", 1);
    snprintf(num, sizeof num, "%d", c->activities);
    setenv("MDPROFILE_ACTIVITIES", num, 1);
    setenv("MDPROFILE_THREADS", c->all_threads ? "all" : "runtime", 1);
    snprintf(num, sizeof num, "%u", c->wall_budget ? c->wall_budget : MDP_WALL_BUDGET);
    setenv("MDPROFILE_WALL_BUDGET", num, 1);
    setenv("MDPROFILE_CLOCK", mdp_clock_setting(c->clock), 1);
    snprintf(num, sizeof num, "%d", c->verbose);
    setenv("MDPROFILE_VERBOSE", num, 1);
    if (!getenv("MDPROFILE_DRAIN_MS")) {
        snprintf(num, sizeof num, "%u", c->drain_ms);
        setenv("MDPROFILE_DRAIN_MS", num, 1);
    }
    if (!getenv("MDPROFILE_FLUSH_MS")) {
        snprintf(num, sizeof num, "%u", c->flush_ms);
        setenv("MDPROFILE_FLUSH_MS", num, 1);
    }
    snprintf(num, sizeof num, "%d", (int)getpid());
    setenv("MDPROFILE_FIRST_PID", num, 1);
    if (notify[0])
        setenv("MDPROFILE_NOTIFY", notify, 1);
    else
        unsetenv("MDPROFILE_NOTIFY");
}

int mdl_run(const mdp_config *cfg, char **argv)
{
    char so[PATH_MAX], err[PATH_MAX + 256];
    if (mdl_find_profiler(so, sizeof so) != 0) {
        fprintf(stderr, "mdprofile: cannot find the profiler library libmdprofile.so (set "
                        "MDPROFILE_PROFILER)\n");
        return 127;
    }
    mdp_config c = *cfg;
    char path[sizeof c.output];
    if (mdl_absolute(path, sizeof path, c.output[0] ? c.output : "mdprofile.%p.log") != 0) {
        fprintf(stderr, "mdprofile: log path too long\n");
        return 2;
    }
    snprintf(c.output, sizeof c.output, "%s", path);
    if (mdl_output_check(c.output, err, sizeof err) != 0) {
        fprintf(stderr, "mdprofile: %s\n", err);
        return 2;
    }
    struct mdl_logs logs;
    mdl_logs_open(&logs); /* without it, the first log is still checked below */

    struct sigaction orig[NFWD], sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = forward;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < NFWD; i++) {
        sigaction(fwd_signals[i], NULL, &orig[i]);
        if (orig[i].sa_handler != SIG_IGN)
            sigaction(fwd_signals[i], &sa, NULL);
    }
    /* no signal is forwarded before child is set */
    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &old);
    pid_t pid = fork();
    if (pid < 0) {
        sigprocmask(SIG_SETMASK, &old, NULL);
        fprintf(stderr, "mdprofile: fork: %s\n", strerror(errno));
        return 127;
    }
    if (pid == 0) {
        for (size_t i = 0; i < NFWD; i++)
            sigaction(fwd_signals[i], &orig[i], NULL);
        sigprocmask(SIG_SETMASK, &old, NULL);
        set_env(&c, so, logs.name);
        execvp(argv[0], argv);
        fprintf(stderr, "mdprofile: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    child = pid;
    sigprocmask(SIG_SETMASK, &old, NULL);

    int status = 0;
    for (;;) {
        mdl_logs_read(&logs, 200);
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid)
            break;
        if (r < 0 && errno != EINTR) {
            fprintf(stderr, "mdprofile: waitpid: %s\n", strerror(errno));
            status = 1 << 8;
            break;
        }
    }
    child = 0;
    if (cfg->verbose && (forwarded || from_terminal))
        fprintf(stderr,
                "mdprofile: signals: %d forwarded to the program, %d from the terminal "
                "(which sent them to the program too)\n",
                (int)forwarded, (int)from_terminal);
    /* what the program's profiler sent before it ended is queued */
    mdl_logs_read(&logs, 50);
    int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && !mdl_logs_find(&logs, pid)) {
        mdl_logs_close(&logs);
        return rc;
    }
    char first[PATH_MAX];
    if (mdp_log_expand(first, sizeof first, c.output, pid) != 0)
        snprintf(first, sizeof first, "%s", c.output);
    struct mdl_proc *p = mdl_logs_find(&logs, pid);
    char end[32];
    int state = mdl_log_state(p && p->path[0] ? p->path : first, end, sizeof end);
    if (!p || !p->path[0]) {
        if (state <= 0) {
            /* not left behind empty: `cat app*.log` and a reader's
             * warnings about a log without #stats see only real logs */
            if (state == 0 && !strstr(c.output, "%p"))
                mdl_output_unused(first);
            if (WIFSIGNALED(status))
                fprintf(stderr,
                        "mdprofile: no log at %s: %s was killed by signal %d (%s) before "
                        "the profiler wrote anything\n",
                        first, argv[0], WTERMSIG(status), strsignal(WTERMSIG(status)));
            else if (logs.n == 0)
                fprintf(stderr,
                        "mdprofile: no log at %s: the runtime did not load the profiler (is %s a "
                        ".NET program on CoreCLR? is profiling disabled by DOTNET_ or CORECLR_ "
                        "settings?)\n",
                        first, argv[0]);
            else
                fprintf(stderr,
                        "mdprofile: no log at %s: %s (pid %d) is not a .NET process; the "
                        ".NET processes it started wrote the logs below\n",
                        first, argv[0], (int)pid);
        }
    }
    size_t nlogs = logs.n;
    mdl_logs_list(&logs);
    if (!nlogs && state == 1)
        fprintf(stderr,
                "mdprofile: %s is cut short: the program ended without shutting the "
                "runtime down%s\n",
                first, WIFSIGNALED(status) ? " (killed by a signal)" : "");
    mdl_logs_close(&logs);
    /* no log at all from a program that ended well: say it in the status */
    if (!nlogs && state <= 0 && rc == 0)
        return 1;
    return rc;
}
