/* mdtools: error codes and the per-thread error detail record.
 *
 * Every function that can fail returns 0 or a negative MDT_E... code. When it
 * fails on bad input it also fills a per-thread record saying where (file,
 * region such as "#Blob" or "TypeDef", row, column, offset) and what was
 * wrong; mdt_error_message() formats it for people.
 *
 * Only failures write the record. A call that succeeds leaves it as it
 * was, still describing the caller's last failure, also when the library
 * met and handled a failure on its way (a damaged row skipped, a name
 * printed in a shorter form, a resolution answered "bad-image"). Nothing
 * in the library clears it; mdt_error_clear() is for callers that want to
 * tell "no failure since" apart. */
#ifndef MDTOOLS_ERRORS_H
#define MDTOOLS_ERRORS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Marks the old name of a renamed function (README.md, "API conventions"):
 * it still links and works, and a compiler that can says where it is used
 * and what to call instead ("'mdt_error_message' is deprecated: use
 * mdt_error_message"). Define MDT_NO_DEPRECATION_WARNINGS to silence it,
 * or MDT_NO_DEPRECATED to leave the old names undeclared. */
#ifndef MDT_DEPRECATED_FOR
#if defined(MDT_NO_DEPRECATION_WARNINGS)
#define MDT_DEPRECATED_FOR(f)
#elif defined(__GNUC__) || defined(__clang__)
#define MDT_DEPRECATED_FOR(f) __attribute__((deprecated("use " #f)))
#elif defined(_MSC_VER)
#define MDT_DEPRECATED_FOR(f) __declspec(deprecated("use " #f))
#else
#define MDT_DEPRECATED_FOR(f)
#endif
#endif

enum mdt_error_code {
    MDT_OK = 0,
    MDT_ENOMEM = -1,       /* allocation failed */
    MDT_EINVAL = -2,       /* caller passed a bad argument (not bad input) */
    MDT_EIO = -3,          /* the OS failed us (open, mmap, ...) */
    MDT_EBADIMAGE = -4,    /* the bytes break a rule of the format */
    MDT_ETRUNC = -5,       /* the bytes end before the structure does */
    MDT_ENOTFOUND = -6,    /* no such row, heap entry, stream or name */
    MDT_EUNSUPPORTED = -7, /* well-formed but outside what mdtools reads */
    MDT_ENOTDOTNET = -8,   /* a valid file, but not a .NET image */
    MDT_ENOHEAP = -9,      /* the heap this index needs is absent */
    MDT_ITEROVER = -10,    /* an iterator has no more items (not an error) */
    MDT_EUNRESOLVED = -11  /* needs a definition from a module that is not open
                              (an enum's size, for a custom attribute) */
};

/* Where an error happened. Fields that do not apply are empty / UINT32_MAX /
 * UINT64_MAX. The strings are copies: the record outlives the image. */
typedef struct mdt_errinfo {
    int code;
    char file[128];       /* image name given at open (often a path) */
    char region[40];      /* "PE header", "#~", "#Blob", "TypeDef", ... */
    char column[40];      /* column name for table cells, else "" */
    uint32_t row;         /* 1-based row, or UINT32_MAX */
    uint64_t offset;      /* offset inside the region, or UINT64_MAX */
    uint64_t file_offset; /* offset in the file/buffer, or UINT64_MAX */
    char what[256];       /* what was wrong, e.g. "blob length 0x40 beyond heap end" */
} mdt_errinfo;

/* Short, static description of a code ("bad image", ...). Never NULL. */
const char *mdt_error_string(int code);

/* Detail of the last failure on this thread. Valid until the next failing
 * call on the same thread (calls that succeed leave it). Never NULL. */
const mdt_errinfo *mdt_error_last(void);

/* The last failure on this thread as one line, e.g.
 * "Hello.exe: #Blob+0x1a3 (file 0x2c1a3): bad compressed length".
 * Writes at most len bytes (NUL-terminated) to buf and returns buf. */
char *mdt_error_message(char *buf, size_t len);

/* Forget the last failure on this thread: the record then reads code 0,
 * empty strings and UINT32_MAX / UINT64_MAX places. The library never
 * calls it. */
void mdt_error_clear(void);

/* api-rename: off */
/* The names these functions had in libmdtools 1:0:0, exported until the
 * next soname (each calls the function of its new name); a compiler warns
 * where one is used and names the new one (MDT_DEPRECATED_FOR,
 * <mdtools/errors.h>). tools/api-rename.py moves code to the new names;
 * MDT_NO_DEPRECATED leaves them undeclared. */
#ifndef MDT_NO_DEPRECATED
MDT_DEPRECATED_FOR(mdt_error_string) const char *mdt_strerror(int code);
MDT_DEPRECATED_FOR(mdt_error_last) const mdt_errinfo *mdt_last_error(void);
MDT_DEPRECATED_FOR(mdt_error_message) char *mdt_errmsg(char *buf, size_t len);
MDT_DEPRECATED_FOR(mdt_error_clear) void mdt_clear_error(void);
#endif /* MDT_NO_DEPRECATED */
/* api-rename: on */

#ifdef __cplusplus
}
#endif
#endif
