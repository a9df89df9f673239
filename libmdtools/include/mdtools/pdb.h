/* mdtools: portable PDB debugging metadata, the source lines of a method's
 * IL (Portable PDB v1.0 specification: the #Pdb stream, the Document table
 * 0x30 and its name blob, the MethodDebugInformation table 0x31 and its
 * sequence points blob).
 *
 * A portable PDB is a raw metadata blob ("BSJB") with a #Pdb stream. It is
 * found either inside the assembly (a debug directory entry of type 17,
 * "Embedded Portable PDB": "MPDB", the uncompressed size, then a deflate
 * stream, inflated with zlib) or beside it as a file (named by the CodeView
 * entry's path, or the assembly's name with the extension .pdb). A file
 * found beside the assembly is used only when its PDB id matches the
 * assembly's CodeView entry (GUID and time stamp), so a stale PDB never
 * gives wrong lines. Windows ("MSF") PDBs are not read (MDT_EUNSUPPORTED).
 *
 * Every byte of a PDB is untrusted: sequence points are decoded through a
 * bounded reader and checked against the spec's constraints; a damaged
 * blob fails for its method alone, with a located error.
 *
 * Ownership: an mdt_pdb is a talloc child of the mem_ctx given at open and
 * owns its metadata image (and the inflated bytes of an embedded PDB). It
 * does not need the assembly's image after open. Pointers it returns are
 * borrowed and live as long as the mdt_pdb.
 *
 * Thread safety: an open mdt_pdb is immutable; every function that takes a
 * const mdt_pdb may run on any number of threads at once. */
#ifndef MDTOOLS_PDB_H
#define MDTOOLS_PDB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mdt_image mdt_image;
typedef struct mdt_pdb mdt_pdb;

/* Where a PDB came from. */
enum mdt_pdb_source {
    MDT_PDB_EMBEDDED = 1, /* inflated from the assembly's debug directory */
    MDT_PDB_FILE          /* a file (beside the assembly, or named by the caller) */
};

/* The start and end line of a hidden sequence point. */
#define MDT_PDB_HIDDEN_LINE 0xFEEFEEu

/* Embedded PDBs larger than this (uncompressed) are refused (MDT_EUNSUPPORTED). */
#define MDT_PDB_MAX_EMBEDDED (256u << 20)

/* The PDB of an assembly: the embedded one if there is one, else a file
 * beside `img_path` (the path the assembly was opened from; NULL: the
 * image's name, mdt_image_name): first the file name of the CodeView
 * entry's path in the assembly's folder, then the assembly's path with its
 * extension replaced by `.pdb`. `flags` must be 0.
 * Errors: MDT_ENOTFOUND (no PDB, or only ones whose id does not match: the
 * message says which), MDT_EBADIMAGE / MDT_ETRUNC (the embedded data or
 * the PDB's metadata is damaged), MDT_EUNSUPPORTED (a Windows PDB, or an
 * embedded PDB over MDT_PDB_MAX_EMBEDDED), MDT_EINVAL (no image or out,
 * flags not 0), MDT_ENOTDOTNET (a file beside it that is no metadata),
 * MDT_ENOMEM, MDT_EIO. */
int mdt_pdb_open(void *mem_ctx, mdt_pdb **out, const mdt_image *img, const char *img_path,
                 unsigned flags);

/* Open a PDB file by path. When `img` is not NULL, the PDB id must match
 * its CodeView entry (MDT_ENOTFOUND otherwise). Errors: MDT_ENOTFOUND (no
 * such file, or an id that does not match), MDT_EUNSUPPORTED (a Windows
 * PDB), MDT_EIO (not a regular file: a FIFO or device is not opened), and
 * those of opening the file as an image (mdt_image_open_file):
 * MDT_EINVAL, MDT_EIO, MDT_ENOTDOTNET, MDT_EBADIMAGE, MDT_ETRUNC,
 * MDT_ENOMEM. */
int mdt_pdb_open_file(void *mem_ctx, mdt_pdb **out, const char *path, const mdt_image *img);

/* The PDB's metadata (tables 0x30-0x37, heaps), borrowed. */
const mdt_image *mdt_pdb_image(const mdt_pdb *pdb);
/* enum mdt_pdb_source. */
int mdt_pdb_source(const mdt_pdb *pdb);
/* The file it was read from, or `NAME!embedded` for an embedded PDB
 * (NAME: the assembly's name). Borrowed. */
const char *mdt_pdb_path(const mdt_pdb *pdb);

/* One sequence point (Portable PDB, "Sequence Points Blob"). Columns are
 * 1-based as stored; a hidden point has start_line = end_line =
 * MDT_PDB_HIDDEN_LINE and columns 0. */
typedef struct mdt_seqpoint {
    uint32_t il_offset;
    uint32_t document; /* Document row (1-based) */
    uint32_t start_line, end_line;
    uint16_t start_column, end_column;
    bool hidden;
} mdt_seqpoint;

/* An iterator over the sequence points of one method, in blob order (IL
 * offsets ascending). A value that allocates nothing; valid while the PDB
 * is open. Its fields are private. */
typedef struct mdt_seqpoint_iter {
    const mdt_pdb *pdb;
    const uint8_t *blob;
    uint32_t len, pos;
    uint32_t method;     /* MethodDef (and MethodDebugInformation) row */
    uint32_t blob_index; /* #Blob index of the blob, for messages */
    uint32_t document;
    uint32_t il_offset;
    uint32_t line, column; /* start of the previous non-hidden point */
    uint32_t count;        /* sequence points read */
    bool seen_nonhidden;
    bool done;
} mdt_seqpoint_iter;

/* Start iterating the points of MethodDef `methoddef` (a token 0x06xxxxxx
 * or a bare row number). A method without sequence points gives an
 * iterator that ends at once. Errors: MDT_ENOTFOUND (no such row in the
 * MethodDebugInformation table), MDT_EINVAL (a token of another table),
 * the located error of an unreadable row or header (LocalSignature,
 * InitialDocument): MDT_ETRUNC, MDT_EBADIMAGE, MDT_ENOHEAP. */
int mdt_seqpoints_init(mdt_seqpoint_iter *it, const mdt_pdb *pdb, uint32_t methoddef);

/* The next point. MDT_ITEROVER at the end; MDT_EBADIMAGE / MDT_ETRUNC for a
 * record that breaks the spec (an IL offset that does not increase, a line
 * or column out of range, a document row that does not exist, a record cut
 * short), with the method's row and the offset in the blob. The iterator
 * ends after an error. */
int mdt_seqpoints_next(mdt_seqpoint *sp, mdt_seqpoint_iter *it);

/* The point that covers `il_offset` in a method: the last one whose IL
 * offset is <= il_offset (possibly hidden: check sp->hidden). Errors:
 * MDT_ENOTFOUND (the method has no points, or its first one starts after
 * il_offset), and those of the iterator: MDT_EINVAL, MDT_ETRUNC,
 * MDT_EBADIMAGE, MDT_ENOHEAP. */
int mdt_pdb_lookup(mdt_seqpoint *sp, const mdt_pdb *pdb, uint32_t methoddef, uint32_t il_offset);

/* The method's first non-hidden point (where its source starts). Errors:
 * MDT_ENOTFOUND when it has none, and those of the iterator: MDT_EINVAL,
 * MDT_ETRUNC, MDT_EBADIMAGE, MDT_ENOHEAP. */
int mdt_pdb_method_start(mdt_seqpoint *sp, const mdt_pdb *pdb, uint32_t methoddef);

/* Number of Document rows. */
uint32_t mdt_pdb_document_count(const mdt_pdb *pdb);

/* The name of Document row `document` (1-based): its parts joined by its
 * separator, as the compiler wrote it (usually a full path). Into buf
 * (`size` bytes, NUL-terminated, *len the full length; MDT_ETRUNC when the
 * name needs `size` bytes or more) or allocated under mem_ctx.
 * Errors: MDT_ENOTFOUND (no such row), MDT_EBADIMAGE / MDT_ETRUNC (a
 * damaged name blob), MDT_ENOHEAP (no #Blob stream), MDT_ENOMEM. */
int mdt_pdb_document_name_buf(char *buf, size_t size, size_t *len, const mdt_pdb *pdb,
                              uint32_t document);
int mdt_pdb_document_name(void *mem_ctx, char **out, const mdt_pdb *pdb, uint32_t document);

#ifdef __cplusplus
}
#endif
#endif
