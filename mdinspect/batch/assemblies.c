/* mdinspect batch: the modules the input names, by path and by MVID (the
 * Module table's Mvid column, ECMA-335 II.22.30). The directories and
 * files given with --assemblies are walked on the first MVID the input
 * asks for (never when it asks for none), then the folders log headers
 * name (logctx.c), each when an MVID is not found in those before it;
 * every .dll, .exe, .netmodule,
 * .wasm and .webcil is read for its MVID, unless the on-disk index (--index)
 * has the file with the same size and modification time, so a second run
 * over the same folders opens nothing but the modules the input uses. The
 * index is rewritten at the end of the run (to a temporary file renamed
 * over it) when anything changed. Images are opened on first use and stay open: memory follows the
 * modules touched, not the input.
 *
 * The threads of a run share all this: one mutex guards the tables, the
 * arena, the walk of the folders and each module's open; a module's fields
 * are written before its state is published (release) and read after it is
 * seen (acquire), without the lock. The threads' own caches (modcache.c)
 * keep the hot path off the lock. */
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

#define MAX_DEPTH 64

struct mdb_assemblies {
    void *ctx;
    pthread_mutex_t lock;
    uint32_t nmodules;
    char **paths; /* the user's, then those log headers name */
    size_t npaths, nuser, cappaths;
    size_t nwalked; /* paths[0, nwalked) are walked (in order: the first
                       file with an MVID wins) */
    bool recursive;
    bool walking_log; /* a log's folder: no subfolders, no warnings */
    const char *index;
    bool index_read;
    mdb_table by_path; /* path as written -> module */
    mdb_table by_mvid; /* 16 bytes -> module */
    mdb_table by_file; /* dev, inode -> module */
    mdb_table old;     /* the index read from disk: path -> struct entry */
    mdb_table dirs;    /* directories walked (dev, inode), against loops */
    mdb_arena arena;
    bool changed;
    size_t nindexed, nscanned;
    FILE *newindex;
    char *newindex_path;
};

struct entry {
    uint8_t mvid[16];
    uint64_t size;
    int64_t mtime_ns;
    bool seen;
};

struct fileid {
    uint64_t dev, ino;
};

static int destroy(mdb_assemblies *a)
{
    pthread_mutex_destroy(&a->lock);
    return 0;
}

mdb_assemblies *mdb_assemblies_new(void *ctx, char **paths, size_t npaths, bool recursive,
                                   const char *index)
{
    mdb_assemblies *a = talloc_zero(ctx, mdb_assemblies);
    if (!a)
        return NULL;
    if (pthread_mutex_init(&a->lock, NULL) != 0) {
        talloc_free(a);
        return NULL;
    }
    talloc_set_destructor(a, destroy);
    a->ctx = a;
    if (!(a->paths = talloc_array(a, char *, npaths + 8))) {
        talloc_free(a);
        return NULL;
    }
    if (npaths) /* paths may be NULL when there are none */
        memcpy(a->paths, paths, npaths * sizeof *paths);
    a->npaths = a->nuser = npaths;
    a->cappaths = npaths + 8;
    a->recursive = recursive;
    a->index = index;
    mdb_arena_init(&a->arena, a);
    if (mdb_table_init(&a->by_path, a, 256) || mdb_table_init(&a->by_mvid, a, 256) ||
        mdb_table_init(&a->by_file, a, 256) || mdb_table_init(&a->old, a, 16) ||
        mdb_table_init(&a->dirs, a, 16) || !a->arena.ctx) {
        talloc_free(a);
        return NULL;
    }
    return a;
}

/* A warning waits for the thread whose lookup caused it, which prints it
 * after the line that made the lookup (as a run of one thread always did). */
static _Thread_local const char *pending;

bool mdb_assemblies_has_warning(const mdb_assemblies *a)
{
    (void)a;
    return pending != NULL;
}

const char *mdb_assemblies_warning(mdb_assemblies *a)
{
    const char *w = pending;
    (void)a;
    pending = NULL;
    return w;
}

void mdb_assemblies_stats(const mdb_assemblies *a, size_t *indexed, size_t *scanned)
{
    *indexed = a->nindexed;
    *scanned = a->nscanned;
}

static void warn2(mdb_assemblies *a, const char *fmt, const char *arg, const char *why)
{
    if (!pending)
        pending = talloc_asprintf(a, fmt, arg, why);
}

static void warn(mdb_assemblies *a, const char *fmt, const char *arg, int err)
{
    warn2(a, fmt, arg, strerror(err));
}

static mdb_module *new_module(mdb_assemblies *a, const char *path, size_t len)
{
    mdb_module *m = mdb_arena_alloc(&a->arena, sizeof *m);
    if (!m)
        return NULL;
    memset(m, 0, sizeof *m);
    m->id = a->nmodules++;
    m->assembly = "";
    m->name = "";
    if (!(m->path = mdb_arena_strndup(&a->arena, path, len)))
        return NULL;
    return m;
}

/* The module of a file, one per (device, inode) whatever the spelling of
 * its path; NULL when out of memory. */
static mdb_module *module_for(mdb_assemblies *a, const char *path, size_t len,
                              const struct stat *st)
{
    uint64_t h = mdb_hash(path, len);
    mdb_module *m = mdb_table_get(&a->by_path, h, path, len);
    if (m)
        return m;
    if (st) {
        struct fileid id = {(uint64_t)st->st_dev, (uint64_t)st->st_ino};
        uint64_t hf = mdb_hash(&id, sizeof id);
        m = mdb_table_get(&a->by_file, hf, &id, sizeof id);
        if (!m &&
            (!(m = new_module(a, path, len)) || mdb_table_put(&a->by_file, hf, &id, sizeof id, m)))
            return NULL;
    } else if (!(m = new_module(a, path, len))) {
        return NULL;
    }
    return mdb_table_put(&a->by_path, h, path, len, m) ? NULL : m;
}

static void add_mvid(mdb_assemblies *a, mdb_module *m, const uint8_t mvid[16])
{
    uint64_t h = mdb_hash(mvid, 16);
    if (!m->have_mvid) { /* never rewritten: other threads may read it */
        memcpy(m->mvid, mvid, 16);
        m->have_mvid = true;
    }
    /* the first file with an MVID wins: folders are taken in the order given */
    if (!mdb_table_get(&a->by_mvid, h, mvid, 16))
        mdb_table_put(&a->by_mvid, h, mvid, 16, m);
}

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

void mdb_format_mvid(char out[33], const uint8_t mvid[16])
{
    /* by hand: snprintf per byte was most of what a JSON frame cost */
    static const int order[16] = {3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15};
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < 16; i++) {
        out[2 * i] = hex[mvid[order[i]] >> 4];
        out[2 * i + 1] = hex[mvid[order[i]] & 15];
    }
    out[32] = '\0';
}

/* ---------------------------------------------------------- the index file */

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
            warn2(a, "cannot read the index %s: %s", a->index, why);
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
        } else if (depth == 0) {
            warn2(a, "cannot read %s: %s", path, why); /* named by the user */
        }
        if (r) {
            mdt_error_clear();
            return; /* not .NET, or no Module row: nothing to find it by */
        }
    }
    if (!(m = module_for(a, path, len, st)))
        return;
    add_mvid(a, m, mvid);
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
            warn(a, "cannot read the folder %s: %s", dir, errno);
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
            warn(a, "cannot read %s: %s", path, errno);
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
        warn2(a, "cannot read %s: %s", path, why);
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
static void walk_more(mdb_assemblies *a)
{
    if (a->index && !a->index_read) {
        char *tmp;
        a->index_read = true;
        read_index(a);
        tmp = talloc_asprintf(a, "%s.tmp.%ld", a->index, (long)getpid());
        if (tmp && !(a->newindex = create(tmp)))
            warn(a, "cannot write the index %s: %s", a->index, errno);
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
            warn(a, "cannot write the index %s: %s", a->index, errno);
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

/* ----------------------------------------------------------------- lookups */

static mdb_module *by_mvid(mdb_assemblies *a, const uint8_t mvid[16])
{
    uint64_t h = mdb_hash(mvid, 16);
    mdb_module *m = mdb_table_get(&a->by_mvid, h, mvid, 16);
    if (!m && a->nwalked < a->npaths) {
        walk_more(a);
        m = mdb_table_get(&a->by_mvid, h, mvid, 16);
    }
    return m;
}

mdb_module *mdb_module_by_mvid(mdb_assemblies *a, const uint8_t mvid[16])
{
    pthread_mutex_lock(&a->lock);
    mdb_module *m = by_mvid(a, mvid);
    pthread_mutex_unlock(&a->lock);
    return m;
}

static mdb_module *by_path(mdb_assemblies *a, const char *path, size_t len, const char **key)
{
    uint64_t h = mdb_hash(path, len);
    const mdb_slot *sl = mdb_table_slot(&a->by_path, h, path, len);
    mdb_module *m;
    struct stat st;
    char *z;
    if (!sl) {
        if (!(z = talloc_strndup(NULL, path, len)))
            return NULL;
        /* A path that names no file gets no module: distinct bad paths
         * must not pile up (errno says why). */
        m = stat(z, &st) == 0 ? module_for(a, path, len, &st) : NULL;
        talloc_free(z);
        if (!m || !(sl = mdb_table_slot(&a->by_path, h, path, len)))
            return NULL;
    }
    if (key)
        *key = sl->key;
    return sl->value;
}

mdb_module *mdb_module_by_path(mdb_assemblies *a, const char *path, size_t len, const char **key)
{
    pthread_mutex_lock(&a->lock);
    mdb_module *m = by_path(a, path, len, key);
    int err = errno;
    pthread_mutex_unlock(&a->lock);
    errno = err;
    return m;
}

/* The PDB next to the module or embedded in it, and room for the names of
 * its documents. */
static void find_pdb(mdb_module *m)
{
    uint32_t n;
    if (mdb_pdb_open(m->img, &m->pdb, m->img, m->path) != 0) {
        m->pdb = NULL;
        return;
    }
    n = mdt_pdb_document_count(m->pdb);
    /* one pointer per Document row, which the PDB's size bounds */
    if (n && !(m->docs = (char *_Atomic *)talloc_zero_array(m->pdb, char *, (size_t)n + 1)))
        m->pdb = NULL;
}

static bool open_module(mdb_assemblies *a, mdb_module *m)
{
    mdt_identity id;
    mdt_row row;
    const char *s;
    size_t len;
    uint8_t mvid[16];
    char msg[512];
    uint8_t st = atomic_load_explicit(&m->state, memory_order_relaxed);
    if (st != MDB_MOD_UNTRIED)
        return st == MDB_MOD_OPEN;
    if (mdb_image_open(a, &m->img, m->path, msg, sizeof msg) != 0) {
        m->open_error = talloc_strdup(a, msg);
        m->img = NULL;
        atomic_store_explicit(&m->state, MDB_MOD_FAILED, memory_order_release);
        return false;
    }
    if (mdt_assembly_identity(&id, m->img) == 0)
        m->assembly = id.name;
    if (mdt_row_get(&row, m->img, MDT_TABLE_Module, 1) == 0 &&
        mdt_row_string(&s, &len, &row, MDT_COL_Module_Name) == 0)
        m->name = s;
    if (!m->have_mvid && mdt_image_mvid(mvid, m->img) == 0)
        add_mvid(a, m, mvid);
    find_pdb(m);
    mdt_error_clear();
    atomic_store_explicit(&m->state, MDB_MOD_OPEN, memory_order_release);
    return true;
}

bool mdb_module_open(mdb_assemblies *a, mdb_module *m)
{
    pthread_mutex_lock(&a->lock);
    bool ok = open_module(a, m);
    pthread_mutex_unlock(&a->lock);
    return ok;
}

const char *mdb_module_document(void *ctx, mdb_module *m, uint32_t doc)
{
    char *name, *expected = NULL;
    if (!m->docs || doc == 0 || doc > mdt_pdb_document_count(m->pdb))
        return NULL;
    if ((name = atomic_load_explicit(&m->docs[doc], memory_order_acquire)))
        return name;
    if (mdt_pdb_document_name(ctx, &name, m->pdb, doc) != 0) {
        mdt_error_clear();
        return NULL;
    }
    if (!atomic_compare_exchange_strong_explicit(&m->docs[doc], &expected, name,
                                                 memory_order_acq_rel, memory_order_acquire)) {
        talloc_free(name); /* another thread was first */
        name = expected;
    }
    return name;
}

int mdb_mvid_lookup(void *payload, const mdt_image **img, const uint8_t mvid[16])
{
    mdb_assemblies *a = payload;
    pthread_mutex_lock(&a->lock);
    mdb_module *m = by_mvid(a, mvid);
    bool ok = m && open_module(a, m);
    pthread_mutex_unlock(&a->lock);
    if (!ok)
        return MDT_ENOTFOUND;
    *img = m->img;
    return 0;
}
