/* Open-addressing hash tables (see hash.h): linear probing from a home slot,
 * deletion by shifting later members of the run back so that no tombstones
 * accumulate. Capacities are powers of two. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "core/hash.h"

/* Not the library's mixer (libmdtools/util/hash.h, mdt__mix64, which the
 * ID maps and the resolver share): that one is a private inline of the
 * library, and a client includes only <mdtools/...> and calls only what
 * libmdtools.so exports (tools/check-layers.sh); giving the library a
 * public hash API for this one use was not worth a header and a manual
 * page. Kept here, the profiler's own tables' one mixer. */
static uint64_t mix(uint64_t x)
{
    /* splitmix64's finalizer: every input bit reaches every output bit. */
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

uint64_t mdp_hash_bytes(const void *p, size_t n)
{
    /* XXH3, compiled in (XXH_INLINE_ALL: no library to find at run time):
     * record keys are a sample's frames, up to a few KiB once native frames
     * name their files, and the byte-at-a-time FNV-1a it replaces was 61% of
     * the drain's instructions on native stacks (bench/profiler/README.md) */
    return XXH3_64bits(p, n);
}

static uint64_t key_hash(uint64_t a, uint64_t b)
{
    /* one finalizer over both words: b (a generation, a serial, 0) is small
     * and multiplied into the high bits first, so (a, b) and (a', b') that
     * differ anywhere differ before the mix (two mixes cost a probe ~7
     * instructions more, bench/profiler/drain.c) */
    return mix(a ^ (b * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull));
}

void mdp_pmap_init(mdp_pmap *m)
{
    memset(m, 0, sizeof *m);
}

void mdp_pmap_free(mdp_pmap *m)
{
    free(m->slots);
    memset(m, 0, sizeof *m);
}

static size_t pfind(const mdp_pmap *m, uint64_t a, uint64_t b, int *found)
{
    size_t mask = m->cap - 1;
    size_t i = key_hash(a, b) & mask;
    for (;;) {
        const mdp_pslot *s = &m->slots[i];
        if (!s->val) {
            *found = 0;
            return i;
        }
        if (s->a == a && s->b == b) {
            *found = 1;
            return i;
        }
        i = (i + 1) & mask;
    }
}

void *mdp_pmap_get(const mdp_pmap *m, uint64_t a, uint64_t b)
{
    if (!m->cap)
        return NULL;
    int found;
    size_t i = pfind(m, a, b, &found);
    return found ? m->slots[i].val : NULL;
}

static int pgrow(mdp_pmap *m)
{
    size_t ncap = m->cap ? m->cap * 2 : 64;
    mdp_pmap n = {calloc(ncap, sizeof *n.slots), ncap, 0};
    if (!n.slots)
        return -1;
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->slots[i].val)
            continue;
        int found;
        size_t j = pfind(&n, m->slots[i].a, m->slots[i].b, &found);
        n.slots[j] = m->slots[i];
        n.n++;
    }
    mdp_pmap_free(m);
    *m = n;
    return 0;
}

int mdp_pmap_put(mdp_pmap *m, uint64_t a, uint64_t b, void *val)
{
    if ((m->n + 1) * 4 > m->cap * 3 && pgrow(m) != 0)
        return -1;
    int found;
    size_t i = pfind(m, a, b, &found);
    if (!found) {
        m->slots[i].a = a;
        m->slots[i].b = b;
        m->n++;
    }
    m->slots[i].val = val;
    return 0;
}

void *mdp_pmap_del(mdp_pmap *m, uint64_t a, uint64_t b)
{
    if (!m->cap)
        return NULL;
    int found;
    size_t i = pfind(m, a, b, &found);
    if (!found)
        return NULL;
    void *old = m->slots[i].val;
    size_t mask = m->cap - 1;
    /* Backward shift: move each later member of the run into the hole when
     * the hole lies between its home slot and its slot. */
    size_t hole = i, j = i;
    for (;;) {
        j = (j + 1) & mask;
        if (!m->slots[j].val)
            break;
        size_t home = key_hash(m->slots[j].a, m->slots[j].b) & mask;
        if (((j - home) & mask) >= ((j - hole) & mask)) {
            m->slots[hole] = m->slots[j];
            hole = j;
        }
    }
    m->slots[hole].val = NULL;
    m->n--;
    return old;
}

void mdp_pmap_each(const mdp_pmap *m, void (*fn)(void *payload, mdp_key key, void *val),
                   void *payload)
{
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].val)
            fn(payload, (mdp_key){m->slots[i].a, m->slots[i].b}, m->slots[i].val);
}

void mdp_smap_init(mdp_smap *m)
{
    memset(m, 0, sizeof *m);
}

void mdp_smap_free(mdp_smap *m)
{
    for (size_t i = 0; i < m->cap; i++)
        free(m->keys[i]);
    free(m->keys);
    free(m->hashes);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

static size_t sfind(const mdp_smap *m, const char *key, size_t len, uint64_t h, int *found)
{
    size_t mask = m->cap - 1;
    size_t i = h & mask;
    while (m->keys[i]) {
        if (m->hashes[i] == h && strncmp(m->keys[i], key, len) == 0 && m->keys[i][len] == 0) {
            *found = 1;
            return i;
        }
        i = (i + 1) & mask;
    }
    *found = 0;
    return i;
}

void *mdp_smap_get_hashed(const mdp_smap *m, const char *key, size_t len, uint64_t h)
{
    if (!m->cap)
        return NULL;
    int found;
    size_t i = sfind(m, key, len, h, &found);
    return found ? m->vals[i] : NULL;
}

void *mdp_smap_get(const mdp_smap *m, const char *key, size_t len)
{
    return mdp_smap_get_hashed(m, key, len, mdp_hash_bytes(key, len));
}

static int sgrow(mdp_smap *m)
{
    size_t ncap = m->cap ? m->cap * 2 : 256;
    mdp_smap n = {calloc(ncap, sizeof(char *)), calloc(ncap, sizeof(uint64_t)),
                  calloc(ncap, sizeof(void *)), ncap, m->n};
    if (!n.keys || !n.hashes || !n.vals) {
        free(n.keys);
        free(n.hashes);
        free(n.vals);
        return -1;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->keys[i])
            continue;
        size_t j = m->hashes[i] & (ncap - 1);
        while (n.keys[j])
            j = (j + 1) & (ncap - 1);
        n.keys[j] = m->keys[i];
        n.hashes[j] = m->hashes[i];
        n.vals[j] = m->vals[i];
    }
    free(m->keys);
    free(m->hashes);
    free(m->vals);
    *m = n;
    return 0;
}

int mdp_smap_put(mdp_smap *m, const char *key, size_t len, void *val)
{
    return mdp_smap_put_hashed(m, key, len, mdp_hash_bytes(key, len), val);
}

int mdp_smap_put_hashed(mdp_smap *m, const char *key, size_t len, uint64_t h, void *val)
{
    if ((m->n + 1) * 4 > m->cap * 3 && sgrow(m) != 0)
        return -1;
    int found;
    size_t i = sfind(m, key, len, h, &found);
    if (!found) {
        char *copy = malloc(len + 1);
        if (!copy)
            return -1;
        memcpy(copy, key, len);
        copy[len] = 0;
        m->keys[i] = copy;
        m->hashes[i] = h;
        m->n++;
    }
    m->vals[i] = val;
    return 0;
}

void mdp_smap_each(const mdp_smap *m, void (*fn)(void *payload, const char *key, void *val),
                   void *payload)
{
    for (size_t i = 0; i < m->cap; i++)
        if (m->keys[i])
            fn(payload, m->keys[i], m->vals[i]);
}
