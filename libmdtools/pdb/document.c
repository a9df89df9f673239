/* Document names of a portable PDB (Portable PDB v1.0, Document table 0x30,
 * "Document Name Blob"): a separator (one UTF-8 character, or 0 for none)
 * then parts, each a compressed #Blob index of a UTF-8 string (0: empty),
 * joined by the separator. */
#include "config.h"

#include <string.h>

#include <mdtools/heaps.h>
#include <mdtools/pdb.h>
#include <mdtools/tables.h>

#include "pdb/pdb_int.h"
#include "util/error.h"
#include "util/strbuf.h"

uint32_t mdt_pdb_document_count(const mdt_pdb *pdb)
{
    return mdt_table_rows(pdb->md, MDT_TABLE_Document);
}

/* Length of the UTF-8 character a lead byte starts, 0 when it starts none. */
static unsigned utf8_len(uint8_t b)
{
    return b < 0x80             ? 1
           : (b & 0xE0) == 0xC0 ? 2
           : (b & 0xF0) == 0xE0 ? 3
           : (b & 0xF8) == 0xF0 ? 4
                                : 0;
}

static int bad(const mdt_pdb *pdb, uint32_t doc, int code, const char *what)
{
    mdt_place pl = MDT_PLACE_NONE;
    pl.file = mdt_image_name(pdb->md);
    pl.region = "Document";
    pl.column = "Name";
    pl.row = doc;
    return mdt__fail(code, pl, "%s", what);
}

/* The whole name's length in *len; the name into out (as much of it as
 * fits, for a fixed builder), or only its length when out is NULL. */
static int docname(sb *out, size_t *len, const mdt_pdb *pdb, uint32_t doc)
{
    const uint8_t *b, *part;
    uint32_t blen, plen, idx;
    unsigned seplen, used;
    size_t n = 0, pos;
    mdt_row row;
    int r;
    if (doc == 0 || doc > mdt_pdb_document_count(pdb))
        return mdt__fail_simple(MDT_ENOTFOUND, "%s: no Document row %u", pdb->path, doc);
    if ((r = mdt_row_get(&row, pdb->md, MDT_TABLE_Document, doc)) != 0 ||
        (r = mdt_row_blob(&b, &blen, &row, MDT_COL_Document_Name)) != 0)
        return r;
    if (blen == 0)
        return bad(pdb, doc, MDT_EBADIMAGE, "empty name blob (no separator)");
    seplen = b[0] ? utf8_len(b[0]) : 0;
    if (b[0] && (seplen == 0 || seplen > blen))
        return bad(pdb, doc, MDT_EBADIMAGE, "separator is not a UTF-8 character");
    pos = b[0] ? seplen : 1;
    /* Every part takes at least one byte of the blob: bounded by blen. */
    for (bool first = true; pos < blen; first = false) {
        if ((r = mdt_heap_decode_compressed_u32(&idx, &used, b + pos, blen - pos)) != 0)
            return bad(pdb, doc, r, "bad part index");
        pos += used;
        if ((r = mdt_heap_blob(&part, &plen, pdb->md, idx)) != 0)
            return r;
        if (!first) {
            if (out)
                sb_add(out, (const char *)b, seplen);
            n += seplen;
        }
        if (out)
            sb_add(out, (const char *)part, plen);
        n += plen;
    }
    *len = n;
    return 0;
}

int mdt_pdb_document_name_buf(char *buf, size_t size, size_t *len, const mdt_pdb *pdb,
                              uint32_t document)
{
    size_t n;
    sb out;
    if (size)
        sb_init_fixed(&out, buf, size);
    int r = docname(size ? &out : NULL, &n, pdb, document);
    if (r)
        return r;
    if (len)
        *len = n;
    if (n >= size)
        return mdt__fail_simple(MDT_ETRUNC, "document name of %zu bytes does not fit %zu", n, size);
    return 0;
}

int mdt_pdb_document_name(void *mem_ctx, char **out, const mdt_pdb *pdb, uint32_t document)
{
    size_t n;
    char stack[256];
    sb s;
    sb_init_stack(&s, mem_ctx, stack, sizeof stack);
    int r = docname(&s, &n, pdb, document);
    if (r) {
        sb_discard(&s);
        return r;
    }
    return sb_finish(&s, out);
}
