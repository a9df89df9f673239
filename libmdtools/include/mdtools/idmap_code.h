/* mdtools: the code ranges of runtime-ID maps (<mdtools/idmap.h>): which
 * function's code lies at an address, for a profiler's sampled
 * instruction pointers.
 *
 * A profiler records each range of JIT-compiled or ReadyToRun code it
 * learns of (GetCodeInfo2 after JITCompilationFinished, or an
 * EnumJITedFunctions item) with mdt_idmap_code_add(), forgets it with
 * mdt_idmap_code_remove() when the code is freed, and maps a sampled
 * instruction pointer to the function incarnation it belongs to with
 * mdt_idmap_ip_lookup(), in a signal handler if need be. The map's
 * sequence numbers, generations, concurrency and return values are those
 * of <mdtools/idmap.h>, which this header includes (and which includes
 * this one: either is enough). The attach rules of <mdtools/idmap.h>
 * hold for code ranges too (a range goes with its function's
 * incarnation), and on top of them:
 * - a code range names a FunctionID, not what it stands for: after an
 *   unload the runtime may reuse the ID for another method, so a
 *   code_add neither keeps a function's incarnation alive through a late
 *   unload nor joins an incarnation newer than itself (it is refused);
 * - a code_add at s says that at s its addresses held that function's
 *   code, whatever its outcome: the older ranges it overlaps are gone
 *   (code is freed as a whole: over their whole span), and no code_add
 *   older than s over those addresses is applied any more. A live range
 *   refuses older code_adds over itself; code that leaves the map, or is
 *   refused, leaves a tombstone that does the same: removed code at the
 *   removal's seq, replaced code at the replacing add's seq, code gone
 *   with its function's incarnation at its own seq, a refused add at its
 *   seq over its span (mdt_idmap_code_remove() says how they are kept);
 *
 * Implemented in libmdtools/tokens/ (ranges.c; tokens/README.md, "Code
 * ranges", says how a lookup stays a few cache lines). */
#ifndef MDTOOLS_IDMAP_CODE_H
#define MDTOOLS_IDMAP_CODE_H

#include <stddef.h>
#include <stdint.h>

#include <mdtools/idmap.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A code range [start, start + size) of a function incarnation. */
typedef struct mdt_idmap_code_range {
    uintptr_t start;
    size_t size;
    uintptr_t function_id;
    uint64_t function_gen;
} mdt_idmap_code_range;

/* ---- Writers ------------------------------------------------------------ */
/* As every writer call of <mdtools/idmap.h>: any thread, serialized
 * internally, never from a signal handler; MDT_EINVAL and MDT_ENOMEM as
 * that header says. */

/* Record that [start, start + size) holds code of the *live* function
 * `function_id` (GetCodeInfo2) at `seq`. Ranges overlapping it that are
 * older than `seq` go, whatever the outcome (the memory was reused; see
 * the rules above). SUPERSEDED when a newer range overlaps it, a
 * tombstone at or after `seq` covers part of it (code freed or replaced
 * there since), or the function was unloaded at or after `seq`; the
 * refused range then leaves a tombstone at `seq` over its span. It is
 * also SUPERSEDED when `seq` is older than the function's generation (the
 * code may be of an earlier incarnation). The range goes away with its
 * function's incarnation, leaving a tombstone at its own seq. Errors: MDT_ENOTFOUND when the
 * function is not live in the map (older overlapping ranges still go and
 * the span gets a tombstone at `seq`: the memory held other code then),
 * MDT_EINVAL for size 0 or overflow (and as for every writer call),
 * MDT_ENOMEM.
 * Thread-safety: writer (serialized). Async-signal-safe: no. */
int mdt_idmap_code_add(mdt_idmap *map, uintptr_t start, size_t size, uintptr_t function_id,
                       uint64_t seq);

/* Forget the range starting at `start` (code freed, e.g. after ReJIT). It
 * leaves a tombstone over the range (over `start` alone when the map knows
 * no range there: then APPLIED, or DUPLICATE when a tombstone at least as
 * new covers it) so that a code_add generated before it cannot bring the
 * code back; a newer range there makes it SUPERSEDED.
 * Code tombstones: every address keeps the newest seq of the tombstones
 * over it (one over older ones raises only the addresses they share); a
 * range applied over addresses clears theirs (it refuses older code_adds
 * itself, and leaves a tombstone at least as new when it goes).
 * mdt_idmap_retire() drops them below its watermark with the others.
 * Without it they stay bounded: at most 1024 plus one per live range
 * pieces of equal seq (24 bytes each); past that, neighbouring pieces
 * merge into one over both and the gap between them, with the newer seq,
 * which may refuse an older code_add in that gap: unknown, never dead
 * code (a refused code_add still removes the older ranges it overlaps).
 * Errors: MDT_EINVAL, MDT_ENOMEM (as for every writer call, above).
 * Thread-safety: writer (serialized). Async-signal-safe: no. */
int mdt_idmap_code_remove(mdt_idmap *map, uintptr_t start, uint64_t seq);

/* ---- Readers ------------------------------------------------------------ */
/* As every reader of <mdtools/idmap.h>: any thread, concurrently with
 * writers; no blocking, allocation or lock, a bounded number of steps. */

/* The code range containing `ip`. Errors: MDT_ENOTFOUND, MDT_EINVAL.
 * Async-signal-safe: yes. */
int mdt_idmap_ip_lookup(mdt_idmap_code_range *out, const mdt_idmap *map, uintptr_t ip);

/* Counters for a reader that caches mdt_idmap_ip_lookup()'s answers (a
 * sampling profiler's per-thread cache of return addresses), as a
 * sequence lock's: each is odd while the writer changes the ranges and
 * even otherwise.
 * - mdt_idmap_code_changes(): every change (a range added, removed,
 *   replaced, or moved to another incarnation of its function);
 * - mdt_idmap_code_removals(): every change that may remove or alter a
 *   range that is there (all but an add that overlaps nothing).
 * An answer of mdt_idmap_ip_lookup() made after reading an even value V
 * is still the map's answer for that address while the same counter reads
 * V: a range found, under mdt_idmap_code_removals(); MDT_ENOTFOUND, under
 * mdt_idmap_code_changes(). An odd value: do not cache. They count from 0
 * for a new map; NULL gives 0. No errors.
 * Async-signal-safe: yes. Thread-safety: any thread. */
uint64_t mdt_idmap_code_changes(const mdt_idmap *map);
uint64_t mdt_idmap_code_removals(const mdt_idmap *map);

/* As mdt_idmap_ip_lookup(), but on a miss call the map's miss callback
 * once (MDT_IDMAP_IP, the address) and look again: the lazy catch-up of
 * <mdtools/idmap.h>. A miss on a thread that holds the map's mutex (inside
 * an mdt_idmap_module_each() callback) returns MDT_EINVAL and calls
 * nothing. Errors: MDT_ENOTFOUND (not known, also after the callback),
 * MDT_EINVAL. Async-signal-safe: NO (the callback calls the runtime and the
 * writers). Thread-safety: any thread. */
int mdt_idmap_ip_fetch(mdt_idmap_code_range *out, mdt_idmap *map, uintptr_t ip);

#ifdef __cplusplus
}
#endif
#endif
