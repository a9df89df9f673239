/* `help`: the command list and each command's usage and long help, all
 * taken from the command table; --help prints the same list, and
 * --man-commands renders the table as the COMMANDS section of mdinspect(1)
 * (tests/cli/man-check.sh keeps the man page equal to it). */
#include "config.h"

#include <ctype.h>
#include <string.h>

#include <talloc.h>

#include "cmd.h"

void mdi_help_list(mdi_printer *p)
{
    void *tmp = talloc_new(NULL);
    mdi_list_begin(p, NULL, "commands (a unique prefix of a name will do):", NULL, 0);
    for (size_t i = 0; i < mdi_cmd_count(); i++) {
        const mdi_cmd *c = mdi_cmd_at(i);
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

static int run(mdi_state *st, size_t argc, const mdi_arg *argv)
{
    if (argc == 0)
        mdi_help_list(st->out);
    else
        mdi_help_one(st->out, mdi_cmd_at(argv[0].value));
    return MDI_OK;
}

const mdi_cmd mdi_cmd_help = {
    .name = "help",
    .args = {{.name = "COMMAND", .kind = MDI_ARG_COMMAND, .flags = MDI_ARGF_OPTIONAL}},
    .summary = "list the commands, or explain one",
    .help = "Without an argument, lists the commands. With a COMMAND (any unique\n"
            "prefix), shows its usage and what it does.\n",
    .run = run,
};

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

void mdi_help_roff(FILE *out)
{
    void *tmp = talloc_new(NULL);
    for (size_t i = 0; i < mdi_cmd_count(); i++) {
        const mdi_cmd *c = mdi_cmd_at(i);
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
