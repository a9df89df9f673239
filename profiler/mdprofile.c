/* mdprofile: run a .NET program under the mdtools profiler, or attach the
 * profiler to a running one, and leave a log of doc/profile-log.md.
 *
 *   mdprofile [--mode M] [--rate HZ] [--depth N] [-o LOG] [--debug-names] -- COMMAND [ARGS...]
 *   mdprofile --attach PID [--mode M] [--rate HZ] [--duration S] [--samples N] -o LOG [--debug-names]
 *
 * At startup the profiler is loaded by the runtime itself: the launcher sets
 * CORECLR_ENABLE_PROFILING, CORECLR_PROFILER (the profiler's CLSID) and
 * CORECLR_PROFILER_PATH plus the profiler's own MDPROFILE_* settings, runs
 * COMMAND and waits for it; a program that ends without a log was not
 * profiled (not a .NET program, or the runtime refused the profiler), and
 * the launcher says so. On attach the settings travel as the request's
 * client data (profiler/attach/ipc.h). See doc/mdprofile.1. */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/core.h"
#include "attach/ipc.h"

#define CLSID_TEXT "{1C49C441-593E-4870-856F-98DA7A9DEE94}"

static void usage(FILE *f)
{
    fputs("usage: mdprofile [OPTION]... -- COMMAND [ARGS...]   profile COMMAND from its start\n"
          "       mdprofile --attach PID [OPTION]... -o LOG    profile a running process\n"
          "  --mode sample|calls|alloc  what to profile (sample; attach: sample only)\n"
          "  --rate HZ                  samples per second of thread CPU time (1000)\n"
          "  --depth N                  frames per sample, 1-255 (255)\n"
          "  -o, --output LOG           the log (mdprofile.PID.log)\n"
          "  --debug-names              add the in-process names to every record\n"
          "  --duration S               attach: write the log and detach after S seconds\n"
          "  --samples N                attach: the same once N samples are counted\n"
          "  --elt fast|slow            calls mode: assembly or C enter hook (fast)\n"
          "  --no-activities            sample mode: do not track GC, JIT and type loads\n"
          "                             per thread ([gc], [jit], [type-load] frames)\n"
          "  --exceptions               sample mode: track exception dispatch too\n"
          "                             ([exception] frames; slows exception-heavy code)\n"
          "  --threads all|runtime      sample every thread of the process, or only the\n"
          "                             runtime's managed threads (all)\n"
          "  -v, --verbose              the profiler's diagnostics on stderr (twice: more)\n"
          "  -h, --help                 this text\n"
          "See mdprofile(1).\n",
          f);
}

/* The profiler's shared object: $MDPROFILE_PROFILER, else next to this
 * program in a build tree (.libs/), else the installed one. */
static int find_profiler(char *out, size_t len)
{
    const char *env = getenv("MDPROFILE_PROFILER");
    if (env && *env) {
        snprintf(out, len, "%s", env);
        return access(out, R_OK) == 0 ? 0 : -1;
    }
    char self[PATH_MAX - 32];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = 0;
        char *slash = strrchr(self, '/');
        if (slash) {
            *slash = 0;
            /* a libtool wrapper runs the binary from .libs/ already */
            snprintf(out, len, "%s/.libs/libmdprofile.so", self);
            if (access(out, R_OK) == 0)
                return 0;
            snprintf(out, len, "%s/libmdprofile.so", self);
            if (access(out, R_OK) == 0)
                return 0;
        }
    }
    snprintf(out, len, "%s/libmdprofile.so", MDP_PKGLIBDIR);
    return access(out, R_OK) == 0 ? 0 : -1;
}

static int absolute(char *out, size_t len, const char *path)
{
    if (path[0] == '/') {
        snprintf(out, len, "%s", path);
        return 0;
    }
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd))
        return -1;
    return snprintf(out, len, "%s/%s", cwd, path) < (int)len ? 0 : -1;
}

static pid_t child;

static void forward(int sig)
{
    if (child > 0)
        kill(child, sig);
}

/* 0: the log is complete; 1: no log (not profiled); 2: cut short. */
static int check_log(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 1;
    char buf[4096];
    int header = 0, stats = 0;
    /* format 1, 2 (a calls-mode log) or 3 (a sample log: doc/profile-log.md) */
    if (fgets(buf, sizeof buf, f) && strncmp(buf, "#mdprofile ", 11) == 0 &&
        buf[11] >= '1' && buf[11] <= '3' && buf[12] == ' ')
        header = 1;
    /* A complete log ends with its "#stats" line. Lines longer than buf
     * come in pieces; a piece starting "#stats" could only be one if a
     * record held that text after a multiple of 4095 bytes: records do not
     * (frames never contain '#'). */
    while (fgets(buf, sizeof buf, f))
        stats = strncmp(buf, "#stats", 6) == 0;
    fclose(f);
    return !header ? 1 : stats ? 0 : 2;
}

static int run(const mdp_config *cfg, char **argv)
{
    char so[PATH_MAX];
    if (find_profiler(so, sizeof so) != 0) {
        fprintf(stderr, "mdprofile: cannot find the profiler library libmdprofile.so (set MDPROFILE_PROFILER)\n");
        return 127;
    }
    char log[PATH_MAX];
    child = fork();
    if (child < 0) {
        fprintf(stderr, "mdprofile: fork: %s\n", strerror(errno));
        return 127;
    }
    if (child == 0) {
        mdp_config c = *cfg;
        char path[PATH_MAX];
        if (!c.output[0])
            snprintf(c.output, sizeof c.output, "mdprofile.%d.log", (int)getpid());
        if (absolute(path, sizeof path, c.output) == 0)
            snprintf(c.output, sizeof c.output, "%s", path);
        char num[32];
        static const char *const modes[] = {"sample", "calls", "alloc"};
        setenv("CORECLR_ENABLE_PROFILING", "1", 1);
        setenv("CORECLR_PROFILER", CLSID_TEXT, 1);
        setenv("CORECLR_PROFILER_PATH", so, 1);
        setenv("MDPROFILE_MODE", modes[c.mode], 1);
        snprintf(num, sizeof num, "%u", c.rate);
        setenv("MDPROFILE_RATE", num, 1);
        snprintf(num, sizeof num, "%u", c.max_depth);
        setenv("MDPROFILE_DEPTH", num, 1);
        setenv("MDPROFILE_OUTPUT", c.output, 1);
        setenv("MDPROFILE_DEBUG_NAMES", c.debug_names ? "1" : "0", 1);
        setenv("MDPROFILE_ELT", c.elt_slow ? "slow" : "fast", 1);
        if (c.activities != 1)
            setenv("MDPROFILE_ACTIVITIES", c.activities ? "2" : "0", 1);
        if (!c.all_threads)
            setenv("MDPROFILE_THREADS", "runtime", 1);
        snprintf(num, sizeof num, "%d", c.verbose);
        setenv("MDPROFILE_VERBOSE", num, 1);
        if (!getenv("MDPROFILE_DRAIN_MS")) {
            snprintf(num, sizeof num, "%u", c.drain_ms);
            setenv("MDPROFILE_DRAIN_MS", num, 1);
        }
        /* the launcher reads the path back from the environment it set */
        execvp(argv[0], argv);
        fprintf(stderr, "mdprofile: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = forward;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGINT, SIG_IGN); /* the terminal sends it to the child too */
    int status;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR)
        ;
    if (cfg->output[0])
        absolute(log, sizeof log, cfg->output);
    else {
        char rel[64];
        snprintf(rel, sizeof rel, "mdprofile.%d.log", (int)child);
        absolute(log, sizeof log, rel);
    }
    int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
        return rc;
    switch (check_log(log)) {
    case 1:
        if (WIFSIGNALED(status)) {
            fprintf(stderr, "mdprofile: no log at %s: %s was killed by signal %d (%s) before the "
                            "profiler could write it\n",
                    log, argv[0], WTERMSIG(status), strsignal(WTERMSIG(status)));
            return rc;
        }
        fprintf(stderr,
                "mdprofile: no log at %s: the runtime did not load the profiler (is %s a .NET "
                "program on CoreCLR? is profiling disabled by DOTNET_ or CORECLR_ settings?)\n",
                log, argv[0]);
        return rc ? rc : 1;
    case 2:
        fprintf(stderr, "mdprofile: %s is cut short: the program ended without shutting the runtime down%s\n",
                log, WIFSIGNALED(status) ? " (killed by a signal)" : "");
        break;
    default:
        if (cfg->verbose)
            fprintf(stderr, "mdprofile: log written to %s\n", log);
    }
    return rc;
}

static int attach(const mdp_config *cfg, int pid)
{
    char so[PATH_MAX];
    if (find_profiler(so, sizeof so) != 0) {
        fprintf(stderr, "mdprofile: cannot find the profiler library libmdprofile.so (set MDPROFILE_PROFILER)\n");
        return 1;
    }
    mdp_config c = *cfg;
    char path[PATH_MAX];
    if (absolute(path, sizeof path, c.output) != 0) {
        fprintf(stderr, "mdprofile: log path too long\n");
        return 1;
    }
    snprintf(c.output, sizeof c.output, "%s", path);
    char data[8192];
    int n = mdp_config_format(&c, data, sizeof data);
    if (n < 0) {
        fprintf(stderr, "mdprofile: settings too long\n");
        return 1;
    }
    uint32_t hr = 0;
    char err[512] = "";
    int e = mdp_ipc_attach(pid, CLSID_TEXT, so, data, (uint32_t)n, 10000, &hr, err, sizeof err);
    if (e != 0) {
        fprintf(stderr, "mdprofile: cannot attach to %d: %s\n", pid, err[0] ? err : "failed");
        return 1;
    }
    if (hr != 0) {
        fprintf(stderr, "mdprofile: the runtime of %d refused the profiler: HRESULT 0x%08x\n", pid,
                (unsigned)hr);
        return 1;
    }
    if (cfg->verbose)
        fprintf(stderr, "mdprofile: attached to %d; the log goes to %s%s\n", pid, c.output,
                c.duration_ms || c.max_samples ? " when the session ends" : " when the process ends");
    return 0;
}

int main(int argc, char **argv)
{
    mdp_config cfg;
    mdp_config_default(&cfg);
    static const struct option opts[] = {
        {"mode", required_argument, NULL, 'm'},     {"rate", required_argument, NULL, 'r'},
        {"depth", required_argument, NULL, 'D'},    {"output", required_argument, NULL, 'o'},
        {"debug-names", no_argument, NULL, 'n'},    {"attach", required_argument, NULL, 'a'},
        {"duration", required_argument, NULL, 'd'}, {"elt", required_argument, NULL, 'e'},
        {"samples", required_argument, NULL, 's'},  {"verbose", no_argument, NULL, 'v'},
        {"no-activities", no_argument, NULL, 'A'},  {"threads", required_argument, NULL, 'T'},
        {"exceptions", no_argument, NULL, 'X'},
        {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0}};
    int pid = 0;
    char err[512];
    int c;
    while ((c = getopt_long(argc, argv, "+m:r:o:vh", opts, NULL)) != -1) {
        const char *key = NULL;
        switch (c) {
        case 'm': key = "mode"; break;
        case 'r': key = "rate"; break;
        case 'D': key = "depth"; break;
        case 'o': key = "output"; break;
        case 'e': key = "elt"; break;
        case 'T': key = "threads"; break;
        case 's': key = "samples"; break;
        case 'n': cfg.debug_names = 1; break;
        case 'A': cfg.activities = 0; break;
        case 'X': cfg.activities = 2; break;
        case 'v': cfg.verbose = cfg.verbose < 2 ? cfg.verbose + 1 : 2; break;
        case 'a': {
            char *end;
            long p = strtol(optarg, &end, 10);
            if (*end || p <= 0 || p > INT_MAX) {
                fprintf(stderr, "mdprofile: bad process ID '%s'\n", optarg);
                return 2;
            }
            pid = (int)p;
            break;
        }
        case 'd': {
            char *end;
            double s = strtod(optarg, &end);
            if (*end || s < 0 || s > 86400) {
                fprintf(stderr, "mdprofile: bad duration '%s' (seconds)\n", optarg);
                return 2;
            }
            cfg.duration_ms = (unsigned)(s * 1000 + 0.5);
            break;
        }
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
        if (key) {
            char kv[4200];
            snprintf(kv, sizeof kv, "%s=%s", key, optarg);
            if (mdp_config_parse(&cfg, kv, strlen(kv), err, sizeof err) != 0) {
                fprintf(stderr, "mdprofile: %s\n", err);
                return 2;
            }
        }
    }
    if (pid) {
        if (cfg.mode != MDP_MODE_SAMPLE) {
            fprintf(stderr, "mdprofile: --attach profiles in sample mode only: the runtime allows "
                            "enter hooks and allocation callbacks only to a profiler loaded at startup\n");
            return 2;
        }
        if (optind < argc) {
            fprintf(stderr, "mdprofile: --attach takes no command\n");
            return 2;
        }
        if (!cfg.output[0]) {
            fprintf(stderr, "mdprofile: --attach needs -o LOG\n");
            return 2;
        }
        return attach(&cfg, pid);
    }
    if (cfg.duration_ms || cfg.max_samples) {
        fprintf(stderr, "mdprofile: --%s applies to --attach\n", cfg.duration_ms ? "duration" : "samples");
        return 2;
    }
    if (optind >= argc) {
        usage(stderr);
        return 2;
    }
    return run(&cfg, argv + optind);
}
