/* libFuzzer harness over reference resolution: the input is a module set,
 * a sequence of records [u8 appdomain tag][u32 little-endian length][bytes]
 * (at most 8 modules; a record of length 0 is a module without metadata).
 * Every record that opens is added to a module set; then every TypeRef,
 * MemberRef and ExportedType row of every module is resolved (some with a
 * trace, some STRICT, some with a small hop bound), every AssemblyRef is
 * bound, the first module is removed and everything resolved again through
 * a new view. Oracles besides the sanitizers: a resolution that fails with
 * an error other than the documented ones, a result naming a module outside
 * the view, a cached answer that differs from a fresh one, memory under the
 * caller's context that grows past a bound. Seeds in tests/typeref/corpus/
 * (made by tests/typeref/make-corpus.py from fixture module sets); built as
 * a plain replayer (tests/fuzz/replay.c) that `make check` runs. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <talloc.h>

#include <mdtools/mdtools.h>
#include <mdtools/modset.h>
#include <mdtools/typeref.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_MODULES 8
#define MAX_ROWS 4096 /* per table and module: keeps one input fast */

static volatile uint64_t sink;

static void resolve_all(void *ctx, mdt_modview *v, unsigned round)
{
    static const unsigned tables[] = {MDT_TABLE_TypeRef, MDT_TABLE_MemberRef,
                                      MDT_TABLE_ExportedType, MDT_TABLE_AssemblyRef};
    for (size_t i = 0; i < mdt_modview_count(v); i++) {
        mdt_module_info mi;
        if (mdt_modview_module(&mi, v, i))
            abort();
        uint32_t extra = MDT_TOKEN(MDT_TABLE_TypeRef, 1);
        mdt_resolution r;
        /* IDs and tokens the set does not know. */
        if (mdt_typeref_resolve(NULL, &r, NULL, v, 0xdead, extra, NULL) != MDT_ENOTFOUND)
            abort();
        if (!mi.image)
            continue;
        for (unsigned t = 0; t < 4; t++) {
            uint32_t rows = mdt_table_rows(mi.image, tables[t]), n = rows;
            if (n > MAX_ROWS)
                n = MAX_ROWS;
            for (uint32_t k = 1; k <= n + 1; k++) {
                uint32_t tok = MDT_TOKEN(tables[t], k);
                if (tables[t] == MDT_TABLE_AssemblyRef) {
                    uintptr_t m;
                    int tier;
                    sink += (uint64_t)mdt_assemblyref_bind(&m, &tier, v, mi.id, tok);
                    continue;
                }
                mdt_resolve_opts o = {0, MDT_RESOLVE_OPTS_VERSION, 0};
                mdt_trace *tr = NULL;
                bool want_trace = ((k + round) % 5) == 0;
                if (k % 7 == 3)
                    o.flags = MDT_RESOLVE_STRICT;
                if (k % 11 == 5)
                    o.max_hops = 1;
                int e = mdt_token_resolve(ctx, &r, want_trace ? &tr : NULL, v, mi.id, tok, &o);
                if (k == n + 1) {
                    if (n == rows && e != MDT_EINVAL)
                        abort(); /* one past the last row */
                    continue;
                }
                if (e != 0 && e != MDT_ENOMEM)
                    abort();
                if (e)
                    continue;
                if (r.resolved) {
                    mdt_module_info dm;
                    if (mdt_modview_lookup(&dm, v, r.module) != 0 || !dm.image)
                        abort();
                    char *name = NULL;
                    if (mdt_token_name(ctx, &name, dm.image, r.token, NULL) == 0)
                        sink += strlen(name);
                }
                if (r.nvisited > MDT_RESOLVE_MAX_VISITED)
                    abort();
                for (size_t j = 0; tr && j < tr->n; j++)
                    sink += strlen(tr->entries[j].text);
                /* Default options: the cached answer equals a fresh one. */
                if (!o.flags && !o.max_hops) {
                    mdt_resolution again, fresh;
                    mdt_resolve_opts nc = {MDT_RESOLVE_NOCACHE, MDT_RESOLVE_OPTS_VERSION, 0};
                    if (mdt_token_resolve(ctx, &again, NULL, v, mi.id, tok, NULL) ||
                        mdt_token_resolve(ctx, &fresh, NULL, v, mi.id, tok, &nc))
                        abort();
                    if (again.resolved != fresh.resolved || again.module != fresh.module ||
                        again.token != fresh.token || again.reason != fresh.reason ||
                        again.hops != fresh.hops || again.tier != fresh.tier)
                        abort();
                }
                talloc_free_children(ctx);
            }
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    void *top = talloc_new(NULL);
    void *ctx = talloc_new(NULL);
    mdt_modset *set;
    size_t pos = 0;
    uintptr_t id = 1;
    if (!top || !ctx || mdt_modset_new(top, &set))
        abort();
    while (pos + 5 <= size && id <= MAX_MODULES) {
        uint8_t tag = data[pos];
        uint32_t len = (uint32_t)data[pos + 1] | (uint32_t)data[pos + 2] << 8 |
                       (uint32_t)data[pos + 3] << 16 | (uint32_t)data[pos + 4] << 24;
        pos += 5;
        if (len > size - pos)
            len = (uint32_t)(size - pos);
        mdt_image *img = NULL;
        if (len && mdt_image_open_buffer(top, &img, "fuzz", data + pos, len, 0))
            img = NULL;
        mdt_module_desc d = {.id = id++,
                             .image = img,
                             .appdomain = tag % 3,
                             .name = len ? NULL : "Dynamic.netmodule"};
        if (mdt_modset_add(set, &d, MDT_MODSET_OWN_IMAGE))
            abort();
        pos += len;
    }
    mdt_modview *v = mdt_modset_acquire(set);
    resolve_all(ctx, v, 0);
    if (mdt_modview_count(v)) {
        mdt_module_info first;
        mdt_modview_module(&first, v, 0);
        if (mdt_modset_remove(set, first.id))
            abort();
        mdt_modview *w = mdt_modset_acquire(set);
        resolve_all(ctx, w, 1);
        mdt_modview_release(w);
    }
    mdt_modview_release(v);
    if (mdt_modset_reclaim(set) != 0)
        abort();
    /* Nothing may be left under the caller's context. */
    if (talloc_total_size(ctx) != 0)
        abort();
    talloc_free(ctx);
    talloc_free(top);
    return 0;
}
