/* mdinspect batch, files.c: opening what the input names, regular files
 * only and never blocking, images mapped after their first bytes are
 * checked, and their portable PDBs (batch.h lists the pieces of batch). */
#ifndef MDINSPECT_BATCH_FILES_H
#define MDINSPECT_BATCH_FILES_H

#include <stddef.h>

#include <mdtools/mdtools.h>

struct stat;
/* Open a path for reading only when it is a regular file (mdt_file_open(3):
 * a FIFO or a device never blocks the run); the descriptor, or -1 with why
 * (whylen bytes) saying why not, in batch's words. */
int mdb_open_regular(const char *path, struct stat *st, char *why, size_t whylen);
/* Open the image of a file: refused unless a regular file whose first
 * bytes are an image's; mapped, so that only what the library reads of it
 * is read. 0, or -1 with why. */
int mdb_image_open(void *ctx, mdt_image **out, const char *path, char *why, size_t whylen);
/* The image of file `entry` of a single-file bundle (read from the
 * bundle's file, inflated when compressed). 0, or -1 with why. */
int mdb_bundle_image_open(void *ctx, mdt_image **out, const mdt_bundle *b, size_t entry, char *why,
                          size_t whylen);
/* Open `path` as a single-file bundle when it is one: a regular file that
 * starts as an executable does (ELF, MZ, Mach-O) and holds a bundle. NULL
 * when not; why says why unless it is simply no bundle (no executable, or
 * one that carries none). */
mdt_bundle *mdb_bundle_open(void *ctx, const char *path, char *why, size_t whylen);
/* A module's portable PDB, embedded or beside `path` (the CodeView entry's
 * file name in its folder, then the path with `.pdb`), each file checked
 * as mdb_open_regular does before the library reads it. 0, or -1. */
int mdb_pdb_open(void *ctx, mdt_pdb **out, const mdt_image *img, const char *path);
/* A regular file of at most `max` bytes, read whole and NUL-terminated;
 * NULL with why. */
char *mdb_read_small_file(void *ctx, const char *path, size_t max, size_t *len, char *why,
                          size_t whylen);

#endif
