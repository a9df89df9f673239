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
#include <time.h>

#include <mdtools/idmap.h>

/* Longest probe sequence a table may hold; an insert that would need more
 * grows the table first. It bounds every reader's steps. */
#define IDM_MAX_PROBE 512u
/* Per-thread reader slots (one cache line each, per map) and the shared
 * counters used by threads that found no free slot (powers of two). */
#define IDM_NREADERS 256u
#define IDM_NSTRIPES 16u
/* Code ranges per leaf of the range index, and its fan-out above the leaves
 * (one cache line of keys). */
#define IDM_LEAF_MAX 64u
#define IDM_FANOUT 8u
#define IDM_RLEVELS 12u
/* Parts plugged into the writer core beside the record kinds: the TypeDef
 * presence index and code ranges. */
#define IDM_NPARTS 2u
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

/* Reader slots are found without thread-local storage: a library that
 * profilers dlopen() cannot count on static TLS (initial-exec TLS fails to
 * load once glibc's surplus is used up), and dynamic TLS may be allocated
 * with malloc on a thread's first access, which a signal handler must never
 * do. A process-wide registry (grace.c) maps a thread's key, which stands
 * for its kernel thread ID (idm_self_key), to its slot index: IDM_NREADERS
 * entries, a thread's home entry picked by a hash of the key, claimed with
 * a compare-and-swap within IDM_REG_PROBE entries of it. Every map has one
 * slot per index. idm_reg_key[i] is the key of the thread that owns index
 * i, 0 when free. */
#define IDM_REG_PROBE 8u
extern _Atomic long idm_reg_key[IDM_NREADERS];

static inline unsigned idm_reg_home(long key)
{
    return (unsigned)(((uint32_t)key * 0x9E3779B9u) >> 24) & (IDM_NREADERS - 1);
}

/* The calling thread's key: its CPU-time clock, which glibc and musl make
 * from the kernel thread ID they keep in the thread descriptor, as Linux
 * defines CPU clocks: (~tid << 3) | 6. No system call, no TLS; both calls
 * only read the descriptor (async-signal-safe in fact, though POSIX does
 * not list them). 0 if the call failed. grace.c checks the encoding once
 * against gettid(2) before any claim trusts a key, and decodes keys into
 * IDs only to ask whether their threads still exist. */
static inline long idm_self_key(void)
{
    clockid_t c = 0;
    (void)pthread_getcpuclockid(pthread_self(), &c);
    return (long)c;
}

/* grace.c: a section of a thread whose slot is not its home entry (found
 * or claimed there), and sections of threads without one (a shared
 * stripe, chosen by stack address). */
unsigned idm_enter_slow(struct idm_grace *g, long key);
void idm_leave_slow(struct idm_grace *g, unsigned tok);

/* Enter a reader section in slot r. The load of the slot is an acquire:
 * it may read the last leave of the slot's previous owner, which a writer
 * that waited for this thread then also follows. */
IDM_INLINE unsigned idm_enter_slot(struct idm_grace *g, unsigned r)
{
    _Atomic uint64_t *c = &g->slot[r].ctr;
    uint64_t v = atomic_load_explicit(c, memory_order_acquire);
    if ((v & IDM_NEST_MASK) == 0)
        v = atomic_load_explicit(&g->gp, memory_order_acquire);
    else
        v++;
    atomic_store_explicit(c, v, memory_order_relaxed);
    if (__builtin_expect(atomic_load_explicit(&g->asym, memory_order_relaxed), 1))
        atomic_signal_fence(memory_order_seq_cst);
    else
        atomic_thread_fence(memory_order_seq_cst);
    return r;
}

/* Enter a reader section; the token goes back to idm_leave(). The fast path
 * finds the thread's slot at its home entry (the thread ID from its
 * descriptor, one load of a read-mostly line) and stores to the thread's
 * own cache line: when the map could register for
 * membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED), writers issue the barrier
 * that orders this store before the reader's loads (grace.c); otherwise
 * the reader fences. Threads without a slot count themselves in a shared
 * stripe with atomic read-modify-writes (idm_enter_slow). */
IDM_INLINE unsigned idm_enter(const struct idm_grace *cg)
{
    struct idm_grace *g = (struct idm_grace *)cg;
    long key = idm_self_key();
    unsigned h = idm_reg_home(key);
    if (__builtin_expect(atomic_load_explicit(&idm_reg_key[h], memory_order_relaxed) != key ||
                             key == 0,
                         0))
        return idm_enter_slow(g, key);
    return idm_enter_slot(g, h);
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
#ifdef IDM_TEST_CLAIM_HOOK
/* Tests built from the sources (tests/idmap/run-claimrace.sh): called
 * where a claim could race with a nested one; registry entries of the
 * thread with kernel ID tid. */
void idm_test_claim_hook(void);
unsigned idm_test_entries_of(long tid);
#endif
void idm_grace_wait(struct idm_grace *g);
int idm_retire(struct idm_grace *g, void *p, size_t bytes);
void idm_reclaim(struct idm_grace *g, bool force);
void idm_grace_destroy(struct idm_grace *g);

/* ---- slot tables (table.c) -------------------------------------------- */

/* The word `w` of a class or function slot: the token's row (its table is
 * implied by the kind: TypeDef, MethodDef; for shapes other than TYPEDEF the
 * ARRAY rank), the module handle (handles.c), prim, and the meta byte. */
#define W_ROW_MASK 0xffffffu
#define W_HANDLE_SHIFT 24
#define W_HANDLE_MAX 0xffffffu
#define W_PRIM_SHIFT 48
#define W_META_SHIFT 56

#define META_LIVE 0x1u
/* Writer only: something outside the tables depends on this record (code
 * ranges on a function): the core tells the parts that watch (struct
 * idm_kind_ops) when it dies or changes incarnation. */
#define META_WATCHED 0x2u
#define META_OOL 0x4u    /* x points to a struct idm_args */
#define META_ARG 0x8u    /* classes: x is the one type argument */
#define META_SHAPE_SHIFT 4
#define META_NEWER 0x80u /* writer only: seq > gen, kept in the map's `newer` */

/* The head every slot starts with. `key` is set once (0 = empty) and never
 * changes in a table instance. `gv` is the generation shifted left by one,
 * odd while a writer rewrites the payload (the seqlock): a live record's gen
 * is the seq that created the incarnation, a dead record's the seq of its
 * unload (the tombstone's seq). `w` packs the meta byte with the payload
 * (W_* above; modules use only the meta byte). A live record's newest
 * applied seq is its gen, or, with META_NEWER, the map's `newer` entry. */
struct idm_head {
    _Atomic uintptr_t key;
    _Atomic uint64_t gv;
    _Atomic uint64_t w;
};

/* Out-of-line type arguments (and what the slot has no room for: a shape's
 * token, a function's owning class); immutable once published. */
struct idm_args {
    uint32_t n;
    uint32_t token; /* classes of a shape other than TYPEDEF */
    uintptr_t cls;  /* functions */
    uintptr_t a[];
};

/* Out-of-line module path; immutable once published. */
struct idm_path {
    size_t len;
    char s[];
};

/* 32 bytes, two to a cache line. x: the type argument (META_ARG), the
 * struct idm_args (META_OOL), or 0. */
struct idm_cslot {
    struct idm_head h;
    _Atomic uintptr_t x;
};

/* x: the owning class, or the struct idm_args (META_OOL) that holds it
 * with the method type arguments. */
struct idm_fslot {
    struct idm_head h;
    _Atomic uintptr_t x;
};

/* Modules fill fields in place without a new generation, so their slots
 * have their own seqlock counter `ver` besides gv. */
struct idm_mslot {
    struct idm_head h;
    _Atomic uint32_t ver;
    uint32_t pad0;
    _Atomic uintptr_t image;
    _Atomic uintptr_t appdomain;
    _Atomic uintptr_t assembly;
    _Atomic uintptr_t identity;
    _Atomic uintptr_t path; /* struct idm_path * or 0 */
    _Atomic uint64_t mvid[2];
    unsigned char pad[128 - 32 - 7 * 8];
};

static inline unsigned idm_meta(const struct idm_head *h)
{
    return (unsigned)(atomic_load_explicit(&((struct idm_head *)h)->w, memory_order_relaxed) >>
                      W_META_SHIFT);
}

/* Writer: replace the meta byte (one store: readers see either byte). */
static inline void idm_set_meta(struct idm_head *h, unsigned meta)
{
    uint64_t w = atomic_load_explicit(&h->w, memory_order_relaxed);
    w = (w & ~((uint64_t)0xff << W_META_SHIFT)) | (uint64_t)(meta & 0xffu) << W_META_SHIFT;
    atomic_store_explicit(&h->w, w, memory_order_relaxed);
}

static inline bool idm_live(const struct idm_head *h)
{
    return idm_meta(h) & META_LIVE;
}

/* Writer: is slot h occupied by a live record? */
static inline bool idm_slot_live(const struct idm_head *h)
{
    return atomic_load_explicit(&((struct idm_head *)h)->key, memory_order_relaxed) &&
           idm_live(h);
}

/* The module handle in a class or function slot's word w. */
static inline uint32_t idm_w_handle(uint64_t w)
{
    return (uint32_t)(w >> W_HANDLE_SHIFT) & W_HANDLE_MAX;
}

/* Writer: the generation field (gen of a live record, seq of a dead one). */
static inline uint64_t idm_gen(const struct idm_head *h)
{
    return atomic_load_explicit(&((struct idm_head *)h)->gv, memory_order_relaxed) >> 1;
}

/* Table and index headers: what readers load on every lookup, then, IDM_SEP
 * bytes further, the counters the writer updates on every call, so that
 * those updates never disturb the readers' copy. */
#define IDM_HDR (2u * IDM_SEP)

struct idm_tab {
    size_t cap;       /* slots; any multiple of IDM_CAP_STEP (table.c) */
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

/* Home slot of hash h in a table of cap slots: the top 32 bits of h scaled
 * to [0, cap) by one multiplication (cap <= IDM_MAX_SLOTS), so capacities
 * need not be powers of two (table.c says why they are not). The reverse
 * index takes its tags from the low bits (idm_rtag), which this leaves
 * alone. */
static inline size_t idm_home(uint64_t h, size_t cap)
{
    return (size_t)(((h >> 32) * (uint64_t)cap) >> 32);
}

static inline size_t idm_next(size_t i, size_t cap)
{
    return ++i == cap ? 0 : i;
}

/* Would one more occupied slot take a table of cap slots past 4/5 load? */
static inline bool idm_over(size_t used, size_t cap)
{
    return (used + 1) * 5 > cap * 4;
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
    size_t cap = t->cap, i = idm_home(idm_hash(key), cap);
    unsigned char *slots = t->slots;
    for (unsigned n = 0; n < IDM_MAX_PROBE; n++, i = idm_next(i, cap)) {
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

/* The index of slot h in table t. */
static inline size_t idm_slot_index(const struct idm_tab *t, const struct idm_head *h)
{
    return (size_t)((const unsigned char *)h - t->slots) / t->slot_size;
}
/* Writer: the slot holding key, or the empty slot where it would go (*fresh
 * set), or NULL when the table must grow first. */
struct idm_head *idm_tab_place(struct idm_tab *t, uintptr_t key, bool *fresh);
/* Writer: a copy of t with capacity cap (grown until every kept record
 * fits its probe bound), without dead records whose seq is below `below`. */
struct idm_tab *idm_tab_rebuild(const struct idm_tab *t, size_t cap, uint64_t below);
/* Capacity that holds n records below the load limit; the next capacity up. */
size_t idm_cap_for(size_t n);
size_t idm_cap_grow(size_t cap);
#define IDM_CAP_STEP 64u

/* Reverse index slot: one 32-bit word, 0 = empty, IDM_RDEL = deleted,
 * else a tag over the index of the record's slot in the forward table
 * instance the index was built for: the low `bits` bits (idm_rbits: as
 * many as that table's largest slot index needs) are the slot index, the
 * bits above them come from the low bits of the content hash, the lowest of them forced to 1 (so a word is never 0 or
 * IDM_RDEL). The reader verifies a candidate by reading that record; the
 * tag only spares it most reads of records that do not match. */
#define IDM_RDEL 1u
#define IDM_MAX_SLOTS (UINT32_C(1) << 31)

static inline unsigned idm_rbits(const struct idm_tab *f)
{
    return 64u - (unsigned)__builtin_clzll((unsigned long long)(f->cap - 1));
}

/* The tag bits of a reverse word for content hash h (slot index bits 0). */
static inline uint32_t idm_rtag(uint64_t h, unsigned bits)
{
    return (uint32_t)((uint64_t)((uint32_t)h | 1u) << bits);
}

static inline uint32_t idm_rword(uint64_t h, size_t idx, unsigned bits)
{
    return idm_rtag(h, bits) | (uint32_t)idx;
}

struct idm_itab {
    size_t cap;
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

/* Dependents (deps.c): (kind, ID) of a thing and a kind of record -> the
 * records of that kind that named it when they were created. An entry
 * stands for "whatever record is now in that slot (packed store) or has
 * that ID (recent store), if it still names the thing": a record that died
 * or changed content makes its entry inert, a rebirth that names the thing
 * again adds it again (duplicates go when a list is compacted or merged). */
struct idm_deplist {
    uint32_t n, cap;
    uint32_t stale; /* entries made inert since the last compaction (an estimate) */
    uint32_t pad;
    uintptr_t id[];
};

/* A parent in the packed store; its children are child[previous end, end). */
struct idm_dparent {
    uintptr_t id;
    uint32_t dkey;
    uint32_t end;
};

struct idm_packed {
    struct idm_dparent *par; /* sorted by (id, dkey) */
    uint32_t *child;         /* slot indexes in the current table of the child kind */
    size_t npar, nchild;
    size_t gone;    /* children marked IDM_DGONE */
    size_t stale;   /* children that went inert (an estimate) */
    size_t nrecent; /* entries in the recent store's lists */
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

/* A tombstone of freed code (writer only): [start, end) was removed at seq;
 * a code_add with a seq not above it that overlaps it is refused. Kept
 * sorted and disjoint; overlapping ones merge, keeping the newest seq. */
struct idm_rtomb {
    uintptr_t start, end;
    uint64_t seq;
};

/* A late unload at `after` of function `fid` whose incarnation `from` had
 * been reloaded (or shown alive by a code_add) later: it now is incarnation
 * `to`; its ranges added after `after` go with it, the others die. */
struct idm_regen {
    uintptr_t fid;
    uint64_t from, to, after;
};
#define IDM_MAX_REGEN 4u

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

/* ---- module handles (handles.c) ---------------------------------------- */

/* Class and function slots name their module by a 24-bit handle, an index
 * into an array of ModuleIDs that readers load through the map. A handle
 * stands for one ModuleID value while some slot (live or dead) holds it; it
 * is reused only after a grace period, so a reader that copied a handle from
 * a slot being rewritten reads the old ModuleID or sees the slot changed.
 * The array only grows (a copy, the old one retired), so a handle copied
 * from a published slot is always inside the array the reader loads. */
struct idm_mods {
    size_t cap;
    _Atomic uintptr_t id[];
};

struct idm_handles {
    struct idm_wmap refs; /* ModuleID -> handle | IDM_HD_SCANNED | slots holding it << 32 */
    uint32_t next;        /* handles below it have been used */
    uint32_t *free, nfree, capfree;
    struct {
        uint32_t handle;
        uint64_t period; /* grace periods completed when it was released */
    } *pending;
    size_t npending, cappending;
    size_t bytes; /* the arrays above and the current idm_mods */
};

/* ---- the map ------------------------------------------------------------ */

struct mdt_idmap {
    /* Read by every reader, written only when a structure is replaced. */
    alignas(IDM_SEP) _Atomic(struct idm_tab *) tab[3]; /* K_MODULE, K_CLASS, K_FUNC */
    _Atomic(struct idm_itab *) rev[3];            /* reverse: [K_CLASS], [K_FUNC] */
    _Atomic(struct idm_itab *) presence;
    _Atomic(struct idm_rtop *) ranges;
    _Atomic(struct idm_mods *) mods; /* module handle -> ModuleID */
    struct idm_grace g;
    /* Any thread (mdt_idmap_next_seq). */
    alignas(IDM_SEP) _Atomic uint64_t seqctr;

    /* writer only */
    alignas(IDM_SEP) pthread_mutex_t lock;
    /* What is plugged into the core (idmap.c): the record kinds (NULL for
     * kinds without records) and the parts, in order. */
    const struct idm_kind_ops *kind[K_NKINDS];
    const struct idm_part_ops *part[IDM_NPARTS];
    unsigned nparts;
    unsigned children[K_NKINDS]; /* 1u << kind of the records that can name each kind */
    uint64_t watermark;
    struct idm_wmap hist; /* (kind, id) -> last unload seq, for live or absent records */
    struct idm_wmap deps; /* recent dependents: (idm_dkey(kind, child kind), id) -> struct idm_deplist * */
    struct idm_packed dp; /* packed dependents */
    struct idm_wmap newer; /* (kind, id) -> newest seq of a live record with META_NEWER */
    struct idm_wmap pover; /* presence counts from 0xffff up (presence.c) */
    struct idm_handles hd;
    size_t deps_bytes;
    size_t args_bytes;
    size_t nranges;
    bool ranges_dirty;
    struct idm_rtomb *rtomb; /* code tombstones (ranges.c) */
    size_t nrtomb, caprtomb;
    struct idm_regen regen[IDM_MAX_REGEN]; /* pending for the next range filter */
    unsigned nregen;
    _Atomic uint64_t modchanges; /* mdt_idmap_module_changes(); any thread may load it */
    mdt_idmap_miss_fn miss;
    void *miss_payload;
};

/* Current tables (seq_cst: see grace.c for why). */
static inline struct idm_tab *idm_cur(const mdt_idmap *m, int kind)
{
    return atomic_load_explicit(&((mdt_idmap *)m)->tab[kind], memory_order_seq_cst);
}

/* Writer (mutex held): the current table of kind, and the slot of id in it. */
static inline struct idm_tab *idm_wtab(const mdt_idmap *m, int kind)
{
    return atomic_load_explicit(&((mdt_idmap *)m)->tab[kind], memory_order_relaxed);
}

static inline struct idm_head *idm_wfind(const mdt_idmap *m, int kind, uintptr_t id)
{
    return idm_tab_find(idm_wtab(m, kind), id);
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

/* The content of a class or function slot, decoded (args points into the
 * out-of-line block or at inl). */
struct idm_view {
    unsigned shape, prim, rank;
    uintptr_t module, cls;
    uint32_t token, nargs;
    const uintptr_t *args;
    uintptr_t inl[1];
};
/* Decode the words w and x of a consistent copy (a reader calls it only
 * after its seqlock check: it follows x to the out-of-line block). */
void idm_decode(const mdt_idmap *m, int kind, uint64_t w, uintptr_t x, struct idm_view *v);
/* Writer: decode slot h in place. */
void idm_view(const mdt_idmap *m, int kind, const struct idm_head *h, struct idm_view *v);

/* Reader: the ModuleID of handle hd (0 for handle 0). */
static inline uintptr_t idm_module_of(const mdt_idmap *m, uint32_t hd)
{
    const struct idm_mods *md =
        atomic_load_explicit(&((mdt_idmap *)m)->mods, memory_order_acquire);
    return hd < md->cap ? atomic_load_explicit(&((struct idm_mods *)md)->id[hd],
                                               memory_order_relaxed)
                        : 0;
}

/* Writer (handles.c): a handle for module (taking one reference), 0 for 0;
 * UINT32_MAX when out of memory or handles. Release drops a reference. */
int idm_handles_init(mdt_idmap *m);
uint32_t idm_handle_get(mdt_idmap *m, uintptr_t module);
void idm_handle_put(mdt_idmap *m, uint32_t hd);
void idm_handles_reclaim(mdt_idmap *m);
/* Writer: how many slots hold module's handle (0 when none), the handle,
 * and whether the module's dependents are found by scanning (deps.c); a
 * flag kept in the handle's entry, so it goes when the last slot does. */
#define IDM_HD_SCANNED (UINT64_C(1) << 31)
uint32_t idm_module_slots(const mdt_idmap *m, uintptr_t module, uint32_t *hd, bool *scanned);
void idm_module_set_scanned(mdt_idmap *m, uintptr_t module);
void idm_handles_free(mdt_idmap *m);

/* Writer: a record's newest applied seq, and setting it (MDT_ENOMEM when a
 * live record's seq above its gen cannot be remembered). */
uint64_t idm_seq(const mdt_idmap *m, int kind, const struct idm_head *h);
int idm_set_seq(mdt_idmap *m, int kind, struct idm_head *h, uint64_t seq);
/* Writer: forget a live record's newer seq (its gen catches up or it dies). */
void idm_drop_newer(mdt_idmap *m, int kind, struct idm_head *h);

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

/* Writer-side slot helpers: begin makes gv odd, end publishes gen. */
void idm_slot_begin(struct idm_head *h);
void idm_slot_end(struct idm_head *h, uint64_t gen);
/* Writer: an out-of-line block for a slot; *err is set when out of memory. */
struct idm_args *idm_args_make(mdt_idmap *m, uint32_t n, const uintptr_t *args, uint32_t token,
                               uintptr_t cls, int *err);
void idm_args_discard(mdt_idmap *m, struct idm_args *a);
size_t idm_args_bytes(const struct idm_args *a);

/* ---- the writer core (lifetime.c) ---------------------------------------- */

/* What an item or a record names: up to 3 single IDs plus a list of
 * ClassIDs (type arguments or the element of a shape). inl holds the one
 * inline argument when args has nowhere else to point. */
struct idm_refs {
    size_t n;
    struct {
        int kind;
        uintptr_t id;
    } r[3];
    uint32_t nargs;
    const uintptr_t *args;
    uintptr_t inl[1];
};

/* What a new incarnation's slot takes over: the kind's out-of-line memory
 * (type arguments, a path) and, for kinds that name a module, a reference
 * to the module's handle. */
struct idm_payload {
    void *block;
    uint32_t handle;
};

/* How a record kind (modules, classes, functions) plugs into the writer
 * core: the core runs the precedence rules, the cascades, the tables and
 * the reverse indexes for every kind and calls these for what only the
 * kind knows. Members that do not apply are NULL. Every call is made with
 * the writer mutex held. */
struct idm_kind_ops {
    int kind;            /* K_MODULE, K_CLASS, K_FUNC */
    size_t slot_size;    /* bytes per slot of the kind's table */
    unsigned names_mask; /* 1u << K_... of what a record's content may name; a kind
                          * that names modules keeps the handle in its slot word w */
    /* What the record in slot h (live or dead) names; whether it names
     * (pk, pid) (the same answer, without building the list: dependents
     * walks ask it for every entry). */
    void (*refs)(const mdt_idmap *m, const struct idm_head *h, struct idm_refs *out);
    bool (*names)(const mdt_idmap *m, const struct idm_head *h, int pk, uintptr_t pid);
    /* Hash of the content of slot h for the reverse index; NULL: no index. */
    uint64_t (*content_hash)(const mdt_idmap *m, const struct idm_head *h);
    /* A load of `info` over the live record in slot h: -1 other content, 0
     * the same, 1 the same with fields to fill in. */
    int (*compare)(const mdt_idmap *m, const struct idm_head *h, const void *info);
    /* The same content (cmp 0 or 1) loaded again at seq: fill in, raise the
     * record's seq, or refuse; returns the call's outcome. */
    int (*same)(mdt_idmap *m, struct idm_head *h, uintptr_t id, const void *info,
                const struct idm_refs *refs, uint64_t seq, int cmp);
    /* Allocate the out-of-line memory of a new incarnation (error recorded),
     * and give it back when the load fails after all. */
    int (*prepare)(mdt_idmap *m, const void *info, struct idm_payload *p);
    void (*discard)(mdt_idmap *m, struct idm_payload *p);
    /* Store the payload words of a new incarnation (the core has made the
     * slot's seqlock odd, or the slot is not published yet). */
    void (*write)(mdt_idmap *m, struct idm_head *h, const void *info, const struct idm_payload *p);
    /* A record became live / died (indexes, counters). */
    void (*on_live)(mdt_idmap *m, struct idm_head *h);
    void (*on_dead)(mdt_idmap *m, struct idm_head *h);
    /* The slot's payload goes: through the grace period (release), or at
     * once when the map is freed (destroy). */
    void (*release)(mdt_idmap *m, struct idm_head *h);
    void (*destroy)(struct idm_head *h);
};

/* How a part with state of its own beside the records (the TypeDef
 * presence index, code ranges) plugs into the writer core. Members that do
 * not apply are NULL; every call but init is made with the writer mutex
 * held. */
struct idm_part_ops {
    /* At map creation (the tables exist; MDT_ENOMEM fails the creation) and
     * destruction (also after a failed init). */
    int (*init)(mdt_idmap *m, const mdt_idmap_options *opts);
    void (*fini)(mdt_idmap *m);
    /* A record flagged META_WATCHED died, or a late unload made it a new
     * incarnation (`from` -> `to`; what was applied after `after` stays). */
    void (*watched_died)(mdt_idmap *m, int kind, struct idm_head *h);
    void (*watched_reborn)(mdt_idmap *m, int kind, uintptr_t id, uint64_t from, uint64_t to,
                           uint64_t after);
    /* At the end of every writer call (a negative error becomes the call's
     * result); in mdt_idmap_retire(), after the tables were rebuilt. */
    int (*settle)(mdt_idmap *m);
    int (*retire)(mdt_idmap *m, uint64_t below);
    /* Add the part's memory and counts to *out (mdt_idmap_stats_get). */
    void (*stats)(const mdt_idmap *m, mdt_idmap_stats *out);
};

extern const struct idm_kind_ops idm_module_kind, idm_class_kind, idm_function_kind;
extern const struct idm_part_ops idm_presence_part, idm_range_part;

int idm_lock(mdt_idmap *m);
void idm_unlock(mdt_idmap *m);
int idm_check_seq(const mdt_idmap *m, uint64_t seq);
/* Writer calls: load `info` (a kind's info structure) of ID `id` naming
 * refs; unload (kind, id), also of kinds without records. Each locks,
 * checks seq and finishes. */
int idm_load(mdt_idmap *m, int kind, uintptr_t id, const void *info, const struct idm_refs *refs,
             uint64_t seq);
int idm_unload_call(mdt_idmap *m, int kind, uintptr_t id, uint64_t seq);
/* Raise a record's newest applied seq to seq (MDT_ENOMEM, recorded). */
int idm_note_seq(mdt_idmap *m, int kind, struct idm_head *h, uint64_t seq);
uint64_t idm_last_unload(const mdt_idmap *m, int kind, uintptr_t id);
bool idm_refs_stale(const mdt_idmap *m, const struct idm_refs *refs, uint64_t seq);
/* The first last-unload at or after seq of what refs names, 0 if none. */
uint64_t idm_refs_unloaded(const mdt_idmap *m, const struct idm_refs *refs, uint64_t seq);
/* A load of (kind, id) refused because what it names was unloaded at or
 * after seq: the ID dies at that unload too (lifetime.c). Returns
 * MDT_IDMAP_SUPERSEDED or an error. */
int idm_refuse(mdt_idmap *m, int kind, uintptr_t id, const struct idm_refs *refs, uint64_t seq);
int idm_add_deps(mdt_idmap *m, const struct idm_refs *refs, int kind, uintptr_t id);
int idm_unload(mdt_idmap *m, int kind, uintptr_t id, uint64_t seq);
int idm_cascade(mdt_idmap *m, int kind, uintptr_t id, uint64_t seq, uint64_t limit);
/* Do things of this kind have records (modules, classes, functions), or
 * only tombstones and dependents (AppDomains, assemblies)? */
static inline bool idm_has_records(const mdt_idmap *m, int kind)
{
    return m->kind[kind] != NULL;
}

/* Does the record in slot h (of kind ck, live or dead) name (pk, pid)? */
static inline bool idm_names(const mdt_idmap *m, const struct idm_head *h, int ck, int pk,
                             uintptr_t pid)
{
    return m->kind[ck]->names(m, h, pk, pid);
}
/* Plug a record kind or a part into the core (at creation; parts are
 * called in the order they were plugged). */
void idm_plug_kind(mdt_idmap *m, const struct idm_kind_ops *kind);
void idm_plug_part(mdt_idmap *m, const struct idm_part_ops *part);
/* Is there a record kind that can name a thing of kind pk at or after *k
 * (start with *k = 0)? Then *k is the first. */
static inline bool idm_next_child(const mdt_idmap *m, int pk, int *k)
{
    unsigned c = m->children[pk] >> *k;
    if (!c)
        return false;
    *k += __builtin_ctz(c);
    return true;
}

/* deps.c */
int idm_dep_push(mdt_idmap *m, int pkind, uintptr_t pid, int kind, uintptr_t id);
/* A record of `kind` stops naming (pk, pid): its entry went inert. */
void idm_dep_stale(mdt_idmap *m, int pk, uintptr_t pid, int kind);
/* Called for every record of kind ck listed under (pk, pid) that still
 * names it; a negative return stops the walk and is returned. */
typedef int (*idm_dep_visit)(mdt_idmap *m, int ck, struct idm_head *h, void *ctx);
int idm_deps_walk(mdt_idmap *m, int pk, uintptr_t pid, int ck, idm_dep_visit fn, void *ctx);
/* Table `kind` moves from old to n (idm_tab_publish). */
void idm_deps_remap(mdt_idmap *m, int kind, const struct idm_tab *old, const struct idm_tab *n);
/* Between writer calls: merge the recent store when it has grown. */
void idm_deps_settle(mdt_idmap *m);
void idm_deps_compact_all(mdt_idmap *m);
size_t idm_deps_bytes(const mdt_idmap *m);
void idm_deps_free(mdt_idmap *m);
struct idm_head *idm_place(mdt_idmap *m, int kind, uintptr_t id, bool *fresh);
/* Writer: make n the table of `kind` (with a reverse index rebuilt for it)
 * and retire the old one; with drop_below != 0, release the payloads of the
 * old table's dead records older than that (n must leave them out) and
 * count them in *dropped. On failure n is freed and nothing changes. */
int idm_tab_publish(mdt_idmap *m, int kind, struct idm_tab *n, uint64_t drop_below, int *dropped);
void idm_kill_slot(mdt_idmap *m, int kind, struct idm_head *h, uint64_t seq);
/* A late unload at `after` of the live record in slot h, which a newer
 * load of the same content showed alive (gen <= after < its seq): the
 * unload ended incarnation gen, the newer information starts incarnation
 * seq; the parts that watch the record follow. */
void idm_renew_slot(mdt_idmap *m, int kind, struct idm_head *h, uint64_t after);
int idm_finish(mdt_idmap *m, int rc);

/* Class and function records (args.c): what a slot names, its payload
 * released or destroyed. */
void idm_rec_refs(const mdt_idmap *m, int kind, const struct idm_head *h, struct idm_refs *out);
bool idm_rec_names(const mdt_idmap *m, int kind, const struct idm_head *h, int pk, uintptr_t pid);
void idm_rec_release(mdt_idmap *m, struct idm_head *h);
void idm_rec_destroy(struct idm_head *h);

/* Indexes (index.c, presence.c). The reverse index entry of a live record
 * is added after its content is written and deleted before its content
 * changes or it dies; both read the content from the slot. Presence counts
 * live generic TypeDef instantiations (non-generic TypeDefs are found
 * through the reverse index). */
int idm_rev_add(mdt_idmap *m, int kind, const struct idm_head *h);
void idm_rev_del(mdt_idmap *m, int kind, const struct idm_head *h);
/* Count (delta +1) or uncount (-1) the class in slot h if it is a generic
 * TypeDef instantiation. */
void idm_class_presence(mdt_idmap *m, const struct idm_head *h, int delta);
/* Reader (inside a section): 1 when a live instantiation of the generic
 * TypeDef is counted, -1 when the TypeDef has no entry. */
int idm_presence_find(const mdt_idmap *map, uintptr_t module_id, uint32_t typedef_token);
/* Build a reverse index for forward table f of a kind with a content hash. */
struct idm_itab *idm_rev_build(const mdt_idmap *m, const struct idm_tab *f, int kind,
                               size_t min_cap);

#endif
