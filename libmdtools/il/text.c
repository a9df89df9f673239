/* One instruction as ILAsm text (ECMA-335 II.5 and Partition III's
 * operand syntax), its operand named by the printer of
 * libmdtools/generics/ in the caller's style: a method as `[instance ]RET
 * OWNER::NAME[<ARGS>](PARAMS)` (II.15.4.2 callKind, the call site's
 * vararg arguments after `...`), a field as `TYPE OWNER::NAME`, a type by
 * its name, ldtoken's `method` / `field` forms, calli's signature, strings
 * quoted (or as `bytearray (...)` when UTF-16 that is not text: unpaired
 * surrogates), floats exactly, branch targets as labels. A name that
 * cannot be built degrades to the token and the reason in a comment: the
 * listing of a damaged body goes on. Names come through the public API of
 * names.h and sig.h only, as any client would; a string is quoted by the
 * library's one QSTRING writer (generics/ilasm.c). */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <talloc.h>

#include <mdtools/errors.h>
#include <mdtools/heaps.h>
#include <mdtools/il.h>
#include <mdtools/names.h>
#include <mdtools/sig.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>
#include <mdtools/value.h>

#include "generics/gen_int.h"
#include "generics/opts_int.h"
#include "util/error.h"
#include "util/strbuf.h"

/* The reason an operand could not be named, after its token; the error is
 * forgotten (the listing goes on). */
static void put_failed(sb *s, uint32_t tok, uint64_t mark)
{
    const mdt_errinfo *e = mdt_error_last();
    sb_addf(s, "0x%08" PRIx32 " /* %s */", tok, e->what[0] ? e->what : mdt_error_string(e->code));
    mdt__err_forget(mark);
}

static mdt_name_opts plain(const mdt_name_opts *o)
{
    mdt_name_opts p = *o;
    p.gctx = NULL;
    p.flags &= ~(unsigned)MDT_NAME_SIGNATURE;
    return p;
}

/* `[instance ][explicit ][CC ]RET` of a method signature: the printer's
 * text of the signature without parameters or generic arity, less "()". */
static int sig_prefix(void *ctx, char **out, const mdt_method_sig *m, const mdt_name_opts *o)
{
    mdt_method_sig c = *m;
    mdt_sig s = {.kind = MDT_SIG_METHOD, .method = &c};
    size_t n;
    int e;
    c.nparams = 0;
    c.params = NULL;
    c.sentinel = UINT32_MAX;
    c.callconv &= (uint8_t)~MDT_CC_GENERIC;
    c.gen_count = 0;
    if ((e = mdt_sig_name(ctx, out, &s, o)))
        return e;
    n = strlen(*out);
    if (n >= 2 && strcmp(*out + n - 2, "()") == 0)
        (*out)[n - 2] = '\0';
    return 0;
}

static int put_params(void *ctx, sb *s, const mdt_method_sig *m, const mdt_name_opts *o)
{
    const char *sep = o->style == MDT_STYLE_IL ? ", " : ",";
    sb_addc(s, '(');
    for (uint32_t i = 0; i < m->nparams; i++) {
        char *t;
        int e;
        if (i)
            sb_adds(s, sep);
        if (i == m->sentinel) {
            sb_adds(s, "...");
            sb_adds(s, sep);
        }
        if ((e = mdt_type_name(ctx, &t, m->params[i], o)))
            return e;
        sb_adds(s, t);
    }
    if (m->sentinel != UINT32_MAX && m->sentinel >= m->nparams)
        sb_adds(s, m->nparams ? ", ..." : "...");
    sb_addc(s, ')');
    return 0;
}

/* The signature a method operand is called with: a MethodSpec's method's. */
static int method_sig(void *ctx, mdt_sig *sig, const mdt_image *img, uint32_t tok)
{
    int e;
    if (MDT_TOKEN_TABLE(tok) == MDT_TABLE_MethodSpec) {
        mdt_row r;
        uint32_t m;
        if ((e = mdt_row_get(&r, img, MDT_TABLE_MethodSpec, MDT_TOKEN_RID(tok))) ||
            (e = mdt_row_token(&m, &r, MDT_COL_MethodSpec_Method)))
            return e;
        if (MDT_TOKEN_TABLE(m) == MDT_TABLE_MethodSpec)
            return mdt__fail_simple(
                MDT_EBADIMAGE, "MethodSpec 0x%08" PRIx32 " instantiates another MethodSpec", tok);
        tok = m;
    }
    return mdt_sig_of_token(ctx, sig, img, tok);
}

static int put_method(void *ctx, sb *s, const mdt_image *img, uint32_t tok, const mdt_name_opts *o)
{
    mdt_name_opts p = plain(o), named = *o;
    mdt_sig sig;
    char *pre, *name;
    int e;
    named.flags &= ~(unsigned)MDT_NAME_SIGNATURE;
    if ((e = method_sig(ctx, &sig, img, tok)))
        return e;
    if (sig.kind != MDT_SIG_METHOD)
        return mdt__fail_simple(MDT_EBADIMAGE, "0x%08" PRIx32 " is no method", tok);
    if ((e = sig_prefix(ctx, &pre, sig.method, &p)) ||
        (e = mdt_token_name(ctx, &name, img, tok, &named)))
        return e;
    sb_addf(s, "%s %s", pre, name);
    return put_params(ctx, s, sig.method, &p);
}

static int put_field(void *ctx, sb *s, const mdt_image *img, uint32_t tok, const mdt_name_opts *o)
{
    mdt_name_opts p = plain(o), named = *o;
    mdt_sig sig;
    char *type, *name;
    int e;
    named.flags &= ~(unsigned)MDT_NAME_SIGNATURE;
    if ((e = mdt_sig_of_token(ctx, &sig, img, tok)))
        return e;
    if (sig.kind != MDT_SIG_FIELD)
        return mdt__fail_simple(MDT_EBADIMAGE, "0x%08" PRIx32 " is no field", tok);
    if ((e = mdt_type_name(ctx, &type, sig.type, &p)) ||
        (e = mdt_token_name(ctx, &name, img, tok, &named)))
        return e;
    sb_addf(s, "%s %s", type, name);
    return 0;
}

static int put_type(void *ctx, sb *s, const mdt_image *img, uint32_t tok, const mdt_name_opts *o)
{
    mdt_name_opts named = *o;
    char *name;
    int e;
    named.flags &= ~(unsigned)MDT_NAME_SIGNATURE;
    switch (MDT_TOKEN_TABLE(tok)) {
    case MDT_TABLE_TypeDef:
    case MDT_TABLE_TypeRef:
    case MDT_TABLE_TypeSpec: break;
    default: return mdt__fail_simple(MDT_EBADIMAGE, "0x%08" PRIx32 " is no type", tok);
    }
    if ((e = mdt_token_name(ctx, &name, img, tok, &named)))
        return e;
    sb_adds(s, name);
    return 0;
}

/* ldtoken: a type, `method ...` or `field ...` (II.16.2 and III.4.17). */
static int put_any(void *ctx, sb *s, const mdt_image *img, uint32_t tok, const mdt_name_opts *o)
{
    switch (MDT_TOKEN_TABLE(tok)) {
    case MDT_TABLE_MethodDef:
    case MDT_TABLE_MethodSpec: sb_adds(s, "method "); return put_method(ctx, s, img, tok, o);
    case MDT_TABLE_Field: sb_adds(s, "field "); return put_field(ctx, s, img, tok, o);
    case MDT_TABLE_MemberRef: {
        mdt_sig sig;
        int e;
        if ((e = mdt_sig_of_token(ctx, &sig, img, tok)))
            return e;
        sb_adds(s, sig.kind == MDT_SIG_FIELD ? "field " : "method ");
        return sig.kind == MDT_SIG_FIELD ? put_field(ctx, s, img, tok, o)
                                         : put_method(ctx, s, img, tok, o);
    }
    default: return put_type(ctx, s, img, tok, o);
    }
}

static int put_calli(void *ctx, sb *s, const mdt_image *img, uint32_t tok, const mdt_name_opts *o)
{
    mdt_name_opts p = plain(o);
    mdt_sig sig;
    char *t;
    int e;
    if (MDT_TOKEN_TABLE(tok) != MDT_TABLE_StandAloneSig)
        return mdt__fail_simple(MDT_EBADIMAGE, "0x%08" PRIx32 " is no StandAloneSig", tok);
    if ((e = mdt_sig_of_token(ctx, &sig, img, tok)))
        return e;
    if (sig.kind != MDT_SIG_METHOD)
        return mdt__fail_simple(MDT_EBADIMAGE, "0x%08" PRIx32 " is no method signature", tok);
    if ((e = mdt_sig_name(ctx, &t, &sig, &p)))
        return e;
    sb_adds(s, t);
    return 0;
}

/* A user string: quoted, with C escapes (ILAsm's QSTRING, the library's
 * one writer: generics/ilasm.c); UTF-16 that does not convert (unpaired
 * surrogates) as ILAsm's bytearray. */
static int put_string(void *ctx, sb *s, const mdt_image *img, uint32_t tok)
{
    const uint8_t *u;
    uint32_t n;
    int flag, replaced = 0, e;
    char *t;
    size_t len;
    if (MDT_TOKEN_TABLE(tok) != MDT_TOKEN_STRING)
        return mdt__fail_simple(MDT_EBADIMAGE, "0x%08" PRIx32 " is no user string", tok);
    if ((e = mdt_heap_us(&u, &n, &flag, img, MDT_TOKEN_RID(tok))) ||
        (e = mdt_heap_utf16_to_utf8(ctx, &t, &len, &replaced, u, n)))
        return e;
    if (replaced) {
        sb_adds(s, "bytearray (");
        for (uint32_t i = 0; i < 2 * n; i++)
            sb_addf(s, i ? " %02X" : "%02X", u[i]);
        sb_addc(s, ')');
        return 0;
    }
    mdt__ilasm_qstring(s, (const uint8_t *)t, len, true);
    return 0;
}

/* A float literal: the shortest decimal that reads back, always with a
 * '.' (ILAsm reads a bare integer as one); NaN, infinities and -0, which
 * have no decimal ILAsm reads back, as the bytes: `(00 00 C0 7F)`. */
static void put_real(sb *s, const mdt_il_insn *in)
{
    char buf[32];
    const uint8_t *p = in->bytes + in->info->opsize;
    unsigned n = in->operand == MDT_IL_OPERAND_R32 ? 4 : 8;
    if (isnan(in->real) || isinf(in->real) || (in->real == 0 && signbit(in->real))) {
        sb_addc(s, '(');
        for (unsigned i = 0; i < n; i++)
            sb_addf(s, i ? " %02X" : "%02X", p[i]);
        sb_addc(s, ')');
        return;
    }
    if (n == 4)
        mdt_value_r4_format(buf, (float)in->real);
    else
        mdt_value_r8_format(buf, in->real);
    if (!strpbrk(buf, ".e")) {
        sb_adds(s, buf);
        sb_adds(s, ".0");
    } else if (!strchr(buf, '.')) {
        char *x = strchr(buf, 'e');
        sb_add(s, buf, (size_t)(x - buf));
        sb_adds(s, ".0");
        sb_adds(s, x);
    } else {
        sb_adds(s, buf);
    }
}

int mdt_il_insn_text(void *mem_ctx, char **out, const mdt_il_body *body, const mdt_il_insn *in,
                     const mdt_name_opts *opts)
{
    mdt_name_opts o = {0};
    void *tmp;
    sb s;
    bool oom = false;
    if (!out || !in || !body || !in->info)
        return mdt__fail_simple(MDT_EINVAL, "mdt_il_insn_text: no %s",
                                !out    ? "output"
                                : !body ? "body"
                                        : "instruction");
    if (gen_opts_check(opts, "mdt_il_insn_text"))
        return MDT_EINVAL;
    if (opts)
        o = *opts;
    if (!(tmp = talloc_new(NULL)))
        return mdt__fail_simple(MDT_ENOMEM, "out of memory naming an instruction");
    sb_init(&s, mem_ctx);
    sb_adds(&s, in->info->name);
    if (in->operand != MDT_IL_OPERAND_NONE)
        sb_addc(&s, ' ');
    uint64_t mark = mdt__err_mark();
    switch (in->operand) {
    case MDT_IL_OPERAND_NONE: break;
    case MDT_IL_OPERAND_ARG8:
    case MDT_IL_OPERAND_ARG16:
    case MDT_IL_OPERAND_LOCAL8:
    case MDT_IL_OPERAND_LOCAL16:
    case MDT_IL_OPERAND_I8:
    case MDT_IL_OPERAND_I32:
    case MDT_IL_OPERAND_I64:
    case MDT_IL_OPERAND_U8: sb_addf(&s, "%" PRId64, in->value); break;
    case MDT_IL_OPERAND_R32:
    case MDT_IL_OPERAND_R64: put_real(&s, in); break;
    case MDT_IL_OPERAND_BR8:
    case MDT_IL_OPERAND_BR32: sb_addf(&s, "IL_%04" PRIx64, (uint64_t)in->value); break;
    case MDT_IL_OPERAND_SWITCH:
        sb_addc(&s, '(');
        for (uint32_t i = 0; i < in->count; i++) {
            uint32_t t = 0;
            (void)mdt_il_switch_target(&t, in, i);
            sb_addf(&s, i ? ", IL_%04" PRIx32 : "IL_%04" PRIx32, t);
        }
        sb_addc(&s, ')');
        break;
    default: {
        size_t at = s.len;
        int r;
        if (!body->img) {
            sb_addf(&s, "0x%08" PRIx32, in->token);
            break;
        }
        switch (in->operand) {
        case MDT_IL_OPERAND_METHOD: r = put_method(tmp, &s, body->img, in->token, &o); break;
        case MDT_IL_OPERAND_FIELD: r = put_field(tmp, &s, body->img, in->token, &o); break;
        case MDT_IL_OPERAND_TYPE: r = put_type(tmp, &s, body->img, in->token, &o); break;
        case MDT_IL_OPERAND_STRING: r = put_string(tmp, &s, body->img, in->token); break;
        case MDT_IL_OPERAND_SIG: r = put_calli(tmp, &s, body->img, in->token, &o); break;
        default: r = put_any(tmp, &s, body->img, in->token, &o); break;
        }
        if (r == MDT_ENOMEM) {
            oom = true;
        } else if (r) {
            sb_cut(&s, at);
            put_failed(&s, in->token, mark);
        }
    }
    }
    talloc_free(tmp);
    if (oom) {
        sb_discard(&s);
        return MDT_ENOMEM; /* recorded where it failed */
    }
    return sb_finish(&s, out);
}
