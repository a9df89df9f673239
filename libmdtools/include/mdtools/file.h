/* mdtools: opening a file whose path comes from input, the safe way.
 *
 * A path on a command line, in a log, in an image's CodeView entry or
 * File table may name anything: open(2) of a FIFO blocks until a writer
 * comes, open(2) of a device may act on it (a tape rewinds, a terminal
 * becomes the controlling one). These functions open only a regular file,
 * never block on one that was swapped for a FIFO in between (O_NONBLOCK,
 * then fstat(2) of what was opened), and read it with bounds. The library
 * opens every file this way; a client that opens paths from input should
 * too, instead of writing its own. */
#ifndef MDTOOLS_FILE_H
#define MDTOOLS_FILE_H

#include <stddef.h>
#include <sys/stat.h>

#include <mdtools/errors.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Open PATH read-only if it is a regular file. Returns the descriptor
 * (O_CLOEXEC, reads blocking as usual), which *st (may be NULL) then
 * describes; or fails, with the record naming PATH and why:
 *   MDT_EINVAL        PATH is NULL or empty;
 *   MDT_ENOTFOUND     nothing there (ENOENT, ENOTDIR); errno is kept;
 *   MDT_EUNSUPPORTED  not a regular file ("not a regular file (a FIFO)");
 *                     *st describes what is there;
 *   MDT_EIO           it could not be examined or opened (permission, too
 *                     many open files, ...); errno is kept. */
int mdt_file_open(const char *path, struct stat *st);

/* Read up to N bytes at offset OFF of descriptor FD, retrying short reads
 * and EINTR. Returns the count read (less than N only at the end of the
 * file), or -1 with errno set; records nothing (a reader of many small
 * windows says itself what it was reading). */
long long mdt_file_read_at(int fd, void *buf, size_t n, unsigned long long off);

/* The whole of a regular file of at most MAX bytes, NUL-terminated, in
 * *out (a talloc child of MEM_CTX) and its length in *len (may be NULL).
 * *out is NULL on failure. Errors:
 *   MDT_EINVAL        OUT is NULL, PATH is NULL or empty;
 *   MDT_ENOTFOUND     nothing there (as mdt_file_open);
 *   MDT_EUNSUPPORTED  not a regular file, larger than MAX bytes, or it
 *                     grew while it was read;
 *   MDT_EIO           it could not be opened, or a read failed;
 *   MDT_ENOMEM        allocation failed. */
int mdt_file_read(void *mem_ctx, char **out, size_t *len, const char *path, size_t max);

/* What a st_mode names, for messages: "a regular file", "a directory",
 * "a FIFO", "a character device", "a block device", "a socket",
 * "a symbolic link" or "not a regular file". Never NULL. */
const char *mdt_file_kind(unsigned mode);

#ifdef __cplusplus
}
#endif

#endif
