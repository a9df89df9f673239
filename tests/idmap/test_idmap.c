/* Runtime-ID maps (issue 6): forward and reverse lookups, unload cascades,
 * generations across ID reuse, attach precedence, code ranges, naming,
 * lazy catch-up, retiring tombstones, growth. One test per behaviour. */
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <mdtools/idmap.h>

#define MOD 0x10000u
#define MOD2 0x20000u
#define DOM 0xd0000u
#define ASM 0xa0000u

static mdt_idmap *new_map(void)
{
    mdt_idmap *m = NULL;
    ck_assert_int_eq(mdt_idmap_new(&m, NULL), 0);
    return m;
}

static void mvid_of(uint8_t mvid[16], unsigned v)
{
    memset(mvid, 0, 16);
    for (int i = 0; i < 16; i++)
        mvid[i] = (uint8_t)(v * 16 + (unsigned)i);
}

static int load_module(mdt_idmap *m, uintptr_t id, unsigned mv, uintptr_t dom, uintptr_t as,
                       uint64_t seq)
{
    mdt_idmap_module_info mi = {0};
    mvid_of(mi.mvid, mv);
    mi.appdomain = dom;
    mi.assembly = as;
    mi.path = "/x/y.dll";
    return mdt_idmap_module_load(m, id, &mi, seq);
}

static int load_class(mdt_idmap *m, uintptr_t id, uintptr_t module, uint32_t td, uint32_t n,
                      const uintptr_t *args, uint64_t seq)
{
    mdt_idmap_class_info ci = {0};
    ci.module = module;
    ci.token = td;
    ci.nargs = n;
    ci.args = args;
    return mdt_idmap_class_load(m, id, &ci, seq);
}

static int load_prim(mdt_idmap *m, uintptr_t id, uint32_t td, uint8_t prim, uint64_t seq)
{
    mdt_idmap_class_info ci = {0};
    ci.module = MOD;
    ci.token = td;
    ci.prim = prim;
    return mdt_idmap_class_load(m, id, &ci, seq);
}

static int load_shape(mdt_idmap *m, uintptr_t id, uint8_t shape, uintptr_t elem, uint16_t rank,
                      uint64_t seq)
{
    mdt_idmap_class_info ci = {0};
    ci.shape = shape;
    ci.rank = rank;
    ci.nargs = 1;
    ci.args = &elem;
    return mdt_idmap_class_load(m, id, &ci, seq);
}

static int load_func(mdt_idmap *m, uintptr_t id, uintptr_t module, uint32_t md, uintptr_t cls,
                     uint32_t n, const uintptr_t *args, uint64_t seq)
{
    mdt_idmap_function_info fi = {0};
    fi.module = module;
    fi.token = md;
    fi.class_id = cls;
    fi.nargs = n;
    fi.args = args;
    return mdt_idmap_function_load(m, id, &fi, seq);
}

static bool class_known(mdt_idmap *m, uintptr_t id, uint64_t gen)
{
    mdt_idmap_class_info ci;
    return mdt_idmap_class_lookup(&ci, NULL, 0, m, id, gen) == 0;
}

static bool func_known(mdt_idmap *m, uintptr_t id)
{
    mdt_idmap_function_info fi;
    return mdt_idmap_function_lookup(&fi, NULL, 0, m, id, 0) == 0;
}

static bool module_known(mdt_idmap *m, uintptr_t id)
{
    mdt_idmap_module_info mi;
    return mdt_idmap_module_lookup(&mi, m, id, 0) == 0;
}

START_TEST(module_load_copies_path_and_reports_fields)
{
    mdt_idmap *m = new_map();
    char path[64];
    char buf[4];
    mdt_idmap_module_info mi = {0}, out;
    mvid_of(mi.mvid, 3);
    mi.appdomain = DOM;
    mi.assembly = ASM;
    char p[] = "/app/Hello.exe";
    mi.path = p;
    ck_assert_int_eq(mdt_idmap_module_load(m, MOD, &mi, 5), MDT_IDMAP_APPLIED);
    p[1] = 'X'; /* the map kept its own copy */
    ck_assert_int_eq(mdt_idmap_module_lookup(&out, m, MOD, 0), 0);
    ck_assert_uint_eq(out.gen, 5);
    ck_assert_uint_eq(out.appdomain, DOM);
    ck_assert_uint_eq(out.assembly, ASM);
    ck_assert(out.path == NULL);
    ck_assert_mem_eq(out.mvid, mi.mvid, 16);
    ck_assert_int_eq(mdt_idmap_module_path(path, sizeof path, m, MOD, 0), 14);
    ck_assert_str_eq(path, "/app/Hello.exe");
    ck_assert_int_eq(mdt_idmap_module_path(buf, sizeof buf, m, MOD, 0), 14);
    ck_assert_str_eq(buf, "/ap");
    ck_assert_int_eq(mdt_idmap_module_lookup(&out, m, MOD, 4), MDT_ENOTFOUND);
    ck_assert_int_eq(mdt_idmap_module_lookup(&out, m, MOD2, 0), MDT_ENOTFOUND);
    mdt_idmap_free(m);
}
END_TEST

START_TEST(class_arguments_inline_and_out_of_line)
{
    mdt_idmap *m = new_map();
    uintptr_t a2[2] = {0x501, 0x502}, a5[5] = {0x501, 0x502, 0x503, 0x504, 0x505};
    uintptr_t buf[8];
    mdt_idmap_class_info ci;
    ck_assert_int_eq(load_module(m, MOD, 1, 0, 0, 1), 0);
    ck_assert_int_eq(load_class(m, 0x1000, MOD, 0x02000005, 2, a2, 2), 0);
    ck_assert_int_eq(load_class(m, 0x1100, MOD, 0x02000006, 5, a5, 3), 0);
    ck_assert_int_eq(mdt_idmap_class_lookup(&ci, buf, 8, m, 0x1000, 0), 0);
    ck_assert_uint_eq(ci.module, MOD);
    ck_assert_uint_eq(ci.token, 0x02000005);
    ck_assert_uint_eq(ci.nargs, 2);
    ck_assert(ci.args == buf);
    ck_assert_uint_eq(buf[1], 0x502);
    ck_assert_int_eq(mdt_idmap_class_lookup(&ci, buf, 3, m, 0x1100, 0), 0);
    ck_assert_uint_eq(ci.nargs, 5); /* true count, 3 copied */
    ck_assert_uint_eq(buf[2], 0x503);
    ck_assert_int_eq(mdt_idmap_class_lookup(&ci, buf, 8, m, 0x1100, 0), 0);
    ck_assert_uint_eq(buf[4], 0x505);
    mdt_idmap_free(m);
}
END_TEST

START_TEST(function_owner_filled_in_later)
{
    mdt_idmap *m = new_map();
    uintptr_t margs[3] = {0x700, 0x701, 0x702}, buf[4];
    mdt_idmap_function_info fi;
    ck_assert_int_eq(load_module(m, MOD, 1, 0, 0, 1), 0);
    ck_assert_int_eq(load_class(m, 0x1000, MOD, 0x02000002, 0, NULL, 2), 0);
    ck_assert_int_eq(load_func(m, 0xf00, MOD, 0x06000010, 0, 3, margs, 3), MDT_IDMAP_APPLIED);
    ck_assert_int_eq(mdt_idmap_function_lookup(&fi, buf, 4, m, 0xf00, 0), 0);
    ck_assert_uint_eq(fi.class_id, 0);
    ck_assert_uint_eq(fi.nargs, 3);
    ck_assert_uint_eq(buf[2], 0x702);
    ck_assert_int_eq(load_func(m, 0xf00, MOD, 0x06000010, 0x1000, 3, margs, 4), MDT_IDMAP_APPLIED);
    ck_assert_int_eq(mdt_idmap_function_lookup(&fi, buf, 4, m, 0xf00, 0), 0);
    ck_assert_uint_eq(fi.class_id, 0x1000);
    ck_assert_uint_eq(fi.gen, 3); /* same incarnation */
    ck_assert_int_eq(load_func(m, 0xf00, MOD, 0x06000010, 0, 3, margs, 5), MDT_IDMAP_DUPLICATE);
    /* The owner's unload now takes the function along. */
    ck_assert_int_eq(mdt_idmap_class_unload(m, 0x1000, 6), MDT_IDMAP_APPLIED);
    ck_assert(!func_known(m, 0xf00));
    mdt_idmap_free(m);
}
END_TEST

START_TEST(module_unload_cascades_through_type_arguments)
{
    mdt_idmap *m = new_map();
    uintptr_t foo = 0x2000, listfoo = 0x1001, arrfoo = 0x1002;
    ck_assert_int_eq(load_module(m, MOD, 1, 0, 0, 1), 0);  /* corlib */
    ck_assert_int_eq(load_module(m, MOD2, 2, 0, 0, 2), 0); /* app */
    ck_assert_int_eq(load_class(m, 0x1000, MOD, 0x02000010, 0, NULL, 3), 0);
    ck_assert_int_eq(load_class(m, foo, MOD2, 0x02000002, 0, NULL, 4), 0);
    ck_assert_int_eq(load_class(m, listfoo, MOD, 0x02000011, 1, &foo, 5), 0);
    ck_assert_int_eq(load_shape(m, arrfoo, MDT_IDMAP_SHAPE_SZARRAY, foo, 0, 6), 0);
    ck_assert_int_eq(load_func(m, 0xf00, MOD, 0x06000020, listfoo, 0, NULL, 7), 0);
    ck_assert_int_eq(load_func(m, 0xf01, MOD, 0x06000021, 0x1000, 1, &arrfoo, 8), 0);
    ck_assert_int_eq(load_func(m, 0xf02, MOD, 0x06000022, 0x1000, 0, NULL, 9), 0);
    ck_assert_int_eq(mdt_idmap_module_unload(m, MOD2, 10), MDT_IDMAP_APPLIED);
    ck_assert(!module_known(m, MOD2));
    ck_assert(!class_known(m, foo, 0));
    ck_assert(!class_known(m, listfoo, 0));
    ck_assert(!class_known(m, arrfoo, 0));
    ck_assert(!func_known(m, 0xf00));
    ck_assert(!func_known(m, 0xf01));
    ck_assert(func_known(m, 0xf02));
    ck_assert(class_known(m, 0x1000, 0));
    ck_assert(module_known(m, MOD));
    mdt_idmap_free(m);
}
END_TEST

START_TEST(reused_id_gets_new_generation)
{
    mdt_idmap *m = new_map();
    mdt_idmap_class_info ci;
    ck_assert_int_eq(load_module(m, MOD, 1, 0, 0, 1), 0);
    ck_assert_int_eq(load_class(m, 0x1000, MOD, 0x02000005, 0, NULL, 2), 0);
    ck_assert_int_eq(mdt_idmap_class_lookup(&ci, NULL, 0, m, 0x1000, 0), 0);
    uint64_t old = ci.gen;
    ck_assert_int_eq(mdt_idmap_module_unload(m, MOD, 3), MDT_IDMAP_APPLIED);
    ck_assert(!class_known(m, 0x1000, old));
    /* The runtime reuses both addresses for other things. */
    ck_assert_int_eq(load_module(m, MOD, 9, 0, 0, 4), MDT_IDMAP_APPLIED);
    ck_assert_int_eq(load_class(m, 0x1000, MOD, 0x02000077, 0, NULL, 5), MDT_IDMAP_APPLIED);
    ck_assert(!class_known(m, 0x1000, old)); /* a stored (ID, gen) stays stale */
    ck_assert_int_eq(mdt_idmap_class_lookup(&ci, NULL, 0, m, 0x1000, 0), 0);
    ck_assert_uint_eq(ci.token, 0x02000077);
    ck_assert_uint_eq(ci.gen, 5);
    ck_assert(class_known(m, 0x1000, 5));
    mdt_idmap_free(m);
}
END_TEST

START_TEST(enumeration_item_older_than_unload_is_ignored)
{
    mdt_idmap *m = new_map();
    /* Enumeration generated at 5, unload event at 7, item applied late. */
    ck_assert_int_eq(mdt_idmap_module_unload(m, MOD, 7), MDT_IDMAP_APPLIED);
    ck_assert_int_eq(load_module(m, MOD, 1, 0, 0, 5), MDT_IDMAP_SUPERSEDED);
    ck_assert(!module_known(m, MOD));
    /* Classes of an enumeration older than their module's unload, too. */
    ck_assert_int_eq(load_class(m, 0x1000, MOD, 0x02000002, 0, NULL, 6), MDT_IDMAP_SUPERSEDED);
    ck_assert(!class_known(m, 0x1000, 0));
    /* A later load is a new module. */
    ck_assert_int_eq(load_module(m, MOD, 1, 0, 0, 8), MDT_IDMAP_APPLIED);
    ck_assert_int_eq(load_class(m, 0x1000, MOD, 0x02000002, 0, NULL, 6), MDT_IDMAP_SUPERSEDED);
    ck_assert_int_eq(load_class(m, 0x1000, MOD, 0x02000002, 0, NULL, 9), MDT_IDMAP_APPLIED);
    mdt_idmap_free(m);
}
END_TEST

START_TEST(duplicates_keep_generation)
{
    mdt_idmap *m = new_map();
    mdt_idmap_module_info mi;
    ck_assert_int_eq(load_module(m, MOD, 1, 0, 0, 5), MDT_IDMAP_APPLIED);   /* enumeration */
    ck_assert_int_eq(load_module(m, MOD, 1, 0, 0, 6), MDT_IDMAP_DUPLICATE); /* event */
    ck_assert_int_eq(load_module(m, MOD, 1, 0, 0, 5), MDT_IDMAP_DUPLICATE);
    ck_assert_int_eq(mdt_idmap_module_lookup(&mi, m, MOD, 5), 0);
    ck_assert_int_eq(mdt_idmap_module_unload(m, MOD, 9), MDT_IDMAP_APPLIED);
    ck_assert_int_eq(mdt_idmap_module_unload(m, MOD, 9), MDT_IDMAP_DUPLICATE);
    ck_assert_int_eq(mdt_idmap_module_unload(m, MOD, 8), MDT_IDMAP_DUPLICATE);
    ck_assert(!module_known(m, MOD));
    mdt_idmap_free(m);
}
END_TEST

START_TEST(late_unload_of_replaced_incarnation)
{
    mdt_idmap *m = new_map();
    mdt_idmap_module_info mi;
    /* enum 5 sees M; unload at 7 and reload at 8 of the same file at the
     * same address; the threads apply 8 before 7. */
    ck_assert_int_eq(load_module(m, MOD, 1, 0, 0, 5), MDT_IDMAP_APPLIED);
    ck_assert_int_eq(load_class(m, 0x1000, MOD, 0x02000002, 0, NULL, 6), MDT_IDMAP_APPLIED);
    ck_assert_int_eq(load_module(m, MOD, 1, 0, 0, 8), MDT_IDMAP_DUPLICATE);
    ck_assert_int_eq(mdt_idmap_module_unload(m, MOD, 7), MDT_IDMAP_APPLIED);
    ck_assert_int_eq(mdt_idmap_module_lookup(&mi, m, MOD, 0), 0);
    ck_assert_uint_eq(mi.gen, 8);
    ck_assert(!class_known(m, 0x1000, 0));
    ck_assert_int_eq(mdt_idmap_module_lookup(&mi, m, MOD, 5), MDT_ENOTFOUND);
    mdt_idmap_free(m);
}
END_TEST

START_TEST(appdomain_and_assembly_unloads)
{
    mdt_idmap *m = new_map();
    ck_assert_int_eq(load_module(m, MOD, 1, DOM, ASM, 1), 0);
    ck_assert_int_eq(load_module(m, MOD2, 2, DOM + 1, ASM + 1, 2), 0);
    ck_assert_int_eq(load_class(m, 0x1000, MOD, 0x02000002, 0, NULL, 3), 0);
    ck_assert_int_eq(load_class(m, 0x2000, MOD2, 0x02000002, 0, NULL, 4), 0);
    ck_assert_int_eq(mdt_idmap_appdomain_shutdown(m, DOM, 5), MDT_IDMAP_APPLIED);
    ck_assert(!module_known(m, MOD));
    ck_assert(!class_known(m, 0x1000, 0));
    ck_assert(module_known(m, MOD2));
    /* A late enumeration item of a module in the dead AppDomain. */
    ck_assert_int_eq(load_module(m, 0x30000, 3, DOM, 0, 4), MDT_IDMAP_SUPERSEDED);
    ck_assert_int_eq(mdt_idmap_assembly_unload(m, ASM + 1, 6), MDT_IDMAP_APPLIED);
    ck_assert(!module_known(m, MOD2));
    ck_assert(!class_known(m, 0x2000, 0));
    /* A new AppDomain at the same address. */
    ck_assert_int_eq(load_module(m, 0x30000, 3, DOM, 0, 7), MDT_IDMAP_APPLIED);
    mdt_idmap_free(m);
}
END_TEST

START_TEST(conflicting_newer_load_replaces_incarnation)
{
    mdt_idmap *m = new_map();
    mdt_idmap_class_info ci;
    ck_assert_int_eq(load_module(m, MOD, 1, 0, 0, 1), 0);
    ck_assert_int_eq(load_class(m, 0x1000, MOD, 0x02000002, 0, NULL, 2), 0);
    ck_assert_int_eq(load_class(m, 0x1100, MOD, 0x02000003, 1, (uintptr_t[]){0x1000}, 3), 0);
    /* An unload we never saw, then the address reused. */
    ck_assert_int_eq(load_class(m, 0x1000, MOD, 0x02000009, 0, NULL, 4), MDT_IDMAP_APPLIED);
    ck_assert_int_eq(mdt_idmap_class_lookup(&ci, NULL, 0, m, 0x1000, 0), 0);
    ck_assert_uint_eq(ci.token, 0x02000009);
    ck_assert(!class_known(m, 0x1100, 0)); /* it named the old one */
    ck_assert_int_eq(load_class(m, 0x1000, MOD, 0x02000002, 0, NULL, 3), MDT_IDMAP_SUPERSEDED);
    mdt_idmap_free(m);
}
END_TEST

START_TEST(reverse_lookups_without_runtime)
{
    mdt_idmap *m = new_map();
    uintptr_t id, a1 = 0x2000, a3[3] = {0x2000, 0x2001, 0x2002};
    uint64_t gen;
    mdt_idmap_class_info key = {0};
    mdt_idmap_function_info fkey = {0};
    ck_assert_int_eq(load_module(m, MOD, 1, 0, 0, 1), 0);
    ck_assert_int_eq(load_class(m, 0x1000, MOD, 0x02000010, 1, &a1, 2), 0);
    ck_assert_int_eq(load_class(m, 0x1001, MOD, 0x02000010, 3, a3, 3), 0);
    ck_assert_int_eq(load_shape(m, 0x1002, MDT_IDMAP_SHAPE_ARRAY, 0x2000, 2, 4), 0);
    key.module = MOD;
    key.token = 0x02000010;
    key.nargs = 3;
    key.args = a3;
    ck_assert_int_eq(mdt_idmap_class_find(&id, &gen, m, &key), 0);
    ck_assert_uint_eq(id, 0x1001);
    ck_assert_uint_eq(gen, 3);
    key.nargs = 1;
    ck_assert_int_eq(mdt_idmap_class_find(&id, NULL, m, &key), 0);
    ck_assert_uint_eq(id, 0x1000);
    key.nargs = 0;
    ck_assert_int_eq(mdt_idmap_class_find(&id, NULL, m, &key), MDT_ENOTFOUND);
    mdt_idmap_class_info akey = {0, 0, MDT_IDMAP_SHAPE_ARRAY, 0, 2, 1, &a1, 0};
    ck_assert_int_eq(mdt_idmap_class_find(&id, NULL, m, &akey), 0);
    ck_assert_uint_eq(id, 0x1002);
    akey.rank = 3;
    ck_assert_int_eq(mdt_idmap_class_find(&id, NULL, m, &akey), MDT_ENOTFOUND);

    ck_assert_int_eq(mdt_idmap_typedef_loaded(m, MOD, 0x02000010), 1);
    ck_assert_int_eq(mdt_idmap_typedef_loaded(m, MOD, 0x02000011), 0);
    ck_assert_int_eq(load_func(m, 0xf00, MOD, 0x06000001, 0x1000, 1, &a1, 5), 0);
    fkey.module = MOD;
    fkey.token = 0x06000001;
    fkey.class_id = 0x1000;
    fkey.nargs = 1;
    fkey.args = &a1;
    ck_assert_int_eq(mdt_idmap_function_find(&id, &gen, m, &fkey), 0);
    ck_assert_uint_eq(id, 0xf00);
    fkey.class_id = 0x1001;
    ck_assert_int_eq(mdt_idmap_function_find(&id, &gen, m, &fkey), MDT_ENOTFOUND);

    ck_assert_int_eq(mdt_idmap_class_unload(m, 0x1000, 6), MDT_IDMAP_APPLIED);
    ck_assert_int_eq(mdt_idmap_typedef_loaded(m, MOD, 0x02000010), 1); /* 0x1001 */
    ck_assert_int_eq(mdt_idmap_class_unload(m, 0x1001, 7), MDT_IDMAP_APPLIED);
    ck_assert_int_eq(mdt_idmap_typedef_loaded(m, MOD, 0x02000010), 0);
    key.nargs = 1;
    ck_assert_int_eq(mdt_idmap_class_find(&id, NULL, m, &key), MDT_ENOTFOUND);
    fkey.class_id = 0x1000;
    ck_assert_int_eq(mdt_idmap_function_find(&id, NULL, m, &fkey), MDT_ENOTFOUND);
    mdt_idmap_free(m);
}
END_TEST

START_TEST(code_ranges_follow_their_function)
{
    mdt_idmap *m = new_map();
    mdt_idmap_code_range r;
    mdt_idmap_stats st;
    ck_assert_int_eq(load_module(m, MOD, 1, 0, 0, 1), 0);
    ck_assert_int_eq(mdt_idmap_code_add(m, 0x5000, 0x10, 0xf00, 2), MDT_ENOTFOUND);
    /* 1000 functions with 1000 ranges: splits chunks. */
    for (unsigned i = 0; i < 1000; i++) {
        ck_assert_int_eq(load_func(m, 0xf000 + i * 8, MOD, 0x06000001 + i, 0, 0, NULL, 10 + i), 0);
        ck_assert_int_eq(mdt_idmap_code_add(m, 0x100000 + (uintptr_t)(i * 7919 % 1000) * 0x40, 0x30,
                                            0xf000 + i * 8, 2000 + i),
                         MDT_IDMAP_APPLIED);
    }
    for (unsigned i = 0; i < 1000; i++) {
        unsigned slot = i * 7919 % 1000;
        ck_assert_int_eq(mdt_idmap_ip_lookup(&r, m, 0x100000 + (uintptr_t)slot * 0x40 + 0x2f), 0);
        ck_assert_uint_eq(r.function_id, 0xf000 + i * 8);
        ck_assert_uint_eq(r.size, 0x30);
        ck_assert_int_eq(mdt_idmap_ip_lookup(&r, m, 0x100000 + (uintptr_t)slot * 0x40 + 0x30),
                         MDT_ENOTFOUND);
    }
    ck_assert_int_eq(mdt_idmap_ip_lookup(&r, m, 0xfffff), MDT_ENOTFOUND);
    /* Reused code memory: the newer range replaces the old. */
    ck_assert_int_eq(load_func(m, 0xe000, MOD, 0x06000fff, 0, 0, NULL, 4000), 0);
    ck_assert_int_eq(mdt_idmap_code_add(m, 0x100000 + 0x20, 0x40, 0xe000, 4001), MDT_IDMAP_APPLIED);
    ck_assert_int_eq(mdt_idmap_ip_lookup(&r, m, 0x100000 + 0x10), MDT_ENOTFOUND);
    ck_assert_int_eq(mdt_idmap_ip_lookup(&r, m, 0x100000 + 0x50), 0);
    ck_assert_uint_eq(r.function_id, 0xe000);
    ck_assert_int_eq(mdt_idmap_code_add(m, 0x100000 + 0x20, 0x40, 0xe000, 4002),
                     MDT_IDMAP_DUPLICATE);
    /* Older information about reused memory loses. */
    ck_assert_int_eq(mdt_idmap_code_add(m, 0x100000 + 0x30, 0x8, 0xf000, 3000),
                     MDT_IDMAP_SUPERSEDED);
    ck_assert_int_eq(mdt_idmap_function_unload(m, 0xe000, 4003), MDT_IDMAP_APPLIED);
    ck_assert_int_eq(mdt_idmap_ip_lookup(&r, m, 0x100000 + 0x50), MDT_ENOTFOUND);
    ck_assert_int_eq(mdt_idmap_code_remove(m, 0x100000 + 0x80, 4004), MDT_IDMAP_APPLIED);
    ck_assert_int_eq(mdt_idmap_ip_lookup(&r, m, 0x100000 + 0x81), MDT_ENOTFOUND);
    ck_assert_int_eq(mdt_idmap_ip_lookup(&r, m, 0x100000 + 0xc1), 0);
    mdt_idmap_stats_get(&st, m);
    ck_assert_uint_eq(st.ranges, 997);
    ck_assert_int_eq(mdt_idmap_module_unload(m, MOD, 5000), MDT_IDMAP_APPLIED);
    ck_assert_int_eq(mdt_idmap_ip_lookup(&r, m, 0x100000 + 0xc1), MDT_ENOTFOUND);
    mdt_idmap_stats_get(&st, m);
    ck_assert_uint_eq(st.ranges, 0);
    mdt_idmap_free(m);
}
END_TEST

/* A code_add says the memory held that code at its seq even when the map
 * does not know the function: the older range there is gone, and a late
 * item of it stays refused (issue 30). */
START_TEST(code_of_an_unknown_function_still_ends_older_code)
{
    mdt_idmap *m = new_map();
    mdt_idmap_code_range r;
    ck_assert_int_eq(load_module(m, MOD, 1, 0, 0, 1), 0);
    ck_assert_int_eq(load_func(m, 0xf00, MOD, 0x06000001, 0, 0, NULL, 2), 0);
    ck_assert_int_eq(mdt_idmap_code_add(m, 0x1000, 0x100, 0xf00, 3), MDT_IDMAP_APPLIED);
    ck_assert_int_eq(mdt_idmap_code_add(m, 0x1080, 0x100, 0xf01, 10), MDT_ENOTFOUND);
    ck_assert_int_eq(mdt_idmap_ip_lookup(&r, m, 0x1010), MDT_ENOTFOUND);
    ck_assert_int_eq(mdt_idmap_code_add(m, 0x1000, 0x100, 0xf00, 5), MDT_IDMAP_SUPERSEDED);
    ck_assert_int_eq(mdt_idmap_ip_lookup(&r, m, 0x1010), MDT_ENOTFOUND);
    /* Newer code goes in over the tombstones. */
    ck_assert_int_eq(load_func(m, 0xf01, MOD, 0x06000002, 0, 0, NULL, 11), 0);
    ck_assert_int_eq(mdt_idmap_code_add(m, 0x1080, 0x100, 0xf01, 12), MDT_IDMAP_APPLIED);
    ck_assert_int_eq(mdt_idmap_ip_lookup(&r, m, 0x1090), 0);
    ck_assert_uint_eq(r.function_id, 0xf01);
    ck_assert_int_eq(mdt_idmap_code_add(m, 0x1000, 0x40, 0xf00, 13), MDT_IDMAP_APPLIED);
    ck_assert_int_eq(mdt_idmap_ip_lookup(&r, m, 0x1010), 0);
    ck_assert_uint_eq(r.function_id, 0xf00);
    mdt_idmap_free(m);
}
END_TEST

/* Churn of one function ID whose code lands at `step` bytes from the last
 * (0: always at the same place); returns the most bytes_writer seen after
 * the first 100 cycles, and that of cycle 100 in *base. */
static size_t code_churn(mdt_idmap *m, uintptr_t step, unsigned cycles, uint64_t *seq, size_t *base)
{
    mdt_idmap_stats st;
    size_t most = 0;
    for (unsigned i = 0; i < cycles; i++) {
        uintptr_t at = 0x10000000 + (uintptr_t)i * step;
        ck_assert_int_eq(load_func(m, 0xf00, MOD, 0x06000001, 0, 0, NULL, (*seq)++), 0);
        ck_assert_int_eq(mdt_idmap_code_add(m, at, 0x80, 0xf00, (*seq)++), MDT_IDMAP_APPLIED);
        ck_assert_int_eq(mdt_idmap_function_unload(m, 0xf00, (*seq)++), MDT_IDMAP_APPLIED);
        if (i == 100 || (i > 100 && i % 500 == 0)) {
            mdt_idmap_stats_get(&st, m);
            if (i == 100)
                *base = st.bytes_writer;
            else if (st.bytes_writer > most)
                most = st.bytes_writer;
        }
    }
    return most;
}

/* Code that dies leaves a tombstone (issue 30). Code memory reused in
 * place clears them; code that never lands where earlier code was (no
 * tombstone is ever cleared) leaves one each, and past 1024 plus one per
 * live range neighbours merge: 24 bytes each, bounded however long the
 * churn, and what they refuse stays right. Without the bound 100,000
 * pieces took 2.4 MB. */
START_TEST(code_tombstones_stay_bounded_under_churn)
{
    mdt_idmap *m = new_map();
    mdt_idmap_stats st;
    mdt_idmap_code_range r;
    uint64_t seq = 2;
    size_t base;
    ck_assert_int_eq(load_module(m, MOD, 1, 0, 0, 1), 0);
    /* (The retired list's array may grow once more after cycle 100.) */
    size_t most = code_churn(m, 0, 20000, &seq, &base);
    ck_assert_uint_lt(most, base + 4096);
    mdt_idmap_free(m);

    m = new_map();
    seq = 2;
    ck_assert_int_eq(load_module(m, MOD, 1, 0, 0, 1), 0);
    most = code_churn(m, 0x100, 100000, &seq, &base);
    ck_assert_uint_lt(most, base + 4096 + 4 * (1024 + 1) * 24);
    /* The first cycle's code (added at 3) is refused at its seq; newer code
     * there goes in. */
    ck_assert_int_eq(load_func(m, 0xf01, MOD, 0x06000002, 0, 0, NULL, seq++), 0);
    ck_assert_int_eq(mdt_idmap_code_add(m, 0x10000000, 0x80, 0xf01, 3), MDT_IDMAP_SUPERSEDED);
    ck_assert_int_eq(mdt_idmap_ip_lookup(&r, m, 0x10000010), MDT_ENOTFOUND);
    ck_assert_int_eq(mdt_idmap_code_add(m, 0x10000040, 0x80, 0xf01, seq), MDT_IDMAP_APPLIED);
    ck_assert_int_eq(mdt_idmap_ip_lookup(&r, m, 0x10000050), 0);
    ck_assert_uint_eq(r.function_id, 0xf01);
    /* Retire takes the rest. */
    ck_assert_int_ge(mdt_idmap_retire(m, seq), 0);
    mdt_idmap_stats_get(&st, m);
    ck_assert_uint_lt(st.bytes_writer, base + 4096);
    mdt_idmap_free(m);
}
END_TEST

START_TEST(portable_descriptor_text)
{
    mdt_idmap *m = new_map();
    char buf[256];
    uintptr_t i4 = 0x100, str = 0x101, canon = 0x102, dict = 0x200, list = 0x201, arr = 0x300,
              md = 0x301, ptr = 0x302, ref = 0x303;
    uintptr_t dargs[2] = {str, i4};
    ck_assert_int_eq(load_module(m, MOD, 1, 0, 0, 1), 0);
    ck_assert_int_eq(load_prim(m, i4, 0x02000008, 0x08, 2), 0);
    ck_assert_int_eq(load_prim(m, str, 0x0200000e, 0x0e, 3), 0);
    ck_assert_int_eq(load_prim(m, canon, 0x02000099, MDT_IDMAP_PRIM_CANON, 4), 0);
    ck_assert_int_eq(load_class(m, dict, MOD, 0x02000031, 2, dargs, 5), 0);
    ck_assert_int_eq(load_class(m, list, MOD, 0x02000012, 1, &dict, 6), 0);
    const char *want = "131211101514171618191a1b1c1d1e1f:0x02000012<"
                       "131211101514171618191a1b1c1d1e1f:0x02000031<STRING,I4>>";
    ck_assert_int_eq(mdt_idmap_class_descriptor(buf, sizeof buf, m, list, 0), (int)strlen(want));
    ck_assert_str_eq(buf, want);
    ck_assert_int_eq(load_shape(m, arr, MDT_IDMAP_SHAPE_SZARRAY, canon, 0, 7), 0);
    ck_assert_int_eq(load_shape(m, md, MDT_IDMAP_SHAPE_ARRAY, arr, 2, 8), 0);
    ck_assert_int_eq(load_shape(m, ptr, MDT_IDMAP_SHAPE_PTR, i4, 0, 9), 0);
    ck_assert_int_eq(load_shape(m, ref, MDT_IDMAP_SHAPE_BYREF, ptr, 0, 10), 0);
    ck_assert_int_eq(mdt_idmap_class_descriptor(buf, sizeof buf, m, md, 0), 12);
    ck_assert_str_eq(buf, "__Canon[][2]");
    ck_assert_int_eq(mdt_idmap_class_descriptor(buf, sizeof buf, m, ref, 0), 4);
    ck_assert_str_eq(buf, "I4*&");
    /* Cut like snprintf. */
    ck_assert_int_eq(mdt_idmap_class_descriptor(buf, 3, m, ref, 0), 4);
    ck_assert_str_eq(buf, "I4");
    /* An unknown type argument: no descriptor. */
    ck_assert_int_eq(load_class(m, 0x400, MOD, 0x02000012, 1, (uintptr_t[]){0x999}, 11), 0);
    ck_assert_int_eq(mdt_idmap_class_descriptor(buf, sizeof buf, m, 0x400, 0), MDT_ENOTFOUND);
    mdt_idmap_free(m);
}
END_TEST

START_TEST(function_described_in_one_read)
{
    mdt_idmap *m = new_map();
    uintptr_t i4 = 0x100, str = 0x101, gen2 = 0x200, fn = 0x6000, buf[4];
    uintptr_t cargs[2] = {i4, str}, margs[1] = {str};
    mdt_idmap_function_desc d;
    ck_assert_int_eq(load_module(m, MOD, 1, 0, 0, 1), 0);
    ck_assert_int_eq(load_prim(m, i4, 0x02000008, 0x08, 2), 0);
    ck_assert_int_eq(load_prim(m, str, 0x0200000e, 0x0e, 3), 0);
    ck_assert_int_eq(load_class(m, gen2, MOD, 0x02000031, 2, cargs, 4), 0);
    ck_assert_int_eq(load_func(m, fn, MOD, 0x06000007, gen2, 1, margs, 5), 0);
    ck_assert_int_eq(mdt_idmap_function_describe(&d, buf, 4, m, fn, 0), 0);
    ck_assert_uint_eq(d.gen, 5);
    ck_assert_uint_eq(d.token, 0x06000007);
    ck_assert_uint_eq(d.module, MOD);
    ck_assert_uint_eq(d.module_gen, 1);
    uint8_t mv[16];
    mvid_of(mv, 1);
    ck_assert_mem_eq(d.mvid, mv, 16);
    ck_assert_uint_eq(d.class_id, gen2);
    ck_assert_uint_eq(d.class_gen, 4);
    ck_assert_uint_eq(d.class_token, 0x02000031);
    ck_assert_uint_eq(d.class_shape, MDT_IDMAP_SHAPE_TYPEDEF);
    /* the method's arguments first, the class's after them */
    ck_assert_uint_eq(d.nargs, 1);
    ck_assert_uint_eq(d.class_nargs, 2);
    ck_assert_ptr_eq(d.args, buf);
    ck_assert_ptr_eq(d.class_args, buf + 1);
    ck_assert_uint_eq(buf[0], str);
    ck_assert_uint_eq(buf[1], i4);
    ck_assert_uint_eq(buf[2], str);
    /* a short buffer: what fits, true counts */
    memset(buf, 0, sizeof buf);
    ck_assert_int_eq(mdt_idmap_function_describe(&d, buf, 2, m, fn, 5), 0);
    ck_assert_uint_eq(d.nargs, 1);
    ck_assert_uint_eq(d.class_nargs, 2);
    ck_assert_uint_eq(buf[1], i4);
    ck_assert_uint_eq(buf[2], 0);
    ck_assert_int_eq(mdt_idmap_function_describe(&d, NULL, 0, m, fn, 0), 0);
    ck_assert_uint_eq(d.class_nargs, 2);
    /* another generation, an unknown function, bad arguments */
    ck_assert_int_eq(mdt_idmap_function_describe(&d, buf, 4, m, fn, 4), MDT_ENOTFOUND);
    ck_assert_int_eq(mdt_idmap_function_describe(&d, buf, 4, m, 0x6001, 0), MDT_ENOTFOUND);
    ck_assert_int_eq(mdt_idmap_function_describe(NULL, buf, 4, m, fn, 0), MDT_EINVAL);
    ck_assert_int_eq(mdt_idmap_function_describe(&d, NULL, 4, m, fn, 0), MDT_EINVAL);
    ck_assert_int_eq(mdt_idmap_function_describe(&d, buf, 4, NULL, fn, 0), MDT_EINVAL);
    /* an unknown module and an unknown owner are marked, not errors */
    ck_assert_int_eq(load_func(m, 0x6002, MOD2, 0x06000008, 0x777, 0, NULL, 6), 0);
    ck_assert_int_eq(mdt_idmap_function_describe(&d, buf, 4, m, 0x6002, 0), 0);
    ck_assert_uint_eq(d.module, MOD2);
    ck_assert_uint_eq(d.module_gen, 0);
    ck_assert_ptr_null(d.image);
    ck_assert_uint_eq(d.class_id, 0x777);
    ck_assert_uint_eq(d.class_gen, 0);
    ck_assert_uint_eq(d.class_shape, MDT_IDMAP_SHAPE_UNKNOWN);
    /* the owner's unload takes the function along */
    ck_assert_int_eq(mdt_idmap_class_unload(m, gen2, 7), MDT_IDMAP_APPLIED);
    ck_assert_int_eq(mdt_idmap_function_describe(&d, buf, 4, m, fn, 0), MDT_ENOTFOUND);
    mdt_idmap_free(m);
}
END_TEST

START_TEST(describe_tree_for_the_formatter)
{
    mdt_idmap *m = new_map();
    mdt_idmap_type_node n[8];
    size_t count;
    uintptr_t i4 = 0x100, dargs[2] = {0x100, 0x999};
    ck_assert_int_eq(load_module(m, MOD, 1, 0, 0, 1), 0);
    ck_assert_int_eq(load_prim(m, i4, 0x02000008, 0x08, 2), 0);
    ck_assert_int_eq(load_class(m, 0x200, MOD, 0x02000031, 2, dargs, 3), 0);
    ck_assert_int_eq(load_class(m, 0x201, MOD, 0x02000012, 1, (uintptr_t[]){0x200}, 4), 0);
    ck_assert_int_eq(mdt_idmap_class_describe(n, 8, &count, m, 0x201, 0), 0);
    ck_assert_uint_eq(count, 4);
    ck_assert_uint_eq(n[0].token, 0x02000012);
    ck_assert_uint_eq(n[0].nargs, 1);
    ck_assert_uint_eq(n[0].mvid[0], 16);
    ck_assert_uint_eq(n[1].class_id, 0x200);
    ck_assert_uint_eq(n[1].nargs, 2);
    ck_assert_uint_eq(n[2].prim, 0x08);
    ck_assert_uint_eq(n[3].shape, MDT_IDMAP_SHAPE_UNKNOWN);
    ck_assert_uint_eq(n[3].class_id, 0x999);
    ck_assert_int_eq(mdt_idmap_class_describe(n, 2, &count, m, 0x201, 0), 0);
    ck_assert_uint_eq(count, 4);
    ck_assert_int_eq(mdt_idmap_class_describe(n, 8, &count, m, 0x777, 0), MDT_ENOTFOUND);
    /* A tree of more than 4096 nodes is refused (a handler's work is
     * bounded), as the header says: class k is G<class k-1, class k-1>,
     * 2^(k+1) - 1 nodes, 12 levels deep. */
    ck_assert_int_eq(load_class(m, 0x1000, MOD, 0x02000002, 0, NULL, 10), 0);
    for (uintptr_t k = 1; k <= 12; k++) {
        uintptr_t two[2] = {0x1000 + (k - 1) * 0x10, 0x1000 + (k - 1) * 0x10};
        ck_assert_int_eq(load_class(m, 0x1000 + k * 0x10, MOD, 0x02000031, 2, two, 10 + k), 0);
    }
    ck_assert_int_eq(mdt_idmap_class_describe(NULL, 0, &count, m, 0x1000 + 11 * 0x10, 0), 0);
    ck_assert_uint_eq(count, 4095);
    ck_assert_int_eq(mdt_idmap_class_describe(n, 8, &count, m, 0x1000 + 12 * 0x10, 0),
                     MDT_EUNSUPPORTED);
    ck_assert_uint_eq(count, 4096);
    ck_assert_uint_eq(n[0].class_id, 0x1000 + 12 * 0x10);
    char text[64];
    ck_assert_int_eq(mdt_idmap_class_descriptor(text, sizeof text, m, 0x1000 + 12 * 0x10, 0),
                     MDT_EUNSUPPORTED);
    mdt_idmap_free(m);
}
END_TEST

static int miss_calls;

static int on_miss(void *payload, mdt_idmap *m, int kind, uintptr_t id)
{
    uint64_t *seq = payload;
    miss_calls++;
    if (kind == MDT_IDMAP_CLASS && id == 0x1000)
        return load_class(m, id, MOD, 0x02000004, 0, NULL, ++*seq) < 0 ? -1 : 0;
    if (kind == MDT_IDMAP_IP && id >= 0x9000 && id < 0x9100) {
        load_func(m, 0xf00, MOD, 0x06000004, 0, 0, NULL, ++*seq);
        return mdt_idmap_code_add(m, 0x9000, 0x100, 0xf00, ++*seq) < 0 ? -1 : 0;
    }
    return MDT_ENOTFOUND;
}

START_TEST(lazy_catch_up_through_miss_callback)
{
    uint64_t seq = 100;
    mdt_idmap *m = NULL;
    mdt_idmap_options o = {0};
    mdt_idmap_class_info ci;
    mdt_idmap_code_range r;
    o.miss = on_miss;
    o.miss_payload = &seq;
    ck_assert_int_eq(mdt_idmap_new(&m, &o), 0);
    ck_assert_int_eq(load_module(m, MOD, 1, 0, 0, 1), 0);
    miss_calls = 0;
    /* Signal-safe lookups never call back. */
    ck_assert_int_eq(mdt_idmap_class_lookup(&ci, NULL, 0, m, 0x1000, 0), MDT_ENOTFOUND);
    ck_assert_int_eq(miss_calls, 0);
    ck_assert_int_eq(mdt_idmap_class_fetch(&ci, NULL, 0, m, 0x1000), 0);
    ck_assert_uint_eq(ci.token, 0x02000004);
    ck_assert_int_eq(miss_calls, 1);
    ck_assert_int_eq(mdt_idmap_class_fetch(&ci, NULL, 0, m, 0x1000), 0);
    ck_assert_int_eq(miss_calls, 1);
    ck_assert_int_eq(mdt_idmap_ip_fetch(&r, m, 0x9042), 0);
    ck_assert_uint_eq(r.function_id, 0xf00);
    ck_assert_int_eq(mdt_idmap_class_fetch(&ci, NULL, 0, m, 0x2000), MDT_ENOTFOUND);
    mdt_idmap_set_miss(m, NULL, NULL);
    ck_assert_int_eq(mdt_idmap_class_fetch(&ci, NULL, 0, m, 0x3000), MDT_ENOTFOUND);
    ck_assert_int_eq(miss_calls, 3);
    mdt_idmap_free(m);
}
END_TEST

/* Calls from an mdt_idmap_module_each() callback that would take the
 * writer mutex the walking thread holds: each is refused, none waits. */
struct nested {
    mdt_idmap *m;
    int fetch_miss, fetch_hit, load, each, walked;
};

static int nested_noop(void *payload, uintptr_t id, const mdt_idmap_module_info *info,
                       const char *path)
{
    (void)payload, (void)id, (void)info, (void)path;
    return 0;
}

static int nested_calls(void *payload, uintptr_t id, const mdt_idmap_module_info *info,
                        const char *path)
{
    struct nested *n = payload;
    mdt_idmap_class_info ci;
    mdt_idmap_stats st;
    (void)id, (void)info, (void)path;
    n->walked++;
    n->fetch_miss = mdt_idmap_class_fetch(&ci, NULL, 0, n->m, 0x1000);
    n->fetch_hit = mdt_idmap_class_fetch(&ci, NULL, 0, n->m, 0x100);
    n->load = load_class(n->m, 0x2000, MOD, 0x02000005, 0, NULL, 50);
    n->each = mdt_idmap_module_each(NULL, n->m, nested_noop, NULL);
    mdt_idmap_synchronize(n->m);
    mdt_idmap_set_miss(n->m, NULL, NULL);
    mdt_idmap_stats_get(&st, n->m);
    return 0;
}

START_TEST(calls_inside_module_walk_fail_instead_of_deadlocking)
{
    uint64_t seq = 100;
    mdt_idmap *m = NULL;
    mdt_idmap_options o = {0};
    mdt_idmap_class_info ci;
    o.miss = on_miss;
    o.miss_payload = &seq;
    ck_assert_int_eq(mdt_idmap_new(&m, &o), 0);
    ck_assert_int_eq(load_module(m, MOD, 1, 0, 0, 1), 0);
    ck_assert_int_eq(load_class(m, 0x100, MOD, 0x02000002, 0, NULL, 2), 0);
    struct nested n = {m, 0, 0, 0, 0, 0};
    miss_calls = 0;
    ck_assert_int_eq(mdt_idmap_module_each(NULL, m, nested_calls, &n), 0);
    ck_assert_int_eq(n.walked, 1);
    ck_assert_int_eq(n.fetch_miss, MDT_EINVAL);
    ck_assert_int_eq(miss_calls, 0);
    ck_assert_int_eq(n.fetch_hit, 0);
    ck_assert_int_eq(n.load, MDT_EINVAL);
    ck_assert_int_eq(n.each, MDT_EINVAL);
    ck_assert(!class_known(m, 0x2000, 0));
    /* Outside the walk all of it works, and the miss callback is still set. */
    ck_assert_int_eq(mdt_idmap_class_fetch(&ci, NULL, 0, m, 0x1000), 0);
    ck_assert_int_eq(miss_calls, 1);
    ck_assert_int_eq(load_class(m, 0x2000, MOD, 0x02000005, 0, NULL, 50), MDT_IDMAP_APPLIED);
    mdt_idmap_free(m);
}
END_TEST

START_TEST(retire_drops_old_tombstones)
{
    mdt_idmap *m = new_map();
    mdt_idmap_stats st;
    for (unsigned i = 1; i <= 100; i++)
        ck_assert_int_eq(mdt_idmap_class_unload(m, 0x1000 + i * 8, i), MDT_IDMAP_APPLIED);
    ck_assert_int_eq(load_module(m, MOD, 1, 0, 0, 200), 0);
    ck_assert_int_eq(load_class(m, 0x5000, MOD, 0x02000002, 3, (uintptr_t[]){1, 2, 3}, 201), 0);
    ck_assert_int_eq(mdt_idmap_class_unload(m, 0x5000, 202), MDT_IDMAP_APPLIED);
    mdt_idmap_stats_get(&st, m);
    ck_assert_uint_eq(st.classes_dead, 101);
    ck_assert_int_eq(mdt_idmap_retire(m, 51), 50);
    mdt_idmap_stats_get(&st, m);
    ck_assert_uint_eq(st.classes_dead, 51);
    /* Below the watermark nothing is accepted any more. */
    ck_assert_int_eq(load_class(m, 0x1000 + 8, MOD, 0x02000002, 0, NULL, 50), MDT_IDMAP_SUPERSEDED);
    ck_assert_int_eq(mdt_idmap_retire(m, 300), 51);
    mdt_idmap_stats_get(&st, m);
    ck_assert_uint_eq(st.classes_dead, 0);
    ck_assert_uint_eq(st.modules_live, 1);
    ck_assert_uint_lt(st.bytes_args, 64); /* the module path only */
    mdt_idmap_free(m);
}
END_TEST

/* Functions without a MethodDef row (DynamicMethods, IL stubs) all have
 * the same content: they stay out of the reverse index, which they used to
 * fill with one probe chain (every insert past the probe bound rebuilt the
 * whole index: quadratic in the number of DynamicMethods). */
START_TEST(functions_without_metadata_stay_out_of_the_reverse_index)
{
    mdt_idmap *m = new_map();
    mdt_idmap_stats st;
    mdt_idmap_function_info key = {0};
    uintptr_t id;
    ck_assert_int_eq(load_module(m, MOD, 1, 0, 0, 1), 0);
    ck_assert_int_eq(load_func(m, 0xf00, MOD, 0x06000001, 0, 0, NULL, 2), 0);
    mdt_idmap_stats_get(&st, m);
    size_t before = st.bytes_reverse;
    for (unsigned i = 0; i < 20000; i++)
        ck_assert_int_eq(
            load_func(m, 0x100000 + (uintptr_t)i * 16, MOD, 0x06000000, 0, 0, NULL, 3 + i), 0);
    mdt_idmap_stats_get(&st, m);
    ck_assert_uint_eq(st.bytes_reverse, before);
    ck_assert(func_known(m, 0x100000 + 19999 * 16));
    key.module = MOD;
    key.token = 0x06000001;
    ck_assert_int_eq(mdt_idmap_function_find(&id, NULL, m, &key), 0);
    ck_assert_uint_eq(id, 0xf00);
    key.token = 0x06000000;
    ck_assert_int_eq(mdt_idmap_function_find(&id, NULL, m, &key), MDT_ENOTFOUND);
    ck_assert_int_eq(mdt_idmap_function_unload(m, 0x100000, 30000), MDT_IDMAP_APPLIED);
    ck_assert(!func_known(m, 0x100000));
    mdt_idmap_free(m);
}
END_TEST

START_TEST(growth_keeps_every_record)
{
    mdt_idmap *m = new_map();
    mdt_idmap_class_info ci;
    uintptr_t args[3];
    mdt_idmap_stats st;
    ck_assert_int_eq(load_module(m, MOD, 1, 0, 0, 1), 0);
    for (unsigned i = 0; i < 100000; i++) {
        uintptr_t a[3] = {i + 1, i + 2, i + 3};
        ck_assert_int_eq(
            load_class(m, 0x100000 + (uintptr_t)i * 16, MOD, 0x02000000 + i, i % 4, a, 2 + i),
            MDT_IDMAP_APPLIED);
    }
    for (unsigned i = 0; i < 100000; i++) {
        ck_assert_int_eq(mdt_idmap_class_lookup(&ci, args, 3, m, 0x100000 + (uintptr_t)i * 16, 0),
                         0);
        ck_assert_uint_eq(ci.token, 0x02000000 + i);
        ck_assert_uint_eq(ci.nargs, i % 4);
        if (i % 4)
            ck_assert_uint_eq(args[i % 4 - 1], i % 4 + i);
        uintptr_t id;
        mdt_idmap_class_info key = {MOD, 0x02000000 + i, 0, 0, 0, i % 4, args, 0};
        ck_assert_int_eq(mdt_idmap_class_find(&id, NULL, m, &key), 0);
        ck_assert_uint_eq(id, 0x100000 + (uintptr_t)i * 16);
    }
    mdt_idmap_stats_get(&st, m);
    ck_assert_uint_eq(st.classes_live, 100000);
    ck_assert_uint_eq(st.class_slot_size, 32);
    ck_assert_uint_eq(st.function_slot_size, 32);
    ck_assert_int_eq(mdt_idmap_module_unload(m, MOD, 200000), MDT_IDMAP_APPLIED);
    mdt_idmap_stats_get(&st, m);
    ck_assert_uint_eq(st.classes_live, 0);
    mdt_idmap_synchronize(m);
    mdt_idmap_free(m);
}
END_TEST

/* Mappings of this process whose VmFlags carry "hg" (MADV_HUGEPAGE). */
static int advised_mappings(void)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[512];
    int n = 0;
    ck_assert_ptr_nonnull(f);
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "VmFlags:", 8) == 0 && strstr(line, " hg"))
            n++;
    fclose(f);
    return n;
}

/* Tables of 8 MiB or more are advised for transparent huge pages
 * (tokens/table.c); small ones are not. Where the kernel has no THP the
 * advice is refused and nothing is marked, which is asserted instead. */
START_TEST(large_tables_get_huge_page_advice)
{
    FILE *thp = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (thp)
        fclose(thp);
    int before = advised_mappings();
    mdt_idmap *small = new_map();
    ck_assert_int_eq(advised_mappings(), before);
    mdt_idmap_options o = {0};
    o.classes = 400000; /* 500,032 slots of 32 B: a 16 MB class table */
    mdt_idmap *m = NULL;
    ck_assert_int_eq(mdt_idmap_new(&m, &o), 0);
    int after = advised_mappings();
    if (thp)
        ck_assert_int_gt(after, before);
    else
        ck_assert_int_eq(after, before);
    ck_assert_int_eq(load_module(m, MOD, 1, 0, 0, 1), 0);
    ck_assert_int_eq(load_class(m, 0x1000, MOD, 0x02000001, 0, NULL, 2), MDT_IDMAP_APPLIED);
    ck_assert(class_known(m, 0x1000, 0));
    mdt_idmap_free(m);
    mdt_idmap_free(small);
}
END_TEST

/* 32-byte records keep what does not fit out of line, and name modules by
 * handles that are reused only after their holders are gone. */
START_TEST(packed_records_round_trip)
{
    mdt_idmap *m = new_map();
    uintptr_t a[1] = {0};
    uint64_t seq = 1;
    /* A shape whose runtime answer carried a module and token, rank 300. */
    ck_assert_int_eq(load_class(m, 0x5000, MOD, 0x02000007, 0, NULL, seq++), 0);
    uintptr_t elem = 0x5000;
    mdt_idmap_class_info ci = {MOD2, 0x02000009, MDT_IDMAP_SHAPE_ARRAY, 0, 300, 1, &elem, 0};
    ck_assert_int_eq(mdt_idmap_class_load(m, 0x5100, &ci, seq++), 0);
    mdt_idmap_class_info out;
    ck_assert_int_eq(mdt_idmap_class_lookup(&out, a, 1, m, 0x5100, 0), 0);
    ck_assert_uint_eq(out.module, MOD2);
    ck_assert_uint_eq(out.token, 0x02000009);
    ck_assert_uint_eq(out.rank, 300);
    ck_assert_uint_eq(out.nargs, 1);
    ck_assert_uint_eq(a[0], 0x5000);
    uintptr_t id = 0;
    ck_assert_int_eq(mdt_idmap_class_find(&id, NULL, m, &ci), 0);
    ck_assert_uint_eq(id, 0x5100);
    /* The largest row a TypeDef token can have. */
    ck_assert_int_eq(load_class(m, 0x5200, MOD, 0x02ffffff, 0, NULL, seq++), 0);
    ck_assert_int_eq(mdt_idmap_class_lookup(&out, NULL, 0, m, 0x5200, 0), 0);
    ck_assert_uint_eq(out.token, 0x02ffffff);

    /* A function with method type arguments, its owner filled in later. */
    uintptr_t margs[2] = {0x5000, 0x5200};
    ck_assert_int_eq(load_func(m, 0x6000, MOD, 0x06000003, 0, 2, margs, seq++), 0);
    ck_assert_int_eq(load_func(m, 0x6000, MOD, 0x06000003, 0x5200, 2, margs, seq++),
                     MDT_IDMAP_APPLIED);
    mdt_idmap_function_info fo;
    uintptr_t fa[2] = {0, 0};
    ck_assert_int_eq(mdt_idmap_function_lookup(&fo, fa, 2, m, 0x6000, 0), 0);
    ck_assert_uint_eq(fo.class_id, 0x5200);
    ck_assert_uint_eq(fo.nargs, 2);
    ck_assert_uint_eq(fa[0], 0x5000);
    ck_assert_uint_eq(fa[1], 0x5200);
    mdt_idmap_function_info fk = {MOD, 0x06000003, 0x5200, 2, margs, 0};
    ck_assert_int_eq(mdt_idmap_function_find(&id, NULL, m, &fk), 0);
    ck_assert_uint_eq(id, 0x6000);

    /* Handles: every record of MOD2 goes, its handle is freed after the
     * retire and a grace period, and a new module then gets it: lookups
     * must report the new ModuleID, never MOD2. */
    ck_assert_int_eq(mdt_idmap_module_unload(m, MOD2, seq++), MDT_IDMAP_APPLIED);
    ck_assert_int_eq(mdt_idmap_class_lookup(&out, NULL, 0, m, 0x5100, 0), MDT_ENOTFOUND);
    ck_assert_int_ge(mdt_idmap_retire(m, seq), 1);
    mdt_idmap_synchronize(m);
    ck_assert_int_eq(load_class(m, 0x5300, 0x30000, 0x02000002, 0, NULL, seq++), 0);
    ck_assert_int_eq(load_class(m, 0x5400, 0x40000, 0x02000002, 0, NULL, seq++), 0);
    ck_assert_int_eq(mdt_idmap_class_lookup(&out, NULL, 0, m, 0x5300, 0), 0);
    ck_assert_uint_eq(out.module, 0x30000);
    ck_assert_int_eq(mdt_idmap_class_lookup(&out, NULL, 0, m, 0x5400, 0), 0);
    ck_assert_uint_eq(out.module, 0x40000);
    ck_assert_int_eq(mdt_idmap_class_lookup(&out, NULL, 0, m, 0x5000, 0), 0);
    ck_assert_uint_eq(out.module, MOD);
    mdt_idmap_free(m);
}
END_TEST

START_TEST(bad_arguments_are_refused)
{
    mdt_idmap *m = new_map();
    mdt_idmap_class_info ci = {0};
    ck_assert_int_eq(mdt_idmap_new(NULL, NULL), MDT_EINVAL);
    ck_assert_int_eq(load_module(m, 0, 1, 0, 0, 1), MDT_EINVAL);
    ck_assert_int_eq(load_module(m, MOD, 1, 0, 0, 0), MDT_EINVAL);
    ck_assert_int_eq(load_module(m, MOD, 1, 0, 0, UINT64_C(1) << 63), MDT_EINVAL);
    ck_assert_int_eq(load_class(m, 0x1000, MOD, 0x06000001, 0, NULL, 2), MDT_EINVAL);
    ck_assert_int_eq(load_class(m, 0x1000, 0, 0x02000001, 0, NULL, 2), MDT_EINVAL);
    ck_assert_int_eq(load_shape(m, 0x1000, MDT_IDMAP_SHAPE_ARRAY, 0x100, 0, 2), MDT_EINVAL);
    ci.shape = 9;
    ck_assert_int_eq(mdt_idmap_class_load(m, 0x1000, &ci, 2), MDT_EINVAL);
    ck_assert_int_eq(load_func(m, 0xf00, MOD, 0x02000001, 0, 0, NULL, 2), MDT_EINVAL);
    ck_assert_int_eq(mdt_idmap_code_add(m, UINTPTR_MAX - 4, 16, 0xf00, 3), MDT_EINVAL);
    ck_assert_int_eq(mdt_idmap_class_lookup(NULL, NULL, 0, m, 0x1000, 0), MDT_EINVAL);
    mdt_idmap_free(m);
}
END_TEST

START_TEST(reload_churn_keeps_indexes_small)
{
    /* The same 1000 ClassIDs unloaded and reloaded with new content 40
     * times: reverse lookups find only the current content, and neither the
     * reverse index nor the dependents lists grow with the churn. */
    mdt_idmap *m = new_map();
    mdt_idmap_stats st;
    uint64_t seq = 1;
    size_t rev0 = 0, deps0 = 0;
    ck_assert_int_eq(load_module(m, MOD, 1, 0, 0, seq++), 0);
    for (unsigned round = 0; round < 40; round++) {
        for (unsigned i = 0; i < 1000; i++) {
            uintptr_t id = 0x100000 + (uintptr_t)i * 64, arg = 0x9000 + (uintptr_t)(i % 7) * 8;
            if (round > 0)
                ck_assert_int_eq(mdt_idmap_class_unload(m, id, seq++), MDT_IDMAP_APPLIED);
            ck_assert_int_eq(load_class(m, id, MOD, 0x02000001 + i + round * 1000, 1, &arg, seq++),
                             MDT_IDMAP_APPLIED);
        }
        for (unsigned i = 0; i < 1000; i += 37) {
            uintptr_t got, arg = 0x9000 + (uintptr_t)(i % 7) * 8;
            mdt_idmap_class_info key = {MOD, 0x02000001 + i + round * 1000, 0, 0, 0, 1, &arg, 0};
            ck_assert_int_eq(mdt_idmap_class_find(&got, NULL, m, &key), 0);
            ck_assert_uint_eq(got, 0x100000 + (uintptr_t)i * 64);
            if (round > 0) {
                key.token -= 1000;
                ck_assert_int_eq(mdt_idmap_class_find(&got, NULL, m, &key), MDT_ENOTFOUND);
            }
        }
        mdt_idmap_stats_get(&st, m);
        if (round == 1) {
            rev0 = st.bytes_reverse;
            deps0 = st.bytes_deps;
        } else if (round > 1) {
            ck_assert_uint_le(st.bytes_reverse, rev0);
            ck_assert_uint_le(st.bytes_deps, deps0);
        }
    }
    /* Dependents still reach the reloaded records. */
    ck_assert_int_eq(mdt_idmap_class_unload(m, 0x9000 + 3 * 8, seq++), MDT_IDMAP_APPLIED);
    for (unsigned i = 0; i < 1000; i++)
        ck_assert(class_known(m, 0x100000 + (uintptr_t)i * 64, 0) == (i % 7 != 3));
    ck_assert_int_eq(mdt_idmap_module_unload(m, MOD, seq++), MDT_IDMAP_APPLIED);
    mdt_idmap_stats_get(&st, m);
    ck_assert_uint_eq(st.classes_live, 0);
    mdt_idmap_free(m);
}
END_TEST

START_TEST(dependents_survive_growth_and_content_changes)
{
    /* A class reborn with other type arguments leaves its old argument's
     * unload alone; growth moves every record; a function whose owner was
     * filled in late dies with that owner. */
    mdt_idmap *m = new_map();
    uint64_t seq = 1;
    uintptr_t x = 0x7000, y = 0x7100;
    ck_assert_int_eq(load_module(m, MOD, 1, 0, 0, seq++), 0);
    ck_assert_int_eq(load_class(m, 0x5000, MOD, 0x02000001, 1, &x, seq++), MDT_IDMAP_APPLIED);
    ck_assert_int_eq(mdt_idmap_class_unload(m, 0x5000, seq++), MDT_IDMAP_APPLIED);
    ck_assert_int_eq(load_class(m, 0x5000, MOD, 0x02000001, 1, &y, seq++), MDT_IDMAP_APPLIED);
    ck_assert_int_eq(load_func(m, 0xf000, MOD, 0x06000001, 0, 0, NULL, seq++), MDT_IDMAP_APPLIED);
    ck_assert_int_eq(load_func(m, 0xf000, MOD, 0x06000001, 0x5000, 0, NULL, seq++),
                     MDT_IDMAP_APPLIED);
    for (unsigned i = 0; i < 50000; i++) /* several growths */
        ck_assert_int_eq(
            load_class(m, 0x100000 + (uintptr_t)i * 16, MOD, 0x02000100 + i, 0, NULL, seq++),
            MDT_IDMAP_APPLIED);
    ck_assert_int_eq(mdt_idmap_class_unload(m, x, seq++), MDT_IDMAP_APPLIED);
    ck_assert(class_known(m, 0x5000, 0));
    ck_assert(func_known(m, 0xf000));
    ck_assert_int_eq(mdt_idmap_class_unload(m, y, seq++), MDT_IDMAP_APPLIED);
    ck_assert(!class_known(m, 0x5000, 0));
    ck_assert(!func_known(m, 0xf000));
    ck_assert(class_known(m, 0x100000, 0));
    ck_assert_int_eq(mdt_idmap_retire(m, seq), 4);
    ck_assert_int_eq(mdt_idmap_module_unload(m, MOD, seq++), MDT_IDMAP_APPLIED);
    ck_assert(!class_known(m, 0x100000 + 49999 * 16, 0));
    mdt_idmap_free(m);
}
END_TEST

/* The recent dependents merge into the packed store in place (issue 24):
 * parents arrive in no order (new ones land before, between and after the
 * known ones), known parents gain children across many merges, and a
 * function names both its owner and a type argument. Every unload must
 * still reach exactly its dependents. */
START_TEST(dependents_survive_merges_in_place)
{
    mdt_idmap *m = new_map();
    uint64_t seq = 1;
    enum { NP = 3000, NC = 12000 };
    ck_assert_int_eq(load_module(m, MOD, 1, 0, 0, seq++), 0);
    /* Parent i's ID: a permutation of i, so ID order is not load order. */
#define PARENT(i) (0x100000 + (uintptr_t)(((i)*1237u) % NP) * 16)
    for (unsigned j = 0; j < NC; j++) {
        if (j % 4 == 0)
            ck_assert_int_eq(load_class(m, PARENT(j / 4), MOD, 0x02000001 + j / 4, 0, NULL, seq++),
                             MDT_IDMAP_APPLIED);
        uintptr_t arg = PARENT((j * 7919u) % (j / 4 + 1));
        ck_assert_int_eq(load_func(m, 0x900000 + (uintptr_t)j * 16, MOD, 0x06000001 + j,
                                   PARENT(j / 4), 1, &arg, seq++),
                         MDT_IDMAP_APPLIED);
    }
    for (unsigned i = 0; i < NP; i += 3)
        ck_assert_int_eq(mdt_idmap_class_unload(m, PARENT(i), seq++), MDT_IDMAP_APPLIED);
    for (unsigned j = 0; j < NC; j++) {
        unsigned owner = j / 4, arg = (j * 7919u) % (j / 4 + 1);
        bool dead = owner % 3 == 0 || arg % 3 == 0;
        ck_assert_msg(func_known(m, 0x900000 + (uintptr_t)j * 16) == !dead, "function %u", j);
    }
#undef PARENT
    mdt_idmap_free(m);
}
END_TEST

/* Code placed in address order in several regions at once, in runs (the
 * JIT's code heaps): each run's ranges follow the one added last in the
 * middle of a leaf that also holds the next region's start; the leaf is
 * split after it once, then the run appends in place. Every range stays
 * found, and leaves stay mostly full. */
START_TEST(code_ranges_in_runs_over_regions)
{
    mdt_idmap *m = new_map();
    mdt_idmap_code_range r;
    mdt_idmap_stats st;
    uint64_t seq = 1;
    const unsigned regions = 4, per = 1000, run = 37;
    unsigned next[4] = {0};
    ck_assert_int_eq(load_module(m, MOD, 1, 0, 0, seq++), 0);
    for (unsigned i = 0; i < regions * per; i++)
        ck_assert_int_eq(load_func(m, 0xf0000 + i * 8, MOD, 0x06000001 + i, 0, 0, NULL, seq++), 0);
    for (unsigned done = 0, g = 0; done < regions * per; g = (g + 1) % regions)
        for (unsigned k = 0; k < run && next[g] < per; k++, done++) {
            unsigned i = g * per + next[g]++;
            ck_assert_int_eq(mdt_idmap_code_add(m,
                                                0x1000000 * (g + 1) + (uintptr_t)(i % per) * 0x100,
                                                0x80, 0xf0000 + i * 8, seq++),
                             MDT_IDMAP_APPLIED);
        }
    for (unsigned i = 0; i < regions * per; i++) {
        uintptr_t a = 0x1000000 * (i / per + 1) + (uintptr_t)(i % per) * 0x100;
        ck_assert_int_eq(mdt_idmap_ip_lookup(&r, m, a + 0x7f), 0);
        ck_assert_uint_eq(r.start, a);
        ck_assert_uint_eq(r.function_id, 0xf0000 + i * 8);
        ck_assert_int_eq(mdt_idmap_ip_lookup(&r, m, a + 0x80), MDT_ENOTFOUND);
    }
    mdt_idmap_stats_get(&st, m);
    ck_assert_uint_eq(st.ranges, regions * per);
    ck_assert_uint_lt(st.bytes_ranges / st.ranges, 48);
    mdt_idmap_free(m);
}
END_TEST

/* MDT_IDMAP_NO_FUNCTION_FIND (issue 24): no reverse index of functions,
 * through growth, owner fill-ins, changed content and cascades; every
 * other answer as with the index. mdt_idmap_set_flags refuses unknown
 * flags, and this one once a function is recorded. */
START_TEST(function_find_can_be_left_out)
{
    mdt_idmap *m = new_map(), *full = new_map();
    ck_assert_int_eq(mdt_idmap_set_flags(m, 0x80), MDT_EINVAL);
    ck_assert_int_eq(mdt_idmap_set_flags(m, 0), 0);
    ck_assert_int_eq(mdt_idmap_set_flags(m, MDT_IDMAP_NO_FUNCTION_FIND), 0);
    ck_assert_int_eq(mdt_idmap_set_flags(m, MDT_IDMAP_NO_FUNCTION_FIND), 0); /* again: no change */
    {
        mdt_idmap *late = new_map();
        ck_assert_int_eq(load_module(late, MOD, 1, 0, 0, 1), 0);
        ck_assert_int_eq(load_func(late, 0xf01, MOD, 0x06000001, 0, 0, NULL, 2), 0);
        ck_assert_int_eq(mdt_idmap_set_flags(late, MDT_IDMAP_NO_FUNCTION_FIND), MDT_EINVAL);
        mdt_idmap_free(late);
    }
    mdt_idmap *maps[2] = {m, full};
    enum { NF = 5000 };
    for (int k = 0; k < 2; k++) {
        mdt_idmap *x = maps[k];
        uint64_t seq = 1;
        ck_assert_int_eq(load_module(x, MOD, 1, 0, 0, seq++), 0);
        ck_assert_int_eq(load_class(x, 0x1000, MOD, 0x02000002, 0, NULL, seq++), 0);
        ck_assert_int_eq(load_class(x, 0x1100, MOD, 0x02000003, 0, NULL, seq++), 0);
        /* Enough to grow the function table several times. */
        for (unsigned i = 0; i < NF; i++)
            ck_assert_int_eq(load_func(x, 0x900000 + (uintptr_t)i * 16, MOD, 0x06000001 + i,
                                       i % 2 ? 0x1000 : 0x1100, 0, NULL, seq++),
                             MDT_IDMAP_APPLIED);
        /* Owner filled in later, then other content for the same ID. */
        ck_assert_int_eq(load_func(x, 0xf00, MOD, 0x06100001, 0, 0, NULL, seq++), 0);
        ck_assert_int_eq(load_func(x, 0xf00, MOD, 0x06100001, 0x1000, 0, NULL, seq++),
                         MDT_IDMAP_APPLIED); /* filled in */
        ck_assert_int_eq(load_func(x, 0xf00, MOD, 0x06100002, 0x1100, 0, NULL, seq++),
                         MDT_IDMAP_APPLIED);
        mdt_idmap_function_info fi;
        ck_assert_int_eq(mdt_idmap_function_lookup(&fi, NULL, 0, x, 0xf00, 0), 0);
        ck_assert_uint_eq(fi.token, 0x06100002);
        ck_assert_uint_eq(fi.class_id, 0x1100);
        ck_assert_int_eq(mdt_idmap_class_unload(x, 0x1000, seq++), MDT_IDMAP_APPLIED);
        for (unsigned i = 0; i < NF; i++)
            ck_assert_msg(func_known(x, 0x900000 + (uintptr_t)i * 16) == !(i % 2), "%u", i);
        ck_assert(func_known(x, 0xf00));
        mdt_idmap_class_info key = {0};
        uintptr_t id;
        key.module = MOD;
        key.token = 0x02000003;
        ck_assert_int_eq(mdt_idmap_class_find(&id, NULL, x, &key), 0);
        ck_assert_uint_eq(id, 0x1100);
        ck_assert_int_eq(mdt_idmap_typedef_loaded(x, MOD, 0x02000003), 1);
        ck_assert_int_eq(mdt_idmap_typedef_loaded(x, MOD, 0x02000002), 0);
        mdt_idmap_function_info fkey = {0};
        fkey.module = MOD;
        fkey.token = 0x06000001;
        fkey.class_id = 0x1100;
        ck_assert_int_eq(mdt_idmap_function_find(&id, NULL, x, &fkey),
                         x == m ? MDT_EUNSUPPORTED : 0);
        ck_assert_int_ge(mdt_idmap_retire(x, seq), 0);
        ck_assert_int_eq(mdt_idmap_function_find(&id, NULL, x, &fkey),
                         x == m ? MDT_EUNSUPPORTED : 0);
    }
    mdt_idmap_stats a, b;
    mdt_idmap_stats_get(&a, m);
    mdt_idmap_stats_get(&b, full);
    ck_assert_uint_eq(a.functions_live, b.functions_live);
    ck_assert_uint_lt(a.bytes_reverse + 4 * (NF / 2), b.bytes_reverse);
    mdt_idmap_free(m);
    mdt_idmap_free(full);
}
END_TEST

/* Entries still in the recent dependents store (no merge yet) and in both
 * stores at once: a cascade finds each record once and only those that
 * still name the unloaded class; a load older than an unload it names is
 * refused, a newer one is not (the unload bound, issue 24). */
START_TEST(recent_dependents_cascade_and_unload_bound)
{
    mdt_idmap *m = new_map();
    uint64_t seq = 1;
    ck_assert_int_eq(load_module(m, MOD, 1, 0, 0, seq++), 0);
    ck_assert_int_eq(load_class(m, 0x1000, MOD, 0x02000002, 0, NULL, seq++), 0);
    ck_assert_int_eq(load_class(m, 0x1100, MOD, 0x02000003, 0, NULL, seq++), 0);
    /* Few: they stay in the recent store. 0xf03 leaves 0x1000 for 0x1100
     * and comes back (listed twice); 0xf04 leaves it for good. */
    for (uintptr_t f = 0xf00; f < 0xf06; f++)
        ck_assert_int_eq(load_func(m, f, MOD, 0x06000001, 0x1000, 0, NULL, seq++), 0);
    ck_assert_int_eq(load_func(m, 0xf03, MOD, 0x06000001, 0x1100, 0, NULL, seq++), 0);
    ck_assert_int_eq(load_func(m, 0xf03, MOD, 0x06000001, 0x1000, 0, NULL, seq++), 0);
    ck_assert_int_eq(load_func(m, 0xf04, MOD, 0x06000001, 0x1100, 0, NULL, seq++), 0);
    uint64_t before = seq++;
    ck_assert_int_eq(mdt_idmap_class_unload(m, 0x1000, seq++), MDT_IDMAP_APPLIED);
    for (uintptr_t f = 0xf00; f < 0xf06; f++)
        ck_assert_msg(func_known(m, f) == (f == 0xf04), "%#lx", (unsigned long)f);
    /* Generated before the unload: names the class that ended. */
    ck_assert_int_eq(load_func(m, 0xf10, MOD, 0x06000001, 0x1000, 0, NULL, before),
                     MDT_IDMAP_SUPERSEDED);
    ck_assert(!func_known(m, 0xf10));
    /* Newer than every unload: applied, and a later unload takes it. */
    ck_assert_int_eq(load_class(m, 0x1000, MOD, 0x02000002, 0, NULL, seq++), MDT_IDMAP_APPLIED);
    ck_assert_int_eq(load_func(m, 0xf11, MOD, 0x06000001, 0x1000, 0, NULL, seq++),
                     MDT_IDMAP_APPLIED);
    /* Many more: merges move them to the packed store meanwhile. */
    for (unsigned i = 0; i < 3000; i++)
        ck_assert_int_eq(load_func(m, 0x100000 + (uintptr_t)i * 16, MOD, 0x06000002 + i,
                                   i % 3 ? 0x1100 : 0x1000, 0, NULL, seq++),
                         MDT_IDMAP_APPLIED);
    ck_assert_int_eq(load_func(m, 0xf12, MOD, 0x06000001, 0x1000, 0, NULL, seq++), 0);
    ck_assert_int_eq(mdt_idmap_class_unload(m, 0x1000, seq++), MDT_IDMAP_APPLIED);
    ck_assert(!func_known(m, 0xf11));
    ck_assert(!func_known(m, 0xf12));
    ck_assert(func_known(m, 0xf04));
    for (unsigned i = 0; i < 3000; i++)
        ck_assert_msg(func_known(m, 0x100000 + (uintptr_t)i * 16) == (i % 3 != 0), "%u", i);
    mdt_idmap_free(m);
}
END_TEST

START_TEST(code_ranges_in_address_order_and_leaf_edges)
{
    mdt_idmap *m = new_map();
    mdt_idmap_code_range r;
    mdt_idmap_stats st;
    uint64_t seq = 1;
    const unsigned n = 10000;
    ck_assert_int_eq(load_module(m, MOD, 1, 0, 0, seq++), 0);
    for (unsigned i = 0; i < n; i++) {
        ck_assert_int_eq(load_func(m, 0xf0000 + i * 8, MOD, 0x06000001 + i, 0, 0, NULL, seq++), 0);
        ck_assert_int_eq(
            mdt_idmap_code_add(m, 0x1000000 + (uintptr_t)i * 0x100, 0x80, 0xf0000 + i * 8, seq++),
            MDT_IDMAP_APPLIED);
    }
    /* Appends fill leaves: little more than the ranges themselves. */
    mdt_idmap_stats_get(&st, m);
    ck_assert_uint_eq(st.ranges, n);
    ck_assert_uint_lt(st.bytes_ranges / n, 48);
    ck_assert_int_eq(mdt_idmap_ip_lookup(&r, m, 0), MDT_ENOTFOUND);
    ck_assert_int_eq(mdt_idmap_ip_lookup(&r, m, UINTPTR_MAX), MDT_ENOTFOUND);
    ck_assert_int_eq(mdt_idmap_ip_lookup(&r, m, 0xffffff), MDT_ENOTFOUND);
    /* Remove every 64th range (first ranges of leaves among them), then
     * every range of one stretch: lookups around each removal. */
    for (unsigned i = 0; i < n; i += 64)
        ck_assert_int_eq(mdt_idmap_code_remove(m, 0x1000000 + (uintptr_t)i * 0x100, seq++),
                         MDT_IDMAP_APPLIED);
    for (unsigned i = 2000; i < 2300; i++)
        if (i % 64)
            ck_assert_int_eq(mdt_idmap_code_remove(m, 0x1000000 + (uintptr_t)i * 0x100, seq++),
                             MDT_IDMAP_APPLIED);
    for (unsigned i = 0; i < n; i++) {
        uintptr_t a = 0x1000000 + (uintptr_t)i * 0x100;
        bool gone = i % 64 == 0 || (i >= 2000 && i < 2300);
        ck_assert_int_eq(mdt_idmap_ip_lookup(&r, m, a), gone ? MDT_ENOTFOUND : 0);
        ck_assert_int_eq(mdt_idmap_ip_lookup(&r, m, a + 0x7f), gone ? MDT_ENOTFOUND : 0);
        ck_assert_int_eq(mdt_idmap_ip_lookup(&r, m, a + 0x80), MDT_ENOTFOUND);
        if (!gone)
            ck_assert_uint_eq(r.function_id, 0xf0000 + i * 8);
    }
    /* Descending inserts into the emptied stretch still split evenly. */
    for (unsigned i = 2299; i >= 2000; i--)
        ck_assert_int_eq(
            mdt_idmap_code_add(m, 0x1000000 + (uintptr_t)i * 0x100, 0x40, 0xf0000 + i * 8, seq++),
            MDT_IDMAP_APPLIED);
    ck_assert_int_eq(mdt_idmap_ip_lookup(&r, m, 0x1000000 + 2100 * 0x100 + 0x3f), 0);
    ck_assert_uint_eq(r.function_id, 0xf0000 + 2100 * 8);
    mdt_idmap_stats_get(&st, m);
    ck_assert_uint_lt(st.bytes_ranges / st.ranges, 64);
    for (unsigned i = 0; i < n; i++)
        mdt_idmap_code_remove(m, 0x1000000 + (uintptr_t)i * 0x100, seq++);
    mdt_idmap_stats_get(&st, m);
    ck_assert_uint_eq(st.ranges, 0);
    ck_assert_int_eq(mdt_idmap_ip_lookup(&r, m, 0x1000000 + 0x10), MDT_ENOTFOUND);
    mdt_idmap_free(m);
}
END_TEST

/* The module walk and change counter that mdt_modset_mirror() builds on. */
struct walk {
    uintptr_t ids[8];
    char paths[8][32];
    uintptr_t doms[8];
    int n, stop_after;
};

static int walk_one(void *payload, uintptr_t id, const mdt_idmap_module_info *info,
                    const char *path)
{
    struct walk *w = payload;
    ck_assert_ptr_null(info->path);
    w->ids[w->n] = id;
    w->doms[w->n] = info->appdomain;
    snprintf(w->paths[w->n], sizeof w->paths[0], "%s", path ? path : "(none)");
    return ++w->n == w->stop_after ? 42 : 0;
}

/* The code counters a cache of lookups relies on: even between changes,
 * an add that overlaps nothing a change but no removal, a replacement, a
 * removal and a function's death removals too; nothing else moves them. */
START_TEST(code_counters_say_when_an_answer_may_change)
{
    mdt_idmap *m = new_map();
    ck_assert_uint_eq(mdt_idmap_code_changes(NULL), 0);
    ck_assert_uint_eq(mdt_idmap_code_removals(NULL), 0);
    ck_assert_uint_eq(mdt_idmap_code_changes(m), 0);
    ck_assert_uint_eq(mdt_idmap_code_removals(m), 0);
    ck_assert_int_eq(load_module(m, MOD, 1, 0, 0, 1), 0);
    ck_assert_int_eq(load_func(m, 0xf000, MOD, 0x06000001, 0, 0, NULL, 2), 0);
    ck_assert_int_eq(load_func(m, 0xf008, MOD, 0x06000002, 0, 0, NULL, 3), 0);
    ck_assert_uint_eq(mdt_idmap_code_changes(m), 0); /* loads are not code */
    /* the first range: a rebuild from nothing, counted as a removal too */
    ck_assert_int_eq(mdt_idmap_code_add(m, 0x100000, 0x40, 0xf000, 4), MDT_IDMAP_APPLIED);
    uint64_t c = mdt_idmap_code_changes(m), r = mdt_idmap_code_removals(m);
    ck_assert_uint_gt(c, 0);
    ck_assert_uint_eq(c % 2, 0);
    ck_assert_uint_eq(r % 2, 0);
    /* 200 adds that overlap nothing (leaves copied and split): changes only */
    for (unsigned i = 1; i <= 200; i++) {
        ck_assert_int_eq(mdt_idmap_code_add(m, 0x100000 + i * 0x100, 0x40, 0xf000, 4 + i),
                         MDT_IDMAP_APPLIED);
        ck_assert_uint_eq(mdt_idmap_code_changes(m), c + 2 * i);
    }
    c = mdt_idmap_code_changes(m);
    ck_assert_uint_eq(mdt_idmap_code_removals(m), r);
    /* a refused add changes nothing readers see */
    ck_assert_int_ne(mdt_idmap_code_add(m, 0x100000, 0x40, 0xf000, 3), MDT_IDMAP_APPLIED);
    ck_assert_uint_eq(mdt_idmap_code_removals(m), r);
    /* replaced by another function's code: a removal */
    ck_assert_int_eq(mdt_idmap_code_add(m, 0x100000, 0x40, 0xf008, 300), MDT_IDMAP_APPLIED);
    ck_assert_uint_gt(mdt_idmap_code_removals(m), r);
    ck_assert_uint_eq(mdt_idmap_code_removals(m) % 2, 0);
    ck_assert_uint_gt(mdt_idmap_code_changes(m), c);
    /* removed: a removal */
    r = mdt_idmap_code_removals(m);
    ck_assert_int_eq(mdt_idmap_code_remove(m, 0x100000 + 0x500, 301), MDT_IDMAP_APPLIED);
    ck_assert_uint_gt(mdt_idmap_code_removals(m), r);
    /* its function unloaded, its ranges gone with it: a removal */
    r = mdt_idmap_code_removals(m);
    ck_assert_int_eq(mdt_idmap_function_unload(m, 0xf000, 302), MDT_IDMAP_APPLIED);
    mdt_idmap_code_range x;
    ck_assert_int_eq(mdt_idmap_ip_lookup(&x, m, 0x100000 + 0x600), MDT_ENOTFOUND);
    ck_assert_uint_gt(mdt_idmap_code_removals(m), r);
    ck_assert_uint_eq(mdt_idmap_code_removals(m) % 2, 0);
    ck_assert_uint_eq(mdt_idmap_code_changes(m) % 2, 0);
    mdt_idmap_free(m);
}
END_TEST

START_TEST(module_walk_and_change_counter)
{
    mdt_idmap *m = new_map();
    struct walk w = {0};
    uint64_t ch = 99;
    ck_assert_uint_eq(mdt_idmap_module_changes(m), 0);
    ck_assert_int_eq(mdt_idmap_module_each(&ch, m, walk_one, &w), 0);
    ck_assert_int_eq(w.n, 0);
    ck_assert_uint_eq(ch, 0);
    ck_assert_int_eq(load_module(m, MOD, 1, DOM, ASM, 10), MDT_IDMAP_APPLIED);
    ck_assert_int_eq(load_module(m, MOD2, 2, DOM, ASM, 11), MDT_IDMAP_APPLIED);
    uint64_t c2 = mdt_idmap_module_changes(m);
    ck_assert_uint_eq(c2, 2);
    /* Repeats, classes and refused items are not module changes. */
    ck_assert_int_eq(load_module(m, MOD, 1, DOM, ASM, 12), MDT_IDMAP_DUPLICATE);
    ck_assert_int_eq(load_class(m, 0x100, MOD, 0x02000002, 0, NULL, 13), MDT_IDMAP_APPLIED);
    ck_assert_uint_eq(mdt_idmap_module_changes(m), c2);
    ck_assert_int_eq(mdt_idmap_module_each(&ch, m, walk_one, &w), 0);
    ck_assert_int_eq(w.n, 2);
    ck_assert_uint_eq(ch, c2);
    ck_assert((w.ids[0] == MOD && w.ids[1] == MOD2) || (w.ids[0] == MOD2 && w.ids[1] == MOD));
    ck_assert_str_eq(w.paths[0], "/x/y.dll");
    ck_assert_uint_eq(w.doms[1], DOM);
    /* A non-zero return stops the walk and is returned. */
    struct walk w1 = {.stop_after = 1};
    ck_assert_int_eq(mdt_idmap_module_each(NULL, m, walk_one, &w1), 42);
    ck_assert_int_eq(w1.n, 1);
    /* An unload counts, and the dead module is not walked. */
    ck_assert_int_eq(mdt_idmap_module_unload(m, MOD, 20), MDT_IDMAP_APPLIED);
    ck_assert_uint_gt(mdt_idmap_module_changes(m), c2);
    struct walk w2 = {0};
    ck_assert_int_eq(mdt_idmap_module_each(NULL, m, walk_one, &w2), 0);
    ck_assert_int_eq(w2.n, 1);
    ck_assert_uint_eq(w2.ids[0], MOD2);
    ck_assert_int_eq(mdt_idmap_module_each(NULL, NULL, walk_one, &w2), MDT_EINVAL);
    ck_assert_int_eq(mdt_idmap_module_each(NULL, m, NULL, &w2), MDT_EINVAL);
    mdt_idmap_free(m);
}
END_TEST

START_TEST(typedef_presence_of_plain_and_generic_types)
{
    mdt_idmap *m = new_map();
    uint64_t seq = 1;
    uintptr_t a = 0x7000, b = 0x7100;
    ck_assert_int_eq(load_module(m, MOD, 1, 0, 0, seq++), 0);
    ck_assert_int_eq(mdt_idmap_typedef_loaded(m, MOD, 0x02000005), 0);
    ck_assert_int_eq(load_class(m, 0x5000, MOD, 0x02000005, 0, NULL, seq++), MDT_IDMAP_APPLIED);
    ck_assert_int_eq(mdt_idmap_typedef_loaded(m, MOD, 0x02000005), 1);
    ck_assert_int_eq(mdt_idmap_typedef_loaded(m, MOD2, 0x02000005), 0);
    ck_assert_int_eq(mdt_idmap_class_unload(m, 0x5000, seq++), MDT_IDMAP_APPLIED);
    ck_assert_int_eq(mdt_idmap_typedef_loaded(m, MOD, 0x02000005), 0);
    /* Two instantiations of a generic TypeDef, and its open form. */
    ck_assert_int_eq(load_class(m, 0x6000, MOD, 0x02000006, 1, &a, seq++), MDT_IDMAP_APPLIED);
    ck_assert_int_eq(load_class(m, 0x6100, MOD, 0x02000006, 1, &b, seq++), MDT_IDMAP_APPLIED);
    ck_assert_int_eq(mdt_idmap_typedef_loaded(m, MOD, 0x02000006), 1);
    ck_assert_int_eq(mdt_idmap_class_unload(m, 0x6000, seq++), MDT_IDMAP_APPLIED);
    ck_assert_int_eq(mdt_idmap_typedef_loaded(m, MOD, 0x02000006), 1);
    ck_assert_int_eq(mdt_idmap_class_unload(m, b, seq++), MDT_IDMAP_APPLIED); /* cascades */
    ck_assert_int_eq(mdt_idmap_typedef_loaded(m, MOD, 0x02000006), 0);
    ck_assert_int_eq(load_class(m, 0x6200, MOD, 0x02000006, 0, NULL, seq++), MDT_IDMAP_APPLIED);
    ck_assert_int_eq(mdt_idmap_typedef_loaded(m, MOD, 0x02000006), 1);
    /* An array of a TypeDef does not load the TypeDef. */
    ck_assert_int_eq(load_shape(m, 0x6300, MDT_IDMAP_SHAPE_SZARRAY, 0x6200, 0, seq++),
                     MDT_IDMAP_APPLIED);
    ck_assert_int_eq(mdt_idmap_class_unload(m, 0x6200, seq++), MDT_IDMAP_APPLIED);
    ck_assert_int_eq(mdt_idmap_typedef_loaded(m, MOD, 0x02000006), 0);
    mdt_idmap_free(m);
}
END_TEST

/* Presence entries are 64-bit words (handle, row, count; tokens/presence.c):
 * counts from 0xffff up live in a writer map, entries of the same row in
 * two modules stay apart, a module handle released and given to another
 * ModuleID does not answer for the old one, and the index grows. */
START_TEST(typedef_presence_counts_past_16_bits)
{
    enum { N = 0x10000 + 5 }; /* crosses 0xffff both ways */
    mdt_idmap *m = new_map();
    uint64_t seq = 1;
    const uint32_t g = 0x02000007;
    const uintptr_t base = 0x10000000, arg = 0x9000;
    ck_assert_int_eq(load_module(m, MOD, 1, 0, 0, seq++), 0);
    ck_assert_int_eq(load_module(m, MOD2, 2, 0, 0, seq++), 0);
    for (uintptr_t i = 0; i < N; i++) {
        uintptr_t a = arg + i * 8;
        ck_assert_int_eq(load_class(m, base + i * 64, MOD, g, 1, &a, seq++), MDT_IDMAP_APPLIED);
    }
    ck_assert_int_eq(mdt_idmap_typedef_loaded(m, MOD, g), 1);
    ck_assert_int_eq(mdt_idmap_typedef_loaded(m, MOD2, g), 0);
    /* Entries keep only the row: a token of another table with that row
     * is not that TypeDef. */
    ck_assert_int_eq(mdt_idmap_typedef_loaded(m, MOD, 0x06000000 | (g & 0xffffff)), 0);
    ck_assert_int_eq(mdt_idmap_typedef_loaded(m, MOD, 0x01000000 | (g & 0xffffff)), 0);
    /* Unload all but one, from the top: the count passes 0xffff down. */
    for (uintptr_t i = N - 1; i > 0; i--) {
        ck_assert_int_eq(mdt_idmap_class_unload(m, base + i * 64, seq++), MDT_IDMAP_APPLIED);
        if (i == 0xffff || i == 0xfffe || i == 2)
            ck_assert_int_eq(mdt_idmap_typedef_loaded(m, MOD, g), 1);
    }
    /* Rows 1-64 of 16 modules, instantiated in the even ones only: no
     * query for an odd one may answer from the entry of the same row in
     * another module met along its probe. */
    for (uintptr_t mi = 0; mi < 16; mi += 2)
        for (uint32_t r = 1; r <= 64; r++) {
            uintptr_t a = arg;
            ck_assert_int_eq(load_class(m, 0x20000000 + (mi * 64 + r) * 64, 0x40000 + mi * 0x100,
                                        0x02000000 + r, 1, &a, seq++),
                             MDT_IDMAP_APPLIED);
        }
    for (uintptr_t mi = 0; mi < 16; mi++)
        for (uint32_t r = 1; r <= 64; r++)
            ck_assert_int_eq(mdt_idmap_typedef_loaded(m, 0x40000 + mi * 0x100, 0x02000000 + r),
                             mi % 2 == 0);
    /* The same row in another module is a separate entry. */
    uintptr_t a2 = arg;
    ck_assert_int_eq(load_class(m, 0x7000, MOD2, g, 1, &a2, seq++), MDT_IDMAP_APPLIED);
    ck_assert_int_eq(mdt_idmap_typedef_loaded(m, MOD2, g), 1);
    ck_assert_int_eq(mdt_idmap_class_unload(m, base, seq++), MDT_IDMAP_APPLIED);
    ck_assert_int_eq(mdt_idmap_typedef_loaded(m, MOD, g), 0);
    ck_assert_int_eq(mdt_idmap_typedef_loaded(m, MOD2, g), 1);
    /* Count up past 0xffff again after a retire (which recounts). */
    ck_assert_int_ge(mdt_idmap_retire(m, seq), 0);
    mdt_idmap_synchronize(m);
    for (uintptr_t i = 0; i < N; i++) {
        uintptr_t a = arg + i * 8;
        ck_assert_int_eq(load_class(m, base + i * 64, MOD, g, 1, &a, seq++), MDT_IDMAP_APPLIED);
    }
    ck_assert_int_eq(mdt_idmap_module_unload(m, MOD, seq++), MDT_IDMAP_APPLIED);
    ck_assert_int_eq(mdt_idmap_typedef_loaded(m, MOD, g), 0);
    ck_assert_int_eq(mdt_idmap_typedef_loaded(m, MOD2, g), 1);
    /* MOD's handle goes back to the pool; a third ModuleID may get it. */
    ck_assert_int_ge(mdt_idmap_retire(m, seq), 0);
    mdt_idmap_synchronize(m);
    const uintptr_t mod3 = MOD2 + 0x1000;
    ck_assert_int_eq(load_module(m, mod3, 3, 0, 0, seq++), 0);
    ck_assert_int_eq(load_class(m, 0x7100, mod3, g, 1, &a2, seq++), MDT_IDMAP_APPLIED);
    ck_assert_int_eq(mdt_idmap_typedef_loaded(m, mod3, g), 1);
    ck_assert_int_eq(mdt_idmap_typedef_loaded(m, MOD, g), 0);
    mdt_idmap_free(m);
}
END_TEST

Suite *suite(void);
Suite *suite(void)
{
    Suite *s = suite_create("idmap");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, module_load_copies_path_and_reports_fields);
    tcase_add_test(tc, class_arguments_inline_and_out_of_line);
    tcase_add_test(tc, function_owner_filled_in_later);
    tcase_add_test(tc, module_unload_cascades_through_type_arguments);
    tcase_add_test(tc, reused_id_gets_new_generation);
    tcase_add_test(tc, enumeration_item_older_than_unload_is_ignored);
    tcase_add_test(tc, duplicates_keep_generation);
    tcase_add_test(tc, late_unload_of_replaced_incarnation);
    tcase_add_test(tc, appdomain_and_assembly_unloads);
    tcase_add_test(tc, conflicting_newer_load_replaces_incarnation);
    tcase_add_test(tc, reverse_lookups_without_runtime);
    tcase_add_test(tc, code_ranges_follow_their_function);
    tcase_add_test(tc, code_of_an_unknown_function_still_ends_older_code);
    tcase_add_test(tc, code_tombstones_stay_bounded_under_churn);
    tcase_add_test(tc, portable_descriptor_text);
    tcase_add_test(tc, describe_tree_for_the_formatter);
    tcase_add_test(tc, function_described_in_one_read);
    tcase_add_test(tc, lazy_catch_up_through_miss_callback);
    tcase_add_test(tc, retire_drops_old_tombstones);
    tcase_add_test(tc, functions_without_metadata_stay_out_of_the_reverse_index);
    tcase_add_test(tc, growth_keeps_every_record);
    tcase_add_test(tc, bad_arguments_are_refused);
    tcase_add_test(tc, reload_churn_keeps_indexes_small);
    tcase_add_test(tc, dependents_survive_growth_and_content_changes);
    tcase_add_test(tc, dependents_survive_merges_in_place);
    tcase_add_test(tc, function_find_can_be_left_out);
    tcase_add_test(tc, recent_dependents_cascade_and_unload_bound);
    tcase_add_test(tc, code_ranges_in_address_order_and_leaf_edges);
    tcase_add_test(tc, code_ranges_in_runs_over_regions);
    tcase_add_test(tc, typedef_presence_of_plain_and_generic_types);
    tcase_add_test(tc, typedef_presence_counts_past_16_bits);
    tcase_add_test(tc, module_walk_and_change_counter);
    tcase_add_test(tc, code_counters_say_when_an_answer_may_change);
    tcase_add_test(tc, large_tables_get_huge_page_advice);
    tcase_add_test(tc, packed_records_round_trip);
    suite_add_tcase(s, tc);
    /* Guest rules (issue 16); short timeouts: a deadlock is the failure. */
    TCase *guest = tcase_create("guest");
    tcase_set_timeout(guest, 20);
    tcase_add_test(guest, calls_inside_module_walk_fail_instead_of_deadlocking);
    suite_add_tcase(s, guest);
    return s;
}
