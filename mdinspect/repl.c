/* mdinspect's read-eval-print loops.
 *
 * The shell uses readline's callback interface: the main loop waits for
 * the terminal with poll(), so a Ctrl-C at the prompt (SIGINT interrupts
 * the poll) just discards the line being typed, and a Ctrl-C while a
 * command runs sets mdi_sigint, which the command's loops check; the shell
 * stays up either way. Readline itself installs no signal handlers. While a
 * command runs the terminal is in its normal mode (readline's line handler
 * is removed), and the output of a line goes through the pager when
 * standard output is a terminal. History is kept in a file: each line is
 * appended as it is entered, so it survives a crash.
 *
 * Scripts (stdin that is not a terminal, `-f -`) are read line by line with
 * getline: a bad line is reported with its number and skipped. */
#define _DEFAULT_SOURCE /* SA_RESETHAND, SA_RESTART, ign, old */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <readline/history.h>
#include <readline/readline.h>
#include <talloc.h>

#include "cmd.h"
#include "repl.h"

#define HISTORY_MAX 1000

bool mdi_line_is_comment(const char *line)
{
    line += strspn(line, " \t\r\n");
    return !*line || *line == '#';
}

long mdi_read_line(FILE *f, char **line, size_t *cap)
{
    size_t len = 0;
    bool too_long = false;
    for (;;) {
        if (*cap - len < 2 || !*line) {
            size_t want = *cap ? *cap * 2 : 256;
            char *nl;
            if (want > MDI_LINE_MAX + 2)
                want = MDI_LINE_MAX + 2;
            if (want <= *cap || !(nl = realloc(*line, want)))
                return -1; /* out of memory */
            *line = nl;
            *cap = want;
        }
        if (!fgets(*line + len, (int)(*cap - len), f)) {
            if (len == 0 && !too_long)
                return -1;
            break;
        }
        len += strlen(*line + len);
        if (len && (*line)[len - 1] == '\n')
            break;
        if (len >= MDI_LINE_MAX) {
            /* Drop what was read; read on to the line's end. */
            too_long = true;
            len = 0;
        }
    }
    (*line)[len] = '\0';
    return too_long ? -2 : (long)len;
}

/* Parse and run one line. Returns MDI_OK, MDI_FAIL or MDI_QUIT; a line that
 * does not parse is reported (prefixed with `where` if given). */
static int run_line(mdi_state *st, const char *line, const char *where)
{
    void *tmp = talloc_new(st);
    mdi_call *calls;
    size_t n;
    char *err;
    int status = MDI_OK;
    if (!tmp)
        return MDI_FAIL;
    if (mdi_parse(tmp, &calls, &n, &err, line) != 0) {
        if (where)
            mdi_report(st, "%s: %s", where, err);
        else
            mdi_report(st, "%s", err);
        talloc_free(tmp);
        return MDI_FAIL;
    }
    for (size_t i = 0; i < n; i++) {
        int r = mdi_run(st, &calls[i]);
        if (r == MDI_QUIT) {
            status = MDI_QUIT;
            break;
        }
        if (r == MDI_FAIL)
            status = MDI_FAIL;
        if (st->stop)
            break; /* interrupted: not the rest of the line either */
    }
    talloc_free(tmp);
    return status;
}

int mdi_script(mdi_state *st, FILE *in, const char *name)
{
    char *line = NULL, where[256];
    size_t cap = 0;
    unsigned long lineno = 0;
    int status = EXIT_SUCCESS;
    long got;
    while ((got = mdi_read_line(in, &line, &cap)) != -1) {
        int r;
        lineno++;
        if (got == -2) {
            mdi_report(st, "%s:%lu: line longer than %d bytes: not run", name, lineno,
                       MDI_LINE_MAX);
            status = EXIT_FAILURE;
            continue;
        }
        if (mdi_line_is_comment(line))
            continue;
        snprintf(where, sizeof where, "%s:%lu", name, lineno);
        r = run_line(st, line, where);
        if (r == MDI_FAIL)
            status = EXIT_FAILURE;
        else if (r == MDI_QUIT)
            break;
        if (st->stop)
            break; /* Ctrl-C: a script stops, a shell would not */
    }
    free(line);
    return status;
}

/* ---- the shell ---- */

static volatile sig_atomic_t winch, cont, quit_sig;
static char *got_line;
static bool got_eof, have_line;

static void on_sigint(int sig)
{
    (void)sig;
    mdi_sigint = 1;
}

void mdi_catch_sigint(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = on_sigint;
    /* The first Ctrl-C stops the command cleanly; a second one, should
     * the program not stop, ends it the usual way. */
    sa.sa_flags = SA_RESETHAND | SA_RESTART;
    sigaction(SIGINT, &sa, NULL);
}

static void on_sigwinch(int sig)
{
    (void)sig;
    winch = 1;
}

static void on_sigcont(int sig)
{
    (void)sig;
    cont = 1;
}

/* SIGTERM, SIGHUP: stop the command, then leave cleanly (the terminal
 * restored, the history written). */
static void on_sigterm(int sig)
{
    (void)sig;
    quit_sig = 1;
    mdi_sigint = 1;
}

static void on_line(char *line)
{
    /* Take the line and stop readline from showing a prompt: the main loop
     * runs the line first, then installs the handler with a fresh prompt. */
    got_line = line;
    got_eof = line == NULL;
    have_line = true;
    rl_callback_handler_remove();
}

static char *history_file(void *mem, const struct mdi_shell_opts *o)
{
    const char *env = getenv("MDINSPECT_HISTORY"), *home = getenv("HOME");
    if (!o->use_history)
        return NULL;
    if (o->history)
        return talloc_strdup(mem, o->history);
    if (env && env[0])
        return talloc_strdup(mem, env);
    if (!home || !home[0]) {
        struct passwd *pw = getpwuid(getuid());
        home = pw ? pw->pw_dir : NULL;
    }
    return home ? talloc_asprintf(mem, "%s/.mdinspect_history", home) : NULL;
}

/* The history file, when it is a regular file or not there yet: readline
 * would block reading a FIFO there, and append to a device. */
static char *history_path(mdi_state *st, const struct mdi_shell_opts *o)
{
    char *path = history_file(st, o);
    struct stat sb;
    if (path && stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        mdi_report(st, "history file %s is not a regular file: history is not kept", path);
        talloc_free(path);
        return NULL;
    }
    return path;
}

static char *prompt(mdi_state *st)
{
    const char *name = st->cur ? st->cur->name : MDI_PROGNAME;
    char *safe = mdi_escape(st, name, strlen(name), false);
    char *s;
    if (!safe)
        return NULL;
    /* \001 and \002 tell readline the colour sequences take no room. */
    s = st->color ? talloc_asprintf(st, "\001\033[1m\002%s\001\033[0m\002> ", safe)
                  : talloc_asprintf(st, "%s> ", safe);
    talloc_free(safe);
    return s;
}

/* The pager for one line's output, or NULL: on a terminal only. The pager
 * starts with SIGINT ignored, so a Ctrl-C meant for the command does not
 * kill a simple pager mid-output (less sets its own handler anyway). */
static FILE *pager_open(mdi_state *st)
{
    const char *cmd = getenv("PAGER");
    struct sigaction ign, old;
    FILE *pg;
    if (!st->pager || !isatty(STDOUT_FILENO))
        return NULL;
    if (!cmd)
        cmd = "less -FRX";
    if (!cmd[0] || strcmp(cmd, "cat") == 0)
        return NULL;
    fflush(stdout);
    memset(&ign, 0, sizeof ign);
    sigemptyset(&ign.sa_mask);
    ign.sa_handler = SIG_IGN;
    sigaction(SIGINT, &ign, &old);
    pg = popen(cmd, "w");
    sigaction(SIGINT, &old, NULL);
    return pg;
}

static void run_interactive(mdi_state *st, const char *line, bool *quit)
{
    FILE *pg;
    mdi_state_fit_terminal(st); /* before the pager takes standard output */
    pg = pager_open(st);
    FILE *out = mdi_printer_output(st->out), *err = st->err;
    if (pg) {
        mdi_printer_set_output(st->out, pg);
        st->err = pg;
    }
    mdi_printer_reset(st->out);
    if (run_line(st, line, NULL) == MDI_QUIT)
        *quit = true;
    mdi_printer_flush(st->out);
    if (pg) {
        pclose(pg);
        mdi_printer_set_output(st->out, out);
        st->err = err;
    }
    mdi_printer_reset(st->out);
    mdi_sigint = 0; /* a Ctrl-C that came after the command ended */
}

static void remember(const char *line, const char *path)
{
    HIST_ENTRY *last = history_length ? history_get(history_base + history_length - 1) : NULL;
    if (mdi_line_is_comment(line) || (last && strcmp(last->line, line) == 0))
        return;
    add_history(line);
    if (path && append_history(1, path) != 0) {
        /* The file is missing: create it (private), then append. */
        int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0600);
        if (fd >= 0) {
            close(fd);
            append_history(1, path);
        }
    }
}

int mdi_shell(mdi_state *st, const struct mdi_shell_opts *opts)
{
    struct sigaction sa, old_int, old_winch, old_pipe, old_cont, old_term, old_hup;
    char *hist = history_path(st, opts);
    bool quit = false;
    int status = 0;

    st->interactive = true;
    mdi_complete_init(st);
    /* Output redirected to a file: prompts and echo stay on the terminal. */
    if (!isatty(STDOUT_FILENO) && isatty(STDERR_FILENO))
        rl_outstream = stderr;
    rl_readline_name = "mdinspect";
    rl_catch_signals = 0;
    rl_catch_sigwinch = 0;
    rl_attempted_completion_function = mdi_complete;
    rl_completer_word_break_characters = " \t\n;";
    rl_completer_quote_characters = "'\"";
    using_history();
    stifle_history(HISTORY_MAX);
    if (hist)
        read_history(hist);

    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = on_sigint; /* no SA_RESTART: poll() returns EINTR */
    sigaction(SIGINT, &sa, &old_int);
    sa.sa_handler = on_sigwinch;
    sigaction(SIGWINCH, &sa, &old_winch);
    sa.sa_handler = on_sigcont;
    sigaction(SIGCONT, &sa, &old_cont);
    sa.sa_handler = on_sigterm;
    sigaction(SIGTERM, &sa, &old_term);
    sigaction(SIGHUP, &sa, &old_hup);
    sa.sa_handler = SIG_IGN; /* a pager that was quit: the write fails, the command stops */
    sigaction(SIGPIPE, &sa, &old_pipe);

    while (!quit && !quit_sig) {
        char *p = prompt(st);
        have_line = false;
        mdi_sigint = 0;
        rl_callback_handler_install(p ? p : "> ", on_line);
        talloc_free(p);
        while (!have_line) {
            struct pollfd pfd = {STDIN_FILENO, POLLIN, 0};
            int r = poll(&pfd, 1, -1);
            if (winch) {
                winch = 0;
                rl_resize_terminal();
            }
            if (cont) {
                /* Back from Ctrl-Z: the terminal may have been changed. */
                cont = 0;
                rl_forced_update_display();
            }
            if (quit_sig) {
                rl_callback_handler_remove();
                quit = true;
                break;
            }
            if (r < 0 && errno == EINTR) {
                if (mdi_sigint) {
                    /* Ctrl-C at the prompt: drop the line, new prompt. */
                    mdi_sigint = 0;
                    rl_free_line_state();
                    rl_callback_sigcleanup();
                    rl_crlf();
                    rl_replace_line("", 0);
                    rl_on_new_line();
                    rl_redisplay();
                }
                continue;
            }
            if (r < 0) {
                status = -1;
                rl_callback_handler_remove();
                quit = true;
                break;
            }
            if (pfd.revents & (POLLIN | POLLHUP | POLLERR))
                rl_callback_read_char();
        }
        if (quit)
            break;
        if (got_eof || quit_sig) {
            putchar('\n'); /* Ctrl-D: end the prompt's line */
            break;
        }
        remember(got_line, hist);
        run_interactive(st, got_line, &quit);
        free(got_line);
        got_line = NULL;
    }
    if (hist)
        history_truncate_file(hist, HISTORY_MAX);
    clear_history();
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGWINCH, &old_winch, NULL);
    sigaction(SIGPIPE, &old_pipe, NULL);
    sigaction(SIGCONT, &old_cont, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGHUP, &old_hup, NULL);
    fflush(stdout);
    return status;
}
