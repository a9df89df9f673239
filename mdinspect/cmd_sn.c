/* `sn`: the strong-name signature checked (mdt_strongname_verify): the
 * outcome and why, the key it was checked with, the hash algorithm, the
 * file's strong-name hash and the hash the signature carries. `info`
 * shows the outcome in one line through mdi_print_strongname (parts.c).
 * Keys given with --sn-keys are tried for their tokens after the
 * assembly's own. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>

#include <talloc.h>

#include <mdtools/mdtools.h>

#include "cmd.h"

static void hex(mdi_printer *p, const char *key, const char *label, const uint8_t *b, size_t n)
{
    char s[2 * 64 + 1];
    if (!n) {
        mdi_none(p, key, label, NULL);
        return;
    }
    for (size_t i = 0; i < n && i < 64; i++)
        snprintf(s + 2 * i, 3, "%02x", b[i]);
    mdi_str(p, key, label, s);
}

/* Where the key came from, in words. */
static const char *key_source(const mdt_strongname *sn)
{
    if (sn->key_given)
        return "a key given with --sn-keys";
    if (sn->ecma_key)
        return "the Microsoft key, for the ECMA standard key";
    return "the assembly's key";
}

static int run(mdi_state *st, size_t argc, const mdi_arg *argv)
{
    const mdt_image *img = mdi_image(st);
    mdi_printer *p = st->out;
    mdt_strongname sn;
    char tok[17];
    (void)argc;
    (void)argv;
    if (mdt_strongname_verify(&sn, img, st->sn_keys.keys, st->sn_keys.n) != 0) {
        mdi_report_lib(st, "sn");
        return MDI_FAIL;
    }
    mdi_record_begin(p);
    mdi_str(p, "status", "status", mdt_strongname_status_name(sn.status));
    if (sn.reason)
        mdi_str(p, "reason", "reason", sn.reason);
    else
        mdi_none(p, "reason", "reason", NULL);
    mdi_bool(p, "flag_signed", "STRONGNAMESIGNED", sn.flag_signed);
    if (sn.signature_rva) {
        mdi_object_begin(p, "signature", NULL);
        mdi_hex(p, "rva", NULL, sn.signature_rva, 0);
        mdi_uint(p, "size", NULL, sn.signature_size);
        mdi_hex(p, "file_offset", NULL, sn.signature_offset, 0);
        mdi_object_end(p);
        if (sn.signature_offset)
            mdi_textf(p, "signature",
                      "0x%" PRIx32 " bytes at RVA 0x%08" PRIx32 " (file 0x%" PRIx64 ")",
                      sn.signature_size, sn.signature_rva, sn.signature_offset);
        else
            mdi_textf(p, "signature", "0x%" PRIx32 " bytes at RVA 0x%08" PRIx32, sn.signature_size,
                      sn.signature_rva);
    } else {
        mdi_none(p, "signature", "signature", "none");
    }
    mdi_bool(p, "ready_to_run", NULL, sn.ready_to_run);
    if (sn.key_bits) {
        for (int i = 0; i < 8; i++)
            snprintf(tok + 2 * i, 3, "%02x", sn.key_token[i]);
        mdi_str(p, "key_token", "key", tok);
        mdi_note(p, NULL, "%" PRIu32 "-bit RSA, %s", sn.key_bits, key_source(&sn));
        mdi_uint(p, "key_bits", NULL, sn.key_bits);
        mdi_str(p, "key_source", NULL, sn.key_given ? "given" : sn.ecma_key ? "ecma" : "assembly");
        mdi_str(p, "hash_algorithm", "hash algorithm", mdi_sn_alg_name(sn.hash_alg));
    } else {
        mdi_none(p, "key_token", NULL, NULL);
        mdi_none(p, "key_bits", NULL, NULL);
        mdi_none(p, "key_source", NULL, NULL);
        mdi_none(p, "hash_algorithm", NULL, NULL);
    }
    mdi_bool(p, "ecma_key", NULL, sn.ecma_key);
    hex(p, "hash", "file's hash", sn.hash, sn.hash_len);
    hex(p, "signed_hash", "signed hash", sn.signed_hash, sn.signed_hash_len);
    mdi_record_end(p);
    if (sn.status == MDT_SN_HASH_MISMATCH || sn.status == MDT_SN_BAD_SIGNATURE) {
        mdi_report(st, "%s: strong-name signature %s", mdi_image_path(st),
                   mdt_strongname_status_name(sn.status));
        return MDI_FAIL;
    }
    return MDI_OK;
}

const mdi_cmd mdi_cmd_sn = {
    .name = "sn",
    .flags = MDI_CMD_IMAGE,
    .summary = "verify the strong-name signature",
    .help = "Checks the assembly's strong-name signature as ECMA-335 II.6.2.1.3 and the\n"
            "CLR do: the file hashed without its checksum, its certificate table\n"
            "entry and the signature blob, with the key's algorithm (SHA-1, SHA-256,\n"
            "SHA-384 or SHA-512), the RSA signature checked against the public key of\n"
            "the Assembly row (the Microsoft key for the ECMA standard key), then\n"
            "against keys given for its token with --sn-keys. Shows the status\n"
            "(verified, not signed, delay-signed, invalid (hash mismatch), invalid\n"
            "(bad signature), not checkable) with the reason, the signature's place,\n"
            "the key, the file's hash and the hash the signature carries. Fails when\n"
            "the signature is invalid. A ReadyToRun image was rewritten after signing:\n"
            "it is not checkable.\n",
    .run = run,
};
