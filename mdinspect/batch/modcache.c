/* mdinspect batch: the module of a line's PATH or MVID, remembered in two
 * small direct-mapped caches in front of the module tables of
 * assemblies.c. A line of a log names one of a few hundred modules, and
 * the tables' lookup (XXH3 of the key, a probe, memcmp through the
 * table's slot) cost more than the rest of a line that names a method met
 * before. Here a lookup is a cheap hash of the key's words, a slot (or its
 * pair), one comparison of the whole key; anything else (a miss, two keys sharing a
 * slot) asks the tables, which stay the truth. The hash need not resist
 * crafted keys: colliding keys only take turns in a slot.
 *
 * The caches' layout, the hash and the lookups a line met again makes are
 * in plain.h (inlined into run.c's loop); here, what fills them.
 *
 * One cache per resolver, so per thread: nothing here is shared. Keys are
 * not copied: a path slot points at the lasting copy the path table keeps,
 * an MVID slot holds its 16 bytes. */
#include "config.h"

#include <string.h>
#include <talloc.h>

#include "batch/batch.h"
#include "batch/parse.h"
#include "batch/plain.h"

mdb_modcache *mdb_modcache_new(void *ctx, mdb_assemblies *a)
{
    mdb_modcache *c = talloc_zero(ctx, mdb_modcache);
    if (c)
        c->a = a;
    return c;
}

mdb_module *mdb_modcache_path(mdb_modcache *c, const char *path, size_t len)
{
    size_t i = mdb_modcache_slot(mdb_path_hash(path, len));
    struct mdb_path_slot *sl = &c->path[i];
    const char *key;
    mdb_module *m;
    if ((m = mdb_modcache_peek_path(c, path, len)))
        return m;
    if (!(m = mdb_module_by_path(c->a, path, len, &key)))
        return NULL;                    /* no such file: the line's answer is cached by its text */
    if (sl->key && !c->path[i ^ 1].key) /* the slot's pair is free (plain.h) */
        sl = &c->path[i ^ 1];
    sl->key = key;
    sl->len = len;
    sl->m = m;
    return m;
}

mdb_module *mdb_modcache_mvid(mdb_modcache *c, const uint8_t mvid[16])
{
    uint64_t lo, hi;
    memcpy(&lo, mvid, 8);
    memcpy(&hi, mvid + 8, 8);
    size_t i = mdb_mvid_index(lo, hi);
    struct mdb_mvid_slot *sl = &c->mvid[i];
    mdb_module *m;
    if ((m = mdb_modcache_peek_mvid(c, mvid)))
        return m;
    if (!(m = mdb_module_by_mvid(c->a, mvid)))
        return NULL;
    if (sl->m && !c->mvid[i ^ 1].m) /* the slot's pair is free (plain.h) */
        sl = &c->mvid[i ^ 1];
    sl->lo = lo;
    sl->hi = hi;
    sl->m = m;
    return m;
}
