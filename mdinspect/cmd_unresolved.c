/* `unresolved`: the references of the current module (or of all open
 * modules) that do not resolve over the open modules, counted by reason and
 * by the assembly they ask for (ECMA-335 II.22.38 TypeRef, II.22.25
 * MemberRef, II.22.14 ExportedType; the rules of <mdtools/typeref.h>). */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <talloc.h>

#include <mdtools/assembly.h>
#include <mdtools/errors.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>

#include "cmd.h"
#include "resolve.h"

typedef struct group {
    const mdi_module *module; /* with -a: the module the references are in */
    int reason;
    char *assembly; /* NULL: the reference names no AssemblyRef */
    char *version;
    uint32_t n[3];                /* TypeRefs, MemberRefs, ExportedTypes */
    char *example;                /* the first reference's name */
    const mdt_image *example_img; /* and where it is */
    uint32_t example_token;
} group;

static const unsigned tables[3] = {MDT_TABLE_TypeRef, MDT_TABLE_MemberRef, MDT_TABLE_ExportedType};

static int cmp_str(const char *a, const char *b)
{
    if (!a || !b)
        return !a - !b;
    return strcmp(a, b);
}

static int cmp_group(const void *pa, const void *pb)
{
    const group *a = pa, *b = pb;
    int c;
    if (a->module != b->module)
        return a->module->id < b->module->id ? -1 : 1;
    if (a->reason != b->reason)
        return a->reason < b->reason ? -1 : 1;
    if ((c = cmp_str(a->assembly, b->assembly)))
        return c;
    return cmp_str(a->version, b->version);
}

static int run(mdi_state *st, size_t argc, const mdi_arg *argv)
{
    bool all = mdi_arg_of(argc, argv, 0) != NULL;
    mdi_printer *p = st->out;
    mdi_module *cur = mdi_current(st);
    void *tmp = talloc_new(st);
    group *g = NULL;
    size_t ng = 0;
    uint32_t total = 0, seen = 0, runtime = 0;
    int bad = 0;
    char caption[160];
    mdt_modview *v = mdi_view(st);

    if (!v || !tmp) {
        talloc_free(tmp);
        mdt_modview_release(v);
        return MDI_FAIL;
    }
    for (size_t i = 0; i < st->nmods && !mdi_interrupted(st); i++) {
        mdi_module *m = st->mods[i];
        if (!all && m != cur)
            continue;
        for (unsigned k = 0; k < 3; k++) {
            /* Rows past the tables stream cannot be resolved: counted
             * as errors, not tried one by one. */
            uint32_t n = mdt_table_rows_present(m->img, tables[k]);
            bad += (int)(mdt_table_rows(m->img, tables[k]) - n);
            for (uint32_t rid = 1; rid <= n && !mdi_interrupted(st); rid++) {
                uint32_t tok = MDT_TOKEN(tables[k], rid), ar;
                mdt_resolution r;
                mdt_identity id;
                char *asmname = NULL, *ver = NULL, msg[400];
                size_t j;
                seen++;
                if (mdt_token_resolve(tmp, &r, NULL, v, m->id, tok, NULL)) {
                    mdt_error_clear();
                    bad++;
                    continue;
                }
                if (r.resolved)
                    continue;
                if (r.reason == MDT_RES_RUNTIME) {
                    runtime++; /* nothing is missing */
                    continue;
                }
                total++;
                ar = mdi_ref_assemblyref(m->img, tok);
                if (ar && mdt_assemblyref_identity(&id, m->img, MDT_TOKEN_RID(ar)) == 0) {
                    asmname = talloc_strdup(tmp, id.name);
                    ver = talloc_asprintf(tmp, "%u.%u.%u.%u", id.version[0], id.version[1],
                                          id.version[2], id.version[3]);
                }
                mdt_error_clear();
                for (j = 0; j < ng; j++)
                    if (g[j].module == (all ? m : NULL) && g[j].reason == r.reason &&
                        !cmp_str(g[j].assembly, asmname) && !cmp_str(g[j].version, ver))
                        break;
                if (j == ng) {
                    group *ng2 = talloc_realloc(tmp, g, group, ng + 1);
                    if (!ng2) {
                        talloc_free(tmp);
                        mdt_modview_release(v);
                        return mdi_fail(st, "out of memory");
                    }
                    g = ng2;
                    memset(&g[ng], 0, sizeof g[ng]);
                    g[ng].module = all ? m : NULL;
                    g[ng].reason = r.reason;
                    g[ng].assembly = asmname;
                    g[ng].version = ver;
                    g[ng].example = mdi_ref_name(st, tmp, m->img, tok, msg, sizeof msg);
                    g[ng].example_img = m->img;
                    g[ng].example_token = tok;
                    ng++;
                }
                g[j].n[k]++;
            }
        }
    }
    mdt_modview_release(v);
    if (ng)
        qsort(g, ng, sizeof *g, cmp_group);
    if (runtime)
        snprintf(caption, sizeof caption,
                 "%" PRIu32 " of %" PRIu32 " reference%s unresolved (%" PRIu32
                 " runtime-provided array method%s not counted)",
                 total, seen, seen == 1 ? "" : "s", runtime, runtime == 1 ? "" : "s");
    else
        snprintf(caption, sizeof caption, "%" PRIu32 " of %" PRIu32 " reference%s unresolved",
                 total, seen, seen == 1 ? "" : "s");
    mdi_list_begin(p, NULL, caption, NULL, 0);
    for (size_t j = 0; j < ng; j++) {
        mdi_item_begin(p);
        if (g[j].module) {
            mdi_about(st, g[j].module);
            mdi_str(p, "module", "module", g[j].module->path);
        }
        mdi_str(p, "reason", "reason", mdt_resolution_reason_name(g[j].reason));
        if (g[j].assembly) {
            mdi_str(p, "assembly", "assembly", g[j].assembly);
            mdi_str(p, "version", "version", g[j].version);
        } else {
            mdi_none(p, "assembly", "assembly", "-");
            mdi_none(p, "version", "version", "-");
        }
        mdi_uint(p, "typerefs", "typerefs", g[j].n[0]);
        mdi_uint(p, "memberrefs", "memberrefs", g[j].n[1]);
        mdi_uint(p, "exported", "exported", g[j].n[2]);
        mdi_str(p, "example", "for example", g[j].example ? g[j].example : "?");
        mdi_metadata_name(st, "example_metadata_name", g[j].example_img, g[j].example_token);
        mdi_item_end(p);
    }
    mdi_list_end(p);
    mdi_about(st, cur);
    talloc_free(tmp);
    if (bad)
        return mdi_fail(st, "%d reference%s could not be resolved (an error, not a reason)", bad,
                        bad == 1 ? "" : "s");
    return MDI_OK;
}

const mdi_cmd mdi_cmd_unresolved = {
    .name = "unresolved",
    .args = {MDI_FLAG_ALL("the references of every open module")},
    .flags = MDI_CMD_IMAGE,
    .summary = "references that do not resolve, by reason and assembly",
    .help = "Resolves every TypeRef, MemberRef and ExportedType of the current\n"
            "module (of every open module with -a) over the open modules and\n"
            "counts those that do not resolve, grouped by reason and by the\n"
            "assembly (name and version) the reference asks for (- when it names\n"
            "none: ModuleRef, Module and nil scopes). Each group shows its counts\n"
            "per table and the name of its first reference; with -a, per module\n"
            "too, each group naming its module. The methods the runtime provides\n"
            "for arrays are not unresolved: they are counted apart. Use `typerefs` and\n"
            "`memberrefs` for every reference, `resolve -t` for why.\n",
    .run = run,
};
