/* <mdtools/il.h>: method bodies and instructions. Bodies built byte by
 * byte test the headers, the sections and every error the decoder gives;
 * tests/il/data/Opcodes.dll (every instruction of Partition III, every
 * clause kind) and data/Everything.dll test it on files; the .NET shared
 * framework's System.Private.CoreLib (ReadyToRun), where installed, on a
 * large real image. */
#include <check.h>
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <talloc.h>

#include <mdtools/mdtools.h>

#include "paths.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static char msg[600];

static const char *err(void)
{
    return mdt_error_message(msg, sizeof msg);
}

static mdt_image *open_rel(void *ctx, const char *rel)
{
    char p[1024];
    mdt_image *img = NULL;
    ck_assert_msg(mdt_image_open_file(ctx, &img, src_path(p, sizeof p, rel), 0) == 0, "%s", err());
    return img;
}

/* A fat body (12-byte header) around `code`, with sections after it. */
static size_t fat(uint8_t *out, uint16_t flags, uint16_t maxstack, uint32_t locals,
                  const uint8_t *code, uint32_t n, const uint8_t *sects, size_t ns)
{
    size_t len = 12 + n;
    out[0] = (uint8_t)(flags | MDT_IL_FAT_FORMAT);
    out[1] = (uint8_t)(3 << 4 | (flags >> 8));
    out[2] = (uint8_t)maxstack;
    out[3] = (uint8_t)(maxstack >> 8);
    for (int i = 0; i < 4; i++) {
        out[4 + i] = (uint8_t)(n >> 8 * i);
        out[8 + i] = (uint8_t)(locals >> 8 * i);
    }
    memcpy(out + 12, code, n);
    if (ns) {
        while (len % 4)
            out[len++] = 0xEE; /* padding, never read */
        memcpy(out + len, sects, ns);
        len += ns;
    }
    return len;
}

START_TEST(every_opcode_decodes_with_its_operand)
{
    unsigned count = 0;
    for (unsigned op = 0; op < 0x10000; op++) {
        const mdt_il_opinfo *info = mdt_il_opcode_info(op);
        uint8_t code[16] = {0}, body[64];
        mdt_il_body b;
        mdt_il_insn in;
        unsigned at = 0;
        if (!info)
            continue;
        count++;
        ck_assert_uint_eq(info->opcode, op);
        ck_assert_uint_eq(info->opsize, op > 0xFF ? 2 : 1);
        if (op > 0xFF)
            code[at++] = 0xFE;
        code[at++] = (uint8_t)op;
        /* Zero operands: a branch to the next instruction, a switch of 0 targets. */
        at += info->argsize;
        code[at++] = MDT_IL_RET;
        ck_assert(mdt_il_body_parse(&b, NULL, "t", 0x06000001, body,
                                    fat(body, 0, 8, 0, code, at, NULL, 0), 0) == 0);
        ck_assert_msg(mdt_il_decode(&in, &b, 0) == 0, "%s: %s", info->name, err());
        ck_assert_uint_eq(in.opcode, op);
        ck_assert_uint_eq(in.size, (unsigned)info->opsize + info->argsize);
        ck_assert_ptr_eq(in.info, info);
        if (info->operand == MDT_IL_OPERAND_BR8 || info->operand == MDT_IL_OPERAND_BR32)
            ck_assert_int_eq(in.value, in.size);
    }
    /* Partition III lists 219 instructions, the 6 prefixes included. */
    ck_assert_uint_eq(count, 219);
    ck_assert_str_eq(mdt_il_opcode_info(MDT_IL_CONSTRAINED)->name, "constrained.");
    ck_assert_uint_eq(mdt_il_opcode_info(MDT_IL_CONSTRAINED)->flow, MDT_IL_FLOW_PREFIX);
    ck_assert_str_eq(mdt_il_opcode_info(0xDC)->name, "endfinally");
    ck_assert_ptr_null(mdt_il_opcode_info(0x24));
    ck_assert_ptr_null(mdt_il_opcode_info(0xFE));
    ck_assert_ptr_null(mdt_il_opcode_info(0xFE08));
    ck_assert_ptr_null(mdt_il_opcode_info(0xFE1F));
}
END_TEST

START_TEST(operands_are_read_little_endian_and_signed)
{
    static const uint8_t code[] = {
        0x1F, 0x80,                                                          /* ldc.i4.s -128 */
        0x20, 0x00, 0x00, 0x00, 0x80,                                        /* ldc.i4 INT32_MIN */
        0x21, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F,                /* ldc.i8 INT64_MAX */
        0x22, 0x00, 0x00, 0xC0, 0x3F,                                        /* ldc.r4 1.5 */
        0x23, 0,    0,    0,    0,    0,    0,    0xF0, 0xFF,                /* ldc.r8 -inf */
        0xFE, 0x09, 0x2C, 0x01,                                              /* ldarg 300 */
        0x45, 0x02, 0,    0,    0,    0xF6, 0xFF, 0xFF, 0xFF, 0x00, 0, 0, 0, /* switch (-10, +0) */
        0x2B, 0xFE,                                                          /* br.s -2: itself */
        0x2A};
    uint8_t body[128];
    mdt_il_body b;
    mdt_il_insn in;
    mdt_il_iter it;
    uint32_t t;
    ck_assert(mdt_il_body_parse(&b, NULL, "t", 0, body,
                                fat(body, 0, 2, 0, code, sizeof code, NULL, 0), 0) == 0);
    mdt_il_iter_init(&it, &b);
    ck_assert(mdt_il_iter_next(&in, &it) == 0);
    ck_assert_int_eq(in.value, -128);
    ck_assert(mdt_il_iter_next(&in, &it) == 0);
    ck_assert_int_eq(in.value, INT32_MIN);
    ck_assert(mdt_il_iter_next(&in, &it) == 0);
    ck_assert_int_eq(in.value, INT64_MAX);
    ck_assert(mdt_il_iter_next(&in, &it) == 0);
    ck_assert(in.real == 1.5);
    ck_assert(mdt_il_iter_next(&in, &it) == 0);
    ck_assert(isinf(in.real) && in.real < 0);
    ck_assert(mdt_il_iter_next(&in, &it) == 0);
    ck_assert_uint_eq(in.opcode, MDT_IL_LDARG);
    ck_assert_int_eq(in.value, 300);
    ck_assert(mdt_il_iter_next(&in, &it) == 0);
    ck_assert_uint_eq(in.opcode, MDT_IL_SWITCH);
    ck_assert_uint_eq(in.offset, 34);
    ck_assert_uint_eq(in.count, 2);
    ck_assert_uint_eq(in.size, 13);
    ck_assert(mdt_il_switch_target(&t, &in, 0) == 0);
    ck_assert_uint_eq(t, 47 - 10);
    ck_assert(mdt_il_switch_target(&t, &in, 1) == 0);
    ck_assert_uint_eq(t, 47);
    ck_assert_int_eq(mdt_il_switch_target(&t, &in, 2), MDT_ENOTFOUND);
    ck_assert(mdt_il_iter_next(&in, &it) == 0);
    ck_assert_int_eq(in.value, 47);
    ck_assert(mdt_il_iter_next(&in, &it) == 0);
    ck_assert_uint_eq(in.opcode, MDT_IL_RET);
    ck_assert_int_eq(mdt_il_iter_next(&in, &it), MDT_ITEROVER);
    ck_assert_int_eq(mdt_il_iter_next(&in, &it), MDT_ITEROVER);
}
END_TEST

START_TEST(tiny_header)
{
    static const uint8_t body[] = {0x0A, 0x16, 0x2A, 0x99}; /* 2 bytes of code */
    mdt_il_body b;
    ck_assert(mdt_il_body_parse(&b, NULL, "t", 0x06000007, body, sizeof body, 0) == 0);
    ck_assert(!b.fat);
    ck_assert_uint_eq(b.header_size, 1);
    ck_assert_uint_eq(b.max_stack, 8);
    ck_assert_uint_eq(b.code_size, 2);
    ck_assert_uint_eq(b.size, 3);
    ck_assert_uint_eq(b.locals_token, 0);
    ck_assert_uint_eq(b.neh, 0);
    ck_assert_ptr_eq(b.code, body + 1);
}
END_TEST

START_TEST(fat_header_and_small_section)
{
    static const uint8_t code[] = {0x00, 0x00, 0xDE, 0x02, 0x26, 0xDC, 0x2A};
    /* One small EH section, two clauses: a catch and a finally. */
    static const uint8_t sect[] = {
        0x01, 4 + 2 * 12, 0,    0,    0x00, 0x00, 0x00, 0x00, 0x04, 0x04, 0x00, 0x01,
        0x02, 0x00,       0x00, 0x01, /* catch TypeRef 0x01000002 */
        0x02, 0x00,       0x00, 0x00, 0x04, 0x05, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00}; /* finally */
    uint8_t body[128];
    mdt_il_body b;
    mdt_il_eh c;
    size_t n = fat(body, MDT_IL_MORE_SECTS | MDT_IL_INIT_LOCALS, 3, 0x11000002, code, sizeof code,
                   sect, sizeof sect);
    ck_assert(mdt_il_body_parse(&b, NULL, "t", 0x06000001, body, n, 0) == 0);
    ck_assert(b.fat);
    ck_assert(b.init_locals);
    ck_assert_uint_eq(b.max_stack, 3);
    ck_assert_uint_eq(b.locals_token, 0x11000002);
    ck_assert_uint_eq(b.code_size, sizeof code);
    ck_assert_uint_eq(b.nsections, 1);
    ck_assert_uint_eq(b.neh, 2);
    ck_assert_uint_eq(b.size, n);
    ck_assert(mdt_il_eh_get(&c, &b, 0) == 0);
    ck_assert_uint_eq(c.kind, MDT_IL_EH_CATCH);
    ck_assert(!c.fat);
    ck_assert_uint_eq(c.try_start, 0);
    ck_assert_uint_eq(c.try_length, 4);
    ck_assert_uint_eq(c.handler_start, 4);
    ck_assert_uint_eq(c.handler_length, 1);
    ck_assert_uint_eq(c.catch_type, 0x01000002);
    ck_assert(mdt_il_eh_get(&c, &b, 1) == 0);
    ck_assert_uint_eq(c.kind, MDT_IL_EH_FINALLY);
    ck_assert_uint_eq(c.handler_start, 5);
    ck_assert_int_eq(mdt_il_eh_get(&c, &b, 2), MDT_ENOTFOUND);
}
END_TEST

START_TEST(fat_sections_and_several_sections)
{
    static const uint8_t code[] = {0x00, 0x00, 0x00, 0x00, 0xFE, 0x11, 0x26, 0xDC, 0x2A};
    /* A section of another kind (skipped), then a fat EH section with a
     * filter and a fault, then a small one with a catch: three sections,
     * each at a 4-byte boundary. */
    uint8_t sects[4 + 4 + 2 * 24 + 4 + 12];
    size_t at = 0;
    uint8_t *c;
    sects[at++] = 0x02 | 0x80; /* OptILTable, more follow */
    sects[at++] = 4;
    sects[at++] = 0;
    sects[at++] = 0;
    sects[at++] = 0x01 | 0x40 | 0x80; /* fat EH, more follow */
    sects[at++] = 4 + 2 * 24;
    sects[at++] = 0;
    sects[at++] = 0;
    c = sects + at;
    memset(c, 0, 48);
    c[0] = MDT_IL_EH_FILTER;
    c[4] = 0; /* try 0+2 */
    c[8] = 2;
    c[12] = 6; /* handler 6+1 */
    c[16] = 1;
    c[20] = 4; /* filter at 4 */
    c[24] = MDT_IL_EH_FAULT;
    c[28] = 0;
    c[32] = 4;
    c[36] = 7;
    c[40] = 1;
    at += 48;
    sects[at++] = 0x01; /* small EH, the last */
    sects[at++] = 4 + 12;
    sects[at++] = 0;
    sects[at++] = 0;
    memset(sects + at, 0, 12);
    sects[at + 2] = 1; /* try 1+1, handler 2+1 */
    sects[at + 4] = 1;
    sects[at + 5] = 2;
    sects[at + 7] = 1;
    sects[at + 8] = 0x05; /* TypeSpec 0x1b000005 */
    sects[at + 11] = 0x1B;
    at += 12;
    uint8_t body[256];
    mdt_il_body b;
    mdt_il_eh e;
    size_t n = fat(body, MDT_IL_MORE_SECTS, 1, 0, code, sizeof code, sects, at);
    ck_assert_msg(mdt_il_body_parse(&b, NULL, "t", 0x06000001, body, n, 0) == 0, "%s", err());
    ck_assert_uint_eq(b.nsections, 3);
    ck_assert_uint_eq(b.neh, 3);
    ck_assert(mdt_il_eh_get(&e, &b, 0) == 0);
    ck_assert_uint_eq(e.kind, MDT_IL_EH_FILTER);
    ck_assert(e.fat);
    ck_assert_uint_eq(e.filter_start, 4);
    ck_assert_uint_eq(e.handler_start, 6);
    ck_assert(mdt_il_eh_get(&e, &b, 1) == 0);
    ck_assert_uint_eq(e.kind, MDT_IL_EH_FAULT);
    ck_assert_uint_eq(e.try_length, 4);
    ck_assert(mdt_il_eh_get(&e, &b, 2) == 0);
    ck_assert_uint_eq(e.kind, MDT_IL_EH_CATCH);
    ck_assert(!e.fat);
    ck_assert_uint_eq(e.catch_type, 0x1B000005);
    ck_assert_uint_eq(e.try_start, 1);
    ck_assert_uint_eq(e.handler_start, 2);
}
END_TEST

/* Each bad body fails with `code` and a message holding `want`. */
static void expect_bad(const uint8_t *body, size_t n, int code, const char *want)
{
    mdt_il_body b;
    int e = mdt_il_body_parse(&b, NULL, "bad.dll", 0x06000009, body, n, 0);
    ck_assert_msg(e == code, "got %d (%s), want %d", e, err(), code);
    ck_assert_msg(strstr(err(), want), "message \"%s\" lacks \"%s\"", msg, want);
    ck_assert_msg(strstr(msg, "bad.dll: body of 0x06000009"), "message \"%s\" is not located", msg);
}

/* The instructions of `code` (a fat body) fail at `at` with `code`. */
static void expect_bad_code(const uint8_t *code, uint32_t n, int ecode, const char *want)
{
    uint8_t body[128];
    mdt_il_body b;
    mdt_il_insn in;
    mdt_il_iter it;
    int e;
    ck_assert(mdt_il_body_parse(&b, NULL, "bad.dll", 0x06000009, body,
                                fat(body, 0, 8, 0, code, n, NULL, 0), 0) == 0);
    mdt_il_iter_init(&it, &b);
    while ((e = mdt_il_iter_next(&in, &it)) == 0)
        ;
    ck_assert_msg(e == ecode, "got %d (%s), want %d", e, err(), ecode);
    ck_assert_msg(strstr(err(), want), "message \"%s\" lacks \"%s\"", msg, want);
    ck_assert_int_eq(mdt_il_iter_next(&in, &it), MDT_ITEROVER);
}

START_TEST(bad_headers_and_sections_are_located_errors)
{
    static const uint8_t tiny_short[] = {0x2A, 0x00}; /* 10 bytes of code, 1 there */
    static const uint8_t no_format[] = {0x00, 0x00};
    static const uint8_t fat_short[] = {0x03, 0x30, 0x08, 0x00, 0x00};
    static const uint8_t fat_small[] = {0x03, 0x20, 8, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0x2A};
    static const uint8_t code_short[] = {0x03, 0x30, 8, 0, 0x10, 0, 0, 0, 0, 0, 0, 0, 0x2A};
    /* More sections announced, none there; a section of 2 bytes. */
    static const uint8_t no_sect[] = {0x0B, 0x30, 8, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0x2A};
    static const uint8_t sect_tiny[] = {0x0B, 0x30, 8,    0, 1, 0, 0,    0,    0, 0,
                                        0,    0,    0x2A, 0, 0, 0, 0x01, 0x02, 0, 0};
    static const uint8_t sect_long[] = {0x0B, 0x30, 8,    0, 1, 0, 0,    0,    0,    0,
                                        0,    0,    0x2A, 0, 0, 0, 0x41, 0xFF, 0xFF, 0xFF};
    expect_bad(tiny_short, sizeof tiny_short, MDT_ETRUNC, "code of 10 bytes, 1 readable");
    expect_bad(no_format, sizeof no_format, MDT_EBADIMAGE, "neither a tiny");
    expect_bad(fat_short, sizeof fat_short, MDT_ETRUNC, "needs 12 bytes");
    expect_bad(fat_small, sizeof fat_small, MDT_EBADIMAGE, "at least 12");
    expect_bad(code_short, sizeof code_short, MDT_ETRUNC, "code of 16 bytes");
    expect_bad(no_sect, sizeof no_sect, MDT_ETRUNC, "section");
    expect_bad(sect_tiny, sizeof sect_tiny, MDT_EBADIMAGE, "of 2 bytes");
    expect_bad(sect_long, sizeof sect_long, MDT_ETRUNC, "of 16777215 bytes");
    ck_assert_int_eq(mdt_il_body_parse(NULL, NULL, NULL, 0, tiny_short, 2, 0), MDT_EINVAL);
}
END_TEST

START_TEST(bad_instructions_are_located_errors)
{
    static const uint8_t no_op[] = {0x00, 0x24, 0x2A};
    static const uint8_t no_op2[] = {0x00, 0x00, 0xFE, 0x08, 0x2A};
    static const uint8_t half_op[] = {0x00, 0xFE};
    static const uint8_t short_operand[] = {0x00, 0x20, 0x01, 0x02};
    static const uint8_t branch_out[] = {0x2B, 0x10, 0x2A};
    static const uint8_t branch_back[] = {0x00, 0x38, 0xF0, 0xFF, 0xFF, 0xFF, 0x2A};
    static const uint8_t switch_huge[] = {0x45, 0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x00};
    static const uint8_t switch_out[] = {0x45, 0x01, 0, 0, 0, 0x40, 0, 0, 0, 0x2A};
    expect_bad_code(no_op, sizeof no_op, MDT_EBADIMAGE,
                    "bad.dll: IL of 0x06000009+0x1: opcode 0x24 is no instruction");
    expect_bad_code(no_op2, sizeof no_op2, MDT_EBADIMAGE, "IL of 0x06000009+0x2");
    expect_bad_code(no_op2, sizeof no_op2, MDT_EBADIMAGE, "opcode 0xfe08 is no instruction");
    expect_bad_code(half_op, sizeof half_op, MDT_ETRUNC, "two-byte opcode");
    expect_bad_code(short_operand, sizeof short_operand, MDT_ETRUNC,
                    "ldc.i4: its operand needs 4 bytes, 2 left");
    expect_bad_code(branch_out, sizeof branch_out, MDT_EBADIMAGE,
                    "br.s branches to 0x12, outside the code (0x3 bytes)");
    expect_bad_code(branch_back, sizeof branch_back, MDT_EBADIMAGE, "br branches to -0xa");
    expect_bad_code(switch_huge, sizeof switch_huge, MDT_ETRUNC, "switch of 4294967295 targets");
    expect_bad_code(switch_out, sizeof switch_out, MDT_EBADIMAGE, "switch target 0 branches");
}
END_TEST

START_TEST(a_bad_clause_fails_alone)
{
    static const uint8_t code[] = {0x00, 0x00, 0x2A};
    static const uint8_t sect[] = {
        0x01, 4 + 3 * 12, 0, 0, 0x03, 0, 0, 0, 1, 1, 0, 1, 0, 0, 0, 0, /* kind 3 */
        0x02, 0,          0, 0, 9,    1, 0, 1, 0, 0, 0, 0,             /* try 0+9 */
        0x01, 0,          0, 0, 1,    1, 0, 1, 7, 0, 0, 0};            /* filter at 7 */
    uint8_t body[128];
    mdt_il_body b;
    mdt_il_eh c;
    mdt_il_insn in;
    mdt_il_iter it;
    unsigned n = 0;
    ck_assert(
        mdt_il_body_parse(&b, NULL, "t", 0x06000001, body,
                          fat(body, MDT_IL_MORE_SECTS, 8, 0, code, sizeof code, sect, sizeof sect),
                          0) == 0);
    ck_assert_uint_eq(b.neh, 3);
    ck_assert_int_eq(mdt_il_eh_get(&c, &b, 0), MDT_EBADIMAGE);
    ck_assert_msg(strstr(err(), "kind 0x3 is none of"), "%s", msg);
    ck_assert_msg(strstr(msg, "body of 0x06000001+0x14"), "%s", msg);
    ck_assert_int_eq(mdt_il_eh_get(&c, &b, 1), MDT_EBADIMAGE);
    ck_assert_msg(strstr(err(), "try block 0x0+0x9 outside the code"), "%s", msg);
    ck_assert_int_eq(mdt_il_eh_get(&c, &b, 2), MDT_EBADIMAGE);
    ck_assert_msg(strstr(err(), "filter at 0x7"), "%s", msg);
    mdt_il_iter_init(&it, &b);
    while (mdt_il_iter_next(&in, &it) == 0)
        n++;
    ck_assert_uint_eq(n, 3);
}
END_TEST

START_TEST(instruction_at_an_offset)
{
    static const uint8_t code[] = {0x00, 0x20, 1, 2, 3, 4, 0xFE, 0x16, 0x01, 0, 0, 0x02, 0x2A};
    uint8_t body[64];
    mdt_il_body b;
    mdt_il_insn in;
    ck_assert(mdt_il_body_parse(&b, NULL, "t", 0, body,
                                fat(body, 0, 8, 0, code, sizeof code, NULL, 0), 0) == 0);
    ck_assert(mdt_il_insn_at(&in, &b, 0) == 0);
    ck_assert_uint_eq(in.opcode, MDT_IL_NOP);
    for (uint32_t off = 1; off < 6; off++) {
        ck_assert(mdt_il_insn_at(&in, &b, off) == 0);
        ck_assert_uint_eq(in.offset, 1);
        ck_assert_uint_eq(in.opcode, MDT_IL_LDC_I4);
        ck_assert_int_eq(in.value, 0x04030201);
    }
    ck_assert(mdt_il_insn_at(&in, &b, 8) == 0);
    ck_assert_uint_eq(in.opcode, MDT_IL_CONSTRAINED);
    ck_assert_uint_eq(in.token, 0x02000001);
    ck_assert(mdt_il_insn_at(&in, &b, 12) == 0);
    ck_assert_uint_eq(in.opcode, MDT_IL_RET);
    ck_assert_int_eq(mdt_il_insn_at(&in, &b, 13), MDT_ENOTFOUND);
    ck_assert_int_eq(mdt_il_decode(&in, &b, 13), MDT_ENOTFOUND);
}
END_TEST

/* The text of every instruction of a method, one per line. */
static char *listing(void *ctx, const mdt_image *img, uint32_t method, int style)
{
    mdt_il_body b;
    mdt_il_iter it;
    mdt_il_insn in;
    mdt_name_opts o = {style, 0, MDT_NAME_OPTS_VERSION, NULL, NULL};
    char *all = talloc_strdup(ctx, "");
    int e;
    ck_assert_msg(mdt_il_body_get(&b, img, method) == 0, "%s", err());
    mdt_il_iter_init(&it, &b);
    while ((e = mdt_il_iter_next(&in, &it)) == 0) {
        char *t;
        ck_assert(mdt_il_insn_text(ctx, &t, &b, &in, &o) == 0);
        all = talloc_asprintf_append(all, "IL_%04x: %s\n", in.offset, t);
    }
    ck_assert_int_eq(e, MDT_ITEROVER);
    return all;
}

START_TEST(fixture_bodies_and_their_text)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_rel(ctx, "tests/il/data/Opcodes.dll");
    mdt_il_body b;
    mdt_il_eh c;
    char *s;
    /* Tiny: Opcodes.All::Tiny. */
    ck_assert(mdt_il_body_get(&b, img, 0x0600000E) == 0);
    ck_assert(!b.fat);
    ck_assert_str_eq(listing(ctx, img, 0x0600000E, MDT_STYLE_IL),
                     "IL_0000: ldc.i4.s 42\nIL_0002: ret\n");
    /* No body: the pinvoke (RVA 0) and the abstract method. */
    ck_assert_int_eq(mdt_il_body_get(&b, img, 0x0600000F), MDT_ENOTFOUND);
    ck_assert_msg(strstr(err(), "body of 0x0600000f") && strstr(msg, "has no body"), "%s", msg);
    ck_assert_int_eq(mdt_il_body_get(&b, img, 0x06000010), MDT_ENOTFOUND);
    ck_assert_int_eq(mdt_il_body_get(&b, img, 0x06000011), MDT_ENOTFOUND);
    ck_assert_int_eq(mdt_il_body_get(&b, img, 0x02000001), MDT_EINVAL);
    /* Every clause kind, nested: Opcodes.All::Handlers. */
    ck_assert(mdt_il_body_get(&b, img, 0x0600000B) == 0);
    ck_assert(b.init_locals);
    ck_assert_uint_eq(b.locals_token, 0x11000004);
    ck_assert_uint_eq(b.neh, 4);
    unsigned kinds = 0;
    for (uint32_t i = 0; i < b.neh; i++) {
        ck_assert(mdt_il_eh_get(&c, &b, i) == 0);
        ck_assert(!c.fat);
        kinds |= 1u << c.kind;
        if (c.kind == MDT_IL_EH_CATCH)
            ck_assert_uint_eq(MDT_TOKEN_TABLE(c.catch_type), MDT_TABLE_TypeRef);
        if (c.kind == MDT_IL_EH_FILTER)
            ck_assert_uint_lt(c.filter_start, c.handler_start);
    }
    ck_assert_uint_eq(kinds, 1u << 0 | 1u << 1 | 1u << 2 | 1u << 4);
    /* A try longer than 255 bytes: a fat section. */
    ck_assert(mdt_il_body_get(&b, img, 0x0600000C) == 0);
    ck_assert_uint_eq(b.neh, 1);
    ck_assert(mdt_il_eh_get(&c, &b, 0) == 0);
    ck_assert(c.fat);
    ck_assert_uint_eq(c.try_length, 305);
    /* Operands named in each style. */
    s = listing(ctx, img, 0x0600000A, MDT_STYLE_IL);
    ck_assert_str_eq(s, "IL_0000: ldc.i4.1\nIL_0001: ldc.i4.2\nIL_0002: ldstr \"x\"\n"
                        "IL_0007: call vararg void Opcodes.All::Var(int32, ..., int32, string)\n"
                        "IL_000c: ret\n");
    s = listing(ctx, img, 0x0600000A, MDT_STYLE_FULL);
    ck_assert_msg(strstr(s, "IL_0007: call vararg System.Void Opcodes.All::Var(System.Int32,...,"
                            "System.Int32,System.String)\n"),
                  "%s", s);
    s = listing(ctx, img, 0x06000007, MDT_STYLE_IL);
    static const char *const il_lines[] = {
        "IL_0015: ldstr \"quote \\\" backslash \\\\ tab \\t newline \\n end\"\n",
        "IL_009b: ldtoken method void Opcodes.All::Target(int32)\n",
        "IL_00a0: ldtoken field int32 Opcodes.All::counter\n",
        "IL_00a5: ldtoken class Opcodes.Box`1<int32>\n",
        "IL_00aa: ldtoken method instance void class Opcodes.Box`1<string>::Set(!0)\n",
        "IL_00c7: constrained. !!0\n",
        "IL_00cd: callvirt instance string [mscorlib]System.Object::ToString()\n",
        "IL_00db: unaligned. 1\n",
        "IL_00fd: callvirt instance void class Opcodes.Box`1<int32>::Set(!0)\n",
        "IL_0102: call !!0 [mscorlib]System.Activator::CreateInstance<class Opcodes.All>()\n",
        "IL_0109: tail.\n"};
    for (size_t i = 0; i < N(il_lines); i++)
        ck_assert_msg(strstr(s, il_lines[i]), "no line %s in\n%s", il_lines[i], s);
    s = listing(ctx, img, 0x06000006, MDT_STYLE_IL);
    static const char *const base_lines[] = {"IL_002c: ldc.i8 9223372036854775807\n",
                                             "IL_0035: ldc.r4 1.5\n",
                                             "IL_003a: ldc.r8 -0.1\n",
                                             "IL_0043: ldc.r4 (00 00 C0 7F)\n",
                                             "IL_0048: ldc.r8 (00 00 00 00 00 00 F0 FF)\n",
                                             "IL_0051: ldc.r8 (00 00 00 00 00 00 00 80)\n",
                                             "IL_0067: calli void(int32)\n",
                                             "IL_006c: br.s IL_006e\n",
                                             "IL_006e: brfalse.s IL_006c\n",
                                             "IL_00c7: switch (IL_006c, IL_008b, IL_014f)\n",
                                             "IL_00d8: switch ()\n",
                                             "IL_0131: ldarg 300\n"};
    for (size_t i = 0; i < N(base_lines); i++)
        ck_assert_msg(strstr(s, base_lines[i]), "no line %s in\n%s", base_lines[i], s);
    ck_assert_msg(strstr(listing(ctx, img, 0x0600000D, MDT_STYLE_IL), "IL_0001: no. 1\n"), "no.");
    talloc_free(ctx);
}
END_TEST

/* Every opcode of the table is in the fixture, so the differential and
 * round-trip tests over it see each one. */
START_TEST(the_fixture_has_every_opcode)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_rel(ctx, "tests/il/data/Opcodes.dll");
    static bool seen[0x10000];
    uint32_t rows = mdt_table_rows(img, MDT_TABLE_MethodDef);
    memset(seen, 0, sizeof seen);
    for (uint32_t rid = 1; rid <= rows; rid++) {
        mdt_il_body b;
        mdt_il_iter it;
        mdt_il_insn in;
        if (mdt_il_body_get(&b, img, MDT_TOKEN(MDT_TABLE_MethodDef, rid)))
            continue;
        mdt_il_iter_init(&it, &b);
        while (mdt_il_iter_next(&in, &it) == 0)
            seen[in.opcode] = true;
    }
    for (unsigned op = 0; op < 0x10000; op++)
        if (mdt_il_opcode_info(op))
            ck_assert_msg(seen[op], "%s is not in Opcodes.dll", mdt_il_opcode_info(op)->name);
    talloc_free(ctx);
}
END_TEST

/* A damaged body in a file: the error names the file offset too, and the
 * other bodies still read. */
START_TEST(a_damaged_body_in_a_file)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_rel(ctx, "tests/il/data/Opcodes.dll"), *bad = NULL;
    mdt_il_body b;
    mdt_il_insn in;
    uint64_t off;
    size_t len;
    const uint8_t *bytes = mdt_image_bytes(&len, img);
    uint8_t *copy = talloc_memdup(ctx, bytes, len);
    char want[128];
    ck_assert(mdt_il_body_get(&b, img, 0x0600000D) == 0);
    ck_assert(mdt_image_rva_to_offset(&off, img, b.rva) == 0);
    ck_assert_uint_eq(b.file_offset, off);
    copy[off + 2] = 0x24; /* NoPrefix: ldarg.0, then no. 1 -> 0x24 */
    ck_assert(mdt_image_open_buffer(ctx, &bad, "bad.dll", copy, len, 0) == 0);
    ck_assert(mdt_il_body_get(&b, bad, 0x0600000D) == 0);
    ck_assert_int_eq(mdt_il_insn_at(&in, &b, 4), MDT_EBADIMAGE);
    snprintf(want, sizeof want, "bad.dll: IL of 0x0600000d+0x1 (file 0x%llx): opcode 0x24",
             (unsigned long long)off + 2);
    ck_assert_msg(strstr(err(), want), "%s lacks %s", msg, want);
    ck_assert(mdt_il_insn_at(&in, &b, 0) == 0);
    ck_assert(mdt_il_body_get(&b, bad, 0x0600000E) == 0);
    talloc_free(ctx);
}
END_TEST

/* A text with a failing operand: the token and why, not a failure. */
START_TEST(an_operand_that_does_not_name_degrades)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_rel(ctx, "tests/il/data/Opcodes.dll");
    static const uint8_t code[] = {0x28, 0x99, 0x00, 0x00, 0x0A, 0x72, 0x01, 0x00, 0x00, 0x02};
    uint8_t body[64];
    mdt_il_body b;
    mdt_il_insn in;
    char *t;
    ck_assert(mdt_il_body_parse(&b, img, NULL, 0, body,
                                fat(body, 0, 8, 0, code, sizeof code, NULL, 0), 0) == 0);
    ck_assert(mdt_il_decode(&in, &b, 0) == 0);
    ck_assert(mdt_il_insn_text(ctx, &t, &b, &in, NULL) == 0);
    ck_assert_msg(strncmp(t, "call 0x0a000099 /* ", 19) == 0, "%s", t);
    ck_assert(mdt_il_decode(&in, &b, 5) == 0);
    ck_assert(mdt_il_insn_text(ctx, &t, &b, &in, NULL) == 0);
    ck_assert_msg(strncmp(t, "ldstr 0x02000001 /* ", 20) == 0, "%s", t);
    talloc_free(ctx);
}
END_TEST

/* ReadyToRun keeps the IL in the file: every body of the framework's
 * System.Private.CoreLib reads, and its instructions decode. */
START_TEST(ready_to_run_corelib)
{
    glob_t g;
    void *ctx = talloc_new(NULL);
    mdt_image *img = NULL;
    uint32_t bodies = 0, insns = 0, clauses = 0;
    if (glob("/usr/share/dotnet/shared/Microsoft.NETCore.App/*/System.Private.CoreLib.dll", 0, NULL,
             &g) != 0 &&
        glob("/usr/lib/dotnet/shared/Microsoft.NETCore.App/*/System.Private.CoreLib.dll", 0, NULL,
             &g) != 0) {
        fprintf(stderr, "ready_to_run_corelib: no .NET shared framework; not run\n");
        talloc_free(ctx);
        return;
    }
    ck_assert_msg(mdt_image_open_file(ctx, &img, g.gl_pathv[0], 0) == 0, "%s", err());
    globfree(&g);
    ck_assert(mdt_image_pe_info(img)->managed_native_header.rva != 0);
    uint32_t rows = mdt_table_rows(img, MDT_TABLE_MethodDef);
    for (uint32_t rid = 1; rid <= rows; rid++) {
        mdt_il_body b;
        mdt_il_iter it;
        mdt_il_insn in;
        mdt_il_eh c;
        int e = mdt_il_body_get(&b, img, MDT_TOKEN(MDT_TABLE_MethodDef, rid));
        if (e == MDT_ENOTFOUND)
            continue;
        ck_assert_msg(e == 0, "%s", err());
        bodies++;
        for (uint32_t i = 0; i < b.neh; i++, clauses++)
            ck_assert_msg(mdt_il_eh_get(&c, &b, i) == 0, "%s", err());
        mdt_il_iter_init(&it, &b);
        while ((e = mdt_il_iter_next(&in, &it)) == 0)
            insns++;
        ck_assert_msg(e == MDT_ITEROVER, "%s", err());
    }
    fprintf(stderr, "CoreLib: %u bodies, %u instructions, %u clauses\n", bodies, insns, clauses);
    ck_assert_uint_gt(bodies, 30000);
    ck_assert_uint_gt(clauses, 1000);
    talloc_free(ctx);
}
END_TEST

Suite *suite(void);
Suite *suite(void)
{
    Suite *s = suite_create("il");
    TCase *t = tcase_create("il");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, every_opcode_decodes_with_its_operand);
    tcase_add_test(t, operands_are_read_little_endian_and_signed);
    tcase_add_test(t, tiny_header);
    tcase_add_test(t, fat_header_and_small_section);
    tcase_add_test(t, fat_sections_and_several_sections);
    tcase_add_test(t, bad_headers_and_sections_are_located_errors);
    tcase_add_test(t, bad_instructions_are_located_errors);
    tcase_add_test(t, a_bad_clause_fails_alone);
    tcase_add_test(t, instruction_at_an_offset);
    tcase_add_test(t, fixture_bodies_and_their_text);
    tcase_add_test(t, the_fixture_has_every_opcode);
    tcase_add_test(t, an_operand_that_does_not_name_degrades);
    tcase_add_test(t, a_damaged_body_in_a_file);
    tcase_add_test(t, ready_to_run_corelib);
    suite_add_tcase(s, t);
    return s;
}
