/* mdinspect: command-line options and modes. The batch mode runs a list of
 * commands (-c, default `info`) against each FILE in turn; the command
 * table, parser, printer and state are the same ones the interactive shell
 * will drive, so a mode is only a source of command lines.
 *
 * Exit status: 0 all went well, 1 a file could not be opened or a command
 * failed, 2 a usage error (bad option, bad -c text); nothing is run after a
 * usage error. */
#include "config.h"

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <talloc.h>

#include "cmd.h"
#include "state.h"

enum { EXIT_USAGE = 2 };

static void usage_hint(void)
{
    fprintf(stderr, "Try '" MDI_PROGNAME " --help' for more information.\n");
}

static void help(void)
{
    mdi_printer *p;
    printf("Usage: " MDI_PROGNAME " [OPTION]... FILE...\n"
           "Inspect .NET (ECMA-335) metadata: PE files, Webcil, raw metadata and\n"
           "portable PDBs. Without -c, prints a summary (`info`) of each FILE.\n"
           "\n"
           "Options:\n"
           "  -c, --command=CMDS  run CMDS (commands separated by ';') on each FILE;\n"
           "                      may be given several times\n"
           "  -j, --json          write JSON Lines (one object per line) instead of text\n"
           "  -h, --help          show this help and exit\n"
           "  -V, --version       show the version and exit\n"
           "\n");
    fflush(stdout);
    p = mdi_printer_new(NULL, stdout, MDI_FMT_TEXT);
    if (p) {
        mdi_printer_set_headings(p, false);
        mdi_help_list(p);
        talloc_free(p);
    }
    printf("\n"
           "Exit status: 0 if all went well, 1 if a FILE could not be opened or a\n"
           "command failed, 2 for a usage error. See mdinspect(1) for the output.\n");
}

/* Append a -c argument to the command line built so far. */
static char *add_commands(void *mem, char *cmds, const char *more)
{
    if (!cmds)
        return talloc_strdup(mem, more);
    return talloc_asprintf_append(cmds, ";%s", more);
}

/* Run every call on every file, in order; a file that fails to open is
 * reported and skipped. Each image is closed once its commands ran, so a
 * long list of files needs no more than one mapping at a time. */
static int run_files(mdi_state *st, char **files, int nfiles, const mdi_call *calls, size_t ncalls)
{
    int status = EXIT_SUCCESS;
    for (int f = 0; f < nfiles; f++) {
        if (mdi_state_open(st, files[f]) != 0) {
            status = EXIT_FAILURE;
            continue;
        }
        for (size_t i = 0; i < ncalls; i++) {
            int r = mdi_run(st, &calls[i]);
            if (r == MDI_FAIL)
                status = EXIT_FAILURE;
            else if (r == MDI_QUIT)
                return status;
        }
        mdi_state_close(st, st->cur);
    }
    return status;
}

/* Commands without a FILE (e.g. `help`): run once with no image. */
static int run_no_file(mdi_state *st, const mdi_call *calls, size_t ncalls)
{
    int status = EXIT_SUCCESS;
    for (size_t i = 0; i < ncalls; i++) {
        int r = mdi_run(st, &calls[i]);
        if (r == MDI_FAIL)
            status = EXIT_FAILURE;
        else if (r == MDI_QUIT)
            break;
    }
    return status;
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"command", required_argument, NULL, 'c'},
        {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    void *mem = talloc_new(NULL);
    enum mdi_format fmt = MDI_FMT_TEXT;
    char *cmds = NULL, *err = NULL;
    mdi_call *calls = NULL;
    size_t ncalls = 0;
    mdi_state *st;
    int opt, status;

    if (!mem) {
        fprintf(stderr, MDI_PROGNAME ": out of memory\n");
        return EXIT_FAILURE;
    }
    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":c:jhV", longopts, NULL)) != -1) {
        switch (opt) {
        case 'c':
            cmds = add_commands(mem, cmds, optarg);
            break;
        case 'j':
            fmt = MDI_FMT_JSON;
            break;
        case 'h':
            help();
            talloc_free(mem);
            return fflush(stdout) == 0 && !ferror(stdout) ? EXIT_SUCCESS : EXIT_FAILURE;
        case 'V':
            printf(MDI_PROGNAME " (mdtools) " PACKAGE_VERSION "\n");
            talloc_free(mem);
            return EXIT_SUCCESS;
        case ':':
            fprintf(stderr, MDI_PROGNAME ": option '%s' needs an argument\n", argv[optind - 1]);
            usage_hint();
            talloc_free(mem);
            return EXIT_USAGE;
        default:
            if (optopt)
                fprintf(stderr, MDI_PROGNAME ": unknown option '-%c'\n", optopt);
            else
                fprintf(stderr, MDI_PROGNAME ": unknown option '%s'\n", argv[optind - 1]);
            usage_hint();
            talloc_free(mem);
            return EXIT_USAGE;
        }
    }

    /* Check every command before running any: a typo in the last one must
     * not leave half the output behind. */
    if (mdi_parse(mem, &calls, &ncalls, &err, cmds ? cmds : "info") != 0) {
        fprintf(stderr, MDI_PROGNAME ": %s\n", err);
        talloc_free(mem);
        return EXIT_USAGE;
    }
    if (optind == argc) {
        bool needs_image = !cmds; /* no -c: the interactive shell will start here */
        for (size_t i = 0; i < ncalls; i++)
            if (calls[i].cmd->flags & MDI_CMD_IMAGE)
                needs_image = true;
        if (needs_image) {
            fprintf(stderr, MDI_PROGNAME ": no FILE given\n");
            usage_hint();
            talloc_free(mem);
            return EXIT_USAGE;
        }
    }

    st = mdi_state_new(mem, stdout, stderr, fmt);
    if (!st) {
        fprintf(stderr, MDI_PROGNAME ": out of memory\n");
        talloc_free(mem);
        return EXIT_FAILURE;
    }
    if (optind < argc)
        status = run_files(st, argv + optind, argc - optind, calls, ncalls);
    else
        status = run_no_file(st, calls, ncalls);

    mdi_printer_flush(st->out);
    if (mdi_printer_failed(st->out)) {
        fprintf(stderr, MDI_PROGNAME ": error writing the output\n");
        status = EXIT_FAILURE;
    }
    talloc_free(mem);
    return status;
}
