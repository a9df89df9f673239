/* The name indexes of one module (index.c): how resolution finds a type by
 * namespace and name without scanning tables. Each index is built by the
 * first reader that needs it and published with a compare-and-swap on its
 * pointer in the module record (modset_int.h says why no lock). */
#ifndef MDT_TYPEREF_INDEX_INT_H
#define MDT_TYPEREF_INDEX_INT_H

#include <stdbool.h>
#include <stdint.h>

struct mdt_image;
struct tr_mod;

/* One entry of an open-addressing hash table keyed by (key2, ns, name).
 * The names themselves are read back from the row on a hash match: 12 bytes
 * an entry keep the tables small (fewer pages to fault in). */
struct tr_hent {
    uint32_t hash;
    uint32_t rid;  /* 0: empty slot */
    uint32_t key2; /* enclosing TypeDef rid for nested entries, else 0 */
};

/* A name index of one image. Immutable once published. */
struct tr_htab {
    uint32_t mask; /* capacity - 1 */
    uint8_t table; /* TypeDef or ExportedType: where the names are */
    struct tr_hent e[];
};

/* The namespace filter of one image: hashes (never 0) of every namespace
 * its TypeDef and ExportedType rows name. Immutable once published. */
struct tr_nsset {
    uint32_t mask, n;
    uint32_t h[];
};

/* A type name to look up, hashed once and then probed in any number of
 * modules' indexes. */
struct tr_key {
    const char *ns, *name;
    uint64_t state;  /* hash state after (ns, name): nested keys add the enclosing rid */
    uint32_t hash;   /* top-level key */
    uint32_t nshash; /* namespace alone (the filter) */
};

/* Rows of `table` that can actually be read (a damaged image may declare
 * more rows than its tables stream holds: those all fail with MDT_ETRUNC).
 * Every walk over a table here is bounded by this, not by the declared count. */
uint32_t tr_rows(const struct mdt_image *img, unsigned table);
/* Hash ns and name (borrowed: the key points at them) into k. img: the
 * image whose #Strings heap they lie in, when they do (faster), or NULL. */
void tr_key_init(struct tr_key *k, const struct mdt_image *img, const char *ns, const char *name);
/* The indexes of module m, built on first use; NULL when it has no image or
 * the index could not be built (out of memory). */
const struct tr_htab *tr_idx_typedefs(struct tr_mod *m);
const struct tr_htab *tr_idx_nested(struct tr_mod *m);
const struct tr_htab *tr_idx_exported(struct tr_mod *m);
/* Free m's indexes (the module is being freed: nobody can read them). */
void tr_index_free(struct tr_mod *m);
/* Lookups: the rid, or 0 (also when the index is missing). */
uint32_t tr_htab_find(const struct tr_mod *m, const struct tr_htab *t, const struct tr_key *k);
uint32_t tr_find_typedef(struct tr_mod *m, const struct tr_key *k);
uint32_t tr_find_nested(struct tr_mod *m, uint32_t enclosing, const struct tr_key *k);
uint32_t tr_find_exported(struct tr_mod *m, const struct tr_key *k);
/* False when module m surely has no top-level TypeDef or ExportedType in
 * k's namespace (true when it may, or when the filter cannot be built). */
bool tr_may_define(struct tr_mod *m, const struct tr_key *k);
/* TypeRef row rid: its ResolutionScope token and names, as mdt_row_get,
 * mdt_row_token and mdt_row_string would read them (0), or -1 when one of
 * them fails (the error record then says why). */
int tr_typeref_row(const struct mdt_image *img, uint32_t rid, uint32_t *scope, const char **ns,
                   const char **name);

#endif
