/* `il -a --ilasm`, the small pieces (ilasm_module.c writes the module):
 * identifiers quoted as ILAsm needs, types, tokens and method references
 * named in the IL style, byte arrays, and what hangs off any row: custom
 * attributes as blobs (II.21; a generic parameter's after `.param type T`),
 * declarative security (II.22.11), constants (II.16.2), generic
 * parameters with their constraints (II.10.1.7), quoted strings (II.5.2)
 * and marshalling descriptors (II.23.4, mdt_marshal_text). */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <talloc.h>

#include <mdtools/errors.h>
#include <mdtools/heaps.h>
#include <mdtools/il.h>
#include <mdtools/image.h>
#include <mdtools/names.h>
#include <mdtools/nesting.h>
#include <mdtools/sig.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>

#include "ilasm.h"
#include "il_text.h"

void mdi_ilasm_ind(struct out *o, unsigned d)
{
    for (unsigned i = 0; i < d; i++)
        fputs("  ", o->f);
}

/* An identifier, quoted as ILAsm needs. */
void mdi_ilasm_put_id(struct out *o, const char *s)
{
    char *q = NULL;
    if (mdt_ilasm_name(o->mem, &q, s, strlen(s)) == 0)
        mdi_il_put_clean(o->f, q);
    else {
        mdt_error_clear();
        fputs("'?'", o->f);
    }
}

void mdi_ilasm_put_error(struct out *o, const char *what)
{
    char msg[300];
    fprintf(o->f, "/* %s: %s */", what, mdi_errmsg_here(msg, sizeof msg));
    mdt_error_clear();
}

void mdi_ilasm_put_type(struct out *o, const mdt_type *t)
{
    char *s;
    if (mdt_type_name(o->mem, &s, t, &o->c->opts))
        mdi_ilasm_put_error(o, "type");
    else
        mdi_il_put_clean(o->f, s);
}

void mdi_ilasm_put_token(struct out *o, uint32_t tok)
{
    char *s;
    if (mdt_token_name(o->mem, &s, o->img, tok, &o->c->opts))
        mdi_ilasm_put_error(o, "token");
    else
        mdi_il_put_clean(o->f, s);
}

/* A method token as an ILAsm method reference (`instance void X::M(int32)`):
 * the operand text of a call. */
void mdi_ilasm_put_method_ref(struct out *o, uint32_t tok)
{
    mdt_il_body fake = {.img = o->img};
    mdt_il_insn in = {.info = mdt_il_opcode_info(MDT_IL_CALL),
                      .opcode = MDT_IL_CALL,
                      .operand = MDT_IL_OPERAND_METHOD,
                      .token = tok};
    char *s;
    if (mdt_il_insn_text(o->mem, &s, &fake, &in, &o->c->opts)) {
        mdi_ilasm_put_error(o, "method");
        return;
    }
    const char *sp = strchr(s, ' ');
    mdi_il_put_clean(o->f, sp ? sp + 1 : s);
}

void mdi_ilasm_put_bytes(struct out *o, const uint8_t *p, uint32_t n, unsigned d)
{
    fputs("(", o->f);
    for (uint32_t i = 0; i < n; i++) {
        if (i && i % 16 == 0) {
            fputc('\n', o->f);
            mdi_ilasm_ind(o, d + 2);
        }
        fprintf(o->f, " %02X", p[i]);
    }
    fputs(" )", o->f);
}

/* Every custom attribute on `parent`. */
void mdi_ilasm_put_customs(struct out *o, uint32_t parent, unsigned d)
{
    uint32_t key, rid;
    mdt_find fi;
    if (mdt_coded_encode(&key, MDT_CI_HasCustomAttribute, parent) ||
        mdt_find_init(&fi, o->img, MDT_TABLE_CustomAttribute, MDT_COL_CustomAttribute_Parent,
                      key)) {
        mdt_error_clear();
        return;
    }
    while (mdt_find_next(&rid, &fi) == 0) {
        mdt_row r;
        uint32_t ctor;
        const uint8_t *blob;
        uint32_t n;
        if (mdt_row_get(&r, o->img, MDT_TABLE_CustomAttribute, rid) ||
            mdt_row_token(&ctor, &r, MDT_COL_CustomAttribute_Type) ||
            mdt_row_blob(&blob, &n, &r, MDT_COL_CustomAttribute_Value)) {
            mdi_ilasm_ind(o, d);
            mdi_ilasm_put_error(o, "custom attribute");
            fputc('\n', o->f);
            continue;
        }
        mdi_ilasm_ind(o, d);
        fputs(".custom ", o->f);
        mdi_ilasm_put_method_ref(o, ctor);
        fputs(" = ", o->f);
        mdi_ilasm_put_bytes(o, blob, n, d);
        fputc('\n', o->f);
    }
    mdt_error_clear();
}

/* The custom attributes of a type's or method's generic parameters,
 * each parameter that has some introduced by `.param type NAME` (as
 * ILDasm writes C#'s NullableAttribute and IsUnmanagedAttribute on them). */
void mdi_ilasm_put_gparam_customs(struct out *o, uint32_t owner, unsigned d)
{
    uint32_t key, rid;
    mdt_find fi;
    if (!mdt_table_rows(o->img, MDT_TABLE_GenericParam) ||
        mdt_coded_encode(&key, MDT_CI_TypeOrMethodDef, owner) ||
        mdt_find_init(&fi, o->img, MDT_TABLE_GenericParam, MDT_COL_GenericParam_Owner, key)) {
        mdt_error_clear();
        return;
    }
    while (mdt_find_next(&rid, &fi) == 0) {
        uint32_t gtok = MDT_TOKEN(MDT_TABLE_GenericParam, rid), ckey, crid;
        mdt_find cf;
        mdt_row r;
        const char *name;
        if (mdt_coded_encode(&ckey, MDT_CI_HasCustomAttribute, gtok) ||
            mdt_find_init(&cf, o->img, MDT_TABLE_CustomAttribute, MDT_COL_CustomAttribute_Parent,
                          ckey) ||
            mdt_find_next(&crid, &cf) != 0)
            continue; /* none */
        mdi_ilasm_ind(o, d);
        fputs(".param type ", o->f);
        if (mdt_row_get(&r, o->img, MDT_TABLE_GenericParam, rid) == 0 &&
            mdt_row_string(&name, NULL, &r, MDT_COL_GenericParam_Name) == 0)
            mdi_ilasm_put_id(o, name);
        else
            mdi_ilasm_put_error(o, "generic parameter name");
        fputc('\n', o->f);
        mdi_ilasm_put_customs(o, gtok, d);
    }
    mdt_error_clear();
}

/* Declarative security of a type, method or the assembly (DeclSecurity,
 * II.22.11) as `.permissionset ACTION = ( bytes )`: the blob as stored,
 * XML or binary alike, so the assembler keeps it byte for byte. */
void mdi_ilasm_put_security(struct out *o, uint32_t parent, unsigned d)
{
    static const char *const actions[] = {
        NULL,         "request",      "demand",           "assert",
        "deny",       "permitonly",   "linkcheck",        "inheritcheck",
        "reqmin",     "reqopt",       "reqrefuse",        "prejitgrant",
        "prejitdeny", "noncasdemand", "noncaslinkdemand", "noncasinheritance"};
    uint32_t key, rid;
    mdt_find fi;
    if (mdt_coded_encode(&key, MDT_CI_HasDeclSecurity, parent) ||
        mdt_find_init(&fi, o->img, MDT_TABLE_DeclSecurity, MDT_COL_DeclSecurity_Parent, key)) {
        mdt_error_clear();
        return;
    }
    while (mdt_find_next(&rid, &fi) == 0) {
        mdt_row r;
        const uint8_t *blob;
        uint32_t n;
        mdi_ilasm_ind(o, d);
        if (mdt_row_get(&r, o->img, MDT_TABLE_DeclSecurity, rid) ||
            mdt_row_blob(&blob, &n, &r, MDT_COL_DeclSecurity_PermissionSet)) {
            mdi_ilasm_put_error(o, "permission set");
            fputc('\n', o->f);
            continue;
        }
        unsigned a = (unsigned)mdt_row_raw(&r, MDT_COL_DeclSecurity_Action);
        if (a >= sizeof actions / sizeof *actions || !actions[a]) {
            fprintf(o->f, "// a permission set of action %u, which ILAsm has no word for\n", a);
            continue;
        }
        fprintf(o->f, ".permissionset %s = ", actions[a]);
        mdi_ilasm_put_bytes(o, blob, n, d);
        fputc('\n', o->f);
    }
    mdt_error_clear();
}

/* A Constant row's value as ILAsm's fieldInit (II.16.2). */
void mdi_ilasm_put_constant(struct out *o, uint32_t parent)
{
    uint32_t key, rid;
    mdt_find fi;
    mdt_row r;
    const uint8_t *v;
    uint32_t n;
    if (mdt_coded_encode(&key, MDT_CI_HasConstant, parent) ||
        mdt_find_init(&fi, o->img, MDT_TABLE_Constant, MDT_COL_Constant_Parent, key) ||
        mdt_find_next(&rid, &fi) || mdt_row_get(&r, o->img, MDT_TABLE_Constant, rid) ||
        mdt_row_blob(&v, &n, &r, MDT_COL_Constant_Value)) {
        mdt_error_clear();
        return;
    }
    unsigned type = (unsigned)mdt_row_raw(&r, MDT_COL_Constant_Type);
    uint64_t u = 0;
    for (uint32_t i = 0; i < n && i < 8; i++)
        u |= (uint64_t)v[i] << (8 * i);
    static const struct {
        unsigned type, size;
        const char *word;
    } k[] = {{0x02, 1, "bool"},  {0x03, 2, "char"},   {0x04, 1, "int8"},    {0x05, 1, "uint8"},
             {0x06, 2, "int16"}, {0x07, 2, "uint16"}, {0x08, 4, "int32"},   {0x09, 4, "uint32"},
             {0x0A, 8, "int64"}, {0x0B, 8, "uint64"}, {0x0C, 4, "float32"}, {0x0D, 8, "float64"}};
    fputs(" = ", o->f);
    if (type == 0x12) { /* CLASS: a null reference */
        fputs("nullref", o->f);
        return;
    }
    if (type == 0x0E) { /* STRING: UTF-16, as bytes (no escaping to get wrong) */
        fputs("bytearray ", o->f);
        mdi_ilasm_put_bytes(o, v, n, 2);
        return;
    }
    for (size_t i = 0; i < sizeof k / sizeof *k; i++) {
        if (k[i].type != type)
            continue;
        if (n < k[i].size) {
            fputs("/* constant cut short */ nullref", o->f);
            return;
        }
        if (type == 0x02)
            fprintf(o->f, "bool(%s)", u ? "true" : "false");
        else if (type == 0x0C || type == 0x0D) /* the bits, exactly */
            fprintf(o->f, "%s(0x%0*" PRIX64 ")", k[i].word, (int)k[i].size * 2, u);
        else if (type == 0x03)
            fprintf(o->f, "char(0x%04" PRIX64 ")", u);
        else
            fprintf(o->f, "%s(0x%0*" PRIX64 ")", k[i].word, (int)k[i].size * 2, u);
        return;
    }
    fprintf(o->f, "/* constant of type 0x%02x */ nullref", type);
}

/* `<class .ctor (A, B) +T, U>`: the GenericParam rows of a TypeDef or
 * MethodDef, by number. */
void mdi_ilasm_put_generic_params(struct out *o, uint32_t owner)
{
    uint32_t key, rid, rids[256], n = 0;
    mdt_find fi;
    if (mdt_coded_encode(&key, MDT_CI_TypeOrMethodDef, owner) ||
        mdt_find_init(&fi, o->img, MDT_TABLE_GenericParam, MDT_COL_GenericParam_Owner, key)) {
        mdt_error_clear();
        return;
    }
    while (n < 256 && mdt_find_next(&rid, &fi) == 0)
        rids[n++] = rid;
    mdt_error_clear();
    if (!n)
        return;
    fputc('<', o->f);
    for (uint32_t num = 0, done = 0; done < n && num < 256; num++) {
        for (uint32_t i = 0; i < n; i++) {
            mdt_row r;
            const char *name;
            if (mdt_row_get(&r, o->img, MDT_TABLE_GenericParam, rids[i]) ||
                mdt_row_raw(&r, MDT_COL_GenericParam_Number) != num)
                continue;
            unsigned fl = (unsigned)mdt_row_raw(&r, MDT_COL_GenericParam_Flags);
            if (done++)
                fputs(", ", o->f);
            if ((fl & 3) == 1)
                fputc('+', o->f);
            else if ((fl & 3) == 2)
                fputc('-', o->f);
            if (fl & 0x4)
                fputs("class ", o->f);
            if (fl & 0x8)
                fputs("valuetype ", o->f);
            if (fl & 0x20) /* AllowByRefLike, .NET 9: `allows ref struct` */
                fputs("byreflike ", o->f);
            if (fl & 0x10)
                fputs(".ctor ", o->f);
            /* Constraints. */
            uint32_t crid, cn = 0;
            mdt_find cf;
            if (mdt_find_init(&cf, o->img, MDT_TABLE_GenericParamConstraint,
                              MDT_COL_GenericParamConstraint_Owner, rids[i]) == 0) {
                while (mdt_find_next(&crid, &cf) == 0) {
                    mdt_row cr;
                    uint32_t t;
                    if (mdt_row_get(&cr, o->img, MDT_TABLE_GenericParamConstraint, crid) ||
                        mdt_row_token(&t, &cr, MDT_COL_GenericParamConstraint_Constraint))
                        continue;
                    fputs(cn++ ? ", " : "(", o->f);
                    mdi_ilasm_put_token(o, t);
                }
                if (cn)
                    fputs(") ", o->f);
            }
            mdt_error_clear();
            if (mdt_row_string(&name, NULL, &r, MDT_COL_GenericParam_Name) == 0)
                mdi_ilasm_put_id(o, name);
            else
                mdi_ilasm_put_error(o, "name");
        }
    }
    fputc('>', o->f);
}

void mdi_ilasm_put_qstr(struct out *o, const char *s)
{
    char *q = NULL;
    if (mdt_ilasm_string(o->mem, &q, s, strlen(s)) == 0)
        fputs(q, o->f);
    else
        mdi_ilasm_put_error(o, "string");
    talloc_free(q);
}

/* ` marshal(...)` of a field or parameter with a FieldMarshal row (II.23.4);
 * a descriptor ILAsm cannot spell is said in a comment (the rebuilt module
 * then lacks it). */
void mdi_ilasm_put_marshal(struct out *o, uint32_t tok, bool lead)
{
    char *text;
    int e = mdt_marshal_text(o->mem, &text, o->img, tok);
    if (e == 0)
        fprintf(o->f, lead ? " marshal(%s)" : "marshal(%s) ", text);
    else if (e != MDT_ENOTFOUND) {
        char msg[512];
        mdt_error_message(msg, sizeof msg);
        for (char *q = msg; (q = strstr(q, "*/"));) /* the comment must not end early */
            q[1] = '|';
        fprintf(o->f, lead ? " /* marshal: %s */" : "/* marshal: %s */ ", msg);
    }
    talloc_free(e == 0 ? text : NULL);
    mdt_error_clear();
}

/* The bytes a field's RVA data spans: its type's size, a primitive's or
 * a value type's of this module with an explicit .size (what compilers
 * emit for array initializers); 0 when unknown. */
