/* What a map is made of beside the core: the operation tables of the record
 * kinds (modules.c, classes.c, functions.c) and of the parts (presence.c,
 * ranges_part.c). Only idmap.c, which plugs them into a new map, names them;
 * each of those units has nothing else to offer the others but its public
 * calls, so this one header stands for their five one-line headers. */
#ifndef MDT_TOKENS_PLUGS_INT_H
#define MDT_TOKENS_PLUGS_INT_H

#include "tokens/writer_int.h"

extern const struct idm_kind_ops idm_module_kind, idm_class_kind, idm_function_kind;
extern const struct idm_part_ops idm_presence_part, idm_range_part;

#endif
