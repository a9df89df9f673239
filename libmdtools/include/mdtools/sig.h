/* mdtools: signature blobs decoded into type trees (ECMA-335 II.23.2).
 *
 * Decoding never trusts the blob: nesting depth is capped
 * (MDT_SIG_MAX_DEPTH), every count is checked against the bytes left before
 * anything is allocated, and a failure names the blob offset and what was
 * wrong. Trees are allocated under the caller's talloc context; token fields
 * refer to the image the blob came from (borrowed: keep the image open).
 *
 * Thread safety: decoding only reads the image; concurrent calls on one
 * image are fine with distinct talloc contexts. */
#ifndef MDTOOLS_SIG_H
#define MDTOOLS_SIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mdt_image mdt_image;

/* II.23.1.16 */
enum mdt_element_type {
    MDT_ELEMENT_TYPE_END = 0x00,
    MDT_ELEMENT_TYPE_VOID = 0x01,
    MDT_ELEMENT_TYPE_BOOLEAN = 0x02,
    MDT_ELEMENT_TYPE_CHAR = 0x03,
    MDT_ELEMENT_TYPE_I1 = 0x04,
    MDT_ELEMENT_TYPE_U1 = 0x05,
    MDT_ELEMENT_TYPE_I2 = 0x06,
    MDT_ELEMENT_TYPE_U2 = 0x07,
    MDT_ELEMENT_TYPE_I4 = 0x08,
    MDT_ELEMENT_TYPE_U4 = 0x09,
    MDT_ELEMENT_TYPE_I8 = 0x0a,
    MDT_ELEMENT_TYPE_U8 = 0x0b,
    MDT_ELEMENT_TYPE_R4 = 0x0c,
    MDT_ELEMENT_TYPE_R8 = 0x0d,
    MDT_ELEMENT_TYPE_STRING = 0x0e,
    MDT_ELEMENT_TYPE_PTR = 0x0f,
    MDT_ELEMENT_TYPE_BYREF = 0x10,
    MDT_ELEMENT_TYPE_VALUETYPE = 0x11,
    MDT_ELEMENT_TYPE_CLASS = 0x12,
    MDT_ELEMENT_TYPE_VAR = 0x13,
    MDT_ELEMENT_TYPE_ARRAY = 0x14,
    MDT_ELEMENT_TYPE_GENERICINST = 0x15,
    MDT_ELEMENT_TYPE_TYPEDBYREF = 0x16,
    MDT_ELEMENT_TYPE_I = 0x18,
    MDT_ELEMENT_TYPE_U = 0x19,
    MDT_ELEMENT_TYPE_FNPTR = 0x1b,
    MDT_ELEMENT_TYPE_OBJECT = 0x1c,
    MDT_ELEMENT_TYPE_SZARRAY = 0x1d,
    MDT_ELEMENT_TYPE_MVAR = 0x1e,
    MDT_ELEMENT_TYPE_CMOD_REQD = 0x1f,
    MDT_ELEMENT_TYPE_CMOD_OPT = 0x20,
    MDT_ELEMENT_TYPE_INTERNAL = 0x21,
    MDT_ELEMENT_TYPE_SENTINEL = 0x41,
    MDT_ELEMENT_TYPE_PINNED = 0x45,
    /* Not in blobs: System.__Canon, the runtime's shared-code placeholder,
     * for runtime instantiations. */
    MDT_ELEMENT_TYPE_CANON = 0xf0
};

/* II.23.2.1-3: first byte of a signature. */
enum mdt_callconv {
    MDT_CC_DEFAULT = 0x0,
    MDT_CC_C = 0x1,
    MDT_CC_STDCALL = 0x2,
    MDT_CC_THISCALL = 0x3,
    MDT_CC_FASTCALL = 0x4,
    MDT_CC_VARARG = 0x5,
    MDT_CC_FIELD = 0x6,
    MDT_CC_LOCAL_SIG = 0x7,
    MDT_CC_PROPERTY = 0x8,
    MDT_CC_UNMANAGED = 0x9,
    MDT_CC_GENERICINST = 0xa, /* MethodSpec */
    MDT_CC_MASK = 0x0f,
    MDT_CC_GENERIC = 0x10,
    MDT_CC_HASTHIS = 0x20,
    MDT_CC_EXPLICITTHIS = 0x40
};

#define MDT_SIG_MAX_DEPTH 64 /* nesting of types inside one blob */
#define MDT_SIG_MAX_RANK 32  /* ARRAY ranks beyond this fail (as the CLR refuses them) */

typedef struct mdt_type mdt_type;
typedef struct mdt_method_sig mdt_method_sig;

typedef struct mdt_cmod {
    bool required;  /* CMOD_REQD (modreq) or CMOD_OPT (modopt) */
    uint32_t token; /* TypeDef, TypeRef or TypeSpec */
} mdt_cmod;

typedef struct mdt_array_shape {
    uint32_t rank;
    uint32_t nsizes;
    uint32_t nlobounds;
    const uint32_t *sizes;
    const int32_t *lobounds;
} mdt_array_shape;

struct mdt_type {
    uint8_t kind; /* enum mdt_element_type */
    uint16_t nmods;
    const mdt_cmod *mods; /* modifiers that preceded this type, blob order */
    const mdt_image *img; /* image whose tokens this node uses (may be NULL) */
    uint32_t token;       /* CLASS, VALUETYPE: TypeDefOrRef token */
    uint32_t number;      /* VAR, MVAR: parameter number */
    const mdt_type *elem; /* PTR, BYREF, SZARRAY, ARRAY: element type;
                             GENERICINST: the generic type (CLASS/VALUETYPE) */
    uint32_t nargs;
    const mdt_type *const *args;  /* GENERICINST: type arguments */
    const mdt_array_shape *shape; /* ARRAY */
    const mdt_method_sig *method; /* FNPTR */
    uint64_t internal;            /* INTERNAL: the pointer value as stored */
};

struct mdt_method_sig {
    uint8_t callconv;    /* first byte, with the flags */
    uint32_t gen_count;  /* GENERIC: number of generic parameters */
    const mdt_type *ret; /* return type (property: the property type) */
    uint32_t nparams;
    const mdt_type *const *params;
    uint32_t sentinel; /* index of the first vararg parameter, or
                          UINT32_MAX when there is no SENTINEL */
};

typedef struct mdt_local {
    const mdt_type *type;
    bool pinned;
} mdt_local;

typedef struct mdt_locals {
    uint32_t count;
    const mdt_local *locals;
} mdt_locals;

/* What kind of signature a blob holds. */
enum mdt_sig_kind {
    MDT_SIG_METHOD, /* MethodDefSig, MethodRefSig, StandAloneMethodSig */
    MDT_SIG_FIELD,
    MDT_SIG_PROPERTY,
    MDT_SIG_LOCALS,
    MDT_SIG_TYPESPEC,
    MDT_SIG_METHODSPEC /* the instantiation: nargs/args of `inst` */
};

typedef struct mdt_sig {
    int kind;                     /* enum mdt_sig_kind */
    const mdt_method_sig *method; /* METHOD, PROPERTY */
    const mdt_type *type;         /* FIELD, TYPESPEC */
    const mdt_locals *locals;     /* LOCALS */
    uint32_t nargs;               /* METHODSPEC */
    const mdt_type *const *args;
} mdt_sig;

/* Decode a blob of the given kind. `blob_index` is the blob's #Blob index,
 * used only in error messages (0 if unknown). Errors: MDT_EBADIMAGE,
 * MDT_ETRUNC (each with the blob offset), MDT_EUNSUPPORTED (an ARRAY of
 * rank above MDT_SIG_MAX_RANK), MDT_EINVAL (an unknown kind), MDT_ENOMEM. */
int mdt_sig_decode(void *mem_ctx, mdt_sig *out, const mdt_image *img, int kind, const uint8_t *blob,
                   uint32_t len, uint32_t blob_index);

/* The same into a caller's memory instead of a talloc context: the tree is
 * carved from `arena` (`size` bytes) and valid while it is; nothing is
 * allocated. MDT_ENOMEM when the tree does not fit: then decode with
 * mdt_sig_decode (of the Mono 4.5 framework's 635,300 signatures, 1.5% need
 * more than 1 KiB, 0.04% more than 4 KiB),
 * MDT_EINVAL without an arena (or for an unknown kind); otherwise the errors
 * of mdt_sig_decode: MDT_EBADIMAGE, MDT_ETRUNC, MDT_EUNSUPPORTED. For bulk
 * or allocation-sensitive callers (profilers, batch printers). */
int mdt_sig_decode_buf(void *arena, size_t size, mdt_sig *out, const mdt_image *img, int kind,
                       const uint8_t *blob, uint32_t len, uint32_t blob_index);

/* Decode the signature a row carries: MethodDef, MemberRef (method or field
 * by its first byte), Field, Property, StandAloneSig (locals or method),
 * TypeSpec, MethodSpec. Errors: MDT_EINVAL for tokens of other tables,
 * MDT_ENOTFOUND (no such row), MDT_ETRUNC, MDT_EBADIMAGE, MDT_ENOHEAP (the
 * row or its blob does not read), those of mdt_sig_decode (MDT_EBADIMAGE,
 * MDT_ETRUNC, MDT_EUNSUPPORTED) and MDT_ENOMEM. */
int mdt_sig_of_token(void *mem_ctx, mdt_sig *out, const mdt_image *img, uint32_t token);
/* The same into a caller's arena (see mdt_sig_decode_buf). Errors as
 * mdt_sig_of_token: MDT_EINVAL, MDT_ENOTFOUND, MDT_ETRUNC, MDT_EBADIMAGE,
 * MDT_ENOHEAP, MDT_EUNSUPPORTED, and MDT_ENOMEM when the tree does not fit. */
int mdt_sig_of_token_buf(void *arena, size_t size, mdt_sig *out, const mdt_image *img,
                         uint32_t token);

#ifdef __cplusplus
}
#endif
#endif
