/* Replays the writer calls a real process made (issue 24): a trace that
 * libmdtools built with -DMDT_IDMAP_RECORD wrote (tokens/trace.c; the
 * trace format of tests/idmap), applied in its order to a fresh map made
 * with the recorded options, as many times as asked. Each run's CPU time
 * (the thread's clock, the parse and the map's free left out) is printed;
 * a recorded outcome that the replay does not reproduce is counted, and
 * makes the exit status 1. The calls are applied in run_calls(), which
 * callgrind can be told to count alone (--toggle-collect=run_calls), so
 * that the inclusive cost of mdt_idmap_class_load divided by its calls is
 * what one class load costs the map. The map is freed outside the timed
 * part; the last run's map statistics are printed with -s. -f FLAGS
 * adds mdt_idmap_set_flags() flags to the recorded ones (a trace recorded
 * before the profiler set MDT_IDMAP_NO_FUNCTION_FIND: -f 1). -o
 * "classes=N functions=N modules=N" replaces the recorded sizing hints
 * (any of them), to weigh a smaller first table against its growth: each
 * run also prints create_ms, the map's creation (and flags) alone.
 *
 * Usage: bench_replay [-n runs] [-s] [-f flags] [-o hints] trace */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mdtools/idmap.h>

enum ev {
    EV_MODULE_LOAD,
    EV_MODULE_UNLOAD,
    EV_DOMAIN_SHUTDOWN,
    EV_ASSEMBLY_UNLOAD,
    EV_CLASS_LOAD,
    EV_CLASS_UNLOAD,
    EV_FUNCTION_LOAD,
    EV_FUNCTION_UNLOAD,
    EV_CODE_ADD,
    EV_CODE_REMOVE,
    EV_RETIRE,
    EV_N
};

static const char *const ev_name[EV_N] = {"module_load",     "module_unload",   "domain_shutdown",
                                          "assembly_unload", "class_load",      "class_unload",
                                          "function_load",   "function_unload", "code_add",
                                          "code_remove",     "retire"};

struct call {
    enum ev ev;
    int expect; /* recorded outcome, -1 when none */
    uintptr_t id;
    uint64_t seq;
    uintptr_t a, b; /* code_add: size, function */
    size_t args;    /* offset of the arguments in the pool */
    union {
        mdt_idmap_module_info mi;
        mdt_idmap_class_info ci;
        mdt_idmap_function_info fi;
    } u;
};

static struct call *calls;
static size_t ncalls, capcalls;
static uintptr_t *pool;
static size_t npool, cappool;
static mdt_idmap_options opts;
static unsigned flags; /* mdt_idmap_set_flags() after creation */

static void *grow(void *p, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return p;
    *cap = *cap ? *cap * 2 : 1024;
    p = realloc(p, *cap * size);
    if (!p) {
        fprintf(stderr, "bench_replay: out of memory\n");
        exit(2);
    }
    return p;
}

static const char *kv(char **tok, int n, const char *key)
{
    size_t k = strlen(key);
    for (int i = 0; i < n; i++)
        if (strncmp(tok[i], key, k) == 0 && tok[i][k] == '=')
            return tok[i] + k + 1;
    return NULL;
}

static uint64_t num(const char *s)
{
    return s ? strtoull(s, NULL, 0) : 0;
}

/* A comma-separated list into the pool: its count. */
static uint32_t list(const char *s)
{
    uint32_t n = 0;
    while (s && *s) {
        char *end;
        uintptr_t v = (uintptr_t)strtoull(s, &end, 0);
        if (end == s)
            break;
        pool = grow(pool, &cappool, npool, sizeof *pool);
        pool[npool++] = v;
        n++;
        s = *end == ',' ? end + 1 : end;
    }
    return n;
}

static uint8_t prim(const char *s)
{
    if (!s)
        return 0;
    if (*s >= '0' && *s <= '9')
        return (uint8_t)strtoul(s, NULL, 0);
    return strcmp(s, "canon") == 0 ? MDT_IDMAP_PRIM_CANON : 0;
}

static int tokenize(char *p, char **tok, int max)
{
    int n = 0;
    while (*p && n < max) {
        while (*p == ' ' || *p == '\t' || *p == '\n')
            p++;
        if (!*p || *p == '#')
            break;
        if (*p == '"') {
            tok[n++] = ++p;
            while (*p && *p != '"')
                p++;
        } else {
            tok[n++] = p;
            while (*p && *p != ' ' && *p != '\t' && *p != '\n')
                p++;
        }
        if (*p)
            *p++ = '\0';
    }
    return n;
}

static void parse_line(char *line)
{
    char *tok[64];
    if (strncmp(line, "# options ", 10) == 0) {
        int n = tokenize(line + 10, tok, 64);
        opts.modules = num(kv(tok, n, "modules"));
        opts.classes = num(kv(tok, n, "classes"));
        opts.functions = num(kv(tok, n, "functions"));
        /* traces recorded while the flags were an option */
        flags |= (unsigned)num(kv(tok, n, "flags"));
        return;
    }
    if (strncmp(line, "# flags ", 8) == 0) {
        flags |= (unsigned)strtoul(line + 8, NULL, 0);
        return;
    }
    int n = tokenize(line, tok, 64);
    if (n == 0)
        return;
    if (strcmp(tok[0], "expect") == 0) {
        if (n == 3 && strcmp(tok[1], "outcome") == 0 && ncalls)
            calls[ncalls - 1].expect = strcmp(tok[2], "applied") == 0     ? MDT_IDMAP_APPLIED
                                       : strcmp(tok[2], "duplicate") == 0 ? MDT_IDMAP_DUPLICATE
                                                                          : MDT_IDMAP_SUPERSEDED;
        return;
    }
    if (n < 2)
        return;
    int e = 0;
    while (e < EV_N && strcmp(tok[1], ev_name[e]) != 0)
        e++;
    if (e == EV_N) {
        fprintf(stderr, "bench_replay: unknown call '%s'\n", tok[1]);
        exit(2);
    }
    calls = grow(calls, &capcalls, ncalls, sizeof *calls);
    struct call *c = &calls[ncalls++];
    memset(c, 0, sizeof *c);
    c->ev = (enum ev)e;
    c->expect = -1;
    c->seq = num(tok[0]);
    c->id = n > 2 ? (uintptr_t)num(tok[2]) : 0;
    c->args = npool;
    const char *v;
    switch (c->ev) {
    case EV_MODULE_LOAD:
        if ((v = kv(tok, n, "mvid")))
            for (int i = 0; i < 16 && v[0] && v[1]; i++, v += 2) {
                char b[3] = {v[0], v[1], 0};
                c->u.mi.mvid[i] = (uint8_t)strtoul(b, NULL, 16);
            }
        c->u.mi.appdomain = num(kv(tok, n, "domain"));
        c->u.mi.assembly = num(kv(tok, n, "assembly"));
        if ((v = kv(tok, n, "path")) && !(c->u.mi.path = strdup(v)))
            exit(2);
        break;
    case EV_CLASS_LOAD:
        c->u.ci.module = num(kv(tok, n, "module"));
        c->u.ci.token = (uint32_t)num(kv(tok, n, "typedef"));
        c->u.ci.prim = prim(kv(tok, n, "prim"));
        if ((v = kv(tok, n, "szarray")))
            c->u.ci.shape = MDT_IDMAP_SHAPE_SZARRAY;
        else if ((v = kv(tok, n, "ptr")))
            c->u.ci.shape = MDT_IDMAP_SHAPE_PTR;
        else if ((v = kv(tok, n, "byref")))
            c->u.ci.shape = MDT_IDMAP_SHAPE_BYREF;
        else if ((v = kv(tok, n, "array")))
            c->u.ci.shape = MDT_IDMAP_SHAPE_ARRAY;
        if (c->u.ci.shape == MDT_IDMAP_SHAPE_ARRAY) {
            list(v);
            c->u.ci.rank = (uint16_t)pool[--npool];
            c->u.ci.nargs = 1;
        } else if (v) {
            c->u.ci.nargs = list(v) ? 1 : 0;
        } else {
            c->u.ci.nargs = list(kv(tok, n, "args"));
        }
        break;
    case EV_FUNCTION_LOAD:
        c->u.fi.module = num(kv(tok, n, "module"));
        c->u.fi.token = (uint32_t)num(kv(tok, n, "methoddef"));
        c->u.fi.class_id = num(kv(tok, n, "class"));
        c->u.fi.nargs = list(kv(tok, n, "args"));
        break;
    case EV_CODE_ADD:
        c->a = n > 3 ? (uintptr_t)num(tok[3]) : 0;
        c->b = n > 4 ? (uintptr_t)num(tok[4]) : 0;
        break;
    default: break;
    }
}

/* The argument pointers, once the pool has stopped moving. */
static void fix_args(void)
{
    for (size_t i = 0; i < ncalls; i++) {
        struct call *c = &calls[i];
        if (c->ev == EV_CLASS_LOAD && c->u.ci.nargs)
            c->u.ci.args = pool + c->args;
        if (c->ev == EV_FUNCTION_LOAD && c->u.fi.nargs)
            c->u.fi.args = pool + c->args;
    }
}

static int apply(mdt_idmap *m, const struct call *c)
{
    switch (c->ev) {
    case EV_MODULE_LOAD: return mdt_idmap_module_load(m, c->id, &c->u.mi, c->seq);
    case EV_MODULE_UNLOAD: return mdt_idmap_module_unload(m, c->id, c->seq);
    case EV_DOMAIN_SHUTDOWN: return mdt_idmap_appdomain_shutdown(m, c->id, c->seq);
    case EV_ASSEMBLY_UNLOAD: return mdt_idmap_assembly_unload(m, c->id, c->seq);
    case EV_CLASS_LOAD: return mdt_idmap_class_load(m, c->id, &c->u.ci, c->seq);
    case EV_CLASS_UNLOAD: return mdt_idmap_class_unload(m, c->id, c->seq);
    case EV_FUNCTION_LOAD: return mdt_idmap_function_load(m, c->id, &c->u.fi, c->seq);
    case EV_FUNCTION_UNLOAD: return mdt_idmap_function_unload(m, c->id, c->seq);
    case EV_CODE_ADD: return mdt_idmap_code_add(m, c->id, (size_t)c->a, c->b, c->seq);
    case EV_CODE_REMOVE: return mdt_idmap_code_remove(m, c->id, c->seq);
    case EV_RETIRE: return mdt_idmap_retire(m, c->seq) < 0 ? -1 : 0;
    default: return -1;
    }
}

/* Every call in order; the recorded outcomes not reproduced. */
__attribute__((noinline)) static size_t run_calls(mdt_idmap *m)
{
    size_t bad = 0;
    for (size_t i = 0; i < ncalls; i++) {
        int rc = apply(m, &calls[i]);
        if (calls[i].expect >= 0 && rc != calls[i].expect && calls[i].ev != EV_RETIRE)
            bad++;
    }
    return bad;
}

static double thread_cpu(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    int runs = 1;
    bool stats = false;
    char *hints = NULL;
    int a = 1;
    for (; a < argc && argv[a][0] == '-'; a++) {
        if (strcmp(argv[a], "-n") == 0 && a + 1 < argc)
            runs = atoi(argv[++a]);
        else if (strcmp(argv[a], "-s") == 0)
            stats = true;
        else if (strcmp(argv[a], "-f") == 0 && a + 1 < argc)
            flags |= (unsigned)num(argv[++a]);
        else if (strcmp(argv[a], "-o") == 0 && a + 1 < argc)
            hints = argv[++a];
        else
            break;
    }
    if (a + 1 != argc || runs < 1) {
        fprintf(stderr, "usage: bench_replay [-n runs] [-s] [-f flags] [-o hints] trace\n");
        return 2;
    }
    FILE *f = fopen(argv[a], "r");
    if (!f) {
        perror(argv[a]);
        return 2;
    }
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) >= 0)
        parse_line(line);
    free(line);
    fclose(f);
    if (hints) {
        char *tok[8];
        int n = tokenize(hints, tok, 8);
        const char *v;
        if ((v = kv(tok, n, "modules")))
            opts.modules = num(v);
        if ((v = kv(tok, n, "classes")))
            opts.classes = num(v);
        if ((v = kv(tok, n, "functions")))
            opts.functions = num(v);
    }
    printf("hints modules %zu classes %zu functions %zu\n", opts.modules, opts.classes,
           opts.functions);
    fix_args();
    size_t count[EV_N] = {0};
    for (size_t i = 0; i < ncalls; i++)
        count[calls[i].ev]++;
    printf("calls %zu:", ncalls);
    for (int e = 0; e < EV_N; e++)
        if (count[e])
            printf(" %s %zu", ev_name[e], count[e]);
    printf("\n");
    size_t bad = 0;
    for (int r = 0; r < runs; r++) {
        mdt_idmap *m;
        double c0 = thread_cpu();
        if (mdt_idmap_new(&m, &opts) != 0) {
            fprintf(stderr, "bench_replay: cannot create the map\n");
            return 2;
        }
        if (mdt_idmap_set_flags(m, flags) != 0) {
            fprintf(stderr, "bench_replay: flags %#x refused\n", flags);
            mdt_idmap_free(m);
            return 2;
        }
        double t0 = thread_cpu();
        bad += run_calls(m);
        double t1 = thread_cpu();
        printf("create_ms %.3f\ncpu_ms %.3f\n", (t0 - c0) * 1e3, (t1 - t0) * 1e3);
        if (stats && r == runs - 1) {
            mdt_idmap_stats st;
            mdt_idmap_synchronize(m);
            mdt_idmap_stats_get(&st, m);
            printf("live classes %zu functions %zu modules %zu ranges %zu; bytes tables %zu "
                   "index %zu writer %zu (deps %zu) ranges %zu\n",
                   st.classes_live, st.functions_live, st.modules_live, st.ranges, st.bytes_tables,
                   st.bytes_index, st.bytes_writer, st.bytes_deps, st.bytes_ranges);
        }
        mdt_idmap_free(m);
    }
    printf("outcomes not reproduced %zu\n", bad);
    for (size_t i = 0; i < ncalls; i++)
        if (calls[i].ev == EV_MODULE_LOAD)
            free((char *)calls[i].u.mi.path);
    free(calls);
    free(pool);
    return bad ? 1 : 0;
}
