/* mdtools: values stored in metadata blobs, and exact printing of them.
 *
 * The Constant table (ECMA-335 II.22.9) stores a literal value of a field,
 * parameter or property as a blob whose meaning its Type column gives;
 * custom attribute blobs (II.23.3, <mdtools/attr.h>) store argument values
 * the same way plus enums, System.Type names, boxed objects and arrays. Both
 * decode into an mdt_value tree. System.Decimal constants are not in the
 * Constant table: compilers put them in a DecimalConstantAttribute, which
 * mdt_value_default() reads too.
 *
 * Decoding never trusts the blob: a value shorter than its type, a bad
 * length prefix or a count larger than the bytes left fails with a located
 * error (MDT_ETRUNC / MDT_EBADIMAGE naming the blob and offset).
 *
 * Printing is exact: integers in decimal, R4/R8 as the shortest text that
 * reads back to the same bits (`1.5`, `0.1`, `NaN`, `Infinity`,
 * `-Infinity`, `-0`), decimals and 128-bit integers exactly (GMP).
 *
 * Ownership: trees and strings are allocated under the caller's talloc
 * context. Thread-safe on an open image with distinct contexts. */
#ifndef MDTOOLS_VALUE_H
#define MDTOOLS_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mdtools/errors.h>

#include <mdtools/names.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mdt_image mdt_image;

/* What a value is. The numbers are the element types of II.23.1.16 and the
 * custom-attribute serialization codes of II.23.3, so a Constant's Type
 * column and a FieldOrPropType byte map onto them directly. */
enum mdt_value_kind {
    MDT_VALUE_BOOLEAN = 0x02,
    MDT_VALUE_CHAR = 0x03,
    MDT_VALUE_I1 = 0x04,
    MDT_VALUE_U1 = 0x05,
    MDT_VALUE_I2 = 0x06,
    MDT_VALUE_U2 = 0x07,
    MDT_VALUE_I4 = 0x08,
    MDT_VALUE_U4 = 0x09,
    MDT_VALUE_I8 = 0x0a,
    MDT_VALUE_U8 = 0x0b,
    MDT_VALUE_R4 = 0x0c,
    MDT_VALUE_R8 = 0x0d,
    MDT_VALUE_STRING = 0x0e,
    MDT_VALUE_CLASS = 0x12,   /* Constant of a reference type: always null */
    MDT_VALUE_SZARRAY = 0x1d, /* custom attributes: one-dimensional array */
    MDT_VALUE_TYPE = 0x50,    /* custom attributes: System.Type, as its name */
    MDT_VALUE_BOXED = 0x51,   /* custom attributes: System.Object holding a value */
    MDT_VALUE_ENUM = 0x55,    /* custom attributes: enum, with its underlying integer */
    MDT_VALUE_DECIMAL = 0xf1  /* not in blobs: System.Decimal (DecimalConstantAttribute) */
};

/* System.Decimal: (-1)^negative * (hi:mid:lo) / 10^scale, scale 0..28. */
typedef struct mdt_decimal {
    uint8_t scale;
    bool negative;
    uint32_t hi, mid, lo;
} mdt_decimal;

typedef struct mdt_value_type mdt_value_type;

/* The declared type of a value. */
struct mdt_value_type {
    uint8_t kind;               /* enum mdt_value_kind */
    uint8_t underlying;         /* ENUM: BOOLEAN, CHAR or I1..U8 */
    const char *enum_name;      /* ENUM: full-style name (`Ns.Outer+E`) */
    const mdt_image *enum_img;  /* ENUM: image defining the enum, or NULL */
    uint32_t enum_typedef;      /* ENUM: its TypeDef token there, or 0 */
    const mdt_value_type *elem; /* SZARRAY: element type */
};

typedef struct mdt_value mdt_value;

struct mdt_value {
    const mdt_value_type *type;
    bool null;              /* STRING, TYPE, SZARRAY, CLASS: the null reference */
    uint64_t u;             /* BOOLEAN, CHAR, I1..U8, ENUM: the bits, zero-extended */
    int64_t i;              /* the same, sign-extended for I1, I2, I4, I8 (and
                               enums over them) */
    double r;               /* R4 (widened exactly), R8 */
    const char *str;        /* STRING, TYPE: UTF-8, NUL-terminated (for a
                               custom attribute: the bytes as stored) */
    size_t len;             /* bytes in str, without the NUL */
    const mdt_value *boxed; /* BOXED: the value inside, with its own type */
    uint32_t count;         /* SZARRAY: number of elements */
    const mdt_value *elems; /* SZARRAY */
    mdt_decimal dec;        /* DECIMAL */
};

/* Decode a Constant blob (II.22.9) of element type `type` (BOOLEAN, CHAR,
 * I1..U8, R4, R8, STRING as UTF-16LE, CLASS = 4 zero bytes). `blob_index`
 * names the blob in messages (0 if unknown). A value shorter than its type,
 * a STRING of odd length or a type byte outside that list fail with
 * MDT_ETRUNC / MDT_EBADIMAGE; bytes beyond the value are ignored. Errors:
 * those two, and MDT_ENOMEM. */
int mdt_constant_decode(void *mem_ctx, mdt_value *out, const mdt_image *img, uint8_t type,
                        const uint8_t *blob, uint32_t len, uint32_t blob_index);

/* Decode Constant row `rid` (1-based). Errors as above (MDT_ETRUNC,
 * MDT_EBADIMAGE, MDT_ENOMEM), located at the row, and those of reading it:
 * MDT_ENOTFOUND (no such row), MDT_ENOHEAP (no #Blob stream). */
int mdt_constant_of_row(void *mem_ctx, mdt_value *out, const mdt_image *img, uint32_t rid);

/* The default value of a Field, Param or Property token: its Constant row,
 * else (Field, Param) a DecimalConstantAttribute on it, giving a DECIMAL.
 * Errors: MDT_ENOTFOUND when it has neither, MDT_EINVAL (a token of
 * another table), MDT_ENOMEM, and those of decoding the Constant row or
 * the attribute: MDT_ETRUNC, MDT_EBADIMAGE, MDT_ENOHEAP, MDT_EUNRESOLVED,
 * MDT_EUNSUPPORTED (a DecimalConstantAttribute constructor that takes
 * what such an attribute cannot). */
int mdt_value_default(void *mem_ctx, mdt_value *out, const mdt_image *img, uint32_t parent);

/* A value as text, e.g. `-8`, `1.5`, `"const string"` (C escapes), `'x'`,
 * `null`, `12.34`; custom attribute values as C# would write them
 * (`Ns.E.Member`, `(Ns.E)3`, `typeof(T)`, `new System.Int32[] { 1, 2 }`,
 * `(System.Int64)7` for a boxed value). Type names follow `opts` (NULL:
 * full style; MDT_NAME_FRIENDLY: C# keywords and short names). Errors:
 * MDT_EINVAL (a malformed value: without a type, of an unknown kind,
 * nested too deeply, a decimal's scale above 28), MDT_ENOMEM. */
int mdt_value_format(void *mem_ctx, char **out, const mdt_value *v, const mdt_name_opts *opts);

/* A decimal exactly, keeping its scale: scale 2, 1234 -> `12.34`; scale 3,
 * 1500 -> `1.500`. Errors: MDT_EINVAL for a scale above 28, MDT_ENOMEM.
 * Uses GMP. */
int mdt_decimal_format(void *mem_ctx, char **out, const mdt_decimal *d);

/* A 128-bit integer stored as 16 little-endian bytes (System.Int128 /
 * UInt128 layout), exactly in decimal. Uses GMP. Errors: MDT_ENOMEM. */
int mdt_value_int128_format(void *mem_ctx, char **out, const uint8_t le[16], bool is_signed);

/* R4 / R8 as the shortest decimal text that reads back to the same value,
 * with `NaN`, `Infinity`, `-Infinity`, `-0`. `buf` needs 32 bytes. */
char *mdt_value_r8_format(char buf[32], double v);
char *mdt_value_r4_format(char buf[32], float v);

/* api-rename: off */
/* The names these functions had in libmdtools 1:0:0, exported until the
 * next soname (each calls the function of its new name); a compiler warns
 * where one is used and names the new one (MDT_DEPRECATED_FOR,
 * <mdtools/errors.h>). tools/api-rename.py moves code to the new names;
 * MDT_NO_DEPRECATED leaves them undeclared. */
#ifndef MDT_NO_DEPRECATED
MDT_DEPRECATED_FOR(mdt_value_r4_format) char *mdt_r4_format(char buf[32], float v);
MDT_DEPRECATED_FOR(mdt_value_r8_format) char *mdt_r8_format(char buf[32], double v);
MDT_DEPRECATED_FOR(mdt_value_int128_format)
int mdt_int128_format(void *mem_ctx, char **out, const uint8_t le[16], bool is_signed);
MDT_DEPRECATED_FOR(mdt_value_default)
int mdt_default_value(void *mem_ctx, mdt_value *out, const mdt_image *img, uint32_t parent);
#endif /* MDT_NO_DEPRECATED */
/* api-rename: on */

#ifdef __cplusplus
}
#endif
#endif
