/* The module set and reference resolution against every expectation written
 * in data/resolve/README.md (fixtures built from data/resolve/src), the
 * "Module sets" table of data/corpus/README.md, data/README.md's fwd/ and
 * Multi* fixtures, and the whole Mono 4.5 framework. */
#include <check.h>
#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <talloc.h>

#include <mdtools/mdtools.h>
#include <mdtools/idmap.h>
#include <mdtools/modset.h>
#include <mdtools/typeref.h>

#include "paths.h"

struct fx {
    void *ctx;
    mdt_modset *set;
    mdt_modview *v;
};

static struct fx *fx_new(void)
{
    struct fx *f = talloc_zero(NULL, struct fx);
    ck_assert_int_eq(mdt_modset_new(f, &f->set), 0);
    f->ctx = f;
    return f;
}

static void fx_view(struct fx *f)
{
    mdt_modview_release(f->v);
    f->v = mdt_modset_acquire(f->set);
}

static void fx_free(struct fx *f)
{
    mdt_modview_release(f->v);
    talloc_free(f);
}

static mdt_image *open_any(void *ctx, const char *path)
{
    mdt_image *img = NULL;
    char msg[512];
    ck_assert_msg(mdt_image_open_file(ctx, &img, path, 0) == 0, "%s: %s", path,
                  mdt_error_message(msg, sizeof msg));
    return img;
}

/* Add data file `rel` (relative to the source tree) as module `id`. */
static const mdt_image *add_in(struct fx *f, uintptr_t id, const char *rel, uintptr_t domain)
{
    char p[1024];
    mdt_image *img = open_any(f->set, src_path(p, sizeof p, rel));
    mdt_module_desc d = {.id = id, .image = img, .appdomain = domain, .path = p};
    ck_assert_int_eq(mdt_modset_add(f->set, &d, MDT_MODSET_OWN_IMAGE), 0);
    return img;
}

static const mdt_image *add(struct fx *f, uintptr_t id, const char *rel)
{
    return add_in(f, id, rel, 0);
}

static const mdt_image *image_of(struct fx *f, uintptr_t id)
{
    mdt_module_info mi;
    ck_assert_int_eq(mdt_modview_lookup(&mi, f->v, id), 0);
    return mi.image;
}

static char *name_of(void *ctx, const mdt_image *img, uint32_t token)
{
    char *s = NULL, msg[512];
    ck_assert_msg(mdt_token_name(ctx, &s, img, token, NULL) == 0, "0x%08x: %s", token,
                  mdt_error_message(msg, sizeof msg));
    return s;
}

/* First row of `table` (TypeRef, TypeDef, ExportedType, MemberRef) whose
 * full-style name is `name`. */
static uint32_t token_named(struct fx *f, uintptr_t id, unsigned table, const char *name)
{
    const mdt_image *img = image_of(f, id);
    for (uint32_t i = 1; i <= mdt_table_rows(img, table); i++) {
        char *s = NULL;
        if (mdt_token_name(f->ctx, &s, img, MDT_TOKEN(table, i), NULL) == 0 && !strcmp(s, name))
            return MDT_TOKEN(table, i);
    }
    ck_abort_msg("no row named %s in table 0x%02x of module %lu", name, table, (unsigned long)id);
    return 0;
}

static uint32_t typeref(struct fx *f, uintptr_t id, const char *name)
{
    return token_named(f, id, MDT_TABLE_TypeRef, name);
}

/* ExportedType rows have no name formatter: match namespace and name. */
static uint32_t exported(struct fx *f, uintptr_t id, const char *ns, const char *name)
{
    const mdt_image *img = image_of(f, id);
    for (uint32_t i = 1; i <= mdt_table_rows(img, MDT_TABLE_ExportedType); i++) {
        mdt_row r;
        const char *n, *s;
        mdt_row_get(&r, img, MDT_TABLE_ExportedType, i);
        mdt_row_string(&n, NULL, &r, MDT_COL_ExportedType_TypeName);
        mdt_row_string(&s, NULL, &r, MDT_COL_ExportedType_TypeNamespace);
        if (!strcmp(n, name) && !strcmp(s, ns))
            return MDT_TOKEN(MDT_TABLE_ExportedType, i);
    }
    ck_abort_msg("no ExportedType %s.%s", ns, name);
    return 0;
}

static mdt_resolution resolve_with(struct fx *f, uintptr_t id, uint32_t tok,
                                   const mdt_resolve_opts *o)
{
    mdt_resolution r;
    char msg[512];
    ck_assert_msg(mdt_token_resolve(f->ctx, &r, NULL, f->v, id, tok, o) == 0, "%s",
                  mdt_error_message(msg, sizeof msg));
    return r;
}

static mdt_resolution resolve(struct fx *f, uintptr_t id, uint32_t tok)
{
    return resolve_with(f, id, tok, NULL);
}

/* tok of module id resolves to `def` (full-style name) in module def_id. */
static mdt_resolution expect_ok(struct fx *f, uintptr_t id, uint32_t tok, uintptr_t def_id,
                                const char *def, int tier, int hops)
{
    mdt_resolution r = resolve(f, id, tok);
    ck_assert_msg(r.resolved, "0x%08x of %lu: unresolved, %s", tok, (unsigned long)id,
                  mdt_resolution_reason_name(r.reason));
    ck_assert_msg(r.module == def_id, "0x%08x of %lu: in module %lu, expected %lu", tok,
                  (unsigned long)id, (unsigned long)r.module, (unsigned long)def_id);
    ck_assert_str_eq(name_of(f->ctx, image_of(f, r.module), r.token), def);
    if (tier >= 0)
        ck_assert_int_eq(r.tier, tier);
    if (hops >= 0)
        ck_assert_int_eq(r.hops, hops);
    /* The cached answer is the same. */
    mdt_resolution again = resolve(f, id, tok);
    ck_assert(again.resolved && again.module == r.module && again.token == r.token &&
              again.tier == r.tier && again.hops == r.hops);
    return r;
}

static mdt_resolution expect_unres(struct fx *f, uintptr_t id, uint32_t tok, int reason)
{
    mdt_resolution r = resolve(f, id, tok);
    ck_assert_msg(!r.resolved, "0x%08x of %lu: resolved, expected %s", tok, (unsigned long)id,
                  mdt_resolution_reason_name(reason));
    ck_assert_msg(r.reason == reason, "0x%08x of %lu: %s, expected %s", tok, (unsigned long)id,
                  mdt_resolution_reason_name(r.reason), mdt_resolution_reason_name(reason));
    return r;
}

static bool trace_has(mdt_trace *t, int kind, const char *needle)
{
    for (size_t i = 0; t && i < t->n; i++)
        if (t->entries[i].kind == kind && strstr(t->entries[i].text, needle))
            return true;
    return false;
}

/* ---- data/fwd ------------------------------------------------------------ */

START_TEST(fwd_client_through_lib_v2_forwarders)
{
    struct fx *f = fx_new();
    add(f, 1, "data/fwd/Client.exe");
    add(f, 2, "data/fwd/v2/Lib.dll");
    add(f, 3, "data/fwd/Real.dll");
    add(f, 4, "data/fwd/Final.dll");
    fx_view(f);
    /* Client asks for Lib 1.0.0.0; 2.0.0.0 with the same token is loaded: tier 2. */
    expect_ok(f, 1, typeref(f, 1, "Fwd.Widget"), 3, "Fwd.Widget", 2, 1);
    expect_ok(f, 1, typeref(f, 1, "Fwd.Outer+Inner+Deeper"), 3, "Fwd.Outer+Inner+Deeper", 2, 1);
    expect_ok(f, 1, typeref(f, 1, "Fwd.Box<>"), 3, "Fwd.Box<T>", 2, 1);
    mdt_resolution r = expect_ok(f, 1, typeref(f, 1, "Fwd.Chained"), 4, "Fwd.Chained", 2, 2);
    ck_assert_int_eq(r.nvisited, 3);
    ck_assert(r.visited[0] == 2 && r.visited[1] == 3 && r.visited[2] == 4);
    expect_ok(f, 1, typeref(f, 1, "Fwd.Stays"), 2, "Fwd.Stays", 2, 0);
    /* Lib v2's forwarders themselves. */
    expect_ok(f, 2, exported(f, 2, "Fwd", "Chained"), 4, "Fwd.Chained", 1, 2);
    expect_ok(f, 2, exported(f, 2, "", "Deeper"), 3, "Fwd.Outer+Inner+Deeper", 1, 1);
    /* mscorlib is not in this set. */
    expect_unres(f, 1, typeref(f, 1, "System.Object"), MDT_RES_NOT_LOADED);
    fx_free(f);
}
END_TEST

START_TEST(fwd_client_with_lib_v1)
{
    struct fx *f = fx_new();
    add(f, 1, "data/fwd/Client.exe");
    add(f, 2, "data/fwd/v1/Lib.dll");
    add(f, 3, "data/fwd/Real.dll");
    fx_view(f);
    expect_ok(f, 1, typeref(f, 1, "Fwd.Widget"), 2, "Fwd.Widget", 1, 0);
    expect_ok(f, 1, typeref(f, 1, "Fwd.Chained"), 2, "Fwd.Chained", 1, 0);
    expect_ok(f, 1, typeref(f, 1, "Fwd.Outer+Inner+Deeper"), 2, "Fwd.Outer+Inner+Deeper", 1, 0);
    fx_free(f);
}
END_TEST

/* ---- data/resolve/chain -------------------------------------------------- */

static struct fx *chain_set(void)
{
    struct fx *f = fx_new();
    add(f, 10, "data/resolve/chain/ChainClient.exe");
    add(f, 11, "data/resolve/chain/Hop0.dll");
    add(f, 12, "data/resolve/chain/Hop1.dll");
    add(f, 13, "data/resolve/chain/Hop2.dll");
    add(f, 14, "data/resolve/chain/Hop3.dll");
    fx_view(f);
    return f;
}

START_TEST(chain_three_and_two_hops)
{
    struct fx *f = chain_set();
    mdt_resolution r = expect_ok(f, 10, typeref(f, 10, "Chain.Plain"), 14, "Chain.Plain", 1, 3);
    ck_assert_int_eq(r.nvisited, 4);
    for (int i = 0; i < 4; i++)
        ck_assert_uint_eq(r.visited[i], 11 + i);
    expect_ok(f, 10, typeref(f, 10, "Chain.Gen<>"), 14, "Chain.Gen<T>", 1, 3);
    expect_ok(f, 10, typeref(f, 10, "Chain.Outer+Inner+Deeper"), 14, "Chain.Outer+Inner+Deeper", 1,
              3);
    expect_ok(f, 10, typeref(f, 10, "Chain.Two"), 13, "Chain.Two", 1, 2);
    /* The forwarder rows themselves. */
    expect_ok(f, 11, exported(f, 11, "Chain", "Plain"), 14, "Chain.Plain", 1, 3);
    expect_ok(f, 12, exported(f, 12, "", "Deeper"), 14, "Chain.Outer+Inner+Deeper", 1, 2);
    expect_ok(f, 13, exported(f, 13, "Chain", "Gen`1"), 14, "Chain.Gen<T>", 1, 1);
    fx_free(f);
}
END_TEST

START_TEST(chain_hop_limit)
{
    struct fx *f = chain_set();
    mdt_resolve_opts o = {0, MDT_RESOLVE_OPTS_VERSION, 2};
    mdt_resolution r = resolve_with(f, 10, typeref(f, 10, "Chain.Plain"), &o);
    ck_assert(!r.resolved);
    ck_assert_int_eq(r.reason, MDT_RES_HOP_LIMIT);
    ck_assert_uint_eq(r.where_module, 13); /* Hop2 would need a third hop */
    r = resolve_with(f, 10, typeref(f, 10, "Chain.Two"), &o);
    ck_assert(r.resolved && r.hops == 2);
    fx_free(f);
}
END_TEST

START_TEST(chain_trace_lists_hops)
{
    struct fx *f = chain_set();
    mdt_resolution r;
    mdt_trace *t = NULL;
    ck_assert_int_eq(
        mdt_typeref_resolve(f->ctx, &r, &t, f->v, 10, typeref(f, 10, "Chain.Plain"), NULL), 0);
    ck_assert(r.resolved && t && t->n > 4);
    ck_assert(trace_has(t, MDT_TRACE_HOP, "Hop0 1.0.0.0 forwards Chain.Plain (hop 1)"));
    ck_assert(trace_has(t, MDT_TRACE_HOP, "(hop 3)"));
    ck_assert(trace_has(t, MDT_TRACE_CHOSEN, "chose Hop3 1.0.0.0 (tier 1)"));
    ck_assert_int_eq(t->entries[t->n - 1].kind, MDT_TRACE_RESULT);
    fx_free(f);
}
END_TEST

START_TEST(chain_memberrefs_on_generic_instances)
{
    struct fx *f = chain_set();
    uint32_t make = token_named(f, 10, MDT_TABLE_MemberRef, "Chain.Gen<System.Int32>::Make");
    uint32_t get = token_named(f, 10, MDT_TABLE_MemberRef, "Chain.Gen<System.Int32>::Get");
    uint32_t add_ = token_named(f, 10, MDT_TABLE_MemberRef, "Chain.Plain::Add");
    uint32_t s = token_named(f, 10, MDT_TABLE_MemberRef, "Chain.Outer+Inner+Deeper::S");
    expect_ok(f, 10, make, 14, "Chain.Gen<T>::Make", 1, 3);
    expect_ok(f, 10, get, 14, "Chain.Gen<T>::Get", 1, 3);
    expect_ok(f, 10, add_, 14, "Chain.Plain::Add", 1, 3);
    expect_ok(f, 10, s, 14, "Chain.Outer+Inner+Deeper::S", 1, 3);
    expect_ok(f, 10, token_named(f, 10, MDT_TABLE_MemberRef, "Chain.Two::Id"), 13, "Chain.Two::Id",
              1, 2);
    fx_free(f);
}
END_TEST

START_TEST(chain_forwarder_target_missing)
{
    struct fx *f = fx_new();
    add(f, 10, "data/resolve/chain/ChainClient.exe");
    add(f, 11, "data/resolve/chain/Hop0.dll");
    add(f, 12, "data/resolve/chain/Hop1.dll");
    fx_view(f);
    mdt_resolution r = expect_unres(f, 10, typeref(f, 10, "Chain.Plain"), MDT_RES_NOT_LOADED);
    ck_assert_uint_eq(r.where_module, 12); /* Hop1's AssemblyRef to Hop2 binds nowhere */
    ck_assert_uint_eq(r.where_token >> 24, MDT_TABLE_AssemblyRef);
    ck_assert_int_eq(r.hops, 2);
    fx_free(f);
}
END_TEST

/* Tier 3b: Hop0, the assembly the client's TypeRefs name, is not loaded, so
 * any loaded assembly that defines or forwards the type is a candidate, in
 * registration order. The scan passes over assemblies by a namespace filter
 * and builds their indexes only when it must: Ghosts (other namespaces) is
 * passed over, Hop3 found for a top-level and a nested type, a forwarder
 * (Hop2) is a candidate too and is followed. */
START_TEST(chain_tier3b_any_assembly_with_the_type)
{
    struct fx *f = fx_new();
    add(f, 10, "data/resolve/chain/ChainClient.exe");
    add(f, 81, "data/resolve/missing/Ghosts.dll");
    add(f, 14, "data/resolve/chain/Hop3.dll");
    fx_view(f);
    mdt_resolution r = expect_ok(f, 10, typeref(f, 10, "Chain.Outer+Inner+Deeper"), 14,
                                 "Chain.Outer+Inner+Deeper", 3, 0);
    ck_assert_int_eq(r.flags & MDT_RES_AMBIGUOUS, 0);
    expect_ok(f, 10, typeref(f, 10, "Chain.Plain"), 14, "Chain.Plain", 3, 0);
    r = expect_unres(f, 10, typeref(f, 10, "Chain.Two"), MDT_RES_NOT_LOADED);
    ck_assert_uint_eq(r.where_module, 10);
    ck_assert_uint_eq(r.where_token >> 24, MDT_TABLE_AssemblyRef);
    fx_free(f);

    f = fx_new();
    add(f, 10, "data/resolve/chain/ChainClient.exe");
    add(f, 13, "data/resolve/chain/Hop2.dll");
    add(f, 14, "data/resolve/chain/Hop3.dll");
    fx_view(f);
    r = expect_ok(f, 10, typeref(f, 10, "Chain.Plain"), 14, "Chain.Plain", 3, 1);
    ck_assert_int_ne(r.flags & MDT_RES_AMBIGUOUS, 0); /* Hop2 forwards it, Hop3 defines it */
    ck_assert_int_eq(r.nvisited, 2);
    ck_assert_uint_eq(r.visited[0], 13);
    ck_assert_uint_eq(r.visited[1], 14);
    r = expect_ok(f, 10, typeref(f, 10, "Chain.Two"), 13, "Chain.Two", 3, 0);
    ck_assert_int_eq(r.flags & MDT_RES_AMBIGUOUS, 0);
    fx_free(f);
}
END_TEST

/* ---- cycles -------------------------------------------------------------- */

START_TEST(cycles_two_three_self)
{
    struct fx *f = fx_new();
    add(f, 20, "data/resolve/cycle/CycleClient.exe");
    add(f, 21, "data/resolve/cycle/CycA.dll");
    add(f, 22, "data/resolve/cycle/CycB.dll");
    add(f, 23, "data/resolve/cycle/Cyc3A.dll");
    add(f, 24, "data/resolve/cycle/Cyc3B.dll");
    add(f, 25, "data/resolve/cycle/Cyc3C.dll");
    add(f, 26, "data/resolve/cycle/SelfFwd.dll");
    fx_view(f);
    mdt_resolution r = expect_unres(f, 20, typeref(f, 20, "Loop.Two"), MDT_RES_CYCLE);
    ck_assert_int_eq(r.nvisited, 2);
    ck_assert(r.visited[0] == 21 && r.visited[1] == 22);
    r = expect_unres(f, 20, typeref(f, 20, "Loop.Three"), MDT_RES_CYCLE);
    ck_assert_int_eq(r.nvisited, 3);
    ck_assert(r.visited[0] == 23 && r.visited[1] == 24 && r.visited[2] == 25);
    r = expect_unres(f, 20, typeref(f, 20, "Loop.Self"), MDT_RES_CYCLE);
    ck_assert_int_eq(r.nvisited, 1);
    ck_assert_uint_eq(r.visited[0], 26);
    expect_unres(f, 26, exported(f, 26, "Loop", "Self"), MDT_RES_CYCLE);
    expect_unres(f, 24, exported(f, 24, "Loop", "Three"), MDT_RES_CYCLE);
    fx_free(f);
}
END_TEST

/* ---- versions ------------------------------------------------------------ */

enum { V10 = 31, V20 = 32, V15 = 33 };

static struct fx *ver_set(void)
{
    struct fx *f = fx_new();
    add(f, 40, "data/resolve/ver/VerClient10.exe");
    add(f, 41, "data/resolve/ver/VerClient20.exe");
    add(f, 42, "data/resolve/ver/VerClient15.exe");
    add(f, 43, "data/resolve/ver/VerClient12.exe");
    add(f, 44, "data/resolve/ver/VerClient30.exe");
    add(f, 45, "data/resolve/ver/VerClientNoKey.exe");
    add(f, 46, "data/resolve/ver/VerClient12R.exe");
    add(f, V10, "data/resolve/ver/1.0/Ver.dll");
    add(f, V20, "data/resolve/ver/2.0/Ver.dll");
    add(f, V15, "data/resolve/ver/1.5k2/Ver.dll");
    fx_view(f);
    return f;
}

START_TEST(versions_three_tiers)
{
    struct fx *f = ver_set();
    /* Exact identity: tier 1. */
    expect_ok(f, 40, typeref(f, 40, "Versioned.Common"), V10, "Versioned.Common", 1, 0);
    expect_ok(f, 40, typeref(f, 40, "Versioned.Only10"), V10, "Versioned.Only10", 1, 0);
    expect_ok(f, 41, typeref(f, 41, "Versioned.Only20"), V20, "Versioned.Only20", 1, 0);
    expect_ok(f, 42, typeref(f, 42, "Versioned.Common"), V15, "Versioned.Common", 1, 0);
    expect_ok(f, 42, typeref(f, 42, "Versioned.Only15"), V15, "Versioned.Only15", 1, 0);
    /* 1.2 with key 1: nearest higher with the same token is 2.0 (tier 2),
     * although 1.5 (other key) is nearer. */
    expect_ok(f, 43, typeref(f, 43, "Versioned.Common"), V20, "Versioned.Common", 2, 0);
    /* Only10 is not in 2.0: tier 3, nearest version first (1.0, then 1.5). */
    expect_ok(f, 43, typeref(f, 43, "Versioned.Only10"), V10, "Versioned.Only10", 3, 0);
    mdt_resolution r =
        expect_unres(f, 43, typeref(f, 43, "Versioned.Only12"), MDT_RES_NO_SUCH_TYPE);
    ck_assert_uint_eq(r.where_module, V20);
    /* 3.0 is above everything: tier 3, 2.0 is nearest; Only15 only in 1.5. */
    expect_ok(f, 44, typeref(f, 44, "Versioned.Common"), V20, "Versioned.Common", 3, 0);
    expect_ok(f, 44, typeref(f, 44, "Versioned.Only15"), V15, "Versioned.Only15", 3, 0);
    expect_unres(f, 44, typeref(f, 44, "Versioned.Only30"), MDT_RES_NO_SUCH_TYPE);
    /* No token in the reference: the token is no criterion, 1.0 is exact. */
    expect_ok(f, 45, typeref(f, 45, "Versioned.Common"), V10, "Versioned.Common", 1, 0);
    expect_ok(f, 45, typeref(f, 45, "Versioned.Only10"), V10, "Versioned.Only10", 1, 0);
    /* Retargetable: any token, equal or higher version, nearest first: 1.5
     * (key 2) before 2.0, in tier 2. */
    expect_ok(f, 46, typeref(f, 46, "Versioned.Common"), V15, "Versioned.Common", 2, 0);
    expect_ok(f, 46, typeref(f, 46, "Versioned.Only10"), V10, "Versioned.Only10", 3, 0);
    fx_free(f);
}
END_TEST

START_TEST(versions_strict_stops_after_tier_two)
{
    struct fx *f = ver_set();
    mdt_resolve_opts o = {MDT_RESOLVE_STRICT, MDT_RESOLVE_OPTS_VERSION, 0};
    mdt_resolution r = resolve_with(f, 44, typeref(f, 44, "Versioned.Common"), &o);
    ck_assert(!r.resolved);
    ck_assert_int_eq(r.reason, MDT_RES_NOT_LOADED);
    ck_assert_uint_eq(r.instead_module, V20); /* what tier 3 would have used */
    r = resolve_with(f, 43, typeref(f, 43, "Versioned.Common"), &o);
    ck_assert(r.resolved && r.module == V20 && r.tier == 2);
    r = resolve_with(f, 43, typeref(f, 43, "Versioned.Only10"), &o);
    ck_assert(!r.resolved && r.reason == MDT_RES_NO_SUCH_TYPE);
    fx_free(f);
}
END_TEST

START_TEST(versions_bind_assemblyref)
{
    struct fx *f = ver_set();
    uintptr_t m;
    int tier;
    /* VerClient12's AssemblyRef 1 is mscorlib; find the Ver one. */
    const mdt_image *img = image_of(f, 43);
    for (uint32_t i = 1; i <= mdt_table_rows(img, MDT_TABLE_AssemblyRef); i++) {
        mdt_identity id;
        mdt_assemblyref_identity(&id, img, i);
        if (strcmp(id.name, "Ver"))
            continue;
        ck_assert_int_eq(
            mdt_assemblyref_bind(&m, &tier, f->v, 43, MDT_TOKEN(MDT_TABLE_AssemblyRef, i)), 0);
        ck_assert_uint_eq(m, V20);
        ck_assert_int_eq(tier, 2);
    }
    fx_free(f);
}
END_TEST

/* ---- multi-module assemblies -------------------------------------------- */

START_TEST(multi_moduleref_scopes)
{
    struct fx *f = fx_new();
    add(f, 50, "data/resolve/multi/MM.dll");
    add(f, 51, "data/resolve/multi/MMPart.netmodule");
    fx_view(f);
    mdt_module_info mi;
    ck_assert_int_eq(mdt_modview_lookup(&mi, f->v, 51), 0);
    ck_assert_uint_eq(mi.manifest, 50);
    ck_assert(!mi.is_manifest);
    expect_ok(f, 50, typeref(f, 50, "Multi2.Part"), 51, "Multi2.Part", 0, 0);
    expect_ok(f, 50, typeref(f, 50, "Multi2.Part+Nested"), 51, "Multi2.Part+Nested", 0, 0);
    expect_ok(f, 50, typeref(f, 50, "Multi2.IPart"), 51, "Multi2.IPart", 0, 0);
    expect_unres(f, 50, typeref(f, 50, "Multi2.NotHere"), MDT_RES_NOT_LOADED);
    expect_ok(f, 50, token_named(f, 50, MDT_TABLE_MemberRef, "Multi2.Part::Twice"), 51,
              "Multi2.Part::Twice", 0, 0);
    /* A vararg call site matches its definition by the fixed part. */
    expect_ok(f, 50, token_named(f, 50, MDT_TABLE_MemberRef, "Multi2.Part::Sum"), 51,
              "Multi2.Part::Sum", 0, 0);
    fx_free(f);
}
END_TEST

START_TEST(multi_module_missing_or_dynamic)
{
    struct fx *f = fx_new();
    add(f, 50, "data/resolve/multi/MM.dll");
    fx_view(f);
    expect_unres(f, 50, typeref(f, 50, "Multi2.Part"), MDT_RES_NOT_LOADED);
    /* The netmodule loaded without metadata (a dynamic module). */
    mdt_module_desc d = {.id = 52, .name = "MMPart.netmodule", .manifest = 50};
    ck_assert_int_eq(mdt_modset_add(f->set, &d, 0), 0);
    fx_view(f);
    expect_unres(f, 50, typeref(f, 50, "Multi2.Part"), MDT_RES_NO_METADATA);
    mdt_resolution r;
    ck_assert_int_eq(
        mdt_typeref_resolve(NULL, &r, NULL, f->v, 52, MDT_TOKEN(MDT_TABLE_TypeRef, 1), NULL), 0);
    ck_assert(!r.resolved && r.reason == MDT_RES_NO_METADATA);
    fx_free(f);
}
END_TEST

START_TEST(multi_data_fixtures)
{
    struct fx *f = fx_new();
    add(f, 60, "data/MultiMain.dll");
    add(f, 61, "data/MultiPart.netmodule");
    add(f, 62, "data/MultiIL.dll");
    fx_view(f);
    /* mcs scopes MultiMain's references by an AssemblyRef to itself. */
    expect_ok(f, 60, typeref(f, 60, "Multi.Part.Helper+NestedHelper"), 61,
              "Multi.Part.Helper+NestedHelper", 1, 0);
    expect_ok(f, 60, exported(f, 60, "", "NestedHelper"), 61, "Multi.Part.Helper+NestedHelper", 0,
              0);
    /* MultiIL lists the same netmodule: its ModuleRef scopes find it too. */
    expect_ok(f, 62, typeref(f, 62, "Multi.Part.Helper+NestedHelper"), 61,
              "Multi.Part.Helper+NestedHelper", 0, 0);
    expect_ok(f, 62, token_named(f, 62, MDT_TABLE_MemberRef, "Multi.Part.Helper::Twice"), 61,
              "Multi.Part.Helper::Twice", 0, 0);
    fx_free(f);
}
END_TEST

/* ---- nesting, missing things, nil scopes -------------------------------- */

START_TEST(nest_four_deep_across_assemblies)
{
    struct fx *f = fx_new();
    add(f, 70, "data/resolve/nest/NestClient.exe");
    add(f, 71, "data/resolve/nest/NestFwd.dll");
    add(f, 72, "data/resolve/nest/NestReal.dll");
    fx_view(f);
    expect_ok(f, 70, typeref(f, 70, "Deep.L1+L2+L3+L4"), 72, "Deep.L1+L2+L3+L4", 1, 1);
    mdt_resolution a =
        expect_ok(f, 70, typeref(f, 70, "Deep.L1+L2+Leaf"), 72, "Deep.L1+L2+Leaf", 1, 1);
    mdt_resolution b =
        expect_ok(f, 70, typeref(f, 70, "Deep.Other+Leaf"), 72, "Deep.Other+Leaf", 1, 1);
    ck_assert_uint_ne(a.token, b.token);
    /* The nested ExportedType rows, through their enclosing rows. */
    const mdt_image *img = image_of(f, 71);
    int leaves = 0;
    for (uint32_t i = 1; i <= mdt_table_rows(img, MDT_TABLE_ExportedType); i++) {
        mdt_row r;
        const char *n;
        mdt_row_get(&r, img, MDT_TABLE_ExportedType, i);
        mdt_row_string(&n, NULL, &r, MDT_COL_ExportedType_TypeName);
        mdt_resolution x = resolve(f, 71, MDT_TOKEN(MDT_TABLE_ExportedType, i));
        ck_assert(x.resolved && x.module == 72);
        if (!strcmp(n, "Leaf")) {
            ck_assert(x.token == a.token || x.token == b.token);
            leaves++;
        }
    }
    ck_assert_int_eq(leaves, 2);
    fx_free(f);
}
END_TEST

START_TEST(missing_types_and_assemblies)
{
    struct fx *f = fx_new();
    add(f, 80, "data/resolve/missing/GhostClient.exe");
    add(f, 81, "data/resolve/missing/Ghosts.dll");
    fx_view(f);
    expect_ok(f, 80, typeref(f, 80, "Ghost.Here"), 81, "Ghost.Here", 1, 0);
    mdt_resolution r = expect_unres(f, 80, typeref(f, 80, "Ghost.Missing"), MDT_RES_NO_SUCH_TYPE);
    ck_assert_uint_eq(r.where_module, 81);
    r = expect_unres(f, 80, typeref(f, 80, "Gone.Thing"), MDT_RES_NOT_LOADED);
    ck_assert_uint_eq(r.where_module, 80);
    ck_assert_uint_eq(r.where_token >> 24, MDT_TABLE_AssemblyRef);
    fx_free(f);
}
END_TEST

/* The AssemblyRef a scope names, by name (or "" for other scopes). */
static const char *scope_asm(struct fx *f, uintptr_t id, uint32_t tok)
{
    uint32_t scope = 0xdead;
    mdt_identity ident;
    char msg[512];
    ck_assert_msg(mdt_token_scope(&scope, image_of(f, id), tok) == 0, "0x%08x: %s", tok,
                  mdt_error_message(msg, sizeof msg));
    if (MDT_TOKEN_TABLE(scope) != MDT_TABLE_AssemblyRef)
        return "";
    ck_assert_int_eq(mdt_assemblyref_identity(&ident, image_of(f, id), MDT_TOKEN_RID(scope)), 0);
    return talloc_strdup(f->ctx, ident.name);
}

/* Where references start, without binding: the scope each names. */
START_TEST(reference_scopes)
{
    struct fx *f = chain_set();
    add(f, 90, "data/resolve/nil/NilClient.exe");
    add(f, 95, "data/fwd/v2/Lib.dll");
    fx_view(f);
    uint32_t scope;
    /* Nested TypeRefs and MemberRefs on generic instances: the AssemblyRef
     * at the root, though resolution ends three hops further. */
    ck_assert_str_eq(scope_asm(f, 10, typeref(f, 10, "Chain.Plain")), "Hop0");
    ck_assert_str_eq(
        scope_asm(f, 10, token_named(f, 10, MDT_TABLE_MemberRef, "Chain.Gen<System.Int32>::Make")),
        "Hop0");
    ck_assert_str_eq(
        scope_asm(f, 10, token_named(f, 10, MDT_TABLE_MemberRef, "Chain.Outer+Inner+Deeper::S")),
        "Hop0");
    /* Nil and Module scopes. */
    ck_assert_int_eq(mdt_token_scope(&scope, image_of(f, 90), typeref(f, 90, "Nil.Local")), 0);
    ck_assert_uint_eq(scope, 0);
    ck_assert_int_eq(mdt_token_scope(&scope, image_of(f, 90), typeref(f, 90, "Nil.ViaModule")), 0);
    ck_assert_uint_eq(scope, 0x00000001);
    /* A nested forwarder: the root of its Implementation chain. */
    ck_assert_str_eq(scope_asm(f, 95, exported(f, 95, "", "Deeper")), "Real");
    /* Not a reference. */
    ck_assert_int_eq(mdt_token_scope(&scope, image_of(f, 95), 0x02000001), MDT_EINVAL);
    ck_assert_int_eq(mdt_token_scope(&scope, image_of(f, 95), 0x01000999), MDT_ENOTFOUND);
    fx_free(f);
}
END_TEST

START_TEST(nil_and_module_scopes)
{
    struct fx *f = fx_new();
    add(f, 90, "data/resolve/nil/NilClient.exe");
    add(f, 91, "data/resolve/chain/Hop3.dll");
    fx_view(f);
    expect_ok(f, 90, typeref(f, 90, "Nil.Local"), 90, "Nil.Local", 0, 0);
    expect_ok(f, 90, typeref(f, 90, "Nil.ViaModule"), 90, "Nil.ViaModule", 0, 0);
    expect_unres(f, 90, typeref(f, 90, "Nil.Nowhere"), MDT_RES_NO_SUCH_TYPE);
    mdt_resolution r = expect_ok(f, 90, typeref(f, 90, "Chain.Plain"), 91, "Chain.Plain", 1, 1);
    ck_assert(r.nvisited == 2 && r.visited[0] == 90 && r.visited[1] == 91);
    fx_free(f);
}
END_TEST

/* ---- data/Shell.dll: array methods, tier 3b to another assembly ---------- */

/* The methods the runtime provides for arrays resolve as runtime-provided
 * (data/README.md: MemberRefs 5-9); a reference through an AssemblyRef no
 * file provides (`Shell.Missing`) binds by name to Shell itself, flagged;
 * a member that type lacks is then "not-loaded", not no-such-member. */
START_TEST(shell_array_methods_and_other_assembly)
{
    struct fx *f = fx_new();
    add(f, 1, "data/Shell.dll");
    fx_view(f);
    for (uint32_t rid = 5; rid <= 9; rid++) {
        mdt_resolution r = expect_unres(f, 1, MDT_TOKEN(MDT_TABLE_MemberRef, rid), MDT_RES_RUNTIME);
        ck_assert(!(r.flags & MDT_RES_OTHER_ASSEMBLY));
    }
    ck_assert_str_eq(mdt_resolution_reason_name(MDT_RES_RUNTIME), "runtime-provided");
    /* Console::WriteLine: mscorlib is not open. */
    expect_unres(f, 1, MDT_TOKEN(MDT_TABLE_MemberRef, 3), MDT_RES_NOT_LOADED);
    /* [Shell.Missing]Shell.Names.Item2: found by name in Shell (tier 3b). */
    mdt_resolution r =
        expect_ok(f, 1, MDT_TOKEN(MDT_TABLE_TypeRef, 8), 1, "Shell.Names.Item2", 3, 0);
    ck_assert(r.flags & MDT_RES_OTHER_ASSEMBLY);
    r = expect_ok(f, 1, MDT_TOKEN(MDT_TABLE_MemberRef, 13), 1, "Shell.Names.Item2::.ctor", 3, 0);
    ck_assert(r.flags & MDT_RES_OTHER_ASSEMBLY);
    /* Item2::Gone: Shell.Missing is not loaded; Item2 is what was there. */
    r = expect_unres(f, 1, MDT_TOKEN(MDT_TABLE_MemberRef, 14), MDT_RES_NOT_LOADED);
    ck_assert(r.flags & MDT_RES_OTHER_ASSEMBLY);
    ck_assert_uint_eq(r.where_module, 1);
    ck_assert_uint_eq(r.where_token, MDT_TOKEN(MDT_TABLE_AssemblyRef, 1));
    ck_assert_uint_eq(r.instead_module, 1);
    ck_assert_uint_eq(r.instead_token, MDT_TOKEN(MDT_TABLE_TypeDef, 2));
    /* The same answers with a trace, which says why. */
    mdt_trace *t;
    ck_assert_int_eq(
        mdt_memberref_resolve(f->ctx, &r, &t, f->v, 1, MDT_TOKEN(MDT_TABLE_MemberRef, 14), NULL),
        0);
    ck_assert(!r.resolved && r.reason == MDT_RES_NOT_LOADED);
    ck_assert(trace_has(t, MDT_TRACE_RESULT, "the assembly the reference names is not loaded"));
    ck_assert_int_eq(
        mdt_memberref_resolve(f->ctx, &r, &t, f->v, 1, MDT_TOKEN(MDT_TABLE_MemberRef, 6), NULL), 0);
    ck_assert(!r.resolved && r.reason == MDT_RES_RUNTIME);
    ck_assert(trace_has(t, MDT_TRACE_RESULT, "the runtime provides it"));
    fx_free(f);
}
END_TEST

/* ---- corpus module sets (data/corpus/README.md) -------------------------- */

#define AR "data/corpus/asmresolver/"

START_TEST(corpus_generic_forwarder)
{
    struct fx *f = fx_new();
    add(f, 1, AR "HelloWorld_Forwarder.exe");
    add(f, 2, AR "Assembly1_Forwarder.dll");
    add(f, 3, AR "Assembly2_Actual.dll");
    fx_view(f);
    expect_ok(f, 1, typeref(f, 1, "SomeNamespace.SomeType<>"), 3, "SomeNamespace.SomeType<T>", 1,
              1);
    expect_ok(f, 1, MDT_TOKEN(MDT_TABLE_MemberRef, 1), 3, "SomeNamespace.SomeType<T>::SomeMethod",
              1, 1);
    mdt_resolution r;
    mdt_trace *t;
    ck_assert_int_eq(
        mdt_memberref_resolve(f->ctx, &r, &t, f->v, 1, MDT_TOKEN(MDT_TABLE_MemberRef, 1), NULL), 0);
    ck_assert(r.resolved && trace_has(t, MDT_TRACE_HOP, "Assembly1_Forwarder"));
    fx_free(f);
}
END_TEST

START_TEST(corpus_nested_forwarders)
{
    struct fx *f = fx_new();
    add(f, 1, AR "ForwarderRefTest.exe");
    add(f, 2, AR "ForwarderLibrary.dll");
    add(f, 3, AR "ActualLibrary.dll");
    fx_view(f);
    mdt_resolution a =
        expect_ok(f, 1, typeref(f, 1, "MyClass+MyNestedClass"), 3, "MyClass+MyNestedClass", 1, 1);
    mdt_resolution b =
        expect_ok(f, 1, typeref(f, 1, "MyClass2+MyNestedClass"), 3, "MyClass2+MyNestedClass", 1, 1);
    ck_assert_uint_eq(a.token, 0x02000004);
    ck_assert_uint_eq(b.token, 0x02000006);
    /* ExportedType rows 3 and 5 are the nested ones, matched by their enclosing rows. */
    ck_assert_uint_eq(resolve(f, 2, 0x27000003).token, 0x02000004);
    ck_assert_uint_eq(resolve(f, 2, 0x27000005).token, 0x02000006);
    fx_free(f);
}
END_TEST

START_TEST(corpus_forwarder_loop)
{
    struct fx *f = fx_new();
    add(f, 1, AR "HelloWorld_MaliciousExportedTypeLoop.exe");
    add(f, 2, AR "Assembly1_MaliciousExportedTypeLoop.dll");
    add(f, 3, AR "Assembly2_MaliciousExportedTypeLoop.dll");
    fx_view(f);
    mdt_resolution r = expect_unres(f, 1, typeref(f, 1, "SomeNamespace.SomeName"), MDT_RES_CYCLE);
    ck_assert(r.nvisited == 2 && r.visited[0] == 2 && r.visited[1] == 3);
    fx_free(f);
}
END_TEST

START_TEST(corpus_multi_module)
{
    struct fx *f = fx_new();
    add(f, 1, AR "Manifest.exe");
    add(f, 2, AR "MyModel.netmodule");
    fx_view(f);
    const char *n = "AsmResolver.DotNet.TestCases.MultiModules.Secondary.MyModel";
    mdt_resolution r = expect_ok(f, 1, MDT_TOKEN(MDT_TABLE_TypeRef, 6), 2, n, 0, 0);
    ck_assert_uint_eq(r.token, 0x02000002);
    r = expect_ok(f, 1, MDT_TOKEN(MDT_TABLE_ExportedType, 1), 2, n, 0, 0);
    ck_assert_uint_eq(r.token, 0x02000002);
    ck_assert(!(r.flags & MDT_RES_HINT_MISMATCH));
    fx_free(f);
}
END_TEST

START_TEST(corpus_facade_versions)
{
    struct fx *f = fx_new();
    add(f, 1, AR "DifferentNetVersion.MainApp.dll");
    add(f, 2, AR "DifferentNetVersion.Library.dll");
    fx_view(f);
    mdt_resolution r = expect_ok(
        f, 1,
        token_named(f, 1, MDT_TABLE_MemberRef, "DifferentNetVersion.Library.MyClass::ThrowMe"), 2,
        "DifferentNetVersion.Library.MyClass::ThrowMe", 1, 0);
    ck_assert_uint_eq(r.token, 0x06000005);
    ck_assert(r.flags & MDT_RES_SIG_BY_NAME);
    fx_free(f);
}
END_TEST

START_TEST(corpus_nil_scope_via_exported_type)
{
    struct fx *f = fx_new();
    add(f, 1, AR "TypeRefNullScope_ExportedType.exe");
    fx_view(f);
    mdt_resolution r = expect_unres(f, 1, MDT_TOKEN(MDT_TABLE_TypeRef, 1), MDT_RES_NOT_LOADED);
    ck_assert_uint_eq(r.where_module, 1);
    ck_assert_uint_eq(r.where_token, MDT_TOKEN(MDT_TABLE_AssemblyRef, 1));
    mdt_image *img = open_any(f->set, MONO_45_DIR "/mscorlib.dll");
    mdt_module_desc d = {.id = 2, .image = img};
    ck_assert_int_eq(mdt_modset_add(f->set, &d, MDT_MODSET_OWN_IMAGE), 0);
    fx_view(f);
    expect_ok(f, 1, MDT_TOKEN(MDT_TABLE_TypeRef, 1), 2, "System.Object", 1, 1);
    fx_free(f);
}
END_TEST

START_TEST(corpus_module_and_nil_scope_current_module)
{
    struct fx *f = fx_new();
    add(f, 1, AR "TypeRefModuleScope.exe");
    add(f, 2, AR "TypeRefNullScope_CurrentModule.exe");
    fx_view(f);
    expect_ok(f, 1, MDT_TOKEN(MDT_TABLE_TypeRef, 2), 1, "SomeNamespace.SomeName", 0, 0);
    expect_ok(f, 2, MDT_TOKEN(MDT_TABLE_TypeRef, 2), 2, "SomeNamespace.SomeName", 0, 0);
    fx_free(f);
}
END_TEST

/* ---- the module set ------------------------------------------------------ */

START_TEST(modset_add_remove_lookup_order)
{
    struct fx *f = fx_new();
    mdt_module_info mi;
    size_t pos = 0;
    add_in(f, 7, "data/fwd/Final.dll", 1);
    add_in(f, 3, "data/fwd/Real.dll", 2);
    add_in(f, 5, "data/fwd/Client.exe", 0);
    mdt_module_desc dyn = {.id = 9, .appdomain = 1, .name = "Dynamic"};
    ck_assert_int_eq(mdt_modset_add(f->set, &dyn, 0), 0);
    ck_assert_int_eq(mdt_modset_add(f->set, &dyn, 0), MDT_EINVAL); /* duplicate ID */
    mdt_module_desc zero = {.id = 0};
    ck_assert_int_eq(mdt_modset_add(f->set, &zero, 0), MDT_EINVAL);
    fx_view(f);
    ck_assert_uint_eq(mdt_modview_count(f->v), 4);
    ck_assert_uint_eq(mdt_modview_generation(f->v), 4);
    /* Registration order, not ID order. */
    uintptr_t want[] = {7, 3, 5, 9};
    for (size_t i = 0; i < 4; i++) {
        ck_assert_int_eq(mdt_modview_module(&mi, f->v, i), 0);
        ck_assert_uint_eq(mi.id, want[i]);
        ck_assert_uint_eq(mi.index, i);
    }
    ck_assert_int_eq(mdt_modview_lookup(&mi, f->v, 3), 0);
    ck_assert_str_eq(mi.name, "Real.dll");
    ck_assert(mi.is_manifest && mi.manifest == 3);
    ck_assert_str_eq(mi.identity.name, "Real");
    ck_assert(mi.identity.has_token);
    ck_assert_int_eq(mdt_modview_lookup(&mi, f->v, 9), 0);
    ck_assert(!mi.image && !mi.is_manifest && !strcmp(mi.name, "Dynamic"));
    /* Domain 1 with the shared ones: 7, 5, 9. */
    uintptr_t d1[] = {7, 5, 9};
    for (size_t i = 0; i < 3; i++) {
        ck_assert_int_eq(mdt_modview_next(&mi, f->v, 1, true, &pos), 0);
        ck_assert_uint_eq(mi.id, d1[i]);
    }
    ck_assert_int_eq(mdt_modview_next(&mi, f->v, 1, true, &pos), MDT_ITEROVER);
    pos = 0;
    ck_assert_int_eq(mdt_modview_next(&mi, f->v, 2, false, &pos), 0);
    ck_assert_uint_eq(mi.id, 3);
    ck_assert_int_eq(mdt_modview_next(&mi, f->v, 2, false, &pos), MDT_ITEROVER);
    /* Remove: the old view still sees it, a new one does not. */
    mdt_modview *old = mdt_modset_acquire(f->set);
    ck_assert_int_eq(mdt_modset_remove(f->set, 3), 0);
    ck_assert_int_eq(mdt_modset_remove(f->set, 3), MDT_ENOTFOUND);
    fx_view(f);
    ck_assert_int_eq(mdt_modview_lookup(&mi, f->v, 3), MDT_ENOTFOUND);
    ck_assert_int_eq(mdt_modview_lookup(&mi, old, 3), 0);
    ck_assert_str_eq(mi.identity.name, "Real");
    ck_assert_uint_eq(mdt_modset_reclaim(f->set), 1);
    mdt_modview_release(old);
    ck_assert_uint_eq(mdt_modset_reclaim(f->set), 0);
    ck_assert_int_eq(mdt_modview_module(&mi, f->v, 1), 0);
    ck_assert_uint_eq(mi.id, 5);
    fx_free(f);
}
END_TEST

/* Issue 16: snapshots retired while readers acquire views without pause
 * are still freed. Two threads acquire and release views in a loop that
 * never stops while this one changes the set 3,000 times; after each
 * change the snapshots still held (mdt_modset_reclaim) stay few: at most
 * one per reader holding a view, plus the two epochs a retired snapshot
 * waits for. */
struct spin_readers {
    mdt_modset *set;
    _Atomic int stop;
    _Atomic unsigned long acquired;
};

static void *spin_reader(void *arg)
{
    struct spin_readers *r = arg;
    unsigned long n = 0;
    while (!atomic_load_explicit(&r->stop, memory_order_relaxed)) {
        mdt_modview *v = mdt_modset_acquire(r->set);
        n += mdt_modview_count(v) + 1;
        mdt_modview_release(v);
    }
    atomic_fetch_add(&r->acquired, n);
    return NULL;
}

START_TEST(retired_snapshots_bounded_under_constant_readers)
{
    struct fx *f = fx_new();
    struct spin_readers r = {f->set, 0, 0};
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, spin_reader, &r), 0);
    size_t most = 0;
    for (uintptr_t i = 1; i <= 3000; i++) {
        mdt_module_desc d = {.id = i, .name = "M"};
        ck_assert_int_eq(mdt_modset_add(f->set, &d, 0), 0);
        if (i > 1)
            ck_assert_int_eq(mdt_modset_remove(f->set, i - 1), 0);
        size_t held = mdt_modset_reclaim(f->set);
        if (held > most)
            most = held;
    }
    atomic_store(&r.stop, 1);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    ck_assert_uint_gt(atomic_load(&r.acquired), 3000);
    ck_assert_msg(most <= 6, "up to %zu retired snapshots held at once", most);
    /* With the readers gone, two reclaims free everything retired. */
    mdt_modset_reclaim(f->set);
    ck_assert_uint_eq(mdt_modset_reclaim(f->set), 0);
    fx_free(f);
}
END_TEST

START_TEST(modset_add_many_all_or_nothing)
{
    struct fx *f = fx_new();
    char p1[1024], p2[1024];
    mdt_image *a = open_any(f, src_path(p1, sizeof p1, "data/fwd/Real.dll"));
    mdt_image *b = open_any(f, src_path(p2, sizeof p2, "data/fwd/Final.dll"));
    mdt_module_desc d[3] = {{.id = 1, .image = a}, {.id = 2, .image = b}, {.id = 1}};
    ck_assert_int_eq(mdt_modset_add_many(f->set, d, 3, 0), MDT_EINVAL);
    ck_assert_uint_eq(mdt_modset_generation(f->set), 0);
    ck_assert_int_eq(mdt_modset_add_many(f->set, d, 2, 0), 0);
    ck_assert_uint_eq(mdt_modset_generation(f->set), 1);
    fx_view(f);
    ck_assert_uint_eq(mdt_modview_count(f->v), 2);
    ck_assert_int_eq(mdt_modset_add_many(f->set, &d[1], 1, 0), MDT_EINVAL); /* already there */
    mdt_module_info mi;
    ck_assert_int_eq(mdt_modview_module(&mi, f->v, 1), 0);
    ck_assert_uint_eq(mi.id, 2);
    fx_free(f);
}
END_TEST

START_TEST(modset_change_invalidates_cache)
{
    struct fx *f = fx_new();
    add(f, 1, "data/fwd/Client.exe");
    add(f, 2, "data/fwd/v1/Lib.dll");
    fx_view(f);
    uint32_t w = typeref(f, 1, "Fwd.Widget");
    expect_ok(f, 1, w, 2, "Fwd.Widget", 1, 0);
    ck_assert(resolve(f, 1, w).flags & MDT_RES_FROM_CACHE);
    ck_assert_int_eq(mdt_modset_remove(f->set, 2), 0);
    fx_view(f);
    expect_unres(f, 1, w, MDT_RES_NOT_LOADED);
    add(f, 3, "data/fwd/v2/Lib.dll");
    add(f, 4, "data/fwd/Real.dll");
    fx_view(f);
    expect_ok(f, 1, w, 4, "Fwd.Widget", 2, 1);
    fx_free(f);
}
END_TEST

START_TEST(modset_appdomains_limit_binding)
{
    struct fx *f = fx_new();
    add_in(f, 1, "data/fwd/Client.exe", 10);
    add_in(f, 2, "data/fwd/v1/Lib.dll", 20);
    fx_view(f);
    uint32_t w = typeref(f, 1, "Fwd.Widget");
    mdt_resolution r = expect_unres(f, 1, w, MDT_RES_NOT_LOADED);
    ck_assert_uint_eq(r.instead_module, 2); /* there, but in another AppDomain */
    add_in(f, 3, "data/fwd/v1/Lib.dll", 0); /* shared: visible everywhere */
    fx_view(f);
    expect_ok(f, 1, w, 3, "Fwd.Widget", 1, 0);
    add_in(f, 4, "data/fwd/v1/Lib.dll", 10); /* same domain, registered later */
    fx_view(f);
    expect_ok(f, 1, w, 3, "Fwd.Widget", 1, 0);
    fx_free(f);
}
END_TEST

/* ---- the module set as a mirror of a runtime-ID map -------------------- */

static mdt_idmap_module_info mod_info(const mdt_image *img, uintptr_t domain, uintptr_t assembly,
                                      const char *path)
{
    mdt_idmap_module_info mi = {
        .image = img, .appdomain = domain, .assembly = assembly, .path = path};
    return mi;
}

/* The profiler's path from a logged TypeRef to a ClassID, without the
 * runtime: the map learns loads and unloads, the set mirrors its modules
 * under their ModuleIDs, resolution finds (module, TypeDef), the map's
 * reverse index finds the class. */
START_TEST(mirror_follows_the_idmap)
{
    struct fx *f = fx_new();
    char p[4][1024];
    const char *rel[4] = {"data/fwd/Client.exe", "data/fwd/v1/Lib.dll", "data/fwd/v2/Lib.dll",
                          "data/fwd/Real.dll"};
    mdt_image *img[4];
    for (int i = 0; i < 4; i++)
        img[i] = open_any(f, src_path(p[i], sizeof p[i], rel[i]));
    mdt_idmap *map;
    ck_assert_int_eq(mdt_idmap_new(&map, NULL), 0);
    const uintptr_t client = 0x7000, lib = 0x7100, real = 0x7200, dom = 0xd0;
    mdt_idmap_module_info mi = mod_info(img[0], dom, 0xa0, p[0]);
    ck_assert_int_eq(mdt_idmap_module_load(map, client, &mi, 10), MDT_IDMAP_APPLIED);
    mi = mod_info(img[1], dom, 0xa1, p[1]);
    ck_assert_int_eq(mdt_idmap_module_load(map, lib, &mi, 11), MDT_IDMAP_APPLIED);

    ck_assert_int_eq(mdt_modset_mirror(f->set, map), 0);
    uint64_t g = mdt_modset_generation(f->set);
    ck_assert_uint_eq(g, 1); /* both modules in one change */
    ck_assert_int_eq(mdt_modset_mirror(f->set, map), 0);
    ck_assert_uint_eq(mdt_modset_generation(f->set), g); /* nothing changed, no snapshot */
    fx_view(f);
    ck_assert_uint_eq(mdt_modview_count(f->v), 2);
    mdt_module_info info;
    ck_assert_int_eq(mdt_modview_lookup(&info, f->v, lib), 0);
    ck_assert(info.image == img[1] && info.appdomain == dom);
    ck_assert_str_eq(info.path, p[1]);
    ck_assert_str_eq(info.identity.name, "Lib");

    /* TypeRef in Client -> TypeDef in Lib -> the ClassID the map knows. */
    uint32_t w = typeref(f, client, "Fwd.Widget");
    mdt_resolution r = expect_ok(f, client, w, lib, "Fwd.Widget", 1, 0);
    ck_assert_int_eq(mdt_idmap_typedef_loaded(map, r.module, r.token), 0);
    mdt_idmap_class_info ci = {
        .module = r.module, .token = r.token, .shape = MDT_IDMAP_SHAPE_TYPEDEF};
    ck_assert_int_eq(mdt_idmap_class_load(map, 0xc1a55, &ci, 12), MDT_IDMAP_APPLIED);
    uintptr_t cid = 0;
    uint64_t cgen = 0;
    ck_assert_int_eq(mdt_idmap_typedef_loaded(map, r.module, r.token), 1);
    ck_assert_int_eq(mdt_idmap_class_find(&cid, &cgen, map, &ci), 0);
    ck_assert_uint_eq(cid, 0xc1a55);
    ck_assert_uint_eq(cgen, 12);
    /* A class load is not a module change: still no new snapshot. */
    ck_assert_int_eq(mdt_modset_mirror(f->set, map), 0);
    ck_assert_uint_eq(mdt_modset_generation(f->set), g);

    /* Lib v1 unloads; a late, older enumeration item cannot bring it back. */
    mdt_modview *before = mdt_modset_acquire(f->set);
    ck_assert_int_eq(mdt_idmap_module_unload(map, lib, 20), MDT_IDMAP_APPLIED);
    mi = mod_info(img[1], dom, 0xa1, p[1]);
    ck_assert_int_eq(mdt_idmap_module_load(map, lib, &mi, 15), MDT_IDMAP_SUPERSEDED);
    ck_assert_int_eq(mdt_modset_mirror(f->set, map), 0);
    fx_view(f);
    ck_assert_uint_eq(mdt_modview_count(f->v), 1);
    expect_unres(f, client, w, MDT_RES_NOT_LOADED);
    ck_assert_int_eq(mdt_modview_lookup(&info, before, lib), 0); /* the old view keeps it */
    mdt_modview_release(before);
    ck_assert_int_eq(mdt_idmap_class_find(&cid, &cgen, map, &ci), MDT_ENOTFOUND);

    /* The runtime reuses the ModuleID for Lib v2 and loads Real: tier 2
     * through v2's forwarder, in the new incarnation. */
    mi = mod_info(img[2], dom, 0xa2, p[2]);
    ck_assert_int_eq(mdt_idmap_module_load(map, lib, &mi, 21), MDT_IDMAP_APPLIED);
    mi = mod_info(img[3], dom, 0xa3, p[3]);
    ck_assert_int_eq(mdt_idmap_module_load(map, real, &mi, 22), MDT_IDMAP_APPLIED);
    ck_assert_int_eq(mdt_modset_mirror(f->set, map), 0);
    fx_view(f);
    ck_assert_uint_eq(mdt_modview_count(f->v), 3);
    ck_assert_int_eq(mdt_modview_lookup(&info, f->v, lib), 0);
    ck_assert(info.image == img[2]);
    expect_ok(f, client, w, real, "Fwd.Widget", 2, 1);

    /* The same ModuleID with another image, without an unload event (a
     * newer conflicting load): replaced in one change, never missing. */
    g = mdt_modset_generation(f->set);
    mi = mod_info(img[1], dom, 0xa4, p[1]);
    ck_assert_int_eq(mdt_idmap_module_load(map, lib, &mi, 23), MDT_IDMAP_APPLIED);
    ck_assert_int_eq(mdt_modset_mirror(f->set, map), 0);
    ck_assert_uint_eq(mdt_modset_generation(f->set), g + 1);
    fx_view(f);
    ck_assert_int_eq(mdt_modview_lookup(&info, f->v, lib), 0);
    ck_assert(info.image == img[1]);
    expect_ok(f, client, w, lib, "Fwd.Widget", 1, 0);

    /* A module the caller added by hand belongs to nobody: the mirror
     * removes it. AppDomain shutdown empties the set. */
    mdt_module_desc extra = {.id = 0x9999, .image = img[3]};
    ck_assert_int_eq(mdt_modset_add(f->set, &extra, 0), 0);
    mi = mod_info(img[3], dom, 0xa3, p[3]);
    ck_assert_int_eq(mdt_idmap_module_load(map, real, &mi, 24), MDT_IDMAP_DUPLICATE);
    ck_assert_int_eq(mdt_idmap_appdomain_shutdown(map, dom, 30), MDT_IDMAP_APPLIED);
    ck_assert_int_eq(mdt_modset_mirror(f->set, map), 0);
    fx_view(f);
    ck_assert_uint_eq(mdt_modview_count(f->v), 0);

    ck_assert_int_eq(mdt_modset_mirror(NULL, map), MDT_EINVAL);
    ck_assert_int_eq(mdt_modset_mirror(f->set, NULL), MDT_EINVAL);
    mdt_idmap_free(map);
    fx_free(f);
}
END_TEST

/* The map's assembly tags group a .netmodule with its manifest. */
START_TEST(mirror_groups_netmodules_by_assembly)
{
    struct fx *f = fx_new();
    char p1[1024], p2[1024];
    mdt_image *mm = open_any(f, src_path(p1, sizeof p1, "data/resolve/multi/MM.dll"));
    mdt_image *part = open_any(f, src_path(p2, sizeof p2, "data/resolve/multi/MMPart.netmodule"));
    mdt_idmap *map;
    ck_assert_int_eq(mdt_idmap_new(&map, NULL), 0);
    mdt_idmap_module_info a = mod_info(part, 1, 0xa5, NULL), b = mod_info(mm, 1, 0xa5, NULL);
    ck_assert_int_eq(mdt_idmap_module_load(map, 0x20, &a, 1), MDT_IDMAP_APPLIED);
    ck_assert_int_eq(mdt_idmap_module_load(map, 0x10, &b, 2), MDT_IDMAP_APPLIED);
    ck_assert_int_eq(mdt_modset_mirror(f->set, map), 0);
    fx_view(f);
    mdt_module_info info;
    ck_assert_int_eq(mdt_modview_lookup(&info, f->v, 0x20), 0);
    ck_assert(!info.is_manifest);
    ck_assert_uint_eq(info.manifest, 0x10);
    ck_assert_int_eq(mdt_modview_lookup(&info, f->v, 0x10), 0);
    ck_assert(info.is_manifest && info.manifest == 0x10);
    /* Assembly unload takes both. */
    ck_assert_int_eq(mdt_idmap_assembly_unload(map, 0xa5, 3), MDT_IDMAP_APPLIED);
    ck_assert_int_eq(mdt_modset_mirror(f->set, map), 0);
    fx_view(f);
    ck_assert_uint_eq(mdt_modview_count(f->v), 0);
    mdt_idmap_free(map);
    fx_free(f);
}
END_TEST

START_TEST(modset_update_replaces_in_one_change)
{
    struct fx *f = fx_new();
    char p1[1024], p2[1024];
    mdt_image *v1 = open_any(f, src_path(p1, sizeof p1, "data/fwd/v1/Lib.dll"));
    mdt_image *real = open_any(f, src_path(p2, sizeof p2, "data/fwd/Real.dll"));
    add(f, 1, "data/fwd/Client.exe");
    mdt_module_desc d = {.id = 2, .image = v1};
    ck_assert_int_eq(mdt_modset_update(f->set, NULL, 0, &d, 1, 0), 0);
    uint64_t g = mdt_modset_generation(f->set);
    /* Errors leave the set as it was. */
    uintptr_t none = 5, twice[2] = {2, 2}, two = 2;
    ck_assert_int_eq(mdt_modset_update(f->set, &none, 1, NULL, 0, 0), MDT_ENOTFOUND);
    ck_assert_int_eq(mdt_modset_update(f->set, twice, 2, NULL, 0, 0), MDT_EINVAL);
    ck_assert_int_eq(mdt_modset_update(f->set, NULL, 0, &d, 1, 0), MDT_EINVAL);
    ck_assert_int_eq(mdt_modset_update(f->set, NULL, 1, NULL, 0, 0), MDT_EINVAL);
    ck_assert_uint_eq(mdt_modset_generation(f->set), g);
    /* Module 2 becomes Real.dll under the same ID: one snapshot. */
    mdt_module_desc r = {.id = 2, .image = real};
    ck_assert_int_eq(mdt_modset_update(f->set, &two, 1, &r, 1, 0), 0);
    ck_assert_uint_eq(mdt_modset_generation(f->set), g + 1);
    fx_view(f);
    ck_assert_uint_eq(mdt_modview_count(f->v), 2);
    ck_assert(image_of(f, 2) == real);
    fx_free(f);
}
END_TEST

START_TEST(resolve_bad_arguments)
{
    struct fx *f = fx_new();
    add(f, 1, "data/fwd/Client.exe");
    fx_view(f);
    mdt_resolution r;
    ck_assert_int_eq(mdt_typeref_resolve(NULL, &r, NULL, f->v, 99, 0x01000001, NULL),
                     MDT_ENOTFOUND);
    ck_assert_int_eq(mdt_typeref_resolve(NULL, &r, NULL, f->v, 1, 0x06000001, NULL), MDT_EINVAL);
    ck_assert_int_eq(mdt_typeref_resolve(NULL, &r, NULL, f->v, 1, 0x01000000, NULL), MDT_EINVAL);
    ck_assert_int_eq(mdt_typeref_resolve(NULL, &r, NULL, f->v, 1, 0x01FFFFFF, NULL), MDT_EINVAL);
    ck_assert_int_eq(mdt_token_resolve(NULL, &r, NULL, f->v, 1, 0x70000001, NULL), MDT_EINVAL);
    ck_assert_int_eq(mdt_typeref_resolve(NULL, &r, NULL, f->v, 1, 0x02000002, NULL), 0);
    ck_assert(r.resolved && r.module == 1 && r.token == 0x02000002);
    ck_assert_str_eq(mdt_resolution_reason_name(MDT_RES_HOP_LIMIT), "hop-limit");
    fx_free(f);
}
END_TEST

/* ---- the Mono 4.5 framework --------------------------------------------- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int add_dir(struct fx *f, const char *dir, uintptr_t *next)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char *names[512];
    int n = 0;
    ck_assert_msg(d != NULL, "%s missing (install mono-runtime)", dir);
    while ((e = readdir(d)) && n < 512) {
        size_t l = strlen(e->d_name);
        if (l > 4 && !strcmp(e->d_name + l - 4, ".dll"))
            names[n++] = talloc_strdup(f->ctx, e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, cmp_str);
    for (int i = 0; i < n; i++) {
        char p[1024];
        mdt_image *img;
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        if (mdt_image_open_file(f->set, &img, p, 0))
            continue;
        mdt_module_desc desc = {.id = (*next)++, .image = img, .path = p};
        ck_assert_int_eq(mdt_modset_add(f->set, &desc, MDT_MODSET_OWN_IMAGE), 0);
    }
    return n;
}

START_TEST(mono_framework_typerefs)
{
    struct fx *f = fx_new();
    uintptr_t next = 1;
    add_dir(f, MONO_45_DIR, &next);
    add_dir(f, MONO_45_DIR "/Facades", &next);
    fx_view(f);
    size_t total = 0, unresolved = 0, exported_n = 0;
    for (size_t i = 0; i < mdt_modview_count(f->v); i++) {
        mdt_module_info mi;
        mdt_modview_module(&mi, f->v, i);
        for (uint32_t k = 1; k <= mdt_table_rows(mi.image, MDT_TABLE_TypeRef); k++) {
            mdt_resolution r = resolve(f, mi.id, MDT_TOKEN(MDT_TABLE_TypeRef, k));
            total++;
            if (r.resolved)
                continue;
            /* Only references to assemblies outside the set (Mono.Cecil). */
            unresolved++;
            ck_assert_int_eq(r.reason, MDT_RES_NOT_LOADED);
            mdt_identity id;
            ck_assert_int_eq(mdt_assemblyref_identity(&id, image_of(f, r.where_module),
                                                      r.where_token & 0xFFFFFF),
                             0);
            ck_assert_str_eq(id.name, "Mono.Cecil");
        }
        for (uint32_t k = 1; k <= mdt_table_rows(mi.image, MDT_TABLE_ExportedType); k++) {
            mdt_resolution r = resolve(f, mi.id, MDT_TOKEN(MDT_TABLE_ExportedType, k));
            ck_assert_msg(r.resolved, "%s ExportedType %u: %s", mi.name, k,
                          mdt_resolution_reason_name(r.reason));
            exported_n++;
        }
    }
    ck_assert_uint_gt(total, 20000);
    ck_assert_uint_gt(exported_n, 1000);
    ck_assert_uint_lt(unresolved, 200);
    fx_free(f);
}
END_TEST

MDT_TESTS_NEED_MONO

Suite *suite(void);
Suite *suite(void)
{
    Suite *s = suite_create("typeref");
    TCase *t = tcase_create("fixtures");
    tcase_add_test(t, fwd_client_through_lib_v2_forwarders);
    tcase_add_test(t, fwd_client_with_lib_v1);
    tcase_add_test(t, chain_three_and_two_hops);
    tcase_add_test(t, chain_hop_limit);
    tcase_add_test(t, chain_trace_lists_hops);
    tcase_add_test(t, chain_memberrefs_on_generic_instances);
    tcase_add_test(t, chain_forwarder_target_missing);
    tcase_add_test(t, chain_tier3b_any_assembly_with_the_type);
    tcase_add_test(t, cycles_two_three_self);
    tcase_add_test(t, versions_three_tiers);
    tcase_add_test(t, versions_strict_stops_after_tier_two);
    tcase_add_test(t, versions_bind_assemblyref);
    tcase_add_test(t, multi_moduleref_scopes);
    tcase_add_test(t, multi_module_missing_or_dynamic);
    tcase_add_test(t, multi_data_fixtures);
    tcase_add_test(t, nest_four_deep_across_assemblies);
    tcase_add_test(t, missing_types_and_assemblies);
    tcase_add_test(t, nil_and_module_scopes);
    tcase_add_test(t, reference_scopes);
    tcase_add_test(t, shell_array_methods_and_other_assembly);
    suite_add_tcase(s, t);
    t = tcase_create("corpus");
    tcase_add_test(t, corpus_generic_forwarder);
    tcase_add_test(t, corpus_nested_forwarders);
    tcase_add_test(t, corpus_forwarder_loop);
    tcase_add_test(t, corpus_multi_module);
    tcase_add_test(t, corpus_facade_versions);
    tcase_add_test(t, corpus_nil_scope_via_exported_type);
    tcase_add_test(t, corpus_module_and_nil_scope_current_module);
    suite_add_tcase(s, t);
    t = tcase_create("modset");
    tcase_add_test(t, modset_add_remove_lookup_order);
    tcase_add_test(t, modset_add_many_all_or_nothing);
    tcase_add_test(t, retired_snapshots_bounded_under_constant_readers);
    tcase_add_test(t, modset_change_invalidates_cache);
    tcase_add_test(t, modset_update_replaces_in_one_change);
    tcase_add_test(t, mirror_follows_the_idmap);
    tcase_add_test(t, mirror_groups_netmodules_by_assembly);
    tcase_add_test(t, modset_appdomains_limit_binding);
    tcase_add_test(t, resolve_bad_arguments);
    suite_add_tcase(s, t);
    t = tcase_create("framework");
    tcase_set_timeout(t, 300);
    tcase_add_test(t, mono_framework_typerefs);
    suite_add_tcase(s, t);
    return s;
}
