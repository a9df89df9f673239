/* Opening images: the layer that joins a container and its metadata. The
 * container layer (image/) tells what the bytes are and finds the metadata
 * window in them (ECMA-335 II.25 for PE, II.24.2.1 for a raw root); the
 * metadata layer (md/) parses that window into streams, heaps and tables.
 * Neither knows the other: this file gives each its part of the image,
 * runs them in turn, and answers the calls of <mdtools/image.h> that ask
 * about the container (kind, bytes, PE headers, sections, RVAs) or about
 * the image as a whole (name, warnings). */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <talloc.h>

#include "image/container.h"
#include "md/md_int.h"
#include "open/open_int.h"
#include "util/warnings.h"

/* An open image. Immutable after open, like its parts. */
struct mdt_image {
    /* Must stay the first member: the inline readers of <mdtools/tables.h>
     * and md/ reach it by converting the image pointer (mdt__md()). */
    struct mdt_md md;
    struct mdt_container c;
    char *name;
    /* Open's warnings: the container's, then the metadata's, in the order
     * found. md/ adds those of the checks it leaves to first need. */
    mdt_warnings warn;
};

_Static_assert(offsetof(struct mdt_image, md) == 0, "the metadata must open struct mdt_image");

static int destroy_image(struct mdt_image *img)
{
    mdt__container_release(&img->c);
    return 0;
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
    img->warn.mem = img;
    img->c.name = img->name;
    img->c.mem = img;
    img->c.warn = &img->warn;
    talloc_set_destructor(img, destroy_image);
    return img;
}

/* Find the window, parse it; the image is freed on failure. */
static int finish(struct mdt_image *img, bool mapped, mdt_image **out)
{
    rd window;
    size_t slack;
    int e = mdt__container_find(&img->c, mapped, &window, &slack);
    if (!e)
        e = mdt__md_parse(&img->md, img, &img->warn, &window, slack);
    if (e) {
        talloc_free(img);
        return e;
    }
    mdt__container_open_done(&img->c);
    *out = img;
    return 0;
}

int mdt_image_open_file(void *mem_ctx, mdt_image **out, const char *path, unsigned flags)
{
    struct mdt_image *img;
    int e;
    if (!out || !path)
        return mdt__fail_simple(MDT_EINVAL, "mdt_image_open_file: NULL argument");
    *out = NULL;
    if ((flags & ~(unsigned)(MDT_OPEN_COPY | MDT_OPEN_MAP | MDT_OPEN_LAZY)) ||
        ((flags & MDT_OPEN_MAP) && (flags & (MDT_OPEN_COPY | MDT_OPEN_LAZY))))
        return mdt__fail_simple(MDT_EINVAL,
                                "mdt_image_open_file: flags 0x%x: unknown, or "
                                "MDT_OPEN_MAP with MDT_OPEN_COPY or MDT_OPEN_LAZY",
                                flags);
    img = new_image(mem_ctx, path);
    if (!img)
        return mdt__fail_simple(MDT_ENOMEM, "out of memory opening %s", path);
    if ((e = mdt__container_load_file(&img->c, path, flags & MDT_OPEN_MAP,
                                      flags & MDT_OPEN_LAZY))) {
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
        return mdt__fail_simple(MDT_EINVAL,
                                "mdt_image_open: flags 0x%x: only MDT_OPEN_COPY "
                                "applies to bytes in memory",
                                flags);
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
    img->c.data = data ? data : (const uint8_t *)"";
    img->c.size = len;
    if (mapped && len) {
        mdt_mem_range all = {img->c.data, len};
        int e = mdt__container_set_runs(&img->c, &all, 1);
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

int mdt_image_open_mapped_ranges(void *mem_ctx, mdt_image **out, const char *name, const void *base,
                                 const mdt_mem_range *ranges, size_t nranges, unsigned flags)
{
    struct mdt_image *img;
    int e;
    if (out)
        *out = NULL;
    if (!out || !base || (!ranges && nranges))
        return mdt__fail_simple(MDT_EINVAL, "mdt_image_open_mapped_ranges: NULL argument");
    if (flags & ~(unsigned)MDT_OPEN_COPY)
        return mdt__fail_simple(MDT_EINVAL,
                                "mdt_image_open_mapped_ranges: flags 0x%x: only "
                                "MDT_OPEN_COPY applies to bytes in memory",
                                flags);
    img = new_image(mem_ctx, name);
    if (!img)
        return mdt__fail_simple(MDT_ENOMEM, "out of memory");
    img->c.data = base;
    if ((e = mdt__container_set_runs(&img->c, ranges, nranges)) ||
        ((flags & MDT_OPEN_COPY) && (e = mdt__container_copy_runs(&img->c)))) {
        talloc_free(img);
        return e;
    }
    return finish(img, true, out);
}

void mdt_image_close(mdt_image *img)
{
    talloc_free(img);
}

const char *mdt_image_name(const mdt_image *img)
{
    return img->name;
}

/* Open's own warnings, then those of the checks md/ leaves to first need
 * (md/lazy.c), made when the warnings are first asked for. */
size_t mdt_image_warning_count(const mdt_image *img)
{
    return img->warn.n + mdt__late_warning_count(&img->md);
}

const char *mdt_image_warning(const mdt_image *img, size_t i)
{
    return i < img->warn.n ? img->warn.msg[i] : mdt__late_warning(&img->md, i - img->warn.n);
}

/* The container's facts. */

int mdt_image_kind(const mdt_image *img)
{
    return img->c.kind;
}

/* An image read on demand reads the rest of its file here; if that fails
 * (the file changed since the open), only the part read from the start is
 * given, so no byte the file did not hold at open is ever offered. */
const uint8_t *mdt_image_bytes(size_t *len, const mdt_image *img)
{
    if (len) {
        if (mdt__container_need_all(&img->c)) {
            mdt__err_forget_one(); /* it records one failure */
            *len = mdt__container_read_prefix(&img->c);
        } else {
            *len = img->c.size;
        }
    }
    return img->c.data;
}

int mdt__image_all_bytes(const uint8_t **p, size_t *len, const mdt_image *img)
{
    int e = mdt__container_need_all(&img->c);
    if (e)
        return e;
    *p = img->c.data;
    *len = img->c.size;
    return 0;
}

const uint8_t *mdt__image_buffer(size_t *len, const mdt_image *img)
{
    *len = img->c.size;
    return img->c.data;
}

int mdt__image_need(const mdt_image *img, uint64_t off, uint64_t len)
{
    return mdt__container_need(&img->c, off, len);
}

const mdt_pe_info *mdt_image_pe_info(const mdt_image *img)
{
    return &img->c.pe;
}

size_t mdt_image_section_count(const mdt_image *img)
{
    return img->c.nsections;
}

const mdt_section *mdt_image_section(const mdt_image *img, size_t i)
{
    return i < img->c.nsections ? &img->c.sections[i] : NULL;
}

const mdt_debug_entry *mdt_image_debug_entry(const mdt_image *img, size_t i)
{
    return i < img->c.pe.ndebug ? &img->c.debug[i] : NULL;
}

int mdt_image_rva(const uint8_t **p, const mdt_image *img, uint32_t rva, uint32_t len)
{
    return mdt__container_rva(&img->c, rva, len, p);
}

int mdt_image_read_rva(void *buf, uint32_t len, const mdt_image *img, uint32_t rva)
{
    return mdt__container_read_rva(&img->c, rva, buf, len);
}

int mdt_image_rva_to_offset(uint64_t *offset, const mdt_image *img, uint32_t rva)
{
    return mdt__container_rva_to_offset(&img->c, rva, offset);
}
