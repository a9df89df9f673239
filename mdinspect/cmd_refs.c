/* `refs`: the assemblies the current module references (ECMA-335 II.22.5
 * AssemblyRef), with the public key token computed from a full key, and
 * which open assembly each binds to (<mdtools/typeref.h>,
 * mdt_assemblyref_bind). */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <talloc.h>

#include <mdtools/assembly.h>
#include <mdtools/errors.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>

#include "cmd.h"
#include "resolve.h"

/* For a reference that binds to no open assembly: the assemblies where
 * its TypeRefs were found by name only (tier 3b), as `typerefs` shows
 * them, so the two commands tell the same story. Returns whether any. */
static bool found_by_name(mdi_state *st, const mdt_modview *v, uint32_t rid)
{
    const mdt_image *img = mdi_image(st);
    mdi_printer *p = st->out;
    uint32_t ref = MDT_TOKEN(MDT_TABLE_AssemblyRef, rid);
    uint32_t n = mdt_table_rows_present(img, MDT_TABLE_TypeRef);
    const char *names[8];
    unsigned counts[8], nn = 0, total = 0;
    char *text;
    for (uint32_t t = 1; t <= n && !mdi_interrupted(st); t++) {
        uint32_t tok = MDT_TOKEN(MDT_TABLE_TypeRef, t);
        mdt_resolution r;
        mdt_module_info mi;
        const char *an;
        unsigned k;
        if (mdi_ref_assemblyref(img, tok) != ref ||
            mdt_typeref_resolve(NULL, &r, NULL, v, mdi_current(st)->id, tok, NULL) || !r.resolved ||
            !(r.flags & MDT_RES_OTHER_ASSEMBLY) || mdt_modview_lookup(&mi, v, r.module)) {
            mdt_error_clear();
            continue;
        }
        an = mdi_view_asm_name(v, mi.manifest);
        total++;
        for (k = 0; k < nn && strcmp(names[k], an); k++)
            ;
        if (k == nn && nn < 8) {
            names[nn] = an;
            counts[nn++] = 0;
        }
        if (k < nn)
            counts[k]++;
    }
    mdi_uint(p, "found_by_name", NULL, total);
    mdi_list_begin(p, "found_by_name_in", NULL, NULL, MDI_LIST_SCALARS);
    for (unsigned k = 0; k < nn; k++) {
        mdi_item_begin(p);
        mdi_str(p, "assembly", NULL, names[k]);
        mdi_item_end(p);
    }
    mdi_list_end(p);
    if (!total) {
        mdi_textf(p, "binds to", "not loaded");
        return false;
    }
    text =
        talloc_asprintf(p, "not loaded; %u type%s found by name in", total, total == 1 ? "" : "s");
    for (unsigned k = 0; text && k < nn; k++)
        text = nn == 1 ? talloc_asprintf_append(text, " %s%s", names[k], MDI_OTHER_MARK)
                       : talloc_asprintf_append(text, "%s %s%s (%u)", k ? "," : "", names[k],
                                                MDI_OTHER_MARK, counts[k]);
    mdi_textf(p, "binds to", "%s", text ? text : "");
    talloc_free(text);
    return true;
}

/* Which open assembly the reference binds to, without a type in mind
 * (tiers 1, 2, 3a of <mdtools/typeref.h>); returns whether the text
 * carries the other-assembly mark. */
static bool bind(mdi_state *st, const mdt_modview *v, uint32_t rid)
{
    bool marked = false;
    mdi_printer *p = st->out;
    uintptr_t manifest = 0;
    int tier = 0;
    mdt_module_info mi;
    char buf[1024], msg[512];
    int e = mdt_assemblyref_bind(&manifest, &tier, v, mdi_current(st)->id,
                                 MDT_TOKEN(MDT_TABLE_AssemblyRef, rid));
    if (e == 0 && mdt_modview_lookup(&mi, v, manifest) == 0) {
        const char *path = mi.path ? mi.path : mi.name;
        mdi_str(p, "bound_module", NULL, path);
        mdi_str(p, "bound_assembly", NULL,
                mi.is_manifest ? mdt_identity_format(buf, sizeof buf, &mi.identity) : NULL);
        mdi_uint(p, "bind_tier", NULL, (unsigned)tier);
        mdi_uint(p, "found_by_name", NULL, 0);
        mdi_list_begin(p, "found_by_name_in", NULL, NULL, MDI_LIST_SCALARS);
        mdi_list_end(p);
        mdi_textf(p, "binds to", "%s (tier %d)", path, tier);
    } else {
        mdi_none(p, "bound_module", NULL, NULL);
        mdi_none(p, "bound_assembly", NULL, NULL);
        mdi_none(p, "bind_tier", NULL, NULL);
        if (e == 0 || e == MDT_ENOTFOUND) {
            mdt_error_clear();
            marked = found_by_name(st, v, rid);
        } else {
            mdi_textf(p, "binds to", "<error: %s>", mdi_errmsg_here(msg, sizeof msg));
        }
    }
    mdt_error_clear();
    return marked;
}

static int run(mdi_state *st, size_t argc, const mdi_arg *argv)
{
    const mdt_image *img = mdi_image(st);
    mdi_printer *p = st->out;
    uint32_t n = mdt_table_rows(img, MDT_TABLE_AssemblyRef);
    int bad = 0;
    bool marked = false;
    char caption[64], buf[1024], msg[512];
    mdt_modview *v = mdi_view(st);

    if (!v)
        return MDI_FAIL;

    snprintf(caption, sizeof caption, "%" PRIu32 " assembly reference%s", n, n == 1 ? "" : "s");
    mdi_list_begin(p, NULL, caption, NULL, 0);
    n = mdt_table_rows_present(img, MDT_TABLE_AssemblyRef);
    for (uint32_t rid = 1; rid <= n && !mdi_interrupted(st); rid++) {
        mdt_identity id;
        mdi_item_begin(p);
        mdi_token(p, "token", "token", MDT_TOKEN(MDT_TABLE_AssemblyRef, rid));
        if (mdt_assemblyref_identity(&id, img, rid) != 0) {
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
        marked |= bind(st, v, rid);
        mdi_item_end(p);
    }
    if (!mdi_interrupted(st) && mdi_rows_missing(st, img, MDT_TABLE_AssemblyRef))
        bad++;
    mdi_list_end(p);
    mdi_other_legend(st, marked);
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
            "version or key, nearest first), or \"not loaded\", with the assemblies\n"
            "where its TypeRefs were found by name only (tier 3, marked *), as\n"
            "`typerefs` shows them.\n",
    .run = run,
};
