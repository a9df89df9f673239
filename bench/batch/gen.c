/* bench/batch/gen: the inputs of the batch benchmark (bench/batch/README.md),
 * drawn with a fixed seed so every run reads the same lines.
 *
 *   gen path N FILE...     N `PATH TOKEN` lines, (module, MethodDef) pairs
 *                          drawn uniformly over all MethodDefs of the FILEs
 *   gen mvid N FILE...     the same pairs as `MVID TOKEN` lines
 *   gen stacks N D FILE... N profiler-log `stack` records of D frames each
 *                          (frames `mvid:token@il`, counts 1..100)
 *
 * Uses the public API of libmdtools only to count rows and read MVIDs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <talloc.h>

#include <mdtools/mdtools.h>

static uint64_t state = 0x9E3779B97F4A7C15ull;

static uint64_t next(void) /* xorshift64* */
{
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return state * 0x2545F4914F6CDD1Dull;
}

struct mod {
    const char *path;
    char mvid[33];
    uint32_t methods;
    uint64_t first; /* index of its first method among all */
};

static struct mod *mods;
static size_t nmods;
static uint64_t total;

static void pick(struct mod **m, uint32_t *token)
{
    uint64_t k = next() % total;
    size_t lo = 0, hi = nmods;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (mods[mid].first <= k)
            lo = mid;
        else
            hi = mid;
    }
    *m = &mods[lo];
    *token = 0x06000000u | (uint32_t)(k - mods[lo].first + 1);
}

int main(int argc, char **argv)
{
    void *ctx = talloc_new(NULL);
    int first = 3;
    unsigned long n, depth = 0;
    if (argc < 4) {
        fprintf(stderr, "usage: gen path|mvid N FILE... | gen stacks N DEPTH FILE...\n");
        return 2;
    }
    n = strtoul(argv[2], NULL, 10);
    if (strcmp(argv[1], "stacks") == 0) {
        depth = strtoul(argv[3], NULL, 10);
        first = 4;
    }
    mods = talloc_array(ctx, struct mod, (size_t)argc);
    for (int i = first; i < argc; i++) {
        mdt_image *img;
        uint8_t g[16];
        static const int order[16] = {3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15};
        if (mdt_image_open_file(ctx, &img, argv[i], 0) || mdt_image_mvid(g, img))
            continue;
        uint32_t rows = mdt_table_rows(img, MDT_TABLE_MethodDef);
        if (!rows)
            continue;
        struct mod *m = &mods[nmods++];
        m->path = argv[i];
        for (int k = 0; k < 16; k++)
            snprintf(m->mvid + 2 * k, 3, "%02x", g[order[k]]);
        m->methods = rows;
        m->first = total;
        total += rows;
        talloc_free(img);
    }
    if (!total)
        return 1;
    for (unsigned long i = 0; i < n; i++) {
        struct mod *m;
        uint32_t tok;
        if (depth) {
            printf("stack %u", (unsigned)(next() % 100 + 1));
            for (unsigned long d = 0; d < depth; d++) {
                pick(&m, &tok);
                printf(" %s:0x%08x@0x%x", m->mvid, tok, (unsigned)(next() % 64));
            }
            putchar('\n');
            continue;
        }
        pick(&m, &tok);
        printf("%s 0x%08x\n", argv[1][0] == 'p' ? m->path : m->mvid, tok);
    }
    fprintf(stderr, "gen: %zu modules with methods, %llu methods\n", nmods,
            (unsigned long long)total);
    talloc_free(ctx);
    return 0;
}
