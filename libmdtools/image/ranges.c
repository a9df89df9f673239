/* Readable memory of a PE laid out by a loader (ECMA-335 II.25: RVAs are
 * offsets from the load address). A loader need not make the whole image
 * readable: CoreCLR on Linux maps each section at its RVA, rounded to
 * pages, and leaves the gaps between sections inaccessible. The caller
 * says which memory is readable; here those ranges become runs of RVAs,
 * and every read of a mapped image is checked against them (pe.c's
 * mdt__rva_ptr; the bytes after the metadata window that md/tables.c's
 * row padding may read, container.c) besides the checks against the
 * image's own headers, which are untrusted: a header pointing into a gap
 * must give an error, not a fault. */
#include "config.h"

#include <stdlib.h>
#include <talloc.h>

#include "image/container.h"

/* No read reaches further than an RVA plus a length, both 32 bits. */
#define RVA_REACH ((uint64_t)1 << 33)

static int by_lo(const void *a, const void *b)
{
    const struct mdt_rva_run *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

int mdt__container_set_runs(struct mdt_container *c, const mdt_mem_range *ranges, size_t n)
{
    uintptr_t base = (uintptr_t)c->data;
    struct mdt_rva_run *runs = talloc_array(c->mem, struct mdt_rva_run, n ? n : 1);
    size_t nruns = 0;
    if (!runs)
        return mdt__fail_simple(MDT_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        uintptr_t start = (uintptr_t)ranges[i].start, len = ranges[i].len;
        uintptr_t end = len > UINTPTR_MAX - start ? UINTPTR_MAX : start + len;
        if (end <= base || len == 0)
            continue;
        uint64_t lo = start > base ? (uint64_t)(start - base) : 0;
        uint64_t hi = (uint64_t)(end - base);
        if (lo >= RVA_REACH)
            continue;
        runs[nruns++] = (struct mdt_rva_run){lo, hi < RVA_REACH ? hi : RVA_REACH};
    }
    qsort(runs, nruns, sizeof *runs, by_lo);
    /* Merge overlapping and adjacent ranges: memory contiguous in the
     * address space reads as one run. */
    size_t m = 0;
    for (size_t i = 0; i < nruns; i++) {
        if (m && runs[i].lo <= runs[m - 1].hi) {
            if (runs[i].hi > runs[m - 1].hi)
                runs[m - 1].hi = runs[i].hi;
        } else {
            runs[m++] = runs[i];
        }
    }
    if (m == 0 || runs[0].lo != 0) {
        talloc_free(runs);
        return mdt__fail_simple(MDT_EINVAL,
                                "mdt_image_open_mapped_ranges: the base %p is in "
                                "no range declared readable",
                                c->data);
    }
    c->runs = runs;
    c->nruns = m;
    c->size = runs[0].hi > SIZE_MAX ? SIZE_MAX : (size_t)runs[0].hi;
    return 0;
}

const struct mdt_rva_run *mdt__run_of(const struct mdt_container *c, uint64_t rva, uint64_t len)
{
    size_t lo = 0, hi = c->nruns;
    while (lo < hi) { /* the last run starting at or before rva */
        size_t mid = lo + (hi - lo) / 2;
        if (c->runs[mid].lo <= rva)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    const struct mdt_rva_run *r = &c->runs[lo - 1];
    /* An empty read at a run's end is inside it; a byte there is not. */
    if (rva > r->hi || len > r->hi - rva || (len && rva == r->hi))
        return NULL;
    return r;
}
