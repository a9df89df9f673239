/* mdtools: what a type holds and what it is (ECMA-335 II.22).
 *
 * The queries every client of a type wrote for itself: the members of a
 * TypeDef (its Field and MethodDef runs, II.22.37 FieldList and
 * MethodList, and the Property and Event runs of the PropertyMap and
 * EventMap rows whose Parent it is, II.22.35 and II.22.13, all through the
 * FieldPtr/MethodPtr/PropertyPtr/EventPtr tables of uncompressed metadata
 * where present); the kind of a TypeDef (class, interface, struct, enum,
 * delegate) from its flags and the name of its base type, with nothing
 * resolved or loaded; and whether a token names a type or a member. The
 * owner of a member is mdt_member_owner (<mdtools/nesting.h>).
 * Implemented in libmdtools/md/ (members.c). Thread-safe on an open
 * image; an iterator belongs to one thread at a time.
 *
 *     mdt_members it = MDT_MEMBERS_INIT;
 *     uint32_t tok;
 *     const char *name;
 *     int e;
 *     if (mdt_members_init(&it, img, type, MDT_MEMBERS_ALL) == 0)
 *         while ((e = mdt_members_next(&tok, &name, &it)) != MDT_ITEROVER)
 *             if (e == 0)
 *                 ... tok, name ...
 *             // else: a member that cannot be read, passed over
 */
#ifndef MDTOOLS_MEMBERS_H
#define MDTOOLS_MEMBERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mdtools/errors.h>
#include <mdtools/tables.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mdt_image mdt_image;

/* Which members an iterator gives (or them together): fields, methods,
 * properties, events, in that order; within each kind in the order of
 * the runs (a property or event run per map row, in row order). */
#define MDT_MEMBERS_FIELDS 0x1u
#define MDT_MEMBERS_METHODS 0x2u
#define MDT_MEMBERS_PROPERTIES 0x4u
#define MDT_MEMBERS_EVENTS 0x8u
#define MDT_MEMBERS_ALL 0xFu

/* An iterator over the members of one TypeDef: a value that allocates
 * nothing (put it on the stack). Set it to MDT_MEMBERS_INIT before
 * mdt_members_init; its fields after `version` are private. */
typedef struct mdt_members {
    unsigned version; /* MDT_MEMBERS_VERSION */
    const mdt_image *img;
    uint32_t type;       /* the TypeDef token */
    uint8_t kinds;       /* MDT_MEMBERS_* asked for */
    uint8_t step;        /* the kind being walked, 0 to 4 (done) */
    uint8_t open;        /* whether that kind's walk has started */
    uint8_t direct;      /* no Ptr table: positions are rids */
    uint32_t pos, end;   /* the current run's positions [pos, end) */
    uint32_t given, cap; /* members given of this kind, at most cap */
    uint32_t errors;     /* unreadable members of the current run */
    mdt_find map;        /* PropertyMap/EventMap rows of the type */
} mdt_members;

#define MDT_MEMBERS_VERSION 1
#define MDT_MEMBERS_INIT                                                                           \
    {                                                                                              \
        MDT_MEMBERS_VERSION, NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,                                   \
        {                                                                                          \
            0                                                                                      \
        }                                                                                          \
    }

/* Start iterating the members `kinds` of TypeDef `typedef_token`. Errors:
 * MDT_EINVAL (no iterator or image, an iterator not set to
 * MDT_MEMBERS_INIT's version, not a TypeDef token, no kind asked for),
 * MDT_ENOTFOUND (no such TypeDef row), MDT_ETRUNC (the row lies beyond the
 * tables stream). */
int mdt_members_init(mdt_members *it, const mdt_image *img, uint32_t typedef_token, unsigned kinds);

/* The next member: its token (Field, MethodDef, Property or Event) in
 * *member and, when name is not NULL, its name (borrowed from the image,
 * NUL-terminated). MDT_ITEROVER when there are no more (not recorded as an
 * error). Any other code is the located error of a member or run that
 * cannot be read, which the iterator has passed over: call again to go on.
 * Bounded on damaged tables: a run gives up after 16 unreadable members,
 * and a kind gives at most as many members as its table has rows (runs of
 * overlapping map rows say some twice). Errors: MDT_EBADIMAGE (a run's
 * start outside its table, a Ptr row naming no row, a name beyond
 * #Strings), MDT_ETRUNC (a member, Ptr or map row beyond the tables
 * stream, or the row ending a run), MDT_ENOTFOUND (a position beyond the
 * table), MDT_ENOHEAP (no #Strings heap), MDT_EINVAL (an iterator that
 * was not started). */
int mdt_members_next(uint32_t *member, const char **name, mdt_members *it);

/* The next member named `name`: mdt_members_next passing over the others,
 * their names compared in place (no call a member where the run has no
 * Ptr table: what a lookup by name over a large type needs). Returns as
 * mdt_members_next: 0, MDT_ITEROVER at the end, or the error of an
 * unreadable member passed over (call again to go on). Errors: those of
 * mdt_members_next (MDT_EBADIMAGE, MDT_ETRUNC, MDT_ENOTFOUND,
 * MDT_ENOHEAP), and MDT_EINVAL for no name or an iterator not started. */
int mdt_members_next_named(uint32_t *member, const char *name, mdt_members *it);

/* What a TypeDef is, as C# declares it (doc/names.md): an interface by
 * its flags (II.23.1.15 ClassSemanticsMask); otherwise by its base type's
 * name (a TypeDef or TypeRef, read here, not resolved): System.Enum for
 * an enum, System.ValueType for a struct (but System.Enum itself),
 * System.MulticastDelegate for a delegate; a class otherwise (no base, a
 * TypeSpec base, another name). */
typedef enum mdt_type_kind {
    MDT_KIND_CLASS = 0,
    MDT_KIND_INTERFACE = 1,
    MDT_KIND_STRUCT = 2,
    MDT_KIND_ENUM = 3,
    MDT_KIND_DELEGATE = 4,
} mdt_type_kind;

/* The kind of TypeDef `typedef_token` (MDT_KIND_CLASS on failure). Errors:
 * MDT_EINVAL (no output or image, not a TypeDef token), MDT_ENOTFOUND (no
 * such row, or an Extends cell naming a row beyond its table), MDT_ETRUNC
 * (the row, or its base type's, lies beyond the tables stream),
 * MDT_EBADIMAGE (a name beyond #Strings), MDT_ENOHEAP (no #Strings
 * heap). */
int mdt_typedef_kind(mdt_type_kind *kind, const mdt_image *img, uint32_t typedef_token);

/* The kind's word as C# writes it: "class", "interface", "struct",
 * "enum", "delegate"; "class" for a value outside the enum. */
const char *mdt_type_kind_name(mdt_type_kind kind);

/* Whether `token` names a type or a member, the tokens a metadata name is
 * written for (doc/names.md): its table is TypeDef, TypeRef, TypeSpec,
 * ExportedType, MethodDef, Field, MemberRef, MethodSpec, Property or
 * Event. Only the table byte is read: the row is not looked up. */
bool mdt_token_is_type_or_member(uint32_t token);

/* The GenericParam rows of a TypeDef or MethodDef (ECMA-335 II.22.20: the
 * rows whose Owner is `owner`), in Number order (rows of one Number in row
 * order): a talloc array of row numbers under mem_ctx in *rids (NULL when
 * there are none), their number in *n. With rids NULL it counts them and
 * allocates nothing. The rows are found by a lookup on the Owner column
 * (a binary search when the table is sorted, as II.22 requires). At most
 * 65536 (Number is 2 bytes): an owner claimed by more rows is damaged.
 * On failure *n is 0 and *rids NULL. Errors: MDT_EINVAL (no image, no n,
 * or owner not a TypeDef or MethodDef token), MDT_ENOMEM, MDT_EBADIMAGE
 * (more than 65536 rows claim the owner), and the located error of a
 * GenericParam row that cannot be read (MDT_ETRUNC, MDT_ENOTFOUND).
 * Thread-safe on an open image. */
int mdt_generic_params(void *mem_ctx, uint32_t **rids, size_t *n, const mdt_image *img,
                       uint32_t owner);

#ifdef __cplusplus
}
#endif
#endif
