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
 * keep the hot path off the lock.
 *
 * This file finds and opens modules; the walk of the folders and the index
 * are in assemblies_index.c (what the two share: assemblies_int.h). */
#define _GNU_SOURCE /* O_CLOEXEC, O_NOFOLLOW, alphasort, fdopen, memrchr */
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
#include "common/hex.h"

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
        mdb_table_init(&a->dirs, a, 16) || mdb_table_init(&a->bundles, a, 16) || !a->arena.ctx) {
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

void mdb_asm_warn2(mdb_assemblies *a, const char *fmt, const char *arg, const char *why)
{
    if (!pending)
        pending = talloc_asprintf(a, fmt, arg, why);
}

void mdb_asm_warn(mdb_assemblies *a, const char *fmt, const char *arg, int err)
{
    mdb_asm_warn2(a, fmt, arg, strerror(err));
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
mdb_module *mdb_asm_module_for(mdb_assemblies *a, const char *path, size_t len,
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

void mdb_asm_add_mvid(mdb_assemblies *a, mdb_module *m, const uint8_t mvid[16])
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

void mdb_format_mvid(char out[33], const uint8_t mvid[16])
{
    /* by hand: snprintf per byte was most of what a JSON frame cost */
    static const int order[16] = {3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15};
    for (int i = 0; i < 16; i++)
        mdi_hex_put(out + 2 * i, mvid[order[i]], 2);
    out[32] = '\0';
}

/* ----------------------------------------------------------------- lookups */

static mdb_module *by_mvid(mdb_assemblies *a, const uint8_t mvid[16])
{
    uint64_t h = mdb_hash(mvid, 16);
    mdb_module *m = mdb_table_get(&a->by_mvid, h, mvid, 16);
    if (!m && a->nwalked < a->npaths) {
        mdb_asm_walk_more(a);
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

/* "APP!PATH", the shell's name for an assembly of a single-file app, on
 * a PATH TOKEN line whose path names no file: the app is the longest
 * prefix before a '!' that is a regular file and a bundle, PATH one of its
 * assemblies (a module of its own, its MVID learnt when opened). Apps
 * opened so stay open, at most MAX_BUNDLES (each holds its file open).
 * NULL with errno set when there is no such assembly. */
#define MAX_BUNDLES 64
static mdb_module *bundle_member(mdb_assemblies *a, const char *path, size_t len)
{
    char *z = talloc_strndup(NULL, path, len), why[300];
    mdb_module *m = NULL;
    int err = ENOENT;
    for (char *bang = z ? strrchr(z, '!') : NULL; bang && !m;
         bang = memrchr(z, '!', (size_t)(bang - z))) {
        struct stat st;
        *bang = '\0';
        size_t alen = (size_t)(bang - z);
        uint64_t h = mdb_hash(z, alen);
        mdt_bundle *b = mdb_table_get(&a->bundles, h, z, alen);
        if (!b && stat(z, &st) == 0 && S_ISREG(st.st_mode)) {
            if (a->nbundles >= MAX_BUNDLES) {
                err = EMFILE;
            } else if ((b = mdb_bundle_open(a, z, why, sizeof why))) {
                if (mdb_table_put(&a->bundles, h, z, alen, b)) {
                    talloc_free(b);
                    b = NULL;
                } else {
                    a->nbundles++;
                }
            }
        }
        const char *member = bang + 1;
        mdt_bundle_info in;
        if (b && mdt_bundle_info_get(&in, b) == 0)
            for (size_t i = 0; i < in.files && !m; i++) {
                mdt_bundle_entry e;
                if (mdt_bundle_entry_get(&e, b, i) == 0 && e.type == MDT_BUNDLE_ASSEMBLY &&
                    strcmp(e.path, member) == 0 && (m = mdb_asm_module_for(a, path, len, NULL))) {
                    m->bundle = b;
                    m->bundle_entry = i;
                }
            }
        *bang = '!';
    }
    talloc_free(z);
    mdt_error_clear();
    if (!m)
        errno = err;
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
        m = stat(z, &st) == 0 ? mdb_asm_module_for(a, path, len, &st)
            : (errno == ENOENT || errno == ENOTDIR) && memchr(path, '!', len)
                ? bundle_member(a, path, len)
                : NULL;
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
    if (m->bundle ? mdb_bundle_image_open(a, &m->img, m->bundle, m->bundle_entry, msg, sizeof msg)
                  : mdb_image_open(a, &m->img, m->path, msg, sizeof msg)) {
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
        mdb_asm_add_mvid(a, m, mvid);
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
