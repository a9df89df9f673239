/* Signature equivalence (sigeq.c), as MemberRef resolution (memberref.c)
 * uses it. Only those two include it. */
#ifndef MDT_TYPEREF_SIGEQ_INT_H
#define MDT_TYPEREF_SIGEQ_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <mdtools/sig.h>
#include <mdtools/tables.h>

#include "typeref/modset_int.h"

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
/* Whether MethodDef row r's signature can equal the reference's, from its
 * first bytes, before it is decoded; an unreadable head says "maybe". */
bool tr_sigeq_head(const mdt_row *r, const mdt_method_sig *ref);

#endif
