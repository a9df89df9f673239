/* The members of a TypeDef, its kind and the type-or-member test
 * (<mdtools/members.h>, libmdtools/md/members.c). On data/Everything.dll
 * every member the iterator gives is owned by the type it walks
 * (mdt_member_owner, now for properties and events too) and every Field,
 * MethodDef, Property and Event row is given exactly once over all types;
 * kinds are checked against the C# source (data/src/Everything.cs). The
 * damaged cases are metadata built here (a MethodDef table cut short, a
 * run that ends before it starts) and tests/corrupt's MethodPtr table with
 * a nil entry: the iterator gives what reads, a bounded number of errors,
 * and ends. The generic parameters of every TypeDef and MethodDef are
 * each GenericParam row once, in Number order. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <talloc.h>

#include <mdtools/mdtools.h>

#include "paths.h"

static mdt_image *open_data(void *ctx, const char *rel)
{
    char path[4096];
    mdt_image *img = NULL;
    ck_assert_int_eq(mdt_image_open_file(ctx, &img, src_path(path, sizeof path, rel), 0), 0);
    return img;
}

static uint32_t type_named(const mdt_image *img, const char *name)
{
    uint32_t tok = 0;
    ck_assert_msg(mdt_typedef_by_name(&tok, img, name, strlen(name)) == 0, "no type %s", name);
    return tok;
}

START_TEST(members_of_every_type_are_owned_by_it_and_given_once)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_data(ctx, "data/Everything.dll");
    static const unsigned tables[4] = {MDT_TABLE_Field, MDT_TABLE_MethodDef, MDT_TABLE_Property,
                                       MDT_TABLE_Event};
    uint32_t *seen[4];
    for (int k = 0; k < 4; k++) {
        seen[k] = talloc_zero_array(ctx, uint32_t, mdt_table_rows(img, tables[k]) + 1);
        ck_assert_uint_gt(mdt_table_rows(img, tables[k]), 0);
    }
    for (uint32_t rid = 1; rid <= mdt_table_rows(img, MDT_TABLE_TypeDef); rid++) {
        mdt_members it = MDT_MEMBERS_INIT;
        uint32_t type = MDT_TOKEN(MDT_TABLE_TypeDef, rid), tok, owner;
        const char *name;
        int e, last = -1;
        ck_assert_int_eq(mdt_members_init(&it, img, type, MDT_MEMBERS_ALL), 0);
        while ((e = mdt_members_next(&tok, &name, &it)) != MDT_ITEROVER) {
            unsigned t = MDT_TOKEN_TABLE(tok);
            int k = t == MDT_TABLE_Field       ? 0
                    : t == MDT_TABLE_MethodDef ? 1
                    : t == MDT_TABLE_Property  ? 2
                                               : 3;
            mdt_row r;
            const char *want;
            ck_assert_int_eq(e, 0);
            ck_assert_uint_eq(t, tables[k]);
            ck_assert_int_ge(k, last); /* fields, methods, properties, events */
            last = k;
            ck_assert_int_eq(mdt_member_owner(&owner, img, tok), 0);
            ck_assert_uint_eq(owner, type);
            ck_assert_uint_eq(seen[k][MDT_TOKEN_RID(tok)]++, 0);
            ck_assert_int_eq(mdt_row_get(&r, img, t, MDT_TOKEN_RID(tok)), 0);
            ck_assert_int_eq(
                mdt_row_string(&want, NULL, &r, (unsigned)mdt_column_by_name(t, "Name")), 0);
            ck_assert_str_eq(name, want);
        }
        /* over stays over */
        ck_assert_int_eq(mdt_members_next(&tok, &name, &it), MDT_ITEROVER);
        ck_assert_uint_eq(tok, 0);
        ck_assert_ptr_null(name);
    }
    for (int k = 0; k < 4; k++)
        for (uint32_t rid = 1; rid <= mdt_table_rows(img, tables[k]); rid++)
            ck_assert_msg(seen[k][rid] == 1, "table 0x%02x row %u given %u times", tables[k], rid,
                          seen[k][rid]);
    talloc_free(ctx);
}
END_TEST

START_TEST(kinds_choose_members)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_data(ctx, "data/Everything.dll");
    uint32_t type = type_named(img, "Everything.Circle"), tok;
    unsigned counts[4] = {0}, all = 0;
    static const unsigned bits[4] = {MDT_MEMBERS_FIELDS, MDT_MEMBERS_METHODS,
                                     MDT_MEMBERS_PROPERTIES, MDT_MEMBERS_EVENTS};
    static const unsigned tables[4] = {MDT_TABLE_Field, MDT_TABLE_MethodDef, MDT_TABLE_Property,
                                       MDT_TABLE_Event};
    mdt_members it = MDT_MEMBERS_INIT;
    for (int k = 0; k < 4; k++) {
        mdt_members one = MDT_MEMBERS_INIT;
        ck_assert_int_eq(mdt_members_init(&one, img, type, bits[k]), 0);
        while (mdt_members_next(&tok, NULL, &one) == 0) {
            ck_assert_uint_eq(MDT_TOKEN_TABLE(tok), tables[k]);
            counts[k]++;
        }
    }
    ck_assert_uint_gt(counts[0], 0);
    ck_assert_uint_gt(counts[1], 0);
    ck_assert_uint_gt(counts[2], 0);
    ck_assert_int_eq(mdt_members_init(&it, img, type, MDT_MEMBERS_ALL), 0);
    while (mdt_members_next(&tok, NULL, &it) == 0)
        all++;
    ck_assert_uint_eq(all, counts[0] + counts[1] + counts[2] + counts[3]);
    talloc_free(ctx);
}
END_TEST

/* By name: the members mdt_members_next gives with that name, in its
 * order, for every type and every name of Everything.dll. */
START_TEST(members_by_name_agree_with_the_walk)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_data(ctx, "data/Everything.dll");
    unsigned found = 0;
    for (uint32_t rid = 1; rid <= mdt_table_rows(img, MDT_TABLE_TypeDef); rid++) {
        uint32_t type = MDT_TOKEN(MDT_TABLE_TypeDef, rid), tok, all[512];
        const char *names[512], *name;
        unsigned n = 0;
        mdt_members it = MDT_MEMBERS_INIT;
        ck_assert_int_eq(mdt_members_init(&it, img, type, MDT_MEMBERS_ALL), 0);
        while (mdt_members_next(&tok, &name, &it) == 0 && n < 512) {
            all[n] = tok;
            names[n++] = name;
        }
        for (unsigned i = 0; i < n; i++) {
            mdt_members byname = MDT_MEMBERS_INIT;
            unsigned j = 0;
            ck_assert_int_eq(mdt_members_init(&byname, img, type, MDT_MEMBERS_ALL), 0);
            while (mdt_members_next_named(&tok, names[i], &byname) == 0) {
                while (j < n && strcmp(names[j], names[i]) != 0)
                    j++;
                ck_assert_uint_lt(j, n);
                ck_assert_uint_eq(tok, all[j++]);
                found++;
            }
            while (j < n && strcmp(names[j], names[i]) != 0)
                j++;
            ck_assert_uint_eq(j, n); /* none left out */
        }
        mdt_members none = MDT_MEMBERS_INIT;
        ck_assert_int_eq(mdt_members_init(&none, img, type, MDT_MEMBERS_ALL), 0);
        ck_assert_int_eq(mdt_members_next_named(&tok, "no such member", &none), MDT_ITEROVER);
        ck_assert_int_eq(mdt_members_next_named(&tok, NULL, &none), MDT_EINVAL);
    }
    ck_assert_uint_gt(found, 100);
    talloc_free(ctx);
}
END_TEST

START_TEST(kinds_of_types)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_data(ctx, "data/Everything.dll");
    static const struct {
        const char *name, *kind;
    } want[] = {
        {"Everything.Color", "enum"},
        {"Everything.Perms", "enum"},
        {"Everything.Transform", "delegate"},
        {"Everything.IShape", "interface"},
        {"Everything.IScalable`1", "interface"},
        {"Everything.Point", "struct"},
        {"Everything.Circle", "class"},
        {"Everything.Outer+Middle+Inner", "class"},
        {"Everything.Pair`2", "class"},
        {"<Module>", "class"},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        mdt_type_kind k = MDT_KIND_DELEGATE;
        ck_assert_int_eq(mdt_typedef_kind(&k, img, type_named(img, want[i].name)), 0);
        ck_assert_msg(strcmp(mdt_type_kind_name(k), want[i].kind) == 0, "%s: %s, want %s",
                      want[i].name, mdt_type_kind_name(k), want[i].kind);
    }
    ck_assert_str_eq(mdt_type_kind_name((mdt_type_kind)99), "class");
    talloc_free(ctx);
}
END_TEST

START_TEST(type_or_member_tokens)
{
    static const unsigned yes[] = {MDT_TABLE_TypeDef,      MDT_TABLE_TypeRef,    MDT_TABLE_TypeSpec,
                                   MDT_TABLE_ExportedType, MDT_TABLE_MethodDef,  MDT_TABLE_Field,
                                   MDT_TABLE_MemberRef,    MDT_TABLE_MethodSpec, MDT_TABLE_Property,
                                   MDT_TABLE_Event};
    unsigned n = 0;
    for (unsigned t = 0; t < 256; t++) {
        bool is = false;
        for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
            is |= yes[i] == t;
        ck_assert_msg(mdt_token_is_type_or_member(MDT_TOKEN(t, 5)) == is, "table 0x%02x", t);
        n += is;
    }
    ck_assert_uint_eq(n, 10);
    ck_assert(!mdt_token_is_type_or_member(MDT_TOKEN(MDT_TOKEN_STRING, 1)));
}
END_TEST

START_TEST(owners_of_params_properties_events)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_data(ctx, "data/Everything.dll");
    uint32_t n = mdt_table_rows(img, MDT_TABLE_Param), owner, method, want;
    ck_assert_uint_gt(n, 0);
    for (uint32_t rid = 1; rid <= n; rid++) {
        uint32_t p = MDT_TOKEN(MDT_TABLE_Param, rid);
        ck_assert_int_eq(mdt_token_owner(&method, img, p), 0);
        ck_assert_int_eq(mdt_member_owner(&want, img, method), 0);
        ck_assert_int_eq(mdt_member_owner(&owner, img, p), 0);
        ck_assert_uint_eq(owner, want);
    }
    for (uint32_t rid = 1; rid <= mdt_table_rows(img, MDT_TABLE_Event); rid++) {
        uint32_t ev = MDT_TOKEN(MDT_TABLE_Event, rid);
        ck_assert_int_eq(mdt_token_owner(&want, img, ev), 0);
        ck_assert_int_eq(mdt_member_owner(&owner, img, ev), 0);
        ck_assert_uint_eq(owner, want);
        ck_assert_uint_eq(MDT_TOKEN_TABLE(owner), MDT_TABLE_TypeDef);
    }
    ck_assert_int_eq(mdt_member_owner(&owner, img, MDT_TOKEN(MDT_TABLE_Property, 0xFFFFFF)),
                     MDT_ENOTFOUND);
    ck_assert_int_eq(mdt_member_owner(&owner, img, MDT_TOKEN(MDT_TABLE_TypeRef, 1)), MDT_EINVAL);
    talloc_free(ctx);
}
END_TEST

START_TEST(bad_arguments)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_data(ctx, "data/Everything.dll");
    mdt_members it = MDT_MEMBERS_INIT, zero;
    uint32_t tok;
    mdt_type_kind k;
    memset(&zero, 0, sizeof zero);
    ck_assert_int_eq(mdt_members_init(&zero, img, MDT_TOKEN(MDT_TABLE_TypeDef, 1), MDT_MEMBERS_ALL),
                     MDT_EINVAL);
    ck_assert_int_eq(mdt_members_next(&tok, NULL, &it), MDT_EINVAL); /* not started */
    ck_assert_int_eq(mdt_members_init(&it, img, MDT_TOKEN(MDT_TABLE_TypeRef, 1), MDT_MEMBERS_ALL),
                     MDT_EINVAL);
    ck_assert_int_eq(mdt_members_init(&it, img, MDT_TOKEN(MDT_TABLE_TypeDef, 1), 0), MDT_EINVAL);
    ck_assert_int_eq(
        mdt_members_init(&it, img, MDT_TOKEN(MDT_TABLE_TypeDef, 0xFFFF), MDT_MEMBERS_ALL),
        MDT_ENOTFOUND);
    ck_assert_int_eq(mdt_typedef_kind(&k, img, MDT_TOKEN(MDT_TABLE_Field, 1)), MDT_EINVAL);
    ck_assert_int_eq(k, MDT_KIND_CLASS);
    ck_assert_int_eq(mdt_typedef_kind(&k, img, MDT_TOKEN(MDT_TABLE_TypeDef, 0xFFFF)),
                     MDT_ENOTFOUND);
    ck_assert_str_eq(mdt_error_last()->region, "TypeDef");
    talloc_free(ctx);
}
END_TEST

/* ---- damaged metadata, built here ---- */

static void put16(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
    put16(p, v & 0xFFFF);
    put16(p + 2, v >> 16);
}

/* A raw metadata blob (BSJB, one #~ stream, no heaps) with two TypeDef
 * rows whose MethodList starts are s1 and s2 and nmethods MethodDef rows,
 * the last `cut` of them not in the stream. Row sizes: TypeDef 14 (Flags
 * 4, two names 2, Extends 2, FieldList 2, MethodList 2), MethodDef 14. */
static uint8_t *build(void *ctx, size_t *len, uint32_t s1, uint32_t s2, uint32_t nmethods,
                      uint32_t cut)
{
    size_t tables = 24 + 2 * 4 + 2 * 14 + (size_t)nmethods * 14;
    size_t stream = (tables + 3) & ~(size_t)3, head = 16 + 12 + 4 + 8 + 4;
    uint8_t *b = talloc_zero_array(ctx, uint8_t, head + stream), *t = b + head;
    memcpy(b, "BSJB", 4);
    put16(b + 4, 1);
    put16(b + 6, 1);
    put32(b + 12, 12);
    memcpy(b + 16, "v4.0.30319", 10);
    put16(b + 30, 1);
    put32(b + 32, (uint32_t)head);
    put32(b + 36, (uint32_t)(tables - (size_t)cut * 14));
    memcpy(b + 40, "#~", 3);
    t[4] = 2;
    t[7] = 1;
    put32(t + 8, 1u << MDT_TABLE_TypeDef | 1u << MDT_TABLE_MethodDef);
    put32(t + 24, 2);
    put32(t + 28, nmethods);
    put16(t + 32 + 10, 1); /* FieldList: empty runs */
    put16(t + 32 + 12, s1);
    put16(t + 32 + 14 + 10, 1);
    put16(t + 32 + 14 + 12, s2);
    *len = head + tables - (size_t)cut * 14;
    return b;
}

/* Walks type rid: the members given, the errors, in *given and *errors. */
static void walk(const mdt_image *img, uint32_t rid, unsigned *given, unsigned *errors)
{
    mdt_members it = MDT_MEMBERS_INIT;
    uint32_t tok;
    int e;
    *given = *errors = 0;
    ck_assert_int_eq(mdt_members_init(&it, img, MDT_TOKEN(MDT_TABLE_TypeDef, rid), MDT_MEMBERS_ALL),
                     0);
    while ((e = mdt_members_next(&tok, NULL, &it)) != MDT_ITEROVER) {
        if (e)
            (*errors)++;
        else
            (*given)++;
        ck_assert_uint_lt(*given + *errors, 1000); /* it ends */
    }
}

/* mdt_generic_params: every GenericParam row of Everything.dll is given
 * once, by its owner, in Number order; counting agrees; owners of no
 * parameters give none, and other tokens are refused. */
START_TEST(generic_params_of_every_owner)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_data(ctx, "data/Everything.dll");
    uint32_t rows = mdt_table_rows(img, MDT_TABLE_GenericParam), total = 0;
    uint8_t *seen = talloc_zero_array(ctx, uint8_t, rows + 1);
    uint32_t *rids = (uint32_t *)&rows; /* must be set to NULL on failure */
    size_t n = 99;
    ck_assert_uint_gt(rows, 0);
    for (int t = 0; t < 2; t++) {
        unsigned table = t ? MDT_TABLE_MethodDef : MDT_TABLE_TypeDef;
        for (uint32_t rid = 1; rid <= mdt_table_rows(img, table); rid++) {
            uint32_t owner = MDT_TOKEN(table, rid);
            size_t count = 99;
            ck_assert_int_eq(mdt_generic_params(ctx, &rids, &n, img, owner), 0);
            ck_assert_int_eq(mdt_generic_params(NULL, NULL, &count, img, owner), 0);
            ck_assert_uint_eq(count, n);
            ck_assert(n ? rids != NULL : rids == NULL);
            for (size_t i = 0; i < n; i++) {
                mdt_row r;
                uint32_t tok;
                ck_assert_uint_ge(rids[i], 1);
                ck_assert_uint_le(rids[i], rows);
                ck_assert_int_eq(seen[rids[i]]++, 0);
                ck_assert_int_eq(mdt_row_get(&r, img, MDT_TABLE_GenericParam, rids[i]), 0);
                ck_assert_int_eq(mdt_row_token(&tok, &r, MDT_COL_GenericParam_Owner), 0);
                ck_assert_uint_eq(tok, owner);
                /* C# numbers them 0, 1, ... in declaration order */
                ck_assert_uint_eq(mdt_row_raw(&r, MDT_COL_GenericParam_Number), i);
            }
            total += (uint32_t)n;
            talloc_free(rids);
        }
    }
    ck_assert_uint_eq(total, rows);

    rids = (uint32_t *)&rows;
    ck_assert_int_eq(mdt_generic_params(ctx, &rids, &n, img, MDT_TOKEN(MDT_TABLE_Field, 1)),
                     MDT_EINVAL);
    ck_assert_ptr_null(rids);
    ck_assert_uint_eq(n, 0);
    ck_assert_int_eq(mdt_generic_params(ctx, &rids, NULL, img, MDT_TOKEN(MDT_TABLE_TypeDef, 1)),
                     MDT_EINVAL);
    ck_assert_int_eq(mdt_generic_params(ctx, &rids, &n, NULL, MDT_TOKEN(MDT_TABLE_TypeDef, 1)),
                     MDT_EINVAL);
    talloc_free(ctx);
}
END_TEST

START_TEST(damaged_runs_end_with_bounded_errors)
{
    void *ctx = talloc_new(NULL);
    size_t len;
    uint8_t *b = build(ctx, &len, 1, 50, 200, 100);
    mdt_image *img;
    unsigned given, errors;
    ck_assert_int_eq(mdt_image_open_buffer(ctx, &img, "cut", b, len, 0), 0);
    walk(img, 1, &given, &errors); /* methods 1..49, all there */
    ck_assert_uint_eq(given, 49);
    ck_assert_uint_eq(errors, 0);
    walk(img, 2, &given, &errors); /* 50..200: 50..100 there, then gives up */
    ck_assert_uint_eq(given, 51);
    ck_assert_uint_eq(errors, 17);
    ck_assert_int_eq(mdt_error_last()->code, MDT_ETRUNC);
    {
        /* by name (no #Strings: every name reads as the slow path says) */
        mdt_members it = MDT_MEMBERS_INIT;
        uint32_t tok;
        int e;
        errors = 0;
        ck_assert_int_eq(
            mdt_members_init(&it, img, MDT_TOKEN(MDT_TABLE_TypeDef, 2), MDT_MEMBERS_METHODS), 0);
        while ((e = mdt_members_next_named(&tok, "x", &it)) != MDT_ITEROVER) {
            ck_assert_int_ne(e, 0);
            ck_assert_uint_lt(++errors, 1000);
        }
    }

    /* a run that ends before it starts: one error, then the end */
    b = build(ctx, &len, 60, 10, 100, 0);
    ck_assert_int_eq(mdt_image_open_buffer(ctx, &img, "down", b, len, 0), 0);
    walk(img, 1, &given, &errors);
    ck_assert_uint_eq(given, 0);
    ck_assert_uint_eq(errors, 1);
    ck_assert_int_eq(mdt_error_last()->code, MDT_EBADIMAGE);
    walk(img, 2, &given, &errors);
    ck_assert_uint_eq(given, 91);
    ck_assert_uint_eq(errors, 0);
    talloc_free(ctx);
}
END_TEST

/* #- metadata whose MethodPtr table maps HelloWorld.Program's run [1, 2] to
 * MethodDef [2, 0]: the first through the table, the second an error. */
START_TEST(members_through_a_damaged_ptr_table)
{
    void *ctx = talloc_new(NULL);
    mdt_image *img = open_data(ctx, "tests/corrupt/cases/methodptr-nil-entry.bin");
    mdt_members it = MDT_MEMBERS_INIT;
    uint32_t tok, methods[4];
    unsigned n = 0, errors = 0;
    int e;
    ck_assert_uint_gt(mdt_table_rows(img, MDT_TABLE_MethodPtr), 0);
    ck_assert_int_eq(
        mdt_members_init(&it, img, type_named(img, "HelloWorld.Program"), MDT_MEMBERS_METHODS), 0);
    while ((e = mdt_members_next(&tok, NULL, &it)) != MDT_ITEROVER) {
        if (e) {
            ck_assert_int_eq(e, MDT_EBADIMAGE);
            errors++;
        } else if (n < 4) {
            methods[n++] = tok;
        }
    }
    ck_assert_uint_eq(n, 1);
    ck_assert_uint_eq(methods[0], MDT_TOKEN(MDT_TABLE_MethodDef, 2));
    ck_assert_uint_eq(errors, 1);
    talloc_free(ctx);
}
END_TEST

Suite *suite(void);
Suite *suite(void)
{
    Suite *s = suite_create("members");
    TCase *tc = tcase_create("members");
    tcase_add_test(tc, members_of_every_type_are_owned_by_it_and_given_once);
    tcase_add_test(tc, kinds_choose_members);
    tcase_add_test(tc, members_by_name_agree_with_the_walk);
    tcase_add_test(tc, kinds_of_types);
    tcase_add_test(tc, type_or_member_tokens);
    tcase_add_test(tc, owners_of_params_properties_events);
    tcase_add_test(tc, bad_arguments);
    tcase_add_test(tc, generic_params_of_every_owner);
    tcase_add_test(tc, damaged_runs_end_with_bounded_errors);
    tcase_add_test(tc, members_through_a_damaged_ptr_table);
    suite_add_tcase(s, tc);
    return s;
}
