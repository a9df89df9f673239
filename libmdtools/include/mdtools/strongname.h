/* mdtools: strong-name signature verification (ECMA-335 II.6.2.1.3,
 * II.6.3, II.25.3.3; the CLR's rules where the standard leaves room).
 *
 * An assembly with a public key in its Assembly row may carry, at the CLI
 * header's StrongNameSignature directory, an RSA signature (PKCS#1 v1.5,
 * stored little-endian) of a hash of the file: the DOS header; the PE
 * headers (a fixed-size copy, 248 bytes for PE32 and 264 for PE32+, with
 * the CheckSum field and the certificate table's data directory entry
 * zeroed); the section table; then each section's raw data in table order
 * with the signature blob itself left out. The hash algorithm is the key's
 * (the PublicKeyBlob's HashAlgID: SHA-1 when 0, SHA-256, SHA-384 or
 * SHA-512), computed with nettle; the RSA step is GMP's mpn_sec_powm on
 * scratch memory the library allocates (with talloc), so GMP itself
 * allocates nothing and cannot abort on input of any size; the padding is
 * checked byte by byte (00 01 FF..FF 00, the algorithm's DigestInfo, the
 * hash).
 *
 * Keys: the ECMA standard key (16 bytes: zeros but a 4 at byte 8, public
 * key token b77a5c561934e089) stands for the runtime's own key; as the CLR
 * does, the library checks such an assembly against the Microsoft key
 * (token b03f5f7f11d50a3a). A caller may give more keys by token (Mono
 * signs its class libraries with its own key and maps the Microsoft tokens
 * to it in machine.config's <strongNames>): when the assembly's own key
 * does not verify, a key given for its token is tried.
 *
 * Thread safety: any thread; the image is immutable. */
#ifndef MDTOOLS_STRONGNAME_H
#define MDTOOLS_STRONGNAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mdtools/errors.h>

#include <mdtools/image.h>

#ifdef __cplusplus
extern "C" {
#endif

enum mdt_sn_status {
    MDT_SN_VERIFIED = 1,  /* the signature is the key's, over these bytes */
    MDT_SN_NOT_SIGNED,    /* no public key, no Assembly row, or no signature space */
    MDT_SN_DELAY_SIGNED,  /* space reserved and left zero (delay- or public-signed) */
    MDT_SN_HASH_MISMATCH, /* a signature by the key, of other bytes: changed after signing */
    MDT_SN_BAD_SIGNATURE, /* not a signature by the key (padding or DigestInfo wrong) */
    MDT_SN_UNCHECKABLE    /* cannot be checked; `reason` says why */
};

/* A key to check the assemblies of a public key token with. */
typedef struct mdt_sn_key {
    uint8_t token[8];          /* the token as an AssemblyRef stores it */
    const uint8_t *public_key; /* a PublicKeyBlob, as in an Assembly row */
    size_t len;
} mdt_sn_key;

typedef struct mdt_strongname {
    int status;             /* enum mdt_sn_status */
    const char *reason;     /* static: why, for every status but VERIFIED */
    bool flag_signed;       /* the CLI header's STRONGNAMESIGNED flag */
    bool ready_to_run;      /* the image has a ReadyToRun header */
    uint32_t signature_rva; /* the signature directory, 0 when there is none */
    uint32_t signature_size;
    uint64_t signature_offset; /* its file offset */
    bool ecma_key;             /* the assembly's key is the ECMA standard key */
    bool key_given;            /* checked with a key of the caller's list */
    uint8_t key_token[8];      /* token of the key checked with */
    uint32_t hash_alg;         /* ALG_ID: 0x8004 SHA-1, 0x800c SHA-256, 0x800d, 0x800e */
    uint32_t key_bits;         /* RSA modulus size */
    uint8_t hash[64];          /* the strong-name hash of the file */
    size_t hash_len;           /* 0 when not computed */
    uint8_t signed_hash[64];   /* the hash the signature carries, when its padding is right */
    size_t signed_hash_len;
} mdt_strongname;

/* Verify the strong-name signature of an assembly opened from its file
 * (MDT_KIND_PE). `keys` (nkeys of them, may be NULL when 0) are extra keys
 * by token, tried after the assembly's own key. The outcome is in
 * out->status: an image that is not signed, delay-signed or changed after
 * signing is no error. An image laid out by a loader, a Webcil or raw
 * metadata image (the file's bytes are not there), a key or algorithm the
 * library does not know, a ReadyToRun image (rewritten after signing) give
 * MDT_SN_UNCHECKABLE with the reason.
 * Errors: MDT_EINVAL (NULL out or img, keys NULL with nkeys > 0),
 * MDT_ENOMEM, MDT_ETRUNC (the headers, the section table or a section's
 * raw data run past the file), MDT_EBADIMAGE (the signature directory
 * straddles a section, the public key blob is malformed), MDT_ENOTFOUND
 * (the signature directory's RVA is in no section), MDT_ENOHEAP (the
 * Assembly row's key is in no heap). MDT_EIO: an image opened with
 * MDT_OPEN_LAZY whose file changed since the open. */
int mdt_strongname_verify(mdt_strongname *out, const mdt_image *img, const mdt_sn_key *keys,
                          size_t nkeys);

/* A status in words ("verified", "delay-signed", "not signed", "invalid
 * (hash mismatch)", "invalid (bad signature)", "not checkable"); static. */
const char *mdt_strongname_status_name(int status);

/* api-rename: off */
/* The names these functions had in libmdtools 1:0:0, exported until the
 * next soname (each calls the function of its new name); a compiler warns
 * where one is used and names the new one (MDT_DEPRECATED_FOR,
 * <mdtools/errors.h>). tools/api-rename.py moves code to the new names;
 * MDT_NO_DEPRECATED leaves them undeclared. */
#ifndef MDT_NO_DEPRECATED
MDT_DEPRECATED_FOR(mdt_strongname_status_name) const char *mdt_sn_status_name(int status);
#endif /* MDT_NO_DEPRECATED */
/* api-rename: on */

#ifdef __cplusplus
}
#endif
#endif
