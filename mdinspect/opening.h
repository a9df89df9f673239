/* mdinspect: turning what a user names (files, globs, directories) into
 * open modules, for `open`, a session's FILEs (-i) and the per-file batch
 * modes; and opening the modules an assembly's File table names, from the
 * assembly's folder, as the runtime does on first use (ECMA-335 II.22.19
 * File, II.6.5 multi-module assemblies).
 *
 * A directory stands for its files with a .NET name (.dll, .exe, .winmd,
 * .netmodule, .webcil, .wasm), in natural name order, and with `recursive`
 * for those of its subdirectories too (depth capped, each directory read
 * once: symbolic links cannot make a loop). Other files in a directory are
 * counted as skipped, and so are files with a .NET name that turn out not
 * to be .NET images; a file named explicitly that is not one is an
 * error. */
#ifndef MDINSPECT_OPENING_H
#define MDINSPECT_OPENING_H

#include <stdbool.h>
#include <stddef.h>

#include "state.h"

enum {
    MDI_OPENING_RECURSIVE = 1u << 0, /* descend into subdirectories */
    MDI_OPENING_VERBOSE = 1u << 1,   /* say why each skipped file was skipped */
    MDI_OPENING_COMPANIONS = 1u << 2 /* open the modules File tables name */
};

/* The files one argument stands for. */
typedef struct mdi_found {
    char **paths; /* talloc array of n paths, in order */
    bool *in_dir; /* paths[i] was found in a directory (not named) */
    size_t n;
    size_t unnamed; /* directory entries without a .NET name, not opened */
    size_t dirs;    /* directories read */
    char **notes;   /* with MDI_OPENING_VERBOSE: "PATH: why skipped" */
    size_t nnotes;
    int status; /* MDI_OK, or MDI_FAIL when something was reported */
} mdi_found;

/* Expand `arg` (a path, a glob with ~, or a directory) into `out`, under
 * mem. Problems (no match, unreadable directory) are reported to st->err
 * and make out->status MDI_FAIL. */
void mdi_expand(mdi_state *st, void *mem, const char *arg, unsigned flags, mdi_found *out);

/* What an opening did, for its summary. */
typedef struct mdi_opening {
    unsigned flags;
    mdi_module **opened; /* in opening order, companions after their assembly */
    bool *companion;     /* opened[i] was named by a File table */
    size_t nopened;
    size_t skipped; /* not .NET: by name in a directory, or by content */
    size_t failed;
    size_t ncompanions;
    size_t missing;     /* File rows naming a file that is not there */
    size_t dirs, files; /* directories read, files looked at */
    char **notes;       /* why files were skipped (verbose), missing companions */
    size_t nnotes;
    bool empty_dir; /* a directory held no .NET image at all */
} mdi_opening;

/* Open everything `arg` stands for into the session, with companions
 * (MDI_OPENING_COMPANIONS). */
void mdi_open_arg(mdi_state *st, mdi_opening *o, const char *arg);

/* Open one file (quiet about a file that is not .NET when in_dir), and its
 * companions when asked; the modules are added to o->opened. */
void mdi_open_file(mdi_state *st, mdi_opening *o, const char *path, bool in_dir);

/* Print what `open` prints: one item per module opened (JSON), the
 * summary line, the notes; and report failures. MDI_OK, or MDI_FAIL when
 * a file could not be opened or a directory held no .NET image. */
int mdi_opening_report(mdi_state *st, mdi_opening *o);

#endif
