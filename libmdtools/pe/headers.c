/* The DOS, COFF and optional headers field by field, the section table
 * with every column, and the PE checksum (PE/COFF specification; ECMA-335
 * II.25.2.1 to II.25.2.3, II.25.3). Opening (image/pe.c) reads only what
 * finding the metadata needs; these read the rest, on demand, from the
 * same bytes, through the reader: a header cut short or a bad signature is
 * a located error. */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "open/open_int.h"
#include "pe/pe_int.h"
#include "util/error.h"

/* mdt_image_bytes without reading the rest of a file read on demand: what
 * this reader serves (DOS header, PE headers, section table) was read at
 * open (image/container.c's need_headers). */
rd mdt__pe_reader(const mdt_image *img, const char *region)
{
    size_t n;
    const uint8_t *p = mdt__image_buffer(&n, img);
    return rd_make(mdt_image_name(img), region, p, n, 0);
}

int mdt__pe_rva_reader(rd *out, const mdt_image *img, uint32_t rva, uint32_t len,
                       const char *region)
{
    const uint8_t *p;
    uint64_t off = UINT64_MAX;
    int e = mdt_image_rva(&p, img, rva, len);
    if (e)
        return e;
    if (mdt_image_kind(img) == MDT_KIND_PE && mdt_image_rva_to_offset(&off, img, rva) != 0) {
        mdt__err_forget_one();
        off = UINT64_MAX;
    }
    *out = rd_make(mdt_image_name(img), region, p, len, off);
    return 0;
}

static int no_pe(const mdt_image *img)
{
    mdt_place pl = MDT_PLACE_NONE;
    pl.file = mdt_image_name(img);
    return mdt__fail(MDT_ENOTFOUND, pl, "a %s image has no PE headers",
                     mdt_image_kind_name(mdt_image_kind(img)));
}

int mdt_pe_headers_read(mdt_pe_headers *out, const mdt_image *img)
{
    rd r;
    const uint8_t *h;
    uint32_t sig;
    size_t opt_at;
    int e, k;
    if (!out || !img)
        return mdt__fail_simple(MDT_EINVAL, "mdt_pe_headers_read: NULL argument");
    k = mdt_image_kind(img);
    if (k != MDT_KIND_PE && k != MDT_KIND_PE_MAPPED)
        return no_pe(img);
    memset(out, 0, sizeof *out);
    r = mdt__pe_reader(img, "DOS header");
    if ((e = rd_need(&r, 64, "DOS header")))
        return e;
    out->lfanew = le32(r.base + 60);
    r.pos = 60;
    if ((e = rd_seek(&r, out->lfanew, "e_lfanew")))
        return e;
    r.region = "PE header";
    if ((e = rd_u32(&r, &sig, "PE signature")))
        return e;
    if (sig != 0x00004550) {
        r.pos -= 4;
        return rd_fail(&r, MDT_EBADIMAGE, "no PE signature at e_lfanew 0x%x", out->lfanew);
    }
    r.region = "COFF header";
    if ((e = rd_bytes(&r, &h, 20, "COFF header")))
        return e;
    out->machine = le16(h);
    out->nsections = le16(h + 2);
    out->time_date_stamp = le32(h + 4);
    out->symbol_table = le32(h + 8);
    out->nsymbols = le32(h + 12);
    out->optional_header_size = le16(h + 16);
    out->characteristics = le16(h + 18);
    opt_at = r.pos;
    out->section_table_offset = opt_at + (uint64_t)out->optional_header_size;

    rd opt;
    r.region = "file";
    if ((e = rd_sub(&r, &opt, opt_at, out->optional_header_size, "optional header",
                    "optional header")))
        return e;
    if ((e = rd_bytes(&opt, &h, 2, "optional header magic")))
        return e;
    out->magic = le16(h);
    opt.pos = 0;
    bool plus = out->magic == 0x20b;
    if (out->magic != 0x10b && !plus)
        return rd_fail(&opt, MDT_EBADIMAGE, "unknown optional header magic 0x%x", out->magic);
    size_t fixed = plus ? 112 : 96;
    if ((e = rd_bytes(&opt, &h, fixed, plus ? "PE32+ optional header" : "PE32 optional header")))
        return e;
    out->linker_major = h[2];
    out->linker_minor = h[3];
    out->size_of_code = le32(h + 4);
    out->size_of_initialized_data = le32(h + 8);
    out->size_of_uninitialized_data = le32(h + 12);
    out->entry_point = le32(h + 16);
    out->base_of_code = le32(h + 20);
    if (plus) {
        out->image_base = le64(h + 24);
    } else {
        out->base_of_data = le32(h + 24);
        out->image_base = le32(h + 28);
    }
    out->section_alignment = le32(h + 32);
    out->file_alignment = le32(h + 36);
    out->os_major = le16(h + 40);
    out->os_minor = le16(h + 42);
    out->image_major = le16(h + 44);
    out->image_minor = le16(h + 46);
    out->subsystem_major = le16(h + 48);
    out->subsystem_minor = le16(h + 50);
    out->win32_version = le32(h + 52);
    out->size_of_image = le32(h + 56);
    out->size_of_headers = le32(h + 60);
    out->checksum = le32(h + 64);
    out->checksum_offset = opt_at + 64;
    out->subsystem = le16(h + 68);
    out->dll_characteristics = le16(h + 70);
    if (plus) {
        out->stack_reserve = le64(h + 72);
        out->stack_commit = le64(h + 80);
        out->heap_reserve = le64(h + 88);
        out->heap_commit = le64(h + 96);
        out->loader_flags = le32(h + 104);
        out->ndirs_declared = le32(h + 108);
    } else {
        out->stack_reserve = le32(h + 72);
        out->stack_commit = le32(h + 76);
        out->heap_reserve = le32(h + 80);
        out->heap_commit = le32(h + 84);
        out->loader_flags = le32(h + 88);
        out->ndirs_declared = le32(h + 92);
    }
    /* The loader reads at most 16 directories, and only those the
     * optional header's size holds. */
    out->ndirs = out->ndirs_declared < 16 ? out->ndirs_declared : 16;
    if (out->ndirs > rd_left(&opt) / 8)
        out->ndirs = (uint32_t)(rd_left(&opt) / 8);
    for (uint32_t i = 0; i < out->ndirs; i++) {
        rd_u32(&opt, &out->dirs[i].rva, "data directory");
        rd_u32(&opt, &out->dirs[i].size, "data directory");
    }
    if (out->ndirs > 4)
        out->cert_dir_offset = opt_at + fixed + 4 * 8;
    return 0;
}

int mdt_pe_section_read(mdt_pe_section *out, const mdt_image *img, size_t i)
{
    mdt_pe_headers hd;
    const uint8_t *h;
    rd r;
    int e;
    if (!out || !img)
        return mdt__fail_simple(MDT_EINVAL, "mdt_pe_section_read: NULL argument");
    if ((e = mdt_pe_headers_read(&hd, img)))
        return e;
    if (i >= hd.nsections) {
        mdt_place pl = MDT_PLACE_NONE;
        pl.file = mdt_image_name(img);
        pl.region = "section table";
        return mdt__fail(MDT_ENOTFOUND, pl, "no section %zu (the image has %u)", i + 1,
                         hd.nsections);
    }
    r = mdt__pe_reader(img, "section table");
    uint64_t off = hd.section_table_offset + (uint64_t)i * 40;
    if ((e = rd_seek(&r, off > SIZE_MAX ? SIZE_MAX : (size_t)off, "section header")) ||
        (e = rd_bytes(&r, &h, 40, "section header")))
        return e;
    memset(out, 0, sizeof *out);
    memcpy(out->name, h, 8);
    out->name[8] = '\0';
    out->virtual_size = le32(h + 8);
    out->virtual_address = le32(h + 12);
    out->raw_size = le32(h + 16);
    out->raw_pointer = le32(h + 20);
    out->relocations = le32(h + 24);
    out->linenumbers = le32(h + 28);
    out->nrelocations = le16(h + 32);
    out->nlinenumbers = le16(h + 34);
    out->characteristics = le32(h + 36);
    return 0;
}

int mdt_pe_checksum(uint32_t *out, const mdt_image *img)
{
    mdt_pe_headers hd;
    size_t n;
    const uint8_t *p;
    uint64_t sum = 0;
    int e;
    if (!out || !img)
        return mdt__fail_simple(MDT_EINVAL, "mdt_pe_checksum: NULL argument");
    if ((e = mdt_pe_headers_read(&hd, img)))
        return e;
    if (mdt_image_kind(img) != MDT_KIND_PE) {
        mdt_place pl = MDT_PLACE_NONE;
        pl.file = mdt_image_name(img);
        return mdt__fail(MDT_EUNSUPPORTED, pl,
                         "the checksum is of a file; this image was laid out by a loader");
    }
    if ((e = mdt__image_all_bytes(&p, &n, img)))
        return e;
    /* 16-bit words, carries folded back in as they come; the CheckSum
     * field reads as zero; an odd last byte is a word of its own. */
    for (size_t i = 0; i < n; i += 2) {
        uint32_t w = p[i] | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0);
        if (i >= hd.checksum_offset && i < hd.checksum_offset + 4)
            w = 0;
        sum += w;
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    sum = (sum & 0xFFFF) + (sum >> 16);
    *out = (uint32_t)(sum & 0xFFFF) + (uint32_t)n;
    return 0;
}
