/* `il`: a method's CIL as ILAsm-style text (ECMA-335 II.25.4 bodies,
 * Partition III instructions, II.19 exception handling blocks), or as one
 * JSON record per method: its header (max stack, init locals, the locals'
 * signature and types), every instruction with its operand named in the
 * session's style (`set style`; the owner's generic parameters by name),
 * and the exception clauses as nested `.try` blocks. `--raw` adds each
 * instruction's bytes and tokens as ILDasm's /BYTES /TOKENS do; `-a` lists
 * every method of every open module. Decoding and naming are the
 * library's (<mdtools/il.h>); this file lays them out, the text of a body
 * through il_text.c. */
#define _DEFAULT_SOURCE /* open_memstream */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <talloc.h>

#include <mdtools/errors.h>
#include <mdtools/heaps.h>
#include <mdtools/il.h>
#include <mdtools/names.h>
#include <mdtools/nesting.h>
#include <mdtools/sig.h>
#include <mdtools/members.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>
#include <mdtools/value.h>

#include "cmd.h"
#include "index.h"

#include "il_text.h"

enum { ARG_METHOD, ARG_ALL, ARG_RAW, ARG_ILASM };

/* JSON: an instruction's operand as the record says. */
static void json_operand(struct il *c, void *mem, const mdt_il_body *b, const mdt_il_insn *in)
{
    mdi_printer *p = c->st->out;
    char buf[32];
    switch (in->operand) {
    case MDT_IL_OPERAND_NONE: return;
    case MDT_IL_OPERAND_R32:
        mdi_real(p, "operand", NULL, in->real, mdt_value_r4_format(buf, (float)in->real));
        return;
    case MDT_IL_OPERAND_R64:
        mdi_real(p, "operand", NULL, in->real, mdt_value_r8_format(buf, in->real));
        return;
    case MDT_IL_OPERAND_SWITCH:
        mdi_list_begin(p, "operand", NULL, NULL, MDI_LIST_SCALARS);
        for (uint32_t i = 0; i < in->count; i++) {
            uint32_t t = 0;
            (void)mdt_il_switch_target(&t, in, i);
            mdi_item_begin(p);
            mdi_uint(p, "target", NULL, t);
            mdi_item_end(p);
        }
        mdi_list_end(p);
        return;
    case MDT_IL_OPERAND_STRING: {
        const uint8_t *u;
        uint32_t n;
        int flag, replaced;
        char *s;
        size_t len;
        if (mdt_heap_us(&u, &n, &flag, b->img, MDT_TOKEN_RID(in->token)) == 0 &&
            mdt_heap_utf16_to_utf8(mem, &s, &len, &replaced, u, n) == 0) {
            mdi_quoted(p, "operand", NULL, s, len);
        } else {
            char msg[300];
            mdi_error(p, "operand", NULL, mdi_errmsg_here(msg, sizeof msg));
            mdt_error_clear();
        }
        return;
    }
    case MDT_IL_OPERAND_METHOD:
    case MDT_IL_OPERAND_FIELD:
    case MDT_IL_OPERAND_TYPE:
    case MDT_IL_OPERAND_SIG:
    case MDT_IL_OPERAND_TOKEN: mdi_token(p, "operand", NULL, in->token); return;
    case MDT_IL_OPERAND_BR8:
    case MDT_IL_OPERAND_BR32: mdi_uint(p, "operand", NULL, (uint64_t)in->value); return;
    default: mdi_int(p, "operand", NULL, in->value); return;
    }
}

static void json_body(struct il *c, void *mem, const mdt_il_body *b, char **err)
{
    mdi_printer *p = c->st->out;
    mdt_il_iter it;
    mdt_il_insn in;
    char msg[400];
    int e;
    mdi_list_begin(p, "instructions", NULL, NULL, 0);
    mdt_il_iter_init(&it, b);
    while ((e = mdt_il_iter_next(&in, &it)) == 0) {
        mdi_item_begin(p);
        mdi_uint(p, "offset", NULL, in.offset);
        mdi_str(p, "opcode", NULL, in.info->name);
        json_operand(c, mem, b, &in);
        mdi_item_end(p);
    }
    mdi_list_end(p);
    if (e != MDT_ITEROVER) {
        *err = talloc_strdup(mem, mdi_errmsg_here(msg, sizeof msg));
        mdt_error_clear();
    }
    mdi_list_begin(p, "eh", NULL, NULL, 0);
    for (uint32_t i = 0; i < b->neh; i++) {
        mdt_il_eh x;
        mdi_item_begin(p);
        if (mdt_il_eh_get(&x, b, i)) {
            mdi_error(p, "error", NULL, mdi_errmsg_here(msg, sizeof msg));
            if (!*err)
                *err = talloc_strdup(mem, msg);
            mdt_error_clear();
            mdi_item_end(p);
            continue;
        }
        mdi_str(p, "kind", NULL, mdi_il_eh_kind[x.kind]);
        mdi_uint(p, "try_start", NULL, x.try_start);
        mdi_uint(p, "try_end", NULL, (uint64_t)x.try_start + x.try_length);
        mdi_uint(p, "handler_start", NULL, x.handler_start);
        mdi_uint(p, "handler_end", NULL, (uint64_t)x.handler_start + x.handler_length);
        if (x.kind == MDT_IL_EH_CATCH)
            mdi_token(p, "catch_type", NULL, x.catch_type);
        else if (x.kind == MDT_IL_EH_FILTER)
            mdi_uint(p, "filter_start", NULL, x.filter_start);
        mdi_item_end(p);
    }
    mdi_list_end(p);
}

/* One method. `quiet_nobody`: a method without IL is skipped (for -a). */
static int one_method(struct il *c, const mdt_image *img, uint32_t tok, bool quiet_nobody)
{
    mdi_state *st = c->st;
    mdi_printer *p = st->out;
    void *mem = talloc_new(NULL);
    mdt_il_body b;
    mdt_generic_context g = {0};
    uint32_t owner = 0;
    char *err = NULL, msg[400];
    int e, status = MDI_OK;
    if (!mem)
        return mdi_fail(st, "out of memory");
    mdi_il_use_image(c, img);
    if ((e = mdt_il_body_get(&b, img, tok))) {
        talloc_free(mem);
        if (quiet_nobody && (e == MDT_ENOTFOUND || e == MDT_EUNSUPPORTED)) {
            mdt_error_clear();
            c->nobody++;
            return MDI_OK;
        }
        mdi_errmsg_here(msg, sizeof msg);
        mdt_error_clear();
        return mdi_fail(st, "%s", msg);
    }
    if (mdt_member_owner(&owner, img, tok))
        mdt_error_clear();
    g.img = img;
    g.type_owner = owner;
    g.method_owner = tok;
    c->opts.gctx = &g;
    char *name = mdi_name(st, mem, img, tok);
    if (!name)
        mdt_error_clear();
    if (mdi_printer_format(p) == MDI_FMT_JSON) {
        mdi_record_begin(p);
        mdi_token(p, "token", NULL, tok);
        if (name)
            mdi_str(p, "name", NULL, name);
        else
            mdi_none(p, "name", NULL, NULL);
        mdi_metadata_name(st, NULL, img, tok);
        mdi_uint(p, "max_stack", NULL, b.max_stack);
        mdi_bool(p, "init_locals", NULL, b.init_locals);
        if (b.locals_token)
            mdi_token(p, "locals", NULL, b.locals_token);
        else
            mdi_none(p, "locals", NULL, NULL);
        mdi_uint(p, "code_size", NULL, b.code_size);
        json_body(c, mem, &b, &err);
        if (err)
            mdi_error(p, "error", NULL, err);
        mdi_record_end(p);
    } else {
        char *text = NULL, *decl = mdi_declaration(st, mem, img, tok);
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        if (!f) {
            talloc_free(mem);
            return mdi_fail(st, "out of memory");
        }
        if (!decl)
            mdt_error_clear();
        fprintf(f, "// 0x%08" PRIx32 " ", tok);
        mdi_il_put_clean(f, name ? name : "?");
        fprintf(f, ", RVA 0x%08" PRIx32 ", %s header, code size %" PRIu32 "\n", b.rva,
                b.fat ? "fat" : "tiny", b.code_size);
        fputs(".method ", f);
        {
            mdt_row r;
            char *words = NULL;
            if (mdt_row_get(&r, img, MDT_TABLE_MethodDef, MDT_TOKEN_RID(tok)) == 0)
                words =
                    mdi_flag_words(mem, mdt_row_raw(&r, MDT_COL_MethodDef_Flags), mdi_method_flags);
            if (words && words[0])
                fprintf(f, "%s ", words);
        }
        mdi_il_put_clean(f, decl ? decl : name ? name : "?");
        fputs("\n{\n", f);
        fprintf(f, "  .maxstack %u\n", b.max_stack);
        if (b.locals_token)
            mdi_il_put_locals(c, f, mem, &b);
        else if (b.init_locals)
            fputs("  // init locals, no locals\n", f);
        if (mdi_il_text_body(c, f, mem, &b, &err) == MDT_ENOMEM) {
            fclose(f);
            free(text);
            talloc_free(mem);
            return mdi_fail(st, "out of memory");
        }
        fputs("}", f);
        if (fclose(f) == 0 && text)
            mdi_textf(p, NULL, "%s", text);
        free(text);
    }
    c->opts.gctx = NULL;
    c->done++;
    if (err) {
        mdi_fail(st, "%s", err);
        status = MDI_FAIL;
    }
    talloc_free(mem);
    return status;
}

struct collect {
    void *mem;
    uint32_t *toks;
    size_t n;
};

/* The methods of a TypeDef that can be read. */
static void collect_methods(struct collect *k, const mdt_image *img, uint32_t type)
{
    mdt_members it = MDT_MEMBERS_INIT;
    uint32_t token, *t;
    int e;
    if (mdt_members_init(&it, img, type, MDT_MEMBERS_METHODS) == 0)
        while ((e = mdt_members_next(&token, NULL, &it)) != MDT_ITEROVER) {
            if (e)
                continue;
            if (!(t = talloc_realloc(k->mem, k->toks, uint32_t, k->n + 1)))
                break;
            k->toks = t;
            t[k->n++] = token;
        }
    mdt_error_clear();
}

static int all_methods(struct il *c, mdi_module *m)
{
    uint32_t rows = mdt_table_rows_present(m->img, MDT_TABLE_MethodDef);
    int status = MDI_OK;
    mdi_about(c->st, m);
    for (uint32_t rid = 1; rid <= rows && !mdi_interrupted(c->st); rid++)
        if (one_method(c, m->img, MDT_TOKEN(MDT_TABLE_MethodDef, rid), true) != MDI_OK)
            status = MDI_FAIL;
    return status;
}

static int run(mdi_state *st, size_t argc, const mdi_arg *argv)
{
    const mdi_arg *method = mdi_arg_of(argc, argv, ARG_METHOD);
    bool all = mdi_arg_of(argc, argv, ARG_ALL) != NULL;
    struct il c = {.st = st};
    int status = MDI_OK;
    c.raw = mdi_arg_of(argc, argv, ARG_RAW) != NULL;
    if (mdi_arg_of(argc, argv, ARG_ILASM)) {
        if (!all || method)
            return mdi_fail(st, "--ilasm writes whole modules: give -a");
        if (c.raw || mdi_printer_format(st->out) == MDI_FMT_JSON)
            return mdi_fail(st, "--ilasm is text, without --raw or --json");
        return mdi_il_modules_ilasm(&c);
    }
    c.opts = st->names;
    c.opts.flags |= MDT_NAME_PARAM_NAMES;
    c.opts.flags &= ~(unsigned)MDT_NAME_SIGNATURE;
    c.opts.cache = NULL;
    if (all && method)
        return mdi_fail(st, "give a METHOD or -a, not both");
    if (!all && !method)
        return mdi_fail(st, "give a METHOD (a token, Type::Name or a type) or -a");
    if (all) {
        mdi_module *cur = mdi_current(st);
        for (size_t i = 0; i < st->nmods && !mdi_interrupted(st); i++)
            if (all_methods(&c, st->mods[i]) != MDI_OK)
                status = MDI_FAIL;
        mdi_about(st, cur);
    } else {
        mdi_module *m = mdi_current(st);
        uint32_t *toks;
        size_t n;
        if (!m)
            return mdi_fail(st, "no module is open");
        if (mdi_arg_tokens(st, st->mem, method->text, &toks, &n))
            return MDI_FAIL;
        for (size_t i = 0; i < n && !mdi_interrupted(st); i++) {
            unsigned t = MDT_TOKEN_TABLE(toks[i]);
            if (t == MDT_TABLE_MethodDef) {
                if (one_method(&c, m->img, toks[i], false) != MDI_OK)
                    status = MDI_FAIL;
            } else if (t == MDT_TABLE_TypeDef) {
                struct collect k = {toks, NULL, 0};
                collect_methods(&k, m->img, toks[i]);
                for (size_t j = 0; j < k.n && !mdi_interrupted(st); j++)
                    if (one_method(&c, m->img, k.toks[j], true) != MDI_OK)
                        status = MDI_FAIL;
            } else if (n == 1) {
                status = mdi_fail(
                    st, "0x%08" PRIx32 " is a %s token: il takes a method or a type", toks[i],
                    t == MDT_TOKEN_STRING ? "user string" : mdt_table_schema_get(t)->name);
            }
        }
        talloc_free(toks);
    }
    talloc_free(c.cache);
    if (status == MDI_OK && !c.done && !all)
        status = mdi_fail(st, "'%s' names no method with IL", method->text);
    return status;
}

const mdi_cmd mdi_cmd_il = {
    .name = "il",
    .args = {{.name = "METHOD", .kind = MDI_ARG_MEMBER, .flags = MDI_ARGF_OPTIONAL},
             MDI_FLAG_ALL("every method of every open module"),
             {.name = "--raw",
              .kind = MDI_ARG_FLAG,
              .about = "each instruction's bytes and tokens beside it (ILDasm's /BYTES "
                       "/TOKENS)"},
             {.name = "--ilasm",
              .kind = MDI_ARG_FLAG,
              .about = "with -a: each open module whole as ILAsm source an assembler "
                       "rebuilds"}},
    .flags = MDI_CMD_IMAGE,
    .summary = "a method's IL: header, locals, instructions, exception blocks",
    .help = "Disassembles the CIL body of METHOD (ECMA-335 II.25.4, Partition III):\n"
            "a MethodDef token, Type::Name (every overload), or a type (each of its\n"
            "methods). -a: every method with IL of every open module. The text is\n"
            "ILAsm's: a comment with the token, name, RVA and header kind, the\n"
            "declaration, `.maxstack`, `.locals [init] (T V_0, ...)` with the\n"
            "locals' types, one line per instruction labelled `IL_0000:` with its\n"
            "operand named in the session's style (`set style`; the method's own\n"
            "generic parameters by name), and the exception clauses as nested\n"
            "blocks: `.try { } catch T { }`, `filter { } { }`, `finally { }`,\n"
            "`fault { }`. Prefixes (constrained., volatile., ...) are lines of\n"
            "their own. --raw adds the bytes and tokens of each instruction:\n"
            "\n"
            "  IL_0008: /* 72 | (70)000021          */ ldstr \"!\" /* 70000021 */\n"
            "\n"
            "With --json, one record per method: token, name, metadata_name,\n"
            "max_stack, init_locals, locals (the StandAloneSig token or null),\n"
            "code_size, instructions (offset, opcode as Partition III spells it,\n"
            "operand: a token as a string, a branch's target offset, a switch's\n"
            "list of targets, integers and floats as numbers (\"NaN\", \"Infinity\",\n"
            "\"-Infinity\" as strings), ldstr's string, argument and local numbers)\n"
            "and eh (kind catch, filter, finally or fault; try_start, try_end,\n"
            "handler_start, handler_end, ends exclusive; catch_type or\n"
            "filter_start). A body that does not decode is shown up to the\n"
            "damage, with the error.\n"
            "\n"
            "-a --ilasm writes each open module whole as ILAsm source that the .NET\n"
            "ILAsm assembles back into the same metadata and bodies: .assembly\n"
            "extern, .assembly, .module, classes (nested inside their enclosing\n"
            "class) with extends, implements, generic parameters with their\n"
            "constraints and attributes (.param type T),\n"
            "layout, fields with constants, marshalling and RVA data (.data),\n"
            "methods with parameters, defaults, marshalling, P/Invoke flags,\n"
            "overrides and bodies, properties, events, declarative security and\n"
            "custom attributes as blobs, the assembly's other files (.file),\n"
            "exported and forwarded types (.class extern) and resources kept in a\n"
            "file or another assembly (.mresource); names quoted where ILAsm needs\n"
            "it. ILAsm reads an embedded resource's bytes from a file of its name\n"
            "in its working directory: resources -x -a DIR writes them. Not\n"
            "written (a comment says so): vtable fixups, and the no. prefix, which\n"
            "ILAsm cannot spell. Open one module: several are written one after\n"
            "the other. Mono's ilasm also assembles it, but drops `pinned` from\n"
            "locals and turns a class reference to a primitive type (box\n"
            "[mscorlib]System.Int32) into the primitive.\n",
    .run = run,
};
