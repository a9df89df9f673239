/* mdinspect's opening of files, globs and directories, and of the modules
 * an assembly's File table names (ECMA-335 II.22.19 File: Flags bit 0x1
 * ContainsNoMetaData, Name a file name without a path; II.6.5: the files
 * of a multi-module assembly sit beside its manifest). See opening.h. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <talloc.h>

#include <mdtools/bundle.h>
#include <mdtools/errors.h>
#include <mdtools/file.h>
#include <mdtools/tables.h>

#include "cmd.h"
#include "index.h"
#include "opening.h"

#define MAX_DEPTH 32 /* subdirectories followed, at most */

/* ---- expanding an argument into files ---- */

static bool net_name(const char *name)
{
    static const char *const ext[] = {".dll", ".exe", ".winmd", ".netmodule", ".webcil", ".wasm"};
    size_t len = strlen(name);
    for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
        size_t el = strlen(ext[i]);
        if (len > el && strcasecmp(name + len - el, ext[i]) == 0)
            return true;
    }
    return false;
}

static void note(void *mem, char ***notes, size_t *n, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void note(void *mem, char ***notes, size_t *n, const char *fmt, ...)
{
    va_list ap;
    char **nn = talloc_realloc(mem, *notes, char *, *n + 1);
    if (!nn)
        return;
    *notes = nn;
    va_start(ap, fmt);
    nn[*n] = talloc_vasprintf(nn, fmt, ap);
    va_end(ap);
    if (nn[*n])
        (*n)++;
}

static void add_path(void *mem, mdi_found *out, const char *path, bool in_dir)
{
    char **np = talloc_realloc(mem, out->paths, char *, out->n + 1);
    bool *nd = np ? talloc_realloc(mem, out->in_dir, bool, out->n + 1) : NULL;
    if (np)
        out->paths = np;
    if (!nd)
        return;
    out->in_dir = nd;
    if ((np[out->n] = talloc_strdup(np, path)))
        nd[out->n++] = in_dir;
}

struct dirwalk {
    mdi_state *st;
    void *mem;
    unsigned flags;
    mdi_found *out;
    dev_t *dev; /* directories read: a link back to one is not followed */
    ino_t *ino;
    size_t nseen;
};

static bool seen_before(struct dirwalk *w, const struct stat *sb)
{
    dev_t *nd;
    ino_t *ni;
    for (size_t i = 0; i < w->nseen; i++)
        if (w->dev[i] == sb->st_dev && w->ino[i] == sb->st_ino)
            return true;
    nd = talloc_realloc(w->mem, w->dev, dev_t, w->nseen + 1);
    ni = nd ? talloc_realloc(w->mem, w->ino, ino_t, w->nseen + 1) : NULL;
    if (nd)
        w->dev = nd;
    if (!ni)
        return true; /* out of memory: read no more */
    w->ino = ni;
    w->dev[w->nseen] = sb->st_dev;
    w->ino[w->nseen++] = sb->st_ino;
    return false;
}

static int by_natural(const void *a, const void *b)
{
    return mdi_natural_cmp(*(char *const *)a, *(char *const *)b);
}

/* The files of `dir` with a .NET name, then its subdirectories (with
 * MDI_OPENING_RECURSIVE), each in natural name order. */
static void walk(struct dirwalk *w, const char *dir, unsigned depth)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char **names = NULL, **subdirs = NULL;
    size_t n = 0, nsub = 0, dl = strlen(dir);
    bool verbose = w->flags & MDI_OPENING_VERBOSE;
    if (!d) {
        mdi_fail(w->st, "%s: cannot read the directory: %s", dir, strerror(errno));
        w->out->status = MDI_FAIL;
        return;
    }
    w->out->dirs++;
    while ((e = readdir(d))) {
        char **nn;
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (!(nn = talloc_realloc(w->mem, names, char *, n + 1)))
            break;
        names = nn;
        names[n] =
            talloc_asprintf(names, "%s%s%s", dir, dl && dir[dl - 1] == '/' ? "" : "/", e->d_name);
        if (names[n])
            n++;
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof names[0], by_natural);
    for (size_t i = 0; i < n && !mdi_interrupted(w->st); i++) {
        const char *base = strrchr(names[i], '/') + 1;
        struct stat sb;
        if (stat(names[i], &sb) != 0) {
            w->out->unnamed++;
            if (verbose)
                note(w->mem, &w->out->notes, &w->out->nnotes, "%s: %s", names[i], strerror(errno));
        } else if (S_ISDIR(sb.st_mode)) {
            char **ns = talloc_realloc(w->mem, subdirs, char *, nsub + 1);
            if (ns) {
                subdirs = ns;
                subdirs[nsub++] = names[i];
            }
        } else if (!S_ISREG(sb.st_mode) || !net_name(base) || base[0] == '.') {
            w->out->unnamed++;
            if (verbose)
                note(w->mem, &w->out->notes, &w->out->nnotes, "%s: %s", names[i],
                     !S_ISREG(sb.st_mode) ? "not a regular file"
                     : base[0] == '.'     ? "a hidden file"
                                          : "not a .NET file name (.dll, .exe, .winmd, "
                                            ".netmodule, .webcil, .wasm)");
        } else {
            add_path(w->mem, w->out, names[i], true);
        }
    }
    for (size_t i = 0; i < nsub && !mdi_interrupted(w->st); i++) {
        struct stat sb;
        if (!(w->flags & MDI_OPENING_RECURSIVE)) {
            if (verbose)
                note(w->mem, &w->out->notes, &w->out->nnotes,
                     "%s: a directory (-r opens those too)", subdirs[i]);
            continue;
        }
        if (depth + 1 >= MAX_DEPTH) {
            mdi_fail(w->st, "%s: directories nested deeper than %d: not read", subdirs[i],
                     MAX_DEPTH);
            w->out->status = MDI_FAIL;
            continue;
        }
        if (stat(subdirs[i], &sb) == 0 && !seen_before(w, &sb))
            walk(w, subdirs[i], depth + 1);
    }
    talloc_free(names);
    talloc_free(subdirs);
}

/* A file named as such that is a single-file bundle (an executable
 * starting ELF, MZ or Mach-O that carries one): its assemblies, as
 * "BUNDLE!PATH" each (mdi_state_open opens them from it). False when it
 * is no bundle. */
static bool expand_bundle(struct dirwalk *w, const char *path)
{
    mdt_bundle *b;
    mdt_bundle_info in;
    /* a regular file only, never blocking; no executable: no bundle,
     * after 4 bytes (the library) */
    if (mdt_bundle_open_file(NULL, &b, path) != 0) {
        mdt_error_clear();
        return false;
    }
    mdt_bundle_info_get(&in, b);
    for (size_t i = 0; i < in.files; i++) {
        mdt_bundle_entry e;
        if (mdt_bundle_entry_get(&e, b, i) == 0 && e.type == MDT_BUNDLE_ASSEMBLY) {
            char *member = talloc_asprintf(NULL, "%s!%s", path, e.path);
            if (member)
                add_path(w->mem, w->out, member, false);
            talloc_free(member);
        }
    }
    talloc_free(b);
    return true;
}

static void expand_path(struct dirwalk *w, const char *path)
{
    struct stat sb;
    bool there = stat(path, &sb) == 0;
    if (there && S_ISDIR(sb.st_mode)) {
        seen_before(w, &sb);
        walk(w, path, 0);
    } else if (!(there && S_ISREG(sb.st_mode) && !net_name(path) && expand_bundle(w, path))) {
        add_path(w->mem, w->out, path, false);
    }
}

void mdi_expand(mdi_state *st, void *mem, const char *arg, unsigned flags, mdi_found *out)
{
    struct dirwalk w = {st, mem, flags, out, NULL, NULL, 0};
    glob_t g;
    int r;
    memset(out, 0, sizeof *out);
    out->status = MDI_OK;
    if (!strpbrk(arg, "*?[") && arg[0] != '~') {
        expand_path(&w, arg);
    } else {
        r = glob(arg, GLOB_TILDE | (arg[0] == '~' && !strpbrk(arg, "*?[") ? GLOB_NOCHECK : 0), NULL,
                 &g);
        if (r == GLOB_NOMATCH) {
            mdi_fail(st, "%s: no file matches", arg);
            out->status = MDI_FAIL;
            return;
        }
        if (r != 0) {
            mdi_fail(st, "%s: cannot expand the pattern", arg);
            out->status = MDI_FAIL;
            return;
        }
        for (size_t k = 0; k < g.gl_pathc && !mdi_interrupted(st); k++)
            expand_path(&w, g.gl_pathv[k]);
        globfree(&g);
    }
    talloc_free(w.dev);
    talloc_free(w.ino);
}

/* ---- opening ---- */

static bool opened_here(const mdi_opening *o, const mdi_module *m)
{
    for (size_t i = 0; i < o->nopened; i++)
        if (o->opened[i] == m)
            return true;
    return false;
}

static void push(mdi_state *st, mdi_opening *o, mdi_module *m, bool companion)
{
    mdi_module **nm = talloc_realloc(st, o->opened, mdi_module *, o->nopened + 1);
    bool *nc = nm ? talloc_realloc(st, o->companion, bool, o->nopened + 1) : NULL;
    if (nm)
        o->opened = nm;
    if (!nc) {
        o->failed++;
        return;
    }
    o->companion = nc;
    nm[o->nopened] = m;
    nc[o->nopened++] = companion;
}

/* A File row's Name is a file name: no directory part, nothing that walks
 * out of the assembly's folder. */
static bool plain_file_name(const char *s, size_t len)
{
    if (!len || (len == 1 && s[0] == '.') || (len == 2 && s[0] == '.' && s[1] == '.'))
        return false;
    for (size_t i = 0; i < len; i++)
        if (s[i] == '/' || s[i] == '\\' || s[i] == '\0')
            return false;
    return true;
}

/* The modules with metadata that the File table of m's assembly names,
 * from m's folder. Only a manifest module (one with an Assembly row) has
 * its File table followed, and companions are not followed further. */
static void open_companions(mdi_state *st, mdi_opening *o, mdi_module *m)
{
    const mdt_image *img = m->img;
    uint32_t n = mdt_table_rows(img, MDT_TABLE_File);
    const char *slash = strrchr(m->path, '/');
    int dirlen = slash ? (int)(slash - m->path) : 0;
    if (!n || !mdt_table_rows(img, MDT_TABLE_Assembly))
        return;
    for (uint32_t rid = 1; rid <= n && !mdi_interrupted(st); rid++) {
        mdt_row r;
        const char *name;
        size_t len;
        char *path;
        struct stat sb;
        bool already;
        mdi_module *c;
        if (mdt_row_get(&r, img, MDT_TABLE_File, rid) ||
            mdt_row_string(&name, &len, &r, MDT_COL_File_Name)) {
            char msg[400];
            mdi_report(st, "open: %s: File row %u: %s", m->path, rid,
                       mdi_errmsg_here(msg, sizeof msg));
            mdt_error_clear();
            o->failed++;
            continue;
        }
        if (mdt_row_raw(&r, MDT_COL_File_Flags) & 0x1)
            continue; /* ContainsNoMetaData: a resource or other file */
        if (!plain_file_name(name, len)) {
            note(st, &o->notes, &o->nnotes,
                 "%s: File row %u names \"%.*s\", which is not a file name: not opened", m->path,
                 rid, (int)len, name);
            o->missing++;
            continue;
        }
        path = slash ? talloc_asprintf(st, "%.*s/%.*s", dirlen, m->path, (int)len, name)
                     : talloc_strndup(st, name, len);
        if (!path) {
            o->failed++;
            continue;
        }
        if (stat(path, &sb) != 0) {
            note(st, &o->notes, &o->nnotes, "%s: its File table names %s, which is not there",
                 m->path, path);
            o->missing++;
        } else if (!(c = mdi_state_open(st, path, 0, &already))) {
            o->failed++;
            mdt_error_clear();
        } else if (!already) {
            push(st, o, c, true);
            o->ncompanions++;
        }
        talloc_free(path);
    }
}

void mdi_open_file(mdi_state *st, mdi_opening *o, const char *path, bool in_dir)
{
    bool already;
    mdi_module *m;
    o->files++;
    m = mdi_state_open(st, path, in_dir ? MDI_OPEN_QUIET_FOREIGN : 0, &already);
    if (!m) {
        if (in_dir && mdt_error_last()->code == MDT_ENOTDOTNET) {
            o->skipped++;
            if (o->flags & MDI_OPENING_VERBOSE) {
                char msg[400];
                note(st, &o->notes, &o->nnotes, "%s: not a .NET image: %s", path,
                     mdi_errmsg_here(msg, sizeof msg));
            }
        } else {
            o->failed++;
        }
        mdt_error_clear();
        return;
    }
    if (already) {
        /* Named twice, or found again after a File table named it. */
        if (!in_dir && !opened_here(o, m))
            mdi_report(st, "open: %s is open already as #%u %s", path, m->id, m->name);
        return;
    }
    push(st, o, m, false);
    if (o->flags & MDI_OPENING_COMPANIONS)
        open_companions(st, o, m);
}

void mdi_open_arg(mdi_state *st, mdi_opening *o, const char *arg)
{
    void *tmp = talloc_new(st);
    mdi_found f;
    size_t before = o->nopened;
    mdi_expand(st, tmp, arg, o->flags, &f);
    if (f.status != MDI_OK)
        o->failed++;
    o->dirs += f.dirs;
    o->skipped += f.unnamed;
    o->files += f.unnamed;
    for (size_t i = 0; i < f.nnotes; i++)
        note(st, &o->notes, &o->nnotes, "%s", f.notes[i]);
    for (size_t i = 0; i < f.n && !mdi_interrupted(st); i++)
        mdi_open_file(st, o, f.paths[i], f.in_dir[i]);
    if (f.dirs && o->nopened == before && !mdi_interrupted(st)) {
        mdi_fail(st, "%s: no .NET image in %zu file%s%s", arg, f.n + f.unnamed,
                 f.n + f.unnamed == 1 ? "" : "s",
                 o->flags & MDI_OPENING_RECURSIVE ? "" : " (-r also reads subdirectories)");
        o->empty_dir = true;
    }
    talloc_free(tmp);
}

int mdi_opening_report(mdi_state *st, mdi_opening *o)
{
    mdi_printer *p = st->out;
    char *s = NULL;
    int status = MDI_OK;

    if (o->nopened)
        mdi_state_use(st, o->opened[0]);
    mdi_list_begin(p, NULL, NULL, NULL, 0);
    for (size_t i = 0; i < o->nopened; i++) {
        mdi_module *m = o->opened[i];
        mdi_about(st, m);
        mdi_item_begin(p);
        mdi_uint(p, "id", NULL, m->id);
        mdi_str(p, "module", NULL, m->name);
        mdi_str(p, "path", NULL, m->path);
        mdi_str(p, "kind", NULL, mdt_image_kind_name(mdt_image_kind(m->img)));
        mdi_bool(p, "companion", NULL, o->companion[i]);
        mdi_item_end(p);
    }
    mdi_list_end(p);
    mdi_about(st, mdi_current(st));

    if (o->nopened == 1)
        s = talloc_asprintf(st, "opened #%u %s (%s)", o->opened[0]->id, o->opened[0]->name,
                            o->opened[0]->path);
    else if (o->nopened > 1)
        s = talloc_asprintf(st, "opened %zu modules, #%u to #%u; current: #%u %s", o->nopened,
                            o->opened[0]->id, o->opened[o->nopened - 1]->id, o->opened[0]->id,
                            o->opened[0]->name);
    else
        s = talloc_strdup(st, "");
    if (s && o->ncompanions) {
        if (o->nopened == 1 + o->ncompanions && o->nopened == 2)
            s = talloc_asprintf_append(s, "; #%u %s named by its File table", o->opened[1]->id,
                                       o->opened[1]->name);
        else
            s = talloc_asprintf_append(s, "; %zu named by %s", o->ncompanions,
                                       o->ncompanions == 1 ? "a File table" : "File tables");
    }
    if (s && o->skipped)
        s = talloc_asprintf_append(s, "%sskipped %zu file%s that %s not .NET image%s",
                                   s[0] ? "; " : "", o->skipped, o->skipped == 1 ? "" : "s",
                                   o->skipped == 1 ? "is" : "are", o->skipped == 1 ? "" : "s");
    if (s && o->missing)
        s = talloc_asprintf_append(s, "%s%zu file%s named by a File table not found",
                                   s[0] ? "; " : "", o->missing, o->missing == 1 ? "" : "s");
    if (mdi_printer_format(p) == MDI_FMT_TEXT && ((s && s[0]) || o->nnotes)) {
        /* One block: the summary, then why files were skipped. */
        mdi_record_begin(p);
        if (s && s[0])
            mdi_textf(p, "", "%s", s);
        for (size_t i = 0; i < o->nnotes; i++)
            mdi_textf(p, "", "  %s", o->notes[i]);
        mdi_record_end(p);
    }
    talloc_free(s);
    if (o->failed) {
        mdi_fail(st, "%zu file%s could not be opened", o->failed, o->failed == 1 ? "" : "s");
        status = MDI_FAIL;
    }
    if (o->empty_dir)
        status = MDI_FAIL;
    return status;
}
