/* libFuzzer harness for the method body decoder (<mdtools/il.h>). The
 * first byte of the input gives the header's RVA modulo 4 (what the
 * sections align to); the rest is a method body as a runtime hands it out,
 * decoded against a fixed image (tests/il/data/Opcodes.dll, whose tables
 * give tokens meaning): the header and sections, every exception clause,
 * every instruction through the cursor, each as text in the IL and full
 * styles, every switch target, and mdt_il_insn_at at every offset of the
 * code. Oracles besides the sanitizers: the cursor's instructions tile the
 * code (each starts where the last ended, and when the cursor ends without
 * error the last ends at the code's end); mdt_il_insn_at and mdt_il_decode
 * agree with the cursor; a branch or switch target is inside the code; a
 * failed call leaves nothing allocated; every failure formats as a
 * message. Built for libFuzzer with --enable-fuzzing and always as a
 * replayer (tests/fuzz/replay.c) that `make check` runs over
 * tests/il/corpus/. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <talloc.h>

#include <mdtools/mdtools.h>

#include "paths.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t sink;
static mdt_image *fixture;

static void touch_error(void)
{
    char msg[512];
    sink += strlen(mdt_error_message(msg, sizeof msg));
}

static void open_fixture(void)
{
    char path[1024];
    if (fixture)
        return;
    if (mdt_image_open_file(NULL, &fixture,
                            src_path(path, sizeof path, "tests/il/data/Opcodes.dll"), 0)) {
        fprintf(stderr, "fuzz_il: cannot open %s (MDT_TOP_SRCDIR names the source tree)\n", path);
        abort();
    }
}

static void fail(const char *what, uint32_t off)
{
    fprintf(stderr, "fuzz_il: %s at IL_%04x\n", what, off);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const mdt_name_opts styles[] = {
        {MDT_STYLE_IL, 0, MDT_NAME_OPTS_VERSION, NULL, NULL},
        {MDT_STYLE_FULL, MDT_NAME_SIGNATURE, MDT_NAME_OPTS_VERSION, NULL, NULL}};
    mdt_il_body b;
    mdt_il_iter it;
    mdt_il_insn in, at;
    uint32_t expect = 0, n = 0;
    void *ctx;
    int e;
    if (size < 1 || size > 1 << 20)
        return 0;
    open_fixture();
    ctx = talloc_new(NULL);
    /* The bytes in a buffer of their own size, so an overread shows. */
    uint8_t *copy = malloc(size - 1 ? size - 1 : 1);
    memcpy(copy, data + 1, size - 1);
    if ((e = mdt_il_body_parse(&b, fixture, "fuzz", 0x06000001, copy, size - 1, data[0] & 3))) {
        touch_error();
        goto out;
    }
    if (b.size > size - 1 || b.code + b.code_size > copy + (size - 1))
        fail("body larger than its bytes", 0);
    for (uint32_t i = 0; i < b.neh; i++) {
        mdt_il_eh c;
        if (mdt_il_eh_get(&c, &b, i))
            touch_error();
        else if ((uint64_t)c.try_start + c.try_length > b.code_size ||
                 (uint64_t)c.handler_start + c.handler_length > b.code_size)
            fail("clause outside the code", c.try_start);
    }
    mdt_il_iter_init(&it, &b);
    while ((e = mdt_il_iter_next(&in, &it)) == 0) {
        n++;
        if (in.offset != expect || in.size == 0 || in.offset + in.size > b.code_size)
            fail("instructions do not tile the code", in.offset);
        expect = in.offset + in.size;
        if ((in.operand == MDT_IL_OPERAND_BR8 || in.operand == MDT_IL_OPERAND_BR32) &&
            (in.value < 0 || in.value >= b.code_size))
            fail("branch outside the code", in.offset);
        for (uint32_t i = 0; i < in.count; i++) {
            uint32_t t;
            if (mdt_il_switch_target(&t, &in, i) || t >= b.code_size)
                fail("switch target", in.offset);
        }
        if (mdt_il_decode(&at, &b, in.offset) || at.opcode != in.opcode || at.size != in.size)
            fail("mdt_il_decode disagrees with the cursor", in.offset);
        for (uint32_t o = in.offset; o < in.offset + in.size; o++)
            if (mdt_il_insn_at(&at, &b, o) || at.offset != in.offset)
                fail("mdt_il_insn_at disagrees with the cursor", o);
        for (size_t s = 0; s < sizeof styles / sizeof styles[0]; s++) {
            char *t;
            size_t blocks = talloc_total_blocks(ctx);
            if (mdt_il_insn_text(ctx, &t, &b, &in, &styles[s])) {
                touch_error();
                if (talloc_total_blocks(ctx) != blocks)
                    fail("a failed text left blocks", in.offset);
            } else {
                sink += strlen(t);
                talloc_free(t);
            }
        }
    }
    if (e == MDT_ITEROVER && expect != b.code_size)
        fail("the cursor ended before the code did", expect);
    if (e != MDT_ITEROVER)
        touch_error();
    if (mdt_il_insn_at(&at, &b, b.code_size) != MDT_ENOTFOUND)
        fail("an instruction past the code", b.code_size);
    sink += n;
out:
    if (talloc_total_blocks(ctx) != 1)
        fail("blocks left under the context", 0);
    talloc_free(ctx);
    free(copy);
    return 0;
}
