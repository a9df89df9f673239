/* The RSA step of strong-name verification (PKCS#1 v1.5, RFC 8017
 * section 8.2.2 and 9.2): m = s^e mod n with GMP, then the encoded
 * message checked byte by byte: 00 01, at least eight FF, 00, the DER
 * DigestInfo of the hash algorithm, the digest. The signature and the
 * modulus are stored little-endian, as CryptoAPI writes them. GMP works
 * on limbs the library packs itself, with mpn_sec_powm and scratch space
 * it is given: it allocates nothing, so it cannot abort for want of
 * memory on any input (its mpz functions would). */
#include "config.h"

#include <gmp.h>
#include <string.h>
#include <talloc.h>

#include "strongname/sn_int.h"
#include "util/error.h"

#if GMP_NAIL_BITS != 0
#error "the limb packing below assumes GMP without nails"
#endif

/* DER of DigestInfo up to the digest (RFC 8017 section 9.2, note 1). */
static const uint8_t di_sha1[] = {0x30, 0x21, 0x30, 0x09, 0x06, 0x05, 0x2b, 0x0e,
                                  0x03, 0x02, 0x1a, 0x05, 0x00, 0x04, 0x14};
static const uint8_t di_sha256[] = {0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01,
                                    0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0x04, 0x20};
static const uint8_t di_sha384[] = {0x30, 0x41, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01,
                                    0x65, 0x03, 0x04, 0x02, 0x02, 0x05, 0x00, 0x04, 0x30};
static const uint8_t di_sha512[] = {0x30, 0x51, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01,
                                    0x65, 0x03, 0x04, 0x02, 0x03, 0x05, 0x00, 0x04, 0x40};

static void digest_info(uint32_t alg, const uint8_t **p, size_t *n)
{
    switch (alg) {
    case SN_CALG_SHA256: *p = di_sha256, *n = sizeof di_sha256; break;
    case SN_CALG_SHA384: *p = di_sha384, *n = sizeof di_sha384; break;
    case SN_CALG_SHA512: *p = di_sha512, *n = sizeof di_sha512; break;
    default: *p = di_sha1, *n = sizeof di_sha1;
    }
}

static void pack(mp_limb_t *l, size_t nl, const uint8_t *le, size_t n)
{
    memset(l, 0, nl * sizeof *l);
    for (size_t i = 0; i < n; i++)
        l[i / sizeof(mp_limb_t)] |= (mp_limb_t)le[i] << (8 * (i % sizeof(mp_limb_t)));
}

int mdt__sn_rsa_check(uint8_t signed_hash[64], size_t *signed_len, const char **why,
                      const struct sn_rsa *k, const uint8_t *sig, size_t sig_len, uint32_t alg,
                      const uint8_t *digest, size_t digest_len)
{
    size_t kb = k->bits / 8, nl = (kb + sizeof(mp_limb_t) - 1) / sizeof(mp_limb_t);
    const uint8_t *di;
    size_t din, i;
    mp_limb_t e[1] = {k->exponent};
    int enb = 0, out;
    *signed_len = 0;
    if (sig_len != kb) {
        *why = "the signature's size is not the key's";
        return SN_RSA_NOT_BY_KEY;
    }
    if (!(k->modulus[0] & 1)) {
        *why = "the key's modulus is even: not an RSA key";
        return SN_RSA_NOT_BY_KEY;
    }
    for (uint32_t x = k->exponent; x; x >>= 1)
        enb++;
    void *tmp = talloc_new(NULL);
    mp_limb_t *n = tmp ? talloc_array(tmp, mp_limb_t, nl) : NULL;
    mp_limb_t *s = n ? talloc_array(tmp, mp_limb_t, nl) : NULL;
    mp_limb_t *m = s ? talloc_array(tmp, mp_limb_t, nl) : NULL;
    mp_size_t itch = mpn_sec_powm_itch((mp_size_t)nl, enb, (mp_size_t)nl);
    mp_limb_t *scratch = m ? talloc_array(tmp, mp_limb_t, (size_t)itch) : NULL;
    uint8_t *em = scratch ? talloc_array(tmp, uint8_t, kb) : NULL;
    if (!em) {
        talloc_free(tmp);
        return mdt__fail_simple(MDT_ENOMEM, "out of memory");
    }
    pack(n, nl, k->modulus, kb);
    pack(s, nl, sig, kb);
    if (mpn_cmp(s, n, (mp_size_t)nl) >= 0 || mpn_zero_p(s, (mp_size_t)nl)) {
        *why = "the signature is not below the key's modulus (not made with this key)";
        talloc_free(tmp);
        return SN_RSA_NOT_BY_KEY;
    }
    /* GMP wants the modulus's top limb non-zero: a key whose stated size
     * overstates its modulus is read at its real size (s < n holds). */
    mp_size_t nz = (mp_size_t)nl;
    while (nz > 1 && !n[nz - 1])
        nz--;
    memset(m, 0, nl * sizeof *m);
    mpn_sec_powm(m, s, nz, e, (mp_bitcnt_t)enb, n, nz, scratch);
    /* The encoded message, big-endian, kb bytes. */
    for (i = 0; i < kb; i++)
        em[kb - 1 - i] = (uint8_t)(m[i / sizeof(mp_limb_t)] >> (8 * (i % sizeof(mp_limb_t))));

    digest_info(alg, &di, &din);
    out = SN_RSA_NOT_BY_KEY;
    *why = "the signature's padding is not PKCS#1 v1.5 (not made with this key)";
    if (em[0] != 0x00 || em[1] != 0x01)
        goto done;
    for (i = 2; i < kb && em[i] == 0xFF; i++)
        ;
    if (i < 10 || i >= kb || em[i] != 0x00)
        goto done;
    i++;
    if (kb - i != din + digest_len || memcmp(em + i, di, din) != 0) {
        *why = "the signature's DigestInfo is not the key's hash algorithm";
        goto done;
    }
    memcpy(signed_hash, em + i + din, digest_len);
    *signed_len = digest_len;
    if (memcmp(em + i + din, digest, digest_len) != 0) {
        *why = "the signed hash is not the file's: the file changed after signing";
        out = SN_RSA_DIGEST_DIFFERS;
    } else {
        *why = NULL;
        out = SN_RSA_MATCH;
    }
done:
    talloc_free(tmp);
    return out;
}
