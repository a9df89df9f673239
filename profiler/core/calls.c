/* calls mode: enter counts per function (step 4 fills this in). */
#include "config.h"

#include "core/core_int.h"

int mdp_calls_init(mdp_core *core)
{
    return 0;
}

void mdp_calls_flush(mdp_core *core)
{
}

void mdp_calls_free(mdp_core *core)
{
}

uint64_t *mdp_calls_counter(mdp_core *core, uintptr_t fn)
{
    return NULL;
}

void mdp_calls_enter(mdp_core *core, uint64_t *counter)
{
}
