/* Assembly identity (ECMA-335 II.22.2 Assembly, II.22.5 AssemblyRef) and the
 * public key token: the last 8 bytes of the key's SHA-1, in reverse order
 * (II.6.2.1.3). SHA-1 comes from nettle. Rows of one image and nothing
 * else, so it sits in md/, below the signature printers (generics/) and
 * the resolver (typeref/) that both name assemblies. */
#include "config.h"

#include <nettle/sha1.h>
#include <stdio.h>
#include <string.h>

#include <mdtools/assembly.h>
#include <mdtools/image.h>
#include <mdtools/tables.h>

#include "md/md_int.h"
#include "util/error.h"

int mdt_assembly_public_key_token(uint8_t token[8], const uint8_t *key, size_t len)
{
    struct sha1_ctx ctx;
    uint8_t digest[SHA1_DIGEST_SIZE];
    sha1_init(&ctx);
    sha1_update(&ctx, len, key);
    sha1_digest(&ctx, sizeof digest, digest);
    for (int i = 0; i < 8; i++)
        token[i] = digest[SHA1_DIGEST_SIZE - 1 - i];
    return 0;
}

int mdt_assembly_identity(mdt_identity *id, const mdt_image *img)
{
    mdt_row r;
    int e;
    memset(id, 0, sizeof *id);
    if (mdt_table_rows(img, MDT_TABLE_Assembly) == 0) {
        mdt_place pl = MDT_PLACE_NONE;
        pl.file = mdt__md(img)->name;
        pl.region = "Assembly";
        return mdt__fail(MDT_ENOTFOUND, pl, "no Assembly row: a module, not an assembly manifest");
    }
    if ((e = mdt_row_get(&r, img, MDT_TABLE_Assembly, 1)))
        return e;
    id->hash_alg = mdt_row_raw(&r, MDT_COL_Assembly_HashAlgId);
    id->version[0] = (uint16_t)mdt_row_raw(&r, MDT_COL_Assembly_MajorVersion);
    id->version[1] = (uint16_t)mdt_row_raw(&r, MDT_COL_Assembly_MinorVersion);
    id->version[2] = (uint16_t)mdt_row_raw(&r, MDT_COL_Assembly_BuildNumber);
    id->version[3] = (uint16_t)mdt_row_raw(&r, MDT_COL_Assembly_RevisionNumber);
    id->flags = mdt_row_raw(&r, MDT_COL_Assembly_Flags);
    if ((e = mdt_row_string(&id->name, NULL, &r, MDT_COL_Assembly_Name)) ||
        (e = mdt_row_string(&id->culture, NULL, &r, MDT_COL_Assembly_Culture)) ||
        (e = mdt_row_blob(&id->public_key, &id->public_key_len, &r, MDT_COL_Assembly_PublicKey)))
        return e;
    if (id->public_key_len) {
        mdt_assembly_public_key_token(id->public_key_token, id->public_key, id->public_key_len);
        id->has_token = true;
    } else {
        id->public_key = NULL;
    }
    return 0;
}

int mdt_assemblyref_identity(mdt_identity *id, const mdt_image *img, uint32_t rid)
{
    mdt_row r;
    const uint8_t *blob;
    uint32_t len;
    int e;
    memset(id, 0, sizeof *id);
    if ((e = mdt_row_get(&r, img, MDT_TABLE_AssemblyRef, rid)))
        return e;
    id->version[0] = (uint16_t)mdt_row_raw(&r, MDT_COL_AssemblyRef_MajorVersion);
    id->version[1] = (uint16_t)mdt_row_raw(&r, MDT_COL_AssemblyRef_MinorVersion);
    id->version[2] = (uint16_t)mdt_row_raw(&r, MDT_COL_AssemblyRef_BuildNumber);
    id->version[3] = (uint16_t)mdt_row_raw(&r, MDT_COL_AssemblyRef_RevisionNumber);
    id->flags = mdt_row_raw(&r, MDT_COL_AssemblyRef_Flags);
    if ((e = mdt_row_string(&id->name, NULL, &r, MDT_COL_AssemblyRef_Name)) ||
        (e = mdt_row_string(&id->culture, NULL, &r, MDT_COL_AssemblyRef_Culture)) ||
        (e = mdt_row_blob(&blob, &len, &r, MDT_COL_AssemblyRef_PublicKeyOrToken)))
        return e;
    if (len == 0)
        return 0;
    if (id->flags & MDT_AFL_PUBLICKEY) {
        id->public_key = blob;
        id->public_key_len = len;
        mdt_assembly_public_key_token(id->public_key_token, blob, len);
        id->has_token = true;
        return 0;
    }
    if (len != 8) {
        mdt_place pl = MDT_PLACE_NONE;
        pl.file = mdt__md(img)->name;
        pl.region = "AssemblyRef";
        pl.row = rid;
        pl.column = "PublicKeyOrToken";
        return mdt__fail(MDT_EBADIMAGE, pl, "public key token is %u bytes, not 8", len);
    }
    memcpy(id->public_key_token, blob, 8);
    id->has_token = true;
    return 0;
}

int mdt_image_mvid(uint8_t mvid[16], const mdt_image *img)
{
    mdt_row r;
    const uint8_t *g;
    int e;
    if ((e = mdt_row_get(&r, img, MDT_TABLE_Module, 1)))
        return e;
    if ((e = mdt_row_guid(&g, &r, MDT_COL_Module_Mvid)))
        return e;
    if (!g)
        return mdt__fail_simple(MDT_ENOTFOUND, "Module row has no MVID");
    memcpy(mvid, g, 16);
    return 0;
}

char *mdt_identity_format(char *buf, size_t len, const mdt_identity *id)
{
    char tok[17] = "null";
    if (id->has_token)
        for (int i = 0; i < 8; i++)
            snprintf(tok + 2 * i, 3, "%02x", id->public_key_token[i]);
    snprintf(buf, len, "%s, Version=%u.%u.%u.%u, Culture=%s, PublicKeyToken=%s",
             id->name ? id->name : "?", id->version[0], id->version[1], id->version[2],
             id->version[3], id->culture && id->culture[0] ? id->culture : "neutral", tok);
    return buf;
}

/* api-rename: off */
/* The old names (<mdtools/errors.h>, MDT_DEPRECATED_FOR), for programs
 * built against libmdtools 1:0:0. */
int mdt_public_key_token(uint8_t token[8], const uint8_t *key, size_t len)
{
    return mdt_assembly_public_key_token(token, key, len);
}
/* api-rename: on */
