/* mdtools: runtime instantiations and portable type-argument descriptors.
 *
 * A profiler sees `MyClass<int>.Foo<float>` as a MethodDef token plus
 * type-argument ClassIDs (the class's arguments from GetClassIDInfo2, the
 * method's from GetFunctionInfo2). ClassIDs mean nothing outside the
 * process, so it logs each argument as a descriptor: a TypeDef in some
 * module (identified by MVID) with its own arguments, a primitive, an
 * array / pointer / byref of a descriptor, or System.__Canon where the
 * runtime shared code. This header builds type trees from descriptors,
 * prints instantiated names (`MyClass<System.Int32>::Foo<System.Single>`)
 * and converts descriptors to and from the text form of doc/names.md:
 *
 *     desc  := prim | ref | desc "[]" | desc "[" rank "]" | desc "*" | desc "&"
 *            | "__Canon"
 *     ref   := mvid ":" token [ "<" desc ("," desc)* ">" ]
 *     prim  := I1 U1 I2 U2 I4 U4 I8 U8 R4 R8 I U CHAR BOOLEAN STRING OBJECT
 *              VOID TYPEDBYREF
 *     mvid  := 32 hex digits: the MVID GUID's canonical text without dashes
 *              (Data1, Data2, Data3 as numbers, then 8 bytes), lower case,
 *              e.g. {FE9721AE-846A-4BAE-8601-A052E4C43E45} ->
 *              fe9721ae846a4bae8601a052e4c43e45
 *     token := "0x" 8 hex digits, a TypeDef
 *
 * Nesting (arguments and suffixes together) is capped at MDT_SIG_MAX_DEPTH.
 * Results hang off the caller's talloc context; image pointers are
 * borrowed. Thread-safe on open images with distinct contexts. */
#ifndef MDTOOLS_DESCRIPTOR_H
#define MDTOOLS_DESCRIPTOR_H

#include <stddef.h>
#include <stdint.h>

#include <mdtools/names.h>
#include <mdtools/sig.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mdt_image mdt_image;

enum mdt_desc_kind {
    MDT_DESC_PRIM = 1, /* a primitive: `prim` */
    MDT_DESC_TYPEDEF,  /* a TypeDef `token` of `img`, with `nargs` arguments */
    MDT_DESC_SZARRAY,  /* elem[] */
    MDT_DESC_ARRAY,    /* elem[rank]: general array, no bounds */
    MDT_DESC_PTR,      /* elem* */
    MDT_DESC_BYREF,    /* elem& */
    MDT_DESC_CANON     /* System.__Canon */
};

typedef struct mdt_desc mdt_desc;

struct mdt_desc {
    uint8_t kind;         /* enum mdt_desc_kind */
    uint8_t prim;         /* PRIM: MDT_ELEMENT_TYPE_VOID..OBJECT (a primitive,
                             STRING, OBJECT, TYPEDBYREF, I, U) */
    const mdt_image *img; /* TYPEDEF (borrowed) */
    uint32_t token;       /* TYPEDEF: 0x02xxxxxx */
    uint32_t nargs;       /* TYPEDEF: generic arguments, all of them for a
                             nested generic (outer ones first) */
    const mdt_desc *const *args;
    uint32_t rank;        /* ARRAY: 1..32 */
    const mdt_desc *elem; /* SZARRAY, ARRAY, PTR, BYREF */
};

/* Map an MVID (16 bytes as stored in #GUID, as mdt_image_mvid gives them)
 * to an open image. Return 0 with *img set, or MDT_ENOTFOUND. */
typedef int (*mdt_mvid_lookup)(void *payload, const mdt_image **img, const uint8_t mvid[16]);

/* Build the type tree a descriptor stands for: GENERICINST of CLASS or
 * VALUETYPE (from the TypeDef's base type), SZARRAY, ARRAY (rank, no
 * bounds), PTR, BYREF, primitives, MDT_ELEMENT_TYPE_CANON. Nodes carry the
 * image of their own TypeDef. MDT_EINVAL for a malformed descriptor (unknown
 * kind, a token that is not a TypeDef of its image, an argument count that
 * differs from the TypeDef's generic parameter count, too deep), MDT_ENOMEM;
 * MDT_EBADIMAGE, MDT_ETRUNC, MDT_ENOTFOUND when a TypeDef's GenericParam
 * rows cannot be counted (as mdt_generic_params, <mdtools/members.h>). */
int mdt_desc_to_type(void *mem_ctx, const mdt_type **out, const mdt_desc *d);

/* The name of a runtime instantiation: `token` is a TypeDef or MethodDef of
 * `img`; the class's type arguments (for a MethodDef: those of its owner
 * type) and the method's type arguments are descriptors. E.g. MethodDef
 * MyClass`1::Foo`1 with <I4> and <R4> prints
 * `MyClass<System.Int32>::Foo<System.Single>` (full style; `opts` may be
 * NULL). Counts must match the generic parameter counts (MDT_EINVAL).
 * Errors: MDT_EINVAL (a count that does not match, a malformed descriptor,
 * a token of another table), MDT_ENOMEM, and those of naming the types
 * (mdt_type_name): MDT_EBADIMAGE, MDT_ETRUNC, MDT_ENOHEAP, MDT_ENOTFOUND,
 * MDT_EUNSUPPORTED. */
int mdt_inst_name(void *mem_ctx, char **out, const mdt_image *img, uint32_t token,
                  uint32_t ntype_args, const mdt_desc *const *type_args, uint32_t nmethod_args,
                  const mdt_desc *const *method_args, const mdt_name_opts *opts);

/* Parse the text form (`len` bytes of `text`). MVIDs are mapped to images
 * by `lookup`. Errors: MDT_EINVAL for malformed text, MDT_ENOTFOUND for an
 * MVID the lookup does not know or a token beyond its TypeDef table; the
 * error record's offset is the 0-based position where parsing stopped, and
 * its message says "column N" (1-based); MDT_ENOMEM; what `lookup` returned
 * other than MDT_ENOTFOUND. */
int mdt_desc_parse(void *mem_ctx, mdt_desc **out, const char *text, size_t len,
                   mdt_mvid_lookup lookup, void *payload);

/* The text form of a descriptor (the MVIDs read from the images). Errors:
 * MDT_EINVAL (a malformed descriptor), MDT_ENOMEM, and those of reading an
 * image's MVID (mdt_image_mvid): MDT_ENOTFOUND, MDT_ETRUNC, MDT_EBADIMAGE,
 * MDT_ENOHEAP. */
int mdt_desc_format(void *mem_ctx, char **out, const mdt_desc *d);

#ifdef __cplusplus
}
#endif
#endif
