/* mdinspect: parts of a module that more than one command prints, kept
 * apart from the commands so that no command calls another: the stream
 * headers (`streams`, `info`; ECMA-335 II.24.2.2), the tables present
 * (`tables`, `info`; II.24.2.6), a COFF machine and a debug directory
 * entry's type (`info`, `pe`), the strong-name outcome in one line
 * (`info`) and the name of its hash algorithm (`sn`). */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>

#include <mdtools/mdtools.h>

#include "cmd.h"

/* ---- streams and tables ---- */

void mdi_print_streams(mdi_state *st, const mdt_image *img, const char *key, const char *label)
{
    mdi_printer *p = st->out;
    const mdt_md_info *md = mdt_image_md_info(img);
    mdi_list_begin(p, key, label, "none", 0);
    for (size_t i = 0; i < md->nstreams; i++) {
        const mdt_stream_info *s = mdt_image_stream(img, i);
        if (!s)
            continue;
        mdi_item_begin(p);
        mdi_str(p, "stream", "name", s->name);
        mdi_hex(p, "offset", "offset", s->offset, 0);
        mdi_hex(p, "size", "size", s->size, 0);
        mdi_bool(p, "used", "used", s->used);
        mdi_item_end(p);
    }
    mdi_list_end(p);
}

void mdi_print_tables(mdi_state *st, const mdt_image *img, const char *key, const char *label,
                      bool detail)
{
    mdi_printer *p = st->out;
    mdi_list_begin(p, key, label, "none", 0);
    for (unsigned id = 0; id < MDT_TABLE_MAX; id++) {
        const mdt_table_schema *s = mdt_table_schema_get(id);
        uint32_t rows = mdt_table_rows(img, id);
        if (!s || !rows)
            continue;
        mdi_item_begin(p);
        mdi_hex(p, "id", "id", id, 2);
        mdi_str(p, "table", "name", s->name);
        mdi_uint(p, "rows", "rows", rows);
        if (detail) {
            mdi_uint(p, "row_size", "row size", mdt_table_row_size(img, id));
            if (s->sort_col >= 0)
                mdi_bool(p, "sorted", "sorted", mdt_table_is_sorted(img, id));
            else
                mdi_none(p, "sorted", "sorted", "");
        }
        mdi_item_end(p);
    }
    mdi_list_end(p);
}

/* ---- PE facts ---- */

static const char *machine_name(uint16_t m)
{
    switch (m) {
    case 0x0000: return "unknown";
    case 0x014c: return "i386";
    case 0x0200: return "IA64";
    case 0x01c0: return "ARM";
    case 0x01c4: return "ARMNT";
    case 0x5064: return "RISCV64";
    case 0x6264: return "LOONGARCH64";
    case 0x8664: return "AMD64";
    case 0xaa64: return "ARM64";
    default: return NULL;
    }
}

/* ReadyToRun images for other systems store machine ^ a per-OS value. */
static const struct {
    uint16_t mask;
    const char *os;
} r2r_os[] = {
    {0x4644, "Apple"},  {0xADC4, "FreeBSD"}, {0x7B79, "Linux"},
    {0x1993, "NetBSD"}, {0x1992, "SunOS"},
};

void mdi_print_machine(mdi_printer *p, uint16_t m)
{
    const char *name = machine_name(m);
    mdi_hex(p, "machine", "machine", m, 4);
    if (name) {
        mdi_note(p, "machine_name", "%s", name);
        return;
    }
    for (size_t i = 0; i < sizeof r2r_os / sizeof r2r_os[0]; i++)
        if ((name = machine_name(m ^ r2r_os[i].mask)) && (m ^ r2r_os[i].mask)) {
            mdi_note(p, "machine_name", "%s, ReadyToRun for %s", name, r2r_os[i].os);
            return;
        }
    mdi_note(p, "machine_name", "unknown");
}

const char *mdi_debug_type_name(uint32_t t)
{
    static const char *const names[] = {
        "Unknown",    "COFF",         "CodeView",
        "FPO",        "Misc",         "Exception",
        "Fixup",      "OMAP_TO_SRC",  "OMAP_FROM_SRC",
        "Borland",    "Reserved10",   "CLSID",
        "VC_FEATURE", "POGO",         "ILTCG",
        "MPX",        "Reproducible", "EmbeddedPortablePdb",
        NULL,         "PdbChecksum",  "ExtendedDllCharacteristics",
        "PerfMap",
    };
    return t < sizeof names / sizeof names[0] ? names[t] : NULL;
}

/* ---- strong name ---- */

const char *mdi_sn_alg_name(uint32_t alg)
{
    switch (alg) {
    case 0x8004: return "SHA-1";
    case 0x800c: return "SHA-256";
    case 0x800d: return "SHA-384";
    case 0x800e: return "SHA-512";
    default: return NULL;
    }
}

int mdi_print_strongname(mdi_state *st, const mdt_image *img, const char *key, const char *label)
{
    mdi_printer *p = st->out;
    mdt_strongname sn;
    char msg[512], tok[17];
    if (mdt_strongname_verify(&sn, img, st->sn_keys.keys, st->sn_keys.n) != 0) {
        mdi_error(p, key, label, mdi_errmsg_here(msg, sizeof msg));
        return 1;
    }
    mdi_object_begin(p, key, NULL);
    mdi_str(p, "status", NULL, mdt_strongname_status_name(sn.status));
    mdi_str(p, "reason", NULL, sn.reason);
    mdi_object_end(p);
    for (int i = 0; i < 8; i++)
        snprintf(tok + 2 * i, 3, "%02x", sn.key_token[i]);
    if (sn.status == MDT_SN_NOT_SIGNED && !sn.signature_rva)
        return 0; /* text: "strong name: none" says it */
    if (sn.status == MDT_SN_VERIFIED)
        mdi_textf(p, label, "verified (%s, %" PRIu32 "-bit RSA key %s%s)",
                  mdi_sn_alg_name(sn.hash_alg), sn.key_bits, tok,
                  sn.key_given  ? ", given with --sn-keys"
                  : sn.ecma_key ? ", the Microsoft key for the ECMA key"
                                : "");
    else
        mdi_textf(p, label, "%s: %s", mdt_strongname_status_name(sn.status), sn.reason);
    return 0;
}
