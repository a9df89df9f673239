/* mdtools: assembly identity (ECMA-335 II.22.2, II.22.5, II.6.2.1.3).
 *
 * The identity of an image (its Assembly row, Module MVID) and of each of its
 * AssemblyRef rows, with the public key token computed from a full public
 * key: the last 8 bytes of its SHA-1, reversed (SHA-1 from nettle). */
#ifndef MDTOOLS_ASSEMBLY_H
#define MDTOOLS_ASSEMBLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mdtools/errors.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mdt_image mdt_image;

#define MDT_AFL_PUBLICKEY 0x0001u
#define MDT_AFL_RETARGETABLE 0x0100u

typedef struct mdt_identity {
    const char *name;    /* borrowed from #Strings */
    const char *culture; /* borrowed, "" for neutral */
    uint16_t version[4]; /* major, minor, build, revision */
    uint32_t flags;
    uint32_t hash_alg;         /* Assembly rows only */
    const uint8_t *public_key; /* borrowed: full key (Assembly, or AssemblyRef
                                  with MDT_AFL_PUBLICKEY), else NULL */
    uint32_t public_key_len;
    bool has_token; /* public_key_token is meaningful */
    uint8_t public_key_token[8];
} mdt_identity;

/* Identity of the assembly the image's manifest defines. MDT_ENOTFOUND when
 * the image has no Assembly row (a .netmodule, a portable PDB); MDT_ETRUNC
 * (the row lies beyond the tables stream), MDT_EBADIMAGE or MDT_ENOHEAP (its
 * name, culture or public key does not read: an index beyond its heap, an
 * absent heap). */
int mdt_assembly_identity(mdt_identity *out, const mdt_image *img);
/* Identity an AssemblyRef row asks for (rid 1-based). Errors:
 * MDT_ENOTFOUND (no such row), MDT_ETRUNC, MDT_EBADIMAGE, MDT_ENOHEAP (as
 * for mdt_assembly_identity). */
int mdt_assemblyref_identity(mdt_identity *out, const mdt_image *img, uint32_t rid);
/* MVID of the image (Module row 1). Errors: MDT_ENOTFOUND without a Module
 * row, MDT_ETRUNC (the row lies beyond the tables stream), MDT_EBADIMAGE
 * (a GUID index beyond #GUID), MDT_ENOHEAP (no #GUID stream). */
int mdt_image_mvid(uint8_t mvid[16], const mdt_image *img);
/* Public key token of a full public key blob. Never fails (returns 0). */
int mdt_assembly_public_key_token(uint8_t token[8], const uint8_t *key, size_t len);
/* "Name, Version=1.2.3.4, Culture=neutral, PublicKeyToken=0123456789abcdef"
 * into buf (truncated to len) and return buf. */
char *mdt_identity_format(char *buf, size_t len, const mdt_identity *id);

/* api-rename: off */
/* The names these functions had in libmdtools 1:0:0, exported until the
 * next soname (each calls the function of its new name); a compiler warns
 * where one is used and names the new one (MDT_DEPRECATED_FOR,
 * <mdtools/errors.h>). tools/api-rename.py moves code to the new names;
 * MDT_NO_DEPRECATED leaves them undeclared. */
#ifndef MDT_NO_DEPRECATED
MDT_DEPRECATED_FOR(mdt_assembly_public_key_token)
int mdt_public_key_token(uint8_t token[8], const uint8_t *key, size_t len);
#endif /* MDT_NO_DEPRECATED */
/* api-rename: on */

#ifdef __cplusplus
}
#endif
#endif
