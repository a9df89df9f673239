/* calls mode: enter hooks (step 4). */
#include "config.h"

#include "coreclr/clr.h"

void mdp_clr_elt_setup(mdp_clr *p, DWORD *low, DWORD *high);
void mdp_clr_elt_setup(mdp_clr *p, DWORD *low, DWORD *high)
{
}
