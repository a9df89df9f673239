/* mdtools: manifest resources (ECMA-335 II.22.24, II.6.2.2) and the
 * System.Resources format (.resources files, as ResourceWriter writes
 * them and ResourceReader reads them).
 *
 * A ManifestResource row names a resource and says where it lives: in this
 * image, at an offset in the CLI header's Resources directory (a 4-byte
 * length, then the bytes), in another file of the assembly (a File row),
 * or in another assembly (an AssemblyRef row). An embedded resource whose
 * name ends in ".resources" is usually a resource set in the
 * System.Resources format: named entries, each a value of a type (a
 * primitive, a string, a byte array, a stream, or a serialised object of a
 * type the file names).
 *
 * Every read is bounds-checked against the image or the given bytes: a
 * length or offset past what is there is a located error, never a read
 * outside. Loops over on-disk counts are bounded by the bytes present
 * (each entry of a resource set takes 8 bytes of its index) and by
 * MDT_RESOURCES_MAX_ENTRIES.
 *
 * Ownership: names read from the image are borrowed and live as long as
 * the image; a parsed resource set and its strings are one talloc tree
 * under the caller's mem_ctx. Thread safety: any thread. */
#ifndef MDTOOLS_RESOURCES_H
#define MDTOOLS_RESOURCES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mdtools/errors.h>

#include <mdtools/image.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Where a manifest resource lives. */
enum mdt_resource_where {
    MDT_RESOURCE_EMBEDDED = 1, /* in this image's Resources directory */
    MDT_RESOURCE_FILE,         /* in another file of the assembly (File row) */
    MDT_RESOURCE_ASSEMBLY      /* in another assembly (AssemblyRef row) */
};

/* ManifestResourceAttributes: VisibilityMask 0x7. */
#define MDT_RESOURCE_PUBLIC 0x1u
#define MDT_RESOURCE_PRIVATE 0x2u

typedef struct mdt_manifest_resource {
    uint32_t token;                  /* 0x28RRRRRR */
    const char *name;                /* borrowed (#Strings) */
    uint32_t flags;                  /* the Flags column (visibility in bits 0-2) */
    uint32_t offset;                 /* the Offset column */
    int where;                       /* enum mdt_resource_where */
    uint32_t implementation;         /* File or AssemblyRef token; 0 when embedded */
    const char *implementation_name; /* that row's name, borrowed; NULL when embedded */
    /* Embedded only (0 otherwise): */
    uint32_t size;             /* the length prefix */
    uint32_t data_rva;         /* RVA of the bytes (after the length) */
    uint64_t data_file_offset; /* their file offset; 0 when the image is no flat PE file */
} mdt_manifest_resource;

/* ManifestResource row `rid` (1-based). For an embedded resource the
 * length prefix is read and checked against the Resources directory (the
 * bytes are not read: mdt_manifest_resource_data does that).
 * Errors: MDT_EINVAL (NULL argument), MDT_ENOTFOUND (no such row),
 * MDT_ETRUNC (the row lies past the tables stream; the length prefix or
 * the bytes run past the Resources directory), MDT_EBADIMAGE (an
 * Implementation that is neither null, a File nor an AssemblyRef; an
 * embedded resource in an image without a Resources directory, or whose
 * directory runs past the 4 GiB address space), MDT_ENOHEAP
 * (a name past #Strings), and those of mdt_image_rva. MDT_EIO: an image
 * opened with MDT_OPEN_LAZY whose file changed since the open. */
int mdt_manifest_resource_read(mdt_manifest_resource *out, const mdt_image *img, uint32_t rid);

/* The bytes of embedded resource `rid`, borrowed from the image.
 * Errors: MDT_EINVAL (NULL argument, or a resource that is not embedded),
 * and as for mdt_manifest_resource_read MDT_ENOTFOUND, MDT_ETRUNC,
 * MDT_EBADIMAGE and MDT_ENOHEAP. MDT_EIO: an image opened with
 * MDT_OPEN_LAZY whose file changed since the open. */
int mdt_manifest_resource_data(const uint8_t **data, size_t *len, const mdt_image *img,
                               uint32_t rid);

/* --- The System.Resources format --- */

#define MDT_RESOURCES_MAGIC 0xBEEFCACEu
#define MDT_RESOURCES_MAX_ENTRIES (1u << 20)
#define MDT_RESOURCES_MAX_TYPES 4096u

/* ResourceTypeCode (format version 2). A user type is
 * MDT_RESTYPE_USER + its index in the type table. */
enum mdt_restype {
    MDT_RESTYPE_NULL = 0,
    MDT_RESTYPE_STRING = 1,
    MDT_RESTYPE_BOOLEAN = 2,
    MDT_RESTYPE_CHAR = 3,
    MDT_RESTYPE_BYTE = 4,
    MDT_RESTYPE_SBYTE = 5,
    MDT_RESTYPE_INT16 = 6,
    MDT_RESTYPE_UINT16 = 7,
    MDT_RESTYPE_INT32 = 8,
    MDT_RESTYPE_UINT32 = 9,
    MDT_RESTYPE_INT64 = 10,
    MDT_RESTYPE_UINT64 = 11,
    MDT_RESTYPE_SINGLE = 12,
    MDT_RESTYPE_DOUBLE = 13,
    MDT_RESTYPE_DECIMAL = 14,
    MDT_RESTYPE_DATETIME = 15,
    MDT_RESTYPE_TIMESPAN = 16,
    MDT_RESTYPE_BYTEARRAY = 0x20,
    MDT_RESTYPE_STREAM = 0x21,
    MDT_RESTYPE_USER = 0x40
};

typedef struct mdt_resource_entry {
    const char *name;   /* UTF-8, under the set */
    uint32_t type_code; /* enum mdt_restype (version 1 files: USER + type index,
                           or NULL for -1) */
    const char *type;   /* "System.String", or the type table's name; under the set */
    uint64_t offset;    /* of the value (after its type code), from the start of the data */
    uint64_t size;      /* bytes of the value as stored, length prefixes included (what
                           ResourceReader.GetResourceData gives): exact for primitives,
                           strings, byte arrays and streams; a user type's serialised
                           bytes run to the next value or the end */
    const char *string; /* MDT_RESTYPE_STRING: the value (UTF-8, under the set), else NULL */
} mdt_resource_entry;

typedef struct mdt_resource_set {
    uint32_t header_version; /* the ResourceManager header's version (1) */
    const char *reader_type; /* the reader's type name, NULL when the header skips it */
    const char *set_type;    /* the resource set's type name, or NULL */
    uint32_t version;        /* the resource set's format version: 1 or 2 */
    size_t ntypes;
    const char **types; /* the type table */
    size_t n;
    mdt_resource_entry *entries; /* in the file's order (by name hash) */
} mdt_resource_set;

/* Whether the bytes start with the System.Resources magic number. */
bool mdt_resources_is(const uint8_t *data, size_t len);

/* Parse a resource set; *out under mem_ctx. `name` (may be NULL) names the
 * input in error messages. Errors: MDT_EINVAL (NULL argument),
 * MDT_ENOMEM, MDT_EBADIMAGE (no magic number, a version the format does
 * not have, a negative count or offset, a type code or type index out of
 * range, a name that is not UTF-16), MDT_ETRUNC (a count, name, offset or
 * value past the data), MDT_EUNSUPPORTED (more than
 * MDT_RESOURCES_MAX_ENTRIES entries or MDT_RESOURCES_MAX_TYPES types). */
int mdt_resources_parse(void *mem_ctx, mdt_resource_set **out, const uint8_t *data, size_t len,
                        const char *name);

/* The name of a ResourceTypeCode below MDT_RESTYPE_USER ("System.String"),
 * static; NULL for another code. */
const char *mdt_resources_type_name(uint32_t code);

/* api-rename: off */
/* The names these functions had in libmdtools 1:0:0, exported until the
 * next soname (each calls the function of its new name); a compiler warns
 * where one is used and names the new one (MDT_DEPRECATED_FOR,
 * <mdtools/errors.h>). tools/api-rename.py moves code to the new names;
 * MDT_NO_DEPRECATED leaves them undeclared. */
#ifndef MDT_NO_DEPRECATED
MDT_DEPRECATED_FOR(mdt_resources_type_name) const char *mdt_restype_name(uint32_t code);
#endif /* MDT_NO_DEPRECATED */
/* api-rename: on */

#ifdef __cplusplus
}
#endif
#endif
