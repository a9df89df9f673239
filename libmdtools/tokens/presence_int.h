/* TypeDef presence (presence.c): (module, generic TypeDef) -> number of
 * live instantiations, for "is some class of this TypeDef loaded?"
 * (non-generic TypeDefs are answered by the reverse index). A part of the
 * map (struct idm_part_ops idm_presence_part, plugs_int.h). */
#ifndef MDT_TOKENS_PRESENCE_INT_H
#define MDT_TOKENS_PRESENCE_INT_H

#include <stdint.h>

#include "tokens/idmap_int.h"
#include "tokens/table_int.h"

/* Writer: count (delta +1) or uncount (-1) the class in slot h if it is a
 * generic TypeDef instantiation. */
void idm_class_presence(mdt_idmap *m, const struct idm_head *h, int delta);
/* Reader (inside a section): 1 when a live instantiation of the generic
 * TypeDef is counted, 0 when its count is 0, -1 when the TypeDef has no
 * entry. */
int idm_presence_find(const mdt_idmap *map, uintptr_t module_id, uint32_t typedef_token);

#endif
