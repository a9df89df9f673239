/* Code ranges [start, end) -> function incarnation, for sampling profilers
 * that hold an instruction pointer. Ranges are disjoint and kept sorted in
 * immutable chunks of at most IDM_CHUNK_MAX, under a top array of chunk
 * pointers and their first start addresses (keys[i] == first start of chunk
 * i for i > 0; keys[0] == 0; no chunk is empty). A reader binary-searches
 * the keys, then the chunk: two short searches, no lock. An insert copies
 * one chunk (copy-on-write) and swaps its pointer in place, or splits it and
 * publishes a new top; removals that would break the key invariant, overlap
 * replacement and the purge of dead functions' ranges rebuild everything
 * (rare: unloads, code reuse). Replaced chunks and tops go through the grace
 * period. A range belongs to one function incarnation (fid, gen) and is
 * dropped when that incarnation dies. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "tokens/idmap_int.h"
#include "util/error.h"

static struct idm_rtop *top_new(size_t n)
{
    size_t bytes = sizeof(struct idm_rtop) + n * (sizeof(uintptr_t) + sizeof(void *));
    struct idm_rtop *t = calloc(1, bytes);
    if (!t)
        return NULL;
    t->n = n;
    t->bytes = bytes;
    t->keys = (uintptr_t *)(t + 1);
    t->chunks = (_Atomic(struct idm_chunk *) *)(t->keys + n);
    return t;
}

static size_t chunk_bytes(size_t n)
{
    return sizeof(struct idm_chunk) + n * sizeof(struct idm_range);
}

static struct idm_chunk *chunk_new(size_t n)
{
    struct idm_chunk *c = malloc(chunk_bytes(n));
    if (c)
        c->n = n;
    return c;
}

static struct idm_chunk *chunk_at(const struct idm_rtop *t, size_t i)
{
    return atomic_load_explicit(&t->chunks[i], memory_order_seq_cst);
}

/* Greatest i with keys[i] <= x (keys[0] == 0). */
static size_t find_chunk(const struct idm_rtop *t, uintptr_t x)
{
    size_t lo = 0, hi = t->n;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->keys[mid] <= x)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* Number of ranges in c with start <= x. */
static size_t upper(const struct idm_chunk *c, uintptr_t x)
{
    size_t lo = 0, hi = c->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->r[mid].start <= x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int mdt_idmap_ip_lookup(const mdt_idmap *map, mdt_idmap_code_range *out, uintptr_t ip)
{
    if (!map || !out)
        return MDT_EINVAL;
    int rc = MDT_ENOTFOUND;
    unsigned tok = idm_enter(&map->g);
    const struct idm_rtop *t =
        atomic_load_explicit(&((mdt_idmap *)map)->ranges, memory_order_seq_cst);
    if (t && t->n) {
        const struct idm_chunk *c = chunk_at(t, find_chunk(t, ip));
        size_t j = upper(c, ip);
        if (j > 0 && ip < c->r[j - 1].end) {
            const struct idm_range *r = &c->r[j - 1];
            out->start = r->start;
            out->size = r->end - r->start;
            out->function_id = r->fid;
            out->function_gen = r->gen;
            rc = 0;
        }
    }
    idm_leave(&map->g, tok);
    return rc;
}

/* ---- writer ------------------------------------------------------------- */

static void retire_all(mdt_idmap *m, struct idm_rtop *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++) {
        struct idm_chunk *c = atomic_load_explicit(&t->chunks[i], memory_order_relaxed);
        idm_retire(&m->g, c, chunk_bytes(c->n));
    }
    idm_retire(&m->g, t, t->bytes);
}

/* Publish a new structure holding ranges r[0..n) (sorted, disjoint). */
static int rebuild_from(mdt_idmap *m, const struct idm_range *r, size_t n)
{
    const size_t fill = IDM_CHUNK_MAX * 3 / 4;
    size_t nchunks = n ? (n + fill - 1) / fill : 0;
    struct idm_rtop *t = top_new(nchunks);
    if (!t)
        return MDT_ENOMEM;
    for (size_t i = 0; i < nchunks; i++) {
        size_t from = i * fill, cnt = n - from < fill ? n - from : fill;
        struct idm_chunk *c = chunk_new(cnt);
        if (!c) {
            for (size_t j = 0; j < i; j++)
                free(atomic_load_explicit(&t->chunks[j], memory_order_relaxed));
            free(t);
            return MDT_ENOMEM;
        }
        memcpy(c->r, r + from, cnt * sizeof *r);
        t->keys[i] = i ? c->r[0].start : 0;
        atomic_store_explicit(&t->chunks[i], c, memory_order_relaxed);
    }
    struct idm_rtop *old = atomic_load_explicit(&m->ranges, memory_order_relaxed);
    atomic_store_explicit(&m->ranges, t, memory_order_seq_cst);
    retire_all(m, old);
    m->nranges = n;
    return 0;
}

/* All ranges, sorted, into a malloc'd array (writer). */
static struct idm_range *gather(mdt_idmap *m, size_t *n)
{
    struct idm_rtop *t = atomic_load_explicit(&m->ranges, memory_order_relaxed);
    struct idm_range *all = malloc((m->nranges + 1) * sizeof *all);
    size_t k = 0;
    if (!all)
        return NULL;
    for (size_t i = 0; t && i < t->n; i++) {
        struct idm_chunk *c = atomic_load_explicit(&t->chunks[i], memory_order_relaxed);
        memcpy(all + k, c->r, c->n * sizeof *all);
        k += c->n;
    }
    *n = k;
    return all;
}

static bool range_alive(const mdt_idmap *m, const struct idm_range *r)
{
    struct idm_head *h =
        idm_tab_find(atomic_load_explicit(&((mdt_idmap *)m)->tab[K_FUNC], memory_order_relaxed),
                     r->fid);
    return h && (atomic_load_explicit(&h->meta, memory_order_relaxed) & META_LIVE) &&
           atomic_load_explicit(&h->gen, memory_order_relaxed) == r->gen;
}

int idm_ranges_filter(mdt_idmap *m)
{
    size_t n, k = 0;
    m->ranges_dirty = false;
    if (m->nranges == 0)
        return 0;
    struct idm_range *all = gather(m, &n);
    if (!all)
        return mdt__fail_simple(MDT_ENOMEM, "idmap: out of memory filtering code ranges");
    for (size_t i = 0; i < n; i++)
        if (range_alive(m, &all[i]))
            all[k++] = all[i];
    int rc = k == n ? 0 : rebuild_from(m, all, k);
    free(all);
    if (rc)
        m->ranges_dirty = true;
    return rc ? mdt__fail_simple(rc, "idmap: out of memory filtering code ranges") : 0;
}

void idm_ranges_free(mdt_idmap *m)
{
    struct idm_rtop *t = atomic_load_explicit(&m->ranges, memory_order_relaxed);
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++)
        free(atomic_load_explicit(&t->chunks[i], memory_order_relaxed));
    free(t);
    atomic_store_explicit(&m->ranges, NULL, memory_order_relaxed);
}

/* Insert r with no overlap present, copying one chunk. */
static int insert_fast(mdt_idmap *m, const struct idm_range *r)
{
    struct idm_rtop *t = atomic_load_explicit(&m->ranges, memory_order_relaxed);
    if (!t || t->n == 0)
        return rebuild_from(m, r, 1);
    size_t i = find_chunk(t, r->start);
    struct idm_chunk *c = atomic_load_explicit(&t->chunks[i], memory_order_relaxed);
    size_t pos = upper(c, r->start);
    struct idm_chunk *nc = chunk_new(c->n + 1);
    if (!nc)
        return MDT_ENOMEM;
    memcpy(nc->r, c->r, pos * sizeof *r);
    nc->r[pos] = *r;
    memcpy(nc->r + pos + 1, c->r + pos, (c->n - pos) * sizeof *r);
    if (nc->n <= IDM_CHUNK_MAX) {
        atomic_store_explicit(&t->chunks[i], nc, memory_order_seq_cst);
        idm_retire(&m->g, c, chunk_bytes(c->n));
        m->nranges++;
        return 0;
    }
    /* Split into two chunks under a new top. */
    size_t half = nc->n / 2;
    struct idm_chunk *a = chunk_new(half), *b = chunk_new(nc->n - half);
    struct idm_rtop *nt = top_new(t->n + 1);
    if (!a || !b || !nt) {
        free(a);
        free(b);
        free(nt);
        free(nc);
        return MDT_ENOMEM;
    }
    memcpy(a->r, nc->r, half * sizeof *r);
    memcpy(b->r, nc->r + half, (nc->n - half) * sizeof *r);
    free(nc);
    for (size_t j = 0, k = 0; j < t->n; j++) {
        if (j == i) {
            nt->keys[k] = t->keys[j];
            atomic_store_explicit(&nt->chunks[k++], a, memory_order_relaxed);
            nt->keys[k] = b->r[0].start;
            atomic_store_explicit(&nt->chunks[k++], b, memory_order_relaxed);
        } else {
            nt->keys[k] = t->keys[j];
            atomic_store_explicit(&nt->chunks[k++],
                                  atomic_load_explicit(&t->chunks[j], memory_order_relaxed),
                                  memory_order_relaxed);
        }
    }
    atomic_store_explicit(&m->ranges, nt, memory_order_seq_cst);
    idm_retire(&m->g, c, chunk_bytes(c->n));
    idm_retire(&m->g, t, t->bytes);
    m->nranges++;
    return 0;
}

/* Report whether any range overlaps r, whether one of those is newer than
 * r, and whether r itself is already there. */
static void scan_overlaps(const mdt_idmap *m, const struct idm_range *r, bool *any, bool *newer,
                          bool *same)
{
    const struct idm_rtop *t = atomic_load_explicit(&((mdt_idmap *)m)->ranges, memory_order_relaxed);
    *any = *newer = *same = false;
    if (!t || t->n == 0)
        return;
    size_t i = find_chunk(t, r->start);
    /* Start one chunk early: the range just before start may reach into
     * [start, end). */
    for (size_t ci = i > 0 ? i - 1 : 0; ci < t->n; ci++) {
        const struct idm_chunk *c = atomic_load_explicit(&t->chunks[ci], memory_order_relaxed);
        if (ci > i && c->r[0].start >= r->end)
            break;
        for (size_t j = 0; j < c->n; j++) {
            const struct idm_range *x = &c->r[j];
            if (x->start >= r->end || x->end <= r->start)
                continue;
            *any = true;
            if (x->seq > r->seq)
                *newer = true;
            if (x->start == r->start && x->end == r->end && x->fid == r->fid && x->gen == r->gen)
                *same = true;
        }
    }
}

int mdt_idmap_code_add(mdt_idmap *map, uintptr_t start, size_t size, uintptr_t function_id,
                       uint64_t seq)
{
    if (!map || !function_id || size == 0 || start + size < start)
        return mdt__fail_simple(MDT_EINVAL, "idmap: bad code range");
    int rc = idm_lock(map);
    if (rc)
        return rc;
    rc = idm_check_seq(map, seq);
    if (rc)
        goto out;
    struct idm_head *h =
        idm_tab_find(atomic_load_explicit(&map->tab[K_FUNC], memory_order_relaxed), function_id);
    if (!h || !(atomic_load_explicit(&h->meta, memory_order_relaxed) & META_LIVE)) {
        rc = idm_last_unload(map, K_FUNC, function_id) >= seq
                 ? MDT_IDMAP_SUPERSEDED
                 : mdt__fail_simple(MDT_ENOTFOUND, "idmap: code range of an unknown function");
        goto out;
    }
    if (idm_last_unload(map, K_FUNC, function_id) >= seq) {
        rc = MDT_IDMAP_SUPERSEDED;
        goto out;
    }
    struct idm_range r = {start, start + size, function_id,
                          atomic_load_explicit(&h->gen, memory_order_relaxed), seq};
    bool any, newer, same;
    scan_overlaps(map, &r, &any, &newer, &same);
    if (same) {
        rc = MDT_IDMAP_DUPLICATE;
        goto out;
    }
    if (newer) {
        rc = MDT_IDMAP_SUPERSEDED;
        goto out;
    }
    if (!any) {
        rc = insert_fast(map, &r);
    } else {
        size_t n, k = 0;
        struct idm_range *all = gather(map, &n);
        rc = MDT_ENOMEM;
        if (all) {
            struct idm_range *nr = malloc((n + 1) * sizeof *nr);
            if (nr) {
                bool placed = false;
                for (size_t i = 0; i < n; i++) {
                    if (all[i].start < r.end && all[i].end > r.start)
                        continue;
                    if (!placed && all[i].start > r.start) {
                        nr[k++] = r;
                        placed = true;
                    }
                    nr[k++] = all[i];
                }
                if (!placed)
                    nr[k++] = r;
                rc = rebuild_from(map, nr, k);
                free(nr);
            }
            free(all);
        }
    }
    if (rc) {
        rc = mdt__fail_simple(rc, "idmap: out of memory adding a code range");
        goto out;
    }
    atomic_store_explicit(&h->meta, atomic_load_explicit(&h->meta, memory_order_relaxed) | META_RANGES,
                          memory_order_relaxed);
    rc = MDT_IDMAP_APPLIED;
out:
    return idm_finish(map, rc);
}

int mdt_idmap_code_remove(mdt_idmap *map, uintptr_t start, uint64_t seq)
{
    if (!map)
        return mdt__fail_simple(MDT_EINVAL, "idmap: bad code range");
    int rc = idm_lock(map);
    if (rc)
        return rc;
    rc = idm_check_seq(map, seq);
    if (rc)
        goto out;
    struct idm_rtop *t = atomic_load_explicit(&map->ranges, memory_order_relaxed);
    rc = MDT_IDMAP_DUPLICATE;
    if (!t || t->n == 0)
        goto out;
    size_t i = find_chunk(t, start);
    struct idm_chunk *c = atomic_load_explicit(&t->chunks[i], memory_order_relaxed);
    size_t j = upper(c, start);
    if (j == 0 || c->r[j - 1].start != start)
        goto out;
    j--;
    if (c->r[j].seq > seq) {
        rc = MDT_IDMAP_SUPERSEDED;
        goto out;
    }
    if (j > 0 || (i == 0 && c->n > 1)) {
        struct idm_chunk *nc = chunk_new(c->n - 1);
        if (!nc) {
            rc = mdt__fail_simple(MDT_ENOMEM, "idmap: out of memory");
            goto out;
        }
        memcpy(nc->r, c->r, j * sizeof c->r[0]);
        memcpy(nc->r + j, c->r + j + 1, (c->n - j - 1) * sizeof c->r[0]);
        atomic_store_explicit(&t->chunks[i], nc, memory_order_seq_cst);
        idm_retire(&map->g, c, chunk_bytes(c->n));
        map->nranges--;
    } else {
        size_t n, k = 0;
        struct idm_range *all = gather(map, &n);
        if (!all) {
            rc = mdt__fail_simple(MDT_ENOMEM, "idmap: out of memory");
            goto out;
        }
        for (size_t x = 0; x < n; x++)
            if (all[x].start != start)
                all[k++] = all[x];
        int e = rebuild_from(map, all, k);
        free(all);
        if (e) {
            rc = mdt__fail_simple(e, "idmap: out of memory");
            goto out;
        }
    }
    rc = MDT_IDMAP_APPLIED;
out:
    return idm_finish(map, rc);
}
