/* mdtools: custom attribute values (ECMA-335 II.23.3, II.22.10).
 *
 * A CustomAttribute row names a constructor (MethodDef or MemberRef) and a
 * blob: prolog 0x0001, one value per constructor parameter (their types
 * come from the constructor's signature), then a count of named arguments,
 * each FIELD (0x53) or PROPERTY (0x54), its FieldOrPropType, its name and
 * its value. Values are primitives, strings, System.Type (as a serialized
 * type name), enums, boxed objects (System.Object: type tag then value) and
 * one-dimensional arrays; a string, type name or array may be null.
 *
 * Enums are stored as their underlying integer, whose size the blob does
 * not say. It is read from the enum's definition (its instance field,
 * `value__`) when the enum is a TypeDef of the same image, or a TypeRef
 * scoped to this module. For any other enum the decoder asks the caller's
 * enum resolver; without one, or when the resolver does not know it, the
 * decode fails with MDT_EUNRESOLVED "unknown enum size for <name>" (the
 * blob may be fine: open the enum's assembly, or answer in the resolver).
 *
 * Decoding never trusts the blob: the prolog is checked, every count is
 * checked against the bytes left before allocating, nesting (arrays of
 * boxed arrays ...) is capped at MDT_SIG_MAX_DEPTH, and failures name the
 * blob and offset. Results hang off the caller's talloc context; strings
 * are copies. Thread-safe on an open image with distinct contexts (the
 * resolver is called on the caller's thread). */
#ifndef MDTOOLS_ATTR_H
#define MDTOOLS_ATTR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mdtools/errors.h>

#include <mdtools/names.h>
#include <mdtools/value.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mdt_image mdt_image;

/* What an enum resolver answers: where the enum is defined (the decoder
 * then reads its underlying type and, for printing, its member names), or
 * only its underlying element type (def_img NULL). */
typedef struct mdt_enum_info {
    const mdt_image *def_img; /* image defining the enum, or NULL */
    uint32_t def_typedef;     /* TypeDef token in def_img */
    uint8_t underlying;       /* when def_img is NULL: I1..U8, BOOLEAN or CHAR */
} mdt_enum_info;

/* Asked for an enum the image does not define. Either `token` is the
 * TypeRef (of `img`) that a constructor signature uses, and `name` its
 * full-style name; or `token` is 0 and `name` is the type name serialized
 * in the blob (reflection syntax, possibly assembly-qualified, e.g.
 * "System.AttributeTargets, mscorlib, Version=4.0.0.0, ..."). Return 0 with
 * *out filled, MDT_ENOTFOUND when unknown, or another error to stop. */
typedef int (*mdt_enum_resolver)(void *payload, mdt_enum_info *out, const mdt_image *img,
                                 uint32_t token, const char *name);

typedef struct mdt_named_arg {
    bool property;    /* PROPERTY (0x54), else FIELD (0x53) */
    const char *name; /* UTF-8, NUL-terminated */
    mdt_value value;
} mdt_named_arg;

typedef struct mdt_attr {
    const mdt_image *img;
    uint32_t ctor; /* MethodDef or MemberRef token */
    uint32_t type; /* the attribute type: the ctor's parent (TypeDef,
                      TypeRef or TypeSpec token) */
    uint32_t nfixed;
    const mdt_value *fixed; /* one per constructor parameter */
    uint32_t nnamed;
    const mdt_named_arg *named;
} mdt_attr;

/* Decode a custom attribute blob for constructor `ctor` of `img`.
 * `blob_index` names the blob in messages (0 if unknown); `resolver` may
 * be NULL. Errors: MDT_EBADIMAGE, MDT_ETRUNC (located: the blob, the
 * constructor's signature or a row on the way), MDT_ENOHEAP (a heap they
 * need is absent), MDT_ENOTFOUND (the constructor's row, or its parent's,
 * does not exist), MDT_EUNRESOLVED (enum of unknown size),
 * MDT_EUNSUPPORTED (a parameter type attributes cannot have, an array of
 * rank above MDT_SIG_MAX_RANK), MDT_EINVAL (ctor is not a MethodDef or
 * MemberRef), MDT_ENOMEM, or what the resolver returned. */
int mdt_attr_decode(void *mem_ctx, mdt_attr *out, const mdt_image *img, uint32_t ctor,
                    const uint8_t *blob, uint32_t len, uint32_t blob_index,
                    mdt_enum_resolver resolver, void *payload);

/* Decode CustomAttribute row `rid` (1-based) of `img`. Errors: those of
 * mdt_attr_decode (MDT_EBADIMAGE, MDT_ETRUNC, MDT_ENOHEAP, MDT_ENOTFOUND,
 * MDT_EUNRESOLVED, MDT_EUNSUPPORTED, MDT_EINVAL, MDT_ENOMEM, the
 * resolver's), MDT_ENOTFOUND also for no such row. */
int mdt_attr_of_row(void *mem_ctx, mdt_attr *out, const mdt_image *img, uint32_t rid,
                    mdt_enum_resolver resolver, void *payload);

/* C#-like text of a decoded attribute:
 * `[Ns.InfoAttribute(42, "hello", Ns.Color.Green, typeof(System.Int32),
 *  new System.Int32[] { 1, 2 }, (System.Int64)7, Number = -1)]`.
 * With MDT_NAME_FRIENDLY: short names, C# keywords, no `Attribute` suffix.
 * Errors: MDT_ENOMEM, and those of naming the types it prints (as for
 * mdt_type_name): MDT_EBADIMAGE, MDT_ETRUNC, MDT_ENOHEAP, MDT_ENOTFOUND,
 * MDT_EUNSUPPORTED, MDT_EINVAL (a value of a kind no attribute holds). */
int mdt_attr_format(void *mem_ctx, char **out, const mdt_attr *a, const mdt_name_opts *opts);

/* The decimal of a DecimalConstantAttribute (constructor (byte scale,
 * byte sign, uint hi, uint mid, uint lo) or (byte, byte, int, int, int)).
 * Errors: MDT_EINVAL when `a` is not one, MDT_EBADIMAGE for a scale above
 * 28. */
int mdt_attr_decimal(mdt_decimal *out, const mdt_attr *a);

/* The underlying element type (I1..U8, BOOLEAN, CHAR) of an enum TypeDef:
 * the type of its first instance field. Errors: MDT_ENOTFOUND when the type
 * has no instance field of such a type (not an enum) or there is no such
 * row, MDT_EINVAL (not a TypeDef token), MDT_ETRUNC, MDT_EBADIMAGE,
 * MDT_ENOHEAP (its rows or the field's signature do not read),
 * MDT_EUNSUPPORTED (a signature mdtools does not read), MDT_ENOMEM. */
int mdt_typedef_enum_underlying(uint8_t *elem_type, const mdt_image *img, uint32_t typedef_token);

/* api-rename: off */
/* The names these functions had in libmdtools 1:0:0, exported until the
 * next soname (each calls the function of its new name); a compiler warns
 * where one is used and names the new one (MDT_DEPRECATED_FOR,
 * <mdtools/errors.h>). tools/api-rename.py moves code to the new names;
 * MDT_NO_DEPRECATED leaves them undeclared. */
#ifndef MDT_NO_DEPRECATED
MDT_DEPRECATED_FOR(mdt_typedef_enum_underlying)
int mdt_enum_underlying(uint8_t *elem_type, const mdt_image *img, uint32_t typedef_token);
#endif /* MDT_NO_DEPRECATED */
/* api-rename: on */

#ifdef __cplusplus
}
#endif
#endif
