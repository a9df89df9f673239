/* The check every public function taking an mdt_name_opts makes first:
 * its version is one this library reads (<mdtools/names.h>: 0, the layout
 * of libmdtools 1:0:0, or up to MDT_NAME_OPTS_VERSION, all laid out alike
 * so far). A later version comes from a program built against a newer
 * libmdtools, whose members this one would ignore: refused, located at the
 * struct's version member. */
#ifndef MDT_GENERICS_OPTS_INT_H
#define MDT_GENERICS_OPTS_INT_H

#include <mdtools/names.h>

#include "util/error.h"

/* The versioned options' one check (MDT__OPTS_CHECK, util/error.h), for
 * mdt_name_opts. */
static inline int gen_opts_check(const mdt_name_opts *o, const char *fn)
{
    return MDT__OPTS_CHECK(o, MDT_NAME_OPTS_VERSION, fn, "mdt_name_opts");
}

#endif
