/* The map against the truth, whatever order the calls come in (issue 30).
 *
 * A small simulated runtime loads and unloads modules, JIT-compiles
 * functions into them, places their code in a small code heap (in free
 * memory only, which earlier code may have held), frees code (ReJIT),
 * unloads functions, answers lazy catch-up questions again (a repeat of a
 * load or of a code range at a new seq) and generates enumerations (a
 * snapshot of what is live, stamped with the seq at which it was made).
 * Each of these is a call to the map with its seq, as a profiler makes it;
 * the calls are then applied in a shuffled order, each delayed by a
 * random amount, as threads deliver them. Once every call is applied, a
 * lookup of any module, function or address must answer what the runtime
 * holds at the end, or nothing: an ID or an address left unknown is
 * allowed (a hole lazy catch-up fills), a dead or wrong answer never.
 * The random model (random_model.c) checks that the map follows its
 * rules; this checks that the rules give the truth. Usage: order_oracle
 * [runs] [seed] */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mdtools/idmap.h>

#define NMOD 4
#define NFN 16
#define NSLOT 48 /* 16-byte code slots */
#define MAXCALL 4096

enum { C_MLOAD, C_MUNLOAD, C_FLOAD, C_FUNLOAD, C_CODE, C_CODEREM };

struct call {
    int op;
    int id;     /* module or function index */
    int module; /* C_FLOAD: module index */
    int token;  /* C_FLOAD: MethodDef row; C_MLOAD: MVID byte */
    int start, len;
    uint64_t seq;
    double when; /* delivery order */
};

/* The runtime's truth. */
static struct {
    bool mlive[NMOD];
    int mvid[NMOD];
    bool flive[NFN];
    int fmod[NFN], ftok[NFN];
    int owner[NSLOT];  /* function index + 1 whose live code holds the slot, 0 free */
    int rstart[NSLOT]; /* the start slot of that range */
} T;

static struct call calls[MAXCALL];
static int ncalls;
static uint64_t clock_seq;

static uint64_t rng;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}
static int pick(int n)
{
    return (int)(rnd() % (uint64_t)n);
}

static uintptr_t mod_id(int i)
{
    return 0x10000 + (uintptr_t)i * 0x40;
}
static uintptr_t fn_id(int i)
{
    return 0x30000 + (uintptr_t)i * 0x40;
}
static uintptr_t addr(int slot)
{
    return 0x800000 + (uintptr_t)slot * 0x10;
}

static void emit(struct call c, int when)
{
    if (ncalls == MAXCALL)
        return;
    /* Delivered late by up to 12 steps, now and then by up to 60. */
    c.when = when + (double)pick(pick(8) == 0 ? 60 : 12) + (double)pick(1000) / 1000.0;
    calls[ncalls++] = c;
}

static void free_code_of(int f)
{
    for (int s = 0; s < NSLOT; s++)
        if (T.owner[s] == f + 1)
            T.owner[s] = 0;
}

static void step(int when)
{
    int what = pick(100);
    uint64_t seq = ++clock_seq;
    if (what < 10) { /* a module loads (an ID reused after its unload) */
        int m = pick(NMOD);
        if (T.mlive[m])
            return;
        T.mlive[m] = true;
        T.mvid[m] = 1 + pick(200);
        emit((struct call){C_MLOAD, m, 0, T.mvid[m], 0, 0, seq, 0}, when);
    } else if (what < 16) { /* a module unloads, and everything in it */
        int m = pick(NMOD);
        if (!T.mlive[m])
            return;
        T.mlive[m] = false;
        for (int f = 0; f < NFN; f++)
            if (T.flive[f] && T.fmod[f] == m) {
                T.flive[f] = false;
                free_code_of(f);
            }
        emit((struct call){C_MUNLOAD, m, 0, 0, 0, 0, seq, 0}, when);
    } else if (what < 36) { /* a function is JIT-compiled */
        int f = pick(NFN), m = pick(NMOD);
        if (T.flive[f] || !T.mlive[m])
            return;
        T.flive[f] = true;
        T.fmod[f] = m;
        T.ftok[f] = 1 + pick(1000);
        emit((struct call){C_FLOAD, f, m, T.ftok[f], 0, 0, seq, 0}, when);
    } else if (what < 60) { /* code of a live function, in free memory */
        int f = pick(NFN), s = pick(NSLOT - 4), len = 1 + pick(4);
        if (!T.flive[f])
            return;
        for (int k = s; k < s + len; k++)
            if (T.owner[k])
                return;
        for (int k = s; k < s + len; k++) {
            T.owner[k] = f + 1;
            T.rstart[k] = s;
        }
        emit((struct call){C_CODE, f, 0, 0, s, len, seq, 0}, when);
    } else if (what < 66) { /* a function unloads (a dynamic method) */
        int f = pick(NFN);
        if (!T.flive[f])
            return;
        T.flive[f] = false;
        free_code_of(f);
        emit((struct call){C_FUNLOAD, f, 0, 0, 0, 0, seq, 0}, when);
    } else if (what < 71) { /* code freed, its function lives on (ReJIT) */
        int s = pick(NSLOT);
        if (!T.owner[s] || T.rstart[s] != s)
            return;
        int f = T.owner[s] - 1;
        for (int k = s; k < NSLOT && T.owner[k] == f + 1 && T.rstart[k] == s; k++)
            T.owner[k] = 0;
        emit((struct call){C_CODEREM, f, 0, 0, s, 0, seq, 0}, when);
    } else if (what < 90) { /* lazy catch-up answers again, at a new seq */
        int k = pick(3);
        if (k == 0) {
            int m = pick(NMOD);
            if (T.mlive[m])
                emit((struct call){C_MLOAD, m, 0, T.mvid[m], 0, 0, seq, 0}, when);
        } else if (k == 1) {
            int f = pick(NFN);
            if (T.flive[f])
                emit((struct call){C_FLOAD, f, T.fmod[f], T.ftok[f], 0, 0, seq, 0}, when);
        } else {
            int s = pick(NSLOT);
            if (T.owner[s] && T.rstart[s] == s) {
                int len = 0;
                while (s + len < NSLOT && T.owner[s + len] == T.owner[s] && T.rstart[s + len] == s)
                    len++;
                emit((struct call){C_CODE, T.owner[s] - 1, 0, 0, s, len, seq, 0}, when);
            }
        }
    } else { /* an enumeration of what is live, stamped with its seq */
        for (int m = 0; m < NMOD; m++)
            if (T.mlive[m])
                emit((struct call){C_MLOAD, m, 0, T.mvid[m], 0, 0, seq, 0}, when);
        for (int f = 0; f < NFN; f++)
            if (T.flive[f])
                emit((struct call){C_FLOAD, f, T.fmod[f], T.ftok[f], 0, 0, seq, 0}, when);
        for (int s = 0; s < NSLOT; s++) {
            if (!T.owner[s] || T.rstart[s] != s)
                continue;
            int len = 0;
            while (s + len < NSLOT && T.owner[s + len] == T.owner[s] && T.rstart[s + len] == s)
                len++;
            emit((struct call){C_CODE, T.owner[s] - 1, 0, 0, s, len, seq, 0}, when);
        }
    }
}

static int by_when(const void *a, const void *b)
{
    const struct call *x = a, *y = b;
    return x->when < y->when ? -1 : x->when > y->when;
}

static const char *const opname[] = {"module_load",     "module_unload", "function_load",
                                     "function_unload", "code_add",      "code_remove"};

static int apply(mdt_idmap *map, const struct call *c)
{
    if (c->op == C_MLOAD) {
        mdt_idmap_module_info mi = {0};
        mi.mvid[0] = (uint8_t)c->token;
        return mdt_idmap_module_load(map, mod_id(c->id), &mi, c->seq);
    }
    if (c->op == C_MUNLOAD)
        return mdt_idmap_module_unload(map, mod_id(c->id), c->seq);
    if (c->op == C_FLOAD) {
        mdt_idmap_function_info fi = {
            mod_id(c->module), 0x06000000u + (uint32_t)c->token, 0, 0, NULL, 0};
        return mdt_idmap_function_load(map, fn_id(c->id), &fi, c->seq);
    }
    if (c->op == C_FUNLOAD)
        return mdt_idmap_function_unload(map, fn_id(c->id), c->seq);
    if (c->op == C_CODE) /* MDT_ENOTFOUND when the function's load is not applied yet: a
                          * hole, as for a profiler (it would fetch the function) */
        return mdt_idmap_code_add(map, addr(c->start), (size_t)c->len * 0x10, fn_id(c->id), c->seq);
    return mdt_idmap_code_remove(map, addr(c->start), c->seq);
}

static unsigned long long wrong, holes, right;

static void check(mdt_idmap *map, unsigned run, uint64_t seed)
{
    for (int m = 0; m < NMOD; m++) {
        mdt_idmap_module_info mi;
        int rc = mdt_idmap_module_lookup(&mi, map, mod_id(m), 0);
        if (rc != 0) {
            holes += T.mlive[m];
            continue;
        }
        if (!T.mlive[m] || mi.mvid[0] != T.mvid[m]) {
            fprintf(stderr, "seed %" PRIu64 " run %u: module %d answered (mvid %d), truth %s %d\n",
                    seed, run, m, mi.mvid[0], T.mlive[m] ? "live" : "dead", T.mvid[m]);
            wrong++;
        } else {
            right++;
        }
    }
    for (int f = 0; f < NFN; f++) {
        mdt_idmap_function_info fi;
        int rc = mdt_idmap_function_lookup(&fi, NULL, 0, map, fn_id(f), 0);
        if (rc != 0) {
            holes += T.flive[f];
            continue;
        }
        if (!T.flive[f] || fi.module != mod_id(T.fmod[f]) ||
            fi.token != 0x06000000u + (uint32_t)T.ftok[f]) {
            fprintf(stderr, "seed %" PRIu64 " run %u: function %d answered, truth %s\n", seed, run,
                    f, T.flive[f] ? "other content" : "dead");
            wrong++;
        } else {
            right++;
        }
    }
    for (int s = 0; s < NSLOT; s++) {
        mdt_idmap_code_range r;
        int rc = mdt_idmap_ip_lookup(&r, map, addr(s) + 7);
        if (rc != 0) {
            holes += T.owner[s] != 0;
            continue;
        }
        if (!T.owner[s] || r.function_id != fn_id(T.owner[s] - 1) || r.start != addr(T.rstart[s])) {
            fprintf(stderr,
                    "seed %" PRIu64 " run %u: address slot %d answered function %d, "
                    "truth %d\n",
                    seed, run, s, (int)((r.function_id - 0x30000) / 0x40), T.owner[s] - 1);
            wrong++;
        } else {
            right++;
        }
    }
}

int main(int argc, char **argv)
{
    unsigned runs = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 0) : 20000;
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 0) : 1;
    rng = 0x9E3779B97F4A7C15ull * (seed + 1);
    unsigned failed_runs = 0;
    for (unsigned run = 0; run < runs; run++) {
        memset(&T, 0, sizeof T);
        ncalls = 0;
        clock_seq = 0;
        int steps = 50 + pick(250);
        for (int i = 0; i < steps; i++)
            step(i);
        qsort(calls, (size_t)ncalls, sizeof calls[0], by_when);
        mdt_idmap *map;
        if (mdt_idmap_new(&map, NULL) != 0)
            return 2;
        const char *tr = getenv("ORACLE_TRACE");
        bool trace = tr && strtoul(tr, NULL, 0) == run;
        for (int i = 0; i < ncalls; i++) {
            int rc = apply(map, &calls[i]);
            if (trace)
                fprintf(stderr, "%" PRIu64 " %s %d module %d token %d slots %d+%d -> %d\n",
                        calls[i].seq, opname[calls[i].op], calls[i].id, calls[i].module,
                        calls[i].token, calls[i].start, calls[i].len, rc);
        }
        unsigned long long before = wrong;
        check(map, run, seed);
        failed_runs += wrong > before;
        mdt_idmap_free(map);
        if (failed_runs >= 5)
            break;
    }
    printf("order_oracle: %u runs, %llu answers right, %llu wrong, %llu holes (unknown while "
           "live)\n",
           runs, right, wrong, holes);
    printf("%u passed, %u failed\n", failed_runs ? 0 : 1, failed_runs ? 1 : 0);
    return failed_runs ? 1 : 0;
}
