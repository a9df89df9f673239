/* mdinspect's command table (assembled from commands.def), sorted by name,
 * and running a parsed call. This is the top of the shell: it is the one
 * file that names every command, so nothing below it calls it; the `help`
 * command gets the table through the state (mdi_run sets it). parse.c
 * turns a command line into checked calls; match.c matches names, help.c
 * describes commands. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <talloc.h>

#include "cmd.h"

/* ---- the table ---- */

static const mdi_cmd *const listed[] = {
#define MDI_CMD(name) &mdi_cmd_##name,
#include "commands.def"
#undef MDI_CMD
};
#define NCMDS (sizeof listed / sizeof listed[0])

static const mdi_cmd *sorted[NCMDS];
static const char *names[NCMDS];

static int by_name(const void *a, const void *b)
{
    return strcmp((*(const mdi_cmd *const *)a)->name, (*(const mdi_cmd *const *)b)->name);
}

static void table_init(void)
{
    if (sorted[0])
        return;
    memcpy(sorted, listed, sizeof listed);
    qsort(sorted, NCMDS, sizeof sorted[0], by_name);
    for (size_t i = 0; i < NCMDS; i++)
        names[i] = sorted[i]->name;
}

size_t mdi_cmd_count(void)
{
    return NCMDS;
}

const mdi_cmd *mdi_cmd_at(size_t i)
{
    table_init();
    return i < NCMDS ? sorted[i] : NULL;
}

const mdi_cmd *const *mdi_cmd_table(void)
{
    table_init();
    return sorted;
}

const char *const *mdi_cmd_names(void)
{
    table_init();
    return names;
}

const mdi_cmd *mdi_cmd_get(const char *name)
{
    table_init();
    for (size_t i = 0; i < NCMDS; i++)
        if (strcmp(sorted[i]->name, name) == 0)
            return sorted[i];
    return NULL;
}

int mdi_run(mdi_state *st, const mdi_call *call)
{
    int r;
    st->cmd = call->cmd->name;
    st->stop = false;
    st->commands = mdi_cmd_table();
    st->ncommands = NCMDS;
    if ((call->cmd->flags & MDI_CMD_IMAGE) && !mdi_image(st)) {
        mdi_fail(st, "no module is open (use 'open PATH')");
        st->cmd = NULL;
        return MDI_FAIL;
    }
    r = call->cmd->run(st, call->argc, call->argv);
    mdi_printer_flush(st->out);
    if (mdi_sigint) {
        mdi_sigint = 0;
        st->stop = true;
        mdi_fail(st, "interrupted");
        r = MDI_FAIL;
    }
    st->cmd = NULL;
    return r;
}
