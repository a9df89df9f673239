/* md-names: mdtools' side of the differential test against Mono.Cecil
 * (tests/generics/diff-names.sh). For each file on the command line, prints
 * every TypeDef, TypeRef, TypeSpec, MethodSpec and TypeSpec-parented
 * MemberRef in the full style of doc/names.md, one line per row, in the
 * format of cecil-names.cs:
 *
 *     F <path>
 *     D 0x02000001 <name>   /   E 0x01...   /   T 0x1b...   /   M 0x2b...   /   R 0x0a...
 *     <kind> 0x........ ERR <message>
 */
#include <stdio.h>
#include <string.h>
#include <talloc.h>

#include <mdtools/mdtools.h>

static void row(void *ctx, const mdt_image *img, char kind, uint32_t token)
{
    void *tmp = talloc_new(ctx);
    char *s, msg[512];
    if (mdt_token_name(tmp, &s, img, token, NULL) == 0)
        printf("%c 0x%08x %s\n", kind, token, s);
    else
        printf("%c 0x%08x ERR %s\n", kind, token, mdt_error_message(msg, sizeof msg));
    talloc_free(tmp);
}

int main(int argc, char **argv)
{
    void *ctx = talloc_new(NULL);
    for (int i = 1; i < argc; i++) {
        mdt_image *img;
        char msg[512];
        printf("F %s\n", argv[i]);
        if (mdt_image_open_file(ctx, &img, argv[i], 0)) {
            printf("ERR cannot read: %s\n", mdt_error_message(msg, sizeof msg));
            continue;
        }
        for (uint32_t rid = 1; rid <= mdt_table_rows(img, MDT_TABLE_TypeDef); rid++)
            row(ctx, img, 'D', MDT_TOKEN(MDT_TABLE_TypeDef, rid));
        for (uint32_t rid = 1; rid <= mdt_table_rows(img, MDT_TABLE_TypeRef); rid++)
            row(ctx, img, 'E', MDT_TOKEN(MDT_TABLE_TypeRef, rid));
        for (uint32_t rid = 1; rid <= mdt_table_rows(img, MDT_TABLE_TypeSpec); rid++)
            row(ctx, img, 'T', MDT_TOKEN(MDT_TABLE_TypeSpec, rid));
        for (uint32_t rid = 1; rid <= mdt_table_rows(img, MDT_TABLE_MethodSpec); rid++)
            row(ctx, img, 'M', MDT_TOKEN(MDT_TABLE_MethodSpec, rid));
        for (uint32_t rid = 1; rid <= mdt_table_rows(img, MDT_TABLE_MemberRef); rid++) {
            mdt_row r;
            uint32_t parent;
            if (mdt_row_get(&r, img, MDT_TABLE_MemberRef, rid) ||
                mdt_row_token(&parent, &r, MDT_COL_MemberRef_Class)) {
                printf("R 0x%08x ERR %s\n", MDT_TOKEN(MDT_TABLE_MemberRef, rid),
                       mdt_error_message(msg, sizeof msg));
                continue;
            }
            if (MDT_TOKEN_TABLE(parent) == MDT_TABLE_TypeSpec)
                row(ctx, img, 'R', MDT_TOKEN(MDT_TABLE_MemberRef, rid));
        }
        mdt_image_close(img);
    }
    talloc_free(ctx);
    return fflush(stdout) == 0 ? 0 : 1;
}
