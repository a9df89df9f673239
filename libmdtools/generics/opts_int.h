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

/* The refusal returns MDT_EINVAL here rather than what the failure call
 * returns (the same code): a result known at the call site lets gcc keep
 * the hot path of the callers free of the arguments' saves (the call was
 * +24 instructions a signature name; bench/README.md, issue 29). */
static inline int gen_opts_check(const mdt_name_opts *o, const char *fn)
{
    if (__builtin_expect(o && o->version > MDT_NAME_OPTS_VERSION, 0)) {
        mdt__fail_opts_version(fn, "mdt_name_opts", o->version, MDT_NAME_OPTS_VERSION);
        return MDT_EINVAL;
    }
    return 0;
}

#endif
