/* libFuzzer harness for mdinspect's command language: the tokenizer and
 * parser behind the shell's prompt, -c and -f (mdi_parse: quoting, ';',
 * comments, unique prefixes, argument kinds: tokens, tables, COL=VALUE,
 * numbers, choices, flags), tab completion of a partial line
 * (mdi_complete, through readline's matcher), and the dispatcher running
 * what parsed (mdi_run) on a fresh session holding two fixture modules
 * (data/Everything.dll, data/Sigs.dll), its output thrown away. Each line
 * of the input is one line of a script (comments skipped, as -f does);
 * the first byte picks text or JSON output.
 *
 * What would reach outside the process is not run: `open` (a path from
 * the input could name any file or folder of the machine), `set pager`
 * (a command to start) and `resources -x` (it writes files into a folder
 * the input names); nor are the paths of `open` and `resources`
 * completed. Oracles besides the sanitizers: a line that does
 * not parse has an error message; nothing is left allocated once the
 * session is freed.
 *
 * Built for libFuzzer with --enable-fuzzing (the shell and the library
 * compiled in), and always as a replayer (tests/fuzz/replay.c) that
 * `make check` runs over tests/fuzz/corpus/shell/. */
#define _DEFAULT_SOURCE /* strndup */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <talloc.h>

#include <readline/readline.h>

#include "cmd.h"
#include "paths.h"
#include "repl.h"
#include "state.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_INPUT 4096
#define MAX_CALLS 64 /* commands run per input: each may list a whole module */

static FILE *devnull;
static char fixtures[2][1024];
static volatile uint64_t sink;

static void init(void)
{
    if (devnull)
        return;
    devnull = fopen("/dev/null", "w");
    if (!devnull)
        abort();
    src_path(fixtures[0], sizeof fixtures[0], "data/Everything.dll");
    src_path(fixtures[1], sizeof fixtures[1], "data/Sigs.dll");
}

/* Whether a call would act outside the process. */
static bool outside(const mdi_call *c)
{
    if (strcmp(c->cmd->name, "open") == 0)
        return true;
    if (strcmp(c->cmd->name, "resources") == 0) {
        for (size_t i = 0; i < c->argc; i++)
            if (c->argv[i].spec < MDI_MAX_ARGS &&
                strcmp(c->cmd->args[c->argv[i].spec].name, "-x") == 0)
                return true;
    }
    if (strcmp(c->cmd->name, "set") == 0 && c->argc > 0 && c->argv[0].text &&
        strncmp(c->argv[0].text, "pa", 2) == 0)
        return true;
    return false;
}

/* Completion of the line up to each word boundary and at its end; not of
 * `open`'s paths, which readline completes from the file system. */
static void complete(const char *line)
{
    size_t len = strlen(line), w = strspn(line, " ");
    size_t wl = strcspn(line + w, " ;");
    if (line[w] == 'o')
        return;
    /* `resources`' DIR (any unique prefix: "resou" and longer). */
    if (wl >= 5 && strncmp(line + w, "resources", wl < 9 ? wl : 9) == 0)
        return;
    for (size_t end = 0; end <= len; end++) {
        if (end < len && line[end] != ' ' && line[end] != ';')
            continue;
        size_t start = end;
        while (start > 0 && line[start - 1] != ' ' && line[start - 1] != ';')
            start--;
        char *text = strndup(line + start, end - start);
        char **m;
        if (!text)
            return;
        rl_line_buffer = (char *)line;
        rl_point = rl_end = (int)end;
        m = mdi_complete(text, (int)start, (int)end);
        for (size_t i = 0; m && m[i]; i++) {
            sink += strlen(m[i]);
            free(m[i]);
        }
        free(m);
        free(text);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    void *mem;
    mdi_state *st;
    char *text, *line, *save = NULL;
    size_t ran = 0;
    bool quit = false;
    if (size < 1 || size > MAX_INPUT)
        return 0;
    init();
    mem = talloc_new(NULL);
    st = mdi_state_new(mem, devnull, devnull, data[0] & 1 ? MDI_FMT_JSON : MDI_FMT_TEXT);
    if (!st)
        abort();
    for (int i = 0; i < 2; i++)
        if (!mdi_state_open(st, fixtures[i], 0, NULL)) {
            fprintf(stderr, "fuzz_shell: cannot open %s (MDT_TOP_SRCDIR names the source tree)\n",
                    fixtures[i]);
            abort();
        }
    mdi_state_use(st, st->mods[0]);
    mdi_complete_init(st);
    text = talloc_strndup(mem, (const char *)data + 1, size - 1);
    for (line = strtok_r(text, "\n", &save); line && !quit; line = strtok_r(NULL, "\n", &save)) {
        mdi_call *calls;
        size_t n;
        char *err;
        complete(line);
        if (mdi_line_is_comment(line))
            continue;
        if (mdi_parse(mem, &calls, &n, &err, line)) {
            if (!err || !*err)
                abort(); /* a refusal says why */
            sink += strlen(err);
            continue;
        }
        for (size_t i = 0; i < n && !quit && ran < MAX_CALLS; i++, ran++) {
            if (outside(&calls[i]))
                continue;
            if (mdi_run(st, &calls[i]) == MDI_QUIT)
                quit = true;
        }
        talloc_free(calls);
    }
    mdi_complete_init(NULL);
    talloc_free(mem);
    return 0;
}
