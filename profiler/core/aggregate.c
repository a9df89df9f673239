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

/* The unit's state: the tables. */
struct mdp_aggregate {
    mdp_smap records[MDP_REC_NKINDS]; /* per kind: key text -> struct mdp_record */
};

int mdp_aggregate_new(mdp_core *core)
{
    struct mdp_aggregate *a = calloc(1, sizeof *a);
    if (!a)
        return -1;
    for (unsigned k = 0; k < MDP_REC_NKINDS; k++)
        mdp_smap_init(&a->records[k]);
    core->agg = a;
    return 0;
}

static void free_record(void *payload, const char *key, void *val)
{
    (void)payload;
    (void)key;
    struct mdp_record *r = val;
    free(r->debug);
    free(r);
}

void mdp_aggregate_free(mdp_core *core)
{
    struct mdp_aggregate *a = core->agg;
    if (!a)
        return;
    for (unsigned k = 0; k < MDP_REC_NKINDS; k++) {
        mdp_smap_each(&a->records[k], free_record, NULL);
        mdp_smap_free(&a->records[k]);
    }
    core->agg = NULL;
    free(a);
}

mdp_smap *mdp_records_table(mdp_core *core, enum mdp_rec_kind kind)
{
    return &core->agg->records[kind];
}

struct mdp_record *mdp_record_add(mdp_core *core, enum mdp_rec_kind kind, const char *key,
                                  size_t keylen, uint64_t count, uint64_t bytes, const char *debug)
{
    mdp_smap *map = &core->agg->records[kind];
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
