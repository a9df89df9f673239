/* `open`: add files to the module set: plain paths, globs (with ~), and
 * directories (their .dll, .exe, .winmd, .netmodule, .webcil and .wasm
 * files, in name order, not recursively; files there that are not .NET
 * images are skipped and counted). Any kind of image the library opens
 * (PE, Webcil, raw metadata) may be given by name. */
#include "config.h"

#include <dirent.h>
#include <stdio.h>
#include <glob.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <talloc.h>

#include <mdtools/errors.h>

#include "cmd.h"

struct opening {
    mdi_module **opened;
    size_t nopened;
    size_t skipped; /* not .NET, in a directory */
    size_t failed;
};

static void note(mdi_state *st, struct opening *o, const char *path, bool quiet)
{
    bool already;
    mdi_module *m = mdi_state_open(st, path, quiet ? MDI_OPEN_QUIET_FOREIGN : 0, &already);
    mdi_module **n;
    if (!m) {
        if (quiet && mdt_last_error()->code == MDT_ENOTDOTNET)
            o->skipped++;
        else
            o->failed++;
        mdt_clear_error();
        return;
    }
    if (already) {
        mdi_report(st, "open: %s is open already as #%u %s", path, m->id, m->name);
        return;
    }
    n = talloc_realloc(st, o->opened, mdi_module *, o->nopened + 1);
    if (!n) {
        o->failed++;
        return;
    }
    o->opened = n;
    o->opened[o->nopened++] = m;
}

static bool wanted(const char *name)
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

static int by_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void open_dir(mdi_state *st, struct opening *o, const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char **names = NULL;
    size_t n = 0;
    size_t dl = strlen(dir);
    if (!d) {
        mdi_fail(st, "%s: cannot read the directory", dir);
        o->failed++;
        return;
    }
    while ((e = readdir(d))) {
        char **nn;
        if (e->d_name[0] == '.' || !wanted(e->d_name))
            continue;
        nn = talloc_realloc(st, names, char *, n + 1);
        if (!nn)
            break;
        names = nn;
        names[n] = talloc_asprintf(names, "%s%s%s", dir, dl && dir[dl - 1] == '/' ? "" : "/",
                                   e->d_name);
        if (names[n])
            n++;
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof names[0], by_str);
    for (size_t i = 0; i < n; i++) {
        struct stat sb;
        if (stat(names[i], &sb) == 0 && S_ISREG(sb.st_mode))
            note(st, o, names[i], true);
    }
    talloc_free(names);
}

static void open_path(mdi_state *st, struct opening *o, const char *path)
{
    struct stat sb;
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
        open_dir(st, o, path);
    else
        note(st, o, path, false);
}

static int run(mdi_state *st, size_t argc, const mdi_arg *argv)
{
    struct opening o = {NULL, 0, 0, 0};
    mdi_printer *p = st->out;
    int status = MDI_OK;

    for (size_t i = 0; i < argc && !mdi_interrupted(st); i++) {
        const char *path = argv[i].text;
        glob_t g;
        int r;
        if (!strpbrk(path, "*?[") && path[0] != '~') {
            open_path(st, &o, path);
            continue;
        }
        r = glob(path, GLOB_TILDE | (path[0] == '~' && !strpbrk(path, "*?[") ? GLOB_NOCHECK : 0),
                 NULL, &g);
        if (r == GLOB_NOMATCH) {
            status = mdi_fail(st, "%s: no file matches", path);
        } else if (r != 0) {
            status = mdi_fail(st, "%s: cannot expand the pattern", path);
        } else {
            for (size_t k = 0; k < g.gl_pathc && !mdi_interrupted(st); k++)
                open_path(st, &o, g.gl_pathv[k]);
        }
        if (r != GLOB_NOMATCH)
            globfree(&g);
    }
    if (o.nopened)
        mdi_state_use(st, o.opened[0]);

    mdi_list_begin(p, NULL, NULL, NULL, 0);
    for (size_t i = 0; i < o.nopened; i++) {
        mdi_module *m = o.opened[i];
        mdi_about(st, m);
        mdi_item_begin(p);
        mdi_uint(p, "id", NULL, m->id);
        mdi_str(p, "module", NULL, m->name);
        mdi_str(p, "path", NULL, m->path);
        mdi_str(p, "kind", NULL, mdt_image_kind_name(mdt_image_kind(m->img)));
        mdi_item_end(p);
    }
    mdi_list_end(p);
    mdi_about(st, mdi_current(st));
    {
        char skipped[96] = "";
        if (o.skipped)
            snprintf(skipped, sizeof skipped, "%sskipped %zu file%s that %s not .NET image%s",
                     o.nopened ? "; " : "", o.skipped, o.skipped == 1 ? "" : "s",
                     o.skipped == 1 ? "is" : "are", o.skipped == 1 ? "" : "s");
        if (o.nopened == 1)
            mdi_textf(p, NULL, "opened #%u %s (%s)%s", o.opened[0]->id, o.opened[0]->name,
                      o.opened[0]->path, skipped);
        else if (o.nopened > 1)
            mdi_textf(p, NULL, "opened %zu modules, #%u to #%u; current: #%u %s%s", o.nopened,
                      o.opened[0]->id, o.opened[o.nopened - 1]->id, o.opened[0]->id,
                      o.opened[0]->name, skipped);
        else if (o.skipped)
            mdi_textf(p, NULL, "%s", skipped);
    }
    talloc_free(o.opened);
    if (o.failed) {
        mdi_fail(st, "%zu file%s could not be opened", o.failed, o.failed == 1 ? "" : "s");
        status = MDI_FAIL;
    }
    return status;
}

const mdi_cmd mdi_cmd_open = {
    .name = "open",
    .args = {{.name = "PATH", .kind = MDI_ARG_PATH, .flags = MDI_ARGF_REPEAT}},
    .summary = "add files, globs or directories to the open modules",
    .help = "Opens each PATH and adds it to the set of open modules; the first one\n"
            "opened becomes the current module (see `use`). A PATH may be a file\n"
            "(PE, Webcil, WebAssembly with Webcil, or raw metadata such as a\n"
            "portable PDB), a glob (`*.dll`, `~/lib/*.exe`), or a directory: its\n"
            ".dll, .exe, .winmd, .netmodule, .webcil and .wasm files in name order\n"
            "(not recursively), where files that are not .NET images are skipped\n"
            "and counted. A file that is open already is noted and left alone.\n"
            "The command fails when a file could not be opened; the others are\n"
            "opened all the same.\n",
    .run = run,
};
