/* Helpers shared by the tests of tests/generics/: opening fixtures, names
 * of tokens, and an enum resolver over the Mono 4.5 framework (what a real
 * resolver does for TypeRef'd enums, reduced to "assembly name -> file"). */
#ifndef MDT_TESTS_GENERICS_GTEST_H
#define MDT_TESTS_GENERICS_GTEST_H

#include <check.h>
#include <stdio.h>
#include <string.h>
#include <talloc.h>

#include <mdtools/attr.h>
#include <mdtools/descriptor.h>
#include <mdtools/mdtools.h>
#include <mdtools/value.h>

#include "paths.h"

static inline mdt_image *open_path(void *ctx, const char *path)
{
    mdt_image *img = NULL;
    char msg[512];
    ck_assert_msg(mdt_image_open_file(ctx, &img, path, 0) == 0, "%s",
                  mdt_error_message(msg, sizeof msg));
    return img;
}

static inline mdt_image *open_rel(void *ctx, const char *rel)
{
    char p[1024];
    return open_path(ctx, src_path(p, sizeof p, rel));
}

static inline char *name_of(void *ctx, const mdt_image *img, uint32_t token, int style)
{
    mdt_name_opts o = {style, 0, MDT_NAME_OPTS_VERSION, NULL, NULL};
    char *s = NULL, msg[512];
    int e = mdt_token_name(ctx, &s, img, token, &o);
    ck_assert_msg(e == 0, "token 0x%08x: %s", token, mdt_error_message(msg, sizeof msg));
    return s;
}

static inline char *sig_of(void *ctx, const mdt_image *img, uint32_t token, int style)
{
    mdt_name_opts o = {style, 0, MDT_NAME_OPTS_VERSION, NULL, NULL};
    mdt_sig sig;
    char *s = NULL, msg[512];
    ck_assert_msg(mdt_sig_of_token(ctx, &sig, img, token) == 0, "0x%08x: %s", token,
                  mdt_error_message(msg, sizeof msg));
    ck_assert_msg(mdt_sig_name(ctx, &s, &sig, &o) == 0, "0x%08x: %s", token,
                  mdt_error_message(msg, sizeof msg));
    /* The one-call form prints the same, with the name its only block. */
    char *one = NULL;
    ck_assert_msg(mdt_sig_name_of_token(ctx, &one, img, token, &o) == 0, "0x%08x: %s", token,
                  mdt_error_message(msg, sizeof msg));
    ck_assert_msg(!strcmp(one, s), "0x%08x: one call %s, two calls %s", token, one, s);
    ck_assert_ptr_eq(talloc_parent(one), ctx);
    return s;
}

/* Resolver payload: framework images opened on demand, by assembly name. */
typedef struct fw_resolver {
    void *ctx;
    unsigned n;
    char *names[16];
    mdt_image *imgs[16];
    unsigned calls;
} fw_resolver;

static inline const mdt_image *fw_open(fw_resolver *fw, const char *asm_name, size_t len)
{
    char path[1024];
    for (unsigned i = 0; i < fw->n; i++)
        if (strlen(fw->names[i]) == len && !memcmp(fw->names[i], asm_name, len))
            return fw->imgs[i];
    if (fw->n == 16)
        return NULL;
    snprintf(path, sizeof path, "%s/%.*s.dll", MONO_45_DIR, (int)len, asm_name);
    mdt_image *img;
    if (mdt_image_open_file(fw->ctx, &img, path, 0))
        return NULL;
    fw->names[fw->n] = talloc_strndup(fw->ctx, asm_name, len);
    fw->imgs[fw->n++] = img;
    return img;
}

/* mdt_enum_resolver over the framework directory. */
static inline int fw_resolve(void *payload, mdt_enum_info *out, const mdt_image *img,
                             uint32_t token, const char *name)
{
    fw_resolver *fw = payload;
    const char *tn = name, *asm_name = "mscorlib";
    size_t tnlen, asmlen = 8;
    char *refl = NULL;
    fw->calls++;
    if (token) {
        /* The TypeRef's outermost scope must be an AssemblyRef. */
        mdt_name_opts ro = {MDT_STYLE_REFLECTION, 0, MDT_NAME_OPTS_VERSION, NULL, NULL};
        uint32_t scope = token;
        mdt_row r;
        for (int i = 0; i < 64 && MDT_TOKEN_TABLE(scope) == MDT_TABLE_TypeRef; i++)
            if (mdt_row_get(&r, img, MDT_TABLE_TypeRef, MDT_TOKEN_RID(scope)) ||
                mdt_row_token(&scope, &r, MDT_COL_TypeRef_ResolutionScope))
                return MDT_ENOTFOUND;
        if (MDT_TOKEN_TABLE(scope) != MDT_TABLE_AssemblyRef ||
            mdt_row_get(&r, img, MDT_TABLE_AssemblyRef, MDT_TOKEN_RID(scope)) ||
            mdt_row_string(&asm_name, &asmlen, &r, MDT_COL_AssemblyRef_Name) ||
            mdt_token_name(fw->ctx, &refl, img, token, &ro))
            return MDT_ENOTFOUND;
        tn = refl;
        tnlen = strlen(refl);
    } else {
        const char *comma = strchr(name, ',');
        tnlen = comma ? (size_t)(comma - name) : strlen(name);
        if (comma) {
            asm_name = comma + 1;
            while (*asm_name == ' ')
                asm_name++;
            asmlen = strcspn(asm_name, ",");
        }
    }
    const mdt_image *def = fw_open(fw, asm_name, asmlen);
    uint32_t td;
    if (!def || mdt_typedef_by_name(&td, def, tn, tnlen))
        return MDT_ENOTFOUND;
    out->def_img = def;
    out->def_typedef = td;
    return 0;
}

#endif
