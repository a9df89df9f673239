/* `use`: choose the current module, the one most commands look at. */
#include "config.h"

#include "cmd.h"

static int run(mdi_state *st, size_t argc, const mdi_arg *argv)
{
    mdi_module *m = mdi_module_find(st, argv[0].text);
    if (!m)
        return MDI_FAIL;
    mdi_state_use(st, m);
    mdi_record_begin(st->out);
    mdi_uint(st->out, "id", NULL, m->id);
    mdi_str(st->out, "module", NULL, m->name);
    mdi_str(st->out, "path", NULL, m->path);
    mdi_record_end(st->out);
    mdi_textf(st->out, NULL, "current: #%u %s (%s)", m->id, m->name, m->path);
    return MDI_OK;
}

const mdi_cmd mdi_cmd_use = {
    .name = "use",
    .args = {{.name = "MODULE", .kind = MDI_ARG_MODULE}},
    .summary = "make MODULE the current module",
    .help = "Makes MODULE the current module: the one `info`, `dump`, `types` and\n"
            "the other browsing commands look at, and the one the prompt shows.\n"
            "MODULE is #N (see `modules`), the path the module was opened with,\n"
            "its module name (the Module row), its file name, the simple name of\n"
            "its assembly, its MVID (with or without dashes), or a unique prefix\n"
            "of a module name; names in any case.\n",
    .run = run,
};
