/* mdinspect's command table (assembled from commands.def): lookup by name,
 * unique-prefix matching of command, table and choice names with a "did
 * you mean" for a word that matches none, usage lines, and running a
 * parsed call. parse.c turns a command line into checked calls. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <talloc.h>

#include <mdtools/tables.h>

#include "cmd.h"

/* ---- the table ---- */

static const mdi_cmd *const listed[] = {
#define MDI_CMD(name) &mdi_cmd_##name,
#include "commands.def"
#undef MDI_CMD
};
#define NCMDS (sizeof listed / sizeof listed[0])

static const mdi_cmd *sorted[NCMDS];
static const char *names[NCMDS];

static int by_name(const void *a, const void *b)
{
    return strcmp((*(const mdi_cmd *const *)a)->name, (*(const mdi_cmd *const *)b)->name);
}

static void table_init(void)
{
    if (sorted[0])
        return;
    memcpy(sorted, listed, sizeof listed);
    qsort(sorted, NCMDS, sizeof sorted[0], by_name);
    for (size_t i = 0; i < NCMDS; i++)
        names[i] = sorted[i]->name;
}

size_t mdi_cmd_count(void)
{
    return NCMDS;
}

const mdi_cmd *mdi_cmd_at(size_t i)
{
    table_init();
    return i < NCMDS ? sorted[i] : NULL;
}

const char *const *mdi_cmd_names(void)
{
    table_init();
    return names;
}

const mdi_cmd *mdi_cmd_get(const char *name)
{
    table_init();
    for (size_t i = 0; i < NCMDS; i++)
        if (strcmp(sorted[i]->name, name) == 0)
            return sorted[i];
    return NULL;
}

const mdi_arg *mdi_arg_of(size_t argc, const mdi_arg *argv, unsigned spec)
{
    for (size_t i = 0; i < argc; i++)
        if (argv[i].spec == spec)
            return &argv[i];
    return NULL;
}

/* ---- matching ---- */

static bool has_prefix(const char *name, const char *word, bool nocase)
{
    size_t n = strlen(word);
    return nocase ? strncasecmp(name, word, n) == 0 : strncmp(name, word, n) == 0;
}

long mdi_match(const char *word, const char *const *list, size_t n, bool nocase)
{
    long found = MDI_MATCH_NONE;
    size_t i;
    if (!word[0])
        return MDI_MATCH_NONE;
    for (i = 0; i < n; i++)
        if (list[i] && (nocase ? strcasecmp(list[i], word) : strcmp(list[i], word)) == 0)
            return (long)i;
    for (i = 0; i < n; i++) {
        if (!list[i] || !has_prefix(list[i], word, nocase))
            continue;
        if (found != MDI_MATCH_NONE)
            return MDI_MATCH_AMBIGUOUS;
        found = (long)i;
    }
    return found;
}

char *mdi_match_list(void *mem_ctx, const char *word, const char *const *list, size_t n,
                     bool nocase)
{
    char *s = talloc_strdup(mem_ctx, "");
    for (size_t i = 0; s && i < n; i++)
        if (list[i] && has_prefix(list[i], word, nocase))
            s = talloc_asprintf_append(s, "%s%s", s[0] ? ", " : "", list[i]);
    return s;
}

/* Edit distance with adjacent transpositions (optimal string alignment),
 * case-insensitive, capped: anything above `cap` is cap + 1. */
static size_t distance(const char *a, const char *b, size_t cap)
{
    size_t la = strlen(a), lb = strlen(b);
    size_t d[3][64];
    if (la >= 63 || lb >= 63)
        return cap + 1;
    if ((la > lb ? la - lb : lb - la) > cap)
        return cap + 1;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t *cur = d[i % 3], *prev = d[(i - 1) % 3], *prev2 = d[(i + 1) % 3];
        cur[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            int ca = tolower((unsigned char)a[i - 1]), cb = tolower((unsigned char)b[j - 1]);
            size_t v = prev[j - 1] + (ca != cb);
            if (prev[j] + 1 < v)
                v = prev[j] + 1;
            if (cur[j - 1] + 1 < v)
                v = cur[j - 1] + 1;
            if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
                tolower((unsigned char)a[i - 2]) == cb && prev2[j - 2] + 1 < v)
                v = prev2[j - 2] + 1;
            cur[j] = v;
        }
    }
    return d[la % 3][lb] > cap ? cap + 1 : d[la % 3][lb];
}

char *mdi_did_you_mean(void *mem_ctx, const char *word, const char *const *list, size_t n)
{
    /* One edit for short words, two for longer ones: closer than that
     * is a typo, farther a different word. */
    size_t cap = strlen(word) <= 4 ? 1 : 2, best = cap + 1;
    char *s;
    for (size_t i = 0; i < n; i++) {
        size_t d = list[i] ? distance(word, list[i], cap) : cap + 1;
        if (d < best)
            best = d;
    }
    if (best > cap)
        return talloc_strdup(mem_ctx, "");
    s = talloc_strdup(mem_ctx, " (did you mean ");
    for (size_t i = 0, k = 0; s && i < n; i++)
        if (list[i] && distance(word, list[i], cap) == best)
            s = talloc_asprintf_append(s, "%s'%s'", k++ ? " or " : "", list[i]);
    return s ? talloc_strdup_append(s, "?)") : NULL;
}

const char *const *mdi_table_names(void)
{
    static const char *tnames[MDT_TABLE_MAX];
    static bool done;
    if (!done) {
        for (unsigned i = 0; i < MDT_TABLE_MAX; i++) {
            const mdt_table_schema *s = mdt_table_schema_get(i);
            tnames[i] = s ? s->name : NULL;
        }
        done = true;
    }
    return tnames;
}

/* ---- usage ---- */

char *mdi_usage(void *mem_ctx, const mdi_cmd *cmd)
{
    char *s = talloc_strdup(mem_ctx, cmd->name);
    int open = 0;
    /* Flags first, each in brackets; then positional arguments, optional
     * ones nested; then keyword clauses, each in its own brackets. */
    for (const mdi_argspec *a = cmd->args; s && a->name; a++)
        if (a->kind == MDI_ARG_FLAG)
            s = a->alias ? talloc_asprintf_append(s, " [%s|%s]", a->name, a->alias)
                         : talloc_asprintf_append(s, " [%s]", a->name);
    for (const mdi_argspec *a = cmd->args; s && a->name; a++) {
        if (a->kind == MDI_ARG_FLAG || a->keyword)
            continue;
        if (a->flags & MDI_ARGF_OPTIONAL) {
            s = talloc_asprintf_append(s, " [%s", a->name);
            open++;
        } else {
            s = talloc_asprintf_append(s, " %s", a->name);
        }
        if (s && (a->flags & MDI_ARGF_REPEAT))
            s = talloc_strdup_append(s, "...");
    }
    while (s && open-- > 0)
        s = talloc_strdup_append(s, "]");
    for (const mdi_argspec *a = cmd->args; s && a->name; a++)
        if (a->keyword)
            s = talloc_asprintf_append(s, (a->flags & MDI_ARGF_OPTIONAL) ? " [%s %s]" : " %s %s",
                                       a->keyword, a->name);
    return s;
}

int mdi_run(mdi_state *st, const mdi_call *call)
{
    int r;
    st->cmd = call->cmd->name;
    st->stop = false;
    if ((call->cmd->flags & MDI_CMD_IMAGE) && !mdi_image(st)) {
        mdi_fail(st, "no module is open (use 'open PATH')");
        st->cmd = NULL;
        return MDI_FAIL;
    }
    r = call->cmd->run(st, call->argc, call->argv);
    mdi_printer_flush(st->out);
    if (mdi_sigint) {
        mdi_sigint = 0;
        st->stop = true;
        mdi_fail(st, "interrupted");
        r = MDI_FAIL;
    }
    st->cmd = NULL;
    return r;
}
