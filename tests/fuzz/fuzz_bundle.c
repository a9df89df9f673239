/* libFuzzer harness over single-file bundles (<mdtools/bundle.h>): the
 * input opened as a bundle (the signature searched, the header and the
 * manifest read), every file's bytes taken (compressed ones inflated),
 * and each assembly opened as an image and asked for its MVID.
 *
 * Oracles besides the sanitizers: every entry lies inside the input, its
 * path is a string of at most 4096 bytes; a compressed file inflates to
 * exactly its size or fails; nothing stays under the caller's context
 * once the bundle and its images are freed.
 * Built for libFuzzer with --enable-fuzzing, and always as a plain
 * replayer (replay.c) that `make check` runs over tests/fuzz/corpus/bundle/
 * (seeds: bundles made by tests/unit/test_bundle.c's layout, of versions
 * 1, 2 and 6, a real host's first bytes). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <talloc.h>

#include <mdtools/mdtools.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t sink;

static void touch_error(void)
{
    char msg[512];
    sink += strlen(mdt_error_message(msg, sizeof msg));
    mdt_error_clear();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    void *ctx = talloc_new(NULL);
    mdt_bundle *b;
    if (mdt_bundle_open_buffer(ctx, &b, "fuzz", data, size, 0) != 0) {
        touch_error();
        if (talloc_total_blocks(ctx) != 1)
            abort(); /* a failed open leaves nothing behind */
        talloc_free(ctx);
        return 0;
    }
    mdt_bundle_info in;
    if (mdt_bundle_info_get(&in, b) != 0 || !in.id || strlen(in.id) > 4096 ||
        in.header_offset >= size)
        abort();
    for (size_t i = 0; i < in.files; i++) {
        mdt_bundle_entry e;
        if (mdt_bundle_entry_get(&e, b, i) != 0 || !e.path || strlen(e.path) > 4096)
            abort();
        uint64_t stored = e.compressed_size ? e.compressed_size : e.size;
        if (e.offset > size || stored > size - e.offset)
            abort();
        const uint8_t *p;
        size_t len;
        void *owned;
        if (mdt_bundle_entry_bytes(ctx, &p, &len, &owned, b, i) == 0) {
            if (len != e.size || (!e.compressed_size && (p < data || p + len > data + size)))
                abort();
            if (len)
                sink += p[len - 1];
            talloc_free(owned);
        } else {
            touch_error();
        }
        mdt_image *img;
        uint8_t mvid[16];
        if (mdt_bundle_open_image(ctx, &img, b, i, 0) == 0) {
            if (mdt_image_mvid(mvid, img) == 0)
                sink += mvid[0];
            else
                touch_error();
            talloc_free(img);
        } else {
            touch_error();
        }
    }
    mdt_bundle_entry e;
    if (mdt_bundle_entry_get(&e, b, in.files) != MDT_ENOTFOUND)
        abort();
    touch_error();
    talloc_free(b);
    if (talloc_total_blocks(ctx) != 1)
        abort();
    talloc_free(ctx);
    return 0;
}
