/* mdtools: CIL method bodies (ECMA-335 II.25.4) and their instructions
 * (Partition III).
 *
 * A body is read from a MethodDef's RVA (also in ReadyToRun images, whose
 * IL stays in the file) or from bytes the caller holds (a profiler's
 * GetILFunctionBody): its tiny or fat header, the code, and the extra data
 * sections after it with their exception clauses, small or fat. Nothing is
 * allocated: a body, an exception clause, an instruction and the cursor over
 * instructions are values in the caller's memory, and point into the image
 * (or the caller's bytes), which must outlive them.
 *
 * Nothing is trusted: the header, every section and every instruction is
 * read through the library's bounds-checked reader. A body cut short, a
 * header of no known format, an opcode that does not exist, an operand cut
 * short, a branch or switch target outside the code, a clause of no known
 * kind or outside the code are located errors (mdt_error_message names the input,
 * the method's token and the offset: "IL of 0x06000012+0x2a" for the code,
 * "body of 0x06000012+0x1c" for the header and sections), never a crash;
 * the work is linear in the bytes of the body. A damaged clause fails
 * alone (mdt_il_eh_get), the instructions stay readable.
 *
 * Prefixes (constrained., volatile., unaligned., tail., readonly., no.) are
 * instructions of their own, at their own offsets, as ILDasm and monodis
 * show them; MDT_IL_FLOW_PREFIX marks them.
 *
 * Thread safety: only reads the image; any thread. The decoding functions
 * (mdt_il_body_parse, mdt_il_decode, the iterator, mdt_il_insn_at,
 * mdt_il_eh_get, mdt_il_switch_target, mdt_il_opcode_info) allocate nothing
 * and take no lock; on bad input they write the per-thread error record.
 * mdt_il_insn_text allocates (talloc). */
#ifndef MDTOOLS_IL_H
#define MDTOOLS_IL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mdtools/names.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mdt_image mdt_image;

/* Every opcode, from <mdtools/opcodes.def>: MDT_IL_NOP = 0x00, ...,
 * MDT_IL_CEQ = 0xFE01 (two-byte opcodes are 0xFE00 | second byte). */
enum mdt_il_opcode {
#define MDT_IL_OPCODE(id, name, value, operand, flow) MDT_IL_##id = value,
#include <mdtools/opcodes.def>
#undef MDT_IL_OPCODE
    MDT_IL_OPCODE_NONE = 0xFFFF /* no instruction */
};

/* What follows an opcode (Partition III, each instruction's format). */
enum mdt_il_operand_kind {
    MDT_IL_OPERAND_NONE = 0,
    MDT_IL_OPERAND_ARG8,    /* unsigned int8 argument number: value */
    MDT_IL_OPERAND_ARG16,   /* unsigned int16 argument number: value */
    MDT_IL_OPERAND_LOCAL8,  /* unsigned int8 local number: value */
    MDT_IL_OPERAND_LOCAL16, /* unsigned int16 local number: value */
    MDT_IL_OPERAND_I8,      /* int8 (ldc.i4.s): value */
    MDT_IL_OPERAND_I32,     /* int32: value */
    MDT_IL_OPERAND_I64,     /* int64: value */
    MDT_IL_OPERAND_U8,      /* unsigned int8 (unaligned. alignment, no. flags): value */
    MDT_IL_OPERAND_R32,     /* float32: real (exactly widened) */
    MDT_IL_OPERAND_R64,     /* float64: real */
    MDT_IL_OPERAND_BR8,     /* int8 displacement: value is the target IL offset */
    MDT_IL_OPERAND_BR32,    /* int32 displacement: value is the target IL offset */
    MDT_IL_OPERAND_SWITCH,  /* unsigned int32 count, then count int32 displacements:
                               count; targets by mdt_il_switch_target */
    MDT_IL_OPERAND_METHOD,  /* MethodDef, MemberRef or MethodSpec token: token */
    MDT_IL_OPERAND_FIELD,   /* Field or MemberRef token: token */
    MDT_IL_OPERAND_TYPE,    /* TypeDef, TypeRef or TypeSpec token: token */
    MDT_IL_OPERAND_STRING,  /* user string token (0x70......): token */
    MDT_IL_OPERAND_SIG,     /* StandAloneSig token (calli): token */
    MDT_IL_OPERAND_TOKEN    /* any of type, method or field (ldtoken): token */
};

/* How control leaves an instruction. */
enum mdt_il_flow {
    MDT_IL_FLOW_NEXT = 0, /* to the next instruction */
    MDT_IL_FLOW_BREAK,    /* break: to a debugger, then the next */
    MDT_IL_FLOW_CALL,     /* calls, then the next (jmp: leaves the method) */
    MDT_IL_FLOW_RETURN,   /* ret, endfinally, endfilter */
    MDT_IL_FLOW_BRANCH,   /* br, br.s, leave, leave.s */
    MDT_IL_FLOW_COND,     /* conditional branches and switch */
    MDT_IL_FLOW_THROW,    /* throw, rethrow */
    MDT_IL_FLOW_PREFIX    /* a prefix of the instruction after it */
};

typedef struct mdt_il_opinfo {
    const char *name; /* as Partition III spells it: "ldarg.0", "constrained." */
    uint16_t opcode;  /* enum mdt_il_opcode */
    uint8_t operand;  /* enum mdt_il_operand_kind */
    uint8_t flow;     /* enum mdt_il_flow */
    uint8_t opsize;   /* bytes of the opcode: 1 or 2 */
    uint8_t argsize;  /* bytes of the operand (switch: 4, the count) */
} mdt_il_opinfo;

/* The description of `opcode` (an enum mdt_il_opcode value), static; NULL
 * when no instruction has that value. Never fails, allocates nothing. */
const mdt_il_opinfo *mdt_il_opcode_info(unsigned opcode);

/* Exception clause kinds: the Flags of a clause (II.25.4.6). */
enum mdt_il_eh_kind {
    MDT_IL_EH_CATCH = 0x0,  /* COR_ILEXCEPTION_CLAUSE_EXCEPTION: a typed handler */
    MDT_IL_EH_FILTER = 0x1, /* an exception filter and handler */
    MDT_IL_EH_FINALLY = 0x2,
    MDT_IL_EH_FAULT = 0x4
};

/* A method body (II.25.4). Filled by mdt_il_body_get or _parse; read its
 * fields, pass it to the functions below. Pointers are borrowed. */
typedef struct mdt_il_body {
    const mdt_image *img;  /* the image its tokens refer to, or NULL */
    const char *name;      /* input named in error messages (borrowed), or NULL */
    uint32_t method;       /* MethodDef token (0 when not known) */
    uint32_t rva;          /* of the header (what sections align to) */
    uint64_t file_offset;  /* of the header in the file, UINT64_MAX if unknown */
    bool fat;              /* fat header (else tiny) */
    uint16_t flags;        /* header flags: CorILMethod_* (tiny: 0x2) */
    uint16_t header_size;  /* bytes: 1 (tiny) or 4 x the fat header's Size */
    uint16_t max_stack;    /* tiny: 8 */
    bool init_locals;      /* CorILMethod_InitLocals (0x10) */
    uint32_t locals_token; /* LocalVarSigTok: a StandAloneSig token, or 0 */
    uint32_t code_size;
    const uint8_t *code;     /* code_size bytes */
    uint32_t size;           /* header, code, padding and sections */
    uint32_t nsections;      /* extra data sections (II.25.4.5), any kind */
    uint32_t neh;            /* exception clauses, in all EH sections */
    const uint8_t *sections; /* the first section's header, or NULL */
    uint32_t sections_size;  /* bytes from `sections` to the end of the last */
} mdt_il_body;

/* CorILMethod_* header flags (II.25.4.4). */
#define MDT_IL_TINY_FORMAT 0x2u
#define MDT_IL_FAT_FORMAT 0x3u
#define MDT_IL_MORE_SECTS 0x8u
#define MDT_IL_INIT_LOCALS 0x10u

/* The body of MethodDef `method` of `img`, read at its RVA. Errors:
 * MDT_EINVAL (NULL out or img, a token of another table),
 * MDT_ENOTFOUND (no such row, or the method has no body: RVA 0, as an
 * abstract, extern, runtime or internal call method), MDT_EUNSUPPORTED
 * (the body is native or OPTIL code: ImplFlags CodeType is not IL),
 * MDT_ETRUNC (the header, code or a section runs past the section or
 * readable memory that holds it), MDT_EBADIMAGE (no tiny or fat header, a
 * fat header smaller than 12 bytes, a section of a bad size); reading the
 * MethodDef row may also fail with MDT_ETRUNC (mdt_row_get). MDT_EIO: an
 * image opened with MDT_OPEN_LAZY whose file changed since the open. */
int mdt_il_body_get(mdt_il_body *out, const mdt_image *img, uint32_t method);

/* The body whose header is at `bytes` (`len` bytes readable from it), as a
 * runtime hands it out (ICorProfilerInfo::GetILFunctionBody). `img` (may
 * be NULL) is the image its tokens refer to; `name` names the input in
 * messages (may be NULL: then the image's name); `method` is its token (0
 * if unknown); `rva` is the header's RVA, or its address's low bits: the
 * sections after the code start at the next 4-byte boundary of it.
 * Errors: MDT_EINVAL (NULL out, NULL bytes with len > 0), MDT_ETRUNC,
 * MDT_EBADIMAGE (as for mdt_il_body_get). */
int mdt_il_body_parse(mdt_il_body *out, const mdt_image *img, const char *name, uint32_t method,
                      const void *bytes, size_t len, uint32_t rva);

/* One exception clause (II.25.4.6), fat or small alike. Ends are
 * exclusive: try_start + try_length. */
typedef struct mdt_il_eh {
    uint32_t kind; /* enum mdt_il_eh_kind */
    uint32_t try_start, try_length;
    uint32_t handler_start, handler_length;
    uint32_t catch_type;   /* MDT_IL_EH_CATCH: TypeDef, TypeRef or TypeSpec token */
    uint32_t filter_start; /* MDT_IL_EH_FILTER: IL offset of the filter */
    bool fat;              /* read from a fat section */
} mdt_il_eh;

/* Clause `i` (0-based, in section order) of a body. Errors: MDT_EINVAL
 * (NULL out or body), MDT_ENOTFOUND (i >= body->neh), MDT_EBADIMAGE (a
 * kind that is none of the four, a try, handler or filter outside the
 * code), MDT_ETRUNC (the sections are not those the body was read with). */
int mdt_il_eh_get(mdt_il_eh *out, const mdt_il_body *body, uint32_t i);

/* One instruction. */
typedef struct mdt_il_insn {
    uint32_t offset;           /* IL offset of its first byte */
    uint32_t size;             /* bytes: opcode and operand */
    uint16_t opcode;           /* enum mdt_il_opcode */
    uint8_t operand;           /* enum mdt_il_operand_kind */
    const mdt_il_opinfo *info; /* static */
    int64_t value;             /* integer, argument, local, U8 operands; branch target */
    double real;               /* R32, R64 */
    uint32_t token;            /* token operands */
    uint32_t count;            /* SWITCH: number of targets */
    const uint8_t *bytes;      /* `size` bytes, the opcode first (borrowed) */
} mdt_il_insn;

/* The instruction that starts at IL offset `offset` of the body. Branch and
 * switch targets are checked to lie in the code. Errors: MDT_EINVAL (NULL
 * out or body), MDT_ENOTFOUND (offset >= code size), MDT_EBADIMAGE (an
 * opcode that does not exist, a target outside the code), MDT_ETRUNC (the
 * operand runs past the end of the code; a switch whose count does not
 * fit). */
int mdt_il_decode(mdt_il_insn *out, const mdt_il_body *body, uint32_t offset);

/* A cursor over a body's instructions in order: a value, allocates nothing;
 * borrows the body, which must outlive it. */
typedef struct mdt_il_iter {
    const mdt_il_body *body;
    uint32_t pos;
    bool done;
} mdt_il_iter;

/* Start at the first instruction. Never fails (a NULL body iterates
 * nothing). */
void mdt_il_iter_init(mdt_il_iter *it, const mdt_il_body *body);
/* The next instruction. Returns 0, MDT_ITEROVER at the end of the code,
 * or an error of mdt_il_decode (MDT_EBADIMAGE, MDT_ETRUNC) for the
 * instruction at it->pos, after which the cursor is over (where the next
 * instruction would start is unknown). MDT_EINVAL for NULL arguments. */
int mdt_il_iter_next(mdt_il_insn *out, mdt_il_iter *it);

/* The instruction whose bytes hold IL offset `offset` (a profiler's IL
 * offset of a frame, say), decoding from the start of the code. Errors:
 * MDT_EINVAL (NULL out or body), MDT_ENOTFOUND (offset >= code size), and
 * those of an instruction before it or of itself (MDT_EBADIMAGE,
 * MDT_ETRUNC). */
int mdt_il_insn_at(mdt_il_insn *out, const mdt_il_body *body, uint32_t offset);

/* Target `i` (0-based) of a switch: the IL offset it branches to. Errors:
 * MDT_EINVAL (NULL arguments, not a switch), MDT_ENOTFOUND (i >= count). */
int mdt_il_switch_target(uint32_t *target, const mdt_il_insn *insn, uint32_t i);

/* The instruction as ILAsm text, without its label: the opcode name, then
 * its operand named in `opts`'s style (NULL: full): a method as
 * `[instance ]RET OWNER::NAME[<ARGS>](PARAMS)`, vararg arguments after
 * `...`, a field as `TYPE OWNER::NAME`, a type by its name (a TypeSpec as
 * its signature), ldtoken's `method ...` / `field ...` / type, calli's
 * signature, a string in double quotes with C escapes, branch targets as
 * `IL_002a`, a switch as `(IL_0010, IL_0020)`, floats exactly (shortest
 * decimal that reads back, ILAsm's byte form `(00 00 C0 7F)` for NaN and
 * infinities), arguments and locals by number. Names of VAR and MVAR come
 * from opts->gctx as for mdt_type_name (the caller usually names the
 * method's own parameters: type_owner, method_owner and
 * MDT_NAME_PARAM_NAMES). An operand whose name cannot be built is
 * printed as its token followed by the reason in an ILAsm comment,
 * rather than failing. Errors: MDT_EINVAL (NULL out, insn or body),
 * MDT_ENOMEM. */
int mdt_il_insn_text(void *mem_ctx, char **out, const mdt_il_body *body, const mdt_il_insn *insn,
                     const mdt_name_opts *opts);

#ifdef __cplusplus
}
#endif
#endif
