/* `modules`: the open modules with their identity (ECMA-335 II.22.2
 * Assembly, II.22.30 Module): number, module name, kind of image, assembly
 * display name, MVID and path. */
#include "config.h"

#include <mdtools/mdtools.h>

#include "cmd.h"

static int run(mdi_state *st, size_t argc, const mdi_arg *argv)
{
    mdi_printer *p = st->out;
    char caption[64], buf[1024], msg[512];
    int status = MDI_OK;

    snprintf(caption, sizeof caption, "%zu module%s open", st->nmods, st->nmods == 1 ? "" : "s");
    mdi_list_begin(p, NULL, caption, NULL, 0);
    for (size_t i = 0; i < st->nmods; i++) {
        mdi_module *m = st->mods[i];
        mdt_identity id;
        uint8_t mvid[16];
        int e;
        mdi_about(st, m);
        mdi_item_begin(p);
        mdi_uint(p, "id", NULL, m->id);
        mdi_textf(p, "", "%s#%u", m == st->cur ? "*" : " ", m->id);
        mdi_bool(p, "current", NULL, m == st->cur);
        mdi_str(p, "module", "module", m->name);
        mdi_str(p, "kind", "kind", mdt_image_kind_name(mdt_image_kind(m->img)));
        e = mdt_assembly_identity(&id, m->img);
        if (e == 0) {
            mdi_str(p, "assembly", "assembly", mdt_identity_format(buf, sizeof buf, &id));
        } else if (e == MDT_ENOTFOUND) {
            mdi_none(p, "assembly", "assembly", "-");
        } else {
            mdi_error(p, "assembly", "assembly", mdi_errmsg_here(msg, sizeof msg));
            status = MDI_FAIL;
        }
        e = mdt_image_mvid(mvid, m->img);
        if (e == 0) {
            mdi_guid(p, "mvid", "MVID", mvid);
        } else if (e == MDT_ENOTFOUND) {
            mdi_none(p, "mvid", "MVID", "-");
        } else {
            mdi_error(p, "mvid", "MVID", mdi_errmsg_here(msg, sizeof msg));
            status = MDI_FAIL;
        }
        mdt_error_clear();
        mdi_str(p, "path", "path", m->path);
        mdi_item_end(p);
    }
    mdi_list_end(p);
    mdi_about(st, mdi_current(st));
    if (status != MDI_OK)
        mdi_fail(st, "the identity of some modules could not be read");
    return status;
}

const mdi_cmd mdi_cmd_modules = {
    .name = "modules",
    .summary = "the open modules: number, name, kind, identity, MVID, path",
    .help = "Lists the open modules in the order they were opened: the number to\n"
            "use them by (#N; `*` marks the current one), the module name (Module\n"
            "table), the kind of image, the identity of the assembly it defines\n"
            "(none for a .netmodule or a portable PDB), the MVID, and the path.\n",
    .run = run,
};
