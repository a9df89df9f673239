/* mdinspect's command table, and the parser that turns a command line into
 * checked calls: ';'-separated commands, quoting, unique-prefix matching of
 * command and table names, and argument checking by kind. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <talloc.h>

#include <mdtools/tables.h>

#include "cmd.h"

/* The table. Keep it sorted by name: `help` lists it in this order. */
const mdi_cmd mdi_cmds[] = {
    {"dump",
     {{"TABLE", MDI_ARG_TABLE, 0},
      {"FROM", MDI_ARG_ROW, MDI_ARGF_OPTIONAL},
      {"TO", MDI_ARG_ROW, MDI_ARGF_OPTIONAL},
      {NULL, 0, 0}},
     MDI_CMD_IMAGE,
     "decoded rows of a metadata table",
     "Prints rows FROM to TO (inclusive; by default all rows) of TABLE: the\n"
     "row number and token, then every column in schema order (ECMA-335 II.22):\n"
     "  constants     hex, as wide as the column: 0x0001\n"
     "  #Strings      quoted, with \\\" \\\\ \\n \\t \\r \\xNN \\uNNNN escapes\n"
     "  #Blob         blob@0xOFFSET[LENGTH]: heap offset, length in bytes\n"
     "  #GUID         the GUID, or nil for index 0\n"
     "  indexes       the token of the row pointed at: 0x01000005 (rid 0: none)\n"
     "  lists         FIRST..END, tokens of the run the row owns, END exclusive\n"
     "A cell that cannot be decoded shows <error: MESSAGE>; the dump goes on\n"
     "and the command fails at the end. TABLE is a table name (any case, or a\n"
     "unique prefix) or a table id (0x02); `tables` shows those present.\n",
     mdi_cmd_dump},
    {"help",
     {{"COMMAND", MDI_ARG_COMMAND, MDI_ARGF_OPTIONAL}, {NULL, 0, 0}},
     0,
     "list the commands, or explain one",
     "Without an argument, lists the commands. With a COMMAND (any unique\n"
     "prefix), shows its usage and what it does.\n",
     mdi_cmd_help},
    {"info",
     {{NULL, 0, 0}},
     MDI_CMD_IMAGE,
     "summary of the image",
     "Shows the kind of image (PE, Webcil, raw metadata), PE32 or PE32+, the\n"
     "machine, the CLI header (flags, entry point), the metadata version, the\n"
     "assembly identity with its public key token, module name and MVID,\n"
     "managed resources, strong-name signature, ReadyToRun header, debug\n"
     "directory (CodeView PDB path, GUID and age; embedded portable PDB), the\n"
     "#Pdb stream of a portable PDB, the metadata streams, the row counts of\n"
     "the non-empty tables, and every warning recorded while opening.\n"
     "This is what mdinspect shows for each FILE when no -c is given.\n",
     mdi_cmd_info},
    {"streams",
     {{NULL, 0, 0}},
     MDI_CMD_IMAGE,
     "metadata streams: name, offset, size, used",
     "Lists the streams of the metadata root (ECMA-335 II.24.2.2) in order:\n"
     "name, offset from the root, size, and whether mdtools reads it (when a\n"
     "heap name appears twice only one stream is used).\n",
     mdi_cmd_streams},
    {"strings",
     {{NULL, 0, 0}},
     MDI_CMD_IMAGE,
     "the #Strings heap: offset and string",
     "Lists every non-empty string of the #Strings heap (ECMA-335 II.24.2.3)\n"
     "with its offset, the value a #Strings column holds. Strings are quoted\n"
     "and escaped as in dump.\n",
     mdi_cmd_strings},
    {"tables",
     {{NULL, 0, 0}},
     MDI_CMD_IMAGE,
     "present tables: id, name, rows, row size",
     "Lists each table present in the tables stream (ECMA-335 II.24.2.6): id,\n"
     "name, number of rows, bytes per row, and for the tables the standard\n"
     "requires sorted, whether the rows really are in key order.\n",
     mdi_cmd_tables},
};
const size_t mdi_ncmds = sizeof mdi_cmds / sizeof mdi_cmds[0];

/* ---- matching ---- */

static bool has_prefix(const char *name, const char *word, bool nocase)
{
    size_t n = strlen(word);
    return nocase ? strncasecmp(name, word, n) == 0 : strncmp(name, word, n) == 0;
}

long mdi_match(const char *word, const char *const *names, size_t n, bool nocase)
{
    long found = MDI_MATCH_NONE;
    size_t i;
    if (!word[0])
        return MDI_MATCH_NONE;
    for (i = 0; i < n; i++)
        if (names[i] && (nocase ? strcasecmp(names[i], word) : strcmp(names[i], word)) == 0)
            return (long)i;
    for (i = 0; i < n; i++) {
        if (!names[i] || !has_prefix(names[i], word, nocase))
            continue;
        if (found != MDI_MATCH_NONE)
            return MDI_MATCH_AMBIGUOUS;
        found = (long)i;
    }
    return found;
}

char *mdi_match_list(void *mem_ctx, const char *word, const char *const *names, size_t n,
                     bool nocase)
{
    char *s = talloc_strdup(mem_ctx, "");
    for (size_t i = 0; s && i < n; i++)
        if (names[i] && has_prefix(names[i], word, nocase))
            s = talloc_asprintf_append(s, "%s%s", s[0] ? ", " : "", names[i]);
    return s;
}

static const char *const *command_names(void)
{
    static const char *names[sizeof mdi_cmds / sizeof mdi_cmds[0]];
    if (!names[0])
        for (size_t i = 0; i < mdi_ncmds; i++)
            names[i] = mdi_cmds[i].name;
    return names;
}

static const char *const *table_names(void)
{
    static const char *names[MDT_TABLE_MAX];
    static bool done;
    if (!done) {
        for (unsigned i = 0; i < MDT_TABLE_MAX; i++) {
            const mdt_table_schema *s = mdt_table_schema_get(i);
            names[i] = s ? s->name : NULL;
        }
        done = true;
    }
    return names;
}

const mdi_cmd *mdi_cmd_get(const char *name)
{
    for (size_t i = 0; i < mdi_ncmds; i++)
        if (strcmp(mdi_cmds[i].name, name) == 0)
            return &mdi_cmds[i];
    return NULL;
}

char *mdi_usage(void *mem_ctx, const mdi_cmd *cmd)
{
    char *s = talloc_strdup(mem_ctx, cmd->name);
    int open = 0;
    for (const mdi_argspec *a = cmd->args; s && a->name; a++) {
        if (a->flags & MDI_ARGF_OPTIONAL) {
            s = talloc_asprintf_append(s, " [%s", a->name);
            open++;
        } else {
            s = talloc_asprintf_append(s, " %s", a->name);
        }
        if (s && (a->flags & MDI_ARGF_REPEAT))
            s = talloc_strdup_append(s, "...");
    }
    while (s && open--)
        s = talloc_strdup_append(s, "]");
    return s;
}

/* ---- words ---- */

/* Commands as arrays of words, while splitting a line. */
struct cmdlist {
    char ***words; /* words[i][j]: word j of command i */
    size_t *nwords;
    size_t n;
};

static bool cmd_new(void *mem, struct cmdlist *l)
{
    char ***w = talloc_realloc(mem, l->words, char **, l->n + 1);
    size_t *nw;
    if (!w)
        return false;
    l->words = w;
    nw = talloc_realloc(mem, l->nwords, size_t, l->n + 1);
    if (!nw)
        return false;
    l->nwords = nw;
    l->words[l->n] = NULL;
    l->nwords[l->n] = 0;
    l->n++;
    return true;
}

/* Append `*word` (if a word is open) to the last command and close it. */
static bool cmd_end_word(struct cmdlist *l, char **word)
{
    size_t c = l->n - 1;
    char **w;
    if (!*word)
        return true;
    w = talloc_realloc(l->words, l->words[c], char *, l->nwords[c] + 1);
    if (!w)
        return false;
    w[l->nwords[c]++] = talloc_steal(w, *word);
    l->words[c] = w;
    *word = NULL;
    return true;
}

/* Add a byte to the open word, opening one if needed. */
static bool word_add(void *mem, char **word, char ch)
{
    char s[2] = {ch, '\0'};
    *word = *word ? talloc_strdup_append_buffer(*word, s) : talloc_strdup(mem, s);
    return *word != NULL;
}

/* Split `line` into commands (arrays of words) at ';', honouring quotes and
 * backslashes. An empty quoted string is a word. */
static int split(void *mem, const char *line, struct cmdlist *l, char **err)
{
    const char *p = line;
    char *word = NULL; /* the open word, or NULL between words */
    bool ok = cmd_new(mem, l);

    while (ok && *p) {
        char c = *p++;
        if (c == ';') {
            ok = cmd_end_word(l, &word) && cmd_new(mem, l);
        } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            ok = cmd_end_word(l, &word);
        } else if (c == '\\') {
            if (!*p) {
                *err = talloc_strdup(mem, "'\\' at the end of the line");
                return -1;
            }
            ok = word_add(mem, &word, *p++);
        } else if (c == '\'' || c == '"') {
            if (!word && !(word = talloc_strdup(mem, "")))
                ok = false;
            while (ok && *p && *p != c) {
                if (c == '"' && *p == '\\' && (p[1] == '"' || p[1] == '\\'))
                    p++;
                ok = word_add(mem, &word, *p++);
            }
            if (ok && !*p) {
                *err = talloc_asprintf(mem, "unterminated %c quote", c);
                return -1;
            }
            p++;
        } else {
            ok = word_add(mem, &word, c);
        }
    }
    if (ok)
        ok = cmd_end_word(l, &word);
    if (!ok) {
        *err = talloc_strdup(mem, "out of memory");
        return -1;
    }
    return 0;
}

/* ---- argument kinds ---- */

/* Decimal, or hex after 0x; the whole word; at most `max`. */
static bool parse_number(const char *s, uint32_t max, uint32_t *out)
{
    char *end;
    unsigned long long v;
    int base = 10;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
        base = 16, s += 2;
    if (!isxdigit((unsigned char)s[0]))
        return false;
    errno = 0;
    v = strtoull(s, &end, base);
    if (errno || *end || v > max)
        return false;
    *out = (uint32_t)v;
    return true;
}

static int check_arg(void *mem, const mdi_cmd *cmd, const mdi_argspec *spec, mdi_arg *arg,
                     char **err)
{
    long m;
    switch (spec->kind) {
    case MDI_ARG_TABLE:
        if (isdigit((unsigned char)arg->text[0])) {
            if (!parse_number(arg->text, MDT_TABLE_MAX - 1, &arg->value) ||
                !mdt_table_schema_get(arg->value)) {
                *err = talloc_asprintf(mem, "%s: no table has the id '%s'", cmd->name, arg->text);
                return -1;
            }
            return 0;
        }
        m = mdi_match(arg->text, table_names(), MDT_TABLE_MAX, true);
        if (m == MDI_MATCH_AMBIGUOUS) {
            *err =
                talloc_asprintf(mem, "%s: ambiguous table '%s': %s", cmd->name, arg->text,
                                mdi_match_list(mem, arg->text, table_names(), MDT_TABLE_MAX, true));
            return -1;
        }
        if (m < 0) {
            *err = talloc_asprintf(mem, "%s: unknown table '%s'", cmd->name, arg->text);
            return -1;
        }
        arg->value = (uint32_t)m;
        return 0;
    case MDI_ARG_ROW:
        if (!parse_number(arg->text, 0xFFFFFF, &arg->value) || arg->value == 0) {
            *err = talloc_asprintf(mem, "%s: %s: '%s' is not a row number (1 to 0xffffff)",
                                   cmd->name, spec->name, arg->text);
            return -1;
        }
        return 0;
    case MDI_ARG_COMMAND:
        m = mdi_match(arg->text, command_names(), mdi_ncmds, false);
        if (m == MDI_MATCH_AMBIGUOUS) {
            *err =
                talloc_asprintf(mem, "%s: ambiguous command '%s': %s", cmd->name, arg->text,
                                mdi_match_list(mem, arg->text, command_names(), mdi_ncmds, false));
            return -1;
        }
        if (m < 0) {
            *err = talloc_asprintf(mem, "%s: unknown command '%s'", cmd->name, arg->text);
            return -1;
        }
        arg->value = (uint32_t)m;
        return 0;
    }
    *err = talloc_asprintf(mem, "%s: bad argument kind", cmd->name);
    return -1;
}

static int bind_args(void *mem, mdi_call *call, char **words, size_t nwords, char **err)
{
    const mdi_cmd *cmd = call->cmd;
    const mdi_argspec *spec = cmd->args, *last = NULL;
    size_t i, nspec = 0, nreq = 0;
    for (; spec[nspec].name; nspec++)
        if (!(spec[nspec].flags & MDI_ARGF_OPTIONAL))
            nreq = nspec + 1;
    if (nspec)
        last = &spec[nspec - 1];
    if (nwords < nreq) {
        *err = talloc_asprintf(mem, "%s: missing %s (usage: %s)", cmd->name, spec[nwords].name,
                               mdi_usage(mem, cmd));
        return -1;
    }
    if (nwords > nspec && !(last && (last->flags & MDI_ARGF_REPEAT))) {
        *err = talloc_asprintf(mem, "%s: too many arguments (usage: %s)", cmd->name,
                               mdi_usage(mem, cmd));
        return -1;
    }
    call->argc = nwords;
    call->argv = talloc_zero_array(mem, mdi_arg, nwords ? nwords : 1);
    if (!call->argv) {
        *err = talloc_strdup(mem, "out of memory");
        return -1;
    }
    for (i = 0; i < nwords; i++) {
        const mdi_argspec *s = i < nspec ? &spec[i] : last;
        call->argv[i].text = talloc_steal(call->argv, words[i]);
        if (check_arg(mem, cmd, s, &call->argv[i], err))
            return -1;
    }
    return 0;
}

int mdi_parse(void *mem_ctx, mdi_call **calls, size_t *ncalls, char **err, const char *line)
{
    void *tmp = talloc_new(mem_ctx);
    struct cmdlist l = {NULL, NULL, 0};
    size_t n = 0, i;
    mdi_call *out;
    *err = NULL;
    if (!tmp) {
        *err = talloc_strdup(mem_ctx, "out of memory");
        return -1;
    }
    if (split(tmp, line, &l, err))
        goto fail;
    out = talloc_zero_array(tmp, mdi_call, l.n);
    if (!out) {
        *err = talloc_strdup(tmp, "out of memory");
        goto fail;
    }
    for (i = 0; i < l.n; i++) {
        const char *name;
        long m;
        if (!l.nwords[i])
            continue;
        name = l.words[i][0];
        m = mdi_match(name, command_names(), mdi_ncmds, false);
        if (m == MDI_MATCH_AMBIGUOUS) {
            *err = talloc_asprintf(tmp, "ambiguous command '%s': %s", name,
                                   mdi_match_list(tmp, name, command_names(), mdi_ncmds, false));
            goto fail;
        }
        if (m < 0) {
            *err = talloc_asprintf(tmp, "unknown command '%s' ('help' lists them)", name);
            goto fail;
        }
        out[n].cmd = &mdi_cmds[m];
        if (bind_args(out, &out[n], l.words[i] + 1, l.nwords[i] - 1, err))
            goto fail;
        n++;
    }
    *calls = talloc_steal(mem_ctx, out);
    *ncalls = n;
    talloc_free(tmp);
    return 0;
fail:
    *err = *err ? talloc_steal(mem_ctx, *err) : talloc_strdup(mem_ctx, "out of memory");
    talloc_free(tmp);
    return -1;
}

int mdi_run(mdi_state *st, const mdi_call *call)
{
    if ((call->cmd->flags & MDI_CMD_IMAGE) && !mdi_image(st)) {
        mdi_report(st, "%s: no image open", call->cmd->name);
        return MDI_FAIL;
    }
    return call->cmd->run(st, call->argc, call->argv);
}
