/* Metadata root and stream headers (ECMA-335 II.24.2.1, II.24.2.2), and the
 * CLR's rules for choosing among streams: tables stream `#~` (compressed) or
 * `#-` (uncompressed, "EnC"); a `#Schema` stream also means EnC. With several
 * streams of one name, #~ metadata uses the last and EnC metadata the first;
 * EnC compares names case-insensitively; `#JTD` in EnC metadata makes every
 * index 4 bytes wide. Each oddity is accepted with a warning.
 *
 * The metadata layer's entry: mdt__md_parse takes a byte window, wherever
 * the container layer (image/) found it, and knows nothing of files, PE
 * headers or loader layouts. */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <talloc.h>

#include "md/md_int.h"

#define MAX_VERSION_LEN 256

enum slot { S_TABLES, S_STRINGS, S_US, S_BLOB, S_GUID, S_PDB, S_JTD, S_SCHEMA, S_UNKNOWN };

static int slot_of(const char *name, bool enc)
{
    static const struct {
        const char *name;
        int slot;
    } known[] = {{"#~", S_TABLES}, {"#-", S_TABLES},  {"#Strings", S_STRINGS},
                 {"#US", S_US},    {"#Blob", S_BLOB}, {"#GUID", S_GUID},
                 {"#Pdb", S_PDB},  {"#JTD", S_JTD},   {"#Schema", S_SCHEMA}};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (enc ? strcasecmp(name, known[i].name) == 0 : strcmp(name, known[i].name) == 0)
            return known[i].slot;
    return S_UNKNOWN;
}

/* Printable copy of a stream name: non-ASCII bytes as \xNN. */
static void escape_name(char *out, size_t n, const char *name)
{
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)name; *p && o + 5 < n; p++) {
        if (*p >= 0x20 && *p < 0x7f)
            out[o++] = (char)*p;
        else
            o += (size_t)snprintf(out + o, n - o, "\\x%02x", *p);
    }
    out[o] = '\0';
}

static void set_heap(struct mdt_heap_view *h, const uint8_t *root, const mdt_stream_info *s,
                     const char *name)
{
    h->base = root + s->offset;
    h->size = s->size;
    h->offset = s->offset;
    h->present = true;
    h->name = name;
}

int mdt__md_parse(struct mdt_md *md, void *mem, mdt_warnings *warn, const rd *window, size_t slack)
{
    rd r = rd_make(window->file, "metadata root", window->base, window->len, window->file_off);
    uint32_t size = (uint32_t)window->len, sig, reserved, vlen;
    uint64_t file_off = window->file_off;
    uint16_t flags, nstreams;
    const uint8_t *ver;
    int e;

    md->name = window->file;
    md->mem = mem;
    md->warn = warn;
    md->mdi.file_offset = file_off;
    md->mdi.size = size;
    if ((e = rd_u32(&r, &sig, "metadata signature")))
        return e;
    if (sig != 0x424A5342) {
        r.pos = 0;
        return rd_fail(&r, MDT_EBADIMAGE, "metadata signature is 0x%08x, not BSJB", sig);
    }
    if ((e = rd_u16(&r, &md->mdi.major_version, "metadata root")) ||
        (e = rd_u16(&r, &md->mdi.minor_version, "metadata root")) ||
        (e = rd_u32(&r, &reserved, "metadata root")) || (e = rd_u32(&r, &vlen, "metadata root")))
        return e;
    if (vlen > MAX_VERSION_LEN) {
        r.pos -= 4;
        return rd_fail(&r, MDT_EBADIMAGE, "version string length %u exceeds %u", vlen,
                       MAX_VERSION_LEN);
    }
    if ((e = rd_bytes(&r, &ver, vlen, "version string")))
        return e;
    md->mdi.version = talloc_strndup(md->mem, (const char *)ver, vlen);
    if (!md->mdi.version)
        return mdt__fail_simple(MDT_ENOMEM, "out of memory");
    if (vlen % 4)
        mdt__warn(md->warn, "metadata version string length %u is not a multiple of 4", vlen);
    if ((e = rd_u16(&r, &flags, "metadata root flags")) ||
        (e = rd_u16(&r, &nstreams, "stream count")))
        return e;
    if (nstreams > MDT_MAX_STREAMS) {
        r.pos -= 2;
        return rd_fail(&r, MDT_EBADIMAGE, "stream count %u is implausible (at most %u)", nstreams,
                       MDT_MAX_STREAMS);
    }
    md->streams = talloc_zero_array(md->mem, mdt_stream_info, nstreams ? nstreams : 1);
    if (!md->streams)
        return mdt__fail_simple(MDT_ENOMEM, "out of memory");
    md->mdi.nstreams = nstreams;

    bool enc = false;
    for (uint16_t i = 0; i < nstreams; i++) {
        mdt_stream_info *s = &md->streams[i];
        size_t hdr = r.pos, n;
        if ((e = rd_u32(&r, &s->offset, "stream header")) ||
            (e = rd_u32(&r, &s->size, "stream header")))
            return e;
        /* The name: up to 32 bytes including the NUL, padded to 4. */
        size_t room = rd_left(&r) < 32 ? rd_left(&r) : 32;
        const uint8_t *nm = r.base + r.pos;
        const uint8_t *nul = memchr(nm, 0, room);
        if (!nul) {
            if (room < 32)
                return rd_trunc(&r, 32, "stream name");
            return rd_fail(&r, MDT_EBADIMAGE, "stream %u name has no NUL within 32 bytes", i + 1);
        }
        n = (size_t)(nul - nm);
        memcpy(s->name, nm, n);
        s->name[n] = '\0';
        if ((e = rd_skip(&r, (n + 4) & ~(size_t)3, "stream name")))
            return e;
        if (s->offset > size) {
            r.pos = hdr;
            return rd_fail(&r, MDT_EBADIMAGE,
                           "stream %s: offset 0x%x is beyond the metadata (size 0x%x)", s->name,
                           s->offset, size);
        }
        if (s->size > size - s->offset) {
            if ((uint64_t)s->offset + s->size > UINT32_MAX) {
                r.pos = hdr;
                return rd_fail(&r, MDT_EBADIMAGE, "stream %s: offset 0x%x + size 0x%x wraps",
                               s->name, s->offset, s->size);
            }
            mdt__warn(md->warn,
                      "stream %s: 0x%x bytes at 0x%x run past the metadata end 0x%x; "
                      "truncated to 0x%x",
                      s->name, s->size, s->offset, size, size - s->offset);
            s->size = size - s->offset;
        }
        if (strcmp(s->name, "#-") == 0 || strcmp(s->name, "#Schema") == 0)
            enc = true;
    }
    md->mdi.enc = enc;

    /* Choose one stream per slot: last wins in #~ metadata, first in EnC. */
    int chosen[S_UNKNOWN] = {-1, -1, -1, -1, -1, -1, -1, -1};
    for (uint16_t i = 0; i < nstreams; i++) {
        mdt_stream_info *s = &md->streams[i];
        int slot = slot_of(s->name, enc);
        char esc[140];
        if (slot == S_UNKNOWN) {
            escape_name(esc, sizeof esc, s->name);
            mdt__warn(md->warn, "unknown stream \"%s\" (0x%x bytes) ignored", esc, s->size);
            continue;
        }
        if (chosen[slot] >= 0) {
            mdt__warn(md->warn, "duplicate stream %s: using the %s one (%s metadata)", s->name,
                      enc ? "first" : "last", enc ? "EnC" : "#~");
            if (enc)
                continue;
        }
        chosen[slot] = i;
    }
    for (int slot = 0; slot < S_UNKNOWN; slot++)
        if (chosen[slot] >= 0)
            md->streams[chosen[slot]].used = true;
    if (chosen[S_STRINGS] >= 0)
        set_heap(&md->strings, window->base, &md->streams[chosen[S_STRINGS]], "#Strings");
    if (chosen[S_US] >= 0)
        set_heap(&md->us, window->base, &md->streams[chosen[S_US]], "#US");
    if (chosen[S_BLOB] >= 0)
        set_heap(&md->blob, window->base, &md->streams[chosen[S_BLOB]], "#Blob");
    if (chosen[S_GUID] >= 0)
        set_heap(&md->guid, window->base, &md->streams[chosen[S_GUID]], "#GUID");
    if (chosen[S_PDB] >= 0) {
        set_heap(&md->pdb, window->base, &md->streams[chosen[S_PDB]], "#Pdb");
        md->mdi.has_pdb = true;
    }
    if (chosen[S_JTD] >= 0) {
        if (enc)
            md->mdi.jtd = true;
        else
            mdt__warn(md->warn,
                      "#JTD stream ignored: it only applies to uncompressed (#-) metadata");
    }
    if (chosen[S_TABLES] < 0) {
        mdt_place pl = MDT_PLACE_NONE;
        pl.file = md->name;
        pl.region = "metadata root";
        pl.file_offset = file_off;
        return mdt__fail(MDT_EBADIMAGE, pl, "no tables stream (#~ or #-)");
    }
    set_heap(&md->tables_stream, window->base, &md->streams[chosen[S_TABLES]],
             md->streams[chosen[S_TABLES]].name[1] == '-' ? "#-" : "#~");
    if (md->strings.present && md->strings.size && md->strings.base[md->strings.size - 1] != 0)
        mdt__warn(md->warn, "#Strings does not end with a NUL; its last string is unreadable");
    else if (md->strings.present && md->strings.size)
        md->strings.nul_terminated = true;
    if (md->strings.present && md->strings.size && md->strings.base[0] != 0)
        mdt__warn(md->warn, "#Strings does not start with the empty string");
    if (md->guid.present && md->guid.size % 16)
        mdt__warn(md->warn, "#GUID size 0x%x is not a multiple of 16", md->guid.size);
    /* The tables stream lies inside the window (streams past its end were
     * cut at it); what follows the stream there may be read, and then the
     * slack after the window. */
    return mdt__tables_parse(md,
                             size - (md->tables_stream.offset + md->tables_stream.size) + slack);
}

const mdt_md_info *mdt_image_md_info(const mdt_image *img)
{
    return &mdt__md(img)->mdi;
}

const mdt_stream_info *mdt_image_stream(const mdt_image *img, size_t i)
{
    const struct mdt_md *md = mdt__md(img);
    return i < md->mdi.nstreams ? &md->streams[i] : NULL;
}
