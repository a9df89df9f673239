/* mdinspect batch: the arena and the hash table behind every cache (paths,
 * MVIDs, frames, stacks). Keys are hashed with xxHash (XXH3, 64 bits) and
 * kept in an open-addressing table with linear probing, grown at 1/2 load;
 * a lookup is one hash, usually one probe and one memcmp, and allocates
 * nothing. Keys and cached records live in arenas: a cache is freed all at
 * once, never entry by entry. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include "config.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <talloc.h>
#include <xxhash.h>

#include "batch/batch.h"

#define CHUNK (1u << 20)
#define HUGE_CHUNK ((size_t)2 << 20) /* one huge page */

void mdb_arena_init(mdb_arena *a, void *ctx)
{
    a->ctx = talloc_new(ctx);
    a->p = NULL;
    a->left = 0;
    a->huge = false;
    a->bytes = 0;
    a->shared = NULL;
}

struct huge {
    void *p;
};

static int unmap(struct huge *h)
{
    munmap(h->p, HUGE_CHUNK);
    return 0;
}

/* A chunk of HUGE_CHUNK bytes on a huge-page boundary, which the kernel
 * may back with one huge page (madvise; MADV_HUGEPAGE is only advice).
 * Frames met again are read at random over tens of megabytes: with small
 * pages each such read tends to miss the TLB as well as the caches, and
 * each 4 KiB of a new chunk costs a page fault. NULL when none is had. */
static char *huge_chunk(void *ctx)
{
    struct huge *h = talloc(ctx, struct huge);
    char *m, *p;
    if (!h)
        return NULL;
    m = mmap(NULL, 2 * HUGE_CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        talloc_free(h);
        return NULL;
    }
    p = (char *)(((uintptr_t)m + HUGE_CHUNK - 1) & ~(uintptr_t)(HUGE_CHUNK - 1));
    if (p > m)
        munmap(m, (size_t)(p - m));
    munmap(p + HUGE_CHUNK, (size_t)(m + 2 * HUGE_CHUNK - (p + HUGE_CHUNK)));
#ifdef MADV_HUGEPAGE
    madvise(p, HUGE_CHUNK, MADV_HUGEPAGE);
#endif
    h->p = p;
    talloc_set_destructor(h, unmap);
    return p;
}

void *mdb_arena_alloc(mdb_arena *a, size_t n)
{
    n = (n + 7) & ~(size_t)7;
    if (n > a->left) {
        size_t size = n > CHUNK / 4 ? n : a->huge ? HUGE_CHUNK : CHUNK;
        char *c = !a->ctx                         ? NULL
                  : size == HUGE_CHUNK && a->huge ? huge_chunk(a->ctx)
                                                  : talloc_size(a->ctx, size);
        if (!c && size == HUGE_CHUNK) /* no mapping: an ordinary chunk */
            c = a->ctx ? talloc_size(a->ctx, size = CHUNK) : NULL;
        if (!c)
            return NULL;
        a->bytes += size;
        if (a->shared)
            atomic_fetch_add_explicit(a->shared, size, memory_order_relaxed);
        if (size == n) /* a large block of its own: keep the current chunk */
            return c;
        a->p = c;
        a->left = size;
    }
    void *r = a->p;
    a->p += n;
    a->left -= n;
    return r;
}

void *mdb_arena_room(mdb_arena *a, size_t n)
{
    void *p;
    n = (n + 7) & ~(size_t)7;
    if (n > CHUNK / 4)
        return NULL;
    if (n > a->left) { /* a new chunk, whose start the next alloc returns */
        if (!(p = mdb_arena_alloc(a, n)))
            return NULL;
        a->p = p;
        a->left += n;
    }
    return a->p;
}

char *mdb_arena_strndup(mdb_arena *a, const char *s, size_t n)
{
    char *d = mdb_arena_alloc(a, n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

void mdb_arena_reset(mdb_arena *a)
{
    void *parent = talloc_parent(a->ctx);
    bool huge = a->huge;
    _Atomic size_t *shared = a->shared;
    if (shared)
        atomic_fetch_sub_explicit(shared, a->bytes, memory_order_relaxed);
    talloc_free(a->ctx);
    mdb_arena_init(a, parent);
    a->huge = huge;
    a->shared = shared;
}

uint64_t mdb_hash(const void *key, size_t len)
{
    return XXH3_64bits(key, len);
}

int mdb_table_init(mdb_table *t, void *ctx, size_t size_hint)
{
    size_t n = 64;
    while (n < size_hint * 2)
        n *= 2;
    t->ctx = ctx;
    t->slots = talloc_zero_array(ctx, mdb_slot, n);
    t->mask = n - 1;
    t->n = 0;
    mdb_arena_init(&t->keys, ctx);
    return t->slots && t->keys.ctx ? 0 : -1;
}

const mdb_slot *mdb_table_slot(const mdb_table *t, uint64_t hash, const void *key, size_t len)
{
    for (size_t i = hash & t->mask;; i = (i + 1) & t->mask) {
        const mdb_slot *s = &t->slots[i];
        if (!s->key)
            return NULL;
        if (s->hash == hash && s->len == len && memcmp(s->key, key, len) == 0)
            return s;
    }
}

void *mdb_table_get(const mdb_table *t, uint64_t hash, const void *key, size_t len)
{
    const mdb_slot *s = mdb_table_slot(t, hash, key, len);
    return s ? s->value : NULL;
}

static void insert(mdb_slot *slots, size_t mask, const mdb_slot *e)
{
    size_t i = e->hash & mask;
    while (slots[i].key)
        i = (i + 1) & mask;
    slots[i] = *e;
}

int mdb_table_put(mdb_table *t, uint64_t hash, const void *key, size_t len, void *value)
{
    mdb_slot e;
    if ((t->n + 1) * 2 > t->mask + 1) {
        size_t n = (t->mask + 1) * 2;
        mdb_slot *slots = talloc_zero_array(t->ctx, mdb_slot, n);
        if (!slots)
            return -1;
        for (size_t i = 0; i <= t->mask; i++)
            if (t->slots[i].key)
                insert(slots, n - 1, &t->slots[i]);
        talloc_free(t->slots);
        t->slots = slots;
        t->mask = n - 1;
    }
    e.hash = hash;
    e.len = (uint32_t)len;
    e.value = value;
    if (!(e.key = mdb_arena_alloc(&t->keys, len ? len : 1)))
        return -1;
    memcpy((char *)e.key, key, len);
    insert(t->slots, t->mask, &e);
    t->n++;
    return 0;
}

size_t mdb_table_bytes(const mdb_table *t)
{
    return (t->mask + 1) * sizeof *t->slots + t->keys.bytes;
}

int mdb_table_reset(mdb_table *t)
{
    mdb_slot *slots = talloc_zero_array(t->ctx, mdb_slot, 2048);
    if (!slots)
        return -1;
    talloc_free(t->slots);
    t->slots = slots;
    t->mask = 2047;
    t->n = 0;
    mdb_arena_reset(&t->keys);
    return 0;
}

void mdb_table_clear(mdb_table *t)
{
    memset(t->slots, 0, (t->mask + 1) * sizeof *t->slots);
    t->n = 0;
    mdb_arena_reset(&t->keys);
}

/* ------------------------------------------------------------ the budget */

/* The memory limit of this process's cgroup (v2 memory.max, or v1's
 * limit_in_bytes), or 0 when there is none. */
static uint64_t cgroup_limit(void)
{
    static const char *const files[] = {"/sys/fs/cgroup/memory.max",
                                        "/sys/fs/cgroup/memory/memory.limit_in_bytes"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char why[80], *text, *end;
        size_t len;
        unsigned long long v;
        if (!(text = mdb_read_small_file(NULL, files[i], 64, &len, why, sizeof why)))
            continue;
        v = strtoull(text, &end, 10);
        bool ok = end != text && (*end == '\n' || *end == '\0');
        talloc_free(text);
        if (ok && v > 0)
            return v;
    }
    return 0;
}

size_t mdb_default_cache_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
    uint64_t ram = pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : 0;
    uint64_t limit = cgroup_limit(), b;
    if (limit && (!ram || limit < ram))
        ram = limit;
    b = ram / 8;
    if (b < ((uint64_t)64 << 20))
        b = (uint64_t)64 << 20;
    if (b > ((uint64_t)4 << 30))
        b = (uint64_t)4 << 30;
    return b > SIZE_MAX / 2 ? SIZE_MAX / 2 : (size_t)b;
}

void mdb_budget_init(mdb_budget *b, size_t total, unsigned threads)
{
    b->total = total;
    b->kept_max = total / 2;
    atomic_init(&b->kept, 0);
    b->thread_max = total / 2 / (threads ? threads : 1);
}
