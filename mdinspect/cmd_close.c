/* `close`: forget open modules (the current one, one named, or all). */
#include "config.h"

#include <talloc.h>

#include "cmd.h"

enum { A_ALL, A_MODULE };

static void closed(mdi_state *st, const mdi_module *m, const mdi_module *next)
{
    mdi_about(st, m);
    mdi_record_begin(st->out);
    mdi_uint(st->out, "id", NULL, m->id);
    mdi_str(st->out, "module", NULL, m->name);
    mdi_str(st->out, "path", NULL, m->path);
    mdi_record_end(st->out);
    mdi_about(st, mdi_current(st));
    if (next)
        mdi_textf(st->out, NULL, "closed #%u %s; current: #%u %s", m->id, m->name, next->id,
                  next->name);
    else
        mdi_textf(st->out, NULL, "closed #%u %s", m->id, m->name);
}

static int run(mdi_state *st, size_t argc, const mdi_arg *argv)
{
    const mdi_arg *which = mdi_arg_of(argc, argv, A_MODULE);
    mdi_module *m, *next;
    bool was_current;

    if (mdi_arg_of(argc, argv, A_ALL)) {
        if (which)
            return mdi_fail(st, "-a and a MODULE: close which?");
        while (st->nmods) {
            closed(st, st->mods[0], NULL);
            mdi_state_close(st, st->mods[0]);
        }
        return MDI_OK;
    }
    m = which ? mdi_module_find(st, which->text) : mdi_current(st);
    if (!m)
        return which ? MDI_FAIL : mdi_fail(st, "no module is open");
    /* Another module becomes current, so the session goes on. */
    was_current = m == mdi_current(st);
    next = was_current ? (st->mods[0] != m ? st->mods[0]
                          : st->nmods > 1  ? st->mods[1]
                                           : NULL)
                       : NULL;
    closed(st, m, next);
    mdi_state_close(st, m);
    if (next)
        mdi_state_use(st, next);
    return MDI_OK;
}

const mdi_cmd mdi_cmd_close = {
    .name = "close",
    .args = {MDI_FLAG_ALL("close every open module"),
             {.name = "MODULE", .kind = MDI_ARG_MODULE, .flags = MDI_ARGF_OPTIONAL}},
    .summary = "close the current module, or MODULE",
    .help = "Closes the current module, or the MODULE named (#N, a module name or a\n"
            "unique prefix of one, or its path), and forgets it. When the current\n"
            "module is closed, the first of the others becomes current.\n",
    .run = run,
};
