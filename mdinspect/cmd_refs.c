/* `refs`: the assemblies the current module references (ECMA-335 II.22.5
 * AssemblyRef), with the public key token computed from a full key. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>

#include <talloc.h>

#include <mdtools/assembly.h>
#include <mdtools/errors.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>

#include "cmd.h"

static int run(mdi_state *st, size_t argc, const mdi_arg *argv)
{
    const mdt_image *img = mdi_image(st);
    mdi_printer *p = st->out;
    uint32_t n = mdt_table_rows(img, MDT_TABLE_AssemblyRef);
    int bad = 0;
    char caption[64], buf[1024], msg[512];

    snprintf(caption, sizeof caption, "%" PRIu32 " assembly reference%s", n, n == 1 ? "" : "s");
    mdi_list_begin(p, NULL, caption, NULL, 0);
    for (uint32_t rid = 1; rid <= n && !mdi_interrupted(st); rid++) {
        mdt_identity id;
        mdi_item_begin(p);
        mdi_token(p, "token", "token", MDT_TOKEN(MDT_TABLE_AssemblyRef, rid));
        if (mdt_assemblyref_identity(img, rid, &id) != 0) {
            mdi_item_error(p, "error", mdi_errmsg_here(msg, sizeof msg));
            mdi_item_end(p);
            bad++;
            continue;
        }
        mdi_str(p, "name", "name", id.name);
        snprintf(buf, sizeof buf, "%u.%u.%u.%u", id.version[0], id.version[1], id.version[2],
                 id.version[3]);
        mdi_str(p, "version", "version", buf);
        mdi_str(p, "culture", "culture", id.culture && id.culture[0] ? id.culture : "neutral");
        if (id.has_token) {
            for (int i = 0; i < 8; i++)
                snprintf(buf + 2 * i, 3, "%02x", id.public_key_token[i]);
            mdi_str(p, "public_key_token", "public key token", buf);
        } else {
            mdi_none(p, "public_key_token", "public key token", "null");
        }
        mdi_flags(p, "flags", NULL, id.flags, mdi_assembly_flags);
        {
            char *w = mdi_flag_words(p, id.flags, mdi_assembly_flags);
            mdi_textf(p, "flags", "%s", w ? w : "");
            talloc_free(w);
        }
        mdi_str(p, "assembly", NULL, mdt_identity_format(buf, sizeof buf, &id));
        mdi_item_end(p);
    }
    mdi_list_end(p);
    if (bad)
        return mdi_fail(st, "%s: %d AssemblyRef row%s could not be read", mdi_image_path(st), bad,
                        bad == 1 ? "" : "s");
    return MDI_OK;
}

const mdi_cmd mdi_cmd_refs = {
    .name = "refs",
    .flags = MDI_CMD_IMAGE,
    .summary = "the assemblies the module references",
    .help = "Lists the AssemblyRef rows of the current module: token, name,\n"
            "version, culture, public key token (computed when the row holds the\n"
            "full public key) and flags (PublicKey, Retargetable, ...).\n",
    .run = run,
};
