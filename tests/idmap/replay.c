/* Replays idmap trace files (format in tests/idmap/README.md): one event or
 * expectation per line, events stamped with their sequence numbers, items of
 * an enumeration stamped with the seq at which it was generated. Prints
 * each failed expectation with its file and line, then "N passed, M failed"
 * over all expectations of all files. Usage: replay FILE... */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mdtools/idmap.h>

#define MAXTOK 32
#define MAXARGS 16
#define MAXRT 256

struct runtime_entry {
    int kind;
    uintptr_t id;
    char line[256];
};

static struct {
    const char *file;
    int lineno;
    int passed, failed;
    uint64_t enum_seq;
    uint64_t cur_seq;
    int last_outcome;
    struct runtime_entry rt[MAXRT];
    int nrt;
} S;

static void fail(const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, "%s:%d: FAIL: ", S.file, S.lineno);
    fprintf(stderr, fmt, a, b);
    fputc('\n', stderr);
    S.failed++;
}

static uint64_t num(const char *s)
{
    return strtoull(s, NULL, 0);
}

/* key=value lookup among tokens */
static const char *kv(char **tok, int n, const char *key)
{
    size_t k = strlen(key);
    for (int i = 0; i < n; i++)
        if (strncmp(tok[i], key, k) == 0 && tok[i][k] == '=')
            return tok[i] + k + 1;
    return NULL;
}

static uint32_t list(const char *s, uintptr_t *out)
{
    uint32_t n = 0;
    if (!s)
        return 0;
    while (*s && n < MAXARGS) {
        char *end;
        out[n++] = (uintptr_t)strtoull(s, &end, 0);
        s = *end == ',' ? end + 1 : end;
        if (end == s && *s != ',')
            break;
    }
    return n;
}

static void parse_mvid(const char *s, uint8_t mvid[16])
{
    memset(mvid, 0, 16);
    for (int i = 0; i < 16 && s && s[0] && s[1]; i++, s += 2) {
        char b[3] = {s[0], s[1], 0};
        mvid[i] = (uint8_t)strtoul(b, NULL, 16);
    }
}

static uint8_t prim_code(const char *s)
{
    static const struct {
        const char *n;
        uint8_t c;
    } t[] = {{"VOID", 1},
             {"BOOLEAN", 2},
             {"CHAR", 3},
             {"I1", 4},
             {"U1", 5},
             {"I2", 6},
             {"U2", 7},
             {"I4", 8},
             {"U4", 9},
             {"I8", 10},
             {"U8", 11},
             {"R4", 12},
             {"R8", 13},
             {"STRING", 14},
             {"TYPEDBYREF", 0x16},
             {"I", 0x18},
             {"U", 0x19},
             {"OBJECT", 0x1c},
             {"canon", MDT_IDMAP_PRIM_CANON}};
    if (!s)
        return 0;
    if (*s >= '0' && *s <= '9') /* recorded traces write the code */
        return (uint8_t)strtoul(s, NULL, 0);
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (strcmp(s, t[i].n) == 0)
            return t[i].c;
    return 0;
}

static void class_info(char **tok, int n, mdt_idmap_class_info *ci, uintptr_t *args)
{
    const char *v;
    memset(ci, 0, sizeof *ci);
    ci->args = args;
    if ((v = kv(tok, n, "szarray")) || (v = kv(tok, n, "ptr")) || (v = kv(tok, n, "byref")) ||
        (v = kv(tok, n, "array"))) {
        ci->shape = kv(tok, n, "szarray") ? MDT_IDMAP_SHAPE_SZARRAY
                    : kv(tok, n, "ptr")   ? MDT_IDMAP_SHAPE_PTR
                    : kv(tok, n, "byref") ? MDT_IDMAP_SHAPE_BYREF
                                          : MDT_IDMAP_SHAPE_ARRAY;
        uintptr_t tmp[2] = {0, 0};
        list(v, tmp);
        args[0] = tmp[0];
        ci->nargs = 1;
        if (ci->shape == MDT_IDMAP_SHAPE_ARRAY)
            ci->rank = (uint16_t)tmp[1];
    } else {
        ci->nargs = list(kv(tok, n, "args"), args);
    }
    if ((v = kv(tok, n, "module")))
        ci->module = num(v);
    if ((v = kv(tok, n, "typedef")))
        ci->token = (uint32_t)num(v);
    ci->prim = prim_code(kv(tok, n, "prim"));
}

static void func_info(char **tok, int n, mdt_idmap_function_info *fi, uintptr_t *args)
{
    const char *v;
    memset(fi, 0, sizeof *fi);
    fi->args = args;
    fi->nargs = list(kv(tok, n, "args"), args);
    if ((v = kv(tok, n, "module")))
        fi->module = num(v);
    if ((v = kv(tok, n, "methoddef")))
        fi->token = (uint32_t)num(v);
    if ((v = kv(tok, n, "class")))
        fi->class_id = num(v);
}

static int tokenize(char *line, char **tok)
{
    int n = 0;
    char *p = line;
    while (*p && n < MAXTOK) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p || *p == '#')
            break;
        if (*p == '"') {
            tok[n++] = ++p;
            while (*p && *p != '"')
                p++;
        } else {
            tok[n++] = p;
            while (*p && *p != ' ' && *p != '\t')
                p++;
        }
        if (*p)
            *p++ = '\0';
    }
    return n;
}

static mdt_idmap *MAP;

/* Apply an event; tok[0] is the event name. */
static int apply(char **tok, int n, uint64_t seq)
{
    uintptr_t args[MAXARGS];
    const char *ev = tok[0];
    uintptr_t id = n > 1 ? (uintptr_t)num(tok[1]) : 0;
    if (strcmp(ev, "module_load") == 0) {
        mdt_idmap_module_info mi = {0};
        const char *v;
        parse_mvid(kv(tok, n, "mvid"), mi.mvid);
        if ((v = kv(tok, n, "domain")))
            mi.appdomain = num(v);
        if ((v = kv(tok, n, "assembly")))
            mi.assembly = num(v);
        mi.path = kv(tok, n, "path");
        return mdt_idmap_module_load(MAP, id, &mi, seq);
    }
    if (strcmp(ev, "module_unload") == 0)
        return mdt_idmap_module_unload(MAP, id, seq);
    if (strcmp(ev, "domain_shutdown") == 0)
        return mdt_idmap_appdomain_shutdown(MAP, id, seq);
    if (strcmp(ev, "assembly_unload") == 0)
        return mdt_idmap_assembly_unload(MAP, id, seq);
    if (strcmp(ev, "class_load") == 0) {
        mdt_idmap_class_info ci;
        class_info(tok, n, &ci, args);
        return mdt_idmap_class_load(MAP, id, &ci, seq);
    }
    if (strcmp(ev, "class_unload") == 0)
        return mdt_idmap_class_unload(MAP, id, seq);
    if (strcmp(ev, "function_load") == 0) {
        mdt_idmap_function_info fi;
        func_info(tok, n, &fi, args);
        return mdt_idmap_function_load(MAP, id, &fi, seq);
    }
    if (strcmp(ev, "function_unload") == 0)
        return mdt_idmap_function_unload(MAP, id, seq);
    if (strcmp(ev, "code_add") == 0 && n >= 4)
        return mdt_idmap_code_add(MAP, id, (size_t)num(tok[2]), (uintptr_t)num(tok[3]), seq);
    if (strcmp(ev, "code_remove") == 0)
        return mdt_idmap_code_remove(MAP, id, seq);
    if (strcmp(ev, "retire") == 0)
        return mdt_idmap_retire(MAP, seq) < 0 ? -1 : 0;
    fail("unknown event '%s'%s", ev, "");
    return MDT_EINVAL;
}

static int kind_of(const char *s)
{
    if (strcmp(s, "module") == 0)
        return MDT_IDMAP_MODULE;
    if (strcmp(s, "class") == 0)
        return MDT_IDMAP_CLASS;
    if (strcmp(s, "function") == 0)
        return MDT_IDMAP_FUNCTION;
    if (strcmp(s, "ip") == 0)
        return MDT_IDMAP_IP;
    return 0;
}

/* The miss callback plays the runtime: it applies the declared answer. */
static int on_miss(void *payload, mdt_idmap *m, int kind, uintptr_t id)
{
    (void)m;
    (void)payload;
    for (int i = 0; i < S.nrt; i++) {
        struct runtime_entry *e = &S.rt[i];
        bool hit = e->kind == kind && e->id == id;
        char copy[256], *tok[MAXTOK];
        strcpy(copy, e->line);
        int n = tokenize(copy, tok);
        if (kind == MDT_IDMAP_IP && e->kind == MDT_IDMAP_IP && n >= 4)
            hit = id >= num(tok[1]) && id < num(tok[1]) + num(tok[2]);
        if (!hit)
            continue;
        int rc = apply(tok, n, S.cur_seq);
        return rc < 0 ? rc : 0;
    }
    return MDT_ENOTFOUND;
}

static void check(bool ok, const char *what, const char *detail)
{
    if (ok)
        S.passed++;
    else
        fail("expected %s (%s)", what, detail);
}

static void parse_idgen(const char *s, uintptr_t *id, uint64_t *gen)
{
    char *at;
    *id = (uintptr_t)strtoull(s, &at, 0);
    *gen = *at == '@' ? strtoull(at + 1, NULL, 0) : 0;
}

static bool args_eq(const char *want, const uintptr_t *have, uint32_t nhave)
{
    uintptr_t w[MAXARGS];
    uint32_t n = list(want, w);
    if (n != nhave)
        return false;
    for (uint32_t i = 0; i < n; i++)
        if (w[i] != have[i])
            return false;
    return true;
}

static void expect(char **tok, int n, char *raw)
{
    uintptr_t id, args[MAXARGS];
    uint64_t gen;
    const char *v;
    const char *what = tok[0];
    bool none = n > 2 && strcmp(tok[n - 1], "none") == 0;
    if (strcmp(what, "outcome") == 0 && n == 2) {
        int want = strcmp(tok[1], "applied") == 0      ? MDT_IDMAP_APPLIED
                   : strcmp(tok[1], "duplicate") == 0  ? MDT_IDMAP_DUPLICATE
                   : strcmp(tok[1], "superseded") == 0 ? MDT_IDMAP_SUPERSEDED
                                                       : -100;
        check(S.last_outcome == want, raw, "previous event's outcome differs");
        return;
    }
    if (n < 2) {
        fail("bad expectation '%s'%s", raw, "");
        return;
    }
    if (strcmp(what, "module") == 0) {
        mdt_idmap_module_info mi;
        parse_idgen(tok[1], &id, &gen);
        int rc = mdt_idmap_module_lookup(&mi, MAP, id, gen);
        if (none) {
            check(rc == MDT_ENOTFOUND, raw, "module answered");
            return;
        }
        bool ok = rc == 0;
        uint8_t mv[16];
        if (ok && (v = kv(tok, n, "mvid"))) {
            parse_mvid(v, mv);
            ok = memcmp(mv, mi.mvid, 16) == 0;
        }
        if (ok && (v = kv(tok, n, "domain")))
            ok = mi.appdomain == num(v);
        if (ok && (v = kv(tok, n, "gen")))
            ok = mi.gen == num(v);
        if (ok && (v = kv(tok, n, "path"))) {
            char p[256];
            ok = mdt_idmap_module_path(p, sizeof p, MAP, id, gen) >= 0 && strcmp(p, v) == 0;
        }
        check(ok, raw, rc ? "module not found" : "fields differ");
    } else if (strcmp(what, "class") == 0) {
        mdt_idmap_class_info ci;
        parse_idgen(tok[1], &id, &gen);
        int rc = mdt_idmap_class_lookup(&ci, args, MAXARGS, MAP, id, gen);
        if (none) {
            check(rc == MDT_ENOTFOUND, raw, "class answered");
            return;
        }
        bool ok = rc == 0;
        if (ok && (v = kv(tok, n, "module")))
            ok = ci.module == num(v);
        if (ok && (v = kv(tok, n, "typedef")))
            ok = ci.token == num(v);
        if (ok && (v = kv(tok, n, "args")))
            ok = args_eq(v, args, ci.nargs);
        if (ok && (v = kv(tok, n, "gen")))
            ok = ci.gen == num(v);
        if (ok && (v = kv(tok, n, "prim")))
            ok = ci.prim == prim_code(v);
        check(ok, raw, rc ? "class not found" : "fields differ");
    } else if (strcmp(what, "function") == 0) {
        mdt_idmap_function_info fi;
        parse_idgen(tok[1], &id, &gen);
        int rc = mdt_idmap_function_lookup(&fi, args, MAXARGS, MAP, id, gen);
        if (none) {
            check(rc == MDT_ENOTFOUND, raw, "function answered");
            return;
        }
        bool ok = rc == 0;
        if (ok && (v = kv(tok, n, "module")))
            ok = fi.module == num(v);
        if (ok && (v = kv(tok, n, "methoddef")))
            ok = fi.token == num(v);
        if (ok && (v = kv(tok, n, "class")))
            ok = fi.class_id == num(v);
        if (ok && (v = kv(tok, n, "args")))
            ok = args_eq(v, args, fi.nargs);
        if (ok && (v = kv(tok, n, "gen")))
            ok = fi.gen == num(v);
        check(ok, raw, rc ? "function not found" : "fields differ");
    } else if (strcmp(what, "ip") == 0) {
        mdt_idmap_code_range r;
        int rc = mdt_idmap_ip_lookup(&r, MAP, (uintptr_t)num(tok[1]));
        if (none)
            check(rc == MDT_ENOTFOUND, raw, "ip answered");
        else
            check(rc == 0 && (v = kv(tok, n, "function")) && r.function_id == num(v), raw,
                  rc ? "ip not found" : "other function");
    } else if (strcmp(what, "find_class") == 0 || strcmp(what, "find_function") == 0) {
        int arrow = 0;
        for (int i = 0; i < n; i++)
            if (strcmp(tok[i], "->") == 0)
                arrow = i;
        if (!arrow || arrow + 1 >= n) {
            fail("bad find expectation '%s'%s", raw, "");
            return;
        }
        uintptr_t got = 0;
        int rc;
        if (what[5] == 'c') {
            mdt_idmap_class_info key;
            class_info(tok, arrow, &key, args);
            rc = mdt_idmap_class_find(&got, NULL, MAP, &key);
        } else {
            mdt_idmap_function_info key;
            func_info(tok, arrow, &key, args);
            rc = mdt_idmap_function_find(&got, NULL, MAP, &key);
        }
        if (strcmp(tok[arrow + 1], "none") == 0)
            check(rc == MDT_ENOTFOUND, raw, "found one");
        else
            check(rc == 0 && got == num(tok[arrow + 1]), raw, rc ? "not found" : "other ID");
    } else if (strcmp(what, "loaded") == 0) {
        int rc = mdt_idmap_typedef_loaded(
            MAP, (uintptr_t)num(kv(tok, n, "module") ? kv(tok, n, "module") : "0"),
            (uint32_t)num(kv(tok, n, "typedef") ? kv(tok, n, "typedef") : "0"));
        check(rc == (strcmp(tok[n - 1], "yes") == 0), raw, "presence differs");
    } else if (strcmp(what, "desc") == 0 && n >= 3) {
        char buf[512];
        parse_idgen(tok[1], &id, &gen);
        int rc = mdt_idmap_class_descriptor(buf, sizeof buf, MAP, id, gen);
        if (strcmp(tok[2], "none") == 0)
            check(rc < 0, raw, "descriptor produced");
        else
            check(rc >= 0 && strcmp(buf, tok[2]) == 0, raw, rc < 0 ? "no descriptor" : buf);
    } else {
        fail("unknown expectation '%s'%s", raw, "");
    }
}

static void run_file(const char *path)
{
    FILE *f = fopen(path, "r");
    char line[1024], raw[1024];
    if (!f) {
        fprintf(stderr, "%s: %s\n", path, strerror(errno));
        S.failed++;
        return;
    }
    S.file = path;
    S.lineno = 0;
    S.enum_seq = 0;
    S.nrt = 0;
    S.last_outcome = -100;
    mdt_idmap_options o = {0};
    o.miss = on_miss;
    if (mdt_idmap_new(&MAP, &o) != 0) {
        S.failed++;
        fclose(f);
        return;
    }
    while (fgets(line, sizeof line, f)) {
        char *tok[MAXTOK];
        S.lineno++;
        line[strcspn(line, "\r\n")] = '\0';
        strcpy(raw, line);
        int n = tokenize(line, tok);
        if (n == 0)
            continue;
        if (strcmp(tok[0], "expect") == 0) {
            expect(tok + 1, n - 1, raw);
        } else if (strcmp(tok[0], "enum") == 0 && n == 2) {
            S.enum_seq = num(tok[1]);
        } else if (strcmp(tok[0], "item") == 0 && n >= 2) {
            if (!S.enum_seq)
                fail("item before enum%s%s", "", "");
            S.last_outcome = apply(tok + 1, n - 1, S.enum_seq);
        } else if (strcmp(tok[0], "runtime") == 0 && n >= 3 && S.nrt < MAXRT) {
            struct runtime_entry *e = &S.rt[S.nrt++];
            e->kind = kind_of(tok[1]);
            e->id = (uintptr_t)num(tok[2]);
            /* Store the load event that the runtime's answer amounts to. */
            const char *ev = e->kind == MDT_IDMAP_MODULE     ? "module_load"
                             : e->kind == MDT_IDMAP_CLASS    ? "class_load"
                             : e->kind == MDT_IDMAP_FUNCTION ? "function_load"
                                                             : "code_add";
            size_t off = (size_t)snprintf(e->line, sizeof e->line, "%s", ev);
            for (int i = 2; i < n && off < sizeof e->line; i++)
                off += (size_t)snprintf(e->line + off, sizeof e->line - off, " %s", tok[i]);
        } else if (n >= 3 && strcmp(tok[1], "fetch") == 0) {
            /* <seq> fetch <kind> <id>: lookup with lazy catch-up */
            uintptr_t args[MAXARGS];
            S.cur_seq = num(tok[0]);
            int kind = kind_of(tok[2]);
            uintptr_t id = n > 3 ? (uintptr_t)num(tok[3]) : 0;
            if (kind == MDT_IDMAP_MODULE) {
                mdt_idmap_module_info mi;
                S.last_outcome = mdt_idmap_module_fetch(&mi, MAP, id);
            } else if (kind == MDT_IDMAP_CLASS) {
                mdt_idmap_class_info ci;
                S.last_outcome = mdt_idmap_class_fetch(&ci, args, MAXARGS, MAP, id);
            } else if (kind == MDT_IDMAP_FUNCTION) {
                mdt_idmap_function_info fi;
                S.last_outcome = mdt_idmap_function_fetch(&fi, args, MAXARGS, MAP, id);
            } else {
                mdt_idmap_code_range r;
                S.last_outcome = mdt_idmap_ip_fetch(&r, MAP, id);
            }
        } else if (n >= 2 && tok[0][0] >= '0' && tok[0][0] <= '9') {
            S.cur_seq = num(tok[0]);
            S.last_outcome = apply(tok + 1, n - 1, S.cur_seq);
            if (S.last_outcome < 0)
                fail("event failed: %s%s", raw, "");
        } else {
            fail("cannot parse '%s'%s", raw, "");
        }
    }
    fclose(f);
    mdt_idmap_free(MAP);
    MAP = NULL;
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        int before = S.failed;
        run_file(argv[i]);
        printf("%s %s\n", S.failed == before ? "ok" : "FAIL", argv[i]);
    }
    printf("%d passed, %d failed\n", S.passed, S.failed);
    return S.failed || S.passed == 0 ? 1 : 0;
}
