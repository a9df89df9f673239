/* Instructions (ECMA-335 Partition III): the opcode table built from
 * <mdtools/opcodes.def>, one instruction decoded at an offset, the cursor
 * over a body's code, and the instruction that holds an IL offset. Reads
 * the code through util/reader.h's window; checks every operand's length,
 * every branch and switch target against the code, and a switch's count
 * against the bytes left before reading any target, so the work is linear
 * in the code's bytes. Allocates nothing. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <mdtools/errors.h>
#include <mdtools/il.h>

#include "il/il_int.h"
#include "util/error.h"
#include "util/reader.h"

/* One-byte opcodes at their value, two-byte ones at 256 + second byte;
 * entries without a name are no instruction. */
#define SLOT(value) ((value) < 0x100 ? (value) : 0x100 + ((value)&0xFF))
#define ARGSIZE_NONE 0
#define ARGSIZE_ARG8 1
#define ARGSIZE_ARG16 2
#define ARGSIZE_LOCAL8 1
#define ARGSIZE_LOCAL16 2
#define ARGSIZE_I8 1
#define ARGSIZE_I32 4
#define ARGSIZE_I64 8
#define ARGSIZE_U8 1
#define ARGSIZE_R32 4
#define ARGSIZE_R64 8
#define ARGSIZE_BR8 1
#define ARGSIZE_BR32 4
#define ARGSIZE_SWITCH 4
#define ARGSIZE_METHOD 4
#define ARGSIZE_FIELD 4
#define ARGSIZE_TYPE 4
#define ARGSIZE_STRING 4
#define ARGSIZE_SIG 4
#define ARGSIZE_TOKEN 4
static const mdt_il_opinfo ops[512] = {
#define MDT_IL_OPCODE(id, name, value, operand, flow)                                              \
    [SLOT(value)] = {name,                                                                         \
                     value,                                                                        \
                     MDT_IL_OPERAND_##operand,                                                     \
                     MDT_IL_FLOW_##flow,                                                           \
                     (value) < 0x100 ? 1 : 2,                                                      \
                     ARGSIZE_##operand},
#include <mdtools/opcodes.def>
#undef MDT_IL_OPCODE
};

const mdt_il_opinfo *mdt_il_opcode_info(unsigned opcode)
{
    unsigned slot;
    if (opcode < 0x100 && opcode != 0xFE)
        slot = opcode;
    else if ((opcode & 0xFF00) == 0xFE00)
        slot = 0x100 + (opcode & 0xFF);
    else
        return NULL;
    return ops[slot].name ? &ops[slot] : NULL;
}

static int target_check(const mdt_il_body *b, const mdt_il_insn *in, int64_t target,
                        const char *what)
{
    if (target >= 0 && target < (int64_t)b->code_size)
        return 0;
    return il__fail(
        b, true, in->offset, MDT_EBADIMAGE, "%s %s to %s0x%llx, outside the code (0x%x bytes)",
        in->info->name, what, target < 0 ? "-" : "",
        (unsigned long long)(target < 0 ? -(uint64_t)target : (uint64_t)target), b->code_size);
}

/* The instruction at `offset`, which the caller checked is inside the
 * code. */
static int decode_at(mdt_il_insn *out, const mdt_il_body *b, uint32_t offset)
{
    const mdt_il_opinfo *info;
    unsigned opcode;
    uint8_t u8 = 0;
    uint16_t u16 = 0;
    uint32_t u32 = 0;
    uint64_t u64 = 0;
    rd r;
    r = rd_make(b->name, "IL", b->code, b->code_size, UINT64_MAX);
    r.pos = offset;
    (void)rd_u8(&r, &u8, "opcode");
    opcode = u8;
    if (u8 == 0xFE) {
        if (rd_left(&r) < 1)
            return il__fail(b, true, offset, MDT_ETRUNC,
                            "two-byte opcode 0xfe.. cut short by the end of the code");
        (void)rd_u8(&r, &u8, "opcode");
        opcode = 0xFE00 | u8;
    }
    if (!(info = mdt_il_opcode_info(opcode)))
        return il__fail(b, true, offset, MDT_EBADIMAGE, "opcode 0x%0*x is no instruction",
                        opcode > 0xFF ? 4 : 2, opcode);
    *out = (mdt_il_insn){0};
    out->offset = offset;
    out->opcode = (uint16_t)opcode;
    out->operand = info->operand;
    out->info = info;
    out->bytes = b->code + offset;
    if (info->argsize > rd_left(&r))
        return il__fail(b, true, offset, MDT_ETRUNC,
                        "%s: its operand needs %u bytes, %zu left in the code", info->name,
                        info->argsize, rd_left(&r));
    switch (info->operand) {
    case MDT_IL_OPERAND_NONE: break;
    case MDT_IL_OPERAND_ARG8:
    case MDT_IL_OPERAND_LOCAL8:
    case MDT_IL_OPERAND_U8:
        (void)rd_u8(&r, &u8, "operand");
        out->value = u8;
        break;
    case MDT_IL_OPERAND_I8:
        (void)rd_u8(&r, &u8, "operand");
        out->value = (int8_t)u8;
        break;
    case MDT_IL_OPERAND_ARG16:
    case MDT_IL_OPERAND_LOCAL16:
        (void)rd_u16(&r, &u16, "operand");
        out->value = u16;
        break;
    case MDT_IL_OPERAND_I32:
        (void)rd_u32(&r, &u32, "operand");
        out->value = (int32_t)u32;
        break;
    case MDT_IL_OPERAND_I64:
        (void)rd_u64(&r, &u64, "operand");
        out->value = (int64_t)u64;
        break;
    case MDT_IL_OPERAND_R32: {
        float f;
        (void)rd_u32(&r, &u32, "operand");
        memcpy(&f, &u32, sizeof f);
        out->real = f;
        break;
    }
    case MDT_IL_OPERAND_R64:
        (void)rd_u64(&r, &u64, "operand");
        memcpy(&out->real, &u64, sizeof out->real);
        break;
    case MDT_IL_OPERAND_BR8:
        (void)rd_u8(&r, &u8, "operand");
        out->value = (int64_t)r.pos + (int8_t)u8;
        break;
    case MDT_IL_OPERAND_BR32:
        (void)rd_u32(&r, &u32, "operand");
        out->value = (int64_t)r.pos + (int32_t)u32;
        break;
    case MDT_IL_OPERAND_SWITCH:
        (void)rd_u32(&r, &u32, "switch count");
        if (u32 > rd_left(&r) / 4)
            return il__fail(b, true, offset, MDT_ETRUNC,
                            "switch of %u targets needs 0x%llx bytes, %zu left in the code", u32,
                            (unsigned long long)u32 * 4, rd_left(&r));
        out->count = u32;
        (void)rd_skip(&r, (size_t)u32 * 4, "switch targets");
        break;
    default: /* tokens */
        (void)rd_u32(&r, &u32, "token");
        out->token = u32;
        break;
    }
    out->size = (uint32_t)(r.pos - offset);
    if (info->operand == MDT_IL_OPERAND_BR8 || info->operand == MDT_IL_OPERAND_BR32)
        return target_check(b, out, out->value, "branches");
    if (info->operand == MDT_IL_OPERAND_SWITCH) {
        int64_t end = (int64_t)offset + out->size;
        for (uint32_t i = 0; i < out->count; i++) {
            int64_t t = end + (int32_t)le32(out->bytes + out->size - 4 * (out->count - i));
            if (t < 0 || t >= (int64_t)b->code_size) {
                char what[40];
                snprintf(what, sizeof what, "target %u branches", i);
                return target_check(b, out, t, what);
            }
        }
    }
    return 0;
}

int mdt_il_decode(mdt_il_insn *out, const mdt_il_body *b, uint32_t offset)
{
    if (!out || !b)
        return mdt__fail_simple(MDT_EINVAL, "mdt_il_decode: no %s", !out ? "output" : "body");
    if (offset >= b->code_size)
        return il__fail(b, true, offset, MDT_ENOTFOUND,
                        "no instruction at 0x%x: the code has 0x%x bytes", offset, b->code_size);
    return decode_at(out, b, offset);
}

int mdt_il_switch_target(uint32_t *target, const mdt_il_insn *in, uint32_t i)
{
    if (!target || !in || in->operand != MDT_IL_OPERAND_SWITCH || !in->bytes)
        return mdt__fail_simple(MDT_EINVAL, "mdt_il_switch_target: %s",
                                !target || !in ? "no output or instruction" : "not a switch");
    if (i >= in->count)
        return mdt__fail_simple(MDT_ENOTFOUND, "switch at IL_%04x has %u targets, not %u",
                                in->offset, in->count, i + 1);
    /* Checked in range by mdt_il_decode. */
    *target = (uint32_t)((int64_t)in->offset + in->size +
                         (int32_t)le32(in->bytes + in->size - 4 * (in->count - i)));
    return 0;
}

void mdt_il_iter_init(mdt_il_iter *it, const mdt_il_body *b)
{
    if (!it)
        return;
    it->body = b;
    it->pos = 0;
    it->done = !b;
}

int mdt_il_iter_next(mdt_il_insn *out, mdt_il_iter *it)
{
    int e;
    if (!out || !it)
        return mdt__fail_simple(MDT_EINVAL, "mdt_il_iter_next: no %s", !out ? "output" : "cursor");
    if (it->done || !it->body || it->pos >= it->body->code_size) {
        it->done = true;
        return MDT_ITEROVER;
    }
    if ((e = decode_at(out, it->body, it->pos))) {
        it->done = true;
        return e;
    }
    it->pos += out->size;
    return 0;
}

int mdt_il_insn_at(mdt_il_insn *out, const mdt_il_body *b, uint32_t offset)
{
    uint32_t pos = 0;
    int e;
    if (!out || !b)
        return mdt__fail_simple(MDT_EINVAL, "mdt_il_insn_at: no %s", !out ? "output" : "body");
    if (offset >= b->code_size)
        return il__fail(b, true, offset, MDT_ENOTFOUND,
                        "no instruction at 0x%x: the code has 0x%x bytes", offset, b->code_size);
    for (;;) {
        if ((e = decode_at(out, b, pos)))
            return e;
        if (offset < pos + out->size)
            return 0;
        pos += out->size;
    }
}
