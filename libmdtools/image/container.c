/* Where an input's bytes come from and what they are: files read into
 * memory (or mapped on request), loader layouts copied on request; the
 * kind told from the first bytes (MZ, WbIL, \0asm, BSJB) and the metadata
 * window found through the kind's headers (pe.c, webcil.c; ECMA-335
 * II.25 for PE, II.24.2.1 for a raw metadata root).
 *
 * Files are read, not mapped, by default: a private mapping of a file that
 * another process truncates raises SIGBUS on the next read of a lost page,
 * and a library inside someone else's process must never let input kill
 * it (image.h states what MDT_OPEN_MAP risks; bench/README.md what reading
 * costs). MDT_OPEN_LAZY reads a PE's bytes as they are needed instead
 * (ondemand.c). The copy is malloc'ed, not talloc'ed: talloc refuses blocks of
 * 256 MiB and more. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image/container.h"
#include "util/file.h"

/* Bytes after the metadata window worth knowing about (container.h). */
#define MAX_SLACK 16

/* A file larger than this is told from its headers before it is read whole
 * (a 2 GiB file that is no image is refused after reading 64 bytes, not
 * after reading 2 GiB). */
#define IDENTIFY_ABOVE (64 * 1024)
/* e_lfanew further in than this: no early verdict, the whole file is read
 * and parsed as always. */
#define EARLY_LFANEW_MAX (1024 * 1024)

static const char not_an_image[] = "not a PE (MZ), Webcil (WbIL, \\0asm) or metadata (BSJB) image";

rd mdt__file_reader(const struct mdt_container *c)
{
    return rd_make(c->name, "file", c->data, c->size, 0);
}

static int fail_at(const struct mdt_container *c, int code, const char *fmt, const char *arg)
{
    mdt_place pl = MDT_PLACE_NONE;
    pl.file = c->name;
    return mdt__fail(code, pl, fmt, arg);
}

void mdt__container_release(struct mdt_container *c)
{
    if (c->map)
        munmap(c->map, c->map_len);
    free(c->copy);
    c->map = c->copy = NULL;
}

/* Read the first n bytes of fd into c->copy; n is the size fstat saw, or
 * the part of it the headers need. A file that shrinks meanwhile gives
 * what was there (c->size says how much). */
static int read_copy(struct mdt_container *c, int fd, size_t n)
{
    uint8_t *buf = malloc(n);
    long long got;
    if (!buf)
        return fail_at(c, MDT_ENOMEM, "%s", "out of memory reading the file");
    free(c->copy);
    c->copy = buf;
    if ((got = mdt__read_at(fd, buf, n, 0)) < 0)
        return fail_at(c, MDT_EIO, "cannot read: %s", strerror(errno));
    c->data = buf;
    c->size = (size_t)got;
    return 0;
}

static bool known_magic(const uint8_t *d, size_t n)
{
    return (n >= 2 && d[0] == 'M' && d[1] == 'Z') ||
           (n >= 4 &&
            (memcmp(d, "\0asm", 4) == 0 || memcmp(d, "WbIL", 4) == 0 || memcmp(d, "BSJB", 4) == 0));
}

/* Whether a large file is a .NET image at all, from its first bytes and,
 * for a PE, its headers: *headers_only set when it is not (no PE
 * signature, or no CLI data directory), with *need the bytes its headers
 * span: parsing those alone gives the error parsing the whole file would
 * give, since everything read before that verdict lies in them. A file
 * with none of the kinds' magic numbers fails here. Anything undecided
 * (headers past the file's end, a bad optional header) is left to the
 * parse of the whole file. */
static int identify(struct mdt_container *c, int fd, size_t size, bool *headers_only, size_t *need)
{
    uint8_t head[64], pe[24], opt[112 + 16 * 8];
    uint32_t lfanew, ndirs;
    uint16_t nsec, opt_size, magic;
    size_t dirs, nopt;
    long long n = mdt__read_at(fd, head, sizeof head, 0);
    *headers_only = false;
    if (n < 0)
        return fail_at(c, MDT_EIO, "cannot read: %s", strerror(errno));
    if (!known_magic(head, (size_t)n))
        return fail_at(c, MDT_ENOTDOTNET, "%s", not_an_image);
    if (head[0] != 'M' || n < (long long)sizeof head)
        return 0;
    lfanew = le32(head + 60);
    if (lfanew > EARLY_LFANEW_MAX || mdt__read_at(fd, pe, sizeof pe, lfanew) != sizeof pe)
        return 0;
    nsec = le16(pe + 4 + 2);
    opt_size = le16(pe + 4 + 16);
    *need = (size_t)lfanew + sizeof pe + opt_size + (size_t)nsec * 40;
    if (*need < sizeof head)
        *need = sizeof head;
    if (*need > size)
        *need = size;
    if (memcmp(pe, "PE\0\0", 4) != 0) {
        *headers_only = true;
        return 0;
    }
    nopt = opt_size < sizeof opt ? opt_size : sizeof opt;
    if (mdt__read_at(fd, opt, nopt, (unsigned long long)lfanew + sizeof pe) != (long long)nopt ||
        nopt < 2)
        return 0;
    magic = le16(opt);
    if (magic == 0x10b && nopt >= 96)
        ndirs = le32(opt + 92), dirs = 96;
    else if (magic == 0x20b && nopt >= 112)
        ndirs = le32(opt + 108), dirs = 112;
    else
        return 0;
    /* As the parse reads them: no more directories than the header holds. */
    if (ndirs > 16)
        ndirs = 16;
    if ((size_t)ndirs * 8 > opt_size - dirs)
        ndirs = (uint32_t)((opt_size - dirs) / 8);
    *headers_only = ndirs <= 14 || le32(opt + dirs + 14 * 8) == 0;
    return 0;
}

static int map_file(struct mdt_container *c, int fd, size_t n)
{
    c->map = mmap(NULL, n, PROT_READ, MAP_PRIVATE, fd, 0);
    if (c->map == MAP_FAILED) {
        c->map = NULL;
        return fail_at(c, MDT_EIO, "cannot map: %s", strerror(errno));
    }
    c->map_len = n;
    c->data = c->map;
    c->size = c->map_len;
    return 0;
}

/* Read on demand: worth it above a few chunks (a smaller file is read
 * whole, as without the flag, in one read). */
#define LAZY_ABOVE (256 * 1024)

/* The bytes the PE parse reads from the start of the file (DOS header, PE
 * signature, COFF and optional headers, section table); the rest of what
 * open reads (CLI header, debug directory, metadata) is found through RVAs,
 * whose reads ask for their own bytes (pe.c). Bytes past the file's end
 * are left to the parse to report. */
static int need_headers(const struct mdt_container *c)
{
    uint32_t lfanew;
    int e;
    if ((e = mdt__container_need(c, 0, 64)))
        return e;
    if (c->size < 64 || c->data[0] != 'M' || c->data[1] != 'Z')
        return mdt__container_need_all(c);
    lfanew = le32(c->data + 60);
    if ((e = mdt__container_need(c, lfanew, 24)))
        return e;
    if ((uint64_t)lfanew + 24 > c->size)
        return 0;
    uint64_t opt_size = le16(c->data + lfanew + 20), nsec = le16(c->data + lfanew + 6);
    return mdt__container_need(c, lfanew, 24 + opt_size + nsec * 40);
}

int mdt__container_load_file(struct mdt_container *c, const char *path, bool map, bool lazy)
{
    struct stat st;
    int fd, e;
    fd = mdt__open_regular(path, &st);
    if (fd == MDT_FILE_NOT_REGULAR)
        return fail_at(c, MDT_EIO, "%s",
                       S_ISDIR(st.st_mode)    ? "not a regular file (a directory)"
                       : S_ISFIFO(st.st_mode) ? "not a regular file (a FIFO)"
                                              : "not a regular file");
    if (fd < 0)
        return fail_at(c, MDT_EIO, "cannot open: %s", strerror(errno));
    if ((uintmax_t)st.st_size > SIZE_MAX / 2) {
        e = fail_at(c, MDT_EUNSUPPORTED, "%s", "file too large for this address space");
        close(fd);
        return e;
    }
    if (st.st_size == 0) {
        c->data = (const uint8_t *)"";
        c->size = 0;
        e = 0;
    } else if (map) {
        e = map_file(c, fd, (size_t)st.st_size);
    } else if (lazy && (size_t)st.st_size > LAZY_ABOVE) {
        /* The image owns fd from here. */
        if (!(e = mdt__ondemand_load(c, fd, &st)))
            e = need_headers(c);
        return e;
    } else if ((size_t)st.st_size > IDENTIFY_ABOVE) {
        bool headers_only;
        size_t need = 0;
        e = identify(c, fd, (size_t)st.st_size, &headers_only, &need);
        if (!e)
            e = read_copy(c, fd, headers_only ? need : (size_t)st.st_size);
    } else {
        e = read_copy(c, fd, (size_t)st.st_size);
    }
    close(fd);
    return e;
}

/* The declared runs copied to their RVAs in one zeroed block (malloc'ed:
 * it may exceed talloc's limit); the runs still say what may be read, so
 * the gaps' zeros are never read. */
int mdt__container_copy_runs(struct mdt_container *c)
{
    uint64_t end = c->runs[c->nruns - 1].hi;
    uint8_t *buf = end <= SIZE_MAX / 2 ? calloc(1, (size_t)end) : NULL;
    if (!buf)
        return fail_at(c, MDT_ENOMEM, "%s", "out of memory copying the mapped image");
    for (size_t i = 0; i < c->nruns; i++)
        memcpy(buf + c->runs[i].lo, c->data + c->runs[i].lo,
               (size_t)(c->runs[i].hi - c->runs[i].lo));
    c->copy = buf;
    c->data = buf;
    return 0;
}

/* Dispatch on the first bytes. */
static int parse(struct mdt_container *c, bool mapped, rd *window)
{
    const uint8_t *d = c->data;
    if (c->size >= 2 && d[0] == 'M' && d[1] == 'Z') {
        c->kind = mapped ? MDT_KIND_PE_MAPPED : MDT_KIND_PE;
        return mdt__pe_parse(c, window);
    }
    if (mapped)
        return fail_at(c, MDT_ENOTDOTNET, "%s", "mapped image does not start with MZ");
    if (c->size >= 4 && memcmp(d, "\0asm", 4) == 0) {
        c->kind = MDT_KIND_WASM;
        return mdt__webcil_parse(c, window);
    }
    if (c->size >= 4 && memcmp(d, "WbIL", 4) == 0) {
        c->kind = MDT_KIND_WEBCIL;
        return mdt__webcil_parse(c, window);
    }
    if (c->size >= 4 && memcmp(d, "BSJB", 4) == 0) {
        c->kind = MDT_KIND_METADATA;
        if (c->size > UINT32_MAX)
            return fail_at(c, MDT_EUNSUPPORTED, "%s", "metadata blob larger than 4 GiB");
        *window = rd_make(c->name, "metadata root", d, c->size, 0);
        return 0;
    }
    if (c->size < 4)
        return fail_at(c, MDT_ETRUNC, "%s", "file too short to identify (under 4 bytes)");
    return fail_at(c, MDT_ENOTDOTNET, "%s", not_an_image);
}

int mdt__container_find(struct mdt_container *c, bool mapped, rd *window, size_t *slack)
{
    int e = parse(c, mapped, window);
    if (e)
        return e;
    /* The window is readable (in the buffer, or in one run of a loader
     * layout): what follows it is, up to the buffer's or the run's end. */
    uint64_t end = (uint64_t)(window->base + window->len - c->data), left;
    if (c->kind != MDT_KIND_PE_MAPPED) {
        left = c->size - end;
    } else {
        const struct mdt_rva_run *run = mdt__run_of(c, end, 0);
        left = run ? run->hi - end : 0;
    }
    *slack = left < MAX_SLACK ? (size_t)left : MAX_SLACK;
    return mdt__container_need(c, end, *slack);
}

const char *mdt_image_kind_name(int kind)
{
    switch (kind) {
    case MDT_KIND_PE: return "PE";
    case MDT_KIND_PE_MAPPED: return "PE (mapped)";
    case MDT_KIND_WEBCIL: return "Webcil";
    case MDT_KIND_WASM: return "Webcil in WebAssembly";
    case MDT_KIND_METADATA: return "metadata";
    default: return "unknown";
    }
}
