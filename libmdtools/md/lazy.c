/* Checks open leaves to first need, so that opening an image costs what
 * every caller needs and no more (a profiler opens hundreds of modules and
 * reads a few rows of each): whether the tables ECMA-335 II.22 requires
 * sorted really are (a scan of each key column), the indexes of damaged
 * list runs and of Ptr tables (runs.c), and the warnings those checks
 * produce.
 *
 * An open image is immutable and may be read by many threads at once, so
 * each lazy result is computed from the image's bytes alone (two threads
 * that race compute the same answer) and published atomically:
 * - a table's sort state is one atomic byte, stored relaxed: it guards no
 *   other data, and every thread that computes it stores the same value;
 * - indexes and the late warnings are allocated with malloc (talloc is not
 *   thread-safe), filled, then published with a compare-and-swap
 *   (release); readers load them with acquire. The thread that loses the
 *   race frees its copy and uses the winner's. Nobody waits for a lock.
 * They are freed with the image, by the destructor of a small talloc child
 * attached at open. Building an index allocates, so the functions that may
 * (the owner queries of <mdtools/names.h>, the warnings of an image) are
 * not async-signal-safe; the sort check allocates nothing. */
#include "config.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <talloc.h>

#include <mdtools/errors.h>
#include <mdtools/tables.h>

#include "md/md_int.h"
#include "util/error.h"

#define WARNING_LEN 192

struct mdt_late_warnings {
    size_t n;
    char msg[][WARNING_LEN];
};

struct lazy_owner {
    struct mdt_md *md;
};

static int free_lazy(struct lazy_owner *o)
{
    struct mdt_md *md = o->md;
    for (unsigned t = 0; t < MDT_TABLE_MAX; t++)
        mdt__runs_free(&md->tables[t]);
    free(atomic_load_explicit(&md->late_warnings, memory_order_acquire));
    return 0;
}

int mdt__lazy_attach(struct mdt_md *md)
{
    struct lazy_owner *o = talloc(md->mem, struct lazy_owner);
    if (!o)
        return mdt__fail_simple(MDT_ENOMEM, "out of memory opening %s", md->name);
    o->md = md;
    talloc_set_destructor(o, free_lazy);
    return 0;
}

bool mdt__table_sorted(const struct mdt_md *md, unsigned table)
{
    struct mdt_table *tb = (struct mdt_table *)&md->tables[table];
    const mdt_table_schema *s = mdt_table_schema_get(table);
    uint8_t st = atomic_load_explicit(&tb->sort_state, memory_order_relaxed);
    if (!st) {
        if (!s || s->sort_col < 0 || !md->lay.tables[table].rows)
            return false;
        st = mdt__column_ascends(&md->lay.tables[table], (unsigned)s->sort_col) ? 1 : 2;
        atomic_store_explicit(&tb->sort_state, st, memory_order_relaxed);
    }
    return st == 1;
}

/* The warnings of the deferred checks, in the words open used to write. */
static size_t late_messages(const struct mdt_md *md, struct mdt_late_warnings *w, size_t max)
{
    size_t n = 0;
    for (unsigned t = 0; t < MDT_TABLE_MAX && n < max; t++) {
        const mdt_table_schema *s = mdt_table_schema_get(t);
        if (!s || s->sort_col < 0 || !md->lay.tables[t].rows || mdt__table_sorted(md, t))
            continue;
        if (w)
            snprintf(w->msg[n], WARNING_LEN,
                     "table %s is not sorted by %s as ECMA-335 requires%s; lookups scan", s->name,
                     s->cols[s->sort_col].name,
                     md->mdi.sorted >> t & 1 ? " (its Sorted bit is set)" : "");
        n++;
    }
    for (unsigned t = 0; t < MDT_TABLE_MAX && n < max; t++) {
        const mdt_table_schema *s = mdt_table_schema_get(t);
        const mdt_table_layout *tl = &md->lay.tables[t];
        unsigned k = 0;
        if (!s || !tl->avail)
            continue;
        for (unsigned c = 0; c < s->ncols && k < 2 && n < max; c++) {
            if (s->cols[c].kind != MDT_COLK_LIST)
                continue;
            k++;
            if (mdt__column_ascends(tl, c))
                continue;
            if (w)
                snprintf(w->msg[n], WARNING_LEN,
                         "table %s: the starts of column %s go down; a row's run begins no "
                         "lower than the runs before it end, so runs do not overlap",
                         s->name, s->cols[c].name);
            n++;
        }
    }
    return n;
}

static const struct mdt_late_warnings *late_warnings(const struct mdt_md *md)
{
    struct mdt_md *m = (struct mdt_md *)md;
    struct mdt_late_warnings *w = atomic_load_explicit(&m->late_warnings, memory_order_acquire);
    struct mdt_late_warnings *expected = NULL;
    size_t max, n;
    if (w)
        return w;
    /* Open's warnings and these share one bound (util/warnings.h). */
    max = md->warn->n < MDT_MAX_WARNINGS ? MDT_MAX_WARNINGS - md->warn->n : 0;
    n = late_messages(md, NULL, max);
    w = malloc(sizeof *w + n * sizeof w->msg[0]);
    if (!w)
        return NULL; /* asked again next time */
    w->n = late_messages(md, w, n);
    if (!atomic_compare_exchange_strong_explicit(&m->late_warnings, &expected, w,
                                                 memory_order_acq_rel, memory_order_acquire)) {
        free(w);
        return expected;
    }
    return w;
}

size_t mdt__late_warning_count(const struct mdt_md *md)
{
    const struct mdt_late_warnings *w = late_warnings(md);
    return w ? w->n : 0;
}

const char *mdt__late_warning(const struct mdt_md *md, size_t i)
{
    const struct mdt_late_warnings *w = late_warnings(md);
    return w && i < w->n ? w->msg[i] : NULL;
}
