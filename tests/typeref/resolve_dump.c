/* resolve_dump FILE...: registers the files as one module set (IDs in
 * argument order) and prints, for every TypeRef and ExportedType row of
 * every module, one line
 *     <module file name> <token> <assembly simple name> <full name>
 * or "<module> <token> - unresolved <reason>", where the full name is
 * written as Mono.Cecil writes TypeDefinition.FullName (`Ns.Outer/Inner`,
 * generic arity kept), so tests/typeref/cecil-diff.sh can compare the two
 * line by line. */
#include <stdio.h>
#include <string.h>
#include <talloc.h>

#include <mdtools/mdtools.h>
#include <mdtools/modset.h>
#include <mdtools/typeref.h>

static void cecil_name(const mdt_image *img, uint32_t token, char *buf, size_t len)
{
    const char *names[64], *nss[64];
    unsigned n = 0;
    uint32_t t = token;
    while (t && n < 64) {
        mdt_row r;
        uint32_t outer = 0;
        if (mdt_row_get(&r, img, MDT_TABLE_TypeDef, t & 0xFFFFFF) ||
            mdt_row_string(&names[n], NULL, &r, MDT_COL_TypeDef_TypeName) ||
            mdt_row_string(&nss[n], NULL, &r, MDT_COL_TypeDef_TypeNamespace) ||
            mdt_typedef_enclosing(&outer, img, t))
            break;
        n++;
        t = outer;
    }
    size_t pos = 0;
    buf[0] = 0;
    for (unsigned i = n; i-- > 0 && pos < len;) {
        int w = snprintf(buf + pos, len - pos, "%s%s%s%s", nss[i], *nss[i] ? "." : "", names[i],
                         i ? "/" : "");
        if (w < 0)
            break;
        pos += (size_t)w;
    }
}

int main(int argc, char **argv)
{
    void *ctx = talloc_new(NULL);
    mdt_modset *set;
    if (mdt_modset_new(ctx, &set))
        return 1;
    for (int i = 1; i < argc; i++) {
        mdt_image *img;
        char msg[512];
        if (mdt_image_open_file(set, &img, argv[i], 0)) {
            fprintf(stderr, "resolve_dump: %s\n", mdt_error_message(msg, sizeof msg));
            continue;
        }
        mdt_module_desc d = {.id = (uintptr_t)i, .image = img, .path = argv[i]};
        if (mdt_modset_add(set, &d, MDT_MODSET_OWN_IMAGE))
            return 1;
    }
    mdt_modview *v = mdt_modset_acquire(set);
    for (size_t i = 0; i < mdt_modview_count(v); i++) {
        mdt_module_info mi;
        static const unsigned tables[] = {MDT_TABLE_TypeRef, MDT_TABLE_ExportedType};
        mdt_modview_module(&mi, v, i);
        for (unsigned t = 0; t < 2; t++)
            for (uint32_t k = 1; k <= mdt_table_rows(mi.image, tables[t]); k++) {
                uint32_t tok = MDT_TOKEN(tables[t], k);
                mdt_resolution r;
                if (mdt_token_resolve(NULL, &r, NULL, v, mi.id, tok, NULL))
                    return 1;
                if (!r.resolved) {
                    printf("%s 0x%08x - unresolved %s\n", mi.name, tok,
                           mdt_resolution_reason_name(r.reason));
                    continue;
                }
                mdt_module_info dm, am;
                char full[2048];
                mdt_modview_lookup(&dm, v, r.module);
                cecil_name(dm.image, r.token, full, sizeof full);
                const char *asmname = "?";
                if (dm.manifest && mdt_modview_lookup(&am, v, dm.manifest) == 0)
                    asmname = am.identity.name;
                printf("%s 0x%08x %s %s\n", mi.name, tok, asmname, full);
            }
    }
    mdt_modview_release(v);
    talloc_free(ctx);
    return 0;
}
