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
 * of the same file (a shared mapping). A base in anonymous memory (an
 * assembly loaded from bytes) gives that one mapping. The executable
 * mappings among the image's own (a ReadyToRun image's code) are reported
 * apart as well: the sampler accepts a return address computed from a
 * prolog only in code it knows, and these are where ReadyToRun methods the
 * map has not learnt yet live (execmap.c). Read with stdio in the event
 * callbacks, never in the signal handler. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/base.h"

struct mapping {
    uintptr_t lo, hi;
    char perms[5]; /* "r-xp" */
    unsigned maj, min;
    unsigned long long ino;
};

static int parse(const char *s, struct mapping *m)
{
    unsigned long long off;
    return sscanf(s, "%" SCNxPTR "-%" SCNxPTR " %4s %llx %x:%x %llu", &m->lo, &m->hi, m->perms,
                  &off, &m->maj, &m->min, &m->ino) == 7;
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

size_t mdp_image_ranges(const void *base, mdt_mem_range *out, size_t max, mdt_mem_range *exec,
                        size_t *nexec)
{
    if (nexec)
        *nexec = 0;
    FILE *f = fopen("/proc/self/maps", "re");
    if (!f || max == 0) {
        if (f)
            fclose(f);
        return 0;
    }
    uintptr_t at = (uintptr_t)base, end = 0;
    struct mapping first = {0}, m;
    size_t n = 0;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        int full = strchr(line, '\n') != NULL;
        int ok = parse(line, &m);
        while (!full && fgets(line, sizeof line, f)) /* a line cut by the buffer */
            full = strchr(line, '\n') != NULL;
        if (!ok)
            continue;
        if (n == 0) {
            if (m.hi <= at)
                continue;
            if (m.lo > at || m.perms[0] != 'r')
                break; /* the base is not readable */
            first = m;
            out[n++] = (mdt_mem_range){base, m.hi - at};
            if (exec && nexec && m.perms[2] == 'x' && m.ino != 0)
                add_exec(exec, nexec, max, at, m.hi);
            end = m.hi;
            if (m.ino == 0)
                break; /* anonymous: neighbours cannot be told apart */
            continue;
        }
        if (m.lo != end)
            break;
        end = m.hi;
        if (!same_file(&m, &first)) {
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
    fclose(f);
    return n;
}
