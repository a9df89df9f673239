/* mdinspect's tab completion: the line up to the cursor is split and bound
 * to the command's argument specs exactly as the parser would (parse.c), and
 * the word at the cursor is completed by its argument kind: command names,
 * table names (any case), choices, columns of the TABLE argument, flags and
 * keywords, file names, open modules, type names of the current module one
 * namespace or nesting step at a time (`System.` then
 * `System.Collections.`, `Outer+`), members after `Type::`, and tokens
 * (`0x02` then every TypeDef token). */
#define _DEFAULT_SOURCE /* strdup */
#include "config.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <readline/readline.h>
#include <talloc.h>

#include <mdtools/members.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>

#include "cands.h"
#include "cmd.h"
#include "index.h"
#include "repl.h"

static mdi_state *cstate;

void mdi_complete_init(mdi_state *st)
{
    cstate = st;
}

/* ---- generators by kind ---- */

static void add_list(mdi_cands *c, const char *text, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (names[i])
            mdi_cand_add(c, text, names[i]);
}

static void add_modules(mdi_state *st, mdi_cands *c, const char *text)
{
    char num[24];
    for (size_t i = 0; i < st->nmods; i++) {
        snprintf(num, sizeof num, "#%u", st->mods[i]->id);
        mdi_cand_add(c, text, num);
        mdi_cand_add(c, text, st->mods[i]->name);
    }
}

/* Type keys that start with text, cut after the next namespace dot or '+'
 * past the text: one step at a time. */
static void add_types(mdi_state *st, mdi_cands *c, const char *text)
{
    mdi_module *m = mdi_current(st);
    const mdi_index *ix = m ? mdi_index_of(m) : NULL;
    size_t tl = strlen(text);
    char *buf;
    if (!ix)
        return;
    buf = talloc_array(c->mem, char, 4096);
    for (size_t i = 0; buf && i < ix->ntypes; i++) {
        const mdi_typeent *t = &ix->types[i];
        size_t cut = t->keylen;
        if (strncmp(t->key, text, tl) != 0)
            continue;
        for (size_t k = tl; k < t->keylen; k++)
            if ((t->key[k] == '.' && k <= t->nslen) || (t->key[k] == '+' && k > t->nslen)) {
                cut = k + 1;
                break;
            }
        if (cut >= 4096)
            continue;
        memcpy(buf, t->key, cut);
        buf[cut] = '\0';
        mdi_cand_add(c, text, buf);
    }
    talloc_free(buf);
}

struct member_cands {
    mdi_cands *c;
    const char *text;
    char *prefix; /* "Type::" */
};

static void add_member(struct member_cands *mc, const mdt_image *img, uint32_t type)
{
    mdt_members it = MDT_MEMBERS_INIT;
    uint32_t tok;
    const char *name;
    int e;
    if (mdt_members_init(&it, img, type, MDT_MEMBERS_ALL) == 0)
        while ((e = mdt_members_next(&tok, &name, &it)) != MDT_ITEROVER) {
            char *s = e ? NULL : talloc_asprintf(mc->c->mem, "%s%s", mc->prefix, name);
            if (s)
                mdi_cand_add(mc->c, mc->text, s);
            talloc_free(s);
        }
    mdt_error_clear();
}

/* After "Type::": the members of that type. */
static void add_members(mdi_state *st, mdi_cands *c, const char *text)
{
    mdi_module *m = mdi_current(st);
    const char *sep = strstr(text, "::");
    struct member_cands mc = {c, text, NULL};
    uint32_t *types;
    size_t n;
    char *tname;
    if (!m || !sep)
        return;
    tname = talloc_strndup(c->mem, text, (size_t)(sep - text));
    if (!tname)
        return;
    types = mdi_types_named(tname, m, tname, &n);
    mc.prefix = talloc_asprintf(tname, "%s::", tname);
    for (size_t i = 0; types && mc.prefix && i < n; i++)
        add_member(&mc, m->img, types[i]);
    talloc_free(tname);
}

/* Tokens: "0x" and the first digits name a table; then its rows. */
static void add_tokens(mdi_state *st, mdi_cands *c, const char *text)
{
    const mdt_image *img = mdi_image(st);
    char buf[16];
    if (!img)
        return;
    for (unsigned t = 0; t < MDT_TABLE_MAX; t++) {
        uint32_t rows = mdt_table_rows(img, t);
        if (!rows)
            continue;
        snprintf(buf, sizeof buf, "0x%02x", t);
        if (strlen(text) < 4) {
            /* Only the table part: the step a person picks first. */
            c->noappend = true;
            mdi_cand_add(c, text, buf);
            continue;
        }
        if (strncasecmp(buf, text, 4) != 0)
            continue;
        for (uint32_t r = 1; r <= rows && r <= 100000; r++) {
            snprintf(buf, sizeof buf, "0x%08" PRIx32, MDT_TOKEN(t, r));
            mdi_cand_add(c, text, buf);
        }
    }
}

static int table_of(char **words, size_t nwords, const mdi_cmd *cmd)
{
    for (size_t i = 1; i < nwords; i++) {
        const mdi_argspec *s = mdi_spec_at(cmd, words, i);
        if (s && s->kind == MDI_ARG_TABLE) {
            long t;
            if (isdigit((unsigned char)words[i][0]))
                return (int)strtol(words[i], NULL, 0);
            t = mdi_match(words[i], mdi_table_names(), MDT_TABLE_MAX, true);
            return t >= 0 ? (int)t : -1;
        }
    }
    return -1;
}

static void add_columns(mdi_cands *c, const char *text, char **words, size_t nwords,
                        const mdi_cmd *cmd)
{
    int t = table_of(words, nwords, cmd);
    const mdt_table_schema *s = t >= 0 ? mdt_table_schema_get((unsigned)t) : NULL;
    char buf[64];
    if (!s || strchr(text, '='))
        return;
    c->nocase = true;
    for (unsigned i = 0; i < s->ncols; i++) {
        snprintf(buf, sizeof buf, "%s=", s->cols[i].name);
        mdi_cand_add(c, text, buf);
    }
}

/* The words a command accepts here besides its positional argument:
 * flags (after '-') and keywords not used yet. */
static void add_extras(mdi_cands *c, const char *text, const mdi_cmd *cmd, char **words,
                       size_t nwords)
{
    for (const mdi_argspec *a = cmd->args; a->name; a++) {
        bool used = false;
        const char *w = a->kind == MDI_ARG_FLAG ? a->name : a->keyword;
        if (!w || (a->kind == MDI_ARG_FLAG && text[0] != '-'))
            continue;
        for (size_t i = 1; i < nwords; i++)
            if (strcasecmp(words[i], w) == 0 || (a->alias && strcmp(words[i], a->alias) == 0))
                used = true;
        if (!used) {
            mdi_cand_add(c, text, w);
            if (a->alias)
                mdi_cand_add(c, text, a->alias);
        }
    }
}

static void by_kind(mdi_state *st, mdi_cands *c, const mdi_argspec *spec, const char *text,
                    char **words, size_t nwords, const mdi_cmd *cmd)
{
    if (spec->complete) {
        spec->complete(st, c, text, words, nwords);
        return;
    }
    switch (spec->kind) {
    case MDI_ARG_TABLE:
        c->nocase = true;
        add_list(c, text, mdi_table_names(), MDT_TABLE_MAX);
        break;
    case MDI_ARG_COMMAND: add_list(c, text, mdi_cmd_names(), mdi_cmd_count()); break;
    case MDI_ARG_CHOICE:
        c->nocase = true;
        for (size_t i = 0; spec->choices && spec->choices[i]; i++)
            mdi_cand_add(c, text, spec->choices[i]);
        break;
    case MDI_ARG_COLUMN_VALUE: add_columns(c, text, words, nwords, cmd); break;
    case MDI_ARG_MODULE: add_modules(st, c, text); break;
    case MDI_ARG_TYPE: add_types(st, c, text); break;
    case MDI_ARG_TOKEN:
    case MDI_ARG_MEMBER:
    case MDI_ARG_PATTERN:
        if (spec->kind == MDI_ARG_TOKEN && text[0] == '0')
            add_tokens(st, c, text);
        else if (strstr(text, "::"))
            add_members(st, c, text);
        else
            add_types(st, c, text);
        break;
    default: break;
    }
}

static char *gen_from(const char *text, int state);
static mdi_cands *gen_cands;
static size_t gen_i;

static char *gen_from(const char *text, int state)
{
    (void)text;
    if (!state)
        gen_i = 0;
    if (!gen_cands || gen_i >= gen_cands->n)
        return NULL;
    return strdup(gen_cands->v[gen_i++]);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

char **mdi_complete(const char *text, int start, int end)
{
    mdi_state *st = cstate;
    void *tmp = talloc_new(NULL);
    mdi_cands c = {tmp, NULL, 0, false, false};
    char *before, **words;
    size_t nwords;
    bool open_word;
    char **matches = NULL;
    (void)end;

    rl_attempted_completion_over = 1; /* never readline's default file names */
    if (!tmp || !st)
        goto out;
    before = talloc_strndup(tmp, rl_line_buffer, (size_t)start);
    if (!before || mdi_split_words(tmp, before, &words, &nwords, &open_word))
        goto out;
    if (open_word) {
        /* Readline's word starts inside what the splitter calls one word
         * (after a quote): complete nothing rather than something wrong. */
        goto out;
    }
    if (nwords == 0) {
        add_list(&c, text, mdi_cmd_names(), mdi_cmd_count());
    } else {
        long m = mdi_match(words[0], mdi_cmd_names(), mdi_cmd_count(), false);
        const mdi_cmd *cmd = m >= 0 ? mdi_cmd_at((size_t)m) : NULL;
        const mdi_argspec *spec = cmd ? mdi_spec_at(cmd, words, nwords) : NULL;
        if (spec && spec->kind == MDI_ARG_PATH) {
            rl_filename_completion_desired = 1;
            matches = rl_completion_matches(text, rl_filename_completion_function);
            goto out;
        }
        if (spec)
            by_kind(st, &c, spec, text, words, nwords, cmd);
        if (cmd)
            add_extras(&c, text, cmd, words, nwords);
    }
    if (c.n) {
        char last;
        qsort(c.v, c.n, sizeof c.v[0], cmp_str);
        gen_cands = &c;
        rl_variable_bind("completion-ignore-case", c.nocase ? "on" : "off");
        matches = rl_completion_matches(text, gen_from);
        gen_cands = NULL;
        last = c.n == 1 ? c.v[0][strlen(c.v[0]) - 1] : 0;
        if (c.noappend || last == '.' || last == '+' || last == ':' || last == '=' || last == '/')
            rl_completion_append_character = '\0';
        else
            rl_completion_append_character = ' ';
    }
out:
    talloc_free(tmp);
    return matches;
}
