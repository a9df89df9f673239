/* The malformed-input suite: one Check test per line of cases.tsv (made by
 * make-cases.py, see README.md). Each case file is opened from disk and again
 * from a heap buffer of exactly its size, so a sanitizer sees any read past
 * the end; both opens must give the same code, message, warnings and walk
 * errors. A PE file is also laid out as a loader lays it out, with the gaps
 * between sections unreadable (tests/common/layout.h), and opened there
 * with mdt_image_open_mapped_ranges: a read of a gap faults and fails the
 * case. Then the line's expectation is checked: the error of a failed open,
 * a warning of an accepted oddity (with a clean walk), or an error met while
 * walking every cell and every user string (with the rest still readable),
 * or while decoding every signature (II.23.2) and naming what decodes; for
 * the mapped-* kinds, of the laid-out open. Whatever the case, a signature
 * whose decoding failed is refused by every printer (mdt_sig_name, _buf:
 * MDT_EINVAL), never dereferenced. The cases exercise ECMA-335 II.23.2,
 * II.24 and II.25 and the PE/COFF headers. */
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <talloc.h>
#include <unistd.h>

#include <mdtools/mdtools.h>

#include "layout.h"
#include "paths.h"
#include "walk.h"

#define CASES_TSV "tests/corrupt/cases.tsv"
#define MAX_WALK_ERRORS 200 /* enough to compare two walks; a bad case may have more */

struct corrupt_case {
    unsigned line;
    char *name, *expect, *code, *msg, *why;
};

static void *cases_ctx; /* owns the two below; freed at exit */
static struct corrupt_case *cases;
static int ncases;
static char *load_problem; /* why cases.tsv could not be read, or NULL */

static void free_cases(void)
{
    talloc_free(cases_ctx);
}

static const struct {
    const char *name;
    int code;
} codes[] = {
    {"MDT_ENOMEM", MDT_ENOMEM},
    {"MDT_EINVAL", MDT_EINVAL},
    {"MDT_EIO", MDT_EIO},
    {"MDT_EBADIMAGE", MDT_EBADIMAGE},
    {"MDT_ETRUNC", MDT_ETRUNC},
    {"MDT_ENOTFOUND", MDT_ENOTFOUND},
    {"MDT_EUNSUPPORTED", MDT_EUNSUPPORTED},
    {"MDT_ENOTDOTNET", MDT_ENOTDOTNET},
    {"MDT_ENOHEAP", MDT_ENOHEAP},
};

static bool code_by_name(const char *name, int *code)
{
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
        if (strcmp(codes[i].name, name) == 0) {
            *code = codes[i].code;
            return true;
        }
    return false;
}

static const char *expects[] = {"open-error",        "cell-error",           "us-error",
                                "open-warn",         "open-warn+cell-error", "open-warn+us-error",
                                "mapped-open-error", "mapped-open-warn",     "sig-error"};

static bool known_expect(const char *e)
{
    for (size_t i = 0; i < sizeof expects / sizeof expects[0]; i++)
        if (strcmp(expects[i], e) == 0)
            return true;
    return false;
}

/* Read cases.tsv: comment lines start with '#'; others have 5 tab-separated
 * fields. Problems are kept for the tsv_is_well_formed test to report. */
static void load_cases(void)
{
    char path[1024], buf[4096];
    unsigned lineno = 0;
    FILE *f = fopen(src_path(path, sizeof path, CASES_TSV), "r");
    cases_ctx = talloc_new(NULL);
    atexit(free_cases);
    if (!f) {
        load_problem = talloc_asprintf(cases_ctx, "cannot open %s", path);
        return;
    }
    while (fgets(buf, sizeof buf, f)) {
        char *field[5], *p = buf, *nl = strchr(buf, '\n');
        int n = 0;
        lineno++;
        if (!nl && !feof(f)) {
            load_problem = talloc_asprintf(cases_ctx, "%s:%u: line too long", path, lineno);
            break;
        }
        if (nl)
            *nl = '\0';
        if (buf[0] == '#' || buf[0] == '\0')
            continue;
        while (n < 5 && p) {
            field[n++] = p;
            p = strchr(p, '\t');
            if (p)
                *p++ = '\0';
        }
        if (n != 5 || p) {
            load_problem =
                talloc_asprintf(cases_ctx, "%s:%u: want 5 tab-separated fields", path, lineno);
            break;
        }
        cases = talloc_realloc(cases_ctx, cases, struct corrupt_case, ncases + 1);
        struct corrupt_case *c = &cases[ncases++];
        c->line = lineno;
        c->name = talloc_strdup(cases_ctx, field[0]);
        c->expect = talloc_strdup(cases_ctx, field[1]);
        c->code = talloc_strdup(cases_ctx, field[2]);
        c->msg = talloc_strdup(cases_ctx, field[3]);
        c->why = talloc_strdup(cases_ctx, field[4]);
    }
    fclose(f);
}

/* What happened to one open of a case, and the walk after it. */
struct walk_error {
    char kind; /* 'c' row or cell (also identity), 'u' user string, 's' signature */
    int code;
    char *msg;
};

struct outcome {
    int code;
    char *msg; /* mdt_error_message() of a failed open */
    size_t nwarnings;
    char **warnings;
    size_t nerrors; /* errors met (all counted, MAX_WALK_ERRORS kept) */
    struct walk_error *errors;
    size_t nsigerrors; /* signatures that did not decode or name (kept in errors[]) */
    size_t sigs_ok;
    bool has_typedef1;    /* TypeDef has a row 1 ... */
    const char *typedef1; /* ... and its TypeName (NULL if unreadable) */
    walk_stats st;        /* tests/common walk_image_report() */
    char *summary;        /* all of the above as text, to compare two opens */
};

static void note_error(struct outcome *o, char kind, int code)
{
    char m[600];
    size_t kept = o->nerrors + o->nsigerrors;
    if (kept < MAX_WALK_ERRORS) {
        o->errors = talloc_realloc(o, o->errors, struct walk_error, kept + 1);
        o->errors[kept] =
            (struct walk_error){kind, code, talloc_strdup(o, mdt_error_message(m, sizeof m))};
    }
    if (kind == 's')
        o->nsigerrors++;
    else
        o->nerrors++;
}

static void note_error_cb(void *arg, char kind, int code)
{
    note_error(arg, kind, code);
}

/* The tables whose rows carry a signature (mdt_sig_of_token). */
static const unsigned sig_tables[] = {
    MDT_TABLE_MethodDef,     MDT_TABLE_MemberRef, MDT_TABLE_Field,     MDT_TABLE_Property,
    MDT_TABLE_StandAloneSig, MDT_TABLE_TypeSpec,  MDT_TABLE_MethodSpec};

/* A signature that failed to decode is left zeroed; printing it must be
 * refused, not crash (mdinspect took the decoder's MDT_ETRUNC for a short
 * buffer and printed it: a NULL dereference in generics/members.c). */
static void sig_refused(const char *path, uint32_t tok, const mdt_sig *sig)
{
    char buf[64];
    char *out = NULL;
    void *tmp = talloc_new(NULL);
    int e1 = mdt_sig_name(tmp, &out, sig, NULL);
    int e2 = mdt_sig_name_buf(buf, sizeof buf, NULL, sig, NULL);
    talloc_free(tmp);
    ck_assert_msg(e1 == MDT_EINVAL && e2 == MDT_EINVAL,
                  "%s: token 0x%08x: the empty signature of a failed decode printed (%d, %d)", path,
                  tok, e1, e2);
}

/* Decode the signature of every row that carries one, into the heap and
 * into an arena, and name it; errors are noted as kind 's'. The two
 * decoders must agree. */
static void walk_sigs(struct outcome *o, const char *path, const mdt_image *img)
{
    uint64_t arena[128];
    char buf[256];
    for (size_t k = 0; k < sizeof sig_tables / sizeof sig_tables[0]; k++) {
        uint32_t rows = mdt_table_rows_present(img, sig_tables[k]);
        for (uint32_t rid = 1; rid <= rows; rid++) {
            uint32_t tok = MDT_TOKEN(sig_tables[k], rid);
            void *tmp = talloc_new(o);
            mdt_sig sig, sig2;
            char *name = NULL;
            int e = mdt_sig_of_token(tmp, &sig, img, tok);
            int e2 = mdt_sig_of_token_buf(arena, sizeof arena, &sig2, img, tok);
            ck_assert_msg(e2 == e || e2 == MDT_ENOMEM, /* the arena may fill first */
                          "%s: token 0x%08x: mdt_sig_of_token gave %d, _buf %d", path, tok, e, e2);
            if (e) {
                note_error(o, 's', e);
                sig_refused(path, tok, &sig);
            } else if ((e = mdt_sig_name(tmp, &name, &sig, NULL))) {
                note_error(o, 's', e);
            } else {
                o->sigs_ok++;
            }
            if (e2 && e2 != MDT_ENOMEM)
                sig_refused(path, tok, &sig2);
            else if (!e2)
                (void)mdt_sig_name_buf(buf, sizeof buf, NULL, &sig2, NULL);
            talloc_free(tmp);
        }
    }
    mdt_error_clear();
}

/* How a case is opened: from its file, from a buffer of its bytes, or laid
 * out as a loader does (`l`). */
enum how { FROM_FILE, FROM_BUFFER, LAID_OUT };

static struct outcome *open_case(void *ctx, const char *path, const uint8_t *buf, size_t len,
                                 enum how how, const loader_layout *l)
{
    struct outcome *o = talloc_zero(ctx, struct outcome);
    mdt_image *img = (mdt_image *)o; /* must be reset to NULL on failure */
    char m[600];
    mdt_error_clear();
    if (how == FROM_FILE)
        o->code = mdt_image_open_file(o, &img, path, 0);
    else if (how == FROM_BUFFER)
        o->code = mdt_image_open_buffer(o, &img, path, buf, len, 0);
    else
        o->code = mdt_image_open_mapped_ranges(o, &img, path, l->base, l->ranges, l->nranges, 0);
    o->summary = talloc_asprintf(o, "open %d\n", o->code);
    if (o->code) {
        ck_assert_msg(img == NULL, "%s: failed open left *out set", path);
        o->msg = talloc_strdup(o, mdt_error_message(m, sizeof m));
        o->summary = talloc_asprintf_append(o->summary, "error: %s\n", o->msg);
        return o;
    }
    ck_assert_ptr_nonnull(img);
    o->nwarnings = mdt_image_warning_count(img);
    o->warnings = talloc_array(o, char *, o->nwarnings ? o->nwarnings : 1);
    for (size_t i = 0; i < o->nwarnings; i++) {
        o->warnings[i] = talloc_strdup(o, mdt_image_warning(img, i));
        o->summary = talloc_asprintf_append(o->summary, "warning: %s\n", o->warnings[i]);
    }
    walk_image_report(img, &o->st, note_error_cb, o);
    walk_sigs(o, path, img);
    char why[300];
    ck_assert_msg(walk_guest_check(img, why, sizeof why) == 0, "%s: %s", path, why);
    for (size_t i = 0; i < o->nerrors + o->nsigerrors && i < MAX_WALK_ERRORS; i++)
        o->summary = talloc_asprintf_append(o->summary, "walk %c %d: %s\n", o->errors[i].kind,
                                            o->errors[i].code, o->errors[i].msg);
    o->summary = talloc_asprintf_append(
        o->summary,
        "walk: %zu errors, %llu cells ok, %llu rows, %llu cells; %zu signatures failed, %zu ok\n",
        o->nerrors, (unsigned long long)o->st.cells_ok, (unsigned long long)o->st.rows,
        (unsigned long long)o->st.cells, o->nsigerrors, o->sigs_ok);
    if (mdt_table_rows(img, MDT_TABLE_TypeDef)) {
        mdt_row r;
        const char *s;
        o->has_typedef1 = true;
        if (mdt_row_get(&r, img, MDT_TABLE_TypeDef, 1) == 0 &&
            mdt_row_string(&s, NULL, &r, MDT_COL_TypeDef_TypeName) == 0)
            o->typedef1 = talloc_strdup(o, s);
        o->summary = talloc_asprintf_append(o->summary, "TypeDef 1: %s\n",
                                            o->typedef1 ? o->typedef1 : "(unreadable)");
    }
    mdt_image_close(img);
    return o;
}

static bool has_warning(const struct outcome *o, const char *needle)
{
    for (size_t i = 0; i < o->nwarnings; i++)
        if (strstr(o->warnings[i], needle))
            return true;
    return false;
}

static bool has_error(const struct outcome *o, char kind, int code, const char *needle)
{
    for (size_t i = 0; i < o->nerrors + o->nsigerrors && i < MAX_WALK_ERRORS; i++)
        if (o->errors[i].kind == kind && o->errors[i].code == code &&
            strstr(o->errors[i].msg, needle))
            return true;
    return false;
}

START_TEST(tsv_is_well_formed)
{
    ck_assert_msg(!load_problem, "%s", load_problem);
    ck_assert_msg(ncases >= 45, "only %d cases in %s", ncases, CASES_TSV);
    for (int i = 0; i < ncases; i++) {
        const struct corrupt_case *c = &cases[i];
        int code;
        ck_assert_msg(known_expect(c->expect), "line %u (%s): unknown expect %s", c->line, c->name,
                      c->expect);
        if (strcmp(c->expect, "open-warn") == 0 || strcmp(c->expect, "mapped-open-warn") == 0)
            ck_assert_msg(strcmp(c->code, "-") == 0, "line %u (%s): code must be -", c->line,
                          c->name);
        else
            ck_assert_msg(code_by_name(c->code, &code), "line %u (%s): unknown code %s", c->line,
                          c->name, c->code);
        ck_assert_msg(
            (strstr(c->msg, " && ") != NULL) == (strncmp(c->expect, "open-warn+", 10) == 0),
            "line %u (%s): \"WARNING && ERROR\" goes with open-warn+...", c->line, c->name);
        for (int j = 0; j < i; j++)
            ck_assert_msg(strcmp(cases[j].name, c->name) != 0, "line %u: duplicate case %s",
                          c->line, c->name);
    }
}
END_TEST

static void check_opened(const struct corrupt_case *c, const char *ex, const struct outcome *o,
                         int want, const char *warn, const char *err);

START_TEST(corrupt_case)
{
    ck_assert_msg(!load_problem && _i < ncases, "no case %d: %s", _i,
                  load_problem ? load_problem : "");
    const struct corrupt_case *c = &cases[_i];
    void *ctx = talloc_new(NULL);
    char rel[512], path[1024];
    size_t len = 0;
    int want = 0;
    snprintf(rel, sizeof rel, "tests/corrupt/cases/%s.bin", c->name);
    src_path(path, sizeof path, rel);
    uint8_t *buf = layout_read_file(path, &len);
    ck_assert_msg(buf != NULL, "%s: cannot read %s", c->name, path);
    if (strcmp(c->code, "-") != 0)
        ck_assert_msg(code_by_name(c->code, &want), "%s: unknown code %s", c->name, c->code);

    struct outcome *o = open_case(ctx, path, NULL, 0, FROM_FILE, NULL);
    struct outcome *b = open_case(ctx, path, buf, len, FROM_BUFFER, NULL);
    /* Laid out like a loader (when the headers describe a layout): what
     * it gives is checked only by the mapped-* kinds, but nothing may
     * fault, whatever the damage. */
    loader_layout l;
    struct outcome *m = NULL;
    bool mapped = strncmp(c->expect, "mapped-", 7) == 0;
    if (layout_make(&l, buf, len) == 0)
        m = open_case(ctx, path, NULL, 0, LAID_OUT, &l);
    ck_assert_msg(m || !mapped, "%s: a mapped-* case whose headers describe no layout", c->name);
    if (getenv("MDT_CORRUPT_VERBOSE"))
        fprintf(stderr, "== %s (%s)\n%s%s%s", c->name, c->why, o->summary,
                m ? "-- laid out:\n" : "", m ? m->summary : "");
    ck_assert_msg(
        strcmp(o->summary, b->summary) == 0,
        "%s: opening the file and the same bytes in a buffer differ:\n%.1500s---\n%.1500s", c->name,
        o->summary, b->summary);

    /* "WARNING && ERROR" for the combined kinds. */
    const char *warn = c->msg, *err = c->msg;
    char *split = strstr(c->msg, " && ");
    if (split) {
        warn = talloc_strndup(ctx, c->msg, (size_t)(split - c->msg));
        err = split + 4;
    }
    const char *ex = c->expect;
    if (mapped) {
        /* The loader's page granularity is in the expected RVAs. */
        ck_assert_uint_eq(sysconf(_SC_PAGESIZE), 0x1000);
        ex += 7;
        o = m;
    }
    if (strcmp(ex, "open-error") == 0) {
        ck_assert_msg(o->code == want, "%s (%s): open gave %d (%s), want %s", c->name, c->why,
                      o->code, o->msg ? o->msg : "success", c->code);
        ck_assert_msg(strstr(o->msg, c->msg) != NULL, "%s (%s): message\n  %s\nlacks\n  %s",
                      c->name, c->why, o->msg, c->msg);
    } else {
        check_opened(c, ex, o, want, warn, err);
    }
    talloc_free(ctx); /* the images before the memory they borrow */
    layout_free(&l);
    free(buf);
}
END_TEST

/* The expectations of a case whose open must succeed. */
static void check_opened(const struct corrupt_case *c, const char *ex, const struct outcome *o,
                         int want, const char *warn, const char *err)
{
    ck_assert_msg(o->code == 0, "%s (%s): open failed: %s", c->name, c->why, o->msg);
    if (strncmp(ex, "open-warn", 9) == 0) {
        ck_assert_msg(has_warning(o, warn), "%s (%s): no warning contains \"%s\":\n%.2000s",
                      c->name, c->why, warn, o->summary);
        ex += 9;
        if (*ex == '+')
            ex++;
    }
    if (*ex == '\0') {
        /* An accepted oddity: everything else reads. */
        ck_assert_msg(o->nerrors == 0 && o->st.errors == 0,
                      "%s (%s): a warning case, but the walk failed:\n%.2000s", c->name, c->why,
                      o->summary);
    } else if (strcmp(ex, "sig-error") == 0) {
        /* Every cell reads; the damage is inside a signature blob. */
        ck_assert_msg(o->nerrors == 0 && o->st.errors == 0,
                      "%s (%s): a signature case, but the cell walk failed:\n%.2000s", c->name,
                      c->why, o->summary);
        ck_assert_msg(has_error(o, 's', want, err),
                      "%s (%s): no signature error %s contains \"%s\":\n%.2000s", c->name, c->why,
                      c->code, err, o->summary);
        ck_assert_msg(o->sigs_ok > 0, "%s: no signature decoded at all:\n%.2000s", c->name,
                      o->summary);
    } else {
        char kind = strcmp(ex, "us-error") == 0 ? 'u' : 'c';
        ck_assert_msg(strcmp(ex, "cell-error") == 0 || kind == 'u', "%s: bad expect %s", c->name,
                      c->expect);
        ck_assert_msg(has_error(o, kind, want, err),
                      "%s (%s): no %s error %s contains \"%s\":\n%.2000s", c->name, c->why,
                      kind == 'u' ? "user string" : "cell", c->code, err, o->summary);
        /* The damage stays local: other cells still decode. */
        ck_assert_msg(o->st.cells_ok > 0, "%s: no cell decoded at all:\n%.2000s", c->name,
                      o->summary);
    }
    if (o->has_typedef1)
        ck_assert_msg(o->typedef1 && strcmp(o->typedef1, "<Module>") == 0,
                      "%s (%s): TypeDef row 1 does not read as <Module>:\n%.2000s", c->name, c->why,
                      o->summary);
}

Suite *suite(void);
Suite *suite(void)
{
    Suite *s = suite_create("corrupt");
    TCase *tc = tcase_create("corrupt");
    load_cases();
    tcase_add_test(tc, tsv_is_well_formed);
    /* One test per case, so each passes or fails on its own. */
    tcase_add_loop_test(tc, corrupt_case, 0, ncases > 0 ? ncases : 1);
    suite_add_tcase(s, tc);
    return s;
}
