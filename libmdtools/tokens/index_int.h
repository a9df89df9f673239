/* Reverse indexes (index.c): the content of a live class or function ->
 * the slot of its record in the forward table, for the reverse lookups
 * that never ask the runtime. The entry of a live record is added after
 * its content is written and deleted before its content changes or it
 * dies; both read the content from the slot (the kind's content_hash). */
#ifndef MDT_TOKENS_INDEX_INT_H
#define MDT_TOKENS_INDEX_INT_H

#include <stddef.h>

#include "tokens/idmap_int.h"
#include "tokens/table_int.h"

/* Writer: add or delete the entry of the live record in slot h of the
 * current table of kind (add rebuilds the index when it is full; 0 or
 * MDT_ENOMEM, recorded). */
int idm_rev_add(mdt_idmap *m, int kind, const struct idm_head *h);
void idm_rev_del(mdt_idmap *m, int kind, const struct idm_head *h);
/* Build a reverse index for forward table f of a kind with a content hash,
 * with room for at least min_cap entries; NULL when out of memory. */
struct idm_itab *idm_rev_build(const mdt_idmap *m, const struct idm_tab *f, int kind,
                               size_t min_cap);

#endif
