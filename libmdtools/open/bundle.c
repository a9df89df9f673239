/* .NET single-file bundles (<mdtools/bundle.h>): the host's signature
 * found, the header and manifest read through the one reader, each
 * entry's bytes checked to lie in the file, compressed entries inflated
 * (raw DEFLATE, zlib) to exactly their size. */
#define _GNU_SOURCE /* memmem */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <talloc.h>
#include <unistd.h>
#include <zlib.h>

#include <mdtools/bundle.h>
#include <mdtools/file.h>

#include "util/error.h"
#include "util/reader.h"

/* SHA-256 of ".net core bundle": the host keeps the header's offset in the
 * 8 bytes before it. */
static const uint8_t signature[32] = {
    0x8b, 0x12, 0x02, 0xb9, 0x6a, 0x61, 0x20, 0x38, 0x72, 0x7b, 0x93, 0x02, 0x14, 0xd7, 0xa0, 0x32,
    0x13, 0xf5, 0xb9, 0xe6, 0xef, 0xae, 0x33, 0x18, 0xee, 0x3b, 0x2d, 0xce, 0x24, 0xb3, 0x6a, 0xae};

#define MAX_STRING 4096u /* bytes of a path or the bundle ID */

#define MAX_MANIFEST ((uint64_t)64 << 20) /* bytes from the header to the end of a file */
#define SCAN_CHUNK ((size_t)1 << 20)      /* a file is searched for the signature by these */

/* A bundle in memory (data, size: the caller's bytes or a copy), or a file
 * read on demand (fd >= 0: the header and manifest read at open, a
 * bundled file's bytes when asked for); never mapped, so that a file cut
 * while it is open gives errors, not SIGBUS. */
struct mdt_bundle {
    char *name;
    const uint8_t *data; /* memory: the whole bundle */
    int fd;              /* file: -1 in memory */
    uint64_t size;       /* of the bundle */
    mdt_bundle_info info;
    mdt_bundle_entry *entries;
};

static int close_fd(struct mdt_bundle *b)
{
    if (b->fd >= 0)
        close(b->fd);
    return 0;
}

static mdt_place at_file(const struct mdt_bundle *b, const char *region, uint64_t off)
{
    return (mdt_place){b->name, region, NULL, UINT32_MAX, UINT64_MAX, off};
}

/* n bytes at off of a file bundle into buf: MDT_EIO, located, when the
 * read fails or the file ends first (it was cut since the open). */
static int read_file(const struct mdt_bundle *b, void *buf, size_t n, uint64_t off,
                     const char *what)
{
    long long got = mdt_file_read_at(b->fd, buf, n, off);
    if (got < 0)
        return mdt__fail(MDT_EIO, at_file(b, "bundle", off), "cannot read %s: %s", what,
                         strerror(errno));
    if ((size_t)got != n)
        return mdt__fail(MDT_EIO, at_file(b, "bundle", off),
                         "%s: the file ends 0x%llx bytes in (it changed since it was opened)", what,
                         (unsigned long long)got);
    return 0;
}

/* Where the signature is: in memory, or searched in SCAN_CHUNK pieces of a
 * file (overlapping by the signature's length less one). *pos its offset;
 * MDT_ENOTDOTNET when there is none. */
static int find_signature(const struct mdt_bundle *b, uint64_t *pos)
{
    if (b->fd < 0) {
        const uint8_t *p = memmem(b->data, (size_t)b->size, signature, sizeof signature);
        if (p) {
            *pos = (uint64_t)(p - b->data);
            return 0;
        }
    } else {
        uint8_t *buf = talloc_size(NULL, SCAN_CHUNK);
        if (!buf)
            return mdt__fail_simple(MDT_ENOMEM, "out of memory");
        for (uint64_t off = 0; off < b->size; off += SCAN_CHUNK - (sizeof signature - 1)) {
            size_t n = b->size - off < SCAN_CHUNK ? (size_t)(b->size - off) : SCAN_CHUNK;
            int e = read_file(b, buf, n, off, "the application host");
            if (e) {
                talloc_free(buf);
                return e;
            }
            const uint8_t *p = memmem(buf, n, signature, sizeof signature);
            if (p) {
                *pos = off + (uint64_t)(p - buf);
                talloc_free(buf);
                return 0;
            }
            if (n < SCAN_CHUNK)
                break;
        }
        talloc_free(buf);
    }
    return mdt__fail(MDT_ENOTDOTNET, at_file(b, "bundle", UINT64_MAX),
                     "not a single-file bundle: no bundle signature");
}

/* A string as .NET's BinaryWriter writes it: its byte length in 7-bit
 * groups (low first, the high bit saying another follows; at most 5 of
 * them), then the bytes. Copied NUL-terminated into the bundle; a NUL
 * inside is refused (no path holds one). */
static int read_string(rd *r, struct mdt_bundle *b, char **out, const char *what)
{
    uint32_t len = 0;
    for (unsigned shift = 0;; shift += 7) {
        uint8_t byte;
        int e = rd_u8(r, &byte, what);
        if (e)
            return e;
        if (shift == 28 && byte > 0x0f)
            return rd_fail(r, MDT_EBADIMAGE, "%s: its length takes more than 32 bits", what);
        len |= (uint32_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80))
            break;
    }
    if (len > MAX_STRING)
        return rd_fail(r, MDT_EBADIMAGE, "%s: %u bytes long (at most %u)", what, len, MAX_STRING);
    const uint8_t *p;
    int e = rd_bytes(r, &p, len, what);
    if (e)
        return e;
    if (memchr(p, 0, len))
        return rd_fail(r, MDT_EBADIMAGE, "%s holds a NUL byte", what);
    if (!(*out = talloc_strndup(b, (const char *)p, len)))
        return mdt__fail_simple(MDT_ENOMEM, "out of memory");
    return 0;
}

/* A signed 64-bit offset or size that must lie in the file. */
static int read_extent(rd *r, uint64_t *v, const char *what)
{
    int e = rd_u64(r, v, what);
    if (e)
        return e;
    if (*v > (uint64_t)INT64_MAX)
        return rd_fail(r, MDT_EBADIMAGE, "%s is negative", what);
    return 0;
}

/* Whether the bytes start as an executable an application host can be:
 * ELF, PE (MZ), Mach-O (32- or 64-bit, either order) or a universal Mach-O.
 * Anything else is no bundle, said before a search of the whole file for
 * the signature (a large file that is no host costs one read). */
static int is_host(const uint8_t head[4])
{
    static const uint8_t magic[][4] = {{0x7f, 'E', 'L', 'F'},    {0xcf, 0xfa, 0xed, 0xfe},
                                       {0xfe, 0xed, 0xfa, 0xcf}, {0xce, 0xfa, 0xed, 0xfe},
                                       {0xfe, 0xed, 0xfa, 0xce}, {0xca, 0xfe, 0xba, 0xbe}};
    if (head[0] == 'M' && head[1] == 'Z')
        return 1;
    for (size_t i = 0; i < sizeof magic / sizeof magic[0]; i++)
        if (memcmp(head, magic[i], 4) == 0)
            return 1;
    return 0;
}

static int parse(struct mdt_bundle *b)
{
    uint64_t sig = 0, at;
    uint8_t head[4] = {0};
    int e = 0;
    if (b->size >= 4) {
        if (b->fd < 0)
            memcpy(head, b->data, 4);
        else
            e = read_file(b, head, 4, 0, "the executable's first bytes");
    }
    if (e)
        return e;
    if (!is_host(head))
        return mdt__fail(MDT_ENOTDOTNET, at_file(b, "bundle", 0),
                         "not a single-file bundle: not an executable (ELF, PE or Mach-O)");
    if ((e = find_signature(b, &sig)))
        return e;
    /* the first signature is the host's (a bundled file may hold the same
     * bytes: the bundler's own assembly does) */
    uint8_t slot[8];
    if (sig < 8)
        return mdt__fail(MDT_ENOTDOTNET, at_file(b, "bundle", sig),
                         "not a single-file bundle: a signature without the header's offset");
    if (b->fd < 0)
        memcpy(slot, b->data + sig - 8, 8);
    else if ((e = read_file(b, slot, 8, sig - 8, "the bundle header's offset")))
        return e;
    at = le64(slot);
    if (at == 0)
        return mdt__fail(MDT_ENOTDOTNET, at_file(b, "bundle", sig - 8),
                         "an application host that carries no bundle");
    if (at >= b->size || at <= sig)
        return mdt__fail(MDT_ETRUNC, at_file(b, "bundle", sig - 8),
                         "the bundle header's offset 0x%llx is %s (the file has 0x%llx bytes)",
                         (unsigned long long)at, at >= b->size ? "past the end" : "inside the host",
                         (unsigned long long)b->size);
    /* the header and the manifest: from there to the end */
    const uint8_t *win;
    if (b->fd < 0) {
        win = b->data + at;
    } else {
        if (b->size - at > MAX_MANIFEST)
            return mdt__fail(MDT_EUNSUPPORTED, at_file(b, "bundle header", at),
                             "0x%llx bytes from the bundle header to the end of the file (mdtools "
                             "reads a manifest of at most 0x%llx)",
                             (unsigned long long)(b->size - at), (unsigned long long)MAX_MANIFEST);
        uint8_t *m = talloc_size(b, (size_t)(b->size - at) + 1);
        if (!m)
            return mdt__fail_simple(MDT_ENOMEM, "out of memory");
        if ((e = read_file(b, m, (size_t)(b->size - at), at, "the bundle header")))
            return e;
        win = m;
    }
    rd r = rd_make(b->name, "bundle header", win, (size_t)(b->size - at), at);
    mdt_bundle_info *in = &b->info;
    in->header_offset = at;
    uint32_t count;
    e = rd_u32(&r, &in->major, "major version");
    if (!e)
        e = rd_u32(&r, &in->minor, "minor version");
    if (!e)
        e = rd_u32(&r, &count, "number of files");
    if (e)
        return e;
    if (in->major != 1 && in->major != 2 && in->major != 6)
        return rd_fail(&r, MDT_EUNSUPPORTED, "bundle version %u.%u (mdtools reads 1, 2 and 6)",
                       in->major, in->minor);
    char *id;
    if ((e = read_string(&r, b, &id, "bundle ID")))
        return e;
    in->id = id;
    if (in->major >= 2) {
        uint64_t skip;
        static const char *const json[4] = {"deps.json offset", "deps.json size",
                                            "runtimeconfig.json offset", "runtimeconfig.json size"};
        for (int k = 0; k < 4; k++)
            if ((e = read_extent(&r, &skip, json[k])))
                return e;
        if ((e = rd_u64(&r, &in->flags, "flags")))
            return e;
    }
    /* each entry takes at least 18 bytes (offset, size, type, a 1-byte
     * empty path's length): a count larger than the bytes left can hold
     * is refused before anything is allocated */
    size_t min = in->major >= 6 ? 26 : 18;
    if (count > MDT_BUNDLE_MAX_FILES || count > rd_left(&r) / min)
        return rd_fail(&r, count > MDT_BUNDLE_MAX_FILES ? MDT_EBADIMAGE : MDT_ETRUNC,
                       "%u files (the manifest's %zu bytes hold at most %zu; mdtools reads at "
                       "most %u)",
                       count, rd_left(&r), rd_left(&r) / min, MDT_BUNDLE_MAX_FILES);
    b->entries = talloc_zero_array(b, mdt_bundle_entry, count ? count : 1);
    if (!b->entries)
        return mdt__fail_simple(MDT_ENOMEM, "out of memory");
    for (uint32_t i = 0; i < count; i++) {
        mdt_bundle_entry *x = &b->entries[i];
        size_t start = r.pos;
        uint8_t type;
        char *path;
        if ((e = read_extent(&r, &x->offset, "file offset")) ||
            (e = read_extent(&r, &x->size, "file size")) ||
            (in->major >= 6 && (e = read_extent(&r, &x->compressed_size, "compressed size"))) ||
            (e = rd_u8(&r, &type, "file type")) || (e = read_string(&r, b, &path, "file path")))
            return e;
        x->type = type;
        x->path = path;
        uint64_t stored = x->compressed_size ? x->compressed_size : x->size;
        if (x->offset > b->size || stored > b->size - x->offset) {
            rd here = r;
            here.pos = start;
            return rd_fail(&here, MDT_ETRUNC,
                           "file %u (%s): 0x%llx bytes at 0x%llx run past the end of the bundle "
                           "(0x%llx bytes)",
                           i, path, (unsigned long long)stored, (unsigned long long)x->offset,
                           (unsigned long long)b->size);
        }
    }
    in->files = count;
    return 0;
}

/* A bundle of `size` bytes: `data` in memory (copied with `copy`), or
 * the file `fd` (taken: closed with the bundle, or here on failure). */
static int open_bundle(void *mem_ctx, mdt_bundle **out, const char *name, const uint8_t *data,
                       int fd, uint64_t size, unsigned copy)
{
    struct mdt_bundle *b = talloc_zero(mem_ctx, struct mdt_bundle);
    if (!b) {
        if (fd >= 0)
            close(fd);
        return mdt__fail_simple(MDT_ENOMEM, "out of memory");
    }
    b->fd = fd;
    talloc_set_destructor(b, close_fd);
    b->name = talloc_strdup(b, name ? name : "(bundle)");
    b->data = data;
    b->size = size;
    if (copy && !(b->data = talloc_memdup(b, data, size ? (size_t)size : 1)))
        b->name = NULL;
    if (!b->name) {
        talloc_free(b);
        return mdt__fail_simple(MDT_ENOMEM, "out of memory");
    }
    int e = parse(b);
    if (e) {
        talloc_free(b);
        return e;
    }
    *out = b;
    return 0;
}

int mdt_bundle_open_buffer(void *mem_ctx, mdt_bundle **out, const char *name, const void *data,
                           size_t len, unsigned flags)
{
    if (out)
        *out = NULL;
    if (!out || !data || (flags & ~(unsigned)MDT_OPEN_COPY))
        return mdt__fail_simple(MDT_EINVAL, "mdt_bundle_open_buffer: %s",
                                !out || !data ? "NULL argument" : "unknown flags");
    return open_bundle(mem_ctx, out, name, data, -1, len, flags & MDT_OPEN_COPY);
}

int mdt_bundle_open_file(void *mem_ctx, mdt_bundle **out, const char *path)
{
    struct stat st;
    if (out)
        *out = NULL;
    if (!out || !path)
        return mdt__fail_simple(MDT_EINVAL, "mdt_bundle_open_file: NULL argument");
    int fd = mdt_file_open(path, &st);
    if (fd < 0)
        return fd == MDT_EUNSUPPORTED || fd == MDT_ENOTFOUND ? MDT_EIO : fd;
    return open_bundle(mem_ctx, out, path, NULL, fd, (uint64_t)st.st_size, 0);
}

int mdt_bundle_info_get(mdt_bundle_info *out, const mdt_bundle *b)
{
    if (!out || !b)
        return mdt__fail_simple(MDT_EINVAL, "mdt_bundle_info_get: NULL argument");
    *out = b->info;
    return 0;
}

int mdt_bundle_entry_get(mdt_bundle_entry *out, const mdt_bundle *b, size_t i)
{
    if (!out || !b)
        return mdt__fail_simple(MDT_EINVAL, "mdt_bundle_entry_get: NULL argument");
    if (i >= b->info.files)
        return mdt__fail_simple(MDT_ENOTFOUND, "%s: no file %zu in the bundle (it has %zu)",
                                b->name, i, b->info.files);
    *out = b->entries[i];
    return 0;
}

int mdt_bundle_entry_bytes(void *mem_ctx, const uint8_t **data, size_t *len, void **owned,
                           const mdt_bundle *b, size_t i)
{
    if (owned)
        *owned = NULL;
    if (!data || !len || !owned || !b)
        return mdt__fail_simple(MDT_EINVAL, "mdt_bundle_entry_bytes: NULL argument");
    if (i >= b->info.files)
        return mdt__fail_simple(MDT_ENOTFOUND, "%s: no file %zu in the bundle (it has %zu)",
                                b->name, i, b->info.files);
    const mdt_bundle_entry *x = &b->entries[i];
    mdt_place place = {b->name, "bundle file", NULL, UINT32_MAX, UINT64_MAX, x->offset};
    uint64_t stored = x->compressed_size ? x->compressed_size : x->size;
    if (x->size > MDT_BUNDLE_MAX_READ || stored > MDT_BUNDLE_MAX_READ)
        return mdt__fail(MDT_EUNSUPPORTED, place,
                         "%s: 0x%llx bytes (mdtools reads at most 0x%llx of a bundled file)",
                         x->path, (unsigned long long)(x->size > stored ? x->size : stored),
                         (unsigned long long)MDT_BUNDLE_MAX_READ);
    /* in memory, the bytes are there (checked to lie in the bundle at open);
     * from a file, they are read now */
    const uint8_t *at = b->data ? b->data + x->offset : NULL;
    uint8_t *raw = NULL;
    if (!at) {
        raw = talloc_size(NULL, stored ? (size_t)stored : 1);
        int e = raw ? read_file(b, raw, (size_t)stored, x->offset, x->path)
                    : mdt__fail_simple(MDT_ENOMEM, "out of memory");
        if (e) {
            talloc_free(raw);
            return e;
        }
        at = raw;
    }
    if (!x->compressed_size) {
        *data = at;
        *len = (size_t)x->size;
        if (raw)
            *owned = talloc_steal(mem_ctx, raw);
        return 0;
    }
    uint8_t *buf = talloc_size(mem_ctx, x->size ? (size_t)x->size : 1);
    if (!buf) {
        talloc_free(raw);
        return mdt__fail_simple(MDT_ENOMEM, "out of memory (%s: %llu bytes)", x->path,
                                (unsigned long long)x->size);
    }
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, -MAX_WBITS) != Z_OK) {
        talloc_free(buf);
        talloc_free(raw);
        return mdt__fail_simple(MDT_ENOMEM, "out of memory");
    }
    /* zlib counts in uInt: fed and drained in pieces of at most 1 GiB */
    uint64_t in_left = x->compressed_size, out_left = x->size;
    const uint8_t *in = at;
    uint8_t *outp = buf;
    int zr = Z_OK;
    z.next_out = outp;
    z.avail_out = 0;
    while (zr == Z_OK) {
        if (!z.avail_in && in_left) {
            uInt n = in_left > (1u << 30) ? (1u << 30) : (uInt)in_left;
            z.next_in = (Bytef *)in;
            z.avail_in = n;
            in += n;
            in_left -= n;
        }
        if (!z.avail_out && out_left) {
            uInt n = out_left > (1u << 30) ? (1u << 30) : (uInt)out_left;
            z.avail_out = n;
            out_left -= n;
        }
        zr = inflate(&z, Z_FINISH);
        if (zr == Z_BUF_ERROR && (z.avail_in || in_left) && (z.avail_out || out_left))
            zr = Z_OK; /* more to feed or drain */
    }
    uint64_t total = (uint64_t)z.total_out;
    char zmsg[80];
    snprintf(zmsg, sizeof zmsg, "%s", z.msg ? z.msg : "");
    inflateEnd(&z);
    talloc_free(raw);
    if (zr == Z_MEM_ERROR) {
        talloc_free(buf);
        return mdt__fail_simple(MDT_ENOMEM, "out of memory");
    }
    if (zr != Z_STREAM_END || total != x->size) {
        talloc_free(buf);
        return mdt__fail(
            MDT_EBADIMAGE, place,
            "%s: 0x%llx compressed bytes do not inflate to its 0x%llx bytes (zlib: %s)", x->path,
            (unsigned long long)x->compressed_size, (unsigned long long)x->size,
            zr == Z_STREAM_END ? "the stream ends early"
            : zmsg[0]          ? zmsg
            : zr == Z_BUF_ERROR && !z.avail_out && !out_left
                ? "more bytes than that"
                : "the data ends before the stream does");
    }
    *data = buf;
    *len = (size_t)x->size;
    *owned = buf;
    return 0;
}

int mdt_bundle_open_image(void *mem_ctx, mdt_image **out, const mdt_bundle *b, size_t i,
                          unsigned flags)
{
    if (out)
        *out = NULL;
    if (!out || !b || (flags & ~(unsigned)MDT_OPEN_COPY))
        return mdt__fail_simple(MDT_EINVAL, "mdt_bundle_open_image: %s",
                                !out || !b ? "NULL argument" : "unknown flags");
    const uint8_t *data;
    size_t len;
    void *owned;
    int e = mdt_bundle_entry_bytes(mem_ctx, &data, &len, &owned, b, i);
    if (e)
        return e;
    char *name = talloc_asprintf(NULL, "%s!%s", b->name, b->entries[i].path);
    if (!name) {
        talloc_free(owned);
        return mdt__fail_simple(MDT_ENOMEM, "out of memory");
    }
    e = mdt_image_open_buffer(mem_ctx, out, name, data, len, owned ? 0 : flags);
    talloc_free(name);
    if (e) {
        talloc_free(owned);
        return e;
    }
    if (owned)
        talloc_steal(*out, owned); /* the image owns what it reads */
    return 0;
}
