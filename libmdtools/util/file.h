/* Opening a file named by input (a path on a command line, a PDB named by
 * an image, a module named by a File table) for reading, safely: only a
 * regular file is opened, so a FIFO cannot block the caller and a device
 * is never opened. */
#ifndef MDT_UTIL_FILE_H
#define MDT_UTIL_FILE_H

#include <sys/stat.h>

/* What mdt__open_regular returns besides a descriptor. */
#define MDT_FILE_NOT_REGULAR (-2) /* a directory, FIFO, socket or device */

/* Open `path` read-only if it is a regular file; *st describes what was
 * opened. Returns the descriptor (O_CLOEXEC), -1 with errno set when it
 * cannot be examined or opened, or MDT_FILE_NOT_REGULAR (*st then
 * describes what is there). Records no error: callers say what the file
 * was for. */
int mdt__open_regular(const char *path, struct stat *st);

/* Read up to n bytes at offset off (retrying short reads and EINTR);
 * the count read (less at the end of the file), or -1 with errno. */
long long mdt__read_at(int fd, void *buf, size_t n, unsigned long long off);

#endif
