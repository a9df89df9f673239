/* mdinspect batch: the command line. The run (run.c) reads standard input,
 * resolves each line (record.c, resolve.c) and writes it in the chosen
 * format; unresolved and malformed lines are answered in their own output
 * line (text, JSON) or on standard error (formats without a line per input
 * line), and the stream goes on. Exit status (batch.h, MDB_EXIT_...): 0
 * when every frame resolved; else the sum of 1 when some did not (or a
 * line was malformed, or the input or output failed) and 4 when a log has
 * no #stats line (cut short); 2 for a usage error. */
#include "config.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <talloc.h>
#include <unistd.h>

#include "batch/batch.h"
#include "batch/native.h"

enum {
    OPT_RECURSIVE = 256,
    OPT_INDEX,
    OPT_FOLDED,
    OPT_SPEEDSCOPE,
    OPT_TOP,
    OPT_NO_PROGRESS,
    OPT_VERBOSE,
    OPT_THREADS,
    OPT_DEBUG_DIR,
    OPT_PID,
    OPT_NO_LOG_FOLDERS,
    OPT_CACHE_MB,
    OPT_SIGNATURES,
    OPT_IL,
    OPT_PPROF,
    OPT_THREAD,
    OPT_FROM,
    OPT_TO,
    OPT_TYPE
};

#if defined(__SANITIZE_ADDRESS__)
#define FREE_AT_EXIT 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FREE_AT_EXIT 1
#endif
#endif

/* The run's memory when the command is done and the process about to
 * exit. Freeing it block by block (a million lines: the caches of every
 * thread, some 10^5 talloc blocks) was 12.6M instructions, 3% of the
 * thread that runs alone while the others wait (bench/README.md, issue
 * 28), to give back pages the exit gives back anyway. It is kept in a
 * static, so leak checkers see it reachable, and freed under ASan (where
 * the frees check the tree's teardown) or when MDINSPECT_FREE_AT_EXIT is
 * set (for a checker that wants nothing left). */
static void *volatile kept_at_exit;

static void exit_free(void *mem)
{
#ifndef FREE_AT_EXIT
    const char *env = getenv("MDINSPECT_FREE_AT_EXIT");
    if (!env || !*env) {
        kept_at_exit = mem;
        return;
    }
#endif
    talloc_free(mem);
}

#define MAX_THREADS 64
#define DEFAULT_THREADS 8 /* at most, when the CPUs are many */

static void usage(FILE *f)
{
    fprintf(f, "Usage: " MDB_PROGNAME
               " batch [--assemblies DIR|FILE]... [--recursive] [--index FILE]\n"
               "                       [--json|--folded|--speedscope|--pprof|--top N] < IN > OUT\n"
               "Turn logged metadata tokens into names and source lines. Each input line is\n"
               "one of: a line of an mdprofile log (#mdprofile header, stack/call/alloc\n"
               "records, #stats), `MVID TOKEN [DESCRIPTOR...]`, or `PATH TOKEN`.\n"
               "\n"
               "  -a, --assemblies=DIR|FILE  where to find modules by MVID (repeatable)\n"
               "  -r, --recursive            look in the folders' subfolders too\n"
               "      --index=FILE           keep the MVID index in FILE between runs\n"
               "      --debug-dir=DIR        look for ELF debug files by build-id in DIR\n"
               "                             (repeatable; default /usr/lib/debug)\n"
               "  -j, --json                 JSON Lines, one object per input line\n"
               "      --folded               folded stacks for flame graphs\n"
               "      --speedscope           one speedscope JSON file\n"
               "      --pprof                one gzipped pprof profile (profile.proto)\n"
               "      --top=N                the N hottest methods, exclusive and inclusive\n"
               "      --thread=NAME|TID      --top, --folded, --speedscope: only the records of\n"
               "                             that thread (its name, kernel name or ID)\n"
               "      --from=S, --to=S       ... only the time slices that start in [S, S)\n"
               "                             seconds since the process started\n"
               "      --type=NAME            ... only the alloc and astack records of that\n"
               "                             type (its name as batch prints it)\n"
               "      --signatures           methods with their parameter types (overloads)\n"
               "      --il                   a frame with an IL offset shows the instruction\n"
               "                             there (text and --json)\n"
               "      --pid=PID              only the lines of process PID (logs concatenated)\n"
               "      --no-log-folders       do not search the folders log headers name\n"
               "  -t, --threads=N            resolve with N threads (default: one per CPU\n"
               "                             available, at most 8; --speedscope, --pprof\n"
               "                             and --top use one)\n"
               "      --cache-mb=N           caches hold at most N MiB in all (default: 1/8 of\n"
               "                             the memory, 64 MiB to 4 GiB)\n"
               "      --no-progress          no progress on standard error\n"
               "      --verbose              say at the end how the MVID index was built\n"
               "  -h, --help                 show this help and exit\n"
               "\n"
               "Text output has one line per input line. Exit status: 0 if everything\n"
               "resolved; else 1 if some line did not, plus 4 if a log has no #stats line\n"
               "(cut short); 2 for a usage error. See mdinspect(1).\n");
}

int mdi_batch_main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"assemblies", required_argument, NULL, 'a'},
        {"recursive", no_argument, NULL, 'r'},
        {"index", required_argument, NULL, OPT_INDEX},
        {"debug-dir", required_argument, NULL, OPT_DEBUG_DIR},
        {"json", no_argument, NULL, 'j'},
        {"folded", no_argument, NULL, OPT_FOLDED},
        {"speedscope", no_argument, NULL, OPT_SPEEDSCOPE},
        {"pprof", no_argument, NULL, OPT_PPROF},
        {"top", required_argument, NULL, OPT_TOP},
        {"no-progress", no_argument, NULL, OPT_NO_PROGRESS},
        {"threads", required_argument, NULL, 't'},
        {"verbose", no_argument, NULL, OPT_VERBOSE},
        {"pid", required_argument, NULL, OPT_PID},
        {"no-log-folders", no_argument, NULL, OPT_NO_LOG_FOLDERS},
        {"cache-mb", required_argument, NULL, OPT_CACHE_MB},
        {"signatures", no_argument, NULL, OPT_SIGNATURES},
        {"il", no_argument, NULL, OPT_IL},
        {"thread", required_argument, NULL, OPT_THREAD},
        {"from", required_argument, NULL, OPT_FROM},
        {"type", required_argument, NULL, OPT_TYPE},
        {"to", required_argument, NULL, OPT_TO},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    void *mem = talloc_new(NULL);
    char **paths = NULL, **dirs = NULL;
    size_t npaths = 0, ndirs = 0;
    bool recursive = false, progress_on = true, status_bad = false, verbose = false;
    bool pid_only = false, log_folders = true;
    unsigned long long pid = 0, cache_mb = 0;
    mdb_budget budget;
    uint64_t cut = 0;
    mdb_logctx *lc;
    const char *index = NULL;
    int fmt = MDB_TEXT, nfmt = 0, opt;
    unsigned long top = 0, threads = 0;
    mdb_assemblies *a;
    mdb_aggregate *agg = NULL;
    mdb_run_opts ro = {0};
    mdb_run_result rr;
    mdb_output out;

    if (!mem)
        return EXIT_FAILURE;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":a:rjht:", longopts, NULL)) != -1) {
        switch (opt) {
        case 'a':
            paths = talloc_realloc(mem, paths, char *, npaths + 1);
            if (!paths)
                goto nomem;
            paths[npaths++] = optarg;
            break;
        case 'r': recursive = true; break;
        case OPT_INDEX: index = optarg; break;
        case OPT_DEBUG_DIR:
            dirs = talloc_realloc(mem, dirs, char *, ndirs + 1);
            if (!dirs)
                goto nomem;
            dirs[ndirs++] = optarg;
            break;
        case 'j':
            fmt = MDB_JSON;
            nfmt++;
            break;
        case OPT_FOLDED:
            fmt = MDB_FOLDED;
            nfmt++;
            break;
        case OPT_SPEEDSCOPE:
            fmt = MDB_SPEEDSCOPE;
            nfmt++;
            break;
        case OPT_PPROF:
            fmt = MDB_PPROF;
            nfmt++;
            break;
        case OPT_TOP: {
            char *end;
            top = strtoul(optarg, &end, 10);
            if (*end || top == 0 || top > 1000000) {
                fprintf(stderr, MDB_PROGNAME " batch: --top wants a number from 1 to 1000000\n");
                talloc_free(mem);
                return 2;
            }
            fmt = MDB_TOP;
            nfmt++;
            break;
        }
        case 't': {
            char *end;
            threads = strtoul(optarg, &end, 10);
            if (*end || threads == 0 || threads > MAX_THREADS) {
                fprintf(stderr, MDB_PROGNAME " batch: --threads wants a number from 1 to %d\n",
                        MAX_THREADS);
                talloc_free(mem);
                return 2;
            }
            break;
        }
        case OPT_PID: {
            char *end;
            pid = strtoull(optarg, &end, 10);
            if (*end || !*optarg || optarg[0] == '-') {
                fprintf(stderr, MDB_PROGNAME " batch: --pid wants a process id\n");
                talloc_free(mem);
                return 2;
            }
            pid_only = true;
            break;
        }
        case OPT_CACHE_MB: {
            char *end;
            cache_mb = strtoull(optarg, &end, 10);
            if (*end || !*optarg || optarg[0] == '-' || cache_mb == 0 ||
                cache_mb > (SIZE_MAX >> 21)) {
                fprintf(stderr, MDB_PROGNAME " batch: --cache-mb wants a number of MiB, at "
                                             "least 1\n");
                talloc_free(mem);
                return 2;
            }
            break;
        }
        case OPT_SIGNATURES: ro.signatures = true; break;
        case OPT_IL: ro.il = true; break;
        case OPT_THREAD: {
            char *end;
            unsigned long long t;
            if (!*optarg) {
                fprintf(stderr, MDB_PROGNAME " batch: --thread wants a thread's name or ID\n");
                goto usage;
            }
            ro.filter.on = true;
            ro.filter.thread = optarg;
            t = strtoull(optarg, &end, 10);
            ro.filter.has_tid = !*end && optarg[0] >= '0' && optarg[0] <= '9' && t > 0;
            ro.filter.tid = t;
            break;
        }
        case OPT_TYPE:
            if (!*optarg) {
                fprintf(stderr, MDB_PROGNAME " batch: --type wants a type's name\n");
                goto usage;
            }
            ro.filter.on = true;
            ro.filter.type = optarg;
            break;
        case OPT_FROM:
        case OPT_TO: {
            char *end;
            double v = strtod(optarg, &end);
            if (*end || !*optarg || !(v >= 0 && v <= 1e12)) {
                fprintf(stderr,
                        MDB_PROGNAME " batch: --%s wants seconds since the start (a "
                                     "number >= 0)\n",
                        opt == OPT_FROM ? "from" : "to");
                goto usage;
            }
            ro.filter.on = true;
            if (opt == OPT_FROM) {
                ro.filter.has_from = true;
                ro.filter.from = v;
            } else {
                ro.filter.has_to = true;
                ro.filter.to = v;
            }
            break;
        }
        case OPT_NO_LOG_FOLDERS: log_folders = false; break;
        case OPT_NO_PROGRESS: progress_on = false; break;
        case OPT_VERBOSE: verbose = true; break;
        case 'h':
            usage(stdout);
            talloc_free(mem);
            return fflush(stdout) == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
        case ':':
            fprintf(stderr, MDB_PROGNAME " batch: option '%s' needs an argument\n",
                    argv[optind - 1]);
            goto usage;
        default:
            fprintf(stderr, MDB_PROGNAME " batch: unknown option '%s'\n", argv[optind - 1]);
            goto usage;
        }
    }
    if (optind < argc) {
        fprintf(stderr,
                MDB_PROGNAME " batch: unexpected argument '%s' (input comes from "
                             "standard input)\n",
                argv[optind]);
        goto usage;
    }
    if (nfmt > 1) {
        fprintf(stderr, MDB_PROGNAME " batch: choose one of --json, --folded, --speedscope, "
                                     "--pprof, --top\n");
        goto usage;
    }
    if (fmt == MDB_PPROF && isatty(STDOUT_FILENO)) { /* as gzip does */
        fprintf(stderr, MDB_PROGNAME " batch: --pprof writes a gzipped file: redirect the "
                                     "output (> app.pb.gz)\n");
        goto usage;
    }
    if (ro.il && fmt != MDB_TEXT && fmt != MDB_JSON) {
        fprintf(stderr, MDB_PROGNAME " batch: --il shows instructions in the text and --json "
                                     "outputs only\n");
        goto usage;
    }
    if (ro.filter.on && fmt != MDB_TOP && fmt != MDB_FOLDED && fmt != MDB_SPEEDSCOPE &&
        fmt != MDB_PPROF) {
        fprintf(stderr,
                MDB_PROGNAME " batch: --thread, --from, --to and --type choose the records of "
                             "--top, --folded, --speedscope and --pprof\n");
        goto usage;
    }
    if (ro.filter.has_from && ro.filter.has_to && ro.filter.to <= ro.filter.from) {
        fprintf(stderr, MDB_PROGNAME " batch: --to must be after --from\n");
        goto usage;
    }
    if (index && npaths == 0) {
        fprintf(stderr, MDB_PROGNAME " batch: --index needs --assemblies\n");
        goto usage;
    }

    a = mdb_assemblies_new(mem, paths, npaths, recursive, index);
    if (!a || !(lc = mdb_logctx_new(mem, a, log_folders)) ||
        mdb_output_init(&out, mem, STDOUT_FILENO) ||
        ((fmt == MDB_SPEEDSCOPE || fmt == MDB_TOP || fmt == MDB_PPROF) &&
         !(agg = mdb_aggregate_new(mem, fmt, (unsigned)top,
                                   ro.filter.has_from ? ro.filter.from : 0))))
        goto nomem;
    if (!threads) {
        unsigned cpus = mdb_cpus();
        threads = cpus < DEFAULT_THREADS ? cpus : DEFAULT_THREADS;
    }
    ro.in_fd = STDIN_FILENO;
    ro.out_fd = STDOUT_FILENO;
    ro.err_fd = STDERR_FILENO;
    ro.lc = lc;
    ro.pid_only = pid_only;
    ro.pid = pid;
    ro.format = fmt;
    mdb_budget_init(&budget, cache_mb ? (size_t)cache_mb << 20 : mdb_default_cache_bytes(),
                    agg ? 1 : (unsigned)threads);
    ro.budget = &budget;
    ro.threads = agg ? 1 : (unsigned)threads; /* records reach the sums in order */
    ro.agg = agg;
    ro.prog = mdb_progress_new(mem, progress_on, STDIN_FILENO);
    if (!(ro.natives = mdb_natives_new(mem, dirs, ndirs)))
        goto nomem;
    mdb_run(mem, a, &ro, &rr);
    if (rr.nomem)
        goto nomem;
    if (agg && !rr.write_error) {
        mdb_aggregate_write(agg, &out);
        mdb_output_flush(&out);
        rr.write_error = out.failed;
    }
    mdb_progress_done(ro.prog, rr.records);
    mdb_assemblies_finish(a);
    {
        const char *w = mdb_assemblies_warning(a);
        if (w)
            fprintf(stderr, MDB_PROGNAME " batch: %s\n", w);
    }
    cut = mdb_logctx_report(lc, stderr, pid_only, pid);
    if (rr.read_error && rr.shrank) {
        fprintf(stderr,
                MDB_PROGNAME " batch: the input file shrank while it was read: byte %llu, "
                             "which it had, was gone; the lines from there on are not "
                             "written\n",
                (unsigned long long)rr.read_at);
        status_bad = true;
    } else if (rr.read_error && rr.read_errno) {
        fprintf(stderr, MDB_PROGNAME " batch: error reading the input at byte %llu: %s\n",
                (unsigned long long)rr.read_at, strerror(rr.read_errno));
        status_bad = true;
    } else if (rr.read_error) {
        fprintf(stderr, MDB_PROGNAME " batch: error reading the input\n");
        status_bad = true;
    }
    if (rr.write_error) {
        fprintf(stderr, MDB_PROGNAME " batch: error writing the output\n");
        status_bad = true;
    }
    if (verbose) {
        size_t indexed, scanned;
        mdb_assemblies_stats(a, &indexed, &scanned);
        fprintf(stderr, MDB_PROGNAME " batch: MVIDs of %zu files from the index, %zu files read\n",
                indexed, scanned);
        fprintf(stderr,
                MDB_PROGNAME " batch: caches of %zu MiB: modules kept %zu MiB of frames, "
                             "threads started their caches over %llu times\n",
                budget.total >> 20, (size_t)atomic_load(&budget.kept) >> 20,
                (unsigned long long)rr.resets);
    }
    if (rr.unresolved)
        fprintf(stderr, MDB_PROGNAME " batch: %llu of %llu lines not fully resolved\n",
                (unsigned long long)rr.unresolved, (unsigned long long)rr.records);
    exit_free(mem);
    return (status_bad || rr.unresolved ? MDB_EXIT_UNRESOLVED : 0) | (cut ? MDB_EXIT_CUT : 0);

usage:
    fprintf(stderr, "Try '" MDB_PROGNAME " batch --help' for more information.\n");
    talloc_free(mem);
    return 2;
nomem:
    fprintf(stderr, MDB_PROGNAME " batch: out of memory\n");
    talloc_free(mem);
    return EXIT_FAILURE;
}
