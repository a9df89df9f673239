/* mdinspect: keys for strong-name verification by token (--sn-keys). */
#ifndef MDINSPECT_SNKEYS_H
#define MDINSPECT_SNKEYS_H

#include <stddef.h>

#include <mdtools/strongname.h>

typedef struct mdi_snkeys {
    mdt_sn_key *keys; /* talloc array, n of them */
    size_t n;
} mdi_snkeys;

/* Add the keys of FILE (snkeys.c says its format) to k, allocated under
 * mem; 0, or -1 with a message in *err (under mem). */
int mdi_snkeys_load(void *mem, mdi_snkeys *k, const char *path, char **err);

#endif
