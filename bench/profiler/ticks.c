/* How often a thread's CPU-time timer signals it (bench/profiler/README.md,
 * "The CPU-time timer on a busy machine"): a 1 kHz POSIX timer on the
 * thread's own CPU clock (as profiler/core/slots.c arms it), the thread
 * spinning for SECONDS of its CPU time while reading that clock, as the
 * names workload does. Prints the signals per CPU second and the most
 * periods one signal stood for (1 + its overrun count). Run it beside busy
 * loops to see the kernel's tick find the thread less often.
 *
 *   bench/profiler/ticks [SECONDS]                  (default 2) */
#define _GNU_SOURCE
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static _Atomic long signals, periods, most;

static void on_prof(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    long w = 1 + (si->si_overrun > 0 ? si->si_overrun : 0);
    atomic_fetch_add(&signals, 1);
    atomic_fetch_add(&periods, w);
    if (w > atomic_load(&most))
        atomic_store(&most, w);
}

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 2.0;
    if (seconds <= 0 || seconds > 600) {
        fprintf(stderr, "usage: ticks [SECONDS]   (0 < SECONDS <= 600)\n");
        return 2;
    }
    struct sigaction sa = {0};
    sa.sa_sigaction = on_prof;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    struct sigevent ev = {0};
    ev.sigev_notify = SIGEV_THREAD_ID;
    ev.sigev_signo = SIGPROF;
    ev._sigev_un._tid = (int)syscall(SYS_gettid);
    timer_t t;
    struct itimerspec its = {{0, 1000000}, {0, 1000000}};
    if (sigaction(SIGPROF, &sa, NULL) != 0 || timer_create(CLOCK_THREAD_CPUTIME_ID, &ev, &t) != 0 ||
        timer_settime(t, 0, &its, NULL) != 0) {
        perror("ticks: the timer");
        return 1;
    }
    double c0 = cpu_s();
    volatile unsigned long x = 1;
    while (cpu_s() - c0 < seconds)
        for (int i = 0; i < 1000; i++)
            x = x * 6364136223846793005u + 1;
    double spent = cpu_s() - c0;
    timer_delete(t);
    printf("%.0f signals a CPU second (%ld in %.3f s), %ld periods in all, at most %ld a signal\n",
           (double)atomic_load(&signals) / spent, atomic_load(&signals), spent,
           atomic_load(&periods), atomic_load(&most));
    return 0;
}
