/* mdinspect's command lines turned into checked calls of the command table
 * (cmds.c): ';'-separated commands, quoting, binding words to argument
 * specs (positional arguments, flags, keyword clauses) and checking them
 * by kind, with unique-prefix matching of command, table and choice names
 * and a "did you mean" for a word that matches none. Completion
 * (complete.c) binds words the same way through mdi_spec_at. */
#include "config.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <talloc.h>

#include <mdtools/tables.h>

#include "cmd.h"

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
static bool cmd_end_word(void *mem, struct cmdlist *l, char **word)
{
    size_t c = l->n - 1;
    char **w;
    if (!*word)
        return true;
    w = talloc_realloc(mem, l->words[c], char *, l->nwords[c] + 1);
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
 * backslashes. An empty quoted string is a word. With `partial` (for
 * completion) an unterminated quote or final backslash is not an error and
 * the word being typed is kept open: *open_word tells whether one was. */
static int split(void *mem, const char *line, struct cmdlist *l, char **err, bool partial,
                 bool *open_word)
{
    const char *p = line;
    char *word = NULL; /* the open word, or NULL between words */
    bool ok = cmd_new(mem, l);

    while (ok && *p) {
        char c = *p++;
        if (c == ';') {
            ok = cmd_end_word(mem, l, &word) && cmd_new(mem, l);
        } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            ok = cmd_end_word(mem, l, &word);
        } else if (c == '\\') {
            if (!*p) {
                if (partial)
                    break;
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
                if (partial)
                    break;
                *err = talloc_asprintf(mem, "unterminated %c quote", c);
                return -1;
            }
            p++;
        } else {
            ok = word_add(mem, &word, c);
        }
    }
    if (open_word)
        *open_word = word != NULL;
    if (ok)
        ok = cmd_end_word(mem, l, &word);
    if (!ok) {
        *err = talloc_strdup(mem, "out of memory");
        return -1;
    }
    return 0;
}

int mdi_split_words(void *mem, const char *text, char ***words, size_t *nwords, bool *open_word)
{
    struct cmdlist l = {NULL, NULL, 0};
    char *err = NULL;
    if (split(mem, text, &l, &err, true, open_word))
        return -1;
    *words = l.words[l.n - 1];
    *nwords = l.nwords[l.n - 1];
    return 0;
}

/* ---- binding words to specs ---- */

static size_t nspecs(const mdi_cmd *cmd)
{
    size_t n = 0;
    while (n < MDI_MAX_ARGS && cmd->args[n].name)
        n++;
    return n;
}

static long flag_spec(const mdi_cmd *cmd, const char *word)
{
    for (size_t i = 0; i < nspecs(cmd); i++)
        if (cmd->args[i].kind == MDI_ARG_FLAG &&
            (strcmp(cmd->args[i].name, word) == 0 ||
             (cmd->args[i].alias && strcmp(cmd->args[i].alias, word) == 0)))
            return (long)i;
    return -1;
}

static long keyword_spec(const mdi_cmd *cmd, const char *word)
{
    for (size_t i = 0; i < nspecs(cmd); i++)
        if (cmd->args[i].keyword && strcasecmp(cmd->args[i].keyword, word) == 0)
            return (long)i;
    return -1;
}

/* The next positional spec at or after *pos, or -1 (a repeated last one
 * stays put). */
static long next_positional(const mdi_cmd *cmd, size_t *pos)
{
    size_t n = nspecs(cmd);
    for (; *pos < n; (*pos)++) {
        const mdi_argspec *a = &cmd->args[*pos];
        if (a->kind == MDI_ARG_FLAG || a->keyword)
            continue;
        return (long)(a->flags & MDI_ARGF_REPEAT ? *pos : (*pos)++);
    }
    return -1;
}

/* Assign each word a spec index (or -1 for a keyword word), as the parser
 * does. Returns the number of words assigned (all on success); stops at
 * the first word that fits nowhere. *pending is the keyword spec waiting
 * for its argument, or -1. */
static size_t assign(const mdi_cmd *cmd, char **words, size_t nwords, long *specs, long *pending)
{
    size_t pos = 0, i;
    *pending = -1;
    for (i = 0; i < nwords; i++) {
        long s;
        if (*pending >= 0) {
            specs[i] = *pending;
            *pending = -1;
            continue;
        }
        if ((s = flag_spec(cmd, words[i])) >= 0) {
            specs[i] = s;
            continue;
        }
        if ((s = keyword_spec(cmd, words[i])) >= 0) {
            specs[i] = -1;
            *pending = s;
            pos = nspecs(cmd); /* no positional argument after a keyword clause */
            continue;
        }
        if ((s = next_positional(cmd, &pos)) < 0)
            break;
        specs[i] = s;
    }
    return i;
}

const mdi_argspec *mdi_spec_at(const mdi_cmd *cmd, char **words, size_t nwords)
{
    char *w[64];
    long specs[64], pending;
    size_t n;
    if (nwords < 1 || nwords > 63)
        return NULL;
    /* Bind the words after the command name and an empty one standing for
     * the word being typed: that one gets the spec asked for. */
    memcpy(w, words + 1, (nwords - 1) * sizeof w[0]);
    w[nwords - 1] = "";
    n = assign(cmd, w, nwords, specs, &pending);
    if (n < nwords || specs[nwords - 1] < 0)
        return NULL;
    return &cmd->args[specs[nwords - 1]];
}

/* ---- argument kinds ---- */

static size_t count_choices(const char *const *c)
{
    size_t n = 0;
    while (c && c[n])
        n++;
    return n;
}

static int check_table(void *mem, const mdi_cmd *cmd, mdi_arg *arg, char **err)
{
    long m;
    if (isdigit((unsigned char)arg->text[0])) {
        if (!mdi_parse_number(arg->text, MDT_TABLE_MAX - 1, &arg->value) ||
            !mdt_table_schema_get(arg->value)) {
            *err = talloc_asprintf(mem, "%s: no table has the id '%s'", cmd->name, arg->text);
            return -1;
        }
        return 0;
    }
    m = mdi_match(arg->text, mdi_table_names(), MDT_TABLE_MAX, true);
    if (m == MDI_MATCH_AMBIGUOUS) {
        *err =
            talloc_asprintf(mem, "%s: ambiguous table '%s': %s", cmd->name, arg->text,
                            mdi_match_list(mem, arg->text, mdi_table_names(), MDT_TABLE_MAX, true));
        return -1;
    }
    if (m < 0) {
        *err = talloc_asprintf(mem, "%s: unknown table '%s'%s", cmd->name, arg->text,
                               mdi_did_you_mean(mem, arg->text, mdi_table_names(), MDT_TABLE_MAX));
        return -1;
    }
    arg->value = (uint32_t)m;
    return 0;
}

/* COL=VALUE: COL names a column of the table bound earlier. */
static int check_column_value(void *mem, const mdi_cmd *cmd, const mdi_argspec *spec, mdi_arg *arg,
                              const mdi_arg *bound, size_t nbound, char **err)
{
    const char *eq = strchr(arg->text, '=');
    const mdt_table_schema *s = NULL;
    char *col;
    int c;
    for (size_t i = 0; i < nbound; i++)
        if (cmd->args[bound[i].spec].kind == MDI_ARG_TABLE)
            s = mdt_table_schema_get(bound[i].value);
    if (!eq || eq == arg->text) {
        *err = talloc_asprintf(mem, "%s: %s %s: '%s' is not COLUMN=VALUE", cmd->name,
                               spec->keyword ? spec->keyword : "", spec->name, arg->text);
        return -1;
    }
    if (!s) {
        *err = talloc_asprintf(mem, "%s: %s needs a TABLE", cmd->name, spec->name);
        return -1;
    }
    col = talloc_strndup(mem, arg->text, (size_t)(eq - arg->text));
    c = col ? mdt_column_by_name(s->id, col) : -1;
    if (c < 0) {
        char *list = talloc_strdup(mem, "");
        for (unsigned i = 0; list && i < s->ncols; i++)
            list = talloc_asprintf_append(list, "%s%s", i ? ", " : "", s->cols[i].name);
        *err = talloc_asprintf(mem, "%s: %s has no column '%s' (columns: %s)", cmd->name, s->name,
                               col ? col : "", list ? list : "");
        return -1;
    }
    arg->value = (uint32_t)c;
    return 0;
}

static int check_arg(void *mem, const mdi_cmd *cmd, const mdi_argspec *spec, mdi_arg *arg,
                     const mdi_arg *bound, size_t nbound, char **err)
{
    long m;
    switch (spec->kind) {
    case MDI_ARG_TABLE: return check_table(mem, cmd, arg, err);
    case MDI_ARG_ROW:
        if (!mdi_parse_number(arg->text, 0xFFFFFF, &arg->value) || arg->value == 0) {
            *err = talloc_asprintf(mem, "%s: %s: '%s' is not a row number (1 to 0xffffff)",
                                   cmd->name, spec->name, arg->text);
            return -1;
        }
        return 0;
    case MDI_ARG_NUMBER:
        if (!mdi_parse_number(arg->text, UINT32_MAX, &arg->value)) {
            *err = talloc_asprintf(mem, "%s: %s: '%s' is not a number (decimal, or hex after 0x)",
                                   cmd->name, spec->name, arg->text);
            return -1;
        }
        return 0;
    case MDI_ARG_COMMAND:
        m = mdi_match(arg->text, mdi_cmd_names(), mdi_cmd_count(), false);
        if (m == MDI_MATCH_AMBIGUOUS) {
            *err = talloc_asprintf(
                mem, "%s: ambiguous command '%s': %s", cmd->name, arg->text,
                mdi_match_list(mem, arg->text, mdi_cmd_names(), mdi_cmd_count(), false));
            return -1;
        }
        if (m < 0) {
            *err =
                talloc_asprintf(mem, "%s: unknown command '%s'%s", cmd->name, arg->text,
                                mdi_did_you_mean(mem, arg->text, mdi_cmd_names(), mdi_cmd_count()));
            return -1;
        }
        arg->value = (uint32_t)m;
        return 0;
    case MDI_ARG_CHOICE: {
        size_t n = count_choices(spec->choices);
        m = mdi_match(arg->text, spec->choices, n, true);
        if (m < 0) {
            char *all = talloc_strdup(mem, "");
            for (size_t i = 0; all && i < n; i++)
                all = talloc_asprintf_append(all, "%s%s", i ? ", " : "", spec->choices[i]);
            *err = talloc_asprintf(
                mem, "%s: %s'%s' is not one of: %s%s", cmd->name,
                m == MDI_MATCH_AMBIGUOUS ? "ambiguous: " : "", arg->text, all ? all : "",
                m == MDI_MATCH_AMBIGUOUS ? "" : mdi_did_you_mean(mem, arg->text, spec->choices, n));
            return -1;
        }
        arg->value = (uint32_t)m;
        return 0;
    }
    case MDI_ARG_COLUMN_VALUE: return check_column_value(mem, cmd, spec, arg, bound, nbound, err);
    case MDI_ARG_FLAG: arg->value = 1; return 0;
    default:
        /* Checked by the handler: what they name depends on what is open. */
        return 0;
    }
}

static int bind_args(void *mem, mdi_call *call, char **words, size_t nwords, char **err)
{
    const mdi_cmd *cmd = call->cmd;
    size_t n = nspecs(cmd), i, k = 0;
    long *specs = talloc_array(mem, long, nwords ? nwords : 1), pending;
    bool *seen = talloc_zero_array(mem, bool, n ? n : 1);
    size_t done;

    call->argv = talloc_zero_array(mem, mdi_arg, nwords ? nwords : 1);
    if (!specs || !seen || !call->argv) {
        *err = talloc_strdup(mem, "out of memory");
        return -1;
    }
    /* A command with flags takes no other word starting with '-'. */
    for (i = 0; i < nwords; i++) {
        char *all = NULL;
        if (words[i][0] != '-' || !words[i][1] || flag_spec(cmd, words[i]) >= 0)
            continue;
        for (size_t f = 0; f < n; f++)
            if (cmd->args[f].kind == MDI_ARG_FLAG)
                all = talloc_asprintf(mem, "%s%s%s%s%s", all ? all : "", all ? ", " : "",
                                      cmd->args[f].name, cmd->args[f].alias ? " or " : "",
                                      cmd->args[f].alias ? cmd->args[f].alias : "");
        if (all) {
            *err = talloc_asprintf(mem, "%s: unknown option '%s' (options: %s)", cmd->name,
                                   words[i], all);
            return -1;
        }
    }
    done = assign(cmd, words, nwords, specs, &pending);
    if (done < nwords) {
        *err = talloc_asprintf(mem, "%s: too many arguments (usage: %s)", cmd->name,
                               mdi_usage(mem, cmd));
        return -1;
    }
    if (pending >= 0) {
        *err = talloc_asprintf(mem, "%s: %s: missing %s (usage: %s)", cmd->name,
                               cmd->args[pending].keyword, cmd->args[pending].name,
                               mdi_usage(mem, cmd));
        return -1;
    }
    for (i = 0; i < nwords; i++) {
        mdi_arg *a;
        if (specs[i] < 0)
            continue; /* a keyword */
        if (seen[specs[i]] && !(cmd->args[specs[i]].flags & MDI_ARGF_REPEAT)) {
            *err = talloc_asprintf(mem, "%s: %s given twice", cmd->name,
                                   cmd->args[specs[i]].keyword ? cmd->args[specs[i]].keyword
                                                               : cmd->args[specs[i]].name);
            return -1;
        }
        seen[specs[i]] = true;
        a = &call->argv[k];
        a->text = talloc_steal(call->argv, words[i]);
        a->spec = (uint8_t)specs[i];
        if (check_arg(mem, cmd, &cmd->args[specs[i]], a, call->argv, k, err))
            return -1;
        k++;
    }
    for (i = 0; i < n; i++) {
        const mdi_argspec *a = &cmd->args[i];
        if (!seen[i] && !(a->flags & MDI_ARGF_OPTIONAL) && a->kind != MDI_ARG_FLAG) {
            *err = talloc_asprintf(mem, "%s: missing %s (usage: %s)", cmd->name, a->name,
                                   mdi_usage(mem, cmd));
            return -1;
        }
    }
    call->argc = k;
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
    if (split(tmp, line, &l, err, false, NULL))
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
        m = mdi_match(name, mdi_cmd_names(), mdi_cmd_count(), false);
        if (m == MDI_MATCH_AMBIGUOUS) {
            *err =
                talloc_asprintf(tmp, "ambiguous command '%s': %s", name,
                                mdi_match_list(tmp, name, mdi_cmd_names(), mdi_cmd_count(), false));
            goto fail;
        }
        if (m < 0) {
            char *hint = mdi_did_you_mean(tmp, name, mdi_cmd_names(), mdi_cmd_count());
            *err = talloc_asprintf(tmp, "unknown command '%s'%s", name,
                                   hint && hint[0] ? hint : " ('help' lists them)");
            goto fail;
        }
        out[n].cmd = mdi_cmd_at((size_t)m);
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
