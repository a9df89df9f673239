/* mdinspect batch: opening the files the input and the options name (a
 * `PATH TOKEN` line's module, the files of --assemblies folders and of the
 * folders a log's header names, the PDB beside a module, the --index file)
 * without trusting what they are, through the library's mdt_file_open(3):
 * only a regular file is opened, never blocking on a FIFO or acting on a
 * device. An image's first bytes are read before anything else and a file
 * that is no PE, Webcil, WebAssembly or metadata image is refused there.
 * An image is then opened with MDT_OPEN_LAZY: the library reads its headers
 * and its metadata, all a name needs, and nothing else, so a huge file
 * costs those bytes, not its size (a 2 GiB file that starts like an image
 * and is not one is refused after its headers). It is not mapped: a file
 * truncated by another process while batch runs gives an error for the
 * lines that need it, never SIGBUS (before issue 28 batch mapped images;
 * bench/README.md compares the two). batch opens the descriptor itself
 * first to name the kind of file it refused in its warning. It looks for a
 * PDB beside a module itself, as mdt_pdb_open(3) does. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <talloc.h>
#include <unistd.h>

#include <mdtools/file.h>

#include "batch/batch.h"

int mdb_open_regular(const char *path, struct stat *st, char *why, size_t whylen)
{
    int fd = mdt_file_open(path, st);
    if (fd >= 0)
        return fd;
    if (fd == MDT_EUNSUPPORTED)
        snprintf(why, whylen, "%s, not a regular file", mdt_file_kind(st->st_mode));
    else if (fd == MDT_EINVAL)
        snprintf(why, whylen, "no path");
    else
        snprintf(why, whylen, "cannot open: %s", strerror(errno));
    return -1;
}

/* Whether the first bytes are those of an image the library reads. */
static bool image_magic(const unsigned char *b, size_t n)
{
    return (n >= 2 && b[0] == 'M' && b[1] == 'Z') ||
           (n >= 4 &&
            (memcmp(b, "\0asm", 4) == 0 || memcmp(b, "WbIL", 4) == 0 || memcmp(b, "BSJB", 4) == 0));
}

int mdb_image_open(void *ctx, mdt_image **out, const char *path, char *why, size_t whylen)
{
    struct stat st;
    unsigned char head[4];
    ssize_t n;
    int fd = mdb_open_regular(path, &st, why, whylen), e;
    *out = NULL;
    if (fd < 0)
        return -1;
    n = mdt_file_read_at(fd, head, sizeof head, 0);
    if (n < 0 || !image_magic(head, (size_t)n)) {
        if (n < 0)
            snprintf(why, whylen, "cannot read: %s", strerror(errno));
        else
            snprintf(why, whylen, "%s",
                     n == 0  ? "an empty file, not an image"
                     : n < 4 ? "file too short to identify (under 4 bytes)"
                             : "not a PE (MZ), Webcil (WbIL, \\0asm) or "
                               "metadata (BSJB) image");
        close(fd);
        return -1;
    }
    close(fd);
    /* Read on demand: the headers and the metadata, which is all a name
     * needs; never mapped, so a file truncated while batch runs gives an
     * error for its lines, not SIGBUS. */
    e = mdt_image_open_file(ctx, out, path, MDT_OPEN_LAZY);
    if (e == 0)
        return 0;
    const char *what = mdt_error_last()->what;
    char msg[512];
    snprintf(why, whylen, "%s", what[0] ? what : mdt_error_message(msg, sizeof msg));
    mdt_error_clear();
    return -1;
}

int mdb_bundle_image_open(void *ctx, mdt_image **out, const mdt_bundle *b, size_t entry, char *why,
                          size_t whylen)
{
    char msg[512];
    *out = NULL;
    if (mdt_bundle_open_image(ctx, out, b, entry, 0) == 0)
        return 0;
    snprintf(why, whylen, "%s", mdt_error_message(msg, sizeof msg));
    mdt_error_clear();
    return -1;
}

mdt_bundle *mdb_bundle_open(void *ctx, const char *path, char *why, size_t whylen)
{
    mdt_bundle *b;
    char msg[512];
    why[0] = '\0';
    /* the library opens a regular file only, never blocking, and says
     * "no bundle" of a file that is no executable after 4 bytes */
    if (mdt_bundle_open_file(ctx, &b, path) == 0)
        return b;
    if (mdt_error_last()->code != MDT_ENOTDOTNET)
        snprintf(why, whylen, "%s", mdt_error_message(msg, sizeof msg));
    mdt_error_clear();
    return NULL;
}

/* A portable PDB beside a module: a regular file that starts with BSJB (or
 * with the Windows PDB signature, which the library names as such), and
 * not larger than an embedded PDB may be. */
static bool pdb_file_ok(const char *path)
{
    static const char msf[] = "Microsoft C/C++ MSF 7.00";
    unsigned char head[sizeof msf - 1];
    struct stat st;
    char why[8];
    ssize_t n;
    int fd = mdb_open_regular(path, &st, why, sizeof why);
    if (fd < 0)
        return false;
    n = mdt_file_read_at(fd, head, sizeof head, 0);
    close(fd);
    return n >= 4 && (uint64_t)st.st_size <= MDT_PDB_MAX_EMBEDDED &&
           (memcmp(head, "BSJB", 4) == 0 ||
            ((size_t)n == sizeof head && memcmp(head, msf, sizeof head) == 0));
}

/* The CodeView entry's PDB path (written by the build machine, either
 * slash), or NULL. */
static const char *codeview_name(const mdt_image *img)
{
    const mdt_pe_info *pe = mdt_image_pe_info(img);
    for (size_t i = 0; pe && i < pe->ndebug; i++) {
        const mdt_debug_entry *e = mdt_image_debug_entry(img, i);
        if (e && e->type == 2 && e->pdb_path && *e->pdb_path) {
            const char *b = e->pdb_path;
            for (const char *p = b; *p; p++)
                if (*p == '/' || *p == '\\')
                    b = p + 1;
            return *b ? b : NULL;
        }
    }
    return NULL;
}

int mdb_pdb_open(void *ctx, mdt_pdb **out, const mdt_image *img, const char *path)
{
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path, *cv, *dot;
    int dirlen = slash ? (int)(slash - path + 1) : 0;
    char *cand[2] = {NULL, NULL};
    void *tmp;
    /* embedded: an empty path keeps the library from looking beside it */
    if (mdt_pdb_open(ctx, out, img, "", 0) == 0)
        return 0;
    mdt_error_clear();
    if (!(tmp = talloc_new(NULL)))
        return -1;
    if ((cv = codeview_name(img)))
        cand[0] = talloc_asprintf(tmp, "%.*s%s", dirlen, path, cv);
    dot = strrchr(base, '.');
    cand[1] =
        talloc_asprintf(tmp, "%.*s.pdb", (int)(dot ? (size_t)(dot - path) : strlen(path)), path);
    for (int i = 0; i < 2; i++) {
        if (cand[i] && pdb_file_ok(cand[i]) && mdt_pdb_open_file(ctx, out, cand[i], img) == 0) {
            talloc_free(tmp);
            return 0;
        }
        mdt_error_clear();
    }
    talloc_free(tmp);
    *out = NULL;
    return -1;
}

char *mdb_read_small_file(void *ctx, const char *path, size_t max, size_t *len, char *why,
                          size_t whylen)
{
    char *buf;
    int e = mdt_file_read(ctx, &buf, len, path, max);
    if (e == 0)
        return buf;
    /* The refusal in batch's own words: what is there, or why not (the
     * file is examined again only on this path: a read opens it once). */
    struct stat st;
    int fd = mdb_open_regular(path, &st, why, whylen);
    if (fd < 0)
        return NULL;
    close(fd);
    if ((uint64_t)st.st_size > max)
        snprintf(why, whylen, "larger than %zu MiB", max >> 20);
    else
        snprintf(why, whylen, "%s",
                 e == MDT_ENOMEM ? "out of memory"
                 : e == MDT_EIO  ? "cannot read"
                                 : "changed while it was read");
    return NULL;
}
