/* alloc mode: allocations per type (step 4 fills this in). */
#include "config.h"

#include "core/core_int.h"

int mdp_alloc_init(mdp_core *core)
{
    return 0;
}

void mdp_alloc_flush(mdp_core *core)
{
}

void mdp_alloc_free(mdp_core *core)
{
}

void mdp_alloc_count(mdp_core *core, uintptr_t cls, uint64_t bytes)
{
}
