/* Full walk of an image through the public API (see walk.h). */
#include <stdio.h>
#include <string.h>
#include <talloc.h>

#include "walk.h"

static void fail(walk_stats *st, walk_error_fn fn, void *arg, char kind, int code)
{
    st->errors++;
    if (fn)
        fn(arg, kind, code);
}

static int cell(const mdt_image *img, const mdt_row *r, const mdt_column_schema *col, unsigned c,
                walk_stats *st)
{
    const char *str;
    size_t len;
    const uint8_t *p;
    uint32_t blen, tok, first, count;
    int e = 0;
    switch (col->kind) {
    case MDT_COLK_STR:
        if (!(e = mdt_row_string(&str, &len, r, c)))
            st->string_bytes += len;
        break;
    case MDT_COLK_BLOB:
        if (!(e = mdt_row_blob(&p, &blen, r, c)))
            st->blob_bytes += blen;
        break;
    case MDT_COLK_GUID:
        if (!(e = mdt_row_guid(&p, r, c)) && p)
            st->guid_bytes += 16;
        break;
    case MDT_COLK_LIST:
        if (!(e = mdt_row_range(&first, &count, r, c)))
            for (uint32_t i = 0; i < count && !e; i++)
                e = mdt_range_item(&tok, img, col->target, first + i);
        break;
    case MDT_COLK_TAB:
    case MDT_COLK_CODED: e = mdt_row_token(&tok, r, c); break;
    default: (void)mdt_row_raw(r, c);
    }
    return e;
}

int walk_image_report(const mdt_image *img, walk_stats *st, walk_error_fn fn, void *arg)
{
    int e;
    memset(st, 0, sizeof *st);
    for (unsigned t = 0; t < MDT_TABLE_MAX; t++) {
        const mdt_table_schema *s = mdt_table_schema_get(t);
        uint32_t n = mdt_table_rows(img, t);
        if (!s)
            continue;
        for (uint32_t rid = 1; rid <= n; rid++) {
            mdt_row r;
            if ((e = mdt_row_get(&r, img, t, rid))) {
                fail(st, fn, arg, 'c', e);
                break; /* the rest of this table lies beyond the stream too */
            }
            st->rows++;
            for (unsigned c = 0; c < s->ncols; c++) {
                st->cells++;
                if ((e = cell(img, &r, &s->cols[c], c, st)))
                    fail(st, fn, arg, 'c', e);
                else
                    st->cells_ok++;
            }
        }
    }
    mdt_identity id;
    if (mdt_table_rows(img, MDT_TABLE_Assembly) && (e = mdt_assembly_identity(&id, img)))
        fail(st, fn, arg, 'c', e);
    for (uint32_t i = 1; i <= mdt_table_rows(img, MDT_TABLE_AssemblyRef); i++)
        if ((e = mdt_assemblyref_identity(&id, img, i))) {
            fail(st, fn, arg, 'c', e);
            if (e == MDT_ETRUNC)
                break; /* the rest of the table lies beyond the stream too */
        }
    /* User strings one after another (II.24.2.4): a blob length, then the
     * UTF-16 code units and the flag byte when the length is odd. */
    uint32_t us = mdt_heap_size(img, MDT_HEAP_US);
    for (uint32_t off = 1; off < us;) {
        const uint8_t *u;
        uint32_t n;
        int flag;
        if ((e = mdt_heap_us(&u, &n, &flag, img, off))) {
            fail(st, fn, arg, 'u', e);
            break; /* the next string's start is unknown */
        }
        if ((e = mdt_heap_next(&off, img, MDT_HEAP_US, off))) {
            fail(st, fn, arg, 'u', e);
            break;
        }
    }
    return 0;
}

int walk_image(const mdt_image *img, walk_stats *st)
{
    return walk_image_report(img, st, NULL, NULL);
}

static int name_caches_bounded(const mdt_image *img, char *why, size_t whylen)
{
    static const int styles[] = {MDT_STYLE_FULL, MDT_STYLE_REFLECTION, MDT_STYLE_IL};
    size_t len;
    int rc = 0;
    void *tmp = talloc_new(NULL);
    mdt_image_bytes(&len, img);
    for (size_t i = 0; i < sizeof styles / sizeof styles[0] && rc == 0; i++) {
        mdt_name_cache *nc;
        int e = mdt_name_cache_new(tmp, &nc, img, styles[i], 0);
        size_t bytes = e ? 0 : talloc_total_size(nc);
        if (e || bytes > 32 * len + 4096) {
            snprintf(why, whylen, "name cache for a %zu-byte input: %s (%zu bytes)", len,
                     e ? "failed" : "too large", bytes);
            rc = -1;
        }
    }
    talloc_free(tmp);
    return rc;
}

static int coded_decode_agrees(const mdt_image *img, char *why, size_t whylen)
{
    for (unsigned t = 0; t < MDT_TABLE_MAX; t++) {
        const mdt_table_schema *s = mdt_table_schema_get(t);
        for (uint32_t rid = 1; s && rid <= mdt_table_rows_present(img, t); rid++) {
            mdt_row r;
            if (mdt_row_get(&r, img, t, rid))
                break;
            for (unsigned c = 0; c < s->ncols; c++) {
                uint32_t v, dec, enc = 0, tok;
                if (s->cols[c].kind != MDT_COLK_CODED ||
                    mdt_coded_decode(&dec, s->cols[c].target, v = mdt_row_raw(&r, c)))
                    continue;
                if (mdt_coded_encode(&enc, s->cols[c].target, dec) || enc != v ||
                    (mdt_row_token(&tok, &r, c) == 0 && tok != dec)) {
                    snprintf(why, whylen,
                             "%s row %u column %s: 0x%x decodes to 0x%08x (encodes "
                             "as 0x%x)",
                             s->name, rid, s->cols[c].name, v, dec, enc);
                    return -1;
                }
            }
        }
    }
    return 0;
}

int walk_guest_check(const mdt_image *img, char *why, size_t whylen)
{
    int rc = name_caches_bounded(img, why, whylen);
    if (rc == 0)
        rc = coded_decode_agrees(img, why, whylen);
    mdt_error_clear();
    return rc;
}
