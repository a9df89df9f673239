/* Method bodies: the tiny and fat headers (ECMA-335 II.25.4.2-4), the
 * code, and the extra data sections after it (II.25.4.5) with their
 * exception clauses, small and fat (II.25.4.6). A body is found at its
 * MethodDef's RVA (also in a ReadyToRun image, whose IL stays in the file)
 * or handed over as bytes. Everything is read through util/reader.h's
 * window over exactly the body's bytes; the sections are walked once to
 * size and count them, and walked again for a clause on demand, so a body
 * is a value that allocates nothing. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>

#include <mdtools/errors.h>
#include <mdtools/il.h>
#include <mdtools/image.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>

#include "il/il_int.h"
#include "util/error.h"
#include "util/reader.h"

/* Section kinds (CorILMethod_Sect_*). */
#define SECT_EHTABLE 0x01u
#define SECT_KINDMASK 0x3Fu
#define SECT_FATFORMAT 0x40u
#define SECT_MORESECTS 0x80u

#define SMALL_CLAUSE 12u
#define FAT_CLAUSE 24u

int il__fail(const mdt_il_body *b, bool code, uint64_t off, int err, const char *fmt, ...)
{
    char region[40], what[256];
    mdt_place pl = MDT_PLACE_NONE;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (b->method)
        snprintf(region, sizeof region, "%s of 0x%08x", code ? "IL" : "body", b->method);
    else
        snprintf(region, sizeof region, "%s", code ? "IL" : "method body");
    pl.file = b->name;
    pl.region = region;
    pl.offset = off;
    if (b->file_offset != UINT64_MAX)
        pl.file_offset = b->file_offset + (code ? b->header_size : 0) + off;
    return mdt__fail(err, pl, "%s", what);
}

static uint32_t align4(uint64_t rva, uint64_t pos)
{
    return (uint32_t)(pos + ((4 - ((rva + pos) & 3)) & 3));
}

/* Reads the header at r's start into *b; r covers the bytes that may be
 * read. Leaves r after the code. */
static int read_header(mdt_il_body *b, rd *r)
{
    uint8_t b0;
    if (rd_left(r) < 1)
        return il__fail(b, false, 0, MDT_ETRUNC, "no byte of the method header");
    b0 = r->base[0];
    if ((b0 & 3) == MDT_IL_TINY_FORMAT) {
        (void)rd_skip(r, 1, "tiny header");
        b->fat = false;
        b->flags = MDT_IL_TINY_FORMAT;
        b->header_size = 1;
        b->max_stack = 8;
        b->code_size = b0 >> 2;
    } else if ((b0 & 3) == MDT_IL_FAT_FORMAT) {
        uint16_t fs = 0, ms = 0;
        uint32_t cs = 0, lt = 0, hs;
        if (rd_left(r) < 12)
            return il__fail(b, false, 0, MDT_ETRUNC,
                            "fat method header needs 12 bytes, %zu readable", rd_left(r));
        (void)rd_u16(r, &fs, "fat header flags");
        (void)rd_u16(r, &ms, "max stack");
        (void)rd_u32(r, &cs, "code size");
        (void)rd_u32(r, &lt, "locals signature token");
        hs = (uint32_t)(fs >> 12) * 4;
        if (hs < 12)
            return il__fail(b, false, 0, MDT_EBADIMAGE,
                            "fat method header of %u bytes (Size %u): at least 12", hs, fs >> 12);
        if (hs > rd_left(r) + 12)
            return il__fail(b, false, 0, MDT_ETRUNC, "fat method header of %u bytes, %zu readable",
                            hs, rd_left(r) + 12);
        (void)rd_skip(r, hs - 12, "rest of the fat header");
        b->fat = true;
        b->flags = fs & 0x0FFF;
        b->header_size = (uint16_t)hs;
        b->max_stack = ms;
        b->init_locals = (fs & MDT_IL_INIT_LOCALS) != 0;
        b->locals_token = lt;
        b->code_size = cs;
    } else {
        return il__fail(b, false, 0, MDT_EBADIMAGE,
                        "first byte 0x%02x is neither a tiny (..10) nor a fat (..11) header", b0);
    }
    if (b->code_size > rd_left(r))
        return il__fail(b, false, b->header_size, MDT_ETRUNC,
                        "code of %u bytes, %zu readable after the header", b->code_size,
                        rd_left(r));
    b->code = r->base + r->pos;
    (void)rd_skip(r, b->code_size, "code");
    return 0;
}

/* One section header at r's position: kind and size (header included). */
static int section_at(const mdt_il_body *b, const rd *r, uint8_t *kind, uint32_t *size)
{
    const uint8_t *p;
    if (rd_left(r) < 4)
        return il__fail(b, false, r->pos, MDT_ETRUNC, "section header needs 4 bytes, %zu readable",
                        rd_left(r));
    p = r->base + r->pos;
    *kind = p[0];
    *size = (*kind & SECT_FATFORMAT) ? (uint32_t)p[1] | (uint32_t)p[2] << 8 | (uint32_t)p[3] << 16
                                     : p[1];
    if (*size < 4)
        return il__fail(b, false, r->pos, MDT_EBADIMAGE,
                        "section (kind 0x%02x) of %u bytes: its header alone has 4", *kind, *size);
    if (*size > rd_left(r))
        return il__fail(b, false, r->pos, MDT_ETRUNC,
                        "section (kind 0x%02x) of %u bytes, %zu readable", *kind, *size,
                        rd_left(r));
    return 0;
}

static uint32_t clauses_in(uint8_t kind, uint32_t size)
{
    if ((kind & SECT_KINDMASK) != SECT_EHTABLE)
        return 0;
    /* As the CLR counts them: whole clauses after the 4-byte header. */
    return (size - 4) / ((kind & SECT_FATFORMAT) ? FAT_CLAUSE : SMALL_CLAUSE);
}

/* Walks the sections from r's position (after the code); fills the
 * section fields of b. */
static int read_sections(mdt_il_body *b, rd *r)
{
    uint8_t kind;
    uint32_t size;
    size_t start;
    int e;
    b->nsections = 0;
    b->neh = 0;
    b->sections = NULL;
    b->sections_size = 0;
    if (!(b->flags & MDT_IL_MORE_SECTS) || !b->fat)
        return 0;
    if ((e = rd_seek(r, align4(b->rva, r->pos), "sections")))
        return il__fail(b, false, r->pos, MDT_ETRUNC, "the sections after the code: none readable");
    start = r->pos;
    for (;;) {
        if ((e = section_at(b, r, &kind, &size)))
            return e;
        b->nsections++;
        b->neh += clauses_in(kind, size);
        (void)rd_skip(r, size, "section");
        if (!(kind & SECT_MORESECTS))
            break;
        if (rd_seek(r, align4(b->rva, r->pos), "sections"))
            return il__fail(b, false, r->pos, MDT_ETRUNC,
                            "section %u says more follow; none readable", b->nsections);
    }
    b->sections = r->base + start;
    b->sections_size = (uint32_t)(r->pos - start);
    return 0;
}

static int parse(mdt_il_body *out, rd *r)
{
    int e;
    if ((e = read_header(out, r)) || (e = read_sections(out, r)))
        return e;
    out->size = (uint32_t)r->pos;
    return 0;
}

static void body_init(mdt_il_body *b, const mdt_image *img, const char *name, uint32_t method,
                      uint32_t rva, uint64_t file_offset)
{
    *b = (mdt_il_body){0};
    b->img = img;
    b->name = name ? name : img ? mdt_image_name(img) : NULL;
    b->method = method;
    b->rva = rva;
    b->file_offset = file_offset;
}

int mdt_il_body_parse(mdt_il_body *out, const mdt_image *img, const char *name, uint32_t method,
                      const void *bytes, size_t len, uint32_t rva)
{
    rd r;
    int e;
    if (!out || (!bytes && len))
        return mdt__fail_simple(MDT_EINVAL, "mdt_il_body_parse: %s",
                                !out ? "no output" : "no bytes");
    body_init(out, img, name, method, rva, UINT64_MAX);
    r = rd_make(out->name, "method body", bytes, len, UINT64_MAX);
    if ((e = parse(out, &r))) {
        *out = (mdt_il_body){0};
        return e;
    }
    return 0;
}

/* `need` bytes from the body's start, or a located error saying what did
 * not read. */
static int rva_bytes(const uint8_t **p, const mdt_il_body *b, const mdt_image *img, uint64_t need,
                     const char *what)
{
    char msg[200];
    uint64_t m = mdt__err_mark();
    int e;
    if (need > UINT32_MAX)
        return il__fail(b, false, 0, MDT_ETRUNC, "%s: 0x%llx bytes from the header", what,
                        (unsigned long long)need);
    if (!(e = mdt_image_rva(p, img, b->rva, (uint32_t)need)))
        return 0;
    snprintf(msg, sizeof msg, "%.150s", mdt_error_last()->what);
    mdt__err_forget(m);
    return il__fail(b, false, 0, e == MDT_ENOTFOUND ? MDT_ETRUNC : e,
                    "%s: 0x%llx bytes at RVA 0x%08x do not read (%s)", what,
                    (unsigned long long)need, b->rva, msg);
}

/* How many bytes the body at its RVA spans, asking the image for each part
 * as it is learnt (an image knows only whole ranges of readable bytes).
 * Shapes parse() refuses are sized so that parse() meets them and says
 * why, located. */
static int body_extent(uint32_t *total, const mdt_il_body *b, const mdt_image *img)
{
    const uint8_t *p;
    uint32_t hs, flags;
    uint64_t pos;
    int e;
    if ((e = rva_bytes(&p, b, img, 1, "method header")))
        return e;
    if ((p[0] & 3) == MDT_IL_TINY_FORMAT) {
        *total = 1 + (p[0] >> 2);
        return 0;
    }
    if ((p[0] & 3) != MDT_IL_FAT_FORMAT) {
        *total = 1;
        return 0;
    }
    if ((e = rva_bytes(&p, b, img, 12, "fat method header")))
        return e;
    flags = le16(p);
    hs = (flags >> 12) * 4;
    if (hs < 12) {
        *total = 12;
        return 0;
    }
    pos = (uint64_t)hs + le32(p + 4);
    if ((e = rva_bytes(&p, b, img, pos, "method header and code")))
        return e;
    if (!(flags & MDT_IL_MORE_SECTS)) {
        *total = (uint32_t)pos;
        return 0;
    }
    for (;;) {
        uint8_t kind;
        uint32_t size;
        pos = align4(b->rva, pos);
        if ((e = rva_bytes(&p, b, img, pos + 4, "section header")))
            return e;
        kind = p[pos];
        size = (kind & SECT_FATFORMAT)
                   ? (uint32_t)p[pos + 1] | (uint32_t)p[pos + 2] << 8 | (uint32_t)p[pos + 3] << 16
                   : p[pos + 1];
        if (size < 4) {
            *total = (uint32_t)pos + 4;
            return 0;
        }
        if ((e = rva_bytes(&p, b, img, pos + size, "section")))
            return e;
        pos += size;
        if (!(kind & SECT_MORESECTS)) {
            *total = (uint32_t)pos;
            return 0;
        }
    }
}

int mdt_il_body_get(mdt_il_body *out, const mdt_image *img, uint32_t method)
{
    mdt_row row;
    uint32_t rva, impl, total;
    const uint8_t *p;
    uint64_t off = UINT64_MAX;
    rd r;
    int e;
    if (!out || !img || MDT_TOKEN_TABLE(method) != MDT_TABLE_MethodDef)
        return mdt__fail_simple(MDT_EINVAL, "mdt_il_body_get: %s",
                                !out || !img ? "no output or image" : "not a MethodDef token");
    *out = (mdt_il_body){0};
    if ((e = mdt_row_get(&row, img, MDT_TABLE_MethodDef, MDT_TOKEN_RID(method))))
        return e;
    rva = mdt_row_raw(&row, MDT_COL_MethodDef_RVA);
    impl = mdt_row_raw(&row, MDT_COL_MethodDef_ImplFlags);
    body_init(out, img, NULL, method, rva, UINT64_MAX);
    if (rva == 0)
        return il__fail(out, false, 0, MDT_ENOTFOUND, "method has no body (RVA 0)");
    /* CodeType (II.23.1.10): 0 IL, 1 native, 2 OPTIL, 3 runtime. */
    if ((impl & 3) != 0)
        return il__fail(out, false, 0, MDT_EUNSUPPORTED,
                        "the body is not IL (ImplFlags CodeType %u: %s)", impl & 3,
                        (impl & 3) == 1   ? "native"
                        : (impl & 3) == 2 ? "OPTIL"
                                          : "runtime");
    {
        uint64_t m = mdt__err_mark();
        if (mdt_image_rva_to_offset(&off, img, rva))
            off = UINT64_MAX;
        mdt__err_forget(m);
    }
    out->file_offset = off;
    if ((e = body_extent(&total, out, img)))
        goto fail;
    if ((e = mdt_image_rva(&p, img, rva, total))) {
        char msg[200];
        snprintf(msg, sizeof msg, "%.150s", mdt_error_last()->what);
        e = il__fail(out, false, 0, e == MDT_ENOTFOUND ? MDT_ETRUNC : e,
                     "%u bytes at RVA 0x%08x do not read: %s", total, rva, msg);
        goto fail;
    }
    r = rd_make(out->name, "method body", p, total, off);
    if ((e = parse(out, &r)))
        goto fail;
    return 0;
fail:
    *out = (mdt_il_body){0};
    return e;
}

int mdt_il_eh_get(mdt_il_eh *out, const mdt_il_body *b, uint32_t i)
{
    rd r;
    uint32_t seen = 0;
    if (!out || !b)
        return mdt__fail_simple(MDT_EINVAL, "mdt_il_eh_get: no %s", !out ? "output" : "body");
    if (i >= b->neh)
        return il__fail(b, false, 0, MDT_ENOTFOUND, "no exception clause %u (%u in the body)", i,
                        b->neh);
    /* Where the sections start, from the header: offsets in messages and
     * the alignment of each section are measured from there. */
    size_t base = (size_t)(b->sections - b->code) + b->header_size;
    r = rd_make(b->name, "method body", b->sections, b->sections_size, UINT64_MAX);
    for (;;) {
        uint8_t kind;
        uint32_t size, n;
        int e;
        if ((e = section_at(b, &r, &kind, &size)))
            return e;
        n = clauses_in(kind, size);
        if (i < seen + n) {
            bool fat = kind & SECT_FATFORMAT;
            size_t pos = r.pos + 4 + (size_t)(i - seen) * (fat ? FAT_CLAUSE : SMALL_CLAUSE);
            const uint8_t *c = r.base + pos;
            uint64_t where = base + pos;
            uint64_t code = b->code_size;
            *out = (mdt_il_eh){0};
            out->fat = fat;
            if (fat) {
                out->kind = le32(c);
                out->try_start = le32(c + 4);
                out->try_length = le32(c + 8);
                out->handler_start = le32(c + 12);
                out->handler_length = le32(c + 16);
            } else {
                out->kind = le16(c);
                out->try_start = le16(c + 2);
                out->try_length = c[4];
                out->handler_start = le16(c + 5);
                out->handler_length = c[7];
            }
            uint32_t last = le32(c + (fat ? 20 : 8));
            if (out->kind == MDT_IL_EH_CATCH)
                out->catch_type = last;
            else if (out->kind == MDT_IL_EH_FILTER)
                out->filter_start = last;
            else if (out->kind != MDT_IL_EH_FINALLY && out->kind != MDT_IL_EH_FAULT)
                return il__fail(b, false, where, MDT_EBADIMAGE,
                                "exception clause %u: kind 0x%x is none of catch (0), filter (1), "
                                "finally (2), fault (4)",
                                i, out->kind);
            if ((uint64_t)out->try_start + out->try_length > code)
                return il__fail(b, false, where, MDT_EBADIMAGE,
                                "exception clause %u: try block 0x%x+0x%x outside the code "
                                "(0x%x bytes)",
                                i, out->try_start, out->try_length, b->code_size);
            if ((uint64_t)out->handler_start + out->handler_length > code)
                return il__fail(b, false, where, MDT_EBADIMAGE,
                                "exception clause %u: handler 0x%x+0x%x outside the code "
                                "(0x%x bytes)",
                                i, out->handler_start, out->handler_length, b->code_size);
            if (out->kind == MDT_IL_EH_FILTER && out->filter_start >= code)
                return il__fail(b, false, where, MDT_EBADIMAGE,
                                "exception clause %u: filter at 0x%x outside the code "
                                "(0x%x bytes)",
                                i, out->filter_start, b->code_size);
            return 0;
        }
        seen += n;
        (void)rd_skip(&r, size, "section");
        if (!(kind & SECT_MORESECTS))
            break;
        size_t next = align4((uint64_t)b->rva + base, r.pos);
        if (rd_seek(&r, next, "sections"))
            break;
    }
    return il__fail(b, false, 0, MDT_ETRUNC,
                    "exception clause %u: the sections hold fewer than the body counted", i);
}
