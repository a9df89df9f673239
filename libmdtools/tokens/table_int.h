/* Slot tables (table.c): open addressing with linear probing, slots stored
 * inline, a key written once and never moved inside a table instance, dead
 * records kept in place as tombstones; growth and retire build a new
 * instance that the writer publishes with one store. Every slot starts with
 * the same head, whose seqlock and meta byte every record kind shares. The
 * index tables of index.c and presence.c are allocated here too. */
#ifndef MDT_TOKENS_TABLE_INT_H
#define MDT_TOKENS_TABLE_INT_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tokens/base_int.h"

/* Longest probe sequence a table may hold; an insert that would need more
 * grows the table first. It bounds every reader's steps. */
#define IDM_MAX_PROBE 512u

/* ---- the slot head -------------------------------------------------------- */

/* The meta byte, the top byte of a slot's word `w` (the rest of `w` is the
 * record kind's; records_int.h). All bits are listed here so that no two
 * units take the same one. */
#define W_META_SHIFT 56

#define META_LIVE 0x1u
/* Writer only: something outside the tables depends on this record (code
 * ranges on a function): the core tells the parts that watch (struct
 * idm_part_ops) when it dies or changes incarnation. */
#define META_WATCHED 0x2u
#define META_OOL 0x4u /* x points to a struct idm_args (records_int.h) */
#define META_ARG 0x8u /* classes: x is the one type argument */
#define META_SHAPE_SHIFT 4
#define META_NEWER 0x80u /* writer only: seq > gen, kept in the map's `newer` */

/* The head every slot starts with. `key` is set once (0 = empty) and never
 * changes in a table instance. `gv` is the generation shifted left by one,
 * odd while a writer rewrites the payload (the seqlock): a live record's gen
 * is the seq that created the incarnation, a dead record's the seq of its
 * unload (the tombstone's seq). `w` packs the meta byte with the payload
 * (W_* in records_int.h; modules use only the meta byte). A live record's
 * newest applied seq is its gen, or, with META_NEWER, the map's `newer`
 * entry (writer.c). */
struct idm_head {
    _Atomic uintptr_t key;
    _Atomic uint64_t gv;
    _Atomic uint64_t w;
};

static inline unsigned idm_meta(const struct idm_head *h)
{
    return (unsigned)(atomic_load_explicit(&((struct idm_head *)h)->w, memory_order_relaxed) >>
                      W_META_SHIFT);
}

/* Writer: replace the meta byte (one store: readers see either byte). */
static inline void idm_set_meta(struct idm_head *h, unsigned meta)
{
    uint64_t w = atomic_load_explicit(&h->w, memory_order_relaxed);
    w = (w & ~((uint64_t)0xff << W_META_SHIFT)) | (uint64_t)(meta & 0xffu) << W_META_SHIFT;
    atomic_store_explicit(&h->w, w, memory_order_relaxed);
}

static inline bool idm_live(const struct idm_head *h)
{
    return idm_meta(h) & META_LIVE;
}

/* Writer: is slot h occupied by a live record? */
static inline bool idm_slot_live(const struct idm_head *h)
{
    return atomic_load_explicit(&((struct idm_head *)h)->key, memory_order_relaxed) && idm_live(h);
}

/* Writer: the generation field (gen of a live record, seq of a dead one). */
static inline uint64_t idm_gen(const struct idm_head *h)
{
    return atomic_load_explicit(&((struct idm_head *)h)->gv, memory_order_relaxed) >> 1;
}

/* Writer side of the seqlock (records.c has the readers' side): begin
 * makes gv odd before a rewrite of several words, end publishes the new
 * generation. */
void idm_slot_begin(struct idm_head *h);
void idm_slot_end(struct idm_head *h, uint64_t gen);

/* ---- tables ---------------------------------------------------------------- */

/* Table and index headers: what readers load on every lookup, then, IDM_SEP
 * bytes further, the counters the writer updates on every call, so that
 * those updates never disturb the readers' copy. */
#define IDM_HDR (2u * IDM_SEP)

struct idm_tab {
    size_t cap; /* slots; any multiple of IDM_CAP_STEP (table.c) */
    size_t slot_size;
    unsigned char *slots;
    size_t bytes; /* allocation size */
    /* writer only */
    alignas(IDM_SEP) size_t used; /* occupied slots (live + dead) */
    size_t live;
};

/* Home slot of hash h in a table of cap slots: the top 32 bits of h scaled
 * to [0, cap) by one multiplication (cap <= IDM_MAX_SLOTS), so capacities
 * need not be powers of two (table.c says why they are not). The reverse
 * index takes its tags from the low bits (index.c), which this leaves
 * alone. */
static inline size_t idm_home(uint64_t h, size_t cap)
{
    return (size_t)(((h >> 32) * (uint64_t)cap) >> 32);
}

static inline size_t idm_next(size_t i, size_t cap)
{
    return ++i == cap ? 0 : i;
}

/* Would one more occupied slot take a table of cap slots past 4/5 load? */
static inline bool idm_over(size_t used, size_t cap)
{
    return (used + 1) * 5 > cap * 4;
}

/* A zeroed table of cap slots of slot_size bytes, or NULL. */
struct idm_tab *idm_tab_new(size_t cap, size_t slot_size);
static inline struct idm_head *idm_slot(const struct idm_tab *t, size_t i)
{
    return (struct idm_head *)(t->slots + i * t->slot_size);
}

/* Reader (and writer): the slot holding key, or NULL, in a table of
 * slot_size-byte slots. Inline: it is most of a lookup, and the fewer
 * instructions a lookup has, the more consecutive lookups' cache misses the
 * CPU keeps in flight. The header is read once, before the first acquire
 * load (which would make the compiler re-read it on every probe), and a
 * constant slot_size makes the slot address a shift. No bound below
 * IDM_MAX_PROBE is needed for small tables: a probe that wraps around
 * only visits slots again. */
IDM_INLINE struct idm_head *idm_tab_find_sz(const struct idm_tab *t, uintptr_t key,
                                            size_t slot_size)
{
    size_t cap = t->cap, i = idm_home(idm_hash(key), cap);
    unsigned char *slots = t->slots;
    for (unsigned n = 0; n < IDM_MAX_PROBE; n++, i = idm_next(i, cap)) {
        struct idm_head *h = (struct idm_head *)(slots + i * slot_size);
        uintptr_t k = atomic_load_explicit(&h->key, memory_order_acquire);
        if (k == key)
            return h;
        if (k == 0)
            return NULL;
    }
    return NULL;
}

IDM_INLINE struct idm_head *idm_tab_find(const struct idm_tab *t, uintptr_t key)
{
    return idm_tab_find_sz(t, key, t->slot_size);
}

/* The index of slot h in table t. */
static inline size_t idm_slot_index(const struct idm_tab *t, const struct idm_head *h)
{
    return (size_t)((const unsigned char *)h - t->slots) / t->slot_size;
}
/* Writer: the slot holding key, or the empty slot where it would go (*fresh
 * set), or NULL when the table must grow first. */
struct idm_head *idm_tab_place(struct idm_tab *t, uintptr_t key, bool *fresh);
/* Writer: a copy of t with capacity cap (grown until every kept record
 * fits its probe bound), without dead records whose seq is below `below`. */
struct idm_tab *idm_tab_rebuild(const struct idm_tab *t, size_t cap, uint64_t below);
/* Capacity that holds n records below the load limit; the next capacity up. */
size_t idm_cap_for(size_t n);
size_t idm_cap_grow(size_t cap);
#define IDM_CAP_STEP 64u
/* No table has more slots (a reverse-index word holds a slot index). */
#define IDM_MAX_SLOTS (UINT32_C(1) << 31)

/* ---- index tables ----------------------------------------------------------- */

/* An index over a forward table: words of slot_size bytes (the reverse
 * indexes of index.c, the presence index of presence.c), laid out as a
 * struct idm_tab is. */
struct idm_itab {
    size_t cap;
    size_t slot_size;
    unsigned char *slots;
    size_t bytes;
    struct idm_tab *tab; /* reverse indexes: the forward table they index */
    /* writer only */
    alignas(IDM_SEP) size_t used; /* occupied slots, deleted ones included */
    size_t live;
};

/* A zeroed index table, or NULL. */
struct idm_itab *idm_itab_new(size_t cap, size_t slot_size);

#endif
