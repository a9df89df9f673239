/* `resources`: the manifest resources of the current module
 * (mdt_manifest_resource_read): name, visibility, where each lives
 * (embedded at an offset of the Resources directory, another file of the
 * assembly, another assembly) and its size; `resources NAME` one of them
 * with, for a resource set in the System.Resources format
 * (mdt_resources_parse), its entries by name and type; `resources -x NAME
 * DIR` and `resources -x -a DIR` write embedded resources into DIR;
 * `resources -f FILE` the entries of a standalone .resources file (no
 * module needed), read through mdt_file_read(3) with a bound.
 *
 * Names come from the image and are untrusted: a name is written only as
 * one file name directly inside DIR (no '/', '\', control characters, not
 * "." or "..", at most 255 bytes), through openat() on DIR with
 * O_NOFOLLOW, O_NONBLOCK and, without --force, O_EXCL; with --force an
 * existing regular file is replaced, anything else there is left alone. */
#define _DEFAULT_SOURCE /* O_CLOEXEC, O_DIRECTORY, O_NOFOLLOW, ftruncate */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <talloc.h>

#include <mdtools/file.h>
#include <mdtools/mdtools.h>
#include <mdtools/resources.h>

#include "cmd.h"

enum { A_NAME, A_DIR, A_EXTRACT, A_ALL, A_FORCE, A_FILE };

/* A standalone .resources file read whole: resgen's output is kilobytes to
 * a few megabytes; a bound keeps a huge path from taking the memory. */
#define RESFILE_MAX ((size_t)256 << 20)

static const char *visibility(uint32_t flags)
{
    switch (flags & 7) {
    case MDT_RESOURCE_PUBLIC: return "public";
    case MDT_RESOURCE_PRIVATE: return "private";
    default: return "?";
    }
}

static const char *where_name(int where)
{
    return where == MDT_RESOURCE_EMBEDDED ? "embedded"
           : where == MDT_RESOURCE_FILE   ? "file"
                                          : "assembly";
}

static uint32_t count(const mdt_image *img)
{
    return mdt_table_rows_present(img, MDT_TABLE_ManifestResource);
}

/* The fields of one resource (an item of the listing or the record of
 * `resources NAME`); 0, or 1 when it could not be read (an error was
 * printed in its place). */
static int fields(mdi_printer *p, const mdt_image *img, uint32_t rid, mdt_manifest_resource *r,
                  bool item)
{
    char msg[512];
    mdi_token(p, "token", "token", MDT_TOKEN(MDT_TABLE_ManifestResource, rid));
    if (mdt_manifest_resource_read(r, img, rid) != 0) {
        if (item)
            mdi_item_error(p, "error", mdi_errmsg_here(msg, sizeof msg));
        else
            mdi_error(p, "error", "error", mdi_errmsg_here(msg, sizeof msg));
        return 1;
    }
    mdi_str(p, "visibility", "visibility", visibility(r->flags));
    mdi_str(p, "where", "where", where_name(r->where));
    if (r->where == MDT_RESOURCE_EMBEDDED) {
        mdi_uint(p, "size", "size", r->size);
        mdi_hex(p, "offset", "offset", r->offset, 0);
        if (r->data_file_offset)
            mdi_hex(p, "file_offset", "file offset", r->data_file_offset, 0);
        else
            mdi_none(p, "file_offset", "file offset", "-");
        mdi_none(p, "implementation", NULL, NULL);
        mdi_none(p, "implementation_name", "in", "-");
    } else {
        mdi_none(p, "size", "size", "-");
        mdi_none(p, "offset", "offset", "-");
        mdi_none(p, "file_offset", "file offset", "-");
        mdi_token(p, "implementation", NULL, r->implementation);
        mdi_str(p, "implementation_name", "in", r->implementation_name);
    }
    mdi_quoted(p, "name", "name", r->name, strlen(r->name));
    return 0;
}

static int list(mdi_state *st, const mdt_image *img)
{
    mdi_printer *p = st->out;
    uint32_t n = mdt_table_rows(img, MDT_TABLE_ManifestResource), present = count(img);
    char caption[64];
    int bad = 0;
    snprintf(caption, sizeof caption, "%" PRIu32 " manifest resource%s", n, n == 1 ? "" : "s");
    mdi_list_begin(p, NULL, caption, NULL, 0);
    for (uint32_t rid = 1; rid <= present && !mdi_interrupted(st); rid++) {
        mdt_manifest_resource r;
        mdi_item_begin(p);
        bad += fields(p, img, rid, &r, true);
        mdi_item_end(p);
    }
    if (!mdi_interrupted(st) && mdi_rows_missing(st, img, MDT_TABLE_ManifestResource))
        bad++;
    mdi_list_end(p);
    if (bad)
        return mdi_fail(st, "%s: %d resource%s could not be read", mdi_image_path(st), bad,
                        bad == 1 ? "" : "s");
    return MDI_OK;
}

/* The row of the resource named `name`: 0 when there is none, and the
 * first of several (a damaged or hand-made image may repeat a name). */
static uint32_t find(const mdt_image *img, const char *name)
{
    uint32_t n = count(img);
    for (uint32_t rid = 1; rid <= n; rid++) {
        mdt_row row;
        const char *s;
        size_t len;
        if (mdt_row_get(&row, img, MDT_TABLE_ManifestResource, rid) == 0 &&
            mdt_row_string(&s, &len, &row, MDT_COL_ManifestResource_Name) == 0 &&
            strcmp(s, name) == 0)
            return rid;
        mdt_error_clear();
    }
    return 0;
}

static int set_entries(mdi_state *st, const uint8_t *data, size_t len, const char *name);

/* The entries of a resource set. 0, or 1 when it does not parse. */
static int entries(mdi_state *st, const mdt_image *img, uint32_t rid, const char *name)
{
    mdi_printer *p = st->out;
    const uint8_t *data;
    size_t len;
    char msg[512];
    if (mdt_manifest_resource_data(&data, &len, img, rid) != 0) {
        mdi_error(p, "resource_set", "resource set", mdi_errmsg_here(msg, sizeof msg));
        return 1;
    }
    return set_entries(st, data, len, name);
}

/* The entries of the resource set in data (name: for errors). */
static int set_entries(mdi_state *st, const uint8_t *data, size_t len, const char *name)
{
    mdi_printer *p = st->out;
    mdt_resource_set *set;
    char msg[512];
    if (!mdt_resources_is(data, len)) {
        mdi_none(p, "resource_set", "resource set", "no (not in the System.Resources format)");
        return 0;
    }
    void *mem = talloc_new(NULL);
    if (mdt_resources_parse(mem, &set, data, len, name) != 0) {
        mdi_error(p, "resource_set", "resource set", mdi_errmsg_here(msg, sizeof msg));
        talloc_free(mem);
        return 1;
    }
    mdi_object_begin(p, "resource_set", "");
    mdi_uint(p, "version", "resource set version", set->version);
    mdi_str(p, "reader_type", "reader", set->reader_type);
    mdi_str(p, "set_type", "set type", set->set_type);
    mdi_list_begin(p, "entries", "entries", "none", 0);
    for (size_t i = 0; i < set->n && !mdi_interrupted(st); i++) {
        const mdt_resource_entry *e = &set->entries[i];
        mdi_item_begin(p);
        mdi_quoted(p, "name", "name", e->name, strlen(e->name));
        mdi_str(p, "type", "type", e->type);
        mdi_uint(p, "size", "size", e->size);
        if (e->string) {
            /* The text shows the start of a long string; JSON all of it. */
            size_t n = strlen(e->string);
            if (mdi_printer_format(p) == MDI_FMT_TEXT && n > 60) {
                while (n > 57 && (e->string[57] & 0xc0) == 0x80)
                    n--; /* not inside a UTF-8 sequence */
                char *cut = talloc_asprintf(mem, "%.*s...", (int)(n > 57 ? 57 : n), e->string);
                mdi_quoted(p, "value", "value", cut, strlen(cut));
            } else {
                mdi_quoted(p, "value", "value", e->string, n);
            }
        } else {
            mdi_none(p, "value", "value", "");
        }
        mdi_item_end(p);
    }
    mdi_list_end(p);
    mdi_object_end(p);
    talloc_free(mem);
    return 0;
}

static int show(mdi_state *st, const mdt_image *img, const char *name)
{
    mdi_printer *p = st->out;
    mdt_manifest_resource r;
    uint32_t rid = find(img, name);
    int bad;
    if (!rid)
        return mdi_fail(st, "%s: no manifest resource named '%s' (`resources` lists them)",
                        mdi_image_path(st), name);
    mdi_record_begin(p);
    bad = fields(p, img, rid, &r, false);
    if (!bad && r.where == MDT_RESOURCE_EMBEDDED)
        bad = entries(st, img, rid, r.name);
    mdi_record_end(p);
    if (bad)
        return mdi_fail(st, "%s: resource '%s' could not be read", mdi_image_path(st), name);
    return MDI_OK;
}

/* resources -f FILE: a standalone .resources file. */
static int show_file(mdi_state *st, const char *path)
{
    mdi_printer *p = st->out;
    char *data, msg[512];
    size_t len;
    int bad;
    void *mem = talloc_new(NULL);
    if (mdt_file_read(mem, &data, &len, path, RESFILE_MAX) != 0) {
        talloc_free(mem);
        return mdi_fail(st, "%s", mdt_error_message(msg, sizeof msg));
    }
    if (!mdt_resources_is((const uint8_t *)data, len)) {
        talloc_free(mem);
        return mdi_fail(st, "%s: not a resource set (no System.Resources magic number)", path);
    }
    mdi_record_begin(p);
    mdi_str(p, "file", "file", path);
    mdi_uint(p, "size", "size", len);
    bad = set_entries(st, (const uint8_t *)data, len, path);
    mdi_record_end(p);
    talloc_free(mem);
    if (bad)
        return mdi_fail(st, "%s: the resource set could not be read", path);
    return MDI_OK;
}

/* Whether a name from the image may be a file name inside DIR. */
static const char *unsafe(const char *name)
{
    size_t n = strlen(name);
    if (!n)
        return "an empty name";
    if (!strcmp(name, ".") || !strcmp(name, ".."))
        return "the name is . or ..";
    if (n > 255)
        return "a name longer than 255 bytes";
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        if (c == '/' || c == '\\')
            return "the name holds a path separator";
        if (c < 0x20 || c == 0x7f)
            return "the name holds a control character";
    }
    return NULL;
}

/* Write `len` bytes as `name` inside the directory dfd. 0, or -1 with
 * *why set. */
static int write_one(int dfd, const char *name, const uint8_t *data, size_t len, bool force,
                     const char **why, int *err)
{
    int flags = O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY;
    struct stat sb;
    int fd = openat(dfd, name, flags | (force ? 0 : O_EXCL), 0644);
    *err = 0;
    if (fd < 0) {
        *err = errno;
        /* A FIFO without a reader gives ENXIO (opened without
         * blocking), a directory EISDIR. */
        *why = errno == EEXIST                     ? "exists (--force replaces it)"
               : errno == ELOOP                    ? "is a symbolic link"
               : errno == ENXIO || errno == EISDIR ? "is not a regular file"
                                                   : NULL;
        return -1;
    }
    /* With --force the name may be taken by a FIFO or a device: opened
     * without blocking, it is left alone unless it is a regular file. */
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        *why = "is not a regular file";
        close(fd);
        return -1;
    }
    if (ftruncate(fd, 0) != 0) {
        *err = errno;
        *why = NULL;
        close(fd);
        return -1;
    }
    size_t done = 0;
    while (done < len) {
        ssize_t w = write(fd, data + done, len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            *err = w < 0 ? errno : EIO;
            *why = NULL;
            close(fd);
            return -1;
        }
        done += (size_t)w;
    }
    if (close(fd) != 0) {
        *err = errno;
        *why = NULL;
        return -1;
    }
    return 0;
}

static int extract(mdi_state *st, const mdt_image *img, const char *name, const char *dir,
                   bool force)
{
    mdi_printer *p = st->out;
    uint32_t n = count(img), first = 1, last = n;
    int bad = 0;
    char msg[512];
    if (name) {
        if (!(first = last = find(img, name)))
            return mdi_fail(st, "%s: no manifest resource named '%s' (`resources` lists them)",
                            mdi_image_path(st), name);
    }
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return mdi_fail(st, "resources: %s: %s", dir, strerror(errno));
    mdi_list_begin(p, NULL, "", NULL, 0);
    for (uint32_t rid = first; rid <= last && !mdi_interrupted(st); rid++) {
        mdt_manifest_resource r;
        const uint8_t *data;
        size_t len;
        const char *why;
        int err;
        mdi_item_begin(p);
        mdi_token(p, "token", "token", MDT_TOKEN(MDT_TABLE_ManifestResource, rid));
        if (mdt_manifest_resource_read(&r, img, rid) != 0) {
            mdi_item_error(p, "error", mdi_errmsg_here(msg, sizeof msg));
            mdi_item_end(p);
            bad++;
            continue;
        }
        if (r.where != MDT_RESOURCE_EMBEDDED) {
            /* -a skips what is not here; naming one is an error. */
            mdi_str(p, "status", "status", "skipped");
            mdi_quoted(p, "name", "name", r.name, strlen(r.name));
            snprintf(msg, sizeof msg, "lives in %s %s",
                     r.where == MDT_RESOURCE_FILE ? "file" : "assembly", r.implementation_name);
            mdi_str(p, "reason", "why", msg);
            mdi_item_end(p);
            bad += name != NULL;
            continue;
        }
        if ((why = unsafe(r.name)) != NULL) {
            mdi_str(p, "status", "status", "refused");
            mdi_quoted(p, "name", "name", r.name, strlen(r.name));
            mdi_item_error(p, "error", why);
            mdi_item_end(p);
            bad++;
            continue;
        }
        if (mdt_manifest_resource_data(&data, &len, img, rid) != 0) {
            mdi_str(p, "status", "status", "failed");
            mdi_quoted(p, "name", "name", r.name, strlen(r.name));
            mdi_item_error(p, "error", mdi_errmsg_here(msg, sizeof msg));
            mdi_item_end(p);
            bad++;
            continue;
        }
        if (write_one(dfd, r.name, data, len, force, &why, &err) != 0) {
            mdi_str(p, "status", "status", "failed");
            mdi_quoted(p, "name", "name", r.name, strlen(r.name));
            snprintf(msg, sizeof msg, "%s/%s: %s", dir, r.name, why ? why : strerror(err));
            mdi_item_error(p, "error", msg);
            mdi_item_end(p);
            bad++;
            continue;
        }
        mdi_str(p, "status", "status", "written");
        mdi_quoted(p, "name", "name", r.name, strlen(r.name));
        mdi_uint(p, "size", "size", len);
        mdi_item_end(p);
    }
    mdi_list_end(p);
    close(dfd);
    if (bad)
        return mdi_fail(st, "%s: %d resource%s not written", mdi_image_path(st), bad,
                        bad == 1 ? "" : "s");
    return MDI_OK;
}

static int run(mdi_state *st, size_t argc, const mdi_arg *argv)
{
    const mdt_image *img = mdi_image(st);
    const mdi_arg *name = mdi_arg_of(argc, argv, A_NAME), *dir = mdi_arg_of(argc, argv, A_DIR);
    bool x = mdi_arg_of(argc, argv, A_EXTRACT) != NULL, all = mdi_arg_of(argc, argv, A_ALL);
    bool force = mdi_arg_of(argc, argv, A_FORCE) != NULL;
    if (mdi_arg_of(argc, argv, A_FILE)) {
        if (x || all || force || dir || !name)
            return mdi_fail(st, "resources: -f takes one FILE (resources -f FILE.resources)");
        return show_file(st, name->text);
    }
    if (!img)
        return mdi_fail(st, "no module is open (use 'open PATH', or resources -f FILE)");
    if (!x) {
        if (all || force || dir)
            return mdi_fail(st, "resources: -a, --force and DIR go with -x (--extract)");
        return name ? show(st, img, name->text) : list(st, img);
    }
    /* -x -a DIR: the one word is DIR. */
    if (all) {
        if (!name || dir)
            return mdi_fail(st, "resources: -x -a takes one DIR (resources -x -a DIR)");
        return extract(st, img, NULL, name->text, force);
    }
    if (!name || !dir)
        return mdi_fail(st, "resources: -x takes NAME and DIR (resources -x NAME DIR), or -a "
                            "and DIR");
    return extract(st, img, name->text, dir->text, force);
}

/* Resource names of the current module, for NAME. */
static void complete_name(mdi_state *st, mdi_cands *c, const char *text, char **words,
                          size_t nwords)
{
    const mdt_image *img = mdi_image(st);
    (void)words;
    (void)nwords;
    if (!img)
        return;
    uint32_t n = count(img);
    for (uint32_t rid = 1; rid <= n && rid <= 4096; rid++) {
        mdt_row row;
        const char *s;
        size_t len;
        if (mdt_row_get(&row, img, MDT_TABLE_ManifestResource, rid) == 0 &&
            mdt_row_string(&s, &len, &row, MDT_COL_ManifestResource_Name) == 0)
            mdi_cand_add(c, text, s);
        mdt_error_clear();
    }
}

const mdi_cmd mdi_cmd_resources = {
    .name = "resources",
    .args = {{.name = "NAME",
              .kind = MDI_ARG_WORD,
              .flags = MDI_ARGF_OPTIONAL,
              .complete = complete_name},
             {.name = "DIR", .kind = MDI_ARG_PATH, .flags = MDI_ARGF_OPTIONAL},
             {.name = "-x",
              .alias = "--extract",
              .kind = MDI_ARG_FLAG,
              .about = "write the resource NAME (or with -a every embedded one) into DIR"},
             MDI_FLAG_ALL("with -x: every embedded resource"),
             {.name = "--force",
              .kind = MDI_ARG_FLAG,
              .about = "with -x: replace files that exist (regular files only)"},
             {.name = "-f",
              .alias = "--file",
              .kind = MDI_ARG_FLAG,
              .about = "NAME is a standalone .resources file: its entries"},
             {0}},
    .flags = 0,
    .summary = "manifest resources: list, show a resource set's entries, extract",
    .help = "Lists the ManifestResource rows of the current module: token,\n"
            "visibility (public or private), where the resource lives (embedded in\n"
            "this file, in another file of the assembly, in another assembly), for an\n"
            "embedded one its size, offset in the Resources directory and file\n"
            "offset, for another the File or AssemblyRef it names, and its name.\n"
            "\n"
            "With NAME, that resource; when it is a resource set in the\n"
            "System.Resources format (a .resources file: what resgen and the C#\n"
            "compiler make of .resx files), also its entries: name, type\n"
            "(System.String, System.Byte[], or a serialised type the set names), the\n"
            "value's size, and a string's text.\n"
            "\n"
            "-x NAME DIR writes the embedded resource NAME into directory DIR; -x -a\n"
            "DIR every embedded one (those in other files or assemblies are\n"
            "skipped). Names come from the image: one that is not a plain file name\n"
            "(a '/' or '\\', \".\" or \"..\", a control character, over 255 bytes) is\n"
            "refused, and nothing is written outside DIR or through a symbolic link.\n"
            "A file that exists is kept unless --force is given (then a regular\n"
            "file is replaced; anything else is left alone).\n"
            "\n"
            "-f FILE shows the entries of a standalone .resources file (resgen's\n"
            "output, or one written by -x); no module needs to be open.\n"
            "  resources\n"
            "  resources Everything.greeting.txt\n"
            "  resources -x -a /tmp/out\n"
            "  resources -f Res.Strings.resources\n",
    .run = run,
};
