/* Private layout of an open image, shared by the image and md layers. */
#ifndef MDT_IMAGE_INT_H
#define MDT_IMAGE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mdtools/image.h>
#include <mdtools/tables.h>

#include "util/reader.h"

#define MDT_MAX_SECTIONS 96     /* the PE loader's limit */
#define MDT_MAX_STREAMS 64      /* more headers than this is nonsense */
#define MDT_MAX_DEBUG 16

/* What md/ keeps about one table beside its public layout (the rows, their
 * size and the columns, in img->lay.tables[]). */
struct mdt_table {
    uint32_t offset;         /* from the start of the tables stream */
    /* md/lazy.c: found out on first need, never at open, published with
     * atomic stores (see there). Whether the spec-sorted key column really
     * is sorted: 0 not known yet, 1 sorted, 2 not. */
    _Atomic uint8_t sort_state;
    /* For each LIST column (at most 2 per table: TypeDef, LocalScope), in
     * column order: NULL until the first owner query, then an index
     * position -> row owning it (md/runs.c). For a Ptr table, ptr_pos: row
     * of the target -> the first Ptr row naming it. */
    struct mdt_run_index *_Atomic runs[2];
    struct mdt_ptr_index *_Atomic ptr_pos;
};

struct mdt_heap_view {
    const uint8_t *base;
    uint32_t size;
    uint32_t offset;         /* from the metadata root */
    bool present;
    bool nul_terminated;     /* last byte is 0: strlen from any index stays inside */
    const char *name;        /* "#Strings", ... for messages */
};

/* RVAs [lo, hi) of a loader layout that the caller declared readable. */
struct mdt_rva_run {
    uint64_t lo, hi;
};

struct mdt_image {
    /* Must stay the first member: the inline readers of <mdtools/tables.h>
     * reach it by converting the image pointer (C11 6.7.2.1p15). Filled
     * by md/ at open, immutable afterwards. */
    mdt_image_layout lay;
    char *name;
    int kind;
    const uint8_t *data;     /* whole buffer */
    size_t size;
    void *map;               /* mmap'ed region (MDT_OPEN_MAP), or NULL */
    size_t map_len;
    void *copy;              /* malloc'ed copy of a file's bytes, or NULL */
    /* MDT_KIND_PE_MAPPED: what may be read, as RVAs (image/ranges.c):
     * sorted, disjoint and never adjacent, so that bytes contiguous in
     * memory are in one run; size is the length of the run at RVA 0. */
    struct mdt_rva_run *runs;
    size_t nruns;

    /* PE / Webcil */
    mdt_pe_info pe;
    size_t nsections;
    mdt_section *sections;
    uint64_t webcil_base;    /* file offset of a Webcil payload in its wrapper */
    mdt_debug_entry debug[MDT_MAX_DEBUG];

    /* metadata */
    const uint8_t *md;
    uint32_t md_size;
    mdt_md_info mdi;
    mdt_stream_info *streams;
    struct mdt_heap_view strings, us, blob, guid, tables_stream, pdb;
    uint32_t pdb_rows[MDT_TABLE_MAX]; /* type-system row counts from #Pdb */
    struct mdt_table tables[MDT_TABLE_MAX];
    uint8_t ci_wide[MDT_CI_COUNT];    /* coded index is 4 bytes wide */

    char **warnings;
    size_t nwarnings;
    /* Warnings of the checks open leaves to first need (md/lazy.c),
     * produced when the warnings are first asked for. */
    struct mdt_late_warnings *_Atomic late_warnings;
};

/* Record a warning (formatting under the image's talloc context). */
void mdt__warn(struct mdt_image *img, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Reader over the whole buffer, region "file". */
rd mdt__file_reader(const struct mdt_image *img);

/* Layers of open. */
int mdt__pe_parse(struct mdt_image *img);          /* image/pe.c */
int mdt__webcil_parse(struct mdt_image *img);      /* image/webcil.c */
/* CLI header (II.25.3.3) at cli_rva, then the metadata it points at. */
int mdt__cli_parse(struct mdt_image *img, uint32_t cli_rva, uint32_t cli_size); /* image/pe.c */
/* Decode img->pe.debug_dir into img->debug; problems become warnings. */
void mdt__read_debug(struct mdt_image *img);       /* image/pe.c */
int mdt__md_parse(struct mdt_image *img, const uint8_t *md, uint32_t size,
                  uint64_t file_off);               /* md/root.c */
int mdt__tables_parse(struct mdt_image *img);      /* md/tables.c */

/* image/ranges.c: the readable runs of a mapped image from the caller's
 * ranges (img->data must be the base); img->runs, img->nruns, img->size.
 * MDT_EINVAL when the base is in no range. */
int mdt__set_runs(struct mdt_image *img, const mdt_mem_range *ranges, size_t n);
/* The run of a mapped image holding [rva, rva + len), or NULL. */
const struct mdt_rva_run *mdt__run_of(const struct mdt_image *img, uint64_t rva, uint64_t len);
/* Whether the n bytes at p are in the image's buffer (any kind) and, for a
 * mapped image, in one readable run: the test for reads past a window. */
bool mdt__readable(const struct mdt_image *img, const uint8_t *p, size_t n);

/* Map an RVA to a file-buffer pointer for `len` bytes (flat or mapped). */
int mdt__rva_ptr(const struct mdt_image *img, uint32_t rva, uint32_t len, const uint8_t **p,
                 uint64_t *file_off, const char *what);

#endif
