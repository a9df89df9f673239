/* What `il`'s two printers share (il_text.h): a method body as ILAsm-style
 * text (ECMA-335 II.25.4 bodies, Partition III instructions) with its
 * exception clauses (II.19) as nested `.try` blocks and labels, `.locals`
 * lines, `--raw`'s bytes and tokens as ILDasm's /BYTES /TOKENS write them,
 * and the session's name cache per image. cmd_il.c prints one method or
 * all of them (text or JSON), ilasm_module.c a whole module. */
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

#include "il_text.h"

const char *const mdi_il_eh_kind[] = {[MDT_IL_EH_CATCH] = "catch",
                                      [MDT_IL_EH_FILTER] = "filter",
                                      [MDT_IL_EH_FINALLY] = "finally",
                                      [MDT_IL_EH_FAULT] = "fault"};

void mdi_il_use_image(struct il *c, const mdt_image *img)
{
    if (c->cache_img == img)
        return;
    talloc_free(c->cache);
    c->cache = NULL;
    if (mdt_name_cache_new(c->st->mem, &c->cache, img, c->opts.style, c->opts.flags))
        c->cache = NULL;
    mdt_error_clear();
    c->cache_img = img;
    c->opts.cache = c->cache;
}

/* A block of the text form: a try, a filter or a handler, [start, end). */
struct block {
    uint32_t start, end;
    int order;  /* at one start: try 0, filter 1, handler 2 */
    int clause; /* for handlers and filters: the clause */
};

static int block_cmp(const void *a, const void *b)
{
    const struct block *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->end != y->end)
        return x->end > y->end ? -1 : 1; /* outer first */
    if (x->order != y->order)
        return x->order - y->order;
    return x->clause - y->clause;
}

static void indent(FILE *f, unsigned depth)
{
    for (unsigned i = 0; i < depth; i++)
        fputs("  ", f);
}

/* Control characters of a name from the image never reach the terminal. */
void mdi_il_put_clean(FILE *f, const char *s)
{
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch < 0x20 || ch == 0x7F)
            fprintf(f, "\\x%02x", ch);
        else
            fputc(ch, f);
    }
}

/* `--raw`: opcode and operand bytes as ILDasm shows them, a token as
 * (TT)RRRRRR. */
static void put_raw(FILE *f, const mdt_il_insn *in)
{
    char buf[64];
    size_t n = 0;
    unsigned op = in->info->opsize;
    for (unsigned i = 0; i < op; i++)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%02X", in->bytes[i]);
    n += (size_t)snprintf(buf + n, sizeof buf - n, " |");
    if (in->info->argsize == 4 && in->operand >= MDT_IL_OPERAND_METHOD)
        n += (size_t)snprintf(buf + n, sizeof buf - n, " (%02X)%06X", in->token >> 24,
                              in->token & 0xFFFFFF);
    else
        for (uint32_t i = op; i < in->size && n < sizeof buf - 8; i++)
            n +=
                (size_t)snprintf(buf + n, sizeof buf - n, i == op ? " %02X" : "%02X", in->bytes[i]);
    if (in->size > op + 20 && in->operand == MDT_IL_OPERAND_SWITCH)
        snprintf(buf + 24, sizeof buf - 24, "...");
    fprintf(f, "/* %-24s */ ", buf);
}

static const char *catch_name(struct il *c, void *mem, const mdt_il_body *b, uint32_t tok)
{
    char *s = NULL;
    if (mdt_token_name(mem, &s, b->img, tok, &c->opts)) {
        char msg[300];
        s = talloc_asprintf(mem, "0x%08" PRIx32 " /* %s */", tok, mdi_errmsg_here(msg, sizeof msg));
        mdt_error_clear();
        return s ? s : "?";
    }
    /* ILAsm's catch takes a class, not the keywords `object` and `string`
     * the IL style names System.Object and System.String by. */
    if (s && c->opts.style == MDT_STYLE_IL && (!strcmp(s, "object") || !strcmp(s, "string"))) {
        mdt_name_opts full = {.style = MDT_STYLE_FULL};
        char *plain = NULL;
        uint32_t scope = 0;
        mdt_row r;
        const char *asm_name = NULL;
        if (mdt_token_name(mem, &plain, b->img, tok, &full) == 0) {
            if (MDT_TOKEN_TABLE(tok) == MDT_TABLE_TypeRef &&
                mdt_row_get(&r, b->img, MDT_TABLE_TypeRef, MDT_TOKEN_RID(tok)) == 0 &&
                mdt_row_token(&scope, &r, MDT_COL_TypeRef_ResolutionScope) == 0 &&
                MDT_TOKEN_TABLE(scope) == MDT_TABLE_AssemblyRef &&
                mdt_row_get(&r, b->img, MDT_TABLE_AssemblyRef, MDT_TOKEN_RID(scope)) == 0 &&
                mdt_row_string(&asm_name, NULL, &r, MDT_COL_AssemblyRef_Name) == 0) {
                char *q = NULL;
                if (mdt_ilasm_name(mem, &q, asm_name, strlen(asm_name)) == 0 && q)
                    s = talloc_asprintf(mem, "[%s]%s", q, plain);
            } else if (MDT_TOKEN_TABLE(tok) == MDT_TABLE_TypeSpec) {
                /* A TypeSpec of the primitive: the core library's class,
                 * which an assembler writes back as a TypeRef. */
                static const char *const core[] = {"mscorlib", "System.Runtime", "netstandard",
                                                   "System.Private.CoreLib"};
                uint32_t n = mdt_table_rows_present(b->img, MDT_TABLE_AssemblyRef);
                s = plain;
                for (uint32_t i = 1; i <= n && s == plain; i++)
                    for (size_t k = 0; k < sizeof core / sizeof *core; k++)
                        if (mdt_row_get(&r, b->img, MDT_TABLE_AssemblyRef, i) == 0 &&
                            mdt_row_string(&asm_name, NULL, &r, MDT_COL_AssemblyRef_Name) == 0 &&
                            !strcmp(asm_name, core[k])) {
                            s = talloc_asprintf(mem, "[%s]%s", asm_name, plain);
                            break;
                        }
            } else {
                s = plain;
            }
        }
        mdt_error_clear();
    }
    return s ? s : "?";
}

/* The locals: `.locals init (int32 V_0, string V_1)`. */
void mdi_il_put_locals(struct il *c, FILE *f, void *mem, const mdt_il_body *b)
{
    mdt_sig sig;
    char msg[300];
    fprintf(f, "  .locals %s(", b->init_locals ? "init " : "");
    if (mdt_sig_of_token(mem, &sig, b->img, b->locals_token) || sig.kind != MDT_SIG_LOCALS) {
        if (sig.kind != MDT_SIG_LOCALS && mdt_error_last()->code == 0)
            snprintf(msg, sizeof msg, "not a locals signature");
        else
            mdi_errmsg_here(msg, sizeof msg);
        fprintf(f, "/* 0x%08" PRIx32 ": %s */)\n", b->locals_token, msg);
        mdt_error_clear();
        return;
    }
    for (uint32_t i = 0; i < sig.locals->count; i++) {
        char *t;
        if (i)
            fputs(", ", f);
        if (mdt_type_name(mem, &t, sig.locals->locals[i].type, &c->opts)) {
            fprintf(f, "/* %s */", mdi_errmsg_here(msg, sizeof msg));
            mdt_error_clear();
        } else {
            mdi_il_put_clean(f, t);
        }
        fprintf(f, "%s V_%" PRIu32, sig.locals->locals[i].pinned ? " pinned" : "", i);
    }
    fputs(")\n", f);
    if (c->raw)
        fprintf(f, "  // locals 0x%08" PRIx32 "\n", b->locals_token);
}

/* Text: the body as ILAsm's scoped form, `.try { } catch T { }`. */
int mdi_il_text_body(struct il *c, FILE *f, void *mem, const mdt_il_body *b, char **err)
{
    struct block *blocks = talloc_array(mem, struct block, (size_t)b->neh * 3 + 1);
    const struct block **open = talloc_array(mem, const struct block *, (size_t)b->neh * 3 + 1);
    mdt_il_eh *eh = talloc_array(mem, mdt_il_eh, b->neh + 1);
    size_t nb = 0, nopen = 0, next = 0;
    mdt_il_iter it;
    mdt_il_insn in;
    char msg[400];
    int e;
    if (!blocks || !open || !eh)
        return MDT_ENOMEM;
    for (uint32_t i = 0; i < b->neh; i++) {
        if (mdt_il_eh_get(&eh[i], b, i)) {
            fprintf(f, "  // %s\n", mdi_errmsg_here(msg, sizeof msg));
            if (!*err)
                *err = talloc_strdup(mem, msg);
            mdt_error_clear();
            eh[i].kind = UINT32_MAX;
            continue;
        }
        /* Clauses that share a try block share its braces. */
        bool shared = false;
        for (uint32_t j = 0; j < i; j++)
            if (eh[j].kind != UINT32_MAX && eh[j].try_start == eh[i].try_start &&
                eh[j].try_length == eh[i].try_length)
                shared = true;
        if (!shared)
            blocks[nb++] =
                (struct block){eh[i].try_start, eh[i].try_start + eh[i].try_length, 0, -1};
        if (eh[i].kind == MDT_IL_EH_FILTER)
            blocks[nb++] = (struct block){eh[i].filter_start, eh[i].handler_start, 1, (int)i};
        blocks[nb++] = (struct block){eh[i].handler_start,
                                      eh[i].handler_start + eh[i].handler_length, 2, (int)i};
    }
    qsort(blocks, nb, sizeof *blocks, block_cmp);
    mdt_il_iter_init(&it, b);
    for (;;) {
        e = mdt_il_iter_next(&in, &it);
        uint32_t at = e == 0 ? in.offset : UINT32_MAX;
        while (nopen && open[nopen - 1]->end <= at) {
            nopen--;
            indent(f, nopen + 1);
            fputs("}\n", f);
        }
        /* Blocks after damage stay unopened: nothing would close them. */
        while (e == 0 && next < nb && blocks[next].start <= at) {
            const struct block *k = &blocks[next++];
            indent(f, nopen + 1);
            if (k->order == 0) {
                fputs(".try {\n", f);
            } else if (k->order == 1) {
                fputs("filter {\n", f);
            } else {
                const mdt_il_eh *x = &eh[k->clause];
                if (x->kind == MDT_IL_EH_CATCH) {
                    fputs("catch ", f);
                    mdi_il_put_clean(f, catch_name(c, mem, b, x->catch_type));
                    fputs(" {\n", f);
                } else if (x->kind == MDT_IL_EH_FILTER) {
                    fputs("{\n", f);
                } else {
                    fprintf(f, "%s {\n", mdi_il_eh_kind[x->kind]);
                }
            }
            open[nopen++] = k;
        }
        if (e)
            break;
        char *t;
        indent(f, nopen + 1);
        fprintf(f, "IL_%04" PRIx32 ": ", in.offset);
        if (c->raw)
            put_raw(f, &in);
        if (mdt_il_insn_text(mem, &t, b, &in, &c->opts))
            return MDT_ENOMEM;
        mdi_il_put_clean(f, t);
        if (c->raw && in.operand >= MDT_IL_OPERAND_METHOD)
            fprintf(f, " /* %08" PRIX32 " */", in.token);
        fputc('\n', f);
        talloc_free(t);
    }
    if (e != MDT_ITEROVER) {
        mdi_errmsg_here(msg, sizeof msg);
        fprintf(f, "  // %s\n", msg);
        *err = talloc_strdup(mem, msg);
        mdt_error_clear();
    }
    return 0;
}
