/* `set`: the session's settings: output format, name style (the
 * project's doc/names.md through <mdtools/names.h>), colour and pager. */
#include "config.h"

#include <string.h>

#include <talloc.h>

#include "cmd.h"
#include "common/naming.h"

enum { A_NAME, A_VALUE };

static const char *const settings[] = {"color", "format", "pager", "signatures",
                                       "style", "wide",   NULL};
enum { S_COLOR, S_FORMAT, S_PAGER, S_SIGNATURES, S_STYLE, S_WIDE };

/* `set signatures on`: methods named with their parameter types, as
 * batch's --signatures names them (common/naming.h). */
#define SIGNATURE_FLAGS MDI_NAME_SIGNATURES

static const char *const onoff[] = {"off", "on", NULL};
static const char *const formats[] = {"text", "json", NULL};

static const char *const *values_of(unsigned setting)
{
    switch (setting) {
    case S_FORMAT: return formats;
    case S_STYLE: return mdi_style_names;
    default: return onoff;
    }
}

static const char *style_name(const mdi_state *st)
{
    if (st->names.flags & MDT_NAME_FRIENDLY)
        return "friendly";
    return st->names.style == MDT_STYLE_REFLECTION ? "reflection"
           : st->names.style == MDT_STYLE_IL       ? "il"
                                                   : "full";
}

static void show(mdi_state *st)
{
    mdi_printer *p = st->out;
    mdi_record_begin(p);
    mdi_bool(p, "color", "color", st->color);
    mdi_str(p, "format", "format", st->format == MDI_FMT_JSON ? "json" : "text");
    mdi_bool(p, "pager", "pager", st->pager);
    mdi_bool(p, "signatures", "signatures", (st->names.flags & MDT_NAME_SIGNATURE) != 0);
    mdi_str(p, "style", "style", style_name(st));
    mdi_bool(p, "wide", "wide", st->wide);
    mdi_record_end(p);
}

static void complete_value(mdi_state *st, mdi_cands *c, const char *text, char **words,
                           size_t nwords)
{
    long s = nwords >= 2 ? mdi_match(words[1], settings, 6, true) : -1;
    const char *const *v;
    if (s < 0)
        return;
    for (v = values_of((unsigned)s); *v; v++)
        mdi_cand_add(c, text, *v);
}

static int run(mdi_state *st, size_t argc, const mdi_arg *argv)
{
    const mdi_arg *name = mdi_arg_of(argc, argv, A_NAME), *value = mdi_arg_of(argc, argv, A_VALUE);
    const char *const *vals;
    long v;
    size_t n = 0;

    if (!value) {
        show(st);
        return MDI_OK;
    }
    vals = values_of(name->value);
    while (vals[n])
        n++;
    v = mdi_match(value->text, vals, n, true);
    if (v < 0) {
        char *all = talloc_strdup(st, "");
        for (size_t i = 0; all && i < n; i++)
            all = talloc_asprintf_append(all, "%s%s", i ? ", " : "", vals[i]);
        mdi_fail(st, "%s: %s value '%s' (one of: %s)", settings[name->value],
                 v == MDI_MATCH_AMBIGUOUS ? "ambiguous" : "unknown", value->text, all ? all : "");
        talloc_free(all);
        return MDI_FAIL;
    }
    switch (name->value) {
    case S_COLOR:
        st->color = v == 1;
        mdi_printer_set_color(st->out, st->color && st->format == MDI_FMT_TEXT);
        break;
    case S_FORMAT:
        st->format = v == 1 ? MDI_FMT_JSON : MDI_FMT_TEXT;
        mdi_printer_set_format(st->out, st->format);
        mdi_printer_set_color(st->out, st->color && st->format == MDI_FMT_TEXT);
        break;
    case S_PAGER: st->pager = v == 1; break;
    case S_SIGNATURES:
        st->names.flags =
            (st->names.flags & ~(unsigned)SIGNATURE_FLAGS) | (v == 1 ? SIGNATURE_FLAGS : 0);
        break;
    case S_STYLE: mdi_set_style(st, mdi_style_names[v]); break;
    case S_WIDE:
        st->wide = v == 1;
        mdi_state_fit_terminal(st);
        break;
    }
    /* A script or -c changes settings silently, as a shell's `set` does;
     * a person at the shell sees the result. */
    if (st->interactive)
        show(st);
    return MDI_OK;
}

const mdi_cmd mdi_cmd_set = {
    .name = "set",
    .args =
        {{.name = "NAME", .kind = MDI_ARG_CHOICE, .flags = MDI_ARGF_OPTIONAL, .choices = settings},
         {.name = "VALUE",
          .kind = MDI_ARG_CUSTOM,
          .flags = MDI_ARGF_OPTIONAL,
          .complete = complete_value}},
    .summary = "show or change a setting: format, style, signatures, color, pager, wide",
    .help = "Without arguments shows the settings; with NAME and VALUE changes one\n"
            "(silently, except in the interactive shell, which shows the result):\n"
            "  format  text or json: every command's output from now on (--json)\n"
            "  style   how types and members are named: full (exact and canonical,\n"
            "          the default), reflection (as Type.ToString() prints),\n"
            "          il (ILAsm syntax), friendly (short names, C# keywords)\n"
            "  signatures  on or off: methods named with their parameter types,\n"
            "          Enumerable::Sum(System.Collections.Generic.IEnumerable<System.Int64>),\n"
            "          so that overloads differ (mdinspect batch --signatures)\n"
            "  color   on or off (default: on when the output is a terminal and\n"
            "          NO_COLOR is not set; --no-color)\n"
            "  pager   on or off: page the shell's long output through $PAGER\n"
            "          (default `less -FRX`) when the output is a terminal\n"
            "  wide    on or off: on a terminal, tables are cut to its width\n"
            "          (a cut cell ends in an ellipsis) unless wide is on (--wide)\n"
            "Names and values may be abbreviated to a unique prefix. The options\n"
            "--json and --style=STYLE set format and style from the command line.\n",
    .run = run,
};
