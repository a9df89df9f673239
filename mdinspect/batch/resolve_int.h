/* mdinspect batch: what the four files of the resolver share (batch.h has
 * the resolver's interface): the resolver itself, its caches by text, and
 * the helpers that make a frame. resolve.c holds the resolver and its
 * caches, resolve_make.c makes a frame (names it, finds its line, its
 * text form), resolve_lines.c reads what a frame's text says (profiler
 * frames, type descriptors, plain lines), resolve_json.c writes a frame's
 * JSON form. A plain line's hot path, the frame a module keeps, is inlined
 * from plain.h and from mdb_res_plain_frame below. */
#ifndef MDINSPECT_BATCH_RESOLVE_INT_H
#define MDINSPECT_BATCH_RESOLVE_INT_H

#include "batch/batch.h"
#include "batch/native.h"
#include "batch/parse.h"
#include "batch/plain.h"
#include "common/naming.h"

enum { K_LOG, K_TYPE, K_MVID, K_PATH, K_IL, K_COUNT };

#define NAME_ROOM 4096 /* names longer than this take the slow way */

#define NAME_ROOM 4096 /* names longer than this take the slow way */

/* A thread's type name caches of one module: full style, and as stored
 * (metadata names, made in JSON runs only). */
struct modnames {
    mdt_name_cache *full, *stored;
};

struct mdb_resolver {
    mdb_assemblies *a;
    mdb_modcache *mods;
    bool want_json;      /* make each frame's JSON form (and metadata name) with the frame */
    unsigned name_flags; /* of names (not metadata names): --signatures */
    bool want_il;        /* --il: frames with an IL offset show the instruction */
    uint32_t insn_len;   /* of insn: the instruction of the frame being finished */
    char insn[1024];
    struct modnames *names; /* by module id: this thread's type names */
    uint32_t nnames;
    mdb_table cache[K_COUNT];
    size_t n;           /* entries cached (native.c's too) since the last start over */
    mdb_budget *budget; /* NULL: unbounded */
    bool over;          /* the thread's share is full: start over between records */
    size_t names_bytes; /* the type name caches, as last measured */
    uint64_t resets;
    void *namectx;             /* where the type name caches live (freed on start over) */
    mdb_arena arena;           /* frames cached by text: trimmed */
    mdb_arena lasting;         /* frames kept by their module (valid rows): never trimmed */
    mdb_arena *cur;            /* where new frames and their strings go */
    mdb_output scratch;        /* builds text and JSON forms (fd -1: never written) */
    char name[4096];           /* a name when the arena has no room; a metadata name */
    mdb_native_cache *natives; /* native frames (native.c) */
    uint64_t lineno;           /* of the record being resolved */
};

/* resolve.c: the caches by text. A frame cached under cache k by the text
 * s (*h gets its hash), or NULL. */
const mdb_frame *mdb_res_cached(mdb_resolver *r, int k, const char *s, size_t n, uint64_t *h);
/* f finished (mdb_res_finish) and cached under k by s; f NULL (out of
 * memory): the frame that says so. */
const mdb_frame *mdb_res_store(mdb_resolver *r, int k, const char *s, size_t n, uint64_t h,
                               mdb_frame *f);
/* f becomes the special frame s, cached under cache k. */
const mdb_frame *mdb_res_store_special(mdb_resolver *r, int k, const char *s, size_t n, uint64_t h,
                                       mdb_frame *f);
/* Count the caches' bytes against the thread's share of the budget (every
 * 256 new entries). */
void mdb_res_count_bytes(mdb_resolver *r);

/* resolve_make.c: a frame made. */
mdb_frame *mdb_res_new_frame(mdb_resolver *r, int status);
/* n bytes of s copied where new frames go (*len, when not NULL, gets n). */
const char *mdb_res_keep(mdb_resolver *r, const char *s, size_t n, uint32_t *len);
/* The library's last error as an unresolved frame's detail (cleared). */
const char *mdb_res_last_error(mdb_resolver *r);
/* A resolved frame's metadata name from s (NULL: it could not be made). */
void mdb_res_set_meta(mdb_resolver *r, mdb_frame *f, const char *s);
/* A frame's text form, and its JSON form when the run wants JSON. */
void mdb_res_finish(mdb_resolver *r, mdb_frame *f);
/* A MethodDef frame's source line from its module's PDB. */
void mdb_res_add_line(mdb_resolver *r, mdb_frame *f);
/* Name f->token of the open module f->mod, with type arguments when given. */
void mdb_res_name_token(mdb_resolver *r, mdb_frame *f, const char **cls, const size_t *clsl,
                        int ncls, const char **meth, const size_t *methl, int nmeth);
/* A row's frame made and kept by its module (NULL: not a row a module keeps). */
const mdb_frame *mdb_res_new_plain_frame(mdb_resolver *r, mdb_module *m, uint32_t token)
    __attribute__((noinline));

/* resolve_json.c: the JSON members of a frame, in r->scratch. */
void mdb_res_json_form(mdb_resolver *r, const mdb_frame *f);

static inline const mdb_frame *mdb_res_plain_frame(mdb_resolver *r, mdb_module *m, uint32_t token)
{
    const mdb_frame *f = mdb_kept_frame(m, token); /* the hot path: two loads */
    return f                                        ? f
           : MDT_TOKEN_TABLE(token) < MDT_TABLE_MAX ? mdb_res_new_plain_frame(r, m, token)
                                                    : NULL;
}

#endif
