/* The strong-name hash of a file (ECMA-335 II.6.2.1.3, as the CLR computes
 * it): the DOS header up to e_lfanew; a copy of the PE headers of the
 * fixed size of IMAGE_NT_HEADERS32 (248 bytes) or IMAGE_NT_HEADERS64 (264)
 * with the CheckSum and the certificate table's directory entry zeroed
 * (an Authenticode signature and a checksum are added after strong-name
 * signing); the section table; each section's raw data in table order,
 * the signature blob left out wherever it lies. Padding between the
 * headers and the first section, and anything past the last section (an
 * Authenticode certificate), is not hashed. Hashes come from nettle. */
#include "config.h"

#include <string.h>

#include <nettle/nettle-meta.h>
#include <nettle/sha1.h>
#include <nettle/sha2.h>

#include "open/open_int.h"
#include "strongname/sn_int.h"
#include "util/error.h"
#include "util/reader.h"

union hash_ctx {
    struct sha1_ctx sha1;
    struct sha256_ctx sha256;
    struct sha512_ctx sha512;
};

static const struct nettle_hash *algorithm(uint32_t alg)
{
    switch (alg) {
    case SN_CALG_SHA256: return &nettle_sha256;
    case SN_CALG_SHA384: return &nettle_sha384;
    case SN_CALG_SHA512: return &nettle_sha512;
    default: return &nettle_sha1;
    }
}

/* Bytes [from, to) of the file, minus [s0, s1). */
static void hash_range(const struct nettle_hash *h, void *ctx, const uint8_t *data, uint64_t from,
                       uint64_t to, uint64_t s0, uint64_t s1)
{
    if (s1 <= from || s0 >= to) {
        h->update(ctx, (size_t)(to - from), data + from);
        return;
    }
    if (s0 > from)
        h->update(ctx, (size_t)(s0 - from), data + from);
    if (s1 < to)
        h->update(ctx, (size_t)(to - s1), data + s1);
}

int mdt__sn_hash(uint8_t out[64], size_t *len, const mdt_image *img, uint32_t alg, uint64_t sig_off,
                 uint32_t sig_len)
{
    size_t n;
    const uint8_t *data;
    int e = mdt__image_all_bytes(&data, &n, img);
    if (e)
        return e;
    rd r = rd_make(mdt_image_name(img), "PE header", data, n, 0);
    const struct nettle_hash *h = algorithm(alg);
    union hash_ctx ctx;
    uint8_t nt[264];
    uint32_t lfanew;
    uint16_t nsec, opt_size, magic;
    size_t nt_size;

    if ((e = rd_need(&r, 64, "DOS header")))
        return e;
    lfanew = le32(data + 60);
    r.pos = 60;
    if ((e = rd_seek(&r, lfanew, "e_lfanew")) || (e = rd_need(&r, 26, "PE headers")))
        return e;
    nsec = le16(data + lfanew + 6);
    opt_size = le16(data + lfanew + 20);
    magic = le16(data + lfanew + 24);
    nt_size = magic == 0x20b ? 264 : 248;
    if ((e = rd_need(&r, nt_size, "PE headers as the strong-name hash reads them")))
        return e;
    if (sig_off > n || sig_len > n - sig_off) {
        r.pos = n;
        return rd_fail(&r, MDT_ETRUNC,
                       "strong-name signature at file 0x%llx, 0x%x bytes, "
                       "past the end of the file",
                       (unsigned long long)sig_off, sig_len);
    }

    h->init(&ctx);
    h->update(&ctx, lfanew, data);
    memcpy(nt, data + lfanew, nt_size);
    /* CheckSum: 4 + 20 + 64 in both formats; the certificate table's
     * entry: data directory 4, after 96 (PE32) or 112 (PE32+) bytes of
     * optional header. */
    memset(nt + 88, 0, 4);
    memset(nt + 24 + (magic == 0x20b ? 112 : 96) + 4 * 8, 0, 8);
    h->update(&ctx, nt_size, nt);

    uint64_t sec_at = (uint64_t)lfanew + 24 + opt_size;
    r.region = "section table";
    if (sec_at > n || (uint64_t)nsec * 40 > n - sec_at) {
        r.pos = sec_at > n ? n : (size_t)sec_at;
        return rd_trunc(&r, (size_t)nsec * 40, "section table");
    }
    h->update(&ctx, (size_t)nsec * 40, data + sec_at);
    for (uint16_t i = 0; i < nsec; i++) {
        const uint8_t *s = data + sec_at + (size_t)i * 40;
        uint64_t raw = le32(s + 20), size = le32(s + 16);
        if (raw > n || size > n - raw) {
            r.pos = (size_t)(sec_at + (size_t)i * 40);
            return rd_fail(&r, MDT_ETRUNC,
                           "section %u's raw data (0x%llx bytes at file 0x%llx) "
                           "runs past the end of the file",
                           i + 1, (unsigned long long)size, (unsigned long long)raw);
        }
        hash_range(h, &ctx, data, raw, raw + size, sig_off, sig_off + sig_len);
    }
    h->digest(&ctx, h->digest_size, out);
    *len = h->digest_size;
    return 0;
}
