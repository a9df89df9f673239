/* `strings`: every non-empty string of the #Strings heap (ECMA-335
 * II.24.2.3) with its offset, walking the heap one NUL-terminated string at
 * a time. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>

#include <mdtools/errors.h>
#include <mdtools/heaps.h>

#include "cmd.h"

static int run(mdi_state *st, size_t argc, const mdi_arg *argv)
{
    const mdt_image *img = mdi_image(st);
    mdi_printer *p = st->out;
    uint32_t size = mdt_heap_size(img, MDT_HEAP_STRINGS), off = 0;
    int status = MDI_OK;

    char caption[64];

    snprintf(caption, sizeof caption, "#Strings: 0x%" PRIx32 " bytes", size);
    mdi_list_begin(p, NULL, caption, "no strings", 0);
    while (off < size && !mdi_interrupted(st)) {
        const char *s;
        size_t len;
        if (mdt_heap_string(&s, &len, img, off) != 0) {
            char msg[512];
            mdi_item_begin(p);
            mdi_hex(p, "offset", "offset", off, 0);
            mdi_error(p, "string", "string", mdi_errmsg_here(msg, sizeof msg));
            mdi_item_end(p);
            status = MDI_FAIL;
            break;
        }
        if (len) {
            mdi_item_begin(p);
            mdi_hex(p, "offset", "offset", off, 0);
            mdi_quoted(p, "string", "string", s, len);
            mdi_item_end(p);
        }
        off += (uint32_t)len + 1;
    }
    mdi_list_end(p);
    if (status != MDI_OK)
        mdi_report(st, "strings: %s: the #Strings heap could not be read to its end",
                   mdi_image_path(st));
    return status;
}

const mdi_cmd mdi_cmd_strings = {
    .name = "strings",
    .flags = MDI_CMD_IMAGE,
    .summary = "the #Strings heap: offset and string",
    .help = "Lists every non-empty string of the #Strings heap (ECMA-335 II.24.2.3)\n"
            "with its offset, the value a #Strings column holds. Strings are quoted\n"
            "and escaped as in dump. `heap strings OFFSET` shows one.\n",
    .run = run,
};
