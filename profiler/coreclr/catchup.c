/* Attach catch-up (step 5). */
#include "config.h"

#include "coreclr/clr.h"

int mdp_clr_catch_up(mdp_clr *p);
int mdp_clr_catch_up(mdp_clr *p)
{
    return 0;
}
