/* mdtools: opening images and what their headers say.
 *
 * An image is a PE file (flat file layout), a PE already mapped by a loader
 * (RVA = offset from the base), Webcil (bare payload or the WebAssembly
 * wrapper), or a raw metadata blob starting with "BSJB". Opening validates
 * the structure once (ECMA-335 II.25 and II.24); afterwards the image is
 * immutable and any thread may read it without locks.
 *
 * Ownership: the image is a talloc child of mem_ctx; freeing it frees its
 * copy of the file (or unmaps it). Pointers returned into the image are
 * borrowed and live as long as the image. An image opened on a caller's
 * buffer borrows it: the buffer must outlive the image.
 *
 * Files are read into memory by default, never left mapped: if another
 * process truncates a mapped file, the next read of a page past the new end
 * raises SIGBUS, which kills the process unless it handles that signal, and
 * a library inside someone else's process (a profiler) must never let
 * input do that. Reading costs a private copy of every byte (memory, and
 * the time of the copy: bench/README.md has the figure for the Mono
 * framework). MDT_OPEN_MAP maps instead (MAP_PRIVATE, read-only): pages
 * are shared with the page cache and only those read are loaded, at the
 * risk above. Use it only for files nothing will truncate while the image
 * is open (your own build output, a read-only file system), in a process
 * of your own.
 *
 * MDT_OPEN_LAZY reads only what is needed, without mapping: the headers
 * and the metadata at open, every other byte of the file (IL bodies,
 * resources, the strong-name signature, ReadyToRun code and tables, debug
 * data) the first time a call needs it, in 64 KiB chunks, with pread.
 * Naming tokens or reading tables never reads a method body. A file that
 * changes (size or modification time) or shrinks after the open makes the
 * read that meets it fail with MDT_EIO, naming the path and the file
 * offset: never SIGBUS, never bytes of another version of the file. The
 * first 64 such images of the process keep the file's descriptor open
 * until every chunk is read or the image is freed; the others reopen the
 * path for each read, which must still name the same file (device and
 * inode), else MDT_EIO. Reads of bytes already read take no lock, the
 * first read of a chunk takes the image's mutex. */
#ifndef MDTOOLS_IMAGE_H
#define MDTOOLS_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mdt_image mdt_image;

enum mdt_image_kind {
    MDT_KIND_PE = 1,    /* PE file, flat file layout */
    MDT_KIND_PE_MAPPED, /* PE laid out by a loader */
    MDT_KIND_WEBCIL,    /* bare Webcil payload ("WbIL") */
    MDT_KIND_WASM,      /* Webcil inside a WebAssembly module */
    MDT_KIND_METADATA   /* raw metadata blob ("BSJB"), e.g. a portable PDB */
};

enum mdt_open_flags {
    /* The image holds its own copy of the bytes. Buffer and mapped opens:
     * copy instead of borrowing. Files: read into memory, which is also
     * what 0 does (the flag only states it; with MDT_OPEN_MAP it is
     * MDT_EINVAL). */
    MDT_OPEN_COPY = 1u << 0,
    /* Files only: map the file instead of reading it. A truncation of the
     * file by anyone while the image is open makes reads raise SIGBUS (see
     * above). MDT_EINVAL for buffer and mapped opens. */
    MDT_OPEN_MAP = 1u << 1,
    /* Files only: read a PE's bytes on demand (see above), not all at
     * open. A file of 256 KiB or less, and any kind but a PE, is read whole
     * at open as without the flag. Calls that read bytes outside the
     * metadata (mdt_image_rva, mdt_image_read_rva, and those built on them:
     * IL bodies, resources, strong names, ReadyToRun, embedded PDBs, the
     * PE checksum) may then also fail with MDT_EIO when the file changed
     * since the open. With MDT_OPEN_MAP it is MDT_EINVAL; with
     * MDT_OPEN_COPY, as without it. */
    MDT_OPEN_LAZY = 1u << 2
};

/* Open a file: read into memory (or mapped, with MDT_OPEN_MAP; or read as
 * needed, with MDT_OPEN_LAZY); its kind is detected from the first bytes (MZ, "\0asm", "WbIL",
 * "BSJB"). A file that shrinks while it is read is opened as the bytes that were there. Only a
 * regular file is opened: a FIFO, device or directory is refused before open(2) can block or act on
 * it. A file over 64 KiB that is no image (none of those first bytes; a PE without a PE signature
 * or a CLI data directory) is refused after reading its headers only. Errors: MDT_EINVAL (NULL
 * argument, unknown flags, MDT_OPEN_MAP with MDT_OPEN_COPY or MDT_OPEN_LAZY), MDT_EIO (open, read
 * or map failed, not a regular file; MDT_OPEN_LAZY: the file changed during the open), MDT_ENOMEM,
 * and those of reading the image: MDT_ENOTDOTNET (no .NET image: no CLI header, an unknown first
 * word), MDT_EBADIMAGE, MDT_ETRUNC (a structure cut short), MDT_ENOTFOUND (the CLI header or the
 * metadata at an RVA in no section), MDT_EUNSUPPORTED (well-formed but outside what mdtools reads:
 * a file larger than the address space, a Webcil or WebAssembly version it does not know). */
int mdt_image_open_file(void *mem_ctx, mdt_image **out, const char *path, unsigned flags);
/* Open bytes holding a file layout (any kind, detected). `name` appears in
 * error messages (may be NULL). Flags: 0 (borrow) or MDT_OPEN_COPY; any
 * other bit is MDT_EINVAL. Errors: MDT_EINVAL (NULL out or data, other
 * flags), MDT_ENOMEM, and those of reading the image as for
 * mdt_image_open_file: MDT_ENOTDOTNET, MDT_EBADIMAGE, MDT_ETRUNC,
 * MDT_ENOTFOUND, MDT_EUNSUPPORTED. */
int mdt_image_open_buffer(void *mem_ctx, mdt_image **out, const char *name, const void *data,
                          size_t len, unsigned flags);
/* Open a PE image already mapped by a loader: `base` is the module's load
 * address, `size` the number of readable bytes from it: all of [base,
 * base + size) must be readable. Reads as mdt_image_open_mapped_ranges
 * with the one range {base, size} does (size 0 fails as "not MZ" here, as
 * MDT_EINVAL there). Errors: MDT_EINVAL (NULL out or base, other flags),
 * MDT_ENOMEM, MDT_ENOTDOTNET, MDT_EBADIMAGE, MDT_ETRUNC, MDT_ENOTFOUND,
 * MDT_EUNSUPPORTED, as for mdt_image_open_mapped_ranges. */
int mdt_image_open_mapped(void *mem_ctx, mdt_image **out, const char *name, const void *base,
                          size_t size, unsigned flags);

/* A range of memory the caller knows to be readable: [start, start + len). */
typedef struct mdt_mem_range {
    const void *start;
    size_t len;
} mdt_mem_range;

/* Open a PE image laid out by a loader whose readable memory is not one
 * contiguous range: CoreCLR on Linux maps a ReadyToRun image section by
 * section, each at its RVA and rounded to pages, and leaves the gaps
 * between them inaccessible (PROT_NONE); reading a gap faults.
 *
 * `base` is the module's load address (RVA 0). `ranges` are the `nranges`
 * ranges of memory the caller knows to be readable, e.g. the lines of
 * /proc/self/maps with an 'r' that cover the image. They are taken as
 * given, in any order, overlapping or adjacent; parts outside [base,
 * base + 8 GiB) are ignored (no read of the image can reach them: an RVA
 * and a length are 32 bits each), so the caller may pass more than the
 * image's own ranges. The library keeps its own sorted copy: the array may
 * be freed when the call returns.
 *
 * Every byte the library ever reads from the image (DOS and PE headers,
 * section table, CLI header, metadata and its streams, debug directory,
 * resources, strong-name signature, anything reached through mdt_image_rva,
 * mdt_image_read_rva or the tables and heaps) is first checked to lie in
 * one declared range, in addition to the checks against the image's own
 * (untrusted) headers: a damaged or hostile header that points into a gap
 * gives a located error, never a read of the gap. The headers (DOS, PE,
 * section table) must lie in the range that holds `base`; the metadata in
 * one range (adjacent ranges count as one).
 *
 * Ownership: the memory is borrowed, never copied (unless MDT_OPEN_COPY):
 * every declared range must stay mapped and readable, and its bytes
 * unchanged, while the image lives (a runtime's module image: until the
 * module's unload). With MDT_OPEN_COPY the image copies the declared bytes
 * (laid out at their RVAs; the gaps are never read) and the memory may go
 * after the call. mdt_image_bytes() of such an image gives `base` and the
 * length of the readable range from it (the headers), never more.
 *
 * Flags: 0 (borrow) or MDT_OPEN_COPY. Errors: MDT_EINVAL (NULL out or
 * base, ranges NULL with nranges > 0, other flags, or `base` in no declared
 * range), MDT_ENOMEM, and those of reading the image: MDT_ENOTDOTNET,
 * MDT_EBADIMAGE, MDT_EUNSUPPORTED, MDT_ETRUNC (also for a structure that
 * starts in, or runs into, memory not declared readable, with the RVA in
 * the message), MDT_ENOTFOUND.
 *
 * Thread safety: like every open, callable from any thread; the image is
 * immutable afterwards and any thread may read it without locks. Not
 * async-signal-safe (it allocates): a profiler opens images in its event
 * callbacks, never in a signal handler. */
int mdt_image_open_mapped_ranges(void *mem_ctx, mdt_image **out, const char *name, const void *base,
                                 const mdt_mem_range *ranges, size_t nranges, unsigned flags);
/* Free an image (same as talloc_free). NULL is fine. */
void mdt_image_close(mdt_image *img);

int mdt_image_kind(const mdt_image *img);
const char *mdt_image_kind_name(int kind); /* "PE", "Webcil", ...: static */
const char *mdt_image_name(const mdt_image *img);
/* The whole buffer (file bytes or mapped bytes): every byte of it is
 * readable. For an image opened with mdt_image_open_mapped_ranges, the
 * range from the base on (the headers); the rest through mdt_image_rva.
 * An image opened with MDT_OPEN_LAZY reads the rest of its file at the
 * first call (once); if the file changed since the open, *len is only the
 * part read from its start (at least the headers). */
const uint8_t *mdt_image_bytes(size_t *len, const mdt_image *img);

/* Warnings about the image: accepted oddities (duplicate streams, a
 * "sorted" table that is not, extra data, ...). Strings are borrowed. The
 * checks open leaves to first need (sorted tables, list runs) are made on
 * the first call, if not made already, and their warnings follow open's:
 * the list is complete and fixed from then on. Any thread (the late part
 * is built with malloc and published atomically); not async-signal-safe. */
size_t mdt_image_warning_count(const mdt_image *img);
const char *mdt_image_warning(const mdt_image *img, size_t i);

/* --- PE / Webcil headers (II.25). Zero-filled for raw metadata. --- */

typedef struct mdt_section {
    char name[9]; /* up to the first NUL of the 8-byte field */
    uint32_t virtual_address;
    uint32_t virtual_size;
    uint32_t raw_pointer; /* file offset of the raw data */
    uint32_t raw_size;
} mdt_section;

typedef struct mdt_data_dir {
    uint32_t rva;
    uint32_t size;
} mdt_data_dir;

typedef struct mdt_debug_entry {
    uint32_t type; /* 2 = CodeView, 17 = embedded portable PDB, ... */
    uint32_t size;
    uint32_t rva;
    uint32_t file_pointer;
    uint16_t major_version, minor_version;
    /* CodeView (RSDS) entries: */
    bool has_codeview;
    uint8_t pdb_guid[16];
    uint32_t pdb_age;
    const char *pdb_path;     /* borrowed, NUL-terminated inside the image, or NULL */
    uint32_t time_date_stamp; /* the entry's TimeDateStamp: for a portable PDB's
                                 CodeView entry, the last 4 bytes of its PDB id */
} mdt_debug_entry;

typedef struct mdt_pe_info {
    uint16_t machine;
    uint16_t characteristics;
    bool pe32plus;
    uint16_t subsystem;
    uint16_t dll_characteristics;
    uint64_t image_base;
    uint32_t size_of_image;
    uint32_t size_of_headers;
    uint32_t nsections;
    /* CLI header (II.25.3.3) */
    uint16_t cli_major, cli_minor;
    uint32_t cli_flags;   /* COMIMAGE_FLAGS_* */
    uint32_t entry_point; /* token, or an RVA when NATIVE_ENTRYPOINT */
    mdt_data_dir metadata;
    mdt_data_dir resources;
    mdt_data_dir strong_name_signature;
    mdt_data_dir vtable_fixups;
    mdt_data_dir managed_native_header; /* non-zero: ReadyToRun / NGen */
    /* data directories of the optional header */
    mdt_data_dir debug_dir;
    size_t ndebug; /* entries decoded, see mdt_image_debug_entry */
} mdt_pe_info;

#define MDT_COMIMAGE_ILONLY 0x00000001u
#define MDT_COMIMAGE_32BITREQUIRED 0x00000002u
#define MDT_COMIMAGE_IL_LIBRARY 0x00000004u
#define MDT_COMIMAGE_STRONGNAMESIGNED 0x00000008u
#define MDT_COMIMAGE_NATIVE_ENTRYPOINT 0x00000010u
#define MDT_COMIMAGE_TRACKDEBUGDATA 0x00010000u
#define MDT_COMIMAGE_32BITPREFERRED 0x00020000u

/* Header facts; all zero for a raw metadata image. Never fails. */
const mdt_pe_info *mdt_image_pe_info(const mdt_image *img);
size_t mdt_image_section_count(const mdt_image *img);
const mdt_section *mdt_image_section(const mdt_image *img, size_t i);
const mdt_debug_entry *mdt_image_debug_entry(const mdt_image *img, size_t i);

/* Pointer to `len` bytes at `rva`, all inside one section's raw data (or,
 * for a mapped image, inside one readable range). Errors: MDT_ENOTFOUND
 * (RVA in no section, or a raw metadata image, which has no RVAs),
 * MDT_EBADIMAGE (the bytes straddle the end of the section), MDT_ETRUNC
 * (past the section's raw data, the file or the readable memory), MDT_EIO
 * (MDT_OPEN_LAZY: the file changed since the open). */
int mdt_image_rva(const uint8_t **p, const mdt_image *img, uint32_t rva, uint32_t len);
/* Copy `len` bytes at `rva` into buf; bytes of a section past its raw data
 * (virtual size > raw size) read as zeros, as a loader maps them. Errors:
 * MDT_ENOTFOUND (RVA in no section, or a raw metadata image),
 * MDT_EBADIMAGE (the bytes straddle the end of the section), MDT_ETRUNC
 * (a mapped image: past the readable memory), MDT_EIO (MDT_OPEN_LAZY: the
 * file changed since the open). */
int mdt_image_read_rva(void *buf, uint32_t len, const mdt_image *img, uint32_t rva);
/* File offset of an RVA (flat layouts). Errors: MDT_ENOTFOUND (RVA in no
 * section, or a raw metadata image), MDT_ETRUNC (past the section's raw
 * data or the file; a mapped image: past the readable memory), MDT_EIO
 * (MDT_OPEN_LAZY: the file changed since the open). */
int mdt_image_rva_to_offset(uint64_t *offset, const mdt_image *img, uint32_t rva);

/* --- Metadata root and streams (II.24.2.1, II.24.2.2) --- */

typedef struct mdt_stream_info {
    char name[33];   /* as stored, NUL-terminated, up to 32 bytes */
    uint32_t offset; /* from the metadata root */
    uint32_t size;
    bool used; /* chosen as the heap of its name */
} mdt_stream_info;

typedef struct mdt_md_info {
    uint16_t major_version, minor_version;
    const char *version;  /* borrowed, e.g. "v4.0.30319" */
    uint64_t file_offset; /* of "BSJB" in the buffer */
    uint32_t size;
    size_t nstreams;
    bool enc;     /* uncompressed #- tables (or #Schema present) */
    bool jtd;     /* #JTD: every index 4 bytes wide */
    bool has_pdb; /* #Pdb stream present (portable PDB) */
    uint8_t tables_major, tables_minor;
    uint8_t heap_sizes;  /* HeapSizes byte of the tables stream */
    bool has_extra_data; /* HeapSizes 0x40: 4 bytes after the row counts */
    uint32_t extra_data;
    uint64_t valid;  /* Valid bit vector */
    uint64_t sorted; /* Sorted bit vector */
    /* #Pdb stream (portable PDB) */
    uint8_t pdb_id[20];
    uint32_t pdb_entry_point;
    uint64_t pdb_referenced_tables;
} mdt_md_info;

const mdt_md_info *mdt_image_md_info(const mdt_image *img);
const mdt_stream_info *mdt_image_stream(const mdt_image *img, size_t i);

#ifdef __cplusplus
}
#endif
#endif
