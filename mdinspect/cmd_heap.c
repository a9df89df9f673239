/* `heap`: one entry of a metadata heap, or all of them: #Strings
 * (ECMA-335 II.24.2.3), #US and #Blob (II.24.2.4: a compressed length,
 * then the bytes; #US holds UTF-16LE and a final flag byte), #GUID
 * (II.24.2.5: 16-byte entries numbered from 1). */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <talloc.h>

#include <mdtools/errors.h>
#include <mdtools/heaps.h>

#include "cmd.h"

enum { A_HEAP, A_OFFSET };
static const char *const heaps[] = {"strings", "us", "blob", "guid", NULL};
static const char *const heap_names[] = {"#Strings", "#US", "#Blob", "#GUID"};
/* The choices of the heap argument, in the order of enum mdt_heap. */
enum {
    H_STRINGS = MDT_HEAP_STRINGS,
    H_US = MDT_HEAP_US,
    H_BLOB = MDT_HEAP_BLOB,
    H_GUID = MDT_HEAP_GUID
};

static char *hex(void *mem, const uint8_t *d, uint32_t len)
{
    char *s = talloc_array(mem, char, (size_t)len * 2 + 1);
    if (!s)
        return NULL;
    for (uint32_t i = 0; i < len; i++)
        snprintf(s + 2 * i, 3, "%02x", d[i]);
    s[2 * len] = '\0';
    return s;
}

/* Text: a hex dump, 16 bytes a line, under mem. */
static char *hexdump(void *mem, const uint8_t *d, uint32_t len)
{
    char *s = talloc_strdup(mem, "");
    for (uint32_t i = 0; s && i < len; i += 16) {
        s = talloc_asprintf_append(s, "%s%04" PRIx32 ":", i ? "\n" : "", i);
        for (uint32_t k = i; s && k < i + 16 && k < len; k++)
            s = talloc_asprintf_append(s, " %02x", d[k]);
    }
    return s;
}

/* One entry; with `item` as an item of a list, else as a record. Returns
 * the bytes it takes in the heap (1 for a #GUID entry; 0 when it could not
 * be read). */
static uint32_t entry(mdi_state *st, int heap, uint32_t off, bool item, int *status)
{
    const mdt_image *img = mdi_image(st);
    mdi_printer *p = st->out;
    char msg[512];
    const char *s;
    size_t slen;
    const uint8_t *d;
    uint32_t len, used = 0;
    int flag, replaced, e;
    char *u8, *x;

    if (item)
        mdi_item_begin(p);
    else
        mdi_record_begin(p);
    mdi_str(p, "heap", item ? NULL : "heap", heap_names[heap]);
    mdi_hex(p, heap == H_GUID ? "index" : "offset", heap == H_GUID ? "index" : "offset", off, 0);
    switch (heap) {
    case H_STRINGS:
        e = mdt_heap_string(&s, &slen, img, off);
        if (e)
            break;
        mdi_uint(p, "length", "length", slen);
        mdi_quoted(p, "string", "string", s, slen);
        break;
    case H_US:
        e = mdt_heap_us(&d, &len, &flag, img, off);
        if (e)
            break;
        mdi_uint(p, "units", "units", len);
        if (flag >= 0)
            mdi_uint(p, "flag", "flag", (uint64_t)flag);
        else
            mdi_none(p, "flag", "flag", "none (even length)");
        e = mdt_heap_utf16_to_utf8(p, &u8, &slen, &replaced, d, len);
        if (e)
            break;
        mdi_quoted(p, "string", "string", u8, slen);
        if (replaced)
            mdi_note(p, NULL, "unpaired surrogates shown as U+FFFD");
        mdi_bool(p, "replaced", NULL, replaced != 0);
        talloc_free(u8);
        break;
    case H_BLOB:
        e = mdt_heap_blob(&d, &len, img, off);
        if (e)
            break;
        mdi_uint(p, "length", "length", len);
        x = hex(p, d, len);
        mdi_str(p, "bytes", NULL, x ? x : "");
        talloc_free(x);
        if (!item) {
            x = hexdump(p, d, len);
            mdi_textf(p, "bytes", "%s%s", len > 16 ? "\n" : "", x ? x : "");
            talloc_free(x);
        } else {
            x = hex(p, d, len > 16 ? 16 : len);
            mdi_textf(p, "bytes", "%s%s", x ? x : "", len > 16 ? "..." : "");
            talloc_free(x);
        }
        break;
    default:
        e = mdt_heap_guid(&d, img, off);
        if (e)
            break;
        mdi_guid(p, "guid", "GUID", d);
        break;
    }
    if (!e && mdt_heap_next(&used, img, heap, off) == 0)
        used -= off;
    if (e) {
        static const char *const keys[] = {"string", "string", "bytes", "guid"};
        static const char *const labels[] = {"string", "string", "bytes", "GUID"};
        mdi_error(p, keys[heap], labels[heap], mdi_errmsg_here(msg, sizeof msg));
        *status = MDI_FAIL;
        used = 0;
    }
    if (item)
        mdi_item_end(p);
    else
        mdi_record_end(p);
    return used;
}

static int run(mdi_state *st, size_t argc, const mdi_arg *argv)
{
    const mdt_image *img = mdi_image(st);
    const mdi_arg *off = mdi_arg_of(argc, argv, A_OFFSET);
    int heap = (int)argv[0].value, status = MDI_OK;
    uint32_t size = mdt_heap_size(img, heap);
    char caption[64];

    if (off) {
        entry(st, heap, off->value, false, &status);
        if (status != MDI_OK)
            mdi_fail(st, "%s: no entry at %s 0x%" PRIx32, heap_names[heap],
                     heap == H_GUID ? "index" : "offset", off->value);
        return status;
    }
    snprintf(caption, sizeof caption, "%s: 0x%" PRIx32 " bytes", heap_names[heap], size);
    mdi_list_begin(st->out, NULL, caption, "empty", 0);
    if (heap == H_GUID) {
        for (uint32_t i = 1; i <= size / 16 && !mdi_interrupted(st); i++)
            entry(st, heap, i, true, &status);
    } else {
        /* #Strings from 0, the blob heaps from 1 (0 is the empty entry);
         * empty entries (and the zero padding at the end) are skipped. */
        uint32_t o = heap == H_STRINGS ? 0 : 1;
        while (o < size && !mdi_interrupted(st)) {
            uint32_t used;
            if (heap == H_STRINGS) {
                const char *s;
                size_t len;
                if (mdt_heap_string(&s, &len, img, o) == 0 && len == 0) {
                    o++;
                    continue;
                }
                mdt_error_clear();
            } else {
                const uint8_t *d;
                uint32_t len;
                int flag;
                if ((heap == H_BLOB ? mdt_heap_blob(&d, &len, img, o)
                                    : mdt_heap_us(&d, &len, &flag, img, o)) == 0 &&
                    len == 0) {
                    o += 1;
                    continue;
                }
                mdt_error_clear();
            }
            used = entry(st, heap, o, true, &status);
            if (!used)
                break; /* cannot step past an entry that does not read */
            o += used;
        }
    }
    mdi_list_end(st->out);
    if (status != MDI_OK)
        mdi_fail(st, "%s: the heap could not be read to its end", heap_names[heap]);
    return status;
}

const mdi_cmd mdi_cmd_heap = {
    .name = "heap",
    .args = {{.name = "strings|us|blob|guid", .kind = MDI_ARG_CHOICE, .choices = heaps},
             {.name = "OFFSET", .kind = MDI_ARG_NUMBER, .flags = MDI_ARGF_OPTIONAL}},
    .flags = MDI_CMD_IMAGE,
    .summary = "an entry of a heap, or all of them",
    .help = "Shows the entry of the #Strings, #US, #Blob or #GUID heap at OFFSET\n"
            "(for #GUID, the 1-based index a #GUID column holds; for #US, the low\n"
            "24 bits of a 0x70 token): the string with its length; the user string\n"
            "decoded from UTF-16 with its length in code units and its final flag\n"
            "byte; the blob's length and bytes (a hex dump); the GUID. Without\n"
            "OFFSET, lists every non-empty entry from the start of the heap.\n",
    .run = run,
};
