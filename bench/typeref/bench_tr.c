/* bench_tr: the mdtools side of the TypeRef-resolution benchmark
 * (bench/typeref/README.md). Opens every file named on the command line
 * (mmap; with BENCH_READ set: read into memory), registers them as one module set
 * (mdt_modset_add_many) and resolves every TypeRef of
 * every module once ("whole run": open + add + resolve, cold caches and
 * indexes). Then measures warm resolution: the same TypeRefs resolved again
 * REPEAT times from the view's cache, reported in ns per resolution.
 * Prints: files, typerefs, resolved, whole-run ms, warm ns, and a checksum
 * of the answers. */
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

struct ref {
    uintptr_t module;
    uint32_t token;
};

int main(int argc, char **argv)
{
    int repeat = getenv("REPEAT") ? atoi(getenv("REPEAT")) : 20;
    void *ctx = talloc_new(NULL);
    mdt_modset *set;
    size_t nrefs = 0, resolved = 0, cap = 1 << 15, files = 0;
    struct ref *refs = malloc(cap * sizeof *refs);
    uint64_t sum = 0;
    double t0 = now();
    mdt_module_desc *descs = calloc((size_t)argc, sizeof *descs);
    if (mdt_modset_new(ctx, &set) || !descs)
        return 1;
    for (int i = 1; i < argc; i++) {
        mdt_image *img;
        if (!getenv("BENCH_READ")) {
            if (mdt_image_open_file(set, &img, argv[i], 0))
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
            buf = talloc_size(set, n > 0 ? (size_t)n : 1);
            if (!buf || fread(buf, 1, (size_t)n, fp) != (size_t)n) {
                fclose(fp);
                continue;
            }
            fclose(fp);
            if (mdt_image_open_buffer(set, &img, argv[i], buf, (size_t)n, 0))
                continue;
            talloc_steal(img, buf);
        }
        descs[files++] = (mdt_module_desc){.id = (uintptr_t)i, .image = img};
    }
    double topen = now();
    if (mdt_modset_add_many(set, descs, files, MDT_MODSET_OWN_IMAGE))
        return 1;
    mdt_modview *v = mdt_modset_acquire(set);
    for (size_t i = 0; i < mdt_modview_count(v); i++) {
        mdt_module_info mi;
        mdt_modview_module(v, i, &mi);
        for (uint32_t k = 1; k <= mdt_table_rows(mi.image, MDT_TABLE_TypeRef); k++) {
            mdt_resolution r;
            uint32_t tok = MDT_TOKEN(MDT_TABLE_TypeRef, k);
            if (mdt_typeref_resolve(NULL, &r, NULL, v, mi.id, tok, NULL))
                return 1;
            if (nrefs == cap)
                refs = realloc(refs, (cap *= 2) * sizeof *refs);
            refs[nrefs++] = (struct ref){mi.id, tok};
            if (r.resolved) {
                resolved++;
                sum += r.module * 31 + r.token;
            }
        }
    }
    double t1 = now();
    /* Warm: every answer comes from the view's cache. */
    uint64_t wsum = 0;
    double t2 = now();
    for (int rep = 0; rep < repeat; rep++)
        for (size_t i = 0; i < nrefs; i++) {
            mdt_resolution r;
            mdt_typeref_resolve(NULL, &r, NULL, v, refs[i].module, refs[i].token, NULL);
            wsum += r.token;
        }
    double t3 = now();
    printf("files %zu typerefs %zu resolved %zu whole_ms %.2f open_ms %.2f warm_ns %.1f "
           "checksum %llu %llu\n",
           files, nrefs, resolved, (t1 - t0) * 1e3, (topen - t0) * 1e3,
           nrefs ? (t3 - t2) * 1e9 / ((double)nrefs * repeat) : 0.0, (unsigned long long)sum,
           (unsigned long long)(wsum & 0xffff));
    mdt_modview_release(v);
    talloc_free(ctx);
    free(refs);
    free(descs);
    return 0;
}
