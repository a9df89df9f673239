/* mdinspect batch --il: the instruction a frame's IL offset falls in, as
 * `IL_0042: call int32 System.Linq.Enumerable::Sum(...)`, so a hot line of
 * a profile says which call or loop it is. The body is read at the
 * method's RVA and decoded from its start up to the offset (ECMA-335
 * II.25.4, Partition III; <mdtools/il.h>); the text is the library's ILAsm
 * form of the instruction in the full style, the method's own generic
 * parameters by name. Called once per (method, offset) frame: the
 * resolver caches the result with the frame. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <talloc.h>

#include <mdtools/errors.h>
#include <mdtools/il.h>
#include <mdtools/names.h>
#include <mdtools/nesting.h>
#include <mdtools/token.h>

#include "batch/batch.h"

size_t mdb_il_text(char *buf, size_t size, const mdt_image *img, uint32_t method, uint32_t il)
{
    mdt_generic_context g = {.img = img, .method_owner = method};
    /* No name cache: frames of distinct offsets are few beside the lines,
     * and the cache serves only names made with the run's flags. */
    mdt_name_opts o = {MDT_STYLE_FULL, MDT_NAME_PARAM_NAMES, MDT_NAME_OPTS_VERSION, &g, NULL};
    mdt_il_body b;
    mdt_il_insn in;
    char *t = NULL;
    int k;
    if (size == 0)
        return 0;
    buf[0] = '\0';
    if (mdt_member_owner(&g.type_owner, img, method))
        g.type_owner = 0;
    if (mdt_il_body_get(&b, img, method) || mdt_il_insn_at(&in, &b, il) ||
        mdt_il_insn_text(NULL, &t, &b, &in, &o)) {
        mdt_error_clear();
        return 0;
    }
    /* Control characters of a string operand never reach the output
     * (ldstr's are escaped already; names from the image may hold any). */
    for (char *p = t; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7F)
            *p = '?';
    k = snprintf(buf, size, "IL_%04" PRIx32 ": %s", in.offset, t);
    talloc_free(t);
    if (k < 0)
        return 0;
    return (size_t)k < size ? (size_t)k : size - 1;
}
