/* `open`: add files to the module set: plain paths, globs (with ~), and
 * directories (their .dll, .exe, .winmd, .netmodule, .webcil and .wasm
 * files in natural name order; subdirectories with -r); an assembly's File
 * table brings the modules it names (opening.c). Any kind of image the
 * library opens (PE, Webcil, raw metadata) may be given by name. */
#include "config.h"

#include <talloc.h>

#include "cmd.h"
#include "opening.h"

enum { A_RECURSIVE, A_VERBOSE, A_PATH };

static int run(mdi_state *st, size_t argc, const mdi_arg *argv)
{
    mdi_opening o = {0};
    int status;
    o.flags = MDI_OPENING_COMPANIONS;
    if (mdi_arg_of(argc, argv, A_RECURSIVE))
        o.flags |= MDI_OPENING_RECURSIVE;
    if (mdi_arg_of(argc, argv, A_VERBOSE) || st->verbose)
        o.flags |= MDI_OPENING_VERBOSE;
    for (size_t i = 0; i < argc && !mdi_interrupted(st); i++)
        if (argv[i].spec == A_PATH)
            mdi_open_arg(st, &o, argv[i].text);
    status = mdi_opening_report(st, &o);
    talloc_free(o.opened);
    talloc_free(o.companion);
    talloc_free(o.notes);
    return status;
}

const mdi_cmd mdi_cmd_open = {
    .name = "open",
    .args = {{.name = "-r",
              .alias = "--recursive",
              .kind = MDI_ARG_FLAG,
              .about = "also open the images in subdirectories"},
             {.name = "-v",
              .alias = "--verbose",
              .kind = MDI_ARG_FLAG,
              .about = "say why each skipped file was skipped"},
             {.name = "PATH", .kind = MDI_ARG_PATH, .flags = MDI_ARGF_REPEAT}},
    .summary = "add files, globs or directories to the open modules",
    .help = "Opens each PATH and adds it to the set of open modules; the first one\n"
            "opened becomes the current module (see `use`). A PATH may be a file\n"
            "(PE, Webcil, WebAssembly with Webcil, or raw metadata such as a\n"
            "portable PDB), a glob (`*.dll`, `~/lib/*.exe`), or a directory: its\n"
            ".dll, .exe, .winmd, .netmodule, .webcil and .wasm files in natural\n"
            "name order (Item2 before Item10), and with -r those of its\n"
            "subdirectories too. Other files in a directory, and files with such a\n"
            "name that are no .NET image, are skipped and counted; -v (or the\n"
            "--verbose option of mdinspect) says why for each. A directory with no\n"
            ".NET image at all is an error.\n"
            "\n"
            "Opening an assembly also opens the modules its File table names\n"
            "(the .netmodule files of a multi-module assembly), from the\n"
            "assembly's folder, as the runtime would on first use: references into\n"
            "them then resolve. A file open already is noted and left alone. The\n"
            "command fails when a file could not be opened; the others are opened\n"
            "all the same.\n",
    .run = run,
};
