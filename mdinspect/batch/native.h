/* mdinspect batch: native frames named (doc/profile-log.md, Frames):
 * `native:NAME:BUILDID+0xOFF[!ACTIVITY]` becomes `libc.so.6!memmove`,
 * `libcoreclr.so+0x3f2a10`, `[gc] libcoreclr.so+0x3f2a10`, or `[gc]`
 * for a plain `native!gc`.
 *
 *   elfsyms.c  one ELF file's build-id and function symbols (elfutils)
 *   native.c   the `#elf` lines of the input (shared by the threads), the
 *              files they name and the debug files found by build-id,
 *              and each thread's cache of native frames */
#ifndef MDINSPECT_BATCH_NATIVE_H
#define MDINSPECT_BATCH_NATIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "batch/batch.h"

/* ------------------------------------------------------------ elfsyms.c */

typedef struct mdb_elfsyms mdb_elfsyms;
/* Read the ELF file at path (a regular file; at most a few GiB): its
 * build-id and the function symbols of .symtab, else of .dynsym. 0, or -1
 * with the reason in err. Thread-safe (libelf keeps no state per thread
 * once initialised). */
int mdb_elfsyms_open(void *ctx, mdb_elfsyms **out, const char *path, char *err, size_t errlen);
/* Lower-case hex, "" when the file has none. */
const char *mdb_elfsyms_build_id(const mdb_elfsyms *s);
/* Whether the symbols came from .symtab (else from .dynsym, or none). */
bool mdb_elfsyms_has_symtab(const mdb_elfsyms *s);
/* The function symbol that covers addr (an address in the file's own
 * virtual addresses), or NULL. */
const char *mdb_elfsyms_lookup(const mdb_elfsyms *s, uint64_t addr);

/* ------------------------------------------------------------- native.c */

/* What the input's `#elf NAME:BUILDID PATH` lines said, and the files
 * they led to: one per run, shared by its threads (under a lock). Debug
 * files are looked for as DIR/.build-id/xx/rest.debug in each of dirs
 * (NULL: /usr/lib/debug). */
typedef struct mdb_natives mdb_natives;
mdb_natives *mdb_natives_new(void *ctx, char **dirs, size_t ndirs);
/* The `#elf` lines of a block, registered by the thread that reads the
 * input, before any thread resolves the block: a native frame on line L
 * is named from the first `#elf` line of its NAME:BUILDID before L, so
 * the answer does not depend on which thread resolves which block.
 * `hash`: the block's first '#' (there is nothing to do without one);
 * b->first_lineno set. */
void mdb_natives_scan(mdb_natives *n, const mdb_block *b, const char *hash);

/* Whether a frame's text is a native frame (`native`, `native:...`,
 * `native!...`). */
static inline bool mdb_is_native_frame(const char *s, size_t n)
{
    return n >= 6 && __builtin_memcmp(s, "native", 6) == 0 &&
           (n == 6 || s[6] == ':' || s[6] == '!');
}

/* The resolver's side (resolve.c): its thread's cache of native frames. */
typedef struct mdb_native_cache mdb_native_cache;
mdb_native_cache *mdb_native_cache_new(void *ctx, bool want_json);
void mdb_native_cache_use(mdb_native_cache *c, mdb_natives *n);
/* The frame of a native frame's text on line `lineno`: always an answer
 * (MDB_SPECIAL, or MDB_BAD_FRAME for a text that does not read). */
const mdb_frame *mdb_native_resolve(mdb_native_cache *c, const char *s, size_t n, uint64_t lineno);
/* The bytes the cache holds (counted against batch's budget, --cache-mb),
 * and forgetting it all when the thread's share of the budget is full. */
size_t mdb_native_bytes(const mdb_native_cache *c);
size_t mdb_native_count(const mdb_native_cache *c); /* frames cached */
void mdb_native_forget(mdb_native_cache *c);
/* A warning the last frames raised, once per run (a file of another
 * build, a damaged file), or NULL; taken by the caller. */
const char *mdb_native_warning(mdb_native_cache *c);

/* resolve.c: a resolver's native frames come from `n`; records are on
 * line `lineno` (record.c sets it for each line). */
void mdb_resolver_use_natives(mdb_resolver *r, mdb_natives *n);
void mdb_resolver_set_line(mdb_resolver *r, uint64_t lineno);
const char *mdb_resolver_native_warning(mdb_resolver *r);

#endif
