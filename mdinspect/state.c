/* mdinspect's state: the set of open modules (opening, naming, selecting,
 * closing), caches tied to it, and reporting errors in step with the
 * output. */
#include "config.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <talloc.h>

#include <mdtools/assembly.h>
#include <mdtools/bundle.h>
#include <mdtools/errors.h>
#include <mdtools/heaps.h>
#include <mdtools/tables.h>

#include "state.h"

volatile sig_atomic_t mdi_sigint;

mdi_state *mdi_state_new(void *mem_ctx, FILE *out, FILE *err, enum mdi_format fmt)
{
    mdi_state *st = talloc_zero(mem_ctx, mdi_state);
    if (!st)
        return NULL;
    st->mem = st;
    st->format = fmt;
    st->err = err;
    st->next_id = 1;
    st->names.style = MDT_STYLE_FULL;
    st->out = mdi_printer_new(st, out, fmt);
    if (!st->out) {
        talloc_free(st);
        return NULL;
    }
    return st;
}

static const char *last_component(const char *path)
{
    const char *s = strrchr(path, '/');
    return s && s[1] ? s + 1 : path;
}

/* Module row 1's Name, else the file name. */
static char *module_name(void *mem, const mdt_image *img, const char *path)
{
    mdt_row row;
    const char *s;
    size_t len;
    if (mdt_row_get(&row, img, MDT_TABLE_Module, 1) == 0 &&
        mdt_row_string(&s, &len, &row, MDT_COL_Module_Name) == 0 && len)
        return talloc_strndup(mem, s, len);
    mdt_error_clear();
    return talloc_strdup(mem, last_component(path));
}

static void changed(mdi_state *st)
{
    st->generation++;
    talloc_free(st->caches);
    st->caches = NULL;
}

static bool same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
           a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* The bundle `file` (stat'ed in *sb): the one kept from the last member
 * when it is the same file, else opened (and kept); NULL when it is none. */
static mdt_bundle *bundle_of(mdi_state *st, const char *file, const struct stat *sb)
{
    mdt_bundle *b;
    if (st->bundle && strcmp(st->bundle_path, file) == 0 && same_file(&st->bundle_st, sb))
        return st->bundle;
    if (mdt_bundle_open_file(st->mem, &b, file) != 0) {
        mdt_error_clear();
        return NULL;
    }
    char *copy = talloc_strdup(b, file);
    if (!copy) {
        talloc_free(b);
        return NULL;
    }
    talloc_free(st->bundle); /* its path with it */
    st->bundle = b;
    st->bundle_path = copy;
    st->bundle_st = *sb;
    return b;
}

/* "BUNDLE!PATH", a file of a single-file bundle (mdi_expand lists them so):
 * the first '!' whose left side is a regular file that is a bundle with a
 * file PATH. 0 and the image, an error of the library (recorded), or 1
 * when no split names one; *sb the bundle's. */
static int open_member(mdi_state *st, mdt_image **img, const char *path, struct stat *sb)
{
    for (const char *bang = strchr(path, '!'); bang; bang = strchr(bang + 1, '!')) {
        char *file = talloc_strndup(NULL, path, (size_t)(bang - path));
        mdt_bundle *b = NULL;
        mdt_bundle_info in;
        if (file && stat(file, sb) == 0 && S_ISREG(sb->st_mode))
            b = bundle_of(st, file, sb);
        talloc_free(file);
        if (!b)
            continue;
        mdt_bundle_info_get(&in, b);
        for (size_t i = 0; i < in.files; i++) {
            mdt_bundle_entry e;
            if (mdt_bundle_entry_get(&e, b, i) == 0 && strcmp(e.path, bang + 1) == 0)
                return mdt_bundle_open_image(st->mem, img, b, i, 0); /* read: owns its bytes */
        }
    }
    return 1;
}

mdi_module *mdi_state_open(mdi_state *st, const char *path, unsigned flags, bool *already)
{
    struct stat sb;
    mdi_module *m, **nm;
    mdt_image *img = NULL;
    bool member = false;

    if (already)
        *already = false;
    if (stat(path, &sb) == 0) {
        for (size_t i = 0; i < st->nmods; i++)
            if (st->mods[i]->dev == sb.st_dev && st->mods[i]->ino == sb.st_ino &&
                !strchr(st->mods[i]->path, '!')) {
                if (already)
                    *already = true;
                return st->mods[i];
            }
    } else if (strchr(path, '!')) {
        /* a bundle's file: the bundle's identity, told apart by path */
        for (size_t i = 0; i < st->nmods; i++)
            if (strcmp(st->mods[i]->path, path) == 0) {
                if (already)
                    *already = true;
                return st->mods[i];
            }
        member = true;
    }
    /* MDT_OPEN_LAZY: the headers and metadata now, bodies (il), resources
     * and the rest when a command first reads them; never mapped. */
    int r = member ? open_member(st, &img, path, &sb)
                   : mdt_image_open_file(st->mem, &img, path, MDT_OPEN_LAZY);
    if (r == 1) {
        mdi_report(st, "%s: no such file, nor a file of a single-file bundle", path);
        return NULL;
    }
    if (r != 0) {
        if (!(flags & MDI_OPEN_QUIET_FOREIGN) || mdt_error_last()->code != MDT_ENOTDOTNET)
            mdi_report_lib(st, st->cmd);
        return NULL;
    }
    m = talloc_zero(st->mem, mdi_module);
    nm = m ? talloc_realloc(st->mem, st->mods, mdi_module *, st->nmods + 1) : NULL;
    if (!nm) {
        talloc_free(m);
        mdt_image_close(img);
        mdi_report(st, "%s: out of memory", path);
        return NULL;
    }
    st->mods = nm;
    m->id = st->next_id++;
    m->path = talloc_strdup(m, path);
    m->img = talloc_steal(m, img);
    m->name = module_name(m, img, path);
    m->dev = sb.st_dev;
    m->ino = sb.st_ino;
    if (!m->path || !m->name) {
        talloc_free(m);
        mdi_report(st, "%s: out of memory", path);
        return NULL;
    }
    st->mods[st->nmods++] = m;
    changed(st);
    if (!st->cur)
        mdi_state_use(st, m);
    return m;
}

void mdi_state_fit_terminal(mdi_state *st)
{
    struct winsize ws;
    size_t cols = 0;
    if (!st->wide && isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0)
        cols = ws.ws_col;
    mdi_printer_set_max_width(st->out, cols);
}

void mdi_state_use(mdi_state *st, mdi_module *m)
{
    st->cur = m;
    mdi_printer_set_file(st->out, m ? m->path : NULL);
}

void mdi_state_close(mdi_state *st, mdi_module *m)
{
    size_t i;
    for (i = 0; i < st->nmods && st->mods[i] != m; i++)
        ;
    if (i == st->nmods)
        return;
    memmove(&st->mods[i], &st->mods[i + 1], (st->nmods - i - 1) * sizeof st->mods[0]);
    st->nmods--;
    if (st->cur == m)
        mdi_state_use(st, NULL);
    if (st->last_named == m)
        st->last_named = NULL;
    talloc_free(m);
    changed(st);
}

void mdi_state_close_all(mdi_state *st)
{
    while (st->nmods)
        mdi_state_close(st, st->mods[st->nmods - 1]);
}

/* The module's file name: the last component of its path. */
static const char *file_name(const mdi_module *m)
{
    return last_component(m->path);
}

/* A GUID written as 32 hex digits, with or without dashes and braces:
 * its digits in lower case, in the order mdt_heap_guid_format prints them;
 * false if spec is not one. */
static bool parse_mvid(const char *spec, char hex[33])
{
    size_t n = 0;
    for (const char *c = spec; *c; c++) {
        if (*c == '-' || *c == '{' || *c == '}')
            continue;
        if (!isxdigit((unsigned char)*c) || n == 32)
            return false;
        hex[n++] = (char)tolower((unsigned char)*c);
    }
    hex[n] = '\0';
    return n == 32;
}

static bool module_matches(const mdi_module *m, const char *spec, int pass, const char *mvid)
{
    size_t len = strlen(spec);
    switch (pass) {
    case 0: /* the module name */ return strcasecmp(m->name, spec) == 0;
    case 1: /* the file name */ return strcasecmp(file_name(m), spec) == 0;
    case 2: { /* the assembly's simple name */
        mdt_identity id;
        bool hit =
            mdt_assembly_identity(&id, m->img) == 0 && id.name && strcasecmp(id.name, spec) == 0;
        mdt_error_clear();
        return hit;
    }
    case 3: { /* the MVID */
        uint8_t g[16];
        char buf[37], hex[33];
        size_t k = 0;
        if (!mvid || mdt_image_mvid(g, m->img) != 0) {
            mdt_error_clear();
            return false;
        }
        mdt_heap_guid_format(buf, g);
        for (const char *c = buf; *c; c++)
            if (*c != '-')
                hex[k++] = (char)tolower((unsigned char)*c);
        hex[k] = '\0';
        return strcmp(hex, mvid) == 0;
    }
    default: /* a prefix of the module name */ return strncasecmp(m->name, spec, len) == 0;
    }
}

mdi_module *mdi_module_find(mdi_state *st, const char *spec)
{
    static const char *const how[] = {"module name", "file name", "assembly name", "MVID",
                                      "prefix"};
    mdi_module *found = NULL;
    size_t n = 0;
    int pass;
    char mvid[33], *list;

    if (spec[0] == '#') {
        char *end;
        unsigned long id = strtoul(spec + 1, &end, 10);
        if (isdigit((unsigned char)spec[1]) && !*end)
            for (size_t i = 0; i < st->nmods; i++)
                if (st->mods[i]->id == id)
                    return st->mods[i];
        mdi_fail(st, "no module %s is open ('modules' lists them)", spec);
        return NULL;
    }
    for (size_t i = 0; i < st->nmods; i++)
        if (strcmp(st->mods[i]->path, spec) == 0)
            return st->mods[i];
    /* Exact names of each kind in turn (the same name may be open twice:
     * then ambiguous), then prefixes of module names. */
    bool is_mvid = parse_mvid(spec, mvid);
    for (pass = 0; pass < 5 && !n; pass++)
        for (size_t i = 0; i < st->nmods; i++)
            if (module_matches(st->mods[i], spec, pass, is_mvid ? mvid : NULL)) {
                found = st->mods[i];
                n++;
            }
    if (n == 1)
        return found;
    if (n == 0) {
        mdi_fail(st,
                 "no module '%s' is open (by #N, path, module, file or assembly name, MVID or a "
                 "prefix; 'modules' lists them)",
                 spec);
        return NULL;
    }
    pass--;
    list = talloc_strdup(st, "");
    for (size_t i = 0; list && i < st->nmods; i++)
        if (module_matches(st->mods[i], spec, pass, is_mvid ? mvid : NULL))
            list = talloc_asprintf_append(list, "%s#%u %s (%s)", list[0] ? ", " : "",
                                          st->mods[i]->id, st->mods[i]->name, st->mods[i]->path);
    mdi_fail(st, "ambiguous module '%s' (%s): %s", spec, how[pass], list ? list : "");
    talloc_free(list);
    return NULL;
}

void mdi_about(mdi_state *st, const mdi_module *m)
{
    mdi_printer_set_file(st->out, m ? m->path : NULL);
}

mdi_module *mdi_current(const mdi_state *st)
{
    return st->cur;
}

const mdt_image *mdi_image(const mdi_state *st)
{
    return st->cur ? st->cur->img : NULL;
}

const char *mdi_image_path(const mdi_state *st)
{
    return st->cur ? st->cur->path : NULL;
}

/* ---- caches ---- */

struct cache_entry {
    struct cache_entry *next;
    char *key;
    void *ptr;
};

void *mdi_cache_get(mdi_state *st, const char *key)
{
    struct cache_entry *e = st->caches ? *(struct cache_entry **)st->caches : NULL;
    for (; e; e = e->next)
        if (strcmp(e->key, key) == 0)
            return e->ptr;
    return NULL;
}

void *mdi_cache_put(mdi_state *st, const char *key, void *ptr)
{
    struct cache_entry **head, *e;
    if (!st->caches) {
        st->caches = talloc_zero(st, struct cache_entry *);
        if (!st->caches)
            return NULL;
    }
    head = st->caches;
    e = talloc_zero(st->caches, struct cache_entry);
    if (!e || !(e->key = talloc_strdup(e, key))) {
        talloc_free(e);
        return NULL;
    }
    e->ptr = talloc_steal(e, ptr);
    e->next = *head;
    *head = e;
    return ptr;
}

bool mdi_interrupted(const mdi_state *st)
{
    return mdi_sigint || mdi_printer_failed(st->out);
}

/* ---- messages ---- */

static void vreport(mdi_state *st, const char *cmd, const char *fmt, va_list ap)
{
    /* Colour on the terminal, or into the pager (st->err is its pipe). */
    bool color = st->color && (st->err != stderr || isatty(STDERR_FILENO));
    mdi_printer_flush(st->out);
    if (color)
        fputs("\033[1;31m", st->err);
    fputs(MDI_PROGNAME ":", st->err);
    if (color)
        fputs("\033[0m", st->err);
    fputc(' ', st->err);
    if (cmd)
        fprintf(st->err, "%s: ", cmd);
    vfprintf(st->err, fmt, ap);
    fputc('\n', st->err);
    fflush(st->err);
}

void mdi_report(mdi_state *st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(st, NULL, fmt, ap);
    va_end(ap);
}

int mdi_fail(mdi_state *st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(st, st->cmd, fmt, ap);
    va_end(ap);
    return 1;
}

int mdi_report_unread(mdi_state *st, int n, const char *noun, const char *of)
{
    if (!n)
        return 0; /* MDI_OK (cmd.h, above this file), as mdi_fail's 1 is MDI_FAIL */
    mdi_report(st, "%s: %d %s%s%s could not be read", mdi_image_path(st), n, noun,
               n == 1 ? "" : "s", of);
    return 1;
}

void mdi_report_lib(mdi_state *st, const char *what)
{
    char msg[512];
    mdt_error_message(msg, sizeof msg);
    if (what)
        mdi_report(st, "%s: %s", what, msg);
    else
        mdi_report(st, "%s", msg);
}

char *mdi_errmsg_here(char *buf, size_t len)
{
    const mdt_errinfo *e = mdt_error_last();
    size_t n = strlen(e->file);
    mdt_error_message(buf, len);
    if (n && strncmp(buf, e->file, n) == 0 && buf[n] == ':' && buf[n + 1] == ' ')
        memmove(buf, buf + n + 2, strlen(buf + n + 2) + 1);
    return buf;
}

const char *mdi_cell_error(char *buf, size_t len)
{
    const mdt_errinfo *e = mdt_error_last();
    if (e->file_offset != UINT64_MAX)
        snprintf(buf, len, "%s (file 0x%" PRIx64 ")",
                 e->what[0] ? e->what : mdt_error_string(e->code), e->file_offset);
    else
        snprintf(buf, len, "%s", e->what[0] ? e->what : mdt_error_string(e->code));
    return buf;
}
