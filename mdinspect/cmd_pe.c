/* `pe`: everything the PE file says around the metadata (<mdtools/pe.h>):
 * the DOS, COFF and optional headers field by field, the data directories
 * with the section each lies in, the section table with its
 * characteristics decoded, the debug directory with each entry's data
 * decoded (CodeView, embedded portable PDB, PDB checksum, perf map,
 * deterministic build), the ReadyToRun header and its sections, and the
 * version resource. A part that cannot be read is shown as an error in its
 * place and the rest is still shown; the command then fails. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <talloc.h>

#include <mdtools/mdtools.h>

#include "cmd.h"

static const mdi_flagname coff_flags[] = {
    {0x0001, "RELOCS_STRIPPED", 0},
    {0x0002, "EXECUTABLE_IMAGE", 0},
    {0x0004, "LINE_NUMS_STRIPPED", 0},
    {0x0008, "LOCAL_SYMS_STRIPPED", 0},
    {0x0010, "AGGRESSIVE_WS_TRIM", 0},
    {0x0020, "LARGE_ADDRESS_AWARE", 0},
    {0x0080, "BYTES_REVERSED_LO", 0},
    {0x0100, "32BIT_MACHINE", 0},
    {0x0200, "DEBUG_STRIPPED", 0},
    {0x0400, "REMOVABLE_RUN_FROM_SWAP", 0},
    {0x0800, "NET_RUN_FROM_SWAP", 0},
    {0x1000, "SYSTEM", 0},
    {0x2000, "DLL", 0},
    {0x4000, "UP_SYSTEM_ONLY", 0},
    {0x8000, "BYTES_REVERSED_HI", 0},
    {0, NULL, 0},
};

static const mdi_flagname dll_flags[] = {
    {0x0020, "HIGH_ENTROPY_VA", 0},
    {0x0040, "DYNAMIC_BASE", 0},
    {0x0080, "FORCE_INTEGRITY", 0},
    {0x0100, "NX_COMPAT", 0},
    {0x0200, "NO_ISOLATION", 0},
    {0x0400, "NO_SEH", 0},
    {0x0800, "NO_BIND", 0},
    {0x1000, "APPCONTAINER", 0},
    {0x2000, "WDM_DRIVER", 0},
    {0x4000, "GUARD_CF", 0},
    {0x8000, "TERMINAL_SERVER_AWARE", 0},
    {0, NULL, 0},
};

/* IMAGE_SCN_*; the alignment is a 4-bit field. */
static const mdi_flagname scn_flags[] = {
    {0x00000008, "TYPE_NO_PAD", 0},
    {0x00000020, "CNT_CODE", 0},
    {0x00000040, "CNT_INITIALIZED_DATA", 0},
    {0x00000080, "CNT_UNINITIALIZED_DATA", 0},
    {0x00000200, "LNK_INFO", 0},
    {0x00000800, "LNK_REMOVE", 0},
    {0x00001000, "LNK_COMDAT", 0},
    {0x00008000, "GPREL", 0},
    {0x00100000, "ALIGN_1BYTES", 0x00F00000},
    {0x00200000, "ALIGN_2BYTES", 0x00F00000},
    {0x00300000, "ALIGN_4BYTES", 0x00F00000},
    {0x00400000, "ALIGN_8BYTES", 0x00F00000},
    {0x00500000, "ALIGN_16BYTES", 0x00F00000},
    {0x00600000, "ALIGN_32BYTES", 0x00F00000},
    {0x00700000, "ALIGN_64BYTES", 0x00F00000},
    {0x00800000, "ALIGN_128BYTES", 0x00F00000},
    {0x00900000, "ALIGN_256BYTES", 0x00F00000},
    {0x00A00000, "ALIGN_512BYTES", 0x00F00000},
    {0x00B00000, "ALIGN_1024BYTES", 0x00F00000},
    {0x00C00000, "ALIGN_2048BYTES", 0x00F00000},
    {0x00D00000, "ALIGN_4096BYTES", 0x00F00000},
    {0x00E00000, "ALIGN_8192BYTES", 0x00F00000},
    {0x01000000, "LNK_NRELOC_OVFL", 0},
    {0x02000000, "MEM_DISCARDABLE", 0},
    {0x04000000, "MEM_NOT_CACHED", 0},
    {0x08000000, "MEM_NOT_PAGED", 0},
    {0x10000000, "MEM_SHARED", 0},
    {0x20000000, "MEM_EXECUTE", 0},
    {0x40000000, "MEM_READ", 0},
    {0x80000000, "MEM_WRITE", 0},
    {0, NULL, 0},
};

/* READYTORUN_FLAG_* of CoreCLR's readytorun.h. */
static const mdi_flagname r2r_flags[] = {
    {0x01, "PLATFORM_NEUTRAL_SOURCE", 0},
    {0x02, "SKIP_TYPE_VALIDATION", 0},
    {0x04, "PARTIAL", 0},
    {0x08, "NONSHARED_PINVOKE_STUBS", 0},
    {0x10, "EMBEDDED_MSIL", 0},
    {0x20, "COMPONENT", 0},
    {0x40, "MULTIMODULE_VERSION_BUBBLE", 0},
    {0x80, "UNRELATED_R2R_CODE", 0},
    {0, NULL, 0},
};

/* VS_FF_* of the fixed file info. */
static const mdi_flagname file_flags[] = {
    {0x01, "DEBUG", 0},
    {0x02, "PRERELEASE", 0},
    {0x04, "PATCHED", 0},
    {0x08, "PRIVATEBUILD", 0},
    {0x10, "INFOINFERRED", 0},
    {0x20, "SPECIALBUILD", 0},
    {0, NULL, 0},
};

static const char *const dir_names[16] = {
    "Export", "Import",       "Resource",  "Exception", "Certificate", "BaseReloc",
    "Debug",  "Architecture", "GlobalPtr", "TLS",       "LoadConfig",  "BoundImport",
    "IAT",    "DelayImport",  "CLIHeader", "Reserved",
};

static const char *subsystem_name(uint16_t s)
{
    switch (s) {
    case 1: return "native";
    case 2: return "Windows GUI";
    case 3: return "Windows console";
    case 9: return "Windows CE GUI";
    case 10: return "EFI application";
    default: return NULL;
    }
}

static void version2(mdi_printer *p, const char *key, const char *label, unsigned a, unsigned b)
{
    char v[32];
    snprintf(v, sizeof v, "%u.%u", a, b);
    mdi_str(p, key, label, v);
}

static void version4(mdi_printer *p, const char *key, const char *label, const uint16_t v[4])
{
    char s[64];
    snprintf(s, sizeof s, "%u.%u.%u.%u", v[0], v[1], v[2], v[3]);
    mdi_str(p, key, label, s);
}

static void hexbytes(mdi_printer *p, const char *key, const char *label, const uint8_t *b, size_t n)
{
    char *s = talloc_array(NULL, char, 2 * n + 1);
    if (!s)
        return;
    for (size_t i = 0; i < n; i++)
        snprintf(s + 2 * i, 3, "%02x", b[i]);
    s[2 * n] = '\0';
    mdi_str(p, key, label, s);
    talloc_free(s);
}

/* The section holding an RVA, for the directories' column. */
static const char *section_of(const mdt_image *img, uint32_t rva)
{
    for (size_t i = 0; i < mdt_image_section_count(img); i++) {
        const mdt_section *s = mdt_image_section(img, i);
        uint32_t span = s->virtual_size ? s->virtual_size : s->raw_size;
        if (rva >= s->virtual_address && rva - s->virtual_address < span)
            return s->name;
    }
    return NULL;
}

static void headers(mdi_state *st, const mdt_image *img, const mdt_pe_headers *h)
{
    mdi_printer *p = st->out;
    uint32_t sum;

    mdi_hex(p, "e_lfanew", "e_lfanew", h->lfanew, 0);
    mdi_print_machine(p, h->machine);
    mdi_uint(p, "number_of_sections", "sections", h->nsections);
    mdi_hex(p, "time_date_stamp", "time stamp", h->time_date_stamp, 8);
    if (h->time_date_stamp & 0x80000000u)
        mdi_note(p, NULL, "deterministic build: a hash, not a time");
    mdi_hex(p, "pointer_to_symbol_table", "symbol table", h->symbol_table, 0);
    mdi_uint(p, "number_of_symbols", "symbols", h->nsymbols);
    mdi_hex(p, "size_of_optional_header", "optional header size", h->optional_header_size, 0);
    mdi_flags(p, "characteristics", "characteristics", h->characteristics, coff_flags);

    mdi_hex(p, "magic", "magic", h->magic, 0);
    mdi_note(p, NULL, "%s", h->magic == 0x20b ? "PE32+" : "PE32");
    version2(p, "linker_version", "linker version", h->linker_major, h->linker_minor);
    mdi_hex(p, "size_of_code", "size of code", h->size_of_code, 0);
    mdi_hex(p, "size_of_initialized_data", "initialized data", h->size_of_initialized_data, 0);
    mdi_hex(p, "size_of_uninitialized_data", "uninitialized data", h->size_of_uninitialized_data,
            0);
    mdi_hex(p, "address_of_entry_point", "entry point RVA", h->entry_point, 8);
    mdi_hex(p, "base_of_code", "base of code", h->base_of_code, 8);
    if (h->magic == 0x20b)
        mdi_none(p, "base_of_data", NULL, NULL);
    else
        mdi_hex(p, "base_of_data", "base of data", h->base_of_data, 8);
    mdi_hex(p, "image_base", "image base", h->image_base, 8);
    mdi_hex(p, "section_alignment", "section alignment", h->section_alignment, 0);
    mdi_hex(p, "file_alignment", "file alignment", h->file_alignment, 0);
    version2(p, "os_version", "OS version", h->os_major, h->os_minor);
    version2(p, "image_version", "image version", h->image_major, h->image_minor);
    version2(p, "subsystem_version", "subsystem version", h->subsystem_major, h->subsystem_minor);
    mdi_uint(p, "win32_version_value", "win32 version", h->win32_version);
    mdi_hex(p, "size_of_image", "size of image", h->size_of_image, 0);
    mdi_hex(p, "size_of_headers", "size of headers", h->size_of_headers, 0);
    mdi_hex(p, "checksum", "checksum", h->checksum, 8);
    if (mdt_image_kind(img) == MDT_KIND_PE && mdt_pe_checksum(&sum, img) == 0) {
        if (!h->checksum)
            mdi_note(p, NULL, "not set; the file's is 0x%08" PRIx32, sum);
        else if (sum == h->checksum)
            mdi_note(p, NULL, "matches the file");
        else
            mdi_note(p, NULL, "the file's is 0x%08" PRIx32, sum);
        mdi_hex(p, "checksum_computed", NULL, sum, 8);
    } else {
        mdi_none(p, "checksum_computed", NULL, NULL);
    }
    mdi_uint(p, "subsystem", "subsystem", h->subsystem);
    if (subsystem_name(h->subsystem))
        mdi_note(p, "subsystem_name", "%s", subsystem_name(h->subsystem));
    else
        mdi_none(p, "subsystem_name", NULL, NULL);
    mdi_flags(p, "dll_characteristics", "DLL characteristics", h->dll_characteristics, dll_flags);
    mdi_hex(p, "size_of_stack_reserve", "stack reserve", h->stack_reserve, 0);
    mdi_hex(p, "size_of_stack_commit", "stack commit", h->stack_commit, 0);
    mdi_hex(p, "size_of_heap_reserve", "heap reserve", h->heap_reserve, 0);
    mdi_hex(p, "size_of_heap_commit", "heap commit", h->heap_commit, 0);
    mdi_hex(p, "loader_flags", "loader flags", h->loader_flags, 0);
    mdi_uint(p, "number_of_rva_and_sizes", "data directories", h->ndirs_declared);
    if (h->ndirs < h->ndirs_declared)
        mdi_note(p, NULL, "%" PRIu32 " read", h->ndirs);
}

static void directories(mdi_state *st, const mdt_image *img, const mdt_pe_headers *h)
{
    mdi_printer *p = st->out;
    mdi_list_begin(p, "data_directories", "data directories", "none", 0);
    for (uint32_t i = 0; i < h->ndirs; i++) {
        const mdt_data_dir *d = &h->dirs[i];
        const char *sec;
        if (!d->rva && !d->size)
            continue;
        mdi_item_begin(p);
        mdi_uint(p, "index", "#", i);
        mdi_str(p, "name", "directory", dir_names[i]);
        /* The certificate table's address is a file offset (PE/COFF). */
        mdi_hex(p, i == 4 ? "file_offset" : "rva", i == 4 ? "rva/offset" : "rva/offset", d->rva, 8);
        mdi_hex(p, "size", "size", d->size, 0);
        sec = i == 4 ? NULL : section_of(img, d->rva);
        if (i == 4)
            mdi_str(p, "section", "section", "(file offset)");
        else
            mdi_str(p, "section", "section", sec);
        mdi_item_end(p);
    }
    mdi_list_end(p);
}

static int sections(mdi_state *st, const mdt_image *img, const mdt_pe_headers *h)
{
    mdi_printer *p = st->out;
    char msg[512];
    int errors = 0;
    mdi_list_begin(p, "sections", "sections", "none", 0);
    for (size_t i = 0; i < h->nsections; i++) {
        mdt_pe_section s;
        mdi_item_begin(p);
        if (mdt_pe_section_read(&s, img, i) != 0) {
            mdi_item_error(p, "error", mdi_errmsg_here(msg, sizeof msg));
            mdi_item_end(p);
            errors++;
            break;
        }
        mdi_str(p, "name", "name", s.name);
        mdi_hex(p, "virtual_address", "rva", s.virtual_address, 8);
        mdi_hex(p, "virtual_size", "virtual size", s.virtual_size, 0);
        mdi_hex(p, "raw_pointer", "raw pointer", s.raw_pointer, 0);
        mdi_hex(p, "raw_size", "raw size", s.raw_size, 0);
        mdi_hex(p, "pointer_to_relocations", NULL, s.relocations, 0);
        mdi_hex(p, "pointer_to_linenumbers", NULL, s.linenumbers, 0);
        mdi_uint(p, "number_of_relocations", NULL, s.nrelocations);
        mdi_uint(p, "number_of_linenumbers", NULL, s.nlinenumbers);
        mdi_flags(p, "characteristics", "characteristics", s.characteristics, scn_flags);
        mdi_item_end(p);
    }
    mdi_list_end(p);
    return errors;
}

/* One debug entry's decoded data: JSON fields and a text "details" cell. */
static int debug_details(mdi_state *st, const mdt_image *img, size_t i, const mdt_debug_entry *d)
{
    mdi_printer *p = st->out;
    char msg[512], guid[37];
    switch (d->type) {
    case 2:
        if (!d->has_codeview)
            break;
        mdt_heap_guid_format(guid, d->pdb_guid);
        mdi_str(p, "pdb_format", NULL, d->minor_version == 0x504d ? "portable" : "windows");
        mdi_str(p, "pdb_guid", NULL, guid);
        mdi_uint(p, "pdb_age", NULL, d->pdb_age);
        mdi_str(p, "pdb_path", NULL, d->pdb_path);
        mdi_textf(p, "details", "%s PDB %s age %" PRIu32 " %s",
                  d->minor_version == 0x504d ? "portable" : "Windows", guid, d->pdb_age,
                  d->pdb_path ? d->pdb_path : "(no path)");
        return 0;
    case 16:
        mdi_bool(p, "deterministic", NULL, true);
        mdi_textf(p, "details", "deterministic build");
        return 0;
    case 17: {
        uint32_t full, packed;
        if (mdt_debug_embedded_pdb(&full, &packed, img, i) != 0)
            goto bad;
        mdi_uint(p, "pdb_size", NULL, full);
        mdi_uint(p, "compressed_size", NULL, packed);
        mdi_textf(p, "details", "portable PDB, 0x%" PRIx32 " bytes deflated to 0x%" PRIx32, full,
                  packed);
        return 0;
    }
    case 19: {
        const char *alg;
        const uint8_t *sum;
        size_t n;
        char *hex;
        if (mdt_debug_pdb_checksum(&alg, &sum, &n, img, i) != 0)
            goto bad;
        hex = talloc_array(NULL, char, 2 * n + 1);
        if (!hex)
            return 1;
        for (size_t k = 0; k < n; k++)
            snprintf(hex + 2 * k, 3, "%02x", sum[k]);
        hex[2 * n] = '\0';
        mdi_str(p, "checksum_algorithm", NULL, alg);
        mdi_str(p, "checksum", NULL, hex);
        mdi_textf(p, "details", "%s %s", alg, hex);
        talloc_free(hex);
        return 0;
    }
    case 21: {
        uint8_t sig[16];
        uint32_t version;
        const char *path;
        if (mdt_debug_perfmap(sig, &version, &path, img, i) != 0)
            goto bad;
        hexbytes(p, "perfmap_signature", NULL, sig, 16);
        mdi_uint(p, "perfmap_version", NULL, version);
        mdi_str(p, "perfmap_path", NULL, path);
        mdi_textf(p, "details", "perf map version %" PRIu32 " %s", version, path);
        return 0;
    }
    default: break;
    }
    mdi_textf(p, "details", "%s", "");
    return 0;
bad:
    mdi_item_error(p, "error", mdi_errmsg_here(msg, sizeof msg));
    return 1;
}

static int debug_dir(mdi_state *st, const mdt_image *img)
{
    mdi_printer *p = st->out;
    const mdt_pe_info *pe = mdt_image_pe_info(img);
    int errors = 0;
    mdi_list_begin(p, "debug_entries", "debug directory", "none", 0);
    for (size_t i = 0; i < pe->ndebug; i++) {
        const mdt_debug_entry *d = mdt_image_debug_entry(img, i);
        const char *name = d ? mdi_debug_type_name(d->type) : NULL;
        char ver[16];
        if (!d)
            continue;
        mdi_item_begin(p);
        mdi_uint(p, "type", NULL, d->type);
        if (name)
            mdi_str(p, "type_name", "type", name);
        else
            mdi_textf(p, "type", "type %" PRIu32, d->type);
        if (!name)
            mdi_none(p, "type_name", NULL, NULL);
        snprintf(ver, sizeof ver, "%u.%u", d->major_version, d->minor_version);
        mdi_textf(p, "version", "%s", ver);
        mdi_uint(p, "major_version", NULL, d->major_version);
        mdi_uint(p, "minor_version", NULL, d->minor_version);
        mdi_hex(p, "time_date_stamp", NULL, d->time_date_stamp, 8);
        mdi_hex(p, "size", "size", d->size, 0);
        mdi_hex(p, "rva", "rva", d->rva, 8);
        mdi_hex(p, "file_pointer", "file pointer", d->file_pointer, 0);
        errors += debug_details(st, img, i, d);
        mdi_item_end(p);
    }
    mdi_list_end(p);
    return errors;
}

/* The methods with precompiled code (mdt_r2r_methods_*): MethodDefs by
 * their entry points, generic code apart. */
static void precompiled(mdi_printer *p, const mdt_image *img)
{
    char msg[512];
    mdt_r2r_methods *m;
    void *tmp = talloc_new(NULL);
    int e = tmp ? mdt_r2r_methods_open(&m, tmp, img) : MDT_ENOMEM;
    if (e == MDT_ENOTFOUND || e == MDT_EUNSUPPORTED) {
        mdi_none(p, "methods", "precompiled methods", "none");
        mdt_error_clear();
    } else if (e) {
        mdi_error(p, "methods", "precompiled methods", mdi_errmsg_here(msg, sizeof msg));
    } else {
        uint32_t n = mdt_r2r_methods_entries(m), defs = 0;
        mdt_r2r_method x;
        for (uint32_t i = 0; i < n; i++)
            defs += mdt_r2r_method_get(&x, m, i) == 0 && x.token;
        mdt_error_clear();
        mdi_uint(p, "methods", "precompiled methods", defs);
        mdi_uint(p, "generic_code", "generic code", n - defs);
    }
    talloc_free(tmp);
}

static int ready_to_run(mdi_state *st, const mdt_image *img)
{
    mdi_printer *p = st->out;
    mdt_r2r_header h;
    char msg[512];
    int e = mdt_r2r_header_read(&h, img);
    if (e == MDT_ENOTFOUND) {
        mdi_none(p, "ready_to_run", "ReadyToRun", "no");
        return 0;
    }
    if (e) {
        mdi_error(p, "ready_to_run", "ReadyToRun", mdi_errmsg_here(msg, sizeof msg));
        return 1;
    }
    mdi_object_begin(p, "ready_to_run", "");
    mdi_hex(p, "rva", NULL, h.rva, 8);
    version2(p, "version", "ReadyToRun", h.major, h.minor);
    mdi_note(p, NULL, "header at RVA 0x%08" PRIx32, h.rva);
    mdi_flags(p, "flags", "ReadyToRun flags", h.flags, r2r_flags);
    precompiled(p, img);
    mdi_list_begin(p, "sections", "ReadyToRun sections", "none", 0);
    for (uint32_t i = 0; i < h.nsections; i++) {
        mdt_r2r_section s;
        const char *name;
        mdi_item_begin(p);
        if (mdt_r2r_section_read(&s, img, i) != 0) {
            mdi_item_error(p, "error", mdi_errmsg_here(msg, sizeof msg));
            mdi_item_end(p);
            mdi_list_end(p);
            mdi_object_end(p);
            return 1;
        }
        name = mdt_r2r_section_name(s.type);
        mdi_uint(p, "type", "type", s.type);
        mdi_str(p, "name", "name", name ? name : "?");
        mdi_hex(p, "rva", "rva", s.rva, 8);
        mdi_hex(p, "size", "size", s.size, 0);
        mdi_item_end(p);
    }
    mdi_list_end(p);
    mdi_object_end(p);
    return 0;
}

static int version_info(mdi_state *st, const mdt_image *img)
{
    mdi_printer *p = st->out;
    mdt_version_info *v;
    char msg[512];
    void *tmp = talloc_new(NULL);
    int e = tmp ? mdt_version_info_read(tmp, &v, img) : MDT_ENOMEM;
    if (e == MDT_ENOTFOUND) {
        mdi_none(p, "version_info", "version resource", "none");
        talloc_free(tmp);
        return 0;
    }
    if (e) {
        mdi_error(p, "version_info", "version resource", mdi_errmsg_here(msg, sizeof msg));
        talloc_free(tmp);
        return 1;
    }
    mdi_object_begin(p, "version_info", "");
    if (v->has_fixed) {
        version4(p, "file_version", "file version", v->file_version);
        version4(p, "product_version", "product version", v->product_version);
        mdi_flags(p, "file_flags", "file flags", v->file_flags & v->file_flags_mask, file_flags);
        mdi_hex(p, "file_os", "file OS", v->file_os, 0);
        mdi_hex(p, "file_type", "file type", v->file_type, 0);
    } else {
        mdi_none(p, "file_version", "file version", "none (no fixed file info)");
        mdi_none(p, "product_version", NULL, NULL);
    }
    mdi_list_begin(p, "translations", NULL, NULL, MDI_LIST_SCALARS);
    for (size_t i = 0; i < v->ntranslations; i++) {
        char t[16];
        snprintf(t, sizeof t, "%04x%04x", v->translations[i] & 0xFFFF, v->translations[i] >> 16);
        mdi_item_begin(p);
        mdi_str(p, "translation", NULL, t);
        mdi_item_end(p);
    }
    mdi_list_end(p);
    mdi_list_begin(p, "strings", "version strings", "none", 0);
    for (size_t i = 0; i < v->nstrings; i++) {
        mdi_item_begin(p);
        mdi_str(p, "table", "table", v->strings[i].table);
        mdi_str(p, "key", "key", v->strings[i].key);
        mdi_str(p, "value", "value", v->strings[i].value);
        mdi_item_end(p);
    }
    mdi_list_end(p);
    mdi_object_end(p);
    talloc_free(tmp);
    return 0;
}

static int run(mdi_state *st, size_t argc, const mdi_arg *argv)
{
    const mdt_image *img = mdi_image(st);
    mdi_printer *p = st->out;
    mdt_pe_headers h;
    int errors = 0;
    (void)argc;
    (void)argv;
    if (mdt_pe_headers_read(&h, img) != 0) {
        mdi_report_lib(st, "pe");
        return MDI_FAIL;
    }
    mdi_record_begin(p);
    headers(st, img, &h);
    directories(st, img, &h);
    errors += sections(st, img, &h);
    errors += debug_dir(st, img);
    errors += ready_to_run(st, img);
    errors += version_info(st, img);
    mdi_record_end(p);
    return mdi_report_unread(st, errors, "part", " of the PE headers");
}

const mdi_cmd mdi_cmd_pe = {
    .name = "pe",
    .flags = MDI_CMD_IMAGE,
    .summary = "PE headers, sections, debug directory, ReadyToRun header, version resource",
    .help = "Shows what the PE file says around the metadata: the DOS header's\n"
            "e_lfanew, every field of the COFF and optional headers (the checksum with\n"
            "the one computed from the file), the data directories with the section\n"
            "each lies in, the section table with its characteristics decoded, the\n"
            "debug directory with each entry's data decoded (CodeView PDB path, id and\n"
            "age; deterministic build; embedded portable PDB sizes; PDB checksum\n"
            "algorithm and value; crossgen2's perf map), the ReadyToRun header with\n"
            "its flags, how many methods it precompiled (MethodDefs by their entry\n"
            "points; generic code apart) and its sections, and the version resource "
            "(VS_VERSIONINFO: file\n"
            "and product version, the string tables). A part that cannot be read is\n"
            "shown as an error in its place; the command then fails.\n",
    .run = run,
};
