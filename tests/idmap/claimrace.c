/* A signal that lands while a thread claims its reader slot, and whose
 * handler does a lookup (and so claims one too), must not leave the thread
 * holding two registry entries (issue 16: with the slot index kept in TLS,
 * a signal between the check for a handler's claim and the store of the
 * index leaked the handler's entry for the rest of the thread's life).
 * Built by run-claimrace.sh from the map's sources with
 * -DIDM_TEST_CLAIM_HOOK: grace.c then calls idm_test_claim_hook() at the
 * one point of a claim where a nested claim could race with it, and this
 * program raises SIGUSR1 there, once per thread, from 64 threads in turn.
 * Each thread must then hold exactly one entry, and its lookups (in the
 * handler and after) must answer. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <mdtools/idmap.h>

#include "tokens/grace_int.h"

static mdt_idmap *MAP;
static _Atomic long armed; /* the thread whose next claim gets the signal */
static _Atomic int handler_ok, handler_runs;

void idm_test_claim_hook(void)
{
    long self = (long)syscall(SYS_gettid);
    long want = self;
    if (atomic_compare_exchange_strong(&armed, &want, 0))
        raise(SIGUSR1);
}

static void on_usr1(int sig)
{
    mdt_idmap_class_info ci;
    (void)sig;
    atomic_fetch_add(&handler_runs, 1);
    if (mdt_idmap_class_lookup(&ci, NULL, 0, MAP, 0x200, 0) == 0 && ci.token == 0x02000002)
        atomic_fetch_add(&handler_ok, 1);
}

static void *one_thread(void *arg)
{
    int *entries = arg;
    mdt_idmap_class_info ci;
    long self = (long)syscall(SYS_gettid);
    atomic_store(&armed, self);
    int rc = mdt_idmap_class_lookup(&ci, NULL, 0, MAP, 0x200, 0);
    for (int i = 0; i < 100 && rc == 0; i++)
        rc = mdt_idmap_class_lookup(&ci, NULL, 0, MAP, 0x200, 0);
    *entries = rc == 0 ? (int)idm_test_entries_of(self) : -1;
    return NULL;
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, NULL);
    if (mdt_idmap_new(&MAP, NULL) != 0)
        return 2;
    mdt_idmap_module_info mi = {0};
    mi.mvid[0] = 1;
    mdt_idmap_class_info ci = {0x100, 0x02000002, 0, 0, 0, 0, NULL, 0};
    if (mdt_idmap_module_load(MAP, 0x100, &mi, 1) < 0 ||
        mdt_idmap_class_load(MAP, 0x200, &ci, 2) < 0)
        return 2;
    int bad = 0, threads = 64;
    for (int t = 0; t < threads; t++) {
        pthread_t th;
        int entries = 0;
        pthread_create(&th, NULL, one_thread, &entries);
        pthread_join(th, NULL);
        if (entries != 1) {
            if (bad < 5)
                fprintf(stderr, "thread %d holds %d registry entries\n", t, entries);
            bad++;
        }
    }
    int runs = atomic_load(&handler_runs), ok = atomic_load(&handler_ok);
    printf("%d threads, %d signals inside a claim, %d handler lookups answered, %d threads with "
           "other than one entry\n",
           threads, runs, ok, bad);
    mdt_idmap_free(MAP);
    int passed = (bad == 0) + (runs == threads) + (ok == runs);
    printf("%d passed, %d failed\n", passed, 3 - passed);
    return passed == 3 ? 0 : 1;
}
