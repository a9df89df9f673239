/* mdinspect: finding types and members by name, for arguments (`type
 * NAME`, `token Type::member`), patterns (`types GLOB`, `find PATTERN`) and
 * completion.
 *
 * A type's key is its name as metadata spells it, outermost type first:
 * `Namespace.Name+Nested`, arity suffixes kept (``List`1``), nothing
 * escaped (reflection syntax without escapes). Each module gets an index of
 * its TypeDefs sorted by key in natural order (digit runs by value), built
 * on first use and kept with the module.
 *
 * Name lookup (`type NAME`, `token NAME`) takes what the commands print
 * as well as metadata names (rules at mdi_types_named). A literal token
 * (0x02000005) is taken as it is. */
#ifndef MDINSPECT_INDEX_H
#define MDINSPECT_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "state.h"

typedef struct mdi_typeent {
    uint32_t token;
    const char *key; /* Ns.Name+Nested */
    uint32_t keylen;
    uint32_t nslen; /* length of the outermost type's namespace (0: none) */
    bool digits;    /* the key has a digit (natural order needs more than strcmp) */
} mdi_typeent;

typedef struct mdi_index {
    mdi_typeent *types; /* sorted by key */
    size_t ntypes;
    size_t nbad; /* TypeDefs whose name could not be read (left out) */
} mdi_index;

/* The order of the index: strcmp, except that runs of digits compare by
 * their value (`=12` before `=1000`). */
int mdi_natural_cmp(const char *a, const char *b);

/* The module's type index (built on first use; NULL when out of memory). */
const mdi_index *mdi_index_of(mdi_module *m);

/* The TypeDef whose key is exactly `key` (binary search; the lowest token
 * when several are), or 0. */
uint32_t mdi_index_find(mdi_module *m, const char *key);

/* Where the simple name (after the namespace and enclosing types) starts. */
size_t mdi_key_simple(const mdi_typeent *t);

/* The TypeDefs NAME names in module m, by the rules below: a talloc
 * array under mem (NULL when none), their number in *n. The rules, in
 * order; the first that matches any type decides:
 *   0. the metadata name (``Ns.Dictionary`2``, '/' or '+' for nesting);
 *   1. the name as the commands print it: `Dictionary<TKey,TValue>`,
 *      `Dictionary<,>` (any parameter names, the same number of them);
 *   2. the name without arity suffixes (`Ns.Dictionary`);
 *   3. the metadata name without the namespace (`Action`, ``Action`1``);
 *   4. without the namespace, as printed or without arity suffixes
 *      (`Dictionary<,>`, `Dictionary`, `List+Enumerator`);
 *   5. any of these in any case;
 *   6. a nested type by its innermost names alone (`KeyCollection`:
 *      every enclosing type's, listed when several), '.' read as '+'
 *      (`Middle.Inner`, `Ns.Outer.Middle`: C#'s form).
 * A C# keyword names its type (`int`: System.Int32), and C#'s form of a
 * nested type reads as the printed one (`Dictionary<TKey,TValue>.Enumerator`
 * as `Dictionary+Enumerator` with two parameters). */
uint32_t *mdi_types_named(void *mem, mdi_module *m, const char *name, size_t *n);

/* The same over every open module, rule by rule (an exact name in one
 * module beats a looser match in another): the matches' modules and
 * tokens as talloc arrays under mem; returns their number. */
size_t mdi_types_everywhere(mdi_state *st, void *mem, const char *name, mdi_module ***mods,
                            uint32_t **toks);

/* An argument naming one type: a TypeDef, TypeRef or TypeSpec token of the
 * current module, or a name (the rules above) in any open module, the
 * current module's match first when several modules have one. 0 with
 * *mod and *token set, or MDI_FAIL after reporting. */
int mdi_arg_type(mdi_state *st, const char *text, mdi_module **mod, uint32_t *token);

/* An argument naming tokens of the current module: a literal token of any
 * table (0xTTRRRRRR, checked against the table's rows; 0x70 user strings
 * against the #US heap), a type name, or Type::member (every member of that
 * name: overloads, a property and its field, ...). A talloc array under mem.
 * 0, or MDI_FAIL after reporting. */
int mdi_arg_tokens(mdi_state *st, void *mem, const char *text, uint32_t **toks, size_t *n);

/* Run one(st, token) for every token mdi_arg_tokens finds in text, stopping
 * early on Ctrl-C. MDI_OK when every call succeeded, else MDI_FAIL. */
int mdi_each_token(mdi_state *st, const char *text, int (*one)(mdi_state *st, uint32_t token));

/* What a TypeDef is, as mdt_typedef_kind says: "class", "interface",
 * "struct", "enum" or "delegate"; "class" when it cannot be read. */
const char *mdi_kind_name(const mdt_image *img, uint32_t type);

/* Whether a type matches a `types`/`find` glob: its key, its key without
 * arity suffixes, or (when the glob has no '.' or '+') its simple name
 * with or without the arity suffix. A glob without wildcards must match
 * all of one of those. */
bool mdi_type_matches(const mdi_typeent *t, const char *glob);

/* Glob matching as `types` and `find` do it: fnmatch, ignoring case when
 * the pattern has no upper-case letter. */
bool mdi_glob(const char *pattern, const char *s);
bool mdi_has_glob(const char *pattern);

#endif
