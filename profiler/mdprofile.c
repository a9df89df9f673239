/* mdprofile: run a .NET program under the mdtools profiler, or attach the
 * profiler to a running one, and leave a log of doc/profile-log.md.
 *
 *   mdprofile [--mode M] [--rate HZ] [--slice MS] [--depth N] [-o LOG] [--debug-names] -- COMMAND
 * [ARGS...] mdprofile --attach PID [--mode M] [--rate HZ] [--duration S] [--samples N] -o LOG
 * [--debug-names]
 *
 * This file reads the options; profiler/launcher/ does the rest: at
 * startup (run.c) the runtime loads the profiler itself, from the
 * environment the launcher sets, in every .NET process COMMAND starts;
 * on attach (attach.c) the settings travel as the request's client data
 * (profiler/attach/ipc.h) and the launcher waits for the session's log.
 * See doc/mdprofile.1. */
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
#include "launcher/launch.h"

static void usage(FILE *f)
{
    fputs("usage: mdprofile [OPTION]... -- COMMAND [ARGS...]   profile COMMAND from its start\n"
          "       mdprofile --attach PID [OPTION]... -o LOG    profile a running process\n"
          "  --mode M[,M...]            what to profile: sample, calls, alloc, wall,\n"
          "                             exceptions, contention, heap, or several at once,\n"
          "                             e.g. sample,exceptions (sample; attach: sample or wall)\n"
          "  --rate HZ                  samples per second of thread CPU time (1000); wall\n"
          "                             mode: of wall time\n"
          "  --clock CLOCK              sample mode's CPU clock: adaptive (the default):\n"
          "                             CPU-time timers (at most ~HZ signals per CPU\n"
          "                             second), a thread they serve badly moved to perf\n"
          "                             where allowed; timer: the timers only; perf:\n"
          "                             perf_events (the rate asked, an interrupt a\n"
          "                             signal); auto: perf where allowed, else timers\n"
          "  --wall-budget N            wall mode: signals a second at most, over every\n"
          "                             thread (2000)\n"
          "  --slice MS                 sample mode: a record's time slice, in ms (1000)\n"
          "  --alloc-sample BYTES       alloc mode: a stack per BYTES allocated on a thread,\n"
          "                             on average (524288; 0: counts per type only)\n"
          "  --alloc-path auto|callback alloc stacks from the runtime's sampled allocations\n"
          "                             where it has them (.NET 10; no exact counts), or\n"
          "                             from every allocation's callback (auto)\n"
          "  --depth N                  frames per sample, 1-255 (255)\n"
          "  -o, --output LOG           the log (mdprofile.%p.log; %p: the pid); other .NET\n"
          "                             processes write NAME.PID.EXT beside it\n"
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
          "  -v, --verbose              the profiler's diagnostics in the log (twice: more)\n"
          "  -h, --help                 this text\n"
          "See mdprofile(1).\n",
          f);
}

int main(int argc, char **argv)
{
    mdp_config cfg;
    mdp_config_default(&cfg);
    static const struct option opts[] = {{"mode", required_argument, NULL, 'm'},
                                         {"rate", required_argument, NULL, 'r'},
                                         {"depth", required_argument, NULL, 'D'},
                                         {"output", required_argument, NULL, 'o'},
                                         {"debug-names", no_argument, NULL, 'n'},
                                         {"attach", required_argument, NULL, 'a'},
                                         {"duration", required_argument, NULL, 'd'},
                                         {"elt", required_argument, NULL, 'e'},
                                         {"samples", required_argument, NULL, 's'},
                                         {"verbose", no_argument, NULL, 'v'},
                                         {"no-activities", no_argument, NULL, 'A'},
                                         {"threads", required_argument, NULL, 'T'},
                                         {"exceptions", no_argument, NULL, 'X'},
                                         {"slice", required_argument, NULL, 'S'},
                                         {"wall-budget", required_argument, NULL, 'W'},
                                         {"alloc-sample", required_argument, NULL, 'B'},
                                         {"alloc-path", required_argument, NULL, 'P'},
                                         {"clock", required_argument, NULL, 'C'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    int pid = 0;
    char err[512];
    int c;
    while ((c = getopt_long(argc, argv, "+m:r:o:vh", opts, NULL)) != -1) {
        const char *key = NULL;
        switch (c) {
        case 'm': key = "mode"; break;
        case 'r': key = "rate"; break;
        case 'D': key = "depth"; break;
        case 'S': key = "slice"; break;
        case 'W': key = "wall_budget"; break;
        case 'B': key = "alloc_sample"; break;
        case 'P': key = "alloc_path"; break;
        case 'C': key = "clock"; break;
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
        if (cfg.modes & ~(unsigned)MDP_MODES_ATTACH) {
            char names[96] = "?";
            mdp_mode_format(cfg.modes & ~(unsigned)MDP_MODES_ATTACH, names, sizeof names);
            fprintf(stderr,
                    "mdprofile: --attach cannot profile %s: the runtime grants those callbacks "
                    "only to a profiler loaded at startup (sample or wall mode only)\n",
                    names);
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
        return mdl_attach(&cfg, pid);
    }
    if (cfg.duration_ms || cfg.max_samples) {
        fprintf(stderr, "mdprofile: --%s applies to --attach\n",
                cfg.duration_ms ? "duration" : "samples");
        return 2;
    }
    if (optind >= argc) {
        usage(stderr);
        return 2;
    }
    return mdl_run(&cfg, argv + optind);
}
