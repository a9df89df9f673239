/* libFuzzer harness for the generics layer: the input is decoded as every
 * kind of signature blob (ECMA-335 II.23.2: method, field, property,
 * locals, TypeSpec, MethodSpec) against a fixed fixture image
 * (data/Everything.dll, whose tables give the tokens meaning), each result
 * printed in every style (full, reflection, IL, friendly, with generic
 * arguments and parameter names); as a custom attribute blob (II.23.3)
 * for a few constructors of that image (all parameter kinds: int, string,
 * enum, Type, array, object; none; an enum TypeRef through a resolver);
 * as a Constant value of every type (II.22.9); and as the text of a
 * portable type descriptor (doc/names.md). Oracles besides the sanitizers: a
 * failed call must leave nothing allocated under the caller's context,
 * and every failure must format as a message; the blob printer
 * (libmdtools/generics/sigtext.c, which prints names without a tree) prints
 * only what the decoder accepts, and then the text the tree gives, or
 * leaves the blob to the tree with nothing recorded. Built for libFuzzer with
 * --enable-fuzzing and always as a replayer (tests/fuzz/replay.c) that
 * `make check` runs over tests/generics/fuzz-corpus/. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <talloc.h>

#include <mdtools/attr.h>
#include <mdtools/descriptor.h>
#include <mdtools/mdtools.h>
#include <mdtools/value.h>

#include "generics/fmt_int.h"
#include "generics/gen_int.h"
#include "paths.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t sink;
static mdt_image *fixture;
static void *root;
static mdt_name_cache *caches[4]; /* one per style of print_sig */

static void touch_error(void)
{
    char msg[512];
    sink += strlen(mdt_error_message(msg, sizeof msg));
}

/* A failed call must not leave allocations behind. */
static void check_clean(void *ctx, int e, const char *what)
{
    if (e) {
        touch_error();
        if (talloc_total_blocks(ctx) != 1) {
            fprintf(stderr, "%s failed (%d) and left %zu blocks allocated\n", what, e,
                    talloc_total_blocks(ctx) - 1);
            abort();
        }
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
        fprintf(stderr, "fuzz_sig: cannot open %s (MDT_TOP_SRCDIR names the source tree)\n", path);
        abort();
    }
    static const int st[4] = {MDT_STYLE_FULL, MDT_STYLE_REFLECTION, MDT_STYLE_IL, MDT_STYLE_FULL};
    for (int i = 0; i < 4; i++)
        if (mdt_name_cache_new(root, &caches[i], fixture, st[i], i == 3 ? MDT_NAME_FRIENDLY : 0))
            abort();
}

static void print_sig(void *ctx, const mdt_sig *s)
{
    static const mdt_name_opts styles[] = {
        {MDT_STYLE_FULL, 0, MDT_NAME_OPTS_VERSION, NULL, NULL},
        {MDT_STYLE_REFLECTION, 0, MDT_NAME_OPTS_VERSION, NULL, NULL},
        {MDT_STYLE_IL, 0, MDT_NAME_OPTS_VERSION, NULL, NULL},
        {MDT_STYLE_FULL, MDT_NAME_FRIENDLY, MDT_NAME_OPTS_VERSION, NULL, NULL}};
    for (size_t i = 0; i < sizeof styles / sizeof styles[0]; i++) {
        char *out;
        int e = mdt_sig_name(ctx, &out, s, &styles[i]);
        if (e)
            touch_error();
        else
            sink += strlen(out);
        /* With the name cache (kept across inputs): the same text. */
        mdt_name_opts co = styles[i];
        co.cache = caches[i];
        char *cached;
        int ec = mdt_sig_name(ctx, &cached, s, &co);
        if (ec != e || (!e && strcmp(out, cached))) {
            fprintf(stderr, "cached name differs: %s / %s\n", e ? "-" : out, ec ? "-" : cached);
            abort();
        }
    }
    /* Generic context: the blob's own MethodSpec arguments (if any) for
     * both VAR and MVAR, then parameter names of Pair`2::Select`1. */
    mdt_sig args;
    static const uint8_t two[] = {0x0a, 0x02, 0x0e, 0x15, 0x12, 0x21, 0x01, 0x13, 0x00};
    if (mdt_sig_decode(ctx, &args, fixture, MDT_SIG_METHODSPEC, two, sizeof two, 0) == 0) {
        mdt_generic_context g = {args.nargs, args.args,  args.nargs, args.args,
                                 fixture,    0x0200001E, 0x06000036};
        mdt_name_opts o = {MDT_STYLE_FULL, 0, MDT_NAME_OPTS_VERSION, &g, NULL};
        char *out;
        if (mdt_sig_name(ctx, &out, s, &o) == 0)
            sink += strlen(out);
        g.ntype_args = g.nmethod_args = 0;
        o.flags = MDT_NAME_PARAM_NAMES;
        if (mdt_sig_name(ctx, &out, s, &o) == 0)
            sink += strlen(out);
    }
}

/* The blob printer against the tree: where it prints, the decoder accepts
 * the blob (e == 0) and the tree's printer gives the same text, or the
 * same cut prefix in a small buffer; where it does not, it leaves no
 * failure recorded. Styles and contexts it prints in: full, friendly, with
 * a name cache, with generic arguments. */
static void text_against_tree(void *ctx, int kind, const uint8_t *data, size_t size, int e,
                              const mdt_sig *s)
{
    mdt_sig args;
    static const uint8_t two[] = {0x0a, 0x02, 0x0e, 0x15, 0x12, 0x21, 0x01, 0x13, 0x00};
    if (mdt_sig_decode(ctx, &args, fixture, MDT_SIG_METHODSPEC, two, sizeof two, 0))
        abort();
    mdt_generic_context g = {args.nargs, args.args, args.nargs, args.args, fixture, 0, 0};
    mdt_name_opts opts[] = {
        {MDT_STYLE_FULL, 0, MDT_NAME_OPTS_VERSION, NULL, NULL},
        {MDT_STYLE_FULL, MDT_NAME_FRIENDLY, MDT_NAME_OPTS_VERSION, NULL, NULL},
        {MDT_STYLE_FULL, 0, MDT_NAME_OPTS_VERSION, NULL, caches[0]},
        {MDT_STYLE_FULL, MDT_NAME_FRIENDLY, MDT_NAME_OPTS_VERSION, NULL, caches[3]},
        {MDT_STYLE_FULL, 0, MDT_NAME_OPTS_VERSION, &g, NULL},
        {MDT_STYLE_IL, 0, MDT_NAME_OPTS_VERSION, NULL, NULL}};
    static const size_t sizes[] = {512, 24};
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
        for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
            char text[512], tree[512];
            size_t tlen = 0, len = 0;
            mdt_error_clear();
            int et = mdt__sig_text_name_buf(text, sizes[z], &tlen, fixture, kind, data,
                                            (uint32_t)size, &opts[i]);
            if (et == FMT_TEXT_TREE) {
                if (mdt_error_last()->code != 0) {
                    fprintf(stderr, "the blob printer left a failure recorded (%d)\n",
                            mdt_error_last()->code);
                    abort();
                }
                continue;
            }
            if (e) {
                fprintf(stderr,
                        "kind %d: the blob printer printed \"%s\" (%d) where the decoder "
                        "failed (%d)\n",
                        kind, text, et, e);
                abort();
            }
            int ek = mdt_sig_name_buf(tree, sizes[z], &len, s, &opts[i]);
            if (ek != et || len != tlen || strcmp(text, tree)) {
                fprintf(stderr, "kind %d, opts %zu: blob printer \"%s\" (%d), tree \"%s\" (%d)\n",
                        kind, i, text, et, tree, ek);
                abort();
            }
        }
}

static void sigs(void *ctx, const uint8_t *data, size_t size)
{
    static const int kinds[] = {MDT_SIG_METHOD, MDT_SIG_FIELD,    MDT_SIG_PROPERTY,
                                MDT_SIG_LOCALS, MDT_SIG_TYPESPEC, MDT_SIG_METHODSPEC};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        void *tmp = talloc_new(ctx);
        mdt_sig s;
        int e = mdt_sig_decode(tmp, &s, fixture, kinds[k], data, (uint32_t)size, 0x42);
        check_clean(tmp, e, "mdt_sig_decode");
        if (!e)
            print_sig(tmp, &s);
        text_against_tree(tmp, kinds[k], data, size, e, &s);
        /* The allocation-free variants agree with the talloc ones: same
         * verdict (unless the arena is too small), same text. */
        uint64_t arena[128];
        mdt_sig sbig;
        int eb = mdt_sig_decode_buf(arena, sizeof arena, &sbig, fixture, kinds[k], data,
                                    (uint32_t)size, 0x42);
        if (eb != MDT_ENOMEM && (eb == 0) != (e == 0)) {
            fprintf(stderr, "mdt_sig_decode gave %d, mdt_sig_decode_buf %d\n", e, eb);
            abort();
        }
        if (!e && !eb) {
            char *a = NULL, small[48];
            size_t len;
            int ea = mdt_sig_name(tmp, &a, &s, NULL);
            int ebuf = mdt_sig_name_buf(small, sizeof small, &len, &sbig, NULL);
            if (!ea && (ebuf == 0 ? strcmp(a, small) != 0
                                  : ebuf != MDT_ETRUNC || strncmp(a, small, len) != 0)) {
                fprintf(stderr, "names differ: %s / %s\n", a, small);
                abort();
            }
        }
        talloc_free(tmp);
    }
}

/* Resolver: TypeRef'd enums are 2 bytes wide; names of this assembly's
 * enums resolve to Everything.Color, others are unknown. */
static int resolver(void *payload, mdt_enum_info *out, const mdt_image *img, uint32_t token,
                    const char *name)
{
    (void)payload;
    if (token) {
        out->underlying = MDT_ELEMENT_TYPE_U2;
        return 0;
    }
    if (strstr(name, "Everything")) {
        out->def_img = img;
        out->def_typedef = 0x02000002;
        return 0;
    }
    return MDT_ENOTFOUND;
}

static void attrs(void *ctx, const uint8_t *data, size_t size)
{
    static const uint32_t ctors[] = {
        0x06000002, /* InfoAttribute(int, string, Color, Type, int[], object) */
        0x06000001, /* InfoAttribute(): named arguments only */
        0x0A000011, /* FixedBufferAttribute(Type, int) */
        0x0A000014, /* DecimalConstantAttribute(byte, byte, uint, uint, uint) */
        0x0A000003, /* AttributeUsageAttribute(AttributeTargets): TypeRef enum */
        0x0A000036, /* ObsoleteAttribute(string, bool) */
    };
    static const mdt_name_opts friendly = {MDT_STYLE_FULL, MDT_NAME_FRIENDLY, MDT_NAME_OPTS_VERSION,
                                           NULL, NULL};
    for (size_t i = 0; i < sizeof ctors / sizeof ctors[0]; i++) {
        for (int with_resolver = 0; with_resolver < 2; with_resolver++) {
            void *tmp = talloc_new(ctx);
            mdt_attr a;
            mdt_decimal d;
            char *out;
            int e = mdt_attr_decode(tmp, &a, fixture, ctors[i], data, (uint32_t)size, 0x42,
                                    with_resolver ? resolver : NULL, NULL);
            check_clean(tmp, e, "mdt_attr_decode");
            if (!e) {
                if (mdt_attr_format(tmp, &out, &a, NULL) == 0)
                    sink += strlen(out);
                else
                    touch_error();
                if (mdt_attr_format(tmp, &out, &a, &friendly) == 0)
                    sink += strlen(out);
                if (mdt_attr_decimal(&d, &a) == 0 && mdt_decimal_format(tmp, &out, &d) == 0)
                    sink += strlen(out);
            }
            talloc_free(tmp);
        }
    }
}

static void constants(void *ctx, const uint8_t *data, size_t size)
{
    for (unsigned type = 0; type <= 0x12; type++) {
        void *tmp = talloc_new(ctx);
        mdt_value v;
        char *out;
        int e = mdt_constant_decode(tmp, &v, fixture, (uint8_t)type, data, (uint32_t)size, 0);
        check_clean(tmp, e, "mdt_constant_decode");
        if (!e && mdt_value_format(tmp, &out, &v, NULL) == 0)
            sink += strlen(out);
        talloc_free(tmp);
    }
    if (size >= 16) {
        char *out;
        if (mdt_value_int128_format(ctx, &out, data, data[0] & 1) == 0)
            sink += strlen(out);
    }
}

/* Every MVID names the fixture. */
static int lookup(void *payload, const mdt_image **img, const uint8_t mvid[16])
{
    (void)payload;
    (void)mvid;
    *img = fixture;
    return 0;
}

static void descriptors(void *ctx, const uint8_t *data, size_t size)
{
    void *tmp = talloc_new(ctx);
    mdt_desc *d;
    int e = mdt_desc_parse(tmp, &d, (const char *)data, size, lookup, NULL);
    check_clean(tmp, e, "mdt_desc_parse");
    if (!e) {
        char *out;
        const mdt_type *t;
        if (mdt_desc_format(tmp, &out, d) == 0) {
            /* Formatting then parsing again gives the same text. */
            mdt_desc *d2;
            char *out2;
            if (mdt_desc_parse(tmp, &d2, out, strlen(out), lookup, NULL) ||
                mdt_desc_format(tmp, &out2, d2) || strcmp(out, out2)) {
                fprintf(stderr, "descriptor round trip broke: %s\n", out);
                abort();
            }
        }
        if (mdt_desc_to_type(tmp, &t, d) == 0 && mdt_type_name(tmp, &out, t, NULL) == 0)
            sink += strlen(out);
        else
            touch_error();
        if (d->kind == MDT_DESC_TYPEDEF &&
            mdt_inst_name(tmp, &out, fixture, d->token, d->nargs, d->args, 0, NULL, NULL) == 0)
            sink += strlen(out);
    }
    talloc_free(tmp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    open_fixture();
    if (size > (1u << 20))
        return 0;
    void *ctx = talloc_new(root);
    sigs(ctx, data, size);
    attrs(ctx, data, size);
    constants(ctx, data, size);
    descriptors(ctx, data, size);
    talloc_free(ctx);
    return 0;
}
