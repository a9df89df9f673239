/* `derived`: the types of the open modules that extend or implement a
 * type (TypeDef Extends, ECMA-335 II.22.37; InterfaceImpl, II.22.23),
 * with -a the transitive closure: the library's mdt_derived_types over
 * the view of the open modules (resolve.c), which resolves TypeRefs and
 * takes a generic instantiation (`Box<int>`) to its definition. A TypeRef
 * argument is resolved first, to the TypeDef it names. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <talloc.h>

#include <mdtools/errors.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>
#include <mdtools/typeref.h>

#include "cmd.h"
#include "index.h"
#include "resolve.h"

static mdi_module *module_by_id(mdi_state *st, uintptr_t id)
{
    for (size_t i = 0; i < st->nmods; i++)
        if (st->mods[i]->id == id)
            return st->mods[i];
    return NULL;
}

/* A type's name in its module, in the session's style; "<error: ...>"
 * when it does not read. */
static char *name_of(mdi_state *st, void *mem, mdi_module *m, uint32_t tok, int *bad)
{
    char msg[400], *s = m ? mdi_name(st, mem, m->img, tok) : NULL;
    if (s)
        return s;
    (*bad)++;
    return talloc_asprintf(mem, "<error: %s>", mdi_cell_error(msg, sizeof msg));
}

static int run(mdi_state *st, size_t argc, const mdi_arg *argv)
{
    const mdi_arg *what = mdi_arg_of(argc, argv, 0);
    bool all = mdi_arg_of(argc, argv, 1) != NULL;
    mdi_printer *p = st->out;
    mdi_module *m, *cur = mdi_current(st);
    mdt_modview *v;
    mdt_derived *d = NULL;
    size_t n = 0;
    uint32_t tok;
    int bad = 0;
    char *target, caption[600], msg[512];

    if (mdi_arg_type(st, what->text, &m, &tok))
        return MDI_FAIL;
    /* How the argument is named in a message: the text, and the token
     * when the text was a name. */
    snprintf(caption, sizeof caption, strncmp(what->text, "0x", 2) ? "%s (0x%08" PRIx32 ")" : "%s",
             what->text, tok);
    if (!(v = mdi_view(st)))
        return MDI_FAIL;
    if (MDT_TOKEN_TABLE(tok) == MDT_TABLE_TypeRef) {
        mdt_resolution r;
        if (mdt_typeref_resolve(NULL, &r, NULL, v, m->id, tok, NULL) || !r.resolved ||
            !(m = module_by_id(st, r.module))) {
            mdt_error_clear();
            mdt_modview_release(v);
            return mdi_fail(st,
                            "%s does not resolve to a type of an open module (see "
                            "'resolve')",
                            caption);
        }
        tok = r.token;
    } else if (MDT_TOKEN_TABLE(tok) != MDT_TABLE_TypeDef) {
        mdt_modview_release(v);
        return mdi_fail(st, "%s is a TypeSpec: give the type it instantiates", caption);
    }
    if (mdt_derived_types(p, &d, &n, v, m->id, tok, all ? MDT_DERIVED_ALL : 0)) {
        mdt_modview_release(v);
        return mdi_fail(st, "%s", mdi_errmsg_here(msg, sizeof msg));
    }
    target = name_of(st, p, m, tok, &bad);
    snprintf(caption, sizeof caption, "types %s %s (0x%08" PRIx32 ", #%u %s)",
             all ? "derived from" : "that extend or implement", target, tok, m->id, m->name);
    mdi_record_begin(p);
    mdi_str(p, "module", NULL, m->name);
    mdi_token(p, "token", NULL, tok);
    mdi_str(p, "name", NULL, target);
    mdi_metadata_name(st, NULL, m->img, tok);
    mdi_bool(p, "all", NULL, all);
    mdi_list_begin(p, "derived", caption, "none", 0);
    for (size_t i = 0; i < n && !mdi_interrupted(st); i++) {
        mdi_module *dm = module_by_id(st, d[i].module);
        mdi_module *pm = module_by_id(st, d[i].parent_module);
        char *name = name_of(st, p, dm, d[i].token, &bad);
        mdi_item_begin(p);
        mdi_str(p, "module", "module", dm ? dm->name : "?");
        mdi_token(p, "token", "token", d[i].token);
        mdi_str(p, "relation", "relation", d[i].interface ? "implements" : "extends");
        if (all) {
            char *parent = name_of(st, p, pm, d[i].parent, &bad);
            mdi_uint(p, "depth", "depth", d[i].depth);
            mdi_str(p, "name", "name", name);
            if (dm)
                mdi_metadata_name(st, NULL, dm->img, d[i].token);
            mdi_object_begin(p, "parent", NULL);
            mdi_str(p, "module", NULL, pm ? pm->name : "?");
            mdi_token(p, "token", NULL, d[i].parent);
            mdi_str(p, "name", NULL, parent);
            mdi_object_end(p);
            mdi_textf(p, "parent", "%s", parent);
            talloc_free(parent);
        } else {
            mdi_str(p, "name", "name", name);
            if (dm)
                mdi_metadata_name(st, NULL, dm->img, d[i].token);
        }
        mdi_token(p, "via", NULL, d[i].via);
        mdi_item_end(p);
        talloc_free(name);
    }
    mdi_list_end(p);
    mdi_record_end(p);
    talloc_free(target);
    talloc_free(d);
    mdt_modview_release(v);
    mdi_about(st, cur);
    if (bad)
        return mdi_fail(st, "%d name%s could not be read", bad, bad == 1 ? "" : "s");
    return MDI_OK;
}

const mdi_cmd mdi_cmd_derived = {
    .name = "derived",
    .args = {{.name = "TYPE", .kind = MDI_ARG_TYPE},
             MDI_FLAG_ALL("the transitive closure: types derived through others too")},
    .flags = MDI_CMD_IMAGE,
    .summary = "the types that extend or implement a type, across the open modules",
    .help = "Lists the types of every open module whose base type is TYPE or that\n"
            "implement it (its InterfaceImpl rows name it), each with its module,\n"
            "token, relation (extends or implements) and name. A base or interface\n"
            "named by a TypeRef counts when it resolves to TYPE over the open\n"
            "modules (as `resolve` shows, forwarders followed); a generic\n"
            "instantiation counts for its definition (`class IntBox : Box<int>`\n"
            "derives from `Box<T>`). With -a, the transitive closure, breadth\n"
            "first: the types derived from those too, with their depth (1:\n"
            "directly) and the type of the list each one extends or implements;\n"
            "each type once, so damaged metadata with a cycle ends.\n"
            "\n"
            "TYPE is a name as `type` takes it, or a TypeDef or TypeRef token of\n"
            "the current module (a TypeRef is resolved to the type it names).\n",
    .run = run,
};
