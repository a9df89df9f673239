/* A writer-only hash map from (kind, ID) to a 64-bit value (wmap.c): unload
 * history, newer seqs, dependents lists, module handles, presence counts
 * above 0xffff. Readers never see one. */
#ifndef MDT_TOKENS_WMAP_INT_H
#define MDT_TOKENS_WMAP_INT_H

#include <stddef.h>
#include <stdint.h>

struct idm_went {
    uintptr_t id;
    uint64_t val;
    uint32_t kind; /* kind + 1; 0 = empty */
};

struct idm_wmap {
    struct idm_went *e;
    size_t cap, n;
};

/* The value of (kind, id), NULL when absent; valid until the next put or
 * del. put returns 0 or MDT_ENOMEM. */
uint64_t *idm_wmap_get(const struct idm_wmap *m, int kind, uintptr_t id);
int idm_wmap_put(struct idm_wmap *m, int kind, uintptr_t id, uint64_t val);
void idm_wmap_del(struct idm_wmap *m, int kind, uintptr_t id);
void idm_wmap_free(struct idm_wmap *m);

#endif
