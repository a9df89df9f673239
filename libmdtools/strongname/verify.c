/* Strong-name verification: the rules around the hash and the RSA step
 * (ECMA-335 II.6.2.1.3, II.6.3; the CLR's StrongNameSignatureVerification
 * where the standard leaves room). Which key checks the signature: the
 * assembly's own, or for the ECMA standard key the runtime's own key (the
 * Microsoft key, as the CLR does), then a key the caller gives for the
 * token. What a result means: a zeroed blob is delay-signed (or
 * public-signed); a ReadyToRun image was rewritten by crossgen after
 * signing and cannot be checked (crossgen2 zeroes the blob; an older
 * compiler kept a signature of the IL image); a signature whose padding
 * and DigestInfo are right but whose hash is not the file's was made with
 * the key over other bytes (the file changed); anything else is no
 * signature of the key. */
#include "config.h"

#include <string.h>

#include <mdtools/assembly.h>
#include <mdtools/pe.h>

#include "strongname/sn_int.h"
#include "util/error.h"

/* ECMA-335 II.6.2.1.3: "the standard public key", token b77a5c561934e089. */
static const uint8_t ecma_key[16] = {0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0};

/* The key the CLR checks ECMA-keyed assemblies with: the Microsoft key,
 * token b03f5f7f11d50a3a (as the .NET framework's own assemblies carry it,
 * e.g. System.Runtime's Assembly row). */
static const uint8_t microsoft_key[160] = {
    0x00, 0x24, 0x00, 0x00, 0x04, 0x80, 0x00, 0x00, 0x94, 0x00, 0x00, 0x00, 0x06, 0x02, 0x00, 0x00,
    0x00, 0x24, 0x00, 0x00, 0x52, 0x53, 0x41, 0x31, 0x00, 0x04, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00,
    0x07, 0xd1, 0xfa, 0x57, 0xc4, 0xae, 0xd9, 0xf0, 0xa3, 0x2e, 0x84, 0xaa, 0x0f, 0xae, 0xfd, 0x0d,
    0xe9, 0xe8, 0xfd, 0x6a, 0xec, 0x8f, 0x87, 0xfb, 0x03, 0x76, 0x6c, 0x83, 0x4c, 0x99, 0x92, 0x1e,
    0xb2, 0x3b, 0xe7, 0x9a, 0xd9, 0xd5, 0xdc, 0xc1, 0xdd, 0x9a, 0xd2, 0x36, 0x13, 0x21, 0x02, 0x90,
    0x0b, 0x72, 0x3c, 0xf9, 0x80, 0x95, 0x7f, 0xc4, 0xe1, 0x77, 0x10, 0x8f, 0xc6, 0x07, 0x77, 0x4f,
    0x29, 0xe8, 0x32, 0x0e, 0x92, 0xea, 0x05, 0xec, 0xe4, 0xe8, 0x21, 0xc0, 0xa5, 0xef, 0xe8, 0xf1,
    0x64, 0x5c, 0x4c, 0x0c, 0x93, 0xc1, 0xab, 0x99, 0x28, 0x5d, 0x62, 0x2c, 0xaa, 0x65, 0x2c, 0x1d,
    0xfa, 0xd6, 0x3d, 0x74, 0x5d, 0x6f, 0x2d, 0xe5, 0xf1, 0x7e, 0x5e, 0xaf, 0x0f, 0xc4, 0x96, 0x3d,
    0x26, 0x1c, 0x8a, 0x12, 0x43, 0x65, 0x18, 0x20, 0x6d, 0xc0, 0x93, 0x34, 0x4d, 0x5a, 0xd2, 0x93,
};

const char *mdt_strongname_status_name(int status)
{
    switch (status) {
    case MDT_SN_VERIFIED: return "verified";
    case MDT_SN_NOT_SIGNED: return "not signed";
    case MDT_SN_DELAY_SIGNED: return "delay-signed";
    case MDT_SN_HASH_MISMATCH: return "invalid (hash mismatch)";
    case MDT_SN_BAD_SIGNATURE: return "invalid (bad signature)";
    case MDT_SN_UNCHECKABLE: return "not checkable";
    default: return "?";
    }
}

static int done(mdt_strongname *out, int status, const char *reason)
{
    out->status = status;
    out->reason = reason;
    return 0;
}

/* One attempt with one key: 1 when it verified, 0 when not (out says
 * how), < 0 on error. */
static int attempt(mdt_strongname *out, const mdt_image *img, const uint8_t *key, size_t len,
                   const uint8_t *sig)
{
    struct sn_rsa k;
    const char *why;
    int e;
    if (mdt__sn_key_parse(&k, &why, key, len)) {
        done(out, MDT_SN_UNCHECKABLE, why);
        return 0;
    }
    mdt_assembly_public_key_token(out->key_token, key, len);
    out->hash_alg = k.hash_alg;
    out->key_bits = k.bits;
    if ((e = mdt__sn_hash(out->hash, &out->hash_len, img, k.hash_alg, out->signature_offset,
                          out->signature_size)))
        return e;
    e = mdt__sn_rsa_check(out->signed_hash, &out->signed_hash_len, &why, &k, sig,
                          out->signature_size, k.hash_alg, out->hash, out->hash_len);
    if (e < 0)
        return e;
    if (e == SN_RSA_MATCH) {
        done(out, MDT_SN_VERIFIED, NULL);
        return 1;
    }
    if (e == SN_RSA_DIGEST_DIFFERS && out->ready_to_run)
        done(out, MDT_SN_UNCHECKABLE,
             "a ReadyToRun image: compiled after signing, the "
             "signature is of the IL image");
    else
        done(out, e == SN_RSA_DIGEST_DIFFERS ? MDT_SN_HASH_MISMATCH : MDT_SN_BAD_SIGNATURE, why);
    return 0;
}

int mdt_strongname_verify(mdt_strongname *out, const mdt_image *img, const mdt_sn_key *keys,
                          size_t nkeys)
{
    const mdt_pe_info *pe;
    mdt_identity id;
    mdt_r2r_header r2r;
    const uint8_t *sig;
    uint8_t token[8];
    int e;
    if (!out || !img || (nkeys && !keys))
        return mdt__fail_simple(MDT_EINVAL, "mdt_strongname_verify: NULL argument");
    memset(out, 0, sizeof *out);
    pe = mdt_image_pe_info(img);
    out->flag_signed = (pe->cli_flags & MDT_COMIMAGE_STRONGNAMESIGNED) != 0;
    out->signature_rva = pe->strong_name_signature.rva;
    out->signature_size = pe->strong_name_signature.size;
    if (mdt_image_kind(img) == MDT_KIND_PE || mdt_image_kind(img) == MDT_KIND_PE_MAPPED) {
        out->ready_to_run = mdt_r2r_header_read(&r2r, img) == 0;
        if (!out->ready_to_run)
            mdt__err_forget_one();
    }
    e = mdt_assembly_identity(&id, img);
    if (e == MDT_ENOTFOUND)
        return done(out, MDT_SN_NOT_SIGNED,
                    "no Assembly row: a module is signed through "
                    "its assembly's File table");
    if (e)
        return e;
    if (!id.public_key || !id.public_key_len)
        return done(out, MDT_SN_NOT_SIGNED, "the assembly has no public key");
    if (mdt_image_kind(img) != MDT_KIND_PE)
        return done(out, MDT_SN_UNCHECKABLE,
                    mdt_image_kind(img) == MDT_KIND_PE_MAPPED
                        ? "laid out by a loader: the hash is of the file's bytes"
                        : "not a PE file: the hash is of a PE file's bytes");
    if (!out->signature_rva || !out->signature_size)
        return done(out, MDT_SN_NOT_SIGNED, "a public key but no space for a signature");
    if ((e = mdt_image_rva_to_offset(&out->signature_offset, img, out->signature_rva)) ||
        (e = mdt_image_rva(&sig, img, out->signature_rva, out->signature_size)))
        return e;
    size_t z = 0;
    while (z < out->signature_size && !sig[z])
        z++;
    if (z == out->signature_size)
        return done(out, out->ready_to_run ? MDT_SN_UNCHECKABLE : MDT_SN_DELAY_SIGNED,
                    out->ready_to_run ? "a ReadyToRun image: crossgen rewrote it after signing "
                                        "and zeroed the signature"
                                      : "the signature's space is zeros (delay- or "
                                        "public-signed)");

    const uint8_t *key = id.public_key;
    size_t len = id.public_key_len;
    mdt_assembly_public_key_token(token, key, len);
    if (len == sizeof ecma_key && memcmp(key, ecma_key, sizeof ecma_key) == 0) {
        out->ecma_key = true;
        key = microsoft_key;
        len = sizeof microsoft_key;
    }
    if ((e = attempt(out, img, key, len, sig)) != 0)
        return e < 0 ? e : 0;
    /* The caller's keys for this token, when the own key did not do. A
     * key whose signature it is (its hash differs: the file changed) says
     * more than one whose it is not. */
    mdt_strongname best = *out;
    for (size_t i = 0; i < nkeys; i++) {
        if (memcmp(keys[i].token, token, 8) != 0 || !keys[i].public_key)
            continue;
        mdt_strongname again = best;
        again.key_given = true;
        if ((e = attempt(&again, img, keys[i].public_key, keys[i].len, sig)) < 0)
            return e;
        if (e == 1) {
            *out = again;
            return 0;
        }
        if (again.signed_hash_len && !best.signed_hash_len)
            best = again;
    }
    *out = best;
    return 0;
}

/* api-rename: off */
/* The old names (<mdtools/errors.h>, MDT_DEPRECATED_FOR), for programs
 * built against libmdtools 1:0:0. */
const char *mdt_sn_status_name(int status)
{
    return mdt_strongname_status_name(status);
}
/* api-rename: on */
