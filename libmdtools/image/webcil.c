/* Webcil images, as described in dotnet/runtime docs/design/mono/webcil.md:
 * a bare payload ("WbIL" header, 16-byte section headers, section data) or
 * that payload carried in data segment 1 of a WebAssembly module (binary
 * format of the WebAssembly core specification, section 5: modules,
 * LEB128 integers, the data section). The payload is a reduced PE: its
 * section table maps RVAs exactly as PE sections do (ECMA-335 II.25.3), so
 * once the table is read the debug directory, CLI header and metadata go
 * through the PE code. Section raw pointers are relative to the payload;
 * c->webcil_base says where the payload starts in the buffer. */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <talloc.h>

#include "image/container.h"

#define WEBCIL_HEADER_V0 28      /* magic, version, counts, two directories */
#define WEBCIL_HEADER_V1 32      /* ... plus TableBase */
#define WEBCIL_SECTION_HEADER 16 /* four u32: virtual size and address, raw size and pointer */
#define WASM_SECTION_DATA 11
#define WASM_SECTION_MAX 13    /* 13 is the tag section of the exception-handling extension */
#define WASM_MAX_CONST_EXPR 16 /* a segment offset is one instruction and `end` */

static uint32_t span_of(const mdt_section *s)
{
    /* The same rule as pe.c's RVA mapping: VirtualSize 0 means SizeOfRawData. */
    return s->virtual_size ? s->virtual_size : s->raw_size;
}

static int read_sections(struct mdt_container *c, rd *r, uint16_t n, unsigned major,
                         uint16_t reloc_index)
{
    size_t table = r->pos;
    if (n > MDT_MAX_SECTIONS)
        return rd_fail(r, MDT_EBADIMAGE, "%u sections (the loader allows at most %u)", n,
                       MDT_MAX_SECTIONS);
    if ((size_t)n * WEBCIL_SECTION_HEADER > rd_left(r))
        return rd_trunc(r, (size_t)n * WEBCIL_SECTION_HEADER, "section table");
    c->sections = talloc_zero_array(c->mem, mdt_section, n ? n : 1);
    if (!c->sections)
        return mdt__fail_simple(MDT_ENOMEM, "out of memory");
    for (uint16_t i = 0; i < n; i++) {
        mdt_section *s = &c->sections[i];
        /* Webcil drops section names; number them so messages can still say which. */
        if (i + 1 == reloc_index)
            snprintf(s->name, sizeof s->name, ".reloc");
        else
            snprintf(s->name, sizeof s->name, "#%u", i + 1u);
        rd_u32(r, &s->virtual_size, "VirtualSize"); /* length checked above */
        rd_u32(r, &s->virtual_address, "VirtualAddress");
        rd_u32(r, &s->raw_size, "SizeOfRawData");
        rd_u32(r, &s->raw_pointer, "PointerToRawData");
    }
    c->nsections = n;
    for (uint16_t i = 0; i < n; i++) {
        const mdt_section *s = &c->sections[i];
        uint64_t end = (uint64_t)s->virtual_address + span_of(s);
        rd at = *r;
        at.pos = table + (size_t)i * WEBCIL_SECTION_HEADER;
        if (end > UINT32_MAX)
            return rd_fail(&at, MDT_EBADIMAGE, "section %u wraps the 32-bit address space", i + 1u);
        if (i + 1 < n && end > c->sections[i + 1].virtual_address)
            return rd_fail(&at, MDT_EBADIMAGE, "sections %u and %u %s", i + 1u, i + 2u,
                           c->sections[i + 1].virtual_address < s->virtual_address
                               ? "are out of order"
                               : "overlap");
        /* Unlike a PE, a payload inside a wasm module is followed by other bytes: raw data
         * past the payload's end would be read from the module, so it is refused. */
        if (s->raw_size && (s->raw_pointer > r->len || s->raw_size > r->len - s->raw_pointer))
            return rd_fail(&at, MDT_ETRUNC,
                           "section %u: raw data 0x%x+0x%x runs past the end of the Webcil "
                           "payload (0x%zx bytes)",
                           i + 1u, s->raw_pointer, s->raw_size, r->len);
        if (major >= 1 && s->raw_size && s->raw_pointer % 16)
            mdt__warn(c->warn,
                      "Webcil section %u: raw data at payload offset 0x%x is not 16-byte "
                      "aligned (version 1 places sections on 16-byte boundaries)",
                      i + 1u, s->raw_pointer);
    }
    return 0;
}

/* The payload occupies [base, base + len) of the buffer. */
static int parse_payload(struct mdt_container *c, uint64_t base, size_t len, rd *window)
{
    rd r = rd_make(c->name, "Webcil payload", c->data + base, len, base);
    const uint8_t *h;
    int e;
    if ((e = rd_bytes(&r, &h, WEBCIL_HEADER_V0, "Webcil header")))
        return e;
    if (memcmp(h, "WbIL", 4) != 0) {
        r.pos = 0;
        return rd_fail(&r, MDT_EBADIMAGE, "Webcil payload does not start with \"WbIL\"");
    }
    uint16_t major = le16(h + 4), minor = le16(h + 6);
    uint16_t nsec = le16(h + 8), reserved0 = le16(h + 10);
    uint32_t cli_rva = le32(h + 12), cli_size = le32(h + 16);
    if (major > 1) {
        r.pos = 4;
        return rd_fail(&r, MDT_EUNSUPPORTED,
                       "Webcil version %u.%u is not supported (versions 0 and 1 are)", major,
                       minor);
    }
    if (minor != 0)
        mdt__warn(c->warn, "Webcil version %u.%u: minor version is not 0; reading as %u.0", major,
                  minor, major);
    /* Version 1 appends TableBase, which the host fills in at load time: its value in a
     * file means nothing, but the section table starts after it. */
    if (major >= 1 && (e = rd_skip(&r, WEBCIL_HEADER_V1 - WEBCIL_HEADER_V0, "TableBase")))
        return e;
    if (major == 0 && reserved0)
        mdt__warn(c->warn, "Webcil 0 header: Reserved0 is %u (expected 0)", reserved0);
    if (major >= 1 && reserved0 > nsec) {
        r.pos = 10;
        return rd_fail(&r, MDT_EBADIMAGE, "relocation section index %u, but there are %u sections",
                       reserved0, nsec);
    }
    c->webcil_base = base;
    if ((e = read_sections(c, &r, nsec, major, major >= 1 ? reserved0 : 0)))
        return e;
    c->pe.nsections = nsec;
    c->pe.debug_dir.rva = le32(h + 20);
    c->pe.debug_dir.size = le32(h + 24);
    mdt__read_debug(c);
    if (!cli_rva) {
        r.pos = 12;
        return rd_fail(&r, MDT_ENOTDOTNET, "no CLI header (PeCliHeaderRva is 0)");
    }
    return mdt__cli_parse(c, cli_rva, cli_size, window);
}

/* WebAssembly unsigned LEB128 for a u32: at most 5 bytes, and the fifth may
 * only carry the top 4 bits. A failed read does not advance. */
static int uleb32(rd *r, uint32_t *v, const char *what)
{
    uint32_t val = 0;
    for (size_t i = 0; i < 5; i++) {
        uint8_t b;
        if (i >= rd_left(r))
            return rd_fail(r, MDT_ETRUNC, "%s: LEB128 truncated after %zu byte(s)", what, i);
        b = r->base[r->pos + i];
        if (i == 4 && (b & 0xF0))
            return rd_fail(r, MDT_EBADIMAGE,
                           "%s: LEB128 longer than 5 bytes or above 32 bits (5th byte 0x%02x)",
                           what, b);
        val |= (uint32_t)(b & 0x7F) << (7 * i);
        if (!(b & 0x80)) {
            r->pos += i + 1;
            *v = val;
            return 0;
        }
    }
    return rd_fail(r, MDT_EBADIMAGE, "%s: bad LEB128", what); /* not reached */
}

/* Signed LEB128 of at most `max` bytes; only skipped (segment offsets). */
static int skip_sleb(rd *r, size_t max, const char *what)
{
    for (size_t i = 0; i < max; i++) {
        if (i >= rd_left(r))
            return rd_fail(r, MDT_ETRUNC, "%s: LEB128 truncated after %zu byte(s)", what, i);
        if (!(r->base[r->pos + i] & 0x80)) {
            r->pos += i + 1;
            return 0;
        }
    }
    return rd_fail(r, MDT_EBADIMAGE, "%s: LEB128 longer than %zu bytes", what, max);
}

/* The offset expression of an active segment: a constant and `end`. */
static int skip_const_expr(rd *r, unsigned seg)
{
    for (int n = 0; n < WASM_MAX_CONST_EXPR; n++) {
        uint8_t op;
        uint32_t idx;
        int e;
        if ((e = rd_u8(r, &op, "segment offset expression")))
            return e;
        switch (op) {
        case 0x0B: /* end */ return 0;
        case 0x41: /* i32.const */ e = skip_sleb(r, 5, "i32.const"); break;
        case 0x42: /* i64.const (memory64) */ e = skip_sleb(r, 10, "i64.const"); break;
        case 0x23: /* global.get */ e = uleb32(r, &idx, "global.get"); break;
        default:
            r->pos--;
            return rd_fail(r, MDT_EUNSUPPORTED,
                           "data segment %u: opcode 0x%02x in its offset expression", seg, op);
        }
        if (e)
            return e;
    }
    return rd_fail(r, MDT_EBADIMAGE, "data segment %u: offset expression has no end", seg);
}

/* One data segment; *seg becomes a window on its bytes. */
static int read_segment(rd *d, unsigned n, rd *seg, const char *region)
{
    uint32_t flags, mem, len;
    int e;
    size_t at = d->pos;
    if ((e = uleb32(d, &flags, "data segment flags")))
        return e;
    switch (flags) {
    case 1: /* passive: what webcil.md prescribes */ break;
    case 0: /* active, memory 0 */
        if ((e = skip_const_expr(d, n)))
            return e;
        break;
    case 2: /* active, explicit memory */
        if ((e = uleb32(d, &mem, "data segment memory index")) || (e = skip_const_expr(d, n)))
            return e;
        break;
    default:
        d->pos = at;
        return rd_fail(d, MDT_EBADIMAGE, "data segment %u: unknown segment kind %u", n, flags);
    }
    if ((e = uleb32(d, &len, "data segment size")))
        return e;
    if (len > rd_left(d))
        return rd_fail(d, MDT_ETRUNC,
                       "data segment %u: 0x%x bytes run past the end of the data section "
                       "(0x%zx left)",
                       n, len, rd_left(d));
    rd_sub(d, seg, d->pos, len, region, "data segment");
    d->pos += len;
    return 0;
}

/* The wrapper: find the data section; segment 0 holds the payload size
 * (and, in wrapper version 1, a table size), segment 1 the payload. */
static int parse_wasm(struct mdt_container *c, rd *window)
{
    rd r = rd_make(c->name, "wasm module", c->data, c->size, 0);
    rd data, seg0, seg1;
    bool have_data = false;
    uint32_t version, nseg, payload_size;
    int e;
    if ((e = rd_skip(&r, 4, "wasm magic")) || (e = rd_u32(&r, &version, "wasm version")))
        return e;
    if (version != 1) {
        r.pos = 4;
        return rd_fail(&r, MDT_EUNSUPPORTED, "WebAssembly binary version %u (only 1 is read)",
                       version);
    }
    while (rd_left(&r)) {
        size_t at = r.pos;
        uint8_t id;
        uint32_t size;
        rd_u8(&r, &id, "section id");
        if (id > WASM_SECTION_MAX) {
            r.pos = at;
            return rd_fail(&r, MDT_EBADIMAGE, "unknown WebAssembly section id %u", id);
        }
        if ((e = uleb32(&r, &size, "section size")))
            return e;
        if (size > rd_left(&r))
            return rd_fail(&r, MDT_ETRUNC,
                           "section id %u at 0x%zx: size 0x%x runs past the end of the module "
                           "(0x%zx bytes left)",
                           id, at, size, rd_left(&r));
        if (id == WASM_SECTION_DATA) {
            if (have_data) {
                r.pos = at;
                return rd_fail(&r, MDT_EBADIMAGE, "second data section");
            }
            rd_sub(&r, &data, r.pos, size, "wasm data section", "data section");
            have_data = true;
        }
        r.pos += size;
    }
    if (!have_data)
        return rd_fail(&r, MDT_EBADIMAGE, "no data section, so no Webcil payload");
    if ((e = uleb32(&data, &nseg, "data segment count")))
        return e;
    if (nseg < 2)
        return rd_fail(&data, MDT_EBADIMAGE,
                       "no Webcil payload: the data section has %u segment(s), the payload "
                       "is segment 1",
                       nseg);
    if (nseg > 2)
        mdt__warn(c->warn, "wasm data section has %u segments (Webcil uses 2); reading segment 1",
                  nseg);
    if ((e = read_segment(&data, 0, &seg0, "wasm data segment 0")))
        return e;
    /* Wrapper version 1 may follow the size with a table size; only a wasm host needs it. */
    if ((e = rd_u32(&seg0, &payload_size, "Webcil payload size")))
        return e;
    if ((e = read_segment(&data, 1, &seg1, "wasm data segment 1")))
        return e;
    if (payload_size > seg1.len) {
        seg0.pos = 0;
        return rd_fail(&seg0, MDT_ETRUNC, "payload size 0x%x exceeds data segment 1 (0x%zx bytes)",
                       payload_size, seg1.len);
    }
    if (payload_size < seg1.len)
        mdt__warn(c->warn, "data segment 1 has 0x%zx bytes after the 0x%x-byte Webcil payload",
                  seg1.len - payload_size, payload_size);
    if (seg1.file_off % 4)
        mdt__warn(c->warn, "Webcil payload at file offset 0x%llx is not 4-byte aligned",
                  (unsigned long long)seg1.file_off);
    return parse_payload(c, seg1.file_off, payload_size, window);
}

int mdt__webcil_parse(struct mdt_container *c, rd *window)
{
    if (c->kind == MDT_KIND_WASM)
        return parse_wasm(c, window);
    return parse_payload(c, 0, c->size, window);
}
