/* Open-addressing tables shared by the module, class and function maps:
 * linear probing, at most IDM_MAX_PROBE slots
 * visited, slots stored inline (32 bytes for classes and functions, two to
 * a cache line; 128 for modules). A key is written once into a slot of a table instance and
 * never moves or leaves it, so a reader that found its key can trust the
 * position; records die in place (a tombstone) and are dropped only when
 * the writer rebuilds the table into a new instance and publishes it. The
 * writer grows at 4/5 load or when a probe would exceed the bound.
 *
 * Capacities are multiples of IDM_CAP_STEP, not powers of two, and a table
 * grows by a quarter, not twofold: with doubling the load of a table
 * swings between 3/8 and 3/4, so a map of 10^6 classes could sit at 0.48
 * and spend 67 bytes per 32-byte record; growing by a quarter keeps it
 * between 0.64 and 0.8 (40-50 bytes). The price is a multiplication to
 * find a home slot (idm_home) and more frequent rebuilds: every record is
 * copied about four times over the table's growth instead of once, off the
 * readers' path (bench/idmap/README.md). */
#define _DEFAULT_SOURCE /* posix_memalign */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "tokens/base_int.h"
#include "tokens/table_int.h"

static size_t round_step(size_t n)
{
    return (n + IDM_CAP_STEP - 1) / IDM_CAP_STEP * IDM_CAP_STEP;
}

size_t idm_cap_for(size_t n)
{
    size_t cap = round_step(n + n / 4 + 1);
    return cap < IDM_CAP_STEP ? IDM_CAP_STEP : cap;
}

size_t idm_cap_grow(size_t cap)
{
    return round_step(cap + cap / 4 + 1);
}

/* One allocation: a header of two cache lines holding the table struct
 * (table_int.h), then the slots, so that retiring a table is one free.
 *
 * A table of several megabytes is read at random, one line per lookup; with
 * 4 KiB pages nearly every such lookup also misses the TLB and walks the
 * page tables, which cost the lookup by ID about 40% of its time at
 * 10^6 classes (bench/idmap/README.md). Such tables are therefore aligned
 * to 2 MiB and advised for transparent huge pages. Only whole huge pages
 * are advised, so the header's spill past the last one stays in small
 * pages instead of taking a further 2 MiB. The advice is a hint: where THP
 * is off or the kernel refuses it, nothing changes. It is given before
 * the memset, so the pages are huge from their first touch (by the writer;
 * readers only see the table once it is published). */
#define IDM_HUGE ((size_t)2 << 20)
#define IDM_HUGE_MIN ((size_t)8 << 20)

static void *alloc_table(size_t cap, size_t slot_size, size_t *bytes)
{
    if (cap > IDM_MAX_SLOTS)
        return NULL;
    size_t sz = IDM_HDR + cap * slot_size;
    size_t align = sz >= IDM_HUGE_MIN ? IDM_HUGE : IDM_SEP;
    void *mem;
    /* posix_memalign: aligned_alloc wants a size that is a multiple of the
     * alignment (sanitizers enforce it), which would round a table up by
     * as much as a huge page. */
    if (posix_memalign(&mem, align, sz) != 0)
        return NULL;
    unsigned char *p = mem;
#ifdef MADV_HUGEPAGE
    if (align == IDM_HUGE)
        (void)madvise(p, sz & ~(IDM_HUGE - 1), MADV_HUGEPAGE);
#endif
    memset(p, 0, sz);
    *bytes = sz;
    return p;
}

struct idm_tab *idm_tab_new(size_t cap, size_t slot_size)
{
    size_t bytes;
    struct idm_tab *t = alloc_table(cap, slot_size, &bytes);
    _Static_assert(sizeof(struct idm_tab) <= IDM_HDR, "table header fits its lines");
    if (!t)
        return NULL;
    t->slots = (unsigned char *)t + IDM_HDR;
    t->cap = cap;
    t->slot_size = slot_size;
    t->bytes = bytes;
    return t;
}

struct idm_head *idm_tab_place(struct idm_tab *t, uintptr_t key, bool *fresh)
{
    size_t i = idm_home(idm_hash(key), t->cap);
    for (unsigned n = 0; n < IDM_MAX_PROBE && n < t->cap; n++) {
        struct idm_head *h = idm_slot(t, i);
        uintptr_t k = atomic_load_explicit(&h->key, memory_order_relaxed);
        if (k == key) {
            *fresh = false;
            return h;
        }
        if (k == 0) {
            if (idm_over(t->used, t->cap))
                return NULL;
            *fresh = true;
            return h;
        }
        i = idm_next(i, t->cap);
    }
    return NULL;
}

struct idm_tab *idm_tab_rebuild(const struct idm_tab *t, size_t cap, uint64_t below)
{
    for (;;) {
        struct idm_tab *n = idm_tab_new(cap, t->slot_size);
        bool ok = true;
        if (!n)
            return NULL;
        for (size_t i = 0; i < t->cap && ok; i++) {
            struct idm_head *h = idm_slot(t, i);
            uintptr_t k = atomic_load_explicit(&h->key, memory_order_relaxed);
            if (k == 0)
                continue;
            bool live = idm_live(h);
            if (!live && idm_gen(h) < below)
                continue;
            size_t j = idm_home(idm_hash(k), n->cap);
            unsigned probe = 0;
            while (atomic_load_explicit(&idm_slot(n, j)->key, memory_order_relaxed) != 0) {
                j = idm_next(j, n->cap);
                if (++probe >= IDM_MAX_PROBE) {
                    ok = false;
                    break;
                }
            }
            if (!ok)
                break;
            /* The new table is private until published; the old slot is
             * stable because only the writer changes it. */
            memcpy((void *)idm_slot(n, j), (const void *)h, t->slot_size);
            n->used++;
            if (live)
                n->live++;
        }
        if (ok)
            return n;
        free(n);
        cap = idm_cap_grow(cap);
    }
}

/* idm_tab_new's twin: the index's header is its own type (it also names
 * the forward table), so the four shared fields are set here by name. */
struct idm_itab *idm_itab_new(size_t cap, size_t slot_size)
{
    size_t bytes;
    struct idm_itab *t = alloc_table(cap, slot_size, &bytes);
    _Static_assert(sizeof(struct idm_itab) <= IDM_HDR, "index header fits its lines");
    if (!t)
        return NULL;
    t->slots = (unsigned char *)t + IDM_HDR;
    t->cap = cap;
    t->slot_size = slot_size;
    t->bytes = bytes;
    return t;
}

/* The writer's side of the seqlock in every slot head (records.c has the
 * readers'). */
void idm_slot_begin(struct idm_head *h)
{
    uint64_t v = atomic_load_explicit(&h->gv, memory_order_relaxed);
    atomic_store_explicit(&h->gv, v | 1u, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
}

void idm_slot_end(struct idm_head *h, uint64_t gen)
{
    atomic_store_explicit(&h->gv, gen << 1, memory_order_release);
}
