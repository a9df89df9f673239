/* mdinspect: the list of completion candidates a completer fills
 * (mdi_cand_add, cmd.h), defined for cands.c and complete.c, which makes
 * one per completion and hands the list to readline. A command's own
 * completer (spec->complete) sees only the opaque type. */
#ifndef MDINSPECT_CANDS_H
#define MDINSPECT_CANDS_H

#include <stdbool.h>
#include <stddef.h>

struct mdi_cands {
    void *mem;
    char **v;
    size_t n;
    bool nocase;
    bool noappend; /* the candidates are steps (token table parts): no blank after one */
};

#endif
