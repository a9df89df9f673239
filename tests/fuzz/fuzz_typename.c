/* libFuzzer harness for the type-name lookup behind mdinspect's `type
 * NAME`, `token NAME`, `Type::member` arguments and the `types`/`find`
 * globs (mdinspect/index.c): the input's first line is taken as a name
 * (metadata names with '+' or '/' nesting and arity suffixes, printed
 * names like `Dictionary<TKey,TValue>.Enumerator`, `Outer+Generic<>`,
 * arrays and other suffixes, any case), its second line as a glob. They
 * go through every rule of mdi_types_named in each module, the lookup
 * over all modules, the argument parsers (mdi_arg_type, mdi_arg_tokens,
 * which also take literal tokens and Type::member), the exact-key search,
 * glob matching against every type of the index, and the natural order
 * against every key. The session (data/Everything.dll, data/Shell.dll,
 * data/Sigs.dll: nested generics, names like Lead`01 and Tick<>) is
 * opened once; lookups do not change it.
 *
 * Oracles besides the sanitizers: every TypeDef a lookup answers is in
 * its module; the exact-key search finds a type whose key is the name;
 * the natural order is antisymmetric. Built for libFuzzer with
 * --enable-fuzzing, and always as a replayer (tests/fuzz/replay.c) that
 * `make check` runs over tests/fuzz/corpus/typename/. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <talloc.h>

#include <mdtools/members.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>

#include "cmd.h"
#include "index.h"
#include "paths.h"
#include "state.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_INPUT 1024

static mdi_state *st;
static volatile uint64_t sink;

static void init(void)
{
    static const char *const files[] = {"data/Everything.dll", "data/Shell.dll", "data/Sigs.dll"};
    FILE *devnull;
    if (st)
        return;
    devnull = fopen("/dev/null", "w");
    if (!devnull || !(st = mdi_state_new(NULL, devnull, devnull, MDI_FMT_TEXT)))
        abort();
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[1024];
        if (!mdi_state_open(st, src_path(path, sizeof path, files[i]), 0, NULL)) {
            fprintf(stderr,
                    "fuzz_typename: cannot open %s (MDT_TOP_SRCDIR names the source tree)\n", path);
            abort();
        }
    }
    mdi_state_use(st, st->mods[0]);
}

static void check_typedefs(const mdi_module *m, const uint32_t *toks, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (MDT_TOKEN_TABLE(toks[i]) != MDT_TABLE_TypeDef || !MDT_TOKEN_RID(toks[i]) ||
            MDT_TOKEN_RID(toks[i]) > mdt_table_rows(m->img, MDT_TABLE_TypeDef)) {
            fprintf(stderr, "fuzz_typename: \"%s\" named 0x%08x, no TypeDef of %s\n", name, toks[i],
                    m->name);
            abort();
        }
}

/* Every member's token and name length, through the library's walk. */
static uint64_t count_members(const mdt_image *img, uint32_t type)
{
    mdt_members it = MDT_MEMBERS_INIT;
    uint32_t token;
    const char *name;
    uint64_t c = 0;
    int e;
    if (mdt_members_init(&it, img, type, MDT_MEMBERS_ALL) == 0)
        while ((e = mdt_members_next(&token, &name, &it)) != MDT_ITEROVER)
            c += e ? 1 : token + strlen(name);
    mdt_error_clear();
    return c;
}

static void lookups(void *mem, const char *name)
{
    size_t n;
    uint32_t *toks, tok;
    mdi_module **mods, *mod;
    for (size_t i = 0; i < st->nmods; i++) {
        mdi_module *m = st->mods[i];
        uint32_t found;
        toks = mdi_types_named(mem, m, name, &n);
        check_typedefs(m, toks, n, name);
        for (size_t k = 0; k < n && k < 4; k++) {
            uint64_t c = count_members(m->img, toks[k]);
            sink += c + strlen(mdi_kind_name(m->img, toks[k]));
        }
        if ((found = mdi_index_find(m, name))) {
            const mdi_index *ix = mdi_index_of(m);
            bool ok = false;
            for (size_t k = 0; ix && k < ix->ntypes; k++)
                ok |= ix->types[k].token == found && strcmp(ix->types[k].key, name) == 0;
            if (!ok) {
                fprintf(stderr, "fuzz_typename: \"%s\" found 0x%08x, whose key differs\n", name,
                        found);
                abort();
            }
        }
    }
    n = mdi_types_everywhere(st, mem, name, &mods, &toks);
    for (size_t i = 0; i < n; i++)
        check_typedefs(mods[i], &toks[i], 1, name);
    if (mdi_arg_type(st, name, &mod, &tok) == 0)
        sink += tok;
    if (mdi_arg_tokens(st, mem, name, &toks, &n) == 0)
        sink += n;
}

static void globs(const char *glob, const char *name)
{
    sink += mdi_has_glob(glob) + mdi_glob(glob, name);
    for (size_t i = 0; i < st->nmods; i++) {
        const mdi_index *ix = mdi_index_of(st->mods[i]);
        for (size_t k = 0; ix && k < ix->ntypes; k++) {
            const mdi_typeent *t = &ix->types[k];
            int a = mdi_natural_cmp(name, t->key), b = mdi_natural_cmp(t->key, name);
            if ((a < 0 && b <= 0) || (a > 0 && b >= 0) || (a == 0 && b != 0)) {
                fprintf(stderr, "fuzz_typename: natural order of \"%s\" and \"%s\": %d, %d\n", name,
                        t->key, a, b);
                abort();
            }
            sink += mdi_type_matches(t, glob) + mdi_key_simple(t);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    void *mem;
    char *name, *glob, *nl;
    if (size > MAX_INPUT)
        return 0;
    init();
    mem = talloc_new(NULL);
    name = talloc_strndup(mem, (const char *)data, size); /* up to a NUL */
    glob = name;
    if ((nl = strchr(name, '\n'))) {
        *nl = '\0';
        glob = nl + 1;
        if ((nl = strchr(glob, '\n')))
            *nl = '\0';
    }
    lookups(mem, name);
    globs(glob, name);
    talloc_free(mem);
    mdi_sigint = 0;
    return 0;
}
