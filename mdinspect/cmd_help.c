/* `help`: the command list, or one command's usage and long help, from
 * the table the command was run from (help.c renders them). */
#include "config.h"

#include "cmd.h"

static int run(mdi_state *st, size_t argc, const mdi_arg *argv)
{
    /* The table comes from the dispatcher that runs this command
     * (mdi_run): a command does not call up into the table. */
    if (argc == 0)
        mdi_help_list(st->out, st->commands, st->ncommands);
    else if (argv[0].value < st->ncommands)
        mdi_help_one(st->out, st->commands[argv[0].value]);
    return MDI_OK;
}

const mdi_cmd mdi_cmd_help = {
    .name = "help",
    .args = {{.name = "COMMAND", .kind = MDI_ARG_COMMAND, .flags = MDI_ARGF_OPTIONAL}},
    .summary = "list the commands, or explain one",
    .help = "Without an argument, lists the commands. With a COMMAND (any unique\n"
            "prefix), shows its usage and what it does.\n",
    .run = run,
};
