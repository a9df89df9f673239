/* mdinspect: completion candidates collected. The shell's completion
 * (complete.c) and the commands' own completers (`set`, `resources`) add
 * to the same list; it lives below both, so a command's completer calls
 * nothing above the commands. */
#define _DEFAULT_SOURCE /* strncasecmp */
#include "config.h"

#include <string.h>
#include <strings.h>

#include <talloc.h>

#include "cands.h"
#include "cmd.h"

void mdi_cand_add(mdi_cands *c, const char *text, const char *s)
{
    size_t tl = strlen(text);
    char **nv;
    if (c->nocase ? strncasecmp(s, text, tl) != 0 : strncmp(s, text, tl) != 0)
        return;
    for (size_t i = c->n; i-- > 0 && i + 8 > c->n;) /* cheap check for neighbours */
        if (strcmp(c->v[i], s) == 0)
            return;
    nv = talloc_realloc(c->mem, c->v, char *, c->n + 1);
    if (!nv)
        return;
    c->v = nv;
    if ((c->v[c->n] = talloc_strdup(c->mem, s)))
        c->n++;
}
