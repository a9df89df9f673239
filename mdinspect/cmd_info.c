/* `info`: the summary of an image, from its PE/Webcil headers (ECMA-335
 * II.25), CLI header (II.25.3.3), metadata root (II.24.2.1), #Pdb stream
 * (Portable PDB v1.0), Assembly and Module rows (II.22.2, II.22.30), and
 * the debug directory of the PE format. Every field is always present in
 * JSON (null when it does not apply); text leaves out what does not apply. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <mdtools/mdtools.h>

#include "cmd.h"

static const mdi_flagname cli_flags[] = {
    {MDT_COMIMAGE_ILONLY, "ILONLY", 0},
    {MDT_COMIMAGE_32BITREQUIRED, "32BITREQUIRED", 0},
    {MDT_COMIMAGE_IL_LIBRARY, "IL_LIBRARY", 0},
    {MDT_COMIMAGE_STRONGNAMESIGNED, "STRONGNAMESIGNED", 0},
    {MDT_COMIMAGE_NATIVE_ENTRYPOINT, "NATIVE_ENTRYPOINT", 0},
    {MDT_COMIMAGE_TRACKDEBUGDATA, "TRACKDEBUGDATA", 0},
    {MDT_COMIMAGE_32BITPREFERRED, "32BITPREFERRED", 0},
    {0, NULL, 0},
};

/* A CLI header data directory: JSON {rva, size} or null; text one line. */
static void data_dir(mdi_printer *p, const char *key, const char *label, const mdt_data_dir *d,
                     const char *extra)
{
    if (!d->rva && !d->size) {
        mdi_none(p, key, label, "none");
        return;
    }
    mdi_object_begin(p, key, NULL);
    mdi_hex(p, "rva", NULL, d->rva, 0);
    mdi_uint(p, "size", NULL, d->size);
    mdi_object_end(p);
    mdi_textf(p, label, "0x%" PRIx32 " bytes at RVA 0x%08" PRIx32 "%s", d->size, d->rva,
              extra ? extra : "");
}

static void not_applicable(mdi_printer *p, const char *const *keys)
{
    for (; *keys; keys++)
        mdi_none(p, *keys, NULL, NULL);
}

static const char *table_name(unsigned id)
{
    const mdt_table_schema *s = mdt_table_schema_get(id);
    return s ? s->name : "?";
}

/* The fields of the CLI header; returns the number of errors. */
static int cli_header(mdi_state *st, const mdt_image *img, const mdt_pe_info *pe)
{
    mdi_printer *p = st->out;
    char ver[16];
    uint8_t r2r[8];
    int errors;

    snprintf(ver, sizeof ver, "%u.%u", pe->cli_major, pe->cli_minor);
    mdi_str(p, "cli_version", "CLI version", ver);
    mdi_flags(p, "cli_flags", "CLI flags", pe->cli_flags, cli_flags);

    if (pe->cli_flags & MDT_COMIMAGE_NATIVE_ENTRYPOINT) {
        mdi_none(p, "entry_point_token", NULL, NULL);
        mdi_hex(p, "entry_point_rva", "entry point", pe->entry_point, 8);
        mdi_note(p, NULL, "native code RVA");
    } else if (pe->entry_point) {
        mdi_token(p, "entry_point_token", "entry point", pe->entry_point);
        mdi_note(p, NULL, "%s row %" PRIu32, table_name(MDT_TOKEN_TABLE(pe->entry_point)),
                 MDT_TOKEN_RID(pe->entry_point));
        mdi_none(p, "entry_point_rva", NULL, NULL);
    } else {
        mdi_none(p, "entry_point_token", "entry point", "none");
        mdi_none(p, "entry_point_rva", NULL, NULL);
    }

    data_dir(p, "resources", "resources", &pe->resources, NULL);
    data_dir(p, "strong_name_signature", "strong name", &pe->strong_name_signature,
             pe->cli_flags & MDT_COMIMAGE_STRONGNAMESIGNED ? ", signed"
                                                           : ", not signed (space reserved)");
    mdi_bool(p, "strong_name_signed", NULL, pe->cli_flags & MDT_COMIMAGE_STRONGNAMESIGNED);
    errors = mdi_print_strongname(st, img, "strong_name_check", "signature");
    data_dir(p, "vtable_fixups", "vtable fixups", &pe->vtable_fixups, NULL);

    /* ReadyToRun: the managed native header starts with "RTR\0", then the
     * format's major and minor version. */
    if (!pe->managed_native_header.rva) {
        mdi_none(p, "managed_native_header", NULL, NULL);
        mdi_bool(p, "ready_to_run", "ReadyToRun", false);
        mdi_none(p, "ready_to_run_version", NULL, NULL);
        return errors;
    }
    mdi_object_begin(p, "managed_native_header", NULL);
    mdi_hex(p, "rva", NULL, pe->managed_native_header.rva, 0);
    mdi_uint(p, "size", NULL, pe->managed_native_header.size);
    mdi_object_end(p);
    if (mdt_image_read_rva(r2r, sizeof r2r, img, pe->managed_native_header.rva) == 0 &&
        memcmp(r2r, "RTR", 4) == 0) {
        snprintf(ver, sizeof ver, "%u.%u", r2r[4] | r2r[5] << 8, r2r[6] | r2r[7] << 8);
        mdi_bool(p, "ready_to_run", NULL, true);
        mdi_str(p, "ready_to_run_version", NULL, ver);
        mdi_textf(p, "ReadyToRun", "version %s, header 0x%" PRIx32 " bytes at RVA 0x%08" PRIx32,
                  ver, pe->managed_native_header.size, pe->managed_native_header.rva);
    } else {
        mdi_bool(p, "ready_to_run", NULL, false);
        mdi_none(p, "ready_to_run_version", NULL, NULL);
        mdi_textf(p, "ReadyToRun",
                  "no; a managed native header that is not ReadyToRun, 0x%" PRIx32
                  " bytes at RVA 0x%08" PRIx32,
                  pe->managed_native_header.size, pe->managed_native_header.rva);
    }
    return errors;
}

static void debug_entries(mdi_printer *p, const mdt_image *img, const mdt_pe_info *pe)
{
    bool embedded = false;
    char ver[16];
    mdi_list_begin(p, "debug_entries", "debug directory", "none", 0);
    for (size_t i = 0; i < pe->ndebug; i++) {
        const mdt_debug_entry *d = mdt_image_debug_entry(img, i);
        const char *name;
        if (!d)
            continue;
        name = mdi_debug_type_name(d->type);
        if (d->type == 17)
            embedded = true;
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
        mdi_hex(p, "size", "size", d->size, 0);
        mdi_hex(p, "rva", "rva", d->rva, 8);
        mdi_hex(p, "file_pointer", NULL, d->file_pointer, 0);
        if (d->has_codeview) {
            /* Portable PDB v1.0: a CodeView entry for a portable PDB has
             * minor version 0x504d ("PM"). */
            mdi_str(p, "pdb_format", "pdb", d->minor_version == 0x504d ? "portable" : "windows");
            mdi_guid(p, "pdb_guid", "pdb guid", d->pdb_guid);
            mdi_uint(p, "pdb_age", "age", d->pdb_age);
            mdi_str(p, "pdb_path", "pdb path", d->pdb_path);
        } else {
            mdi_none(p, "pdb_format", "pdb", "");
            mdi_none(p, "pdb_guid", "pdb guid", "");
            mdi_none(p, "pdb_age", "age", "");
            mdi_none(p, "pdb_path", "pdb path", "");
        }
        mdi_item_end(p);
    }
    mdi_list_end(p);
    mdi_bool(p, "embedded_portable_pdb", NULL, embedded);
}

/* The #Pdb stream of a portable PDB. */
static void pdb_stream(mdi_printer *p, const mdt_md_info *md)
{
    char guid[37];
    uint32_t stamp;
    if (!md->has_pdb) {
        static const char *const keys[] = {"pdb_id", "pdb_entry_point", "pdb_referenced_tables",
                                           NULL};
        not_applicable(p, keys);
        return;
    }
    mdt_heap_guid_format(guid, md->pdb_id);
    stamp = (uint32_t)md->pdb_id[16] | (uint32_t)md->pdb_id[17] << 8 |
            (uint32_t)md->pdb_id[18] << 16 | (uint32_t)md->pdb_id[19] << 24;
    mdi_object_begin(p, "pdb_id", NULL);
    mdi_str(p, "guid", NULL, guid);
    mdi_hex(p, "stamp", NULL, stamp, 8);
    mdi_object_end(p);
    mdi_textf(p, "pdb id", "%s, stamp 0x%08" PRIx32, guid, stamp);
    if (md->pdb_entry_point) {
        mdi_token(p, "pdb_entry_point", "pdb entry point", md->pdb_entry_point);
    } else {
        mdi_none(p, "pdb_entry_point", "pdb entry point", "none");
    }
    mdi_list_begin(p, "pdb_referenced_tables", NULL, NULL, MDI_LIST_SCALARS);
    for (unsigned t = 0; t < 64; t++)
        if (md->pdb_referenced_tables >> t & 1) {
            mdi_item_begin(p);
            mdi_str(p, "name", NULL, table_name(t));
            mdi_item_end(p);
        }
    mdi_list_end(p);
}

/* Assembly identity, module name and MVID; returns the number of errors. */
static int identity(mdi_state *st, const mdt_image *img, const mdt_md_info *md)
{
    static const char *const id_keys[] = {"assembly_name", "assembly_version", "assembly_culture",
                                          "public_key_token", NULL};
    mdi_printer *p = st->out;
    mdt_identity id;
    mdt_row row;
    uint8_t mvid[16];
    char buf[1024], msg[512];
    const char *s;
    size_t len;
    int e, errors = 0;

    e = mdt_row_get(&row, img, MDT_TABLE_Module, 1);
    if (e == 0)
        e = mdt_row_string(&s, &len, &row, MDT_COL_Module_Name);
    if (e == 0) {
        mdi_quoted(p, "module_name", "module", s, len);
    } else if (e == MDT_ENOTFOUND && !mdt_table_rows(img, MDT_TABLE_Module)) {
        mdi_none(p, "module_name", "module", md->has_pdb ? NULL : "none (no Module row)");
    } else {
        mdi_error(p, "module_name", "module", mdi_errmsg_here(msg, sizeof msg));
        errors++;
    }

    e = mdt_assembly_identity(&id, img);
    if (e == 0) {
        mdi_str(p, "assembly", "assembly", mdt_identity_format(buf, sizeof buf, &id));
        mdi_str(p, "assembly_name", NULL, id.name);
        snprintf(buf, sizeof buf, "%u.%u.%u.%u", id.version[0], id.version[1], id.version[2],
                 id.version[3]);
        mdi_str(p, "assembly_version", NULL, buf);
        mdi_str(p, "assembly_culture", NULL, id.culture && id.culture[0] ? id.culture : "neutral");
        if (id.has_token) {
            for (int i = 0; i < 8; i++)
                snprintf(buf + 2 * i, 3, "%02x", id.public_key_token[i]);
            mdi_str(p, "public_key_token", NULL, buf);
        } else {
            mdi_none(p, "public_key_token", NULL, NULL);
        }
    } else if (e == MDT_ENOTFOUND) {
        mdi_none(p, "assembly", "assembly",
                 md->has_pdb ? NULL : "none (a module without an Assembly row)");
        not_applicable(p, id_keys);
    } else {
        mdi_error(p, "assembly", "assembly", mdi_errmsg_here(msg, sizeof msg));
        not_applicable(p, id_keys);
        errors++;
    }

    e = mdt_image_mvid(mvid, img);
    if (e == 0) {
        mdi_guid(p, "mvid", "MVID", mvid);
    } else if (e == MDT_ENOTFOUND) {
        mdi_none(p, "mvid", "MVID", md->has_pdb ? NULL : "none");
    } else {
        mdi_error(p, "mvid", "MVID", mdi_errmsg_here(msg, sizeof msg));
        errors++;
    }
    return errors;
}

static int run(mdi_state *st, size_t argc, const mdi_arg *argv)
{
    static const char *const pe_keys[] = {"pe_format", "machine", "machine_name", NULL};
    static const char *const cli_keys[] = {
        "cli_version",          "cli_flags",     "cli_flags_names",       "entry_point_token",
        "entry_point_rva",      "resources",     "strong_name_signature", "strong_name_signed",
        "strong_name_check",    "vtable_fixups", "managed_native_header", "ready_to_run",
        "ready_to_run_version", "debug_entries", "embedded_portable_pdb", NULL};
    const mdt_image *img = mdi_image(st);
    mdi_printer *p = st->out;
    const mdt_pe_info *pe = mdt_image_pe_info(img);
    const mdt_md_info *md = mdt_image_md_info(img);
    int kind = mdt_image_kind(img), errors;
    bool is_pe = kind == MDT_KIND_PE || kind == MDT_KIND_PE_MAPPED;
    bool has_cli = kind != MDT_KIND_METADATA;
    size_t nwarn = mdt_image_warning_count(img);
    char ver[16];

    mdi_record_begin(p);
    mdi_str(p, "kind", "kind", mdt_image_kind_name(kind));
    if (md->has_pdb)
        mdi_note(p, NULL, "portable PDB");
    if (is_pe) {
        mdi_str(p, "pe_format", "format", pe->pe32plus ? "PE32+" : "PE32");
        mdi_print_machine(p, pe->machine);
    } else {
        not_applicable(p, pe_keys);
    }
    errors = 0;
    if (has_cli)
        errors = cli_header(st, img, pe);
    else
        not_applicable(p, cli_keys);

    mdi_str(p, "metadata_version", "metadata version", md->version);
    mdi_hex(p, "metadata_offset", NULL, md->file_offset, 0);
    mdi_uint(p, "metadata_size", NULL, md->size);
    snprintf(ver, sizeof ver, "%u.%u", md->major_version, md->minor_version);
    mdi_str(p, "metadata_format", NULL, ver);
    mdi_textf(p, "metadata", "0x%" PRIx32 " bytes at file offset 0x%" PRIx64 ", root format %s",
              md->size, md->file_offset, ver);
    snprintf(ver, sizeof ver, "%u.%u", md->tables_major, md->tables_minor);
    mdi_str(p, "tables_version", NULL, ver);
    mdi_bool(p, "uncompressed_tables", NULL, md->enc);
    mdi_bool(p, "jtd", NULL, md->jtd);
    mdi_textf(p, "tables stream", "format %s%s%s", ver, md->enc ? ", uncompressed (#-)" : "",
              md->jtd ? ", #JTD (all indexes 4 bytes)" : "");
    pdb_stream(p, md);

    errors += identity(st, img, md);

    if (has_cli)
        debug_entries(p, img, pe);

    mdi_print_streams(st, img, "streams", "streams");
    mdi_print_tables(st, img, "tables", "tables", false);

    mdi_list_begin(p, "warnings", "warnings", "none", MDI_LIST_SCALARS);
    for (size_t i = 0; i < nwarn; i++) {
        mdi_item_begin(p);
        mdi_str(p, "message", "", mdt_image_warning(img, i));
        mdi_item_end(p);
    }
    mdi_list_end(p);
    mdi_record_end(p);

    return mdi_report_unread(st, errors, "field", " of the summary");
}

const mdi_cmd mdi_cmd_info = {
    .name = "info",
    .flags = MDI_CMD_IMAGE,
    .summary = "summary of the image",
    .help = "Shows the kind of image (PE, Webcil, raw metadata), PE32 or PE32+, the\n"
            "machine, the CLI header (flags, entry point), the metadata version, the\n"
            "assembly identity with its public key token, module name and MVID,\n"
            "managed resources, strong-name signature and whether it verifies (`sn`\n"
            "says more), ReadyToRun header, debug directory (CodeView PDB path, GUID\n"
            "and age; embedded portable PDB; `pe` says more), the\n"
            "#Pdb stream of a portable PDB, the metadata streams, the row counts of\n"
            "the non-empty tables, and every warning recorded while opening.\n"
            "This is what mdinspect shows for each FILE when no -c is given.\n",
    .run = run,
};
