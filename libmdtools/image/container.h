/* The container layer: what an input's bytes are and where its metadata
 * lies. A PE file (flat layout), a PE mapped by a loader (RVA = offset
 * from the base, readable in one range or in the ranges the caller
 * declares), a Webcil payload bare or in its WebAssembly wrapper, or a raw
 * metadata blob: image/ reads their headers, sections, debug directory and
 * CLI header, and finds the metadata window (ECMA-335 II.24.2.1's root).
 * It knows nothing of what the window holds: md/ parses it, and open/
 * joins the two into an image. */
#ifndef MDT_IMAGE_CONTAINER_H
#define MDT_IMAGE_CONTAINER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include <mdtools/image.h>

#include "util/reader.h"
#include "util/warnings.h"

#define MDT_MAX_SECTIONS 96 /* the PE loader's limit */
#define MDT_MAX_DEBUG 16

/* RVAs [lo, hi) of a loader layout that the caller declared readable. */
struct mdt_rva_run {
    uint64_t lo, hi;
};

struct mdt_container {
    const char *name;    /* for messages (borrowed from the image) */
    void *mem;           /* talloc parent of what the container allocates */
    mdt_warnings *warn;  /* where odd but readable things are reported */
    int kind;            /* MDT_KIND_... */
    const uint8_t *data; /* whole buffer */
    size_t size;
    void *map; /* mmap'ed region (MDT_OPEN_MAP), or NULL */
    size_t map_len;
    void *copy; /* malloc'ed copy of a file's bytes, or NULL */
    /* MDT_OPEN_LAZY: the file read on demand into data (ondemand.c), or
     * NULL. Every read of data outside what open read goes through
     * mdt__container_need first. */
    struct mdt_ondemand *od;
    /* MDT_KIND_PE_MAPPED: what may be read, as RVAs (ranges.c): sorted,
     * disjoint and never adjacent, so that bytes contiguous in memory are
     * in one run; size is the length of the run at RVA 0. */
    struct mdt_rva_run *runs;
    size_t nruns;

    /* PE / Webcil */
    mdt_pe_info pe;
    size_t nsections;
    mdt_section *sections;
    uint64_t webcil_base; /* file offset of a Webcil payload in its wrapper */
    mdt_debug_entry debug[MDT_MAX_DEBUG];
};

/* Where the bytes come from (container.c). A file is read into memory
 * (malloc: talloc refuses blocks of 256 MiB and more), mapped with `map`,
 * or, with `lazy`, a PE read on demand (ondemand.c); the image's destructor
 * calls mdt__container_release. */
int mdt__container_load_file(struct mdt_container *c, const char *path, bool map, bool lazy);
/* Read on demand (ondemand.c): c->data and c->size become a reservation as
 * large as the file, filled as mdt__container_need asks. Takes fd (closes
 * it on failure). */
int mdt__ondemand_load(struct mdt_container *c, int fd, const struct stat *st);
/* Make c->data[off, off + len) (clipped to c->size) hold the file's bytes
 * before reading them: 0 at once unless the image reads on demand and some
 * of them are not read yet; MDT_EIO, located, when the file changed or
 * shrank since the open. Any thread; no lock once the bytes are read. */
int mdt__container_need(const struct mdt_container *c, uint64_t off, uint64_t len);
/* The open is done: an image read on demand that holds no descriptor slot
 * closes its descriptor (ondemand.c). */
void mdt__container_open_done(const struct mdt_container *c);
/* The same for the whole file. */
int mdt__container_need_all(const struct mdt_container *c);
/* How many bytes from the start are read (c->size unless on demand). */
size_t mdt__container_read_prefix(const struct mdt_container *c);
/* A loader layout given as readable ranges: c->data must be the base
 * (ranges.c). c->runs, c->nruns, c->size; MDT_EINVAL when the base is in
 * no range. */
int mdt__container_set_runs(struct mdt_container *c, const mdt_mem_range *ranges, size_t n);
/* MDT_OPEN_COPY of a loader layout: the declared runs copied to their RVAs
 * in one zeroed block, which becomes c->data (container.c). */
int mdt__container_copy_runs(struct mdt_container *c);
/* Unmap or free the container's own copy of the bytes. */
void mdt__container_release(struct mdt_container *c);

/* Tell the kind from the first bytes, read the container's headers and
 * find the metadata: *window, a reader named "metadata root" over it (at
 * most 4 GiB, file offsets or, in a loader layout, RVAs), and *slack, how
 * many bytes right after it may be read too (at most 16; md/ reads rows 4
 * bytes at a time). `mapped`: the bytes are a loader layout (only a PE can
 * be). Errors are located; warnings go to c->warn. */
int mdt__container_find(struct mdt_container *c, bool mapped, rd *window, size_t *slack);

/* What <mdtools/image.h>'s RVA functions do, on the container (pe.c). */
int mdt__container_rva(const struct mdt_container *c, uint32_t rva, uint32_t len,
                       const uint8_t **p);
int mdt__container_read_rva(const struct mdt_container *c, uint32_t rva, void *buf, uint32_t len);
int mdt__container_rva_to_offset(const struct mdt_container *c, uint32_t rva, uint64_t *offset);

/* Inside the layer. */
/* Reader over the whole buffer, region "file". */
rd mdt__file_reader(const struct mdt_container *c);
/* The headers of a PE (pe.c) or a Webcil payload (webcil.c), up to the
 * metadata window. */
int mdt__pe_parse(struct mdt_container *c, rd *window);
int mdt__webcil_parse(struct mdt_container *c, rd *window);
/* CLI header (II.25.3.3) at cli_rva; the metadata window it points at. */
int mdt__cli_parse(struct mdt_container *c, uint32_t cli_rva, uint32_t cli_size,
                   rd *window); /* pe.c */
/* Decode c->pe.debug_dir into c->debug; problems become warnings. */
void mdt__read_debug(struct mdt_container *c); /* pe.c */
/* The run of a mapped image holding [rva, rva + len), or NULL (ranges.c). */
const struct mdt_rva_run *mdt__run_of(const struct mdt_container *c, uint64_t rva, uint64_t len);
/* Map an RVA to a buffer pointer for `len` bytes (flat or mapped). */
int mdt__rva_ptr(const struct mdt_container *c, uint32_t rva, uint32_t len, const uint8_t **p,
                 uint64_t *file_off, const char *what);

#endif
