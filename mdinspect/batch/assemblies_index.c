/* mdinspect batch, the modules (assemblies_int.h): the folders walked for
 * MVIDs and the on-disk index. The paths given with --assemblies, then the
 * folders log headers name, are walked in order, lazily
 * (mdb_asm_walk_more, when an MVID is not found in those walked so far);
 * every candidate file is opened for its MVID (mdb_image_open, files.c)
 * unless the index read at the first walk has it with the same size and
 * modification time. The index is written anew as the walk goes (a
 * temporary file) and renamed over the old one at the end of the run
 * (mdb_assemblies_finish) when anything changed. Directories are walked
 * once each (device and inode), at most MAX_DEPTH deep; a log's folder
 * without subfolders and at most MAX_LOG_ENTRIES of its entries. */
#define _DEFAULT_SOURCE /* O_CLOEXEC, O_NOFOLLOW, alphasort, fdopen */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <talloc.h>
#include <unistd.h>

#include <mdtools/file.h>

#include "batch/batch.h"
#include "batch/parse.h"
#include "batch/assemblies_int.h"

#define MAX_DEPTH 64

static bool candidate(const char *name)
{
    static const char *const exts[] = {".dll", ".exe", ".netmodule", ".wasm", ".webcil"};
    const char *dot = strrchr(name, '.');
    if (!dot)
        return false;
    for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++)
        if (strcasecmp(dot, exts[i]) == 0)
            return true;
    return false;
}

/* `#mdinspect-index 1`, then `MVID SIZE MTIME_NS PATH` per line. A file
 * that does not read as one is ignored (and rewritten); so is one larger
 * than MAX_INDEX (an index of 10^5 files is ~10 MiB), or that is not a
 * regular file (a FIFO named by mistake does not block the run). */
#define MAX_INDEX ((size_t)64 << 20)

static void read_index(mdb_assemblies *a)
{
    char why[300], *text, *line, *next;
    size_t len;
    bool first = true;
    if (!(text = mdb_read_small_file(NULL, a->index, MAX_INDEX, &len, why, sizeof why))) {
        if (access(a->index, F_OK) == 0 || errno != ENOENT)
            mdb_asm_warn2(a, "cannot read the index %s: %s", a->index, why);
        a->changed = true;
        return;
    }
    for (line = text; line < text + len; line = next) {
        char *mv, *sz, *mt, *path, *end, *nl = memchr(line, '\n', (size_t)(text + len - line));
        struct entry *e;
        next = nl ? nl + 1 : text + len;
        if (nl)
            *nl = '\0';
        else
            text[len] = '\0';
        if (strlen(line) != (size_t)((nl ? nl : text + len) - line)) {
            a->changed = true; /* a NUL inside a line */
            continue;
        }
        if (first) {
            first = false;
            if (strcmp(line, "#mdinspect-index 1") != 0) {
                a->changed = true;
                break;
            }
            continue;
        }
        mv = line;
        if (!(sz = strchr(mv, ' ')) || !(mt = strchr(sz + 1, ' ')) ||
            !(path = strchr(mt + 1, ' '))) {
            a->changed = true;
            continue;
        }
        *sz++ = *mt++ = *path++ = '\0';
        e = mdb_arena_alloc(&a->arena, sizeof *e);
        if (!e)
            break;
        memset(e, 0, sizeof *e);
        e->size = strtoull(sz, &end, 10);
        if (*end || !mdb_parse_mvid(mv, strlen(mv), e->mvid)) {
            a->changed = true;
            continue;
        }
        e->mtime_ns = strtoll(mt, &end, 10);
        if (*end || mdb_table_put(&a->old, mdb_hash(path, strlen(path)), path, strlen(path), e))
            a->changed = true;
    }
    talloc_free(text);
}

/* The assemblies of a single-file bundle, each a module "BUNDLE!PATH"
 * opened from the bundle. Each is an index entry of its own under that
 * name, with the bundle's size and modification time: a bundle the index
 * has seen is not opened again for the MVIDs (its assemblies may be
 * compressed: inflating 175 of them was most of a run), only its manifest
 * is read. A name with a control character (the manifest is untrusted) is
 * kept out of the index, whose lines it would break. True when `path` is
 * a bundle. */
static bool consider_bundle(mdb_assemblies *a, const char *path, const struct stat *st, int depth)
{
    char why[300];
    mdt_bundle *b = mdb_bundle_open(a, path, why, sizeof why);
    mdt_bundle_info in;
    int64_t mtime = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
    if (!b) {
        if (why[0] && depth == 0)
            mdb_asm_warn2(a, "cannot read %s: %s", path, why);
        return false;
    }
    mdt_bundle_info_get(&in, b);
    for (size_t i = 0; i < in.files; i++) {
        mdt_bundle_entry e;
        uint8_t mvid[16];
        mdb_module *m;
        if (mdt_bundle_entry_get(&e, b, i) != 0 || e.type != MDT_BUNDLE_ASSEMBLY)
            continue;
        char *key = talloc_asprintf(NULL, "%s!%s", path, e.path);
        if (!key)
            continue;
        size_t klen = strlen(key);
        struct entry *old = mdb_table_get(&a->old, mdb_hash(key, klen), key, klen);
        if (old && !old->seen && old->size == (uint64_t)st->st_size && old->mtime_ns == mtime) {
            memcpy(mvid, old->mvid, 16);
            old->seen = true;
            a->nindexed++;
        } else {
            mdt_image *img;
            a->nscanned++;
            a->changed = true;
            if (mdb_bundle_image_open(NULL, &img, b, i, why, sizeof why) != 0) {
                mdb_asm_warn2(a, "cannot read %s: %s", path, why);
                talloc_free(key);
                continue;
            }
            int r = mdt_image_mvid(mvid, img);
            talloc_free(img);
            if (r) {
                mdt_error_clear();
                talloc_free(key);
                continue;
            }
        }
        /* no file identity: the bundle's files share one */
        if ((m = mdb_asm_module_for(a, key, klen, NULL))) {
            m->bundle = b;
            m->bundle_entry = i;
            mdb_asm_add_mvid(a, m, mvid);
        }
        bool plain = true;
        for (const char *c = key; *c; c++)
            plain &= (unsigned char)*c >= 0x20 && *c != 0x7f;
        if (a->newindex && plain) {
            char hex[33];
            mdb_format_mvid(hex, mvid);
            fprintf(a->newindex, "%s %llu %lld %s\n", hex, (unsigned long long)st->st_size,
                    (long long)mtime, key);
        }
        talloc_free(key);
    }
    return true;
}

static void consider(mdb_assemblies *a, const char *path, const struct stat *st, int depth)
{
    size_t len = strlen(path);
    int64_t mtime = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
    struct entry *e = mdb_table_get(&a->old, mdb_hash(path, len), path, len);
    uint8_t mvid[16];
    mdb_module *m;
    if (e && !e->seen && e->size == (uint64_t)st->st_size && e->mtime_ns == mtime) {
        memcpy(mvid, e->mvid, 16);
        e->seen = true;
        a->nindexed++;
    } else {
        mdt_image *img;
        char why[300];
        int r = mdb_image_open(NULL, &img, path, why, sizeof why);
        a->nscanned++;
        a->changed = true;
        if (r == 0) {
            r = mdt_image_mvid(mvid, img);
            talloc_free(img);
        } else if (consider_bundle(a, path, st, depth)) {
            return;
        } else if (depth == 0) {
            mdb_asm_warn2(a, "cannot read %s: %s", path, why); /* named by the user */
        }
        if (r) {
            mdt_error_clear();
            return; /* not .NET, or no Module row: nothing to find it by */
        }
    }
    if (!(m = mdb_asm_module_for(a, path, len, st)))
        return;
    mdb_asm_add_mvid(a, m, mvid);
    if (a->newindex) {
        char hex[33];
        mdb_format_mvid(hex, mvid);
        fprintf(a->newindex, "%s %llu %lld %s\n", hex, (unsigned long long)st->st_size,
                (long long)mtime, path);
    }
}

static void walk(mdb_assemblies *a, const char *path, int depth);

/* The entries of a folder a log names that are looked at: files named like
 * modules, at most MAX_LOG_ENTRIES (a log is untrusted: it may name any
 * folder). scandir's filter has no argument: the count is here, and walks
 * run under the assemblies' lock. */
#define MAX_LOG_ENTRIES 65536
static unsigned log_entries;

static int log_entry(const struct dirent *d)
{
    return candidate(d->d_name) && log_entries++ < MAX_LOG_ENTRIES;
}

static void walk_dir(mdb_assemblies *a, const char *dir, const struct stat *st, int depth)
{
    struct fileid id = {(uint64_t)st->st_dev, (uint64_t)st->st_ino};
    uint64_t h = mdb_hash(&id, sizeof id);
    struct dirent **names;
    int n;
    if (mdb_table_get(&a->dirs, h, &id, sizeof id) || depth > MAX_DEPTH)
        return; /* walked already (a link loop, or named twice) */
    mdb_table_put(&a->dirs, h, &id, sizeof id, a);
    log_entries = 0;
    n = scandir(dir, &names, a->walking_log ? log_entry : NULL, alphasort);
    if (n < 0) {
        if (!a->walking_log)
            mdb_asm_warn(a, "cannot read the folder %s: %s", dir, errno);
        return;
    }
    for (int i = 0; i < n; i++) {
        const char *nm = names[i]->d_name;
        if (strcmp(nm, ".") != 0 && strcmp(nm, "..") != 0) {
            char *p = talloc_asprintf(NULL, "%s%s%s", dir,
                                      dir[0] && dir[strlen(dir) - 1] == '/' ? "" : "/", nm);
            if (p)
                walk(a, p, depth + 1);
            talloc_free(p);
        }
        free(names[i]);
    }
    free(names);
}

static void walk(mdb_assemblies *a, const char *path, int depth)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        if (depth == 0 && !a->walking_log)
            mdb_asm_warn(a, "cannot read %s: %s", path, errno);
        return;
    }
    if (S_ISDIR(st.st_mode)) {
        if (depth == 0 || (a->recursive && !a->walking_log))
            walk_dir(a, path, &st, depth);
    } else if (S_ISREG(st.st_mode) && (depth == 0 || candidate(path))) {
        consider(a, path, &st, a->walking_log ? 1 : depth);
    } else if (depth == 0 && !a->walking_log) { /* a FIFO, a device, ... */
        char why[80];
        snprintf(why, sizeof why, "%s, not a folder nor a regular file", mdt_file_kind(st.st_mode));
        mdb_asm_warn2(a, "cannot read %s: %s", path, why);
    }
}

/* A new file to write (a stale one of a process that had our pid is
 * replaced; whatever else is there, a FIFO or a link, is not written
 * through). */
static FILE *create(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    FILE *f;
    if (fd < 0 && errno == EEXIST && unlink(path) == 0)
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0)
        return NULL;
    if (!(f = fdopen(fd, "w")))
        close(fd);
    return f;
}

/* Walk the folders not walked yet, in order: the user's on the first
 * MVID asked for, a log's when its header has been read and an MVID is
 * not found in the folders before it. The index is read first, and
 * written at the end (mdb_assemblies_finish). */
void mdb_asm_walk_more(mdb_assemblies *a)
{
    if (a->index && !a->index_read) {
        char *tmp;
        a->index_read = true;
        read_index(a);
        tmp = talloc_asprintf(a, "%s.tmp.%ld", a->index, (long)getpid());
        if (tmp && !(a->newindex = create(tmp)))
            mdb_asm_warn(a, "cannot write the index %s: %s", a->index, errno);
        if (a->newindex) {
            a->newindex_path = tmp;
            fputs("#mdinspect-index 1\n", a->newindex);
        } else {
            talloc_free(tmp);
        }
    }
    for (; a->nwalked < a->npaths; a->nwalked++) {
        a->walking_log = a->nwalked >= a->nuser;
        walk(a, a->paths[a->nwalked], 0);
    }
    a->walking_log = false;
}

void mdb_assemblies_finish(mdb_assemblies *a)
{
    char *tmp = a->newindex_path;
    pthread_mutex_lock(&a->lock);
    if (a->newindex) {
        /* an entry of the old index not met again means a file went away */
        for (size_t i = 0; i <= a->old.mask; i++) {
            const struct entry *e = a->old.slots[i].value;
            if (a->old.slots[i].key && !e->seen)
                a->changed = true;
        }
        bool ok = fclose(a->newindex) == 0;
        a->newindex = NULL;
        if (!ok || (a->changed && rename(tmp, a->index) != 0))
            mdb_asm_warn(a, "cannot write the index %s: %s", a->index, errno);
        unlink(tmp); /* when unchanged (or failed): the old file stays */
        talloc_free(tmp);
        a->newindex_path = NULL;
    }
    mdb_table_clear(&a->old);
    pthread_mutex_unlock(&a->lock);
}

void mdb_assemblies_add_folder(mdb_assemblies *a, const char *path)
{
    pthread_mutex_lock(&a->lock);
    for (size_t i = 0; i < a->npaths; i++)
        if (strcmp(a->paths[i], path) == 0)
            goto out; /* given with -a, or named by an earlier header */
    if (a->npaths == a->cappaths) {
        char **p = talloc_realloc(a, a->paths, char *, 2 * a->cappaths);
        if (!p)
            goto out;
        a->paths = p;
        a->cappaths *= 2;
    }
    if ((a->paths[a->npaths] = talloc_strdup(a, path)))
        a->npaths++;
out:
    pthread_mutex_unlock(&a->lock);
}
