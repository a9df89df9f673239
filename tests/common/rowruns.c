/* The run reader against the per-cell readers (rowruns.h): every cell
 * mdt_rows_cells decodes must be what the inline per-cell readers give,
 * failures and their error record included. */
#include "rowruns.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD 4   /* cells after a run's that must stay as they were */
#define FILL 0xA5 /* what the buffer holds before a call */

static int fail(char *why, size_t whylen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, whylen, fmt, ap);
    va_end(ap);
    return -1;
}

static bool untouched(const mdt_cell *c, size_t n)
{
    const unsigned char *p = (const unsigned char *)c;
    for (size_t i = 0; i < n * sizeof *c; i++)
        if (p[i] != FILL)
            return false;
    return true;
}

/* What the per-cell readers say of column c of row r: the cell, and 0 or
 * their error. */
static int expect(const mdt_row *r, unsigned c, unsigned kind, mdt_cell *want)
{
    int e = 0;
    want->value = mdt_row_raw(r, c);
    want->ptr = NULL;
    want->len = 0;
    switch (kind) {
    case MDT_COLK_STR: {
        const char *s;
        size_t len;
        if ((e = mdt_row_string(&s, &len, r, c)) == 0) {
            want->ptr = s;
            want->len = (uint32_t)len;
        }
        break;
    }
    case MDT_COLK_BLOB: {
        const uint8_t *d;
        uint32_t len;
        if ((e = mdt_row_blob(&d, &len, r, c)) == 0) {
            want->ptr = d;
            want->len = len;
        }
        break;
    }
    case MDT_COLK_GUID: {
        const uint8_t *g;
        if ((e = mdt_row_guid(&g, r, c)) == 0 && g) {
            want->ptr = g;
            want->len = 16;
        }
        break;
    }
    }
    return e;
}

/* A run reaching past the readable rows: refused as mdt_row_get refuses
 * its first missing row, with nothing written. */
static int check_refused(const mdt_image *img, const mdt_table_schema *s, uint32_t first,
                         uint32_t k, uint32_t avail, const mdt_cell *buf, size_t cap, int got,
                         char *why, size_t whylen)
{
    char msg[512], want_msg[512];
    mdt_row r;
    mdt_error_message(msg, sizeof msg);
    int want = mdt_row_get(&r, img, s->id, first - 1 >= avail ? first : avail + 1);
    mdt_error_message(want_msg, sizeof want_msg);
    if (want == 0 || got != want || strcmp(msg, want_msg) != 0)
        return fail(why, whylen, "%s rows %u+%u (%u readable): got %d \"%s\", want %d \"%s\"",
                    s->name, first, k, avail, got, msg, want, want_msg);
    if (!untouched(buf, cap))
        return fail(why, whylen, "%s rows %u+%u: refused, but cells were written", s->name, first,
                    k);
    return 0;
}

/* A run inside the readable rows: every cell, the count of failures, the
 * error record of the last failure in column order, the guard. */
static int check_run(const mdt_image *img, const mdt_table_schema *s, uint32_t first, uint32_t k,
                     const mdt_cell *buf, size_t cap, int got, rowruns_stats *st, char *why,
                     size_t whylen)
{
    char msg[512], want_msg[512];
    unsigned n = s->ncols, last_c = 0;
    uint32_t last_i = 0;
    int bad = 0;
    mdt_error_message(msg, sizeof msg);
    for (uint32_t i = 0; i < k; i++) {
        mdt_row r;
        if (mdt_row_get(&r, img, s->id, first + i) != 0)
            return fail(why, whylen, "%s row %u: decoded by the run, refused alone", s->name,
                        first + i);
        for (unsigned c = 0; c < n; c++) {
            const mdt_cell *o = &buf[(size_t)i * n + c];
            mdt_cell want;
            if (expect(&r, c, s->cols[c].kind, &want) != 0) {
                bad++;
                if (c > last_c || (c == last_c && i >= last_i))
                    last_c = c, last_i = i;
            }
            if (o->value != want.value || o->ptr != want.ptr || o->len != want.len)
                return fail(
                    why, whylen,
                    "%s row %u column %s: run gives (%u, %p, %u), cell readers (%u, %p, %u)",
                    s->name, first + i, s->cols[c].name, o->value, o->ptr, o->len, want.value,
                    want.ptr, want.len);
        }
    }
    if (got != bad)
        return fail(why, whylen, "%s rows %u+%u: run returns %d, the cell readers fail %d cells",
                    s->name, first, k, got, bad);
    if (bad) {
        mdt_row r;
        mdt_cell want;
        mdt_row_get(&r, img, s->id, first + last_i);
        expect(&r, last_c, s->cols[last_c].kind, &want);
        mdt_error_message(want_msg, sizeof want_msg);
        if (strcmp(msg, want_msg) != 0)
            return fail(why, whylen, "%s rows %u+%u: error record \"%s\", want \"%s\"", s->name,
                        first, k, msg, want_msg);
    }
    if (!untouched(buf + (size_t)k * n, cap - (size_t)k * n))
        return fail(why, whylen, "%s rows %u+%u: cells after the run were written", s->name, first,
                    k);
    st->runs++;
    st->cells += (uint64_t)k * n;
    st->failed += (uint64_t)bad;
    return 0;
}

int rowruns_check(const mdt_image *img, uint32_t run, rowruns_stats *st, char *why, size_t whylen)
{
    for (unsigned t = 0; t < MDT_TABLE_MAX; t++) {
        const mdt_table_schema *s = mdt_table_schema_get(t);
        uint32_t rows = mdt_table_rows(img, t), avail = mdt_table_rows_present(img, t);
        if (!s || !rows)
            continue;
        /* run 0: the readable rows in one run, then the rest in another. */
        uint32_t step = run ? run : avail ? avail : rows;
        size_t cap = ((size_t)(step < avail ? step : avail) + 1) * s->ncols + GUARD;
        mdt_cell *buf = malloc(cap * sizeof *buf);
        int e = 0;
        if (!buf)
            return fail(why, whylen, "out of memory");
        for (uint32_t first = 1; first <= rows && e == 0;) {
            uint32_t k = rows - first + 1 < step ? rows - first + 1 : step;
            memset(buf, FILL, cap * sizeof *buf);
            int got = mdt_rows_cells(buf, img, t, first, k);
            if (first - 1 + k > avail) {
                e = check_refused(img, s, first, k, avail, buf, cap, got, why, whylen);
                st->refused++;
                break; /* every later run is past the readable rows too */
            }
            e = check_run(img, s, first, k, buf, cap, got, st, why, whylen);
            first += k;
        }
        free(buf);
        if (e)
            return e;
    }
    return 0;
}
