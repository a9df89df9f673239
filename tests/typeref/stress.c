/* Concurrency test of the module set: reader threads resolve every TypeRef,
 * MemberRef and ExportedType of every module in their view (with and
 * without traces, each with its own talloc context) while a writer thread
 * removes and re-adds modules. Invariants checked on every view: a result
 * names only modules of that view, and whenever the whole forwarder chain
 * is in the view, Chain.Plain lands in Hop3 after 3 hops (so a reader never
 * sees a half-built snapshot or another snapshot's cache). Built normally
 * for `make check` and with -fsanitize=thread by tests/typeref/tsan.sh.
 * Prints "N passed, M failed". Usage: stress [seconds] (default 2). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <talloc.h>
#include <time.h>

#include <mdtools/mdtools.h>
#include <mdtools/modset.h>
#include <mdtools/typeref.h>

#include "paths.h"

#define NREADERS 4

static const char *files[] = {
    "data/resolve/chain/ChainClient.exe",
    "data/resolve/chain/Hop0.dll",
    "data/resolve/chain/Hop1.dll",
    "data/resolve/chain/Hop2.dll",
    "data/resolve/chain/Hop3.dll",
    "data/fwd/Client.exe",
    "data/fwd/v2/Lib.dll",
    "data/fwd/Real.dll",
    "data/fwd/Final.dll",
    "data/resolve/cycle/CycA.dll",
    "data/resolve/cycle/CycB.dll",
    "data/resolve/multi/MM.dll",
    "data/resolve/multi/MMPart.netmodule",
};
#define NFILES (sizeof files / sizeof *files)

static mdt_image *images[NFILES];
static mdt_modset *set;
static atomic_bool stop;
static atomic_ulong failures, views, resolutions;

static void check(bool ok, const char *what)
{
    if (!ok) {
        if (atomic_fetch_add(&failures, 1) < 10)
            fprintf(stderr, "FAIL: %s\n", what);
    }
}

static void *reader(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    while (!atomic_load(&stop)) {
        void *ctx = talloc_new(NULL);
        mdt_modview *v = mdt_modset_acquire(set);
        size_t n = mdt_modview_count(v);
        bool chain_complete = true;
        for (uintptr_t id = 1; id <= 5; id++) {
            mdt_module_info mi;
            chain_complete &= mdt_modview_lookup(&mi, v, id) == 0;
        }
        for (size_t i = 0; i < n; i++) {
            mdt_module_info mi;
            static const unsigned tables[] = {MDT_TABLE_TypeRef, MDT_TABLE_MemberRef,
                                              MDT_TABLE_ExportedType};
            if (mdt_modview_module(&mi, v, i) || !mi.image)
                continue;
            for (unsigned t = 0; t < 3; t++)
                for (uint32_t k = 1; k <= mdt_table_rows(mi.image, tables[t]); k++) {
                    mdt_resolution r;
                    mdt_trace *tr = NULL;
                    bool want_trace = (rand_r(&seed) & 15) == 0;
                    int e = mdt_token_resolve(ctx, &r, want_trace ? &tr : NULL, v, mi.id,
                                              MDT_TOKEN(tables[t], k), NULL);
                    mdt_module_info dm;
                    check(e == 0, "resolve failed");
                    check(!want_trace || tr, "no trace");
                    check(!r.resolved || mdt_modview_lookup(&dm, v, r.module) == 0,
                          "result names a module outside the view");
                    atomic_fetch_add(&resolutions, 1);
                }
            if (mi.id == 1 && chain_complete) {
                mdt_resolution r;
                mdt_typeref_resolve(ctx, &r, NULL, v, 1, MDT_TOKEN(MDT_TABLE_TypeRef, 1), NULL);
                check(r.resolved && r.module == 5 && r.hops == 3,
                      "Chain.Plain did not land in Hop3 with the chain loaded");
            }
        }
        mdt_modview_release(v);
        talloc_free(ctx);
        atomic_fetch_add(&views, 1);
    }
    return NULL;
}

static void *writer(void *arg)
{
    unsigned seed = 7;
    (void)arg;
    while (!atomic_load(&stop)) {
        uintptr_t id = 1 + (uintptr_t)(rand_r(&seed) % NFILES);
        mdt_module_info mi;
        mdt_modview *v = mdt_modset_acquire(set);
        bool present = mdt_modview_lookup(&mi, v, id) == 0;
        mdt_modview_release(v);
        if (present) {
            check(mdt_modset_remove(set, id) == 0, "remove");
        } else {
            mdt_module_desc d = {.id = id, .image = images[id - 1], .appdomain = 0};
            check(mdt_modset_add(set, &d, 0) == 0, "add");
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    void *ctx = talloc_new(NULL);
    double seconds = argc > 1 ? atof(argv[1]) : 2.0;
    pthread_t r[NREADERS], w;
    char p[1024];
    struct timespec ts = {(time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9)};
    if (mdt_modset_new(ctx, &set))
        return 1;
    for (size_t i = 0; i < NFILES; i++) {
        if (mdt_image_open_file(ctx, &images[i], src_path(p, sizeof p, files[i]), 0)) {
            fprintf(stderr, "cannot open %s\n", p);
            return 1;
        }
        mdt_module_desc d = {.id = i + 1, .image = images[i]};
        mdt_modset_add(set, &d, 0);
    }
    for (uintptr_t i = 0; i < NREADERS; i++)
        pthread_create(&r[i], NULL, reader, (void *)(i + 1));
    pthread_create(&w, NULL, writer, NULL);
    nanosleep(&ts, NULL);
    atomic_store(&stop, true);
    for (int i = 0; i < NREADERS; i++)
        pthread_join(r[i], NULL);
    pthread_join(w, NULL);
    check(mdt_modset_reclaim(set) == 0, "snapshots still held after every reader left");
    check(atomic_load(&views) > NREADERS, "readers made no progress");
    printf("# %lu views, %lu resolutions, generation %lu\n", atomic_load(&views),
           atomic_load(&resolutions), (unsigned long)mdt_modset_generation(set));
    talloc_free(ctx);
    unsigned long f = atomic_load(&failures);
    printf("%d passed, %lu failed\n", f ? 0 : 1, f ? 1UL : 0UL);
    return f ? 1 : 0;
}
