/* mdinspect: command-line options and modes. Every mode is only a source of
 * command lines for the same command table, parser, printer and state:
 *
 *   mdinspect FILE...           a summary (`info`) of each FILE
 *   mdinspect -c CMDS FILE...   CMDS on each FILE in turn (-f SCRIPT: the
 *                               script's commands); FILE may be left out
 *                               when the commands open their own modules
 *   mdinspect [-i] [FILE...]    a session: the FILEs are opened as one
 *                               set, then commands are read from the
 *                               terminal (the shell, repl.c) or from stdin
 *                               when it is not a terminal
 *
 * A FILE may be a directory (its .NET images; -r: with subdirectories) or
 * a glob, as for `open` (opening.c); an assembly brings the modules its
 * File table names.
 *
 * Exit status: 0 all went well, 1 a file could not be opened or a command
 * failed, 2 a usage error (bad option, bad -c or -f text); nothing is run
 * after a usage error. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <talloc.h>

#include "batch/batch.h"
#include "cmd.h"
#include "opening.h"
#include "repl.h"
#include "state.h"

enum { EXIT_USAGE = 2 };

enum {
    OPT_NO_COLOR = 256,
    OPT_HISTORY,
    OPT_NO_HISTORY,
    OPT_NO_PAGER,
    OPT_MAN_COMMANDS,
    OPT_STYLE,
    OPT_WIDE,
    OPT_SN_KEYS
};

static void usage_hint(void)
{
    fprintf(stderr, "Try '" MDI_PROGNAME " --help' for more information.\n");
}

static void help(void)
{
    mdi_printer *p;
    printf("Usage: " MDI_PROGNAME " [OPTION]... FILE...\n"
           "   or: " MDI_PROGNAME " [OPTION]... -c COMMANDS | -f SCRIPT [FILE]...\n"
           "   or: " MDI_PROGNAME " [OPTION]... [-i] [FILE]...\n"
           "   or: " MDI_PROGNAME " batch [OPTION]... < IN > OUT  (logged tokens to names;\n"
           "       see '" MDI_PROGNAME " batch --help')\n"
           "Inspect .NET (ECMA-335) metadata: PE files, Webcil, raw metadata and\n"
           "portable PDBs. With FILEs only, prints a summary (`info`) of each FILE.\n"
           "With -c or -f, runs the commands on each FILE in turn. Otherwise starts a\n"
           "session on the FILEs as one set: an interactive shell when standard input\n"
           "is a terminal, else the commands read from standard input.\n"
           "\n"
           "Options:\n"
           "  -c, --command=CMDS  run CMDS (commands separated by ';'); may be repeated\n"
           "  -f, --file=SCRIPT   run the commands of SCRIPT, one line at a time\n"
           "  -i, --interactive   open the FILEs as one set and start a session\n"
           "  -r, --recursive     a FILE that is a directory: its subdirectories too\n"
           "  -v, --verbose       say why files in a directory were skipped\n"
           "  -j, --json          write JSON Lines (one object per line) instead of text\n"
           "      --wide          never cut table lines to the terminal's width\n"
           "      --sn-keys=FILE  more keys for strong-name checks, by token (TOKEN KEY\n"
           "                      lines in hex, or Mono's machine.config <map> lines)\n"
           "      --style=STYLE   name types and members in STYLE: full (default),\n"
           "                      reflection, il or friendly (as `set style`)\n"
           "      --no-color      no colours (also when NO_COLOR is set)\n"
           "      --no-pager      do not page long output in the shell\n"
           "      --history=FILE  keep the shell's history in FILE\n"
           "                      (default $MDINSPECT_HISTORY, else ~/.mdinspect_history)\n"
           "      --no-history    keep no history\n"
           "  -h, --help          show this help and exit\n"
           "  -V, --version       show the version and exit\n"
           "\n");
    fflush(stdout);
    p = mdi_printer_new(NULL, stdout, MDI_FMT_TEXT);
    if (p) {
        mdi_printer_set_headings(p, false);
        mdi_help_list(p, mdi_cmd_table(), mdi_cmd_count());
        talloc_free(p);
    }
    printf("\n"
           "Exit status: 0 if all went well, 1 if a FILE could not be opened or a\n"
           "command failed, 2 for a usage error. See mdinspect(1) for the output.\n");
}

/* A list of checked calls, from -c texts and -f scripts in the order given. */
struct program {
    mdi_call *calls;
    size_t n;
};

static int program_add(void *mem, struct program *prog, const char *text, char **err)
{
    mdi_call *more;
    size_t n;
    mdi_call *all;
    if (mdi_parse(mem, &more, &n, err, text))
        return -1;
    all = talloc_realloc(mem, prog->calls, mdi_call, prog->n + n + 1);
    if (!all) {
        *err = talloc_strdup(mem, "out of memory");
        return -1;
    }
    memcpy(all + prog->n, more, n * sizeof *more);
    talloc_steal(all, more);
    prog->calls = all;
    prog->n += n;
    return 0;
}

/* All lines of a script, checked before any runs. */
static int program_add_script(void *mem, struct program *prog, const char *path, char **err)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
    char *line = NULL;
    size_t cap = 0;
    unsigned long lineno = 0;
    long got;
    int r = 0;
    if (!f) {
        *err = talloc_asprintf(mem, "%s: %s", path, strerror(errno));
        return -1;
    }
    while ((got = mdi_read_line(f, &line, &cap)) != -1) {
        lineno++;
        if (got == -2) {
            *err = talloc_asprintf(mem, "%s:%lu: line longer than %d bytes", path, lineno,
                                   MDI_LINE_MAX);
            r = -1;
            break;
        }
        if (mdi_line_is_comment(line))
            continue;
        if (program_add(mem, prog, line, err)) {
            *err = talloc_asprintf(mem, "%s:%lu: %s", path, lineno, *err);
            r = -1;
            break;
        }
    }
    if (!r && ferror(f)) {
        *err = talloc_asprintf(mem, "%s: %s", path, strerror(errno));
        r = -1;
    }
    free(line);
    if (f != stdin)
        fclose(f);
    return r;
}

static int run_calls(mdi_state *st, const mdi_call *calls, size_t ncalls, bool *quit)
{
    int status = EXIT_SUCCESS;
    for (size_t i = 0; i < ncalls && !*quit; i++) {
        int r = mdi_run(st, &calls[i]);
        if (r == MDI_FAIL)
            status = EXIT_FAILURE;
        else if (r == MDI_QUIT)
            *quit = true;
        if (st->stop)
            *quit = true; /* interrupted: nothing more runs */
    }
    return status;
}

/* Run every call on every file, in order; a FILE that is a directory or a
 * glob stands for its files. A file that fails to open is reported and
 * skipped; in a directory, one that is not .NET is skipped and counted.
 * Each file's modules (with those its File table names) are closed once
 * its commands ran, so a long list of files needs no more than one at a
 * time. */
static int run_files(mdi_state *st, char **files, int nfiles, const struct program *prog,
                     unsigned flags)
{
    int status = EXIT_SUCCESS;
    bool quit = false;
    for (int f = 0; f < nfiles && !quit && !mdi_sigint; f++) {
        void *tmp = talloc_new(st);
        mdi_found found;
        size_t ran = 0, skipped = 0;
        mdi_expand(st, tmp, files[f], flags, &found);
        if (found.status != MDI_OK)
            status = EXIT_FAILURE;
        for (size_t i = 0; i < found.n && !quit && !mdi_sigint; i++) {
            mdi_opening o = {0};
            o.flags = flags | MDI_OPENING_COMPANIONS;
            mdi_open_file(st, &o, found.paths[i], found.in_dir[i]);
            skipped += o.skipped;
            if (o.failed)
                status = EXIT_FAILURE;
            for (size_t k = 0; k < o.nnotes; k++)
                mdi_report(st, "%s", o.notes[k]);
            if (o.nopened) {
                ran++;
                mdi_state_use(st, o.opened[0]);
                if (run_calls(st, prog->calls, prog->n, &quit) != EXIT_SUCCESS)
                    status = EXIT_FAILURE;
            }
            talloc_free(o.opened);
            talloc_free(o.companion);
            talloc_free(o.notes);
            mdi_state_close_all(st);
        }
        for (size_t k = 0; k < found.nnotes; k++)
            mdi_report(st, "%s", found.notes[k]);
        if (found.dirs && !ran) {
            mdi_report(st, "%s: no .NET image in %zu file%s", files[f], found.n + found.unnamed,
                       found.n + found.unnamed == 1 ? "" : "s");
            status = EXIT_FAILURE;
        } else if (found.dirs && (skipped || found.unnamed)) {
            mdi_report(st, "%s: %zu .NET image%s; skipped %zu file%s that %s not .NET", files[f],
                       ran, ran == 1 ? "" : "s", skipped + found.unnamed,
                       skipped + found.unnamed == 1 ? "" : "s",
                       skipped + found.unnamed == 1 ? "is" : "are");
        }
        talloc_free(tmp);
    }
    return status;
}

/* Without a FILE, a command that needs a module must come after an `open`. */
static bool needs_file(const struct program *prog)
{
    for (size_t i = 0; i < prog->n; i++) {
        if (strcmp(prog->calls[i].cmd->name, "open") == 0)
            return false;
        if (prog->calls[i].cmd->flags & MDI_CMD_IMAGE)
            return true;
    }
    return false;
}

static bool color_wanted(bool no_color)
{
    const char *nc = getenv("NO_COLOR"), *term = getenv("TERM");
    if (no_color || (nc && nc[0]) || (term && strcmp(term, "dumb") == 0))
        return false;
    return isatty(STDOUT_FILENO);
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"command", required_argument, NULL, 'c'},
        {"file", required_argument, NULL, 'f'},
        {"interactive", no_argument, NULL, 'i'},
        {"recursive", no_argument, NULL, 'r'},
        {"verbose", no_argument, NULL, 'v'},
        {"json", no_argument, NULL, 'j'},
        {"style", required_argument, NULL, OPT_STYLE},
        {"wide", no_argument, NULL, OPT_WIDE},
        {"sn-keys", required_argument, NULL, OPT_SN_KEYS},
        {"no-color", no_argument, NULL, OPT_NO_COLOR},
        {"no-colour", no_argument, NULL, OPT_NO_COLOR},
        {"no-pager", no_argument, NULL, OPT_NO_PAGER},
        {"history", required_argument, NULL, OPT_HISTORY},
        {"no-history", no_argument, NULL, OPT_NO_HISTORY},
        {"man-commands", no_argument, NULL, OPT_MAN_COMMANDS},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    void *mem = talloc_new(NULL);
    enum mdi_format fmt = MDI_FMT_TEXT;
    struct program prog = {NULL, 0};
    struct mdi_shell_opts shell = {NULL, true};
    bool have_cmds = false, interactive = false, no_color = false, pager = true;
    const char *style = NULL;
    bool wide = false;
    const char *sn_keys[16];
    size_t nsn_keys = 0;
    unsigned open_flags = 0;
    char *err = NULL;
    mdi_state *st;
    int opt, status = EXIT_SUCCESS;

    if (argc > 1 && strcmp(argv[1], "batch") == 0) {
        talloc_free(mem); /* batch has its own options and state */
        return mdi_batch_main(argc - 1, argv + 1);
    }
    if (!mem) {
        fprintf(stderr, MDI_PROGNAME ": out of memory\n");
        return EXIT_FAILURE;
    }
    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":c:f:ijrvhV", longopts, NULL)) != -1) {
        switch (opt) {
        case 'c':
        case 'f':
            have_cmds = true;
            if ((opt == 'c' ? program_add(mem, &prog, optarg, &err)
                            : program_add_script(mem, &prog, optarg, &err)) != 0) {
                fprintf(stderr, MDI_PROGNAME ": %s\n", err);
                talloc_free(mem);
                return EXIT_USAGE;
            }
            break;
        case 'i': interactive = true; break;
        case 'j': fmt = MDI_FMT_JSON; break;
        case 'r': open_flags |= MDI_OPENING_RECURSIVE; break;
        case 'v': open_flags |= MDI_OPENING_VERBOSE; break;
        case OPT_NO_COLOR: no_color = true; break;
        case OPT_STYLE: style = optarg; break;
        case OPT_WIDE: wide = true; break;
        case OPT_SN_KEYS:
            if (nsn_keys == sizeof sn_keys / sizeof sn_keys[0]) {
                fprintf(stderr, MDI_PROGNAME ": at most %zu --sn-keys files\n", nsn_keys);
                talloc_free(mem);
                return EXIT_USAGE;
            }
            sn_keys[nsn_keys++] = optarg;
            break;
        case OPT_NO_PAGER: pager = false; break;
        case OPT_HISTORY:
            shell.history = optarg;
            shell.use_history = true;
            break;
        case OPT_NO_HISTORY: shell.use_history = false; break;
        case OPT_MAN_COMMANDS:
            mdi_help_roff(stdout, mdi_cmd_table(), mdi_cmd_count());
            talloc_free(mem);
            return fflush(stdout) == 0 && !ferror(stdout) ? EXIT_SUCCESS : EXIT_FAILURE;
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
    if (have_cmds && interactive) {
        fprintf(stderr, MDI_PROGNAME ": -i cannot be combined with -c or -f\n");
        usage_hint();
        talloc_free(mem);
        return EXIT_USAGE;
    }
    if (have_cmds && optind == argc && needs_file(&prog)) {
        fprintf(stderr, MDI_PROGNAME ": no FILE given\n");
        usage_hint();
        talloc_free(mem);
        return EXIT_USAGE;
    }
    if (!have_cmds && !interactive && optind < argc && program_add(mem, &prog, "info", &err) != 0) {
        fprintf(stderr, MDI_PROGNAME ": %s\n", err);
        talloc_free(mem);
        return EXIT_FAILURE;
    }

    st = mdi_state_new(mem, stdout, stderr, fmt);
    if (!st) {
        fprintf(stderr, MDI_PROGNAME ": out of memory\n");
        talloc_free(mem);
        return EXIT_FAILURE;
    }
    if (style && mdi_set_style(st, style) != 0) {
        fprintf(stderr,
                MDI_PROGNAME ": --style: '%s' is not one of: full, reflection, il, friendly\n",
                style);
        usage_hint();
        talloc_free(mem);
        return EXIT_USAGE;
    }
    for (size_t i = 0; i < nsn_keys; i++)
        if (mdi_snkeys_load(st->mem, &st->sn_keys, sn_keys[i], &err) != 0) {
            fprintf(stderr, MDI_PROGNAME ": --sn-keys: %s\n", err);
            talloc_free(mem);
            return EXIT_FAILURE;
        }
    st->verbose = open_flags & MDI_OPENING_VERBOSE;
    st->wide = wide;
    mdi_state_fit_terminal(st);
    st->color = color_wanted(no_color);
    st->pager = pager;
    mdi_printer_set_color(st->out, st->color && fmt == MDI_FMT_TEXT);

    if (prog.n || !isatty(STDIN_FILENO))
        mdi_catch_sigint();
    if (prog.n && optind < argc) {
        /* Batch: the commands on each FILE in turn. */
        status = run_files(st, argv + optind, argc - optind, &prog, open_flags);
    } else if (have_cmds) {
        bool quit = false;
        mdi_printer_set_headings(st->out, false);
        status = run_calls(st, prog.calls, prog.n, &quit);
    } else {
        /* A session on the FILEs as one set. */
        mdi_opening o = {0};
        mdi_printer_set_headings(st->out, false);
        o.flags = open_flags | MDI_OPENING_COMPANIONS;
        for (int f = optind; f < argc; f++)
            mdi_open_arg(st, &o, argv[f]);
        /* Plain files open silently; what a directory or a File table
         * brought, or skipped, is told as `open` tells it. */
        if (o.dirs || o.ncompanions || o.missing || o.nnotes) {
            if (mdi_opening_report(st, &o) != MDI_OK)
                status = EXIT_FAILURE;
        } else if (o.failed || o.empty_dir) {
            status = EXIT_FAILURE;
        }
        if (o.nopened)
            mdi_state_use(st, o.opened[0]);
        talloc_free(o.opened);
        talloc_free(o.companion);
        talloc_free(o.notes);
        if (isatty(STDIN_FILENO)) {
            if (mdi_shell(st, &shell) != 0)
                status = EXIT_FAILURE;
        } else if (mdi_script(st, stdin, "<stdin>") != EXIT_SUCCESS) {
            status = EXIT_FAILURE;
        }
    }

    mdi_printer_flush(st->out);
    if (mdi_printer_failed(st->out)) {
        fprintf(stderr, MDI_PROGNAME ": error writing the output\n");
        status = EXIT_FAILURE;
    }
    talloc_free(mem);
    return status;
}
