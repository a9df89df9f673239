/* `validate`: read everything a module holds and list every problem with
 * its place: the warnings recorded at open (ECMA-335 II.24), every row and
 * cell of every table (II.22, II.24.2.6), every signature blob decoded and
 * named (II.23.2), every name formed (nesting and scope chains), and the
 * heaps walked entry by entry (II.24.2.3 - II.24.2.5), and every custom
 * attribute (II.23.3) and Constant (II.22.9) value decoded. Errors make
 * the command fail; warnings (accepted oddities, and attributes that cannot
 * be checked because an enum's assembly is not open) do not. */
#include "config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <talloc.h>

#include <mdtools/attr.h>
#include <mdtools/errors.h>
#include <mdtools/heaps.h>
#include <mdtools/names.h>
#include <mdtools/sig.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>
#include <mdtools/value.h>

#include "cmd.h"
#include "resolve.h"

enum { A_ALL };

struct vctx {
    mdi_state *st;
    mdi_module *m;
    void *tmp;     /* scratch for names and signatures, emptied as it goes */
    unsigned uses; /* of tmp since it was last emptied */
    unsigned long errors, warnings, rows, cells, sigs, names, values, entries;
};

static void problem(struct vctx *v, bool error, const char *place, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void problem(struct vctx *v, bool error, const char *place, const char *fmt, ...)
{
    mdi_printer *p = v->st->out;
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (error)
        v->errors++;
    else
        v->warnings++;
    mdi_item_begin(p);
    mdi_str(p, "module", "module", v->m->name);
    mdi_str(p, "severity", "severity", error ? "error" : "warning");
    mdi_str(p, "place", "place", place);
    mdi_str(p, "message", "message", msg);
    mdi_item_end(p);
}

static const char *lib_error(char *buf, size_t len)
{
    return mdi_errmsg_here(buf, len);
}

/* Empty the scratch context now and then: by count, since measuring its
 * size (talloc_total_size) walks every block and made validation
 * quadratic. A few hundred names and signatures stay small. */
static void scratch(struct vctx *v)
{
    if (++v->uses >= 256) {
        talloc_free(v->tmp);
        v->tmp = talloc_new(v->st);
        v->uses = 0;
    }
}

static bool decodes(const mdt_row *row, unsigned col, const mdt_column_schema *c)
{
    const char *s;
    size_t len;
    const uint8_t *d;
    uint32_t n, tok, first;
    switch (c->kind) {
    case MDT_COLK_STR: return mdt_row_string(&s, &len, row, col) == 0;
    case MDT_COLK_GUID: return mdt_row_guid(&d, row, col) == 0;
    case MDT_COLK_BLOB: return mdt_row_blob(&d, &n, row, col) == 0;
    case MDT_COLK_TAB:
    case MDT_COLK_CODED: return mdt_row_token(&tok, row, col) == 0;
    case MDT_COLK_LIST: return mdt_row_range(&first, &n, row, col) == 0;
    default: return true;
    }
}

static void tables(struct vctx *v)
{
    const mdt_image *img = v->m->img;
    char place[128], msg[512];
    for (unsigned t = 0; t < MDT_TABLE_MAX && !mdi_interrupted(v->st); t++) {
        const mdt_table_schema *s = mdt_table_schema_get(t);
        uint32_t rows = mdt_table_rows(img, t);
        if (!s || !rows)
            continue;
        for (uint32_t rid = 1; rid <= rows && !mdi_interrupted(v->st); rid++) {
            mdt_row row;
            if (mdt_row_get(&row, img, t, rid) != 0) {
                snprintf(place, sizeof place, "%s rows %" PRIu32 "..%" PRIu32, s->name, rid, rows);
                problem(v, true, place, "%s", lib_error(msg, sizeof msg));
                break;
            }
            v->rows++;
            for (unsigned c = 0; c < s->ncols; c++) {
                v->cells++;
                if (decodes(&row, c, &s->cols[c]))
                    continue;
                snprintf(place, sizeof place, "%s row %" PRIu32 " %s", s->name, rid,
                         s->cols[c].name);
                problem(v, true, place, "%s", mdi_cell_error(msg, sizeof msg));
            }
        }
    }
}

static void signatures_and_names(struct vctx *v)
{
    static const struct {
        uint8_t table;
        bool sig, name;
    } what[] = {
        {MDT_TABLE_TypeRef, false, true},     {MDT_TABLE_TypeDef, false, true},
        {MDT_TABLE_Field, true, true},        {MDT_TABLE_MethodDef, true, true},
        {MDT_TABLE_MemberRef, true, true},    {MDT_TABLE_StandAloneSig, true, false},
        {MDT_TABLE_Event, false, true},       {MDT_TABLE_Property, true, true},
        {MDT_TABLE_ModuleRef, false, true},   {MDT_TABLE_TypeSpec, true, true},
        {MDT_TABLE_AssemblyRef, false, true}, {MDT_TABLE_File, false, true},
        {MDT_TABLE_MethodSpec, true, true},
    };
    const mdt_image *img = v->m->img;
    mdt_name_opts full = {.style = MDT_STYLE_FULL};
    char place[128], msg[512];
    /* Names and signatures into buffers, TypeDef/TypeRef names cached: a
     * validation forms every name of the module once. The allocating
     * functions take over when a name does not fit. */
    uint64_t arena[256];
    char buf[1024];
    if (mdt_name_cache_new(v->st, &full.cache, img, MDT_STYLE_FULL, 0))
        full.cache = NULL;
    mdt_error_clear();
    for (size_t k = 0; k < sizeof what / sizeof what[0]; k++) {
        unsigned t = what[k].table;
        const char *tn = mdt_table_schema_get(t)->name;
        uint32_t rows = mdt_table_rows(img, t);
        for (uint32_t rid = 1; rid <= rows && !mdi_interrupted(v->st); rid++) {
            uint32_t tok = MDT_TOKEN(t, rid);
            mdt_row row;
            char *out;
            if (mdt_row_get(&row, img, t, rid) != 0)
                break; /* reported with the tables */
            if (what[k].sig) {
                mdt_sig sig;
                int e;
                v->sigs++;
                e = mdt_sig_of_token_buf(arena, sizeof arena, &sig, img, tok);
                if (e == MDT_ENOMEM)
                    e = mdt_sig_of_token(v->tmp, &sig, img, tok);
                if (e == 0 &&
                    (e = mdt_sig_name_buf(buf, sizeof buf, NULL, &sig, &full)) == MDT_ETRUNC)
                    e = mdt_sig_name(v->tmp, &out, &sig, &full);
                if (e != 0) {
                    snprintf(place, sizeof place, "%s 0x%08" PRIx32 " signature", tn, tok);
                    problem(v, true, place, "%s", lib_error(msg, sizeof msg));
                }
            }
            if (what[k].name) {
                int e;
                v->names++;
                if ((e = mdt_token_name_buf(buf, sizeof buf, NULL, img, tok, &full)) == MDT_ETRUNC)
                    e = mdt_token_name(v->tmp, &out, img, tok, &full);
                if (e != 0) {
                    snprintf(place, sizeof place, "%s 0x%08" PRIx32 " name", tn, tok);
                    problem(v, true, place, "%s", lib_error(msg, sizeof msg));
                }
            }
            scratch(v);
        }
    }
    talloc_free(full.cache);
}

/* Every CustomAttribute and Constant row decoded. An attribute that
 * cannot be decoded because an enum's size is unknown (its assembly is
 * not open: MDT_EUNRESOLVED) or that uses a parameter type outside what
 * attributes may have (MDT_EUNSUPPORTED: the runtime would refuse it when
 * asked, but the file is well-formed) is a warning. */
static void values(struct vctx *v)
{
    const mdt_image *img = v->m->img;
    uint32_t n = mdt_table_rows(img, MDT_TABLE_CustomAttribute);
    char place[128], msg[512];
    for (uint32_t rid = 1; rid <= n && !mdi_interrupted(v->st); rid++) {
        mdt_row row;
        mdt_attr a;
        int rc;
        if (mdt_row_get(&row, img, MDT_TABLE_CustomAttribute, rid) != 0)
            break; /* reported with the tables */
        v->values++;
        rc = mdt_attr_of_row(v->tmp, &a, img, rid, mdi_enum_resolver, v->st);
        if (rc) {
            snprintf(place, sizeof place, "CustomAttribute 0x%08" PRIx32 " value",
                     MDT_TOKEN(MDT_TABLE_CustomAttribute, rid));
            problem(v, rc != MDT_EUNRESOLVED && rc != MDT_EUNSUPPORTED, place, "%s",
                    lib_error(msg, sizeof msg));
        }
        scratch(v);
    }
    n = mdt_table_rows(img, MDT_TABLE_Constant);
    for (uint32_t rid = 1; rid <= n && !mdi_interrupted(v->st); rid++) {
        mdt_row row;
        mdt_value val;
        if (mdt_row_get(&row, img, MDT_TABLE_Constant, rid) != 0)
            break;
        v->values++;
        if (mdt_constant_of_row(v->tmp, &val, img, rid) != 0) {
            snprintf(place, sizeof place, "Constant 0x%08" PRIx32 " value",
                     MDT_TOKEN(MDT_TABLE_Constant, rid));
            problem(v, true, place, "%s", lib_error(msg, sizeof msg));
        }
        scratch(v);
    }
    mdt_error_clear();
}

static void heaps(struct vctx *v)
{
    const mdt_image *img = v->m->img;
    uint32_t size, off;
    char place[64], msg[512];

    size = mdt_heap_size(img, MDT_HEAP_STRINGS);
    for (off = 0; off < size && !mdi_interrupted(v->st);) {
        const char *s;
        size_t len;
        if (mdt_heap_string(&s, &len, img, off) != 0) {
            snprintf(place, sizeof place, "#Strings+0x%" PRIx32, off);
            problem(v, true, place, "%s", lib_error(msg, sizeof msg));
            break;
        }
        v->entries++;
        off += (uint32_t)len + 1;
    }
    for (int heap = MDT_HEAP_US; heap <= MDT_HEAP_BLOB; heap++) {
        const char *hn = heap == MDT_HEAP_US ? "#US" : "#Blob";
        size = mdt_heap_size(img, heap);
        for (off = 1; off < size && !mdi_interrupted(v->st);) {
            const uint8_t *d;
            uint32_t len;
            int flag = 0, e;
            e = heap == MDT_HEAP_US ? mdt_heap_us(&d, &len, &flag, img, off)
                                    : mdt_heap_blob(&d, &len, img, off);
            if (e != 0) {
                snprintf(place, sizeof place, "%s+0x%" PRIx32, hn, off);
                problem(v, true, place, "%s", lib_error(msg, sizeof msg));
                break;
            }
            v->entries++;
            if (heap == MDT_HEAP_US && flag < 0 && len) {
                snprintf(place, sizeof place, "%s+0x%" PRIx32, hn, off);
                problem(v, false, place, "user string of even length: no final flag byte");
            }
            if (mdt_heap_next(&off, img, heap, off))
                break; /* cannot happen: the entry just read */
        }
    }
    size = mdt_heap_size(img, MDT_HEAP_GUID);
    if (size % 16)
        problem(v, false, "#GUID", "size 0x%" PRIx32 " is not a multiple of 16", size);
    v->entries += size / 16;
    mdt_error_clear();
}

static void validate(mdi_state *st, mdi_module *m, struct vctx *v)
{
    size_t nwarn = mdt_image_warning_count(m->img);
    memset(v, 0, sizeof *v);
    v->st = st;
    v->m = m;
    v->tmp = talloc_new(st);
    mdi_about(st, m);
    for (size_t i = 0; i < nwarn; i++)
        problem(v, false, "open", "%s", mdt_image_warning(m->img, i));
    tables(v);
    signatures_and_names(v);
    values(v);
    heaps(v);
    talloc_free(v->tmp);
    mdt_error_clear();
}

/* Progress on a terminal: one line on stderr, rewritten per module and
 * cleared before any output, so it never mixes with results. Not while a
 * pager shows the output once results have gone to it (the pager owns the
 * screen then). */
struct progress {
    bool on, shown;
};

static void progress_clear(struct progress *pr)
{
    if (pr->shown) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
        pr->shown = false;
    }
}

static void progress_show(mdi_state *st, struct progress *pr, size_t i, size_t n,
                          const mdi_module *m)
{
    char *name;
    if (!pr->on)
        return;
    name = mdi_escape(st, m->name, strlen(m->name), false);
    fprintf(stderr, "\r\033[Kvalidate: %zu/%zu %s", i + 1, n, name ? name : "");
    fflush(stderr);
    talloc_free(name);
    pr->shown = true;
}

static int run(mdi_state *st, size_t argc, const mdi_arg *argv)
{
    bool all = mdi_arg_of(argc, argv, A_ALL) != NULL;
    mdi_printer *p = st->out;
    struct vctx *v;
    struct progress pr = {false, false};
    size_t n = all ? st->nmods : 1, bad = 0, done = 0;
    char caption[160];

    if (!mdi_current(st) && !(all && st->nmods))
        return mdi_fail(st, "no module is open (use 'open PATH')");
    v = talloc_zero_array(st, struct vctx, n);
    if (!v)
        return mdi_fail(st, "out of memory");
    pr.on = all && n > 1 && isatty(STDERR_FILENO);
    if (all)
        snprintf(caption, sizeof caption, "problems in %zu module%s", n, n == 1 ? "" : "s");
    else
        snprintf(caption, sizeof caption, "problems in %s", st->cur->name);
    mdi_list_begin(p, NULL, caption, "none", 0);
    for (size_t i = 0; i < n && !mdi_interrupted(st); i++) {
        mdi_module *m = all ? st->mods[i] : st->cur;
        progress_show(st, &pr, i, n, m);
        validate(st, m, &v[i]);
        if (!mdi_interrupted(st))
            done++;
        /* Each module's problems as soon as it is done. */
        if (v[i].errors || v[i].warnings) {
            progress_clear(&pr);
            mdi_list_flush(p);
            if (st->err != stderr)
                pr.on = false;
        }
    }
    progress_clear(&pr);
    mdi_list_end(p);

    if (done < n)
        snprintf(caption, sizeof caption, "partial: interrupted after %zu of %zu module%s", done, n,
                 n == 1 ? "" : "s");
    mdi_list_begin(p, NULL, done < n ? caption : "", NULL, 0);
    for (size_t i = 0; i < n; i++) {
        if (!v[i].m)
            continue;
        mdi_about(st, v[i].m);
        mdi_item_begin(p);
        mdi_str(p, "module", "module", v[i].m->name);
        mdi_bool(p, "complete", NULL, i < done);
        mdi_uint(p, "errors", "errors", v[i].errors);
        mdi_uint(p, "warnings", "warnings", v[i].warnings);
        mdi_uint(p, "rows", "rows", v[i].rows);
        mdi_uint(p, "cells", "cells", v[i].cells);
        mdi_uint(p, "signatures", "signatures", v[i].sigs);
        mdi_uint(p, "names", "names", v[i].names);
        mdi_uint(p, "values", "values", v[i].values);
        mdi_uint(p, "heap_entries", "heap entries", v[i].entries);
        if (i >= done)
            mdi_textf(p, "", "(partial)");
        mdi_item_end(p);
        if (v[i].errors)
            bad++;
    }
    mdi_list_end(p);
    mdi_about(st, mdi_current(st));
    talloc_free(v);
    if (bad)
        return mdi_fail(st, "%zu module%s with errors", bad, bad == 1 ? "" : "s");
    return MDI_OK;
}

const mdi_cmd mdi_cmd_validate = {
    .name = "validate",
    .args = {MDI_FLAG_ALL("validate every open module")},
    .summary = "read everything; list every problem and where it is",
    .help = "Reads everything the current module holds and lists each problem\n"
            "with its place: warnings recorded when it was opened; every row and\n"
            "cell of every table; every signature (MethodDef, Field, Property,\n"
            "MemberRef, StandAloneSig, TypeSpec, MethodSpec) decoded and printed;\n"
            "every name formed (types, members, references: nesting and scope\n"
            "chains); every custom attribute and Constant value decoded; and the\n"
            "#Strings, #US, #Blob and #GUID heaps walked entry by entry. Then a\n"
            "count of what was checked. The command fails when there is an error;\n"
            "warnings (oddities the library accepts, and attributes with an enum\n"
            "argument whose size is unknown because the enum's assembly is not\n"
            "open) do not fail it.\n"
            "\n"
            "With -a every open module in turn: each module's problems are shown\n"
            "as soon as it is done, a progress line on a terminal says which\n"
            "module is being read, and Ctrl-C stops at once: the counts then cover\n"
            "what was read and say they are partial.\n",
    .run = run,
};
