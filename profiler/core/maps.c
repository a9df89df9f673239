/* The memory of a module's image that may be read, from /proc/self/maps.
 *
 * A loader layout need not be readable as a whole: CoreCLR on Linux maps a
 * ReadyToRun image section by section (the PAL's MAPMapPEFile): one
 * reservation, PROT_NONE, with the header page and each section mapped over
 * it from the file (MAP_PRIVATE|MAP_FIXED), so the gaps between them stay
 * inaccessible. The image's ranges are the mappings that follow the one
 * holding the base without a break in the address space, as long as each
 * is either a private mapping of the same file (device and inode; readable
 * ones are taken) or an anonymous PROT_NONE gap of the reservation; the
 * first mapping of anything else ends the image. So a damaged header can
 * make the library read only the image's own pages, never a neighbour's
 * (which another unload may unmap under us), nor the runtime's flat view
 * of the same file (a shared mapping). A base in anonymous memory gives
 * that one mapping (an assembly loaded from bytes: a flat layout, as long
 * as the array it was copied from), except in a loader layout: the
 * runtime made that one by copying a flat image into an allocation of the
 * header's SizeOfImage, section by section with their own protections (a
 * single-file bundle's compressed assemblies, inflated in memory), so
 * there the image is the anonymous mappings that follow without a break,
 * cut at SizeOfImage (anonymous neighbours with the same protection merge
 * into one mapping: the cut, not the mapping's end, bounds the image). The executable
 * mappings among the image's own (a ReadyToRun image's code) are reported
 * apart as well: the sampler accepts a return address computed from a
 * prolog only in code it knows, and these are where ReadyToRun methods the
 * map has not learnt yet live (execmap.c). Read in the event callbacks,
 * never in the signal handler. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "core/base.h"

struct mapping {
    uintptr_t lo, hi;
    char perms[5]; /* "r-xp" */
    unsigned maj, min;
    unsigned long long ino;
};

/* /proc/self/maps a buffer at a time, by hand rather than with stdio and
 * sscanf: a runtime's process has thousands of mappings and the file is
 * read on every module load, where fgets and sscanf over every line were
 * most of a `dotnet build` MSBuild's module-load cost (~0.4 ms a load;
 * bench/profiler/README.md). Lines before the base are skipped after their
 * end address. */
struct maps_reader {
    int fd;
    int skip; /* the rest of a line longer than the buffer is skipped */
    size_t len, pos;
    char buf[8192];
};

/* The next line without its newline (NUL-terminated in place, valid until
 * the next call), or NULL at the end or on a read error. A line longer
 * than the buffer (no path is) comes back cut, the rest skipped. */
static char *next_line(struct maps_reader *r)
{
    for (;;) {
        char *nl = r->pos < r->len ? memchr(r->buf + r->pos, '\n', r->len - r->pos) : NULL;
        if (nl) {
            char *line = r->buf + r->pos;
            *nl = 0;
            r->pos = (size_t)(nl - r->buf) + 1;
            if (!r->skip)
                return line;
            r->skip = 0;
            continue;
        }
        /* no whole line left: keep the partial one, read more */
        memmove(r->buf, r->buf + r->pos, r->len - r->pos);
        r->len -= r->pos;
        r->pos = 0;
        if (r->len == sizeof r->buf - 1) {
            r->buf[r->len] = 0;
            r->len = 0;
            int was = r->skip;
            r->skip = 1;
            if (!was)
                return r->buf;
            continue;
        }
        ssize_t got;
        do
            got = read(r->fd, r->buf + r->len, sizeof r->buf - 1 - r->len);
        while (got < 0 && errno == EINTR);
        if (got <= 0) {
            if (got < 0 || r->len == 0 || r->skip)
                return NULL;
            r->buf[r->len] = 0; /* a last line without its newline */
            r->len = 0;
            return r->buf;
        }
        r->len += (size_t)got;
    }
}

static const char *hex(const char *s, unsigned long long *v)
{
    unsigned long long x = 0;
    const char *p = s;
    for (;; p++) {
        unsigned d;
        if (*p >= '0' && *p <= '9')
            d = (unsigned)(*p - '0');
        else if (*p >= 'a' && *p <= 'f')
            d = (unsigned)(*p - 'a' + 10);
        else
            break;
        if (p - s >= 16)
            return NULL;
        x = x << 4 | d;
    }
    *v = x;
    return p > s ? p : NULL;
}

/* "lo-hi" at the line's start: the range alone (enough to skip a line). */
static const char *parse_range(const char *s, struct mapping *m)
{
    unsigned long long lo, hi;
    if (!(s = hex(s, &lo)) || *s++ != '-' || !(s = hex(s, &hi)) || *s++ != ' ')
        return NULL;
    m->lo = (uintptr_t)lo;
    m->hi = (uintptr_t)hi;
    return s;
}

/* The rest: "perms offset maj:min inode". */
static int parse_rest(const char *s, struct mapping *m)
{
    unsigned long long off, maj, min, ino = 0;
    for (int i = 0; i < 4; i++)
        if (!s[i] || s[i] == ' ')
            return 0;
    memcpy(m->perms, s, 4);
    m->perms[4] = 0;
    s += 4;
    if (*s++ != ' ' || !(s = hex(s, &off)) || *s++ != ' ' || !(s = hex(s, &maj)) || *s++ != ':' ||
        !(s = hex(s, &min)) || *s++ != ' ' || *s < '0' || *s > '9')
        return 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        if (ino > (~0ull - 9) / 10)
            return 0;
        ino = ino * 10 + (unsigned long long)(*s - '0');
    }
    m->maj = (unsigned)maj;
    m->min = (unsigned)min;
    m->ino = ino;
    return maj <= 0xffffffffu && min <= 0xffffffffu;
}

/* The end of a loader layout in anonymous memory: base + the header's
 * SizeOfImage (page-rounded), read from the first mapping [base, hi) only;
 * 0 when the header does not say (not a PE header there, a size of 0 or
 * over 1 GiB). */
static uintptr_t anon_image_end(uintptr_t base, uintptr_t hi)
{
    const unsigned char *b = (const unsigned char *)base;
    size_t have = hi - base;
    if (have < 0x40 || b[0] != 'M' || b[1] != 'Z')
        return 0;
    uint32_t lfanew = (uint32_t)b[0x3c] | (uint32_t)b[0x3d] << 8 | (uint32_t)b[0x3e] << 16 |
                      (uint32_t)b[0x3f] << 24;
    /* "PE\0\0", the file header (20 bytes), the optional header up to
     * SizeOfImage (at 56, in PE32 and PE32+ alike) */
    if (lfanew > have || have - lfanew < 4 + 20 + 60)
        return 0;
    const unsigned char *pe = b + lfanew, *opt = pe + 24;
    if (memcmp(pe, "PE\0\0", 4) != 0 || !((opt[0] == 0x0b && (opt[1] == 1 || opt[1] == 2))))
        return 0;
    uint32_t size = (uint32_t)opt[56] | (uint32_t)opt[57] << 8 | (uint32_t)opt[58] << 16 |
                    (uint32_t)opt[59] << 24;
    long page = sysconf(_SC_PAGESIZE);
    if (size == 0 || size > (1u << 30) || page <= 0)
        return 0;
    uintptr_t len = ((uintptr_t)size + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
    return base + len > base ? base + len : 0;
}

static int same_file(const struct mapping *a, const struct mapping *b)
{
    return a->ino == b->ino && a->maj == b->maj && a->min == b->min && a->perms[3] == b->perms[3];
}

/* Append [lo, hi) to the executable ranges, merged with the last one when
 * adjacent. */
static void add_exec(mdt_mem_range *exec, size_t *nexec, size_t max, uintptr_t lo, uintptr_t hi)
{
    mdt_mem_range *last = *nexec ? &exec[*nexec - 1] : NULL;
    if (last && (uintptr_t)last->start + last->len == lo)
        last->len += hi - lo;
    else if (*nexec < max)
        exec[(*nexec)++] = (mdt_mem_range){(const void *)lo, hi - lo};
}

/* Linux 6.11's PROCMAP_QUERY (uapi linux/fs.h; Debian 12's headers predate
 * it): the mapping covering an address, or the next one, in one ioctl on
 * /proc/self/maps, without the kernel printing every line before it. A
 * module load then costs a few queries instead of the whole text, which
 * in a `dotnet build`'s MSBuild (thousands of mappings, hundreds of
 * module loads) was 2% of the process's CPU in the kernel alone. Older
 * kernels refuse the ioctl (ENOTTY): then the text, read as above. */
struct procmap_query {
    uint64_t size, query_flags, query_addr;
    uint64_t vma_start, vma_end, vma_flags, vma_page_size, vma_offset, inode;
    uint32_t dev_major, dev_minor, vma_name_size, build_id_size;
    uint64_t vma_name_addr, build_id_addr;
};
#define PROCMAP_QUERY_IOCTL _IOWR('f', 17, struct procmap_query)
enum {
    PMQ_READABLE = 0x01,
    PMQ_WRITABLE = 0x02,
    PMQ_EXECUTABLE = 0x04,
    PMQ_SHARED = 0x08,
    PMQ_COVERING_OR_NEXT = 0x10,
};
_Static_assert(sizeof(struct procmap_query) == 104, "the kernel's struct procmap_query");

/* 1 once the kernel refused the query (or a test asked for the text) */
static _Atomic int query_off;

void mdp_maps_text_only(int on)
{
    atomic_store(&query_off, on);
}

struct maps_source {
    struct maps_reader text;
    int query; /* ask with PROCMAP_QUERY; 0: read the text */
};

/* The first mapping ending above `from` (the one holding it, or the next):
 * 1, 0 at the end (or on an error). */
static int next_mapping(struct maps_source *src, uintptr_t from, struct mapping *m)
{
    if (src->query) {
        struct procmap_query q = {
            .size = sizeof q, .query_flags = PMQ_COVERING_OR_NEXT, .query_addr = from};
        if (ioctl(src->text.fd, PROCMAP_QUERY_IOCTL, &q) == 0) {
            m->lo = (uintptr_t)q.vma_start;
            m->hi = (uintptr_t)q.vma_end;
            m->perms[0] = q.vma_flags & PMQ_READABLE ? 'r' : '-';
            m->perms[1] = q.vma_flags & PMQ_WRITABLE ? 'w' : '-';
            m->perms[2] = q.vma_flags & PMQ_EXECUTABLE ? 'x' : '-';
            m->perms[3] = q.vma_flags & PMQ_SHARED ? 's' : 'p';
            m->perms[4] = 0;
            m->maj = q.dev_major;
            m->min = q.dev_minor;
            m->ino = q.inode;
            return 1;
        }
        if (errno == ENOENT)
            return 0; /* nothing at or above `from` */
        if (errno != ENOTTY && errno != EINVAL && errno != EOPNOTSUPP)
            return 0;
        atomic_store(&query_off, 1); /* an older kernel: the text from now on */
        src->query = 0;
    }
    const char *line;
    while ((line = next_line(&src->text))) {
        const char *rest = parse_range(line, m);
        if (rest && m->hi > from && parse_rest(rest, m))
            return 1;
    }
    return 0;
}

size_t mdp_image_ranges(const void *base, int loaded, mdt_mem_range *out, size_t max,
                        mdt_mem_range *exec, size_t *nexec)
{
    if (nexec)
        *nexec = 0;
    if (max == 0)
        return 0;
    struct maps_source src = {.text = {.fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC)},
                              .query = !atomic_load(&query_off)};
    if (src.text.fd < 0)
        return 0;
    uintptr_t at = (uintptr_t)base, end = 0;
    uintptr_t limit = 0; /* an anonymous loader layout's end (SizeOfImage) */
    struct mapping first = {0}, m;
    size_t n = 0;
    for (uintptr_t from = at; next_mapping(&src, from, &m); from = m.hi) {
        if (n == 0) {
            if (m.lo > at || m.perms[0] != 'r')
                break; /* the base is not readable */
            first = m;
            if (m.ino == 0) {
                /* anonymous: neighbours cannot be told apart, but for the
                 * header's own size in a loader layout */
                limit = loaded && m.perms[3] == 'p' ? anon_image_end(at, m.hi) : 0;
                if (limit && m.hi > limit)
                    m.hi = limit;
            }
            out[n++] = (mdt_mem_range){base, m.hi - at};
            if (exec && nexec && m.perms[2] == 'x' && (m.ino != 0 || limit))
                add_exec(exec, nexec, max, at, m.hi);
            end = m.hi;
            if (m.ino == 0 && (!limit || end >= limit))
                break;
            continue;
        }
        if (m.lo != end || (limit && m.lo >= limit))
            break;
        end = m.hi;
        if (limit) {
            /* the anonymous loader layout: anonymous private mappings up
             * to SizeOfImage */
            if (m.ino != 0 || m.perms[3] != 'p')
                break;
            if (m.hi > limit)
                m.hi = limit;
        } else if (!same_file(&m, &first)) {
            if (m.ino == 0 && strncmp(m.perms, "---", 3) == 0)
                continue; /* a gap of the reservation */
            break;
        }
        if (m.perms[0] != 'r')
            continue;
        if (exec && nexec && m.perms[2] == 'x')
            add_exec(exec, nexec, max, m.lo, m.hi);
        mdt_mem_range *last = &out[n - 1];
        if ((uintptr_t)last->start + last->len == m.lo)
            last->len += m.hi - m.lo;
        else if (n < max)
            out[n++] = (mdt_mem_range){(const void *)m.lo, m.hi - m.lo};
        else
            break; /* fewer ranges only make less readable */
    }
    close(src.text.fd);
    return n;
}

void mdp_rw_mappings_at(const uintptr_t *addrs, size_t n, uintptr_t *lo, uintptr_t *hi)
{
    for (size_t i = 0; i < n; i++)
        lo[i] = hi[i] = 0;
    struct maps_source src = {
        .text = {.fd = n ? open("/proc/self/maps", O_RDONLY | O_CLOEXEC) : -1},
        .query = !atomic_load(&query_off)};
    if (src.text.fd < 0)
        return;
    struct mapping m = {0};
    int have = 0;
    for (size_t i = 0; i < n; i++) {
        /* the text goes forward only: the last mapping may hold this one too */
        if (i > 0 && addrs[i] < addrs[i - 1])
            break; /* not sorted: the caller's bug, nothing guessed */
        if (!(have && addrs[i] < m.hi) && !(have = next_mapping(&src, addrs[i], &m)))
            break;
        if (m.lo <= addrs[i] && m.perms[0] == 'r' && m.perms[1] == 'w') {
            lo[i] = m.lo;
            hi[i] = m.hi;
        }
    }
    close(src.text.fd);
}
