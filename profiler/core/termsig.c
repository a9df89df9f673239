/* SIGINT, SIGTERM and SIGHUP end a profile, they do not lose it.
 *
 * The .NET runtime turns SIGTERM and SIGINT into a shutdown of its own
 * (ProcessExit handlers) and then, unless the program cancelled the
 * signal, dies of it with the default action restored: no Shutdown
 * callback, no chance to write anything afterwards; SIGHUP kills a
 * process at once. So the profiler puts a handler of its own in front of
 * the ones the process had (once per process, chained: the runtime's
 * handler, or the default action, still decides what happens). The
 * handler allocates nothing and takes no lock: it notes the signal, asks
 * the drain thread for a write (drained records, and a tentative #stats
 * line saying end=signal:NAME) and waits for it, at most
 * MDP_TERM_WAIT_MS (the thread it interrupted may hold something the
 * write needs: then the log keeps what earlier writes put in it), before
 * it hands the signal on. From then on the drain thread writes after
 * every drain, each time replacing the tentative #stats line, so a
 * process that dies of the signal a little later (after its ProcessExit
 * handlers) leaves a whole log, short of at most one drain period; one
 * that handles the signal and shuts down cleanly gets its final #stats
 * at Shutdown.
 *
 * A signal the process ignored (SIG_IGN, as background jobs of a
 * non-interactive shell ignore SIGINT) is left alone. The handler stays
 * installed after a detach (the library stays mapped: RTLD_NODELETE) and
 * hands every signal on while no core is attached; a later attach reuses
 * it. */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/base.h"
#include "core/log.h"
#include "core/log_state.h"

#define MDP_TERM_WAIT_MS 3000

static const int term_signals[] = {SIGINT, SIGTERM, SIGHUP};
#define NTERM (sizeof term_signals / sizeof term_signals[0])

static struct sigaction old_actions[NTERM];
static int installed[NTERM];
static mdp_core *_Atomic term_core;
static _Atomic int term_busy; /* handlers between loading term_core and done with it */
static pthread_mutex_t install_lock = PTHREAD_MUTEX_INITIALIZER;

const char *mdp_signal_name(int sig)
{
    switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    default: return "SIGNAL";
    }
}

static void chain(size_t i, int sig, siginfo_t *si, void *uc)
{
    const struct sigaction *old = &old_actions[i];
    if (old->sa_flags & SA_SIGINFO) {
        if (old->sa_sigaction)
            old->sa_sigaction(sig, si, uc);
        return;
    }
    if (old->sa_handler == SIG_IGN)
        return;
    if (old->sa_handler != SIG_DFL) {
        old->sa_handler(sig);
        return;
    }
    /* The default action: die of the signal, as without the profiler. */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), sig);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}

static void on_term(int sig, siginfo_t *si, void *uc)
{
    int saved = errno;
    size_t i = 0;
    while (i < NTERM && term_signals[i] != sig)
        i++;
    if (i == NTERM) {
        errno = saved;
        return;
    }
    atomic_fetch_add_explicit(&term_busy, 1, memory_order_seq_cst);
    mdp_core *core = atomic_load_explicit(&term_core, memory_order_seq_cst);
    if (core && !atomic_load(&core->finished)) {
        int none = 0;
        atomic_compare_exchange_strong(&core->writer->term_signal, &none, sig);
        uint64_t want = atomic_fetch_add(&core->writer->flush_req, 1) + 1;
        mdp_drain_wake(core); /* it may be waiting out a long period */
        struct timespec step = {0, 1000000};
        for (int ms = 0; ms < MDP_TERM_WAIT_MS && atomic_load(&core->writer->flush_done) < want &&
                         !atomic_load(&core->finished);
             ms++)
            nanosleep(&step, NULL);
    }
    atomic_fetch_sub_explicit(&term_busy, 1, memory_order_release);
    chain(i, sig, si, uc);
    errno = saved;
}

int mdp_term_signal(const mdp_core *core)
{
    return atomic_load(&core->writer->term_signal);
}

void mdp_termsig_attach(mdp_core *core)
{
    pthread_mutex_lock(&install_lock);
    for (size_t i = 0; i < NTERM; i++) {
        if (installed[i])
            continue;
        struct sigaction cur;
        if (sigaction(term_signals[i], NULL, &cur) != 0)
            continue;
        if (!(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_IGN)
            continue; /* ignored by the process: leave it so */
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_term;
        sa.sa_flags = SA_SIGINFO | SA_RESTART;
        sigemptyset(&sa.sa_mask);
        /* the old action first, so that the handler never chains to an
         * action it has not read */
        old_actions[i] = cur;
        if (sigaction(term_signals[i], &sa, &old_actions[i]) == 0)
            installed[i] = 1;
    }
    pthread_mutex_unlock(&install_lock);
    atomic_store(&term_core, core);
}

void mdp_termsig_detach(mdp_core *core)
{
    mdp_core *me = core;
    if (!atomic_compare_exchange_strong(&term_core, &me, NULL))
        return;
    /* wait for handlers that may still use the core (each waits at most
     * MDP_TERM_WAIT_MS, and leaves at once once the core is finished) */
    struct timespec step = {0, 1000000};
    for (int ms = 0; ms < 2 * MDP_TERM_WAIT_MS && atomic_load(&term_busy); ms++)
        nanosleep(&step, NULL);
}
