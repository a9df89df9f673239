/* The name printer's front ends (<mdtools/names.h>, styles in
 * doc/names.md): mdt_type_name, mdt_sig_name, mdt_token_name and their
 * _buf forms start one name (options, a stack or caller's buffer through
 * util/strbuf), print it, and report what the output could not take. The
 * name of a token goes by its table: types to typenames.c, members to
 * members.c; modules, assemblies (display names from md/identity.c),
 * files and portable PDB documents here. fmt_int.h lists the printer's
 * files. */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <talloc.h>

#include <mdtools/assembly.h>
#include <mdtools/heaps.h>
#include <mdtools/names.h>
#include <mdtools/sig.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>

#include "generics/bump_int.h"
#include "generics/fmt_int.h"
#include "generics/gen_int.h"
#include "generics/opts_int.h"
#include "util/error.h"
#include "util/reader.h"
#include "util/strbuf.h"

#define STACK_OUT 512 /* most names fit: one allocation, of the exact size */

int fmt_too_long(void)
{
    return mdt__fail_simple(MDT_EBADIMAGE,
                            "name longer than %zu bytes (TypeSpecs expanding "
                            "into each other?)",
                            MAX_NAME_LEN);
}

int fmt_bad(const struct mdt_image *img, const char *region, uint32_t row, const char *fmt,
            uint32_t a, uint32_t b)
{
    mdt_place pl = MDT_PLACE_NONE;
    pl.file = mdt_image_name(img);
    pl.region = region;
    pl.row = row;
    return mdt__fail(MDT_EBADIMAGE, pl, fmt, a, b);
}

/* A portable PDB Document's name (Portable PDB format, Document Name
 * Blob): a separator, one UTF-8 character or byte 0 for none, then one or
 * more parts, each a compressed #Blob index of a UTF-8 string (0: empty),
 * joined by the separator: `/src/app/Program.cs`. */
static int put_document(struct fmt *f, const mdt_image *img, uint32_t token)
{
    const uint8_t *blob, *sep = NULL;
    uint32_t len, bi;
    uint8_t lead;
    size_t seplen = 0;
    char region[40];
    mdt_row r;
    int e;
    if ((e = mdt_row_get(&r, img, MDT_TABLE_Document, token & 0xFFFFFF)) ||
        (e = mdt_row_blob(&blob, &len, &r, MDT_COL_Document_Name)))
        return e;
    bi = mdt_row_raw(&r, MDT_COL_Document_Name);
    rd d = mdt__blob_reader(img, region, blob, len, bi);
    if ((e = rd_need(&d, 1, "document name separator")))
        return e;
    lead = d.base[d.pos];
    seplen = !lead                          ? 0
             : lead < 0x80                  ? 1
             : lead >= 0xC2 && lead <= 0xDF ? 2
             : lead >= 0xE0 && lead <= 0xEF ? 3
             : lead >= 0xF0 && lead <= 0xF4 ? 4
                                            : SIZE_MAX;
    if (seplen == SIZE_MAX)
        return rd_fail(&d, MDT_EBADIMAGE, "document name separator 0x%02x is not UTF-8", lead);
    if ((e = rd_bytes(&d, &sep, seplen ? seplen : 1, "document name separator")))
        return e;
    if (!rd_left(&d))
        return rd_fail(&d, MDT_EBADIMAGE, "document name without a part");
    for (bool first = true; rd_left(&d) && !f->out.failed; first = false) {
        const uint8_t *part;
        uint32_t idx, plen;
        if ((e = rd_compressed(&d, &idx, "document name part")))
            return e;
        if (!first)
            sb_add(&f->out, (const char *)sep, seplen);
        if (!idx)
            continue;
        if ((e = mdt_heap_blob(&part, &plen, img, idx)))
            return e;
        sb_add(&f->out, (const char *)part, plen);
    }
    return 0;
}

static int token_body(struct fmt *f, const mdt_image *img, uint32_t token)
{
    int e = 0;
    mdt_row r;
    const char *name;
    switch (token >> 24) {
    case MDT_TABLE_TypeDef:
    case MDT_TABLE_TypeRef:
    case MDT_TABLE_TypeSpec:
        if ((token & 0xFFFFFF) == 0 || (token & 0xFFFFFF) > mdt_table_rows(img, token >> 24))
            e = mdt_row_get(&r, img, token >> 24, token & 0xFFFFFF);
        else
            e = fmt_token(f, img, token, 0, true);
        break;
    case MDT_TABLE_MethodDef:
    case MDT_TABLE_Field:
    case MDT_TABLE_MemberRef:
    case MDT_TABLE_MethodSpec:
    case MDT_TABLE_Property:
    case MDT_TABLE_Event: e = fmt_member(f, img, token); break;
    case MDT_TABLE_ModuleRef:
        if (!(e = mdt_row_get(&r, img, MDT_TABLE_ModuleRef, token & 0xFFFFFF)) &&
            !(e = mdt_row_string(&name, NULL, &r, MDT_COL_ModuleRef_Name)))
            sb_addf(&f->out, "[module %s]", name);
        break;
    case MDT_TABLE_Module:
        if (!(e = mdt_row_get(&r, img, MDT_TABLE_Module, token & 0xFFFFFF)) &&
            !(e = mdt_row_string(&name, NULL, &r, MDT_COL_Module_Name)))
            sb_addf(&f->out, "[module %s]", name);
        break;
    case MDT_TABLE_Assembly: {
        mdt_identity id;
        char buf[512];
        if (!(e = mdt_row_get(&r, img, MDT_TABLE_Assembly, token & 0xFFFFFF)) &&
            !(e = mdt_assembly_identity(&id, img)))
            sb_adds(&f->out, mdt_identity_format(buf, sizeof buf, &id));
        break;
    }
    case MDT_TABLE_ExportedType: e = fmt_exported(f, img, token); break;
    case MDT_TABLE_AssemblyRef: {
        mdt_identity id;
        char buf[512];
        if (!(e = mdt_assemblyref_identity(&id, img, token & 0xFFFFFF)))
            sb_adds(&f->out, mdt_identity_format(buf, sizeof buf, &id));
        break;
    }
    case MDT_TABLE_Document: e = put_document(f, img, token); break;
    case MDT_TABLE_File:
        if (!(e = mdt_row_get(&r, img, MDT_TABLE_File, token & 0xFFFFFF)) &&
            !(e = mdt_row_string(&name, NULL, &r, MDT_COL_File_Name)))
            sb_adds(&f->out, name);
        break;
    default: e = mdt__fail_simple(MDT_EINVAL, "token 0x%08x has no name", token);
    }
    return e;
}

/* The printer's state for options o; the caller has started f->out. */
static inline void init(struct fmt *f, const mdt_name_opts *o)
{
    f->tmp = NULL;
    f->style = o ? o->style : MDT_STYLE_FULL;
    f->flags = o ? o->flags : 0;
    f->g = o ? o->gctx : NULL;
    /* type names do not depend on MDT_NAME_SIGNATURE: a cache serves both */
    f->cache = o && o->cache && o->cache->style == f->style &&
                       (o->cache->flags & ~(unsigned)MDT_NAME_SIGNATURE) ==
                           (f->flags & ~(unsigned)MDT_NAME_SIGNATURE) &&
                       f->style != MDT_STYLE_IL
                   ? o->cache
                   : NULL;
    f->ts_depth = 0;
    f->depth = 0;
    f->home = NULL;
}

/* A name built in a stack buffer, then under mem_ctx. */
static inline void start_growing(struct fmt *f, void *mem_ctx, char *buf, size_t cap,
                                 const mdt_name_opts *o)
{
    sb_init_stack(&f->out, mem_ctx, buf, cap);
    f->out.max = MAX_NAME_LEN;
    init(f, o);
}

/* talloc front end: the name under mem_ctx. */
static int finish(struct fmt *f, int e, char **out)
{
    talloc_free(f->tmp);
    if (!e && f->out.failed && f->out.too_long)
        e = fmt_too_long();
    if (e) {
        sb_discard(&f->out);
        return e;
    }
    return sb_finish(&f->out, out);
}

/* Buffer front end: the name in the caller's buffer. */
static int finish_buf(struct fmt *f, int e, size_t *len)
{
    talloc_free(f->tmp);
    if (len)
        *len = f->out.len;
    if (!e && f->out.failed)
        e = mdt__fail_simple(MDT_ETRUNC, "name longer than the %zu-byte buffer", f->out.cap);
    return e;
}

int mdt_type_name(void *mem_ctx, char **out, const mdt_type *t, const mdt_name_opts *o)
{
    struct fmt f;
    char buf[STACK_OUT];
    int e;
    if ((e = gen_opts_check(o, "mdt_type_name")))
        return e;
    start_growing(&f, mem_ctx, buf, sizeof buf, o);
    return finish(&f, fmt_type(&f, t), out);
}

int mdt_sig_name(void *mem_ctx, char **out, const mdt_sig *s, const mdt_name_opts *o)
{
    struct fmt f;
    char buf[STACK_OUT];
    int e;
    if ((e = gen_opts_check(o, "mdt_sig_name")))
        return e;
    start_growing(&f, mem_ctx, buf, sizeof buf, o);
    return finish(&f, fmt_sig(&f, s), out);
}

/* Trees up to this size are decoded on the stack (all but 0.04% of the
 * Mono 4.5 framework's signatures). */
#define SIG_STACK_ARENA 4096

/* The tree of a signature whose name is wanted, decoded into `arena`
 * (the caller's stack), or, when it is larger, under *big (a context of
 * its own, which the caller frees with sig_done). */
static int sig_for_name(uint64_t *arena, size_t size, mdt_sig *s, void **big, const mdt_image *img,
                        uint32_t token)
{
    int e = mdt_sig_of_token_buf(arena, size, s, img, token);
    *big = NULL;
    if (e == MDT_ENOMEM) {
        /* Larger than the arena (the buffer decoder allocates nothing). */
        if (!(*big = talloc_new(NULL)))
            return mdt__fail_simple(MDT_ENOMEM, "out of memory decoding a signature");
        e = mdt_sig_of_token(*big, s, img, token);
    }
    return e;
}

static int sig_done(void *big, uint64_t stamp, int e)
{
    if (big) {
        talloc_free(big);
        if (!e) /* the arena's failure was handled: errors.h */
            mdt__err_back_to(stamp);
    }
    return e;
}

int mdt_sig_name_of_token(void *mem_ctx, char **out, const mdt_image *img, uint32_t token,
                          const mdt_name_opts *o)
{
    uint64_t arena[SIG_STACK_ARENA / sizeof(uint64_t)];
    uint64_t stamp = mdt__err_stamp();
    void *big = NULL;
    struct fmt f;
    char buf[STACK_OUT];
    mdt_sig s;
    int e;
    if (!out)
        return mdt__fail_simple(MDT_EINVAL, "no place for the signature's name");
    *out = NULL;
    if ((e = gen_opts_check(o, "mdt_sig_name_of_token")))
        return e;
    start_growing(&f, mem_ctx, buf, sizeof buf, o);
    /* Straight from the blob (sigtext.c), else through the tree, dropped
     * once printed: a talloc block for it would cost its allocation and
     * free, as much again as decoding it. */
    if (fmt_sig_text(&f, img, token, 0, NULL, 0) == FMT_TEXT_DONE)
        return finish(&f, 0, out);
    e = sig_for_name(arena, sizeof arena, &s, &big, img, token);
    e = finish(&f, e ? e : fmt_sig(&f, &s), out);
    return sig_done(big, stamp, e);
}

/* ------------------------------------------------- names in an arena */

/* A caller's arena of names (<mdtools/names.h>): chunks of `chunk` bytes
 * that names are printed straight into, one after the other. The first
 * chunk stays for the arena's life; later chunks, and names longer than a
 * chunk (each a talloc block of its own), hang off `more`, which a reset
 * empties. A name then costs no allocation of its own: a talloc block a
 * name was about 480 instructions of malloc, free and talloc's header,
 * a third of what decoding and printing the signature cost (bench/
 * README.md, issue 28). */
struct mdt_name_arena {
    char *cur, *end; /* the free bytes of the chunk in use */
    char *first;     /* the first chunk */
    size_t chunk;
    void *more;
};

#define ARENA_CHUNK_DEFAULT ((size_t)64 << 10)
#define ARENA_CHUNK_MIN ((size_t)256)
#define ARENA_CHUNK_MAX ((size_t)1 << 30)

int mdt_name_arena_new(void *mem_ctx, mdt_name_arena **out, size_t chunk)
{
    mdt_name_arena *a;
    if (!out)
        return mdt__fail_simple(MDT_EINVAL, "no place for the arena");
    *out = NULL;
    if (!chunk)
        chunk = ARENA_CHUNK_DEFAULT;
    if (chunk < ARENA_CHUNK_MIN || chunk > ARENA_CHUNK_MAX)
        return mdt__fail_simple(MDT_EINVAL, "arena chunks of %zu bytes (%zu to %zu, or 0)", chunk,
                                ARENA_CHUNK_MIN, ARENA_CHUNK_MAX);
    if (!(a = talloc_zero(mem_ctx, mdt_name_arena)) || !(a->first = talloc_size(a, chunk)) ||
        !(a->more = talloc_new(a))) {
        talloc_free(a);
        return mdt__fail_simple(MDT_ENOMEM, "out of memory making a name arena");
    }
    a->chunk = chunk;
    a->cur = a->first;
    a->end = a->first + chunk;
    *out = a;
    return 0;
}

void mdt_name_arena_reset(mdt_name_arena *a)
{
    if (!a)
        return;
    talloc_free_children(a->more);
    a->cur = a->first;
    a->end = a->first + a->chunk;
}

/* A fresh chunk for names (the rest of the one in use is left). */
static int arena_chunk(mdt_name_arena *a)
{
    if (!mdt__bump_chunk(a->more, a->chunk, &a->cur, &a->end))
        return mdt__fail_simple(MDT_ENOMEM, "out of memory growing a name arena");
    return 0;
}

int mdt_sig_name_of_token_arena(mdt_name_arena *a, const char **out, size_t *len,
                                const mdt_image *img, uint32_t token, const mdt_name_opts *o)
{
    uint64_t arena[SIG_STACK_ARENA / sizeof(uint64_t)];
    uint64_t stamp = mdt__err_stamp();
    void *big = NULL;
    mdt_sig s;
    bool text = true, tree = false; /* printing from the blob; the tree decoded */
    int e;
    if (!a || !out)
        return mdt__fail_simple(MDT_EINVAL, "no arena or no place for the signature's name");
    *out = NULL;
    if ((e = gen_opts_check(o, "mdt_sig_name_of_token_arena")))
        return e;
    /* Printed where the arena's free bytes start, straight from the blob
     * (sigtext.c) or, where that leaves it to the tree, through the tree;
     * a name that does not fit is printed again into a fresh chunk (a
     * name a chunk in most cases: rare), and one longer than a chunk into
     * a block of its own. */
    for (int tries = 0;; tries++) {
        struct fmt f;
        if (a->cur == a->end && (e = arena_chunk(a)) != 0)
            break;
        sb_init_fixed(&f.out, a->cur, (size_t)(a->end - a->cur));
        init(&f, o);
        if (text && fmt_sig_text(&f, img, token, 0, NULL, 0) != FMT_TEXT_DONE)
            text = false;
        if (text)
            e = 0;
        else if (tree || (e = sig_for_name(arena, sizeof arena, &s, &big, img, token)) == 0) {
            tree = true;
            e = fmt_sig(&f, &s);
        }
        talloc_free(f.tmp);
        if (!f.out.failed || (e && !tree)) {
            if (!e) {
                *out = a->cur;
                if (len)
                    *len = f.out.len;
                a->cur += f.out.len + 1;
            }
            break;
        }
        /* full: whatever it reported is the cut's (the retry reports
         * its own) */
        mdt__err_back_to(stamp);
        if (tries == 0 && (size_t)(a->end - a->cur) < a->chunk) {
            if ((e = arena_chunk(a)) != 0)
                break;
            continue;
        }
        char *name;
        if (!tree && (e = sig_for_name(arena, sizeof arena, &s, &big, img, token)) != 0)
            break;
        tree = true;
        if ((e = mdt_sig_name(a->more, &name, &s, o)) == 0) {
            *out = name;
            if (len)
                *len = strlen(name);
        }
        break;
    }
    return sig_done(big, stamp, e);
}

int mdt__sig_text_name_buf(char *buf, size_t size, size_t *len, const mdt_image *img, int kind,
                           const uint8_t *blob, uint32_t blob_len, const mdt_name_opts *o)
{
    struct fmt f;
    int e;
    if (!buf || !size)
        return mdt__fail_simple(MDT_EINVAL, "no buffer for the name");
    *buf = 0;
    if ((e = gen_opts_check(o, "mdt__sig_text_name_buf")))
        return e;
    sb_init_fixed(&f.out, buf, size);
    init(&f, o);
    if (fmt_sig_text(&f, img, 0, kind, blob, blob_len) != FMT_TEXT_DONE) {
        talloc_free(f.tmp);
        return FMT_TEXT_TREE;
    }
    return finish_buf(&f, 0, len);
}

int mdt_token_name(void *mem_ctx, char **out, const mdt_image *img, uint32_t token,
                   const mdt_name_opts *o)
{
    struct fmt f;
    char buf[STACK_OUT];
    int e;
    if ((e = gen_opts_check(o, "mdt_token_name")))
        return e;
    start_growing(&f, mem_ctx, buf, sizeof buf, o);
    return finish(&f, token_body(&f, img, token), out);
}

int mdt_type_name_buf(char *buf, size_t size, size_t *len, const mdt_type *t,
                      const mdt_name_opts *o)
{
    struct fmt f;
    int e;
    if (!buf || !size)
        return mdt__fail_simple(MDT_EINVAL, "no buffer for the name");
    *buf = 0;
    if ((e = gen_opts_check(o, "mdt_type_name_buf")))
        return e;
    sb_init_fixed(&f.out, buf, size);
    init(&f, o);
    return finish_buf(&f, fmt_type(&f, t), len);
}

int mdt_sig_name_buf(char *buf, size_t size, size_t *len, const mdt_sig *s, const mdt_name_opts *o)
{
    struct fmt f;
    int e;
    if (!buf || !size)
        return mdt__fail_simple(MDT_EINVAL, "no buffer for the name");
    *buf = 0;
    if ((e = gen_opts_check(o, "mdt_sig_name_buf")))
        return e;
    sb_init_fixed(&f.out, buf, size);
    init(&f, o);
    return finish_buf(&f, fmt_sig(&f, s), len);
}

int mdt_token_name_buf(char *buf, size_t size, size_t *len, const mdt_image *img, uint32_t token,
                       const mdt_name_opts *o)
{
    struct fmt f;
    int e;
    if (!buf || !size)
        return mdt__fail_simple(MDT_EINVAL, "no buffer for the name");
    *buf = 0;
    if ((e = gen_opts_check(o, "mdt_token_name_buf")))
        return e;
    sb_init_fixed(&f.out, buf, size);
    init(&f, o);
    return finish_buf(&f, token_body(&f, img, token), len);
}
