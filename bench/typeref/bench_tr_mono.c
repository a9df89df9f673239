/* bench_tr_mono: the libmono side of the TypeRef-resolution benchmark
 * (bench/typeref/README.md). After mono_jit_init (timed apart), opens every
 * file named on the command line as an assembly (mono_assembly_open_full)
 * and resolves every TypeRef of every image the way a profiler would with
 * the runtime: the scope's AssemblyRef picks the loaded image of that simple
 * name, mono_class_from_name looks the type up there (following type
 * forwarders), nested TypeRefs descend with mono_class_get_nested_types.
 * The timed work is all in whole_run() (for `valgrind --tool=callgrind
 * --toggle-collect=whole_run`). Prints the same summary line as bench_tr
 * (cpu_ms: CPU time of the whole process, runtime threads included). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mono/jit/jit.h>
#include <mono/metadata/assembly.h>
#include <mono/metadata/class.h>
#include <mono/metadata/image.h>
#include <mono/metadata/metadata.h>
#include <mono/metadata/tokentype.h>

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

#define MAXIMG 1024
static MonoImage *images[MAXIMG];
static int nimages;

static MonoImage *by_name(const char *name)
{
    for (int i = 0; i < nimages; i++)
        if (!strcasecmp(mono_image_get_name(images[i]), name))
            return images[i];
    return NULL;
}

static MonoClass *resolve(MonoImage *img, uint32_t rid, int depth)
{
    const MonoTableInfo *t = mono_image_get_table_info(img, MONO_TABLE_TYPEREF);
    uint32_t cols[MONO_TYPEREF_SIZE];
    if (depth > 64)
        return NULL;
    mono_metadata_decode_row(t, (int)rid - 1, cols, MONO_TYPEREF_SIZE);
    const char *name = mono_metadata_string_heap(img, cols[MONO_TYPEREF_NAME]);
    const char *ns = mono_metadata_string_heap(img, cols[MONO_TYPEREF_NAMESPACE]);
    uint32_t scope = cols[MONO_TYPEREF_SCOPE], idx = scope >> 2;
    switch (scope & 3) {
    case 0: /* Module */ return mono_class_from_name(img, ns, name);
    case 3: { /* TypeRef: nested */
        MonoClass *outer = resolve(img, idx, depth + 1), *k;
        void *it = NULL;
        if (!outer)
            return NULL;
        while ((k = mono_class_get_nested_types(outer, &it)))
            if (!strcmp(mono_class_get_name(k), name))
                return k;
        return NULL;
    }
    case 2: { /* AssemblyRef */
        const MonoTableInfo *a = mono_image_get_table_info(img, MONO_TABLE_ASSEMBLYREF);
        uint32_t ac[MONO_ASSEMBLYREF_SIZE];
        mono_metadata_decode_row(a, (int)idx - 1, ac, MONO_ASSEMBLYREF_SIZE);
        MonoImage *target = by_name(mono_metadata_string_heap(img, ac[MONO_ASSEMBLYREF_NAME]));
        return target ? mono_class_from_name(target, ns, name) : NULL;
    }
    default: return NULL;
    }
}

struct run {
    size_t nrefs, resolved;
    unsigned long long sum;
};

/* Open the files as assemblies and resolve every TypeRef: the timed work. */
static __attribute__((noinline)) void whole_run(int argc, char **argv, struct run *run)
{
    for (int i = 1; i < argc && nimages < MAXIMG; i++) {
        MonoImageOpenStatus st;
        MonoAssembly *a = mono_assembly_open_full(argv[i], &st, 0);
        if (a)
            images[nimages++] = mono_assembly_get_image(a);
    }
    for (int i = 0; i < nimages; i++) {
        const MonoTableInfo *t = mono_image_get_table_info(images[i], MONO_TABLE_TYPEREF);
        int rows = mono_table_info_get_rows(t);
        for (int k = 1; k <= rows; k++) {
            MonoClass *c = resolve(images[i], (uint32_t)k, 0);
            run->nrefs++;
            if (c) {
                run->resolved++;
                run->sum += mono_class_get_type_token(c);
            }
        }
    }
}

int main(int argc, char **argv)
{
    double ti = now();
    mono_jit_init_version("bench", "v4.0.30319");
    struct run run = {0};
    double t0 = now(), c0 = cpu_now();
    whole_run(argc, argv, &run);
    double t1 = now(), c1 = cpu_now();
    printf("files %d typerefs %zu resolved %zu whole_ms %.2f cpu_ms %.2f init_ms %.2f "
           "checksum %llu\n",
           nimages, run.nrefs, run.resolved, (t1 - t0) * 1e3, (c1 - c0) * 1e3, (t0 - ti) * 1e3,
           run.sum);
    return 0;
}
