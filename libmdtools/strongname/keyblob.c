/* The public key of a strong name (ECMA-335 II.6.2.1.3; the CLR's
 * PublicKeyBlob: SigAlgID, HashAlgID, cbPublicKey, then the CryptoAPI
 * PUBLICKEYBLOB, a BLOBHEADER (type 6, version 2, key algorithm) and an
 * RSAPUBKEY ("RSA1", bit length, public exponent) followed by the
 * modulus, little-endian). Every length is checked against the blob. */
#include "config.h"

#include <string.h>

#include "strongname/sn_int.h"
#include "util/reader.h"

#define CALG_RSA_SIGN 0x2400u
#define CALG_RSA_KEYX 0xa400u

static int no(const char **why, const char *reason)
{
    *why = reason;
    return 1;
}

int mdt__sn_key_parse(struct sn_rsa *k, const char **why, const uint8_t *blob, size_t len)
{
    uint32_t cb, key_alg;
    const uint8_t *pk;
    memset(k, 0, sizeof *k);
    if (len < 12)
        return no(why, "the public key blob is shorter than its 12-byte header");
    k->sig_alg = le32(blob);
    k->hash_alg = le32(blob + 4);
    cb = le32(blob + 8);
    if (cb > len - 12)
        return no(why, "the public key blob says its key is longer than the blob");
    pk = blob + 12;
    if (cb < 20)
        return no(why, "the public key is shorter than a PUBLICKEYBLOB header");
    if (pk[0] != 0x06 || pk[1] != 0x02)
        return no(why, "the public key is no PUBLICKEYBLOB (type 6, version 2)");
    key_alg = le32(pk + 4);
    if (key_alg != CALG_RSA_SIGN && key_alg != CALG_RSA_KEYX)
        return no(why, "the public key is not an RSA key");
    if (memcmp(pk + 8, "RSA1", 4) != 0)
        return no(why, "the public key has no RSA1 magic");
    k->bits = le32(pk + 12);
    k->exponent = le32(pk + 16);
    /* The CLR's keys run from 384 to 16384 bits, in whole bytes. */
    if (k->bits < 384 || k->bits > 16384 || k->bits % 8)
        return no(why, "RSA key size outside 384 to 16384 bits in whole bytes");
    if (k->bits / 8 > cb - 20)
        return no(why, "the RSA modulus runs past the public key");
    if (!k->exponent)
        return no(why, "the RSA public exponent is 0");
    if (k->sig_alg && k->sig_alg != CALG_RSA_SIGN)
        return no(why, "the signature algorithm is not RSA");
    if (!k->hash_alg)
        k->hash_alg = SN_CALG_SHA1;
    if (k->hash_alg != SN_CALG_SHA1 && k->hash_alg != SN_CALG_SHA256 &&
        k->hash_alg != SN_CALG_SHA384 && k->hash_alg != SN_CALG_SHA512)
        return no(why, "the key's hash algorithm is not SHA-1, SHA-256, SHA-384 or SHA-512");
    k->modulus = pk + 20;
    return 0;
}
