/* 300 short-lived reader threads, more than the 256 reader slot indexes, so
 * that the registry fills and the entries of exited readers are reclaimed
 * and reused, while this thread, the only writer, replaces the record they
 * read (a class with out-of-line type arguments: each reload retires the
 * old block) and waits for grace periods that free the old blocks. The
 * readers are detached and report through a relaxed counter, so nothing
 * but the map's own synchronization orders their reads before the frees:
 * built with -fsanitize=thread (run-tsan.sh), ThreadSanitizer must see a
 * happens-before edge from every reader's last read to every free (issue
 * 16: once more than 256 threads had read, writers skipped the slots of
 * reclaimed entries and the edge was missing). Every lookup must answer
 * the record as loaded at one of its seqs. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include <mdtools/idmap.h>

#define MOD 0x10000u
#define CLS 0x20000u
#define THREADS 300
#define WAVE 20

static mdt_idmap *MAP;
static _Atomic unsigned long finished, wrong, answered;

static void *reader(void *arg)
{
    unsigned long bad = 0, ok = 0;
    (void)arg;
    for (int n = 0; n < 200; n++) {
        mdt_idmap_class_info ci;
        uintptr_t args[4];
        int rc = mdt_idmap_class_lookup(&ci, args, 4, MAP, CLS, 0);
        if (rc == MDT_ENOTFOUND)
            continue; /* between an unload and the reload */
        if (rc != 0 || ci.nargs != 3 || args[0] != 0x30000 || args[2] != 0x30080)
            bad++;
        else
            ok++;
    }
    atomic_fetch_add_explicit(&wrong, bad, memory_order_relaxed);
    atomic_fetch_add_explicit(&answered, ok, memory_order_relaxed);
    atomic_fetch_add_explicit(&finished, 1, memory_order_relaxed);
    return NULL;
}

int main(void)
{
    uint64_t seq = 1;
    if (mdt_idmap_new(&MAP, NULL) != 0)
        return 2;
    mdt_idmap_module_info mi = {0};
    mi.mvid[0] = 1;
    const uintptr_t a3[3] = {0x30000, 0x30040, 0x30080};
    mdt_idmap_class_info ci = {MOD, 0x02000002, 0, 0, 0, 3, a3, 0};
    mdt_idmap_module_load(MAP, MOD, &mi, seq++);
    mdt_idmap_class_load(MAP, CLS, &ci, seq++);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int started = 0;
    while (started < THREADS) {
        for (int i = 0; i < WAVE && started < THREADS; i++, started++) {
            pthread_t t;
            if (pthread_create(&t, &attr, reader, NULL) != 0)
                return 2;
        }
        /* Until this wave is done, churn: every reload retires the block
         * of type arguments the readers may be reading. */
        while (atomic_load_explicit(&finished, memory_order_relaxed) < (unsigned long)started) {
            mdt_idmap_class_unload(MAP, CLS, seq++);
            mdt_idmap_class_load(MAP, CLS, &ci, seq++);
            mdt_idmap_synchronize(MAP);
        }
        /* Exited for good (their registry entries can be reclaimed). */
        struct timespec ts = {0, 20000000};
        nanosleep(&ts, NULL);
        mdt_idmap_class_unload(MAP, CLS, seq++);
        mdt_idmap_class_load(MAP, CLS, &ci, seq++);
        mdt_idmap_synchronize(MAP);
    }
    mdt_idmap_free(MAP);
    unsigned long bad = atomic_load(&wrong), ok = atomic_load(&answered);
    printf("%d short-lived readers: %lu answers, %lu wrong\n", THREADS, ok, bad);
    int passed = (bad == 0) + (ok > 0);
    printf("%d passed, %d failed\n", passed, 2 - passed);
    return passed == 2 ? 0 : 1;
}
