/* mdinspect: the commands described from their table entries: a call's
 * argument by its spec (every command reads its arguments so), usage lines
 * (for `help` and the parser's usage errors), the command list and one
 * command's usage and long help (`help`, --help), and the table as the
 * COMMANDS section of mdinspect(1) in roff (--man-commands;
 * tests/cli/man-check.sh keeps the man page equal to it). The table is
 * the caller's (cmds.c owns it): nothing here refers to a command. */
#include "config.h"

#include <ctype.h>
#include <string.h>

#include <talloc.h>

#include "cmd.h"

const mdi_arg *mdi_arg_of(size_t argc, const mdi_arg *argv, unsigned spec)
{
    for (size_t i = 0; i < argc; i++)
        if (argv[i].spec == spec)
            return &argv[i];
    return NULL;
}

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

void mdi_help_list(mdi_printer *p, const mdi_cmd *const *cmds, size_t n)
{
    void *tmp = talloc_new(NULL);
    mdi_list_begin(p, NULL, "commands (a unique prefix of a name will do):", NULL, 0);
    for (size_t i = 0; i < n; i++) {
        const mdi_cmd *c = cmds[i];
        mdi_item_begin(p);
        mdi_str(p, "command", NULL, c->name);
        mdi_str(p, "usage", "", mdi_usage(tmp, c));
        mdi_str(p, "summary", "", c->summary);
        mdi_item_end(p);
    }
    mdi_list_end(p);
    talloc_free(tmp);
}

void mdi_help_one(mdi_printer *p, const mdi_cmd *cmd)
{
    void *tmp = talloc_new(NULL);
    int nflags = 0;
    mdi_record_begin(p);
    mdi_str(p, "command", NULL, cmd->name);
    mdi_str(p, "usage", "usage", mdi_usage(tmp, cmd));
    mdi_str(p, "summary", NULL, cmd->summary);
    mdi_textf(p, "", "%s", cmd->summary);
    mdi_str(p, "help", NULL, cmd->help);
    mdi_textf(p, "", "\n%.*s", (int)(strlen(cmd->help) - 1), cmd->help);
    mdi_list_begin(p, "options", NULL, NULL, 0);
    for (const mdi_argspec *a = cmd->args; a->name; a++)
        if (a->kind == MDI_ARG_FLAG) {
            mdi_item_begin(p);
            mdi_str(p, "option", NULL, a->name);
            mdi_str(p, "alias", NULL, a->alias);
            mdi_str(p, "about", NULL, a->about ? a->about : "");
            mdi_item_end(p);
        }
    mdi_list_end(p);
    for (const mdi_argspec *a = cmd->args; a->name; a++)
        if (a->kind == MDI_ARG_FLAG) {
            mdi_textf(p, "", "%s  %s%s%-*s %s", nflags++ ? "" : "\noptions:\n", a->name,
                      a->alias ? ", " : "", a->alias ? 9 : 4 - (int)strlen(a->name),
                      a->alias ? a->alias : "", a->about ? a->about : "");
        }
    mdi_record_end(p);
    talloc_free(tmp);
}

/* ---- roff ---- */

/* Text for roff: escapes, `code` in bold (a backtick between a letter and
 * a digit is an arity suffix, List`1, not a quote). */
static void roff_text(FILE *out, const char *s, size_t len)
{
    bool bold = false, bol = true;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (bol && (c == '.' || c == '\''))
            fputs("\\&", out);
        bol = false;
        if (c == '`' && i > 0 && isalnum((unsigned char)s[i - 1]) && i + 1 < len &&
            isdigit((unsigned char)s[i + 1])) {
            fputc(c, out); /* an arity suffix: List`1 */
        } else if (c == '`') {
            fputs(bold ? "\\fR" : "\\fB", out);
            bold = !bold;
        } else if (c == '\\') {
            fputs("\\e", out);
        } else if (c == '-') {
            fputs("\\-", out);
        } else {
            fputc(c, out);
            bol = c == '\n';
        }
    }
    if (bold)
        fputs("\\fR", out);
}

/* A usage line: literal words bold, METAVARIABLES italic, the rest roman. */
static void roff_usage(FILE *out, const char *u)
{
    while (*u) {
        if (isalnum((unsigned char)*u) || *u == '-' || *u == '=' || *u == '_') {
            const char *e = u;
            bool meta = true;
            while (*e && (isalnum((unsigned char)*e) || *e == '-' || *e == '=' || *e == '_')) {
                if (islower((unsigned char)*e))
                    meta = false;
                e++;
            }
            if (*u == '-')
                meta = false;
            fputs(meta ? "\\fI" : "\\fB", out);
            for (; u < e; u++)
                fputs(*u == '-' ? "\\-" : (char[]){*u, 0}, out);
            fputs("\\fR", out);
        } else {
            fputc(*u++, out);
        }
    }
}

void mdi_help_roff(FILE *out, const mdi_cmd *const *cmds, size_t n)
{
    void *tmp = talloc_new(NULL);
    for (size_t i = 0; i < n; i++) {
        const mdi_cmd *c = cmds[i];
        const char *h = c->help;
        bool first = true;
        fputs(".TP\n", out);
        roff_usage(out, mdi_usage(tmp, c));
        fputc('\n', out);
        fputc(toupper((unsigned char)c->summary[0]), out);
        roff_text(out, c->summary + 1, strlen(c->summary + 1));
        fputs(".\n", out);
        /* Paragraphs: runs of lines; lines indented by two blanks are kept
         * as they are. */
        while (*h) {
            const char *eol = strchr(h, '\n');
            size_t len = eol ? (size_t)(eol - h) : strlen(h);
            bool pre = len >= 2 && h[0] == ' ' && h[1] == ' ';
            if (len == 0) {
                h += 1;
                first = true;
                continue;
            }
            if (first) {
                fputs(".IP\n", out);
                first = false;
            }
            if (pre) {
                fputs(".RS\n.nf\n", out);
                while (len >= 2 && h[0] == ' ' && h[1] == ' ') {
                    roff_text(out, h + 2, len - 2);
                    fputc('\n', out);
                    h += len + (h[len] == '\n');
                    eol = strchr(h, '\n');
                    len = eol ? (size_t)(eol - h) : strlen(h);
                }
                fputs(".fi\n.RE\n", out);
                if (len)
                    fputs(".IP\n", out);
                continue;
            }
            roff_text(out, h, len);
            fputc('\n', out);
            h += len + (h[len] == '\n');
        }
        for (const mdi_argspec *a = c->args; a->name; a++)
            if (a->kind == MDI_ARG_FLAG) {
                fputs(".IP\n", out);
                roff_usage(out, a->name);
                if (a->alias) {
                    fputs(", ", out);
                    roff_usage(out, a->alias);
                }
                fputs(": ", out);
                roff_text(out, a->about ? a->about : "", a->about ? strlen(a->about) : 0);
                fputs(".\n", out);
            }
    }
    talloc_free(tmp);
}
