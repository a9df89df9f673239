/* Two small open-addressing hash tables for the profiler core: one keyed by
 * a pair of words (a runtime ID and its generation, a code address), one by
 * a string (an aggregated record). Linear probing, backward-shift deletion,
 * growth at 3/4 load. Not thread-safe: every table belongs to one lock or
 * one thread. Values are caller-owned pointers; string keys are copied.
 *
 * Written here rather than taken from a library: the profiler runs inside
 * someone else's process and links nothing beyond libmdtools' own
 * dependencies (glib's tables would bring a second allocator and its
 * global state into the host). String keys hash with XXH3 compiled in
 * from xxhash.h (no library at run time). */
#ifndef MDP_HASH_H
#define MDP_HASH_H

#include <stddef.h>
#include <stdint.h>

typedef struct mdp_key {
    uint64_t a, b;
} mdp_key;

/* A slot holds its key and its value side by side: a probe reads one
 * cache line, not one in a keys array and another in a values array (the
 * drain's tables of frame texts outgrow the caches: bench/profiler/README.md,
 * "the drain per new deep stack"). */
typedef struct mdp_pslot {
    uint64_t a, b;
    void *val; /* NULL = empty slot */
} mdp_pslot;

typedef struct mdp_pmap {
    mdp_pslot *slots;
    size_t cap, n;
} mdp_pmap;

void mdp_pmap_init(mdp_pmap *m);
void mdp_pmap_free(mdp_pmap *m);
void *mdp_pmap_get(const mdp_pmap *m, uint64_t a, uint64_t b);
/* Insert or replace; val must not be NULL. 0, or -1 when out of memory. */
int mdp_pmap_put(mdp_pmap *m, uint64_t a, uint64_t b, void *val);
/* Remove and return the value, or NULL. */
void *mdp_pmap_del(mdp_pmap *m, uint64_t a, uint64_t b);
/* Visit every entry; the table must not change during the walk. */
void mdp_pmap_each(const mdp_pmap *m, void (*fn)(void *payload, mdp_key key, void *val),
                   void *payload);

typedef struct mdp_smap {
    char **keys;
    uint64_t *hashes;
    void **vals;
    size_t cap, n;
} mdp_smap;

void mdp_smap_init(mdp_smap *m);
void mdp_smap_free(mdp_smap *m); /* frees the keys, not the values */
void *mdp_smap_get(const mdp_smap *m, const char *key, size_t len);
/* Insert a new key (copied) or replace the value of an existing one. */
int mdp_smap_put(mdp_smap *m, const char *key, size_t len, void *val);
/* The same with the key's hash given (mdp_hash_bytes of the key): a miss
 * followed by an insert hashes a long key once, not twice. */
void *mdp_smap_get_hashed(const mdp_smap *m, const char *key, size_t len, uint64_t h);
int mdp_smap_put_hashed(mdp_smap *m, const char *key, size_t len, uint64_t h, void *val);
void mdp_smap_each(const mdp_smap *m, void (*fn)(void *payload, const char *key, void *val),
                   void *payload);

uint64_t mdp_hash_bytes(const void *p, size_t n);

#endif
