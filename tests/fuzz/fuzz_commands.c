/* libFuzzer harness: what mdinspect's listing and printing commands ask of
 * the library (types, type NAME, find, token, sig, inst, memberrefs,
 * typerefs, exported, refs, attrs, constants, resolve, validate), over a
 * damaged image. The input is opened as a file layout (and, when it holds
 * "BSJB", as raw metadata from there); then, for the rows of every table
 * that names something, in every style (full, reflection, IL, friendly,
 * metadata names, parameter names): token names into an allocated string,
 * into a buffer and through a name cache; owners, enclosing types and the
 * TypeDef found again by its name; signatures decoded and printed;
 * instantiations by descriptors (ECMA-335 II.23.2, doc/names.md); custom
 * attributes (II.23.3) with enum resolvers that answer from the image
 * itself; Constant values and default values (II.22.9); enum underlying
 * types; assembly and AssemblyRef identities (II.22.2, II.22.5); the
 * embedded portable PDB; and resolution (a module set holding the image
 * twice, under two IDs, beside an intact fixture: every TypeRef, MemberRef
 * and ExportedType resolved, with traces, and the scope of each).
 *
 * Oracles besides the sanitizers: a name into a buffer that succeeds
 * equals the allocated name, and a name through a cache equals the name
 * without it; the TypeDef found by its metadata name has that name; a
 * failed call leaves nothing under the caller's context; nothing outlives
 * the image under it; every failure formats as a message.
 *
 * Built for libFuzzer with --enable-fuzzing, and always as a replayer
 * (tests/fuzz/replay.c) that `make check` runs over
 * tests/fuzz/corpus/commands/. Inputs over 64 KiB are skipped (the work
 * grows with the rows; libFuzzer's -max_len keeps to that). */
#define _GNU_SOURCE /* memmem */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <talloc.h>

#include <mdtools/attr.h>
#include <mdtools/descriptor.h>
#include <mdtools/mdtools.h>
#include <mdtools/value.h>

#include "paths.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_INPUT (64 * 1024)
#define MAX_ROWS 512 /* rows of one table visited per input */

static volatile uint64_t sink;
static void *root;
static mdt_image *fixture; /* intact: data/Everything.dll, a resolution target */

static void touch_error(void)
{
    char msg[512];
    sink += strlen(mdt_error_message(msg, sizeof msg));
}

static void die(const char *fmt, const char *a, uint32_t tok, const char *b)
{
    fprintf(stderr, "fuzz_commands: token 0x%08x: ", tok);
    fprintf(stderr, fmt, a, b);
    fputc('\n', stderr);
    abort();
}

/* A failed call must leave nothing under its context. */
static void check_clean(void *ctx, int e, const char *what, uint32_t tok)
{
    if (!e)
        return;
    touch_error();
    if (talloc_total_blocks(ctx) != 1) {
        fprintf(stderr, "fuzz_commands: %s of 0x%08x failed (%d) and left %zu blocks\n", what, tok,
                e, talloc_total_blocks(ctx) - 1);
        abort();
    }
}

static void open_fixture(void)
{
    char path[1024];
    if (fixture)
        return;
    root = talloc_new(NULL);
    if (mdt_image_open_file(root, &fixture, src_path(path, sizeof path, "data/Everything.dll"),
                            0)) {
        fprintf(stderr, "fuzz_commands: cannot open %s (MDT_TOP_SRCDIR names the source tree)\n",
                path);
        abort();
    }
}

/* The styles the shell's `set style` chooses from, and the flags its
 * commands add (metadata names for metadata_name, parameter names for
 * friendly declarations). */
static const struct {
    int style;
    unsigned flags;
} styles[] = {
    {MDT_STYLE_FULL, 0},
    {MDT_STYLE_REFLECTION, 0},
    {MDT_STYLE_IL, 0},
    {MDT_STYLE_FULL, MDT_NAME_FRIENDLY},
    {MDT_STYLE_FULL, MDT_NAME_METADATA},
    {MDT_STYLE_FULL, MDT_NAME_FRIENDLY | MDT_NAME_PARAM_NAMES},
};
#define NSTYLES (sizeof styles / sizeof styles[0])

struct run {
    void *ctx;
    const mdt_image *img;
    mdt_name_cache *cache[NSTYLES];
};

static mdt_name_opts opts_of(const struct run *r, size_t s, bool cached, mdt_generic_context *g)
{
    mdt_name_opts o = {styles[s].style, styles[s].flags, MDT_NAME_OPTS_VERSION, NULL,
                       cached ? r->cache[s] : NULL};
    if (styles[s].flags & MDT_NAME_PARAM_NAMES)
        o.gctx = g;
    return o;
}

/* A token's name in every style: allocated, into a buffer, through the
 * cache; the three agree. */
static void names_of(struct run *r, uint32_t tok)
{
    mdt_generic_context g = {0};
    uint32_t owner = 0;
    g.img = r->img;
    if (MDT_TOKEN_TABLE(tok) == MDT_TABLE_MethodDef)
        g.method_owner = tok;
    if (mdt_token_owner(&owner, r->img, tok) == 0)
        g.type_owner = MDT_TOKEN_TABLE(owner) == MDT_TABLE_TypeDef ? owner : 0;
    else
        touch_error();
    for (size_t s = 0; s < NSTYLES; s++) {
        void *tmp = talloc_new(r->ctx);
        char buf[4096], *out = NULL, *via = NULL;
        size_t len = 0;
        mdt_name_opts o = opts_of(r, s, false, &g), oc = opts_of(r, s, true, &g);
        int e = mdt_token_name(tmp, &out, r->img, tok, &o);
        int eb = mdt_token_name_buf(buf, sizeof buf, &len, r->img, tok, &o);
        int ec = mdt_token_name(tmp, &via, r->img, tok, &oc);
        check_clean(tmp, e && ec ? e : 0, "mdt_token_name", tok);
        if (eb == 0 && (e != 0 || strcmp(out, buf) != 0 || len != strlen(buf)))
            die("name into a buffer \"%s\" differs from the allocated one \"%s\"", buf, tok,
                e ? "(failed)" : out);
        if ((e == 0) != (ec == 0) || (e == 0 && strcmp(out, via) != 0))
            die("name through the cache \"%s\" differs from \"%s\"", ec ? "(failed)" : via, tok,
                e ? "(failed)" : out);
        if (eb)
            touch_error();
        else
            sink += len;
        talloc_free(tmp);
    }
}

/* The signature a row carries, decoded both ways and printed. */
static void sig_of(struct run *r, uint32_t tok)
{
    uint64_t arena[256];
    mdt_sig sig, sig2;
    void *tmp = talloc_new(r->ctx);
    int e = mdt_sig_of_token(tmp, &sig, r->img, tok);
    int e2 = mdt_sig_of_token_buf(arena, sizeof arena, &sig2, r->img, tok);
    check_clean(tmp, e, "mdt_sig_of_token", tok);
    /* The arena may run out before the decoder meets what the heap's
     * decode fails on. */
    if (e2 != e && e2 != MDT_ENOMEM)
        die("mdt_sig_of_token and _buf disagree%s%s", "", tok, "");
    for (size_t s = 0; s < NSTYLES; s++) {
        mdt_name_opts o = opts_of(r, s, s & 1, NULL);
        char buf[2048], *out;
        int en = mdt_sig_name(tmp, &out, &sig, &o);
        int eb = mdt_sig_name_buf(buf, sizeof buf, NULL, &sig, &o);
        if (e && (en != MDT_EINVAL || eb != MDT_EINVAL))
            die("a failed decode's signature printed%s%s", "", tok, "");
        if (!e && eb == 0 && (en || strcmp(out, buf)))
            die("signature into a buffer \"%s\" differs from \"%s\"", buf, tok, en ? "?" : out);
        if (en)
            touch_error();
        if (!e2 && eb == 0) {
            char buf2[2048];
            if (mdt_sig_name_buf(buf2, sizeof buf2, NULL, &sig2, &o) || strcmp(buf, buf2))
                die("arena signature \"%s\" differs from \"%s\"", buf2, tok, buf);
        }
    }
    talloc_free(tmp);
}

/* Instantiated names by descriptors: a primitive, the image's own types. */
static void inst_of(struct run *r, uint32_t tok)
{
    mdt_desc i4 = {.kind = MDT_DESC_PRIM, .prim = MDT_ELEMENT_TYPE_I4};
    mdt_desc own = {.kind = MDT_DESC_TYPEDEF,
                    .img = r->img,
                    .token = MDT_TOKEN(MDT_TABLE_TypeDef, (tok & 7) + 1)};
    mdt_desc arr = {.kind = MDT_DESC_SZARRAY, .elem = &own};
    const mdt_desc *args[3] = {&i4, &arr, &own};
    for (uint32_t nt = 0; nt <= 2; nt++)
        for (uint32_t nm = 0; nm <= 1; nm++) {
            void *tmp = talloc_new(r->ctx);
            char *out;
            mdt_name_opts o = {MDT_STYLE_FULL, nt ? 0 : MDT_NAME_FRIENDLY, MDT_NAME_OPTS_VERSION,
                               NULL, NULL};
            int e = mdt_inst_name(tmp, &out, r->img, tok, nt, args, nm, args + 1, &o);
            check_clean(tmp, e, "mdt_inst_name", tok);
            talloc_free(tmp);
        }
}

/* Enum resolvers as the shell's: by the underlying type, or by a TypeDef of
 * the (damaged) image itself, whose fields then name the values. */
static int enum_by_type(void *payload, mdt_enum_info *out, const mdt_image *img, uint32_t token,
                        const char *name)
{
    (void)payload;
    (void)img;
    if (name)
        sink += strlen(name);
    out->def_img = NULL;
    out->def_typedef = 0;
    out->underlying = token & 1 ? MDT_ELEMENT_TYPE_I4 : MDT_ELEMENT_TYPE_U1;
    return 0;
}

static int enum_in_image(void *payload, mdt_enum_info *out, const mdt_image *img, uint32_t token,
                         const char *name)
{
    const struct run *r = payload;
    uint32_t n = mdt_table_rows(r->img, MDT_TABLE_TypeDef);
    (void)img;
    (void)name;
    if (!n)
        return MDT_ENOTFOUND;
    out->def_img = r->img;
    out->def_typedef = MDT_TOKEN(MDT_TABLE_TypeDef, token % n + 1);
    out->underlying = 0;
    return 0;
}

static void attrs_and_values(struct run *r)
{
    uint32_t n = mdt_table_rows_present(r->img, MDT_TABLE_CustomAttribute);
    for (uint32_t rid = 1; rid <= n && rid <= MAX_ROWS; rid++) {
        for (int k = 0; k < 2; k++) {
            void *tmp = talloc_new(r->ctx);
            mdt_attr a;
            char *text;
            mdt_decimal d;
            int e = mdt_attr_of_row(tmp, &a, r->img, rid, k ? enum_in_image : enum_by_type, r);
            check_clean(tmp, e, "mdt_attr_of_row", MDT_TOKEN(MDT_TABLE_CustomAttribute, rid));
            if (!e) {
                for (size_t s = 0; s < 4; s++) {
                    mdt_name_opts o = opts_of(r, s, false, NULL);
                    if (mdt_attr_format(tmp, &text, &a, &o))
                        touch_error();
                    else
                        sink += strlen(text);
                }
                if (mdt_attr_decimal(&d, &a) == 0) {
                    if (mdt_decimal_format(tmp, &text, &d) == 0)
                        sink += strlen(text);
                } else {
                    touch_error();
                }
            }
            talloc_free(tmp);
        }
    }
    /* marshalling descriptors, through their parents (mdt_marshal_text) */
    n = mdt_table_rows_present(r->img, MDT_TABLE_FieldMarshal);
    for (uint32_t rid = 1; rid <= n && rid <= MAX_ROWS; rid++) {
        void *tmp = talloc_new(r->ctx);
        mdt_row row;
        uint32_t parent;
        char *text;
        if (mdt_row_get(&row, r->img, MDT_TABLE_FieldMarshal, rid) == 0 &&
            mdt_row_token(&parent, &row, MDT_COL_FieldMarshal_Parent) == 0) {
            int e = mdt_marshal_text(tmp, &text, r->img, parent);
            check_clean(tmp, e, "mdt_marshal_text", parent);
            if (!e)
                sink += strlen(text);
        } else {
            touch_error();
        }
        talloc_free(tmp);
    }
    n = mdt_table_rows_present(r->img, MDT_TABLE_Constant);
    for (uint32_t rid = 1; rid <= n && rid <= MAX_ROWS; rid++) {
        void *tmp = talloc_new(r->ctx);
        mdt_value v;
        char *text;
        mdt_row row;
        uint32_t parent;
        int e = mdt_constant_of_row(tmp, &v, r->img, rid);
        check_clean(tmp, e, "mdt_constant_of_row", MDT_TOKEN(MDT_TABLE_Constant, rid));
        if (!e && mdt_value_format(tmp, &text, &v, NULL) == 0)
            sink += strlen(text);
        if (mdt_row_get(&row, r->img, MDT_TABLE_Constant, rid) == 0 &&
            mdt_row_token(&parent, &row, MDT_COL_Constant_Parent) == 0 &&
            mdt_value_default(tmp, &v, r->img, parent) == 0 &&
            mdt_value_format(tmp, &text, &v, NULL) == 0)
            sink += strlen(text);
        else
            touch_error();
        talloc_free(tmp);
    }
}

/* The tables whose tokens the shell names (token, find, dump's token
 * cells), and what else it asks of each. */
static const unsigned named[] = {MDT_TABLE_Module,
                                 MDT_TABLE_TypeRef,
                                 MDT_TABLE_TypeDef,
                                 MDT_TABLE_Field,
                                 MDT_TABLE_MethodDef,
                                 MDT_TABLE_Param,
                                 MDT_TABLE_MemberRef,
                                 MDT_TABLE_StandAloneSig,
                                 MDT_TABLE_Event,
                                 MDT_TABLE_Property,
                                 MDT_TABLE_ModuleRef,
                                 MDT_TABLE_TypeSpec,
                                 MDT_TABLE_Assembly,
                                 MDT_TABLE_AssemblyRef,
                                 MDT_TABLE_File,
                                 MDT_TABLE_ExportedType,
                                 MDT_TABLE_ManifestResource,
                                 MDT_TABLE_GenericParam,
                                 MDT_TABLE_MethodSpec,
                                 MDT_TABLE_GenericParamConstraint,
                                 MDT_TABLE_CustomAttribute,
                                 MDT_TABLE_Constant};

static bool carries_sig(unsigned t)
{
    return t == MDT_TABLE_MethodDef || t == MDT_TABLE_MemberRef || t == MDT_TABLE_Field ||
           t == MDT_TABLE_Property || t == MDT_TABLE_StandAloneSig || t == MDT_TABLE_TypeSpec ||
           t == MDT_TABLE_MethodSpec;
}

static void members_and_types(struct run *r)
{
    for (size_t k = 0; k < sizeof named / sizeof named[0]; k++) {
        unsigned t = named[k];
        uint32_t n = mdt_table_rows_present(r->img, t);
        /* One token past the readable rows too: the shell is asked for it. */
        for (uint32_t rid = 1; rid <= n + 1 && rid <= MAX_ROWS; rid++) {
            uint32_t tok = MDT_TOKEN(t, rid), owner, enc, found;
            names_of(r, tok);
            if (carries_sig(t))
                sig_of(r, tok);
            if (t == MDT_TABLE_TypeDef || t == MDT_TABLE_MethodDef || t == MDT_TABLE_MemberRef ||
                t == MDT_TABLE_MethodSpec || t == MDT_TABLE_TypeSpec)
                inst_of(r, tok);
            if (mdt_token_owner(&owner, r->img, tok))
                touch_error();
            if ((t == MDT_TABLE_MethodDef || t == MDT_TABLE_Field) &&
                mdt_member_owner(&owner, r->img, tok))
                touch_error();
            if (t == MDT_TABLE_TypeDef) {
                uint8_t et;
                char *refl;
                /* The reflection style: mdt_typedef_by_name's grammar (`+`
                 * nesting, `\` escapes); a metadata name escapes nothing. */
                mdt_name_opts o = {MDT_STYLE_REFLECTION, 0, MDT_NAME_OPTS_VERSION, NULL, NULL};
                void *tmp = talloc_new(r->ctx);
                if (mdt_typedef_enclosing(&enc, r->img, tok))
                    touch_error();
                if (mdt_typedef_enum_underlying(&et, r->img, tok))
                    touch_error();
                /* `type NAME`: the type found again by its reflection name. */
                if (mdt_token_name(tmp, &refl, r->img, tok, &o) == 0 &&
                    mdt_typedef_by_name(&found, r->img, refl, strlen(refl)) == 0 && found != tok) {
                    char *again;
                    if (mdt_token_name(tmp, &again, r->img, found, &o) == 0 && strcmp(refl, again))
                        die("looking up \"%s\" found \"%s\"", refl, tok, again);
                }
                touch_error();
                talloc_free(tmp);
            }
        }
    }
}

static void identities(struct run *r)
{
    mdt_identity id;
    char buf[1024];
    uint8_t mvid[16];
    if (mdt_assembly_identity(&id, r->img) == 0)
        sink += strlen(mdt_identity_format(buf, sizeof buf, &id));
    else
        touch_error();
    uint32_t n = mdt_table_rows_present(r->img, MDT_TABLE_AssemblyRef);
    for (uint32_t rid = 1; rid <= n + 1 && rid <= MAX_ROWS; rid++) {
        if (mdt_assemblyref_identity(&id, r->img, rid) == 0)
            sink += strlen(mdt_identity_format(buf, 40, &id));
        else
            touch_error();
    }
    if (mdt_image_mvid(mvid, r->img) == 0)
        sink += mvid[0];
}

/* The shell's PDB lookups: the embedded one (nothing beside a buffer). */
static void pdb(struct run *r)
{
    void *tmp = talloc_new(r->ctx);
    mdt_pdb *p;
    int e = mdt_pdb_open(tmp, &p, r->img, NULL, 0);
    check_clean(tmp, e, "mdt_pdb_open", 0);
    if (!e) {
        uint32_t n = mdt_table_rows_present(r->img, MDT_TABLE_MethodDef);
        for (uint32_t rid = 1; rid <= n && rid <= 64; rid++) {
            mdt_seqpoint sp;
            mdt_seqpoint_iter it;
            char *doc;
            if (mdt_pdb_method_start(&sp, p, rid) == 0 &&
                mdt_pdb_document_name(tmp, &doc, p, sp.document) == 0)
                sink += strlen(doc);
            if (mdt_pdb_lookup(&sp, p, rid, 8) == 0)
                sink += sp.start_line + sp.end_column;
            if (mdt_seqpoints_init(&it, p, rid) == 0)
                for (int i = 0; i < 256 && mdt_seqpoints_next(&sp, &it) == 0; i++)
                    sink += sp.il_offset;
            touch_error();
        }
    }
    talloc_free(tmp);
}

/* typerefs, memberrefs, exported, resolve: the image twice (IDs 1 and 2,
 * so that its references may bind to itself as another module), and the
 * intact fixture (ID 3). */
static void resolution(struct run *r)
{
    static const unsigned tables[] = {MDT_TABLE_TypeRef, MDT_TABLE_MemberRef,
                                      MDT_TABLE_ExportedType};
    void *tmp = talloc_new(r->ctx);
    mdt_modset *set;
    mdt_modview *v;
    mdt_module_desc d[3] = {{1, r->img, 0, NULL, "damaged", 0},
                            {2, r->img, 0, "again", NULL, 0},
                            {3, fixture, 0, NULL, NULL, 0}};
    if (mdt_modset_new(tmp, &set) || mdt_modset_add_many(set, d, 3, 0) ||
        !(v = mdt_modset_acquire(set))) {
        touch_error();
        talloc_free(tmp);
        return;
    }
    for (size_t k = 0; k < 3; k++) {
        uint32_t n = mdt_table_rows_present(r->img, tables[k]);
        for (uint32_t rid = 1; rid <= n + 1 && rid <= MAX_ROWS; rid++) {
            uint32_t tok = MDT_TOKEN(tables[k], rid), scope;
            void *rt = talloc_new(tmp);
            mdt_resolution res;
            mdt_trace *trace = NULL;
            int e = mdt_token_resolve(rt, &res, &trace, v, rid & 1 ? 1 : 2, tok, NULL);
            check_clean(rt, e, "mdt_token_resolve", tok);
            if (!e) {
                sink += res.resolved + res.hops + res.token + res.where_token;
                for (size_t i = 0; trace && i < trace->n; i++)
                    sink += (size_t)trace->entries[i].kind +
                            (trace->entries[i].text ? strlen(trace->entries[i].text) : 0);
                sink += strlen(mdt_resolution_reason_name(res.reason));
            }
            if (mdt_token_scope(&scope, r->img, tok))
                touch_error();
            talloc_free(rt);
        }
    }
    mdt_modview_release(v);
    talloc_free(tmp); /* the set, before the image it borrows */
}

static void run_image(void *ctx, const mdt_image *img)
{
    struct run r = {ctx, img, {NULL}};
    for (size_t s = 0; s < NSTYLES; s++)
        if (mdt_name_cache_new(ctx, &r.cache[s], img, styles[s].style, styles[s].flags)) {
            touch_error();
            r.cache[s] = NULL;
        }
    members_and_types(&r);
    attrs_and_values(&r);
    identities(&r);
    pdb(&r);
    resolution(&r);
    for (size_t s = 0; s < NSTYLES; s++)
        talloc_free(r.cache[s]);
    mdt_error_clear();
}

static void try_open(const uint8_t *data, size_t size, const char *name)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = NULL;
    if (mdt_image_open_buffer(ctx, &img, name, data, size, 0) == 0) {
        run_image(ctx, img);
        mdt_image_close(img);
    } else {
        touch_error();
    }
    if (talloc_total_blocks(ctx) != 1) {
        fprintf(stderr,
                "fuzz_commands: %zu blocks left under the context once the image is "
                "closed\n",
                talloc_total_blocks(ctx) - 1);
        abort();
    }
    talloc_free(ctx);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *bsjb;
    if (size > MAX_INPUT)
        return 0;
    open_fixture();
    try_open(data, size, "input");
    /* Raw metadata where the input holds a root (a damaged PE's metadata
     * read alone, or a portable PDB). */
    if (size > 4 && data[0] != 'B' && (bsjb = memmem(data, size, "BSJB", 4)))
        try_open(bsjb, size - (size_t)(bsjb - data), "input!BSJB");
    return 0;
}
