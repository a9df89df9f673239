/* Finding and opening the portable PDB of an assembly (Portable PDB v1.0;
 * the PE/COFF debug directory entries of ECMA-335 II.25.2.3.1's optional
 * header data directory 6: CodeView "RSDS" with the PDB's GUID, type 17
 * "Embedded Portable PDB"). An embedded PDB is "MPDB", the uncompressed
 * size (4 bytes), then a raw deflate stream (RFC 1951), inflated with zlib
 * into exactly that many bytes. A PDB file is accepted only when its PDB
 * id (the #Pdb stream's first 20 bytes: GUID, then the time stamp) matches
 * the assembly's CodeView entry, so that a stale file never gives lines. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <talloc.h>
#include <unistd.h>
#include <zlib.h>

#include <mdtools/assembly.h>
#include <mdtools/image.h>
#include <mdtools/pdb.h>

#include "open/open_int.h"
#include "pdb/pdb_int.h"
#include "util/error.h"
#include "util/file.h"
#include "util/reader.h"

#define DEBUG_TYPE_CODEVIEW 2u
#define DEBUG_TYPE_EMBEDDED_PDB 17u

static int nomem(void)
{
    return mdt__fail_simple(MDT_ENOMEM, "out of memory");
}

/* A PDB handle around an open metadata image, which must be a PDB. */
static int wrap(void *mem_ctx, mdt_pdb **out, mdt_image *md, int source, const char *path)
{
    const mdt_md_info *mi = mdt_image_md_info(md);
    mdt_pdb *pdb;
    if (mdt_image_kind(md) != MDT_KIND_METADATA || !mi->has_pdb) {
        int e = mdt__fail_simple(MDT_EBADIMAGE, "%s: metadata without a #Pdb stream", path);
        talloc_free(md);
        return e;
    }
    pdb = talloc_zero(mem_ctx, mdt_pdb);
    if (!pdb || !(pdb->path = talloc_strdup(pdb, path))) {
        talloc_free(pdb);
        talloc_free(md);
        return nomem();
    }
    pdb->md = talloc_steal(pdb, md);
    pdb->source = source;
    *out = pdb;
    return 0;
}

/* The assembly's CodeView entry, or NULL. */
static const mdt_debug_entry *codeview(const mdt_image *img)
{
    const mdt_pe_info *pe = mdt_image_pe_info(img);
    for (size_t i = 0; i < pe->ndebug; i++) {
        const mdt_debug_entry *e = mdt_image_debug_entry(img, i);
        if (e && e->type == DEBUG_TYPE_CODEVIEW && e->has_codeview)
            return e;
    }
    return NULL;
}

/* Whether a PDB's id is the one the assembly names. An assembly without a
 * CodeView entry names none: any PDB is taken. */
static bool id_matches(const mdt_image *img, const mdt_image *md)
{
    const mdt_debug_entry *cv = codeview(img);
    const uint8_t *id = mdt_image_md_info(md)->pdb_id;
    if (!cv)
        return true;
    return memcmp(id, cv->pdb_guid, 16) == 0 && le32(id + 16) == cv->time_date_stamp;
}

/* The bytes of a debug directory entry's data. */
static int entry_data(const mdt_image *img, const mdt_debug_entry *e, const uint8_t **p)
{
    size_t n;
    const uint8_t *all = mdt__image_buffer(&n, img);
    int k = mdt_image_kind(img);
    if (k == MDT_KIND_PE && e->file_pointer) {
        if (e->file_pointer > n || e->size > n - e->file_pointer)
            return mdt__fail_simple(MDT_ETRUNC,
                                    "%s: embedded PDB at file 0x%x size 0x%x beyond the file end",
                                    mdt_image_name(img), e->file_pointer, e->size);
        int err = mdt__image_need(img, e->file_pointer, e->size);
        if (err)
            return err;
        *p = all + e->file_pointer;
        return 0;
    }
    return mdt_image_rva(p, img, e->rva, e->size);
}

static int inflate_exact(const uint8_t *in, size_t inlen, uint8_t *out, size_t outlen,
                         const char *name)
{
    z_stream z;
    int r;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, -MAX_WBITS) != Z_OK)
        return nomem();
    z.next_in = (Bytef *)in;
    z.avail_in = (uInt)inlen;
    z.next_out = out;
    z.avail_out = (uInt)outlen;
    r = inflate(&z, Z_FINISH);
    inflateEnd(&z);
    if (r == Z_MEM_ERROR)
        return nomem();
    if (r != Z_STREAM_END || z.total_out != outlen)
        return mdt__fail_simple(MDT_EBADIMAGE,
                                "%s: embedded PDB does not inflate to its %zu bytes (zlib: %s)",
                                name, outlen,
                                r == Z_STREAM_END ? "stream ends early"
                                : z.msg           ? z.msg
                                                  : "data ends before the stream does");
    return 0;
}

static int open_embedded(void *mem_ctx, mdt_pdb **out, const mdt_image *img,
                         const mdt_debug_entry *e)
{
    const char *name = mdt_image_name(img);
    const uint8_t *p;
    uint32_t size;
    uint8_t *buf;
    mdt_image *md;
    char *path;
    int r = entry_data(img, e, &p);
    if (r)
        return r;
    if (e->size < 8 || memcmp(p, "MPDB", 4) != 0)
        return mdt__fail_simple(MDT_EBADIMAGE, "%s: embedded PDB entry without the MPDB signature",
                                name);
    size = le32(p + 4);
    if (size > MDT_PDB_MAX_EMBEDDED)
        return mdt__fail_simple(MDT_EUNSUPPORTED, "%s: embedded PDB of %u bytes (limit %u)", name,
                                size, MDT_PDB_MAX_EMBEDDED);
    if (!(path = talloc_asprintf(NULL, "%s!embedded", name)))
        return nomem();
    if (!(buf = talloc_size(path, size ? size : 1))) {
        talloc_free(path);
        return nomem();
    }
    r = inflate_exact(p + 8, e->size - 8, buf, size, name);
    if (!r)
        r = mdt_image_open_buffer(path, &md, path, buf, size, 0);
    if (!r) {
        talloc_steal(md, buf); /* the image borrows the bytes: they go with it */
        r = wrap(mem_ctx, out, md, MDT_PDB_EMBEDDED, path);
    }
    talloc_free(path);
    return r;
}

int mdt_pdb_open_file(void *mem_ctx, mdt_pdb **out, const char *path, const mdt_image *img)
{
    static const char msf[] = "Microsoft C/C++ MSF 7.00";
    char head[sizeof msf - 1];
    mdt_image *md;
    struct stat st;
    /* The path may be one an image names (its CodeView entry's file name,
     * looked for beside it): a FIFO there must not block, a device must
     * not be opened. */
    int fd = mdt__open_regular(path, &st);
    int r;
    if (fd == MDT_FILE_NOT_REGULAR)
        return mdt__fail_simple(MDT_EIO, "%s: not a regular file", path);
    if (fd < 0)
        return mdt__fail_simple(errno == ENOENT ? MDT_ENOTFOUND : MDT_EIO, "%s: %s", path,
                                strerror(errno));
    r = mdt__read_at(fd, head, sizeof head, 0) == (long long)sizeof head &&
        memcmp(head, msf, sizeof head) == 0;
    close(fd);
    if (r)
        return mdt__fail_simple(MDT_EUNSUPPORTED, "%s: a Windows PDB, not a portable one", path);
    if ((r = mdt_image_open_file(NULL, &md, path, 0)) != 0)
        return r;
    if (img && mdt_image_kind(md) == MDT_KIND_METADATA && !id_matches(img, md)) {
        talloc_free(md);
        return mdt__fail_simple(MDT_ENOTFOUND, "%s: PDB id does not match %s", path,
                                mdt_image_name(img));
    }
    return wrap(mem_ctx, out, md, MDT_PDB_FILE, path);
}

/* Try one candidate file; 1 when it does not exist or is not this
 * assembly's PDB (*why and *whymsg keep the most telling reason: a Windows
 * PDB, then an id that does not match), else 0 or an error. */
static int try_file(void *mem_ctx, mdt_pdb **out, const mdt_image *img, const char *path, int *why,
                    char **whymsg, void *tmp)
{
    int r = mdt_pdb_open_file(mem_ctx, out, path, img);
    const char *what = mdt_error_last()->what;
    if (r == MDT_EUNSUPPORTED ||
        (r == MDT_ENOTFOUND && *why != MDT_EUNSUPPORTED && strstr(what, "does not match"))) {
        *why = r;
        *whymsg = talloc_strdup(tmp, what);
    }
    return r == MDT_ENOTFOUND || r == MDT_EUNSUPPORTED ? 1 : r;
}

int mdt_pdb_open(void *mem_ctx, mdt_pdb **out, const mdt_image *img, const char *img_path,
                 unsigned flags)
{
    const mdt_pe_info *pe;
    const mdt_debug_entry *cv;
    const char *slash, *dot, *base;
    void *tmp;
    char *whymsg = NULL;
    int why = MDT_ENOTFOUND, r;
    if (!img || !out || flags)
        return mdt__fail_simple(MDT_EINVAL, "mdt_pdb_open: bad arguments");
    pe = mdt_image_pe_info(img);
    for (size_t i = 0; i < pe->ndebug; i++) {
        const mdt_debug_entry *e = mdt_image_debug_entry(img, i);
        if (e && e->type == DEBUG_TYPE_EMBEDDED_PDB)
            return open_embedded(mem_ctx, out, img, e);
    }
    if (!img_path)
        img_path = mdt_image_name(img);
    if (!img_path || !*img_path)
        return mdt__fail_simple(MDT_ENOTFOUND, "no embedded PDB and no path to look beside");
    if (!(tmp = talloc_new(NULL)))
        return nomem();
    slash = strrchr(img_path, '/');
    cv = codeview(img);
    r = 1;
    if (cv && cv->pdb_path && *cv->pdb_path) {
        /* The CodeView path is the build machine's (either slash): only its
         * file name is looked for, in the assembly's folder. */
        const char *p = cv->pdb_path, *b = p;
        for (; *p; p++)
            if (*p == '/' || *p == '\\')
                b = p + 1;
        if (*b && strcmp(b, ".") != 0 && strcmp(b, "..") != 0) {
            char *cand = talloc_asprintf(tmp, "%.*s%s", slash ? (int)(slash - img_path + 1) : 0,
                                         img_path, b);
            r = cand ? try_file(mem_ctx, out, img, cand, &why, &whymsg, tmp) : nomem();
        }
    }
    if (r == 1) {
        base = slash ? slash + 1 : img_path;
        dot = strrchr(base, '.');
        int stem = (int)(dot ? (size_t)(dot - img_path) : strlen(img_path));
        char *cand = talloc_asprintf(tmp, "%.*s.pdb", stem, img_path);
        r = cand ? try_file(mem_ctx, out, img, cand, &why, &whymsg, tmp) : nomem();
    }
    if (r == 1)
        r = mdt__fail_simple(why, "%s: %s", mdt_image_name(img),
                             whymsg ? whymsg : "no embedded PDB and no PDB file beside it");
    talloc_free(tmp);
    return r;
}

const mdt_image *mdt_pdb_image(const mdt_pdb *pdb)
{
    return pdb->md;
}

int mdt_pdb_source(const mdt_pdb *pdb)
{
    return pdb->source;
}

const char *mdt_pdb_path(const mdt_pdb *pdb)
{
    return pdb->path;
}
