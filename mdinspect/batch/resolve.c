/* mdinspect batch: one frame's text to what it names. A frame is a
 * profiler-log frame (`mvid:token{class args}<method args>@il`, or a
 * special word; doc/profile-log.md), an alloc record's type descriptor (or a
 * special word, for a type the profiler could not describe), or
 * a plain line (`MVID TOKEN [DESC...]`, `PATH TOKEN`). The answer (full-style
 * name of doc/names.md, status, source file and line from the module's
 * portable PDB, and the text and JSON forms the emitters print; in a JSON
 * run also the metadata name of a type or member, made with the name by
 * the library's mdt_token_metadata_name, as the shell's) is cached
 * by the frame's exact text, so a frame met again costs one hash lookup.
 * Failures are answers too (status and detail), cached the same way.
 *
 * One resolver per thread: its caches, arenas and name caches are its own.
 * The frames of plain rows are shared through their module (one array of
 * atomic pointers per table): the first thread to name a row publishes its
 * frame with a compare-and-swap, and a frame never changes once published
 * (its JSON form is made before, when the run wants JSON). Two threads that
 * name the same row at once make the same frame; the loser's copy stays in
 * its arena unused.
 *
 * The resolver is four files (resolve_int.h): this one holds the resolver,
 * its settings, its caches by text and their share of the memory budget;
 * resolve_make.c makes frames, resolve_lines.c reads frames' texts,
 * resolve_json.c writes their JSON form. */
#include "config.h"

#include <inttypes.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <talloc.h>

#include <mdtools/members.h>

#include "batch/resolve_int.h"

static const char *const status_text[] = {
    [MDB_OK] = "ok",
    [MDB_SPECIAL] = "special",
    [MDB_UNKNOWN_MVID] = "unknown MVID",
    [MDB_UNKNOWN_FILE] = "unknown file",
    [MDB_NO_SUCH_ROW] = "no such row",
    [MDB_BAD_TOKEN] = "bad token",
    [MDB_BAD_DESCRIPTOR] = "bad descriptor",
    [MDB_BAD_FRAME] = "bad frame",
    [MDB_BAD_METADATA] = "bad metadata",
};

const char *mdb_status_text(int status)
{
    return status_text[status];
}

mdb_resolver *mdb_resolver_new(void *ctx, mdb_assemblies *a, bool want_json, mdb_budget *budget)
{
    mdb_resolver *r = talloc_zero(ctx, mdb_resolver);
    if (!r)
        return NULL;
    r->a = a;
    r->want_json = want_json;
    r->budget = budget;
    mdb_arena_init(&r->arena, r);
    mdb_arena_init(&r->lasting, r);
    r->lasting.huge = true;
    if (budget)
        r->lasting.shared = &budget->kept;
    if (!(r->namectx = talloc_new(r))) {
        talloc_free(r);
        return NULL;
    }
    r->cur = &r->arena;
    for (int k = 0; k < K_COUNT; k++)
        if (mdb_table_init(&r->cache[k], r, 1024)) { /* grown as needed */
            talloc_free(r);
            return NULL;
        }
    if (!r->arena.ctx || !r->lasting.ctx || !(r->mods = mdb_modcache_new(r, a)) ||
        !(r->natives = mdb_native_cache_new(r, want_json)) || mdb_output_init(&r->scratch, r, -1)) {
        talloc_free(r);
        return NULL;
    }
    return r;
}

void mdb_resolver_use_natives(mdb_resolver *r, mdb_natives *n)
{
    mdb_native_cache_use(r->natives, n);
}

void mdb_resolver_set_line(mdb_resolver *r, uint64_t lineno)
{
    r->lineno = lineno;
}

const char *mdb_resolver_native_warning(mdb_resolver *r)
{
    return mdb_native_warning(r->natives);
}

void mdb_resolver_trim(mdb_resolver *r)
{
    if (r->over)
        mdb_resolver_forget(r);
}

void mdb_resolver_set_signatures(mdb_resolver *r, bool on)
{
    r->name_flags = on ? MDI_NAME_SIGNATURES : 0; /* as the shell's `set signatures on` */
}

void mdb_resolver_set_il(mdb_resolver *r, bool on)
{
    r->want_il = on;
}

uint64_t mdb_resolver_resets(const mdb_resolver *r)
{
    return r->resets;
}

/* Everything cached by text, and the type names: made again as needed.
 * The tables shrink back (a table sized for millions of entries would
 * otherwise stay that large). */
void mdb_resolver_forget(mdb_resolver *r)
{
    mdb_native_forget(r->natives);
    for (int k = 0; k < K_COUNT; k++)
        if (mdb_table_reset(&r->cache[k]))
            mdb_table_clear(&r->cache[k]); /* no memory for new slots: keep the old */
    mdb_arena_reset(&r->arena);
    talloc_free_children(r->namectx);
    if (r->names)
        memset(r->names, 0, r->nnames * sizeof *r->names);
    r->n = 0;
    r->names_bytes = 0;
    r->over = false;
    r->resets++;
}

/* The bytes this thread's caches hold against its share of the budget:
 * looked at every 256 new entries (the type name caches, a walk of their
 * talloc tree, every 16384). */
void mdb_res_count_bytes(mdb_resolver *r)
{
    size_t b;
    if (!r->budget || (r->n & 255))
        return;
    if (!(r->n & 16383))
        r->names_bytes = talloc_total_size(r->namectx);
    b = r->arena.bytes + r->names_bytes + mdb_native_bytes(r->natives);
    for (int k = 0; k < K_COUNT; k++)
        b += mdb_table_bytes(&r->cache[k]);
    r->over = b > r->budget->thread_max;
}

const mdb_frame *mdb_res_cached(mdb_resolver *r, int k, const char *s, size_t n, uint64_t *h)
{
    *h = mdb_hash(s, n);
    return mdb_table_get(&r->cache[k], *h, s, n);
}

const mdb_frame *mdb_res_store(mdb_resolver *r, int k, const char *s, size_t n, uint64_t h,
                               mdb_frame *f)
{
    static mdb_frame nomem = {.status = MDB_BAD_FRAME,
                              .detail = "out of memory",
                              .text = "[unresolved: out of memory]",
                              .text_len = 27};
    if (!f)
        return &nomem;
    mdb_res_finish(r, f);
    if (mdb_table_put(&r->cache[k], h, s, n, f) == 0)
        r->n++;
    mdb_res_count_bytes(r);
    return f;
}

/* f becomes the special frame s, cached under cache k. */
const mdb_frame *mdb_res_store_special(mdb_resolver *r, int k, const char *s, size_t n, uint64_t h,
                                       mdb_frame *f)
{
    f->status = MDB_SPECIAL;
    f->name = mdb_res_keep(r, s, n, &f->name_len);
    return mdb_res_store(r, k, s, n, h, f);
}

const mdb_modcache *mdb_resolver_modcache(const mdb_resolver *r)
{
    return r->mods;
}

void mdb_resolver_prefetch(const mdb_resolver *r, const mdb_module *m, uint32_t token,
                           unsigned step)
{
    const mdt_name_cache *c = m->id < r->nnames ? r->names[m->id].full : NULL;
    mdt_token_name_prefetch(m->img, token, c, step);
}
