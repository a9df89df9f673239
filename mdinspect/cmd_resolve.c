/* `resolve`: where a TypeRef, MemberRef or ExportedType of the current
 * module leads over all open modules (ECMA-335 II.22.38, II.22.25,
 * II.22.14; the binding tiers and forwarder rules of <mdtools/typeref.h>),
 * with the resolver's trace on request. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>

#include <talloc.h>

#include <mdtools/errors.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>

#include "cmd.h"
#include "index.h"
#include "resolve.h"

static const char *const trace_kinds[] = {"step", "candidate", "passed", "chosen", "hop", "result"};

static void print_trace(mdi_state *st, const mdt_modview *v, const mdt_trace *tr)
{
    mdi_printer *p = st->out;
    mdi_list_begin(p, "trace", "trace", "empty", 0);
    for (size_t i = 0; tr && i < tr->n; i++) {
        const mdt_trace_entry *e = &tr->entries[i];
        mdt_module_info mi;
        mdi_item_begin(p);
        mdi_str(p, "kind", "kind",
                e->kind >= 0 && e->kind <= MDT_TRACE_RESULT ? trace_kinds[e->kind] : "?");
        if (e->module && mdt_modview_lookup(&mi, v, e->module) == 0)
            mdi_str(p, "module", "module", mdi_view_module_label(v, e->module));
        else
            mdi_none(p, "module", "module", "-");
        if (e->token)
            mdi_token(p, "token", "token", e->token);
        else
            mdi_none(p, "token", "token", "-");
        if (e->kind == MDT_TRACE_CANDIDATE || e->kind == MDT_TRACE_CHOSEN)
            mdi_uint(p, "tier", "tier", e->tier);
        else
            mdi_none(p, "tier", "tier", "-");
        mdi_str(p, "text", "", e->text ? e->text : "");
        mdi_item_end(p);
    }
    mdi_list_end(p);
}

static void print_where(mdi_printer *p, const mdt_modview *v, const char *key, const char *label,
                        uintptr_t module, uint32_t token)
{
    mdt_module_info mi;
    char key2[32];
    snprintf(key2, sizeof key2, "%s_token", key);
    if (!module || mdt_modview_lookup(&mi, v, module)) {
        mdi_none(p, key, label, NULL);
        mdi_none(p, key2, NULL, NULL);
        return;
    }
    mdi_str(p, key, NULL, mdi_view_module_label(v, module));
    if (token) {
        mdi_token(p, key2, NULL, token);
        mdi_textf(p, label, "%s 0x%08" PRIx32, mdi_view_module_label(v, module), token);
    } else {
        mdi_none(p, key2, NULL, NULL);
        mdi_textf(p, label, "%s", mdi_view_module_label(v, module));
    }
}

static int one(mdi_state *st, const mdt_modview *v, uint32_t tok, bool want_trace)
{
    const mdt_image *img = mdi_image(st);
    mdi_printer *p = st->out;
    mdt_resolution r;
    mdt_trace *tr = NULL;
    void *tmp = talloc_new(st);
    char *name, msg[400];
    bool marked;
    int e;

    switch (MDT_TOKEN_TABLE(tok)) {
    case MDT_TABLE_TypeRef:
    case MDT_TABLE_MemberRef:
    case MDT_TABLE_ExportedType: break;
    default:
        talloc_free(tmp);
        return mdi_fail(st, "0x%08" PRIx32 " is not a TypeRef, MemberRef or ExportedType token",
                        tok);
    }
    e = mdt_token_resolve(tmp, &r, want_trace ? &tr : NULL, v, mdi_current(st)->id, tok, NULL);
    if (e) {
        mdi_report_lib(st, mdi_image_path(st));
        talloc_free(tmp);
        return MDI_FAIL;
    }
    mdi_record_begin(p);
    mdi_str(p, "module", NULL, mdi_image_path(st));
    mdi_token(p, "token", "token", tok);
    name = mdi_ref_name(st, tmp, img, tok, msg, sizeof msg);
    if (name)
        mdi_str(p, "name", "name", name);
    else
        mdi_error(p, "name", "name", msg);
    mdi_metadata_name(st, NULL, img, tok);
    marked = mdi_print_resolution(st, v, img, tok, &r, false);
    if (!r.resolved) {
        print_where(p, v, "where", "stopped at", r.where_module, r.where_token);
        print_where(p, v, "instead", "instead", r.instead_module, r.instead_token);
    }
    mdi_list_begin(p, "flags", NULL, NULL, MDI_LIST_SCALARS);
    {
        static const char *const fl[] = {"ambiguous", "hint-mismatch", "sig-by-name", "cached",
                                         "other-assembly"};
        char *text = talloc_strdup(tmp, "");
        for (unsigned i = 0; i < 5; i++)
            if (r.flags & (1u << i)) {
                mdi_item_begin(p);
                mdi_str(p, "flag", NULL, fl[i]);
                mdi_item_end(p);
                if (text)
                    text = talloc_asprintf_append(text, "%s%s", text[0] ? " " : "", fl[i]);
            }
        mdi_list_end(p);
        if (text && text[0])
            mdi_textf(p, "flags", "%s", text);
    }
    if (want_trace)
        print_trace(st, v, tr);
    mdi_record_end(p);
    mdi_other_legend(st, marked);
    talloc_free(tmp);
    return MDI_OK;
}

static int run(mdi_state *st, size_t argc, const mdi_arg *argv)
{
    const mdi_arg *tok_arg = mdi_arg_of(argc, argv, 1);
    bool want_trace = mdi_arg_of(argc, argv, 0) != NULL;
    uint32_t *toks;
    size_t n;
    int status = MDI_OK;
    mdt_modview *v;

    if (mdi_arg_tokens(st, st, tok_arg->text, &toks, &n))
        return MDI_FAIL;
    if (!(v = mdi_view(st))) {
        talloc_free(toks);
        return MDI_FAIL;
    }
    for (size_t i = 0; i < n && !mdi_interrupted(st); i++)
        if (one(st, v, toks[i], want_trace) != MDI_OK)
            status = MDI_FAIL;
    mdt_modview_release(v);
    talloc_free(toks);
    return status;
}

const mdi_cmd mdi_cmd_resolve = {
    .name = "resolve",
    .args = {{.name = "-t",
              .kind = MDI_ARG_FLAG,
              .about = "show the trace: every candidate "
                       "considered and why it was passed over"},
             {.name = "TOKEN", .kind = MDI_ARG_TOKEN}},
    .flags = MDI_CMD_IMAGE,
    .summary = "where a TypeRef, MemberRef or ExportedType leads over the open modules",
    .help = "Resolves a TypeRef, MemberRef or ExportedType of the current module\n"
            "over all open modules, which form one module set (nothing else is\n"
            "loaded). A resolved reference shows the assembly, module and token\n"
            "that define it, the binding tier of its AssemblyRef (1: exact\n"
            "identity; 2: same name and key, nearest higher version; 3: anything\n"
            "else loaded; 0: no AssemblyRef bound), the forwarder hops followed\n"
            "and the assemblies visited. An unresolved one shows the reason\n"
            "(not-loaded, no-such-type, cycle, hop-limit, no-metadata, bad-image,\n"
            "no-such-member), the assembly it asks for, where resolution stopped\n"
            "and what was there instead. Flags: ambiguous (several assemblies\n"
            "had the type, or several members matched), hint-mismatch (a\n"
            "TypeDefId hint named another row), sig-by-name (signature types\n"
            "compared by name), cached (answered from the cache), other-assembly\n"
            "(found by name only, tier 3, in an assembly the reference does not\n"
            "name: marked * after the assembly). A method the runtime provides\n"
            "for arrays (.ctor, Get, Set, Address) is runtime-provided.\n"
            "\n"
            "With -t, the trace: each step, candidate assembly (with its tier),\n"
            "candidate passed over and why, choice and forwarder hop.\n",
    .run = run,
};
