/* What the two halves of the custom attribute decoder share (attr_types.c:
 * the types of arguments; attr.c: their values and the entry points): the
 * decoder's state over one blob and the calls between the halves. */
#ifndef MDT_GENERICS_ATTR_INT_H
#define MDT_GENERICS_ATTR_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mdtools/attr.h>
#include <mdtools/sig.h>

#include "generics/gen_int.h"

struct ad {
    void *ctx;
    const struct mdt_image *img;
    rd r;
    unsigned depth;
    uint32_t ngargs; /* type arguments of a generic attribute type */
    const mdt_type *const *gargs;
    mdt_enum_resolver resolver;
    void *payload;
    const char *asm_name; /* this image's assembly name, or NULL */
};

static inline int mdt__attr_nomem(void)
{
    return mdt__fail_simple(MDT_ENOMEM, "out of memory decoding a custom attribute");
}

/* The value type of a constructor parameter (attr_types.c). */
int mdt__attr_type_of_sig(struct ad *d, const mdt_type *st, mdt_value_type **out);
/* II.23.3 FieldOrPropType of a named argument or boxed value (attr_types.c). */
int mdt__attr_type_of_blob(struct ad *d, mdt_value_type **out);
/* II.23.3 SerString: 0xFF for null, else a compressed length and UTF-8
 * (attr_types.c). */
int mdt__attr_read_serstring(struct ad *d, const char **s, size_t *len, bool *null,
                             const char *what);

#endif
