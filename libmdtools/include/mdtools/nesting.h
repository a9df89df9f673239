/* mdtools: where a row sits among the tables (ECMA-335 II.22).
 *
 * Owners and nesting, which are facts of the tables, not of names: the
 * TypeDef that owns a member (II.22.37 TypeDef's FieldList and MethodList
 * runs), the row that owns any row (list runs and parent columns), the
 * TypeDef enclosing a nested TypeDef (II.22.32 NestedClass), and a TypeDef
 * found by its nested name. Implemented in libmdtools/md/ (owner.c,
 * nesting.c).
 *
 * These functions were declared in <mdtools/names.h> before; that header
 * includes this one, so code that includes only <mdtools/names.h> builds
 * unchanged. Thread-safe on an open image. */
#ifndef MDTOOLS_NESTING_H
#define MDTOOLS_NESTING_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mdt_image mdt_image;

/* The TypeDef that owns a MethodDef or Field (0 for none), honouring the
 * MethodPtr/FieldPtr tables of uncompressed metadata; likewise that of a
 * Property or Event (the Parent of the PropertyMap/EventMap row whose run
 * holds it) and of a Param (its MethodDef's owner). O(1): the first query
 * of a column builds an index member -> owner in one pass over TypeDef (2
 * bytes a member, 4 past 65535 types; malloc, published atomically: any
 * thread, but not async-signal-safe), then each query is a load. Where the
 * column's starts go down (damaged metadata) the owner is the first
 * TypeDef whose readable run holds the member, and the image has a
 * warning. Errors: MDT_EINVAL (not a Field, MethodDef, Property, Event or
 * Param token), MDT_ENOTFOUND (no such row), MDT_ETRUNC (its Ptr row, or a
 * TypeDef or map row the search needs, lies beyond the tables stream),
 * MDT_EBADIMAGE (a map row's Parent naming no row), MDT_ENOMEM (the index
 * cannot be built and the column's starts go down). */
int mdt_member_owner(uint32_t *typedef_token, const mdt_image *img, uint32_t member);

/* The row that owns any row: the enclosing TypeDef of a nested TypeDef; the
 * TypeDef of a MethodDef, Field, Property or Event; the MethodDef of a
 * Param; the parent column of rows that have one (MemberRef.Class,
 * CustomAttribute.Parent, Constant.Parent, GenericParam.Owner,
 * MethodSpec.Method, InterfaceImpl.Class, ...). *owner is 0 when the row
 * has none or no owner claims it. Errors: MDT_EINVAL (no image, no output,
 * a token of a table without owners), and the located error of a row that
 * does not exist or cannot be read: MDT_ENOTFOUND, MDT_ETRUNC,
 * MDT_EBADIMAGE, MDT_ENOMEM (as for mdt_member_owner). */
int mdt_token_owner(uint32_t *owner, const mdt_image *img, uint32_t token);

/* The enclosing TypeDef of a nested TypeDef (ECMA-335 II.22.32), or 0 when
 * not nested; *enclosing is 0 on failure. Errors: MDT_EINVAL (not a TypeDef
 * token, or row 0), MDT_ENOTFOUND (no such row), the located error of an
 * unreadable NestedClass row (MDT_ETRUNC, MDT_EBADIMAGE). */
int mdt_typedef_enclosing(uint32_t *enclosing, const mdt_image *img, uint32_t typedef_token);

/* The TypeDef named `name` (len bytes) in reflection syntax without an
 * assembly part: `Ns.Outer+Inner`, arity suffixes included (`List`1`),
 * `\` escapes honoured. A linear scan of the TypeDef table. MDT_ENOTFOUND
 * when the image defines no such type. */
int mdt_typedef_by_name(uint32_t *token, const mdt_image *img, const char *name, size_t len);

#ifdef __cplusplus
}
#endif
#endif
