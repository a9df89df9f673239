/* The run reader (mdt_rows_cells) against the per-cell readers, for the
 * unit tests (fixtures, corpus, corrupt cases, the Mono framework) and the
 * fuzz harness. */
#ifndef MDT_TESTS_ROWRUNS_H
#define MDT_TESTS_ROWRUNS_H

#include <stddef.h>
#include <stdint.h>

#include <mdtools/mdtools.h>

typedef struct rowruns_stats {
    uint64_t runs;    /* calls that decoded */
    uint64_t refused; /* calls refused as a whole (a run past the readable rows) */
    uint64_t cells;   /* cells compared */
    uint64_t failed;  /* cells both sides failed to decode */
} rowruns_stats;

/* Reads every table of img with mdt_rows_cells in runs of `run` rows (0:
 * each table in one run; the last run of a table may be shorter) and
 * checks, for every cell of every run, that value, ptr and len are what
 * mdt_row_raw, mdt_row_string, mdt_row_blob and mdt_row_guid give (NULL
 * and 0 for other kinds and for failed cells); that the call returns the
 * number of cells those readers fail, with the error record of the last
 * failing cell in column order; that nothing after a run's cells is
 * written; and that a run reaching past the table's readable rows fails
 * as mdt_column_raw fails over the same rows, writing nothing. Returns 0,
 * or -1 with the first disagreement in why (which also says which table,
 * row and column). Memory is sized by the readable rows, never by a
 * declared count. */
int rowruns_check(const mdt_image *img, uint32_t run, rowruns_stats *st, char *why, size_t whylen);

#endif
