/* PE32 and PE32+ headers, the section table and the CLI header
 * (ECMA-335 II.25.2, II.25.3). Works for both layouts: a flat file (section
 * data at PointerToRawData) and an image mapped by a loader (RVA = offset,
 * read only where the caller declared memory readable: ranges.c).
 * Everything is read byte-wise through the reader; every size is checked
 * against the bytes that are really there. */
#define _DEFAULT_SOURCE /* strnlen */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <talloc.h>

#include "image/container.h"

#define IMAGE_DIRECTORY_ENTRY_DEBUG 6
#define IMAGE_DIRECTORY_ENTRY_COM_DESCRIPTOR 14

static uint32_t span_of(const mdt_section *s)
{
    /* Some linkers leave VirtualSize 0; the loader then uses SizeOfRawData. */
    return s->virtual_size ? s->virtual_size : s->raw_size;
}

static const mdt_section *find_section(const struct mdt_container *c, uint32_t rva)
{
    size_t lo = 0, hi = c->nsections;
    while (lo < hi) { /* sections are sorted and disjoint (checked at open) */
        size_t mid = lo + (hi - lo) / 2;
        const mdt_section *s = &c->sections[mid];
        if (rva < s->virtual_address)
            hi = mid;
        else if (rva - s->virtual_address >= span_of(s))
            lo = mid + 1;
        else
            return s;
    }
    return NULL;
}

int mdt__rva_ptr(const struct mdt_container *c, uint32_t rva, uint32_t len, const uint8_t **p,
                 uint64_t *file_off, const char *what)
{
    mdt_place pl = MDT_PLACE_NONE;
    pl.file = c->name;
    pl.region = "RVA";
    pl.offset = rva;
    if (c->kind == MDT_KIND_PE_MAPPED) {
        /* The caller's readable ranges, never the headers, say what is
         * there (image/ranges.c). */
        const struct mdt_rva_run *run = mdt__run_of(c, rva, len);
        if (!run) {
            run = mdt__run_of(c, rva, 0);
            if (run && rva < run->hi)
                return mdt__fail(MDT_ETRUNC, pl,
                                 "%s: 0x%x bytes at RVA 0x%x run past the "
                                 "readable memory, which ends at RVA 0x%llx",
                                 what, len, rva, (unsigned long long)run->hi);
            return mdt__fail(MDT_ETRUNC, pl,
                             "%s: RVA 0x%x is not in memory declared readable "
                             "(the mapped image has %zu readable range%s)",
                             what, rva, c->nruns, c->nruns == 1 ? "" : "s");
        }
        *p = c->data + rva;
        if (file_off)
            *file_off = rva;
        return 0;
    }
    const mdt_section *s = find_section(c, rva);
    if (!s)
        return mdt__fail(MDT_ENOTFOUND, pl, "%s: RVA 0x%x is in no section", what, rva);
    uint32_t delta = rva - s->virtual_address;
    uint32_t span = span_of(s);
    if (len > span - delta)
        return mdt__fail(MDT_EBADIMAGE, pl,
                         "%s: 0x%x bytes at RVA 0x%x straddle the end of section %s", what, len,
                         rva, s->name);
    uint32_t raw = s->raw_size < span ? s->raw_size : span;
    if (delta > raw || len > raw - delta)
        return mdt__fail(MDT_ETRUNC, pl,
                         "%s: 0x%x bytes at RVA 0x%x lie past the raw data of section %s", what,
                         len, rva, s->name);
    uint64_t off = c->webcil_base + (uint64_t)s->raw_pointer + delta;
    if (off > c->size || len > c->size - off) {
        pl.file_offset = off;
        return mdt__fail(MDT_ETRUNC, pl, "%s: 0x%x bytes at RVA 0x%x beyond end of file", what, len,
                         rva);
    }
    int e = mdt__container_need(c, off, len);
    if (e)
        return e;
    *p = c->data + off;
    if (file_off)
        *file_off = off;
    return 0;
}

int mdt__container_rva(const struct mdt_container *c, uint32_t rva, uint32_t len, const uint8_t **p)
{
    if (c->kind == MDT_KIND_METADATA)
        return mdt__fail_simple(MDT_ENOTFOUND, "raw metadata has no RVAs");
    return mdt__rva_ptr(c, rva, len, p, NULL, "read");
}

int mdt__container_rva_to_offset(const struct mdt_container *c, uint32_t rva, uint64_t *offset)
{
    const uint8_t *p;
    return c->kind == MDT_KIND_METADATA
               ? mdt__fail_simple(MDT_ENOTFOUND, "raw metadata has no RVAs")
               : mdt__rva_ptr(c, rva, 1, &p, offset, "RVA");
}

int mdt__container_read_rva(const struct mdt_container *c, uint32_t rva, void *buf, uint32_t len)
{
    mdt_place pl = MDT_PLACE_NONE;
    uint8_t *out = buf;
    const uint8_t *p;
    if (c->kind == MDT_KIND_METADATA)
        return mdt__fail_simple(MDT_ENOTFOUND, "raw metadata has no RVAs");
    if (c->kind == MDT_KIND_PE_MAPPED)
        return (mdt__rva_ptr(c, rva, len, &p, NULL, "read") ?: (memcpy(buf, p, len), 0));
    pl.file = c->name;
    pl.region = "RVA";
    pl.offset = rva;
    const mdt_section *s = find_section(c, rva);
    if (!s)
        return mdt__fail(MDT_ENOTFOUND, pl, "RVA 0x%x is in no section", rva);
    uint32_t delta = rva - s->virtual_address, span = span_of(s);
    if (len > span - delta)
        return mdt__fail(MDT_EBADIMAGE, pl, "0x%x bytes at RVA 0x%x straddle section %s", len, rva,
                         s->name);
    /* Raw bytes that exist in the file; the rest of the span is zeros. */
    uint64_t start = c->webcil_base + (uint64_t)s->raw_pointer;
    uint64_t have = s->raw_size;
    if (start > c->size)
        have = 0;
    else if (have > c->size - start)
        have = c->size - start;
    if (delta < have) {
        int e = mdt__container_need(c, start + delta, len < have - delta ? len : have - delta);
        if (e)
            return e;
    }
    for (uint32_t i = 0; i < len; i++) {
        uint64_t d = (uint64_t)delta + i;
        out[i] = d < have ? c->data[start + d] : 0;
    }
    return 0;
}

static int read_sections(struct mdt_container *c, rd *r, uint16_t n)
{
    if (n > MDT_MAX_SECTIONS)
        return rd_fail(r, MDT_EBADIMAGE, "%u sections (the loader allows at most %u)", n,
                       MDT_MAX_SECTIONS);
    if ((size_t)n * 40 > rd_left(r))
        return rd_trunc(r, (size_t)n * 40, "section table");
    c->sections = talloc_zero_array(c->mem, mdt_section, n ? n : 1);
    if (!c->sections)
        return mdt__fail_simple(MDT_ENOMEM, "out of memory");
    for (uint16_t i = 0; i < n; i++) {
        const uint8_t *h;
        mdt_section *s = &c->sections[i];
        h = r->base + r->pos; /* length checked above */
        r->pos += 40;
        memcpy(s->name, h, 8);
        s->name[8] = '\0';
        s->name[strnlen(s->name, 8)] = '\0';
        s->virtual_size = le32(h + 8);
        s->virtual_address = le32(h + 12);
        s->raw_size = le32(h + 16);
        s->raw_pointer = le32(h + 20);
    }
    c->nsections = n;
    for (uint16_t i = 0; i < n; i++) {
        const mdt_section *s = &c->sections[i];
        uint64_t end = (uint64_t)s->virtual_address + span_of(s);
        if (end > UINT32_MAX) {
            rd at = *r;
            at.pos -= (size_t)(n - i) * 40;
            return rd_fail(&at, MDT_EBADIMAGE, "section %u (%s) wraps the 32-bit address space",
                           i + 1, s->name);
        }
        if (i + 1 < n && end > c->sections[i + 1].virtual_address) {
            rd at = *r;
            at.pos -= (size_t)(n - i) * 40;
            return rd_fail(&at, MDT_EBADIMAGE, "sections %u (%s) and %u (%s) %s", i + 1, s->name,
                           i + 2, c->sections[i + 1].name,
                           c->sections[i + 1].virtual_address < s->virtual_address
                               ? "are out of order"
                               : "overlap");
        }
        if (c->kind != MDT_KIND_PE_MAPPED && s->raw_size &&
            ((uint64_t)s->raw_pointer + s->raw_size > c->size))
            mdt__warn(c->warn, "section %s: raw data 0x%x+0x%x runs past end of file (0x%zx)",
                      s->name, s->raw_pointer, s->raw_size, c->size);
    }
    return 0;
}

void mdt__read_debug(struct mdt_container *c)
{
    const mdt_data_dir *dd = &c->pe.debug_dir;
    const uint8_t *p;
    uint32_t n;
    if (!dd->rva || !dd->size)
        return;
    n = dd->size / 28;
    if (n > MDT_MAX_DEBUG) {
        mdt__warn(c->warn, "debug directory has %u entries; reading the first %u", n,
                  MDT_MAX_DEBUG);
        n = MDT_MAX_DEBUG;
    }
    if (mdt__rva_ptr(c, dd->rva, n * 28, &p, NULL, "debug directory")) {
        char msg[300];
        mdt__warn(c->warn, "debug directory unreadable: %s", mdt_error_message(msg, sizeof msg));
        mdt__err_forget_one(); /* mdt__rva_ptr records one failure */
        return;
    }
    for (uint32_t i = 0; i < n; i++) {
        mdt_debug_entry *e = &c->debug[c->pe.ndebug];
        const uint8_t *d = p + (size_t)i * 28;
        memset(e, 0, sizeof *e);
        e->time_date_stamp = le32(d + 4);
        e->major_version = le16(d + 8);
        e->minor_version = le16(d + 10);
        e->type = le32(d + 12);
        e->size = le32(d + 16);
        e->rva = le32(d + 20);
        e->file_pointer = le32(d + 24);
        c->pe.ndebug++;
        if (e->type != 2 || e->size < 24)
            continue;
        /* CodeView RSDS: signature, GUID, age, NUL-terminated path. */
        const uint8_t *cv = NULL;
        if (c->kind == MDT_KIND_PE_MAPPED || c->kind == MDT_KIND_WEBCIL ||
            c->kind == MDT_KIND_WASM || !e->file_pointer) {
            if (!e->rva) {
                cv = NULL;
            } else if (mdt__rva_ptr(c, e->rva, e->size, &cv, NULL, "CodeView")) {
                mdt__err_forget_one(); /* it records one failure */
                cv = NULL;
            }
        } else if ((uint64_t)e->file_pointer + e->size <= c->size) {
            if (mdt__container_need(c, e->file_pointer, e->size))
                mdt__err_forget_one(); /* it records one failure */
            else
                cv = c->data + e->file_pointer;
        }
        if (!cv || memcmp(cv, "RSDS", 4) != 0) {
            mdt__warn(c->warn, "debug entry %u: CodeView data unreadable or not RSDS", i);
            continue;
        }
        e->has_codeview = true;
        memcpy(e->pdb_guid, cv + 4, 16);
        e->pdb_age = le32(cv + 20);
        if (memchr(cv + 24, 0, e->size - 24))
            e->pdb_path = (const char *)(cv + 24);
        else
            mdt__warn(c->warn, "debug entry %u: PDB path not NUL-terminated", i);
    }
}

/* CLI header (II.25.3.3), and the metadata window it points at. */
int mdt__cli_parse(struct mdt_container *c, uint32_t cli_rva, uint32_t cli_size, rd *window)
{
    const uint8_t *p;
    uint64_t off;
    int e;
    mdt_place pl = MDT_PLACE_NONE;
    pl.file = c->name;
    pl.region = "CLI header";
    if (!cli_rva)
        return mdt__fail(MDT_ENOTDOTNET, pl, "no CLI header (data directory 14 is empty)");
    if (cli_size < 72)
        mdt__warn(c->warn, "CLI header size %u is below 72; reading 72 bytes", cli_size);
    if ((e = mdt__rva_ptr(c, cli_rva, 72, &p, &off, "CLI header")))
        return e;
    rd r = rd_make(c->name, "CLI header", p, 72, off);
    uint32_t cb = le32(p);
    if (cb < 72)
        mdt__warn(c->warn, "CLI header cb field is %u (expected 72)", cb);
    c->pe.cli_major = le16(p + 4);
    c->pe.cli_minor = le16(p + 6);
    c->pe.metadata.rva = le32(p + 8);
    c->pe.metadata.size = le32(p + 12);
    c->pe.cli_flags = le32(p + 16);
    c->pe.entry_point = le32(p + 20);
    c->pe.resources.rva = le32(p + 24);
    c->pe.resources.size = le32(p + 28);
    c->pe.strong_name_signature.rva = le32(p + 32);
    c->pe.strong_name_signature.size = le32(p + 36);
    c->pe.vtable_fixups.rva = le32(p + 48);
    c->pe.vtable_fixups.size = le32(p + 52);
    c->pe.managed_native_header.rva = le32(p + 64);
    c->pe.managed_native_header.size = le32(p + 68);
    if (!c->pe.metadata.rva || !c->pe.metadata.size) {
        r.pos = 8;
        return rd_fail(&r, MDT_EBADIMAGE, "CLI header has no metadata directory");
    }
    if ((e = mdt__rva_ptr(c, c->pe.metadata.rva, c->pe.metadata.size, &p, &off, "metadata")))
        return e;
    *window = rd_make(c->name, "metadata root", p, c->pe.metadata.size, off);
    return 0;
}

int mdt__pe_parse(struct mdt_container *c, rd *window)
{
    rd r = mdt__file_reader(c);
    uint32_t lfanew, sig, ndirs = 0;
    uint16_t nsec, opt_size, magic;
    int e;
    r.region = "DOS header";
    if ((e = rd_need(&r, 64, "DOS header")))
        return e;
    lfanew = le32(c->data + 60);
    r.pos = 60; /* a bad e_lfanew is reported where it is stored */
    if ((e = rd_seek(&r, lfanew, "e_lfanew")))
        return e;
    r.region = "PE header";
    if ((e = rd_u32(&r, &sig, "PE signature")))
        return e;
    if (sig != 0x00004550) {
        r.pos -= 4;
        return rd_fail(&r, MDT_ENOTDOTNET, "no PE signature at e_lfanew 0x%x", lfanew);
    }
    const uint8_t *coff;
    if ((e = rd_bytes(&r, &coff, 20, "COFF header")))
        return e;
    c->pe.machine = le16(coff);
    nsec = le16(coff + 2);
    opt_size = le16(coff + 16);
    c->pe.characteristics = le16(coff + 18);
    size_t opt_start = r.pos;
    rd opt;
    /* rd_sub's message names the window it checks against: in a loader
     * layout, the readable range holding the headers. */
    r.region = c->kind == MDT_KIND_PE_MAPPED ? "readable headers" : "file";
    if ((e = rd_sub(&r, &opt, r.pos, opt_size, "optional header", "optional header")))
        return e;
    if ((e = rd_u16(&opt, &magic, "optional header magic")))
        return e;
    if (magic == 0x10b) {
        const uint8_t *h;
        if ((e = rd_bytes(&opt, &h, 94, "PE32 optional header")))
            return e;
        c->pe.image_base = le32(h + 26);
        c->pe.size_of_image = le32(h + 54);
        c->pe.size_of_headers = le32(h + 58);
        c->pe.subsystem = le16(h + 66);
        c->pe.dll_characteristics = le16(h + 68);
        ndirs = le32(h + 90);
    } else if (magic == 0x20b) {
        const uint8_t *h;
        c->pe.pe32plus = true;
        if ((e = rd_bytes(&opt, &h, 110, "PE32+ optional header")))
            return e;
        c->pe.image_base = le64(h + 22);
        c->pe.size_of_image = le32(h + 54);
        c->pe.size_of_headers = le32(h + 58);
        c->pe.subsystem = le16(h + 66);
        c->pe.dll_characteristics = le16(h + 68);
        ndirs = le32(h + 106);
    } else {
        opt.pos -= 2;
        return rd_fail(&opt, MDT_EBADIMAGE, "unknown optional header magic 0x%x", magic);
    }
    if (ndirs > 16) {
        mdt__warn(c->warn, "NumberOfRvaAndSizes is %u; using 16", ndirs);
        ndirs = 16;
    }
    if ((size_t)ndirs * 8 > rd_left(&opt))
        ndirs = (uint32_t)(rd_left(&opt) / 8);
    mdt_data_dir dirs[16] = {{0, 0}};
    for (uint32_t i = 0; i < ndirs; i++) {
        rd_u32(&opt, &dirs[i].rva, "data directory");
        rd_u32(&opt, &dirs[i].size, "data directory");
    }
    c->pe.debug_dir = dirs[IMAGE_DIRECTORY_ENTRY_DEBUG];
    r.pos = opt_start + opt_size;
    r.region = "section table";
    if ((e = read_sections(c, &r, nsec)))
        return e;
    c->pe.nsections = nsec;
    mdt__read_debug(c);
    mdt_place pl = MDT_PLACE_NONE;
    pl.file = c->name;
    pl.region = "PE header";
    if (ndirs <= IMAGE_DIRECTORY_ENTRY_COM_DESCRIPTOR ||
        !dirs[IMAGE_DIRECTORY_ENTRY_COM_DESCRIPTOR].rva)
        return mdt__fail(MDT_ENOTDOTNET, pl, "no CLI header: a native PE, not a .NET image");
    return mdt__cli_parse(c, dirs[IMAGE_DIRECTORY_ENTRY_COM_DESCRIPTOR].rva,
                          dirs[IMAGE_DIRECTORY_ENTRY_COM_DESCRIPTOR].size, window);
}
