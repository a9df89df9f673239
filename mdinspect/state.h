/* mdinspect: the one state struct every command handler receives: the open
 * modules (the module set), which one is current, the settings (`set`),
 * where output and messages go. The batch modes and the interactive shell
 * share it, so a handler never knows how it was invoked. */
#ifndef MDINSPECT_STATE_H
#define MDINSPECT_STATE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <mdtools/image.h>
#include <mdtools/names.h>

#include "print.h"
#include "snkeys.h"

#define MDI_PROGNAME "mdinspect"

/* One open module. */
typedef struct mdi_module {
    unsigned id;    /* #N: 1, 2, ... in opening order, never reused */
    char *path;     /* as given or found (shown in output and messages) */
    char *name;     /* Module row name, else the path's last component */
    mdt_image *img; /* owned */
    dev_t dev;      /* to notice a file opened twice */
    ino_t ino;
    void *index;                  /* the module's name index (index.c), built on first use */
    struct mdt_name_cache *names; /* TypeDef/TypeRef names in names_style (names.c) */
    int names_style;
    unsigned names_flags;
} mdi_module;

typedef struct mdi_state {
    void *mem;         /* talloc context owning everything here */
    mdi_module **mods; /* talloc array of nmods, in opening order */
    size_t nmods;
    mdi_module *cur; /* the current module, or NULL */
    unsigned next_id;
    uint64_t generation;    /* changes whenever a module is opened or closed */
    void *caches;           /* see mdi_cache_get */
    mdi_module *last_named; /* the module mdi_name last found an image in */
    /* The single-file app a member was last opened from (state.c,
     * open_member), kept open for the next ones while its file is the
     * same (device, inode, size, modification time). */
    struct mdt_bundle *bundle;
    char *bundle_path;
    struct stat bundle_st;

    /* Settings. */
    enum mdi_format format;
    mdt_name_opts names; /* `set style`: style and flags for every name printed */
    bool color;          /* colour on the terminal */
    bool pager;          /* page long output (interactive, on a terminal) */
    bool interactive;    /* reading commands from a person at a terminal */
    bool verbose;        /* --verbose: say why files were skipped */
    bool wide;           /* --wide, `set wide on`: tables never cut to the terminal */
    mdi_snkeys sn_keys;  /* --sn-keys: more keys for strong-name checks */

    const char *cmd; /* name of the command running, for messages */
    bool stop;       /* the last command was interrupted: skip the rest of its line */
    /* The command table the running command came from, in name order
     * (set by mdi_run, cmds.c): what `help` lists. The dispatcher owns it;
     * the state only carries it down, so no command calls up into it. */
    const struct mdi_cmd *const *commands;
    size_t ncommands;
    mdi_printer *out; /* command output */
    FILE *err;        /* messages (stderr, or the pager while one runs) */
} mdi_state;

/* A state writing output to `out` and messages to `err` (both borrowed). */
mdi_state *mdi_state_new(void *mem_ctx, FILE *out, FILE *err, enum mdi_format fmt);

/* Open one file and append it to the modules. The first module opened
 * becomes current. Returns the module, or NULL after reporting why not (the
 * library's located message) to st->err; with `*already` set instead when
 * the file is open already (that module is returned). With
 * MDI_OPEN_QUIET_FOREIGN a file that is not a .NET image is not reported
 * (mdt_error_last()->code is MDT_ENOTDOTNET then). */
enum { MDI_OPEN_QUIET_FOREIGN = 1u << 0 };
mdi_module *mdi_state_open(mdi_state *st, const char *path, unsigned flags, bool *already);
/* Tables on a terminal are cut to its width (unless st->wide): ask the
 * terminal on standard output for its width now (before a command, as a
 * window may have been resized). */
void mdi_state_fit_terminal(mdi_state *st);
/* Make `m` (or none) the current module. */
void mdi_state_use(mdi_state *st, mdi_module *m);
/* Close a module and forget it; if it was current, none is. */
void mdi_state_close(mdi_state *st, mdi_module *m);
void mdi_state_close_all(mdi_state *st);
/* The module `spec` names: "#N"; an exact path; else, the first kind that
 * names any module: a module name (Module row), a file name (the path's
 * last component), an assembly's simple name, an MVID (32 hex digits, with
 * or without dashes and braces), a prefix of a module name (names compared
 * case-insensitively). NULL after reporting why (no such module, or the
 * candidates of an ambiguous name). */
mdi_module *mdi_module_find(mdi_state *st, const char *spec);

/* Output from now on is about module m (JSON "file", text headings);
 * commands that walk several modules call it per module, then with
 * mdi_current(st) when done. */
void mdi_about(mdi_state *st, const mdi_module *m);

/* The current module, its image and path, or NULL. */
mdi_module *mdi_current(const mdi_state *st);
const mdt_image *mdi_image(const mdi_state *st);
const char *mdi_image_path(const mdi_state *st);

/* Per-state caches for commands (e.g. a module set built from the open
 * modules): a talloc pointer stored under `key`, freed (and forgotten)
 * whenever a module is opened or closed. get returns NULL when absent; put
 * takes ownership (talloc_steal) and returns `ptr`. */
void *mdi_cache_get(mdi_state *st, const char *key);
void *mdi_cache_put(mdi_state *st, const char *key, void *ptr);

/* Ctrl-C: the interactive shell's SIGINT handler sets mdi_sigint. Long loops
 * call mdi_interrupted() and stop when it is true; it is also true once the
 * output can no longer be written (the pager was quit). mdi_run reports the
 * interruption and clears the flag. */
extern volatile sig_atomic_t mdi_sigint;
bool mdi_interrupted(const mdi_state *st);

/* Messages: "mdinspect: ..." on st->err, after flushing the output so the
 * two streams stay in order on a shared terminal or file. */
void mdi_report(mdi_state *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A failure of the running command: "mdinspect: CMD: ..."; returns MDI_FAIL. */
int mdi_fail(mdi_state *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A command's end when n parts of its record did not read: none, 0
 * (MDI_OK); else "mdinspect: FILE: N NOUN(s)OF could not be read"
 * (mdi_report) and 1 (MDI_FAIL). `of` (may be "") follows the noun: " of the summary". */
int mdi_report_unread(mdi_state *st, int n, const char *noun, const char *of);
/* The library's last error (mdt_error_message), prefixed with "what: " if given. */
void mdi_report_lib(mdi_state *st, const char *what);
/* The library's last error without the file name it starts with, for
 * output that is already about that file. Returns buf. */
char *mdi_errmsg_here(char *buf, size_t len);
/* The last library error in the few words a cell has room for. */
const char *mdi_cell_error(char *buf, size_t len);

#endif
