/* PE32 and PE32+ headers, the section table and the CLI header
 * (ECMA-335 II.25.2, II.25.3). Works for both layouts: a flat file (section
 * data at PointerToRawData) and an image mapped by a loader (RVA = offset,
 * read only where the caller declared memory readable: ranges.c).
 * Everything is read byte-wise through the reader; every size is checked
 * against the bytes that are really there. */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <talloc.h>

#include "image/image_int.h"

#define IMAGE_DIRECTORY_ENTRY_DEBUG 6
#define IMAGE_DIRECTORY_ENTRY_COM_DESCRIPTOR 14

static uint32_t span_of(const mdt_section *s)
{
    /* Some linkers leave VirtualSize 0; the loader then uses SizeOfRawData. */
    return s->virtual_size ? s->virtual_size : s->raw_size;
}

static const mdt_section *find_section(const struct mdt_image *img, uint32_t rva)
{
    size_t lo = 0, hi = img->nsections;
    while (lo < hi) { /* sections are sorted and disjoint (checked at open) */
        size_t mid = lo + (hi - lo) / 2;
        const mdt_section *s = &img->sections[mid];
        if (rva < s->virtual_address)
            hi = mid;
        else if (rva - s->virtual_address >= span_of(s))
            lo = mid + 1;
        else
            return s;
    }
    return NULL;
}

int mdt__rva_ptr(const struct mdt_image *img, uint32_t rva, uint32_t len, const uint8_t **p,
                 uint64_t *file_off, const char *what)
{
    mdt_place pl = MDT_PLACE_NONE;
    pl.img = img;
    pl.region = "RVA";
    pl.offset = rva;
    if (img->kind == MDT_KIND_PE_MAPPED) {
        /* The caller's readable ranges, never the headers, say what is
         * there (image/ranges.c). */
        const struct mdt_rva_run *run = mdt__run_of(img, rva, len);
        if (!run) {
            run = mdt__run_of(img, rva, 0);
            if (run && rva < run->hi)
                return mdt__fail(MDT_ETRUNC, pl, "%s: 0x%x bytes at RVA 0x%x run past the "
                                 "readable memory, which ends at RVA 0x%llx", what, len, rva,
                                 (unsigned long long)run->hi);
            return mdt__fail(MDT_ETRUNC, pl, "%s: RVA 0x%x is not in memory declared readable "
                             "(the mapped image has %zu readable range%s)", what, rva,
                             img->nruns, img->nruns == 1 ? "" : "s");
        }
        *p = img->data + rva;
        if (file_off)
            *file_off = rva;
        return 0;
    }
    const mdt_section *s = find_section(img, rva);
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
    uint64_t off = img->webcil_base + (uint64_t)s->raw_pointer + delta;
    if (off > img->size || len > img->size - off) {
        pl.file_offset = off;
        return mdt__fail(MDT_ETRUNC, pl, "%s: 0x%x bytes at RVA 0x%x beyond end of file", what,
                         len, rva);
    }
    *p = img->data + off;
    if (file_off)
        *file_off = off;
    return 0;
}

int mdt_image_rva(const uint8_t **p, const mdt_image *img, uint32_t rva, uint32_t len)
{
    if (img->kind == MDT_KIND_METADATA)
        return mdt__fail_simple(MDT_ENOTFOUND, "raw metadata has no RVAs");
    return mdt__rva_ptr(img, rva, len, p, NULL, "read");
}

int mdt_image_rva_to_offset(uint64_t *offset, const mdt_image *img, uint32_t rva)
{
    const uint8_t *p;
    return mdt_image_kind(img) == MDT_KIND_METADATA
               ? mdt__fail_simple(MDT_ENOTFOUND, "raw metadata has no RVAs")
               : mdt__rva_ptr(img, rva, 1, &p, offset, "RVA");
}

int mdt_image_read_rva(void *buf, uint32_t len, const mdt_image *img, uint32_t rva)
{
    mdt_place pl = MDT_PLACE_NONE;
    uint8_t *out = buf;
    const uint8_t *p;
    if (img->kind == MDT_KIND_METADATA)
        return mdt__fail_simple(MDT_ENOTFOUND, "raw metadata has no RVAs");
    if (img->kind == MDT_KIND_PE_MAPPED)
        return (mdt__rva_ptr(img, rva, len, &p, NULL, "read") ?: (memcpy(buf, p, len), 0));
    pl.img = img;
    pl.region = "RVA";
    pl.offset = rva;
    const mdt_section *s = find_section(img, rva);
    if (!s)
        return mdt__fail(MDT_ENOTFOUND, pl, "RVA 0x%x is in no section", rva);
    uint32_t delta = rva - s->virtual_address, span = span_of(s);
    if (len > span - delta)
        return mdt__fail(MDT_EBADIMAGE, pl, "0x%x bytes at RVA 0x%x straddle section %s", len,
                         rva, s->name);
    /* Raw bytes that exist in the file; the rest of the span is zeros. */
    uint64_t start = img->webcil_base + (uint64_t)s->raw_pointer;
    uint64_t have = s->raw_size;
    if (start > img->size)
        have = 0;
    else if (have > img->size - start)
        have = img->size - start;
    for (uint32_t i = 0; i < len; i++) {
        uint64_t d = (uint64_t)delta + i;
        out[i] = d < have ? img->data[start + d] : 0;
    }
    return 0;
}

static int read_sections(struct mdt_image *img, rd *r, uint16_t n)
{
    if (n > MDT_MAX_SECTIONS)
        return rd_fail(r, MDT_EBADIMAGE, "%u sections (the loader allows at most %u)", n,
                       MDT_MAX_SECTIONS);
    if ((size_t)n * 40 > rd_left(r))
        return rd_trunc(r, (size_t)n * 40, "section table");
    img->sections = talloc_zero_array(img, mdt_section, n ? n : 1);
    if (!img->sections)
        return mdt__fail_simple(MDT_ENOMEM, "out of memory");
    for (uint16_t i = 0; i < n; i++) {
        const uint8_t *h;
        mdt_section *s = &img->sections[i];
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
    img->nsections = n;
    for (uint16_t i = 0; i < n; i++) {
        const mdt_section *s = &img->sections[i];
        uint64_t end = (uint64_t)s->virtual_address + span_of(s);
        if (end > UINT32_MAX) {
            rd at = *r;
            at.pos -= (size_t)(n - i) * 40;
            return rd_fail(&at, MDT_EBADIMAGE, "section %u (%s) wraps the 32-bit address space",
                           i + 1, s->name);
        }
        if (i + 1 < n && end > img->sections[i + 1].virtual_address) {
            rd at = *r;
            at.pos -= (size_t)(n - i) * 40;
            return rd_fail(&at, MDT_EBADIMAGE, "sections %u (%s) and %u (%s) %s", i + 1, s->name,
                           i + 2, img->sections[i + 1].name,
                           img->sections[i + 1].virtual_address < s->virtual_address
                               ? "are out of order"
                               : "overlap");
        }
        if (img->kind != MDT_KIND_PE_MAPPED && s->raw_size &&
            ((uint64_t)s->raw_pointer + s->raw_size > img->size))
            mdt__warn(img, "section %s: raw data 0x%x+0x%x runs past end of file (0x%zx)",
                      s->name, s->raw_pointer, s->raw_size, img->size);
    }
    return 0;
}

void mdt__read_debug(struct mdt_image *img)
{
    const mdt_data_dir *dd = &img->pe.debug_dir;
    const uint8_t *p;
    uint32_t n;
    uint64_t mark = mdt__err_mark();
    if (!dd->rva || !dd->size)
        return;
    n = dd->size / 28;
    if (n > MDT_MAX_DEBUG) {
        mdt__warn(img, "debug directory has %u entries; reading the first %u", n, MDT_MAX_DEBUG);
        n = MDT_MAX_DEBUG;
    }
    if (mdt__rva_ptr(img, dd->rva, n * 28, &p, NULL, "debug directory")) {
        char msg[300];
        mdt__warn(img, "debug directory unreadable: %s", mdt_errmsg(msg, sizeof msg));
        mdt__err_forget(mark);
        return;
    }
    for (uint32_t i = 0; i < n; i++) {
        mdt_debug_entry *e = &img->debug[img->pe.ndebug];
        const uint8_t *d = p + (size_t)i * 28;
        memset(e, 0, sizeof *e);
        e->time_date_stamp = le32(d + 4);
        e->major_version = le16(d + 8);
        e->minor_version = le16(d + 10);
        e->type = le32(d + 12);
        e->size = le32(d + 16);
        e->rva = le32(d + 20);
        e->file_pointer = le32(d + 24);
        img->pe.ndebug++;
        if (e->type != 2 || e->size < 24)
            continue;
        /* CodeView RSDS: signature, GUID, age, NUL-terminated path. */
        const uint8_t *cv = NULL;
        if (img->kind == MDT_KIND_PE_MAPPED || img->kind == MDT_KIND_WEBCIL ||
            img->kind == MDT_KIND_WASM || !e->file_pointer) {
            if (!e->rva || mdt__rva_ptr(img, e->rva, e->size, &cv, NULL, "CodeView"))
                cv = NULL;
        } else if ((uint64_t)e->file_pointer + e->size <= img->size) {
            cv = img->data + e->file_pointer;
        }
        mdt__err_forget(mark);
        if (!cv || memcmp(cv, "RSDS", 4) != 0) {
            mdt__warn(img, "debug entry %u: CodeView data unreadable or not RSDS", i);
            continue;
        }
        e->has_codeview = true;
        memcpy(e->pdb_guid, cv + 4, 16);
        e->pdb_age = le32(cv + 20);
        if (memchr(cv + 24, 0, e->size - 24))
            e->pdb_path = (const char *)(cv + 24);
        else
            mdt__warn(img, "debug entry %u: PDB path not NUL-terminated", i);
    }
}

/* CLI header (II.25.3.3) then the metadata it points at. */
int mdt__cli_parse(struct mdt_image *img, uint32_t cli_rva, uint32_t cli_size)
{
    const uint8_t *p;
    uint64_t off;
    int e;
    mdt_place pl = MDT_PLACE_NONE;
    pl.img = img;
    pl.region = "CLI header";
    if (!cli_rva)
        return mdt__fail(MDT_ENOTDOTNET, pl, "no CLI header (data directory 14 is empty)");
    if (cli_size < 72)
        mdt__warn(img, "CLI header size %u is below 72; reading 72 bytes", cli_size);
    if ((e = mdt__rva_ptr(img, cli_rva, 72, &p, &off, "CLI header")))
        return e;
    rd r = rd_make(img, "CLI header", p, 72, off);
    uint32_t cb = le32(p);
    if (cb < 72)
        mdt__warn(img, "CLI header cb field is %u (expected 72)", cb);
    img->pe.cli_major = le16(p + 4);
    img->pe.cli_minor = le16(p + 6);
    img->pe.metadata.rva = le32(p + 8);
    img->pe.metadata.size = le32(p + 12);
    img->pe.cli_flags = le32(p + 16);
    img->pe.entry_point = le32(p + 20);
    img->pe.resources.rva = le32(p + 24);
    img->pe.resources.size = le32(p + 28);
    img->pe.strong_name_signature.rva = le32(p + 32);
    img->pe.strong_name_signature.size = le32(p + 36);
    img->pe.vtable_fixups.rva = le32(p + 48);
    img->pe.vtable_fixups.size = le32(p + 52);
    img->pe.managed_native_header.rva = le32(p + 64);
    img->pe.managed_native_header.size = le32(p + 68);
    if (!img->pe.metadata.rva || !img->pe.metadata.size) {
        r.pos = 8;
        return rd_fail(&r, MDT_EBADIMAGE, "CLI header has no metadata directory");
    }
    if ((e = mdt__rva_ptr(img, img->pe.metadata.rva, img->pe.metadata.size, &p, &off,
                          "metadata")))
        return e;
    return mdt__md_parse(img, p, img->pe.metadata.size, off);
}

int mdt__pe_parse(struct mdt_image *img)
{
    rd r = mdt__file_reader(img);
    uint32_t lfanew, sig, ndirs = 0;
    uint16_t nsec, opt_size, magic;
    int e;
    r.region = "DOS header";
    if ((e = rd_need(&r, 64, "DOS header")))
        return e;
    lfanew = le32(img->data + 60);
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
    img->pe.machine = le16(coff);
    nsec = le16(coff + 2);
    opt_size = le16(coff + 16);
    img->pe.characteristics = le16(coff + 18);
    size_t opt_start = r.pos;
    rd opt;
    /* rd_sub's message names the window it checks against: in a loader
     * layout, the readable range holding the headers. */
    r.region = img->kind == MDT_KIND_PE_MAPPED ? "readable headers" : "file";
    if ((e = rd_sub(&r, &opt, r.pos, opt_size, "optional header", "optional header")))
        return e;
    if ((e = rd_u16(&opt, &magic, "optional header magic")))
        return e;
    if (magic == 0x10b) {
        const uint8_t *h;
        if ((e = rd_bytes(&opt, &h, 94, "PE32 optional header")))
            return e;
        img->pe.image_base = le32(h + 26);
        img->pe.size_of_image = le32(h + 54);
        img->pe.size_of_headers = le32(h + 58);
        img->pe.subsystem = le16(h + 66);
        img->pe.dll_characteristics = le16(h + 68);
        ndirs = le32(h + 90);
    } else if (magic == 0x20b) {
        const uint8_t *h;
        img->pe.pe32plus = true;
        if ((e = rd_bytes(&opt, &h, 110, "PE32+ optional header")))
            return e;
        img->pe.image_base = le64(h + 22);
        img->pe.size_of_image = le32(h + 54);
        img->pe.size_of_headers = le32(h + 58);
        img->pe.subsystem = le16(h + 66);
        img->pe.dll_characteristics = le16(h + 68);
        ndirs = le32(h + 106);
    } else {
        opt.pos -= 2;
        return rd_fail(&opt, MDT_EBADIMAGE, "unknown optional header magic 0x%x", magic);
    }
    if (ndirs > 16) {
        mdt__warn(img, "NumberOfRvaAndSizes is %u; using 16", ndirs);
        ndirs = 16;
    }
    if ((size_t)ndirs * 8 > rd_left(&opt))
        ndirs = (uint32_t)(rd_left(&opt) / 8);
    mdt_data_dir dirs[16] = {{0, 0}};
    for (uint32_t i = 0; i < ndirs; i++) {
        rd_u32(&opt, &dirs[i].rva, "data directory");
        rd_u32(&opt, &dirs[i].size, "data directory");
    }
    img->pe.debug_dir = dirs[IMAGE_DIRECTORY_ENTRY_DEBUG];
    r.pos = opt_start + opt_size;
    r.region = "section table";
    if ((e = read_sections(img, &r, nsec)))
        return e;
    img->pe.nsections = nsec;
    mdt__read_debug(img);
    mdt_place pl = MDT_PLACE_NONE;
    pl.img = img;
    pl.region = "PE header";
    if (ndirs <= IMAGE_DIRECTORY_ENTRY_COM_DESCRIPTOR ||
        !dirs[IMAGE_DIRECTORY_ENTRY_COM_DESCRIPTOR].rva)
        return mdt__fail(MDT_ENOTDOTNET, pl, "no CLI header: a native PE, not a .NET image");
    return mdt__cli_parse(img, dirs[IMAGE_DIRECTORY_ENTRY_COM_DESCRIPTOR].rva,
                          dirs[IMAGE_DIRECTORY_ENTRY_COM_DESCRIPTOR].size);
}
