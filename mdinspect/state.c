/* mdinspect's state: opening and selecting images, and reporting errors in
 * step with the output. */
#include "config.h"

#include <stdarg.h>
#include <string.h>

#include <talloc.h>

#include <mdtools/errors.h>

#include "state.h"

mdi_state *mdi_state_new(void *mem_ctx, FILE *out, FILE *err, enum mdi_format fmt)
{
    mdi_state *st = talloc_zero(mem_ctx, mdi_state);
    if (!st)
        return NULL;
    st->mem = st;
    st->cur = MDI_NOFILE;
    st->format = fmt;
    st->err = err;
    st->out = mdi_printer_new(st, out, fmt);
    if (!st->out) {
        talloc_free(st);
        return NULL;
    }
    return st;
}

int mdi_state_open(mdi_state *st, const char *path)
{
    mdt_image *img = NULL;
    mdi_file *nf;
    char *copy;
    if (mdt_image_open_file(st->mem, &img, path, 0) != 0) {
        mdi_report_lib(st, NULL);
        return -1;
    }
    copy = talloc_strdup(st->mem, path);
    nf = copy ? talloc_realloc(st->mem, st->files, mdi_file, st->nfiles + 1) : NULL;
    if (!nf) {
        talloc_free(copy);
        mdt_image_close(img);
        mdi_report(st, "%s: out of memory", path);
        return -1;
    }
    st->files = nf;
    nf[st->nfiles].path = talloc_steal(nf, copy);
    nf[st->nfiles].img = talloc_steal(nf, img);
    st->nfiles++;
    mdi_state_use(st, st->nfiles - 1);
    return 0;
}

void mdi_state_use(mdi_state *st, size_t i)
{
    st->cur = i < st->nfiles ? i : MDI_NOFILE;
    mdi_printer_set_file(st->out, i < st->nfiles ? st->files[i].path : NULL);
}

void mdi_state_close(mdi_state *st, size_t i)
{
    if (i >= st->nfiles)
        return;
    mdt_image_close(st->files[i].img);
    st->files[i].img = NULL;
    if (st->cur == i)
        mdi_state_use(st, MDI_NOFILE);
}

const mdt_image *mdi_image(const mdi_state *st)
{
    return st->cur < st->nfiles ? st->files[st->cur].img : NULL;
}

const char *mdi_image_path(const mdi_state *st)
{
    return st->cur < st->nfiles ? st->files[st->cur].path : NULL;
}

void mdi_report(mdi_state *st, const char *fmt, ...)
{
    va_list ap;
    mdi_printer_flush(st->out);
    fputs(MDI_PROGNAME ": ", st->err);
    va_start(ap, fmt);
    vfprintf(st->err, fmt, ap);
    va_end(ap);
    fputc('\n', st->err);
    fflush(st->err);
}

void mdi_report_lib(mdi_state *st, const char *what)
{
    char msg[512];
    mdt_errmsg(msg, sizeof msg);
    if (what)
        mdi_report(st, "%s: %s", what, msg);
    else
        mdi_report(st, "%s", msg);
}

char *mdi_errmsg_here(char *buf, size_t len)
{
    const mdt_errinfo *e = mdt_last_error();
    size_t n = strlen(e->file);
    mdt_errmsg(buf, len);
    if (n && strncmp(buf, e->file, n) == 0 && buf[n] == ':' && buf[n + 1] == ' ')
        memmove(buf, buf + n + 2, strlen(buf + n + 2) + 1);
    return buf;
}
