/* Sequence points: the MethodDebugInformation table (0x31) and its
 * SequencePoints blob (Portable PDB v1.0, "Sequence Points Blob"): a
 * header (LocalSignature, InitialDocument when the row's Document is nil),
 * then records, each a sequence point (IL offset delta, line and column
 * deltas, start relative to the previous non-hidden point), a hidden point
 * (both deltas 0) or a document change (IL delta 0 after the first
 * record). Compressed integers are those of ECMA-335 II.23.2, signed ones
 * with the sign in the low bit. Every value is checked against the spec's
 * ranges; a record that breaks them ends the method's points with a
 * located error. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <mdtools/heaps.h>
#include <mdtools/pdb.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>

#include "pdb/pdb_int.h"
#include "util/error.h"

#define MAX_IL 0x20000000u
#define MAX_LINE 0x20000000u
#define MAX_COLUMN 0x10000u

static int fail(mdt_seqpoint_iter *it, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(mdt_seqpoint_iter *it, int code, const char *fmt, ...)
{
    char what[200];
    va_list ap;
    mdt_place pl = MDT_PLACE_NONE;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    pl.file = mdt_image_name(it->pdb->md);
    pl.region = "MethodDebugInformation";
    pl.column = "SequencePoints";
    pl.row = it->method;
    pl.offset = it->pos;
    it->done = true;
    return mdt__fail(code, pl, "%s (blob 0x%x)", what, it->blob_index);
}

static int read_u(mdt_seqpoint_iter *it, uint32_t *v, const char *what)
{
    unsigned used;
    int r = mdt_heap_decode_compressed_u32(v, &used, it->blob + it->pos, it->len - it->pos);
    if (r)
        return fail(it, r, "%s: %s", what,
                    r == MDT_ETRUNC ? "compressed integer cut short" : "bad compressed integer");
    it->pos += used;
    return 0;
}

/* II.23.2 signed compressed integer: the value rotated left by one within
 * its width (6, 13 or 28 bits), the sign in the low bit. */
static int read_s(mdt_seqpoint_iter *it, int32_t *v, const char *what)
{
    uint32_t start = it->pos, u;
    int r = read_u(it, &u, what);
    if (r)
        return r;
    uint32_t n = it->pos - start;
    int32_t mag = (int32_t)(u >> 1);
    if (u & 1)
        mag -= n == 1 ? 0x40 : n == 2 ? 0x2000 : 0x10000000;
    *v = mag;
    return 0;
}

static int check_document(mdt_seqpoint_iter *it, uint32_t doc)
{
    uint32_t rows = mdt_table_rows(it->pdb->md, MDT_TABLE_Document);
    if (doc == 0 || doc > rows)
        return fail(it, MDT_EBADIMAGE, "document row %u beyond the %u Document rows", doc, rows);
    return 0;
}

int mdt_seqpoints_init(mdt_seqpoint_iter *it, const mdt_pdb *pdb, uint32_t methoddef)
{
    uint32_t rid = MDT_TOKEN_RID(methoddef), doc, sig;
    unsigned tab = MDT_TOKEN_TABLE(methoddef);
    mdt_row row;
    int r;
    memset(it, 0, sizeof *it);
    it->pdb = pdb;
    it->method = rid;
    it->done = true;
    if (tab != 0 && tab != MDT_TABLE_MethodDef)
        return mdt__fail_simple(MDT_EINVAL, "0x%08x is not a MethodDef token", methoddef);
    if (rid == 0 || rid > mdt_table_rows(pdb->md, MDT_TABLE_MethodDebugInformation))
        return mdt__fail_simple(MDT_ENOTFOUND, "%s: no MethodDebugInformation row %u", pdb->path,
                                rid);
    if ((r = mdt_row_get(&row, pdb->md, MDT_TABLE_MethodDebugInformation, rid)) != 0 ||
        (r = mdt_row_token(&doc, &row, MDT_COL_MethodDebugInformation_Document)) != 0 ||
        (r = mdt_row_blob(&it->blob, &it->len, &row,
                          MDT_COL_MethodDebugInformation_SequencePoints)) != 0)
        return r;
    it->blob_index = mdt_row_raw(&row, MDT_COL_MethodDebugInformation_SequencePoints);
    if (it->len == 0)
        return 0;
    it->done = false;
    if ((r = read_u(it, &sig, "LocalSignature")) != 0)
        return r;
    it->document = MDT_TOKEN_RID(doc);
    if (!it->document && (r = read_u(it, &it->document, "InitialDocument")) != 0)
        return r;
    return check_document(it, it->document);
}

int mdt_seqpoints_next(mdt_seqpoint *sp, mdt_seqpoint_iter *it)
{
    uint32_t dil, dlines;
    int r;
    /* Each pass consumes at least one byte: the loop ends with the blob. */
    while (!it->done && it->pos < it->len) {
        if ((r = read_u(it, &dil, "IL offset delta")) != 0)
            return r;
        if (dil == 0 && it->count > 0) {
            if ((r = read_u(it, &it->document, "Document")) != 0 ||
                (r = check_document(it, it->document)) != 0)
                return r;
            continue;
        }
        uint32_t il = it->count ? it->il_offset + dil : dil;
        if (dil >= MAX_IL || il >= MAX_IL)
            return fail(it, MDT_EBADIMAGE, "IL offset 0x%x out of range", il);
        if ((r = read_u(it, &dlines, "line delta")) != 0)
            return r;
        int32_t dcols;
        if (dlines == 0) {
            uint32_t u;
            if ((r = read_u(it, &u, "column delta")) != 0)
                return r;
            if (u >= MAX_COLUMN)
                return fail(it, MDT_EBADIMAGE, "column delta %u out of range", u);
            dcols = (int32_t)u;
        } else if ((r = read_s(it, &dcols, "column delta")) != 0) {
            return r;
        }
        memset(sp, 0, sizeof *sp);
        sp->il_offset = il;
        sp->document = it->document;
        if (dlines == 0 && dcols == 0) {
            sp->hidden = true;
            sp->start_line = sp->end_line = MDT_PDB_HIDDEN_LINE;
        } else {
            uint32_t line, col;
            if (!it->seen_nonhidden) {
                if ((r = read_u(it, &line, "start line")) != 0 ||
                    (r = read_u(it, &col, "start column")) != 0)
                    return r;
            } else {
                int32_t dl, dc;
                if ((r = read_s(it, &dl, "start line delta")) != 0 ||
                    (r = read_s(it, &dc, "start column delta")) != 0)
                    return r;
                line = it->line + (uint32_t)dl; /* wraps to a huge value when negative */
                col = it->column + (uint32_t)dc;
            }
            if (line >= MAX_LINE || line == MDT_PDB_HIDDEN_LINE || dlines >= MAX_LINE - line)
                return fail(it, MDT_EBADIMAGE, "lines %u..+%u out of range", line, dlines);
            uint32_t endcol = col + (uint32_t)dcols;
            if (col >= MAX_COLUMN || endcol >= MAX_COLUMN)
                return fail(it, MDT_EBADIMAGE, "columns %d..%d out of range", (int32_t)col,
                            (int32_t)endcol);
            sp->start_line = line;
            sp->end_line = line + dlines;
            sp->start_column = (uint16_t)col;
            sp->end_column = (uint16_t)endcol;
            if (sp->end_line == MDT_PDB_HIDDEN_LINE)
                return fail(it, MDT_EBADIMAGE, "end line is the hidden marker");
            it->line = line;
            it->column = col;
            it->seen_nonhidden = true;
        }
        it->il_offset = il;
        it->count++;
        return 0;
    }
    it->done = true;
    return MDT_ITEROVER;
}

int mdt_pdb_lookup(mdt_seqpoint *sp, const mdt_pdb *pdb, uint32_t methoddef, uint32_t il_offset)
{
    mdt_seqpoint_iter it;
    mdt_seqpoint p;
    bool found = false;
    int r = mdt_seqpoints_init(&it, pdb, methoddef);
    if (r)
        return r;
    while ((r = mdt_seqpoints_next(&p, &it)) == 0 && p.il_offset <= il_offset) {
        *sp = p;
        found = true;
    }
    if (r && r != MDT_ITEROVER)
        return r;
    return found ? 0
                 : mdt__fail_simple(MDT_ENOTFOUND, "%s: no sequence point at IL 0x%x of method %u",
                                    pdb->path, il_offset, it.method);
}

int mdt_pdb_method_start(mdt_seqpoint *sp, const mdt_pdb *pdb, uint32_t methoddef)
{
    mdt_seqpoint_iter it;
    int r = mdt_seqpoints_init(&it, pdb, methoddef);
    if (r)
        return r;
    while ((r = mdt_seqpoints_next(sp, &it)) == 0)
        if (!sp->hidden)
            return 0;
    if (r != MDT_ITEROVER)
        return r;
    return mdt__fail_simple(MDT_ENOTFOUND, "%s: method %u has no visible sequence point", pdb->path,
                            it.method);
}
