/* Private queries of md/nesting.c for the layers above: type identity by
 * namespace and name. */
#ifndef MDT_MD_NESTING_INT_H
#define MDT_MD_NESTING_INT_H

#include <stdbool.h>
#include <stdint.h>

struct mdt_image;

/* Is TypeDef/TypeRef `token` of img named ns.name, outermost (a TypeDef
 * not nested, a TypeRef whose scope is not a TypeRef)? False for other
 * tokens and for rows that cannot be read (the error record cleared). */
bool mdt__type_is(const struct mdt_image *img, uint32_t token, const char *ns, const char *name);

#endif
