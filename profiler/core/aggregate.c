/* Aggregated records (the drain's and the modes': records.c writes them):
 * one table per record kind, keyed by the record's text (its frames, and
 * for a sample its thread and time slice first), each entry counting what
 * was seen since the last write. Below the drain and the modes, which add
 * to it; the log writer above them takes the records out (README.md). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "core/base.h"
#include "core/aggregate.h"

struct mdp_record *mdp_record_add(mdp_core *core, enum mdp_rec_kind kind, const char *key,
                                  size_t keylen, uint64_t count, uint64_t bytes, const char *debug)
{
    mdp_smap *map = &core->records[kind];
    uint64_t h = mdp_hash_bytes(key, keylen); /* once: a stack's key is ~1-3 KB */
    struct mdp_record *r = mdp_smap_get_hashed(map, key, keylen, h);
    if (!r) {
        r = calloc(1, sizeof *r);
        if (!r)
            return NULL;
        if (debug && !(r->debug = strdup(debug))) {
            free(r);
            return NULL;
        }
        if (mdp_smap_put_hashed(map, key, keylen, h, r) != 0) {
            free(r->debug);
            free(r);
            return NULL;
        }
    }
    r->count += count;
    r->bytes += bytes;
    return r;
}
