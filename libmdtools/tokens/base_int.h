/* What every unit of the runtime-ID maps (libmdtools/tokens/README.md)
 * shares below the map itself: how far apart data written by different
 * threads must lie, how the readers' hot paths are inlined, and the hash
 * every table is probed by. Layout rules for all of tokens/: every field
 * a reader may load is an _Atomic and is loaded and stored with explicit
 * orders; what a header marks "writer only" is touched only with the
 * writer mutex held. */
#ifndef MDT_TOKENS_BASE_INT_H
#define MDT_TOKENS_BASE_INT_H

#include <stdint.h>

#include "util/hash.h"

/* Data written by different threads is kept this far apart: x86 CPUs fetch
 * cache lines in adjacent pairs, so 64 bytes apart still interfere. */
#define IDM_SEP 128

/* For the reader hot paths: one function per public lookup. */
#define IDM_INLINE static inline __attribute__((always_inline))

static inline uint64_t idm_hash(uint64_t x)
{
    return mdt__mix64(x); /* pointers differ in middle bits only */
}

#endif
