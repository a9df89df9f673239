/* mdinspect (shell and batch): the name options the two share, so that a
 * name printed by `set signatures on` in the shell and by batch
 * --signatures is made with the same flags (the formatter itself is the
 * library's, <mdtools/names.h>). */
#ifndef MDINSPECT_COMMON_NAMING_H
#define MDINSPECT_COMMON_NAMING_H

#include <mdtools/names.h>

/* A member named with its parameter types, so that overloads differ
 * (`Enumerable::Sum(System.Collections.Generic.IEnumerable<System.Int64>)`),
 * generic parameters by name when nothing substitutes them. */
#define MDI_NAME_SIGNATURES (MDT_NAME_SIGNATURE | MDT_NAME_PARAM_NAMES)

#endif
