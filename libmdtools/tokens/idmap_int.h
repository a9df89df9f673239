/* Private structures of the runtime-ID maps (libmdtools/tokens/README.md
 * explains the design). Layout rules: every field a reader may load is an
 * _Atomic and is loaded/stored with explicit orders; `seq` in a slot head and
 * everything under "writer only" is touched only with the writer mutex held. */
#ifndef MDT_TOKENS_IDMAP_INT_H
#define MDT_TOKENS_IDMAP_INT_H

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mdtools/idmap.h>

/* Longest probe sequence a table may hold; an insert that would need more
 * grows the table first. It bounds every reader's steps. */
#define IDM_MAX_PROBE 128u
/* Per-thread reader slots (one cache line each, per map) and the shared
 * counters used by threads that found no free slot (powers of two). */
#define IDM_NREADERS 256u
#define IDM_NSTRIPES 16u
/* Code ranges per leaf of the range index, and its fan-out above the leaves
 * (one cache line of keys). */
#define IDM_LEAF_MAX 64u
#define IDM_FANOUT 8u
#define IDM_RLEVELS 12u
/* Nesting limit of describe/descriptor and of dependency walks. */
#define IDM_MAX_DEPTH 32u
/* Retired memory that triggers a grace period at the end of a writer call. */
#define IDM_RETIRE_COUNT 512u
#define IDM_RETIRE_BYTES (4u << 20)

/* Data written by different threads is kept this far apart: x86 CPUs fetch
 * cache lines in adjacent pairs, so 64 bytes apart still interfere. */
#define IDM_SEP 128

/* For the reader hot paths: one function per public lookup. */
#define IDM_INLINE static inline __attribute__((always_inline))

/* Kinds of things with lifetimes. Domains and assemblies have no records,
 * only tombstones and dependents. */
enum idm_kind { K_MODULE = 0, K_CLASS = 1, K_FUNC = 2, K_DOMAIN = 3, K_ASSEMBLY = 4, K_NKINDS };

/* ---- reader sections and deferred free (grace.c) ---------------------- */

/* A reader slot word: the nesting count in the low 32 bits (a signal handler
 * may nest a section inside the one it interrupted) and, while the count is
 * not 0, the phase of the grace-period clock when the outermost section
 * began. */
#define IDM_NEST_MASK 0xffffffffull
#define IDM_PHASE (1ull << 32)

struct idm_rdslot {
    alignas(IDM_SEP) _Atomic uint64_t ctr;
};

struct idm_stripe {
    alignas(IDM_SEP) _Atomic unsigned long n[2];
};

struct idm_grace {
    /* Read by every reader; written by writers at phase flips only. */
    alignas(64) _Atomic uint64_t gp; /* IDM_PHASE bit | 1 */
    _Atomic bool asym;               /* writers issue membarrier(); readers need no fence */
    struct idm_rdslot slot[IDM_NREADERS];
    struct idm_stripe stripe[IDM_NSTRIPES];
    /* writer only */
    alignas(IDM_SEP) void **retired;
    size_t nretired, capretired;
    size_t retired_bytes;
    uint64_t periods;
};

/* This thread's reader slot, index + 1 (0: none yet; IDM_NO_SLOT: none
 * free). Initial-exec TLS: reading it is one instruction, never allocates
 * and is async-signal-safe, also in a dlopen()ed library. The index is
 * process-wide (grace.c keeps the registry); every map has its own slots. */
#define IDM_NO_SLOT 0xffffffffu
extern _Thread_local unsigned idm_tls_reader __attribute__((tls_model("initial-exec")));
/* grace.c: the first section of a thread (claims a slot), and sections of
 * threads without one (a shared stripe, chosen by stack address). */
unsigned idm_enter_slow(struct idm_grace *g);
void idm_leave_slow(struct idm_grace *g, unsigned tok);

/* Enter a reader section; the token goes back to idm_leave(). The fast path
 * is a load and a store to the thread's own cache line: when the map could
 * register for membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED), writers issue
 * the barrier that orders this store before the reader's loads (grace.c);
 * otherwise the reader fences. Threads without a slot count themselves in a
 * shared stripe with atomic read-modify-writes (idm_enter_slow). */
IDM_INLINE unsigned idm_enter(const struct idm_grace *cg)
{
    struct idm_grace *g = (struct idm_grace *)cg;
    unsigned r = idm_tls_reader;
    if (__builtin_expect(r - 1 >= IDM_NREADERS, 0))
        return idm_enter_slow(g);
    _Atomic uint64_t *c = &g->slot[r - 1].ctr;
    uint64_t v = atomic_load_explicit(c, memory_order_relaxed);
    if ((v & IDM_NEST_MASK) == 0)
        v = atomic_load_explicit(&g->gp, memory_order_acquire);
    else
        v++;
    atomic_store_explicit(c, v, memory_order_relaxed);
    if (__builtin_expect(atomic_load_explicit(&g->asym, memory_order_relaxed), 1))
        atomic_signal_fence(memory_order_seq_cst);
    else
        atomic_thread_fence(memory_order_seq_cst);
    return r - 1;
}

IDM_INLINE void idm_leave(const struct idm_grace *cg, unsigned tok)
{
    struct idm_grace *g = (struct idm_grace *)cg;
    if (__builtin_expect(tok >= IDM_NREADERS, 0)) {
        idm_leave_slow(g, tok);
        return;
    }
    _Atomic uint64_t *c = &g->slot[tok].ctr;
    uint64_t v = atomic_load_explicit(c, memory_order_relaxed);
    atomic_store_explicit(c, v - 1, memory_order_release);
}

/* Writer side. */
void idm_grace_init(struct idm_grace *g);
void idm_grace_wait(struct idm_grace *g);
int idm_retire(struct idm_grace *g, void *p, size_t bytes);
void idm_reclaim(struct idm_grace *g, bool force);
void idm_grace_destroy(struct idm_grace *g);

/* ---- slot tables (table.c) -------------------------------------------- */

#define META_LIVE 0x1u
#define META_RANGES 0x2u /* writer only: a function with code ranges */
#define META_OOL 0x4u    /* type arguments out of line */
#define META_SHAPE_SHIFT 4
#define META_PRIM_SHIFT 8
#define META_RANK_SHIFT 16

/* The head every slot starts with. `key` is set once (0 = empty) and never
 * changes in a table instance; `ver` is a seqlock, odd while the payload is
 * rewritten; `gen` is the incarnation (its creating seq); `seq` (writer only)
 * the newest seq applied (live) or the unload seq (dead). */
struct idm_head {
    _Atomic uintptr_t key;
    _Atomic uint32_t ver;
    _Atomic uint32_t meta;
    _Atomic uint64_t gen;
    uint64_t seq;
};

/* Out-of-line type-argument array; immutable once published. */
struct idm_args {
    size_t n;
    uintptr_t a[];
};

/* Out-of-line module path; immutable once published. */
struct idm_path {
    size_t len;
    char s[];
};

struct idm_cslot {
    struct idm_head h;
    _Atomic uintptr_t module;
    _Atomic uint32_t token;
    _Atomic uint32_t nargs;
    _Atomic uintptr_t args[2]; /* inline when nargs <= 2, else args[0] = struct idm_args * */
};

struct idm_fslot {
    struct idm_head h;
    _Atomic uintptr_t module;
    _Atomic uintptr_t cls;
    _Atomic uint32_t token;
    _Atomic uint32_t nargs;
    _Atomic uintptr_t args; /* inline when nargs <= 1, else struct idm_args * */
};

struct idm_mslot {
    struct idm_head h;
    _Atomic uintptr_t image;
    _Atomic uintptr_t appdomain;
    _Atomic uintptr_t assembly;
    _Atomic uintptr_t identity;
    _Atomic uintptr_t path; /* struct idm_path * or 0 */
    _Atomic uint64_t mvid[2];
    unsigned char pad[128 - 32 - 7 * 8];
};

#define CSLOT_INLINE 2u
#define FSLOT_INLINE 1u

/* Table and index headers: what readers load on every lookup, then, IDM_SEP
 * bytes further, the counters the writer updates on every call, so that
 * those updates never disturb the readers' copy. */
#define IDM_HDR (2u * IDM_SEP)

struct idm_tab {
    size_t mask;      /* capacity - 1 */
    size_t slot_size;
    unsigned char *slots;
    size_t bytes;     /* allocation size */
    /* writer only */
    alignas(IDM_SEP) size_t used; /* occupied slots (live + dead) */
    size_t live;
};

static inline uint64_t idm_hash(uint64_t x)
{
    /* murmur3's 64-bit finalizer: pointers differ in middle bits only. */
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

struct idm_tab *idm_tab_new(size_t cap, size_t slot_size);
static inline struct idm_head *idm_slot(const struct idm_tab *t, size_t i)
{
    return (struct idm_head *)(t->slots + i * t->slot_size);
}

/* Reader (and writer): the slot holding key, or NULL, in a table of
 * slot_size-byte slots. Inline: it is most of a lookup, and the fewer
 * instructions a lookup has, the more consecutive lookups' cache misses the
 * CPU keeps in flight. The header is read once, before the first acquire
 * load (which would make the compiler re-read it on every probe), and a
 * constant slot_size makes the slot address a shift. No bound below
 * IDM_MAX_PROBE is needed for small tables: a probe that wraps around
 * only visits slots again. */
IDM_INLINE struct idm_head *idm_tab_find_sz(const struct idm_tab *t, uintptr_t key,
                                            size_t slot_size)
{
    size_t mask = t->mask, i = (size_t)idm_hash(key) & mask;
    unsigned char *slots = t->slots;
    for (unsigned n = 0; n < IDM_MAX_PROBE; n++, i = (i + 1) & mask) {
        struct idm_head *h = (struct idm_head *)(slots + i * slot_size);
        uintptr_t k = atomic_load_explicit(&h->key, memory_order_acquire);
        if (k == key)
            return h;
        if (k == 0)
            return NULL;
    }
    return NULL;
}

IDM_INLINE struct idm_head *idm_tab_find(const struct idm_tab *t, uintptr_t key)
{
    return idm_tab_find_sz(t, key, t->slot_size);
}
/* Writer: the slot holding key, or the empty slot where it would go (*fresh
 * set), or NULL when the table must grow first. */
struct idm_head *idm_tab_place(struct idm_tab *t, uintptr_t key, bool *fresh);
/* Writer: a copy of t with capacity cap (doubled until every kept record
 * fits its probe bound), without dead records whose seq is below `below`. */
struct idm_tab *idm_tab_rebuild(const struct idm_tab *t, size_t cap, uint64_t below);
size_t idm_cap_for(size_t n);

/* Reverse index slot: one word, 0 = empty, IDM_RDEL = deleted, else the
 * high 32 bits of the content hash (forced odd) over the index of the
 * record's slot in the forward table instance the index was built for. The
 * reader verifies a candidate by reading that record. */
#define IDM_RDEL UINT64_MAX
#define IDM_MAX_SLOTS (UINT32_C(1) << 31)

static inline uint64_t idm_rword(uint64_t h, size_t idx)
{
    return (h >> 32 | 1u) << 32 | (uint64_t)idx;
}

/* TypeDef presence: (module, token) -> number of live classes. */
struct idm_pslot {
    _Atomic uintptr_t module; /* 0 = empty; set once */
    _Atomic uint32_t token;
    _Atomic uint32_t count;
};

struct idm_itab {
    size_t mask;
    size_t slot_size;
    unsigned char *slots;
    size_t bytes;
    struct idm_tab *tab; /* reverse indexes: the forward table they index */
    /* writer only */
    alignas(IDM_SEP) size_t used; /* occupied slots, deleted ones included */
    size_t live;
};

struct idm_itab *idm_itab_new(size_t cap, size_t slot_size);

/* ---- writer-only hash map (wmap.c) ------------------------------------ */

struct idm_went {
    uintptr_t id;
    uint64_t val;
    uint32_t kind; /* kind + 1; 0 = empty */
};

struct idm_wmap {
    struct idm_went *e;
    size_t cap, n;
};

uint64_t *idm_wmap_get(const struct idm_wmap *m, int kind, uintptr_t id);
int idm_wmap_put(struct idm_wmap *m, int kind, uintptr_t id, uint64_t val);
void idm_wmap_del(struct idm_wmap *m, int kind, uintptr_t id);
void idm_wmap_free(struct idm_wmap *m);

/* Dependents: (kind, ID) of a thing and a kind of record -> the IDs of the
 * records of that kind that named it when they were created. An entry
 * stands for "whatever record now has this ID, if it is live and still
 * names the thing": a record that died or changed content makes its entry
 * inert, a rebirth that names the thing again appends it again (duplicates
 * are removed when the list is compacted). */
struct idm_deplist {
    uint32_t n, cap;
    uint32_t stale; /* entries made inert since the last compaction (an estimate) */
    uint32_t pad;
    uintptr_t id[];
};

static inline int idm_dkey(int pkind, int ckind)
{
    return pkind * K_NKINDS + ckind;
}

/* ---- code ranges (ranges.c) -------------------------------------------- */

/* One range, as the writer handles it. */
struct idm_range {
    uintptr_t start, end, fid;
    uint64_t gen, seq;
};

/* A leaf: n (1..IDM_LEAF_MAX) ranges sorted by start. The starts come
 * first, always IDM_LEAF_MAX of them (padded with UINTPTR_MAX, one cache
 * line per IDM_FANOUT starts); then n; then, from the next line on, one
 * 24-byte record per range; then the writer's seqs. A lookup compares with
 * the first start of each line of starts, then with the starts of one line,
 * then reads one record: two dependent rounds of loads, at offsets that do
 * not depend on n, over 32 bytes per range. Immutable once published. */
struct idm_leafrec {
    uintptr_t end, fid;
    uint64_t gen;
};

struct idm_leaf {
    uintptr_t start[IDM_LEAF_MAX];
    size_t n;
    alignas(64) struct idm_leafrec rec[]; /* n, then uint64_t seq[n] */
};

/* The index above the leaves: level 0 holds the first start of every leaf
 * (level 0's first key is 0), level k+1 every IDM_FANOUT-th key of level k,
 * up to a top level of at most IDM_FANOUT keys; each level is padded with
 * UINTPTR_MAX to whole cache lines of IDM_FANOUT keys. A lookup reads one
 * line per level. One allocation; the leaf pointers may be swapped in
 * place (copy-on-write of one leaf), anything else builds a new top. */
struct idm_rtop {
    size_t n;      /* leaves */
    size_t bytes;  /* the top's allocation */
    unsigned levels;
    const uintptr_t *lvl[IDM_RLEVELS];
    _Atomic(struct idm_leaf *) *leaves;
};

/* ---- the map ------------------------------------------------------------ */

struct mdt_idmap {
    /* Read by every reader, written only when a structure is replaced. */
    alignas(IDM_SEP) _Atomic(struct idm_tab *) tab[3]; /* K_MODULE, K_CLASS, K_FUNC */
    _Atomic(struct idm_itab *) rev[3];            /* reverse: [K_CLASS], [K_FUNC] */
    _Atomic(struct idm_itab *) presence;
    _Atomic(struct idm_rtop *) ranges;
    struct idm_grace g;
    /* Any thread (mdt_idmap_next_seq). */
    alignas(IDM_SEP) _Atomic uint64_t seqctr;

    /* writer only */
    alignas(IDM_SEP) pthread_mutex_t lock;
    uint64_t watermark;
    struct idm_wmap hist; /* (kind, id) -> last unload seq, for live or absent records */
    struct idm_wmap deps; /* (idm_dkey(kind, child kind), id) -> struct idm_deplist * */
    size_t deps_bytes;
    size_t args_bytes;
    size_t nranges;
    bool ranges_dirty;
    _Atomic uint64_t modchanges; /* mdt_idmap_module_changes(); any thread may load it */
    mdt_idmap_miss_fn miss;
    void *miss_payload;
};

/* Current tables (seq_cst: see grace.c for why). */
static inline struct idm_tab *idm_cur(const mdt_idmap *m, int kind)
{
    return atomic_load_explicit(&((mdt_idmap *)m)->tab[kind], memory_order_seq_cst);
}

/* ---- record access (records.c) ----------------------------------------- */

/* A consistent copy of a class or function record. */
struct idm_crec {
    uint64_t gen;
    uintptr_t module;
    uint32_t token, nargs;
    uint8_t shape, prim;
    uint16_t rank;
    uintptr_t cls; /* functions */
};

/* Reader (inside a section): copy the live record of `id` (gen 0 = any);
 * up to cap arguments go to args. Returns 0 or MDT_ENOTFOUND. */
int idm_read_class(const mdt_idmap *m, struct idm_crec *r, uintptr_t *args, uint32_t cap,
                   uintptr_t id, uint64_t gen);
int idm_read_func(const mdt_idmap *m, struct idm_crec *r, uintptr_t *args, uint32_t cap,
                  uintptr_t id, uint64_t gen);
int idm_read_module(const mdt_idmap *m, mdt_idmap_module_info *out, uintptr_t id, uint64_t gen);
/* Reader: type argument k of a live class. */
int idm_class_arg(const mdt_idmap *m, uintptr_t id, uint64_t gen, uint32_t k, uintptr_t *out);

/* Hash of a class / function key, for the reverse indexes. */
uint64_t idm_class_key_hash(uintptr_t module, uint32_t token, unsigned shape, unsigned rank,
                            uint32_t nargs, const uintptr_t *args);
uint64_t idm_func_key_hash(uintptr_t module, uint32_t token, uintptr_t cls, uint32_t nargs,
                           const uintptr_t *args);

/* Writer-side slot helpers. */
void idm_slot_begin(struct idm_head *h);
void idm_slot_end(struct idm_head *h);
/* Writer: the type arguments of a class or function slot (inline ones are
 * copied to inl[2]). */
const uintptr_t *idm_slot_args(const struct idm_head *h, int kind, uint32_t *n, uintptr_t inl[2]);
/* Writer: store args into a fresh or rewritten slot; *ool is an array from
 * idm_args_make() or NULL. */
struct idm_args *idm_args_make(mdt_idmap *m, uint32_t n, const uintptr_t *args, uint32_t inline_max,
                               int *err);

/* ---- lifetime engine (lifetime.c) -------------------------------------- */

/* What an item names: up to 3 single IDs plus a list of ClassIDs (type
 * arguments or the element of a shape). */
struct idm_refs {
    size_t n;
    struct {
        int kind;
        uintptr_t id;
    } r[3];
    uint32_t nargs;
    const uintptr_t *args;
};

int idm_lock(mdt_idmap *m);
void idm_unlock(mdt_idmap *m);
int idm_check_seq(const mdt_idmap *m, uint64_t seq);
uint64_t idm_last_unload(const mdt_idmap *m, int kind, uintptr_t id);
bool idm_refs_stale(const mdt_idmap *m, const struct idm_refs *refs, uint64_t seq);
int idm_add_deps(mdt_idmap *m, const struct idm_refs *refs, int kind, uintptr_t id);
int idm_unload(mdt_idmap *m, int kind, uintptr_t id, uint64_t seq);
int idm_cascade(mdt_idmap *m, int kind, uintptr_t id, uint64_t seq, uint64_t limit);
int idm_dep_push(mdt_idmap *m, int pkind, uintptr_t pid, int kind, uintptr_t id);
void idm_deps_compact_all(mdt_idmap *m);
void idm_deps_free(mdt_idmap *m);
struct idm_head *idm_place(mdt_idmap *m, int kind, uintptr_t id, bool *fresh);
/* Writer: make n the table of `kind` (with a reverse index rebuilt for it)
 * and retire the old one; with drop_below != 0, release the payloads of the
 * old table's dead records older than that (n must leave them out) and
 * count them in *dropped. On failure n is freed and nothing changes. */
int idm_tab_publish(mdt_idmap *m, int kind, struct idm_tab *n, uint64_t drop_below, int *dropped);
void idm_on_live(mdt_idmap *m, int kind, struct idm_head *h);
void idm_on_dead(mdt_idmap *m, int kind, struct idm_head *h);
void idm_kill_slot(mdt_idmap *m, int kind, struct idm_head *h, uint64_t seq);
int idm_finish(mdt_idmap *m, int rc);

/* Kind-specific hooks (classes.c, functions.c, modules.c). */
void idm_class_on_live(mdt_idmap *m, struct idm_head *h);
void idm_class_on_dead(mdt_idmap *m, struct idm_head *h);
void idm_func_on_live(mdt_idmap *m, struct idm_head *h);
void idm_func_on_dead(mdt_idmap *m, struct idm_head *h);
void idm_release_payload(mdt_idmap *m, int kind, struct idm_head *h);

/* Indexes (index.c). The reverse index entry of a live record is added
 * after its content is written and deleted before its content changes or it
 * dies; both read the content from the slot. Presence counts live generic
 * TypeDef instantiations (non-generic TypeDefs are found through the
 * reverse index). */
uint64_t idm_slot_key_hash(const struct idm_head *h, int kind);
int idm_rev_add(mdt_idmap *m, int kind, const struct idm_head *h);
void idm_rev_del(mdt_idmap *m, int kind, const struct idm_head *h);
int idm_presence_adjust(mdt_idmap *m, uintptr_t module, uint32_t token, int delta);
/* Count (delta +1) or uncount (-1) the class in slot h if it is a generic
 * TypeDef instantiation. */
void idm_class_presence(mdt_idmap *m, const struct idm_head *h, int delta);
/* Build a reverse index for forward table f (kind K_CLASS or K_FUNC). */
struct idm_itab *idm_rev_build(const struct idm_tab *f, int kind, size_t min_cap);
int idm_index_rebuild(mdt_idmap *m, int which);

/* Ranges (ranges.c). */
int idm_ranges_filter(mdt_idmap *m);
void idm_ranges_free(mdt_idmap *m);
size_t idm_ranges_bytes(const mdt_idmap *m);

#endif
