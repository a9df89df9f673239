/* bench_names_md: the mdtools side of bench/srm's token-to-name workload
 * (bench/srm/README.md). Reads `PATH TOKEN` lines (bench/batch/gen path)
 * before any timing, then per pass: opens each file on its first use (the
 * default open), gives each image an mdt_name_cache (TypeDef names built
 * once, as bench_srm keeps them per row), and turns every (file, MethodDef)
 * pair into its full name with mdt_token_name_buf, `Ns.Outer+Inner<T>::Name`,
 * the names `mdinspect batch` prints. bench_srm names does the same with
 * System.Reflection.Metadata; run.sh compares the names both print (-p).
 *
 * Usage: bench_names_md [-p] [--passes N] IN
 *   -p  print every name (one pass, nothing timed);
 *   --passes N  one untimed warm-up pass, then N timed passes (each opens
 *       and frees every image it uses); without it, one timed pass. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <talloc.h>

#include <mdtools/mdtools.h>

#define MAX_PASSES 1000

struct pairs {
    char **paths; /* distinct, in order of first use */
    size_t npaths;
    uint32_t *file, *token;
    size_t n;
};

static uint64_t now_ns(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The input, parsed once: a path's index by a linear search of the paths
 * seen (gen's lines name at most a few hundred files). Not timed. */
static int read_pairs(void *ctx, struct pairs *p, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t cap = 1024, pcap = 64;
    p->file = talloc_array(ctx, uint32_t, cap);
    p->token = talloc_array(ctx, uint32_t, cap);
    p->paths = talloc_array(ctx, char *, pcap);
    if (!p->file || !p->token || !p->paths) {
        fclose(f);
        return -1;
    }
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        char *sp = strrchr(line, ' ');
        if (!sp || sp == line)
            continue;
        *sp = 0;
        size_t k;
        for (k = 0; k < p->npaths && strcmp(p->paths[k], line) != 0; k++)
            ;
        if (k == p->npaths) {
            if (p->npaths == pcap && !(p->paths = talloc_realloc(ctx, p->paths, char *, pcap *= 2)))
                break;
            if (!(p->paths[p->npaths] = talloc_strdup(ctx, line)))
                break;
            p->npaths++;
        }
        if (p->n == cap) {
            cap *= 2;
            if (!(p->file = talloc_realloc(ctx, p->file, uint32_t, cap)) ||
                !(p->token = talloc_realloc(ctx, p->token, uint32_t, cap)))
                break;
        }
        p->file[p->n] = (uint32_t)k;
        p->token[p->n++] = (uint32_t)strtoul(sp + 1, NULL, 16);
    }
    fclose(f);
    return p->file && p->token && p->paths ? 0 : -1;
}

struct counts {
    uint64_t files, names, errors, bytes;
};

/* Not static and not inlined: callgrind counts the instructions under it. */
void bench_names_md_work(const struct pairs *p, int print, struct counts *c);
__attribute__((noinline)) void bench_names_md_work(const struct pairs *p, int print,
                                                   struct counts *c)
{
    void *pass = talloc_new(NULL);
    mdt_image **imgs = talloc_zero_array(pass, mdt_image *, p->npaths);
    mdt_name_cache **caches = talloc_zero_array(pass, mdt_name_cache *, p->npaths);
    char *bad = talloc_zero_array(pass, char, p->npaths);
    for (size_t i = 0; i < p->n; i++) {
        uint32_t k = p->file[i];
        if (!imgs[k] && !bad[k]) {
            if (mdt_image_open_file(pass, &imgs[k], p->paths[k], 0) ||
                mdt_name_cache_new(imgs[k], &caches[k], imgs[k], MDT_STYLE_FULL, 0)) {
                bad[k] = 1;
                imgs[k] = NULL;
            } else {
                c->files++;
            }
        }
        char buf[4096];
        size_t len;
        mdt_name_opts opts = {MDT_STYLE_FULL, 0, MDT_NAME_OPTS_VERSION, NULL, caches[k]};
        c->names++;
        if (bad[k] || MDT_TOKEN_TABLE(p->token[i]) != MDT_TABLE_MethodDef ||
            mdt_token_name_buf(buf, sizeof buf, &len, imgs[k], p->token[i], &opts)) {
            c->errors++;
            continue;
        }
        c->bytes += len;
        if (print)
            printf("%s\n", buf);
    }
    talloc_free(pass);
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {{"passes", required_argument, NULL, 'P'},
                                             {NULL, 0, NULL, 0}};
    long passes = 0;
    int print = 0, opt;
    while ((opt = getopt_long(argc, argv, "p", longopts, NULL)) != -1) {
        if (opt == 'p')
            print = 1;
        else if (opt == 'P' && (passes = strtol(optarg, NULL, 10)) >= 1 && passes <= MAX_PASSES)
            continue;
        else
            goto usage;
    }
    if (optind != argc - 1)
        goto usage;
    void *ctx = talloc_new(NULL);
    struct pairs p = {0};
    if (read_pairs(ctx, &p, argv[optind])) {
        perror(argv[optind]);
        return 1;
    }
    struct counts c = {0};
    if (print) {
        bench_names_md_work(&p, 1, &c);
        talloc_free(ctx);
        return c.errors ? 1 : 0;
    }
    static uint64_t cpu[MAX_PASSES], wall[MAX_PASSES];
    long timed = passes ? passes : 1;
    if (passes)
        bench_names_md_work(&p, 0, &c); /* warm-up */
    for (long k = 0; k < timed; k++) {
        memset(&c, 0, sizeof c);
        uint64_t c0 = now_ns(CLOCK_PROCESS_CPUTIME_ID), w0 = now_ns(CLOCK_MONOTONIC);
        bench_names_md_work(&p, 0, &c);
        cpu[k] = now_ns(CLOCK_PROCESS_CPUTIME_ID) - c0;
        wall[k] = now_ns(CLOCK_MONOTONIC) - w0;
    }
    printf("side=mdtools mode=names files=%" PRIu64 " names=%" PRIu64 " errors=%" PRIu64
           " bytes=%" PRIu64 " passes=%ld pass_cpu_ns=",
           c.files, c.names, c.errors, c.bytes, timed);
    for (long k = 0; k < timed; k++)
        printf("%s%" PRIu64, k ? "," : "", cpu[k]);
    printf(" pass_wall_ns=");
    for (long k = 0; k < timed; k++)
        printf("%s%" PRIu64, k ? "," : "", wall[k]);
    printf(" proc_cpu_ns=%" PRIu64 "\n", now_ns(CLOCK_PROCESS_CPUTIME_ID));
    talloc_free(ctx);
    return c.errors ? 1 : 0;
usage:
    fprintf(stderr, "usage: bench_names_md [-p] [--passes N] IN\n");
    return 2;
}
