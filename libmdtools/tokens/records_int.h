/* The records of the three kinds as they lie in their slots, and their
 * consistent reads (records.c): a class or function slot is the head and
 * one word x (32 bytes, two to a cache line), a module slot 128 bytes;
 * what a slot has no room for goes to an immutable out-of-line block
 * (args.c). Readers copy a slot's words under its seqlock and decode them
 * only once the copy is consistent. */
#ifndef MDT_TOKENS_RECORDS_INT_H
#define MDT_TOKENS_RECORDS_INT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "tokens/handles_int.h"
#include "tokens/idmap_int.h"
#include "tokens/table_int.h"

/* The word `w` of a class or function slot: the token's row (its table is
 * implied by the kind: TypeDef, MethodDef; for shapes other than TYPEDEF the
 * ARRAY rank), the module handle (handles.c), prim, and the meta byte
 * (table_int.h). */
#define W_ROW_MASK 0xffffffu
#define W_HANDLE_SHIFT 24
#define W_HANDLE_MAX IDM_HANDLE_MAX
#define W_PRIM_SHIFT 48

/* The module handle in a class or function slot's word w. */
static inline uint32_t idm_w_handle(uint64_t w)
{
    return (uint32_t)(w >> W_HANDLE_SHIFT) & W_HANDLE_MAX;
}

/* Out-of-line type arguments (and what the slot has no room for: a shape's
 * token, a function's owning class); immutable once published. */
struct idm_args {
    uint32_t n;
    uint32_t token; /* classes of a shape other than TYPEDEF */
    uintptr_t cls;  /* functions */
    uintptr_t a[];
};

/* Out-of-line module path; immutable once published. */
struct idm_path {
    size_t len;
    char s[];
};

/* 32 bytes, two to a cache line. x: the type argument (META_ARG), the
 * struct idm_args (META_OOL), or 0. */
struct idm_cslot {
    struct idm_head h;
    _Atomic uintptr_t x;
};

/* x: the owning class, or the struct idm_args (META_OOL) that holds it
 * with the method type arguments. */
struct idm_fslot {
    struct idm_head h;
    _Atomic uintptr_t x;
};

/* Modules fill fields in place without a new generation, so their slots
 * have their own seqlock counter `ver` besides gv. */
struct idm_mslot {
    struct idm_head h;
    _Atomic uint32_t ver;
    uint32_t pad0;
    _Atomic uintptr_t image;
    _Atomic uintptr_t appdomain;
    _Atomic uintptr_t assembly;
    _Atomic uintptr_t identity;
    _Atomic uintptr_t path; /* struct idm_path * or 0 */
    _Atomic uint64_t mvid[2];
    unsigned char pad[128 - 32 - 7 * 8];
};

_Static_assert(sizeof(struct idm_cslot) == 32, "class slots: two to a cache line");
_Static_assert(sizeof(struct idm_fslot) == 32, "function slots: two to a cache line");
_Static_assert(sizeof(struct idm_mslot) == 128, "module slot is two cache lines");

/* A consistent copy of a class or function record. */
struct idm_crec {
    uint64_t gen;
    uintptr_t module;
    uint32_t token, nargs;
    uint8_t shape, prim;
    uint16_t rank;
    uintptr_t cls; /* functions */
};

/* Reader (inside a section): copy the live record of `id` (gen 0 = any);
 * up to cap arguments go to args. Returns 0 or MDT_ENOTFOUND. */
int idm_read_class(const mdt_idmap *m, struct idm_crec *r, uintptr_t *args, uint32_t cap,
                   uintptr_t id, uint64_t gen);
int idm_read_func(const mdt_idmap *m, struct idm_crec *r, uintptr_t *args, uint32_t cap,
                  uintptr_t id, uint64_t gen);
int idm_read_module(const mdt_idmap *m, mdt_idmap_module_info *out, uintptr_t id, uint64_t gen);
/* Reader: type argument k of a live class. */
int idm_class_arg(const mdt_idmap *m, uintptr_t id, uint64_t gen, uint32_t k, uintptr_t *out);

/* Hash of a class / function key, for the reverse indexes: content only,
 * never the ID. */
uint64_t idm_class_key_hash(uintptr_t module, uint32_t token, unsigned shape, unsigned rank,
                            uint32_t nargs, const uintptr_t *args);
uint64_t idm_func_key_hash(uintptr_t module, uint32_t token, uintptr_t cls, uint32_t nargs,
                           const uintptr_t *args);

#endif
