/* mdinspect batch: opening the files the input and the options name (a
 * `PATH TOKEN` line's module, the files of --assemblies folders and of the
 * folders a log's header names, the PDB beside a module, the --index file)
 * without trusting what they are, through the library's mdt_file_open(3):
 * only a regular file is opened, never blocking on a FIFO or acting on a
 * device. An image's first bytes are read before anything else and a file
 * that is no PE, Webcil, WebAssembly or metadata image is refused there.
 * An image is then mapped, not read: the library reads its headers and the
 * metadata it needs, so a huge file costs the pages those reads touch, not
 * its size (a 2 GiB file that starts like an image and is not one is
 * refused after a few pages). batch opens the descriptor itself rather
 * than calling mdt_image_open_file because it maps the file and hands the
 * library the mapping, and names the kind of file it refused in its
 * warning. It looks for a PDB beside a module itself, as mdt_pdb_open(3)
 * does.
 *
 * A file mapped here and truncated by another process while batch runs
 * raises SIGBUS when a page past its new end is read, as with
 * mdt_image_open_file's MDT_OPEN_MAP. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
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

struct mapping {
    void *p;
    size_t len;
};

static int unmap(struct mapping *m)
{
    munmap(m->p, m->len);
    return 0;
}

int mdb_image_open(void *ctx, mdt_image **out, const char *path, char *why, size_t whylen)
{
    struct stat st;
    unsigned char head[4];
    struct mapping *m;
    void *p;
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
    if ((uintmax_t)st.st_size > SIZE_MAX / 2) {
        snprintf(why, whylen, "too large for this address space");
        close(fd);
        return -1;
    }
    p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        snprintf(why, whylen, "cannot map: %s", strerror(errno));
        return -1;
    }
    e = mdt_image_open_buffer(ctx, out, path, p, (size_t)st.st_size, 0);
    if (e == 0 && (m = talloc(*out, struct mapping))) {
        m->p = p;
        m->len = (size_t)st.st_size;
        talloc_set_destructor(m, unmap);
        return 0;
    }
    if (e == 0) {
        talloc_free(*out);
        *out = NULL;
        snprintf(why, whylen, "out of memory");
    } else {
        const char *what = mdt_error_last()->what;
        char msg[512];
        snprintf(why, whylen, "%s", what[0] ? what : mdt_error_message(msg, sizeof msg));
        mdt_error_clear();
    }
    munmap(p, (size_t)st.st_size);
    return -1;
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
