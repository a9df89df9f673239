/* Out-of-line blocks of class and function records and the decoding of
 * their slots (args.c): what the writer allocates for a slot, what a slot
 * holds in readable form, and the record operations classes and functions
 * share (what a record names, its payload released or destroyed). */
#ifndef MDT_TOKENS_ARGS_INT_H
#define MDT_TOKENS_ARGS_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tokens/idmap_int.h"
#include "tokens/records_int.h"
#include "tokens/table_int.h"

struct idm_refs;

/* The content of a class or function slot, decoded (args points into the
 * out-of-line block or at inl). */
struct idm_view {
    unsigned shape, prim, rank;
    uintptr_t module, cls;
    uint32_t token, nargs;
    const uintptr_t *args;
    uintptr_t inl[1];
};

/* Decode the words w and x of a consistent copy (a reader calls it only
 * after its seqlock check: it follows x to the out-of-line block). */
void idm_decode(const mdt_idmap *m, int kind, uint64_t w, uintptr_t x, struct idm_view *v);
/* Writer: decode slot h in place. */
void idm_view(const mdt_idmap *m, int kind, const struct idm_head *h, struct idm_view *v);

/* Writer: an out-of-line block for a slot; *err is set when out of memory.
 * Discard frees one no reader has seen. */
struct idm_args *idm_args_make(mdt_idmap *m, uint32_t n, const uintptr_t *args, uint32_t token,
                               uintptr_t cls, int *err);
void idm_args_discard(mdt_idmap *m, struct idm_args *a);
size_t idm_args_bytes(const struct idm_args *a);

/* Record operations (struct idm_kind_ops) of classes and functions: what
 * slot h of kind names, whether it names (pk, pid); its payload to the
 * grace period with its module handle back (release), or freed at once
 * when the map is (destroy). */
void idm_rec_refs(const mdt_idmap *m, int kind, const struct idm_head *h, struct idm_refs *out);
void idm_rec_release(mdt_idmap *m, struct idm_head *h);
void idm_rec_destroy(struct idm_head *h);

/* Inline: dependents walks and merges ask it for every entry. */
static inline bool idm_rec_names(const mdt_idmap *m, int kind, const struct idm_head *h, int pk,
                                 uintptr_t pid)
{
    struct idm_view v;
    idm_view(m, kind, h, &v);
    if (pk == K_MODULE)
        return v.module == pid;
    if (pk != K_CLASS)
        return false;
    if (kind == K_FUNC && v.cls == pid)
        return true;
    for (uint32_t i = 0; i < v.nargs; i++)
        if (v.args[i] == pid)
            return true;
    return false;
}

#endif
