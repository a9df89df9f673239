/* `il -a --ilasm`: each open module whole as ILAsm source (ECMA-335
 * Partition II's grammar) that an assembler rebuilds, the way ILDasm's
 * output round-trips: .assembly extern, .assembly, .module, the classes in
 * TypeDef order with nested ones inside their enclosing class (II.10),
 * extends and implements, generic parameters with their constraints
 * (II.10.1.7), .pack/.size and field offsets (II.10.7), fields with their
 * constants (II.16.2), methods with parameters, defaults, .override and
 * bodies (II.15, the body printer of cmd_il.c), properties (II.17), events
 * (II.18), custom attributes as blobs (II.21; a generic parameter's after
 * `.param type T`), marshalling descriptors
 * (II.23.4, mdt_marshal_text), P/Invoke flags (II.23.1.8), declarative
 * security as its blob (II.22.11), field RVA data (II.16.3), and the
 * manifest: other files, exported and forwarded types, resources in a
 * file or another assembly (II.6.2). Every name is written in the IL
 * style, which quotes what is no ILAsm identifier.
 *
 * Left out, and said in a comment at the top of the output: the bytes of
 * embedded manifest resources (ILAsm reads them from a file of the
 * resource's name, which `resources -x -a DIR` writes: the output says
 * so) and vtable fixups. tests/il/roundtrip.sh assembles the
 * output and compares the rebuilt module with the original. */
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

#include "il_text.h"

/* Cap on nesting depth (a cycle is refused by the nesting queries; this
 * bounds recursion on a long legal chain). */
#define MAX_DEPTH 64

struct out {
    struct il *c;
    FILE *f;
    void *mem;
    const mdt_image *img;
    uint32_t *nested_of; /* per TypeDef rid: enclosing rid, 0 if none */
    uint32_t ntypes;
    /* field RVA data to write after the classes: .data D_<rva> */
    struct data_block {
        uint32_t rva, size;
    } * data;
    size_t ndata;
};

static void ind(struct out *o, unsigned d)
{
    for (unsigned i = 0; i < d; i++)
        fputs("  ", o->f);
}

/* An identifier, quoted as ILAsm needs. */
static void put_id(struct out *o, const char *s)
{
    char *q = NULL;
    if (mdt_ilasm_name(o->mem, &q, s, strlen(s)) == 0)
        mdi_il_put_clean(o->f, q);
    else {
        mdt_error_clear();
        fputs("'?'", o->f);
    }
}

static void put_error(struct out *o, const char *what)
{
    char msg[300];
    fprintf(o->f, "/* %s: %s */", what, mdi_errmsg_here(msg, sizeof msg));
    mdt_error_clear();
}

static void put_type(struct out *o, const mdt_type *t)
{
    char *s;
    if (mdt_type_name(o->mem, &s, t, &o->c->opts))
        put_error(o, "type");
    else
        mdi_il_put_clean(o->f, s);
}

static void put_token(struct out *o, uint32_t tok)
{
    char *s;
    if (mdt_token_name(o->mem, &s, o->img, tok, &o->c->opts))
        put_error(o, "token");
    else
        mdi_il_put_clean(o->f, s);
}

/* A method token as an ILAsm method reference (`instance void X::M(int32)`):
 * the operand text of a call. */
static void put_method_ref(struct out *o, uint32_t tok)
{
    mdt_il_body fake = {.img = o->img};
    mdt_il_insn in = {.info = mdt_il_opcode_info(MDT_IL_CALL),
                      .opcode = MDT_IL_CALL,
                      .operand = MDT_IL_OPERAND_METHOD,
                      .token = tok};
    char *s;
    if (mdt_il_insn_text(o->mem, &s, &fake, &in, &o->c->opts)) {
        put_error(o, "method");
        return;
    }
    const char *sp = strchr(s, ' ');
    mdi_il_put_clean(o->f, sp ? sp + 1 : s);
}

static void put_bytes(struct out *o, const uint8_t *p, uint32_t n, unsigned d)
{
    fputs("(", o->f);
    for (uint32_t i = 0; i < n; i++) {
        if (i && i % 16 == 0) {
            fputc('\n', o->f);
            ind(o, d + 2);
        }
        fprintf(o->f, " %02X", p[i]);
    }
    fputs(" )", o->f);
}

/* Every custom attribute on `parent`. */
static void put_customs(struct out *o, uint32_t parent, unsigned d)
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
            ind(o, d);
            put_error(o, "custom attribute");
            fputc('\n', o->f);
            continue;
        }
        ind(o, d);
        fputs(".custom ", o->f);
        put_method_ref(o, ctor);
        fputs(" = ", o->f);
        put_bytes(o, blob, n, d);
        fputc('\n', o->f);
    }
    mdt_error_clear();
}

/* The custom attributes of a type's or method's generic parameters,
 * each parameter that has some introduced by `.param type NAME` (as
 * ILDasm writes C#'s NullableAttribute and IsUnmanagedAttribute on them). */
static void put_gparam_customs(struct out *o, uint32_t owner, unsigned d)
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
        ind(o, d);
        fputs(".param type ", o->f);
        if (mdt_row_get(&r, o->img, MDT_TABLE_GenericParam, rid) == 0 &&
            mdt_row_string(&name, NULL, &r, MDT_COL_GenericParam_Name) == 0)
            put_id(o, name);
        else
            put_error(o, "generic parameter name");
        fputc('\n', o->f);
        put_customs(o, gtok, d);
    }
    mdt_error_clear();
}

/* Declarative security of a type, method or the assembly (DeclSecurity,
 * II.22.11) as `.permissionset ACTION = ( bytes )`: the blob as stored,
 * XML or binary alike, so the assembler keeps it byte for byte. */
static void put_security(struct out *o, uint32_t parent, unsigned d)
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
        ind(o, d);
        if (mdt_row_get(&r, o->img, MDT_TABLE_DeclSecurity, rid) ||
            mdt_row_blob(&blob, &n, &r, MDT_COL_DeclSecurity_PermissionSet)) {
            put_error(o, "permission set");
            fputc('\n', o->f);
            continue;
        }
        unsigned a = (unsigned)mdt_row_raw(&r, MDT_COL_DeclSecurity_Action);
        if (a >= sizeof actions / sizeof *actions || !actions[a]) {
            fprintf(o->f, "// a permission set of action %u, which ILAsm has no word for\n", a);
            continue;
        }
        fprintf(o->f, ".permissionset %s = ", actions[a]);
        put_bytes(o, blob, n, d);
        fputc('\n', o->f);
    }
    mdt_error_clear();
}

/* A Constant row's value as ILAsm's fieldInit (II.16.2). */
static void put_constant(struct out *o, uint32_t parent)
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
        put_bytes(o, v, n, 2);
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
static void put_generic_params(struct out *o, uint32_t owner)
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
                    put_token(o, t);
                }
                if (cn)
                    fputs(") ", o->f);
            }
            mdt_error_clear();
            if (mdt_row_string(&name, NULL, &r, MDT_COL_GenericParam_Name) == 0)
                put_id(o, name);
            else
                put_error(o, "name");
        }
    }
    fputc('>', o->f);
}

static const char *const type_vis[] = {
    "private",       "public",          "nested public",      "nested private",
    "nested family", "nested assembly", "nested famandassem", "nested famorassem"};
static const char *const member_access[] = {"privatescope", "private",       "famandassem",
                                            "assembly",     "family",        "famorassem",
                                            "public",       "/* access 7 */"};

static void put_class_flags(struct out *o, uint32_t fl)
{
    fprintf(o->f, "%s ", type_vis[fl & 7]);
    if (fl & 0x20)
        fputs("interface ", o->f);
    fputs((fl & 0x18) == 0x8 ? "sequential " : (fl & 0x18) == 0x10 ? "explicit " : "auto ", o->f);
    fputs((fl & 0x30000) == 0x10000   ? "unicode "
          : (fl & 0x30000) == 0x20000 ? "autochar "
                                      : "ansi ",
          o->f);
    static const struct {
        uint32_t bit;
        const char *w;
    } b[] = {{0x80, "abstract"},         {0x100, "sealed"},
             {0x400, "specialname"},     {0x800, "rtspecialname"},
             {0x1000, "import"},         {0x2000, "serializable"},
             {0x4000, "windowsruntime"}, {0x100000, "beforefieldinit"}};
    for (size_t i = 0; i < sizeof b / sizeof *b; i++)
        if (fl & b[i].bit)
            fprintf(o->f, "%s ", b[i].w);
}

/* A quoted string (II.5.2's QSTRING): " and \\ escaped, a control
 * character as an octal escape. */
static void put_qstr(struct out *o, const char *s)
{
    fputc('"', o->f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(o->f, "\\%c", ch);
        else if (ch < 0x20 || ch == 0x7f)
            fprintf(o->f, "\\%03o", ch);
        else
            fputc(ch, o->f);
    }
    fputc('"', o->f);
}

/* ` marshal(...)` of a field or parameter with a FieldMarshal row (II.23.4);
 * a descriptor ILAsm cannot spell is said in a comment (the rebuilt module
 * then lacks it). */
static void put_marshal(struct out *o, uint32_t tok, bool lead)
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
static uint32_t field_data_size(struct out *o, const mdt_type *t)
{
    switch (t->kind) {
    case MDT_ELEMENT_TYPE_BOOLEAN:
    case MDT_ELEMENT_TYPE_I1:
    case MDT_ELEMENT_TYPE_U1: return 1;
    case MDT_ELEMENT_TYPE_CHAR:
    case MDT_ELEMENT_TYPE_I2:
    case MDT_ELEMENT_TYPE_U2: return 2;
    case MDT_ELEMENT_TYPE_I4:
    case MDT_ELEMENT_TYPE_U4:
    case MDT_ELEMENT_TYPE_R4: return 4;
    case MDT_ELEMENT_TYPE_I8:
    case MDT_ELEMENT_TYPE_U8:
    case MDT_ELEMENT_TYPE_R8: return 8;
    case MDT_ELEMENT_TYPE_I:
    case MDT_ELEMENT_TYPE_U: return mdt_image_pe_info(o->img)->pe32plus ? 8 : 4;
    case MDT_ELEMENT_TYPE_VALUETYPE: {
        uint32_t lrid;
        mdt_find fi;
        mdt_row lr;
        uint32_t size = 0;
        if (MDT_TOKEN_TABLE(t->token) == MDT_TABLE_TypeDef &&
            mdt_find_init(&fi, o->img, MDT_TABLE_ClassLayout, MDT_COL_ClassLayout_Parent,
                          MDT_TOKEN_RID(t->token)) == 0 &&
            mdt_find_next(&lrid, &fi) == 0 &&
            mdt_row_get(&lr, o->img, MDT_TABLE_ClassLayout, lrid) == 0)
            size = (uint32_t)mdt_row_raw(&lr, MDT_COL_ClassLayout_ClassSize);
        mdt_error_clear();
        return size;
    }
    default: return 0;
    }
}

/* ` at D_<rva>` of a field with RVA data (FieldRVA, II.22.18), its bytes
 * kept for the .data line at the end; a comment when they cannot be had. */
static void put_field_rva(struct out *o, uint32_t rid, const mdt_type *t)
{
    uint32_t frid, rva, size;
    mdt_find fi;
    mdt_row fr;
    const uint8_t *p;
    if (mdt_find_init(&fi, o->img, MDT_TABLE_FieldRVA, MDT_COL_FieldRVA_Field, rid) ||
        mdt_find_next(&frid, &fi) || mdt_row_get(&fr, o->img, MDT_TABLE_FieldRVA, frid)) {
        mdt_error_clear();
        fputs(" /* no FieldRVA row */", o->f);
        return;
    }
    rva = (uint32_t)mdt_row_raw(&fr, MDT_COL_FieldRVA_RVA);
    if (!(size = field_data_size(o, t)) || mdt_image_rva(&p, o->img, rva, size)) {
        mdt_error_clear();
        fprintf(o->f, " /* data at RVA 0x%08x: %s */", rva,
                size ? "not in the image" : "size unknown");
        return;
    }
    fprintf(o->f, " at D_%08X", rva);
    for (size_t i = 0; i < o->ndata; i++)
        if (o->data[i].rva == rva) { /* a label shared: the longest span */
            if (size > o->data[i].size)
                o->data[i].size = size;
            return;
        }
    struct data_block *v = talloc_realloc(o->mem, o->data, struct data_block, o->ndata + 1);
    if (!v)
        return;
    o->data = v;
    o->data[o->ndata++] = (struct data_block){rva, size};
}

/* The .data lines of the fields' RVA data (II.16.3.1), bytes as stored. */
static void put_data(struct out *o)
{
    for (size_t i = 0; i < o->ndata; i++) {
        const uint8_t *p;
        if (mdt_image_rva(&p, o->img, o->data[i].rva, o->data[i].size)) {
            mdt_error_clear();
            continue;
        }
        fprintf(o->f, ".data D_%08X = bytearray ", o->data[i].rva);
        put_bytes(o, p, o->data[i].size, 0);
        fputc('\n', o->f);
    }
}

static void put_field(struct out *o, uint32_t rid, unsigned d)
{
    mdt_row r;
    const char *name;
    mdt_sig sig;
    uint32_t tok = MDT_TOKEN(MDT_TABLE_Field, rid);
    ind(o, d);
    if (mdt_row_get(&r, o->img, MDT_TABLE_Field, rid) ||
        mdt_row_string(&name, NULL, &r, MDT_COL_Field_Name)) {
        put_error(o, "field");
        fputc('\n', o->f);
        return;
    }
    unsigned fl = (unsigned)mdt_row_raw(&r, MDT_COL_Field_Flags);
    fputs(".field ", o->f);
    /* An explicit layout's offset. */
    {
        uint32_t lrid;
        mdt_find fi;
        mdt_row lr;
        if (mdt_find_init(&fi, o->img, MDT_TABLE_FieldLayout, MDT_COL_FieldLayout_Field, rid) ==
                0 &&
            mdt_find_next(&lrid, &fi) == 0 &&
            mdt_row_get(&lr, o->img, MDT_TABLE_FieldLayout, lrid) == 0)
            fprintf(o->f, "[%" PRIu64 "] ", (uint64_t)mdt_row_raw(&lr, MDT_COL_FieldLayout_Offset));
        mdt_error_clear();
    }
    fprintf(o->f, "%s ", member_access[fl & 7]);
    static const struct {
        uint32_t bit;
        const char *w;
    } b[] = {{0x10, "static"},        {0x20, "initonly"},     {0x40, "literal"},
             {0x80, "notserialized"}, {0x200, "specialname"}, {0x400, "rtspecialname"}};
    for (size_t i = 0; i < sizeof b / sizeof *b; i++)
        if (fl & b[i].bit)
            fprintf(o->f, "%s ", b[i].w);
    if (fl & 0x1000) /* HasFieldMarshal */
        put_marshal(o, tok, false);
    if (mdt_sig_of_token(o->mem, &sig, o->img, tok) || sig.kind != MDT_SIG_FIELD)
        put_error(o, "signature");
    else
        put_type(o, sig.type);
    fputc(' ', o->f);
    put_id(o, name);
    if ((fl & 0x100) && sig.kind == MDT_SIG_FIELD) /* HasFieldRVA */
        put_field_rva(o, rid, sig.type);
    if (fl & 0x8000)
        put_constant(o, tok);
    fputc('\n', o->f);
    put_customs(o, tok, d);
}

static const char *const cc_words[] = {
    NULL,    "unmanaged cdecl", "unmanaged stdcall", "unmanaged thiscall", "unmanaged fastcall",
    "vararg"};

static void put_method(struct out *o, uint32_t rid, unsigned d)
{
    mdt_row r;
    const char *name;
    mdt_sig sig;
    uint32_t tok = MDT_TOKEN(MDT_TABLE_MethodDef, rid);
    const mdt_pe_info *pe = mdt_image_pe_info(o->img);
    mdt_generic_context g = {.img = o->img, .method_owner = tok};
    ind(o, d);
    if (mdt_row_get(&r, o->img, MDT_TABLE_MethodDef, rid) ||
        mdt_row_string(&name, NULL, &r, MDT_COL_MethodDef_Name) ||
        mdt_sig_of_token(o->mem, &sig, o->img, tok) || sig.kind != MDT_SIG_METHOD) {
        put_error(o, "method");
        fputc('\n', o->f);
        return;
    }
    if (mdt_member_owner(&g.type_owner, o->img, tok))
        mdt_error_clear();
    o->c->opts.gctx = &g;
    unsigned fl = (unsigned)mdt_row_raw(&r, MDT_COL_MethodDef_Flags);
    unsigned impl = (unsigned)mdt_row_raw(&r, MDT_COL_MethodDef_ImplFlags);
    fprintf(o->f, ".method %s ", member_access[fl & 7]);
    static const struct {
        uint32_t bit;
        const char *w;
    } b[] = {{0x10, "static"},      {0x20, "final"},        {0x40, "virtual"},
             {0x80, "hidebysig"},   {0x100, "newslot"},     {0x200, "strict"},
             {0x400, "abstract"},   {0x800, "specialname"}, {0x1000, "rtspecialname"},
             {0x8, "unmanagedexp"}, {0x8000, "reqsecobj"}};
    for (size_t i = 0; i < sizeof b / sizeof *b; i++)
        if (fl & b[i].bit)
            fprintf(o->f, "%s ", b[i].w);
    if (fl & 0x2000) { /* P/Invoke: the module and the entry's name */
        uint32_t key, irid, mod;
        mdt_find fi;
        mdt_row ir, mr;
        const char *entry, *modname;
        if (mdt_coded_encode(&key, MDT_CI_MemberForwarded, tok) == 0 &&
            mdt_find_init(&fi, o->img, MDT_TABLE_ImplMap, MDT_COL_ImplMap_MemberForwarded, key) ==
                0 &&
            mdt_find_next(&irid, &fi) == 0 &&
            mdt_row_get(&ir, o->img, MDT_TABLE_ImplMap, irid) == 0 &&
            mdt_row_string(&entry, NULL, &ir, MDT_COL_ImplMap_ImportName) == 0 &&
            mdt_row_token(&mod, &ir, MDT_COL_ImplMap_ImportScope) == 0 &&
            mdt_row_get(&mr, o->img, MDT_TABLE_ModuleRef, MDT_TOKEN_RID(mod)) == 0 &&
            mdt_row_string(&modname, NULL, &mr, MDT_COL_ModuleRef_Name) == 0) {
            /* PInvokeAttributes (II.23.1.8) in ILDasm's order; the entry's
             * name only when it is not the method's */
            unsigned pf = (unsigned)mdt_row_raw(&ir, MDT_COL_ImplMap_MappingFlags);
            static const char *const charset[] = {NULL, " ansi", " unicode", " autochar"};
            static const char *const conv[] = {NULL,        " winapi",   " cdecl", " stdcall",
                                               " thiscall", " fastcall", NULL,     NULL};
            static const char *const onoff[] = {NULL, ":on", ":off", NULL};
            fputs("pinvokeimpl(", o->f);
            put_qstr(o, modname);
            if (strcmp(entry, name) != 0) {
                fputs(" as ", o->f);
                put_qstr(o, entry);
            }
            if (pf & 0x1)
                fputs(" nomangle", o->f);
            if (charset[(pf >> 1) & 3])
                fputs(charset[(pf >> 1) & 3], o->f);
            if (pf & 0x40)
                fputs(" lasterr", o->f);
            if (conv[(pf >> 8) & 7])
                fputs(conv[(pf >> 8) & 7], o->f);
            if (onoff[(pf >> 4) & 3])
                fprintf(o->f, " bestfit%s", onoff[(pf >> 4) & 3]);
            if (onoff[(pf >> 12) & 3])
                fprintf(o->f, " charmaperror%s", onoff[(pf >> 12) & 3]);
            fputs(") ", o->f);
        } else
            fputs("pinvokeimpl() ", o->f);
        mdt_error_clear();
    }
    const mdt_method_sig *m = sig.method;
    if (m->callconv & MDT_CC_HASTHIS)
        fputs("instance ", o->f);
    if (m->callconv & MDT_CC_EXPLICITTHIS)
        fputs("explicit ", o->f);
    unsigned cc = m->callconv & MDT_CC_MASK;
    if (cc && cc < sizeof cc_words / sizeof *cc_words && cc_words[cc])
        fprintf(o->f, "%s ", cc_words[cc]);
    put_type(o, m->ret);
    fputc(' ', o->f);
    /* the return value's marshalling: Param sequence 0 */
    {
        uint32_t first0, count0, p;
        mdt_row pr;
        if (mdt_row_range(&first0, &count0, &r, MDT_COL_MethodDef_ParamList) == 0 && count0 &&
            mdt_range_item(&p, o->img, MDT_TABLE_Param, first0) == 0 &&
            mdt_row_get(&pr, o->img, MDT_TABLE_Param, p) == 0 &&
            mdt_row_raw(&pr, MDT_COL_Param_Sequence) == 0) {
            if (mdt_row_raw(&pr, MDT_COL_Param_Flags) & 0x2000)
                put_marshal(o, MDT_TOKEN(MDT_TABLE_Param, p), false);
        }
        mdt_error_clear();
    }
    put_id(o, name);
    put_generic_params(o, tok);
    /* Parameters with their Param rows (names, in/out/opt, defaults). */
    const char *pnames[1024] = {0};
    uint32_t pflags[1024] = {0}, prid[1024] = {0};
    uint32_t first, count;
    if (mdt_row_range(&first, &count, &r, MDT_COL_MethodDef_ParamList) == 0) {
        for (uint32_t i = 0; i < count; i++) {
            uint32_t p;
            mdt_row pr;
            if (mdt_range_item(&p, o->img, MDT_TABLE_Param, first + i) ||
                mdt_row_get(&pr, o->img, MDT_TABLE_Param, p))
                continue;
            uint32_t seq = (uint32_t)mdt_row_raw(&pr, MDT_COL_Param_Sequence);
            if (seq >= 1024)
                continue;
            if (mdt_row_string(&pnames[seq], NULL, &pr, MDT_COL_Param_Name))
                pnames[seq] = NULL;
            pflags[seq] = (uint32_t)mdt_row_raw(&pr, MDT_COL_Param_Flags);
            prid[seq] = p;
        }
    }
    mdt_error_clear();
    fputc('(', o->f);
    for (uint32_t i = 0; i < m->nparams; i++) {
        if (i)
            fputs(", ", o->f);
        if (i == m->sentinel)
            fputs("..., ", o->f);
        uint32_t s = i + 1 < 1024 ? i + 1 : 0;
        if (s && (pflags[s] & 0x1))
            fputs("[in] ", o->f);
        if (s && (pflags[s] & 0x2))
            fputs("[out] ", o->f);
        if (s && (pflags[s] & 0x10))
            fputs("[opt] ", o->f);
        put_type(o, m->params[i]);
        if (s && prid[s] && (pflags[s] & 0x2000))
            put_marshal(o, MDT_TOKEN(MDT_TABLE_Param, prid[s]), true);
        if (s && pnames[s] && pnames[s][0]) {
            fputc(' ', o->f);
            put_id(o, pnames[s]);
        }
    }
    fputs(") ", o->f);
    unsigned code = impl & 3;
    fputs(code == 0 ? "cil " : code == 1 ? "native " : code == 2 ? "optil " : "runtime ", o->f);
    fputs(impl & 4 ? "unmanaged" : "managed", o->f);
    static const struct {
        uint32_t bit;
        const char *w;
    } ib[] = {{0x8, "noinlining"},
              {0x10, "forwardref"},
              {0x20, "synchronized"},
              {0x40, "nooptimization"},
              {0x80, "preservesig"},
              {0x100, "aggressiveinlining"},
              {0x200, "aggressiveoptimization"},
              {0x1000, "internalcall"}};
    for (size_t i = 0; i < sizeof ib / sizeof *ib; i++)
        if (impl & ib[i].bit)
            fprintf(o->f, " %s", ib[i].w);
    fputc('\n', o->f);
    ind(o, d);
    fputs("{\n", o->f);
    if (pe->entry_point == tok && !(pe->cli_flags & MDT_COMIMAGE_NATIVE_ENTRYPOINT)) {
        ind(o, d + 1);
        fputs(".entrypoint\n", o->f);
    }
    put_customs(o, tok, d + 1);
    put_gparam_customs(o, tok, d + 1);
    put_security(o, tok, d + 1);
    /* Parameters' defaults and attributes. */
    for (uint32_t s = 0; s < 1024 && s <= m->nparams; s++) {
        if (!prid[s])
            continue;
        uint32_t ptok = MDT_TOKEN(MDT_TABLE_Param, prid[s]);
        uint32_t key, crid;
        mdt_find fi;
        bool has_ca = mdt_coded_encode(&key, MDT_CI_HasCustomAttribute, ptok) == 0 &&
                      mdt_find_init(&fi, o->img, MDT_TABLE_CustomAttribute,
                                    MDT_COL_CustomAttribute_Parent, key) == 0 &&
                      mdt_find_next(&crid, &fi) == 0;
        mdt_error_clear();
        if (!(pflags[s] & 0x1000) && !has_ca)
            continue;
        ind(o, d + 1);
        fprintf(o->f, ".param [%" PRIu32 "]", s);
        if (pflags[s] & 0x1000)
            put_constant(o, ptok);
        fputc('\n', o->f);
        put_customs(o, ptok, d + 1);
    }
    /* Overrides: MethodImpl rows whose body is this method. */
    {
        uint32_t owner = g.type_owner, irid;
        mdt_find fi;
        if (owner && mdt_find_init(&fi, o->img, MDT_TABLE_MethodImpl, MDT_COL_MethodImpl_Class,
                                   MDT_TOKEN_RID(owner)) == 0) {
            while (mdt_find_next(&irid, &fi) == 0) {
                mdt_row ir;
                uint32_t body, decl;
                if (mdt_row_get(&ir, o->img, MDT_TABLE_MethodImpl, irid) ||
                    mdt_row_token(&body, &ir, MDT_COL_MethodImpl_MethodBody) ||
                    mdt_row_token(&decl, &ir, MDT_COL_MethodImpl_MethodDeclaration) || body != tok)
                    continue;
                ind(o, d + 1);
                fputs(".override method ", o->f);
                put_method_ref(o, decl);
                fputc('\n', o->f);
            }
        }
        mdt_error_clear();
    }
    mdt_il_body body;
    if (mdt_row_raw(&r, MDT_COL_MethodDef_RVA) && code == 0 &&
        mdt_il_body_get(&body, o->img, tok) == 0) {
        char *err = NULL;
        ind(o, d + 1);
        fprintf(o->f, ".maxstack %u\n", body.max_stack);
        if (body.locals_token)
            mdi_il_put_locals(o->c, o->f, o->mem, &body);
        else if (body.init_locals) /* ILAsm has no flag alone: an empty signature */
            fputs("  .locals init ()\n", o->f);
        if (mdi_il_text_body(o->c, o->f, o->mem, &body, &err) == 0 && err) {
            ind(o, d + 1);
            fprintf(o->f, "// the body does not decode whole: %s\n", err);
        }
    }
    mdt_error_clear();
    ind(o, d);
    fputs("}\n", o->f);
    o->c->opts.gctx = NULL;
}

static void put_semantics(struct out *o, uint32_t assoc, unsigned d)
{
    uint32_t key, rid;
    mdt_find fi;
    if (mdt_coded_encode(&key, MDT_CI_HasSemantics, assoc) ||
        mdt_find_init(&fi, o->img, MDT_TABLE_MethodSemantics, MDT_COL_MethodSemantics_Association,
                      key)) {
        mdt_error_clear();
        return;
    }
    while (mdt_find_next(&rid, &fi) == 0) {
        mdt_row r;
        uint32_t m;
        if (mdt_row_get(&r, o->img, MDT_TABLE_MethodSemantics, rid) ||
            mdt_row_token(&m, &r, MDT_COL_MethodSemantics_Method))
            continue;
        unsigned s = (unsigned)mdt_row_raw(&r, MDT_COL_MethodSemantics_Semantics);
        const char *w = s & 1      ? ".set"
                        : s & 2    ? ".get"
                        : s & 8    ? ".addon"
                        : s & 0x10 ? ".removeon"
                        : s & 0x20 ? ".fire"
                                   : ".other";
        ind(o, d);
        fprintf(o->f, "%s ", w);
        put_method_ref(o, m);
        fputc('\n', o->f);
    }
    mdt_error_clear();
}

static void put_properties(struct out *o, uint32_t type_rid, unsigned d)
{
    uint32_t rid, first, count;
    mdt_find fi;
    mdt_row r;
    if (mdt_find_init(&fi, o->img, MDT_TABLE_PropertyMap, MDT_COL_PropertyMap_Parent, type_rid) ||
        mdt_find_next(&rid, &fi) || mdt_row_get(&r, o->img, MDT_TABLE_PropertyMap, rid) ||
        mdt_row_range(&first, &count, &r, MDT_COL_PropertyMap_PropertyList)) {
        mdt_error_clear();
        return;
    }
    for (uint32_t i = 0; i < count; i++) {
        uint32_t p;
        mdt_row pr;
        const char *name;
        mdt_sig sig;
        if (mdt_range_item(&p, o->img, MDT_TABLE_Property, first + i) ||
            mdt_row_get(&pr, o->img, MDT_TABLE_Property, p) ||
            mdt_row_string(&name, NULL, &pr, MDT_COL_Property_Name))
            continue;
        uint32_t tok = MDT_TOKEN(MDT_TABLE_Property, p);
        unsigned fl = (unsigned)mdt_row_raw(&pr, MDT_COL_Property_Flags);
        ind(o, d);
        fputs(".property ", o->f);
        if (fl & 0x200)
            fputs("specialname ", o->f);
        if (fl & 0x400)
            fputs("rtspecialname ", o->f);
        if (mdt_sig_of_token(o->mem, &sig, o->img, tok) || !sig.method) {
            put_error(o, "signature");
        } else {
            if (sig.method->callconv & MDT_CC_HASTHIS)
                fputs("instance ", o->f);
            put_type(o, sig.method->ret);
            fputc(' ', o->f);
            put_id(o, name);
            fputc('(', o->f);
            for (uint32_t k = 0; k < sig.method->nparams; k++) {
                if (k)
                    fputs(", ", o->f);
                put_type(o, sig.method->params[k]);
            }
            fputc(')', o->f);
        }
        if (fl & 0x1000)
            put_constant(o, tok);
        fputc('\n', o->f);
        ind(o, d);
        fputs("{\n", o->f);
        put_customs(o, tok, d + 1);
        put_semantics(o, tok, d + 1);
        ind(o, d);
        fputs("}\n", o->f);
    }
    mdt_error_clear();
}

static void put_events(struct out *o, uint32_t type_rid, unsigned d)
{
    uint32_t rid, first, count;
    mdt_find fi;
    mdt_row r;
    if (mdt_find_init(&fi, o->img, MDT_TABLE_EventMap, MDT_COL_EventMap_Parent, type_rid) ||
        mdt_find_next(&rid, &fi) || mdt_row_get(&r, o->img, MDT_TABLE_EventMap, rid) ||
        mdt_row_range(&first, &count, &r, MDT_COL_EventMap_EventList)) {
        mdt_error_clear();
        return;
    }
    for (uint32_t i = 0; i < count; i++) {
        uint32_t e, type;
        mdt_row er;
        const char *name;
        if (mdt_range_item(&e, o->img, MDT_TABLE_Event, first + i) ||
            mdt_row_get(&er, o->img, MDT_TABLE_Event, e) ||
            mdt_row_string(&name, NULL, &er, MDT_COL_Event_Name) ||
            mdt_row_token(&type, &er, MDT_COL_Event_EventType))
            continue;
        uint32_t tok = MDT_TOKEN(MDT_TABLE_Event, e);
        unsigned fl = (unsigned)mdt_row_raw(&er, MDT_COL_Event_EventFlags);
        ind(o, d);
        fputs(".event ", o->f);
        if (fl & 0x200)
            fputs("specialname ", o->f);
        if (fl & 0x400)
            fputs("rtspecialname ", o->f);
        if (MDT_TOKEN_RID(type))
            put_token(o, type);
        fputc(' ', o->f);
        put_id(o, name);
        fputc('\n', o->f);
        ind(o, d);
        fputs("{\n", o->f);
        put_customs(o, tok, d + 1);
        put_semantics(o, tok, d + 1);
        ind(o, d);
        fputs("}\n", o->f);
    }
    mdt_error_clear();
}

/* The members of a TypeDef (for <Module>: the globals, at depth 0). */
static void put_members(struct out *o, uint32_t rid, const mdt_row *r, unsigned d)
{
    uint32_t first, count;
    if (mdt_row_range(&first, &count, r, MDT_COL_TypeDef_FieldList) == 0)
        for (uint32_t i = 0; i < count; i++) {
            uint32_t f;
            if (mdt_range_item(&f, o->img, MDT_TABLE_Field, first + i) == 0)
                put_field(o, f, d);
        }
    mdt_error_clear();
    if (mdt_row_range(&first, &count, r, MDT_COL_TypeDef_MethodList) == 0)
        for (uint32_t i = 0; i < count; i++) {
            uint32_t m;
            if (mdt_range_item(&m, o->img, MDT_TABLE_MethodDef, first + i) == 0)
                put_method(o, m, d);
        }
    mdt_error_clear();
    put_properties(o, rid, d);
    put_events(o, rid, d);
}

static void put_class(struct out *o, uint32_t rid, unsigned d)
{
    mdt_row r;
    const char *name, *ns;
    uint32_t tok = MDT_TOKEN(MDT_TABLE_TypeDef, rid), ext;
    if (d > MAX_DEPTH)
        return;
    ind(o, d);
    if (mdt_row_get(&r, o->img, MDT_TABLE_TypeDef, rid) ||
        mdt_row_string(&name, NULL, &r, MDT_COL_TypeDef_TypeName) ||
        mdt_row_string(&ns, NULL, &r, MDT_COL_TypeDef_TypeNamespace) ||
        mdt_row_token(&ext, &r, MDT_COL_TypeDef_Extends)) {
        put_error(o, "class");
        fputc('\n', o->f);
        return;
    }
    mdt_generic_context g = {.img = o->img, .type_owner = tok};
    o->c->opts.gctx = &g;
    uint32_t fl = (uint32_t)mdt_row_raw(&r, MDT_COL_TypeDef_Flags);
    fputs(".class ", o->f);
    put_class_flags(o, fl);
    if (ns[0] && !o->nested_of[rid]) { /* Ns.Name, each part as ILAsm reads it */
        put_id(o, ns);
        fputc('.', o->f);
    }
    put_id(o, name);
    put_generic_params(o, tok);
    fputc('\n', o->f);
    if (MDT_TOKEN_RID(ext)) {
        ind(o, d + 2);
        fputs("extends ", o->f);
        put_token(o, ext);
        fputc('\n', o->f);
    }
    {
        uint32_t irid, n = 0;
        mdt_find fi;
        if (mdt_find_init(&fi, o->img, MDT_TABLE_InterfaceImpl, MDT_COL_InterfaceImpl_Class, rid) ==
            0)
            while (mdt_find_next(&irid, &fi) == 0) {
                mdt_row ir;
                uint32_t itf;
                if (mdt_row_get(&ir, o->img, MDT_TABLE_InterfaceImpl, irid) ||
                    mdt_row_token(&itf, &ir, MDT_COL_InterfaceImpl_Interface))
                    continue;
                ind(o, d + 2);
                fputs(n++ ? "           " : "implements ", o->f);
                put_token(o, itf);
                fputs(",\n", o->f);
            }
        mdt_error_clear();
        if (n) /* the last comma goes */
            fseek(o->f, -2, SEEK_CUR), fputs("\n", o->f);
    }
    ind(o, d);
    fputs("{\n", o->f);
    put_customs(o, tok, d + 1);
    put_gparam_customs(o, tok, d + 1);
    put_security(o, tok, d + 1);
    /* Type parameters' attributes are rare; layout is not. */
    {
        uint32_t lrid;
        mdt_find fi;
        mdt_row lr;
        if (mdt_find_init(&fi, o->img, MDT_TABLE_ClassLayout, MDT_COL_ClassLayout_Parent, rid) ==
                0 &&
            mdt_find_next(&lrid, &fi) == 0 &&
            mdt_row_get(&lr, o->img, MDT_TABLE_ClassLayout, lrid) == 0) {
            ind(o, d + 1);
            fprintf(o->f, ".pack %" PRIu64 "\n",
                    (uint64_t)mdt_row_raw(&lr, MDT_COL_ClassLayout_PackingSize));
            ind(o, d + 1);
            fprintf(o->f, ".size %" PRIu64 "\n",
                    (uint64_t)mdt_row_raw(&lr, MDT_COL_ClassLayout_ClassSize));
        }
        mdt_error_clear();
    }
    /* Nested types, in TypeDef order. */
    for (uint32_t n = 1; n <= o->ntypes; n++)
        if (o->nested_of[n] == rid && n != rid)
            put_class(o, n, d + 1);
    o->c->opts.gctx = &g;
    put_members(o, rid, &r, d + 1);
    o->c->opts.gctx = NULL;
    ind(o, d);
    fputs("}\n", o->f);
}

/* The name of an Implementation (II.24.2.6: File, AssemblyRef or
 * ExportedType) as the directive ILAsm takes inside .class extern and
 * .mresource; 0 when it names nothing readable. */
static int put_implementation(struct out *o, uint32_t impl, unsigned d)
{
    mdt_row r;
    const char *name, *ns;
    unsigned t = MDT_TOKEN_TABLE(impl);
    if (!MDT_TOKEN_RID(impl) || mdt_row_get(&r, o->img, t, MDT_TOKEN_RID(impl)))
        return 0;
    ind(o, d);
    if (t == MDT_TABLE_File && mdt_row_string(&name, NULL, &r, MDT_COL_File_Name) == 0) {
        fputs(".file ", o->f);
        put_id(o, name);
    } else if (t == MDT_TABLE_AssemblyRef &&
               mdt_row_string(&name, NULL, &r, MDT_COL_AssemblyRef_Name) == 0) {
        fputs(".assembly extern ", o->f);
        put_id(o, name);
    } else if (t == MDT_TABLE_ExportedType &&
               mdt_row_string(&name, NULL, &r, MDT_COL_ExportedType_TypeName) == 0 &&
               mdt_row_string(&ns, NULL, &r, MDT_COL_ExportedType_TypeNamespace) == 0) {
        fputs(".class extern ", o->f);
        if (ns[0]) {
            put_id(o, ns);
            fputc('.', o->f);
        }
        put_id(o, name);
    } else {
        put_error(o, "implementation");
    }
    return 1;
}

/* The manifest past the assembly (II.6.2): the other files of the
 * assembly (.file, with their hashes), the types they export and the
 * ones forwarded elsewhere (.class extern), and the manifest resources
 * kept in a file or another assembly (.mresource). A resource embedded
 * in this image is named in a comment: ILAsm takes its bytes from a file
 * of that name, which this text does not carry. */
static void put_manifest(struct out *o)
{
    uint32_t n = mdt_table_rows_present(o->img, MDT_TABLE_File);
    for (uint32_t rid = 1; rid <= n; rid++) {
        mdt_row r;
        const char *name;
        const uint8_t *hash;
        uint32_t hlen;
        if (mdt_row_get(&r, o->img, MDT_TABLE_File, rid) ||
            mdt_row_string(&name, NULL, &r, MDT_COL_File_Name) ||
            mdt_row_blob(&hash, &hlen, &r, MDT_COL_File_HashValue)) {
            put_error(o, "file");
            fputc('\n', o->f);
            continue;
        }
        fputs(mdt_row_raw(&r, MDT_COL_File_Flags) & 1 ? ".file nometadata " : ".file ", o->f);
        put_id(o, name);
        if (hlen) {
            fputs(" .hash = ", o->f);
            put_bytes(o, hash, hlen, 0);
        }
        fputc('\n', o->f);
        put_customs(o, MDT_TOKEN(MDT_TABLE_File, rid), 0);
    }
    mdt_error_clear();
    n = mdt_table_rows_present(o->img, MDT_TABLE_ExportedType);
    for (uint32_t rid = 1; rid <= n; rid++) {
        mdt_row r;
        const char *name, *ns;
        uint32_t impl;
        if (mdt_row_get(&r, o->img, MDT_TABLE_ExportedType, rid) ||
            mdt_row_string(&name, NULL, &r, MDT_COL_ExportedType_TypeName) ||
            mdt_row_string(&ns, NULL, &r, MDT_COL_ExportedType_TypeNamespace) ||
            mdt_row_token(&impl, &r, MDT_COL_ExportedType_Implementation)) {
            put_error(o, "exported type");
            fputc('\n', o->f);
            continue;
        }
        uint32_t fl = (uint32_t)mdt_row_raw(&r, MDT_COL_ExportedType_Flags);
        bool nested = MDT_TOKEN_TABLE(impl) == MDT_TABLE_ExportedType;
        fputs(".class extern ", o->f);
        if (fl & 0x200000)
            fputs("forwarder ", o->f);
        else if ((fl & 7) || !nested)
            fprintf(o->f, "%s ", (fl & 7) ? type_vis[fl & 7] : "private");
        if (ns[0] && !nested) {
            put_id(o, ns);
            fputc('.', o->f);
        }
        put_id(o, name);
        fputs("\n{\n", o->f);
        if (put_implementation(o, impl, 1))
            fputc('\n', o->f);
        uint32_t hint = (uint32_t)mdt_row_raw(&r, MDT_COL_ExportedType_TypeDefId);
        if (hint)
            fprintf(o->f, "  .class 0x%08" PRIx32 "\n", hint);
        put_customs(o, MDT_TOKEN(MDT_TABLE_ExportedType, rid), 1);
        fputs("}\n", o->f);
    }
    mdt_error_clear();
    n = mdt_table_rows_present(o->img, MDT_TABLE_ManifestResource);
    for (uint32_t rid = 1; rid <= n; rid++) {
        mdt_row r;
        const char *name;
        uint32_t impl;
        if (mdt_row_get(&r, o->img, MDT_TABLE_ManifestResource, rid) ||
            mdt_row_string(&name, NULL, &r, MDT_COL_ManifestResource_Name) ||
            mdt_row_token(&impl, &r, MDT_COL_ManifestResource_Implementation)) {
            put_error(o, "manifest resource");
            fputc('\n', o->f);
            continue;
        }
        uint32_t fl = (uint32_t)mdt_row_raw(&r, MDT_COL_ManifestResource_Flags);
        fputs((fl & 7) == 2 ? ".mresource private " : ".mresource public ", o->f);
        put_id(o, name);
        fputs("\n{\n", o->f);
        if (!MDT_TOKEN_RID(impl)) {
            /* embedded: the assembler reads the bytes from a file of this
             * name in its working directory (`resources -x -a DIR`) */
        } else if (put_implementation(o, impl, 1)) {
            if (MDT_TOKEN_TABLE(impl) == MDT_TABLE_File)
                fprintf(o->f, " at 0x%08" PRIx64,
                        (uint64_t)mdt_row_raw(&r, MDT_COL_ManifestResource_Offset));
            fputc('\n', o->f);
        }
        put_customs(o, MDT_TOKEN(MDT_TABLE_ManifestResource, rid), 1);
        fputs("}\n", o->f);
    }
    mdt_error_clear();
}

static void put_version(struct out *o, const mdt_row *r, unsigned col0, unsigned d)
{
    ind(o, d);
    fprintf(o->f, ".ver %u:%u:%u:%u\n", (unsigned)mdt_row_raw(r, col0),
            (unsigned)mdt_row_raw(r, col0 + 1), (unsigned)mdt_row_raw(r, col0 + 2),
            (unsigned)mdt_row_raw(r, col0 + 3));
}

static void put_assemblies(struct out *o)
{
    uint32_t n = mdt_table_rows_present(o->img, MDT_TABLE_AssemblyRef);
    for (uint32_t rid = 1; rid <= n; rid++) {
        mdt_row r;
        const char *name, *culture;
        const uint8_t *key;
        uint32_t klen;
        if (mdt_row_get(&r, o->img, MDT_TABLE_AssemblyRef, rid) ||
            mdt_row_string(&name, NULL, &r, MDT_COL_AssemblyRef_Name))
            continue;
        fputs(".assembly extern ", o->f);
        put_id(o, name);
        fputs("\n{\n", o->f);
        put_version(o, &r, MDT_COL_AssemblyRef_MajorVersion, 1);
        if (mdt_row_blob(&key, &klen, &r, MDT_COL_AssemblyRef_PublicKeyOrToken) == 0 && klen) {
            fputs(mdt_row_raw(&r, MDT_COL_AssemblyRef_Flags) & 1 ? "  .publickey = "
                                                                 : "  .publickeytoken = ",
                  o->f);
            put_bytes(o, key, klen, 1);
            fputc('\n', o->f);
        }
        if (mdt_row_string(&culture, NULL, &r, MDT_COL_AssemblyRef_Culture) == 0 && culture[0])
            fprintf(o->f, "  .culture \"%s\"\n", culture);
        put_customs(o, MDT_TOKEN(MDT_TABLE_AssemblyRef, rid), 1);
        fputs("}\n", o->f);
    }
    mdt_error_clear();
    for (uint32_t rid = 1; rid <= mdt_table_rows_present(o->img, MDT_TABLE_ModuleRef); rid++) {
        mdt_row r;
        const char *name;
        if (mdt_row_get(&r, o->img, MDT_TABLE_ModuleRef, rid) == 0 &&
            mdt_row_string(&name, NULL, &r, MDT_COL_ModuleRef_Name) == 0) {
            fputs(".module extern ", o->f);
            put_id(o, name);
            fputc('\n', o->f);
        }
    }
    mdt_error_clear();
    if (mdt_table_rows_present(o->img, MDT_TABLE_Assembly)) {
        mdt_row r;
        const char *name, *culture;
        const uint8_t *key;
        uint32_t klen;
        if (mdt_row_get(&r, o->img, MDT_TABLE_Assembly, 1) == 0 &&
            mdt_row_string(&name, NULL, &r, MDT_COL_Assembly_Name) == 0) {
            fputs(".assembly ", o->f);
            put_id(o, name);
            fputs("\n{\n", o->f);
            put_customs(o, MDT_TOKEN(MDT_TABLE_Assembly, 1), 1);
            put_security(o, MDT_TOKEN(MDT_TABLE_Assembly, 1), 1);
            fprintf(o->f, "  .hash algorithm 0x%08" PRIx64 "\n",
                    (uint64_t)mdt_row_raw(&r, MDT_COL_Assembly_HashAlgId));
            put_version(o, &r, MDT_COL_Assembly_MajorVersion, 1);
            if (mdt_row_blob(&key, &klen, &r, MDT_COL_Assembly_PublicKey) == 0 && klen) {
                fputs("  .publickey = ", o->f);
                put_bytes(o, key, klen, 1);
                fputc('\n', o->f);
            }
            if (mdt_row_string(&culture, NULL, &r, MDT_COL_Assembly_Culture) == 0 && culture[0])
                fprintf(o->f, "  .culture \"%s\"\n", culture);
            fputs("}\n", o->f);
        }
        mdt_error_clear();
    }
    {
        mdt_row r;
        const char *name;
        if (mdt_row_get(&r, o->img, MDT_TABLE_Module, 1) == 0 &&
            mdt_row_string(&name, NULL, &r, MDT_COL_Module_Name) == 0) {
            fputs(".module ", o->f);
            put_id(o, name);
            fputc('\n', o->f);
            put_customs(o, MDT_TOKEN(MDT_TABLE_Module, 1), 0);
        }
        mdt_error_clear();
    }
}

static int one_module(struct il *c, mdi_module *m)
{
    struct out o = {.c = c, .img = m->img};
    char *text = NULL;
    size_t len = 0;
    if (!(o.mem = talloc_new(NULL)))
        return mdi_fail(c->st, "out of memory");
    mdi_il_use_image(c, m->img);
    c->opts.cache = NULL; /* names depend on the generic context */
    o.ntypes = mdt_table_rows_present(m->img, MDT_TABLE_TypeDef);
    o.nested_of = talloc_zero_array(o.mem, uint32_t, (size_t)o.ntypes + 1);
    if (!o.nested_of || !(o.f = open_memstream(&text, &len))) {
        talloc_free(o.mem);
        return mdi_fail(c->st, "out of memory");
    }
    for (uint32_t rid = 1; rid <= o.ntypes; rid++) {
        uint32_t enc = 0;
        if (mdt_typedef_enclosing(&enc, m->img, MDT_TOKEN(MDT_TABLE_TypeDef, rid)) == 0 &&
            MDT_TOKEN_TABLE(enc) == MDT_TABLE_TypeDef && MDT_TOKEN_RID(enc) <= o.ntypes)
            o.nested_of[rid] = MDT_TOKEN_RID(enc);
        mdt_error_clear();
    }
    fputs("// ", o.f);
    mdi_il_put_clean(o.f, m->path);
    fputs("\n// ILAsm source written by mdinspect (il -a --ilasm). Not written: vtable\n"
          "// fixups.\n",
          o.f);
    if (mdt_table_rows_present(m->img, MDT_TABLE_ManifestResource))
        fputs("// Embedded resources: ILAsm reads each .mresource with no .file from a file\n"
              "// of its name in its working directory; `resources -x -a DIR` writes them.\n",
              o.f);
    put_assemblies(&o);
    put_manifest(&o);
    /* <Module>'s members are the module's globals. */
    if (o.ntypes >= 1) {
        mdt_row r;
        if (mdt_row_get(&r, m->img, MDT_TABLE_TypeDef, 1) == 0)
            put_members(&o, 1, &r, 0);
        mdt_error_clear();
    }
    for (uint32_t rid = 2; rid <= o.ntypes && !mdi_interrupted(c->st); rid++)
        if (!o.nested_of[rid])
            put_class(&o, rid, 0);
    put_data(&o);
    /* No "FILE:" heading: the text is the assembler's input as it is. */
    mdi_printer_set_file(c->st->out, NULL);
    if (fclose(o.f) == 0 && text)
        mdi_textf(c->st->out, NULL, "%s", text);
    free(text);
    talloc_free(o.mem);
    c->done++;
    return MDI_OK;
}

int mdi_il_modules_ilasm(struct il *c)
{
    mdi_state *st = c->st;
    int status = MDI_OK;
    c->opts.style = MDT_STYLE_IL;
    c->opts.flags &= ~(unsigned)MDT_NAME_FRIENDLY;
    for (size_t i = 0; i < st->nmods && !mdi_interrupted(st); i++)
        if (one_module(c, st->mods[i]) != MDI_OK)
            status = MDI_FAIL;
    talloc_free(c->cache);
    c->cache = NULL;
    return status;
}
