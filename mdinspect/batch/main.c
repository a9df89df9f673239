/* mdinspect batch: the command line and the loop. Reads standard input
 * line by line, resolves each line (record.c, resolve.c) and writes it in
 * the chosen format; unresolved and malformed lines are answered in their
 * own output line (text, JSON) or on standard error (formats without a
 * line per input line), and the stream goes on. Exit status: 0 when every
 * frame resolved, 1 when some did not (or a line was malformed, or the
 * input or output failed), 2 for a usage error. */
#include "config.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <talloc.h>
#include <unistd.h>

#include "batch/batch.h"

enum { OPT_RECURSIVE = 256, OPT_INDEX, OPT_FOLDED, OPT_SPEEDSCOPE, OPT_TOP, OPT_NO_PROGRESS,
       OPT_VERBOSE };

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: " MDB_PROGNAME " batch [--assemblies DIR|FILE]... [--recursive] [--index FILE]\n"
            "                       [--json|--folded|--speedscope|--top N] < IN > OUT\n"
            "Turn logged metadata tokens into names and source lines. Each input line is\n"
            "one of: a line of an mdprofile log (#mdprofile header, stack/call/alloc\n"
            "records, #stats), `MVID TOKEN [DESCRIPTOR...]`, or `PATH TOKEN`.\n"
            "\n"
            "  -a, --assemblies=DIR|FILE  where to find modules by MVID (repeatable)\n"
            "  -r, --recursive            look in the folders' subfolders too\n"
            "      --index=FILE           keep the MVID index in FILE between runs\n"
            "  -j, --json                 JSON Lines, one object per input line\n"
            "      --folded               folded stacks for flame graphs\n"
            "      --speedscope           one speedscope JSON file\n"
            "      --top=N                the N hottest methods, exclusive and inclusive\n"
            "      --no-progress          no progress on standard error\n"
            "      --verbose              say at the end how the MVID index was built\n"
            "  -h, --help                 show this help and exit\n"
            "\n"
            "Text output has one line per input line. Exit status: 0 if everything\n"
            "resolved, 1 if some line did not, 2 for a usage error. See mdinspect(1).\n");
}

int mdi_batch_main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"assemblies", required_argument, NULL, 'a'},
        {"recursive", no_argument, NULL, 'r'},
        {"index", required_argument, NULL, OPT_INDEX},
        {"json", no_argument, NULL, 'j'},
        {"folded", no_argument, NULL, OPT_FOLDED},
        {"speedscope", no_argument, NULL, OPT_SPEEDSCOPE},
        {"top", required_argument, NULL, OPT_TOP},
        {"no-progress", no_argument, NULL, OPT_NO_PROGRESS},
        {"verbose", no_argument, NULL, OPT_VERBOSE},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    void *mem = talloc_new(NULL);
    char **paths = NULL;
    size_t npaths = 0;
    bool recursive = false, progress_on = true, status_bad = false, verbose = false;
    const char *index = NULL;
    int fmt = MDB_TEXT, nfmt = 0, opt;
    unsigned long top = 0;
    mdb_assemblies *a;
    mdb_resolver *res;
    mdb_aggregate *agg = NULL;
    mdb_progress *prog;
    mdb_input in;
    mdb_output out;
    mdb_record *rec;
    uint64_t records = 0, unresolved = 0;
    const char *line;
    size_t len;
    bool cut;
    int r;

    if (!mem)
        return EXIT_FAILURE;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":a:rjh", longopts, NULL)) != -1) {
        switch (opt) {
        case 'a':
            paths = talloc_realloc(mem, paths, char *, npaths + 1);
            if (!paths)
                goto nomem;
            paths[npaths++] = optarg;
            break;
        case 'r':
            recursive = true;
            break;
        case OPT_INDEX:
            index = optarg;
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
        case OPT_NO_PROGRESS:
            progress_on = false;
            break;
        case OPT_VERBOSE:
            verbose = true;
            break;
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
        fprintf(stderr, MDB_PROGNAME " batch: unexpected argument '%s' (input comes from "
                        "standard input)\n", argv[optind]);
        goto usage;
    }
    if (nfmt > 1) {
        fprintf(stderr, MDB_PROGNAME " batch: choose one of --json, --folded, --speedscope, "
                        "--top\n");
        goto usage;
    }
    if (index && npaths == 0) {
        fprintf(stderr, MDB_PROGNAME " batch: --index needs --assemblies\n");
        goto usage;
    }

    a = mdb_assemblies_new(mem, paths, npaths, recursive, index);
    res = a ? mdb_resolver_new(mem, a) : NULL;
    rec = talloc(mem, mdb_record);
    if (!res || !rec || mdb_input_init(&in, mem, STDIN_FILENO) ||
        mdb_output_init(&out, mem, STDOUT_FILENO) ||
        ((fmt == MDB_SPEEDSCOPE || fmt == MDB_TOP) &&
         !(agg = mdb_aggregate_new(mem, fmt, (unsigned)top))))
        goto nomem;
    prog = mdb_progress_new(mem, progress_on, STDIN_FILENO);

    while ((r = mdb_input_line(&in, &line, &len, &cut)) > 0) {
        const char *w;
        mdb_resolver_trim(res);
        mdb_record_parse(res, rec, line, len, in.lineno, cut);
        records++;
        if (rec->unresolved)
            unresolved++;
        switch (fmt) {
        case MDB_TEXT:
            mdb_emit_text(&out, rec);
            break;
        case MDB_JSON:
            mdb_emit_json(&out, res, rec);
            break;
        default:
            if (rec->kind == MDB_MALFORMED)
                fprintf(stderr, MDB_PROGNAME " batch: malformed line %llu: %s\n",
                        (unsigned long long)rec->lineno, rec->why);
            if (fmt == MDB_FOLDED)
                mdb_emit_folded(&out, rec);
            else if (!mdb_aggregate_add(agg, rec))
                goto nomem;
        }
        if ((w = mdb_assemblies_warning(a)))
            fprintf(stderr, MDB_PROGNAME " batch: %s\n", w);
        mdb_progress_tick(prog, records, in.consumed);
        if (out.failed)
            break;
    }
    if (agg)
        mdb_aggregate_write(agg, &out);
    mdb_output_flush(&out);
    mdb_progress_done(prog, records);
    if (r < 0) {
        fprintf(stderr, MDB_PROGNAME " batch: error reading the input\n");
        status_bad = true;
    }
    if (out.failed) {
        fprintf(stderr, MDB_PROGNAME " batch: error writing the output\n");
        status_bad = true;
    }
    if (verbose) {
        size_t indexed, scanned;
        mdb_assemblies_stats(a, &indexed, &scanned);
        fprintf(stderr, MDB_PROGNAME " batch: MVIDs of %zu files from the index, %zu files read\n",
                indexed, scanned);
    }
    if (unresolved)
        fprintf(stderr, MDB_PROGNAME " batch: %llu of %llu lines not fully resolved\n",
                (unsigned long long)unresolved, (unsigned long long)records);
    talloc_free(mem);
    return status_bad || unresolved ? EXIT_FAILURE : EXIT_SUCCESS;

usage:
    fprintf(stderr, "Try '" MDB_PROGNAME " batch --help' for more information.\n");
    talloc_free(mem);
    return 2;
nomem:
    fprintf(stderr, MDB_PROGNAME " batch: out of memory\n");
    talloc_free(mem);
    return EXIT_FAILURE;
}
