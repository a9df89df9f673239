/* mdtools: what a PE file says besides its metadata (the PE/COFF format as
 * ECMA-335 II.25 uses it, and the parts of Microsoft's PE/COFF
 * specification .NET images carry): every field of the COFF and optional
 * headers, the sixteen data directories, the section table with each
 * section's characteristics, the data of debug directory entries (embedded
 * portable PDB, PDB checksum, ReadyToRun perf map), the ReadyToRun header
 * and its sections, the Win32 resource tree and the version resource
 * (VS_VERSIONINFO).
 *
 * Every read goes through the library's bounds-checked reader, on the
 * image's own bytes: a header, table or resource that is damaged or runs
 * past what is there gives a located error (file, region, offset), never a
 * read outside the image. Loops over on-disk counts are bounded (entries
 * of a resource directory by the directory's size and a total of
 * MDT_WIN32RES_MAX leaves; the resource tree has three levels, so a
 * directory that points back at itself cannot make a walk go round).
 *
 * Ownership: pointers into the image (names, PDB paths, checksums) are
 * borrowed and live as long as the image; lists are talloc children of the
 * caller's mem_ctx. Thread safety: the image is immutable; any thread may
 * call these functions. */
#ifndef MDTOOLS_PE_H
#define MDTOOLS_PE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mdtools/image.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The DOS, COFF and optional headers, field by field (PE/COFF
 * specification; ECMA-335 II.25.2.1 to II.25.2.3). */
typedef struct mdt_pe_headers {
    uint32_t lfanew; /* e_lfanew: file offset of "PE\0\0" */
    /* COFF file header */
    uint16_t machine;
    uint16_t nsections;
    uint32_t time_date_stamp;
    uint32_t symbol_table; /* PointerToSymbolTable */
    uint32_t nsymbols;
    uint16_t optional_header_size;
    uint16_t characteristics;
    /* optional header, standard fields */
    uint16_t magic; /* 0x10b PE32, 0x20b PE32+ */
    uint8_t linker_major, linker_minor;
    uint32_t size_of_code;
    uint32_t size_of_initialized_data;
    uint32_t size_of_uninitialized_data;
    uint32_t entry_point; /* AddressOfEntryPoint (an RVA) */
    uint32_t base_of_code;
    uint32_t base_of_data; /* PE32 only; 0 in PE32+ */
    /* optional header, Windows fields */
    uint64_t image_base;
    uint32_t section_alignment;
    uint32_t file_alignment;
    uint16_t os_major, os_minor;
    uint16_t image_major, image_minor;
    uint16_t subsystem_major, subsystem_minor;
    uint32_t win32_version;
    uint32_t size_of_image;
    uint32_t size_of_headers;
    uint32_t checksum;
    uint16_t subsystem;
    uint16_t dll_characteristics;
    uint64_t stack_reserve, stack_commit;
    uint64_t heap_reserve, heap_commit;
    uint32_t loader_flags;
    uint32_t ndirs_declared;       /* NumberOfRvaAndSizes as stored */
    uint32_t ndirs;                /* directories read: at most 16, and what fits */
    mdt_data_dir dirs[16];         /* index 4 (certificates) holds a file offset */
    uint64_t checksum_offset;      /* file offset of the CheckSum field */
    uint64_t cert_dir_offset;      /* file offset of directory 4, 0 when absent */
    uint64_t section_table_offset; /* file offset of the section table */
} mdt_pe_headers;

/* Read the headers of a PE image (flat or mapped by a loader: the headers
 * lie at the same offsets in both). Errors: MDT_EINVAL (NULL argument),
 * MDT_ENOTFOUND (a Webcil or raw metadata image: no PE headers),
 * MDT_ETRUNC (a header cut short), MDT_EBADIMAGE (no "PE\0\0" at e_lfanew,
 * an unknown optional header magic). */
int mdt_pe_headers_read(mdt_pe_headers *out, const mdt_image *img);

/* A section header, every field (PE/COFF; II.25.3). */
typedef struct mdt_pe_section {
    char name[9]; /* up to the first NUL of the 8 bytes */
    uint32_t virtual_size;
    uint32_t virtual_address;
    uint32_t raw_size;
    uint32_t raw_pointer;
    uint32_t relocations; /* PointerToRelocations */
    uint32_t linenumbers; /* PointerToLinenumbers */
    uint16_t nrelocations;
    uint16_t nlinenumbers;
    uint32_t characteristics; /* IMAGE_SCN_* bits */
} mdt_pe_section;

/* Section header i (0-based) of a PE image. Errors: MDT_EINVAL (NULL
 * argument), MDT_ENOTFOUND (i past the section count, or no PE headers),
 * MDT_ETRUNC, MDT_EBADIMAGE (as for mdt_pe_headers_read). */
int mdt_pe_section_read(mdt_pe_section *out, const mdt_image *img, size_t i);

/* The PE checksum of a flat PE file as the Windows loader computes it
 * (imagehlp's CheckSumMappedFile): the 16-bit one's-complement-style sum of
 * the file with the CheckSum field left out, plus the file's length.
 * Errors: MDT_EINVAL (NULL argument), MDT_ENOTFOUND (no PE headers),
 * MDT_EUNSUPPORTED (an image laid out by a loader: the file is not there),
 * MDT_ETRUNC, MDT_EBADIMAGE (as for mdt_pe_headers_read). MDT_EIO: an image
 * opened with MDT_OPEN_LAZY whose file changed since the open. */
int mdt_pe_checksum(uint32_t *out, const mdt_image *img);

/* --- Debug directory entries' data (mdt_image_debug_entry gives the
 * entries themselves and the CodeView records) --- */

/* The bytes of debug entry i (0-based): at its file pointer in a flat
 * file, else at its RVA. *len is the entry's size. Errors: MDT_EINVAL (NULL
 * argument), MDT_ENOTFOUND (no entry i, or an entry without data),
 * MDT_ETRUNC (the data lies past the file), and those of mdt_image_rva
 * (MDT_EBADIMAGE: the data straddles the end of its section). MDT_EIO: an
 * image opened with MDT_OPEN_LAZY whose file changed since the open. */
int mdt_debug_entry_data(const uint8_t **data, size_t *len, const mdt_image *img, size_t i);

/* An EmbeddedPortablePdb entry (type 17): "MPDB", the uncompressed size,
 * then a deflate stream. Errors: MDT_EINVAL (NULL argument, or the entry is
 * of another type), MDT_EBADIMAGE (no "MPDB" signature), MDT_ETRUNC,
 * MDT_ENOTFOUND (as for mdt_debug_entry_data). MDT_EIO: an image opened
 * with MDT_OPEN_LAZY whose file changed since the open. */
int mdt_debug_embedded_pdb(uint32_t *uncompressed, uint32_t *compressed, const mdt_image *img,
                           size_t i);

/* A PdbChecksum entry (type 19): the algorithm's name (borrowed,
 * NUL-terminated inside the image: "SHA256", ...) and the checksum of the
 * PDB (borrowed, *len bytes). Errors: MDT_EINVAL (NULL argument, another
 * type), MDT_EBADIMAGE (the name is not NUL-terminated inside the entry),
 * MDT_ETRUNC, MDT_ENOTFOUND (as for mdt_debug_entry_data). MDT_EIO: an
 * image opened with MDT_OPEN_LAZY whose file changed since the open. */
int mdt_debug_pdb_checksum(const char **algorithm, const uint8_t **checksum, size_t *len,
                           const mdt_image *img, size_t i);

/* A PerfMap entry (type 21, written by crossgen2 for ReadyToRun code):
 * "R2RM", a 16-byte signature, a version, the perf map's path (borrowed,
 * NUL-terminated inside the image). Errors: MDT_EINVAL (NULL argument,
 * another type), MDT_EBADIMAGE (no "R2RM", a path not NUL-terminated),
 * MDT_ETRUNC, MDT_ENOTFOUND (as for mdt_debug_entry_data). MDT_EIO: an
 * image opened with MDT_OPEN_LAZY whose file changed since the open. */
int mdt_debug_perfmap(uint8_t signature[16], uint32_t *version, const char **path,
                      const mdt_image *img, size_t i);

/* --- ReadyToRun (the CLI header's ManagedNativeHeader, "RTR") --- */

typedef struct mdt_r2r_header {
    uint32_t rva; /* of the header */
    uint16_t major, minor;
    uint32_t flags; /* READYTORUN_FLAG_*: 0x20 component of a composite image */
    uint32_t nsections;
} mdt_r2r_header;

typedef struct mdt_r2r_section {
    uint32_t type; /* ReadyToRunSectionType: 100, 101, ... */
    uint32_t rva;
    uint32_t size;
} mdt_r2r_section;

/* The ReadyToRun header. Errors: MDT_EINVAL (NULL argument),
 * MDT_ENOTFOUND (no managed native header, or one that is not
 * ReadyToRun: no "RTR" signature), MDT_ETRUNC, MDT_EBADIMAGE (a section
 * list that does not fit in the image), and those of mdt_image_rva.
 * MDT_EIO: an image opened with MDT_OPEN_LAZY whose file changed since the
 * open. */
int mdt_r2r_header_read(mdt_r2r_header *out, const mdt_image *img);
/* Section i (0-based) of the ReadyToRun header. Errors: those of
 * mdt_r2r_header_read (MDT_EINVAL, MDT_ENOTFOUND, MDT_ETRUNC,
 * MDT_EBADIMAGE), and MDT_ENOTFOUND for i past the count. MDT_EIO: an image
 * opened with MDT_OPEN_LAZY whose file changed since the open. */
int mdt_r2r_section_read(mdt_r2r_section *out, const mdt_image *img, uint32_t i);
/* The name of a ReadyToRun section type ("RuntimeFunctions"), static; NULL
 * for a type the library does not know. */
const char *mdt_r2r_section_name(uint32_t type);

/* --- ReadyToRun debug info: the IL-to-native maps of precompiled code --- */

/* A handle on a ReadyToRun image's RuntimeFunctions and DebugInfo
 * sections (opaque; under mem_ctx, valid while the image is open). */
typedef struct mdt_r2r_debug mdt_r2r_debug;

/* IL offsets that are not offsets (CoreCLR's ICorDebugInfo::MappingTypes) */
#define MDT_R2R_IL_NO_MAPPING 0xffffffffu
#define MDT_R2R_IL_PROLOG 0xfffffffeu
#define MDT_R2R_IL_EPILOG 0xfffffffdu
/* An entry's source flags (CoreCLR's ICorDebugInfo::SourceTypes values) */
#define MDT_R2R_SOURCE_STACK_EMPTY 0x02u
#define MDT_R2R_SOURCE_CALL_SITE 0x04u
#define MDT_R2R_SOURCE_END_UNKNOWN 0x08u /* the entry runs to the code's end */
#define MDT_R2R_SOURCE_CALL_INSTRUCTION 0x10u
/* The most bounds one method's debug info may hold (more: MDT_EBADIMAGE). */
#define MDT_R2R_BOUNDS_MAX 65536u
/* mdt_r2r_bounds' flags: the list as the runtime gives it to a profiler
 * (GetILToNativeMapping), not as the image encodes it. */
#define MDT_R2R_BOUNDS_RUNTIME 1u

/* One entry of a method's IL-to-native map: native offsets from the
 * start of the method's code. */
typedef struct mdt_r2r_bound {
    uint32_t il;           /* IL offset, or MDT_R2R_IL_* */
    uint32_t native_start; /* where the entry's code starts */
    uint32_t native_end;   /* where it ends; 0 in the raw list and with END_UNKNOWN */
    uint32_t source;       /* MDT_R2R_SOURCE_* */
} mdt_r2r_bound;

/* Open the debug info of a ReadyToRun image (a file, or an image in memory
 * as the loader mapped it). Errors: MDT_EINVAL (NULL argument), those of
 * mdt_r2r_header_read (MDT_ENOTFOUND: not ReadyToRun; MDT_ETRUNC,
 * MDT_EBADIMAGE), MDT_ENOTFOUND (no RuntimeFunctions or no DebugInfo
 * section), MDT_EBADIMAGE (RuntimeFunctions not of 12-byte entries),
 * MDT_EUNSUPPORTED (a component of a composite image), MDT_ENOMEM, and
 * those of mdt_image_rva (the sections not inside the image: MDT_ETRUNC,
 * MDT_EBADIMAGE, MDT_ENOTFOUND; MDT_EIO: an image opened with
 * MDT_OPEN_LAZY whose file changed since the open). */
int mdt_r2r_debug_open(mdt_r2r_debug **out, void *mem_ctx, const mdt_image *img);
/* The number of entries in RuntimeFunctions (0 for NULL). */
uint32_t mdt_r2r_debug_functions(const mdt_r2r_debug *d);
/* The index of the runtime function that begins exactly at `rva` (a
 * method's or funclet's first byte). Errors: MDT_EINVAL (NULL argument),
 * MDT_ENOTFOUND (none begins there), and those of mdt_image_rva
 * (MDT_ETRUNC, MDT_EBADIMAGE, MDT_ENOTFOUND, MDT_EIO). */
int mdt_r2r_function_at(uint32_t *index, const mdt_r2r_debug *d, uint32_t rva);
/* The IL-to-native map of the method whose code begins with runtime
 * function `index`: *n entries, of which the first min(*n, cap) are
 * written to out (*n > cap: call again with a larger buffer). Without
 * flags, the entries as encoded, by native offset (native_end 0). With
 * MDT_R2R_BOUNDS_RUNTIME, the runtime's list: repeated IL offsets merged,
 * each entry's end set, the last one's 0 with MDT_R2R_SOURCE_END_UNKNOWN
 * (the runtime gives the code's size there), call instructions left out;
 * in native order (the runtime's own is by IL offset). A method without
 * bounds has *n 0. Errors: MDT_EINVAL (NULL argument, out NULL with cap,
 * an unknown flag, index past the runtime functions), MDT_ENOTFOUND (no
 * debug info for that method), MDT_EBADIMAGE (an offset outside
 * DebugInfo, a malformed number, more than MDT_R2R_BOUNDS_MAX bounds),
 * MDT_ETRUNC (bounds that end before their count), MDT_EUNSUPPORTED (a
 * "fat" header, entries wider than 57 bits), and those of mdt_image_rva
 * (MDT_ETRUNC, MDT_EBADIMAGE, MDT_ENOTFOUND, MDT_EIO). */
int mdt_r2r_bounds(mdt_r2r_bound *out, size_t cap, size_t *n, const mdt_r2r_debug *d,
                   uint32_t index, unsigned flags);

/* --- ReadyToRun methods: the MethodDef whose precompiled code holds an address --- */

/* A handle on a ReadyToRun image's entry points (MethodDefEntryPoints and
 * InstanceMethodEntryPoints) by runtime function: opaque, under mem_ctx,
 * valid while the image is open. Built once at the open (memory: 8 bytes
 * an entry point). */
typedef struct mdt_r2r_methods mdt_r2r_methods;

/* One entry point's compiled code: its runtime functions (the method's
 * main function, then its funclets) and their extent. */
typedef struct mdt_r2r_method {
    uint32_t token; /* MethodDef (0x06xxxxxx); 0: generic code (an instantiation's) */
    uint32_t first; /* the entry point's runtime function */
    uint32_t count; /* runtime functions: the entry point and its funclets */
    uint32_t rva;   /* where the first begins */
    uint32_t size;  /* to the end of the last */
} mdt_r2r_method;

/* Open the entry points of a ReadyToRun image (a file, or an image in
 * memory as the loader mapped it). Errors: MDT_EINVAL (NULL argument),
 * those of mdt_r2r_header_read (MDT_ENOTFOUND: not ReadyToRun;
 * MDT_ETRUNC, MDT_EBADIMAGE), MDT_ENOTFOUND (no RuntimeFunctions or no
 * MethodDefEntryPoints section), MDT_EUNSUPPORTED (a component of a
 * composite image; an image with a HotColdMap), MDT_EBADIMAGE
 * (RuntimeFunctions not of 12-byte entries, a malformed array, hashtable,
 * number or method signature, an entry point past the runtime functions,
 * more instance entries than runtime functions), MDT_ETRUNC, MDT_ENOMEM,
 * and those of mdt_image_rva (MDT_ETRUNC, MDT_EBADIMAGE, MDT_ENOTFOUND;
 * MDT_EIO: an image opened with MDT_OPEN_LAZY whose file changed since
 * the open). */
int mdt_r2r_methods_open(mdt_r2r_methods **out, void *mem_ctx, const mdt_image *img);
/* The number of entry points with code (MethodDef and generic ones
 * together, each runtime function counted once; 0 for NULL). */
uint32_t mdt_r2r_methods_entries(const mdt_r2r_methods *m);
/* The number of InstanceMethodEntryPoints entries (0 for NULL). */
uint32_t mdt_r2r_methods_instances(const mdt_r2r_methods *m);
/* Entry point i (0-based, in code order). Errors: MDT_EINVAL (NULL
 * argument), MDT_ENOTFOUND (i past the count), MDT_EBADIMAGE (runtime
 * functions that end before they begin), and those of mdt_image_rva
 * (MDT_ETRUNC, MDT_EBADIMAGE, MDT_ENOTFOUND, MDT_EIO). */
int mdt_r2r_method_get(mdt_r2r_method *out, const mdt_r2r_methods *m, uint32_t i);
/* The MethodDef whose code holds runtime function `index` (its entry
 * point or one of its funclets). Errors: MDT_EINVAL (NULL argument),
 * MDT_ENOTFOUND (index past the runtime functions, before every entry
 * point, or generic code: that needs the runtime's instantiation), and
 * those of mdt_r2r_method_get (MDT_EBADIMAGE, MDT_ETRUNC, MDT_ENOTFOUND,
 * MDT_EIO). */
int mdt_r2r_method_at_index(mdt_r2r_method *out, const mdt_r2r_methods *m, uint32_t index);
/* The same for the runtime function holding `rva`. Errors: those of
 * mdt_r2r_method_at_index (MDT_EINVAL, MDT_ENOTFOUND, MDT_EBADIMAGE,
 * MDT_ETRUNC, MDT_EIO), MDT_ENOTFOUND (no runtime function holds rva). */
int mdt_r2r_method_at_rva(mdt_r2r_method *out, const mdt_r2r_methods *m, uint32_t rva);

/* --- Win32 resources (data directory 2: the .rsrc tree) --- */

#define MDT_WIN32RES_MAX 4096

/* One leaf of the three-level tree type / name / language. A level named
 * by a string has its name (UTF-8, under mem_ctx) and id 0; one named by
 * a number has name NULL. */
typedef struct mdt_win32res {
    uint32_t type_id; /* 16 = RT_VERSION, 24 = RT_MANIFEST, ... */
    const char *type_name;
    uint32_t name_id;
    const char *name;
    uint32_t language;
    uint32_t data_rva;
    uint32_t size;
    uint32_t codepage;
} mdt_win32res;

/* Every leaf of the image's Win32 resource tree, in tree order: *out a
 * talloc array under mem_ctx (NULL when *n is 0). An image without the
 * directory has none (0, *n = 0). Errors: MDT_EINVAL (NULL argument),
 * MDT_ENOMEM, MDT_ETRUNC (a directory or entry past the section),
 * MDT_EBADIMAGE (an entry at the wrong level, a name not UTF-16, more than
 * MDT_WIN32RES_MAX leaves), and those of mdt_image_rva (MDT_ENOTFOUND for
 * a tree at an RVA in no section). MDT_EIO: an image opened with
 * MDT_OPEN_LAZY whose file changed since the open. */
int mdt_win32res_list(void *mem_ctx, mdt_win32res **out, size_t *n, const mdt_image *img);

/* A string of a StringFileInfo table: `table` is the table's key
 * ("040904B0": language and code page in hex). UTF-8, under mem_ctx. */
typedef struct mdt_version_string {
    const char *table;
    const char *key;
    const char *value;
} mdt_version_string;

/* The version resource (VS_VERSIONINFO, RT_VERSION), decoded. */
typedef struct mdt_version_info {
    bool has_fixed; /* a VS_FIXEDFILEINFO is there */
    uint16_t file_version[4];
    uint16_t product_version[4];
    uint32_t file_flags_mask;
    uint32_t file_flags;
    uint32_t file_os;
    uint32_t file_type;
    uint32_t file_subtype;
    uint64_t file_date;
    size_t nstrings;
    mdt_version_string *strings; /* talloc array, in file order */
    size_t ntranslations;
    uint32_t *translations; /* VarFileInfo "Translation": language | codepage << 16 */
} mdt_version_info;

/* The first RT_VERSION resource of the image, decoded; *out under mem_ctx.
 * Errors: MDT_EINVAL (NULL argument), MDT_ENOMEM, MDT_ENOTFOUND (no version
 * resource), MDT_ETRUNC (a block longer than its parent or the data),
 * MDT_EBADIMAGE (a key that is not "VS_VERSION_INFO", a fixed file info
 * without its signature, blocks nested deeper than the format allows),
 * and those of mdt_win32res_list. MDT_EIO: an image opened with
 * MDT_OPEN_LAZY whose file changed since the open. */
int mdt_version_info_read(void *mem_ctx, mdt_version_info **out, const mdt_image *img);

#ifdef __cplusplus
}
#endif
#endif
