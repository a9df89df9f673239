/* Private header of the name printer (<mdtools/names.h>): the state of one
 * name being printed and the calls between the printer's files. A name
 * goes through them top down:
 *   names.c     the front ends: options, the output (util/strbuf), the
 *               name of a token by its table;
 *   members.c   signatures of every kind, members `Parent::name`;
 *   typetree.c  a type tree, node by node;
 *   typenames.c a type named by token (TypeDef, TypeRef, TypeSpec,
 *               ExportedType) and the cache of those names;
 *   ilasm.c     what the IL style adds: scopes, calling conventions,
 *               function pointers;
 *   sigtext.c   a signature printed straight from its blob, no tree.
 * Each call appends to f->out and returns 0 or a negative MDT_E code with
 * the error recorded; an output that could not grow is not an error here
 * (f->out.failed: the front ends report it). Calls recurse (a type's
 * arguments, a TypeSpec's tree): depth and cycles are capped in
 * typetree.c and typenames.c. */
#ifndef MDT_GENERICS_FMT_INT_H
#define MDT_GENERICS_FMT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <talloc.h>

#include <mdtools/names.h>
#include <mdtools/sig.h>

#include "util/error.h"
#include "util/strbuf.h"

#define MAX_TYPESPEC 16 /* TypeSpecs expanded inside one another */

/* No real name comes near this; TypeSpecs that refer to each other several
 * times each could expand exponentially, and this bounds the work. */
#define MAX_NAME_LEN ((size_t)1 << 20)

/* The name cache (typenames.c): one image's TypeDef and TypeRef names in
 * one style; the front ends check that it fits the options. */
struct cached {
    const char *s; /* NULL until built */
    uint32_t len;
    uint32_t bare; /* length without a generic parameter list */
};

struct mdt_name_cache {
    const struct mdt_image *img;
    int style;
    unsigned flags;
    uint32_t ntd, ntr;
    struct cached *td, *tr; /* by rid, [0] unused */
    char *cur, *end;        /* the free bytes of the names' chunk (typenames.c,
                               bump_int.h) */
};

/* One name being printed. */
struct fmt {
    sb out;                /* a caller's buffer (fixed: truncation
                              fails the call) or a stack buffer
                              that moves to a talloc block */
    mdt_name_cache *cache; /* usable for this style, or NULL */
    void *tmp;             /* scratch for decoded TypeSpecs */
    int style;
    unsigned flags;
    const mdt_generic_context *g;
    const struct mdt_image *ts_img[MAX_TYPESPEC];
    uint32_t ts_stack[MAX_TYPESPEC]; /* TypeSpecs being printed */
    unsigned ts_depth;
    unsigned depth;
    const struct mdt_image *home; /* image of the first name printed: IL
                                     style scopes TypeDefs of other images */
    uint32_t arity;               /* arity suffixes of the TypeDef/TypeRef
                                     segments just printed, summed */
};

/* Whether this style strips arity suffixes and names generic parameters
 * instead (the full style, friendly or not; not its metadata form). */
static inline bool fmt_plain_generics(const struct fmt *f)
{
    return f->style == MDT_STYLE_FULL && !(f->flags & MDT_NAME_METADATA);
}

/* A number in decimal: generic parameter numbers and arities are printed
 * in most generic names, and sb_addf's printf cost ~500 instructions. */
static inline void fmt_put_u32(sb *out, uint32_t v)
{
    char num[10];
    size_t n = 0;
    do
        num[sizeof num - 1 - n++] = (char)('0' + v % 10);
    while ((v /= 10));
    sb_add(out, num + sizeof num - n, n);
}

/* Scratch space for decoded TypeSpecs, made on first use (freed by the
 * front ends); NULL when out of memory. */
static inline void *fmt_scratch(struct fmt *f)
{
    if (!f->tmp)
        f->tmp = talloc_new(NULL);
    return f->tmp;
}

/* The tree of a TypeSpec or MethodSpec token, decoded into arena (the
 * caller's stack: most fit) or, when it is unusually large, into the
 * scratch space. */
static inline int fmt_sig_of_token(struct fmt *f, uint64_t *arena, size_t size, mdt_sig *s,
                                   const struct mdt_image *img, uint32_t token)
{
    int e = mdt_sig_of_token_buf(arena, size, s, img, token);
    if (e != MDT_ENOMEM)
        return e;
    if (!fmt_scratch(f))
        return mdt__fail_simple(MDT_ENOMEM, "out of memory");
    return mdt_sig_of_token(f->tmp, s, img, token);
}

/* names.c: the errors every file reports. MDT_EBADIMAGE at a row of
 * `region` (fmt takes two unsigned numbers); a name past MAX_NAME_LEN. */
int fmt_bad(const struct mdt_image *img, const char *region, uint32_t row, const char *fmt,
            uint32_t a, uint32_t b);
int fmt_too_long(void);

/* ilasm.c. The scope ILAsm writes before a TypeRef, from its outermost
 * resolution scope: `[Assembly]`, `[.module X]`, nothing for others. */
int fmt_il_typeref_scope(struct fmt *f, const struct mdt_image *img, uint32_t scope);
/* The scope before a TypeDef of img when the name started in another image
 * (f->home; a runtime instantiation mixes modules): `[Assembly]`, or
 * `[.module X]` for a module without an Assembly row. */
void fmt_il_typedef_scope(struct fmt *f, const struct mdt_image *img);
/* ILAsm's words for a calling convention (II.15.3), NULL for the default;
 * an unknown one as `callconv(N)` in buf. */
const char *fmt_cc_word_il(unsigned cc, char *buf, size_t n);
/* A (dotted) name as an ILAsm identifier, quoted where it must be. */
void fmt_il_id(sb *out, const char *s, size_t n);
/* A member's name: as it is when ILAsm reads it as one (an ID, a dotted
 * name of IDs, .ctor), else quoted whole (`'I<int32>.M'`). */
void fmt_il_member_id(sb *out, const char *s, size_t n);
/* A function pointer type in ILAsm: `method instance R *(A, B)`. */
int fmt_il_fnptr(struct fmt *f, const mdt_method_sig *m);

/* typenames.c. A TypeDefOrRef(OrSpec) token; `kind` CLASS/VALUETYPE
 * selects IL's prefix, 0 prints none; `own`: named on its own, not as the
 * generic type of an instantiation (a generic type then shows its
 * parameters in the full style). */
int fmt_token(struct fmt *f, const struct mdt_image *img, uint32_t token, int kind, bool own);
/* An ExportedType, nested through its Implementation chain. */
int fmt_exported(struct fmt *f, const mdt_image *img, uint32_t token);

/* typetree.c. A type tree (II.23.2.12). */
int fmt_type(struct fmt *f, const mdt_type *t);

/* Type arguments `<A,B>` (`[A,B]` in reflection) of a generic
 * instantiation or a MethodSpec. Inline: it is on the path of most
 * generic names. */
static inline int fmt_type_args(struct fmt *f, uint32_t n, const mdt_type *const *args)
{
    int e = 0;
    sb_addc(&f->out, f->style == MDT_STYLE_REFLECTION ? '[' : '<');
    for (uint32_t i = 0; i < n && !e; i++) {
        if (i)
            sb_adds(&f->out, f->style == MDT_STYLE_IL ? ", " : ",");
        e = fmt_type(f, args[i]);
    }
    sb_addc(&f->out, f->style == MDT_STYLE_REFLECTION ? ']' : '>');
    return e;
}

/* members.c. A method signature's parameters joined by sep (vararg
 * sentinel as `...`); a function pointer type in this style; a decoded
 * signature of any kind; the name of a MethodDef, Field, MemberRef,
 * MethodSpec, Property or Event. */
int fmt_params(struct fmt *f, const mdt_method_sig *m, const char *sep);
int fmt_fnptr(struct fmt *f, const mdt_method_sig *m);
int fmt_sig(struct fmt *f, const mdt_sig *s);
int fmt_member(struct fmt *f, const struct mdt_image *img, uint32_t token);

/* sigtext.c. The signature `token` carries (or, token 0, the blob of
 * `kind`, enum mdt_sig_kind), printed straight from its blob as fmt_sig
 * prints its tree, where the blob holds only what that file prints (the
 * full style, the common element types): FMT_TEXT_DONE, the name
 * appended (f->out may have failed: the front ends report it as for the
 * tree). FMT_TEXT_TREE otherwise, and on any failure: f->out is back
 * where it was, nothing recorded, and the caller prints the tree, which
 * reports what failed. */
enum { FMT_TEXT_DONE = 0, FMT_TEXT_TREE = 1 };
int fmt_sig_text(struct fmt *f, const struct mdt_image *img, uint32_t token, int kind,
                 const uint8_t *blob, uint32_t len);

#endif
