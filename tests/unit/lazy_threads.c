/* Threads meeting the checks open leaves to first need (libmdtools/md/
 * lazy.c, runs.c): several threads start reading a freshly opened image at
 * the same moment, so they race to check which tables are sorted, to index
 * the runs of list columns and the Ptr tables, and to make the late
 * warnings. Every thread must get exactly the answers one thread alone gets
 * from another open of the same file: row owners, sorted flags, find
 * results, the warnings. Then the same for the bytes a file opened with
 * MDT_OPEN_LAZY reads on first need (libmdtools/image/ondemand.c): threads
 * race to the first read of each chunk (IL bodies from different starts,
 * the Win32 resources, the whole file), and must get what a lone reader of
 * the file read at open gets. Run by `make check` (also under ASan+UBSan), and built with
 * ThreadSanitizer by run-lazy-tsan.sh.
 *
 * Usage: lazy_threads [rounds]   (inputs found through MDT_TOP_SRCDIR) */
#define _DEFAULT_SOURCE /* pthread_barrier_destroy, pthread_barrier_init, pthread_barrier_t,       \
                           pthread_barrier_wait */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <talloc.h>
#include <unistd.h>

#include <mdtools/mdtools.h>

#include "padded.h"
#include "paths.h"

#define NTHREADS 4

/* Everything a thread asks of one image, as a list of numbers and the
 * warnings as text. */
struct answers {
    uint32_t *v;
    size_t n, cap;
    char *warnings;
};

static void put(struct answers *a, uint32_t v)
{
    if (a->n == a->cap) {
        a->cap = a->cap ? 2 * a->cap : 1024;
        a->v = realloc(a->v, a->cap * sizeof *a->v);
        if (!a->v)
            abort();
    }
    a->v[a->n++] = v;
}

/* Thread `who` asks its questions starting at a different table, so the
 * threads meet each lazy structure in a different order. */
static void ask(const mdt_image *img, unsigned who, struct answers *a)
{
    static const unsigned owned[] = {MDT_TABLE_MethodDef, MDT_TABLE_Field, MDT_TABLE_Param,
                                     MDT_TABLE_Property, MDT_TABLE_Event};
    size_t nowned = sizeof owned / sizeof owned[0];
    for (size_t k = 0; k < nowned; k++) {
        unsigned t = owned[(k + who) % nowned];
        uint32_t rows = mdt_table_rows(img, t);
        put(a, t);
        for (uint32_t rid = 1; rid <= rows; rid++) {
            uint32_t owner = 0xFFFFFFFFu;
            int e = mdt_token_owner(&owner, img, MDT_TOKEN(t, rid));
            put(a, (uint32_t)e);
            put(a, owner);
        }
    }
    for (unsigned i = 0; i < MDT_TABLE_MAX; i++) {
        unsigned t = (i + who * 7) % MDT_TABLE_MAX;
        const mdt_table_schema *s = mdt_table_schema_get(t);
        mdt_find f;
        uint32_t rid, key;
        mdt_row r;
        if (!s || s->sort_col < 0 || !mdt_table_rows(img, t))
            continue;
        put(a, t);
        put(a, mdt_table_is_sorted(img, t));
        /* Look up the keys of a few rows: binary search or scan. */
        for (uint32_t k = 1; k <= mdt_table_rows(img, t); k += 1 + mdt_table_rows(img, t) / 16) {
            if (mdt_row_get(&r, img, t, k) != 0)
                break;
            key = mdt_row_raw(&r, (unsigned)s->sort_col);
            if (mdt_find_init(&f, img, t, (unsigned)s->sort_col, key) != 0)
                abort();
            while (mdt_find_next(&rid, &f) == 0)
                put(a, rid);
        }
    }
    size_t nw = mdt_image_warning_count(img), len = 1;
    for (size_t i = 0; i < nw; i++)
        len += strlen(mdt_image_warning(img, i)) + 1;
    a->warnings = calloc(1, len);
    if (!a->warnings)
        abort();
    for (size_t i = 0; i < nw; i++) {
        strcat(a->warnings, mdt_image_warning(img, i));
        strcat(a->warnings, "\n");
    }
}

static void answers_free(struct answers *a)
{
    free(a->v);
    free(a->warnings);
    memset(a, 0, sizeof *a);
}

static bool same(const struct answers *a, const struct answers *b)
{
    return a->n == b->n && memcmp(a->v, b->v, a->n * sizeof *a->v) == 0 &&
           strcmp(a->warnings, b->warnings) == 0;
}

/* The bytes beyond the metadata, thread `who` starting its walk of the
 * method bodies at a different row. */
static void ask_bytes(const mdt_image *img, unsigned who, struct answers *a)
{
    uint32_t n = mdt_table_rows(img, MDT_TABLE_MethodDef);
    size_t len;
    uint32_t h = 0;
    if (who == 1) { /* one thread reads the whole file first */
        const uint8_t *d = mdt_image_bytes(&len, img);
        for (size_t i = 0; i < len; i += 4096)
            h = h * 31 + d[i];
        put(a, (uint32_t)len);
        put(a, h);
    }
    for (uint32_t k = 0; k < n; k++) {
        uint32_t rid = 1 + (k + who * (n / NTHREADS)) % n;
        mdt_il_body b;
        int e = mdt_il_body_get(&b, img, MDT_TOKEN(MDT_TABLE_MethodDef, rid));
        put(a, (uint32_t)e);
        if (e)
            continue;
        h = 0;
        for (uint32_t i = 0; i < b.code_size; i++)
            h = h * 31 + b.code[i];
        put(a, b.code_size);
        put(a, h);
    }
    void *tmp = talloc_new(NULL);
    mdt_win32res *res;
    size_t nres = 0;
    put(a, (uint32_t)mdt_win32res_list(tmp, &res, &nres, img));
    put(a, (uint32_t)nres);
    talloc_free(tmp);
    a->warnings = calloc(1, 1);
    if (!a->warnings)
        abort();
}

struct job {
    const mdt_image *img;
    void (*ask)(const mdt_image *, unsigned, struct answers *);
    unsigned who;
    pthread_barrier_t *start;
    struct answers got;
};

static void *run(void *arg)
{
    struct job *j = arg;
    pthread_barrier_wait(j->start);
    j->ask(j->img, j->who, &j->got);
    return NULL;
}

/* 0 when every thread of every round agrees with the lone reader. `lazy`:
 * the threads read bytes (ask_bytes) of images opened with MDT_OPEN_LAZY,
 * the lone reader reads the file read at open. */
static int check_file(const char *path, unsigned rounds, bool lazy)
{
    void (*ask_fn)(const mdt_image *, unsigned, struct answers *) = lazy ? ask_bytes : ask;
    void *ctx = talloc_new(NULL);
    mdt_image *img;
    struct answers want[NTHREADS];
    int bad = 0;
    if (mdt_image_open_file(ctx, &img, path, 0) != 0) {
        char m[512];
        fprintf(stderr, "%s: %s\n", path, mdt_error_message(m, sizeof m));
        talloc_free(ctx);
        return 1;
    }
    memset(want, 0, sizeof want);
    for (unsigned w = 0; w < NTHREADS; w++)
        ask_fn(img, w, &want[w]);
    mdt_image_close(img);
    for (unsigned round = 0; round < rounds && !bad; round++) {
        pthread_barrier_t start;
        pthread_t th[NTHREADS];
        struct job jobs[NTHREADS];
        if (mdt_image_open_file(ctx, &img, path, lazy ? MDT_OPEN_LAZY : 0) != 0)
            abort();
        pthread_barrier_init(&start, NULL, NTHREADS);
        for (unsigned w = 0; w < NTHREADS; w++) {
            jobs[w] = (struct job){img, ask_fn, w, &start, {0}};
            if (pthread_create(&th[w], NULL, run, &jobs[w]) != 0)
                abort();
        }
        for (unsigned w = 0; w < NTHREADS; w++) {
            pthread_join(th[w], NULL);
            if (!same(&jobs[w].got, &want[w])) {
                fprintf(stderr, "%s: round %u, thread %u disagrees with a lone reader\n", path,
                        round, w);
                bad = 1;
            }
            answers_free(&jobs[w].got);
        }
        pthread_barrier_destroy(&start);
        mdt_image_close(img);
    }
    printf("%s%s: %u rounds of %d threads, %zu answers each: %s\n", lazy ? "read on demand: " : "",
           path, rounds, NTHREADS, want[0].n, bad ? "FAILED" : "agree");
    for (unsigned w = 0; w < NTHREADS; w++)
        answers_free(&want[w]);
    talloc_free(ctx);
    return bad;
}

int main(int argc, char **argv)
{
    /* Damaged list runs (indexes), Ptr tables of #- metadata (indexes), an
     * unsorted table (sort state, warnings), and a large sound image. */
    static const char *cases[] = {"tests/corrupt/cases/fieldlist-backwards.bin",
                                  "tests/corrupt/cases/methodlist-backwards.bin",
                                  "tests/corrupt/cases/methodptr-beyond.bin",
                                  "tests/corrupt/cases/table-not-sorted.bin"};
    unsigned rounds = argc > 1 ? (unsigned)atoi(argv[1]) : 20;
    char path[4096];
    int passed = 0, failed = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (check_file(src_path(path, sizeof path, cases[i]), rounds, false))
            failed++;
        else
            passed++;
    }
    /* A small image made large (its later sections 512 KiB on: padded.h),
     * so that it is read on demand. */
    char tmp[4096];
    if (padded_copy(src_path(path, sizeof path, "data/Everything.dll"), tmp, sizeof tmp,
                    512 * 1024) != 0) {
        fprintf(stderr, "cannot make a padded copy of data/Everything.dll\n");
        failed++;
    } else {
        if (check_file(tmp, rounds, true))
            failed++;
        else
            passed++;
        unlink(tmp);
    }
    if (access(MONO_45_DIR "/mscorlib.dll", R_OK) == 0) {
        if (check_file(MONO_45_DIR "/mscorlib.dll", rounds / 10 + 1, false))
            failed++;
        else
            passed++;
        if (check_file(MONO_45_DIR "/mscorlib.dll", rounds / 10 + 1, true))
            failed++;
        else
            passed++;
    } else {
        fprintf(stderr,
                "no %s/mscorlib.dll (Debian mono-runtime): the large image is not "
                "checked\n",
                MONO_45_DIR);
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
