/* Opening images: files (read into memory, or mapped on request), caller
 * buffers, loader-mapped images (one readable range, or the ranges the
 * caller declares: image/ranges.c); kind detection; warnings; the
 * accessors of <mdtools/image.h> that need no parsing.
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
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <talloc.h>
#include <unistd.h>

#include "image/image_int.h"
#include "md/md_int.h"

const char *mdt__image_name(const struct mdt_image *img)
{
    return img && img->name ? img->name : NULL;
}

rd mdt__file_reader(const struct mdt_image *img)
{
    return rd_make(img, "file", img->data, img->size, 0);
}

void mdt__warn(struct mdt_image *img, const char *fmt, ...)
{
    va_list ap;
    char *w;
    char **nw;
    if (img->nwarnings >= 1000)  /* a hostile file must not grow this unboundedly */
        return;
    va_start(ap, fmt);
    w = talloc_vasprintf(img, fmt, ap);
    va_end(ap);
    if (!w)
        return;
    nw = talloc_realloc(img, img->warnings, char *, img->nwarnings + 1);
    if (!nw) {
        talloc_free(w);
        return;
    }
    img->warnings = nw;
    img->warnings[img->nwarnings++] = talloc_steal(nw, w);
}

static int destroy_image(struct mdt_image *img)
{
    if (img->map)
        munmap(img->map, img->map_len);
    free(img->copy);
    return 0;
}

static int fail_at(struct mdt_image *img, int code, const char *fmt, const char *arg)
{
    mdt_place pl = MDT_PLACE_NONE;
    pl.img = img;
    return mdt__fail(code, pl, fmt, arg);
}

/* Dispatch on the first bytes. */
static int parse(struct mdt_image *img, bool mapped)
{
    const uint8_t *d = img->data;
    if (img->size >= 2 && d[0] == 'M' && d[1] == 'Z') {
        img->kind = mapped ? MDT_KIND_PE_MAPPED : MDT_KIND_PE;
        return mdt__pe_parse(img);
    }
    if (mapped)
        return fail_at(img, MDT_ENOTDOTNET, "%s", "mapped image does not start with MZ");
    if (img->size >= 4 && memcmp(d, "\0asm", 4) == 0) {
        img->kind = MDT_KIND_WASM;
        return mdt__webcil_parse(img);
    }
    if (img->size >= 4 && memcmp(d, "WbIL", 4) == 0) {
        img->kind = MDT_KIND_WEBCIL;
        return mdt__webcil_parse(img);
    }
    if (img->size >= 4 && memcmp(d, "BSJB", 4) == 0) {
        img->kind = MDT_KIND_METADATA;
        if (img->size > UINT32_MAX)
            return fail_at(img, MDT_EUNSUPPORTED, "%s", "metadata blob larger than 4 GiB");
        return mdt__md_parse(img, d, (uint32_t)img->size, 0);
    }
    if (img->size < 4)
        return fail_at(img, MDT_ETRUNC, "%s", "file too short to identify (under 4 bytes)");
    return fail_at(img, MDT_ENOTDOTNET, "%s",
                   "not a PE (MZ), Webcil (WbIL, \\0asm) or metadata (BSJB) image");
}

static struct mdt_image *new_image(void *mem_ctx, const char *name)
{
    struct mdt_image *img = talloc_zero(mem_ctx, struct mdt_image);
    if (!img)
        return NULL;
    img->name = talloc_strdup(img, name ? name : "<buffer>");
    if (!img->name) {
        talloc_free(img);
        return NULL;
    }
    return img;
}

static int finish(struct mdt_image *img, bool mapped, mdt_image **out)
{
    int e = parse(img, mapped);
    if (e) {
        talloc_free(img);
        return e;
    }
    *out = img;
    return 0;
}

/* Read the n bytes of fd into img->copy; n is the size fstat saw. A file
 * that shrinks meanwhile gives what was there (img->size says how much). */
static int read_copy(struct mdt_image *img, int fd, size_t n)
{
    uint8_t *buf = malloc(n);
    size_t got = 0;
    if (!buf)
        return fail_at(img, MDT_ENOMEM, "%s", "out of memory reading the file");
    img->copy = buf;
    talloc_set_destructor(img, destroy_image);
    while (got < n) {
        ssize_t r = pread(fd, buf + got, n - got, (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return fail_at(img, MDT_EIO, "cannot read: %s", strerror(errno));
        if (r == 0)
            break;
        got += (size_t)r;
    }
    img->data = buf;
    img->size = got;
    return 0;
}

static int map_file(struct mdt_image *img, int fd, size_t n)
{
    img->map = mmap(NULL, n, PROT_READ, MAP_PRIVATE, fd, 0);
    if (img->map == MAP_FAILED) {
        img->map = NULL;
        return fail_at(img, MDT_EIO, "cannot map: %s", strerror(errno));
    }
    img->map_len = n;
    talloc_set_destructor(img, destroy_image);
    img->data = img->map;
    img->size = img->map_len;
    return 0;
}

int mdt_image_open_file(void *mem_ctx, mdt_image **out, const char *path, unsigned flags)
{
    struct mdt_image *img;
    struct stat st;
    int fd, e;
    if (!out || !path)
        return mdt__fail_simple(MDT_EINVAL, "mdt_image_open_file: NULL argument");
    *out = NULL;
    if ((flags & ~(unsigned)(MDT_OPEN_COPY | MDT_OPEN_MAP)) ||
        (flags & (MDT_OPEN_COPY | MDT_OPEN_MAP)) == (MDT_OPEN_COPY | MDT_OPEN_MAP))
        return mdt__fail_simple(MDT_EINVAL, "mdt_image_open_file: flags 0x%x: unknown, or "
                                            "MDT_OPEN_COPY with MDT_OPEN_MAP", flags);
    img = new_image(mem_ctx, path);
    if (!img)
        return mdt__fail_simple(MDT_ENOMEM, "out of memory opening %s", path);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        e = fail_at(img, MDT_EIO, "cannot open: %s", strerror(errno));
        talloc_free(img);
        return e;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        e = fail_at(img, MDT_EIO, "%s", "not a regular file");
        close(fd);
        talloc_free(img);
        return e;
    }
    if ((uintmax_t)st.st_size > SIZE_MAX / 2) {
        e = fail_at(img, MDT_EUNSUPPORTED, "%s", "file too large for this address space");
        close(fd);
        talloc_free(img);
        return e;
    }
    if (st.st_size == 0) {
        img->data = (const uint8_t *)"";
        img->size = 0;
        e = 0;
    } else if (flags & MDT_OPEN_MAP) {
        e = map_file(img, fd, (size_t)st.st_size);
    } else {
        e = read_copy(img, fd, (size_t)st.st_size);
    }
    close(fd);
    if (e) {
        talloc_free(img);
        return e;
    }
    return finish(img, false, out);
}

static int open_bytes(void *mem_ctx, mdt_image **out, const char *name, const void *data,
                      size_t len, unsigned flags, bool mapped)
{
    struct mdt_image *img;
    if (!out || (!data && len))
        return mdt__fail_simple(MDT_EINVAL, "mdt_image_open: NULL argument");
    if (flags & ~(unsigned)MDT_OPEN_COPY) {
        *out = NULL;
        return mdt__fail_simple(MDT_EINVAL, "mdt_image_open: flags 0x%x: only MDT_OPEN_COPY "
                                            "applies to bytes in memory", flags);
    }
    *out = NULL;
    img = new_image(mem_ctx, name);
    if (!img)
        return mdt__fail_simple(MDT_ENOMEM, "out of memory");
    if (flags & MDT_OPEN_COPY) {
        uint8_t *copy = talloc_memdup(img, data ? data : "", len ? len : 1);
        if (!copy) {
            talloc_free(img);
            return mdt__fail_simple(MDT_ENOMEM, "out of memory copying %zu bytes", len);
        }
        data = copy;
    }
    img->data = data ? data : (const uint8_t *)"";
    img->size = len;
    if (mapped && len) {
        mdt_mem_range all = {img->data, len};
        int e = mdt__set_runs(img, &all, 1);
        if (e) {
            talloc_free(img);
            return e;
        }
    }
    return finish(img, mapped, out);
}

int mdt_image_open_buffer(void *mem_ctx, mdt_image **out, const char *name, const void *data,
                          size_t len, unsigned flags)
{
    return open_bytes(mem_ctx, out, name, data, len, flags, false);
}

int mdt_image_open_mapped(void *mem_ctx, mdt_image **out, const char *name, const void *base,
                          size_t size, unsigned flags)
{
    return open_bytes(mem_ctx, out, name, base, size, flags, true);
}

/* MDT_OPEN_COPY of a loader layout: the declared runs copied to their RVAs
 * in one zeroed block (malloc'ed: it may exceed talloc's limit); the runs
 * still say what may be read, so the gaps' zeros are never read. */
static int copy_runs(struct mdt_image *img)
{
    uint64_t end = img->runs[img->nruns - 1].hi;
    uint8_t *buf = end <= SIZE_MAX / 2 ? calloc(1, (size_t)end) : NULL;
    if (!buf)
        return fail_at(img, MDT_ENOMEM, "%s", "out of memory copying the mapped image");
    for (size_t i = 0; i < img->nruns; i++)
        memcpy(buf + img->runs[i].lo, img->data + img->runs[i].lo,
               (size_t)(img->runs[i].hi - img->runs[i].lo));
    img->copy = buf;
    talloc_set_destructor(img, destroy_image);
    img->data = buf;
    return 0;
}

int mdt_image_open_mapped_ranges(void *mem_ctx, mdt_image **out, const char *name,
                                 const void *base, const mdt_mem_range *ranges, size_t nranges,
                                 unsigned flags)
{
    struct mdt_image *img;
    int e;
    if (out)
        *out = NULL;
    if (!out || !base || (!ranges && nranges))
        return mdt__fail_simple(MDT_EINVAL, "mdt_image_open_mapped_ranges: NULL argument");
    if (flags & ~(unsigned)MDT_OPEN_COPY)
        return mdt__fail_simple(MDT_EINVAL, "mdt_image_open_mapped_ranges: flags 0x%x: only "
                                            "MDT_OPEN_COPY applies to bytes in memory", flags);
    img = new_image(mem_ctx, name);
    if (!img)
        return mdt__fail_simple(MDT_ENOMEM, "out of memory");
    img->data = base;
    if ((e = mdt__set_runs(img, ranges, nranges)) ||
        ((flags & MDT_OPEN_COPY) && (e = copy_runs(img)))) {
        talloc_free(img);
        return e;
    }
    return finish(img, true, out);
}

void mdt_image_close(mdt_image *img)
{
    talloc_free(img);
}

int mdt_image_kind(const mdt_image *img)
{
    return img->kind;
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

const char *mdt_image_name(const mdt_image *img)
{
    return img->name;
}

const uint8_t *mdt_image_bytes(size_t *len, const mdt_image *img)
{
    if (len)
        *len = img->size;
    return img->data;
}

/* Open's own warnings, then those of the checks md/ leaves to first need
 * (md/lazy.c), made when the warnings are first asked for. */
size_t mdt_image_warning_count(const mdt_image *img)
{
    return img->nwarnings + mdt__late_warning_count(img);
}

const char *mdt_image_warning(const mdt_image *img, size_t i)
{
    return i < img->nwarnings ? img->warnings[i] : mdt__late_warning(img, i - img->nwarnings);
}

const mdt_pe_info *mdt_image_pe_info(const mdt_image *img)
{
    return &img->pe;
}

size_t mdt_image_section_count(const mdt_image *img)
{
    return img->nsections;
}

const mdt_section *mdt_image_section(const mdt_image *img, size_t i)
{
    return i < img->nsections ? &img->sections[i] : NULL;
}

const mdt_debug_entry *mdt_image_debug_entry(const mdt_image *img, size_t i)
{
    return i < img->pe.ndebug ? &img->debug[i] : NULL;
}

const mdt_md_info *mdt_image_md_info(const mdt_image *img)
{
    return &img->mdi;
}

const mdt_stream_info *mdt_image_stream(const mdt_image *img, size_t i)
{
    return i < img->mdi.nstreams ? &img->streams[i] : NULL;
}
