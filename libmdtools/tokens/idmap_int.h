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
/* Reader-count stripes (a power of two). */
#define IDM_NSTRIPES 64u
/* Code ranges per chunk. */
#define IDM_CHUNK_MAX 64u
/* Nesting limit of describe/descriptor and of dependency walks. */
#define IDM_MAX_DEPTH 32u
/* Retired memory that triggers a grace period at the end of a writer call. */
#define IDM_RETIRE_COUNT 512u
#define IDM_RETIRE_BYTES (4u << 20)

/* Kinds of things with lifetimes. Domains and assemblies have no records,
 * only tombstones and dependents. */
enum idm_kind { K_MODULE = 0, K_CLASS = 1, K_FUNC = 2, K_DOMAIN = 3, K_ASSEMBLY = 4, K_NKINDS };

/* ---- reader sections and deferred free (grace.c) ---------------------- */

struct idm_stripe {
    alignas(64) _Atomic unsigned long n[2];
};

struct idm_grace {
    _Atomic unsigned epoch;
    struct idm_stripe stripes[IDM_NSTRIPES];
    /* writer only */
    void **retired;
    size_t nretired, capretired;
    size_t retired_bytes;
    uint64_t periods;
};

/* Enter a reader section; the token goes back to idm_leave(). */
static inline unsigned idm_enter(const struct idm_grace *cg)
{
    struct idm_grace *g = (struct idm_grace *)cg;
    /* A thread's stack address picks its stripe: no TLS, no syscall. */
    uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
    unsigned s = (unsigned)(((uint64_t)(sp >> 16) * 0x9E3779B97F4A7C15ull) >> 58) &
                 (IDM_NSTRIPES - 1);
    unsigned p = atomic_load_explicit(&g->epoch, memory_order_relaxed) & 1u;
    atomic_fetch_add_explicit(&g->stripes[s].n[p], 1, memory_order_seq_cst);
    return s << 1 | p;
}

static inline void idm_leave(const struct idm_grace *cg, unsigned tok)
{
    struct idm_grace *g = (struct idm_grace *)cg;
    atomic_fetch_sub_explicit(&g->stripes[tok >> 1].n[tok & 1u], 1, memory_order_release);
}

/* Writer side. */
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

struct idm_tab {
    size_t mask;      /* capacity - 1 */
    size_t used;      /* writer only: occupied slots (live + dead) */
    size_t live;      /* writer only */
    size_t slot_size;
    size_t bytes;     /* allocation size */
    unsigned char *slots;
};

uint64_t idm_hash(uint64_t x);
struct idm_tab *idm_tab_new(size_t cap, size_t slot_size);
static inline struct idm_head *idm_slot(const struct idm_tab *t, size_t i)
{
    return (struct idm_head *)(t->slots + i * t->slot_size);
}
/* Reader: the slot holding key, or NULL. */
struct idm_head *idm_tab_find(const struct idm_tab *t, uintptr_t key);
/* Writer: the slot holding key, or the empty slot where it would go (*fresh
 * set), or NULL when the table must grow first. */
struct idm_head *idm_tab_place(struct idm_tab *t, uintptr_t key, bool *fresh);
/* Writer: a copy of t with capacity cap, without dead records whose seq is
 * below `below` (those are passed to drop()). */
struct idm_tab *idm_tab_rebuild(const struct idm_tab *t, size_t cap, uint64_t below,
                                void (*drop)(void *ctx, struct idm_head *h), void *ctx);
size_t idm_cap_for(size_t n);

/* Reverse index: (hash of a record's content) -> ID; verified against the
 * forward table by the reader. */
struct idm_rslot {
    _Atomic uint64_t h;
    _Atomic uintptr_t id; /* 0 = empty; set once */
};

/* TypeDef presence: (module, token) -> number of live classes. */
struct idm_pslot {
    _Atomic uintptr_t module; /* 0 = empty; set once */
    _Atomic uint32_t token;
    _Atomic uint32_t count;
};

struct idm_itab {
    size_t mask;
    size_t used; /* writer only */
    size_t bytes;
    size_t slot_size;
    unsigned char *slots;
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

/* Dependents: (kind, id) of a thing -> the incarnations that name it. */
struct idm_dep {
    uintptr_t id;
    uint64_t gen;
    uint32_t kind;
};

struct idm_deplist {
    size_t n, cap;
    struct idm_dep d[];
};

/* ---- code ranges (ranges.c) -------------------------------------------- */

struct idm_range {
    uintptr_t start, end, fid;
    uint64_t gen, seq;
};

struct idm_chunk {
    size_t n;
    struct idm_range r[];
};

/* keys[i] = start of chunk i's first range (keys[0] = 0); chunks are
 * immutable, the chunk pointers may be swapped in place. */
struct idm_rtop {
    size_t n;
    size_t bytes;
    uintptr_t *keys;
    _Atomic(struct idm_chunk *) *chunks;
};

/* ---- the map ------------------------------------------------------------ */

struct mdt_idmap {
    struct idm_grace g;
    _Atomic(struct idm_tab *) tab[3];      /* K_MODULE, K_CLASS, K_FUNC */
    _Atomic(struct idm_itab *) rev[3];     /* reverse: [K_CLASS], [K_FUNC] */
    _Atomic(struct idm_itab *) presence;
    _Atomic(struct idm_rtop *) ranges;
    _Atomic uint64_t seqctr;

    /* writer only */
    pthread_mutex_t lock;
    uint64_t watermark;
    struct idm_wmap hist; /* (kind, id) -> last unload seq, for live or absent records */
    struct idm_wmap deps; /* (kind, id) -> struct idm_deplist * */
    size_t deps_bytes;
    size_t args_bytes;
    size_t nranges;
    bool ranges_dirty;
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
int idm_add_deps(mdt_idmap *m, const struct idm_refs *refs, int kind, uintptr_t id, uint64_t gen);
int idm_unload(mdt_idmap *m, int kind, uintptr_t id, uint64_t seq);
int idm_cascade(mdt_idmap *m, int kind, uintptr_t id, uint64_t seq, uint64_t limit);
int idm_dep_push(mdt_idmap *m, int pkind, uintptr_t pid, int kind, uintptr_t id, uint64_t gen);
struct idm_head *idm_place(mdt_idmap *m, int kind, uintptr_t id, bool *fresh);
void idm_on_live(mdt_idmap *m, int kind, struct idm_head *h);
void idm_on_dead(mdt_idmap *m, int kind, struct idm_head *h);
void idm_kill_slot(mdt_idmap *m, int kind, struct idm_head *h, uint64_t seq);
int idm_finish(mdt_idmap *m, int rc);

/* Kind-specific hooks (classes.c, functions.c, modules.c). */
void idm_class_on_live(mdt_idmap *m, struct idm_head *h);
void idm_class_on_dead(mdt_idmap *m, struct idm_head *h);
void idm_func_on_live(mdt_idmap *m, struct idm_head *h);
void idm_release_payload(mdt_idmap *m, int kind, struct idm_head *h);

/* Indexes (index.c). */
int idm_rev_add(mdt_idmap *m, int kind, uint64_t h, uintptr_t id);
int idm_presence_adjust(mdt_idmap *m, uintptr_t module, uint32_t token, int delta);
int idm_index_rebuild(mdt_idmap *m, int which);

/* Ranges (ranges.c). */
int idm_ranges_filter(mdt_idmap *m);
void idm_ranges_free(mdt_idmap *m);

#endif
