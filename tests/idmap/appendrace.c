/* Readers race code ranges appended in place (issue 24): the writer adds
 * ranges in address order into two regions in turns, so that both the
 * last leaf and a leaf before it (region A's, once region B's ranges fill
 * leaves after it) take ranges after their last one, written in place;
 * between rounds it removes them all (copies, new tops, the grace period)
 * and starts again over the same addresses. Reader threads look up
 * addresses around the writer's frontier, where the next append lands, and
 * below it. Every answer must be the whole range (start, size, function)
 * or none, and a range whose code_add had returned before the lookup began
 * must be found. Each applied code_add must move mdt_idmap_code_changes()
 * by exactly 2, so the profiler's walk cache sees an append as a change.
 * Built with -fsanitize=thread by run-tsan.sh: an append that stored its
 * start before its record, or a reader that read the record without an
 * acquire of the start, is a data race TSan reports.
 * Usage: appendrace [rounds] [readers] */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include <mdtools/idmap.h>

#define MOD 0x10000u
#define PER 1500u /* ranges per region and round: 23 leaves' worth each */
#define REGION_A 0x10000000u
#define REGION_B 0x20000000u
#define STRIDE 0x40u

static mdt_idmap *MAP;
/* Ranges whose code_add has returned, counting A0, B0, A1, B1, ... */
static _Atomic unsigned long done;
static _Atomic bool stop;
static _Atomic unsigned long torn, missing, found, lookups;

static uintptr_t fn_id(unsigned k)
{
    return 0x100000u + (uintptr_t)k * 8;
}

/* Range k of the round: k even region A, odd region B, index k / 2. */
static uintptr_t range_start(unsigned long k)
{
    return (k % 2 ? REGION_B : REGION_A) + (uintptr_t)(k / 2) * STRIDE;
}

static size_t range_size(unsigned long k)
{
    return 0x10 + (k * 7 % 0x30); /* 0x10..0x3f: a wrong record shows */
}

static unsigned xorshift(unsigned *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

static void *reader(void *arg)
{
    unsigned s = (unsigned)(uintptr_t)arg * 2654435761u + 1;
    unsigned long t = 0, miss = 0, ok = 0, n = 0;
    while (!atomic_load_explicit(&stop, memory_order_acquire)) {
        unsigned long d = atomic_load_explicit(&done, memory_order_acquire);
        unsigned r = xorshift(&s);
        /* Mostly the next few ranges (the appends racing this lookup),
         * sometimes any range of the round so far. */
        unsigned long k = r % 4 ? d + r / 4 % 4 : (d ? r / 4 % d : 0);
        if (k >= 2 * PER)
            continue;
        uintptr_t a = range_start(k), ip = a + (r >> 20) % range_size(k);
        mdt_idmap_code_range cr;
        int rc = mdt_idmap_ip_lookup(&cr, MAP, ip);
        n++;
        if (rc == 0) {
            if (cr.start != a || cr.size != range_size(k) || cr.function_id != fn_id(k))
                t++;
            else
                ok++;
        } else if (rc != MDT_ENOTFOUND) {
            t++;
        } else if (k < d) {
            /* Added before the lookup began, and only removed once every
             * reader has stopped for the round. */
            miss++;
        }
    }
    atomic_fetch_add(&torn, t);
    atomic_fetch_add(&missing, miss);
    atomic_fetch_add(&found, ok);
    atomic_fetch_add(&lookups, n);
    return NULL;
}

int main(int argc, char **argv)
{
    unsigned rounds = argc > 1 ? (unsigned)atoi(argv[1]) : 6;
    unsigned nreaders = argc > 2 ? (unsigned)atoi(argv[2]) : 2;
    uint64_t seq = 1;
    unsigned long badcount = 0, failed_calls = 0;
    if (nreaders < 1 || nreaders > 16 || rounds < 1 || mdt_idmap_new(&MAP, NULL) != 0) {
        fprintf(stderr, "usage: appendrace [rounds] [readers 1-16]\n");
        return 2;
    }
    mdt_idmap_module_info mi = {0};
    mi.mvid[0] = 1;
    if (mdt_idmap_module_load(MAP, MOD, &mi, seq++) < 0)
        return 2;
    for (unsigned k = 0; k < 2 * PER; k++) {
        mdt_idmap_function_info fi = {MOD, 0x06000001 + k, 0, 0, NULL, 0};
        if (mdt_idmap_function_load(MAP, fn_id(k), &fi, seq++) < 0)
            return 2;
    }
    for (unsigned round = 0; round < rounds; round++) {
        pthread_t th[16];
        atomic_store(&done, 0);
        atomic_store(&stop, false);
        for (unsigned i = 0; i < nreaders; i++)
            if (pthread_create(&th[i], NULL, reader, (void *)(uintptr_t)(round * 16 + i + 1)))
                return 2;
        for (unsigned k = 0; k < 2 * PER; k++) {
            uint64_t c0 = mdt_idmap_code_changes(MAP);
            int rc = mdt_idmap_code_add(MAP, range_start(k), range_size(k), fn_id(k), seq++);
            uint64_t c1 = mdt_idmap_code_changes(MAP);
            if (rc != MDT_IDMAP_APPLIED)
                failed_calls++;
            if (c1 - c0 != 2 || c0 % 2)
                badcount++;
            atomic_store_explicit(&done, k + 1, memory_order_release);
        }
        atomic_store_explicit(&stop, true, memory_order_release);
        for (unsigned i = 0; i < nreaders; i++)
            pthread_join(th[i], NULL);
        /* Every range is there, whole, and the accounting counts them. */
        mdt_idmap_stats st;
        mdt_idmap_stats_get(&st, MAP);
        if (st.ranges != 2 * PER)
            failed_calls++;
        for (unsigned k = 0; k < 2 * PER; k++) {
            mdt_idmap_code_range cr;
            if (mdt_idmap_ip_lookup(&cr, MAP, range_start(k) + range_size(k) - 1) != 0 ||
                cr.function_id != fn_id(k))
                atomic_fetch_add(&missing, 1);
        }
        for (unsigned k = 0; k < 2 * PER; k++)
            if (mdt_idmap_code_remove(MAP, range_start(k), seq++) != MDT_IDMAP_APPLIED)
                failed_calls++;
        mdt_idmap_synchronize(MAP);
    }
    mdt_idmap_free(MAP);
    unsigned long t = atomic_load(&torn), miss = atomic_load(&missing);
    printf("%u rounds, %u readers: %lu lookups, %lu found whole, %lu torn or wrong, %lu missing, "
           "%lu counter steps not 2, %lu writer calls not applied\n",
           rounds, nreaders, atomic_load(&lookups), atomic_load(&found), t, miss, badcount,
           failed_calls);
    int passed =
        (t == 0) + (miss == 0) + (badcount == 0) + (failed_calls == 0) + (atomic_load(&found) > 0);
    printf("%d passed, %d failed\n", passed, 5 - passed);
    return passed == 5 ? 0 : 1;
}
