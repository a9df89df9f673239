/* Runtime IDs printed through the generics formatter: ClassIDs and
 * FunctionIDs of an idmap whose modules are real images (Everything.dll and
 * Mono's mscorlib), with primitives, arrays and System.__Canon. */
#include <check.h>
#include <string.h>
#include <talloc.h>

#include <mdtools/mdtools.h>

#include "paths.h"

enum { EVERYTHING = 0x10, CORLIB = 0x20 };

struct fixture {
    void *ctx;
    mdt_image *ev, *corlib;
    mdt_idmap *map;
    uint64_t seq;
};

static uint32_t find_row(const mdt_image *img, unsigned table, unsigned col, const char *name,
                         uint32_t owner)
{
    for (uint32_t i = 1; i <= mdt_table_rows(img, table); i++) {
        mdt_row r;
        const char *n;
        uint32_t o = 0;
        mdt_row_get(&r, img, table, i);
        mdt_row_string(&n, NULL, &r, col);
        if (table == MDT_TABLE_MethodDef)
            mdt_member_owner(&o, img, MDT_TOKEN(table, i));
        if (!strcmp(n, name) && (!owner || o == owner))
            return MDT_TOKEN(table, i);
    }
    return 0;
}

static void setup(struct fixture *f)
{
    char p[1024];
    memset(f, 0, sizeof *f);
    f->ctx = talloc_new(NULL);
    ck_assert_int_eq(
        mdt_image_open_file(f->ctx, &f->ev, src_path(p, sizeof p, "data/Everything.dll"), 0), 0);
    ck_assert_int_eq(mdt_image_open_file(f->ctx, &f->corlib, MONO_45_DIR "/mscorlib.dll", 0), 0);
    ck_assert_int_eq(mdt_idmap_new(&f->map, NULL), 0);
    mdt_idmap_module_info mi = {0};
    mi.image = f->ev;
    mdt_image_mvid(mi.mvid, f->ev);
    ck_assert_int_ge(mdt_idmap_module_load(f->map, EVERYTHING, &mi, ++f->seq), 0);
    mi.image = f->corlib;
    mdt_image_mvid(mi.mvid, f->corlib);
    ck_assert_int_ge(mdt_idmap_module_load(f->map, CORLIB, &mi, ++f->seq), 0);
}

static void class_load(struct fixture *f, uintptr_t id, uintptr_t module, uint32_t td, uint8_t prim,
                       uint32_t n, const uintptr_t *args)
{
    mdt_idmap_class_info ci = {0};
    ci.module = module;
    ci.token = td;
    ci.prim = prim;
    ci.nargs = n;
    ci.args = args;
    ck_assert_int_ge(mdt_idmap_class_load(f->map, id, &ci, ++f->seq), 0);
}

START_TEST(class_and_function_names_through_the_formatter)
{
    struct fixture f;
    setup(&f);
    uint32_t int32 = find_row(f.corlib, MDT_TABLE_TypeDef, MDT_COL_TypeDef_TypeName, "Int32", 0);
    uint32_t string = find_row(f.corlib, MDT_TABLE_TypeDef, MDT_COL_TypeDef_TypeName, "String", 0);
    uint32_t single = find_row(f.corlib, MDT_TABLE_TypeDef, MDT_COL_TypeDef_TypeName, "Single", 0);
    /* Mono's corlib has no System.__Canon TypeDef (CoreCLR's): the class is
     * marked as __Canon, whatever TypeDef carries it. */
    uint32_t canon = find_row(f.corlib, MDT_TABLE_TypeDef, MDT_COL_TypeDef_TypeName, "Object", 0);
    ck_assert(int32 && string && single && canon);
    class_load(&f, 0x100, CORLIB, int32, MDT_ELEMENT_TYPE_I4, 0, NULL);
    class_load(&f, 0x101, CORLIB, string, MDT_ELEMENT_TYPE_STRING, 0, NULL);
    class_load(&f, 0x102, CORLIB, single, MDT_ELEMENT_TYPE_R4, 0, NULL);
    class_load(&f, 0x103, CORLIB, canon, MDT_IDMAP_PRIM_CANON, 0, NULL);
    /* Everything.Pair`2 (TypeDef 30) over <int, string>, and over <__Canon, int[]>. */
    class_load(&f, 0x200, EVERYTHING, 0x0200001E, 0, 2, (uintptr_t[]){0x100, 0x101});
    mdt_idmap_class_info arr = {0};
    arr.shape = MDT_IDMAP_SHAPE_SZARRAY;
    arr.nargs = 1;
    arr.args = (uintptr_t[]){0x100};
    ck_assert_int_ge(mdt_idmap_class_load(f.map, 0x104, &arr, ++f.seq), 0);
    class_load(&f, 0x201, EVERYTHING, 0x0200001E, 0, 2, (uintptr_t[]){0x103, 0x104});

    char *s, msg[512];
    ck_assert_msg(mdt_idmap_class_name(f.ctx, &s, f.map, 0x200, 0, NULL) == 0, "%s",
                  mdt_error_message(msg, sizeof msg));
    ck_assert_str_eq(s, "Everything.Pair<System.Int32,System.String>");
    ck_assert_int_eq(mdt_idmap_class_name(f.ctx, &s, f.map, 0x201, 0, NULL), 0);
    ck_assert_str_eq(s, "Everything.Pair<System.__Canon,System.Int32[]>");
    mdt_name_opts friendly = {MDT_STYLE_FULL, MDT_NAME_FRIENDLY, MDT_NAME_OPTS_VERSION, NULL, NULL};
    ck_assert_int_eq(mdt_idmap_class_name(f.ctx, &s, f.map, 0x200, 0, &friendly), 0);
    ck_assert_str_eq(s, "Pair<int,string>");

    /* Pair`2::Select`1 with class args <int, string> and method arg <float>. */
    uint32_t select =
        find_row(f.ev, MDT_TABLE_MethodDef, MDT_COL_MethodDef_Name, "Select", 0x0200001E);
    ck_assert_uint_ne(select, 0);
    mdt_idmap_function_info fi = {0};
    fi.module = EVERYTHING;
    fi.token = select;
    fi.class_id = 0x200;
    fi.nargs = 1;
    fi.args = (uintptr_t[]){0x102};
    ck_assert_int_ge(mdt_idmap_function_load(f.map, 0x300, &fi, ++f.seq), 0);
    ck_assert_msg(mdt_idmap_function_name(f.ctx, &s, f.map, 0x300, 0, NULL) == 0, "%s",
                  mdt_error_message(msg, sizeof msg));
    ck_assert_str_eq(s, "Everything.Pair<System.Int32,System.String>::Select<System.Single>");

    /* Unknown IDs and unloaded modules answer with an error, never a name. */
    ck_assert_int_eq(mdt_idmap_class_name(f.ctx, &s, f.map, 0x999, 0, NULL), MDT_ENOTFOUND);
    class_load(&f, 0x202, EVERYTHING, 0x0200001E, 0, 2, (uintptr_t[]){0x100, 0x998});
    ck_assert_int_eq(mdt_idmap_class_name(f.ctx, &s, f.map, 0x202, 0, NULL), MDT_ENOTFOUND);
    ck_assert_int_ge(mdt_idmap_module_unload(f.map, EVERYTHING, ++f.seq), 0);
    ck_assert_int_eq(mdt_idmap_class_name(f.ctx, &s, f.map, 0x200, 0, NULL), MDT_ENOTFOUND);
    ck_assert_int_eq(mdt_idmap_function_name(f.ctx, &s, f.map, 0x300, 0, NULL), MDT_ENOTFOUND);
    mdt_idmap_free(f.map);
    talloc_free(f.ctx);
}
END_TEST

MDT_TESTS_NEED_MONO

Suite *suite(void);
Suite *suite(void)
{
    Suite *s = suite_create("idnames");
    TCase *tc = tcase_create("idnames");
    tcase_add_test(tc, class_and_function_names_through_the_formatter);
    suite_add_tcase(s, tc);
    return s;
}
