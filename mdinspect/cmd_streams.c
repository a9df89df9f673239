/* `streams`: the stream headers of the metadata root (ECMA-335 II.24.2.2)
 * and which of them mdtools reads. `info` shows the same list (parts.c). */
#include "config.h"

#include <stdio.h>

#include <mdtools/image.h>

#include "cmd.h"

static int run(mdi_state *st, size_t argc, const mdi_arg *argv)
{
    const mdt_image *img = mdi_image(st);
    const mdt_md_info *md = mdt_image_md_info(img);
    char caption[64];
    snprintf(caption, sizeof caption, "metadata root: %zu stream%s", md->nstreams,
             md->nstreams == 1 ? "" : "s");
    mdi_print_streams(st, img, NULL, caption);
    return MDI_OK;
}

const mdi_cmd mdi_cmd_streams = {
    .name = "streams",
    .flags = MDI_CMD_IMAGE,
    .summary = "metadata streams: name, offset, size, used",
    .help = "Lists the streams of the metadata root (ECMA-335 II.24.2.2) in order:\n"
            "name, offset from the root, size, and whether mdtools reads it (when a\n"
            "heap name appears twice only one stream is used).\n",
    .run = run,
};
