/* bench_sig_md: the mdtools side of the signature benchmark (bench/sig/
 * README.md). Opens every image named on the command line and decodes and
 * prints, in doc/names.md's full style, every MethodDef and MemberRef signature,
 * TypeSpec and MethodSpec (ECMA-335 II.23.2) through the public API:
 * mdt_sig_of_token + mdt_sig_name, with an mdt_name_cache per image (each
 * TypeDef/TypeRef name built once, as libmono's class cache does). Timed
 * from the first open to the last name, in bench_sig_md_work().
 *
 * Usage: bench_sig_md [-p] [-b | -n | -a] file...
 *   -p  also write every name to stdout (for comparing the sides);
 *   --pool  the scratch context a talloc pool of 1 MiB (a caller's choice:
 *       its blocks then come from the pool, not malloc);
 *   -n  the one-call variant: mdt_sig_name_of_token, the tree on the
 *       library's stack and the name the only allocation (issue 28);
 *   -a  the arena variant: mdt_sig_name_of_token_arena, the names printed
 *       into an mdt_name_arena (emptied where the others free their
 *       scratch context), no allocation per signature (issue 28);
 *   -b  the buffer variant: mdt_sig_of_token_buf into a stack arena and
 *       mdt_sig_name_buf into a stack buffer, no allocation per signature
 *       (the talloc calls are the fallback for a tree or name too large).
 *   --passes N  steady state (bench/srm): one untimed warm-up pass, then N
 *       passes (each opens, decodes and frees everything); the report adds
 *       each pass's process CPU and wall time (pass_cpu_ns=a,b,...). */
#include <getopt.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <talloc.h>
#include <unistd.h>

#include <mdtools/mdtools.h>

#include "sigbench.h"

static int print_names, buffers, one_call, pool, in_arena;
static mdt_name_arena *names; /* -a */
static mdt_name_opts opts;    /* full style, with the current image's cache */

static void one(void *ctx, const mdt_image *img, uint32_t token, uint64_t *count,
                struct sig_counts *c)
{
    mdt_sig s;
    char *name;
    (*count)++;
    if (in_arena) {
        const char *text;
        size_t len;
        if (mdt_sig_name_of_token_arena(names, &text, &len, img, token, &opts) != 0) {
            c->errors++;
            if (print_names)
                printf("%08x ERR\n", token);
            return;
        }
        c->bytes += len;
        if (print_names)
            printf("%08x %s\n", token, text);
        return;
    }
    if (buffers) {
        uint64_t arena[512];
        char buf[4096];
        size_t len;
        int e = mdt_sig_of_token_buf(arena, sizeof arena, &s, img, token);
        if (e == MDT_ENOMEM)
            e = mdt_sig_of_token(ctx, &s, img, token);
        if (!e && (e = mdt_sig_name_buf(buf, sizeof buf, &len, &s, &opts)) == MDT_ETRUNC &&
            (e = mdt_sig_name(ctx, &name, &s, &opts)) == 0)
            len = strlen(name);
        else
            name = buf;
        if (e) {
            c->errors++;
            if (print_names)
                printf("%08x ERR\n", token);
            return;
        }
        c->bytes += len;
        if (print_names)
            printf("%08x %s\n", token, name);
        return;
    }
    if (one_call ? mdt_sig_name_of_token(ctx, &name, img, token, &opts) != 0
                 : mdt_sig_of_token(ctx, &s, img, token) || mdt_sig_name(ctx, &name, &s, &opts)) {
        c->errors++;
        if (print_names)
            printf("%08x ERR\n", token);
        return;
    }
    c->bytes += strlen(name);
    if (print_names)
        printf("%08x %s\n", token, name);
}

/* Not static and not inlined: callgrind counts the instructions under it. */
void bench_sig_md_work(int n, char **files, struct sig_counts *c);
__attribute__((noinline)) void bench_sig_md_work(int n, char **files, struct sig_counts *c)
{
    void *root = talloc_new(NULL);
    static const struct {
        unsigned table;
        size_t field;
    } kinds[] = {
        {MDT_TABLE_MethodDef, offsetof(struct sig_counts, methoddefs)},
        {MDT_TABLE_MemberRef, offsetof(struct sig_counts, memberrefs)},
        {MDT_TABLE_TypeSpec, offsetof(struct sig_counts, typespecs)},
        {MDT_TABLE_MethodSpec, offsetof(struct sig_counts, methodspecs)},
    };
    for (int i = 0; i < n; i++) {
        mdt_image *img;
        if (mdt_image_open_file(root, &img, files[i], 0)) {
            c->errors++;
            continue;
        }
        c->files++;
        if (mdt_name_cache_new(img, &opts.cache, img, MDT_STYLE_FULL, 0)) {
            c->errors++;
            continue;
        }
        /* One scratch context, emptied every so often: names and trees
         * are dropped once printed. */
        void *tmp = pool ? talloc_pool(root, 1 << 20) : talloc_new(root);
        if (in_arena && !names && mdt_name_arena_new(root, &names, 0) != 0) {
            c->errors++;
            continue;
        }
        unsigned since = 0;
        for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
            uint64_t *count = (uint64_t *)((char *)c + kinds[k].field);
            uint32_t rows = mdt_table_rows(img, kinds[k].table);
            for (uint32_t rid = 1; rid <= rows; rid++) {
                one(tmp, img, MDT_TOKEN(kinds[k].table, rid), count, c);
                if (++since == 256) {
                    talloc_free_children(tmp);
                    mdt_name_arena_reset(names);
                    since = 0;
                }
            }
        }
        talloc_free(tmp);
    }
    talloc_free(root);
    names = NULL;
}

#define MAX_PASSES 1000

int main(int argc, char **argv)
{
    static const struct option longopts[] = {{"passes", required_argument, NULL, 'P'},
                                             {"pool", no_argument, NULL, 'Q'},
                                             {NULL, 0, NULL, 0}};
    struct sig_counts c = {0};
    long passes = 0;
    int opt;
    while ((opt = getopt_long(argc, argv, "pbna", longopts, NULL)) != -1) {
        if (opt == 'p')
            print_names = 1;
        else if (opt == 'b')
            buffers = 1;
        else if (opt == 'n')
            one_call = 1;
        else if (opt == 'a')
            in_arena = 1;
        else if (opt == 'Q')
            pool = 1;
        else if (opt == 'P' && (passes = strtol(optarg, NULL, 10)) >= 1 && passes <= MAX_PASSES)
            continue;
        else {
            fprintf(stderr,
                    "usage: bench_sig_md [-p] [-b | -n | -a] [--pool] [--passes N] file...\n");
            return 2;
        }
    }
    if (passes > 0) {
        /* Steady state: a warm-up pass, then N timed passes. */
        static uint64_t cpu[MAX_PASSES], wall[MAX_PASSES];
        bench_sig_md_work(argc - optind, argv + optind, &c);
        for (long p = 0; p < passes; p++) {
            memset(&c, 0, sizeof c);
            uint64_t w0 = sig_now_ns(CLOCK_MONOTONIC), c0 = sig_now_ns(CLOCK_PROCESS_CPUTIME_ID);
            bench_sig_md_work(argc - optind, argv + optind, &c);
            cpu[p] = sig_now_ns(CLOCK_PROCESS_CPUTIME_ID) - c0;
            wall[p] = sig_now_ns(CLOCK_MONOTONIC) - w0;
        }
        printf("side=%s files=%" PRIu64 " methoddefs=%" PRIu64 " memberrefs=%" PRIu64
               " typespecs=%" PRIu64 " methodspecs=%" PRIu64 " sigs=%" PRIu64 " errors=%" PRIu64
               " bytes=%" PRIu64 " passes=%ld pass_cpu_ns=",
               buffers    ? "mdtools-buf"
               : one_call ? "mdtools-one"
               : in_arena ? "mdtools-arena"
                          : "mdtools",
               c.files, c.methoddefs, c.memberrefs, c.typespecs, c.methodspecs,
               c.methoddefs + c.memberrefs + c.typespecs + c.methodspecs, c.errors, c.bytes,
               passes);
        for (long p = 0; p < passes; p++)
            printf("%s%" PRIu64, p ? "," : "", cpu[p]);
        printf(" pass_wall_ns=");
        for (long p = 0; p < passes; p++)
            printf("%s%" PRIu64, p ? "," : "", wall[p]);
        printf(" proc_cpu_ns=%" PRIu64 "\n", sig_now_ns(CLOCK_PROCESS_CPUTIME_ID));
        return 0;
    }
    uint64_t w0 = sig_now_ns(CLOCK_MONOTONIC), c0 = sig_now_ns(CLOCK_PROCESS_CPUTIME_ID);
    bench_sig_md_work(argc - optind, argv + optind, &c);
    uint64_t w1 = sig_now_ns(CLOCK_MONOTONIC), c1 = sig_now_ns(CLOCK_PROCESS_CPUTIME_ID);
    sig_report(buffers    ? "mdtools-buf"
               : one_call ? "mdtools-one"
               : in_arena ? "mdtools-arena"
                          : "mdtools",
               &c, w1 - w0, c1 - c0, 0);
    return 0;
}
