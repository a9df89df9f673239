/* mdinspect batch: the hot path of a plain line (`PATH TOKEN`, `MVID
 * TOKEN`) met again, inlined into run.c's loop over a block's lines: the
 * thread's direct-mapped module caches (modcache.c fills them), the frames
 * a module keeps by table and row (resolve_make.c makes them), and the peek
 * that puts the two together. A call per line to each of them cost more
 * than the lookups (bench/README.md, issue 28, branch line6), so they are
 * static inline here, in the one header run.c, modcache.c and resolve.c
 * share for it. */
#ifndef MDINSPECT_BATCH_PLAIN_H
#define MDINSPECT_BATCH_PLAIN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "batch/batch.h"
#include "batch/parse.h"

/* 4096 slots each, in pairs: no three of the 269 files of Mono's framework
 * share a pair */
#define MDB_SLOT_BITS 12

struct mdb_path_slot {
    const char *key; /* the path table's copy; NULL: empty */
    size_t len;
    mdb_module *m;
};

struct mdb_mvid_slot {
    uint64_t lo, hi;
    mdb_module *m; /* NULL: empty */
};

struct mdb_modcache {
    mdb_assemblies *a;
    struct mdb_path_slot path[1u << MDB_SLOT_BITS];
    struct mdb_mvid_slot mvid[1u << MDB_SLOT_BITS];
};

/* Multiplying mixes each word into the high bits, which pick the slot. */
#define MDB_MIX 0x9E3779B97F4A7C15ull
#define MDB_MIX2 0xFF51AFD7ED558CCDull

static inline size_t mdb_modcache_slot(uint64_t h)
{
    return (size_t)(h >> (64 - MDB_SLOT_BITS));
}

/* Paths of one folder differ at their end and paths of two folders in
 * their middle: four words (the first, two from the middle, the last) and
 * the length tell nearly all apart, with multiplications that run side by
 * side. Shorter paths are read in full. */
static inline uint64_t mdb_path_hash(const char *s, size_t n)
{
    uint64_t h = (n + 1) * MDB_MIX;
    if (__builtin_expect(n >= 16, 1)) {
        uint64_t a = mdb_load_le64(s), b = mdb_load_le64(s + n / 2 - 8);
        uint64_t c = mdb_load_le64(s + n / 2), d = mdb_load_le64(s + n - 8);
        return h ^ (a * 0xC2B2AE3D27D4EB4Full + b) * MDB_MIX ^
               (c * 0x165667B19E3779F9ull + d) * MDB_MIX2;
    }
    if (n >= 8)
        return (h ^ mdb_load_le64(s) * MDB_MIX2 ^ mdb_load_le64(s + n - 8)) * MDB_MIX;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * MDB_MIX;
    return h;
}

/* Whether n bytes at a and b are equal: sixteen at a time, the last
 * sixteen overlapping, within the n bytes (a path of a line is 30-80
 * bytes: libc's memcmp cost its call and its dispatch on every line). */
static inline bool mdb_same_bytes(const char *a, const char *b, size_t n)
{
#ifdef MDB_HEX_SSE2
    if (n >= 16) {
        size_t i = 0;
        for (; i + 16 < n; i += 16)
            if (_mm_movemask_epi8(_mm_cmpeq_epi8(
                    _mm_loadu_si128((const __m128i *)(const void *)(a + i)),
                    _mm_loadu_si128((const __m128i *)(const void *)(b + i)))) != 0xFFFF)
                return false;
        return _mm_movemask_epi8(_mm_cmpeq_epi8(
                   _mm_loadu_si128((const __m128i *)(const void *)(a + n - 16)),
                   _mm_loadu_si128((const __m128i *)(const void *)(b + n - 16)))) == 0xFFFF;
    }
#endif
    return memcmp(a, b, n) == 0;
}

/* Whether a path slot holds this path. */
static inline bool mdb_path_slot_is(const struct mdb_path_slot *sl, const char *path, size_t len)
{
    return sl->key && sl->len == len && mdb_same_bytes(sl->key, path, len);
}

/* The module of a path from the cache alone: NULL when it does not hold
 * the path. A key lives in its slot or the slot's pair (the index with its
 * low bit flipped): two of a few hundred paths share a slot now and then,
 * and with one slot each they took turns in it, line after line, every
 * turn a miss (20,954 misses in 10^6 lines over the 129 modules of the
 * framework; with pairs of 1024 slots, 14,052: three paths in one pair). */
static inline mdb_module *mdb_modcache_peek_path(const mdb_modcache *c, const char *path,
                                                 size_t len)
{
    size_t i = mdb_modcache_slot(mdb_path_hash(path, len));
    if (mdb_path_slot_is(&c->path[i], path, len))
        return c->path[i].m;
    return mdb_path_slot_is(&c->path[i ^ 1], path, len) ? c->path[i ^ 1].m : NULL;
}

static inline size_t mdb_mvid_index(uint64_t lo, uint64_t hi)
{
    return mdb_modcache_slot((lo ^ hi * MDB_MIX) * MDB_MIX);
}

static inline mdb_module *mdb_modcache_peek_mvid(const mdb_modcache *c, const uint8_t mvid[16])
{
    uint64_t lo, hi;
    memcpy(&lo, mvid, 8);
    memcpy(&hi, mvid + 8, 8);
    size_t i = mdb_mvid_index(lo, hi);
    const struct mdb_mvid_slot *sl = &c->mvid[i], *pair = &c->mvid[i ^ 1];
    if (sl->m && sl->lo == lo && sl->hi == hi)
        return sl->m;
    return pair->m && pair->lo == lo && pair->hi == hi ? pair->m : NULL; /* as for paths */
}

/* The frame a module keeps for a row, or NULL; asked for, not read. */
static inline const mdb_frame *mdb_kept_frame(const mdb_module *m, uint32_t token)
{
    unsigned table = MDT_TOKEN_TABLE(token);
    uint32_t rid = MDT_TOKEN_RID(token);
    const mdb_rowframes *a;
    const mdb_frame *f;
    if (table < MDT_TABLE_MAX &&
        (a = atomic_load_explicit(&m->frames[table], memory_order_acquire)) && rid - 1u < a->rows &&
        (f = atomic_load_explicit(&a->f[rid], memory_order_acquire))) {
        mdb_frame_prefetch(f);
        return f;
    }
    return NULL;
}

/* The frame of a plain `PATH TOKEN` or `MVID TOKEN` line when this thread
 * met its module and another line named its row before, else NULL; *mp
 * gets the module when the thread met it open (the row's frame may then be
 * made at once: mdb_resolve_plain_row), else NULL, and *tok the token.
 * Changes nothing (no module is looked for or opened, no frame made) and
 * does not read the frame, only asks for it (mdb_frame_prefetch): run.c
 * looks a few lines ahead this way, so that their frames arrive from
 * memory together. */
static inline const mdb_frame *mdb_peek_plain(const mdb_modcache *c, const char *s, size_t n,
                                              mdb_module **mp, uint32_t *tok)
{
    uint8_t mvid[16];
    mdb_module *m;
    *mp = NULL;
    /* What record.c takes for a PATH line, ending in a token of 8 digits */
    if ((s[0] == '/' || s[0] == '.') && n > 11 && s[n - 11] == ' ' &&
        mdb_parse_hex32(s + n - 10, 10, false, tok))
        m = mdb_modcache_peek_path(c, s, n - 11);
    /* ... and for an MVID line */
    else if (n == 43 && s[32] == ' ' && mdb_parse_mvid(s, 32, mvid) &&
             mdb_parse_hex32(s + 33, 10, false, tok))
        m = mdb_modcache_peek_mvid(c, mvid);
    else
        return NULL;
    if (!m || atomic_load_explicit(&m->state, memory_order_acquire) != MDB_MOD_OPEN)
        return NULL;
    *mp = m;
    return mdb_kept_frame(m, *tok);
}

/* resolve.c: the frame of a plain line whose module mdb_peek_plain found
 * open but whose row's frame it did not: made and kept by the module, as
 * mdb_record_parse would make it; NULL when the row is not one a module
 * keeps (no such row, a table that names nothing, the modules' share of
 * the budget full): the line then goes through mdb_record_parse. */
const mdb_frame *mdb_resolve_plain_row(mdb_resolver *r, mdb_module *m, uint32_t token);
/* Ask for what naming the row of a line met for the first time will read
 * (mdt_token_name_prefetch, `step` 0 then 1, with this thread's type name
 * cache of the module): run.c does it for the lines it looks at ahead. */
void mdb_resolver_prefetch(const mdb_resolver *r, const mdb_module *m, uint32_t token,
                           unsigned step);
/* The thread's module caches (for mdb_peek_plain). */
const mdb_modcache *mdb_resolver_modcache(const mdb_resolver *r);

#endif
