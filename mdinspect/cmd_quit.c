/* `quit`: leave the session (Ctrl-D does the same at the prompt). */
#include "config.h"

#include "cmd.h"

static int run(mdi_state *st, size_t argc, const mdi_arg *argv)
{
    return MDI_QUIT;
}

const mdi_cmd mdi_cmd_quit = {
    .name = "quit",
    .summary = "leave mdinspect",
    .help = "Leaves the shell (Ctrl-D at the prompt does the same), or stops a\n"
            "script or -c list: the commands after it do not run.\n",
    .run = run,
};
