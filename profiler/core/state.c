/* What every unit of the core reads of the core's state, at the bottom of
 * profiler/core (README.md): whether the runtime may still be called, the
 * core's clock, its settings and its map. Here rather than in core.c (the
 * lifetime, at the top) so that the units below call nothing above them. */
#define _GNU_SOURCE
#include "config.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/base.h"

int mdp_ops_live(mdp_core *core)
{
    return atomic_load_explicit(&core->ops_live, memory_order_acquire);
}

uint64_t mdp_elapsed_ms(const mdp_core *core)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    int64_t ms = (int64_t)(now.tv_sec - core->start_mono.tv_sec) * 1000 +
                 (now.tv_nsec - core->start_mono.tv_nsec) / 1000000;
    return ms < 0 ? 0 : (uint64_t)ms;
}

uint64_t mdp_mono_to_ms(const mdp_core *core, uint64_t mono_ns)
{
    /* the coarse clock may lag the precise one the start was read with by
     * a tick: a sample of the first milliseconds is then slice 0 */
    uint64_t start =
        (uint64_t)core->start_mono.tv_sec * 1000000000u + (uint64_t)core->start_mono.tv_nsec;
    return mono_ns > start ? (mono_ns - start) / 1000000u : 0;
}

const mdp_config *mdp_core_config(const mdp_core *core)
{
    return &core->cfg;
}

mdt_idmap *mdp_core_map(mdp_core *core)
{
    return core->map;
}

uint64_t mdp_seq(mdp_core *core)
{
    return mdt_idmap_next_seq(core->map);
}

/* Waking the drain thread (its futex word and schedule flags live in the
 * core): the handler and the termination signals call these, from below
 * the drain. */
void mdp_drain_wake(mdp_core *core)
{
    atomic_fetch_add(&core->drain_seq, 1);
    syscall(SYS_futex, (uint32_t *)&core->drain_seq, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

void mdp_drain_poke(mdp_core *core)
{
    if (!atomic_load_explicit(&core->drain_poked, memory_order_relaxed))
        atomic_store(&core->drain_poked, 1);
    /* seq_cst after the store of drain_poked: drain_wait stores napping,
     * then loads drain_poked; one of the two sees the other's store */
    if (atomic_load(&core->drain_napping) && atomic_exchange(&core->drain_napping, 0))
        mdp_drain_wake(core);
}

/* The module side table (modules.c fills it at load and unload events, a
 * unit above): the naming below reads a module's flags and image here. */
struct mdp_module *mdp_module_get(mdp_core *core, uintptr_t id)
{
    return mdp_pmap_get(&core->modules, id, 0);
}
