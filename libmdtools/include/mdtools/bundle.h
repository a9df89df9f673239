/* mdtools: .NET single-file bundles, the executables `dotnet publish
 * -p:PublishSingleFile=true` writes: the application host (apphost or
 * singlefilehost, an ELF, PE or Mach-O program) followed by the
 * application's files, then a header and a manifest naming each file.
 * The runtime loads the bundled assemblies from the bundle itself, so a
 * profiler's log names modules no file on disk holds: a bundle is read
 * to find them.
 *
 * Layout, as .NET's bundler writes it (major versions 1: .NET Core 3,
 * 2: .NET 5, 6: .NET 6 and later). The host holds a 32-byte signature
 * (the SHA-256 of ".net core bundle") preceded by a 64-bit header offset,
 * 0 in a host that carries no bundle. At that offset: major and minor
 * version (u32 each), the number of files (i32), the bundle ID (a string:
 * its length in 7-bit groups, then UTF-8), from version 2 the offsets and
 * sizes of the deps.json and runtimeconfig.json (4 x i64) and flags
 * (u64); then per file its offset and size (i64 each), from version 6 its
 * compressed size (i64; 0: stored as is, else raw DEFLATE in that many
 * bytes), its type (u8) and its path relative to the application
 * (a string, '/' separated). Integers are little-endian.
 *
 * Every read is bounds-checked: an offset, a size or a string past the
 * bytes there is a located error, never a read outside; the number of
 * files is bounded by the bytes of the manifest and MDT_BUNDLE_MAX_FILES,
 * a file read or inflated by MDT_BUNDLE_MAX_READ.
 *
 * Ownership: a bundle is a talloc object under the caller's mem_ctx. A
 * file is read on demand, never mapped (a file cut while open gives
 * errors, not SIGBUS): its header and manifest at open, a bundled file's
 * bytes when asked for; the descriptor is closed with the bundle. Entry
 * paths and the ID are the bundle's. An image opened from an entry owns
 * its bytes when they were read from a file or inflated; from a bundle in
 * memory, a file stored as is is borrowed (the image must be freed first)
 * unless MDT_OPEN_COPY. Thread safety: a bundle is read-only once open;
 * any thread may read it (a file with pread). */
#ifndef MDTOOLS_BUNDLE_H
#define MDTOOLS_BUNDLE_H

#include <stddef.h>
#include <stdint.h>

#include <mdtools/errors.h>
#include <mdtools/image.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MDT_BUNDLE_MAX_FILES 65536u
#define MDT_BUNDLE_MAX_READ ((uint64_t)255 << 20) /* bytes of one file, read or inflated */

/* What a bundled file is (the manifest's type byte; other values are
 * passed on as they are). */
enum mdt_bundle_type {
    MDT_BUNDLE_UNKNOWN = 0,
    MDT_BUNDLE_ASSEMBLY = 1,
    MDT_BUNDLE_NATIVE = 2,
    MDT_BUNDLE_DEPS_JSON = 3,
    MDT_BUNDLE_RUNTIMECONFIG_JSON = 4,
    MDT_BUNDLE_SYMBOLS = 5
};

typedef struct mdt_bundle mdt_bundle;

typedef struct mdt_bundle_info {
    uint32_t major, minor;
    const char *id;         /* the bundle ID (the bundle's) */
    uint64_t header_offset; /* where the header is in the file */
    uint64_t flags;         /* 0 before version 2 */
    size_t files;           /* entries of the manifest */
} mdt_bundle_info;

typedef struct mdt_bundle_entry {
    const char *path;         /* relative to the application, '/' separated (the bundle's) */
    uint64_t offset;          /* of its bytes in the file */
    uint64_t size;            /* its size, inflated */
    uint64_t compressed_size; /* 0: stored as is; else DEFLATE in this many bytes at offset */
    unsigned type;            /* enum mdt_bundle_type, or the byte found */
} mdt_bundle_entry;

/* Open a file as a bundle (only a regular file, as mdt_image_open_file;
 * the signature searched a MiB at a time, the header and the manifest read,
 * at most 64 MiB of them). Errors: MDT_EINVAL (NULL out or path), MDT_EIO
 * (open or read failed, not a regular file), MDT_ENOMEM, MDT_ENOTDOTNET
 * (not an executable: neither ELF, PE nor Mach-O, said after reading 4
 * bytes; no bundle signature; a host that carries no bundle), MDT_EBADIMAGE,
 * MDT_ETRUNC (the header or manifest past the end, a file outside the
 * bundle), MDT_EUNSUPPORTED (a major version other than 1, 2 and 6). */
int mdt_bundle_open_file(void *mem_ctx, mdt_bundle **out, const char *path);
/* The same for bytes in memory; `name` appears in error messages (may be
 * NULL). Flags: 0 (borrow: the bytes must outlive the bundle) or
 * MDT_OPEN_COPY. Errors: MDT_EINVAL (NULL out or data, other flags),
 * MDT_ENOMEM, and as mdt_bundle_open_file: MDT_ENOTDOTNET, MDT_EBADIMAGE,
 * MDT_ETRUNC, MDT_EUNSUPPORTED; MDT_EIO only from a file. */
int mdt_bundle_open_buffer(void *mem_ctx, mdt_bundle **out, const char *name, const void *data,
                           size_t len, unsigned flags);
/* What the header says. MDT_EINVAL for NULL arguments. */
int mdt_bundle_info_get(mdt_bundle_info *out, const mdt_bundle *b);
/* Entry i of the manifest, in its order. MDT_EINVAL (NULL arguments),
 * MDT_ENOTFOUND (i past the last). */
int mdt_bundle_entry_get(mdt_bundle_entry *out, const mdt_bundle *b, size_t i);
/* The bytes of entry i: borrowed from a bundle in memory when stored as
 * is; else read or inflated into a talloc block under mem_ctx (*owned set
 * to it, else NULL). Errors: MDT_EINVAL, MDT_ENOTFOUND, MDT_ENOMEM, MDT_EIO
 * (a file that cannot be read or was cut since the open), MDT_EBADIMAGE (a
 * stream that does not inflate to the entry's size), MDT_EUNSUPPORTED
 * (larger than MDT_BUNDLE_MAX_READ). */
int mdt_bundle_entry_bytes(void *mem_ctx, const uint8_t **data, size_t *len, void **owned,
                           const mdt_bundle *b, size_t i);
/* Open entry i as an image (named "BUNDLE!PATH" in messages). Flags: 0
 * (borrow the bundle's bytes when stored as is) or MDT_OPEN_COPY. Errors:
 * MDT_EINVAL (NULL arguments, other flags), MDT_ENOTFOUND (i past the
 * last, or as mdt_image_open_buffer), MDT_ENOMEM, MDT_EIO, MDT_EBADIMAGE,
 * MDT_EUNSUPPORTED (as mdt_bundle_entry_bytes), and those of reading the
 * image (mdt_image_open_buffer): MDT_ENOTDOTNET (a file that is no .NET
 * image), MDT_EBADIMAGE, MDT_ETRUNC, MDT_EUNSUPPORTED. */
int mdt_bundle_open_image(void *mem_ctx, mdt_image **out, const mdt_bundle *b, size_t i,
                          unsigned flags);

#ifdef __cplusplus
}
#endif

#endif
