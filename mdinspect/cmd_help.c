/* `help`: the command list and each command's usage and long help, all
 * taken from the command table (cmds.c); --help prints the same list. */
#include "config.h"

#include <string.h>

#include <talloc.h>

#include "cmd.h"

void mdi_help_list(mdi_printer *p)
{
    void *tmp = talloc_new(NULL);
    mdi_list_begin(p, NULL, "commands (a unique prefix of a name will do):", NULL, 0);
    for (size_t i = 0; i < mdi_ncmds; i++) {
        mdi_item_begin(p);
        mdi_str(p, "command", NULL, mdi_cmds[i].name);
        mdi_str(p, "usage", "", mdi_usage(tmp, &mdi_cmds[i]));
        mdi_str(p, "summary", "", mdi_cmds[i].summary);
        mdi_item_end(p);
    }
    mdi_list_end(p);
    talloc_free(tmp);
}

void mdi_help_one(mdi_printer *p, const mdi_cmd *cmd)
{
    void *tmp = talloc_new(NULL);
    mdi_record_begin(p);
    mdi_str(p, "command", NULL, cmd->name);
    mdi_str(p, "usage", "usage", mdi_usage(tmp, cmd));
    mdi_str(p, "summary", NULL, cmd->summary);
    mdi_textf(p, "", "%s", cmd->summary);
    mdi_str(p, "help", NULL, cmd->help);
    mdi_textf(p, "", "\n%.*s", (int)(strlen(cmd->help) - 1), cmd->help);
    mdi_record_end(p);
    talloc_free(tmp);
}

int mdi_cmd_help(mdi_state *st, size_t argc, const mdi_arg *argv)
{
    if (argc == 0)
        mdi_help_list(st->out);
    else
        mdi_help_one(st->out, &mdi_cmds[argv[0].value]);
    return MDI_OK;
}
