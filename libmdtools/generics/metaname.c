/* The metadata name of a type or member (<mdtools/names.h>, doc/names.md:
 * the `metadata_name` of mdinspect's JSON and of batch --json), in one
 * place for every client: which tokens have one (mdt_token_is_type_or_member
 * with a row) and the options it is made with (full style, every type as
 * stored), so that the shell and batch cannot drift apart. */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>

#include <mdtools/members.h>
#include <mdtools/names.h>
#include <mdtools/token.h>

#include "util/error.h"

static int check(uint32_t token)
{
    if (!mdt_token_is_type_or_member(token) || !MDT_TOKEN_RID(token))
        return mdt__fail_simple(MDT_EINVAL, "token 0x%08x names no type or member",
                                (unsigned)token);
    return 0;
}

int mdt_token_metadata_name(void *mem_ctx, char **out, const mdt_image *img, uint32_t token,
                            mdt_name_cache *cache)
{
    mdt_name_opts o = {MDT_STYLE_FULL, MDT_NAME_METADATA, MDT_NAME_OPTS_VERSION, NULL, cache};
    int e = check(token);
    return e ? e : mdt_token_name(mem_ctx, out, img, token, &o);
}

int mdt_token_metadata_name_buf(char *buf, size_t size, size_t *len, const mdt_image *img,
                                uint32_t token, mdt_name_cache *cache)
{
    mdt_name_opts o = {MDT_STYLE_FULL, MDT_NAME_METADATA, MDT_NAME_OPTS_VERSION, NULL, cache};
    int e = check(token);
    return e ? e : mdt_token_name_buf(buf, size, len, img, token, &o);
}
