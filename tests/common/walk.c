/* Full walk of an image through the public API (see walk.h). */
#include <string.h>

#include "walk.h"

int walk_image(const mdt_image *img, walk_stats *st)
{
    memset(st, 0, sizeof *st);
    for (unsigned t = 0; t < MDT_TABLE_MAX; t++) {
        const mdt_table_schema *s = mdt_table_schema_get(t);
        uint32_t n = mdt_table_rows(img, t);
        if (!s)
            continue;
        for (uint32_t rid = 1; rid <= n; rid++) {
            mdt_row r;
            if (mdt_row_get(&r, img, t, rid)) {
                st->errors++;
                break; /* the rest of this table is beyond the stream too */
            }
            st->rows++;
            for (unsigned c = 0; c < s->ncols; c++) {
                const char *str;
                size_t len;
                const uint8_t *p;
                uint32_t blen, tok, first, count;
                int e = 0;
                st->cells++;
                switch (s->cols[c].kind) {
                case MDT_COLK_STR:
                    if (!(e = mdt_row_string(&r, c, &str, &len)))
                        st->string_bytes += len;
                    break;
                case MDT_COLK_BLOB:
                    if (!(e = mdt_row_blob(&r, c, &p, &blen)))
                        st->blob_bytes += blen;
                    break;
                case MDT_COLK_GUID:
                    if (!(e = mdt_row_guid(&r, c, &p)) && p)
                        st->guid_bytes += 16;
                    break;
                case MDT_COLK_LIST:
                    if (!(e = mdt_row_range(&r, c, &first, &count)))
                        for (uint32_t i = 0; i < count && !e; i++)
                            e = mdt_range_item(img, s->cols[c].target, first + i, &tok);
                    break;
                case MDT_COLK_TAB:
                case MDT_COLK_CODED:
                    e = mdt_row_token(&r, c, &tok);
                    break;
                default:
                    (void)mdt_row_raw(&r, c);
                }
                if (e)
                    st->errors++;
            }
        }
    }
    /* Every user string. */
    uint32_t us = mdt_heap_size(img, MDT_HEAP_US);
    for (uint32_t off = 1; off < us;) {
        const uint8_t *u;
        uint32_t n;
        int flag;
        if (mdt_heap_us(img, off, &u, &n, &flag)) {
            st->errors++;
            break;
        }
        uint32_t bytes = n * 2 + (flag >= 0);
        uint32_t hdr = bytes < 0x80 ? 1 : bytes < 0x4000 ? 2 : 4;
        if (bytes == 0 && flag < 0)
            bytes = 0;
        off += hdr + bytes;
    }
    mdt_identity id;
    (void)mdt_assembly_identity(img, &id);
    for (uint32_t i = 1; i <= mdt_table_rows(img, MDT_TABLE_AssemblyRef); i++)
        if (mdt_assemblyref_identity(img, i, &id))
            st->errors++;
    return 0;
}
