/* Lists of warnings (util/warnings.h): each message formatted under the
 * list's talloc parent and appended, up to a bound; a warning never fails
 * the operation that found it. */
#include "config.h"

#include <stdarg.h>
#include <talloc.h>

#include "util/warnings.h"

void mdt__warn(mdt_warnings *w, const char *fmt, ...)
{
    va_list ap;
    char *m;
    char **nw;
    if (w->n >= MDT_MAX_WARNINGS)
        return;
    va_start(ap, fmt);
    m = talloc_vasprintf(w->mem, fmt, ap);
    va_end(ap);
    if (!m)
        return;
    nw = talloc_realloc(w->mem, w->msg, char *, w->n + 1);
    if (!nw) {
        talloc_free(m);
        return;
    }
    w->msg = nw;
    w->msg[w->n++] = talloc_steal(nw, m);
}
