/* `types`: the TypeDefs (ECMA-335 II.22.37) of the current module, or of
 * every open module, in name order, optionally those matching a glob:
 * token, kind, visibility and name in the session's style. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>

#include <talloc.h>

#include <mdtools/tables.h>
#include <mdtools/token.h>

#include "cmd.h"
#include "index.h"

enum { A_ALL, A_GLOB };

/* One module's matching types; returns the number printed, or -1 when the
 * index could not be built. */
static long module_types(mdi_state *st, mdi_module *m, const char *glob, bool all, long *bad)
{
    mdi_printer *p = st->out;
    const mdi_index *ix = mdi_index_of(m);
    long n = 0;
    if (!ix)
        return -1;
    *bad += (long)ix->nbad;
    mdi_about(st, m);
    for (size_t i = 0; i < ix->ntypes && !mdi_interrupted(st); i++) {
        const mdi_typeent *t = &ix->types[i];
        mdt_row r;
        char *name;
        if (glob && !mdi_type_matches(t, glob))
            continue;
        n++;
        mdi_item_begin(p);
        if (all)
            mdi_str(p, "module", "module", m->name);
        mdi_token(p, "token", "token", t->token);
        mdi_str(p, "kind", "kind", mdi_kind_name(m->img, t->token));
        if (mdt_row_get(&r, m->img, MDT_TABLE_TypeDef, MDT_TOKEN_RID(t->token)) == 0) {
            uint32_t fl = mdt_row_raw(&r, MDT_COL_TypeDef_Flags);
            for (const mdi_flagname *f = mdi_type_flags; f->mask == 0x7; f++)
                if (mdi_flag_set(fl, f))
                    mdi_str(p, "visibility", "visibility", f->name);
        }
        name = mdi_name(st, p, m->img, t->token);
        if (name) {
            mdi_str(p, "name", "name", name);
        } else {
            char msg[400];
            mdi_error(p, "name", "name", mdi_cell_error(msg, sizeof msg));
            (*bad)++;
        }
        mdi_str(p, "metadata_name", NULL, t->key);
        talloc_free(name);
        mdi_item_end(p);
    }
    return n;
}

static int run(mdi_state *st, size_t argc, const mdi_arg *argv)
{
    const mdi_arg *glob = mdi_arg_of(argc, argv, A_GLOB);
    bool all = mdi_arg_of(argc, argv, A_ALL) != NULL;
    mdi_printer *p = st->out;
    long bad = 0;
    char caption[256];

    if (!all && !mdi_current(st))
        return mdi_fail(st, "no module is open (use 'open PATH')");
    if (all)
        snprintf(caption, sizeof caption, "types of %zu module%s%s%s", st->nmods,
                 st->nmods == 1 ? "" : "s", glob ? " matching " : "", glob ? glob->text : "");
    else
        snprintf(caption, sizeof caption, "types of %s%s%s", st->cur->name,
                 glob ? " matching " : "", glob ? glob->text : "");
    mdi_list_begin(p, NULL, caption, "none", 0);
    for (size_t i = 0; i < st->nmods && !mdi_interrupted(st); i++) {
        mdi_module *m = all ? st->mods[i] : st->cur;
        long n = module_types(st, m, glob ? glob->text : NULL, all, &bad);
        if (n < 0) {
            mdi_list_end(p);
            mdi_about(st, mdi_current(st));
            return mdi_fail(st, "out of memory");
        }
        if (!all)
            break;
    }
    mdi_list_end(p);
    mdi_about(st, mdi_current(st));
    if (bad)
        return mdi_fail(st, "%ld type name%s could not be read", bad, bad == 1 ? "" : "s");
    return MDI_OK;
}

const mdi_cmd mdi_cmd_types = {
    .name = "types",
    .args = {MDI_FLAG_ALL("the types of every open module"),
             {.name = "GLOB", .kind = MDI_ARG_PATTERN, .flags = MDI_ARGF_OPTIONAL}},
    .flags = 0,
    .summary = "the types a module defines, by name",
    .help = "Lists the types the current module defines (TypeDef rows), in name\n"
            "order (numbers in names by value: Item2 before Item10): token, kind\n"
            "(class, interface, struct, enum, delegate), visibility, and name in\n"
            "the style of `set style` (a generic type with its parameters:\n"
            "`Dictionary<TKey,TValue>`). With -a, those of every open module.\n"
            "With GLOB, only the types it matches: the full\n"
            "metadata name (`System.Collections.*`), the same without arity\n"
            "suffixes, or, for a GLOB without '.' or '+', the simple name\n"
            "(`*Attribute`, `List` for List`1). Case is ignored when GLOB has no\n"
            "upper-case letter.\n",
    .run = run,
};
