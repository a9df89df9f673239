/* mdinspect batch, table.c: the bump arena and the hash table every cache
 * of a run uses, and the memory budget the caches share (batch.h lists
 * the pieces of batch). */
#ifndef MDINSPECT_BATCH_TABLE_H
#define MDINSPECT_BATCH_TABLE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A bump allocator for strings and cached records: chunks under one talloc
 * context, never freed one by one (mdb_arena_reset frees them all). */
typedef struct mdb_arena {
    void *ctx;
    char *p;
    size_t left;
    bool huge;              /* chunks of a huge page each (the frames a run keeps) */
    size_t bytes;           /* bytes of its chunks */
    _Atomic size_t *shared; /* when not NULL: also counts its chunks' bytes here */
} mdb_arena;

void mdb_arena_init(mdb_arena *a, void *ctx);
void *mdb_arena_alloc(mdb_arena *a, size_t n); /* 8-aligned; NULL when out of memory */
/* Where the next allocation starts, with at least n bytes free there (n at
 * most 256 KiB): write into it, then allocate what was written. NULL when
 * out of memory. */
void *mdb_arena_room(mdb_arena *a, size_t n);
char *mdb_arena_strndup(mdb_arena *a, const char *s, size_t n);
void mdb_arena_reset(mdb_arena *a);

/* An open-addressing hash table of (key bytes -> value pointer); keys are
 * copied into the table's arena. */
typedef struct mdb_slot {
    uint64_t hash;
    const char *key;
    uint32_t len;
    void *value;
} mdb_slot;

typedef struct mdb_table {
    mdb_slot *slots;
    size_t mask, n;
    mdb_arena keys;
    void *ctx;
} mdb_table;

uint64_t mdb_hash(const void *key, size_t len);
int mdb_table_init(mdb_table *t, void *ctx, size_t size_hint);
/* The value stored for a key (hash from mdb_hash), or NULL. */
void *mdb_table_get(const mdb_table *t, uint64_t hash, const void *key, size_t len);
/* The slot of a key, or NULL; its copy of the key stays where it is until
 * mdb_table_clear, however the table grows. */
const mdb_slot *mdb_table_slot(const mdb_table *t, uint64_t hash, const void *key, size_t len);
/* Store a value for a key that is not there. -1 when out of memory. */
int mdb_table_put(mdb_table *t, uint64_t hash, const void *key, size_t len, void *value);
void mdb_table_clear(mdb_table *t);
/* Empty the table and give back its memory (its slots shrink to the size
 * it started with). -1 when out of memory (the table is then unusable). */
int mdb_table_reset(mdb_table *t);
/* The bytes a table holds: its slots and its keys. */
size_t mdb_table_bytes(const mdb_table *t);

/* How much the caches of a run may hold (mdinspect(1), --cache-mb): half
 * for the frames modules keep (shared by the threads), half for the
 * threads' own caches (frames cached by their text, type names), which
 * each thread starts over when its share is full. */
typedef struct mdb_budget {
    size_t total;
    size_t kept_max;     /* frames kept by modules, all threads together */
    _Atomic size_t kept; /* ... held now (chunks of the threads' arenas) */
    size_t thread_max;   /* each thread's own caches */
} mdb_budget;

/* The default: 1/8 of the memory this process may use (the machine's, or
 * its cgroup's limit when lower), between 64 MiB and 4 GiB. */
size_t mdb_default_cache_bytes(void);
void mdb_budget_init(mdb_budget *b, size_t total, unsigned threads);

#endif
