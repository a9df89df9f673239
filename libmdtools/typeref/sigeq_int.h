/* Signature equivalence (sigeq.c), as MemberRef resolution (memberref.c)
 * uses it. Only those two include it. */
#ifndef MDT_TYPEREF_SIGEQ_INT_H
#define MDT_TYPEREF_SIGEQ_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <mdtools/sig.h>
#include <mdtools/tables.h>

#include "typeref/modset_int.h"
#include "util/error.h"
#include "util/reader.h"

/* One comparison: the view, the modules of the reference (rmi) and of the
 * definition (dmi); by_name is set when a named type matched by name only
 * (it resolved nowhere on some side). */
struct tr_sigeq {
    const struct mdt_modview *v;
    uint32_t rmi, dmi; /* modules of the reference and of the definition */
    bool by_name;
};

/* Type a (the reference's) equivalent to type b (the definition's). */
bool tr_sigeq_type(struct tr_sigeq *k, const mdt_type *a, const mdt_type *b);
/* a: the reference (a call site when `callsite`), b: the definition. */
bool tr_sigeq_method(struct tr_sigeq *k, const mdt_method_sig *a, const mdt_method_sig *b,
                     bool callsite);
/* Whether a MethodDef's signature can equal the reference's, from its
 * first bytes (II.23.2.1: calling convention, generic parameter count,
 * parameter count), before it is decoded: overloads mostly differ there.
 * An unreadable head says "maybe": the full decode reports it. Inline:
 * it runs on every candidate of a MemberRef (a call cost +0.14% on
 * `memberrefs --all`, bench/README.md). */
static inline bool tr_sigeq_head(const mdt_row *r, const mdt_method_sig *ref)
{
    const uint8_t *b;
    uint32_t len, gen = 0, n;
    uint8_t cc;
    uint32_t fixed = ref->nparams;
    if ((ref->callconv & MDT_CC_MASK) == MDT_CC_VARARG && ref->sentinel != UINT32_MAX)
        fixed = ref->sentinel; /* a call site: the part before the sentinel */
    if (mdt_row_blob(&b, &len, r, MDT_COL_MethodDef_Signature)) {
        mdt__err_forget_one();
        return true;
    }
    rd d = rd_make(NULL, "#Blob", b, len, UINT64_MAX);
    if (rd_u8(&d, &cc, "calling convention") ||
        ((cc & MDT_CC_GENERIC) && rd_compressed(&d, &gen, "generic parameter count")) ||
        rd_compressed(&d, &n, "parameter count")) {
        mdt__err_forget_one(); /* the reader records one failure */
        return true;
    }
    return cc == ref->callconv && gen == ref->gen_count && n == fixed;
}

#endif
