/* mdinspect: the one state struct every command handler receives: the open
 * images, which one is current, where output and messages go. The batch
 * modes and the interactive shell share it, so a handler never knows how it
 * was invoked. */
#ifndef MDINSPECT_STATE_H
#define MDINSPECT_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <mdtools/image.h>

#include "print.h"

#define MDI_PROGNAME "mdinspect"
#define MDI_NOFILE ((size_t)-1)

/* One image the user named. */
typedef struct mdi_file {
    char *path;     /* as given (shown in output and messages) */
    mdt_image *img; /* NULL once closed */
} mdi_file;

typedef struct mdi_state {
    void *mem;       /* talloc context owning everything here */
    mdi_file *files; /* talloc array of nfiles */
    size_t nfiles;
    size_t cur; /* index of the current image, or MDI_NOFILE */
    enum mdi_format format;
    mdi_printer *out; /* command output (stdout) */
    FILE *err;        /* messages (stderr) */
} mdi_state;

/* A state writing output to `out` and messages to `err` (both borrowed). */
mdi_state *mdi_state_new(void *mem_ctx, FILE *out, FILE *err, enum mdi_format fmt);

/* Open `path`, append it to the files and make it current. On failure the
 * library's located message goes to st->err and -1 is returned; the file
 * list is unchanged. */
int mdi_state_open(mdi_state *st, const char *path);
/* Make file `i` current (and the subject of the printer's output). */
void mdi_state_use(mdi_state *st, size_t i);
/* Close file `i`'s image (it stays listed, without an image). */
void mdi_state_close(mdi_state *st, size_t i);

/* The current image and its path, or NULL. */
const mdt_image *mdi_image(const mdi_state *st);
const char *mdi_image_path(const mdi_state *st);

/* Messages: "mdinspect: ..." on st->err, after flushing the output so the
 * two streams stay in order on a shared terminal or file. */
void mdi_report(mdi_state *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The library's last error (mdt_errmsg), prefixed with "what: " if given. */
void mdi_report_lib(mdi_state *st, const char *what);
/* The library's last error without the file name it starts with, for
 * output that is already about that file. Returns buf. */
char *mdi_errmsg_here(char *buf, size_t len);

#endif
