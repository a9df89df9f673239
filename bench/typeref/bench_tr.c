/* bench_tr: the mdtools side of the TypeRef-resolution benchmark
 * (bench/typeref/README.md). Opens every file named on the command line
 * (mmap; with BENCH_READ set: read into memory), registers them as one module set
 * (mdt_modset_add_many) and resolves every TypeRef of
 * every module once ("whole run": open + add + resolve, cold caches and
 * indexes, all in whole_run() so that `valgrind --tool=callgrind
 * --toggle-collect=whole_run` counts exactly the timed work). Then measures
 * warm resolution: the same TypeRefs resolved again REPEAT times from the
 * view's cache, reported in ns per resolution.
 * Prints: files, typerefs, resolved, whole-run ms (wall clock and CPU time
 * of the process), warm ns, and a checksum of the answers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <talloc.h>
#include <time.h>

#include <mdtools/mdtools.h>
#include <mdtools/modset.h>
#include <mdtools/typeref.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

struct ref {
    uintptr_t module;
    uint32_t token;
};

struct run {
    mdt_modset *set;
    mdt_modview *view;
    struct ref *refs;
    size_t nrefs, resolved, files;
    uint64_t sum;
    double topen; /* wall clock when the files were open */
};

/* Open the files, add them, resolve every TypeRef once: the timed work. */
static __attribute__((noinline)) int whole_run(void *ctx, int argc, char **argv, struct run *run)
{
    size_t cap = 1 << 15;
    mdt_module_desc *descs = calloc((size_t)argc, sizeof *descs);
    run->refs = malloc(cap * sizeof *run->refs);
    if (mdt_modset_new(ctx, &run->set) || !descs || !run->refs)
        return 1;
    for (int i = 1; i < argc; i++) {
        mdt_image *img;
        if (!getenv("BENCH_READ")) {
            if (mdt_image_open_file(run->set, &img, argv[i], 0))
                continue;
        } else {
            /* read(2) the file into memory the image then owns. */
            FILE *fp = fopen(argv[i], "rb");
            long n;
            uint8_t *buf;
            if (!fp)
                continue;
            fseek(fp, 0, SEEK_END);
            n = ftell(fp);
            fseek(fp, 0, SEEK_SET);
            buf = talloc_size(run->set, n > 0 ? (size_t)n : 1);
            if (!buf || fread(buf, 1, (size_t)n, fp) != (size_t)n) {
                fclose(fp);
                continue;
            }
            fclose(fp);
            if (mdt_image_open_buffer(run->set, &img, argv[i], buf, (size_t)n, 0))
                continue;
            talloc_steal(img, buf);
        }
        descs[run->files++] = (mdt_module_desc){.id = (uintptr_t)i, .image = img};
    }
    run->topen = now();
    if (mdt_modset_add_many(run->set, descs, run->files, MDT_MODSET_OWN_IMAGE))
        return 1;
    free(descs);
    mdt_modview *v = run->view = mdt_modset_acquire(run->set);
    for (size_t i = 0; i < mdt_modview_count(v); i++) {
        mdt_module_info mi;
        mdt_modview_module(&mi, v, i);
        for (uint32_t k = 1; k <= mdt_table_rows(mi.image, MDT_TABLE_TypeRef); k++) {
            mdt_resolution r;
            uint32_t tok = MDT_TOKEN(MDT_TABLE_TypeRef, k);
            if (mdt_typeref_resolve(NULL, &r, NULL, v, mi.id, tok, NULL))
                return 1;
            if (run->nrefs == cap)
                run->refs = realloc(run->refs, (cap *= 2) * sizeof *run->refs);
            run->refs[run->nrefs++] = (struct ref){mi.id, tok};
            if (r.resolved) {
                run->resolved++;
                run->sum += r.module * 31 + r.token;
            }
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    int repeat = getenv("REPEAT") ? atoi(getenv("REPEAT")) : 20;
    void *ctx = talloc_new(NULL);
    struct run run = {0};
    double t0 = now(), c0 = cpu_now();
    if (whole_run(ctx, argc, argv, &run))
        return 1;
    double t1 = now(), c1 = cpu_now();
    /* Warm: every answer comes from the view's cache. */
    uint64_t wsum = 0;
    double t2 = now();
    for (int rep = 0; rep < repeat; rep++)
        for (size_t i = 0; i < run.nrefs; i++) {
            mdt_resolution r;
            mdt_typeref_resolve(NULL, &r, NULL, run.view, run.refs[i].module, run.refs[i].token,
                                NULL);
            wsum += r.token;
        }
    double t3 = now();
    printf("files %zu typerefs %zu resolved %zu whole_ms %.2f cpu_ms %.2f open_ms %.2f "
           "warm_ns %.1f checksum %llu %llu\n",
           run.files, run.nrefs, run.resolved, (t1 - t0) * 1e3, (c1 - c0) * 1e3,
           (run.topen - t0) * 1e3,
           run.nrefs && repeat ? (t3 - t2) * 1e9 / ((double)run.nrefs * repeat) : 0.0,
           (unsigned long long)run.sum, (unsigned long long)(wsum & 0xffff));
    mdt_modview_release(run.view);
    talloc_free(ctx);
    free(run.refs);
    return 0;
}
