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
 * costs). The copy is malloc'ed, not talloc'ed: talloc refuses blocks of
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

/* Bytes after the metadata window worth knowing about (container.h). */
#define MAX_SLACK 16

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

/* Read the n bytes of fd into c->copy; n is the size fstat saw. A file
 * that shrinks meanwhile gives what was there (c->size says how much). */
static int read_copy(struct mdt_container *c, int fd, size_t n)
{
    uint8_t *buf = malloc(n);
    size_t got = 0;
    if (!buf)
        return fail_at(c, MDT_ENOMEM, "%s", "out of memory reading the file");
    c->copy = buf;
    while (got < n) {
        ssize_t r = pread(fd, buf + got, n - got, (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return fail_at(c, MDT_EIO, "cannot read: %s", strerror(errno));
        if (r == 0)
            break;
        got += (size_t)r;
    }
    c->data = buf;
    c->size = got;
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

int mdt__container_load_file(struct mdt_container *c, const char *path, bool map)
{
    struct stat st;
    int fd, e;
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return fail_at(c, MDT_EIO, "cannot open: %s", strerror(errno));
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        e = fail_at(c, MDT_EIO, "%s", "not a regular file");
        close(fd);
        return e;
    }
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
    return fail_at(c, MDT_ENOTDOTNET, "%s",
                   "not a PE (MZ), Webcil (WbIL, \\0asm) or metadata (BSJB) image");
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
    return 0;
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
