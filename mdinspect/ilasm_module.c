/* `il -a --ilasm`: each open module whole as ILAsm source (ECMA-335
 * Partition II's grammar) that an assembler rebuilds, the way ILDasm's
 * output round-trips: .assembly extern, .assembly, .module, the classes in
 * TypeDef order with nested ones inside their enclosing class (II.10),
 * extends and implements, generic parameters with their constraints
 * (II.10.1.7), .pack/.size and field offsets (II.10.7), fields with their
 * constants (II.16.2), methods with parameters, defaults, .override and
 * bodies (II.15, the body printer of il_text.c), properties (II.17), events
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
 * output and compares the rebuilt module with the original.
 *
 * This file writes the classes, the manifest and the module; ilasm_put.c
 * the pieces any row has (names, attributes, constants, generic
 * parameters) and ilasm_members.c a class's members (ilasm.h). */
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
#include <mdtools/image.h>
#include <mdtools/names.h>
#include <mdtools/nesting.h>
#include <mdtools/sig.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>

#include "ilasm.h"
#include "il_text.h"

/* Cap on nesting depth (a cycle is refused by the nesting queries; this
 * bounds recursion on a long legal chain). */
#define MAX_DEPTH 64

static const char *const type_vis[] = {
    "private",       "public",          "nested public",      "nested private",
    "nested family", "nested assembly", "nested famandassem", "nested famorassem"};

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

static void put_class(struct out *o, uint32_t rid, unsigned d)
{
    mdt_row r;
    const char *name, *ns;
    uint32_t tok = MDT_TOKEN(MDT_TABLE_TypeDef, rid), ext;
    if (d > MAX_DEPTH)
        return;
    mdi_ilasm_ind(o, d);
    if (mdt_row_get(&r, o->img, MDT_TABLE_TypeDef, rid) ||
        mdt_row_string(&name, NULL, &r, MDT_COL_TypeDef_TypeName) ||
        mdt_row_string(&ns, NULL, &r, MDT_COL_TypeDef_TypeNamespace) ||
        mdt_row_token(&ext, &r, MDT_COL_TypeDef_Extends)) {
        mdi_ilasm_put_error(o, "class");
        fputc('\n', o->f);
        return;
    }
    mdt_generic_context g = {.img = o->img, .type_owner = tok};
    o->c->opts.gctx = &g;
    uint32_t fl = (uint32_t)mdt_row_raw(&r, MDT_COL_TypeDef_Flags);
    fputs(".class ", o->f);
    put_class_flags(o, fl);
    if (ns[0] && !o->nested_of[rid]) { /* Ns.Name, each part as ILAsm reads it */
        mdi_ilasm_put_id(o, ns);
        fputc('.', o->f);
    }
    mdi_ilasm_put_id(o, name);
    mdi_ilasm_put_generic_params(o, tok);
    fputc('\n', o->f);
    if (MDT_TOKEN_RID(ext)) {
        mdi_ilasm_ind(o, d + 2);
        fputs("extends ", o->f);
        mdi_ilasm_put_token(o, ext);
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
                mdi_ilasm_ind(o, d + 2);
                fputs(n++ ? "           " : "implements ", o->f);
                mdi_ilasm_put_token(o, itf);
                fputs(",\n", o->f);
            }
        mdt_error_clear();
        if (n) /* the last comma goes */
            fseek(o->f, -2, SEEK_CUR), fputs("\n", o->f);
    }
    mdi_ilasm_ind(o, d);
    fputs("{\n", o->f);
    mdi_ilasm_put_customs(o, tok, d + 1);
    mdi_ilasm_put_gparam_customs(o, tok, d + 1);
    mdi_ilasm_put_security(o, tok, d + 1);
    /* Type parameters' attributes are rare; layout is not. */
    {
        uint32_t lrid;
        mdt_find fi;
        mdt_row lr;
        if (mdt_find_init(&fi, o->img, MDT_TABLE_ClassLayout, MDT_COL_ClassLayout_Parent, rid) ==
                0 &&
            mdt_find_next(&lrid, &fi) == 0 &&
            mdt_row_get(&lr, o->img, MDT_TABLE_ClassLayout, lrid) == 0) {
            mdi_ilasm_ind(o, d + 1);
            fprintf(o->f, ".pack %" PRIu64 "\n",
                    (uint64_t)mdt_row_raw(&lr, MDT_COL_ClassLayout_PackingSize));
            mdi_ilasm_ind(o, d + 1);
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
    mdi_ilasm_put_members(o, rid, &r, d + 1);
    o->c->opts.gctx = NULL;
    mdi_ilasm_ind(o, d);
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
    mdi_ilasm_ind(o, d);
    if (t == MDT_TABLE_File && mdt_row_string(&name, NULL, &r, MDT_COL_File_Name) == 0) {
        fputs(".file ", o->f);
        mdi_ilasm_put_id(o, name);
    } else if (t == MDT_TABLE_AssemblyRef &&
               mdt_row_string(&name, NULL, &r, MDT_COL_AssemblyRef_Name) == 0) {
        fputs(".assembly extern ", o->f);
        mdi_ilasm_put_id(o, name);
    } else if (t == MDT_TABLE_ExportedType &&
               mdt_row_string(&name, NULL, &r, MDT_COL_ExportedType_TypeName) == 0 &&
               mdt_row_string(&ns, NULL, &r, MDT_COL_ExportedType_TypeNamespace) == 0) {
        fputs(".class extern ", o->f);
        if (ns[0]) {
            mdi_ilasm_put_id(o, ns);
            fputc('.', o->f);
        }
        mdi_ilasm_put_id(o, name);
    } else {
        mdi_ilasm_put_error(o, "implementation");
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
            mdi_ilasm_put_error(o, "file");
            fputc('\n', o->f);
            continue;
        }
        fputs(mdt_row_raw(&r, MDT_COL_File_Flags) & 1 ? ".file nometadata " : ".file ", o->f);
        mdi_ilasm_put_id(o, name);
        if (hlen) {
            fputs(" .hash = ", o->f);
            mdi_ilasm_put_bytes(o, hash, hlen, 0);
        }
        fputc('\n', o->f);
        mdi_ilasm_put_customs(o, MDT_TOKEN(MDT_TABLE_File, rid), 0);
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
            mdi_ilasm_put_error(o, "exported type");
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
            mdi_ilasm_put_id(o, ns);
            fputc('.', o->f);
        }
        mdi_ilasm_put_id(o, name);
        fputs("\n{\n", o->f);
        if (put_implementation(o, impl, 1))
            fputc('\n', o->f);
        uint32_t hint = (uint32_t)mdt_row_raw(&r, MDT_COL_ExportedType_TypeDefId);
        if (hint)
            fprintf(o->f, "  .class 0x%08" PRIx32 "\n", hint);
        mdi_ilasm_put_customs(o, MDT_TOKEN(MDT_TABLE_ExportedType, rid), 1);
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
            mdi_ilasm_put_error(o, "manifest resource");
            fputc('\n', o->f);
            continue;
        }
        uint32_t fl = (uint32_t)mdt_row_raw(&r, MDT_COL_ManifestResource_Flags);
        fputs((fl & 7) == 2 ? ".mresource private " : ".mresource public ", o->f);
        mdi_ilasm_put_id(o, name);
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
        mdi_ilasm_put_customs(o, MDT_TOKEN(MDT_TABLE_ManifestResource, rid), 1);
        fputs("}\n", o->f);
    }
    mdt_error_clear();
}

static void put_version(struct out *o, const mdt_row *r, unsigned col0, unsigned d)
{
    mdi_ilasm_ind(o, d);
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
        mdi_ilasm_put_id(o, name);
        fputs("\n{\n", o->f);
        put_version(o, &r, MDT_COL_AssemblyRef_MajorVersion, 1);
        if (mdt_row_blob(&key, &klen, &r, MDT_COL_AssemblyRef_PublicKeyOrToken) == 0 && klen) {
            fputs(mdt_row_raw(&r, MDT_COL_AssemblyRef_Flags) & 1 ? "  .publickey = "
                                                                 : "  .publickeytoken = ",
                  o->f);
            mdi_ilasm_put_bytes(o, key, klen, 1);
            fputc('\n', o->f);
        }
        if (mdt_row_string(&culture, NULL, &r, MDT_COL_AssemblyRef_Culture) == 0 && culture[0])
            fprintf(o->f, "  .culture \"%s\"\n", culture);
        mdi_ilasm_put_customs(o, MDT_TOKEN(MDT_TABLE_AssemblyRef, rid), 1);
        fputs("}\n", o->f);
    }
    mdt_error_clear();
    for (uint32_t rid = 1; rid <= mdt_table_rows_present(o->img, MDT_TABLE_ModuleRef); rid++) {
        mdt_row r;
        const char *name;
        if (mdt_row_get(&r, o->img, MDT_TABLE_ModuleRef, rid) == 0 &&
            mdt_row_string(&name, NULL, &r, MDT_COL_ModuleRef_Name) == 0) {
            fputs(".module extern ", o->f);
            mdi_ilasm_put_id(o, name);
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
            mdi_ilasm_put_id(o, name);
            fputs("\n{\n", o->f);
            mdi_ilasm_put_customs(o, MDT_TOKEN(MDT_TABLE_Assembly, 1), 1);
            mdi_ilasm_put_security(o, MDT_TOKEN(MDT_TABLE_Assembly, 1), 1);
            fprintf(o->f, "  .hash algorithm 0x%08" PRIx64 "\n",
                    (uint64_t)mdt_row_raw(&r, MDT_COL_Assembly_HashAlgId));
            put_version(o, &r, MDT_COL_Assembly_MajorVersion, 1);
            if (mdt_row_blob(&key, &klen, &r, MDT_COL_Assembly_PublicKey) == 0 && klen) {
                fputs("  .publickey = ", o->f);
                mdi_ilasm_put_bytes(o, key, klen, 1);
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
            mdi_ilasm_put_id(o, name);
            fputc('\n', o->f);
            mdi_ilasm_put_customs(o, MDT_TOKEN(MDT_TABLE_Module, 1), 0);
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
            mdi_ilasm_put_members(&o, 1, &r, 0);
        mdt_error_clear();
    }
    for (uint32_t rid = 2; rid <= o.ntypes && !mdi_interrupted(c->st); rid++)
        if (!o.nested_of[rid])
            put_class(&o, rid, 0);
    mdi_ilasm_put_data(&o);
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
