/* mdinspect batch: the module of a line's PATH or MVID, remembered in two
 * small direct-mapped caches in front of the module tables of
 * assemblies.c. A line of a log names one of a few hundred modules, and
 * the tables' lookup (XXH3 of the key, a probe, memcmp through the
 * table's slot) cost more than the rest of a line that names a method met
 * before. Here a lookup is a cheap hash of the key's words, one slot, one
 * comparison of the whole key; anything else (a miss, two keys sharing a
 * slot) asks the tables, which stay the truth. The hash need not resist
 * crafted keys: colliding keys only take turns in a slot.
 *
 * One cache per resolver, so per thread: nothing here is shared. Keys are
 * not copied: a path slot points at the lasting copy the path table keeps,
 * an MVID slot holds its 16 bytes. */
#include "config.h"

#include <string.h>
#include <talloc.h>

#include "batch/batch.h"
#include "batch/parse.h"

#define SLOT_BITS 10 /* 1024 slots each: a few hundred modules rarely share one */

struct path_slot {
    const char *key; /* the path table's copy; NULL: empty */
    size_t len;
    mdb_module *m;
};

struct mvid_slot {
    uint64_t lo, hi;
    mdb_module *m; /* NULL: empty */
};

struct mdb_modcache {
    mdb_assemblies *a;
    struct path_slot path[1u << SLOT_BITS];
    struct mvid_slot mvid[1u << SLOT_BITS];
};

mdb_modcache *mdb_modcache_new(void *ctx, mdb_assemblies *a)
{
    mdb_modcache *c = talloc_zero(ctx, mdb_modcache);
    if (c)
        c->a = a;
    return c;
}

/* Multiplying mixes each word into the high bits, which pick the slot. */
#define K 0x9E3779B97F4A7C15ull
#define K2 0xFF51AFD7ED558CCDull

static size_t slot_of(uint64_t h)
{
    return (size_t)(h >> (64 - SLOT_BITS));
}

/* Paths of one folder differ at their end and paths of two folders in
 * their middle: four words (the first, two from the middle, the last) and
 * the length tell nearly all apart, with multiplications that run side by
 * side. Shorter paths are read in full. */
static uint64_t path_hash(const char *s, size_t n)
{
    uint64_t h = (n + 1) * K;
    if (n >= 16) {
        uint64_t a = mdb_load_le64(s), b = mdb_load_le64(s + n / 2 - 8);
        uint64_t c = mdb_load_le64(s + n / 2), d = mdb_load_le64(s + n - 8);
        return h ^ (a * 0xC2B2AE3D27D4EB4Full + b) * K ^ (c * 0x165667B19E3779F9ull + d) * K2;
    }
    if (n >= 8)
        return (h ^ mdb_load_le64(s) * K2 ^ mdb_load_le64(s + n - 8)) * K;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * K;
    return h;
}

mdb_module *mdb_modcache_peek_path(const mdb_modcache *c, const char *path, size_t len)
{
    const struct path_slot *sl = &c->path[slot_of(path_hash(path, len))];
    return sl->key && sl->len == len && memcmp(sl->key, path, len) == 0 ? sl->m : NULL;
}

mdb_module *mdb_modcache_path(mdb_modcache *c, const char *path, size_t len)
{
    struct path_slot *sl = &c->path[slot_of(path_hash(path, len))];
    const char *key;
    mdb_module *m;
    if (sl->key && sl->len == len && memcmp(sl->key, path, len) == 0)
        return sl->m;
    if (!(m = mdb_module_by_path(c->a, path, len, &key)))
        return NULL; /* no such file: the line's answer is cached by its text */
    sl->key = key;
    sl->len = len;
    sl->m = m;
    return m;
}

static size_t mvid_index(uint64_t lo, uint64_t hi)
{
    return slot_of((lo ^ hi * K) * K);
}

mdb_module *mdb_modcache_peek_mvid(const mdb_modcache *c, const uint8_t mvid[16])
{
    uint64_t lo, hi;
    memcpy(&lo, mvid, 8);
    memcpy(&hi, mvid + 8, 8);
    const struct mvid_slot *sl = &c->mvid[mvid_index(lo, hi)];
    return sl->m && sl->lo == lo && sl->hi == hi ? sl->m : NULL;
}

mdb_module *mdb_modcache_mvid(mdb_modcache *c, const uint8_t mvid[16])
{
    uint64_t lo, hi;
    memcpy(&lo, mvid, 8);
    memcpy(&hi, mvid + 8, 8);
    struct mvid_slot *sl = &c->mvid[mvid_index(lo, hi)];
    mdb_module *m;
    if (sl->m && sl->lo == lo && sl->hi == hi)
        return sl->m;
    if (!(m = mdb_module_by_mvid(c->a, mvid)))
        return NULL;
    sl->lo = lo;
    sl->hi = hi;
    sl->m = m;
    return m;
}
