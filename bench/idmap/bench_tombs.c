/* What code tombstones cost under churn (issue 30): functions die and new
 * ones are compiled, for three ways of placing the new code: in place
 * (the memory the dead code held, as a code heap that hands back the same
 * block), in a code heap (a random free 4 KiB block of 2,048, at a random
 * offset and size inside it, so boundaries keep moving) and at fresh
 * addresses (never where code was: no tombstone is ever cleared, the worst
 * case). For each, the writer-only bytes that the code adds: bytes_writer
 * less dependents and history, with code ranges minus the same churn
 * without them (mdt_idmap_synchronize first, so both have the same retired
 * list), at checkpoints; and the CPU time per cycle (load, code_add,
 * unload). A profiler that never calls mdt_idmap_retire() keeps what is
 * shown here. Usage: bench_tombs [cycles] */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <time.h>

#include <mdtools/idmap.h>

#define LIVE 2048u /* functions alive at once */
#define BLOCK 0x1000u
#define HEAP 0x40000000u

enum { IN_PLACE, HEAP_REUSE, FRESH, NPATTERNS };
static const char *const pattern_name[] = {"in place", "code heap", "fresh addresses"};

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static size_t writer_bytes(mdt_idmap *m)
{
    mdt_idmap_stats st;
    mdt_idmap_synchronize(m);
    mdt_idmap_stats_get(&st, m);
    return st.bytes_writer - st.bytes_deps - st.bytes_history;
}

/* One run; fills bytes[k] at checkpoint k (cycles / 10^(3-k) ... ), and
 * the CPU seconds. */
static void run(int pattern, bool code, unsigned long cycles, size_t bytes[4], double *secs)
{
    mdt_idmap *m;
    if (mdt_idmap_new(&m, NULL) != 0)
        exit(2);
    mdt_idmap_module_info mi = {0};
    mi.mvid[0] = 1;
    uint64_t seq = 1;
    mdt_idmap_module_load(m, 0x10000, &mi, seq++);
    static uintptr_t fid[LIVE], at[LIVE];
    static unsigned char used[4096];
    uintptr_t next_fid = 0x100000, fresh = HEAP;
    rng = 88172645463325252ull;
    for (unsigned i = 0; i < 4096; i++)
        used[i] = 0;
    unsigned long check[4] = {cycles / 1000, cycles / 100, cycles / 10, cycles};
    int k = 0;
    double t0 = cpu_now();
    for (unsigned long c = 0; c < cycles + LIVE; c++) {
        unsigned slot = c < LIVE ? (unsigned)c : (unsigned)(rnd() % LIVE);
        if (c >= LIVE) {
            mdt_idmap_function_unload(m, fid[slot], seq++);
            if (pattern == HEAP_REUSE)
                used[(at[slot] - HEAP) / BLOCK] = 0;
        }
        fid[slot] = next_fid;
        next_fid += 0x40;
        /* Distinct content: equal content hashes would make the reverse
         * index, not the code, the cost. */
        mdt_idmap_function_info fi = {0x10000, 0x06000001 + (uint32_t)(c & 0xfffff), 0, 0, NULL, 0};
        mdt_idmap_function_load(m, fid[slot], &fi, seq++);
        size_t size = 0x100;
        if (pattern == IN_PLACE) {
            if (c < LIVE)
                at[slot] = HEAP + (uintptr_t)slot * BLOCK;
        } else if (pattern == HEAP_REUSE) {
            unsigned b;
            do
                b = (unsigned)(rnd() % 4096);
            while (used[b]);
            used[b] = 1;
            uintptr_t off = (uintptr_t)(rnd() % 16) * 0x40;
            size = 0x40 + (size_t)(rnd() % (BLOCK - off - 0x40 + 1)) / 0x10 * 0x10;
            at[slot] = HEAP + (uintptr_t)b * BLOCK + off;
        } else {
            at[slot] = fresh;
            fresh += BLOCK;
        }
        if (code)
            mdt_idmap_code_add(m, at[slot], size, fid[slot], seq++);
        if (c >= LIVE && k < 4 && c - LIVE + 1 == check[k]) {
            double t1 = cpu_now();
            bytes[k++] = writer_bytes(m);
            t0 += cpu_now() - t1; /* the checkpoint is not churn */
        }
    }
    *secs = cpu_now() - t0;
    mdt_idmap_free(m);
}

int main(int argc, char **argv)
{
    unsigned long cycles = argc > 1 ? strtoul(argv[1], NULL, 0) : 100000;
    if (cycles < 1000)
        cycles = 1000;
    printf("code tombstones under churn: %u live functions, %lu cycles (unload, load, "
           "code_add)\n",
           LIVE, cycles);
    printf("| placement | bytes at %lu | at %lu | at %lu | at %lu cycles | us per cycle "
           "(without code) |\n| --- | --- | --- | --- | --- | --- |\n",
           cycles / 1000, cycles / 100, cycles / 10, cycles);
    for (int p = 0; p < NPATTERNS; p++) {
        size_t with[4] = {0}, without[4] = {0};
        double sw, so;
        run(p, true, cycles, with, &sw);
        run(p, false, cycles, without, &so);
        printf("| %s |", pattern_name[p]);
        for (int k = 0; k < 4; k++)
            printf(" %zd |", (ssize_t)with[k] - (ssize_t)without[k]);
        printf(" %.2f (%.2f) |\n", sw / (double)(cycles + LIVE) * 1e6,
               so / (double)(cycles + LIVE) * 1e6);
    }
    return 0;
}
