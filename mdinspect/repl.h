/* mdinspect: reading command lines, from a person at a terminal (the shell:
 * readline with completion and history, Ctrl-C, a pager) or from a stream
 * (a script on stdin). */
#ifndef MDINSPECT_REPL_H
#define MDINSPECT_REPL_H

#include <stdbool.h>
#include <stdio.h>

#include "state.h"

struct mdi_shell_opts {
    const char *history; /* history file; NULL: $MDINSPECT_HISTORY, else ~/.mdinspect_history */
    bool use_history;    /* false: --no-history */
};

/* The interactive shell on the terminal, until `quit` or Ctrl-D. Returns 0
 * (a person saw every error already), -1 when the terminal failed. */
/* Outside the shell (-c, -f, a script on stdin): a Ctrl-C stops the
 * running command cleanly (it reports what it did, marked partial where
 * it can) and no further command runs; a second Ctrl-C kills. */
void mdi_catch_sigint(void);
int mdi_shell(mdi_state *st, const struct mdi_shell_opts *opts);

/* Run the command lines of `in` one at a time (a bad line is reported with
 * `name` and its number, and skipped) until its end or `quit`. Returns the
 * exit status: EXIT_SUCCESS, or EXIT_FAILURE if a line was bad or a command
 * failed. */
int mdi_script(mdi_state *st, FILE *in, const char *name);

/* A blank line, or one whose first non-blank character is '#'. */
bool mdi_line_is_comment(const char *line);

/* The longest script line read: a script from anywhere (standard input,
 * -f, a pipe) may hold a "line" with no end (-f /dev/zero). */
#define MDI_LINE_MAX (1024 * 1024)

/* The next line of f into *line (malloc'ed, *cap its size; free() it),
 * with its newline. Returns its length; -1 at the end or on an error; -2
 * for a line longer than MDI_LINE_MAX, which is read to its end and
 * dropped (*line is then ""). */
long mdi_read_line(FILE *f, char **line, size_t *cap);

/* Readline's completion entry (complete.c): completes the word at the
 * cursor by the kind of argument it is. */
char **mdi_complete(const char *text, int start, int end);
/* The state completion works on (set by mdi_shell). */
void mdi_complete_init(mdi_state *st);

#endif
