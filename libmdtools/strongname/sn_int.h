/* strongname/: verifying strong-name signatures (<mdtools/strongname.h>):
 * the key blob (keyblob.c), the hash of the file (hash.c), the RSA step
 * and the padding (rsa.c), the rules that join them (verify.c). */
#ifndef MDT_SN_INT_H
#define MDT_SN_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mdtools/image.h>
#include <mdtools/strongname.h>

#define SN_CALG_SHA1 0x8004u
#define SN_CALG_SHA256 0x800cu
#define SN_CALG_SHA384 0x800du
#define SN_CALG_SHA512 0x800eu

/* The RSA key of a PublicKeyBlob (SigAlgID, HashAlgID, cbPublicKey, then a
 * CryptoAPI PUBLICKEYBLOB: BLOBHEADER, "RSA1", bit length, exponent, the
 * modulus little-endian). */
struct sn_rsa {
    uint32_t sig_alg, hash_alg; /* hash_alg 0 read as SHA-1 */
    uint32_t bits, exponent;
    const uint8_t *modulus; /* bits / 8 bytes, little-endian, borrowed */
};

/* 0, or a static reason in *why when the blob is no RSA signing key the
 * library can use (then the return is 1). */
int mdt__sn_key_parse(struct sn_rsa *k, const char **why, const uint8_t *blob, size_t len);

/* The strong-name hash of a flat PE file with its signature at file
 * offset sig_off, sig_len bytes; alg an SN_CALG_*. *len the digest's size.
 * Errors located (MDT_ETRUNC, MDT_EBADIMAGE). */
int mdt__sn_hash(uint8_t out[64], size_t *len, const mdt_image *img, uint32_t alg, uint64_t sig_off,
                 uint32_t sig_len);

enum sn_rsa_outcome { SN_RSA_MATCH, SN_RSA_DIGEST_DIFFERS, SN_RSA_NOT_BY_KEY };

/* Check a signature (stored little-endian, as in the image) against a key
 * and the expected digest of algorithm alg. *signed_hash receives the
 * digest the signature carries when its padding is right. Returns an
 * enum sn_rsa_outcome, or MDT_ENOMEM. */
int mdt__sn_rsa_check(uint8_t signed_hash[64], size_t *signed_len, const char **why,
                      const struct sn_rsa *k, const uint8_t *sig, size_t sig_len, uint32_t alg,
                      const uint8_t *digest, size_t digest_len);

#endif
