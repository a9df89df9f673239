/* Files read on demand (MDT_OPEN_LAZY): the bytes of a PE file are read
 * from the file the first time something needs them, not all at open.
 * Opening reads the headers, the CLI header, the debug directory and the
 * metadata window (ECMA-335 II.25, II.24.2.1); IL bodies, resources, the
 * strong-name signature, ReadyToRun tables and the rest are read when a
 * caller first asks for them, which a command that names tokens never does.
 *
 * The file is not mapped: a mapped file that shrinks raises SIGBUS (image.h).
 * The bytes go into one block as large as the file, at their file offsets, so every
 * reader of the container keeps its flat view (c->data + offset) and nothing
 * else in the library changes. The reservation is filled in chunks of
 * CHUNK bytes, each exactly once: the first reader of a chunk takes the
 * mutex, reads it with pread and publishes it with a release store of its
 * flag; readers of a chunk already read load the flag (acquire) and take no
 * lock. A chunk is never rewritten, so a reader never sees bytes change.
 *
 * The first MAX_HELD images read on demand (in the process, at a time) keep
 * their descriptor open until every chunk is read or the image is freed;
 * the others close it when the open is done and reopen the path for each
 * later read, which must then find the same file (device and inode): a
 * process opening thousands of files, or a profiler inside a host that
 * has its own use for descriptors, never runs out of them. Before each
 * read the file is checked against what open saw (size and modification
 * time); a file that changed, or a read that comes back short, makes this
 * and every later read of the image fail with MDT_EIO, with the path and
 * the file offset: bytes of two versions of a file never make one image. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <talloc.h>
#include <unistd.h>

#include "image/container.h"
#include "util/file.h"

/* 64 KiB: one read brings a method body's neighbours along, and a 10 MiB
 * image has 160 flags. */
#define CHUNK_SHIFT 16
#define CHUNK ((uint64_t)1 << CHUNK_SHIFT)
/* Descriptors kept open by images read on demand, in the process. */
#define MAX_HELD 64

static atomic_int held;

struct mdt_ondemand {
    pthread_mutex_t lock;
    int fd;    /* -1 once every chunk is read, or the open is done without a slot */
    bool slot; /* counted in `held` */
    dev_t dev;
    ino_t ino;
    uint64_t size;
    struct timespec mtime; /* at open */
    uint8_t *buf;          /* the reservation, size bytes */
    size_t nchunks;
    atomic_uchar *filled; /* per chunk: 1 once its bytes are in buf */
    atomic_size_t left;   /* chunks not yet read */
    atomic_bool stale;    /* the file changed: every read fails */
    const char *name;
};

static void close_fd(struct mdt_ondemand *od)
{
    if (od->fd >= 0)
        close(od->fd);
    od->fd = -1;
    if (od->slot)
        atomic_fetch_sub(&held, 1);
    od->slot = false;
}

static int release(struct mdt_ondemand *od)
{
    close_fd(od);
    free(od->buf);
    free(od->filled);
    pthread_mutex_destroy(&od->lock);
    return 0;
}

static int fail_read(const struct mdt_ondemand *od, uint64_t off, const char *fmt,
                     unsigned long long a, unsigned long long b)
{
    mdt_place pl = MDT_PLACE_NONE;
    pl.file = od->name;
    pl.file_offset = off;
    return mdt__fail(MDT_EIO, pl, fmt, a, b);
}

static bool same_time(const struct timespec *a, const struct timespec *b)
{
    return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

/* The whole pages of [p, p + n) made present before a read fills them:
 * one call, where the read's copy into fresh pages took a page fault for
 * each (7,800 of the 10,000 faults of `mdinspect batch` over the Mono
 * framework, whose 129 modules' metadata is 26 MB: about a tenth less
 * system time for the reads, bench/README.md, issue 28, branch batch7).
 * Only for runs of several pages; only advice: a kernel without
 * MADV_POPULATE_WRITE (before Linux 5.14) says EINVAL and the read faults
 * the pages in as before. */
static void populate(uint8_t *p, size_t n)
{
#ifdef MADV_POPULATE_WRITE
    uintptr_t page = 4096, a = ((uintptr_t)p + page - 1) & ~(page - 1);
    uintptr_t b = ((uintptr_t)p + n) & ~(page - 1);
    if (b > a && b - a >= 16 * page)
        (void)madvise((void *)a, b - a, MADV_POPULATE_WRITE);
#else
    (void)p;
    (void)n;
#endif
}

/* Read chunks [k, end) into the reservation; the lock is held and none of
 * them is read yet. */
static int read_chunks(struct mdt_ondemand *od, size_t k, size_t end)
{
    uint64_t off = (uint64_t)k << CHUNK_SHIFT;
    uint64_t stop = (uint64_t)end << CHUNK_SHIFT;
    struct stat st;
    long long got;
    int fd = od->fd;
    if (stop > od->size)
        stop = od->size;
    if (fd < 0) {
        /* No descriptor kept: the path must still name the same file. */
        fd = mdt__open_regular(od->name, &st);
        if (fd < 0 || st.st_dev != od->dev || st.st_ino != od->ino) {
            if (fd >= 0)
                close(fd);
            atomic_store(&od->stale, true);
            return fail_read(od, off,
                             "the file changed since it was opened: its path no longer names "
                             "it (reading 0x%llx bytes; errno %llu)",
                             stop - off, fd == -1 ? (unsigned long long)errno : 0);
        }
    } else if (fstat(fd, &st) != 0) {
        return fail_read(od, off, "cannot examine the file to read 0x%llx bytes: errno %llu",
                         stop - off, (unsigned long long)errno);
    }
    if ((uint64_t)st.st_size != od->size || !same_time(&st.st_mtim, &od->mtime)) {
        if (fd != od->fd)
            close(fd);
        atomic_store(&od->stale, true);
        return fail_read(od, off,
                         "the file changed since it was opened (size 0x%llx, now 0x%llx): "
                         "its bytes are no longer those of the image",
                         od->size, (unsigned long long)st.st_size);
    }
    populate(od->buf + off, (size_t)(stop - off));
    got = mdt__read_at(fd, od->buf + off, (size_t)(stop - off), off);
    if (fd != od->fd)
        close(fd);
    if (got < 0)
        return fail_read(od, off, "cannot read 0x%llx bytes: errno %llu", stop - off,
                         (unsigned long long)errno);
    if ((uint64_t)got != stop - off) {
        /* Part of the chunk may hold bytes now; its flag stays clear, and
         * the image is stale, so nobody reads them. */
        atomic_store(&od->stale, true);
        return fail_read(od, off + (uint64_t)got,
                         "the file shrank since it was opened: 0x%llx bytes asked for, "
                         "0x%llx read",
                         stop - off, (unsigned long long)got);
    }
    for (size_t i = k; i < end; i++)
        atomic_store_explicit(&od->filled[i], 1, memory_order_release);
    if (atomic_fetch_sub(&od->left, end - k) == end - k)
        close_fd(od);
    return 0;
}

/* The slow path: some chunk of [k0, k1] is not read. */
static int fill(struct mdt_ondemand *od, size_t k0, size_t k1)
{
    int e = 0;
    pthread_mutex_lock(&od->lock);
    for (size_t k = k0; k <= k1 && !e;) {
        if (atomic_load(&od->stale)) {
            e = fail_read(od, (uint64_t)k << CHUNK_SHIFT,
                          "the file changed since it was opened (size then 0x%llx): "
                          "no more of it is read (chunk %llu)",
                          od->size, (unsigned long long)k);
            break;
        }
        if (atomic_load_explicit(&od->filled[k], memory_order_relaxed)) {
            k++;
            continue;
        }
        size_t end = k + 1; /* one pread for a run of chunks not read */
        while (end <= k1 && !atomic_load_explicit(&od->filled[end], memory_order_relaxed))
            end++;
        e = read_chunks(od, k, end);
        k = end;
    }
    pthread_mutex_unlock(&od->lock);
    return e;
}

static int ondemand_need(const struct mdt_ondemand *cod, uint64_t off, uint64_t len)
{
    struct mdt_ondemand *od = (struct mdt_ondemand *)cod; /* filling is not a change */
    if (off >= od->size || len == 0)
        return 0;
    if (len > od->size - off)
        len = od->size - off;
    size_t k0 = (size_t)(off >> CHUNK_SHIFT), k1 = (size_t)((off + len - 1) >> CHUNK_SHIFT);
    for (size_t k = k0; k <= k1; k++)
        if (!atomic_load_explicit(&od->filled[k], memory_order_acquire))
            return fill(od, k, k1);
    return 0;
}

int mdt__ondemand_load(struct mdt_container *c, int fd, const struct stat *st)
{
    mdt_place pl = MDT_PLACE_NONE;
    struct mdt_ondemand *od = talloc_zero(c->mem, struct mdt_ondemand);
    pl.file = c->name;
    if (!od) {
        close(fd);
        return mdt__fail(MDT_ENOMEM, pl, "%s", "out of memory");
    }
    od->fd = fd;
    od->name = c->name;
    od->size = (uint64_t)st->st_size;
    od->mtime = st->st_mtim;
    od->dev = st->st_dev;
    od->ino = st->st_ino;
    od->slot = atomic_fetch_add(&held, 1) < MAX_HELD;
    if (!od->slot)
        atomic_fetch_sub(&held, 1);
    od->nchunks = (size_t)((od->size + CHUNK - 1) >> CHUNK_SHIFT);
    pthread_mutex_init(&od->lock, NULL);
    talloc_set_destructor(od, release);
    atomic_init(&od->left, od->nchunks);
    atomic_init(&od->stale, false);
    od->filled = calloc(od->nchunks, sizeof *od->filled);
    /* malloc, as the read-all path: talloc refuses blocks of 256 MiB and
     * more, and malloc's reuse of freed pages spares the page faults a
     * fresh anonymous mapping would take in a process that opens and
     * closes many images (bench/README.md). Pages of a fresh block that
     * are never read cost no memory. */
    od->buf = malloc((size_t)od->size);
    if (!od->filled || !od->buf) {
        talloc_free(od);
        return mdt__fail(MDT_ENOMEM, pl, "%s", "out of memory reserving room for the file");
    }
    c->od = od;
    c->data = od->buf;
    c->size = (size_t)od->size;
    return 0;
}

int mdt__container_need(const struct mdt_container *c, uint64_t off, uint64_t len)
{
    return c->od ? ondemand_need(c->od, off, len) : 0;
}

int mdt__container_need_all(const struct mdt_container *c)
{
    if (!c->od || atomic_load_explicit(&c->od->left, memory_order_acquire) == 0)
        return 0;
    return ondemand_need(c->od, 0, c->od->size);
}

size_t mdt__container_read_prefix(const struct mdt_container *c)
{
    const struct mdt_ondemand *od = c->od;
    size_t k = 0;
    if (!od)
        return c->size;
    while (k < od->nchunks && atomic_load_explicit(&od->filled[k], memory_order_acquire))
        k++;
    return k == od->nchunks ? c->size : (size_t)((uint64_t)k << CHUNK_SHIFT);
}

void mdt__container_open_done(const struct mdt_container *c)
{
    struct mdt_ondemand *od = c->od;
    if (od && !od->slot) {
        pthread_mutex_lock(&od->lock);
        close_fd(od);
        pthread_mutex_unlock(&od->lock);
    }
}
