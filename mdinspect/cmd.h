/* mdinspect: the command table and the command-line language.
 *
 * One table (cmds.c) lists every command with its argument kinds, one-line
 * and long help, and handler. Everything else is derived from it: parsing
 * and unique-prefix matching, usage lines, `help`, --help, and (later)
 * completion in the interactive shell, which completes each argument by its
 * kind. There is no second list of commands or help text.
 *
 * Language: commands are separated by ';'. Words are separated by blanks;
 * '...' quotes literally, "..." quotes with \" and \\ escapes, and a
 * backslash outside quotes takes the next character literally. A command
 * name may be abbreviated to any unique prefix. */
#ifndef MDINSPECT_CMD_H
#define MDINSPECT_CMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "state.h"

/* What a handler returns. */
enum mdi_result {
    MDI_OK = 0,   /* done */
    MDI_FAIL = 1, /* failed or partly failed; the reason went to st->err */
    MDI_QUIT = 2  /* leave the session (interactive shell) */
};

/* Argument kinds: how an argument is checked now and completed later. */
enum mdi_argkind {
    MDI_ARG_TABLE,  /* table name (any case, unique prefix) or id (0x02) */
    MDI_ARG_ROW,    /* row number, decimal or 0x hex, 1..0xFFFFFF */
    MDI_ARG_COMMAND /* command name (unique prefix) */
};

enum {
    MDI_ARGF_OPTIONAL = 1u << 0, /* may be left out (and so may all after it) */
    MDI_ARGF_REPEAT = 1u << 1    /* last argument only: may be given many times */
};

typedef struct mdi_argspec {
    const char *name; /* as usage shows it: "TABLE"; NULL ends the list */
    uint8_t kind;     /* enum mdi_argkind */
    uint8_t flags;
} mdi_argspec;

/* A checked argument. */
typedef struct mdi_arg {
    const char *text; /* as typed (unquoted) */
    uint32_t value;   /* table id, row number, or index in mdi_cmds */
} mdi_arg;

enum {
    MDI_CMD_IMAGE = 1u << 0 /* needs a current image */
};

#define MDI_MAX_ARGS 4

typedef int (*mdi_handler)(mdi_state *st, size_t argc, const mdi_arg *argv);

typedef struct mdi_cmd {
    const char *name;
    mdi_argspec args[MDI_MAX_ARGS + 1];
    unsigned flags;
    const char *summary; /* one line, no final period */
    const char *help;    /* paragraphs; lines end with '\n' */
    mdi_handler run;
} mdi_cmd;

extern const mdi_cmd mdi_cmds[];
extern const size_t mdi_ncmds;

/* One parsed command, ready to run. */
typedef struct mdi_call {
    const mdi_cmd *cmd;
    size_t argc;
    mdi_arg *argv;
} mdi_call;

/* Parse a line of ';'-separated commands into *calls (a talloc array under
 * mem_ctx; empty commands are dropped). Names are matched, arguments counted
 * and checked by kind; nothing runs. On error returns -1 and sets *err to a
 * message under mem_ctx. */
int mdi_parse(void *mem_ctx, mdi_call **calls, size_t *ncalls, char **err, const char *line);

/* Run one call against the state (checks that an image is open if the
 * command needs one). Returns an enum mdi_result. */
int mdi_run(mdi_state *st, const mdi_call *call);

/* Unique-prefix matching, shared by commands, table names and completion:
 * an exact match wins (case-insensitively when nocase), else the only name
 * `word` is a prefix of. NULL names are skipped. */
enum { MDI_MATCH_NONE = -1, MDI_MATCH_AMBIGUOUS = -2 };
long mdi_match(const char *word, const char *const *names, size_t n, bool nocase);
/* The names `word` is a prefix of, ", "-separated, under mem_ctx. */
char *mdi_match_list(void *mem_ctx, const char *word, const char *const *names, size_t n,
                     bool nocase);

/* "dump TABLE [FROM [TO]]", under mem_ctx. */
char *mdi_usage(void *mem_ctx, const mdi_cmd *cmd);
/* The command named exactly `name`, or NULL. */
const mdi_cmd *mdi_cmd_get(const char *name);

/* Handlers, one file each (cmd_<name>.c). */
int mdi_cmd_info(mdi_state *st, size_t argc, const mdi_arg *argv);
int mdi_cmd_tables(mdi_state *st, size_t argc, const mdi_arg *argv);
int mdi_cmd_dump(mdi_state *st, size_t argc, const mdi_arg *argv);
int mdi_cmd_streams(mdi_state *st, size_t argc, const mdi_arg *argv);
int mdi_cmd_strings(mdi_state *st, size_t argc, const mdi_arg *argv);
int mdi_cmd_help(mdi_state *st, size_t argc, const mdi_arg *argv);

/* Parts shared between commands: `info` shows the same streams list as the
 * `streams` command and the non-empty tables as `tables`. `key`/`label` name
 * the list (nested in a record) or are NULL/"" at top level. */
void mdi_print_streams(mdi_state *st, const mdt_image *img, const char *key, const char *label);
void mdi_print_tables(mdi_state *st, const mdt_image *img, const char *key, const char *label,
                      bool row_sizes);
/* Help for `help [COMMAND]` and --help, from the table: the list of
 * commands, or one command in full. */
void mdi_help_list(mdi_printer *p);
void mdi_help_one(mdi_printer *p, const mdi_cmd *cmd);

#endif
