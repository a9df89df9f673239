/* `tables`: the tables present in the tables stream (ECMA-335 II.24.2.6):
 * id, name, rows, row size, and whether a table the standard requires
 * sorted really is. `info` uses the same list with row counts only
 * (parts.c). */
#include "config.h"

#include <stdio.h>

#include <mdtools/tables.h>

#include "cmd.h"

static int run(mdi_state *st, size_t argc, const mdi_arg *argv)
{
    const mdt_image *img = mdi_image(st);
    unsigned n = 0;
    char caption[64];
    for (unsigned id = 0; id < MDT_TABLE_MAX; id++)
        if (mdt_table_schema_get(id) && mdt_table_rows(img, id))
            n++;
    snprintf(caption, sizeof caption, "%u table%s present", n, n == 1 ? "" : "s");
    mdi_print_tables(st, img, NULL, caption, true);
    return MDI_OK;
}

const mdi_cmd mdi_cmd_tables = {
    .name = "tables",
    .flags = MDI_CMD_IMAGE,
    .summary = "present tables: id, name, rows, row size",
    .help = "Lists each table present in the tables stream (ECMA-335 II.24.2.6): id,\n"
            "name, number of rows, bytes per row, and for the tables the standard\n"
            "requires sorted, whether the rows really are in key order.\n",
    .run = run,
};
