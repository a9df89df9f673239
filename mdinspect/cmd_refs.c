/* `refs`: the assemblies the current module references (ECMA-335 II.22.5
 * AssemblyRef), with the public key token computed from a full key, and
 * which open assembly each binds to (<mdtools/typeref.h>,
 * mdt_assemblyref_bind). */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>

#include <talloc.h>

#include <mdtools/assembly.h>
#include <mdtools/errors.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>

#include "cmd.h"
#include "resolve.h"

/* Which open assembly the reference binds to, without a type in mind
 * (tiers 1, 2, 3a of <mdtools/typeref.h>). */
static void bind(mdi_state *st, const mdt_modview *v, uint32_t rid)
{
    mdi_printer *p = st->out;
    uintptr_t manifest = 0;
    int tier = 0;
    mdt_module_info mi;
    char buf[1024], msg[512];
    int e = mdt_assemblyref_bind(v, mdi_current(st)->id, MDT_TOKEN(MDT_TABLE_AssemblyRef, rid),
                                 &manifest, &tier);
    if (e == 0 && mdt_modview_lookup(v, manifest, &mi) == 0) {
        const char *path = mi.path ? mi.path : mi.name;
        mdi_str(p, "bound_module", NULL, path);
        mdi_str(p, "bound_assembly", NULL,
                mi.is_manifest ? mdt_identity_format(buf, sizeof buf, &mi.identity) : NULL);
        mdi_uint(p, "bind_tier", NULL, (unsigned)tier);
        mdi_textf(p, "binds to", "%s (tier %d)", path, tier);
    } else {
        mdi_none(p, "bound_module", NULL, NULL);
        mdi_none(p, "bound_assembly", NULL, NULL);
        mdi_none(p, "bind_tier", NULL, NULL);
        if (e == 0 || e == MDT_ENOTFOUND)
            mdi_textf(p, "binds to", "not loaded");
        else
            mdi_textf(p, "binds to", "<error: %s>", mdi_errmsg_here(msg, sizeof msg));
    }
    mdt_clear_error();
}

static int run(mdi_state *st, size_t argc, const mdi_arg *argv)
{
    const mdt_image *img = mdi_image(st);
    mdi_printer *p = st->out;
    uint32_t n = mdt_table_rows(img, MDT_TABLE_AssemblyRef);
    int bad = 0;
    char caption[64], buf[1024], msg[512];
    mdt_modview *v = mdi_view(st);

    if (!v)
        return MDI_FAIL;

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
        bind(st, v, rid);
        mdi_item_end(p);
    }
    mdi_list_end(p);
    mdt_modview_release(v);
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
            "full public key), flags (PublicKey, Retargetable, ...), and which open\n"
            "assembly the reference binds to, with the tier (1: exact identity;\n"
            "2: same name and key, nearest higher version; 3: same name, other\n"
            "version or key, nearest first), or \"not loaded\".\n",
    .run = run,
};
