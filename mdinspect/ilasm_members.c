/* `il -a --ilasm`, a class's members (ilasm_module.c writes the classes
 * around them): fields with their offsets, constants, marshalling and RVA
 * data (II.16, II.16.3; the data itself after the classes as .data
 * D_<rva>), methods with parameters, defaults, P/Invoke flags (II.23.1.8),
 * .override and bodies (II.15, the body printer of il_text.c), properties
 * (II.17) and events (II.18) with their accessors. */
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
#include <mdtools/members.h>
#include <mdtools/names.h>
#include <mdtools/nesting.h>
#include <mdtools/sig.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>

#include "ilasm.h"
#include "il_text.h"

static const char *const member_access[] = {"privatescope", "private",       "famandassem",
                                            "assembly",     "family",        "famorassem",
                                            "public",       "/* access 7 */"};

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
void mdi_ilasm_put_data(struct out *o)
{
    for (size_t i = 0; i < o->ndata; i++) {
        const uint8_t *p;
        if (mdt_image_rva(&p, o->img, o->data[i].rva, o->data[i].size)) {
            mdt_error_clear();
            continue;
        }
        fprintf(o->f, ".data D_%08X = bytearray ", o->data[i].rva);
        mdi_ilasm_put_bytes(o, p, o->data[i].size, 0);
        fputc('\n', o->f);
    }
}

static void put_field(struct out *o, uint32_t rid, unsigned d)
{
    mdt_row r;
    const char *name;
    mdt_sig sig;
    uint32_t tok = MDT_TOKEN(MDT_TABLE_Field, rid);
    mdi_ilasm_ind(o, d);
    if (mdt_row_get(&r, o->img, MDT_TABLE_Field, rid) ||
        mdt_row_string(&name, NULL, &r, MDT_COL_Field_Name)) {
        mdi_ilasm_put_error(o, "field");
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
        mdi_ilasm_put_marshal(o, tok, false);
    if (mdt_sig_of_token(o->mem, &sig, o->img, tok) || sig.kind != MDT_SIG_FIELD)
        mdi_ilasm_put_error(o, "signature");
    else
        mdi_ilasm_put_type(o, sig.type);
    fputc(' ', o->f);
    mdi_ilasm_put_id(o, name);
    if ((fl & 0x100) && sig.kind == MDT_SIG_FIELD) /* HasFieldRVA */
        put_field_rva(o, rid, sig.type);
    if (fl & 0x8000)
        mdi_ilasm_put_constant(o, tok);
    fputc('\n', o->f);
    mdi_ilasm_put_customs(o, tok, d);
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
    mdi_ilasm_ind(o, d);
    if (mdt_row_get(&r, o->img, MDT_TABLE_MethodDef, rid) ||
        mdt_row_string(&name, NULL, &r, MDT_COL_MethodDef_Name) ||
        mdt_sig_of_token(o->mem, &sig, o->img, tok) || sig.kind != MDT_SIG_METHOD) {
        mdi_ilasm_put_error(o, "method");
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
            mdi_ilasm_put_qstr(o, modname);
            if (strcmp(entry, name) != 0) {
                fputs(" as ", o->f);
                mdi_ilasm_put_qstr(o, entry);
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
    mdi_ilasm_put_type(o, m->ret);
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
                mdi_ilasm_put_marshal(o, MDT_TOKEN(MDT_TABLE_Param, p), false);
        }
        mdt_error_clear();
    }
    mdi_ilasm_put_id(o, name);
    mdi_ilasm_put_generic_params(o, tok);
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
        mdi_ilasm_put_type(o, m->params[i]);
        if (s && prid[s] && (pflags[s] & 0x2000))
            mdi_ilasm_put_marshal(o, MDT_TOKEN(MDT_TABLE_Param, prid[s]), true);
        if (s && pnames[s] && pnames[s][0]) {
            fputc(' ', o->f);
            mdi_ilasm_put_id(o, pnames[s]);
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
    mdi_ilasm_ind(o, d);
    fputs("{\n", o->f);
    if (pe->entry_point == tok && !(pe->cli_flags & MDT_COMIMAGE_NATIVE_ENTRYPOINT)) {
        mdi_ilasm_ind(o, d + 1);
        fputs(".entrypoint\n", o->f);
    }
    mdi_ilasm_put_customs(o, tok, d + 1);
    mdi_ilasm_put_gparam_customs(o, tok, d + 1);
    mdi_ilasm_put_security(o, tok, d + 1);
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
        mdi_ilasm_ind(o, d + 1);
        fprintf(o->f, ".param [%" PRIu32 "]", s);
        if (pflags[s] & 0x1000)
            mdi_ilasm_put_constant(o, ptok);
        fputc('\n', o->f);
        mdi_ilasm_put_customs(o, ptok, d + 1);
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
                mdi_ilasm_ind(o, d + 1);
                fputs(".override method ", o->f);
                mdi_ilasm_put_method_ref(o, decl);
                fputc('\n', o->f);
            }
        }
        mdt_error_clear();
    }
    mdt_il_body body;
    if (mdt_row_raw(&r, MDT_COL_MethodDef_RVA) && code == 0 &&
        mdt_il_body_get(&body, o->img, tok) == 0) {
        char *err = NULL;
        mdi_ilasm_ind(o, d + 1);
        fprintf(o->f, ".maxstack %u\n", body.max_stack);
        if (body.locals_token)
            mdi_il_put_locals(o->c, o->f, o->mem, &body);
        else if (body.init_locals) /* ILAsm has no flag alone: an empty signature */
            fputs("  .locals init ()\n", o->f);
        if (mdi_il_text_body(o->c, o->f, o->mem, &body, &err) == 0 && err) {
            mdi_ilasm_ind(o, d + 1);
            fprintf(o->f, "// the body does not decode whole: %s\n", err);
        }
    }
    mdt_error_clear();
    mdi_ilasm_ind(o, d);
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
        mdi_ilasm_ind(o, d);
        fprintf(o->f, "%s ", w);
        mdi_ilasm_put_method_ref(o, m);
        fputc('\n', o->f);
    }
    mdt_error_clear();
}

/* A type's properties or events, through the library's walk of its
 * PropertyMap or EventMap rows (mdt_members): a row that does not read is
 * left out. */
static void put_properties(struct out *o, uint32_t type_rid, unsigned d)
{
    mdt_members it = MDT_MEMBERS_INIT;
    uint32_t tok;
    const char *name;
    int e;
    if (mdt_members_init(&it, o->img, MDT_TOKEN(MDT_TABLE_TypeDef, type_rid),
                         MDT_MEMBERS_PROPERTIES)) {
        mdt_error_clear();
        return;
    }
    while ((e = mdt_members_next(&tok, &name, &it)) != MDT_ITEROVER) {
        mdt_row pr;
        mdt_sig sig;
        if (e || mdt_row_get(&pr, o->img, MDT_TABLE_Property, MDT_TOKEN_RID(tok)))
            continue;
        unsigned fl = (unsigned)mdt_row_raw(&pr, MDT_COL_Property_Flags);
        mdi_ilasm_ind(o, d);
        fputs(".property ", o->f);
        if (fl & 0x200)
            fputs("specialname ", o->f);
        if (fl & 0x400)
            fputs("rtspecialname ", o->f);
        if (mdt_sig_of_token(o->mem, &sig, o->img, tok) || !sig.method) {
            mdi_ilasm_put_error(o, "signature");
        } else {
            if (sig.method->callconv & MDT_CC_HASTHIS)
                fputs("instance ", o->f);
            mdi_ilasm_put_type(o, sig.method->ret);
            fputc(' ', o->f);
            mdi_ilasm_put_id(o, name);
            fputc('(', o->f);
            for (uint32_t k = 0; k < sig.method->nparams; k++) {
                if (k)
                    fputs(", ", o->f);
                mdi_ilasm_put_type(o, sig.method->params[k]);
            }
            fputc(')', o->f);
        }
        if (fl & 0x1000)
            mdi_ilasm_put_constant(o, tok);
        fputc('\n', o->f);
        mdi_ilasm_ind(o, d);
        fputs("{\n", o->f);
        mdi_ilasm_put_customs(o, tok, d + 1);
        put_semantics(o, tok, d + 1);
        mdi_ilasm_ind(o, d);
        fputs("}\n", o->f);
    }
    mdt_error_clear();
}

static void put_events(struct out *o, uint32_t type_rid, unsigned d)
{
    mdt_members it = MDT_MEMBERS_INIT;
    uint32_t tok;
    const char *name;
    int e;
    if (mdt_members_init(&it, o->img, MDT_TOKEN(MDT_TABLE_TypeDef, type_rid), MDT_MEMBERS_EVENTS)) {
        mdt_error_clear();
        return;
    }
    while ((e = mdt_members_next(&tok, &name, &it)) != MDT_ITEROVER) {
        uint32_t type;
        mdt_row er;
        if (e || mdt_row_get(&er, o->img, MDT_TABLE_Event, MDT_TOKEN_RID(tok)) ||
            mdt_row_token(&type, &er, MDT_COL_Event_EventType))
            continue;
        unsigned fl = (unsigned)mdt_row_raw(&er, MDT_COL_Event_EventFlags);
        mdi_ilasm_ind(o, d);
        fputs(".event ", o->f);
        if (fl & 0x200)
            fputs("specialname ", o->f);
        if (fl & 0x400)
            fputs("rtspecialname ", o->f);
        if (MDT_TOKEN_RID(type))
            mdi_ilasm_put_token(o, type);
        fputc(' ', o->f);
        mdi_ilasm_put_id(o, name);
        fputc('\n', o->f);
        mdi_ilasm_ind(o, d);
        fputs("{\n", o->f);
        mdi_ilasm_put_customs(o, tok, d + 1);
        put_semantics(o, tok, d + 1);
        mdi_ilasm_ind(o, d);
        fputs("}\n", o->f);
    }
    mdt_error_clear();
}

/* The members of a TypeDef (for <Module>: the globals, at depth 0). */
void mdi_ilasm_put_members(struct out *o, uint32_t rid, const mdt_row *r, unsigned d)
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
